//! Liveness: can some fair execution of the test run forever?
//!
//! A thread is stuck forever when it waits at a barrier whose instance never completes, or when
//! it spins in a side-effect-free loop whose exit condition never becomes true. ptxmm looks for a
//! consistent execution in which every thread has either finished or is stuck, and at least one
//! is stuck (see `docs/liveness.md` for the definition and its comparison with Dat3M):
//!
//! - each thread contributes a complete run, a run ending at one of its barriers, or a run that
//!   ends with one failed iteration of a spin loop;
//! - the barriers that block in that combination must be exactly the ones the stuck runs wait at
//!   (a complete run may not pass a barrier that never completes, and a run may not wait at one
//!   that does);
//! - fairness: a spinning thread polls forever, so it eventually reads the final value of every
//!   location it polls. Its failed iteration must therefore read, for each read, a write that is
//!   maximal in coherence order;
//! - the execution (all events up to the stuck points) must be consistent with the model.

use super::driver::{AtResolution, Hooks, RunError, SearchSite};
use super::poll_filter::PollFilter;
use super::thin_air::{ThinAirCheck, ThinAirFilter};
use crate::exec::search::{search, Budget, Candidate, SearchGoal, Visit};
use crate::exec::structure::{BarrierResolution, BlockedBarrier, EventStructure};
use crate::exec::trace::{Stuck, ThreadTraces, Trace};
use crate::program::Program;
use std::collections::BTreeSet;
use std::ops::ControlFlow;
use std::time::Duration;

/// Verdict of the liveness check.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LivenessStatus {
    /// No fair execution hangs.
    Ok,
    /// Some fair execution hangs; `LivenessOutcome::hang` shows one.
    MayHang,
}

/// Where and why one thread is stuck forever.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct StuckThread {
    /// `P<id>` as written in the test.
    pub thread: String,
    pub line: usize,
    pub instruction: String,
    pub reason: String,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct LivenessOutcome {
    pub status: LivenessStatus,
    /// The stuck threads of one hanging execution (empty when the status is Ok).
    pub hang: Vec<StuckThread>,
    /// Some run of a loop with side effects was cut at the unrolling bound: hangs inside such
    /// loops are not searched for.
    pub loop_cut: bool,
    /// The unrolling bound of the runs searched (the last one tried).
    pub unroll: usize,
    /// The bounds tried when the bound was raised automatically (empty with `--unroll N`).
    pub bounds_tried: Vec<usize>,
    /// Undefined behaviour in the hanging execution reported (before the threads stop): such
    /// an execution has no final state, so the verdict's search never sees it.
    pub undefined: Vec<crate::decide::findings::Finding>,
    /// Combinations of runs ruled out by the model's thin-air check over all mbarrier objects
    /// at once, before any event structure was built (see `decide::thin_air`).
    #[serde(skip)]
    pub thin_air_cut: usize,
    /// Combinations of runs that reached the search (an event structure built for each).
    #[serde(skip)]
    pub searched: usize,
    #[serde(skip)]
    pub elapsed: Duration,
}

impl LivenessOutcome {
    /// The report lines: `Liveness: ok` or `Liveness: may hang` and one line per stuck thread.
    pub fn report(&self) -> String {
        let mut s = String::new();
        match self.status {
            LivenessStatus::Ok => s.push_str("Liveness: ok\n"),
            LivenessStatus::MayHang => {
                s.push_str("Liveness: may hang\n");
                // Lanes of one warp column stuck alike are one line (`P1.0-P1.31 stuck at ...`).
                let mut i = 0;
                while i < self.hang.len() {
                    let t = &self.hang[i];
                    let mut j = i + 1;
                    while j < self.hang.len() && crate::program::naming::next_lane(&self.hang[j - 1].thread, &self.hang[j].thread) && {
                        let u = &self.hang[j];
                        (u.line, &u.instruction, &u.reason) == (t.line, &t.instruction, &t.reason)
                    } {
                        j += 1;
                    }
                    let who = crate::program::naming::lane_range(&t.thread, &self.hang[j - 1].thread);
                    s.push_str(&format!("  {who} stuck at line {} `{}`: {}\n", t.line, t.instruction, t.reason));
                    i = j;
                }
            }
        }
        if !self.undefined.is_empty() {
            s.push_str(&format!("  undefined behaviour in this hanging execution ({}):\n", self.undefined.len()));
            for f in &self.undefined {
                s.push_str(&format!("    [{}] {}\n", f.rule, f.message));
                if let Some(h) = &f.hint {
                    s.push_str(&format!("      hint: {h}\n"));
                }
            }
        }
        if self.loop_cut {
            s.push_str(&format!(
                "  (a loop with side effects was cut at the unrolling bound {}; hangs inside it are not searched)\n",
                self.unroll
            ));
        }
        s
    }
}

