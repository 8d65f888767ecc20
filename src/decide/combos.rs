//! The combinations of one run per thread that the driver builds event structures for.

use crate::exec::trace::{Trace, TraceOp};
use crate::program::Program;
use std::collections::HashSet;
use std::ops::ControlFlow;

/// The combinations of one trace per thread whose reads can all be satisfied by some write.
///
/// Threads are chosen one at a time; a read of value v at location l survives only if v is the
/// initial value of l, is written to l by a trace already chosen, or can be written to l by some
/// trace of a thread not chosen yet. Most value guesses die here, before any event structure
/// or model evaluation exists.
pub(super) struct TraceCombinations<'a> {
    program: &'a Program,
    /// The runs each thread may contribute.
    per_thread: Vec<Vec<&'a Trace>>,
    /// For each thread, every (physical location, value) some trace of it writes (None: any).
    may_write: Vec<HashSet<(usize, Option<i64>)>>,
    /// For each thread, an earlier thread interchangeable with it (see [`TraceCombinations::up_to_symmetry`]).
    same_as: Vec<Option<usize>>,
}

impl<'a> TraceCombinations<'a> {
    pub(super) fn new(program: &'a Program, per_thread: Vec<Vec<&'a Trace>>) -> Self {
        let may_write = per_thread.iter().map(|tt| tt.iter().flat_map(|tr| writes_of(program, tr)).collect::<HashSet<_>>()).collect();
        let same_as = vec![None; per_thread.len()];
        TraceCombinations { program, per_thread, may_write, same_as }
    }

    /// Only one combination per multiset of runs of interchangeable threads: threads with the
    /// same code, initial registers and placement (so the same runs, in the same order), whose
    /// runs are then chosen in non-decreasing order. Swapping two such threads maps executions
    /// to executions, so a question that does not name threads (liveness) has the same answer
    /// on every permutation of a combination.
    pub(super) fn up_to_symmetry(mut self) -> Self {
        let threads = &self.program.threads;
        let same = |a: usize, b: usize| {
            let (x, y) = (&threads[a], &threads[b]);
            x.placement == y.placement
                && x.reg_init == y.reg_init
                && x.code.len() == y.code.len()
                && x.code.iter().zip(&y.code).all(|(i, j)| i.op == j.op)
                && self.per_thread[a].len() == self.per_thread[b].len()
        };
        self.same_as = (0..threads.len()).map(|t| (0..t).rev().find(|&s| same(s, t))).collect();
        self
    }

    /// Call `f` with each combination until it breaks or fails.
    pub(super) fn try_for_each<E>(&self, f: &mut dyn FnMut(&[&'a Trace]) -> Flow<E>) -> Result<(), E> {
        let mut chosen: Vec<&'a Trace> = Vec::with_capacity(self.per_thread.len());
        let mut index = Vec::with_capacity(self.per_thread.len());
        self.go(&mut chosen, &mut index, f).map(|_| ())
    }

    fn satisfiable(&self, chosen: &[&'a Trace], p: usize, v: i64) -> bool {
        let writes = |w: (usize, Option<i64>)| w == (p, Some(v)) || w == (p, None);
        self.program.physical[p].init == v
            || chosen.iter().any(|tr| writes_of(self.program, tr).any(writes))
            || self.may_write[chosen.len()..].iter().any(|m| m.contains(&(p, Some(v))) || m.contains(&(p, None)))
    }

    fn go<E>(&self, chosen: &mut Vec<&'a Trace>, index: &mut Vec<usize>, f: &mut dyn FnMut(&[&'a Trace]) -> Flow<E>) -> Flow<E> {
        let t = chosen.len();
        if t == self.per_thread.len() {
            return f(chosen);
        }
        let first = self.same_as[t].map_or(0, |s| index[s]);
        for (k, &tr) in self.per_thread[t].iter().enumerate().skip(first) {
            chosen.push(tr);
            index.push(k);
            // Reads of every chosen trace must remain satisfiable by what is chosen or still open.
            let ok = chosen.iter().all(|t| reads_of(self.program, t).all(|(p, v)| self.satisfiable(chosen, p, v)));
            let flow = if ok { self.go(chosen, index, f)? } else { ControlFlow::Continue(()) };
            chosen.pop();
            index.pop();
            if flow.is_break() {
                return Ok(flow);
            }
        }
        Ok(ControlFlow::Continue(()))
    }
}

/// Whether to go on after one trace combination (or stop, or fail).
pub(super) type Flow<E> = Result<ControlFlow<()>, E>;

/// The (physical location, value) pairs a trace may write; an open value gives every value it
/// can take, or None for "any value" when there are too many to list.
fn writes_of<'t>(program: &'t Program, tr: &'t Trace) -> impl Iterator<Item = (usize, Option<i64>)> + 't {
    tr.events.iter().filter(|e| e.op == TraceOp::Write && e.mb_op.is_none()).flat_map(move |e| {
        let p = program.locations[e.location.expect("writes have a location")].physical;
        let values: Vec<Option<i64>> = match (&e.sym, &e.possible) {
            (None, _) => vec![Some(e.value)],
            (Some(_), Some(vs)) => vs.iter().map(|&v| Some(v)).collect(),
            (Some(_), None) => vec![None],
        };
        values.into_iter().map(move |v| (p, v))
    })
}

fn reads_of<'t>(program: &'t Program, tr: &'t Trace) -> impl Iterator<Item = (usize, i64)> + 't {
    tr.events
        .iter()
        .filter(|e| e.op == TraceOp::Read && e.mb_op.is_none() && !e.symbolic)
        .map(move |e| (program.locations[e.location.expect("reads have a location")].physical, e.value))
}
