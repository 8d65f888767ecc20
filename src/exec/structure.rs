//! Event structures: the events of one choice of trace per thread, with their tags and every
//! relation that does not depend on the reads-from / coherence / fence-SC choices.
//!
//! Event indices: the initial writes come first (one per physical location), then the events of
//! each thread in program order. Tags and base relations follow Dat3M's PTX front end so that its
//! cat models run unchanged (see `docs/model.md` for each one and the spec sentence behind it).

use super::trace::{Trace, TraceOp};
use crate::program::{FenceKind, Op, Placement, Program, Proxy, RmwOp, Scope, Sem};
use crate::relation::{EventSet, Relation};
use std::collections::BTreeMap;

/// What an event is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventKind {
    Init,
    Read,
    Write,
    Fence,
    Barrier { instance: i64, id: Option<i64>, count: Option<i64>, arrive: bool },
}

#[derive(Clone, Debug)]
pub struct Event {
    pub kind: EventKind,
    /// Thread index (None for initial writes).
    pub thread: Option<usize>,
    /// Instruction index in the thread's code.
    pub instr: Option<usize>,
    /// Virtual location (memory events).
    pub location: Option<usize>,
    /// Physical location (memory events, init).
    pub physical: Option<usize>,
    pub value: i64,
    pub scope: Option<Scope>,
    /// Tags, as the names of the cat sets the event belongs to (besides W/R/M/F/IW/_).
    pub tags: Vec<&'static str>,
}

impl Event {
    pub fn is_write(&self) -> bool {
        matches!(self.kind, EventKind::Init | EventKind::Write)
    }
    pub fn is_read(&self) -> bool {
        self.kind == EventKind::Read
    }
    pub fn has_tag(&self, t: &str) -> bool {
        self.tags.contains(&t)
    }
}

/// The events of one combination of thread traces, and their static relations.
pub struct EventStructure<'p> {
    pub program: &'p Program,
    pub events: Vec<Event>,
    /// `trace_base[t]` = index of thread t's first event.
    pub thread_events: Vec<Vec<usize>>,
    pub sets: BTreeMap<&'static str, EventSet>,
    pub relations: BTreeMap<&'static str, Relation>,
    /// Final register values per thread.
    pub registers: Vec<Vec<i64>>,
}

impl<'p> EventStructure<'p> {
    pub fn n(&self) -> usize {
        self.events.len()
    }

