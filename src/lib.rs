//! ptxmm: an executable model of the NVIDIA PTX memory consistency model.
//!
//! Data flows one way through the modules of this crate:
//!
//! ```text
//! litmus text ─litmus::parse─▶ syntax tree ─program::lower─▶ Program (instruction semantics)
//!   ─exec::trace─▶ per-thread traces ─exec::structure─▶ event structures
//!   ─exec::search─▶ candidate executions ─cat (model as data)─▶ consistent or not
//!   ─check─▶ outcome ─report─▶ herd7 block / JSON
//! ```
//!
//! See `ARCHITECTURE.md` at the repository root for the map and the invariants between stages.

pub mod cat;
pub mod check;
pub mod diag;
pub mod exec;
pub mod explain;
pub mod families;
pub mod findings;
pub mod litmus;
pub mod liveness;
pub mod models;
pub mod program;
pub mod readings;
pub mod relation;
pub mod report;
pub mod suite;

use diag::{FileDiagnostic, SourceFile};
use std::path::Path;

/// Why a litmus file could not be turned into a program.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: cannot read: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{0}")]
    Syntax(FileDiagnostic),
}

impl LoadError {
    /// The full rendering (with the source excerpt) for terminals.
    pub fn render(&self, color: bool) -> String {
        match self {
            LoadError::Io { .. } => self.to_string(),
            LoadError::Syntax(d) => d.render(color),
        }
    }
}

/// Read, parse and lower a litmus file.
pub fn load_program(path: &Path) -> Result<program::Program, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|source| LoadError::Io { path: path.display().to_string(), source })?;
    parse_program(SourceFile::new(path.display().to_string(), text))
}

/// Parse and lower litmus source text.
pub fn parse_program(file: SourceFile) -> Result<program::Program, LoadError> {
    let ast = litmus::parse(&file).map_err(|d| LoadError::Syntax(FileDiagnostic::new(&file, d)))?;
    program::lower(&ast, &file).map_err(|d| LoadError::Syntax(FileDiagnostic::new(&file, d)))
}
