//! From a cycle of edges to a test: threads, locations, values, annotations and placement.
//!
//! Event `i` is the source of edge `i` and the target of edge `i-1` (cyclically). Threads are
//! split at external edges (diy7's scheme); within a thread the cycle's order is program order.
//! Locations change at the edges that go to another location (`Pod`, fences, dependencies,
//! asynchronous `d` edges); each stretch between two such edges is its own location. Writes to a
//! location get 1, 2, … in cycle order from the start of its stretch, so the cycle's co edges
//! are the value order; each read's value follows from its `Rf` in-edge (the write's value) or
//! its `Fr` out-edge (the value before the write's); the condition fixes those reads and the
//! final value of each location written twice.

use super::edges::{Annot, AsyncKind, Comm, CopyEnd, Dir, Distance, Edge, EdgeKind, RmwOp};
use std::fmt;

/// Why a cycle gives no test.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reject {
    /// The direction an edge ends with differs from the one the next edge starts with.
    Directions(String),
    /// Fewer than two edges leave a thread: the cycle would be one thread's program order.
    TooFewThreads,
    /// More threads than `--nprocs`.
    TooManyThreads(usize),
    /// Exactly one edge changes location: the cycle cannot come back to its first location.
    OneLocationChange,
    /// A location that is never changed and has no `Fr` edge to cut the cycle at: its coherence
    /// order would have no first write the condition could name.
    NoCut,
    /// A read would need two different values.
    Contradiction,
    /// A location with three or more writes: the final value shows only the last one.
    TooManyWrites,
    /// Two edges ask for different annotations, or an annotation on a copy's access.
    Annotations,
    /// Two asynchronous edges ask for different things of one event, or a dependency from a
    /// copy's access.
    EventKinds,
    /// The threads' distances (CTA, cluster, GPU, system) cannot all hold.
    Placement,
    /// A location in shared memory (a copy's) is accessed from another CTA.
    SharedAcrossCtas,
    /// More than one `barrier.cluster` edge (each thread would need to meet both).
    TwoClusterBarriers,
    /// Every external edge makes the next thread wait for this one: the threads wait for each
    /// other in a ring and no execution completes.
    Deadlock,
    /// No read has a value to check and no location is written twice: nothing to observe.
    Unobservable,
    /// A location written twice, both times by `red`: both orders end with the same value and
    /// no register holds what they read, so the coherence edge between them is not observable.
    ReductionsOnly,
    /// A multicast copy with another asynchronous edge: the multicast writes the same
    /// CTA-relative offsets in two CTAs, so it needs their shared memory to itself.
    MulticastNotAlone,
}

impl fmt::Display for Reject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reject::Directions(e) => write!(f, "the directions do not chain: {e}"),
            Reject::TooFewThreads => f.write_str("fewer than two external edges (a test needs at least two threads)"),
            Reject::TooManyThreads(n) => write!(f, "{n} threads, more than --nprocs allows"),
            Reject::OneLocationChange => f.write_str("exactly one edge changes location, so the cycle cannot return to its first location"),
            Reject::NoCut => f.write_str("a single-location cycle needs an Fr edge (the condition starts the coherence order after it)"),
            Reject::Contradiction => f.write_str("a read would need two different values"),
            Reject::TooManyWrites => f.write_str("a location with three or more writes (the final value would show only the last)"),
            Reject::Annotations => f.write_str("two edges give one access different annotations, or one annotates a copy's access"),
            Reject::EventKinds => {
                f.write_str("two asynchronous edges make different accesses of one event, or a dependency starts at a copy")
            }
            Reject::Placement => f.write_str("the placements the external edges ask for (CTA, cluster, GPU, system) contradict each other"),
            Reject::SharedAcrossCtas => f.write_str("a copy's shared-memory location is accessed from another CTA"),
            Reject::TwoClusterBarriers => f.write_str("more than one barrier.cluster edge"),
            Reject::Deadlock => f.write_str("every external edge is a wait, so the threads wait for each other in a ring"),
            Reject::Unobservable => f.write_str("no communication edge: the condition would have nothing to check"),
            Reject::MulticastNotAlone => {
                f.write_str("a multicast copy with another asynchronous edge (it needs the shared memory of its CTAs to itself)")
            }
            Reject::ReductionsOnly => {
                f.write_str("a location written only by two red (RmwRed): their coherence order does not show in any value")
            }
        }
    }
}