/// `P1.7` as (1, 7), `P2` as (2, 0): the order of the program's threads.
fn thread_order(name: &str) -> (u64, u64) {
    let (column, lane) = name.trim_start_matches('P').split_once('.').unwrap_or((name.trim_start_matches('P'), "0"));
    (column.parse().unwrap_or(u64::MAX), lane.parse().unwrap_or(0))
}

/// The liveness mode's hooks: combinations with a stuck run whose mbarrier histories allow
/// the hang, barrier resolutions that block exactly where the runs wait, and a fair execution.
pub(super) struct LivenessHooks<'p> {
    program: &'p Program,
    start: crate::clock::Instant,
    unroll: usize,
    loop_cut: bool,
    /// What each thread (its async operations included) writes in some run, for the hints.
    written: Vec<BTreeSet<usize>>,
    polls_can_fail: PollFilter<'p>,
    /// Present when the model forbids cycles of reads-from and dependencies.
    thin_air: Option<ThinAirFilter<'p>>,
    /// Of the structure being searched: the barrier events stuck runs wait at, and the polls
    /// that must see final values (global event indices).
    waiting: BTreeSet<usize>,
    polls: Vec<usize>,
    found: Option<Vec<StuckThread>>,
    undefined: Vec<crate::decide::findings::Finding>,
    searched: usize,
}

impl<'p> LivenessHooks<'p> {
    pub(super) fn new(program: &'p Program, unroll: usize, model: &crate::cat::CatModel) -> Self {
        LivenessHooks {
            thin_air: ThinAirCheck::of_model(model).map(|check| ThinAirFilter::new(program, check)),
            program,
            start: crate::clock::Instant::now(),
            unroll,
            loop_cut: false,
            written: Vec::new(),
            polls_can_fail: PollFilter::new(program),
            waiting: BTreeSet::new(),
            polls: Vec::new(),
            found: None,
            undefined: Vec::new(),
            searched: 0,
        }
    }

    pub(super) fn finish(self) -> LivenessOutcome {
        let (status, hang) = match self.found {
            Some(h) => (LivenessStatus::MayHang, h),
            None => (LivenessStatus::Ok, Vec::new()),
        };
        LivenessOutcome {
            status,
            hang,
            loop_cut: self.loop_cut,
            unroll: self.unroll,
            bounds_tried: Vec::new(),
            undefined: self.undefined,
            thin_air_cut: self.thin_air.map_or(0, |f| f.cut + f.cut_start),
            searched: self.searched,
            elapsed: self.start.elapsed(),
        }
    }
}

