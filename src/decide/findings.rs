//! Findings of a consistent execution: undefined behaviour, data races and other model flags,
//! in words, with a hint naming the instruction that would remove each.
//!
//! The model decides *whether* an execution is undefined (`undefined_unless` checks), racy
//! (`flag` checks whose name contains `race`) or flagged (other `flag` checks); this module says
//! *what* happened, naming the instructions (thread, line, text) and computing a hint from the
//! program: which synchronization the pair lacks (an `mbarrier.expect_tx`, a full
//! `cp.async.bulk.wait_group` instead of `.read`, a wait plus a barrier in the issuing thread, a
//! proxy fence, a scope, …). An event that carries its own undefined-behaviour reason (an mbarrier
//! misuse, a bad copy size, found while building the trace) is reported with that reason and a
//! hint for it. `docs/findings.md` lists every kind and its hint.

use crate::cat::{CheckOutcome, FlagKind};
use crate::exec::search::Candidate;
use crate::exec::structure::{Event, EventStructure};
use crate::exec::trace::Role;
use crate::program::{Address, Completion, GroupKind, Instr, MbOp, Op, Program, Scope, Value};
use crate::relation::Relation;
use std::collections::BTreeSet;

/// One side of a finding: the instruction, its thread and line, and for an asynchronous
/// operation the part of it involved (`destination write`, `source read`, …).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct FindingSite {
    /// `P0`; `init` for the initial state of a location.
    pub thread: String,
    pub line: usize,
    pub instruction: String,
    pub part: Option<String>,
}

/// One finding, ready to print.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Finding {
    /// The model's name for the rule (`U1-read-before-completion`, `data-race`, …).
    pub rule: String,
    /// The instructions involved (one, or the two of a pair, in the rule's order).
    pub sites: Vec<FindingSite>,
    pub message: String,
    /// What to add or change to remove the finding, computed from the program.
    pub hint: Option<String>,
    /// The readings of the spec's ambiguities this finding depends on: with the other reading
    /// the model does not report it in any execution that shows it (`reading_notes`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub readings: Vec<crate::config::readings::ReadingDependence>,
}

impl Finding {
    /// The sites as a set, to compare findings about the same instructions.
    fn site_set(&self) -> BTreeSet<&FindingSite> {
        self.sites.iter().collect()
    }

    /// Whether the rule is a race check (its name says so), as opposed to another flag or
    /// undefined behaviour of a different kind.
    pub fn is_race(&self) -> bool {
        is_race_rule(&self.rule)
    }
}

/// A check named as a race check (`data-race`, `mixed-size-race`).
pub fn is_race_rule(name: &str) -> bool {
    name.contains("race")
}

/// The findings of one consistent execution.
#[derive(Default, Debug)]
pub struct ExecutionFindings {
    /// `undefined_unless` checks that fired.
    pub undefined: Vec<Finding>,
    /// `flag` checks named as race checks.
    pub races: Vec<Finding>,
    /// Other `flag` checks.
    pub flags: Vec<Finding>,
    /// The events of each finding (its rule and sites), and the check that fired on them: what
    /// [`super::reading_notes::annotate`] evaluates again under the other reading.
    pub events: Vec<(String, Vec<FindingSite>, usize, usize)>,
}

/// Add a finding unless one with the same rule and instructions is there (one bug gives one
/// finding, whatever the number of words of a bulk access or of executions showing it).
///
/// A reading the finding depends on is kept only if every execution showing the finding depends
/// on it too.
pub fn insert(set: &mut BTreeSet<Finding>, f: Finding) {
    let sites = f.site_set();
    let Some(g) = set.iter().find(|g| g.rule == f.rule && g.site_set() == sites) else {
        set.insert(f);
        return;
    };
    if g.readings.iter().all(|r| f.readings.iter().any(|n| n.id == r.id)) {
        return;
    }
    let mut g = g.clone();
    set.remove(&g);
    g.readings.retain(|r| f.readings.iter().any(|n| n.id == r.id));
    set.insert(g);
}

/// The ids of the readings to test a new finding of one execution against: `None` for a
/// finding not in `set` yet (test every reading), else those the one in `set` still depends on.
pub fn readings_to_test(set: &BTreeSet<Finding>, rule: &str, sites: &[FindingSite]) -> Option<Vec<&'static str>> {
    let sites: BTreeSet<&FindingSite> = sites.iter().collect();
    let g = set.iter().find(|g| g.rule == rule && g.site_set() == sites)?;
    Some(g.readings.iter().map(|r| r.id).collect())
}

/// Drop the race findings about a pair of instructions that a non-race undefined-behaviour
/// finding (U1, U2, …) already names: the undefined behaviour is the bug, its hint the fix.
pub fn drop_covered_races(undefined: &mut BTreeSet<Finding>, races: &mut BTreeSet<Finding>) {
    let covered: Vec<BTreeSet<FindingSite>> =
        undefined.iter().filter(|f| !f.is_race() && f.sites.len() > 1).map(|f| f.sites.iter().cloned().collect()).collect();
    let is_covered = |f: &Finding| f.is_race() && covered.iter().any(|c| c.iter().collect::<BTreeSet<_>>() == f.site_set());
    undefined.retain(|f| !is_covered(f));
    races.retain(|f| !is_covered(f));
    // A tensor-map write racing with a copy's read of the map (T1) is U2 where the copy was in
    // flight: the one finding is U2's.
    let in_flight: Vec<BTreeSet<FindingSite>> =
        undefined.iter().filter(|f| f.rule.starts_with("U2")).map(|f| f.sites.iter().cloned().collect()).collect();
    undefined.retain(|f| !(f.rule.starts_with("T1") && in_flight.iter().any(|c| c.iter().collect::<BTreeSet<_>>() == f.site_set())));
}

