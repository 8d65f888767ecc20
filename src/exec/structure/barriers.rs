//! Barrier matching of an event structure: which `bar`/`barrier` events complete an instance
//! together (the ways a structure's barriers resolve, or block), `barrier.cluster` phases and
//! `bar.warp.sync` among the lanes modelled. Split from `structure` (the events, tags and static
//! relations) by concern.

use super::*;

/// One way the barriers of an event structure resolve.
#[derive(Clone, Debug)]
pub struct BarrierResolution {
    /// Barrier events of each completed instance (target not an arrive).
    pub syncbar: Relation,
    /// `barrier.cluster`: arrive events of each completed instance → its wait events.
    pub syncclu: Relation,
    /// Barrier events whose instance can never complete in this structure: their threads block.
    pub blocked: Vec<BlockedBarrier>,
}

#[derive(Clone, Debug)]
pub struct BlockedBarrier {
    pub event: usize,
    /// Participants the instance waits for (its thread count), and how many arrived.
    pub expected: usize,
    pub arrived: usize,
    /// Static participants that never arrive in this structure (thread indices).
    pub missing: Vec<usize>,
    /// Arrivals at the same instance on another barrier resource id (they do not count).
    pub other_ids: usize,
}

/// One way a generation of arrivals with a thread count may complete: the `syncbar` edges it
/// adds, and the barrier events it leaves blocked.
type CountChoice = (Vec<(usize, usize)>, Vec<BlockedBarrier>);

/// A barrier group: its participant threads, and each participant's barrier events on it.
type BarrierGroup = (Vec<usize>, Vec<Vec<usize>>);

/// The barrier groups of a structure: for each (gpu, CTA, barrier), its participant threads and
/// each participant's barrier events on it, in program order.
///
/// PTX's meaning (the default): a barrier is a resource of the CTA (`bar.sync a`: the value of
/// `a`; Dat3M's `bar.cta.sync N, id`: `id`, else `N`), and "if no thread count is specified, all
/// threads in the CTA participate in the barrier" (PTX ISA §9.7.13.1): every thread of the CTA is
/// a participant. Dat3M's meaning (`--reading dat3m-barriers`, anchors.md §1.6): barriers with the
/// same static instance id form a group whose participants are the threads whose code contains
/// one.
fn barrier_groups(s: &EventStructure, dat3m: bool) -> BTreeMap<(i64, i64, i64), BarrierGroup> {
    let program = s.program;
    let key_of = |e: usize| match s.events[e].kind {
        EventKind::Barrier { instance, .. } if dat3m => Some(instance),
        EventKind::Barrier { instance, id, .. } => Some(id.unwrap_or(instance)),
        _ => None,
    };
    let mut members: BTreeMap<(i64, i64, i64), Vec<usize>> = BTreeMap::new();
    for (t, th) in program.threads.iter().enumerate() {
        let mut seen = std::collections::BTreeSet::new();
        let keys: Vec<i64> = if dat3m {
            th.code.iter().filter_map(|ins| if let Op::Barrier { instance, .. } = ins.op { Some(instance) } else { None }).collect()
        } else {
            s.thread_events[t].iter().filter_map(|&e| key_of(e)).collect()
        };
        for k in keys {
            if seen.insert(k) {
                members.entry((th.placement.gpu, th.placement.cta, k)).or_default().push(t);
            }
        }
    }
    if !dat3m {
        for ((gpu, cta, _), m) in members.iter_mut() {
            *m = (0..program.threads.len())
                .filter(|&t| program.threads[t].placement.gpu == *gpu && program.threads[t].placement.cta == *cta)
                .collect();
        }
    }
    members
        .into_iter()
        .map(|(key, m)| {
            let occ = m.iter().map(|&t| s.thread_events[t].iter().copied().filter(|&e| key_of(e) == Some(key.2)).collect()).collect();
            (key, (m, occ))
        })
        .collect()
}

