//! Event structures: the events of one choice of trace per thread, with their tags and every
//! relation that does not depend on the reads-from / coherence / fence-SC choices.
//!
//! Event indices: the initial writes come first (one per physical location that an event of the
//! structure accesses or the final state shows, in location order), then the events of each
//! thread in program order. Tags and base relations follow Dat3M's PTX front end so that its
//! cat models run unchanged (see `docs/model.md` for each one and the spec sentence behind it).

use super::trace::{AsyncKind, MbKind, Role, SymExpr, Trace, TraceEvent, TraceOp};
use crate::clock::Instant;
use crate::config::readings::Readings;
use crate::program::mbarrier::MbState;
use crate::program::{
    AccessSpace, CopyKind, FenceKind, FenceRestrict, Op, Placement, Program, Proxy, RmwOp, Scope, Sem, Space, VariableKind,
};
use crate::relation::{EventSet, Relation};
use std::collections::{BTreeMap, BTreeSet};

mod aligned;
mod barriers;
mod exchanges;
pub use barriers::{resolve_barriers, BarrierResolution, BlockedBarrier};

/// What an event is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventKind {
    Init,
    Read,
    Write,
    Fence,
    Barrier {
        instance: i64,
        id: Option<i64>,
        count: Option<i64>,
        arrive: bool,
    },
    ClusterBarrier {
        arrive: bool,
    },
    /// `bar.warp.sync` with the value of its membermask.
    WarpBarrier {
        mask: u32,
    },
    Marker,
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
    /// The async agent performing the event (a global id), if not the thread itself.
    pub agent: Option<usize>,
    pub role: Role,
    /// Where the performer runs: the thread, or for async events the CTA the reading assigns.
    pub placement: Option<Placement>,
    /// Byte range of the whole access within its variable.
    pub range: (i64, i64),
    /// Undefined behaviour of this event (rule and explanation).
    pub ub: Option<String>,
    /// The mbarrier operation of an mbarrier event, and the result its thread observed.
    pub mb_op: Option<crate::program::mbarrier::MbUpdate>,
    pub mb_result: Option<i64>,
    /// A write whose value is left open: the expression over the values of events, and every
    /// value it can take (None: too many to list).
    pub sym: Option<SymExpr>,
    pub possible: Option<Vec<i64>>,
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
#[derive(Clone)]
pub struct EventStructure<'p> {
    pub program: &'p Program,
    pub events: Vec<Event>,
    /// `trace_base[t]` = index of thread t's first event.
    pub thread_events: Vec<Vec<usize>>,
    pub sets: BTreeMap<&'static str, EventSet>,
    pub relations: BTreeMap<&'static str, Relation>,
    /// Final register values per thread.
    pub registers: Vec<Vec<i64>>,
    /// (thread, register) -> the expression (over events) whose value is the register's final
    /// value, for registers the traces leave open.
    pub symbolic_registers: BTreeMap<(usize, usize), SymExpr>,
    /// Reads whose value is open (taken from the write they read from).
    pub symbolic_reads: Vec<bool>,
    /// Per thread: its run ends (false for a run that hangs, which only the liveness check
    /// builds): a thread that ends has exited, which `barrier.cluster` counts.
    pub finished: Vec<bool>,
    /// Per physical location, whether it holds an mbarrier object ([`mbarrier_words`]).
    pub mbarrier_words: Vec<bool>,
}

/// About how many dense relations an event structure holds (its static relations), for the
/// estimate of [`EventStructure::estimated_bytes`].
const STATIC_RELATIONS: u64 = 32;

/// A build given up at its deadline ([`EventStructure::build_until`]).
#[derive(Clone, Copy, Debug)]
pub struct BuildExpired;

impl<'p> EventStructure<'p> {
    /// The events of the structure of `traces`: one initial write per physical location they
    /// access or the final state shows, then every trace's events.
    pub fn event_count(program: &Program, traces: &[&Trace]) -> usize {
        initialised(program, traces).len() + traces.iter().map(|t| t.events.len()).sum::<usize>()
    }

    /// The bytes a structure with `events` events and a model prepared on it hold, if each of
    /// the structure's static relations and of the model's `definitions` is a dense relation
    /// (checked before the structure is built: `--max-memory`).
    pub fn estimated_bytes(events: usize, definitions: usize) -> u64 {
        STATIC_RELATIONS.saturating_add(definitions as u64).saturating_mul(Relation::bytes_for(events))
    }

    pub fn n(&self) -> usize {
        self.events.len()
    }

    /// Whether location `loc` holds an mbarrier object in this structure's runs.
    pub fn is_mbarrier(&self, loc: usize) -> bool {
        self.mbarrier_words[self.program.locations[loc].physical]
    }

    /// The structure of one combination of runs (one per thread), under `readings`: one of them
    /// changes who performs an async signal, the others give the model its `ALT-…` sets.
    pub fn build(program: &'p Program, readings: &Readings, traces: &[&Trace]) -> Self {
        match Self::build_until(program, readings, traces, None) {
            Ok(s) => s,
            Err(BuildExpired) => unreachable!("a build without a deadline does not expire"),
        }
    }