/// The findings of one consistent execution, from the flags that fired on it.
///
/// `model` is the prepared model, when the caller has it: its `path` (the causality order
/// without the proxy condition, in our models) tells a racing pair that lacks only a proxy
/// fence from one that lacks the ordering itself. It is evaluated only when some check fired.
pub fn of_execution(cand: &Candidate, fired: &[&CheckOutcome], model: Option<&crate::cat::Prepared>) -> ExecutionFindings {
    let mut out = ExecutionFindings::default();
    if fired.is_empty() {
        return out;
    }
    let path = match model.map(|m| m.value_of("path", cand)) {
        Some(Ok(Some(crate::cat::Value::Rel(r)))) => Some(r),
        _ => None,
    };
    let path = path.as_ref();
    let s = cand.structure();
    for c in fired {
        let pairs: Vec<(usize, usize)> = c.relation.pairs().collect();
        let mut found = Vec::new();
        for (a, b) in pairs {
            // Report each unordered pair once, first event first.
            if a > b && c.relation.contains(b, a) {
                continue;
            }
            let f = match c.flag {
                Some(FlagKind::UndefinedUnless) => undefined_finding(s, cand, &c.name, a, b, path),
                Some(FlagKind::Flag) if is_race_rule(&c.name) => pair_finding(s, &c.name, a, b, true, path),
                Some(FlagKind::Flag) => pair_finding(s, &c.name, a, b, false, path),
                None => continue,
            };
            if !found.iter().any(|g: &Finding| g.sites == f.sites) {
                out.events.push((c.name.clone(), f.sites.clone(), a, b));
                found.push(f);
            }
        }
        match c.flag {
            Some(FlagKind::UndefinedUnless) => out.undefined.extend(found),
            Some(FlagKind::Flag) if is_race_rule(&c.name) => out.races.extend(found),
            Some(FlagKind::Flag) => out.flags.extend(found),
            None => {}
        }
    }
    // Within one execution too: a race on a pair that undefined behaviour names is not repeated.
    let covered: Vec<BTreeSet<FindingSite>> =
        out.undefined.iter().filter(|f| !f.is_race() && f.sites.len() > 1).map(|f| f.sites.iter().cloned().collect()).collect();
    let keep = |f: &Finding| !(f.is_race() && covered.iter().any(|c| c.iter().collect::<BTreeSet<_>>() == f.site_set()));
    out.undefined.retain(keep);
    out.races.retain(keep);
    out
}

fn sites(s: &EventStructure, events: &[usize]) -> Vec<FindingSite> {
    events.iter().map(|&e| site(s, e)).collect()
}

/// A finding about one event or a pair; `race` adds the hint of what would order the pair.
fn pair_finding(s: &EventStructure, rule: &str, a: usize, b: usize, race: bool, path: Option<&Relation>) -> Finding {
    if a == b {
        return Finding { readings: Vec::new(), rule: rule.to_string(), sites: sites(s, &[a]), message: describe(s, a), hint: None };
    }
    Finding {
        readings: Vec::new(),
        rule: rule.to_string(),
        sites: sites(s, &[a, b]),
        message: format!("{} and {}", describe(s, a), describe(s, b)),
        hint: race.then(|| pair_hint(s, rule, a, b, path)),
    }
}

fn undefined_finding(s: &EventStructure, cand: &Candidate, rule: &str, a: usize, b: usize, path: Option<&Relation>) -> Finding {
    if a == b {
        return match &cand.ub_reasons[a] {
            Some(reason) => Finding {
                readings: Vec::new(),
                rule: rule.to_string(),
                sites: sites(s, &[a]),
                message: format!("{reason}, at {}", describe(s, a)),
                hint: Some(ub_reason_hint(s, a, reason)),
            },
            None => Finding {
                readings: Vec::new(),
                rule: rule.to_string(),
                sites: sites(s, &[a]),
                message: format!("{rule} at {}", describe(s, a)),
                hint: None,
            },
        };
    }
    if rule.starts_with("M2") {
        // Which update wrote the object last depends on the order of updates that ptxmm does not
        // enumerate (only the states the reads see): name the store.
        let obj = object_name(s, b);
        return Finding {
        readings: Vec::new(),
            rule: rule.to_string(),
            sites: sites(s, &[b]),
            message: format!("{} overwrites the valid mbarrier object `{obj}`", describe(s, b)),
            hint: Some(format!(
                "invalidate the mbarrier first: `mbarrier.inval.shared::cta.b64 [{obj}]` after its last use and before {}; an mbarrier object may be reused as ordinary memory only once invalid",
                describe(s, b)
            )),
        };
    }
    if rule.starts_with("NC") {
        return nc_finding(s, rule, a, b);
    }
    Finding {
        readings: Vec::new(),
        rule: rule.to_string(),
        sites: sites(s, &[a, b]),
        message: format!("{} and {}", describe(s, a), describe(s, b)),
        hint: Some(pair_hint(s, rule, a, b, path)),
    }
}

/// `ld.global.nc` of a location that the execution writes (`NC-location-written`): the load
/// through the read-only cache (`nc`) and the write.
fn nc_finding(s: &EventStructure, rule: &str, nc: usize, w: usize) -> Finding {
    let name = object_name(s, nc);
    Finding {
        readings: Vec::new(),
        rule: rule.to_string(),
        sites: sites(s, &[nc, w]),
        message: format!(
            "{} reads `{name}` through the non-coherent read-only cache, and {} writes it in the same execution",
            describe(s, nc),
            describe(s, w)
        ),
        hint: Some(format!(
            "`ld.global.nc` needs `{name}` unchanged while the kernel runs: load it with `ld.global` (`.relaxed`/`.acquire` with a scope when it is synchronized on) instead of {}, or do not write it during the kernel",
            describe(s, nc)
        )),
    }
}

fn object_name(s: &EventStructure, e: usize) -> String {
    s.events[e].location.map(|l| crate::program::naming::location_log_name(&s.program.location_name(l))).unwrap_or_default()
}

fn part(ev: &Event) -> Option<&'static str> {
    match ev.role {
        Role::Thread => None,
        Role::Source => Some("source read"),
        Role::Destination if ev.has_tag("RED") => Some("destination reduction"),
        Role::Destination => Some("destination write"),
        Role::Signal if ev.has_tag("AA") => Some("arrive-on"),
        Role::Signal => Some("complete-tx"),
    }
}

/// The machine-readable side of a finding.
pub fn site(s: &EventStructure, e: usize) -> FindingSite {
    let ev = &s.events[e];
    let program: &Program = s.program;
    let (Some(t), Some(i)) = (ev.thread, ev.instr) else {
        let name = ev.physical.map(|p| crate::program::naming::location_log_name(&program.physical_name(p))).unwrap_or_default();
        return FindingSite { thread: "init".into(), line: 0, instruction: format!("the initial state of `{name}`"), part: None };
    };
    let instr = &program.threads[t].code[i];
    FindingSite { thread: program.threads[t].name(), line: instr.line, instruction: instr.text.clone(), part: part(ev).map(str::to_string) }
}

/// `st.shared.u32 [x], 1` (P0 line 4), or for an async agent's event, the part of the operation:
/// `the destination write of cp.async.bulk… (P0 line 6)`.
pub fn describe(s: &EventStructure, e: usize) -> String {
    let ev = &s.events[e];
    let program: &Program = s.program;
    let (Some(t), Some(i)) = (ev.thread, ev.instr) else {
        let name = ev.physical.map(|p| crate::program::naming::location_log_name(&program.physical_name(p))).unwrap_or_default();
        return format!("the initial state of `{name}`");
    };
    let instr = &program.threads[t].code[i];
    // One finding per instruction, not per word of a bulk access.
    let part = part(ev).map(|p| format!("the {p} of ")).unwrap_or_default();
    format!("{part}`{}` ({} line {})", instr.text, program.threads[t].name(), instr.line)
}

/// What would have ordered two racing events: kept for `explain`, which shows every conflicting
/// pair of the execution it draws.
pub fn missing_order(s: &EventStructure, a: usize, b: usize) -> String {
    pair_hint(s, "data-race", a, b, None)
}

