//! Code blocks: the kernel block `{ ... }` every thread runs and the per-thread blocks
//! `P0 { ... } P1 { ... }`, in PTX statement syntax (PTX ISA §4.3: "A PTX statement is either a
//! directive or an instruction. Statements begin with an optional label and end with a
//! semicolon."). Unlike table rows, statements are not line-based: a statement ends at its `;`,
//! wherever the line breaks fall.

use super::{thread_number, PResult, Parser, MAX_DEPTH};
use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::{DeclSpace, Statement};
use crate::litmus::lexer::{Tok, Token};

/// What a block statement can start with, for "expected ..." messages.
const STATEMENT: &str = "a statement (an instruction, a label, `.reg`/`.shared`/`.local`, `{`, or `}` to close the block)";

impl Parser<'_> {
    /// At `P<n> {`: the first of the per-thread blocks.
    pub(super) fn at_thread_block(&self) -> bool {
        let tok = self.raw(0);
        tok.kind == Tok::Ident && thread_number(self.slice(tok)).is_some() && self.raw(1).kind == Tok::LBrace
    }

    /// `P0 { ... } P1 { ... }`: one block per thread, in the order of the header row.
    pub(super) fn thread_blocks(&mut self, threads: usize) -> PResult<Vec<Vec<Spanned<Statement>>>> {
        let mut code = Vec::with_capacity(threads);
        for index in 0..threads {
            let tok = self.tok();
            let expected = format!("thread `P{index}` and its block `P{index} {{ ... }}`");
            let id = match (tok.kind, thread_number(self.slice(tok))) {
                (Tok::Ident, Some(digits)) => digits.parse::<usize>().ok(),
                _ => None,
            };
            if id != Some(index) {
                let d = self.unexpected(&expected);
                return Err(if index > 0 && tok.kind != Tok::Ident {
                    d.with_note("with per-thread blocks, every thread of the header row has exactly one block, in order")
                } else {
                    d
                });
            }
            self.bump();
            if !self.at(Tok::LBrace) {
                return Err(self.unexpected(&format!("`{{` to open the block of P{index}")));
            }
            code.push(self.code_block()?);
        }
        if self.at_thread_block() {
            return Err(self
                .unexpected("the end of the program (`exists`, `~exists`, `forall`, `locations` or `filter`)")
                .with_note(format!("the header row declares {threads} thread(s); each has exactly one block")));
        }
        Ok(code)
    }

    /// `{ statement ... }` (the `{` not yet consumed) with an optional `;` after the `}`. Nested
    /// scopes become [`Statement::Open`] / [`Statement::Close`] around their statements.
    pub(super) fn code_block(&mut self) -> PResult<Vec<Spanned<Statement>>> {
        let open = self.bump();
        let mut statements = Vec::new();
        // The `{` of each nested scope that is still open, innermost last.
        let mut scopes: Vec<Token> = Vec::new();
        loop {
            let tok = self.tok();
            match tok.kind {
                Tok::RBrace => {
                    self.bump();
                    if scopes.pop().is_none() {
                        break;
                    }
                    statements.push(Spanned::new(Statement::Close, tok.span));
                }
                Tok::LBrace => {
                    if scopes.len() + 1 >= MAX_DEPTH {
                        return Err(Diagnostic::expected(tok.span, format!("at most {MAX_DEPTH} levels of nesting"), "deeper nesting"));
                    }
                    self.bump();
                    scopes.push(tok);
                    statements.push(Spanned::new(Statement::Open, tok.span));
                }
                Tok::Eof => {
                    let innermost = scopes.last().copied().unwrap_or(open);
                    return Err(self
                        .unexpected("`}` to close this block")
                        .with_note(self.line_col_note("the block opens", innermost.span)));
                }
                Tok::Directive => {
                    if let Some(s) = self.block_directive()? {
                        statements.push(s);
                    }
                }
                Tok::Ident if self.raw(1).kind == Tok::Colon => statements.push(self.label()?),
                Tok::Ident | Tok::At => {
                    let instr = self.instruction()?;
                    if self.eat(Tok::Semi).is_none() {
                        let expected = match &instr.node {
                            Statement::Instr(i) if i.operands.is_empty() => "an operand or `;`",
                            _ => "`,` or `;` after an operand",
                        };
                        return Err(self.unexpected(expected).with_note("in a code block, every instruction ends with `;`"));
                    }
                    statements.push(instr);
                }
                _ => return Err(self.unexpected(STATEMENT)),
            }
        }
        self.eat(Tok::Semi);
        Ok(statements)
    }

    /// A statement that starts with a directive: a declaration (`.reg`, `.shared`, `.local`),
    /// `.pragma "...";` (ignored), or the debug directives `.loc` and `.file` (ignored; they end
    /// at the end of their line, with or without `;`).
    fn block_directive(&mut self) -> PResult<Option<Spanned<Statement>>> {
        let tok = self.tok();
        match self.slice(tok) {
            ".pragma" => {
                self.bump();
                self.expect(Tok::Str, "a quoted pragma string (`.pragma \"nounroll\";`)")?;
                self.expect(Tok::Semi, "`;` after the pragma")?;
                Ok(None)
            }
            ".loc" | ".file" => {
                self.bump();
                while !self.raw(0).line_start && !matches!(self.raw(0).kind, Tok::Semi | Tok::Eof) {
                    self.pos += 1;
                }
                self.eat(Tok::Semi);
                Ok(None)
            }
            _ => {
                let decl = self.declaration()?;
                if !matches!(decl.node.space.node, DeclSpace::Reg | DeclSpace::Shared | DeclSpace::Local) {
                    let space = &decl.node.space;
                    return Err(Diagnostic::expected(
                        space.span,
                        "`.reg`, `.shared` or `.local` (the declarations of a code block)",
                        format!("`{}`", space.node.keyword()),
                    )
                    .with_note("declare `.global` variables and `.param` kernel parameters in the init block"));
                }
                if let Some(init) = &decl.node.init {
                    return Err(Diagnostic::error(
                        init.span,
                        format!("a `{}` declaration takes no initialiser", decl.node.space.node.keyword()),
                    )
                    .with_note(
                        "PTX ISA §5.1, Table 7: .reg, .shared and .local are not initializable; give initial values in the init block",
                    ));
                }
                if self.eat(Tok::Semi).is_none() {
                    return Err(self.unexpected("`,` or `;` after the declaration"));
                }
                Ok(Some(Spanned::new(Statement::Decl(decl.node), decl.span)))
            }
        }
    }
}