    /// [`EventStructure::build`], given up once `deadline` has passed: a structure of ten
    /// thousand events takes most of a second to build (`--timeout`).
    pub fn build_until(
        program: &'p Program,
        readings: &Readings,
        traces: &[&Trace],
        deadline: Option<Instant>,
    ) -> Result<Self, BuildExpired> {
        let expired = || deadline.is_some_and(|d| Instant::now() >= d);
        let mut events = init_events(program, traces);
        let (thread_events, bases) = push_thread_events(&mut events, program, readings, traces);
        let n = events.len();
        let mbarrier_words = mbarrier_words(program, traces);
        let meets = exchanges::undefined(program, traces, &bases, &mut events);
        aligned::undefined(program, traces, &bases, &mut events);
        let sets = base_sets(readings, &events, &mbarrier_words);
        let mut relations = static_relations(program, traces, &bases, &events, &thread_events, &expired)?;
        exchanges::relate(&meets, &bases, &mut relations);
        let registers = traces.iter().map(|t| t.registers.clone()).collect();
        let mut symbolic_registers = BTreeMap::new();
        let mut symbolic_reads = vec![false; n];
        for (t, trace) in traces.iter().enumerate() {
            for (r, e) in &trace.symbolic_registers {
                symbolic_registers.insert((t, *r), e.shifted(bases[t]));
            }
            for (i, te) in trace.events.iter().enumerate() {
                symbolic_reads[bases[t] + i] = te.symbolic;
            }
        }
        let finished = traces.iter().map(|t| t.stuck.is_none()).collect();
        Ok(EventStructure {
            program,
            events,
            thread_events,
            sets,
            relations,
            registers,
            symbolic_registers,
            symbolic_reads,
            finished,
            mbarrier_words,
        })
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

/// The physical locations that get an initial write, in order: those an event of `traces`
/// accesses and those the final state shows. A word nothing accesses or shows has no event at
/// all, so a kernel's 200 KiB ring costs the words its runs touch, not the bytes declared.
fn initialised(program: &Program, traces: &[&Trace]) -> Vec<usize> {
    let mut used = vec![false; program.physical.len()];
    for e in traces.iter().flat_map(|t| &t.events) {
        if let Some(l) = e.location {
            used[program.locations[l].physical] = true;
        }
    }
    for o in crate::program::naming::observables(program) {
        if let crate::program::Observable::Location(p) = o {
            used[p] = true;
        }
    }
    (0..used.len()).filter(|&p| used[p]).collect()
}

/// The initial writes, one per physical location of [`initialised`].
fn init_events(program: &Program, traces: &[&Trace]) -> Vec<Event> {
    // The first word of each physical location.
    let mut first_location = vec![None; program.physical.len()];
    for (l, loc) in program.locations.iter().enumerate().rev() {
        first_location[loc.physical] = Some(l);
    }
    let mut events = Vec::new();
    for p in initialised(program, traces) {
        events.push(Event {
            kind: EventKind::Init,
            thread: None,
            instr: None,
            location: first_location[p],
            physical: Some(p),
            value: program.physical[p].init,
            scope: None,
            tags: Vec::new(),
            agent: None,
            role: Role::Thread,
            placement: None,
            range: (0, 4),
            ub: None,
            mb_op: None,
            mb_result: None,
            sym: None,
            possible: None,
        });
    }
    events
}

/// Append the events of each trace to `events`: per thread, its event indices, and the index
/// of its first event (to translate trace-local indices).
fn push_thread_events(events: &mut Vec<Event>, program: &Program, readings: &Readings, traces: &[&Trace]) -> (Vec<Vec<usize>>, Vec<usize>) {
    // Async agents get global ids: (thread, op index) in order.
    let mut agent_base = Vec::new();
    let mut agents = 0usize;
    for trace in traces {
        agent_base.push(agents);
        agents += trace.ops.len();
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
            let (kind, scope, tags) = classify(instr, te);
            ids.push(events.len());
            let placement = event_placement(program, readings, t, te);
            events.push(Event {
                kind,
                thread: Some(t),
                instr: Some(te.instr),
                location: te.location,
                physical: te.location.map(|l| program.locations[l].physical),
                value: te.value,
                scope,
                tags,
                agent: te.agent.map(|a| agent_base[t] + a),
                role: te.role,
                placement: Some(placement),
                range: if te.location.is_some() { te.range } else { (0, 0) },
                ub: te.ub.clone(),
                mb_op: te.mb_op,
                mb_result: te.mb_result,
                sym: te.sym.as_ref().map(|e| e.shifted(base)),
                possible: te.possible.clone(),
            });
        }
        thread_events.push(ids);
    }
    (thread_events, bases)
}

/// The event sets the models name: the basic ones, the tags, the async roles, the reading's.
/// Per physical location, whether it holds an mbarrier object in these runs: every slot of an
/// mbarrier array, and each data word an mbarrier operation of a run addresses (a library's
/// shared storage struct keeps a pipeline's mbarriers in the array of its tiles, at offsets its
/// code computes; PTX ISA §9.7.13.15.1: any 8-byte aligned shared-memory word may be one).
pub fn mbarrier_words(program: &Program, traces: &[&Trace]) -> Vec<bool> {
    let mut out = vec![false; program.physical.len()];
    for v in program.variables.iter().filter(|v| v.kind == VariableKind::Mbarrier) {
        for k in 0..(v.size / 8) as usize {
            out[program.locations[v.first_location + k].physical] = true;
        }
    }
    for e in traces.iter().flat_map(|t| &t.events) {
        if let (Some(_), Some(l)) = (e.mb, e.location) {
            out[program.locations[l].physical] = true;
        }
    }
    out
}

fn base_sets(readings: &Readings, events: &[Event], mbarrier_words: &[bool]) -> BTreeMap<&'static str, EventSet> {
    let n = events.len();
    let set = |f: &dyn Fn(&Event) -> bool| EventSet::from_fn(n, |i| f(&events[i]));
    let mut sets: BTreeMap<&'static str, EventSet> = BTreeMap::new();
    sets.insert("_", EventSet::full(n));
    sets.insert("W", set(&|e| e.is_write()));
    sets.insert("R", set(&|e| e.is_read()));
    sets.insert("M", set(&|e| e.physical.is_some()));
    sets.insert("F", set(&|e| matches!(e.kind, EventKind::Fence | EventKind::Barrier { .. } | EventKind::WarpBarrier { .. })));
    sets.insert("IW", set(&|e| e.kind == EventKind::Init));
    sets.insert("B", set(&|e| matches!(e.kind, EventKind::Barrier { .. } | EventKind::WarpBarrier { .. })));
    let mut tagged: Vec<EventSet> = vec![EventSet::empty(n); ALL_TAGS.len()];
    for (i, e) in events.iter().enumerate() {
        for tag in &e.tags {
            if let Some(k) = ALL_TAGS.iter().position(|t| t == tag) {
                tagged[k].insert(i);
            }
        }
    }
    for (tag, s) in ALL_TAGS.iter().zip(tagged) {
        sets.insert(tag, s);
    }
    sets.insert("AGENT", set(&|e| e.agent.is_some()));
    sets.insert("SRC", set(&|e| e.role == Role::Source));
    // A tensor copy's read of its tensor map (a source read of the map's own word, in the
    // tensormap proxy).
    sets.insert("TMAP", set(&|e| e.role == Role::Source && e.tags.contains(&"TENSORMAP")));
    sets.insert("DST", set(&|e| e.role == Role::Destination));
    sets.insert("SIGNAL", set(&|e| e.role == Role::Signal));
    sets.insert("UB", set(&|e| e.ub.is_some()));
    sets.insert("MARKER", set(&|e| e.kind == EventKind::Marker));
    sets.insert("CBAR", set(&|e| matches!(e.kind, EventKind::ClusterBarrier { .. })));
    let mbar_loc = |e: &Event| e.physical.is_some_and(|p| mbarrier_words[p]);
    // Writes that leave a valid mbarrier object behind (for M2: no ordinary access to it).
    sets.insert("MBVALID", set(&|e| e.is_write() && mbar_loc(e) && MbState::decode(e.value).is_some()));
    for (name, selected) in readings.cat_sets() {
        sets.insert(name, if selected { EventSet::full(n) } else { EventSet::empty(n) });
    }
    sets
}

