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

use crate::cat::CatModel;
use crate::check::{each_structure_where, RunError, RunOptions, TraceCombinations};
use crate::clock::Instant;
use crate::exec::search::{search, Budget, Candidate, LazyModel, PrunePlan, SearchGoal, StaticEnv, Visit};
use crate::exec::structure::{resolve_barriers, BlockedBarrier, EventStructure};
use crate::exec::trace::{explore_until, Stuck, Trace};
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
    /// Undefined behaviour in the hanging execution reported (before the threads stop): such
    /// an execution has no final state, so the verdict's search never sees it.
    pub undefined: Vec<crate::findings::Finding>,
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
                for t in &self.hang {
                    s.push_str(&format!("  {} stuck at line {} `{}`: {}\n", t.thread, t.line, t.instruction, t.reason));
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
            s.push_str("  (a loop with side effects was cut by the unrolling bound; hangs inside it are not searched)\n");
        }
        s
    }
}

/// Search for a fair execution that never terminates.
pub fn check_liveness(program: &Program, model: &CatModel, opts: &RunOptions) -> Result<LivenessOutcome, RunError> {
    let start = Instant::now();
    let opts = &opts.starting_now();
    let (_domains, per_thread) = explore_until(program, &opts.limits, true, opts.deadline)?;
    let loop_cut = per_thread.iter().any(|t| t.cut);
    let options: Vec<Vec<&Trace>> = per_thread.iter().map(|t| t.traces.iter().chain(&t.stuck).collect()).collect();
    // What each thread (its async operations included) writes in some run, for the hints.
    let written: Vec<BTreeSet<usize>> = options
        .iter()
        .map(|runs| {
            runs.iter()
                .flat_map(|tr| tr.events.iter())
                .filter(|e| e.op == crate::exec::trace::TraceOp::Write)
                .filter_map(|e| e.location.map(|l| program.locations[l].physical))
                .collect()
        })
        .collect();
    // Whether a run hangs does not depend on which of two interchangeable threads runs it.
    let combos = TraceCombinations::new(program, options).up_to_symmetry();
    let plan = PrunePlan::for_model(model);
    let mut budget = Budget::new(&opts.limits, opts.deadline);
    let mut found: Option<Vec<StuckThread>> = None;
    let mut undefined: Vec<crate::findings::Finding> = Vec::new();
    let mut polls_can_fail = PollFilter::new(program);
    let mut keep = |traces: &[&Trace]| traces.iter().any(|t| t.stuck.is_some()) && polls_can_fail.allows(traces);
    each_structure_where(program, &combos, &mut budget, &mut keep, &mut |traces, structure, budget| {
        // Global indices of the barrier events stuck runs wait at, and of the polls that must
        // see final values.
        let mut waiting = BTreeSet::new();
        let mut polls = Vec::new();
        for (t, tr) in traces.iter().enumerate() {
            match &tr.stuck {
                Some(Stuck::Barrier { event }) => {
                    waiting.insert(structure.thread_events[t][*event]);
                }
                Some(Stuck::Spin { reads, .. }) => polls.extend(reads.iter().map(|r| structure.thread_events[t][*r])),
                None => {}
            }
        }
        let goal = SearchGoal { final_reads: polls.clone() };
        for resolution in resolve_barriers(structure) {
            let blocked: BTreeSet<usize> = resolution.blocked.iter().map(|b| b.event).collect();
            if blocked != waiting {
                continue;
            }
            let statics = StaticEnv::new(structure, &resolution);
            let lazy = LazyModel::new(model, &statics);
            let mut witness: Option<Vec<(usize, i64)>> = None;
            let mut visit = Visit(|cand: &Candidate, eval: &crate::cat::Evaluation| {
                // Fairness: every read of the failed iteration reads a co-maximal write.
                let rf_of = cand.rf.inverse();
                let fair = polls.iter().all(|&r| rf_of.successors(r).iter().all(|w| cand.co.successors(w).is_empty()));
                if fair {
                    witness = Some(polls.iter().map(|&r| (r, cand.value_of(r))).collect());
                    let found = crate::findings::of_execution(cand, &eval.fired_flags(), lazy.get().ok());
                    let mut set = BTreeSet::new();
                    for f in found.undefined {
                        crate::findings::insert(&mut set, f);
                    }
                    undefined = set.into_iter().collect();
                }
                !fair
            });
            search(&statics, &lazy, &plan, &goal, budget, &mut visit)?;
            if let Some(seen) = witness {
                found = Some(describe(program, structure, traces, &written, &resolution.blocked, &seen));
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    })?;
    let (status, hang) = match found {
        Some(h) => (LivenessStatus::MayHang, h),
        None => (LivenessStatus::Ok, Vec::new()),
    };
    Ok(LivenessOutcome { status, hang, loop_cut, undefined, elapsed: start.elapsed() })
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
        let name = format!("P{}", thread.id);
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
                        if program.variable_of(loc).kind == crate::program::VariableKind::Mbarrier {
                            return Some(format!(
                                "{} in state ({})",
                                program.locations[loc].name,
                                crate::exec::mbarrier::MbState::describe(v)
                            ));
                        }
                        Some(format!("{}={}", program.locations[loc].name, v))
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
    let mut reason =
        format!("{} expects {} thread{}, {} can arrive", instr.text, b.expected, if b.expected == 1 { "" } else { "s" }, b.arrived);
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
            format!("P{} {}", program.threads[t].id, state)
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
        let name = |u: &usize| format!("P{}", program.threads[*u].id);
        let (stuck, finished): (Vec<usize>, Vec<usize>) = writers.iter().partition(|&&u| traces[u].stuck.is_some());
        let list = |v: &[usize]| v.iter().map(name).collect::<Vec<_>>().join(", ");
        match (stuck.is_empty(), finished.is_empty()) {
            (false, true) => format!(" (every other writer of it is stuck: {})", list(&stuck)),
            (true, false) => format!(" (every other writer of it has finished: {})", list(&finished)),
            _ => format!(" (every other writer of it has finished ({}) or is stuck ({}))", list(&finished), list(&stuck)),
        }
    }
}

/// A necessary condition for a combination of runs to hang, checked on the runs alone, object
/// by object. The updates of an mbarrier object form one history (digest §14.4), each placed
/// after its static predecessors (the thread's earlier events, the issue of its async
/// operation); every wait or test of the object in a run reads one state of that history at
/// or after its thread's earlier updates and before its later ones, and must see there the
/// result its run took; and a run that polls the object forever reads, under fairness, the
/// final state and sees its poll fail. These are the constraints the search's state graphs
/// (`exec::mbgraph`) impose, without the rest of the model, so a combination with no such
/// history for some object has no hanging execution. Most combinations of a pipeline fail
/// it (a consumer cannot wait forever for a phase that the producer's run completes; a
/// producer's run cannot pass a wait for a phase its stuck consumers never arrived on), and
/// are dropped before any event structure is built.
struct PollFilter<'p> {
    program: &'p Program,
    /// Each run's steps on each mbarrier object (by the run's address): (object, the id of
    /// the step list in `lists`).
    steps_of: rustc_hash::FxHashMap<usize, Vec<(usize, usize)>>,
    /// Distinct step lists of one run on one object (`run` left 0), and their ids: runs that
    /// stop at different points after their last step on an object share one.
    lists: Vec<Vec<Step>>,
    list_ids: rustc_hash::FxHashMap<Vec<Step>, usize>,
    /// Per object and the step lists of the runs touching it: whether a history exists.
    memo: rustc_hash::FxHashMap<(usize, Vec<(usize, usize)>), bool>,
}

