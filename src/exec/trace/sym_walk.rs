//! Walks over open values ([`SymExpr`]) without recursion: an accumulator updated by thousands
//! of instructions (`add r0, r0, 1` after a racy load) is an expression thousands of nodes
//! deep, and evaluating, shifting or dropping it one call per node overflowed the stack.

use super::arith::{join64, local3_result, local_result, low_bytes, rmw_result};
use super::deps::DepMask;
use super::values::SymExpr;
use std::sync::{Arc, LazyLock};

impl SymExpr {
    /// The operands of this node, left to right.
    fn operands(&self) -> Vec<&SymExpr> {
        match self {
            SymExpr::Const(_) | SymExpr::Read(_) => Vec::new(),
            SymExpr::Local(_, a, b) | SymExpr::TLocal(_, _, a, b) | SymExpr::Join(a, b) => vec![a, b],
            SymExpr::Rmw(_, old, ops) | SymExpr::TRmw(_, _, old, ops) => std::iter::once(&**old).chain(ops).collect(),
            SymExpr::Local3(_, _, args) => args.iter().collect(),
            SymExpr::Low(a, _) | SymExpr::Norm(_, a) | SymExpr::High(a) => vec![a],
            SymExpr::Reduce(_, _, _, _, old, src) => old.iter().chain(src).collect(),
        }
    }

    /// Combines the nodes bottom up, operands left to right: `f` gets a node and the results of
    /// its operands. Stops at the first None.
    pub(super) fn fold<T>(&self, f: &mut dyn FnMut(&SymExpr, Vec<T>) -> Option<T>) -> Option<T> {
        // Each frame: a node, its operands, and how many of them are pushed.
        let mut stack: Vec<(&SymExpr, Vec<&SymExpr>, usize)> = vec![(self, self.operands(), 0)];
        let mut results: Vec<T> = Vec::new();
        loop {
            let top = stack.last_mut()?;
            if top.2 < top.1.len() {
                let operand = top.1[top.2];
                top.2 += 1;
                stack.push((operand, operand.operands(), 0));
                continue;
            }
            let (node, operands, _) = stack.pop()?;
            let args = results.split_off(results.len() - operands.len());
            let value = f(node, args)?;
            if stack.is_empty() {
                return Some(value);
            }
            results.push(value);
        }
    }

    /// The value of this node from the values of its operands (as [`SymExpr::operands`]
    /// orders them); a read's value from `read`.
    pub(super) fn apply(&self, v: &[i64], read: &mut dyn FnMut(usize) -> Option<i64>) -> Option<i64> {
        // Arithmetic on an unknown value gives it back (`program::unknown`).
        if let Some(u) = crate::program::unknown::first(v) {
            return Some(u);
        }
        Some(match self {
            SymExpr::Const(c) => *c,
            SymExpr::Read(i) => read(*i)?,
            SymExpr::Local(op, ..) => local_result(*op, v[0], v[1]),
            SymExpr::Rmw(op, ..) => {
                let ops: Vec<(i64, DepMask)> = v[1..].iter().map(|&x| (x, DepMask::none())).collect();
                rmw_result(*op, v[0], &ops)
            }
            SymExpr::Low(_, bytes) => low_bytes(v[0], *bytes),
            SymExpr::TLocal(t, op, ..) => t.local(*op, v[0], v[1]),
            SymExpr::Local3(Some(t), op, _) => t.local3(*op, v[0], v[1], v[2]),
            SymExpr::Local3(None, op, _) => local3_result(*op, v[0], v[1], v[2]),
            SymExpr::TRmw(t, op, ..) => t.rmw(*op, v[0], &v[1..]),
            SymExpr::Norm(t, _) => t.norm(v[0]),
            SymExpr::Join(..) => join64(v[0], v[1]),
            SymExpr::High(_) => super::arith::high_word(v[0]),
            SymExpr::Reduce(op, ty, f32s, word, old, _) => {
                let (old_words, src_words) = v.split_at(old.len());
                crate::exec::reduce::reduce_word(*op, *ty, *f32s, *word, old_words, src_words)
            }
        })
    }