/// The relations that follow from the traces alone: program order, issue, same performer,
/// locations, scopes, RMW pairs, dependencies, and the async relations.
fn static_relations(
    program: &Program,
    traces: &[&Trace],
    bases: &[usize],
    events: &[Event],
    thread_events: &[Vec<usize>],
    expired: &dyn Fn() -> bool,
) -> Result<BTreeMap<&'static str, Relation>, BuildExpired> {
    let n = events.len();
    let mut rel: BTreeMap<&'static str, Relation> = BTreeMap::new();
    // Each relation costs a pass over n² bits: the clock is read between them.
    let check = || if expired() { Err(BuildExpired) } else { Ok(()) };
    rel.insert("id", Relation::identity(n));
    // Events performed by one thread itself, or by one async agent of it.
    let performer = |i: usize| events[i].thread.map(|t| (t, events[i].agent));
    // Program order: the thread's own events; async-agent events are not in it (§8.9.1.1).
    // Issue edges (digest §14.4): everything before an async instruction in program order is
    // ordered before the memory events of the operation (§8.9.1.1). And an async agent's
    // event -> every event of the thread that issued it.
    let mut po = Relation::empty(n);
    let mut iss = Relation::empty(n);
    for ids in thread_events {
        // Walking back, the thread's own events and its agents' events seen so far.
        let (mut later, mut later_agents) = (EventSet::empty(n), EventSet::empty(n));
        check()?;
        for &a in ids.iter().rev() {
            if events[a].agent.is_some() {
                later_agents.insert(a);
            } else {
                po.insert_row(a, &later);
                iss.insert_row(a, &later_agents);
                later.insert(a);
            }
        }
    }
    rel.insert("po", po);
    rel.insert("iss", iss);
    check()?;
    let int = grouped(n, performer).union(&Relation::identity(n));
    rel.insert("ext", int.complement());
    rel.insert("int", int);
    check()?;
    // Complete overlap: the same bytes accessed by both (§8.7): same word, same access range.
    rel.insert("same-range", grouped(n, |i| events[i].physical.map(|p| (p, events[i].range))));
    // Overlap (§8.2.1): some byte of the word accessed by both (a sub-word access covers only
    // its own bytes of its word; every other access, the whole word).
    rel.insert("overlap", overlap(program, events));
    rel.insert("same-access", same_access(program, events));
    check()?;
    let mut issuer = Relation::empty(n);
    for ids in thread_events {
        let mut own = EventSet::empty(n);
        ids.iter().filter(|&&b| events[b].agent.is_none()).for_each(|&b| own.insert(b));
        for &a in ids.iter().filter(|&&a| events[a].agent.is_some()) {
            issuer.insert_row(a, &own);
        }
    }
    rel.insert("issuer", issuer);
    check()?;
    rel.insert("loc", grouped(n, |i| events[i].physical));
    let generic = |e: &Event| e.location.map(|l| program.locations[l].generic);
    rel.insert("vloc", grouped(n, |i| events[i].physical.and(generic(&events[i]))));
    check()?;
    // Same scope: both events carry a scope, and each scope includes the other's thread.
    rel.insert(
        "sr",
        related_groups(
            n,
            |i| events[i].scope.zip(events[i].placement).map(|(s, p)| (s, p.gpu, p.cluster, p.cta)),
            |&(sa, ga, la, ca), &(sb, gb, lb, cb)| {
                let (pa, pb) = (Placement { gpu: ga, cluster: la, cta: ca }, Placement { gpu: gb, cluster: lb, cta: cb });
                pa.includes(sa, &pb) && pb.includes(sb, &pa)
            },
        ),
    );
    rel.insert("scta", grouped(n, |i| events[i].placement.map(|p| (p.gpu, p.cta))));
    check()?;
    let [rmw, addr, data, ctrl] = dependency_relations(program, traces, bases, n);
    rel.insert("rmw", rmw);
    let asyncr = async_relations(program, traces, bases, events);
    for (name, r) in asyncr {
        rel.insert(name, r);
    }
    rel.insert("addr", addr);
    rel.insert("data", data);
    rel.insert("ctrl", ctrl);
    check()?;
    let po_loc = rel["po"].intersection(&rel["loc"]);
    rel.insert("po-loc", po_loc);
    Ok(rel)
}