/// One step of an object's history, from one run: an update (its operation, None for an
/// ordinary store of `value`, and the result its thread saw), a read that must see `result`,
/// or a poll that reads the final state and fails.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Step {
    kind: StepKind,
    run: usize,
    index: usize,
    agent: Option<usize>,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum StepKind {
    Update { op: Option<crate::exec::mbarrier::MbUpdate>, value: i64, result: Option<i64> },
    Read { op: crate::exec::mbarrier::MbUpdate, result: i64 },
    FinalPoll { op: crate::exec::mbarrier::MbUpdate },
}

impl<'p> PollFilter<'p> {
    fn new(program: &'p Program) -> Self {
        PollFilter { program, steps_of: Default::default(), lists: Vec::new(), list_ids: Default::default(), memo: Default::default() }
    }

    /// The steps of one run on each mbarrier object, in the run's order (`run` left 0).
    fn run_steps(program: &Program, tr: &Trace) -> std::collections::BTreeMap<usize, Vec<Step>> {
        use crate::exec::trace::TraceOp;
        let object_of = |e: &crate::exec::trace::TraceEvent| {
            e.location
                .filter(|&l| program.variable_of(l).kind == crate::program::VariableKind::Mbarrier)
                .map(|l| program.locations[l].physical)
        };
        let stuck_reads: &[usize] = match &tr.stuck {
            Some(Stuck::Spin { reads, .. }) => reads,
            _ => &[],
        };
        let mut out: std::collections::BTreeMap<usize, Vec<Step>> = Default::default();
        for (index, e) in tr.events.iter().enumerate() {
            let Some(p) = object_of(e) else { continue };
            let kind = match (&e.op, e.mb_op) {
                (TraceOp::Write, op) => {
                    let result = e.rmw_partner.and_then(|r| tr.events[r].mb_result);
                    StepKind::Update { op, value: e.value, result }
                }
                (TraceOp::Read, Some(op)) if e.rmw_partner.is_none() && stuck_reads.contains(&index) => StepKind::FinalPoll { op },
                (TraceOp::Read, Some(op)) if e.rmw_partner.is_none() => match e.mb_result {
                    Some(result) => StepKind::Read { op, result },
                    None => continue,
                },
                // Ordinary loads of the object, the read halves of updates, markers.
                _ => continue,
            };
            out.entry(p).or_default().push(Step { kind, run: 0, index, agent: e.agent });
        }
        out
    }

