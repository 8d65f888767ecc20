//! Qualifiers and operands of one instruction: the qualifier parser, the instruction being
//! lowered, and its registers, values, addresses, labels, types and scopes.

use super::labels::Labels;
use super::state::{is_register_shaped, Lowerer, RegTable};
use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::{self, Operand};
use crate::program::*;

/// Qualifier parsing helpers over the opcode parts after the mnemonic.
pub(super) struct Quals<'q> {
    pub(super) parts: &'q [Spanned<String>],
    pub(super) used: Vec<bool>,
}

impl<'q> Quals<'q> {
    pub(super) fn new(parts: &'q [Spanned<String>]) -> Self {
        Quals { parts, used: vec![false; parts.len()] }
    }

    /// Take the first unused qualifier that is in `set`.
    pub(super) fn take(&mut self, set: &[&str]) -> Option<(&'q str, Span)> {
        for (i, p) in self.parts.iter().enumerate() {
            if !self.used[i] && set.contains(&p.node.as_str()) {
                self.used[i] = true;
                return Some((p.node.as_str(), p.span));
            }
        }
        None
    }

    pub(super) fn take_all(&mut self, set: &[&str]) {
        while self.take(set).is_some() {}
    }

    /// Error on the first qualifier nobody consumed (with the accepted one it is a typo of).
    pub(super) fn finish(&self, mnemonic: &str, accepted: &str) -> Result<(), Diagnostic> {
        for (i, p) in self.parts.iter().enumerate() {
            if !self.used[i] {
                let words: Vec<&str> =
                    accepted.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect();
                let d = Diagnostic::error(p.span, format!("unsupported qualifier `.{}` on `{mnemonic}`", p.node))
                    .with_note(format!("accepted qualifiers: {accepted}"));
                return Err(match typo_of(&p.node, &words) {
                    Some(w) => d.with_note(format!("did you mean `.{w}`?")),
                    None => d,
                });
            }
        }
        Ok(())
    }

    /// The first unused qualifier that is a typo of one of `words` (not one of them, within two
    /// edits): its text, the word, and its span.
    pub(super) fn misspelt<'w>(&self, words: &[&'w str]) -> Option<(&'q str, &'w str, Span)> {
        self.parts.iter().enumerate().filter(|(i, _)| !self.used[*i]).find_map(|(_, p)| {
            let w = typo_of(&p.node, words)?;
            Some((p.node.as_str(), w, p.span))
        })
    }
}

/// The word of `words` that `s` is a typo of: not one of them, within two edits of one (a third
/// of its length at most, so that `.cta` is no typo of `.gpu`).
fn typo_of<'w>(s: &str, words: &[&'w str]) -> Option<&'w str> {
    if words.contains(&s) {
        return None;
    }
    words
        .iter()
        .map(|w| (crate::diag::edit_distance(s, w), *w))
        .filter(|(d, w)| *d <= 2 && *d * 3 <= w.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, w)| w)
}

pub(super) const TYPES: &[&str] =
    &["b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f16", "bf16", "f32", "f64"];

const SPACES: &[&str] = &["global", "shared", "shared::cta", "shared::cluster", "generic"];

pub(super) struct InstrLowerer<'l, 'a> {
    pub(super) l: &'l Lowerer<'a>,
    pub(super) regs: &'l mut RegTable,
    pub(super) labels: &'l Labels<'l>,
    /// The `{ }` block of the code the instruction is in (its labels are those it sees).
    pub(super) block: usize,
    /// The executing thread's lane in its warp.
    pub(super) warp: super::special::Warp,
    pub(super) instr: &'l ast::Instruction,
    pub(super) span: Span,
    /// `.L2::cache_hint` on ld/st/atom/red: the last operand is the cache policy, a hint that
    /// `operands` leaves out.
    pub(super) policy: bool,
}