/// Events of one word that access a common byte of it (both directions, each event with itself).
fn overlap(program: &Program, events: &[Event]) -> Relation {
    let n = events.len();
    // Per physical word, its events grouped by the bytes they access.
    let mut words: BTreeMap<usize, BTreeMap<u8, (Vec<usize>, EventSet)>> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        let Some(p) = e.physical else { continue };
        let (members, set) = words.entry(p).or_default().entry(word_bytes(program, e)).or_insert_with(|| (Vec::new(), EventSet::empty(n)));
        members.push(i);
        set.insert(i);
    }
    let mut out = Relation::empty(n);
    for classes in words.values() {
        for (a, (members, _)) in classes {
            for (b, (_, set)) in classes {
                if a & b != 0 {
                    members.iter().for_each(|&m| out.insert_row(m, set));
                }
            }
        }
    }
    out
}

/// The bytes of its word an event accesses, as a 4-bit mask (bit k: byte k of the word).
fn word_bytes(program: &Program, e: &Event) -> u8 {
    let Some(l) = e.location.filter(|_| e.kind != EventKind::Init) else { return 0xF };
    let off = program.locations[l].offset;
    let (from, to) = (e.range.0.max(off) - off, e.range.1.min(off + 4) - off);
    let mask = (from.max(0)..to.min(4)).fold(0u8, |m, b| m | 1 << b);
    if mask == 0 {
        0xF
    } else {
        mask
    }
}

/// The two words of one 8-byte access of a thread (`ld`/`st`/`atom`/`red` of a 64-bit type):
/// consecutive events of the instruction, both reads or both writes, with the same 8-byte range
/// (both directions). The model needs it for what holds of the access as a whole: one place in
/// coherence order, single-copy atomicity.
fn same_access(program: &Program, events: &[Event]) -> Relation {
    let mut out = Relation::empty(events.len());
    for (i, pair) in events.windows(2).enumerate() {
        let [a, b] = pair else { continue };
        let wide = |e: &Event| {
            let (Some(t), Some(k)) = (e.thread, e.instr) else { return false };
            let op = &program.threads[t].code[k].op;
            e.agent.is_none()
                && e.range.1 - e.range.0 == 8
                && matches!(op, Op::Load { ty: Some(ty), .. } | Op::Store { ty: Some(ty), .. } | Op::Rmw { ty: Some(ty), .. } if ty.bits == 64)
        };
        let same = a.thread == b.thread && a.instr == b.instr && a.kind == b.kind && a.range == b.range && a.physical != b.physical;
        if same && wide(a) && wide(b) {
            out.insert(i, i + 1);
            out.insert(i + 1, i);
        }
    }
    out
}

/// The RMW pairs and the address, data and control dependencies, as event relations.
fn dependency_relations(program: &Program, traces: &[&Trace], bases: &[usize], n: usize) -> [Relation; 4] {
    let mut rmw = Relation::empty(n);
    let mut addr = Relation::empty(n);
    let mut data = Relation::empty(n);
    let mut ctrl = Relation::empty(n);
    for (t, trace) in traces.iter().enumerate() {
        let base = bases[t];
        for (i, te) in trace.events.iter().enumerate() {
            if let (TraceOp::Read, Some(w)) = (&te.op, te.rmw_partner) {
                rmw.insert(base + i, base + w);
            }
        }
        for_each_dependency(program, t, trace, |from, to, kind| {
            let r = match kind {
                Dependency::Addr => &mut addr,
                Dependency::Data => &mut data,
                Dependency::Ctrl => &mut ctrl,
            };
            r.insert(base + from, base + to);
        });
    }
    [rmw, addr, data, ctrl]
}