/// Resolve barrier matching for one event structure, under PTX's meaning or Dat3M's
/// ([`barrier_groups`]): the k-th barrier event of each participant joins the k-th instance.
/// Without a count, an instance completes when every participant reaches it. With a count, under
/// Dat3M's meaning any set of at least `count` same-id arrivals may synchronize; under PTX's,
/// the arrivals complete the barrier `count` at a time and the ones left over wait for arrivals
/// that never come. Each such choice is a separate resolution.
pub fn resolve_barriers(s: &EventStructure, readings: &Readings) -> Vec<BarrierResolution> {
    let n = s.n();
    let mut syncbar = Relation::empty(n);
    let mut blocked = Vec::new();
    // Alternatives from thread counts: each is a list of edges to add and events it blocks.
    let mut choices: Vec<Vec<CountChoice>> = Vec::new();
    for (members, occ) in barrier_groups(s, readings.dat3m_barriers).values() {
        let generations = occ.iter().map(|o| o.len()).max().unwrap_or(0);
        for k in 0..generations {
            let reached: Vec<usize> = occ.iter().filter_map(|o| o.get(k).copied()).collect();
            let missing: Vec<usize> = members.iter().zip(occ).filter(|(_, o)| o.len() <= k).map(|(t, _)| *t).collect();
            let has_count = reached.iter().any(|&e| matches!(s.events[e].kind, EventKind::Barrier { count: Some(_), .. }));
            // Group the reached events by their resource id.
            let mut by_id: BTreeMap<Option<i64>, Vec<usize>> = BTreeMap::new();
            for &e in &reached {
                if let EventKind::Barrier { id, .. } = s.events[e].kind {
                    by_id.entry(id).or_default().push(e);
                }
            }
            if !has_count {
                if !missing.is_empty() {
                    for &e in &reached {
                        blocked.push(BlockedBarrier {
                            event: e,
                            expected: members.len(),
                            arrived: reached.len(),
                            missing: missing.clone(),
                            other_ids: 0,
                        });
                    }
                    continue;
                }
                for evs in by_id.values() {
                    for (a, b) in sync_edges(s, evs) {
                        syncbar.insert(a, b);
                    }
                }
                continue;
            }
            for evs in by_id.values() {
                let count = evs
                    .iter()
                    .filter_map(|&e| if let EventKind::Barrier { count, .. } = s.events[e].kind { count } else { None })
                    .max()
                    .unwrap_or(evs.len() as i64);
                let blocking = |stuck: &[usize]| -> Vec<BlockedBarrier> {
                    let other_ids = reached.len() - evs.len();
                    stuck
                        .iter()
                        .map(|&e| BlockedBarrier {
                            event: e,
                            expected: count.max(0) as usize,
                            arrived: evs.len(),
                            missing: missing.clone(),
                            other_ids,
                        })
                        .collect()
                };
                if (evs.len() as i64) < count || count < 0 {
                    blocked.extend(blocking(evs));
                    continue;
                }
                // Exactly `count` arrivals (one per lane of the warps a named barrier counts) are
                // one phase: no choice to enumerate, however many they are.
                if evs.len() as i64 == count && !readings.dat3m_barriers {
                    for (a, b) in sync_edges(s, evs) {
                        syncbar.insert(a, b);
                    }
                    continue;
                }
                let m = evs.len().min(20);
                let alts = if readings.dat3m_barriers {
                    // Every subset of at least `count` arrivals may be the one that synchronizes.
                    (0u32..(1 << m))
                        .filter(|mask| mask.count_ones() as i64 >= count.max(1))
                        .map(|mask| {
                            let chosen: Vec<usize> = (0..m).filter(|i| mask & (1 << i) != 0).map(|i| evs[i]).collect();
                            (
                                chosen
                                    .iter()
                                    .flat_map(|&a| evs.iter().filter(|&&b| !is_arrive(&s.events[b])).map(move |&b| (a, b)))
                                    .collect(),
                                Vec::new(),
                            )
                        })
                        .collect()
                } else {
                    phases_of(&evs[..m], count.max(1) as usize)
                        .into_iter()
                        .map(|(phases, left)| (phases.iter().flat_map(|p| sync_edges(s, p)).collect(), blocking(&left)))
                        .collect()
                };
                choices.push(alts);
            }
        }
    }
    for (a, b) in resolve_warp_barriers(s, &mut blocked) {
        syncbar.insert(a, b);
    }
    let syncclu = resolve_cluster_barriers(s, &mut blocked);
    let mut out: Vec<(Relation, Vec<BlockedBarrier>)> = vec![(syncbar, blocked)];
    for alts in choices {
        let mut next = Vec::new();
        for (base, stuck) in &out {
            for (edges, more) in &alts {
                let mut r = base.clone();
                for &(a, b) in edges {
                    r.insert(a, b);
                }
                next.push((r, stuck.iter().chain(more).cloned().collect()));
            }
        }
        out = next;
    }
    // An arrive left over in an instance that never completes does not wait (PTX ISA
    // 9.7.13.1: "bar.arrive does not cause any waiting by the executing threads"): its thread
    // goes on, and only the instance's waiting barriers block.
    out.into_iter()
        .map(|(syncbar, mut blocked)| {
            blocked.retain(|b| !is_arrive(&s.events[b.event]));
            BarrierResolution { syncbar, syncclu: syncclu.clone(), blocked }
        })
        .collect()
}