/// What an event of the cycle is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A generic `ld`/`st` with its annotation.
    Generic(Annot),
    /// The destination write of a copy: `bulk` a TMA load, else a 4-byte `cp.async`.
    CopyWrite { bulk: bool },
    /// The source read of a bulk copy to global memory: `reduce` a `cp.reduce.async.bulk .add`,
    /// else a TMA store.
    CopyRead { reduce: bool },
    /// The read of an atomic (`Rmw` edge to the next event, its write); the semantics come
    /// from the edge's annotations (`None`: relaxed).
    RmwRead { op: RmwOp, annots: Option<(Annot, Annot)> },
    /// The write of an atomic: emitted with its read, as one instruction.
    RmwWrite,
}

impl EventKind {
    /// Whether the event is a copy's access (its location is then shared memory of the copying
    /// thread's CTA).
    pub fn is_copy(self) -> bool {
        matches!(self, EventKind::CopyWrite { .. } | EventKind::CopyRead { .. })
    }
}

#[derive(Clone, Debug)]
pub struct Event {
    pub dir: Dir,
    pub kind: EventKind,
    pub thread: usize,
    pub loc: usize,
    /// The value a write writes.
    pub write_value: Option<i64>,
    /// The value the condition requires a read to return.
    pub read_value: Option<i64>,
}

/// Where a thread runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub cta: usize,
    pub cluster: usize,
    pub gpu: usize,
}

/// A cycle turned into events, threads and locations.
#[derive(Clone, Debug)]
pub struct Analysed {
    pub edges: Vec<Edge>,
    pub events: Vec<Event>,
    /// Each thread's events, in program order.
    pub threads: Vec<Vec<usize>>,
    pub placement: Vec<Placement>,
    pub locations: usize,
    /// Per location: the number of writes (final values of those written twice are in the
    /// condition).
    pub writes: Vec<usize>,
}

fn next(i: usize, n: usize) -> usize {
    (i + 1) % n
}

fn prev(i: usize, n: usize) -> usize {
    (i + n - 1) % n
}

/// Analyse a cycle; `max_threads` is `--nprocs`.
pub fn analyse(edges: &[Edge], max_threads: usize) -> Result<Analysed, Reject> {
    let n = edges.len();
    let externals = check_edges(edges, max_threads)?;
    let (thread_of, threads) = split_threads(edges, &externals);
    let Locations { locations, loc_of, write_value, writes } = assign_locations(edges)?;
    let read_value = read_values(edges, &write_value)?;
    check_observable(edges, &read_value, &loc_of, &writes)?;
    let kinds = event_kinds(edges)?;
    let placement = place(&threads, edges)?;
    let events: Vec<Event> = (0..n)
        .map(|i| Event {
            dir: edges[i].src,
            kind: kinds[i],
            thread: thread_of[i],
            loc: loc_of[i],
            write_value: write_value[i],
            read_value: read_value[i],
        })
        .collect();
    check_copy_locations(edges, &events, &placement)?;
    Ok(Analysed { edges: edges.to_vec(), events, threads, placement, locations, writes })
}

/// The checks on the edges alone: consecutive edges agree on directions, the threads are at
/// least 2 and at most `max_threads`, not all of them wait for one another, and the
/// asynchronous edges combine. Returns the external edges.
fn check_edges(edges: &[Edge], max_threads: usize) -> Result<Vec<usize>, Reject> {
    let n = edges.len();
    for i in 0..n {
        let (a, b) = (edges[i], edges[next(i, n)]);
        if a.dst != b.src {
            return Err(Reject::Directions(format!("{a} ends with {:?}, {b} starts with {:?}", a.dst, b.src)));
        }
    }
    let externals: Vec<usize> = (0..n).filter(|&i| edges[i].external()).collect();
    if externals.len() < 2 {
        return Err(Reject::TooFewThreads);
    }
    if externals.len() > max_threads {
        return Err(Reject::TooManyThreads(externals.len()));
    }
    if externals.iter().all(|&i| edges[i].async_kind().is_some()) {
        return Err(Reject::Deadlock);
    }
    if edges.iter().any(|e| e.async_kind() == Some(AsyncKind::TmaMulticast))
        && edges.iter().filter(|e| e.async_kind().is_some()).count() > 1
    {
        return Err(Reject::MulticastNotAlone);
    }
    if edges.iter().filter(|e| matches!(e.async_kind(), Some(k) if k.name().starts_with("BarCluster"))).count() > 1 {
        return Err(Reject::TwoClusterBarriers);
    }
    Ok(externals)
}

