//! The litmus front end: lexer, recursive-descent parser and syntax tree.
//!
//! [`parse`] turns a [`SourceFile`] into an [`ast::LitmusTest`] or the first [`Diagnostic`]
//! (with the exact span of the offending text and an "expected X, found Y" message).
pub mod ast;
pub mod lexer;
pub mod parser;
pub mod warps;

use crate::diag::{Diagnostic, SourceFile};

/// Parses one litmus file. Never panics, whatever the input.
/// Warp columns come back as one thread per lane (`warps`).
pub fn parse(file: &SourceFile) -> Result<ast::LitmusTest, Diagnostic> {
    parser::parse(file).and_then(warps::expand)
}

#[cfg(test)]
mod parser_tests;
