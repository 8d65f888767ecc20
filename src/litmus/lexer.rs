//! Tokens of the litmus dialect, produced by a logos lexer.
//!
//! Lexing is deliberately context-light: one token set serves the init block, the program rows
//! and the condition. Two things the grammar cares about are decided here rather than in the
//! parser:
//!
//! * An opcode such as `cp.async.bulk.shared::cluster.global` is one [`Tok::Ident`] (a word with
//!   `.`/`::`-joined parts), so the parser never has to reason about whitespace between parts.
//! * Lexical errors (an unknown character, a `(*` without `*)`, a `/*` without `*/`) do not stop lexing: they become
//!   error tokens in the stream, and the parser reports them when it reaches them, where it knows
//!   what it expected instead.
//!
//! The header line (`PTX <name>`) is not tokenized: its name is free text and is taken raw by the
//! parser, which starts the token stream on the following line.

use crate::diag::Span;
use logos::{FilterResult, Logos};

/// Kinds of tokens. Variants without a pattern are made by [`tokenize`], not by logos.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip r"//[^\n]*")]
pub enum Tok {
    /// A word, possibly with `.`- or `::`-joined parts: `x`, `P0`, `st.relaxed.gpu`,
    /// `fence.proxy.async.shared::cta`. `$` is allowed as in PTX identifiers (`$L__BB0_1`).
    #[regex(r"[A-Za-z_$][A-Za-z0-9_$]*((\.|::)[A-Za-z0-9_$]+)*")]
    Ident,
    /// `%r1`, `%p`, `%tid.x`.
    #[regex(r"%[A-Za-z0-9_$]+(\.[A-Za-z0-9_$]+)*")]
    PercentName,
    /// A PTX directive or declaration keyword: `.reg`, `.shared`, `.align`, `.b32`, `.pragma`.
    /// A `.` followed by a digit (`0.25`) or by nothing stays [`Tok::Unknown`].
    #[regex(r"\.[A-Za-z_][A-Za-z0-9_$]*(::[A-Za-z0-9_$]+)*")]
    Directive,
    /// A non-negative integer literal, decimal or hex; the sign is a separate [`Tok::Minus`].
    #[regex(r"[0-9]+")]
    #[regex(r"0[xX][0-9a-fA-F]+")]
    /// PTX float literals as bit patterns: `0f3FC00000` (.f32), `0d3FF8000000000000` (.f64).
    #[regex(r"0[fF][0-9a-fA-F]{8}")]
    #[regex(r"0[dD][0-9a-fA-F]{16}")]
    Int,
    /// A quoted comment `"..."` (may span lines).
    #[token("\"", string)]
    Str,
    /// `(* ... *)` is skipped; this is only emitted when the comment never ends.
    #[token("(*", block_comment)]
    UnterminatedComment,
    /// PTX's `/* ... */` is skipped; this is only emitted when the comment never ends.
    #[token("/*", c_comment)]
    UnterminatedCComment,
    /// `<< ... >>` (an execution configuration, ignored) is skipped; emitted when unterminated.
    #[token("<<", exec_config)]
    UnterminatedExecConfig,
    /// A `"` without its closing quote.
    UnterminatedStr,
    /// A character that starts no token.
    Unknown,
    /// The end of the input (always the last token of a stream).
    Eof,
    /// Not produced by the lexer: the parser reports a line break inside a program row with it.
    Eol,

    #[token("|")]
    Bar,
    #[token(";")]
    Semi,
    #[token(",")]
    Comma,
    #[token(":")]
    Colon,
    #[token("@")]
    At,
    #[token("!")]
    Bang,
    #[token("&")]
    Amp,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("=")]
    Eq,
    #[token("==")]
    EqEq,
    #[token("!=")]
    Ne,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("~")]
    Tilde,
    #[token("/\\")]
    And,
    #[token("\\/")]
    Or,
}

/// One token: its kind, where it is, and whether a line break precedes it (program rows are
/// line-based, so the parser needs to see line breaks without them being tokens everywhere).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: Tok,
    pub span: Span,
    pub line_start: bool,
}

/// Skips to the closing `*)`; without one, the comment runs to the end of the file and becomes an
/// error token (the parser then points at the opening `(*`).
fn block_comment(lex: &mut logos::Lexer<Tok>) -> FilterResult<Tok, ()> {
    skip_until(lex, "*)", Tok::UnterminatedComment)
}

fn c_comment(lex: &mut logos::Lexer<Tok>) -> FilterResult<Tok, ()> {
    skip_until(lex, "*/", Tok::UnterminatedCComment)
}

fn exec_config(lex: &mut logos::Lexer<Tok>) -> FilterResult<Tok, ()> {
    skip_until(lex, ">>", Tok::UnterminatedExecConfig)
}

fn skip_until(lex: &mut logos::Lexer<Tok>, close: &str, unterminated: Tok) -> FilterResult<Tok, ()> {
    match lex.remainder().find(close) {
        Some(i) => {
            lex.bump(i + close.len());
            FilterResult::Skip
        }
        None => {
            lex.bump(lex.remainder().len());
            FilterResult::Emit(unterminated)
        }
    }
}

