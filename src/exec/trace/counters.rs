//! Counters: locations that only atomic increments by a positive constant write (a tile counter,
//! a ticket lock's next ticket), all of them morally strong with each other (strong, generic,
//! each one's scope including the other's thread). PTX's Coherence-MoralStrength and Atomicity
//! axioms (PTX ISA §8.10) then order their writes totally, each increment right after the write
//! it read, so values strictly increase along coherence order; and Causality (no read from a
//! write coherence-before a write that precedes it in causality order, program order included)
//! keeps a thread from reading a value below one it already read or wrote there. The traces use
//! this to leave out runs and combinations no such model allows (a worker that claims tile 0
//! twice, two workers that claim the same tile), which would otherwise multiply like `B^B` in a
//! tile loop. Increments that are not morally strong with each other (different GPUs at `.gpu`
//! scope) may read stale values, and make no counter.

use crate::program::{Address, MbOp, Op, Program, RmwOp, Value, VariableKind};

/// Values below this keep every increment of a test far from any type's wrap-around.
const SMALL: i64 = 1 << 30;

/// For each physical location, whether it is a counter (see the module documentation).
pub(super) fn counters(program: &Program) -> Vec<bool> {
    let mut counter: Vec<bool> = program.physical.iter().map(|p| (0..SMALL).contains(&p.init)).collect();
    for (l, loc) in program.locations.iter().enumerate() {
        if program.variable_of(l).kind == VariableKind::Mbarrier || program.is_tensor_map(loc.variable) {
            counter[loc.physical] = false;
        }
    }
    // Every word of variable `v` (wide and vector accesses write a word's neighbours).
    let clear_variable = |v: usize, counter: &mut Vec<bool>| {
        for other in program.locations.iter().filter(|o| o.variable == v) {
            counter[other.physical] = false;
        }
    };
    // A write through a register reaches a variable whose address some constant of the program
    // holds; a constant that looks like an address of nothing could reach anything.
    let Some(addressed) = addressed_variables(program) else { return vec![false; program.physical.len()] };
    let mut through_register = false;
    // The increments of each location: (thread placement, scope).
    let mut increments: Vec<Vec<(crate::program::Placement, crate::program::Scope)>> = vec![Vec::new(); program.physical.len()];
    for (thread, instr) in program.threads.iter().flat_map(|t| t.code.iter().map(move |i| (t, i))) {
        let written = match &instr.op {
            Op::Rmw { addr: Address::Location(l), op: RmwOp::Add, operands, ty, sem, scope, proxy, .. }
                if matches!(operands.as_slice(), [Value::Const(c)] if (1..SMALL).contains(c))
                    && ty.is_none_or(|t| t.bits == 32)
                    && *proxy == crate::program::Proxy::Generic
                    && *sem != crate::program::Sem::Weak =>
            {
                increments[program.locations[*l].physical].push((thread.placement, *scope));
                continue;
            }
            Op::Rmw { addr, .. } | Op::Store { addr, .. } | Op::StoreVector { addr, .. } => addr,
            // An mbarrier operation on a data word (a shared storage array) makes its variable
            // no counter; through a register it reaches an mbarrier, which increments do not.
            Op::Mbarrier { bar: bar @ (Address::Location(_) | Address::Byte(..)), .. }
            | Op::CpAsyncArrive { bar: bar @ (Address::Location(_) | Address::Byte(..)), .. } => bar,
            // Asynchronous copies write whole ranges of their destinations.
            Op::AsyncCopy(_) | Op::TensormapReplace { .. } | Op::TensormapCopy { .. } => return vec![false; program.physical.len()],
            _ => continue,
        };
        match written {
            Address::Location(l) | Address::Byte(l, _) => clear_variable(program.locations[*l].variable, &mut counter),
            Address::Reg(..) => through_register = true,
        }
    }
    if through_register {
        for v in addressed {
            clear_variable(v, &mut counter);
        }
    }
    for (p, incs) in increments.iter().enumerate() {
        let morally_strong = incs.iter().all(|(a, sa)| incs.iter().all(|(b, sb)| a.includes(*sa, b) && b.includes(*sb, a)));
        if !morally_strong {
            counter[p] = false;
        }
    }
    counter
}