    pub fn build(program: &'p Program, traces: &[&Trace]) -> Self {
        let mut events = Vec::new();
        for (p, _) in program.physical.iter().enumerate() {
            events.push(Event {
                kind: EventKind::Init,
                thread: None,
                instr: None,
                location: program.locations.iter().position(|l| l.physical == p),
                physical: Some(p),
                value: program.physical[p].init,
                scope: None,
                tags: Vec::new(),
            });
        }
        let mut thread_events = Vec::new();
        // (global index of event, trace-local index) for dependency translation.
        let mut bases = Vec::new();
        for (t, trace) in traces.iter().enumerate() {
            let base = events.len();
            bases.push(base);
            let mut ids = Vec::new();
            for te in &trace.events {
                let instr = &program.threads[t].code[te.instr];
                let (kind, scope, tags) = classify(instr, &te.op);
                ids.push(events.len());
                events.push(Event {
                    kind,
                    thread: Some(t),
                    instr: Some(te.instr),
                    location: te.location,
                    physical: te.location.map(|l| program.locations[l].physical),
                    value: te.value,
                    scope,
                    tags,
                });
            }
            thread_events.push(ids);
        }
        let n = events.len();
        let set = |f: &dyn Fn(&Event) -> bool| EventSet::from_fn(n, |i| f(&events[i]));
        let mut sets: BTreeMap<&'static str, EventSet> = BTreeMap::new();
        sets.insert("_", EventSet::full(n));
        sets.insert("W", set(&|e| e.is_write()));
        sets.insert("R", set(&|e| e.is_read()));
        sets.insert("M", set(&|e| e.physical.is_some()));
        sets.insert("F", set(&|e| matches!(e.kind, EventKind::Fence | EventKind::Barrier { .. })));
        sets.insert("IW", set(&|e| e.kind == EventKind::Init));
        sets.insert("B", set(&|e| matches!(e.kind, EventKind::Barrier { .. })));
        for tag in ALL_TAGS {
            sets.insert(tag, set(&|e| e.has_tag(tag)));
        }

        let placement = |e: &Event| -> Option<Placement> { e.thread.map(|t| program.threads[t].placement) };
        let mut rel: BTreeMap<&'static str, Relation> = BTreeMap::new();
        rel.insert("id", Relation::identity(n));
        rel.insert("po", Relation::from_fn(n, |a, b| events[a].thread.is_some() && events[a].thread == events[b].thread && a < b));
        rel.insert("int", Relation::from_fn(n, |a, b| a == b || (events[a].thread.is_some() && events[a].thread == events[b].thread)));
        rel.insert("ext", Relation::from_fn(n, |a, b| a != b && (events[a].thread.is_none() || events[a].thread != events[b].thread)));
        rel.insert("loc", Relation::from_fn(n, |a, b| events[a].physical.is_some() && events[a].physical == events[b].physical));
        let generic = |e: &Event| e.location.map(|l| program.locations[l].generic);
        rel.insert("vloc", Relation::from_fn(n, |a, b| events[a].physical.is_some() && generic(&events[a]) == generic(&events[b])));
        // Same scope: both events carry a scope, and each scope includes the other's thread.
        rel.insert(
            "sr",
            Relation::from_fn(n, |a, b| match (events[a].scope, events[b].scope, placement(&events[a]), placement(&events[b])) {
                (Some(sa), Some(sb), Some(pa), Some(pb)) => pa.includes(sa, &pb) && pb.includes(sb, &pa),
                _ => false,
            }),
        );
        rel.insert(
            "scta",
            Relation::from_fn(n, |a, b| match (placement(&events[a]), placement(&events[b])) {
                (Some(pa), Some(pb)) => pa.includes(Scope::Cta, &pb),
                _ => false,
            }),
        );
        let mut rmw = Relation::empty(n);
        let mut addr = Relation::empty(n);
        let mut data = Relation::empty(n);
        let mut ctrl = Relation::empty(n);
        for (t, trace) in traces.iter().enumerate() {
            let base = bases[t];
            for (i, te) in trace.events.iter().enumerate() {
                let e = base + i;
                if let (TraceOp::Read, Some(w)) = (&te.op, te.rmw_partner) {
                    rmw.insert(e, base + w);
                    // The written value of every RMW but exch is computed from the old value.
                    if let Op::Rmw { op, .. } = &program.threads[t].code[te.instr].op {
                        if *op != RmwOp::Exch {
                            data.insert(e, base + w);
                        }
                    }
                }
                let is_mem = te.location.is_some();
                for (mask, r, only_mem) in
                    [(te.addr_deps, &mut addr, true), (te.data_deps, &mut data, true), (te.ctrl_deps, &mut ctrl, false)]
                {
                    if only_mem && !is_mem {
                        continue;
                    }
                    let mut m = mask;
                    while m != 0 {
                        let j = m.trailing_zeros() as usize;
                        m &= m - 1;
                        r.insert(base + j, e);
                    }
                }
            }
        }
        rel.insert("rmw", rmw);
        rel.insert("addr", addr);
        rel.insert("data", data);
        rel.insert("ctrl", ctrl);
        let po_loc = rel["po"].intersection(&rel["loc"]);
        rel.insert("po-loc", po_loc);
        let registers = traces.iter().map(|t| t.registers.clone()).collect();
        EventStructure { program, events, thread_events, sets, relations: rel, registers }
    }

