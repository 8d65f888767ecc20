//! Register typing of one test thread's asm block. Each register is declared at the widest width
//! that the instruction types of its operand positions give it (PTX ISA 6.4.1: a register has the
//! size of the instruction type; `ld`, `st` and `cvt` also take a wider one), or as a predicate;
//! where an instruction uses a register at a narrower (or, for a `.reg` declaration, a wider)
//! width than its declaration, the operand goes through a scratch register of the instruction's
//! width: a source is converted before the instruction (truncated, or extended as the model
//! holds the value), a destination is written there and converted into the register after it
//! (sign-extended for a signed type, as the model normalises the value; `ThreadGen::read_as` and
//! `write_as` in `thread` write these). A register used both as a predicate and as a value has no
//! device form and is rejected, naming both lines.

use super::super::{reject, HwTest, Rejection};
use super::layout::AddrForm;
use super::ops::{has_64bit_type, is_type_part, is_untyped_register_op, lowered, own_shared, reg_name, space_tokens, variable_of};
use crate::diag::Span;
use crate::litmus::ast::{DeclSpace, InitItem, Operand, Statement};
use crate::program::{LocalOp, MbOp, Op};
use std::collections::BTreeMap;

/// The width a test register is declared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum RegKind {
    Pred,
    B16,
    /// A 16-bit register that signed types write: its value is reported sign-extended, as the
    /// model holds it.
    S16,
    B32,
    B64,
}

impl RegKind {
    /// The kind of a register declared with a PTX type (`.reg .u16 %rs<2>;`).
    fn of_declared(ty: &str) -> RegKind {
        match ty {
            "pred" => RegKind::Pred,
            "b16" | "u16" | "s16" | "f16" | "bf16" => RegKind::B16,
            "b64" | "u64" | "s64" | "f64" => RegKind::B64,
            _ => RegKind::B32,
        }
    }

    /// The size in bits of a value register (0 for a predicate).
    pub(super) fn bits(self) -> u32 {
        match self {
            RegKind::Pred => 0,
            RegKind::B16 | RegKind::S16 => 16,
            RegKind::B32 => 32,
            RegKind::B64 => 64,
        }
    }

    /// The `.reg` declaration of a register of this kind.
    pub(super) fn declaration(self, name: &str) -> String {
        match self {
            RegKind::Pred => format!(".reg .pred {name};"),
            k => format!(".reg .b{} {name};", k.bits()),
        }
    }
}

/// What an instruction needs of the register in one operand position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Width {
    Pred,
    /// The instruction's type size (PTX ISA 6.4.1: the register has the size of the type).
    Exact(RegKind),
    /// `ld`, `st` and `cvt` also take a wider register (PTX ISA 6.4.1, "Operand Size Exceeding
    /// Instruction-Type Size").
    AtLeast(RegKind),
}

/// What the instructions of a column need of one register: to be a predicate (where first), the
/// widest width any operand position gives it (where first), and whether a signed type writes
/// it.
#[derive(Default)]
struct Uses {
    pred: Option<Span>,
    widest: Option<(RegKind, Span)>,
    signed: bool,
}

impl Uses {
    fn needs(&mut self, kind: RegKind, span: Span) {
        if self.widest.is_none_or(|(k, _)| kind > k) {
            self.widest = Some((kind, span));
        }
    }
}