impl<'p> Hooks<'p> for LivenessHooks<'p> {
    fn stuck_runs(&self) -> bool {
        true
    }

    fn groups_apart(&self) -> bool {
        // Whether some fair execution hangs names no register and no value.
        true
    }

    fn no_execution(&mut self) {
        self.found = None;
        self.undefined.clear();
    }

    fn explored(&mut self, per_thread: &[ThreadTraces]) {
        let program = self.program;
        self.loop_cut = per_thread.iter().any(|t| t.cut);
        self.polls_can_fail.explored(per_thread);
        if let Some(f) = &mut self.thin_air {
            f.explored(per_thread, &mut self.polls_can_fail);
        }
        self.written = per_thread
            .iter()
            .map(|runs| {
                runs.traces
                    .iter()
                    .chain(&runs.stuck)
                    .flat_map(|tr| tr.events.iter())
                    .filter(|e| e.op == crate::exec::trace::TraceOp::Write)
                    .filter_map(|e| e.location.map(|l| program.locations[l].physical))
                    .collect()
            })
            .collect();
    }

    fn keep(&mut self, traces: &[&Trace]) -> bool {
        traces.iter().any(|t| t.stuck.is_some())
            && barriers_agree(self.program, traces)
            && self.thin_air.as_mut().is_none_or(|f| f.allows_last(traces, &mut self.polls_can_fail) != Some(false))
            && self.polls_can_fail.allows(traces)
            && self.thin_air.as_mut().is_none_or(|f| f.allows(traces, &mut self.polls_can_fail))
    }

    fn keep_start(&mut self, traces: &[&Trace]) -> bool {
        barriers_agree(self.program, traces)
            && self.polls_can_fail.allows_start(traces)
            && self.thin_air.as_mut().is_none_or(|f| match f.allows_last(traces, &mut self.polls_can_fail) {
                Some(ok) => ok,
                None => f.allows_start(traces, &mut self.polls_can_fail),
            })
    }

    fn structure(&mut self, traces: &[&Trace], structure: &EventStructure<'p>) -> Result<SearchGoal, RunError> {
        self.searched += 1;
        self.waiting.clear();
        self.polls.clear();
        for (t, tr) in traces.iter().enumerate() {
            match &tr.stuck {
                Some(Stuck::Barrier { event }) => {
                    self.waiting.insert(structure.thread_events[t][*event]);
                }
                Some(Stuck::Spin { reads, .. }) => self.polls.extend(reads.iter().map(|r| structure.thread_events[t][*r])),
                None => {}
            }
        }
        Ok(SearchGoal { final_reads: self.polls.clone(), ..SearchGoal::default() })
    }

    fn resolution(&mut self, resolution: &BarrierResolution) -> AtResolution {
        let blocked: BTreeSet<usize> = resolution.blocked.iter().map(|b| b.event).collect();
        if blocked == self.waiting {
            AtResolution::Search
        } else {
            AtResolution::Skip
        }
    }

    fn search(&mut self, site: &SearchSite<'_, 'p, '_>, budget: &mut Budget) -> Result<ControlFlow<()>, RunError> {
        let polls = &self.polls;
        let lazy = site.model;
        let mut witness: Option<Vec<(usize, i64)>> = None;
        let mut undefined: Option<Vec<crate::decide::findings::Finding>> = None;
        let mut visit = Visit(|cand: &Candidate, eval: &crate::cat::Evaluation| {
            // Fairness: every read of the failed iteration reads a co-maximal write.
            let rf_of = cand.rf.inverse();
            let fair = polls.iter().all(|&r| rf_of.successors(r).iter().all(|w| cand.co.successors(w).is_empty()));
            if fair {
                witness = Some(polls.iter().map(|&r| (r, cand.value_of(r))).collect());
                let found = crate::decide::findings::of_execution(cand, &eval.fired_flags(), lazy.get().ok());
                let mut set = BTreeSet::new();
                for f in found.undefined {
                    crate::decide::findings::insert(&mut set, f);
                }
                undefined = Some(set.into_iter().collect());
            }
            !fair
        });
        search(site.statics, site.model, site.plan, site.goal, budget, &mut visit)?;
        match witness {
            Some(seen) => {
                let stuck = describe(self.program, site.structure, site.traces, &self.written, &site.resolution.blocked, &seen);
                // A hang found before is another group's (`decide::groups::apart`): the
                // program's hanging execution has both groups' stuck threads.
                let mut all = self.found.take().unwrap_or_default();
                all.extend(stuck);
                all.sort_by_key(|t| thread_order(&t.thread));
                self.found = Some(all);
                for f in undefined.unwrap_or_default() {
                    if !self.undefined.contains(&f) {
                        self.undefined.push(f);
                    }
                }
                Ok(ControlFlow::Break(()))
            }
            None => Ok(ControlFlow::Continue(())),
        }
    }
}

/// Whether no run waits forever at a barrier another run passed: two threads of one CTA whose
/// barrier events all have one resource and no thread count (`bar.sync 0`, `__syncthreads`),
/// or two lanes of one warp whose `bar.warp.sync`s all have one membermask naming both, meet at
/// their k-th such barrier, and an instance one of them passed has completed, so the other is
/// not stuck at it. Checked on the first runs chosen, this keeps lanes that wait at the same
/// barriers from multiplying the search (each lane's run stuck at its k-th barrier, or past it).
/// Barriers with a thread count complete `count` at a time, so a run stuck at one is compared
/// only where at most `count` threads of its CTA can arrive there (then a completed phase held
/// them all); other masks pair otherwise and are not compared: the barrier resolution decides
/// them.
fn barriers_agree(program: &Program, traces: &[&Trace]) -> bool {
    cluster_barriers_agree(program, traces) && cta_and_warp_barriers_agree(program, traces)
}