    /// Writes to each physical location (init write first), for rf and co enumeration.
    pub fn writes_by_location(&self) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new(); self.program.physical.len()];
        for (i, e) in self.events.iter().enumerate() {
            if e.is_write() {
                out[e.physical.expect("writes have a location")].push(i);
            }
        }
        out
    }
}

/// Every tag an event can carry besides the structural sets.
pub const ALL_TAGS: &[&str] = &[
    "RLX", "ACQ", "REL", "ACQ_REL", "SC", "WEAK", "GEN", "SUR", "TEX", "CON", "ALIAS", "CTA", "CLUSTER", "GPU", "SYS", "RMW", "RED",
    "ARRIVE",
];

/// Kind, scope and tags of a trace event (Dat3M's PTX tagging; `docs/model.md`).
fn classify(instr: &crate::program::Instr, op: &TraceOp) -> (EventKind, Option<Scope>, Vec<&'static str>) {
    let mut tags: Vec<&'static str> = Vec::new();
    let scope_tag = |s: Option<Scope>, tags: &mut Vec<&'static str>| {
        if let Some(s) = s {
            tags.push(s.tag());
        }
    };
    match (&instr.op, op) {
        (Op::Load { sem, scope, proxy, .. }, _) => {
            tags.push(sem_tag(*sem));
            scope_tag(*scope, &mut tags);
            tags.push(proxy.tag());
            (EventKind::Read, *scope, tags)
        }
        (Op::Store { sem, scope, proxy, .. }, _) => {
            tags.push(sem_tag(*sem));
            scope_tag(*scope, &mut tags);
            tags.push(proxy.tag());
            (EventKind::Write, *scope, tags)
        }
        (Op::Rmw { sem, scope, proxy, dst, .. }, half) => {
            let read = *half == TraceOp::Read;
            // Dat3M splits the order of an RMW over its halves: acquire on the read, release on the write.
            let t = match (read, sem) {
                (true, Sem::Acquire | Sem::AcqRel) => "ACQ",
                (false, Sem::Release | Sem::AcqRel) => "REL",
                _ => "RLX",
            };
            tags.extend([t, "RMW", proxy.tag(), scope.tag()]);
            if dst.is_none() {
                tags.push("RED");
            }
            (if read { EventKind::Read } else { EventKind::Write }, Some(*scope), tags)
        }
        (Op::Fence { kind, scope }, _) => {
            tags.push(match kind {
                FenceKind::Sc => "SC",
                FenceKind::AcqRel => "ACQ_REL",
                FenceKind::Acquire => "ACQ",
                FenceKind::Release => "REL",
            });
            tags.push(scope.tag());
            // Thread fences are generic-proxy operations (Dat3M PR #594), so they can be morally strong.
            tags.push(Proxy::Generic.tag());
            (EventKind::Fence, Some(*scope), tags)
        }
        (Op::ProxyFence { proxy }, _) => {
            tags.push(proxy.tag());
            (EventKind::Fence, None, tags)
        }
        (Op::AliasFence, _) => {
            tags.push("ALIAS");
            (EventKind::Fence, None, tags)
        }
        (Op::Barrier { .. }, TraceOp::Barrier { instance, id, count, arrive }) => {
            if *arrive {
                tags.push("ARRIVE");
            }
            (EventKind::Barrier { instance: *instance, id: *id, count: *count, arrive: *arrive }, None, tags)
        }
        _ => unreachable!("trace events come from memory, fence and barrier instructions"),
    }
}

fn sem_tag(sem: Sem) -> &'static str {
    match sem {
        Sem::Weak => "WEAK",
        Sem::Relaxed => "RLX",
        Sem::Acquire => "ACQ",
        Sem::Release => "REL",
        Sem::AcqRel => "ACQ_REL",
        Sem::Sc => "SC",
    }
}