/// Register kinds of one thread column: predicates (guards, the destinations of `setp` and of
/// the mbarrier waits), else the widest width the instructions using the register give it
/// ([`operand_widths`]), 32-bit where none does; a code block's `.reg` declaration decides
/// instead. A 16-bit register that a signed instruction type writes is [`RegKind::S16`]. A
/// register that is both a predicate and a value is rejected.
pub(super) fn register_kinds(test: &HwTest, thread: usize) -> Result<BTreeMap<String, RegKind>, Rejection> {
    let p = test.program;
    let is_var = |n: &str| p.variables.iter().any(|v| v.name == n);
    let mut uses: BTreeMap<String, Uses> = p.threads[thread].registers.iter().map(|r| (reg_name(r), Uses::default())).collect();
    let key = |n: &str| (!is_var(n)).then(|| reg_name(n));
    for (reg, span) in address_registers(test, thread, &|n| key(n).filter(|k| uses.contains_key(k))) {
        if let Some(u) = uses.get_mut(&reg) {
            u.needs(RegKind::B64, span);
        }
    }
    for st in test.ast.column(thread) {
        let Statement::Instr(ins) = &st.node else { continue };
        if let Some((g, _)) = &ins.guard {
            if let Some(u) = key(&g.node).and_then(|k| uses.get_mut(&k)) {
                u.pred.get_or_insert(g.span);
            }
        }
        let pred_dst = lowered(p, thread, ins, st.span)
            .ops
            .iter()
            .any(|i| matches!(i.op, Op::Local { op: LocalOp::Set(_), .. } | Op::Mbarrier { op: MbOp::Wait { .. }, .. }));
        let parts: Vec<String> = ins.opcode.iter().map(|o| o.node.clone()).collect();
        let signed_dst = parts.iter().find(|t| is_type_part(t)).is_some_and(|t| t.starts_with('s'));
        let operands: Vec<&Operand> = ins.operands.iter().map(|o| &o.node).collect();
        for (i, (o, width)) in ins.operands.iter().zip(operand_widths(&parts, &operands)).enumerate() {
            let name = |x: &Operand| if let Operand::Name(n) | Operand::PercentName(n) = x { Some(n.clone()) } else { None };
            let names: Vec<(String, Option<Width>)> = match &o.node {
                Operand::Name(_) | Operand::PercentName(_) => name(&o.node).map(|n| (n, width)).into_iter().collect(),
                // `elect.sync d|p, membermask`: a .b32 and a predicate.
                Operand::Vector(items) if parts[0] == "elect" || (parts[0] == "lop3" && i == 0) => items
                    .iter()
                    .zip([Width::Exact(RegKind::B32), Width::Pred])
                    .filter_map(|(x, w)| Some((name(&x.node)?, Some(w))))
                    .collect(),
                Operand::Vector(items) => items.iter().filter_map(|x| name(&x.node)).map(|n| (n, width)).collect(),
                Operand::Address(inner, _) => name(&inner.node).map(|n| (n, width)).into_iter().collect(),
                // Tensor coordinates are .s32 (9.7.9.27).
                Operand::TensorAddress(_, coords) => {
                    coords.iter().filter_map(|x| name(&x.node)).map(|n| (n, Some(Width::Exact(RegKind::B32)))).collect()
                }
                _ => continue,
            };
            for (n, width) in names {
                let Some(u) = key(&n).and_then(|k| uses.get_mut(&k)) else { continue };
                match width {
                    _ if i == 0 && pred_dst => {
                        u.pred.get_or_insert(o.span);
                    }
                    Some(Width::Pred) => {
                        u.pred.get_or_insert(o.span);
                    }
                    Some(Width::Exact(k) | Width::AtLeast(k)) => u.needs(k, o.span),
                    None => {}
                }
                u.signed |= i == 0 && signed_dst;
            }
        }
    }
    let mut kinds = BTreeMap::new();
    for (name, u) in uses {
        let kind = match (u.pred, u.widest) {
            (Some(pred), Some((k, value))) => {
                let line = |s: Span| p.source.line_col(s.start).0;
                return Err(reject(
                    p,
                    value,
                    format!(
                        "register `{name}` is a predicate (line {}) and a {}-bit value (line {}): PTX converts between the two only with `setp`/`selp`, which the harness does not insert",
                        line(pred),
                        k.bits(),
                        line(value)
                    ),
                ));
            }
            (Some(_), None) => RegKind::Pred,
            (None, Some((RegKind::B16, _))) if u.signed => RegKind::S16,
            (None, w) => w.map_or(RegKind::B32, |(k, _)| k),
        };
        kinds.insert(name, kind);
    }
    declared_kinds(test, thread, &mut kinds);
    Ok(kinds)
}