/// The instruction of an event with its thread and index.
struct At<'a> {
    t: usize,
    i: usize,
    instr: &'a Instr,
    name: String,
}

fn at<'a>(s: &'a EventStructure, e: usize) -> Option<At<'a>> {
    let ev = &s.events[e];
    let (t, i) = (ev.thread?, ev.instr?);
    let instr = &s.program.threads[t].code[i];
    Some(At { t, i, instr, name: s.program.threads[t].name() })
}

fn short(a: &At) -> String {
    format!("`{}` ({} line {})", a.instr.text, a.name, a.instr.line)
}

/// The hint for a pair of events a rule names (a race, U1, U2, U3, M1, …).
pub fn pair_hint(s: &EventStructure, rule: &str, a: usize, b: usize, path: Option<&Relation>) -> String {
    let (Some(pa), Some(pb)) = (at(s, a), at(s, b)) else {
        return "order the two accesses with synchronization (release/acquire, a fence, or a barrier)".to_string();
    };
    if rule.starts_with("U3") {
        return u3_hint(&pa, &pb);
    }
    if rule.starts_with("M1") {
        return m1_hint(s, &pa, &pb);
    }
    if rule.starts_with("T1") {
        let (write, copy) = if s.events[a].agent.is_none() { (&pa, &pb) } else { (&pb, &pa) };
        if matches!(write.instr.op, crate::program::Op::TensormapCopy { .. }) {
            return format!(
                "{} releases the map toward the tensormap proxy; acquire it before the tensor copy {} reads it: `fence.proxy.tensormap::generic.acquire.gpu [map], 128` in the thread that issues the copy, after synchronization with the releasing thread where it is another (PTX ISA §9.7.13.4)",
                short(write),
                short(copy)
            );
        }
        return format!(
            "make the write {} visible to the tensormap proxy before the tensor copy {} reads the map: `fence.proxy.tensormap::generic.release.gpu` after the write (`tensormap.cp_fenceproxy....release.gpu.sync.aligned` performs it after its copy), then `fence.proxy.tensormap::generic.acquire.gpu [map], 128` before the copy, in the thread that issues it, with synchronization between the two where they are different threads (PTX ISA §9.7.13.4, `tensormap.cp_fenceproxy`)",
            short(write),
            short(copy)
        );
    }
    let (ea, eb) = (&s.events[a], &s.events[b]);
    match (ea.agent.is_some(), eb.agent.is_some()) {
        (true, false) => async_hint(s, rule, a, b, path),
        (false, true) => async_hint(s, rule, b, a, path),
        (true, true) => {
            // Two asynchronous operations: the later one must wait for the earlier one.
            if (pa.t, pa.i) <= (pb.t, pb.i) {
                async_hint(s, rule, a, b, path)
            } else {
                async_hint(s, rule, b, a, path)
            }
        }
        (false, false) => plain_race_hint(s, rule, a, b, &pa, &pb),
    }
}

fn u3_hint(pa: &At, pb: &At) -> String {
    let (first, second) = if pa.i <= pb.i { (pa, pb) } else { (pb, pa) };
    format!(
        "give the two copies distinct destinations, or put them in separate cp.async-groups and complete the first before issuing the second: `cp.async.commit_group` and `cp.async.wait_group 0` between {} and {}",
        short(first),
        short(second)
    )
}

fn m1_hint(s: &EventStructure, init: &At, user: &At) -> String {
    let (pi, pu) = (s.program.threads[init.t].placement, s.program.threads[user.t].placement);
    if pi.gpu == pu.gpu && pi.cta == pu.cta {
        format!(
            "order the initialisation before the use: `bar.sync 0` in {} after {} and in {} before {} (a `fence.mbarrier_init.release.cluster` followed by a synchronization also does)",
            init.name,
            short(init),
            user.name,
            short(user)
        )
    } else {
        format!(
            "make the initialisation visible to the other CTA: `fence.mbarrier_init.release.cluster` in {} after {}, then `barrier.cluster.arrive` and `barrier.cluster.wait` in both {} and {} before {}",
            init.name,
            short(init),
            init.name,
            user.name,
            short(user)
        )
    }
}

/// Whether two mbarrier operands may name the same object (addresses in registers: maybe).
fn same_object(p: &Program, x: &Address, y: &Address) -> bool {
    match (x, y) {
        (Address::Location(l), Address::Location(m)) => p.locations[*l].physical == p.locations[*m].physical,
        _ => true,
    }
}

fn bar_name(p: &Program, a: &Address) -> String {
    match a {
        Address::Location(l) => p.location_name(*l),
        Address::Reg(..) | Address::Byte(..) => "its mbarrier".to_string(),
    }
}

/// The hint for an asynchronous operation's event `x` and another event `o` of a rule or race.
fn async_hint(s: &EventStructure, rule: &str, x: usize, o: usize, path: Option<&Relation>) -> String {
    let (Some(px), Some(po)) = (at(s, x), at(s, o)) else {
        return "order the access with the asynchronous operation's completion".to_string();
    };
    let (ex, eo) = (&s.events[x], &s.events[o]);
    let undefined_order = rule.starts_with("U1") || rule.starts_with("U2");
    let same_thread = px.t == po.t;
    // `o` before the issue in program order, or in another thread that is ordered with the
    // operation (else U1/U2 would name the pair): only the proxy is missing.
    let proxies_differ = ex.has_tag("ASYNC") != eo.has_tag("ASYNC");
    let o_before = same_thread && po.i < px.i;
    let ordered = path.is_none_or(|p| p.contains(o, x) || p.contains(x, o));
    if !undefined_order && proxies_differ && (o_before || (!same_thread && ordered)) {
        return if same_thread {
            format!(
                "put a `fence.proxy.async` between {} and {}: accesses of one location through the generic and the async proxy are ordered only by a proxy fence",
                short(&po),
                short(&px)
            )
        } else {
            format!(
                "put a `fence.proxy.async` in {} after its synchronization with {} and before {} (the CTA of the async access): a barrier or release/acquire orders the threads, but accesses through different proxies also need a proxy fence",
                px.name,
                po.name,
                short(&px)
            )
        };
    }
    if let Some(h) = refill_hint(s, &px, &po, x, o, path) {
        return h;
    }
    let tensor_map = ex.role == Role::Source && ex.has_tag("TENSORMAP");
    ordering_hint(s, &px, &po, o, ex.role, tensor_map)
}