/// The kind of a dependency edge between two events of one trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dependency {
    Addr,
    Data,
    Ctrl,
}

/// Every dependency edge `(from, to, kind)` between events of `trace` (thread `t`), as the
/// structure's `addr`, `data` and `ctrl` relate them: address and data dependencies into memory
/// events, control dependencies into every event, and the data edge from the read to the write
/// of every RMW but exch (its written value is computed from the old one).
pub fn for_each_dependency(program: &Program, t: usize, trace: &Trace, mut f: impl FnMut(usize, usize, Dependency)) {
    for (e, te) in trace.events.iter().enumerate() {
        if let (TraceOp::Read, Some(w)) = (&te.op, te.rmw_partner) {
            if let Op::Rmw { op, .. } = &program.threads[t].code[te.instr].op {
                if *op != RmwOp::Exch {
                    f(e, w, Dependency::Data);
                }
            }
        }
        // A warp exchange's marker carries what its sources depend on (`exchanges`).
        let is_mem = te.location.is_some() || trace.exchanges.iter().any(|r| r.give == e);
        for (mask, kind, only_mem) in
            [(&te.addr_deps, Dependency::Addr, true), (&te.data_deps, Dependency::Data, true), (&te.ctrl_deps, Dependency::Ctrl, false)]
        {
            if only_mem && !is_mem {
                continue;
            }
            for j in mask.iter() {
                f(j, e, kind);
            }
        }
    }
}

/// The events with equal keys (None: no key), related pairwise (reflexively too).
fn grouped<K: Ord>(n: usize, key: impl Fn(usize) -> Option<K>) -> Relation {
    related_groups(n, key, |a, b| a == b)
}

/// `a` related to `b` when both have keys and `related(key a, key b)`: computed once per pair
/// of distinct keys, each a product of two event sets.
fn related_groups<K: Ord>(n: usize, key: impl Fn(usize) -> Option<K>, related: impl Fn(&K, &K) -> bool) -> Relation {
    let mut groups: BTreeMap<K, (Vec<usize>, EventSet)> = BTreeMap::new();
    for i in 0..n {
        if let Some(k) = key(i) {
            let (members, set) = groups.entry(k).or_insert_with(|| (Vec::new(), EventSet::empty(n)));
            members.push(i);
            set.insert(i);
        }
    }
    let mut out = Relation::empty(n);
    for (ka, (ga, _)) in &groups {
        for (kb, (_, sb)) in &groups {
            if related(ka, kb) {
                for &a in ga {
                    out.insert_row(a, sb);
                }
            }
        }
    }
    out
}

/// Every tag an event can carry besides the structural sets.
pub const ALL_TAGS: &[&str] = &[
    "RLX",
    "ACQ",
    "REL",
    "ACQ_REL",
    "SC",
    "WEAK",
    "GEN",
    "SUR",
    "TEX",
    "CON",
    "ASYNC",
    "ALIAS",
    "CTA",
    "CLUSTER",
    "GPU",
    "SYS",
    "RMW",
    "RED",
    "ARRIVE",
    "CPASYNC",
    "BULK",
    "FMBINIT",
    "CARRIVE",
    "CWAIT",
    "MB",
    "MBINIT",
    "MBINVAL",
    "MBARRIVE",
    "MBEXPECT",
    "MBCOMPLETE",
    "MBINC",
    "CT",
    "AA",
    "MBWAIT",
    "MBOK",
    "WGMMA",
    "WGMMAFENCE",
    "RESTRICTED",
    "TENSORMAP",
    "TMREL",
    "TMACQ",
    "NC",
    "MERGE",
];

