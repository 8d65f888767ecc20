//! PTX declarations (PTX ISA §5.4), in the init block and in code blocks:
//! `[.visible|.extern|.weak] .SPACE [.align N] .TYPE NAME[[N]...] [= v | = {v, ...} | = &x]`, with
//! several comma-separated names, and parameterized register names `%r<N>` (§5.4.6). Which
//! spaces and initialisers are allowed where is decided by the caller and by the lowering.

use super::{PResult, Parser};
use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::{DeclInit, DeclName, DeclSpace, Declaration};
use crate::litmus::lexer::Tok;

/// The types a declaration may name (PTX ISA §5.2.1), without their dot.
const DECL_TYPES: &[&str] =
    &["pred", "b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f16", "bf16", "f32", "f64"];

impl Parser<'_> {
    /// One declaration, up to (not including) its `;`.
    pub(super) fn declaration(&mut self) -> PResult<Spanned<Declaration>> {
        let start = self.tok().span;
        // Linkage directives (§11.6) do not change what a litmus test declares.
        while self.at(Tok::Directive) && matches!(self.slice(self.tok()), ".visible" | ".extern" | ".weak" | ".common") {
            self.bump();
        }
        let space_tok = self.tok();
        let space = match (space_tok.kind, self.slice(space_tok)) {
            (Tok::Directive, ".reg") => DeclSpace::Reg,
            (Tok::Directive, ".shared" | ".shared::cta") => DeclSpace::Shared,
            (Tok::Directive, ".global") => DeclSpace::Global,
            (Tok::Directive, ".local") => DeclSpace::Local,
            (Tok::Directive, ".param") => DeclSpace::Param,
            _ => return Err(self.unexpected("a state space (`.shared`, `.global`, `.local`, `.param` or `.reg`)")),
        };
        self.bump();
        let mut align = None;
        if self.at(Tok::Directive) && self.slice(self.tok()) == ".align" {
            self.bump();
            align = Some(self.int("an alignment in bytes after `.align`")?);
        }
        let ty_tok = self.tok();
        let ty_text = self.slice(ty_tok);
        if ty_tok.kind == Tok::Directive && matches!(ty_text, ".v2" | ".v4" | ".v8") {
            return Err(Diagnostic::error(ty_tok.span, format!("vector declarations (`{ty_text}`) are not supported"))
                .with_note("declare the elements as an array (`.b32 v[4]`) or as separate registers"));
        }
        if ty_tok.kind != Tok::Directive || !DECL_TYPES.contains(&&ty_text[1..]) {
            return Err(self.unexpected("a type (`.b8`, `.u32`, `.s64`, `.f32`, `.pred`, ...)"));
        }
        self.bump();
        let ty = Spanned::new(ty_text[1..].to_string(), ty_tok.span);
        let mut names = Vec::new();
        loop {
            names.push(self.declared_name()?);
            if self.eat(Tok::Comma).is_none() {
                break;
            }
        }
        let mut init = None;
        if self.eat(Tok::Eq).is_some() {
            init = Some(self.declaration_init()?);
        }
        let decl = Declaration { space: Spanned::new(space, space_tok.span), align, ty, names, init };
        Ok(Spanned::new(decl, start.to(self.prev_span())))
    }

    /// `x`, `%r1`, `buf[16]`, `m[2][4]`, `%r<15>`.
    fn declared_name(&mut self) -> PResult<DeclName> {
        let name = self.register("a name to declare")?;
        let mut offset = None;
        if self.at(Tok::Plus) {
            self.bump();
            offset = Some(self.int("a byte offset after `+` (`.param .u32 p+16 = 5;`: a field of the parameter p)")?);
        }
        let mut range = None;
        if self.at(Tok::Lt) {
            let open = self.bump();
            let count = self.int("the number of registers (`%r<15>` declares %r0 to %r14)")?;
            self.expect(Tok::Gt, "`>` after the number of registers")?;
            range = Some(Spanned::new(count.node, open.span.to(self.prev_span())));
        }
        let mut dims = Vec::new();
        while self.at(Tok::LBracket) {
            self.bump();
            if self.at(Tok::RBracket) {
                return Err(self
                    .unexpected("the number of elements (`buf[16]`)")
                    .with_note("an array of unknown size (`.extern .shared` dynamic shared memory) needs a size in a litmus test"));
            }
            dims.push(self.int("the number of elements")?);
            self.expect(Tok::RBracket, "`]` after the number of elements")?;
        }
        Ok(DeclName { name, dims, range, offset })
    }

    /// After `=`: `5`, `-1`, `{1, 2, 3}` or `&x`.
    fn declaration_init(&mut self) -> PResult<Spanned<DeclInit>> {
        let start = self.tok().span;
        let init = match self.kind() {
            Tok::LBrace => {
                self.bump();
                let mut values = Vec::new();
                loop {
                    values.push(self.int("an integer element value")?.node);
                    if self.eat(Tok::Comma).is_none() {
                        break;
                    }
                }
                self.expect(Tok::RBrace, "`,` or `}` in the list of element values")?;
                DeclInit::Values(values)
            }
            Tok::Amp => {
                self.bump();
                DeclInit::AddressOf(self.name("a variable after `&`")?.node)
            }
            _ => DeclInit::Values(vec![self.int("an initial value (an integer, `{v0, v1, ...}` or `&variable`)")?.node]),
        };
        Ok(Spanned::new(init, start.to(self.prev_span())))
    }
}