/// A copy (at `px`, event `x`) that refills a buffer which another thread reads (at `po`, event
/// `o`) for what the issuing thread wrote there before (an earlier fill that the read is ordered
/// after): the read must be ordered before the refill, not the refill's completion before the
/// read. `None` when the pair is not such a write-after-read.
fn refill_hint(s: &EventStructure, px: &At, po: &At, x: usize, o: usize, path: Option<&Relation>) -> Option<String> {
    let (ex, eo) = (&s.events[x], &s.events[o]);
    if px.t == po.t || eo.is_write() || ex.role != Role::Destination || eo.physical.is_none() {
        return None;
    }
    let earlier = (0..s.n()).find(|&e| {
        let ev = &s.events[e];
        ev.thread == Some(px.t)
            && ev.instr.is_some_and(|i| i < px.i)
            && ev.is_write()
            && ev.physical == eo.physical
            && path.is_none_or(|p| p.contains(e, o))
    })?;
    // Something the issuing thread does after issuing the refill is ordered before the read: the
    // read is meant to see the refill (a missing completion, not a write-after-read).
    let after_issue = |p: &Relation| {
        (0..s.n()).any(|e| {
            let ev = &s.events[e];
            ev.thread == Some(px.t) && ev.agent.is_none() && ev.instr.is_some_and(|i| i > px.i) && p.contains(e, o)
        })
    };
    if path.is_some_and(after_issue) {
        return None;
    }
    // On an mbarrier: a reader that waits on it at least as often as the issuing thread has
    // filled through it up to the refill means to read the refill (a wait on the wrong phase,
    // not a write-after-read).
    if let Op::AsyncCopy(c) = &px.instr.op {
        if let Completion::Mbarrier(bar) = &c.completion {
            let p = s.program;
            let waits = p.threads[po.t].code[..po.i]
                .iter()
                .filter(|i| matches!(&i.op, Op::Mbarrier { op: MbOp::Wait { .. }, bar: b, .. } if same_object(p, b, bar)))
                .count();
            let fills = p.threads[px.t].code[..=px.i]
                .iter()
                .filter(|i| matches!(&i.op, Op::AsyncCopy(d) if matches!(&d.completion, Completion::Mbarrier(b) if same_object(p, b, bar))))
                .count();
            if waits >= fills {
                return None;
            }
        }
    }
    let first = at(s, earlier)?;
    let code = &s.program.threads[px.t].code;
    let fence = if ex.has_tag("ASYNC")
        && !eo.has_tag("ASYNC")
        && !code[first.i + 1..px.i].iter().any(|i| matches!(i.op, Op::ProxyFence { proxy: crate::program::Proxy::Async, .. }))
    {
        format!(
            ", then a `fence.proxy.async` in {} after that synchronization and before the refill (a generic read, then an async write of the same memory)",
            px.name
        )
    } else {
        String::new()
    };
    let loc = object_name(s, o);
    let lead = format!(
        "{} refills `{loc}` while {} may still read the earlier data ({}, written by {}): order the read before the refill",
        short(px),
        po.name,
        short(po),
        short(&first)
    );
    let (cx, cy) = (s.program.threads[px.t].placement, s.program.threads[po.t].placement);
    if !(cx.gpu == cy.gpu && cx.cta == cy.cta) {
        let sc = scope_name(common_scope(s, px, po));
        return Some(format!(
            "{lead}: a release/acquire flag of scope .{sc} (`st.release.{sc}` of it in {} after the read, a `ld.acquire.{sc}` loop on it in {} before {}){fence}",
            po.name,
            px.name,
            short(px)
        ));
    }
    let bar =
        |t: usize, from: usize| s.program.threads[t].code[from + 1..].iter().find(|i| matches!(i.op, Op::Barrier { arrive: false, .. }));
    Some(match (bar(px.t, px.i), bar(po.t, po.i)) {
        (Some(bx), Some(bo)) => format!(
            "{lead}: issue the refill only after a barrier that {} reaches after the read: move it after {}'s `{}` (line {}), which meets {}'s `{}` (line {}){fence}",
            po.name, px.name, bx.text, bx.line, po.name, bo.text, bo.line
        ),
        _ => format!(
            "{lead}: `bar.sync 0` in {} after {} and in {} before {}, or an mbarrier hand-off (an `mbarrier.arrive` in {} after the read and a `mbarrier.try_wait.parity` loop on that mbarrier in {} before the refill){fence}",
            po.name,
            short(po),
            px.name,
            short(px),
            po.name,
            px.name
        ),
    })
}

/// The asynchronous operation at `px` is not complete (for `po`) when `po` accesses its memory:
/// name what completes it, by its completion mechanism and where the two run.
fn ordering_hint(s: &EventStructure, px: &At, po: &At, o: usize, role: Role, tensor_map: bool) -> String {
    let mut h = Incomplete::new(s.program, px, po, role);
    h.tensor_map = tensor_map;
    // What `po`'s thread executed before the access: threads of a kernel share one body, and
    // an instruction of the body another branch runs is not theirs.
    let mine = &s.thread_events[po.t];
    let before = mine.iter().position(|&e| e == o).unwrap_or(mine.len());
    h.po_executed = mine[..before].iter().filter_map(|&e| s.events[e].instr).collect();
    // The mbarrier object each of those instructions reads, and the one the copy signals.
    h.po_objects = mine[..before]
        .iter()
        .filter(|&&e| s.events[e].location.is_some_and(|l| s.is_mbarrier(l)))
        .filter_map(|&e| Some((s.events[e].instr?, s.events[e].physical?)))
        .collect();
    h.signal_object = s
        .events
        .iter()
        .find_map(|e| (e.thread == Some(px.t) && e.instr == Some(px.i) && e.role == Role::Signal).then_some(e.physical).flatten());
    // The bytes the copy writes in this execution (its destination events), for a size the
    // program holds in a register.
    let written: i64 = s
        .events
        .iter()
        .filter(|e| e.thread == Some(px.t) && e.instr == Some(px.i) && e.role == Role::Destination && e.is_write())
        .map(|e| e.range.1 - e.range.0)
        .sum();
    h.copied = (written > 0).then_some(written);
    // The complete-tx of this operation in the execution: its mbarrier and its bytes.
    h.signal = s.events.iter().find_map(|e| match (e.thread, e.instr, e.role, e.location, e.mb_op) {
        (Some(t), Some(i), Role::Signal, Some(l), Some(crate::program::mbarrier::MbUpdate::CompleteTx { bytes }))
            if t == px.t && i == px.i && e.is_write() =>
        {
            Some((s.program.location_name(l), bytes))
        }
        _ => None,
    });
    match &px.instr.op {
        Op::AsyncCopy(c) => match c.completion {
            Completion::Mbarrier(bar) => h.mbarrier_hint(c.size, &bar),
            Completion::Group(GroupKind::Bulk) => h.bulk_group_hint(),
            Completion::Group(GroupKind::CpAsync) => h.cp_async_group_hint(),
            Completion::Group(GroupKind::Wgmma) => h.then_sync(&format!(
                "wait for the operation in {}: `wgmma.commit_group.sync.aligned` and `wgmma.wait_group.sync.aligned 0`",
                px.name
            )),
        },
        Op::Wgmma { .. } => h.then_sync(&format!(
            "wait for the wgmma in {}: `wgmma.commit_group.sync.aligned` after it and `wgmma.wait_group.sync.aligned 0`",
            px.name
        )),
        _ => h.then_sync(&format!("wait for the completion of {}", short(px))),
    }
}

