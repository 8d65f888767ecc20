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
use crate::exec::search::{search, Budget, Candidate, LazyModel, PrunePlan, SearchGoal, StaticEnv, Visit};
use crate::exec::structure::{resolve_barriers, BlockedBarrier, EventStructure};
use crate::exec::trace::{explore_until, Stuck, Trace};
use crate::program::{Address, Op, Program};
use std::collections::BTreeSet;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

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
    // Whether a run hangs does not depend on which of two interchangeable threads runs it.
    let combos = TraceCombinations::new(program, options).up_to_symmetry();
    let plan = PrunePlan::for_model(model);
    let mut budget = Budget::new(&opts.limits, opts.deadline);
    let mut found: Option<Vec<StuckThread>> = None;
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
            let mut visit = Visit(|cand: &Candidate, _: &crate::cat::Evaluation| {
                // Fairness: every read of the failed iteration reads a co-maximal write.
                let rf_of = cand.rf.inverse();
                let fair = polls.iter().all(|&r| rf_of.successors(r).iter().all(|w| cand.co.successors(w).is_empty()));
                if fair {
                    witness = Some(polls.iter().map(|&r| (r, cand.value_of(r))).collect());
                }
                !fair
            });
            search(&statics, &lazy, &plan, &goal, budget, &mut visit)?;
            if let Some(seen) = witness {
                found = Some(describe(program, structure, traces, &resolution.blocked, &seen));
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    })?;
    let (status, hang) = match found {
        Some(h) => (LivenessStatus::MayHang, h),
        None => (LivenessStatus::Ok, Vec::new()),
    };
    Ok(LivenessOutcome { status, hang, loop_cut, elapsed: start.elapsed() })
}

/// Explain each stuck thread of a hanging execution in the program's own terms.
fn describe(
    program: &Program,
    s: &EventStructure,
    traces: &[&Trace],
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
                let writers = writers_of(program, s, traces, t, reads);
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

/// A note on who could have written the value the loop waits for.
fn writers_of(program: &Program, s: &EventStructure, traces: &[&Trace], t: usize, reads: &[usize]) -> String {
    let locs: BTreeSet<usize> = reads.iter().filter_map(|r| s.events[s.thread_events[t][*r]].physical).collect();
    let mut writers = Vec::new();
    for (u, th) in program.threads.iter().enumerate() {
        if u == t {
            continue;
        }
        let writes = th.code.iter().any(|i| match &i.op {
            Op::Store { addr: Address::Location(l), .. } | Op::Rmw { addr: Address::Location(l), .. } => {
                locs.contains(&program.locations[*l].physical)
            }
            _ => false,
        });
        if writes {
            writers.push(u);
        }
    }
    if writers.is_empty() {
        " (no other thread writes what it polls)".to_string()
    } else if writers.iter().all(|&u| traces[u].stuck.is_some()) {
        let names: Vec<String> = writers.iter().map(|&u| format!("P{}", program.threads[u].id)).collect();
        format!(" (every other writer of it is stuck: {})", names.join(", "))
    } else {
        String::new()
    }
}

/// A necessary condition for a combination of runs to hang, checked on the runs alone: a run
/// that polls an mbarrier forever reads, under fairness, the object's final state, so some
/// final state the runs' updates can reach must make every such poll return False. Most
/// combinations of a pipeline fail it (a consumer cannot wait forever for a phase that the
/// producer's run completes), and are dropped before any event structure is built.
struct PollFilter<'p> {
    program: &'p Program,
    /// Per object and set of runs touching it (by address): whether the polls can fail.
    memo: std::collections::HashMap<(usize, Vec<usize>), bool>,
}

/// An update of an mbarrier object in a run: its operation (None: an ordinary store of
/// `value`), the result its thread saw, and the position and performer in the run.
struct RunUnit {
    op: Option<crate::exec::mbarrier::MbUpdate>,
    value: i64,
    result: Option<i64>,
    run: usize,
    index: usize,
    agent: Option<usize>,
}

