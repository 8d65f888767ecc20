//! Source files, spans and user-facing diagnostics.
//!
//! Every error caused by user input (a litmus test, a cat model, a CSV suite) is a [`Diagnostic`]:
//! a message, the source span it points at, and optional notes. Rendering goes through
//! codespan-reporting so the user sees `file:line:col`, the offending line and a caret, and a
//! one-line form (`file:line:col: error: ...`) is available for logs and suite mode.

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor};
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// A byte range `[start, end)` into one source file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }

    pub fn range(self) -> Range<usize> {
        self.start..self.end
    }
}

/// A value together with the span it was parsed from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spanned<T> {
    pub node: T,
    pub span: Span,
}

impl<T> Spanned<T> {
    pub fn new(node: T, span: Span) -> Self {
        Spanned { node, span }
    }
}

/// A named source text, shared cheaply between the stages that report on it.
#[derive(Clone)]
pub struct SourceFile {
    name: Arc<str>,
    text: Arc<str>,
    line_starts: Arc<[usize]>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        let text: String = text.into();
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceFile { name: name.into().into(), text: text.into(), line_starts: starts.into() }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = match self.line_starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        let start = self.line_starts[line];
        let col = self.text[start..offset].chars().count() + 1;
        (line + 1, col)
    }

    /// The source text of a span.
    pub fn slice(&self, span: Span) -> &str {
        &self.text[span.start.min(self.text.len())..span.end.min(self.text.len())]
    }
}

impl fmt::Debug for SourceFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SourceFile({})", self.name)
    }
}

/// An error (or warning) about user input, pointing at a span of a source file.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub message: String,
    pub span: Span,
    /// Extra lines: what was expected, hints about how to fix it.
    pub notes: Vec<String>,
    pub severity: Severity,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Self {
        Diagnostic { message: message.into(), span, notes: Vec::new(), severity: Severity::Error }
    }

    pub fn warning(span: Span, message: impl Into<String>) -> Self {
        Diagnostic { message: message.into(), span, notes: Vec::new(), severity: Severity::Warning }
    }

    /// "expected X, found Y" in one consistent wording.
    pub fn expected(span: Span, expected: impl fmt::Display, found: impl fmt::Display) -> Self {
        Self::error(span, format!("expected {expected}, found {found}"))
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// The one-line form `file:line:col: error: message`.
    pub fn one_line(&self, file: &SourceFile) -> String {
        let (line, col) = file.line_col(self.span.start);
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        format!("{}:{}:{}: {}: {}", file.name(), line, col, sev, self.message)
    }

    /// The full rendering: location line, source excerpt with a caret, notes.
    pub fn render(&self, file: &SourceFile, color: bool) -> String {
        let simple = SimpleFile::new(file.name(), file.text());
        let mut cs = match self.severity {
            Severity::Error => CsDiagnostic::error(),
            Severity::Warning => CsDiagnostic::warning(),
        };
        let (line, col) = file.line_col(self.span.start);
        cs = cs
            .with_message(format!("{}:{}:{}: {}", file.name(), line, col, self.message))
            .with_labels(vec![Label::primary((), self.span.range())])
            .with_notes(self.notes.clone());
        let mut buf = if color { termcolor::Buffer::ansi() } else { termcolor::Buffer::no_color() };
        let config = term::Config::default();
        if term::emit(&mut buf, &config, &simple, &cs).is_err() {
            return self.one_line(file);
        }
        String::from_utf8_lossy(buf.as_slice()).into_owned()
    }
}

/// A diagnostic bound to the file it is about, so it can be printed on its own.
#[derive(Clone, Debug)]
pub struct FileDiagnostic {
    pub file: SourceFile,
    pub diagnostic: Diagnostic,
}

impl FileDiagnostic {
    pub fn new(file: &SourceFile, diagnostic: Diagnostic) -> Self {
        FileDiagnostic { file: file.clone(), diagnostic }
    }

    pub fn one_line(&self) -> String {
        self.diagnostic.one_line(&self.file)
    }

    pub fn render(&self, color: bool) -> String {
        self.diagnostic.render(&self.file, color)
    }
}

impl fmt::Display for FileDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.one_line())?;
        for n in &self.diagnostic.notes {
            write!(f, "\n  = {n}")?;
        }
        Ok(())
    }
}

impl std::error::Error for FileDiagnostic {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one() {
        let f = SourceFile::new("t.litmus", "ab\ncd\n");
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(1), (1, 2));
        assert_eq!(f.line_col(3), (2, 1));
        assert_eq!(f.line_col(4), (2, 2));
        let d = Diagnostic::expected(Span::new(3, 4), "`;`", "`c`");
        assert_eq!(d.one_line(&f), "t.litmus:2:1: error: expected `;`, found `c`");
        assert!(d.render(&f, false).contains("t.litmus:2:1"));
    }
}