/// An asynchronous operation (at `px`) not complete for an access (at `po`) of its memory, with
/// what the issuing thread does after it: what [`ordering_hint`] words its hint from.
struct Incomplete<'a> {
    p: &'a Program,
    px: &'a At<'a>,
    po: &'a At<'a>,
    /// The issuing thread's code.
    code: &'a [Instr],
    /// The issuing thread's instructions after the operation (before `po` in the same thread).
    after: &'a [Instr],
    same_thread: bool,
    /// `po`, in words.
    access: String,
    /// `po` accesses the operation's source (else its destination).
    source: bool,
    /// The issuing thread's first barrier (`bar.sync`) after the operation.
    barrier_after: Option<&'a Instr>,
    /// `po` modifies the tensor map of a tensor copy (a source read of its own kind).
    tensor_map: bool,
    /// In this execution, the mbarrier the operation's complete-tx reaches and its byte count
    /// (for operands the program holds in registers).
    signal: Option<(String, i64)>,
    /// The instructions `po`'s thread executed before its access (in this execution).
    po_executed: std::collections::BTreeSet<usize>,
    /// The bytes the operation writes in this execution, if any.
    copied: Option<i64>,
    /// Of those instructions, the mbarrier objects (physical locations) they access, and the
    /// object the operation signals.
    po_objects: std::collections::BTreeMap<usize, usize>,
    signal_object: Option<usize>,
}

impl<'a> Incomplete<'a> {
    fn new(p: &'a Program, px: &'a At<'a>, po: &'a At<'a>, role: Role) -> Self {
        let code = &p.threads[px.t].code;
        let same_thread = px.t == po.t;
        let end = if same_thread && po.i > px.i { po.i } else { code.len() };
        Incomplete {
            p,
            px,
            po,
            code,
            after: &code[(px.i + 1).min(end)..end],
            same_thread,
            access: short(po),
            source: role == Role::Source,
            barrier_after: code[px.i + 1..].iter().find(|i| matches!(i.op, Op::Barrier { arrive: false, .. })),
            tensor_map: false,
            signal: None,
            po_executed: Default::default(),
            copied: None,
            po_objects: Default::default(),
            signal_object: None,
        }
    }