/// The `syncbar` edges of one completed instance: every event to every event that waits.
fn sync_edges(s: &EventStructure, evs: &[usize]) -> Vec<(usize, usize)> {
    evs.iter().flat_map(|&a| evs.iter().filter(|&&b| !is_arrive(&s.events[b])).map(move |&b| (a, b))).collect()
}

/// The ways `evs` complete a barrier of thread count `count` (PTX ISA §9.7.13.1: the barrier
/// completes when `count` threads arrived): disjoint phases of exactly `count` arrivals, and the
/// arrivals left over (fewer than `count`), which wait forever.
fn phases_of(evs: &[usize], count: usize) -> Vec<(Vec<Vec<usize>>, Vec<usize>)> {
    if evs.len() < count {
        return vec![(Vec::new(), evs.to_vec())];
    }
    let mut out = Vec::new();
    // The first arrival is either left over or in a phase with `count - 1` others.
    let (first, rest) = (evs[0], &evs[1..]);
    if !evs.len().is_multiple_of(count) {
        for (phases, mut left) in phases_of(rest, count) {
            if left.len() + 1 < count {
                left.insert(0, first);
                out.push((phases, left));
            }
        }
    }
    for mask in 0u32..(1 << rest.len()) {
        if mask.count_ones() as usize != count - 1 {
            continue;
        }
        let phase: Vec<usize> = std::iter::once(first).chain((0..rest.len()).filter(|i| mask & (1 << i) != 0).map(|i| rest[i])).collect();
        let others: Vec<usize> = (0..rest.len()).filter(|i| mask & (1 << i) == 0).map(|i| rest[i]).collect();
        for (mut phases, left) in phases_of(&others, count) {
            phases.insert(0, phase.clone());
            out.push((phases, left));
        }
    }
    out
}

/// `barrier.cluster` (PTX ISA §9.7.13.3): `barrier.cluster.wait` waits for "all non-exited
/// threads of the cluster" to arrive. The k-th arrive and the k-th wait of each thread belong to
/// instance k. Every thread of a cluster whose code arrives takes part: one with fewer than k+1
/// arrives must have exited, so the waits of instance k complete when its run ends and block
/// when it hangs (the H200 hung on every run of a wait whose partner was still spinning;
/// docs/hardware.md). Ending gives no ordering: no edge comes from an exited thread.
fn resolve_cluster_barriers(s: &EventStructure, blocked: &mut Vec<BlockedBarrier>) -> Relation {
    let program = s.program;
    let n = s.n();
    let mut rel = Relation::empty(n);
    let uses: BTreeSet<(i64, i64)> = program
        .threads
        .iter()
        .filter(|th| th.code.iter().any(|i| matches!(i.op, Op::ClusterBarrier { arrive: true, .. })))
        .map(|th| (th.placement.gpu, th.placement.cluster))
        .collect();
    let mut clusters: BTreeMap<(i64, i64), Vec<usize>> = BTreeMap::new();
    for (t, th) in program.threads.iter().enumerate() {
        let at = (th.placement.gpu, th.placement.cluster);
        if uses.contains(&at) {
            clusters.entry(at).or_default().push(t);
        }
    }
    let of_kind = |t: usize, arrive: bool| -> Vec<usize> {
        s.thread_events[t].iter().copied().filter(|&e| s.events[e].kind == EventKind::ClusterBarrier { arrive }).collect()
    };
    for members in clusters.values() {
        let arrives: Vec<Vec<usize>> = members.iter().map(|&t| of_kind(t, true)).collect();
        let waits: Vec<Vec<usize>> = members.iter().map(|&t| of_kind(t, false)).collect();
        let generations = waits.iter().map(|w| w.len()).max().unwrap_or(0);
        for k in 0..generations {
            let reached: Vec<usize> = arrives.iter().filter_map(|a| a.get(k).copied()).collect();
            // Those that never arrive at instance k and do not exit either.
            let missing: Vec<usize> =
                members.iter().zip(&arrives).filter(|(&t, a)| a.len() <= k && !s.finished[t]).map(|(t, _)| *t).collect();
            for w in waits.iter().filter_map(|w| w.get(k).copied()) {
                if missing.is_empty() {
                    for &a in &reached {
                        rel.insert(a, w);
                    }
                } else {
                    blocked.push(BlockedBarrier {
                        event: w,
                        expected: reached.len() + missing.len(),
                        arrived: reached.len(),
                        missing: missing.clone(),
                        other_ids: 0,
                    });
                }
            }
        }
    }
    rel
}