/// Whether no run waits forever at a `barrier.cluster.wait` another run of its cluster passed.
/// The k-th waits of a cluster's threads complete together, when every thread of the cluster
/// has made its k-th arrive or exited (`exec::structure::barriers`, `resolve_cluster_barriers`),
/// so a run stuck at its k-th wait and a run past its own k-th wait never meet in one
/// execution: the structure's resolution would block both or neither. Checked on the first
/// runs chosen, this keeps the idle lanes of a cluster from multiplying the liveness check (a
/// 2-CTA cluster of 32-lane warps: each CTA's lanes stuck at the barrier, or past it, not every
/// count of them).
fn cluster_barriers_agree(program: &Program, traces: &[&Trace]) -> bool {
    use crate::exec::trace::TraceOp;
    let waits = |tr: &Trace| tr.events.iter().filter(|e| e.op == TraceOp::ClusterBarrier { arrive: false }).count();
    let stuck_at_wait = |tr: &Trace| match tr.stuck {
        Some(Stuck::Barrier { event }) => tr.events[event].op == TraceOp::ClusterBarrier { arrive: false },
        _ => false,
    };
    traces.iter().enumerate().filter(|(_, tr)| stuck_at_wait(tr)).all(|(a, tr)| {
        // The stuck event is the run's last: it waits at its k-th wait, k = its number of waits.
        let k = waits(tr);
        let here = program.threads[a].placement;
        traces.iter().enumerate().all(|(b, other)| {
            let there = program.threads[b].placement;
            let same_cluster = b != a && there.gpu == here.gpu && there.cluster == here.cluster;
            let passed = waits(other) > k || (waits(other) == k && !stuck_at_wait(other));
            !(same_cluster && passed)
        })
    })
}

/// [`barriers_agree`] for the barriers of a CTA and of a warp.
fn cta_and_warp_barriers_agree(program: &Program, traces: &[&Trace]) -> bool {
    use crate::exec::trace::TraceOp;
    // Per run: the kind of barrier it is stuck at, its position among the run's barriers of that
    // kind, and whether every barrier of the run is of that one kind.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Kind {
        Cta(i64, Option<i64>),
        Warp(u32),
        /// `bar.sync`/`bar.arrive` of barrier `id` (its resource) counting `count` threads.
        Counted(i64, i64),
    }
    let kind = |e: &crate::exec::trace::TraceEvent| match e.op {
        TraceOp::Barrier { instance, id, count: None, arrive: false } => Some(Some(Kind::Cta(instance, id))),
        TraceOp::Barrier { instance, id, count: Some(c), .. } => Some(Some(Kind::Counted(id.unwrap_or(instance), c))),
        TraceOp::Barrier { .. } => Some(None),
        TraceOp::WarpBarrier { mask } => Some(Some(Kind::Warp(mask))),
        _ => None,
    };
    // The one kind of barrier a run has (None: none, or more than one, or a counted one).
    let only = |tr: &Trace| -> Option<(Kind, usize)> {
        let mut one: Option<Kind> = None;
        let mut n = 0;
        for k in tr.events.iter().filter_map(kind) {
            match (k, one) {
                (Some(k), None) => one = Some(k),
                (Some(k), Some(o)) if k == o => {}
                _ => return None,
            }
            n += 1;
        }
        one.map(|k| (k, n))
    };
    let stuck: Vec<(usize, Kind, usize)> = traces
        .iter()
        .enumerate()
        .filter_map(|(t, tr)| {
            let Some(Stuck::Barrier { event }) = tr.stuck else { return None };
            let (k, n) = only(tr)?;
            // The stuck event is the run's last barrier: it waits at its n-th.
            debug_assert!(kind(&tr.events[event]).is_some());
            Some((t, k, n))
        })
        .collect();
    if stuck.is_empty() {
        return true;
    }
    stuck.iter().all(|&(a, k, n)| {
        // A counted barrier's phase completes with exactly `count` arrivals: where at most
        // `count` threads of the CTA can arrive at that barrier at all, the phase another run
        // passed holds every one of them, a's included. Otherwise a may be left over.
        if let Kind::Counted(id, count) = k {
            if counted_participants(program, a, id) > count as usize {
                return true;
            }
        }
        traces.iter().enumerate().all(|(b, tr)| {
            let (x, y) = (&program.threads[a], &program.threads[b]);
            if b == a || x.placement.gpu != y.placement.gpu || x.placement.cta != y.placement.cta {
                return true;
            }
            let Some((kb, nb)) = only(tr) else { return true };
            if kb != k {
                return true;
            }
            if let Kind::Counted(..) = k {
                // An arrive goes on whether or not its phase completes: only a sync that b
                // went past says the phase completed.
                let nth = tr.events.iter().filter(|e| kind(e).is_some()).nth(n - 1);
                if !nth.is_some_and(|e| matches!(e.op, TraceOp::Barrier { arrive: false, .. })) {
                    return true;
                }
            }
            if let Kind::Warp(mask) = k {
                let lanes = (warp_lane(program, a), warp_lane(program, b));
                let named = |l: Option<u32>| l.is_some_and(|l| mask & (1 << l) != 0);
                if x.warp != y.warp || !named(lanes.0) || !named(lanes.1) {
                    return true;
                }
            }
            // b passed its n-th: it has more, or ends past its last without waiting there.
            let passed = nb > n || (nb == n && !matches!(tr.stuck, Some(Stuck::Barrier { .. })));
            !passed
        })
    })
}