    /// The waits for groups of `kind` after the operation.
    fn waits(&self, kind: GroupKind) -> Vec<&'a Instr> {
        self.after.iter().filter(|i| matches!(&i.op, Op::WaitGroup { kind: k, .. } if *k == kind)).collect()
    }

    /// `what` (a completion in the issuing thread), then what makes it visible to `po`: nothing
    /// more in the same thread, else a barrier or a release/acquire flag.
    fn then_sync(&self, what: &str) -> String {
        self.sync_through(what, self.barrier_after)
    }

    /// [`Self::then_sync`] for a completion at the existing instruction `done` (a wait): the
    /// barrier that can publish it is the first one after `done`, not after the operation.
    fn then_sync_after(&self, what: &str, done: &Instr) -> String {
        let from = self.code.iter().position(|i| std::ptr::eq(i, done)).unwrap_or(self.px.i);
        let after_done = self.code[from + 1..].iter().find(|i| matches!(i.op, Op::Barrier { arrive: false, .. }));
        match (after_done, self.barrier_after) {
            // The issuing thread's barrier comes between the operation and its wait: it cannot
            // publish the completion; the wait belongs before it.
            (None, Some(b)) if !self.same_thread && b.line < done.line => {
                let at = self.code.iter().position(|i| std::ptr::eq(i, b)).unwrap_or(from);
                let commit = self.code[at..from].iter().find(|i| matches!(i.op, Op::CommitGroup(_)));
                format!(
                    "{what}, after {}'s `{}` (line {}): move the wait{} before that barrier, so that the barrier orders the completed operation before {}",
                    self.px.name,
                    b.text,
                    b.line,
                    commit.map(|c| format!(" (and `{}` (line {}) with it)", c.text, c.line)).unwrap_or_default(),
                    self.access
                )
            }
            _ => self.sync_through(what, after_done),
        }
    }

    fn sync_through(&self, what: &str, barrier: Option<&Instr>) -> String {
        let (px, po, access) = (self.px, self.po, &self.access);
        if self.same_thread {
            format!("{what} before {access}")
        } else {
            match barrier {
                Some(b) => format!(
                    "{what} before {}'s `{}` (line {}), so that the barrier orders the completed operation before {access}",
                    px.name, b.text, b.line
                ),
                None => format!(
                    "{what}, then synchronize {} with {}: a barrier (`bar.sync 0` in both threads, in {} before {access}) in one CTA, or a release/acquire flag",
                    px.name, po.name, po.name
                ),
            }
        }
    }

    /// A copy of `size` bytes that completes on the mbarrier at `bar`: announce its bytes, wait
    /// for the phase, or wait on the right phase.
    fn mbarrier_hint(&self, size: Value, bar: &Address) -> String {
        let (p, px, po, access) = (self.p, self.px, self.po, &self.access);
        let bytes = match (size, &self.signal) {
            (Value::Const(n), _) => n.to_string(),
            (Value::Reg(_), Some((_, n))) => n.to_string(),
            (Value::Reg(_), None) => match self.copied {
                Some(n) => n.to_string(),
                None => "the bytes the copy completes".to_string(),
            },
        };
        let bname = match (bar, &self.signal) {
            (Address::Location(_), _) | (_, None) => bar_name(p, bar),
            (_, Some((name, _))) => name.clone(),
        };
        let announced = p.threads.iter().flat_map(|t| &t.code).any(|i| {
            matches!(&i.op, Op::Mbarrier { op: MbOp::ExpectTx { .. } | MbOp::Arrive { expect_tx: Some(_), .. }, bar: b, .. } if same_object(p, b, bar))
        });
        if !announced {
            let arrives_itself =
                self.code.iter().any(|i| matches!(&i.op, Op::Mbarrier { op: MbOp::Arrive { .. }, bar: b, .. } if same_object(p, b, bar)));
            let fix = if arrives_itself {
                format!(
                    "add `mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{bname}], {bytes}` in {} before the copy (or make its arrive `mbarrier.arrive.expect_tx…[{bname}], {bytes}`, before the copy)",
                    px.name
                )
            } else {
                format!("add `mbarrier.arrive.expect_tx.shared::cta.b64 _, [{bname}], {bytes}` in {} before the copy", px.name)
            };
            return format!(
                "no thread announces the copy's bytes on `{bname}` with expect_tx, so the phase can complete before {} lands: {fix}",
                short(px)
            );
        }
        let waits_on_bar = p.threads[po.t].code[..po.i]
            .iter()
            .enumerate()
            .rev()
            .filter(|(k, _)| self.po_executed.contains(k))
            // The same object where the execution tells (the addresses are registers).
            .filter(|(k, _)| match (self.po_objects.get(k), self.signal_object) {
                (Some(a), Some(b)) => *a == b,
                _ => true,
            })
            .map(|(_, i)| i)
            .find(|i| matches!(&i.op, Op::Mbarrier { op: MbOp::Wait { .. }, bar: b, .. } if same_object(p, b, bar)));
        let verb = match (self.tensor_map, self.source) {
            (true, _) => "modifying the tensor map",
            (false, true) => "modifying the source",
            (false, false) => "the access",
        };
        match waits_on_bar {
            None => format!(
                "{} completes through the mbarrier `{bname}`: wait for that phase in {} before {verb} ({access}): `mbarrier.try_wait.parity` on `{bname}` in a loop until it succeeds",
                short(px),
                po.name
            ),
            Some(w) => format!(
                "the wait `{}` ({} line {}) can succeed on a phase that does not include {}: check its parity operand and that the expect_tx byte count on `{bname}` is {bytes}",
                w.text,
                po.name,
                w.line,
                short(px)
            ),
        }
    }

    /// A bulk copy that completes with its bulk group: commit and wait for the group (fully,
    /// unless `po` only reuses the source).
    fn bulk_group_hint(&self) -> String {
        let (px, po, access, same_thread) = (self.px, self.po, &self.access, self.same_thread);
        let ws = self.waits(GroupKind::Bulk);
        let commit = if self.after.iter().any(|i| matches!(i.op, Op::CommitGroup(GroupKind::Bulk))) {
            ""
        } else {
            "`cp.async.bulk.commit_group` after the copy and "
        };
        if self.source {
            // The source reads are already waited for (`.read`, or a full wait, of every group)
            // before the access: what is missing is the proxy fence that orders those async reads
            // before the generic write (the reading `read-wait-without-fence`).
            let waited = ws.iter().find(|w| matches!(w.op, Op::WaitGroup { n: 0, .. }) && (!same_thread || w.line <= po.instr.line));
            match (same_thread, waited) {
                (true, Some(w)) => {
                    return format!(
                        "`{}` ({} line {}) already waits for the source reads, but its completion does not order them before a generic write here: put a `fence.proxy.async` after it, before {access}",
                        w.text, px.name, w.line
                    )
                }
                // Another thread reuses the source: the wait is there, the synchronization that
                // orders it before the other thread's write is not.
                (false, Some(w)) => {
                    return self.then_sync_after(
                        &format!("`{}` ({} line {}) already waits for the copy's source reads", w.text, px.name, w.line),
                        w,
                    )
                }
                _ => {}
            }
            return self.then_sync(&format!(
                "wait for the copy's source reads in {}: {commit}`cp.async.bulk.wait_group.read 0` (`.read` is enough to reuse the source)",
                px.name
            ));
        }
        let full = ws.iter().find(|w| matches!(w.op, Op::WaitGroup { read: false, .. }));
        let read = ws.iter().find(|w| matches!(w.op, Op::WaitGroup { read: true, .. }));
        match (full, read) {
            (None, Some(r)) => {
                let n = match r.op {
                    Op::WaitGroup { n, .. } => n,
                    _ => 0,
                };
                format!(
                    "`{}` ({} line {}) waits only until the copy has read its source, not until its writes are done: replace it with `cp.async.bulk.wait_group {n}` (without .read){}",
                    r.text,
                    px.name,
                    r.line,
                    if same_thread { String::new() } else { format!(", so the synchronization after it publishes the writes to {}", po.name) }
                )
            }
            (None, None) => {
                self.then_sync(&format!("wait for the copy in {}: {commit}`cp.async.bulk.wait_group 0` (without .read)", px.name))
            }
            (Some(w), _) => {
                if same_thread {
                    format!(
                        "`{}` (line {}) leaves the copy's bulk group pending: wait with `cp.async.bulk.wait_group 0` before {access}",
                        w.text, w.line
                    )
                } else {
                    self.then_sync_after(&format!("the copy completes for {} at `{}` (line {})", px.name, w.text, w.line), w)
                }
            }
        }
    }

    /// A `cp.async` that completes with its group: only the issuing thread can wait for it.
    fn cp_async_group_hint(&self) -> String {
        let (px, access) = (self.px, &self.access);
        let ws = self.waits(GroupKind::CpAsync);
        match ws.last() {
            None => {
                let prefix = if self.same_thread {
                    format!("wait for the copy in {}", px.name)
                } else {
                    format!(
                        "only the issuing thread can wait for a `cp.async`, and a barrier alone does not complete it: in {} wait for the copy",
                        px.name
                    )
                };
                self.then_sync(&format!("{prefix} with `cp.async.wait_all` (or `cp.async.commit_group` after it and `cp.async.wait_group 0`)"))
            }
            Some(w) if self.same_thread => format!(
                "`{}` (line {}) can leave the copy's group pending: wait with `cp.async.wait_group 0` or `cp.async.wait_all` before {access}",
                w.text, w.line
            ),
            Some(w) => self.then_sync_after(&format!("the copy completes for {} at `{}` (line {})", px.name, w.text, w.line), w),
        }
    }
}

/// The narrowest scope that contains both threads.
fn common_scope(s: &EventStructure, a: &At, b: &At) -> Scope {
    let (x, y) = (s.program.threads[a.t].placement, s.program.threads[b.t].placement);
    [Scope::Cta, Scope::Cluster, Scope::Gpu, Scope::Sys].into_iter().find(|&sc| x.includes(sc, &y)).unwrap_or(Scope::Sys)
}

fn scope_name(sc: Scope) -> String {
    format!("{sc:?}").to_lowercase()
}