fn string(lex: &mut logos::Lexer<Tok>) -> Tok {
    match lex.remainder().find('"') {
        Some(i) => {
            lex.bump(i + 1);
            Tok::Str
        }
        None => {
            lex.bump(lex.remainder().len());
            Tok::UnterminatedStr
        }
    }
}

/// Tokenizes `text[start..]` (spans are offsets into the whole `text`). The stream always ends
/// with one [`Tok::Eof`] token, placed right after the last real token (or at `start`): "found
/// end of file" then points where the missing text belongs, not at trailing blank lines.
pub fn tokenize(text: &str, start: usize) -> Vec<Token> {
    let mut tokens = lex(text, start, usize::MAX);
    let end = tokens.last().map_or(start.min(text.len()), |t| t.span.end);
    tokens.push(Token { kind: Tok::Eof, span: Span::new(end, end), line_start: true });
    tokens
}

/// The first token of `text` (comments skipped), or [`Tok::Eof`]: the header line is read raw,
/// so only its leading architecture word goes through the lexer.
pub fn first_token(text: &str) -> Token {
    let end = text.len();
    lex(text, 0, 1).pop().unwrap_or(Token { kind: Tok::Eof, span: Span::new(end, end), line_start: true })
}

/// Up to `limit` tokens of `text[start..]`, with error tokens narrowed to the opener that failed.
fn lex(text: &str, start: usize, limit: usize) -> Vec<Token> {
    let start = start.min(text.len());
    let mut lex = Tok::lexer(&text[start..]);
    let mut tokens = Vec::with_capacity((text.len() - start) / 4);
    let mut prev_end = start;
    while tokens.len() < limit {
        let Some(result) = lex.next() else { break };
        let range = lex.span();
        let mut span = Span::new(start + range.start, start + range.end);
        let kind = result.unwrap_or(Tok::Unknown);
        match kind {
            // Point at the opener only, not at the rest of the file it swallowed.
            Tok::UnterminatedComment | Tok::UnterminatedCComment | Tok::UnterminatedExecConfig => span.end = span.start + 2,
            Tok::UnterminatedStr => span.end = span.start + 1,
            _ => {}
        }
        let line_start = prev_end == start || text[prev_end..span.start].contains('\n');
        tokens.push(Token { kind, span, line_start });
        prev_end = span.end;
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<Tok> {
        tokenize(text, 0).into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn lexes_opcodes_as_one_word() {
        let text = "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [d], [s]";
        let toks = tokenize(text, 0);
        assert_eq!(toks[0].kind, Tok::Ident);
        assert_eq!(&text[toks[0].span.range()], "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes");
    }

    #[test]
    fn lexes_conditions_without_spaces() {
        use Tok::*;
        assert_eq!(kinds("0==0"), vec![Int, EqEq, Int, Eof]);
        assert_eq!(kinds("~exists (P0:r1=-1)"), vec![Tilde, Ident, LParen, Ident, Colon, Ident, Eq, Minus, Int, RParen, Eof]);
        assert_eq!(kinds(r"a /\ b \/ c"), vec![Ident, And, Ident, Or, Ident, Eof]);
        assert_eq!(kinds("LC00: x.y."), vec![Ident, Colon, Ident, Unknown, Eof]);
    }

    #[test]
    fn skips_comments_and_keeps_strings() {
        use Tok::*;
        assert_eq!(kinds("(* a\n b *) x // c \"\n<< 1,1 >> \"s//t\""), vec![Ident, Str, Eof]);
        assert_eq!(kinds("x (* y"), vec![Ident, UnterminatedComment, Eof]);
        assert_eq!(kinds("x \" y"), vec![Ident, UnterminatedStr, Eof]);
    }

    #[test]
    fn lexes_ptx_directives_and_comments() {
        use Tok::*;
        assert_eq!(kinds(".reg .b32 %r<15>;"), vec![Directive, Directive, PercentName, Lt, Int, Gt, Semi, Eof]);
        assert_eq!(kinds(".shared::cta .align 8"), vec![Directive, Directive, Int, Eof]);
        // A `.` before a digit is not a directive: fractions stay as they were.
        assert_eq!(kinds("0.25 x.y."), vec![Int, Unknown, Int, Ident, Unknown, Eof]);
        assert_eq!(kinds("a /* b \n c */ d /\\ e"), vec![Ident, Ident, And, Ident, Eof]);
        assert_eq!(kinds("x /* y"), vec![Ident, UnterminatedCComment, Eof]);
        let toks = tokenize("a /* \n */ b", 0);
        assert!(toks[1].line_start, "a comment spanning lines ends the line");
    }

    #[test]
    fn error_tokens_keep_char_boundaries() {
        let text = "x é ∀ y";
        for t in tokenize(text, 0) {
            assert!(text.is_char_boundary(t.span.start) && text.is_char_boundary(t.span.end), "{t:?}");
        }
    }

    #[test]
    fn marks_line_starts() {
        let toks = tokenize("a b\n c (* \n *) d", 0);
        let starts: Vec<bool> = toks.iter().map(|t| t.line_start).collect();
        assert_eq!(starts, vec![true, false, true, true, true]);
    }
}