impl<'l> InstrLowerer<'l, '_> {
    pub(super) fn mnemonic(&self) -> String {
        self.instr.mnemonic()
    }

    /// Element types: vector accesses are split into 32-bit elements, whatever their type. The
    /// element type, when it is a 32-bit one, converts each element read as a scalar load of
    /// that type does (PTX ISA §8.2.4: a vector access is a set of scalar accesses).
    pub(super) fn word_type(&self, q: &mut Quals) -> Result<Option<Ty>, Diagnostic> {
        let first = q.take(TYPES).and_then(|(t, _)| Ty::parse(t));
        q.take_all(TYPES);
        Ok(first.filter(|t| t.bits == 32))
    }

    /// The instruction's type (`.u32`, `.s64`, `.f32`, ...), None when it names none (Dat3M's
    /// untyped spelling). A second type is an error.
    pub(super) fn one_type(&self, q: &mut Quals) -> Result<Option<(Ty, Span)>, Diagnostic> {
        let Some((t, span)) = q.take(TYPES) else { return Ok(None) };
        if let Some((u, span2)) = q.take(TYPES) {
            return Err(Diagnostic::error(span2, format!("`{}` has two types, `.{t}` and `.{u}`", self.mnemonic()))
                .with_note("name one type: .u32, .s32, .b64, .f32, ..."));
        }
        Ok(Ty::parse(t).map(|ty| (ty, span)))
    }

    /// The type of an instruction on registers (`mov`, `add`, `selp`, `setp`, ...), or none: not
    /// an 8-bit type, which PTX keeps for memory and conversions (PTX ISA 5.2.2: "The .u8, .s8,
    /// and .b8 instruction types are restricted to ld, st, and cvt instructions").
    pub(super) fn register_type(&self, q: &mut Quals) -> Result<Option<(Ty, Span)>, Diagnostic> {
        let typed = self.one_type(q)?;
        if let Some((t, span)) = typed.filter(|(t, _)| t.bits == 8) {
            return Err(Diagnostic::error(span, format!("`.{}` is not a type of `{}`", t.name(), self.instr.opcode[0].node))
                .with_note("PTX restricts .u8, .s8 and .b8 to ld, st and cvt (PTX ISA 5.2.2); use a 16-bit type (.u16, .s16, .b16)"));
        }
        Ok(typed)
    }

    /// The type of a memory access, or none. Locations are 4-byte words: a 64-bit access is two of
    /// them, an 8- or 16-bit one a part of one.
    pub(super) fn access_type(&self, q: &mut Quals) -> Result<Option<Ty>, Diagnostic> {
        Ok(self.one_type(q)?.map(|(ty, _)| ty))
    }

    pub(super) fn operands(&self, n: usize, shape: &str) -> Result<&'l [Spanned<Operand>], Diagnostic> {
        let ops: &'l [Spanned<Operand>] = &self.instr.operands;
        let ops = if self.policy { &ops[..ops.len().saturating_sub(1)] } else { ops };
        if ops.len() != n {
            let span = if ops.len() > n { ops[n].span } else { self.span };
            return Err(Diagnostic::expected(
                span,
                format!("{n} operand(s) for `{}` ({shape})", self.mnemonic()),
                format!("{}", ops.len()),
            ));
        }
        Ok(ops)
    }

    pub(super) fn dest_reg(&mut self, op: &Spanned<Operand>) -> Result<Reg, Diagnostic> {
        let op = scalar(op);
        match &op.node {
            Operand::Name(n) if self.l.lookup(n).is_none() || is_register_shaped(n) => Ok(self.regs.def(n)),
            Operand::PercentName(n) if !matches!(self.l.specials.read(n), Ok(None)) => {
                Err(Diagnostic::error(op.span, format!("`{n}` is a special register: read-only (PTX ISA §10)")))
            }
            Operand::PercentName(n) => Ok(self.regs.def(n)),
            other => Err(Diagnostic::expected(op.span, "a destination register", describe(other))),
        }
    }

    pub(super) fn value(&mut self, op: &Spanned<Operand>) -> Result<Value, Diagnostic> {
        let op = scalar(op);
        match &op.node {
            Operand::Int(v) => Ok(Value::Const(*v)),
            Operand::PercentName(n) => match self.l.specials.read(n) {
                Ok(Some(v)) => {
                    self.l.special_reads.borrow_mut().insert(n.clone(), v);
                    Ok(Value::Const(v))
                }
                Ok(None) => Ok(Value::Reg(self.regs.use_(n, op.span))),
                Err(why) => Err(Diagnostic::error(op.span, why)),
            },
            Operand::Name(n) if is_register_shaped(n) || self.regs.index.contains_key(n) => Ok(Value::Reg(self.regs.use_(n, op.span))),
            Operand::Name(n) | Operand::AddressOf(n) if self.l.lookup(n).is_some() => {
                Ok(Value::Const(self.l.address_of(self.l.lookup(n).expect("looked up"))))
            }
            Operand::Name(n) => Err(Diagnostic::error(op.span, format!("undefined register `{n}`"))
                .with_note("registers are `r<N>` or `%name`, or names initialised in the init block")),
            other => Err(Diagnostic::expected(op.span, "a register or an integer constant", describe(other))),
        }
    }

    /// An operand of a typed instruction: constants are normalized to the type.
    pub(super) fn typed_value(&mut self, op: &Spanned<Operand>, ty: Option<Ty>) -> Result<Value, Diagnostic> {
        let op = scalar(op);
        // A decimal float (`1.5`) for a float-typed instruction: its bit pattern.
        if let (Operand::Name(n), Some(t)) = (&op.node, ty) {
            if let Some(bits) = t.decimal_literal(n) {
                return Ok(Value::Const(bits));
            }
        }
        Ok(match (self.value(op)?, ty) {
            (Value::Const(c), Some(t)) => Value::Const(t.norm(c)),
            (v, _) => v,
        })
    }

    pub(super) fn address(&mut self, op: &Spanned<Operand>) -> Result<Address, Diagnostic> {
        self.address_of_size(op, 4)
    }

    /// The address of an access of `size` bytes: a word, or for an 8- or 16-bit access any byte
    /// of a word aligned to its size.
    pub(super) fn address_of_size(&mut self, op: &Spanned<Operand>, size: i64) -> Result<Address, Diagnostic> {
        let (inner, offset) = match &op.node {
            Operand::Address(inner, off) => (inner.as_ref(), *off),
            _ => (op, 0),
        };
        match &inner.node {
            Operand::Name(n) if self.l.lookup(n).is_some() => {
                let loc = self.l.lookup(n).expect("looked up");
                if offset == 0 {
                    return Ok(Address::Location(loc));
                }
                let l = &self.l.locations[loc];
                let var = &self.l.variables[l.variable];
                let byte = l.offset + offset;
                let size = size.clamp(1, 4);
                if byte < 0 || byte >= var.size || byte % size != 0 || var.kind == VariableKind::Mbarrier {
                    let what = if size < 4 { format!("a {size}-byte aligned byte") } else { "a word".to_string() };
                    let offsets = if size < 4 {
                        format!("offsets are byte offsets inside the variable, multiples of {size} for a {}-bit access", 8 * size)
                    } else {
                        "offsets are byte offsets of 4-byte words inside the variable: 0, 4, 8, ...".to_string()
                    };
                    return Err(Diagnostic::error(
                        op.span,
                        format!("`{n}{offset:+}` is not {what} of `{}` ({} bytes)", var.name, var.size),
                    )
                    .with_note(offsets));
                }
                let word = var.first_location + (byte / 4) as usize;
                Ok(if byte % 4 == 0 { Address::Location(word) } else { Address::Byte(word, byte % 4) })
            }
            Operand::Name(n) if is_register_shaped(n) || self.regs.index.contains_key(n) => {
                Ok(Address::Reg(self.regs.use_(n, inner.span), offset))
            }
            Operand::PercentName(n) => Ok(Address::Reg(self.regs.use_(n, inner.span), offset)),
            Operand::Name(n) => {
                Err(Diagnostic::error(inner.span, format!("unknown location `{n}`")).with_note("declare it in the init block, e.g. `x=0;`"))
            }
            other => Err(Diagnostic::expected(inner.span, "a location or an address register", describe(other))),
        }
    }

    pub(super) fn label(&self, op: &Spanned<Operand>) -> Result<usize, Diagnostic> {
        match &op.node {
            Operand::Name(n) => self.labels.resolve(self.block, n).ok_or_else(|| {
                let d = Diagnostic::error(op.span, format!("unknown label `{n}` in this thread"));
                match self.labels.defined_at(n) {
                    Some(line) => d.with_note(format!(
                        "`{n}` is defined at line {line}, in a `{{ }}` block that does not enclose this branch: a label is visible in its block and the blocks nested in it (as ptxas scopes labels)"
                    )),
                    None => d,
                }
            }),
            other => Err(Diagnostic::expected(op.span, "a label", describe(other))),
        }
    }

    pub(super) fn scope(&self, q: &mut Quals, required: bool, what: &str) -> Result<Option<Scope>, Diagnostic> {
        if let Some((s, _)) = q.take(&["cta", "gpu", "sys", "cluster", "gl"]) {
            return Ok(Some(match s {
                "cta" => Scope::Cta,
                "cluster" => Scope::Cluster,
                "gpu" | "gl" => Scope::Gpu,
                _ => Scope::Sys,
            }));
        }
        if required {
            // A leftover qualifier that is neither a state space nor a type is a misspelt scope.
            let stray = q
                .parts
                .iter()
                .enumerate()
                .find(|(i, p)| !q.used[*i] && !SPACES.contains(&p.node.as_str()) && !TYPES.contains(&p.node.as_str()));
            if let Some((_, p)) = stray {
                return Err(Diagnostic::expected(p.span, "a scope (.cta, .cluster, .gpu or .sys)", format!("`.{}`", p.node)));
            }
            return Err(Diagnostic::error(self.instr.opcode_span(), format!("{what} requires a scope"))
                .with_note("add one of .cta, .cluster, .gpu, .sys"));
        }
        Ok(None)
    }
}

