//! What a kernel check abstracts: the register-only instructions the model does not interpret
//! (floating-point math, `mma` on registers, warp shuffles and votes), which the lowering of a
//! kernel-form test turns into unknown values (`program::unknown`, `Op::Opaque`). A value they
//! compute never decides anything silently: a branch on it goes both ways, and an address, a size
//! or a synchronization operand that needs it stops the check at its line, naming the
//! instruction that made it unknown.

use crate::diag::{Diagnostic, SourceFile, Span};
use crate::program::unknown::UnknownKind;

/// An instruction taken out of the program, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Abstracted {
    pub line: usize,
    pub instruction: String,
    pub why: String,
}

/// The instructions the lowering of the litmus test `text` (named `name`) abstracts, in line
/// order; an error where the test does not lower.
pub fn abstracted(name: &str, text: &str, limits: &crate::config::InputLimits) -> Result<Vec<Abstracted>, Diagnostic> {
    let program = match crate::program::load::parse_program_with(SourceFile::new(name, text.to_string()), limits) {
        Ok(p) => p,
        Err(crate::LoadError::Syntax(d)) => return Err(d.diagnostic),
        Err(e) => return Err(Diagnostic::error(Span::default(), e.to_string())),
    };
    let mut out: Vec<Abstracted> = program
        .unknowns
        .iter()
        .filter(|u| u.kind == UnknownKind::Abstracted)
        .map(|u| Abstracted { line: u.line, instruction: u.what.clone(), why: u.why.clone() })
        .collect();
    out.sort_by_key(|a| a.line);
    Ok(out)
}