impl<'p> PollFilter<'p> {
    fn new(program: &'p Program) -> Self {
        PollFilter { program, memo: Default::default() }
    }

    fn allows(&mut self, traces: &[&Trace]) -> bool {
        let program = self.program;
        let physical = |e: &crate::exec::trace::TraceEvent| e.location.map(|l| program.locations[l].physical);
        let on_object = |e: &crate::exec::trace::TraceEvent| {
            e.location.is_some_and(|l| program.variable_of(l).kind == crate::program::VariableKind::Mbarrier)
        };
        // Stuck polls on mbarrier objects, per object.
        let mut polls: std::collections::BTreeMap<usize, Vec<crate::exec::mbarrier::MbUpdate>> = Default::default();
        for tr in traces {
            if let Some(Stuck::Spin { reads, .. }) = &tr.stuck {
                for &r in reads {
                    let e = &tr.events[r];
                    if let (Some(p), Some(op), true) = (physical(e), e.mb_op, on_object(e)) {
                        polls.entry(p).or_default().push(op);
                    }
                }
            }
        }
        for (p, ops) in polls {
            let runs: Vec<usize> = traces.iter().map(|t| *t as *const Trace as usize).collect();
            if let Some(&ok) = self.memo.get(&(p, runs.clone())) {
                if !ok {
                    return false;
                }
                continue;
            }
            let mut units = Vec::new();
            for (run, tr) in traces.iter().enumerate() {
                for (index, e) in tr.events.iter().enumerate() {
                    if e.op != crate::exec::trace::TraceOp::Write || physical(e) != Some(p) {
                        continue;
                    }
                    let result = e.rmw_partner.and_then(|r| tr.events[r].mb_result);
                    units.push(RunUnit { op: e.mb_op, value: e.value, result, run, index, agent: e.agent });
                }
            }
            let ok = final_states(&units, program.physical[p].init)
                .is_none_or(|finals| finals.iter().any(|&v| ops.iter().all(|op| op.apply(v).result == 0)));
            self.memo.insert((p, runs), ok);
            if !ok {
                return false;
            }
        }
        true
    }
}

/// The values an object can end with after all `units` (each placed after its predecessors in
/// its run: the thread's own earlier updates, and for an async operation's update every
/// earlier event of its thread), starting from `init`. None when there are too many states to
/// tell (then nothing is concluded).
fn final_states(units: &[RunUnit], init: i64) -> Option<Vec<i64>> {
    const MAX_STATES: usize = 100_000;
    let k = units.len();
    if k > 128 {
        return None;
    }
    let before = |a: &RunUnit, b: &RunUnit| a.run == b.run && a.index < b.index && (a.agent.is_none() || a.agent == b.agent);
    let preds: Vec<u128> = (0..k).map(|u| (0..k).filter(|&v| before(&units[v], &units[u])).fold(0u128, |m, v| m | (1 << v))).collect();
    let all: u128 = if k == 128 { u128::MAX } else { (1u128 << k) - 1 };
    let mut seen: std::collections::HashSet<(u128, i64)> = Default::default();
    let mut stack = vec![(0u128, init)];
    let mut finals = Vec::new();
    while let Some((placed, v)) = stack.pop() {
        if !seen.insert((placed, v)) {
            continue;
        }
        if seen.len() > MAX_STATES {
            return None;
        }
        if placed == all {
            finals.push(v);
            continue;
        }
        for (u, unit) in units.iter().enumerate() {
            if placed & (1 << u) != 0 || preds[u] & !placed != 0 {
                continue;
            }
            let next = match unit.op {
                Some(op) => {
                    let eff = op.apply(v);
                    if let (Some(want), crate::exec::mbarrier::MbUpdate::Arrive { .. }) = (unit.result, op) {
                        if want != eff.result {
                            continue;
                        }
                    }
                    eff.write.unwrap_or(v)
                }
                None => unit.value,
            };
            stack.push((placed | (1 << u), next));
        }
    }
    Some(finals)
}