    fn allows(&mut self, traces: &[&Trace]) -> bool {
        let mut touching: std::collections::BTreeMap<usize, Vec<(usize, usize)>> = Default::default();
        for (run, tr) in traces.iter().enumerate() {
            let key = *tr as *const Trace as usize;
            if !self.steps_of.contains_key(&key) {
                let ids = Self::run_steps(self.program, tr)
                    .into_iter()
                    .map(|(p, list)| {
                        let next = self.lists.len();
                        let id = *self.list_ids.entry(list.clone()).or_insert(next);
                        if id == next {
                            self.lists.push(list);
                        }
                        (p, id)
                    })
                    .collect();
                self.steps_of.insert(key, ids);
            }
            for &(p, id) in &self.steps_of[&key] {
                touching.entry(p).or_default().push((run, id));
            }
        }
        // An object no run polls forever can still rule the combination out: a run may have
        // passed a wait on it that the other runs' updates never complete.
        for (p, lists) in touching {
            let ok = match self.memo.get(&(p, lists.clone())) {
                Some(&ok) => ok,
                None => {
                    let steps: Vec<Step> =
                        lists.iter().flat_map(|&(run, id)| self.lists[id].iter().map(move |s| Step { run, ..s.clone() })).collect();
                    let ok = history_exists(&steps, self.program.physical[p].init).unwrap_or(true);
                    self.memo.insert((p, lists), ok);
                    ok
                }
            };
            if !ok {
                return false;
            }
        }
        true
    }
}