/// Kind, scope and tags of a trace event (Dat3M's PTX tagging for the instructions Dat3M knows;
/// `docs/async-model.md` for the asynchronous ones).
fn classify(instr: &crate::program::Instr, te: &TraceEvent) -> (EventKind, Option<Scope>, Vec<&'static str>) {
    let op = &te.op;
    let mut tags: Vec<&'static str> = Vec::new();
    let scope_tag = |s: Option<Scope>, tags: &mut Vec<&'static str>| {
        if let Some(s) = s {
            tags.push(s.tag());
        }
    };
    let rw = |op: &TraceOp| if *op == TraceOp::Read { EventKind::Read } else { EventKind::Write };
    if let Some(mb) = te.mb {
        return classify_mbarrier(instr, te, mb);
    }
    match (&instr.op, op) {
        (_, TraceOp::Marker) => (EventKind::Marker, None, tags),
        // The read half of a sub-word store (`exec::trace::sizes`): how the word keeps its other
        // bytes, not a read of the program; weak, in no ordering pattern and no race.
        (Op::Store { ty: Some(ty), proxy, .. }, TraceOp::Read) if ty.bits < 32 => {
            tags.extend(["MERGE", "WEAK", proxy.tag()]);
            (EventKind::Read, None, tags)
        }
        (Op::Load { sem, scope, proxy, .. }, _) | (Op::Store { sem, scope, proxy, .. }, _) => {
            tags.push(sem_tag(*sem));
            scope_tag(*scope, &mut tags);
            tags.push(proxy.tag());
            if matches!(instr.op, Op::Load { nc: true, .. }) {
                tags.push("NC");
            }
            (rw(op), *scope, tags)
        }
        (Op::LoadVector { sem, scope, nc, .. }, _) => {
            tags.push(sem_tag(*sem));
            scope_tag(*scope, &mut tags);
            tags.push(Proxy::Generic.tag());
            if *nc {
                tags.push("NC");
            }
            (rw(op), *scope, tags)
        }
        (Op::StoreVector { sem, scope, .. }, _) => {
            tags.push(sem_tag(*sem));
            scope_tag(*scope, &mut tags);
            tags.push(Proxy::Generic.tag());
            (rw(op), *scope, tags)
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
            (rw(op), Some(*scope), tags)
        }
        (Op::Wgmma { .. }, _) => {
            // wgmma's matrix reads: weak reads of its async agent in the async proxy (§9.7.15.4).
            tags.extend(["WGMMA", Proxy::Async.tag(), "WEAK"]);
            (EventKind::Read, None, tags)
        }
        (Op::WgmmaFence, _) => {
            tags.push("WGMMAFENCE");
            (EventKind::Fence, None, tags)
        }
        // A tensor copy's read of its tensor map: in the tensormap proxy (§9.7.9.25.5.2; digest
        // §4: "read in the tensormap proxy"), weak, an event of the bulk copy.
        (Op::AsyncCopy(_), TraceOp::Read) if te.tensormap => {
            tags.extend(["BULK", "TENSORMAP", "WEAK"]);
            (EventKind::Read, None, tags)
        }
        // tensormap.replace "performs a weak memory operation"; tensormap.cp_fenceproxy's copy is
        // a generic one, then its release proxy fence generic→tensormap.
        (Op::TensormapReplace { .. }, _) | (Op::TensormapCopy { .. }, TraceOp::Read | TraceOp::Write) => {
            tags.extend(["WEAK", Proxy::Generic.tag()]);
            (rw(op), None, tags)
        }
        (Op::TensormapCopy { scope, .. }, _) | (Op::TensormapFence { acquire: None, scope }, _) => {
            tags.extend(["TMREL", scope.tag()]);
            (EventKind::Fence, Some(*scope), tags)
        }
        (Op::TensormapFence { scope, .. }, _) => {
            tags.extend(["TMACQ", scope.tag()]);
            (EventKind::Fence, Some(*scope), tags)
        }
        (Op::AsyncCopy(c), _) => {
            // Copy data events: weak accesses of the op's agent, in the generic proxy for
            // cp.async and the async proxy for bulk copies (§9.7.9.25.2). A bulk reduction is an
            // atomic RMW per element, .relaxed.gpu (§9.7.9.25.4.2, PTX 9.0; digest AMBIG-12).
            let proxy = if c.kind == CopyKind::CpAsync { Proxy::Generic } else { Proxy::Async };
            tags.push(if c.kind == CopyKind::CpAsync { "CPASYNC" } else { "BULK" });
            tags.push(proxy.tag());
            if let (CopyKind::Reduce(..), Role::Destination) = (c.kind, te.role) {
                tags.extend(["RLX", "RMW", "RED", "GPU"]);
                return (rw(op), Some(Scope::Gpu), tags);
            }
            tags.push("WEAK");
            (rw(op), None, tags)
        }
        (Op::Fence { kind, scope, restrict }, _) => {
            tags.push(match kind {
                FenceKind::Sc => "SC",
                FenceKind::AcqRel => "ACQ_REL",
                FenceKind::Acquire => "ACQ",
                FenceKind::Release => "REL",
            });
            tags.push(scope.tag());
            match restrict {
                Some(FenceRestrict::MbarrierInit) => tags.push("FMBINIT"),
                Some(FenceRestrict::SharedCta | FenceRestrict::SharedCluster) => tags.push("RESTRICTED"),
                None => {}
            }
            // Thread fences are generic-proxy operations (Dat3M PR #594), so they can be morally strong.
            tags.push(Proxy::Generic.tag());
            (EventKind::Fence, Some(*scope), tags)
        }
        (Op::ProxyFence { proxy, .. }, _) => {
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
        (Op::WarpBarrier { .. }, TraceOp::WarpBarrier { mask }) => (EventKind::WarpBarrier { mask: *mask }, None, tags),
        // ldmatrix/stmatrix: "treated as a weak memory operation in the Memory Consistency Model".
        (Op::Matrix(_), _) => {
            tags.extend(["WEAK", Proxy::Generic.tag()]);
            (rw(op), None, tags)
        }
        (Op::ClusterBarrier { arrive, sem }, _) => {
            tags.push(if *arrive { "CARRIVE" } else { "CWAIT" });
            if *sem == Sem::Relaxed {
                tags.push("RLX");
            }
            (EventKind::ClusterBarrier { arrive: *arrive }, None, tags)
        }
        _ => unreachable!("trace events come from memory, fence, barrier and async instructions"),
    }
}

