//! The combinations of one run per thread that the driver builds event structures for.

use crate::exec::trace::{exchanges_consistent, Lanes, Trace, TraceOp};
use crate::program::Program;
use rustc_hash::{FxHashMap, FxHashSet};
use std::ops::ControlFlow;

/// The combinations of one trace per thread whose reads can all be satisfied by some write.
///
/// Threads are chosen one at a time; a read of value v at location l survives only if v is the
/// initial value of l, is written to l by a trace already chosen, or can be written to l by some
/// trace of a thread not chosen yet. Most value guesses die here, before any event structure
/// or model evaluation exists. The last thread's runs are looked up by what they write: only
/// those that write every value the chosen runs still need are tried.
pub(super) struct TraceCombinations<'a> {
    program: &'a Program,
    /// The runs each thread may contribute.
    per_thread: Vec<Vec<&'a Trace>>,
    /// What each run reads and writes, in `per_thread` order.
    runs: Vec<Vec<RunValues>>,
    /// For each thread, every (physical location, value) some trace of it writes (None: any).
    may_write: Vec<FxHashSet<(usize, Option<i64>)>>,
    /// For the last thread: per (physical location, value) written, the runs that write it, as a
    /// bit set over the thread's runs (runs writing an open value with no bound are in every set).
    last_writers: FxHashMap<(usize, i64), Vec<u64>>,
    /// For the last thread: per physical location, the runs that write an open value with no
    /// bound there (they may write any value).
    last_open_writers: FxHashMap<usize, Vec<u64>>,
    /// For each thread, an earlier thread interchangeable with it (see [`TraceCombinations::up_to_symmetry`]).
    same_as: Vec<Option<usize>>,
    /// Combinations left out because two runs claim the same value of a counter.
    claims_shared: std::cell::Cell<u64>,
    /// The lanes of the warps whose threads exchange: a combination keeps only runs whose
    /// exchanges got what the other lanes' runs gave (`exec::trace::exchanges_consistent`).
    lanes: Option<Lanes>,
}

/// The callbacks of one walk over the combinations.
struct Walk<'w, 'a, E> {
    f: &'w mut dyn FnMut(&[&'a Trace]) -> Flow<E>,
    partial: &'w mut dyn FnMut(&[&'a Trace]) -> bool,
    tick: &'w mut dyn FnMut() -> Result<(), E>,
}

/// The values one run reads (that another write must provide) and writes.
struct RunValues {
    reads: Vec<(usize, i64)>,
    writes: FxHashSet<(usize, Option<i64>)>,
}

impl<'a> TraceCombinations<'a> {
    pub(super) fn new(program: &'a Program, per_thread: Vec<Vec<&'a Trace>>) -> Self {
        let runs: Vec<Vec<RunValues>> = per_thread
            .iter()
            .map(|tt| {
                tt.iter()
                    .map(|tr| {
                        let mut reads: Vec<(usize, i64)> = reads_of(program, tr).collect();
                        reads.sort_unstable();
                        reads.dedup();
                        RunValues { reads, writes: writes_of(program, tr).collect() }
                    })
                    .collect()
            })
            .collect();
        let may_write = runs.iter().map(|rs| rs.iter().flat_map(|r| r.writes.iter().copied()).collect()).collect();
        let mut last_writers: FxHashMap<(usize, i64), Vec<u64>> = FxHashMap::default();
        let mut last_open_writers: FxHashMap<usize, Vec<u64>> = FxHashMap::default();
        if let Some(last) = runs.last() {
            let words = last.len().div_ceil(64);
            for (k, r) in last.iter().enumerate() {
                for &(p, v) in &r.writes {
                    let set = match v {
                        Some(v) => last_writers.entry((p, v)).or_insert_with(|| vec![0; words]),
                        None => last_open_writers.entry(p).or_insert_with(|| vec![0; words]),
                    };
                    set[k / 64] |= 1 << (k % 64);
                }
            }
        }
        let same_as = vec![None; per_thread.len()];
        let lanes = Some(Lanes::of(program)).filter(Lanes::any);
        TraceCombinations {
            lanes,
            program,
            per_thread,
            runs,
            may_write,
            last_writers,
            last_open_writers,
            same_as,
            claims_shared: Default::default(),
        }
    }

    /// Only one combination per multiset of runs of interchangeable threads (see
    /// [`interchangeable`]), whose runs are then chosen in non-decreasing order. Swapping two
    /// such threads maps executions to executions, so a question that does not name threads
    /// (liveness) has the same answer on every permutation of a combination.
    pub(super) fn up_to_symmetry(mut self) -> Self {
        self.same_as = interchangeable(self.program, &self.per_thread);
        self
    }

