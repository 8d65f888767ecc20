//! Tokenizer for the cat language (Dat3M's `Cat.g4` token set).
//!
//! Hand-written rather than generated: cat needs nested `(* *)` comments and the `-1` / NAME
//! overlap (`-1` is the inverse token only when it is not the start of a longer name), both of
//! which are simpler to state as code than as competing regular expressions.

use crate::diag::{Diagnostic, Span};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keyword {
    Let,
    Rec,
    And,
    As,
    ToId,
    Show,
    Unshow,
    Include,
    Cut,
    Acyclic,
    Irreflexive,
    Empty,
    Flag,
    UndefinedUnless,
    Domain,
    Range,
    NewSet,
    NewRelation,
}

impl Keyword {
    fn from_word(w: &str) -> Option<Keyword> {
        Some(match w {
            "let" => Keyword::Let,
            "rec" => Keyword::Rec,
            "and" => Keyword::And,
            "as" => Keyword::As,
            "toid" => Keyword::ToId,
            "show" => Keyword::Show,
            "unshow" => Keyword::Unshow,
            "include" => Keyword::Include,
            "cut" => Keyword::Cut,
            "acyclic" => Keyword::Acyclic,
            "irreflexive" => Keyword::Irreflexive,
            "empty" => Keyword::Empty,
            "flag" => Keyword::Flag,
            "undefined_unless" => Keyword::UndefinedUnless,
            "domain" => Keyword::Domain,
            "range" => Keyword::Range,
            "newSet" => Keyword::NewSet,
            "newRelation" => Keyword::NewRelation,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Keyword::Let => "let",
            Keyword::Rec => "rec",
            Keyword::And => "and",
            Keyword::As => "as",
            Keyword::ToId => "toid",
            Keyword::Show => "show",
            Keyword::Unshow => "unshow",
            Keyword::Include => "include",
            Keyword::Cut => "cut",
            Keyword::Acyclic => "acyclic",
            Keyword::Irreflexive => "irreflexive",
            Keyword::Empty => "empty",
            Keyword::Flag => "flag",
            Keyword::UndefinedUnless => "undefined_unless",
            Keyword::Domain => "domain",
            Keyword::Range => "range",
            Keyword::NewSet => "newSet",
            Keyword::NewRelation => "newRelation",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    Name(String),
    /// A double-quoted string, without the quotes.
    Str(String),
    Kw(Keyword),
    Eq,
    Star,
    Plus,
    Opt,
    /// `-1`
    Inv,
    Not,
    Amp,
    Bar,
    Semi,
    Backslash,
    Pow,
    LPar,
    RPar,
    LBrack,
    RBrack,
    Comma,
    Eof,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Tok::Name(n) => return write!(f, "name `{n}`"),
            Tok::Str(s) => return write!(f, "string \"{s}\""),
            Tok::Kw(k) => return write!(f, "keyword `{}`", k.as_str()),
            Tok::Eof => return write!(f, "end of file"),
            Tok::Eq => "=",
            Tok::Star => "*",
            Tok::Plus => "+",
            Tok::Opt => "?",
            Tok::Inv => "-1",
            Tok::Not => "~",
            Tok::Amp => "&",
            Tok::Bar => "|",
            Tok::Semi => ";",
            Tok::Backslash => "\\",
            Tok::Pow => "^",
            Tok::LPar => "(",
            Tok::RPar => ")",
            Tok::LBrack => "[",
            Tok::RBrack => "]",
            Tok::Comma => ",",
        };
        write!(f, "`{s}`")
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')
}

/// Tokenizes `text`; all spans are shifted by `base` (the file's global offset). The result
/// always ends with an [`Tok::Eof`] token.
pub fn lex(text: &str, base: usize) -> Result<Vec<Token>, Diagnostic> {
    let bytes = text.as_bytes();
    let sp = |s: usize, e: usize| Span::new(base + s, base + e);
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let start = i;
        let next = bytes.get(i + 1).copied();
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if b == b'/' && next == Some(b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if b == b'/' && next == Some(b'*') {
            match text[i + 2..].find("*/") {
                Some(off) => i += 2 + off + 2,
                None => return Err(Diagnostic::error(sp(start, start + 2), "unterminated comment `/* ... */`")),
            }
            continue;
        }
        if b == b'(' && next == Some(b'*') {
            // herd's OCaml-style comments nest.
            let mut depth = 1;
            i += 2;
            while depth > 0 {
                match (bytes.get(i), bytes.get(i + 1)) {
                    (None, _) => {
                        return Err(Diagnostic::error(sp(start, start + 2), "unterminated comment `(* ... *)`"));
                    }
                    (Some(b'('), Some(b'*')) => {
                        depth += 1;
                        i += 2;
                    }
                    (Some(b'*'), Some(b')')) => {
                        depth -= 1;
                        i += 2;
                    }
                    _ => i += 1,
                }
            }
            continue;
        }
        if b == b'"' {
            match text[i + 1..].find('"') {
                Some(off) => {
                    let s = text[i + 1..i + 1 + off].to_string();
                    i += off + 2;
                    out.push(Token { tok: Tok::Str(s), span: sp(start, i) });
                }
                None => return Err(Diagnostic::error(sp(start, start + 1), "unterminated string")),
            }
            continue;
        }
        if is_name_byte(b) {
            let mut j = i;
            while j < bytes.len() && is_name_byte(bytes[j]) {
                j += 1;
            }
            let word = &text[i..j];
            // `-1` is the inverse token unless it begins a longer name (longest match wins).
            let tok = if word == "-1" {
                Tok::Inv
            } else if let Some(k) = Keyword::from_word(word) {
                Tok::Kw(k)
            } else {
                Tok::Name(word.to_string())
            };
            out.push(Token { tok, span: sp(i, j) });
            i = j;
            continue;
        }
        let tok = match b {
            b'=' => Tok::Eq,
            b'*' => Tok::Star,
            b'+' => Tok::Plus,
            b'?' => Tok::Opt,
            b'~' => Tok::Not,
            b'&' => Tok::Amp,
            b'|' => Tok::Bar,
            b';' => Tok::Semi,
            b'\\' => Tok::Backslash,
            b'^' => Tok::Pow,
            b'(' => Tok::LPar,
            b')' => Tok::RPar,
            b'[' => Tok::LBrack,
            b']' => Tok::RBrack,
            b',' => Tok::Comma,
            _ => {
                let ch = text[i..].chars().next().unwrap_or('?');
                return Err(Diagnostic::error(sp(i, i + ch.len_utf8()), format!("unexpected character `{ch}`")));
            }
        };
        i += 1;
        out.push(Token { tok, span: sp(start, i) });
    }
    out.push(Token { tok: Tok::Eof, span: sp(bytes.len(), bytes.len()) });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex(s, 0).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn names_keywords_and_inverse() {
        let n = |s: &str| Tok::Name(s.to_string());
        assert_eq!(
            toks("let po-loc = r^-1 | x-1 (* c (* nested *) *) // line\n/* block */ 0 _"),
            vec![Tok::Kw(Keyword::Let), n("po-loc"), Tok::Eq, n("r"), Tok::Pow, Tok::Inv, Tok::Bar, n("x-1"), n("0"), n("_"), Tok::Eof]
        );
        assert_eq!(toks("(*******)r"), vec![n("r"), Tok::Eof]);
        assert_eq!(toks("\"a title\""), vec![Tok::Str("a title".into()), Tok::Eof]);
    }

    #[test]
    fn lexical_errors_have_spans() {
        let e = lex("let a = b @", 0).unwrap_err();
        assert_eq!(e.span, Span::new(10, 11));
        let e = lex("x (* open", 0).unwrap_err();
        assert_eq!(e.span, Span::new(2, 4));
        assert!(lex("\"abc", 0).is_err());
    }
}
