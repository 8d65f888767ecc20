//! Abstraction of register-only instructions the model does not interpret, in a kernel.
//!
//! A kernel (the kernel form of a test, one block of real PTX every thread runs) computes things
//! that decide nothing about memory or synchronization: floating-point math, `mma` on registers,
//! warp shuffles and votes of lanes the test may not have. Such an instruction, where the model
//! rejects it, becomes [`Op::Opaque`]: its destinations hold unknown values (`program::unknown`)
//! whose origin is the instruction, and the run decides nothing with them. Tables and
//! per-thread blocks are litmus tests, where every instruction must have its meaning: there the
//! rejection stands.

use super::operands::InstrLowerer;
use crate::diag::Diagnostic;
use crate::litmus::ast::{Instruction, Operand};
use crate::program::unknown::{UnknownKind, UnknownOrigin};
use crate::program::*;

/// Instructions that only compute registers: those the model does not interpret are abstracted.
pub(super) const REGISTER_ONLY: &[&str] = &[
    "add",
    "sub",
    "mul",
    "mad",
    "fma",
    "div",
    "rem",
    "abs",
    "neg",
    "min",
    "max",
    "and",
    "or",
    "xor",
    "not",
    "cnot",
    "shl",
    "shr",
    "shf",
    "setp",
    "set",
    "selp",
    "slct",
    "mov",
    "cvt",
    "cvta",
    "rcp",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "lg2",
    "ex2",
    "tanh",
    "copysign",
    "testp",
    "bfe",
    "bfi",
    "bfind",
    "brev",
    "clz",
    "popc",
    "prmt",
    "lop3",
    "dp4a",
    "dp2a",
    "bmsk",
    "szext",
    "fns",
    "mul24",
    "mad24",
    "sad",
    "mma",
    "shfl",
    "vote",
    "match",
    "redux",
    "activemask",
    "movmatrix",
    "cvt.pack",
    "mov.pack",
];

/// Opcodes whose first operand is read, not written.
const NO_DESTINATION: &[&str] = &["st", "red", "bar", "barrier", "bra", "brx", "fence", "membar", "ret", "exit", "nanosleep", "trap"];

const FLOAT_TYPES: &[&str] = &["f16", "f16x2", "bf16", "bf16x2", "f32", "f64", "tf32", "e4m3", "e5m2", "e4m3x2", "e5m2x2", "f32x2"];

/// Whether an instruction may be abstracted where the model rejects it.
pub(super) fn is_register_only(i: &Instruction) -> bool {
    REGISTER_ONLY.contains(&i.opcode[0].node.as_str())
}

/// Why a register-only instruction is not interpreted by the model, for the report.
fn kind(i: &Instruction) -> &'static str {
    match i.opcode[0].node.as_str() {
        "mma" => "a matrix multiply-accumulate on registers",
        "shfl" | "vote" | "match" | "redux" | "activemask" => "a warp-level exchange of register values",
        _ if i.opcode.iter().any(|p| FLOAT_TYPES.contains(&p.node.as_str())) => "floating-point arithmetic",
        _ => "register arithmetic the model does not interpret",
    }
}

/// The names an operand reads (registers inside addresses and vectors); `written` for a
/// destination operand, whose names are written instead.
fn names<'a>(o: &'a Operand, written: bool, out: &mut Vec<&'a Operand>) {
    match o {
        Operand::Name(_) | Operand::PercentName(_) if !written => out.push(o),
        Operand::Address(inner, _) | Operand::Negated(inner) => names(&inner.node, false, out),
        Operand::Vector(items) => items.iter().for_each(|x| names(&x.node, written, out)),
        _ => {}
    }
}

impl InstrLowerer<'_, '_> {
    /// The instruction as [`Op::Opaque`], after the model rejected it with `rejection`: its
    /// destinations (the first operand, scalar, `d|p` or a vector) become unknown, with a data
    /// dependency on every register it reads. An instruction counted as `width` operations
    /// (`setp p|q`, `lop3 d|p`: `threads::width`, which labels and guards rely on) keeps its
    /// width: the operations after the first have no destination and do nothing.
    pub(super) fn opaque(&mut self, rejection: &Diagnostic, width: usize) -> Result<Vec<Op>, Diagnostic> {
        let i = self.instr;
        let writes_first = !NO_DESTINATION.contains(&i.opcode[0].node.as_str());
        let mut srcs = Vec::new();
        let mut dsts = Vec::new();
        for (k, o) in i.operands.iter().enumerate() {
            let written = k == 0 && writes_first;
            let mut read = Vec::new();
            names(&o.node, written, &mut read);
            for r in read {
                // A name that is no register (a label, a variable's address) carries no value
                // the destinations depend on in a way the model tracks.
                if let Ok(v @ Value::Reg(_)) = self.value(&crate::diag::Spanned::new(r.clone(), o.span)) {
                    srcs.push(v);
                }
            }
            if written {
                let items: Vec<&crate::diag::Spanned<Operand>> = match &o.node {
                    Operand::Vector(items) => items.iter().collect(),
                    _ => vec![o],
                };
                for item in items {
                    if matches!(item.node, Operand::Name(_) | Operand::PercentName(_)) {
                        dsts.push(self.dest_reg(item)?);
                    }
                }
            }
        }
        let (line, _) = self.l.source.line_col(self.span.start);
        let what = self.l.source.slice(self.span).split_whitespace().collect::<Vec<_>>().join(" ");
        let origin = self.l.unknown_origin(UnknownOrigin {
            line,
            span: self.span,
            what,
            why: format!("{}: {}", kind(i), rejection.message),
            kind: UnknownKind::Abstracted,
        });
        for &d in &dsts {
            self.regs.set_type(d, None);
        }
        let mut ops = vec![Op::Opaque { dsts, srcs, origin }];
        ops.resize(width.max(1), Op::Opaque { dsts: Vec::new(), srcs: Vec::new(), origin });
        Ok(ops)
    }
}