    /// This node over `new` operands (as [`SymExpr::operands`] orders them; a leaf is copied).
    pub(super) fn with_operands(&self, new: Vec<SymExpr>) -> SymExpr {
        let mut new = new.into_iter();
        let mut next = || new.next().expect("one operand per operand");
        match self {
            SymExpr::Const(c) => SymExpr::Const(*c),
            SymExpr::Read(i) => SymExpr::Read(*i),
            SymExpr::Local(op, ..) => SymExpr::Local(*op, Arc::new(next()), Arc::new(next())),
            SymExpr::TLocal(t, op, ..) => SymExpr::TLocal(*t, *op, Arc::new(next()), Arc::new(next())),
            SymExpr::Join(..) => SymExpr::Join(Arc::new(next()), Arc::new(next())),
            SymExpr::Rmw(op, _, ops) => SymExpr::Rmw(*op, Arc::new(next()), ops.iter().map(|_| next()).collect()),
            SymExpr::TRmw(t, op, _, ops) => SymExpr::TRmw(*t, *op, Arc::new(next()), ops.iter().map(|_| next()).collect()),
            SymExpr::Local3(t, op, _) => SymExpr::Local3(*t, *op, Arc::new([next(), next(), next()])),
            SymExpr::Low(_, bytes) => SymExpr::Low(Arc::new(next()), *bytes),
            SymExpr::Norm(t, _) => SymExpr::Norm(*t, Arc::new(next())),
            SymExpr::High(_) => SymExpr::High(Arc::new(next())),
            SymExpr::Reduce(op, ty, f32s, word, old, src) => {
                SymExpr::Reduce(*op, *ty, *f32s, *word, old.iter().map(|_| next()).collect(), src.iter().map(|_| next()).collect())
            }
        }
    }

    /// Moves the shared operands of this node (and of the operands it holds inline) to `out`,
    /// leaving a shared constant in their place.
    fn take_shared(&mut self, out: &mut Vec<Arc<SymExpr>>) {
        let mut take = |a: &mut Arc<SymExpr>| out.push(std::mem::replace(a, LEAF.clone()));
        match self {
            SymExpr::Const(_) | SymExpr::Read(_) => {}
            SymExpr::Local(_, a, b) | SymExpr::TLocal(_, _, a, b) | SymExpr::Join(a, b) => {
                take(a);
                take(b);
            }
            SymExpr::Rmw(_, old, ops) | SymExpr::TRmw(_, _, old, ops) => {
                take(old);
                ops.iter_mut().for_each(|o| o.take_shared(out));
            }
            SymExpr::Local3(_, _, args) => {
                // Its last owner empties it here; another owner drops it later.
                if let Some(args) = Arc::get_mut(args) {
                    args.iter_mut().for_each(|a| a.take_shared(out));
                }
            }
            SymExpr::Low(a, _) | SymExpr::Norm(_, a) | SymExpr::High(a) => take(a),
            SymExpr::Reduce(_, _, _, _, old, src) => old.iter_mut().chain(src.iter_mut()).for_each(|o| o.take_shared(out)),
        }
    }
}

/// The shared constant that dropped nodes leave in place of their operands (never freed: this
/// static holds it).
static LEAF: LazyLock<Arc<SymExpr>> = LazyLock::new(|| Arc::new(SymExpr::Const(0)));

impl Drop for SymExpr {
    /// A deep expression is dropped with a stack of its own: each node whose last owner this is
    /// hands its operands to the stack before it goes.
    fn drop(&mut self) {
        let mut stack = Vec::new();
        self.take_shared(&mut stack);
        while let Some(shared) = stack.pop() {
            if let Some(mut node) = Arc::into_inner(shared) {
                node.take_shared(&mut stack);
            }
        }
    }
}
