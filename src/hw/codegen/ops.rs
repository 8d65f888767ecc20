//! What the emitters read of one statement: its lowered operations (found by the statement's
//! span), the state spaces and types its opcode parts name, and a register's PTX name. Shared by
//! the register typing (`regs`), the thread block (`thread`) and the instructions (`instr`).

use super::layout::AddrForm;
use crate::diag::Span;
use crate::litmus::ast::Instruction;
use crate::program::{Instr, Program, Space, Ty};

/// The lowered instructions of one statement of the test (lowering keeps each instruction's
/// span).
pub(super) struct Lowered<'p> {
    /// The instruction's own operations: one, or one per destination of `elect.sync`.
    pub ops: &'p [Instr],
    /// Whether lowering made the statement's guard a branch around the instruction (`@p st ...`);
    /// a guarded `bra` takes its guard as its own condition instead.
    pub guard_branch: bool,
}

pub(super) fn lowered<'p>(p: &'p Program, thread: usize, ins: &Instruction, span: Span) -> Lowered<'p> {
    let code = &p.threads[thread].code;
    let Some(start) = code.iter().position(|i| i.span == span) else { return Lowered { ops: &[], guard_branch: false } };
    let n = code[start..].iter().take_while(|i| i.span == span).count();
    let guard_branch = ins.guard.is_some() && n > 1;
    Lowered { ops: &code[start + usize::from(guard_branch)..start + n], guard_branch }
}

/// An instruction's opcode parts that name state spaces, in order.
pub(super) fn space_tokens(parts: &[String]) -> Vec<AddrForm> {
    parts
        .iter()
        .filter_map(|p| match p.as_str() {
            "global" => Some(AddrForm::Global),
            "shared" | "shared::cta" => Some(AddrForm::SharedCta),
            "shared::cluster" => Some(AddrForm::SharedCluster),
            _ => None,
        })
        .collect()
}

pub(super) fn is_type_part(p: &str) -> bool {
    let (head, bits) = p.split_at(1.min(p.len()));
    matches!(head, "b" | "u" | "s" | "f") && matches!(bits, "8" | "16" | "32" | "64") || p == "bf16" || p == "f16x2"
}

pub(super) fn has_64bit_type(parts: &[String]) -> bool {
    parts.iter().any(|p| matches!(p.as_str(), "b64" | "u64" | "s64" | "f64"))
}

/// A register's PTX name: without `%` (it would need escaping in an asm template), other
/// characters PTX identifiers cannot hold (`cache-policy`) as `_`.
pub(super) fn reg_name(name: &str) -> String {
    name.trim_start_matches('%').chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '$' { c } else { '_' }).collect()
}

/// The variable a name means in a thread's code: its own CTA's instance of a `.shared`
/// declaration (`s@cta1`), its own instance of a `.local` one (`buf@P0`), or the variable so
/// named.
pub(super) fn variable_of(p: &Program, thread: usize, name: &str) -> Option<usize> {
    let th = &p.threads[thread];
    let own = [format!("{name}@cta{}", th.placement.cta), format!("{name}@{}", th.name())];
    own.iter().chain(std::iter::once(&name.to_string())).find_map(|n| p.variables.iter().position(|v| &v.name == n))
}

/// Whether a variable is in the shared memory of the thread's CTA.
pub(super) fn own_shared(p: &Program, thread: usize, var: usize) -> bool {
    matches!(p.variables[var].space, Space::Shared { cta } if cta == p.threads[thread].placement.cta)
}

/// Instructions that lowering evaluates itself, into a move of a constant (the leader's lane,
/// the mapped address, the policy): their `Op::Local` (or, for `elect.sync _|_`, an
/// unconditional jump to the next instruction) does not say what the device must compute, so
/// the text's opcode does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Evaluated {
    Elect,
    Mapa,
    CreatePolicy,
}

/// Whether an instruction lowered to a register operation is a Dat3M untyped one (`add r6, r6,
/// r1`): no type in the text, not evaluated by lowering, not an operation of predicates. Such an
/// operation is written at the width of its destination (`ThreadGen::untyped_local`), which
/// `regs` makes 64-bit where it holds an address.
pub(super) fn is_untyped_register_op(ins: &Instruction, ty: Option<Ty>) -> bool {
    ty.is_none() && evaluated(ins).is_none() && !ins.opcode.iter().any(|q| q.node == "pred")
}

pub(super) fn evaluated(ins: &Instruction) -> Option<Evaluated> {
    match ins.opcode[0].node.as_str() {
        "elect" => Some(Evaluated::Elect),
        "mapa" => Some(Evaluated::Mapa),
        "createpolicy" => Some(Evaluated::CreatePolicy),
        _ => None,
    }
}