/// The threads of thread `t`'s CTA whose code has a barrier that may be barrier `id` (its id,
/// or an id only known at run time).
fn counted_participants(program: &Program, t: usize, id: i64) -> usize {
    use crate::program::{Op, Value};
    let here = program.threads[t].placement;
    program
        .threads
        .iter()
        .filter(|th| th.placement.gpu == here.gpu && th.placement.cta == here.cta)
        .filter(|th| {
            th.code.iter().any(|i| match &i.op {
                Op::Barrier { id: Some(Value::Const(c)), .. } => *c == id,
                Op::Barrier { id: Some(_), .. } => true,
                Op::Barrier { id: None, instance, .. } => *instance == id,
                _ => false,
            })
        })
        .count()
}

/// The lane of thread `t` in its warp, from its `bar.warp.sync`s (which know it).
fn warp_lane(program: &Program, t: usize) -> Option<u32> {
    program.threads[t].code.iter().find_map(|i| if let crate::program::Op::WarpBarrier { lane, .. } = i.op { Some(lane) } else { None })
}

/// Explain each stuck thread of a hanging execution in the program's own terms.
fn describe(
    program: &Program,
    s: &EventStructure,
    traces: &[&Trace],
    written: &[BTreeSet<usize>],
    blocked: &[BlockedBarrier],
    seen: &[(usize, i64)],
) -> Vec<StuckThread> {
    let mut out = Vec::new();
    for (t, tr) in traces.iter().enumerate() {
        let thread = &program.threads[t];
        let name = thread.name();
        match &tr.stuck {
            None => {}
            Some(Stuck::Barrier { event }) => {
                let e = s.thread_events[t][*event];
                let instr = &thread.code[s.events[e].instr.expect("barrier events have an instruction")];
                let b = blocked.iter().find(|b| b.event == e).expect("stuck barriers are blocked");
                let reason = barrier_reason(program, instr, b, traces);
                out.push(StuckThread { thread: name, line: instr.line, instruction: instr.text.clone(), reason });
            }
            Some(Stuck::Spin { back_edge, header, reads }) => {
                let values: Vec<String> = reads
                    .iter()
                    .filter_map(|r| {
                        let e = s.thread_events[t][*r];
                        let v = seen.iter().find(|(x, _)| *x == e)?.1;
                        let loc = s.events[e].location?;
                        if s.is_mbarrier(loc) {
                            return Some(format!(
                                "{} in state ({})",
                                crate::program::naming::location_log_name(&program.location_name(loc)),
                                crate::program::mbarrier::MbState::describe(v)
                            ));
                        }
                        Some(format!("{}={}", crate::program::naming::location_log_name(&program.location_name(loc)), v))
                    })
                    .collect();
                let header_line = thread.code[*header].line;
                let instr = &thread.code[*back_edge];
                let writers = writers_of(program, s, traces, written, t, reads);
                let reason = format!(
                    "spins forever in the loop of lines {}-{}: it keeps reading {} (the final value{} in this execution) and never exits{}",
                    header_line,
                    instr.line,
                    if values.is_empty() { "the same values".to_string() } else { values.join(", ") },
                    if values.len() == 1 { "" } else { "s" },
                    writers
                );
                out.push(StuckThread { thread: name, line: instr.line, instruction: instr.text.clone(), reason });
            }
        }
    }
    out
}

