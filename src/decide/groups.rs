//! Independent groups of threads, decided apart.
//!
//! A grid's CTAs (clusters, where it has them) mostly share nothing one of them writes: each
//! reads the same inputs, fills its own shared memory, writes its own tile of the output. The
//! consistent executions of such a program are the tuples of each group's consistent
//! executions, so deciding the program as one multiplies the groups' searches (CuTe's sm80
//! GEMM with lane 0: one CTA 4 consistent executions, two 16, four 256). Decided one group at a
//! time, with every thread outside the group running no events (`Trace::absent`), the work
//! is their sum. Exact where the question names no value (a verdict without observables, the
//! liveness check) and the model's checks relate two groups' events through nothing
//! (`config::models::groups_decide_apart`; ARCHITECTURE.md, "Independent groups"):
//!
//! - a finding of an execution of the program is a finding of its restriction to one group,
//!   and each group's execution is the restriction of one of the program's, where every other
//!   group has an execution; a group with no complete execution makes the program have none, so
//!   then only those groups are decided (`driver::apart`);
//! - a hang of the program is a hang of one group, beside executions of the others.

use crate::exec::trace::{ThreadTraces, TraceOp};
use crate::program::{FenceKind, Op, Program};
use rustc_hash::FxHashMap;

/// The threads of `program`, in groups that can be decided apart, each in thread order, the
/// groups in order of their first thread; one group when they cannot. Two threads are in one
/// group when they are in one cluster (barriers, distributed shared memory, multicast copies
/// and remote arrives stay inside a cluster), when one of them (or an asynchronous operation
/// it issued) writes a location the other accesses in some run, or when both have an SC fence
/// (the fence-SC order is one order over the whole program).
pub(super) fn independent(program: &Program, per_thread: &[ThreadTraces]) -> Vec<Vec<usize>> {
    let n = program.threads.len();
    let mut parent: Vec<usize> = (0..n).collect();
    let mut cluster_first: FxHashMap<(i64, i64), usize> = FxHashMap::default();
    for (t, thread) in program.threads.iter().enumerate() {
        let first = *cluster_first.entry((thread.placement.gpu, thread.placement.cluster)).or_insert(t);
        union(&mut parent, first, t);
    }
    // Per physical location: the threads that access it (each once, in thread order) and
    // whether one of them writes it.
    let mut touched: FxHashMap<usize, (Vec<usize>, bool)> = FxHashMap::default();
    let mut sc_fenced: Option<usize> = None;
    for (t, runs) in per_thread.iter().enumerate() {
        for tr in runs.traces.iter().chain(&runs.stuck) {
            for e in &tr.events {
                if e.op == TraceOp::Fence && matches!(program.threads[t].code[e.instr].op, Op::Fence { kind: FenceKind::Sc, .. }) {
                    let first = *sc_fenced.get_or_insert(t);
                    union(&mut parent, first, t);
                }
                let Some(l) = e.location else { continue };
                let entry = touched.entry(program.locations[l].physical).or_default();
                if entry.0.last() != Some(&t) {
                    entry.0.push(t);
                }
                entry.1 |= e.op == TraceOp::Write;
            }
        }
    }
    for (threads, written) in touched.values() {
        if *written {
            for &t in &threads[1..] {
                union(&mut parent, threads[0], t);
            }
        }
    }
    let mut index: FxHashMap<usize, usize> = FxHashMap::default();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for t in 0..n {
        let root = find(&mut parent, t);
        let g = *index.entry(root).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(t);
    }
    groups
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        parent[ra.max(rb)] = ra.min(rb);
    }
}