/// The thread of each event, and each thread's events in program order: a new thread after
/// each external edge, walking from the event after the first one.
fn split_threads(edges: &[Edge], externals: &[usize]) -> (Vec<usize>, Vec<Vec<usize>>) {
    let n = edges.len();
    let start = next(externals[0], n);
    let mut thread_of = vec![0; n];
    let mut threads: Vec<Vec<usize>> = vec![Vec::new()];
    for step in 0..n {
        let i = (start + step) % n;
        let t = threads.len() - 1;
        thread_of[i] = t;
        threads[t].push(i);
        if edges[i].external() && step + 1 < n {
            threads.push(Vec::new());
        }
    }
    (thread_of, threads)
}

/// The locations of a cycle and the values written to them.
struct Locations {
    locations: usize,
    /// The location of each event.
    loc_of: Vec<usize>,
    /// The value each write writes: its rank among the writes to its location, from 1.
    write_value: Vec<Option<i64>>,
    /// Per location: the number of writes.
    writes: Vec<usize>,
}

/// Locations: a new one after each location-changing edge.
fn assign_locations(edges: &[Edge]) -> Result<Locations, Reject> {
    let n = edges.len();
    let changes: Vec<usize> = (0..n).filter(|&i| !edges[i].same_loc()).collect();
    if changes.len() == 1 {
        return Err(Reject::OneLocationChange);
    }
    let loc_start = match changes.first() {
        Some(&c) => next(c, n),
        None => {
            let cut = (0..n).find(|&i| edges[i].comm() == Some(Comm::Fr)).ok_or(Reject::NoCut)?;
            next(cut, n)
        }
    };
    let locations = changes.len().max(1);
    let mut loc_of = vec![0; n];
    let mut loc = 0;
    let mut write_value = vec![None; n];
    let mut writes = vec![0usize; locations];
    for step in 0..n {
        let i = (loc_start + step) % n;
        loc_of[i] = loc;
        if edges[i].src == Dir::W {
            writes[loc] += 1;
            write_value[i] = Some(writes[loc] as i64);
        }
        if !edges[i].same_loc() && step + 1 < n {
            loc += 1;
        }
    }
    if writes.iter().any(|&w| w >= 3) {
        return Err(Reject::TooManyWrites);
    }
    Ok(Locations { locations, loc_of, write_value, writes })
}

/// The value the condition requires each read to return, from the write it reads from or the
/// write it comes before.
fn read_values(edges: &[Edge], write_value: &[Option<i64>]) -> Result<Vec<Option<i64>>, Reject> {
    let n = edges.len();
    let mut read_value = vec![None; n];
    for i in 0..n {
        if edges[i].src != Dir::R {
            continue;
        }
        let from_rf = match edges[prev(i, n)].comm() {
            Some(Comm::Rf) => write_value[prev(i, n)],
            _ => None,
        };
        // An Fr edge's read, and an atomic's read (atomicity: it reads its write's immediate
        // coherence predecessor), read the value before the next write's.
        let from_fr = match edges[i].kind {
            EdgeKind::Comm { comm: Comm::Fr, .. } | EdgeKind::Rmw(_) => write_value[next(i, n)].map(|v| v - 1),
            _ => None,
        };
        read_value[i] = match (from_rf, from_fr) {
            (Some(a), Some(b)) if a != b => return Err(Reject::Contradiction),
            (a, b) => a.or(b),
        };
    }
    Ok(read_value)
}

/// Whether the condition can observe the cycle: some read it checks, or some location written
/// twice by something other than reductions.
fn check_observable(edges: &[Edge], read_value: &[Option<i64>], loc_of: &[usize], writes: &[usize]) -> Result<(), Reject> {
    let n = edges.len();
    // A `red`'s read has no register: the condition cannot check it.
    let is_red = |i: usize| edges[i].kind == EdgeKind::Rmw(RmwOp::Red);
    let is_red_write = |i: usize| {
        is_red(prev(i, n))
            || edges[i].annots.is_some_and(|(a, _)| a == Annot::Red)
            || edges[prev(i, n)].annots.is_some_and(|(_, b)| b == Annot::Red)
    };
    if (0..n).all(|i| read_value[i].is_none() || is_red(i)) && writes.iter().all(|&w| w < 2) {
        return Err(Reject::Unobservable);
    }
    for (loc, &w) in writes.iter().enumerate() {
        if w == 2 && (0..n).filter(|&i| loc_of[i] == loc && edges[i].src == Dir::W).all(&is_red_write) {
            return Err(Reject::ReductionsOnly);
        }
    }
    Ok(())
}