/// Whether some history of one object places all `steps` (each after its predecessors in its
/// run: the thread's own earlier steps, and for an async operation's update every earlier
/// event of its thread; a final poll after every update), starting from `init`, with every
/// read seeing its result and every final poll failing. None when there are too many states
/// to tell (then nothing is concluded).
///
/// Reads are placed as soon as they can be: a read changes no value, so placing it at the
/// first state that gives its result only enables its run's later steps earlier, and any
/// history that places it later still works with it placed there. Only the order of the
/// updates is searched.
fn history_exists(steps: &[Step], init: i64) -> Option<bool> {
    const MAX_STATES: usize = 100_000;
    let k = steps.len();
    if k > 128 {
        return None;
    }
    debug_assert!(steps.windows(2).all(|w| (w[0].run, w[0].index) < (w[1].run, w[1].index)), "steps in run order");
    let is_update = |s: &Step| matches!(s.kind, StepKind::Update { .. });
    let before = |a: &Step, b: &Step| {
        (matches!(b.kind, StepKind::FinalPoll { .. }) && is_update(a))
            || (a.run == b.run && a.index < b.index && (a.agent.is_none() || a.agent == b.agent))
    };
    let preds: Vec<u128> = (0..k).map(|u| (0..k).filter(|&v| before(&steps[v], &steps[u])).fold(0u128, |m, v| m | (1 << v))).collect();
    let all: u128 = if k == 128 { u128::MAX } else { (1u128 << k) - 1 };
    let reads: Vec<usize> = (0..k).filter(|&u| !is_update(&steps[u])).collect();
    let updates: Vec<usize> = (0..k).filter(|&u| is_update(&steps[u])).collect();
    // Place every enabled read that sees its result at `v`. Steps come in run order, and a
    // read waits only for earlier steps of its run (a final poll for every update, all placed
    // by then), so one pass in order places a run's consecutive reads.
    let close = |mut placed: u128, v: i64| {
        for &u in &reads {
            if placed & (1 << u) != 0 || preds[u] & !placed != 0 {
                continue;
            }
            let sees = match steps[u].kind {
                StepKind::Read { op, result } => op.apply(v).result == result,
                StepKind::FinalPoll { op } => op.apply(v).result == 0,
                StepKind::Update { .. } => false,
            };
            if sees {
                placed |= 1 << u;
            }
        }
        placed
    };
    let mut seen: rustc_hash::FxHashSet<(u128, i64)> = Default::default();
    let mut stack = vec![(close(0, init), init)];
    while let Some((placed, v)) = stack.pop() {
        if placed == all {
            return Some(true);
        }
        if !seen.insert((placed, v)) {
            continue;
        }
        if seen.len() > MAX_STATES {
            return None;
        }
        for &u in &updates {
            if placed & (1 << u) != 0 || preds[u] & !placed != 0 {
                continue;
            }
            let next = match steps[u].kind {
                StepKind::Update { op: Some(op), result, .. } => {
                    let eff = op.apply(v);
                    if let (Some(want), crate::exec::mbarrier::MbUpdate::Arrive { .. }) = (result, op) {
                        if want != eff.result {
                            continue;
                        }
                    }
                    eff.write.unwrap_or(v)
                }
                StepKind::Update { op: None, value, .. } => value,
                StepKind::Read { .. } | StepKind::FinalPoll { .. } => continue,
            };
            let placed = placed | (1 << u);
            stack.push((close(placed, next), next));
        }
    }
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::{history_exists, Step, StepKind};
    use crate::exec::mbarrier::{MbState, MbUpdate};

    const ARRIVE: MbUpdate = MbUpdate::Arrive { count: 1, expect_tx: 0, no_complete: false, drop: false };
    const WAIT_PHASE_0: MbUpdate = MbUpdate::Wait { parity: true, operand: 0 };

    fn step(run: usize, index: usize, kind: StepKind) -> Step {
        Step { kind, run, index, agent: None }
    }

    fn update(op: MbUpdate) -> StepKind {
        StepKind::Update { op: Some(op), value: 0, result: None }
    }

    #[test]
    fn a_poll_cannot_fail_forever_on_a_phase_the_runs_complete() {
        let init = MbState::initialised(1);
        let steps = [step(0, 0, update(ARRIVE)), step(1, 0, StepKind::FinalPoll { op: WAIT_PHASE_0 })];
        assert_eq!(history_exists(&steps, init), Some(false));
        // Without the arrival, the poll fails in the final state: a hang is possible.
        assert_eq!(history_exists(&steps[1..], init), Some(true));
    }

    #[test]
    fn a_run_cannot_pass_a_wait_for_arrivals_that_never_come() {
        // Two arrivals expected; run 1 passed the wait for the phase, run 0 arrived once.
        let init = MbState::initialised(2);
        let steps = [step(0, 0, update(ARRIVE)), step(1, 0, StepKind::Read { op: WAIT_PHASE_0, result: 1 })];
        assert_eq!(history_exists(&steps, init), Some(false));
        let both = [step(0, 0, update(ARRIVE)), steps[1].clone(), step(2, 0, update(ARRIVE))];
        assert_eq!(history_exists(&both, init), Some(true));
    }

    #[test]
    fn a_read_sees_a_state_between_its_own_runs_updates() {
        // Run 0 arrives, then waits for the phase it just completed: the wait cannot read the
        // state before its own arrival, so it cannot return False there.
        let init = MbState::initialised(1);
        let steps = [step(0, 0, update(ARRIVE)), step(0, 1, StepKind::Read { op: WAIT_PHASE_0, result: 0 })];
        assert_eq!(history_exists(&steps, init), Some(false));
        let steps = [step(0, 0, StepKind::Read { op: WAIT_PHASE_0, result: 0 }), step(0, 1, update(ARRIVE))];
        assert_eq!(history_exists(&steps, init), Some(true));
    }
}
