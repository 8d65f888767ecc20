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

    /// Whether `other` lies inside this span.
    pub fn contains(self, other: Span) -> bool {
        self.start <= other.start && other.end <= self.end
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
    /// A source file; line endings are normalised to `\n` (CRLF, and the old Mac's lone CR),
    /// so that every line break counts and positions are the ones an editor shows.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        let mut text: String = text.into();
        if text.contains('\r') {
            text = text.replace("\r\n", "\n").replace('\r', "\n");
        }
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
        let (line, col) = file.line_col(self.span.start);
        // A very long line is shown as a window around the span, so that an error on a
        // megabyte-long line prints a few hundred characters, not the line and its carets.
        let (text, range, window_note) = window(file.text(), self.span.range(), line);
        let simple = SimpleFile::new(file.name(), text.as_ref());
        let mut cs = match self.severity {
            Severity::Error => CsDiagnostic::error(),
            Severity::Warning => CsDiagnostic::warning(),
        };
        let mut notes = self.notes.clone();
        notes.extend(window_note);
        cs = cs
            .with_message(format!("{}:{}:{}: {}", file.name(), line, col, self.message))
            .with_labels(vec![Label::primary((), range)])
            .with_notes(notes);
        let mut buf = if color { termcolor::Buffer::ansi() } else { termcolor::Buffer::no_color() };
        let config = term::Config::default();
        if term::emit(&mut buf, &config, &simple, &cs).is_err() {
            return self.one_line(file);
        }
        String::from_utf8_lossy(buf.as_slice()).into_owned()
    }
}

/// Longest line shown whole in a rendered diagnostic; a span's underline is cut to as much.
const MAX_SHOWN: usize = 200;

/// The text to render for a span on line `line` (1-based): the file itself when the line is
/// short; otherwise `line - 1` empty lines (so the gutter keeps the line number) and a window of
/// the line around the span, the span's range in it, and a note saying what was cut.
fn window(text: &str, span: std::ops::Range<usize>, line: usize) -> (std::borrow::Cow<'_, str>, std::ops::Range<usize>, Option<String>) {
    let start = span.start.min(text.len());
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    if line_end - line_start <= MAX_SHOWN {
        return (text.into(), span, None);
    }
    let floor = |mut i: usize| {
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let from = floor(start.saturating_sub(MAX_SHOWN / 2).max(line_start));
    let to = floor((from + MAX_SHOWN).min(line_end));
    let excerpt = &text[from..to];
    let prefix = "\n".repeat(line - 1);
    let s = prefix.len() + (start - from);
    let e = (prefix.len() + span.end.min(to).saturating_sub(from)).max(s);
    let note = format!(
        "line {line} is {} bytes long; bytes {}..{} of it are shown",
        line_end - line_start,
        from - line_start + 1,
        to - line_start
    );
    (format!("{prefix}{excerpt}").into(), s..e, Some(note))
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

/// Levenshtein distance, for "did you mean `exists`?" hints.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != cb)).min(row[j] + 1).min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

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