/// The kind of each event: copies and atomics from their edges, the other events generic with
/// their annotations (relaxed without one).
fn event_kinds(edges: &[Edge]) -> Result<Vec<EventKind>, Reject> {
    let n = edges.len();
    let mut kinds: Vec<Option<EventKind>> = vec![None; n];
    let mut annots: Vec<Option<Annot>> = vec![None; n];
    let mut set_kind = |i: usize, k: EventKind| -> Result<(), Reject> {
        match (kinds[i], k) {
            (None, _) => kinds[i] = Some(k),
            (Some(EventKind::CopyRead { reduce: a }), EventKind::CopyRead { reduce: b }) => {
                kinds[i] = Some(EventKind::CopyRead { reduce: a || b })
            }
            (Some(old), new) if old == new => {}
            _ => return Err(Reject::EventKinds),
        }
        Ok(())
    };
    for (i, e) in edges.iter().enumerate() {
        let j = next(i, n);
        if let Some(kind) = e.async_kind() {
            let reduce = kind == AsyncKind::ReduceFenced;
            match kind.copy_end() {
                Some(CopyEnd::SourceIsCopyWrite) => set_kind(i, EventKind::CopyWrite { bulk: kind.bulk() })?,
                Some(CopyEnd::TargetIsCopyRead) => set_kind(j, EventKind::CopyRead { reduce })?,
                Some(CopyEnd::SourceIsCopyRead) => set_kind(i, EventKind::CopyRead { reduce: false })?,
                None => {}
            }
        }
        if let EdgeKind::Rmw(op) = e.kind {
            set_kind(i, EventKind::RmwRead { op, annots: e.annots })?;
            set_kind(j, EventKind::RmwWrite)?;
        }
    }
    for (i, e) in edges.iter().enumerate() {
        let j = next(i, n);
        if let (Some((a, b)), false) = (e.annots, matches!(e.kind, EdgeKind::Rmw(_))) {
            for (k, want) in [(i, a), (j, b)] {
                if kinds[k].is_some() || annots[k].is_some_and(|have| have != want) {
                    return Err(Reject::Annotations);
                }
                annots[k] = Some(want);
            }
        }
        if matches!(e.kind, EdgeKind::Dep(_)) && kinds[i].is_some() {
            return Err(Reject::EventKinds);
        }
    }
    Ok((0..n).map(|i| kinds[i].unwrap_or(EventKind::Generic(annots[i].unwrap_or(Annot::Relaxed)))).collect())
}

/// A copy's location is shared memory of the copying thread's CTA (of the reader's, for a
/// multicast): every access to it must be from that CTA.
fn check_copy_locations(edges: &[Edge], events: &[Event], placement: &[Placement]) -> Result<(), Reject> {
    let n = events.len();
    for (i, e) in events.iter().enumerate().filter(|(_, e)| e.kind.is_copy()) {
        let cta = placement[copy_cta_thread(edges, events, i)].cta;
        let cta_of = |j: usize| placement[if events[j].kind.is_copy() { copy_cta_thread(edges, events, j) } else { events[j].thread }].cta;
        if (0..n).any(|j| events[j].loc == e.loc && cta_of(j) != cta) {
            return Err(Reject::SharedAcrossCtas);
        }
    }
    Ok(())
}

/// The thread in whose CTA the location of copy event `i` lies: the copying thread, or for a
/// multicast load the thread that waits for it (the issuer's own copy is a mirror off the cycle).
pub fn copy_cta_thread(edges: &[Edge], events: &[Event], i: usize) -> usize {
    if edges[i].async_kind() == Some(AsyncKind::TmaMulticast) {
        events[next(i, events.len())].thread
    } else {
        events[i].thread
    }
}