/// The registers of a thread that hold an address, each with the statement that makes it one:
/// those initialised with an address (`P0:r1 = &g;`, a 64-bit generic address), and those that a
/// Dat3M untyped register operation writes from an address (`add r6, r6, r1`): from a register
/// that holds one, from `&x`, or from a variable named as a value (`add r, r, x`: its address),
/// except the thread's own shared memory, whose 32-bit window address a 32-bit register holds.
/// An untyped operation is written at its destination's width, so every register of such a chain
/// is 64-bit and no address is truncated, whatever width the register's first write has (the
/// H200 faulted on a k-tile loop whose `mul r6, r4, 16; add r6, r6, r1` was 32-bit). `register`
/// gives a name's register key, None for a variable.
fn address_registers(test: &HwTest, thread: usize, register: &dyn Fn(&str) -> Option<String>) -> BTreeMap<String, Span> {
    let p = test.program;
    let mut held = BTreeMap::new();
    for item in &test.ast.init {
        if let InitItem::RegisterAddress { thread: t, lane, reg, .. } = &item.node {
            if let Some(r) = register(&reg.node).filter(|_| t.node == p.threads[thread].id && *lane == p.threads[thread].lane) {
                held.insert(r, item.span);
            }
        }
    }
    // (destination, its span, sources) of each untyped register operation with a value
    // destination.
    let mut writes = Vec::new();
    for st in test.ast.column(thread) {
        let Statement::Instr(ins) = &st.node else { continue };
        let Some(Op::Local { op, ty, .. }) = lowered(p, thread, ins, st.span).ops.first().map(|i| &i.op) else { continue };
        if !is_untyped_register_op(ins, *ty) || matches!(op, LocalOp::Set(_)) {
            continue;
        }
        let Some((Operand::Name(d) | Operand::PercentName(d), rest)) = ins.operands.split_first().map(|(d, r)| (&d.node, r)) else {
            continue;
        };
        if let Some(d) = register(d) {
            writes.push((d, ins.operands[0].span, rest.iter().map(|o| &o.node).collect::<Vec<_>>()));
        }
    }
    loop {
        let mut grew = false;
        for (dst, span, sources) in &writes {
            let from_address = |o: &&Operand| match o {
                Operand::AddressOf(_) => true,
                Operand::Name(n) | Operand::PercentName(n) => match register(n) {
                    Some(r) => held.contains_key(&r),
                    None => variable_of(p, thread, n).is_some_and(|v| !own_shared(p, thread, v)),
                },
                _ => false,
            };
            if !held.contains_key(dst) && sources.iter().any(from_address) {
                held.insert(dst.clone(), *span);
                grew = true;
            }
        }
        if !grew {
            return held;
        }
    }
}

/// A code block's `.reg` declarations say the width themselves (a 16-bit register that signed
/// types write stays sign-extended).
fn declared_kinds(test: &HwTest, thread: usize, kinds: &mut BTreeMap<String, RegKind>) {
    let mut declare = |name: &str, declared: RegKind| {
        if let Some(e) = kinds.get_mut(&reg_name(name)) {
            *e = match (declared, *e) {
                (RegKind::B16, RegKind::S16) => RegKind::S16,
                (d, _) => d,
            };
        }
    };
    for st in test.ast.column(thread) {
        let Statement::Decl(d) = &st.node else { continue };
        if d.space.node != DeclSpace::Reg {
            continue;
        }
        let kind = RegKind::of_declared(&d.ty.node);
        for n in &d.names {
            match &n.range {
                Some(count) => (0..count.node).for_each(|k| declare(&format!("{}{k}", n.name.node), kind)),
                None => declare(&n.name.node, kind),
            }
        }
    }
}

/// The width of a type part (`u16` → 16 bits; an 8-bit type needs a 16-bit register, PTX ISA
/// 5.2.2).
fn type_width(part: &str) -> Option<RegKind> {
    if !is_type_part(part) {
        return None;
    }
    Some(match part.trim_start_matches(|c: char| c.is_ascii_alphabetic()) {
        "8" | "16" => RegKind::B16,
        "64" => RegKind::B64,
        _ => RegKind::B32,
    })
}

/// Whether an instruction's first operand is its destination (`st`, `red`, copies, barriers,
/// fences and prefetches only read theirs).
pub(super) fn writes_first_operand(parts: &[String]) -> bool {
    !matches!(
        parts.first().map(String::as_str),
        Some("st" | "red" | "cp" | "bar" | "barrier" | "prefetch" | "prefetchu" | "fence" | "membar" | "bra" | "tensormap")
    )
}

