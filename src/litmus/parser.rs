//! Recursive-descent parser from litmus text to [`ast::LitmusTest`](super::ast::LitmusTest).
//!
//! The grammar follows Dat3M's `LitmusPTX.g4` with the extensions real PTX needs (guards, `%`
//! registers, address and vector operands, dotted opcodes with `::`). The parser stops at the
//! first error: a litmus file is small and a single precise "expected X, found Y" is more useful
//! than a cascade.
//!
//! Program rows are line-based: inside a row, a token that starts a new line reads as
//! [`Tok::Eol`], so a forgotten `;` is reported at the end of the line it belongs to rather than
//! somewhere in the next row.
//! Kept in one file past 1,200 lines: it is one recursive-descent parser whose rules call each
//! other (header, init block, code forms, condition), and `parser_tests.rs` holds its tests.

use super::ast::*;
use super::lexer::{first_token, tokenize, Tok, Token};
use crate::diag::{Diagnostic, SourceFile, Span, Spanned};

mod blocks;
mod conditions;
mod declarations;

type PResult<T> = Result<T, Diagnostic>;

/// Deepest nesting of parentheses, `~` and vector braces. Recursion is bounded so that no input
/// can overflow the stack.
const MAX_DEPTH: usize = 64;

/// Most `/\`, `\/` and `~` operators in one proposition. Chains are parsed iteratively but build
/// a tree as deep as they are long, and dropping a tree recurses, so their length is bounded too.
const MAX_PROP_OPERATORS: usize = 4096;

/// Words that end the program and start the trailing sections.
const SECTION_WORDS: [&str; 6] = ["locations", "filter", "exists", "forall", "not", "final"];

/// The proxies an alias can be declared with (`y @ surface aliases x`).
const PROXIES: [&str; 4] = ["generic", "surface", "texture", "constant"];

/// Parses a whole litmus file; see the module docs for the grammar.
pub fn parse(file: &SourceFile) -> PResult<LitmusTest> {
    let (arch, name, rest) = header(file)?;
    let mut parser =
        Parser { file, text: file.text(), toks: tokenize(file.text(), rest), pos: 0, row_start: None, depth: 0, prop_operators: 0 };
    parser.litmus(arch, name)
}

/// Reads `PTX <name>`: the architecture word through the lexer, the name raw up to the end of its
/// line (test names are free text such as `SB+fence.sc.gpu-ld.weak`). Returns the offset where
/// tokenizing resumes.
fn header(file: &SourceFile) -> PResult<(Spanned<String>, Spanned<String>, usize)> {
    let text = file.text();
    let arch = first_token(text);
    let arch_text = &text[arch.span.range()];
    if arch.kind != Tok::Ident || !matches!(arch_text, "PTX" | "ptx") {
        return Err(lexical_error(arch).unwrap_or_else(|| {
            let d = Diagnostic::expected(arch.span, "the architecture `PTX` at the start of the file", describe(text, arch))
                .with_note("a litmus file starts with a header line such as `PTX MP+fence.sc.gpu`");
            // A compiled module (`nvcc -ptx`) starts with `.version` after its comments.
            if [".version", ".target", ".address_size"].contains(&arch_text) {
                d.with_note("this is a PTX module: check one of its kernels with `ptxmm kernel FILE` (docs/kernels.md)")
            } else {
                d
            }
        }));
    }
    let line_end = text[arch.span.end..].find('\n').map_or(text.len(), |i| arch.span.end + i);
    let raw = &text[arch.span.end..line_end];
    let name_start = arch.span.end + (raw.len() - raw.trim_start().len());
    let name = raw.trim();
    let name_span = Span::new(name_start, name_start + name.len());
    if name.is_empty() {
        let at = Span::new(arch.span.end, arch.span.end);
        return Err(Diagnostic::expected(at, "a test name after `PTX`", "end of line")
            .with_note("the test name is the rest of the header line, e.g. `PTX SB+fence.sc.gpu`"));
    }
    Ok((Spanned::new(arch_text.to_string(), arch.span), Spanned::new(name.to_string(), name_span), line_end))
}

/// How a token is shown in "found ..." (never the whole rest of the file).
fn describe(text: &str, tok: Token) -> String {
    let slice = &text[tok.span.range()];
    match tok.kind {
        Tok::Eof => "end of file".to_string(),
        Tok::Eol => "end of line".to_string(),
        Tok::Str => "a quoted string".to_string(),
        Tok::Unknown => format!("unknown character `{slice}`"),
        _ => {
            let short: String = slice.chars().take(40).collect();
            if short.len() < slice.len() {
                format!("`{short}...`")
            } else {
                format!("`{short}`")
            }
        }
    }
}

/// The diagnostic for a token that is itself a lexical error which no expectation explains
/// (a comment or string that never ends).
fn lexical_error(tok: Token) -> Option<Diagnostic> {
    let (expected, note) = match tok.kind {
        Tok::UnterminatedComment => ("`*)` to close this comment", "comments are written `(* ... *)`"),
        Tok::UnterminatedCComment => ("`*/` to close this comment", "PTX comments are written `/* ... */` or `// ...`"),
        Tok::UnterminatedStr => ("a closing `\"` for this string", "quoted comments are written `\"...\"`"),
        Tok::UnterminatedExecConfig => ("`>>` to close this `<<`", "execution configurations are written `<< ... >>`"),
        _ => return None,
    };
    Some(Diagnostic::expected(tok.span, expected, "end of file").with_note(note))
}