/// An mbarrier event: a generic-proxy access of the object (§9.7.9.25.4.1: complete-tx accesses
/// it "using generic-proxy"). Tags: MB, the operation (MBINIT, MBARRIVE, CT, AA, MBWAIT, MBOK, …),
/// and the semantics: arrives are release or relaxed on their write half, waits returning True
/// are acquire or relaxed, everything else is relaxed (init/inval are weak). The complete-tx and
/// the arrive-on are relaxed here: their release is the completion edge of the model, which
/// carries only the op's own accesses (§8.9.1.1), not a synchronizes-with edge.
fn classify_mbarrier(instr: &crate::program::Instr, te: &TraceEvent, mb: MbKind) -> (EventKind, Option<Scope>, Vec<&'static str>) {
    let read = te.op == TraceOp::Read;
    let kind = if read { EventKind::Read } else { EventKind::Write };
    let mut tags: Vec<&'static str> = vec!["MB", Proxy::Generic.tag()];
    let (sem, scope) = match &instr.op {
        Op::Mbarrier { sem, scope, .. } => (*sem, *scope),
        _ => (Sem::Relaxed, if mb == MbKind::CompleteTx { Scope::Cluster } else { Scope::Cta }),
    };
    let is_update = te.rmw_partner.is_some();
    if is_update {
        tags.push("RMW");
    }
    tags.push(match mb {
        MbKind::Init => "MBINIT",
        MbKind::Inval => "MBINVAL",
        MbKind::Arrive => "MBARRIVE",
        MbKind::ExpectTx => "MBEXPECT",
        MbKind::CompleteTx if te.role == Role::Signal => "CT",
        MbKind::CompleteTx => "MBCOMPLETE",
        MbKind::IncPending => "MBINC",
        MbKind::ArriveOn => "AA",
        MbKind::Wait => "MBWAIT",
    });
    let sem_tag = match (mb, read) {
        (MbKind::Init | MbKind::Inval, _) => "WEAK",
        (MbKind::Arrive, false) if sem == Sem::Release => "REL",
        (MbKind::Wait, true) if te.wait_result == Some(true) => {
            tags.push("MBOK");
            if sem == Sem::Acquire {
                "ACQ"
            } else {
                "RLX"
            }
        }
        _ => "RLX",
    };
    tags.push(sem_tag);
    if sem_tag == "WEAK" {
        return (kind, None, tags);
    }
    tags.push(scope.tag());
    (kind, Some(scope), tags)
}

/// Where the performer of an event runs. Async data accesses belong to the issuing thread's CTA
/// (digest AMBIG-2). The complete-tx and arrive-on are performed, by default, by a virtual thread
/// of the CTA that owns the mbarrier (AMBIG-3), or by the issuing thread under the alternative.
fn event_placement(program: &Program, readings: &Readings, t: usize, te: &TraceEvent) -> Placement {
    let issuer = program.threads[t].placement;
    if te.role != Role::Signal || readings.signal_by_issuer {
        return issuer;
    }
    match te.location.map(|l| program.variable_of(l).space) {
        Some(Space::Shared { cta }) => Placement { cta, cluster: program.cluster_of_cta(cta), gpu: issuer.gpu },
        _ => issuer,
    }
}