/// One way the barriers of an event structure resolve.
#[derive(Clone, Debug)]
pub struct BarrierResolution {
    /// Barrier events of each completed instance (target not an arrive).
    pub syncbar: Relation,
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

/// Resolve barrier matching for one event structure (Dat3M's meaning, anchors.md §1.6):
/// barriers with the same static instance id in one CTA form a group; its participants are the
/// threads of the CTA whose code contains such a barrier; the k-th barrier event of each
/// participant joins the k-th instance. Without a count, an instance completes when every
/// participant reaches it; with a count, any set of at least `count` same-id arrivals may
/// synchronize, so each such set is a separate resolution.
pub fn resolve_barriers(s: &EventStructure) -> Vec<BarrierResolution> {
    let program = s.program;
    let n = s.n();
    // (gpu, cta, instance) -> participant threads (static membership).
    let mut groups: BTreeMap<(i64, i64, i64), Vec<usize>> = BTreeMap::new();
    for (t, th) in program.threads.iter().enumerate() {
        let mut seen = std::collections::BTreeSet::new();
        for ins in &th.code {
            if let Op::Barrier { instance, .. } = ins.op {
                if seen.insert(instance) {
                    groups.entry((th.placement.gpu, th.placement.cta, instance)).or_default().push(t);
                }
            }
        }
    }
    let mut syncbar = Relation::empty(n);
    let mut blocked = Vec::new();
    // Alternatives from thread counts: each is a list of edges to add.
    let mut choices: Vec<Vec<Vec<(usize, usize)>>> = Vec::new();
    for ((_, _, instance), members) in &groups {
        let occ: Vec<Vec<usize>> = members
            .iter()
            .map(|&t| {
                s.thread_events[t]
                    .iter()
                    .copied()
                    .filter(|&e| matches!(s.events[e].kind, EventKind::Barrier { instance: i, .. } if i == *instance))
                    .collect()
            })
            .collect();
        let generations = occ.iter().map(|o| o.len()).max().unwrap_or(0);
        for k in 0..generations {
            let reached: Vec<usize> = occ.iter().filter_map(|o| o.get(k).copied()).collect();
            let missing: Vec<usize> = members.iter().zip(&occ).filter(|(_, o)| o.len() <= k).map(|(t, _)| *t).collect();
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
                    for &a in evs {
                        for &b in evs {
                            if !is_arrive(&s.events[b]) {
                                syncbar.insert(a, b);
                            }
                        }
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
                if (evs.len() as i64) < count || count < 0 {
                    for &e in evs {
                        blocked.push(BlockedBarrier {
                            event: e,
                            expected: count.max(0) as usize,
                            arrived: evs.len(),
                            missing: missing.clone(),
                            other_ids: reached.len() - evs.len(),
                        });
                    }
                    continue;
                }
                // Every subset of at least `count` arrivals may be the one that synchronizes.
                let m = evs.len().min(20);
                let mut alts = Vec::new();
                for mask in 0u32..(1 << m) {
                    if (mask.count_ones() as i64) < count.max(1) {
                        continue;
                    }
                    let mut edges = Vec::new();
                    for (i, &a) in evs.iter().enumerate().take(m) {
                        if mask & (1 << i) == 0 {
                            continue;
                        }
                        for &b in evs {
                            if !is_arrive(&s.events[b]) {
                                edges.push((a, b));
                            }
                        }
                    }
                    alts.push(edges);
                }
                choices.push(alts);
            }
        }
    }
    let mut out = vec![syncbar];
    for alts in choices {
        let mut next = Vec::new();
        for base in &out {
            for edges in &alts {
                let mut r = base.clone();
                for &(a, b) in edges {
                    r.insert(a, b);
                }
                next.push(r);
            }
        }
        out = next;
    }
    out.into_iter().map(|syncbar| BarrierResolution { syncbar, blocked: blocked.clone() }).collect()
}

fn is_arrive(e: &Event) -> bool {
    matches!(e.kind, EventKind::Barrier { arrive: true, .. })
}