/// `P0`, `P12`: the spelling of a thread in headers, init items and conditions.
fn thread_number(word: &str) -> Option<&str> {
    word.strip_prefix('P').filter(|d| is_number(d))
}

/// `P1.7`: warp column 1's lane 7 (the digits of both).
fn lane_number(word: &str) -> Option<(&str, &str)> {
    let (thread, lane) = word.split_once('.')?;
    thread_number(thread).zip(Some(lane).filter(|l| is_number(l)))
}

/// Decimal digits, at least one.
fn is_number(word: &str) -> bool {
    !word.is_empty() && word.bytes().all(|b| b.is_ascii_digit())
}

/// A name with no `.`/`::` parts: only opcodes are dotted.
fn is_plain(word: &str) -> bool {
    !word.contains(['.', ':'])
}

/// A float literal as PTX writes it: `0fXXXXXXXX` (the 32 bits of an `.f32`) or
/// `0dXXXXXXXXXXXXXXXX` (the 64 bits of an `.f64`), as the integer bit pattern.
pub fn hex_float_bits(text: &str) -> Option<i64> {
    let (kind, digits) = text.split_at_checked(2)?;
    match kind {
        "0f" | "0F" if digits.len() == 8 => u32::from_str_radix(digits, 16).ok().map(|b| b as i64),
        "0d" | "0D" if digits.len() == 16 => u64::from_str_radix(digits, 16).ok().map(|b| b as i64),
        _ => None,
    }
}

