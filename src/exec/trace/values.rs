//! The values a trace computes: known numbers, or symbolic expressions over the trace's reads
//! (left open until reads-from is chosen), and the value domains reads range over.

use super::arith::{join64, local3_result, local_result, low_bytes, rmw_result};
use super::deps::DepMask;
use crate::program::{LocalOp, RmwOp, Ty};
use std::collections::BTreeSet;

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
    Local(LocalOp, Box<SymExpr>, Box<SymExpr>),
    /// What an RMW writes: its operation on the old value and the operands.
    Rmw(RmwOp, Box<SymExpr>, Vec<SymExpr>),
    /// The low `bytes` bytes of the value (a copy zero-fills the bytes past src-size).
    Low(Box<SymExpr>, i64),
    /// Typed register arithmetic ([`Ty::local`]).
    TLocal(Ty, LocalOp, Box<SymExpr>, Box<SymExpr>),
    /// Register arithmetic with three operands (`mad`, `selp`: [`Ty::local3`], or untyped).
    Local3(Option<Ty>, LocalOp, Box<[SymExpr; 3]>),
    /// What a typed RMW computes ([`Ty::rmw`]).
    TRmw(Ty, RmwOp, Box<SymExpr>, Vec<SymExpr>),
    /// The value normalized to a type (a typed load's register, a typed store's word).
    Norm(Ty, Box<SymExpr>),
    /// A 64-bit value from its low and high 32-bit words.
    Join(Box<SymExpr>, Box<SymExpr>),
    /// The high 32 bits of a 64-bit value.
    High(Box<SymExpr>),
    /// Word `word` of what a typed `cp.reduce.async.bulk` element reduction writes, from the old
    /// destination words and the source words of the element (`exec::reduce::reduce_word`).
    Reduce(RmwOp, crate::program::RedType, crate::exec::reduce::F32Subnormals, usize, Vec<SymExpr>, Vec<SymExpr>),
}

impl SymExpr {
    /// What an increment writes over what it read: `c` for an RMW adding the constant `c` (a
    /// typed write of it may wrap: the caller decides whether it can).
    pub fn increment(&self) -> Option<i64> {
        let norm = |e: &SymExpr| if let SymExpr::Norm(_, inner) = e { inner.as_ref().clone() } else { e.clone() };
        match norm(self) {
            SymExpr::Rmw(RmwOp::Add, _, args) | SymExpr::TRmw(_, RmwOp::Add, _, args) => match args.as_slice() {
                [SymExpr::Const(c)] => Some(*c),
                _ => None,
            },
            _ => None,
        }
    }

    /// The value, given the value each read returns (None: not known yet).
    pub fn eval(&self, read: &mut dyn FnMut(usize) -> Option<i64>) -> Option<i64> {
        Some(match self {
            SymExpr::Const(c) => *c,
            SymExpr::Read(i) => read(*i)?,
            SymExpr::Local(op, a, b) => local_result(*op, a.eval(read)?, b.eval(read)?),
            SymExpr::Rmw(op, old, ops) => {
                let old = old.eval(read)?;
                let ops = ops.iter().map(|o| o.eval(read).map(|v| (v, DepMask::none()))).collect::<Option<Vec<_>>>()?;
                rmw_result(*op, old, &ops)
            }
            SymExpr::Low(a, bytes) => low_bytes(a.eval(read)?, *bytes),
            SymExpr::TLocal(t, op, a, b) => t.local(*op, a.eval(read)?, b.eval(read)?),
            SymExpr::Local3(t, op, args) => {
                let [x, y, z] = [args[0].eval(read)?, args[1].eval(read)?, args[2].eval(read)?];
                match t {
                    Some(t) => t.local3(*op, x, y, z),
                    None => local3_result(*op, x, y, z),
                }
            }
            SymExpr::TRmw(t, op, old, ops) => {
                let old = old.eval(read)?;
                let ops = ops.iter().map(|o| o.eval(read)).collect::<Option<Vec<_>>>()?;
                t.rmw(*op, old, &ops)
            }
            SymExpr::Norm(t, a) => t.norm(a.eval(read)?),
            SymExpr::Join(lo, hi) => join64(lo.eval(read)?, hi.eval(read)?),
            SymExpr::High(a) => a.eval(read)? >> 32,
            SymExpr::Reduce(op, ty, f32s, word, old, src) => {
                let old = old.iter().map(|e| e.eval(read)).collect::<Option<Vec<_>>>()?;
                let src = src.iter().map(|e| e.eval(read)).collect::<Option<Vec<_>>>()?;
                crate::exec::reduce::reduce_word(*op, *ty, *f32s, *word, &old, &src)
            }
        })
    }