pub(super) fn operand_widths(parts: &[String], operands: &[&Operand]) -> Vec<Option<Width>> {
    use RegKind::{B16, B32, B64};
    use Width::{AtLeast, Exact};
    let n = operands.len();
    let types: Vec<RegKind> = parts.iter().filter_map(|p| type_width(p)).collect();
    let ty = types.first().copied();
    let twice = |k: RegKind| if k == B16 { B32 } else { B64 };
    let has = |q: &str| parts.iter().any(|p| p == q);
    let is_address = |o: &Operand| matches!(o, Operand::Address(..) | Operand::TensorAddress(..));
    let last_address = operands.iter().rposition(|o| is_address(o));
    let mut w: Vec<Option<Width>> = match (parts[0].as_str(), ty) {
        ("mul" | "mad", Some(t)) if has("wide") => (0..n).map(|i| Some(Exact(if i == 0 || i == 3 { twice(t) } else { t }))).collect(),
        ("cvt", _) => types.iter().map(|&t| Some(AtLeast(t))).chain(std::iter::repeat(None)).take(n).collect(),
        ("ld" | "st", Some(t)) => vec![Some(AtLeast(t)); n],
        ("cvta", Some(t)) => vec![Some(Exact(t)); n],
        ("mapa", t) => (0..n).map(|i| Some(Exact(if i == 2 { B32 } else { t.unwrap_or(B64) }))).collect(),
        ("selp", Some(t)) => (0..n).map(|i| Some(if i == 3 { Width::Pred } else { Exact(t) })).collect(),
        ("setp", Some(t)) => (0..n).map(|i| (i > 0).then_some(Exact(t))).collect(),
        ("shl" | "shr", Some(t)) => (0..n).map(|i| Some(Exact(if i == 2 { B32 } else { t }))).collect(),
        // Packing and unpacking (`mov.b64 {a, b}, x`): each element of the vector is its share
        // of the type's bits.
        ("mov", Some(t)) if operands.iter().any(|o| matches!(o, Operand::Vector(_))) => operands
            .iter()
            .map(|o| match o {
                Operand::Vector(v) => match t.bits() / v.len().max(1) as u32 {
                    16 => Some(Exact(B16)),
                    32 => Some(Exact(B32)),
                    _ => None,
                },
                _ => Some(Exact(t)),
            })
            .collect(),
        (
            "mov" | "add" | "sub" | "mul" | "mad" | "div" | "rem" | "and" | "or" | "xor" | "not" | "neg" | "min" | "max" | "atom" | "red",
            Some(t),
        ) => {
            vec![Some(Exact(t)); n]
        }
        // The state an arrive returns and a wait without `.parity` takes is a .b64; counts,
        // parities and byte counts are .u32 (9.7.13.15).
        ("mbarrier", _) if has("pending_count") => vec![Some(Exact(B32)), Some(Exact(B64))],
        ("mbarrier", _) => (0..n)
            .map(|i| Some(Exact(if i == 0 || (i == 2 && !has("parity") && (has("test_wait") || has("try_wait"))) { B64 } else { B32 })))
            .collect(),
        // Sizes are .u32, the ctaMask of a multicast a .b16 (9.7.9.25).
        ("cp", _) => (0..n)
            .map(|i| Some(Exact(if has("multicast::cluster") && Some(i) == last_address.map(|a| a + 1) { B16 } else { B32 })))
            .collect(),
        ("bar" | "barrier" | "elect", _) => vec![Some(Exact(B32)); n],
        // The bit instructions: positions, lengths, shift amounts and counts are .u32 (PTX ISA
        // §9.7.1.14-22); clz, popc and bfind write a .u32; lop3's last operand of its
        // `.or|.and` form is a predicate.
        ("bfe", Some(t)) => (0..n).map(|i| Some(Exact(if i >= 2 { B32 } else { t }))).collect(),
        ("bfi", Some(t)) => (0..n).map(|i| Some(Exact(if i >= 3 { B32 } else { t }))).collect(),
        ("clz" | "popc" | "bfind", Some(t)) => (0..n).map(|i| Some(Exact(if i == 0 { B32 } else { t }))).collect(),
        ("lop3", _) => (0..n).map(|i| Some(if i == 5 { Width::Pred } else { Exact(B32) })).collect(),
        ("prmt" | "shf" | "bmsk" | "szext" | "mul24" | "mad24", _) => vec![Some(Exact(B32)); n],
        ("brev" | "sad" | "cnot" | "abs", Some(t)) => vec![Some(Exact(t)); n],
        ("mov" | "and" | "or" | "xor" | "not", None) if has("pred") => vec![Some(Width::Pred); n],
        _ if has_64bit_type(parts) => vec![Some(Exact(B64)); n],
        _ => vec![None; n],
    };
    w.resize(n, None);
    // The cache-policy operand of `.L2::cache_hint` (always last) is a .b64.
    if has("L2::cache_hint") && n > 0 {
        w[n - 1] = Some(Exact(B64));
    }
    // An address operand has the state space of its position (`cp.async.cg.shared.global [d],
    // [s]`: the destination shared, the source global; a later operand, the mbarrier, the
    // first's), as `emit` renders a variable there: a global or generic address is 64-bit, a
    // shared one fits either width.
    let spaces = space_tokens(parts);
    let mut nth = 0;
    for (i, o) in operands.iter().enumerate() {
        if !is_address(o) {
            continue;
        }
        let space = spaces.get(nth).or(spaces.first());
        nth += 1;
        if matches!(o, Operand::Address(..)) {
            w[i] = (!matches!(space, Some(AddrForm::SharedCta | AddrForm::SharedCluster))).then_some(Exact(B64));
        }
    }
    w
}

/// The name of the scratch register through which operand `pos` of an instruction is converted
/// to `bits` (the 64-bit ones are the prologue's `hw_w1`, `hw_w2` where they exist).
pub(super) fn scratch_name(bits: u32, pos: usize) -> String {
    match bits {
        64 => format!("hw_w{pos}"),
        32 => format!("hw_n{pos}"),
        _ => format!("hw_h{pos}"),
    }
}