/// `bar.warp.sync membermask` (PTX ISA §9.7.13.2): "wait until all threads corresponding to
/// membermask have executed a bar.warp.sync with the same membermask value". The participants of
/// a thread's barrier are the lanes of its warp that its membermask selects and a thread of the
/// test occupies. Each thread waits at its next warp barrier; the barriers of a set of threads
/// complete together when each participant's next one has the same membermask (every thread in
/// the set is one of the participants, and none is missing). Completing one such set never
/// changes whether another can complete, so the matching is unique; what cannot complete blocks.
/// A participant that has exited never arrives: its lanes' barriers block.
fn resolve_warp_barriers(s: &EventStructure, blocked: &mut Vec<BlockedBarrier>) -> Vec<(usize, usize)> {
    let program = s.program;
    let mut warps: BTreeMap<(i64, i64, i64), Warp> = BTreeMap::new();
    for (t, th) in program.threads.iter().enumerate() {
        for ins in &th.code {
            if let Op::WarpBarrier { warp, lane, lanes, .. } = ins.op {
                let w = warps.entry((th.placement.gpu, th.placement.cta, warp)).or_default();
                w.lanes |= lanes;
                w.threads.insert(lane, t);
            }
        }
    }
    let mut edges = Vec::new();
    for w in warps.values() {
        // Each member's warp-barrier events, in program order, and its next unmatched one.
        let events: BTreeMap<u32, Vec<(usize, u32)>> = w
            .threads
            .iter()
            .map(|(&lane, &t)| {
                let evs = s.thread_events[t]
                    .iter()
                    .filter_map(|&e| if let EventKind::WarpBarrier { mask } = s.events[e].kind { Some((e, mask)) } else { None })
                    .collect();
                (lane, evs)
            })
            .collect();
        let mut next: BTreeMap<u32, usize> = events.keys().map(|&l| (l, 0)).collect();
        let pending = |next: &BTreeMap<u32, usize>, lane: u32| events.get(&lane).and_then(|e| e.get(next[&lane]).copied());
        // The participants of a barrier of `lane` with `mask`, and whether each is at one with it.
        let at = |next: &BTreeMap<u32, usize>, lane: u32, mask: u32| -> Vec<(u32, Option<usize>)> {
            (0..32)
                .filter(|l| (mask & w.lanes) & (1 << l) != 0 || *l == lane)
                .map(|l| (l, pending(next, l).filter(|(_, m)| *m == mask).map(|(e, _)| e)))
                .collect()
        };
        loop {
            let mut fired = false;
            for &lane in events.keys() {
                let Some((_, mask)) = pending(&next, lane) else { continue };
                let participants = at(&next, lane, mask);
                if participants.iter().any(|(_, e)| e.is_none()) {
                    continue;
                }
                let evs: Vec<usize> = participants.iter().filter_map(|(_, e)| *e).collect();
                edges.extend(evs.iter().flat_map(|&a| evs.iter().map(move |&b| (a, b))));
                for (l, _) in &participants {
                    if let Some(k) = next.get_mut(l) {
                        *k += 1;
                    }
                }
                fired = true;
            }
            if !fired {
                break;
            }
        }
        for &lane in events.keys() {
            let Some((e, mask)) = pending(&next, lane) else { continue };
            let participants = at(&next, lane, mask);
            let arrived = participants.iter().filter(|(_, e)| e.is_some()).count();
            let missing = participants.iter().filter(|(_, e)| e.is_none()).filter_map(|(l, _)| w.threads.get(l).copied()).collect();
            blocked.push(BlockedBarrier { event: e, expected: participants.len(), arrived, missing, other_ids: 0 });
        }
    }
    edges
}

/// A warp of the test's `bar.warp.sync` threads: the lanes the test occupies, and the thread of
/// each lane whose code has one.
#[derive(Default)]
struct Warp {
    lanes: u32,
    threads: BTreeMap<u32, usize>,
}

fn is_arrive(e: &Event) -> bool {
    matches!(e.kind, EventKind::Barrier { arrive: true, .. })
}