    /// The same expression with every read index moved by `base` (trace to structure).
    pub fn shifted(&self, base: usize) -> SymExpr {
        match self {
            SymExpr::Const(c) => SymExpr::Const(*c),
            SymExpr::Read(i) => SymExpr::Read(base + i),
            SymExpr::Local(op, a, b) => SymExpr::Local(*op, Box::new(a.shifted(base)), Box::new(b.shifted(base))),
            SymExpr::Rmw(op, old, ops) => SymExpr::Rmw(*op, Box::new(old.shifted(base)), ops.iter().map(|o| o.shifted(base)).collect()),
            SymExpr::Low(a, bytes) => SymExpr::Low(Box::new(a.shifted(base)), *bytes),
            SymExpr::TLocal(t, op, a, b) => SymExpr::TLocal(*t, *op, Box::new(a.shifted(base)), Box::new(b.shifted(base))),
            SymExpr::Local3(t, op, args) => SymExpr::Local3(*t, *op, Box::new(args.clone().map(|a| a.shifted(base)))),
            SymExpr::TRmw(t, op, old, ops) => {
                SymExpr::TRmw(*t, *op, Box::new(old.shifted(base)), ops.iter().map(|o| o.shifted(base)).collect())
            }
            SymExpr::Norm(t, a) => SymExpr::Norm(*t, Box::new(a.shifted(base))),
            SymExpr::Join(lo, hi) => SymExpr::Join(Box::new(lo.shifted(base)), Box::new(hi.shifted(base))),
            SymExpr::High(a) => SymExpr::High(Box::new(a.shifted(base))),
            SymExpr::Reduce(op, ty, f32s, word, old, src) => SymExpr::Reduce(
                *op,
                *ty,
                *f32s,
                *word,
                old.iter().map(|o| o.shifted(base)).collect(),
                src.iter().map(|o| o.shifted(base)).collect(),
            ),
        }
    }

    /// The reads the value depends on.
    pub fn reads(&self, out: &mut Vec<usize>) {
        match self {
            SymExpr::Const(_) => {}
            SymExpr::Read(i) => out.push(*i),
            SymExpr::Local(_, a, b) | SymExpr::TLocal(_, _, a, b) | SymExpr::Join(a, b) => {
                a.reads(out);
                b.reads(out);
            }
            SymExpr::Rmw(_, old, ops) | SymExpr::TRmw(_, _, old, ops) => {
                old.reads(out);
                ops.iter().for_each(|o| o.reads(out));
            }
            SymExpr::Local3(_, _, args) => args.iter().for_each(|a| a.reads(out)),
            SymExpr::Low(a, _) | SymExpr::Norm(_, a) | SymExpr::High(a) => a.reads(out),
            SymExpr::Reduce(_, _, _, _, old, src) => old.iter().chain(src).for_each(|o| o.reads(out)),
        }
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
        (Some(t), RegVal::Open(e)) => RegVal::Open(SymExpr::Norm(t, Box::new(e))),
    }
}

/// Per physical location, the values reads may return.
pub type Domains = Vec<BTreeSet<i64>>;