/// Place the threads: the farthest placement in which each external edge's two threads are
/// exactly at its distance (the largest ultrametric below the edges' distances, by the
/// minimax path around the cycle of threads); none when some edge's distance cannot hold.
fn place(threads: &[Vec<usize>], edges: &[Edge]) -> Result<Vec<Placement>, Reject> {
    let t = threads.len();
    // The edge that leaves thread k goes to thread k+1 (mod t).
    let step: Vec<Distance> = threads
        .iter()
        .map(|evs| edges[*evs.last().expect("threads are not empty")].distance().expect("threads end at external edges"))
        .collect();
    let mut dist = vec![vec![Distance::Cta; t]; t];
    for (a, row) in dist.iter_mut().enumerate() {
        for (b, d) in row.iter_mut().enumerate() {
            if a == b {
                continue;
            }
            // The two arcs from a to b: forward through a, a+1, …, b-1 and backward.
            let forward = (0..(b + t - a) % t).map(|k| step[(a + k) % t]).max().unwrap_or(Distance::Cta);
            let backward = (0..(a + t - b) % t).map(|k| step[(b + k) % t]).max().unwrap_or(Distance::Cta);
            *d = forward.min(backward);
        }
    }
    if (0..t).any(|k| dist[k][(k + 1) % t] != step[k]) {
        return Err(Reject::Placement);
    }
    // Classes at each level, numbered by first appearance.
    let classes = |within: Distance| -> Vec<usize> {
        let mut id = vec![usize::MAX; t];
        let mut count = 0;
        for a in 0..t {
            if id[a] == usize::MAX {
                for b in a..t {
                    if id[b] == usize::MAX && dist[a][b] <= within {
                        id[b] = count;
                    }
                }
                count += 1;
            }
        }
        id
    };
    let (cta, cluster, gpu) = (classes(Distance::Cta), classes(Distance::Cluster), classes(Distance::Gpu));
    Ok((0..t).map(|k| Placement { cta: cta[k], cluster: cluster[k], gpu: gpu[k] }).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::edges::parse_edges;

    fn analyse_str(s: &str) -> Result<Analysed, Reject> {
        analyse(&parse_edges(s).unwrap(), 4)
    }

    #[test]
    fn mp_has_two_threads_two_locations_and_the_diy_condition() {
        let a = analyse_str("PodWW Rfe PodRR Fre").unwrap();
        assert_eq!(a.threads.len(), 2);
        assert_eq!(a.locations, 2);
        let reads: Vec<_> = a.events.iter().filter_map(|e| e.read_value).collect();
        assert_eq!(reads, vec![1, 0]);
    }

    #[test]
    fn corr_cuts_after_fr() {
        let a = analyse_str("Rfe PosRR Fre").unwrap();
        assert_eq!(a.locations, 1);
        let reads: Vec<_> = a.events.iter().filter_map(|e| e.read_value).collect();
        assert_eq!(reads, vec![1, 0]);
    }

    #[test]
    fn rejections() {
        assert_eq!(analyse_str("PodWW PodWW").unwrap_err(), Reject::TooFewThreads);
        assert_eq!(analyse_str("Rfe Fre").unwrap_err(), Reject::Contradiction);
        assert_eq!(analyse_str("Rfe PodRW Coe").unwrap_err(), Reject::OneLocationChange);
        assert_eq!(analyse_str("RfeCta PodRR FreSys PodWW").unwrap_err(), Reject::Placement);
        assert!(matches!(analyse_str("PodWR Rfe").unwrap_err(), Reject::Directions(_)));
        assert_eq!(analyse_str("PodWWPL PodWRXX Fre Coe").unwrap_err(), Reject::Annotations);
        assert_eq!(analyse_str("TmaMulticastsWR PodRW MbarSyncdWR FreCluster").unwrap_err(), Reject::MulticastNotAlone);
    }

    #[test]
    fn placement_follows_the_distances() {
        let a = analyse_str("PodWW RfeCta PodRR FreCta").unwrap();
        assert_eq!(a.placement[0], a.placement[1]);
        let a = analyse_str("PodWW RfeSys PodRR FreSys").unwrap();
        assert_ne!(a.placement[0].gpu, a.placement[1].gpu);
        let a = analyse_str("PodWW Rfe PodRR Fre").unwrap();
        assert_ne!(a.placement[0].cluster, a.placement[1].cluster);
        assert_eq!(a.placement[0].gpu, a.placement[1].gpu);
    }
}