/// Two thread accesses (§8.7: morally strong needs strong operations of one proxy with mutual
/// scopes and the same range; otherwise causality must order them).
fn plain_race_hint(s: &EventStructure, rule: &str, a: usize, b: usize, pa: &At, pb: &At) -> String {
    let (ea, eb) = (&s.events[a], &s.events[b]);
    let proxy = |e: &Event| ["GEN", "SUR", "TEX", "CON"].into_iter().find(|p| e.has_tag(p)).unwrap_or("GEN");
    let proxy_name = |p: &str| match p {
        "SUR" => "surface",
        "TEX" => "texture",
        "CON" => "constant",
        _ => "generic",
    };
    let (xa, xb) = (proxy(ea), proxy(eb));
    if xa != xb {
        let other = if xa == "GEN" { xb } else { xa };
        return format!(
            "they use different proxies ({} and {}); order them with synchronization and a `fence.proxy.{}` on the path",
            proxy_name(xa),
            proxy_name(xb),
            proxy_name(other)
        );
    }
    let common = scope_name(common_scope(s, pa, pb));
    let order = {
        let same_cta = {
            let (x, y) = (s.program.threads[pa.t].placement, s.program.threads[pb.t].placement);
            x.gpu == y.gpu && x.cta == y.cta
        };
        // The write comes first (the reader is to see it); between two writes or two reads,
        // program text order.
        let (first, second) = match (ea.is_write(), eb.is_write()) {
            (true, false) => (pa, pb),
            (false, true) => (pb, pa),
            _ if pa.instr.line <= pb.instr.line => (pa, pb),
            _ => (pb, pa),
        };
        let (ef, es) = if std::ptr::eq(first, pa) { (a, b) } else { (b, a) };
        if let Some((release, acquire)) = existing_pair(s, first, ef, second, es, common_scope(s, pa, pb)) {
            // The pair is there: what is missing is that the second access waits for it.
            format!(
                "`{}` ({} line {}) and `{}` ({} line {}) order them only in the executions where the acquire reads that release: make {} wait for it (loop on the acquire until it reads the released value, or branch on it and skip {} otherwise)",
                release.text,
                first.name,
                release.line,
                acquire.text,
                second.name,
                acquire.line,
                short(second),
                short(second)
            )
        } else if same_cta && pa.t != pb.t && lanes_of_one_warp(s.program, pa.t, pb.t) {
            // Lanes of one warp running one body (a warp column, a kernel): the warp's own
            // barrier orders them (PTX ISA 9.7.13.2).
            format!(
                "order them: `bar.warp.sync` (`__syncwarp()`) with a membermask of both lanes in {} after {} and in {} before {}, or a release/acquire pair (.{common})",
                first.name,
                short(first),
                second.name,
                short(second)
            )
        } else if same_cta && pa.t != pb.t {
            format!(
                "order them: `bar.sync 0` in {} after {} and in {} before {}, or a release/acquire pair (.{common})",
                first.name,
                short(first),
                second.name,
                short(second)
            )
        } else {
            format!(
                "order them with a release/acquire pair of scope .{common}: a `st.release.{common}` of a flag after {} and a `ld.acquire.{common}` of it (that reads the release) before {}",
                short(first),
                short(second)
            )
        }
    };
    // The synchronization is there with too narrow a scope: widening it is the fix (adding
    // another release/acquire pair would repeat the one the test has).
    if let Some(narrow) = narrow_scope_note(s, pa, pb, common_scope(s, pa, pb)) {
        return narrow;
    }
    let mixed = rule.contains("mixed") || ea.range != eb.range;
    if mixed {
        return format!("the accesses cover different bytes, so they are never morally strong: {order}");
    }
    if ea.has_tag("WEAK") || eb.has_tag("WEAK") {
        return format!(
            "a weak access is never morally strong with another thread's access: make both strong with a scope that contains both threads (e.g. `.relaxed.{common}`, `.release.{common}`/`.acquire.{common}`), or {order}"
        );
    }
    match (ea.scope, eb.scope) {
        (Some(sa), Some(sb)) => format!(
            "their scopes (.{} and .{}) do not both include the other thread: use .{common} (or wider) on both, or {order}",
            scope_name(sa),
            scope_name(sb)
        ),
        _ => order,
    }
}

/// When the threads order their accesses with a fence or a release/acquire whose scope does not
/// contain both of them (`membar.cta` between CTAs), the scope is the bug: say so, naming the
/// instruction and the scope that would (§8.5: an operation only synchronizes with threads
/// inside its scope).
/// A release in `first`'s thread after its access (event `ef`) and an acquire in `second`'s
/// thread before its access (`es`), on one location, each of a scope that contains both threads:
/// a release/acquire pair the program already has between the two accesses.
fn existing_pair<'s>(
    s: &'s EventStructure,
    first: &At,
    ef: usize,
    second: &At,
    es: usize,
    common: Scope,
) -> Option<(&'s Instr, &'s Instr)> {
    let wide = |e: &Event| e.scope.is_some_and(|sc| sc >= common);
    let after: Vec<usize> = s.thread_events[first.t].iter().copied().skip_while(|&e| e != ef).skip(1).collect();
    let before: Vec<usize> = s.thread_events[second.t].iter().copied().take_while(|&e| e != es).collect();
    for &r in after.iter().filter(|&&r| s.events[r].is_write() && s.events[r].has_tag("REL") && wide(&s.events[r])) {
        let loc = s.events[r].physical?;
        if let Some(&q) = before.iter().find(|&&q| {
            let e = &s.events[q];
            !e.is_write() && e.has_tag("ACQ") && wide(e) && e.physical == Some(loc)
        }) {
            let code = |t: usize, e: usize| s.events[e].instr.map(|i| &s.program.threads[t].code[i]);
            return Some((code(first.t, r)?, code(second.t, q)?));
        }
    }
    None
}

fn narrow_scope_note(s: &EventStructure, pa: &At, pb: &At, common: Scope) -> Option<String> {
    // The instructions the thread's run executed (a kernel's threads share their code).
    let ran = |at: &At, k: usize| s.thread_events[at.t].iter().any(|&e| s.events[e].instr == Some(k));
    let narrow = |at: &At| -> Option<(&Instr, Scope)> {
        s.program.threads[at.t].code.iter().enumerate().filter(|&(k, _)| ran(at, k)).map(|(_, i)| i).find_map(|i| match &i.op {
            Op::Fence { scope, .. } if *scope < common => Some((i, *scope)),
            Op::Store { sem: crate::program::Sem::Release, scope: Some(scope), .. }
            | Op::Load { sem: crate::program::Sem::Acquire, scope: Some(scope), .. }
                if *scope < common =>
            {
                Some((i, *scope))
            }
            Op::Mbarrier { op: MbOp::Arrive { .. } | MbOp::Wait { .. }, scope, .. } if *scope < common => Some((i, *scope)),
            _ => None,
        })
    };
    let (at, (instr, scope)) = narrow(pa).map(|n| (pa, n)).or_else(|| narrow(pb).map(|n| (pb, n)))?;
    // A remote arrive (`.shared::cluster`) at the default `.cta` scope: a known bug of cluster
    // kernels, with its history.
    let remote_arrive = matches!(instr.op, Op::Mbarrier { op: MbOp::Arrive { .. }, space: crate::program::AccessSpace::SharedCluster, .. });
    let history = if remote_arrive {
        " (an `mbarrier.arrive` without a scope is `.release.cta`: it does not synchronize with a wait in another CTA of the cluster; CUTLASS's `ClusterBarrier::arrive(cta_id)` is this form, NVIDIA/cutlass#3643, fixed by #3647 with `.release.cluster` after 249 of 1000 runs gave wrong results)"
    } else {
        ""
    };
    Some(format!(
        "the scope .{} of `{}` ({} line {}) does not contain both threads{history}: use .{} (or wider) there and in the other thread",
        scope_name(scope),
        instr.text,
        at.name,
        instr.line,
        scope_name(common)
    ))
}