/// The static relations of asynchronous operations (digest §14.4, §14.6):
/// `intra` (source → destination → signal inside an op; tracked copies → arrive-on),
/// `signals` (an op's memory events → its complete-tx or arrive-on),
/// `cpl-full` / `cpl-read` (an op's events → the async-group wait that observes its completion),
/// `group-order` (copies of earlier-committed groups → later ones, for AMBIG-18),
/// `same-group` (events of two cp.async ops of one cp.async-group, for U3),
/// `fence-space` (a proxy fence → the memory events of the state space it covers).
fn async_relations(program: &Program, traces: &[&Trace], bases: &[usize], events: &[Event]) -> Vec<(&'static str, Relation)> {
    let n = events.len();
    let mut intra = Relation::empty(n);
    let mut signals = Relation::empty(n);
    let mut cpl_full = Relation::empty(n);
    let mut cpl_read = Relation::empty(n);
    let mut group_order = Relation::empty(n);
    let mut same_group = Relation::empty(n);
    for (t, trace) in traces.iter().enumerate() {
        let base = bases[t];
        let data = |op: usize| -> Vec<usize> {
            trace.ops[op]
                .events
                .iter()
                .filter(|&&i| matches!(trace.events[i].role, Role::Source | Role::Destination))
                .map(|&i| base + i)
                .collect()
        };
        let sig = |op: usize| -> Vec<usize> {
            trace.ops[op].events.iter().filter(|&&i| trace.events[i].role == Role::Signal).map(|&i| base + i).collect()
        };
        for (o, op) in trace.ops.iter().enumerate() {
            let payload: Vec<usize> = match op.kind {
                AsyncKind::Copy(_) => data(o),
                AsyncKind::ArriveOn => op.tracked.iter().flat_map(|&a| data(a)).collect(),
            };
            let space = |e: usize| events[e].location.map(|l| program.variable_of(l).space);
            for &x in &payload {
                for &s in &sig(o) {
                    intra.insert(x, s);
                    // A complete-tx releases the op's accesses to its own CTA's destination
                    // (multicast: one complete-tx per destination CTA; digest §14.6 C2).
                    if events[x].role != Role::Destination || matches!(op.kind, AsyncKind::ArriveOn) || space(x) == space(s) {
                        signals.insert(x, s);
                    }
                }
            }
            for &i in &op.events {
                for &j in &op.events {
                    if trace.events[i].role == Role::Source && trace.events[j].role == Role::Destination {
                        intra.insert(base + i, base + j);
                    }
                }
            }
            for (o2, op2) in trace.ops.iter().enumerate() {
                let (AsyncKind::Copy(k1), AsyncKind::Copy(k2)) = (op.kind, op2.kind) else { continue };
                let group_kind = |k: CopyKind| match k {
                    CopyKind::CpAsync => 0,
                    CopyKind::Bulk | CopyKind::Reduce(..) => 1,
                    CopyKind::Wgmma => 2,
                };
                let same_kind = group_kind(k1) == group_kind(k2);
                if o != o2 && k1 == CopyKind::CpAsync && k2 == CopyKind::CpAsync && op.group.is_some() && op.group == op2.group {
                    for x in data(o) {
                        for y in data(o2) {
                            same_group.insert(x, y);
                        }
                    }
                }
                if same_kind && op.group.is_some() && op2.group.is_some() && op.group < op2.group {
                    for x in data(o) {
                        for y in data(o2) {
                            group_order.insert(x, y);
                        }
                    }
                }
            }
        }
        for w in &trace.waits {
            for &o in &w.ops {
                for &i in &trace.ops[o].events {
                    let role = trace.events[i].role;
                    if role == Role::Signal {
                        continue;
                    }
                    if !w.read_only {
                        cpl_full.insert(base + i, base + w.marker);
                    } else if role == Role::Source {
                        cpl_read.insert(base + i, base + w.marker);
                    }
                }
            }
        }
    }
    let mut fence_space = Relation::empty(n);
    for (f, e) in events.iter().enumerate() {
        let (Some(t), Some(i)) = (e.thread, e.instr) else { continue };
        // A proxy fence covers its state space; a `.sync_restrict` thread fence covers the shared
        // memory it names (PTX ISA §9.7.13.4).
        let space = match &program.threads[t].code[i].op {
            // The acquire half of the tensormap proxy fence covers the 128-byte object at its
            // address (the event's value, `exec::trace::tensormap`).
            Op::TensormapFence { acquire: Some(_), .. } => {
                for (m, x) in events.iter().enumerate() {
                    let Some(l) = x.location else { continue };
                    let a = program.address_of(l);
                    if (e.value..e.value + 128).contains(&a) {
                        fence_space.insert(f, m);
                    }
                }
                continue;
            }
            Op::ProxyFence { space, .. } => *space,
            Op::Fence { restrict: Some(FenceRestrict::SharedCta), .. } => Some(AccessSpace::SharedCta),
            Op::Fence { restrict: Some(FenceRestrict::SharedCluster), .. } => Some(AccessSpace::SharedCluster),
            _ => continue,
        };
        let space = &space;
        let here = program.threads[t].placement;
        for (m, x) in events.iter().enumerate() {
            let Some(l) = x.location else { continue };
            let covered = match (space, program.variable_of(l).space) {
                (None, _) | (Some(AccessSpace::Generic), _) => true,
                (Some(AccessSpace::Global), Space::Global) => true,
                (Some(AccessSpace::SharedCta), Space::Shared { cta }) => cta == here.cta,
                (Some(AccessSpace::SharedCluster), Space::Shared { cta }) => program.cluster_of_cta(cta) == here.cluster,
                _ => false,
            };
            if covered {
                fence_space.insert(f, m);
            }
        }
    }
    vec![
        ("intra", intra),
        ("signals", signals),
        ("cpl-full", cpl_full),
        ("cpl-read", cpl_read),
        ("group-order", group_order),
        ("same-group", same_group),
        ("fence-space", fence_space),
    ]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Limits;
    use crate::diag::SourceFile;
    use crate::exec::trace::explore;

    /// The build reads the clock between relations: one whose deadline has passed gives up
    /// (`--timeout` covers structures of ten thousand events, which take most of a second).
    #[test]
    fn a_build_past_its_deadline_gives_up() {
        let file = SourceFile::new(
            "t.litmus",
            "PTX t\n{ x = 0; }\nP0 | P1 ;\nst.relaxed.gpu x, 1 | ld.relaxed.gpu r0, x ;\nexists (P1:r0 == 1)\n",
        );
        let ast = crate::litmus::parse(&file).unwrap();
        let program = crate::program::lower(&ast, &file).unwrap();
        let (_, per_thread) = explore(&program, &Limits::default(), false).unwrap();
        let traces: Vec<_> = per_thread.iter().map(|t| &t.traces[0]).collect();
        let past = Instant::now();
        assert!(EventStructure::build_until(&program, &Default::default(), &traces, Some(past)).is_err());
        let built = EventStructure::build_until(&program, &Default::default(), &traces, None).map(|s| s.n());
        assert_eq!(built.ok(), Some(EventStructure::build(&program, &Default::default(), &traces).n()));
    }
}