    /// How many combinations were left out because two runs claim the same value of a counter.
    pub(super) fn claims_shared(&self) -> u64 {
        self.claims_shared.get()
    }

    /// Call `f` with each combination until it breaks (the result says whether it did) or fails. `partial` is asked about the
    /// runs of the first threads before the later ones are chosen: false leaves out every
    /// combination that starts with them. `tick` is called before each run is tried, whether or
    /// not a combination comes of it, and stops the walk with its error: most runs can be left
    /// out before `f` is called (their exchanges or values do not meet, `partial` says no), and
    /// the walk over them alone, or one slow `partial`, can outlast `--timeout` (CUB's
    /// transform kernel with every lane ran for minutes past a 10 s limit).
    pub(super) fn try_for_each<E>(
        &self,
        f: &mut dyn FnMut(&[&'a Trace]) -> Flow<E>,
        partial: &mut dyn FnMut(&[&'a Trace]) -> bool,
        tick: &mut dyn FnMut() -> Result<(), E>,
    ) -> Flow<E> {
        let mut chosen: Vec<&'a Trace> = Vec::with_capacity(self.per_thread.len());
        let mut index = Vec::with_capacity(self.per_thread.len());
        let mut walk = Walk { f, partial, tick };
        self.go(&mut chosen, &mut index, &mut walk)
    }

    /// Whether value `v` of physical location `p` is written by the initial state, by one of the
    /// runs chosen (`index`, one per thread so far), or by some run of a thread after them.
    fn satisfiable(&self, index: &[usize], p: usize, v: i64) -> bool {
        let written = |w: &FxHashSet<(usize, Option<i64>)>| w.contains(&(p, Some(v))) || w.contains(&(p, None));
        self.program.physical[p].init == v
            || index.iter().enumerate().any(|(t, &k)| written(&self.runs[t][k].writes))
            || self.may_write[index.len()..].iter().any(written)
    }

    fn go<E>(&self, chosen: &mut Vec<&'a Trace>, index: &mut Vec<usize>, walk: &mut Walk<'_, 'a, E>) -> Flow<E> {
        let t = chosen.len();
        if t == self.per_thread.len() {
            return (walk.f)(chosen);
        }
        let first = self.same_as[t].map_or(0, |s| index[s]);
        let candidates = if t + 1 == self.per_thread.len() { self.last_candidates(index) } else { None };
        for (k, &tr) in self.per_thread[t].iter().enumerate().skip(first) {
            if candidates.as_ref().is_some_and(|c| c[k / 64] & (1 << (k % 64)) == 0) {
                continue;
            }
            (walk.tick)()?;
            chosen.push(tr);
            index.push(k);
            // Reads of every chosen trace must remain satisfiable by what is chosen or still open,
            // and no two runs claim the same value of a counter (`Trace::counter_claims`).
            let claims_apart = chosen[..t].iter().all(|other| other.counter_claims.iter().all(|c| !tr.counter_claims.contains(c)));
            if !claims_apart {
                self.claims_shared.set(self.claims_shared.get() + 1);
            }
            let ok = claims_apart && (0..=t).all(|u| self.runs[u][index[u]].reads.iter().all(|&(p, v)| self.satisfiable(index, p, v)));
            let ok = ok && self.lanes.as_ref().is_none_or(|lanes| exchanges_consistent(self.program, lanes, chosen));
            let ok = ok && (t + 1 == self.per_thread.len() || (walk.partial)(chosen));
            let flow = if ok { self.go(chosen, index, walk)? } else { ControlFlow::Continue(()) };
            chosen.pop();
            index.pop();
            if flow.is_break() {
                return Ok(flow);
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// The runs of the last thread that write every value the runs chosen so far (`index`) read
    /// and neither the initial state nor they themselves write; None when nothing narrows it.
    fn last_candidates(&self, index: &[usize]) -> Option<Vec<u64>> {
        let mut needed: Vec<(usize, i64)> = Vec::new();
        for (u, &k) in index.iter().enumerate() {
            for &(p, v) in &self.runs[u][k].reads {
                let inside = self.program.physical[p].init == v
                    || index.iter().enumerate().any(|(w, &j)| {
                        let writes = &self.runs[w][j].writes;
                        writes.contains(&(p, Some(v))) || writes.contains(&(p, None))
                    });
                if !inside {
                    needed.push((p, v));
                }
            }
        }
        let words = self.per_thread.last()?.len().div_ceil(64);
        let mut set: Option<Vec<u64>> = None;
        for key in needed {
            let mut writers = self.last_writers.get(&key).cloned().unwrap_or_else(|| vec![0; words]);
            if let Some(open) = self.last_open_writers.get(&key.0) {
                writers.iter_mut().zip(open).for_each(|(a, b)| *a |= b);
            }
            match set.as_mut() {
                None => set = Some(writers),
                Some(s) => s.iter_mut().zip(&writers).for_each(|(a, b)| *a &= b),
            }
        }
        set
    }
}

/// Per thread, an earlier thread interchangeable with it, if any: a thread whose runs are the
/// same as its own, in the same order. Either the two have the same code, initial registers and
/// placement (so the same runs), or their runs are equal event for event, through instructions
/// of the same meaning, in the same CTA and cluster (the lanes of a warp that skip what lane 0
/// does and only meet at barriers; the consumers of a tile that read the same words), with no
/// warp exchange or warp barrier, whose meaning depends on which lanes take part (issue 39:
/// idle lanes must not multiply the search).
pub(super) fn interchangeable(program: &Program, per_thread: &[Vec<&Trace>]) -> Vec<Option<usize>> {
    let threads = &program.threads;
    let same_code = |a: usize, b: usize| {
        let (x, y) = (&threads[a], &threads[b]);
        x.placement == y.placement
            && x.reg_init == y.reg_init
            && x.code.len() == y.code.len()
            && x.code.iter().zip(&y.code).all(|(i, j)| i.op == j.op)
            && per_thread[a].len() == per_thread[b].len()
    };
    let same_runs = |a: usize, b: usize| {
        let (x, y) = (&threads[a], &threads[b]);
        x.placement == y.placement
            && per_thread[a].len() == per_thread[b].len()
            && per_thread[a].iter().zip(&per_thread[b]).all(|(r, s)| same_run(x, r, y, s))
    };
    (0..threads.len()).map(|t| (0..t).rev().find(|&s| same_code(s, t) || same_runs(s, t))).collect()
}

/// Whether run `r` of thread `x` and run `s` of thread `y` are the same run: the same events
/// (locations, values, dependencies, agents), path, async operations, waits and end, through
/// instructions whose operations are equal, and free of warp exchanges and warp barriers. The
/// final registers may differ: a question that names no register cannot tell the two apart.
fn same_run(x: &crate::program::Thread, r: &Trace, y: &crate::program::Thread, s: &Trace) -> bool {
    let warp_level = |t: &crate::program::Thread, i: usize| {
        matches!(t.code[i].op, crate::program::Op::WarpBarrier { .. } | crate::program::Op::Exchange(_))
    };
    let same_op = |i: usize| x.code.get(i).zip(y.code.get(i)).is_some_and(|(a, b)| a.op == b.op) && !warp_level(x, i);
    r.exchanges.is_empty()
        && s.exchanges.is_empty()
        && r.events == s.events
        && r.path == s.path
        && r.stuck == s.stuck
        && r.ops == s.ops
        && r.waits == s.waits
        && r.counter_claims == s.counter_claims
        && r.assumed == s.assumed
        && r.events.iter().all(|e| same_op(e.instr))
        && r.ops.iter().all(|o| same_op(o.instr))
        && r.assumed.iter().all(|&i| same_op(i))
}

/// Whether to go on after one trace combination (or stop, or fail).
pub(super) type Flow<E> = Result<ControlFlow<()>, E>;

/// The (physical location, value) pairs a trace may write; an open value gives every value it
/// can take, or None for "any value" when there are too many to list.
fn writes_of<'t>(program: &'t Program, tr: &'t Trace) -> impl Iterator<Item = (usize, Option<i64>)> + 't {
    tr.events.iter().filter(|e| e.op == TraceOp::Write && e.mb_op.is_none()).flat_map(move |e| {
        let p = program.locations[e.location.expect("writes have a location")].physical;
        e.written_values().into_iter().map(move |v| (p, v))
    })
}

fn reads_of<'t>(program: &'t Program, tr: &'t Trace) -> impl Iterator<Item = (usize, i64)> + 't {
    tr.events
        .iter()
        .filter(|e| e.op == TraceOp::Read && e.mb_op.is_none() && !e.symbolic)
        .map(move |e| (program.locations[e.location.expect("reads have a location")].physical, e.value))
}