/// The value of an integer literal, with its sign. Hex literals up to `u64::MAX` are taken as
/// 64-bit patterns (`0xffffffffffffffff` is -1), as PTX's `.b64` constants are.
fn int_value(text: &str, negative: bool) -> Option<i64> {
    if let Some(bits) = hex_float_bits(text) {
        return (!negative).then_some(bits);
    }
    let hex = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X"));
    let magnitude: u64 = match hex {
        Some(digits) => u64::from_str_radix(digits, 16).ok()?,
        None => text.parse().ok()?,
    };
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else if hex.is_some() {
        Some(magnitude as i64)
    } else {
        i64::try_from(magnitude).ok()
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

use crate::diag::edit_distance;

/// The right-hand side of an init item.
enum InitValue {
    Int(Spanned<i64>),
    Location { name: Spanned<String>, address_of: bool },
}

struct Parser<'a> {
    file: &'a SourceFile,
    text: &'a str,
    /// Never empty: the last token is [`Tok::Eof`].
    toks: Vec<Token>,
    pos: usize,
    /// Index of the first token of the row being parsed, if any; see [`Parser::tok`].
    row_start: Option<usize>,
    depth: usize,
    prop_operators: usize,
}

impl<'a> Parser<'a> {
    // ---- token access -------------------------------------------------------------------------

    /// The current token. Inside a row, a token that starts a later line (or the end of file) is
    /// reported as [`Tok::Eol`] at the end of the previous token: rows never span lines.
    fn tok(&self) -> Token {
        let tok = self.raw(0);
        match self.row_start {
            Some(first) if self.pos > first && tok.line_start => {
                let end = self.prev_span().end;
                Token { kind: Tok::Eol, span: Span::new(end, end), line_start: true }
            }
            _ => tok,
        }
    }

    /// The token `k` places ahead, without the row rule.
    fn raw(&self, k: usize) -> Token {
        let last = self.toks.len() - 1;
        self.toks[(self.pos + k).min(last)]
    }

    fn kind(&self) -> Tok {
        self.tok().kind
    }

    /// The span of the last consumed token (or an empty span at the start).
    fn prev_span(&self) -> Span {
        match self.pos.checked_sub(1) {
            Some(i) => self.toks[i].span,
            None => Span::new(self.toks[0].span.start, self.toks[0].span.start),
        }
    }

    fn slice(&self, tok: Token) -> &'a str {
        &self.text[tok.span.range()]
    }

    /// Consumes the current token; the end of input and of a row are never consumed.
    fn bump(&mut self) -> Token {
        let tok = self.tok();
        if !matches!(tok.kind, Tok::Eof | Tok::Eol) {
            self.pos += 1;
        }
        tok
    }

    fn at(&self, kind: Tok) -> bool {
        self.kind() == kind
    }

    fn at_word(&self, word: &str) -> bool {
        let tok = self.tok();
        tok.kind == Tok::Ident && self.slice(tok) == word
    }

    fn eat(&mut self, kind: Tok) -> Option<Token> {
        self.at(kind).then(|| self.bump())
    }

    fn expect(&mut self, kind: Tok, expected: &str) -> PResult<Token> {
        self.eat(kind).ok_or_else(|| self.unexpected(expected))
    }

    /// "expected `expected`, found <current token>".
    fn unexpected(&self, expected: &str) -> Diagnostic {
        let tok = self.tok();
        lexical_error(tok).unwrap_or_else(|| {
            let d = Diagnostic::expected(tok.span, expected, describe(self.text, tok));
            if tok.kind == Tok::Unknown {
                d.with_note("this character starts no token of the litmus syntax")
            } else {
                d
            }
        })
    }

    /// Runs `f` one nesting level deeper, refusing to go past [`MAX_DEPTH`].
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.depth >= MAX_DEPTH {
            let tok = self.tok();
            return Err(Diagnostic::expected(tok.span, format!("at most {MAX_DEPTH} levels of nesting"), "deeper nesting"));
        }
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    fn line_col_note(&self, what: &str, span: Span) -> String {
        let (line, col) = self.file.line_col(span.start);
        format!("{what} at line {line}, column {col}")
    }

    // ---- file structure -----------------------------------------------------------------------

    fn litmus(&mut self, arch: Spanned<String>, name: Spanned<String>) -> PResult<LitmusTest> {
        let comments = self.comments();
        let init = self.init_block()?;
        let threads = self.thread_headers()?;
        let (form, code) = self.program_code(threads.len())?;
        let locations = if self.at_word("locations") { self.locations()? } else { Vec::new() };
        let filter = if self.at_word("filter") { Some(self.filter()?) } else { None };
        let condition = if self.at_condition() { Some(self.condition()?) } else { None };
        if !self.at(Tok::Eof) {
            let mut d = self.unexpected("end of file");
            if self.at_word("locations") || self.at_word("filter") {
                d = d.with_note("the order is: program, `locations`, `filter`, condition");
            }
            return Err(d);
        }
        Ok(LitmusTest { arch, name, comments, init, threads, form, code, locations, filter, condition })
    }

    /// The quoted strings between the header line and the init block, without their quotes.
    ///
    /// Dat3M skips everything up to the first `{`, and one corpus file relies on it by quoting
    /// inside its comment (`"... means "No, but ..." ... "`). So when the text before the first
    /// `{` starts and ends with a string but has other tokens in between, it is taken as one
    /// comment from the first quote to the last. Anything else that is not a string is left for
    /// [`Parser::init_block`] to reject.
    fn comments(&mut self) -> Vec<String> {
        let start = self.pos;
        let brace = self.toks[start..].iter().position(|t| t.kind == Tok::LBrace).map(|i| start + i);
        if let Some(brace) = brace {
            let between = &self.toks[start..brace];
            if let [first, .., last] = between {
                let quoted = first.kind == Tok::Str && last.kind == Tok::Str;
                if quoted && between.iter().any(|t| t.kind != Tok::Str) {
                    self.pos = brace;
                    return vec![self.text[first.span.start + 1..last.span.end - 1].to_string()];
                }
            }
        }
        let mut comments = Vec::new();
        while let Some(tok) = self.eat(Tok::Str) {
            let text = self.slice(tok);
            comments.push(text[1..text.len() - 1].to_string());
        }
        comments
    }

    // ---- init block ---------------------------------------------------------------------------

    /// `{ item; item; ... }` with an optional `;` after the last item and after the `}`.
    fn init_block(&mut self) -> PResult<Vec<Spanned<InitItem>>> {
        let open = self.eat(Tok::LBrace).ok_or_else(|| {
            self.unexpected("`{` to open the init block")
                .with_note("only quoted comments may come between the header line and the init block")
        })?;
        let mut items = Vec::new();
        while self.eat(Tok::RBrace).is_none() {
            if self.at_thread_header() || self.at(Tok::Eof) {
                return Err(self.missing_init_close(open));
            }
            items.push(self.init_item()?);
            if self.eat(Tok::Semi).is_none() && !self.at(Tok::RBrace) {
                if self.at_thread_header() {
                    return Err(self.missing_init_close(open));
                }
                return Err(self.unexpected("`;` or `}` after an init item"));
            }
        }
        self.eat(Tok::Semi);
        Ok(items)
    }

    fn missing_init_close(&self, open: Token) -> Diagnostic {
        self.unexpected("`}` to close the init block").with_note(self.line_col_note("the init block opens", open.span))
    }

    /// At `P<n>@` (or `P<n> |`, `P<n> ;`): the thread header row.
    fn at_thread_header(&self) -> bool {
        let tok = self.raw(0);
        tok.kind == Tok::Ident && thread_number(self.slice(tok)).is_some() && matches!(self.raw(1).kind, Tok::At | Tok::Bar | Tok::Semi)
    }

    /// At `P0:` or `0:`, the thread prefix of a register.
    fn at_thread_prefix(&self) -> bool {
        let tok = self.raw(0);
        let is_thread = match tok.kind {
            Tok::Int => true,
            Tok::Ident => thread_number(self.slice(tok)).is_some() || lane_number(self.slice(tok)).is_some(),
            _ => false,
        };
        is_thread && self.raw(1).kind == Tok::Colon
    }

    /// One init item; see [`InitItem`]. A C-style type before the name (`int x = 0`,
    /// `unsigned int x`) is accepted and ignored.
    fn init_item(&mut self) -> PResult<Spanned<InitItem>> {
        let start = self.tok().span;
        if self.at(Tok::Directive) {
            let decl = self.declaration()?;
            return Ok(Spanned::new(InitItem::Declaration(decl.node), decl.span));
        }
        // `bar mbarrier(1)` / `s align 16` are variable declarations missing their `@ space`, not a
        // C type before a name: let the declaration parser report what is missing.
        while self.at(Tok::Ident)
            && self.raw(1).kind == Tok::Ident
            && is_plain(self.slice(self.raw(0)))
            && !matches!(self.slice(self.raw(1)), "mbarrier" | "align")
        {
            self.bump();
        }
        let item = if self.at_thread_prefix() {
            let (thread, lane) = self.thread_ref()?;
            self.bump(); // the `:` checked by `at_thread_prefix`
            let reg = self.register("a register name after `:`")?;
            self.expect(Tok::Eq, "`=`")?;
            match self.init_value()? {
                InitValue::Int(value) => InitItem::Register { thread, lane, reg, value },
                InitValue::Location { name, .. } => InitItem::RegisterAddress { thread, lane, reg, location: name },
            }
        } else {
            let name = self.name("an init item (`x = 0`, `P0:r0 = 0` or `y @ generic aliases x`)")?;
            let is_alias = self.at(Tok::At) && self.raw(1).kind == Tok::Ident && PROXIES.contains(&self.slice(self.raw(1)));
            let decl_word = self.at(Tok::Ident) && matches!(self.slice(self.tok()), "mbarrier" | "align");
            let tensormap = self.at(Tok::At) && self.raw(1).kind == Tok::Ident && self.slice(self.raw(1)) == "tensormap";
            let launch = self.at(Tok::At) && self.raw(1).kind == Tok::Ident && self.slice(self.raw(1)) == "launch";
            if launch {
                self.bump();
                self.bump();
                InitItem::Launch(self.tensor_map(name)?)
            } else if tensormap {
                self.bump();
                self.bump();
                InitItem::TensorMap(self.tensor_map(name)?)
            } else if self.at(Tok::LBracket)
                || decl_word
                || (self.at(Tok::At) && !is_alias)
                || (self.at(Tok::Eq) && self.raw(1).kind == Tok::LBrace)
            {
                InitItem::Variable(self.variable(name)?)
            } else if self.eat(Tok::At).is_some() {
                self.alias(name)?
            } else {
                self.expect(Tok::Eq, "`=` or `@`")?;
                match self.init_value()? {
                    InitValue::Int(value) => InitItem::Location { name, value },
                    InitValue::Location { name: source, address_of } => InitItem::LocationFromLocation { name, source, address_of },
                }
            }
        };
        Ok(Spanned::new(item, start.to(self.prev_span())))
    }

    /// The rest of a variable declaration after its name:
    /// `[size]? (@ (global | shared cta N))? (align A)? (mbarrier ((count))?)? (= v | = {v, ...})?`.
    fn variable(&mut self, name: Spanned<String>) -> PResult<VariableDecl> {
        let mut decl = VariableDecl { name, size: None, shared_cta: None, align: None, mbarrier: None, init: None, init_repeats: false };
        if self.eat(Tok::LBracket).is_some() {
            decl.size = Some(self.int("the size of the variable in bytes")?);
            self.expect(Tok::RBracket, "`]` after the size")?;
        }
        if self.eat(Tok::At).is_some() {
            if self.at_word("global") {
                self.bump();
            } else if self.at_word("shared") {
                self.bump();
                if !self.at_word("cta") {
                    return Err(self.unexpected("`cta` (as in `@ shared cta 0`)"));
                }
                self.bump();
                decl.shared_cta = Some(self.int("the CTA owning the shared variable")?);
            } else {
                return Err(self.unexpected("a state space (`global`, `shared cta N`) or a proxy alias (`generic aliases x`)"));
            }
        }
        if self.at_word("align") {
            self.bump();
            decl.align = Some(self.int("an alignment in bytes")?);
        }
        if self.at_word("mbarrier") {
            let start = self.bump().span;
            let mut count = None;
            if self.eat(Tok::LParen).is_some() {
                count = Some(self.int("the expected arrival count of the mbarrier")?.node);
                self.expect(Tok::RParen, "`)`")?;
            }
            decl.mbarrier = Some(Spanned::new(count, start.to(self.prev_span())));
        }
        if self.eat(Tok::Eq).is_some() {
            let start = self.tok().span;
            if self.eat(Tok::LBrace).is_some() {
                let mut values = Vec::new();
                loop {
                    values.push(self.int("an integer word value")?.node);
                    if self.eat(Tok::Comma).is_none() {
                        break;
                    }
                }
                self.expect(Tok::RBrace, "`,` or `}` in the list of word values")?;
                decl.init = Some(Spanned::new(values, start.to(self.prev_span())));
            } else {
                let v = self.int("an initial value (an integer or `{v0, v1, ...}`)")?;
                decl.init = Some(Spanned::new(vec![v.node], v.span));
                decl.init_repeats = true;
            }
        }
        Ok(decl)
    }

    /// The fields of `tmap @ tensormap { key = value; ... }`, after `tensormap`: values are a
    /// word, an integer (`128B` is the word `128B`) or `{v0, v1, ...}`; `;` or `,` separate them.
    fn tensor_map(&mut self, name: Spanned<String>) -> PResult<TensorMapDecl> {
        self.expect(Tok::LBrace, "`{` and the fields of the tensor map (`{ base = g; dims = {8, 4}; box = {4, 2} }`)")?;
        let mut fields = Vec::new();
        while self.eat(Tok::RBrace).is_none() {
            let key = self.name("a tensor-map field (base, at, type, elem, dims, strides, box, oob, swizzle, interleave) or `}`")?;
            self.expect(Tok::Eq, "`=`")?;
            let start = self.tok().span;
            let value = match self.kind() {
                Tok::LBrace => {
                    self.bump();
                    let mut values = Vec::new();
                    loop {
                        values.push(self.int("an integer")?.node);
                        if self.eat(Tok::Comma).is_none() {
                            break;
                        }
                    }
                    self.expect(Tok::RBrace, "`,` or `}` in the list")?;
                    TensorMapValue::List(values)
                }
                Tok::Ident => {
                    let w = self.name("a value")?.node;
                    // `at = param_0+128`: a name and a byte offset.
                    let plus = self.eat(Tok::Plus).is_some();
                    TensorMapValue::Word(if plus { format!("{w}+{}", self.int("a byte offset")?.node) } else { w })
                }
                Tok::Int | Tok::Minus => {
                    let v = self.int("a value")?.node;
                    if self.at(Tok::Ident) && self.tok().span.start == self.prev_span().end {
                        let unit = self.bump();
                        TensorMapValue::Word(format!("{v}{}", self.slice(unit)))
                    } else {
                        TensorMapValue::Int(v)
                    }
                }
                _ => return Err(self.unexpected("a field value (a word, an integer or `{v0, v1, ...}`)")),
            };
            fields.push((key, Spanned::new(value, start.to(self.prev_span()))));
            if self.eat(Tok::Semi).is_none() && self.eat(Tok::Comma).is_none() && !self.at(Tok::RBrace) {
                return Err(self.unexpected("`;` or `}` after a tensor-map field"));
            }
        }
        Ok(TensorMapDecl { name, fields })
    }

    /// The rest of `y @ <proxy> aliases x`, after the `@`.
    fn alias(&mut self, name: Spanned<String>) -> PResult<InitItem> {
        let tok = self.tok();
        if tok.kind != Tok::Ident || !PROXIES.contains(&self.slice(tok)) {
            return Err(self.unexpected("a proxy (`generic`, `surface`, `texture` or `constant`)"));
        }
        self.bump();
        let proxy = Spanned::new(self.slice(tok).to_string(), tok.span);
        if !self.at_word("aliases") {
            return Err(self.unexpected("`aliases`"));
        }
        self.bump();
        let target = self.name("the aliased location")?;
        Ok(InitItem::Alias { name, proxy, target })
    }

    fn init_value(&mut self) -> PResult<InitValue> {
        let expected = "an initial value (an integer, a location or `&location`)";
        match self.kind() {
            Tok::Int | Tok::Minus => Ok(InitValue::Int(self.int(expected)?)),
            Tok::Amp => {
                self.bump();
                Ok(InitValue::Location { name: self.name("a location after `&`")?, address_of: true })
            }
            Tok::Ident => Ok(InitValue::Location { name: self.name(expected)?, address_of: false }),
            _ => Err(self.unexpected(expected)),
        }
    }

    // ---- names and numbers --------------------------------------------------------------------

    /// A plain identifier: a location, a label target, a placement level.
    fn name(&mut self, expected: &str) -> PResult<Spanned<String>> {
        let tok = self.tok();
        if tok.kind != Tok::Ident || !is_plain(self.slice(tok)) {
            return Err(self.unexpected(expected));
        }
        self.bump();
        Ok(Spanned::new(self.slice(tok).to_string(), tok.span))
    }

    /// A register as written: `r0`, `p`, `%r1` (the `%` is kept).
    fn register(&mut self, expected: &str) -> PResult<Spanned<String>> {
        if self.at(Tok::PercentName) {
            let tok = self.bump();
            return Ok(Spanned::new(self.slice(tok).to_string(), tok.span));
        }
        self.name(expected)
    }

    /// `P1`, `1` or `P1.7` (lane 7 of warp column P1): the thread and the lane (the `:` that
    /// follows is the caller's).
    fn thread_ref(&mut self) -> PResult<(Spanned<usize>, Option<usize>)> {
        let tok = self.tok();
        if tok.kind == Tok::Ident {
            if let Some((thread, lane)) = lane_number(self.slice(tok)) {
                let (Ok(id), Ok(lane)) = (thread.parse::<usize>(), lane.parse::<usize>()) else {
                    return Err(self.unexpected("a thread like `P0` or a lane like `P1.7`"));
                };
                if lane >= 32 {
                    return Err(Diagnostic::expected(tok.span, "a lane in 0..=31 (`P1.7`)", format!("`{}`", self.slice(tok)))
                        .with_note("a warp has 32 lanes"));
                }
                self.bump();
                return Ok((Spanned::new(id, tok.span), Some(lane)));
            }
        }
        Ok((self.plain_thread_id()?, None))
    }

    /// `P0` or `0`.
    fn plain_thread_id(&mut self) -> PResult<Spanned<usize>> {
        let tok = self.tok();
        let digits = match tok.kind {
            Tok::Int => Some(self.slice(tok)),
            Tok::Ident => thread_number(self.slice(tok)),
            _ => None,
        };
        match digits.and_then(|d| d.parse::<usize>().ok()) {
            Some(id) => {
                self.bump();
                Ok(Spanned::new(id, tok.span))
            }
            None => Err(self.unexpected("a thread like `P0`")),
        }
    }

    /// An integer literal with an optional `-`.
    fn int(&mut self, expected: &str) -> PResult<Spanned<i64>> {
        let start = self.tok().span;
        let negative = self.at(Tok::Minus) && self.raw(1).kind == Tok::Int;
        if negative {
            self.bump();
        }
        let tok = self.tok();
        if tok.kind != Tok::Int {
            return Err(self.unexpected(expected));
        }
        self.bump();
        let span = start.to(tok.span);
        match int_value(self.slice(tok), negative) {
            Some(value) => Ok(Spanned::new(value, span)),
            None => Err(Diagnostic::expected(span, "an integer that fits in 64 bits", format!("`{}`", &self.text[span.range()]))),
        }
    }

    // ---- threads and program ------------------------------------------------------------------

    /// `P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;`
    fn thread_headers(&mut self) -> PResult<Vec<ThreadHeader>> {
        let first = self.tok();
        if first.kind != Tok::Ident || thread_number(self.slice(first)).is_none() {
            return Err(self.unexpected("the thread header row (e.g. `P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;`)"));
        }
        self.row_start = Some(self.pos);
        let mut threads = Vec::new();
        loop {
            let header = self.thread_header(threads.len())?;
            let expected = if header.placement.is_empty() { "`@`, `|` or `;`" } else { "`,`, `|` or `;`" };
            threads.push(header);
            match self.kind() {
                Tok::Bar => {
                    self.bump();
                }
                Tok::Semi => {
                    self.bump();
                    break;
                }
                Tok::Eol | Tok::Eof => return Err(self.unexpected("`;` at the end of the thread header row")),
                _ => return Err(self.unexpected(expected)),
            }
        }
        self.row_start = None;
        Ok(threads)
    }

    /// `P<index>` optionally followed by `@` and placement levels `name int, name int, ...`.
    fn thread_header(&mut self, index: usize) -> PResult<ThreadHeader> {
        let tok = self.tok();
        let id = match (tok.kind, thread_number(self.slice(tok))) {
            (Tok::Ident, Some(digits)) => digits.parse::<usize>().ok(),
            _ => None,
        };
        let expected = format!("thread `P{index}`");
        let id = match id {
            Some(id) if id == index => id,
            Some(_) => {
                return Err(self.unexpected(&expected).with_note("threads are numbered from P0, left to right"));
            }
            None => return Err(self.unexpected(&expected)),
        };
        self.bump();
        let mut placement = Vec::new();
        if self.eat(Tok::At).is_some() {
            loop {
                let level = self.name("a placement level such as `cta` or `gpu`")?;
                let expected = format!("an integer (the `{}` index)", level.node);
                let value = self.int(&expected)?;
                if value.node < 0 {
                    let found = format!("`{}`", value.node);
                    return Err(Diagnostic::expected(value.span, expected, found).with_note("placement indices are non-negative"));
                }
                placement.push((level, value));
                if self.eat(Tok::Comma).is_none() {
                    break;
                }
            }
        }
        Ok(ThreadHeader { id: Spanned::new(id, tok.span), placement, span: tok.span.to(self.prev_span()), lane: None })
    }

    /// The program after the thread header row: one kernel block `{ ... }`, one block per
    /// thread (`P0 { ... } P1 { ... }`), or rows of a table.
    fn program_code(&mut self, threads: usize) -> PResult<(CodeForm, Vec<Vec<Spanned<Statement>>>)> {
        if self.at(Tok::LBrace) {
            return Ok((CodeForm::Kernel, vec![self.code_block()?]));
        }
        if self.at_thread_block() {
            return Ok((CodeForm::Blocks, self.thread_blocks(threads)?));
        }
        Ok((CodeForm::Table, self.program(threads)?))
    }

    /// Program rows up to the first section keyword or the end of file.
    fn program(&mut self, threads: usize) -> PResult<Vec<Vec<Spanned<Statement>>>> {
        let mut code = vec![Vec::new(); threads];
        while !self.at_program_end() {
            let first = self.tok();
            if let Err(d) = self.row(&mut code) {
                return Err(self.section_hint(first, d));
            }
        }
        Ok(code)
    }

    fn at_program_end(&self) -> bool {
        match self.kind() {
            Tok::Eof | Tok::Tilde => true,
            Tok::Ident => SECTION_WORDS.contains(&self.slice(self.tok())),
            _ => false,
        }
    }

    /// A row that fails to parse and starts like a condition (a misspelt keyword, or a bare
    /// proposition in parentheses) was probably meant to be one: say so.
    fn section_hint(&self, first: Token, d: Diagnostic) -> Diagnostic {
        if first.kind == Tok::LParen {
            return d.with_note("a condition starts with `exists`, `~exists`, `not exists` or `forall`");
        }
        let word = self.slice(first);
        if first.kind != Tok::Ident || word.len() < 4 {
            return d;
        }
        let lower = word.to_ascii_lowercase();
        match ["exists", "forall", "locations", "filter"].into_iter().find(|k| edit_distance(&lower, k) <= 2) {
            Some(keyword) => d.with_note(format!("if this line starts the condition, did you mean `{keyword}`?")),
            None => d,
        }
    }

    /// One row `cell | cell | ... ;`, appended to the columns of `code`.
    fn row(&mut self, code: &mut [Vec<Spanned<Statement>>]) -> PResult<()> {
        self.row_start = Some(self.pos);
        let start = self.tok().span;
        let mut cells = Vec::with_capacity(code.len());
        loop {
            let cell = self.cell()?;
            let expected = match cell.last().map(|s| &s.node) {
                Some(Statement::Instr(i)) if i.operands.is_empty() => "an operand, `|` or `;`",
                Some(Statement::Instr(_)) => "`,`, `|` or `;`",
                Some(_) => "an instruction, `|` or `;`",
                None => "an instruction, a label, `|` or `;`",
            };
            cells.push(cell);
            match self.kind() {
                Tok::Bar => {
                    self.bump();
                }
                Tok::Semi => {
                    self.bump();
                    break;
                }
                Tok::Eol | Tok::Eof => {
                    return Err(self
                        .unexpected("`;` at the end of the row")
                        .with_note("each program row is written on one line and ends with `;`"));
                }
                _ => return Err(self.unexpected(expected)),
            }
        }
        self.row_start = None;
        if cells.len() != code.len() {
            let span = start.to(self.prev_span());
            return Err(Diagnostic::expected(span, plural(code.len(), "column"), cells.len()).with_note(format!(
                "the thread header row declares {}; each row has one cell per thread, separated by `|` (cells may be empty)",
                plural(code.len(), "thread")
            )));
        }
        for (column, cell) in code.iter_mut().zip(cells) {
            column.extend(cell);
        }
        Ok(())
    }

    /// The statements of one cell: any number of labels, then at most one instruction.
    fn cell(&mut self) -> PResult<Vec<Spanned<Statement>>> {
        let mut statements = Vec::new();
        loop {
            let next = self.raw(1);
            match self.kind() {
                Tok::Ident if next.kind == Tok::Colon && !next.line_start => statements.push(self.label()?),
                Tok::Ident | Tok::At => {
                    statements.push(self.instruction()?);
                    break;
                }
                _ => break,
            }
        }
        Ok(statements)
    }

    fn label(&mut self) -> PResult<Spanned<Statement>> {
        let name = self.name("a label name")?;
        let colon = self.bump();
        Ok(Spanned::new(Statement::Label(name.node), name.span.to(colon.span)))
    }

    /// `[@[!]pred] opcode operand, operand, ...`
    fn instruction(&mut self) -> PResult<Spanned<Statement>> {
        let start = self.tok().span;
        let guard = match self.eat(Tok::At) {
            Some(_) => {
                let negated = self.eat(Tok::Bang).is_some();
                Some((self.register("a predicate register after `@`")?, negated))
            }
            None => None,
        };
        let op = self.tok();
        if op.kind != Tok::Ident {
            return Err(self.unexpected("an instruction opcode"));
        }
        self.bump();
        let opcode = opcode_parts(self.slice(op), op.span.start);
        let mut operands = Vec::new();
        if self.at_operand() {
            loop {
                let first = self.operand()?;
                // A destination with a predicate output, `d|p` (`elect.sync d|p, membermask`,
                // `shfl.sync.bfly.b32 %r1|%p1, ...`, `setp.lt.s32 p|q, a, b`, `lop3.or.b32 d|p,
                // ...`): one operand, kept as a vector of the two destinations.
                if operands.is_empty() && self.at_pair_bar() {
                    self.bump();
                    let second = self.operand()?;
                    let span = first.span.to(second.span);
                    operands.push(Spanned::new(Operand::Vector(vec![first, second]), span));
                } else {
                    operands.push(first);
                }
                if self.eat(Tok::Comma).is_none() {
                    break;
                }
            }
        }
        let instr = Instruction { guard, opcode, operands };
        Ok(Spanned::new(Statement::Instr(instr), start.to(self.prev_span())))
    }

    fn at_operand(&self) -> bool {
        matches!(self.kind(), Tok::Ident | Tok::PercentName | Tok::Int | Tok::Minus | Tok::LBracket | Tok::LBrace | Tok::Amp | Tok::Bang)
    }

    /// At the `|` of a `d|p` destination, just after the first operand. In a code block a `|`
    /// there is nothing else. In a row, where `|` separates the columns, it is one only when
    /// written with no space on either side and followed by a register and a `,` (every PTX
    /// form with a `d|p` destination has more operands), so `bra L1|bra L2` stays two cells.
    fn at_pair_bar(&self) -> bool {
        if self.raw(0).kind != Tok::Bar {
            return false;
        }
        if self.row_start.is_none() {
            return true;
        }
        let (bar, second, after) = (self.raw(0), self.raw(1), self.raw(2));
        self.prev_span().end == bar.span.start
            && bar.span.end == second.span.start
            && matches!(second.kind, Tok::Ident | Tok::PercentName)
            && after.kind == Tok::Comma
    }

    fn operand(&mut self) -> PResult<Spanned<Operand>> {
        self.nested(Self::operand_inner)
    }

    fn operand_inner(&mut self) -> PResult<Spanned<Operand>> {
        let tok = self.tok();
        let operand = match tok.kind {
            Tok::Ident if self.slice(tok) == "_" => {
                self.bump();
                Operand::Sink
            }
            Tok::Ident => {
                let mut name = self.name("an operand")?.node;
                // The PTX ISA's examples name operands with hyphens (`cache-policy`): words joined
                // by `-` with no space around it are one name.
                while self.raw(0).kind == Tok::Minus
                    && self.raw(1).kind == Tok::Ident
                    && self.prev_span().end == self.raw(0).span.start
                    && self.raw(0).span.end == self.raw(1).span.start
                    && is_plain(self.slice(self.raw(1)))
                {
                    self.bump();
                    let word = self.bump();
                    name = format!("{name}-{}", self.slice(word));
                }
                Operand::Name(name)
            }
            // A fraction (`createpolicy.fractional ... cache-policy, 0.25`): digits, `.`, digits
            // with nothing between them, kept as written (only hint operands take one).
            Tok::Int
                if self.raw(1).kind == Tok::Unknown
                    && self.slice(self.raw(1)) == "."
                    && self.raw(2).kind == Tok::Int
                    && tok.span.end == self.raw(1).span.start
                    && self.raw(1).span.end == self.raw(2).span.start =>
            {
                self.bump();
                self.bump();
                let frac = self.bump();
                Operand::Name(self.text[tok.span.start..frac.span.end].to_string())
            }
            Tok::PercentName => {
                self.bump();
                Operand::PercentName(self.slice(tok).to_string())
            }
            Tok::Int | Tok::Minus => Operand::Int(self.int("an operand")?.node),
            Tok::Amp => {
                self.bump();
                Operand::AddressOf(self.name("a location after `&`")?.node)
            }
            Tok::LBracket => self.address()?,
            Tok::LBrace => self.vector()?,
            // `{!}a`: a negated predicate source (`vote.sync.all.pred p, !q, -1`).
            Tok::Bang => {
                self.bump();
                let tok = self.tok();
                if !matches!(tok.kind, Tok::Ident | Tok::PercentName) {
                    return Err(self.unexpected("a predicate register after `!`"));
                }
                Operand::Negated(Box::new(self.operand()?))
            }
            _ => return Err(self.unexpected("an operand")),
        };
        Ok(Spanned::new(operand, tok.span.to(self.prev_span())))
    }

    /// `[x]`, `[%r1]`, `[x+4]`, `[x-4]`, after checking the `[`.
    fn address(&mut self) -> PResult<Operand> {
        self.bump();
        let tok = self.tok();
        let base = match tok.kind {
            Tok::Ident => Operand::Name(self.name("an address (a location or register)")?.node),
            Tok::PercentName => {
                self.bump();
                Operand::PercentName(self.slice(tok).to_string())
            }
            Tok::Int => Operand::Int(self.int("an address")?.node),
            _ => return Err(self.unexpected("an address (a location or register)")),
        };
        let base = Spanned::new(base, tok.span);
        if self.eat(Tok::Comma).is_some() {
            // `[tensorMap, {c0, c1, ...}]`: a tensor map and the coordinates of a box.
            if !self.at(Tok::LBrace) {
                return Err(self.unexpected("the tensor coordinates `{c0, ...}`"));
            }
            let Operand::Vector(coords) = self.vector()? else { unreachable!("vector() returns a vector") };
            self.expect(Tok::RBracket, "`]` after the tensor coordinates")?;
            return Ok(Operand::TensorAddress(Box::new(base), coords));
        }
        if !matches!(self.kind(), Tok::Plus | Tok::Minus) {
            self.expect(Tok::RBracket, "`+`, `-` or `]`")?;
            return Ok(Operand::Address(Box::new(base), 0));
        }
        let negative = self.bump().kind == Tok::Minus;
        let magnitude = self.int("an integer offset")?;
        let offset = if negative {
            magnitude.node.checked_neg().ok_or_else(|| {
                let found = format!("`-{}`", &self.text[magnitude.span.range()]);
                Diagnostic::expected(magnitude.span, "an offset that fits in 64 bits", found)
            })?
        } else {
            magnitude.node
        };
        self.expect(Tok::RBracket, "`]`")?;
        Ok(Operand::Address(Box::new(base), offset))
    }

    /// `{a, b, ...}`, after checking the `{`.
    fn vector(&mut self) -> PResult<Operand> {
        self.bump();
        let mut elements = Vec::new();
        loop {
            elements.push(self.operand()?);
            if self.eat(Tok::Comma).is_none() {
                self.expect(Tok::RBrace, "`,` or `}`")?;
                return Ok(Operand::Vector(elements));
            }
        }
    }
}

