//! The values a trace computes: known numbers, or symbolic expressions over the trace's reads
//! (left open until reads-from is chosen), and the value domains reads range over.

use crate::program::{LocalOp, RmwOp, Ty};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Odometer increment; false when every combination was visited.
pub fn advance(idx: &mut [usize], sizes: &[usize]) -> bool {
    for k in (0..idx.len()).rev() {
        idx[k] += 1;
        if idx[k] < sizes[k] {
            return true;
        }
        idx[k] = 0;
    }
    false
}

/// A value the trace leaves open: it is computed from reads whose values are whatever the
/// writes they read from hold (their registers never decide control flow or an address). A
/// store of such a value writes the expression; the search evaluates it once reads-from is
/// chosen. This is what keeps a thread that copies or accumulates values from branching once per
/// value every read might return.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymExpr {
    Const(i64),
    /// The value read by event `i` (a trace index; an event index once in a structure).
    Read(usize),
    Local(LocalOp, Arc<SymExpr>, Arc<SymExpr>),
    /// What an RMW writes: its operation on the old value and the operands.
    Rmw(RmwOp, Arc<SymExpr>, Vec<SymExpr>),
    /// The low `bytes` bytes of the value (a copy zero-fills the bytes past src-size).
    Low(Arc<SymExpr>, i64),
    /// Typed register arithmetic ([`Ty::local`]).
    TLocal(Ty, LocalOp, Arc<SymExpr>, Arc<SymExpr>),
    /// Register arithmetic with three operands (`mad`, `selp`: [`Ty::local3`], or untyped).
    Local3(Option<Ty>, LocalOp, Arc<[SymExpr; 3]>),
    /// What a typed RMW computes ([`Ty::rmw`]).
    TRmw(Ty, RmwOp, Arc<SymExpr>, Vec<SymExpr>),
    /// The value normalized to a type (a typed load's register, a typed store's word).
    Norm(Ty, Arc<SymExpr>),
    /// A 64-bit value from its low and high 32-bit words.
    Join(Arc<SymExpr>, Arc<SymExpr>),
    /// The high 32 bits of a 64-bit value.
    High(Arc<SymExpr>),
    /// Word `word` of what a typed `cp.reduce.async.bulk` element reduction writes, from the old
    /// destination words and the source words of the element (`exec::reduce::reduce_word`).
    Reduce(RmwOp, crate::program::RedType, crate::exec::reduce::F32Subnormals, usize, Vec<SymExpr>, Vec<SymExpr>),
}

impl SymExpr {
    /// What an increment writes over what it read: `c` for an RMW adding the constant `c` (a
    /// typed write of it may wrap: the caller decides whether it can).
    pub fn increment(&self) -> Option<i64> {
        let inner = if let SymExpr::Norm(_, inner) = self { inner.as_ref() } else { self };
        match inner {
            SymExpr::Rmw(RmwOp::Add, _, args) | SymExpr::TRmw(_, RmwOp::Add, _, args) => match args.as_slice() {
                [SymExpr::Const(c)] => Some(*c),
                _ => None,
            },
            _ => None,
        }
    }

    /// The value, given the value each read returns (None: not known yet). Reads are asked
    /// left to right, up to the first one not known.
    pub fn eval(&self, read: &mut dyn FnMut(usize) -> Option<i64>) -> Option<i64> {
        self.fold(&mut |node, args: Vec<i64>| node.apply(&args, read))
    }

    /// The same expression with every read index moved by `base` (trace to structure).
    pub fn shifted(&self, base: usize) -> SymExpr {
        let shifted = self.fold(&mut |node, args: Vec<SymExpr>| {
            Some(match node {
                SymExpr::Read(i) => SymExpr::Read(base + i),
                _ => node.with_operands(args),
            })
        });
        shifted.expect("shifting never stops")
    }

    /// The reads the value depends on, left to right.
    pub fn reads(&self, out: &mut Vec<usize>) {
        self.fold(&mut |node, _: Vec<()>| {
            if let SymExpr::Read(i) = node {
                out.push(*i);
            }
            Some(())
        });
    }

    /// Every value the expression can take when each read returns a value of `domain(read)`;
    /// None when there are more than `limit`.
    pub fn possible(&self, domain: &dyn Fn(usize) -> Vec<i64>, limit: usize) -> Option<BTreeSet<i64>> {
        let mut reads = Vec::new();
        self.reads(&mut reads);
        reads.sort_unstable();
        reads.dedup();
        let domains: Vec<Vec<i64>> = reads.iter().map(|&r| domain(r)).collect();
        let mut out = BTreeSet::new();
        let mut idx = vec![0usize; reads.len()];
        if domains.iter().any(|d| d.is_empty()) {
            return Some(out);
        }
        let mut combinations = 0usize;
        loop {
            combinations += 1;
            if combinations > limit.saturating_mul(64) {
                return None;
            }
            let value = self.eval(&mut |r| reads.iter().position(|&x| x == r).map(|k| domains[k][idx[k]]));
            out.extend(value);
            if out.len() > limit {
                return None;
            }
            let sizes: Vec<usize> = domains.iter().map(|d| d.len()).collect();
            if !advance(&mut idx, &sizes) {
                return Some(out);
            }
        }
    }
}

/// A register's value in a trace: known, or left open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegVal {
    Known(i64),
    Open(SymExpr),
}

impl RegVal {
    pub(super) fn expr(&self) -> SymExpr {
        match self {
            RegVal::Known(v) => SymExpr::Const(*v),
            RegVal::Open(e) => e.clone(),
        }
    }
}

/// A register value normalized to a type (untyped: unchanged).
pub(super) fn typed(ty: Option<Ty>, v: RegVal) -> RegVal {
    match (ty, v) {
        (None, v) => v,
        (Some(t), RegVal::Known(x)) => RegVal::Known(t.norm(x)),
        (Some(t), RegVal::Open(e)) => RegVal::Open(SymExpr::Norm(t, Arc::new(e))),
    }
}

/// Per physical location, the values reads may return.
pub type Domains = Vec<BTreeSet<i64>>;
