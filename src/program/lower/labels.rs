//! A thread's labels, scoped to the `{ }` blocks of its code as ptxas scopes them.
//!
//! The PTX ISA says of `{ }` (Control Flow Instructions: {}) that "any variable declared within a
//! scope is not available outside the scope"; ptxas (13.x) scopes labels the same way: a label is
//! visible in the block that defines it and in the blocks nested in it, before and after its
//! definition; a branch goes to the innermost enclosing block's definition; two definitions in
//! one block are an error ("Duplicate definition of label"), and so is a branch to a label defined
//! only in a sibling or nested block ("Unknown symbol"). nvcc relies on it: every inline `asm`
//! is a `{ }` block, and CUTLASS's (`LAB_WAIT`, `DONE`, `waitLoop`) repeat their labels.

use crate::diag::{Diagnostic, Span, Spanned};
use crate::litmus::ast::Statement;
use std::collections::HashMap;

/// The labels of one thread's code.
#[derive(Default)]
pub(super) struct Labels<'s> {
    /// For each block, its enclosing block (the thread's outermost scope is block 0).
    parents: Vec<usize>,
    /// (block, name) -> the index of the next instruction, and the line of the definition.
    defs: HashMap<(usize, &'s str), (usize, usize)>,
}

impl<'s> Labels<'s> {
    /// The labels of `stmts`, each at the index of the next lowered instruction (`width` gives
    /// the instructions a statement lowers to), and the block of every statement.
    pub(super) fn new(
        stmts: &'s [Spanned<Statement>],
        width: &dyn Fn(&Spanned<Statement>) -> usize,
        line: &dyn Fn(Span) -> usize,
    ) -> Result<(Labels<'s>, Vec<usize>), Diagnostic> {
        let mut labels = Labels { parents: vec![0], defs: HashMap::new() };
        let mut open = vec![0usize];
        let mut blocks = Vec::with_capacity(stmts.len());
        let mut n = 0;
        for s in stmts {
            let current = *open.last().unwrap_or(&0);
            match &s.node {
                Statement::Open => {
                    labels.parents.push(current);
                    open.push(labels.parents.len() - 1);
                }
                Statement::Close => {
                    if open.len() > 1 {
                        open.pop();
                    }
                }
                Statement::Label(l) => {
                    if let Some((_, first)) = labels.defs.insert((current, l.as_str()), (n, line(s.span))) {
                        let d = Diagnostic::error(s.span, format!("label `{l}` is defined twice in this thread"));
                        return Err(if current == 0 {
                            d.with_note(format!("the first definition is at line {first}"))
                        } else {
                            d.with_note(format!(
                                "the first definition is at line {first}, in the same `{{ }}` block (the same label in different blocks is allowed)"
                            ))
                        });
                    }
                }
                Statement::Instr(_) => n += width(s),
                Statement::Decl(_) => {}
            }
            blocks.push(*open.last().unwrap_or(&0));
        }
        Ok((labels, blocks))
    }

    /// The instruction a branch in `block` to `name` goes to: the definition of the innermost
    /// block enclosing it that defines `name`.
    pub(super) fn resolve(&self, block: usize, name: &str) -> Option<usize> {
        let mut b = block;
        loop {
            if let Some((target, _)) = self.defs.get(&(b, name)) {
                return Some(*target);
            }
            if b == 0 {
                return None;
            }
            b = self.parents.get(b).copied().unwrap_or(0);
        }
    }

    /// The line of some definition of `name` (for a message about a label out of scope).
    pub(super) fn defined_at(&self, name: &str) -> Option<usize> {
        self.defs.iter().filter(|((_, n), _)| *n == name).map(|(_, (_, line))| *line).min()
    }
}