impl Parser<'_> {
    /// `x` or `s+4` (the word at byte offset 4 of `s`), as the name `s+4`; an instance of a
    /// declaration instantiated per CTA or per thread is `s@cta1`, `s@cta1+4`, `buf@P0`.
    fn word_in_variable(&mut self, expected: &str) -> PResult<Spanned<String>> {
        let mut name = self.name(expected)?;
        if self.at(Tok::At) {
            self.bump();
            let tok = self.tok();
            if tok.kind != Tok::Ident {
                return Err(self.unexpected("an instance (`cta1` for a CTA's, `P0` for a thread's) after `@`"));
            }
            self.bump();
            let instance = Spanned::new(self.slice(tok).to_string(), tok.span);
            let word = instance.node.as_str();
            let digits = word.strip_prefix("cta").or_else(|| word.strip_prefix('P'));
            // `buf@P1.7`: the instance of lane 7 of warp column P1.
            if !(digits.is_some_and(is_number) || lane_number(word).is_some()) {
                return Err(Diagnostic::expected(
                    instance.span,
                    "an instance (`cta1` for a CTA's, `P0` for a thread's) after `@`",
                    format!("`{word}`"),
                ));
            }
            name = Spanned::new(format!("{}@{word}", name.node), name.span.to(instance.span));
        }
        if self.at(Tok::Plus) && self.raw(1).kind == Tok::Int {
            self.bump();
            let off = self.int("a byte offset")?;
            if off.node == 0 {
                return Ok(Spanned::new(name.node, name.span.to(off.span)));
            }
            return Ok(Spanned::new(format!("{}+{}", name.node, off.node), name.span.to(off.span)));
        }
        Ok(name)
    }
}

/// Splits `st.relaxed.gpu` into its parts with their spans; `::` stays inside a part.
fn opcode_parts(word: &str, offset: usize) -> Vec<Spanned<String>> {
    let mut parts = Vec::new();
    let mut start = 0;
    for part in word.split('.') {
        let span = Span::new(offset + start, offset + start + part.len());
        parts.push(Spanned::new(part.to_string(), span));
        start += part.len() + 1;
    }
    parts
}