/// Why the barrier of `instr` never completes, in the program's terms.
fn barrier_reason(program: &Program, instr: &crate::program::Instr, b: &BlockedBarrier, traces: &[&Trace]) -> String {
    let plural = if b.expected == 1 { "" } else { "s" };
    let mut reason = if b.arrived > b.expected {
        // PTX's counted barrier: the arrivals complete it `expected` at a time; this one is left over.
        let left = b.arrived % b.expected.max(1);
        format!(
            "{} completes each time {} thread{plural} arrive; {} arrive, so {left} wait{} for arrivals that never come (PTX ISA 9.7.13.1; --reading dat3m-barriers lets any {} or more complete it)",
            instr.text,
            b.expected,
            b.arrived,
            if left == 1 { "s" } else { "" },
            b.expected
        )
    } else if matches!(instr.op, crate::program::Op::WarpBarrier { .. }) {
        format!(
            "{} waits for every lane of its membermask that the test has to execute a bar.warp.sync with the same membermask (PTX ISA 9.7.13.2); {} of {} do",
            instr.text, b.arrived, b.expected
        )
    } else if matches!(instr.op, crate::program::Op::ClusterBarrier { .. }) {
        format!(
            "{} waits for every thread of the cluster that has not exited (PTX ISA 9.7.13.3); {} of {} arrive",
            instr.text, b.arrived, b.expected
        )
    } else {
        format!("{} expects {} thread{plural}, {} can arrive", instr.text, b.expected, b.arrived)
    };
    if b.other_ids > 0 {
        reason.push_str(&format!(
            " ({} other arrival{} on another barrier id)",
            b.other_ids,
            if b.other_ids == 1 { " is" } else { "s are" }
        ));
    }
    let missing: Vec<String> = b
        .missing
        .iter()
        .map(|&t| {
            let state = match &traces[t].stuck {
                Some(Stuck::Barrier { .. }) => "is stuck at another barrier",
                Some(Stuck::Spin { .. }) => "is stuck in a loop",
                None => "finishes without reaching it",
            };
            format!("{} {}", program.threads[t].name(), state)
        })
        .collect();
    if !missing.is_empty() {
        reason.push_str(&format!(": {}", missing.join(", ")));
    }
    reason
}

/// A note on who could have written the value the loop waits for: the other threads that
/// write a polled location in some run (by an instruction of their own or an async operation
/// they issue).
fn writers_of(program: &Program, s: &EventStructure, traces: &[&Trace], written: &[BTreeSet<usize>], t: usize, reads: &[usize]) -> String {
    let locs: BTreeSet<usize> = reads.iter().filter_map(|r| s.events[s.thread_events[t][*r]].physical).collect();
    let writers: Vec<usize> = (0..program.threads.len()).filter(|&u| u != t && !written[u].is_disjoint(&locs)).collect();
    if writers.is_empty() {
        " (no other thread writes what it polls)".to_string()
    } else {
        // In a hanging execution every other run has either finished or is stuck itself, so
        // nothing will change what the poll reads; say which, as that names where to look.
        let name = |u: &usize| program.threads[*u].name();
        let (stuck, finished): (Vec<usize>, Vec<usize>) = writers.iter().partition(|&&u| traces[u].stuck.is_some());
        let list = |v: &[usize]| v.iter().map(name).collect::<Vec<_>>().join(", ");
        match (stuck.is_empty(), finished.is_empty()) {
            (false, true) => format!(" (every other writer of it is stuck: {})", list(&stuck)),
            (true, false) => format!(" (every other writer of it has finished: {})", list(&finished)),
            _ => format!(" (every other writer of it has finished ({}) or is stuck ({}))", list(&finished), list(&stuck)),
        }
    }
}