/// The hint for an operation that is undefined by itself (the reason found while building the
/// trace or replaying the mbarrier): the instruction and, where the reason gives it, the operand
/// or value to change.
fn ub_reason_hint(s: &EventStructure, e: usize, reason: &str) -> String {
    let here = describe(s, e);
    let obj = object_name(s, e);
    let has = |p: &str| reason.starts_with(p);
    if has("M1:") {
        format!(
            "initialise `{obj}` with `mbarrier.init` before {here}, ordered before it (`bar.sync 0` after the init when another thread initialises it)"
        )
    } else if has("M2:") {
        format!("do not initialise a valid mbarrier again: `mbarrier.inval` on `{obj}` after its last use, before the new init {here}")
    } else if has("M3: mbarrier.init count") {
        format!("give {here} an arrival count between 1 and 2^20-1: the number of arrivals each phase expects")
    } else if has("M3: arrive count") {
        format!("give {here} a count between 1 and 2^20-1 (without the count operand an arrive counts 1)")
    } else if has("M3:") {
        "issue fewer `cp.async.mbarrier.arrive` (without .noinc) per phase, or use `.noinc` with an init count that includes them"
            .to_string()
    } else if has("arrival-count underflow") {
        format!(
            "more arrivals than the phase expects reach `{obj}`: raise its arrival count ({}) to the number of arrivals per phase, or remove the extra arrive ({here})",
            init_site(s, e)
        )
    } else if has("M4") {
        format!("use a plain `mbarrier.arrive` (without .noComplete) for the arrival that completes the phase ({here})")
    } else if has("M6: phase parity") {
        format!("the parity operand of {here} must be 0 or 1: the parity of the phase waited for (phase number & 1)")
    } else if has("M6:") {
        format!(
            "wait with a state that an arrive on `{obj}` returned in the current phase or the immediately preceding one (the latest arrive's), or use the `.parity` form ({here})"
        )
    } else if has("M10") {
        format!(
            "keep the tx-count of `{obj}` within ±(2^20-1): make the byte count of {here} the bytes the copies complete on `{obj}` in that phase{}, and split larger transfers over several phases",
            copied_bytes(s, e).map(|n| format!(" ({n} in this program)")).unwrap_or_default()
        )
    } else if has("U6: bulk copy size") {
        format!("give {here} a size that is a positive multiple of 16 bytes")
    } else if has("U6: bulk prefetch size") {
        format!("give {here} a size that is a multiple of 16 bytes")
    } else if has("U6: the") {
        format!("make the copied range fit its variable: reduce the size of {here} or enlarge the variable")
    } else if has("U5/U6") {
        // "… `g+8` is not 16-byte aligned …": the operand and the alignment it needs.
        let operand = reason.split('`').nth(1).unwrap_or("the address");
        let align = reason.split(" is not ").nth(1).and_then(|r| r.split('-').next()).unwrap_or("16");
        format!(
            "align `{operand}` in {here} to {align} bytes: an offset that is a multiple of {align}, in a variable declared with `align {align}` or more"
        )
    } else if has("U4") {
        format!("give {here} a src-size between 0 and its cp-size")
    } else if has("mapa:") {
        format!("give {here} the rank of a CTA of the cluster (the cluster's CTAs ranked by id) and the address of a shared variable that CTA declares at the same CTA-relative offset")
    } else if has("U13") {
        format!("use the state-space qualifier of the variable's space in {here} (`.global` for global variables, `.shared::cta` for the executing CTA's shared memory, `.shared::cluster` for another CTA of the cluster)")
    } else if reason.contains("is the mbarrier object") {
        format!("copy to and from data variables, not the mbarrier object ({here})")
    } else if reason.contains("multicast ctaMask selects no CTA") {
        format!("set at least one bit of the ctaMask of {here}, the cluster rank of each destination CTA")
    } else if reason.contains("multicast") {
        let rank = reason.split("selects cluster rank ").nth(1).and_then(|r| r.split(',').next()).unwrap_or("?");
        format!(
            "clear bit {rank} of the ctaMask of {here}: set bits only for cluster ranks of CTAs that have the destination and the mbarrier at the same CTA-relative offset"
        )
    } else if reason.contains("same CTA as the destination") {
        format!(
            "signal an mbarrier in the CTA of the copy's destination from {}: map the mbarrier's address into that CTA (`mapa`, the same rank as the destination's) or use that CTA's own mbarrier",
            at(s, e).map(|a| short(&a)).unwrap_or(here)
        )
    } else if reason.starts_with("divergent aligned barrier") {
        format!(
            "let every lane of the warp reach {here} at the same instruction: move it out of the branch (the lanes that skip the work still meet there), or use `barrier.sync` without `.aligned` (CUDA's `__syncthreads()` compiles to the aligned `bar.sync`)"
        )
    } else {
        format!("change {here} so that it is defined: {reason}")
    }
}

/// Where the arrival count of the mbarrier an event updates is set: its `mbarrier.init` (with
/// thread and line, when only one init may be of it), else the litmus declaration `mbarrier(N)`.
fn init_site(s: &EventStructure, e: usize) -> String {
    let p = s.program;
    let Some(loc) = s.events[e].location else { return "`mbarrier.init`".to_string() };
    let inits: Vec<String> = p
        .threads
        .iter()
        .flat_map(|t| t.code.iter().map(move |i| (t.id, i)))
        .filter(|(_, i)| matches!(&i.op, Op::Mbarrier { op: MbOp::Init { .. }, bar, .. } if same_object(p, bar, &Address::Location(loc))))
        .map(|(t, i)| format!("`{}` (P{t} line {})", i.text, i.line))
        .collect();
    match inits.as_slice() {
        [one] => one.clone(),
        [] => format!("`mbarrier(N)` in the declaration of `{}`", p.variable_of(loc).name),
        _ => "its `mbarrier.init`".to_string(),
    }
}

/// The bytes of the copies that complete on the mbarrier an event updates, when every one has a
/// constant size.
fn copied_bytes(s: &EventStructure, e: usize) -> Option<i64> {
    let p = s.program;
    let loc = s.events[e].location?;
    let mut total = 0;
    for i in p.threads.iter().flat_map(|t| &t.code) {
        if let Op::AsyncCopy(c) = &i.op {
            if let Completion::Mbarrier(b) = &c.completion {
                if same_object(p, b, &Address::Location(loc)) {
                    total += match c.size {
                        Value::Const(n) => n,
                        Value::Reg(_) => return None,
                    };
                }
            }
        }
    }
    (total > 0).then_some(total)
}

/// Threads `a` and `b` are lanes of one warp that run one body (the lanes of a warp column, or
/// the threads of a kernel), where `__syncwarp()` is the barrier a programmer writes.
fn lanes_of_one_warp(program: &crate::program::Program, a: usize, b: usize) -> bool {
    let (x, y) = (&program.threads[a], &program.threads[b]);
    x.warp == y.warp && x.body_start().is_some() && x.body_start() == y.body_start()
}