/// The variables whose address some constant of the program holds (an initial register value
/// or an operand); None when a large constant is no variable's address (arithmetic on it might
/// reach any variable).
fn addressed_variables(program: &Program) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    let constants = program.threads.iter().flat_map(|t| t.reg_init.iter().copied().chain(t.code.iter().flat_map(|i| constants(&i.op))));
    for c in constants {
        match program.decode_address(c) {
            Some((v, _)) => out.push(v),
            None if c.unsigned_abs() >= (crate::program::ADDRESS_BASE as u64) / 2 => return None,
            None => {}
        }
    }
    Some(out)
}

/// The constant operands of an operation that could hold an address.
fn constants(op: &Op) -> Vec<i64> {
    let values: Vec<&Value> = match op {
        Op::Local { a, b, c, .. } => [a, b].into_iter().chain(c).collect(),
        Op::Opaque { srcs, .. } => srcs.iter().collect(),
        Op::Store { value, .. } => vec![value],
        Op::StoreVector { values, .. } => values.iter().collect(),
        Op::Rmw { operands, .. } => operands.iter().collect(),
        Op::Branch { cond, .. } => cond.iter().flat_map(|(_, a, b)| [a, b]).collect(),
        Op::Barrier { id, count, .. } => id.iter().chain(count).collect(),
        Op::Matrix(m) => m.srcs.iter().collect(),
        Op::Exchange(x) => vec![&x.a, &x.b, &x.c, &x.mask],
        Op::Mbarrier { op, .. } => match op {
            MbOp::Init { count } => vec![count],
            MbOp::Arrive { count, expect_tx, .. } => std::iter::once(count).chain(expect_tx).collect(),
            MbOp::ExpectTx { bytes } | MbOp::CompleteTx { bytes } => vec![bytes],
            MbOp::Wait { operand, .. } => vec![operand],
            MbOp::Inval => vec![],
        },
        Op::AsyncCopy(c) => [&c.size].into_iter().chain(&c.src_size).chain(&c.ignore_src).chain(&c.multicast).chain(&c.byte_mask).collect(),
        Op::TensormapReplace { value, .. } => vec![value],
        Op::TensormapCopy { .. } | Op::TensormapFence { .. } => vec![],
        Op::LoadVector { .. }
        | Op::ParamLoad { .. }
        | Op::Load { .. }
        | Op::Prefetch { .. }
        | Op::CommitGroup(_)
        | Op::WaitGroup { .. }
        | Op::CpAsyncArrive { .. }
        | Op::Wgmma { .. }
        | Op::WgmmaFence
        | Op::ClusterBarrier { .. }
        | Op::Fence { .. }
        | Op::ProxyFence { .. }
        | Op::WarpBarrier { .. }
        | Op::NoEffect(_)
        | Op::Trap
        | Op::AliasFence => vec![],
    };
    values.into_iter().filter_map(|v| if let Value::Const(c) = v { Some(*c) } else { None }).collect()
}

#[cfg(test)]
mod tests {
    use super::counters;

    fn program(text: &str) -> crate::program::Program {
        crate::parse_program(crate::diag::SourceFile::new("t.litmus", text)).unwrap()
    }

    #[test]
    fn only_increments_by_a_constant_make_a_counter() {
        let p = program(
            "PTX t\n{ c = 0; d = 0; e = 0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n atom.relaxed.gpu.add r0, c, 1 | red.relaxed.gpu.add c, 2 ;\n atom.relaxed.gpu.add r1, d, 1 | st.relaxed.gpu d, 5 ;\n atom.relaxed.gpu.exch r2, e, 1 | ;\nexists (0 == 0)\n",
        );
        let names: Vec<String> = (0..p.physical.len()).map(|l| p.physical_name(l)).collect();
        let c = counters(&p);
        let is = |n: &str| c[names.iter().position(|x| x == n).unwrap()];
        assert!(is("c"), "increments only");
        assert!(!is("d"), "a store");
        assert!(!is("e"), "an exchange");
    }
}