/// The state-space qualifier of an access (`.global`, `.shared{::cta}`, `.shared::cluster`), generic when absent.
pub(super) fn space_of(q: &mut Quals) -> AccessSpace {
    let mut space = AccessSpace::Generic;
    while let Some((s, _)) = q.take(SPACES) {
        space = match s {
            "global" => AccessSpace::Global,
            "shared" | "shared::cta" => AccessSpace::SharedCta,
            "shared::cluster" => AccessSpace::SharedCluster,
            _ => AccessSpace::Generic,
        };
    }
    space
}

pub(super) fn vector_len(v: &str, span: Span, head: &str) -> Result<usize, Diagnostic> {
    match v {
        "v2" => Ok(2),
        "v4" => Ok(4),
        _ => Err(Diagnostic::error(span, format!("`{head}.{v}` is not supported; use .v2 or .v4 of 32-bit elements"))),
    }
}

/// A one-element vector operand `{r}` is the scalar `r`: ptxas accepts `st.shared.b32 [a],
/// {%r1};`, and nvcc's inline asm writes the registers of CUTLASS's `.x1` forms so.
fn scalar(op: &Spanned<Operand>) -> &Spanned<Operand> {
    match &op.node {
        Operand::Vector(items) if items.len() == 1 => &items[0],
        _ => op,
    }
}

pub(super) fn describe(op: &Operand) -> String {
    match op {
        Operand::Name(n) => format!("`{n}`"),
        Operand::PercentName(n) => format!("`{n}`"),
        Operand::Int(v) => format!("the constant `{v}`"),
        Operand::Address(..) => "an address `[...]`".into(),
        Operand::Sink => "`_`".into(),
        Operand::Vector(_) => "a vector `{...}`".into(),
        Operand::AddressOf(n) => format!("`&{n}`"),
        Operand::TensorAddress(..) => "a tensor operand `[tensorMap, {...}]`".into(),
        Operand::Negated(_) => "a negated predicate `!p`".into(),
    }
}
