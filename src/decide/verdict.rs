//! The verdict mode: every consistent execution's final state tallied against the condition,
//! with the findings of each (undefined behaviour, races, flags).

use super::driver::{AtResolution, Hooks, RunError, SearchSite};
use crate::cat::CatModel;
use crate::config::Config;
use crate::decide::findings::Finding;
use crate::exec::search::{search, Budget, Candidate, SearchGoal, SearchStats, Visit};
use crate::exec::structure::BarrierResolution;
use crate::exec::structure::EventStructure;
use crate::exec::trace::Trace;
use crate::exec::trace::{advance, ExploreError, ThreadTraces};
use crate::litmus::ast::Quantifier;
use crate::program::{Observable, Program};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::time::Duration;

/// A final state: the values of the observables, in `Outcome::observables` order.
pub type State = Vec<i64>;

/// Everything a report needs about one test under one model.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub test: String,
    pub quantifier: Quantifier,
    pub condition: String,
    pub observables: Vec<Observable>,
    pub observable_names: Vec<String>,
    /// The observables as herd7's log lexer (mcompare7) reads them: `1:r3` for `1:%r3`,
    /// `s[1]` for the word `s+4` (`herdlog::log_names`).
    pub log_names: Vec<String>,
    /// The float type of each observable whose type says float (`program::naming::observable_float_type`):
    /// reports show its values as floats next to their bits.
    pub float_types: Vec<Option<crate::program::types::Ty>>,
    /// herd7's `Hash=` line: a digest of the test's initial state and code (`herdlog::test_hash`).
    pub hash: String,
    /// `--speedcheck` stopped the search at the first execution that settled the condition:
    /// the counts, states and findings are those found by then.
    pub speedcheck_stopped: bool,
    /// Checks of the model that were not applied (`--skipchecks`, `--through`).
    pub skipped_checks: Vec<String>,
    /// Distinct final states of consistent executions, and whether each satisfies the condition.
    pub states: BTreeMap<State, bool>,
    /// Consistent executions whose final state satisfies / does not satisfy the proposition.
    pub positive: u64,
    pub negative: u64,
    /// Some run was cut by the loop unrolling bound (herd7's `Loop`).
    pub loop_cut: bool,
    /// The unrolling bound the runs were explored with (`--unroll`, or the last bound tried).
    pub unroll: usize,
    /// The loops (other than awaits) some run iterated in, with what the runs did there.
    pub loops: Vec<LoopReport>,
    /// Accesses not checked: their global addresses depend on unknown values
    /// (`exec::trace::ThreadTraces::unchecked`), in thread and line order.
    pub unchecked: Vec<UncheckedAccess>,
    /// The unrolling bounds tried, in order, when the bound was raised automatically (empty
    /// with `--unroll N`).
    pub bounds_tried: Vec<usize>,
    /// Why the bound was not raised further while runs were still cut: the answer stopped
    /// changing, the largest bound was reached, or a limit stopped the next bound's search.
    pub unroll_stop: Option<String>,
    /// Trace combinations in which some barrier can never complete (these executions hang).
    pub blocked_combinations: u64,
    /// No execution completes, and the liveness search found no hanging execution either: the
    /// model rejects every candidate execution, complete or not (set by
    /// `Decider::settle_without_completions`, only when no execution completes).
    pub no_consistent_execution: bool,
    pub stats: SearchStats,
    pub elapsed: Duration,
    /// Names of model flags (`flag ~empty ...`) that fired in some consistent execution.
    pub flags: Vec<String>,
    /// Undefined behaviour found in some consistent execution (`undefined_unless` checks).
    pub undefined: BTreeSet<Finding>,
    /// Data races found in some consistent execution (`flag` checks named as race checks:
    /// the name contains `race`), except those on a pair an undefined finding already names.
    pub races: BTreeSet<Finding>,
    /// Other `flag` checks of the model that fired, with the events they name (no hint).
    pub flag_findings: BTreeSet<Finding>,
    /// The reading of every exposed ambiguity (digest §14.10) the run used.
    pub readings: Vec<String>,
    /// Set when a limit (`--timeout`, `--max-candidates`) stopped the search: the message. The
    /// outcome then holds what was found before, and decides nothing but Undefined.
    pub incomplete: Option<String>,
    /// The enumeration of final states stopped at its work budget
    /// (`Config::enumeration_budget`, lifted by `--all-states`): the states, counts and
    /// findings are those of the executions enumerated by then.
    pub enumeration_cut: bool,
    /// Set when the outcome-directed search decided the verdict after the enumeration stopped
    /// at its budget (`decide::directed`): the states, counts and findings are partial.
    pub partial_states: Option<PartialStates>,
    /// Where the threads fell into groups decided apart (`decide::groups`: more than one, each
    /// whole clusters sharing nothing one of them writes), the CTAs of each group; else empty.
    pub groups_apart: Vec<Vec<i64>>,
}

/// How the verdict was decided when the enumeration of final states stopped at its budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartialStates {
    /// The budget the enumeration stopped at, in consistent executions (`Config::enumeration_budget`).
    pub budget: u64,
    /// Whether the directed search found an execution reaching the outcome.
    pub witness: bool,
    /// Disjuncts of the condition the directed search went through.
    pub disjuncts: usize,
}

/// One loop of one thread (other than an await: those are never unrolled), and what the runs
/// did there.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LoopReport {
    /// `P<id>` as written in the test.
    pub thread: String,
    /// The lines of the loop's first instruction and of its back edge.
    pub lines: (usize, usize),
    /// The most times one instance of the loop iterated back in a complete run.
    pub iterations: usize,
    /// Some run iterated back more often than the bound allows and was cut.
    pub cut: bool,
}

/// An instruction whose global accesses no run checked: its global address depends on an
/// unknown value (a parameter byte not given, an abstracted result), so it has no events: the
/// values it reads are unknown, its races and the bytes it touches are not checked.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct UncheckedAccess {
    /// `P<id>` as written in the test.
    pub thread: String,
    pub line: usize,
    pub instruction: String,
    /// What the instruction does in global memory: `global load`, `global store`, `copy from
    /// global memory`, `tensor copy`, `bulk prefetch`.
    pub access: &'static str,
    /// Where the unknown value comes from (`UnknownOrigin::describe`).
    pub because: String,
    /// The flag that gives the value, where a parameter byte is the cause (`--param param_0+32=VALUE`).
    pub fix: Option<String>,
}

impl LoopReport {
    /// The loops of `loops`, each with the loop of the same lines, iterations and cut in the
    /// lanes after it of its warp column: the first lane's report, the last lane's name.
    pub fn lanes_alike(loops: &[LoopReport]) -> Vec<(&LoopReport, &str)> {
        let mut out: Vec<(&LoopReport, &str)> = Vec::new();
        for l in loops {
            let alike = |(first, last): &&mut (&LoopReport, &str)| {
                (first.lines, first.iterations, first.cut) == (l.lines, l.iterations, l.cut)
                    && crate::program::naming::next_lane(last, &l.thread)
            };
            match out.iter_mut().find(alike) {
                Some(group) => group.1 = &l.thread,
                None => out.push((l, &l.thread)),
            }
        }
        out
    }

    /// `P1.0-P1.31 lines 4-6`: this loop in the lanes up to `last` (`P1 lines 4-6` with `last`
    /// its own thread).
    pub fn place_to(&self, last: &str) -> String {
        format!("{} lines {}-{}", crate::program::naming::lane_range(&self.thread, last), self.lines.0, self.lines.1)
    }
}

/// The answer to the question a litmus test asks, with undefined behaviour taking precedence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Verdict {
    /// Some consistent execution satisfies the condition's proposition.
    Allowed,
    /// No consistent execution satisfies it.
    Forbidden,
    /// Some consistent execution has undefined behaviour: the program has no defined outcomes.
    Undefined,
    /// A limit stopped the search before it could decide.
    Unknown,
    /// The search finished, but what it explored cannot answer the question: the unrolling
    /// bound cut runs and no complete run reaches the outcome, no execution completes at all
    /// (every one hangs), or the model rejects every execution. `Outcome::inconclusive` says
    /// which.
    Inconclusive,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Allowed => "Allowed",
            Verdict::Forbidden => "Forbidden",
            Verdict::Undefined => "Undefined",
            Verdict::Unknown => "Unknown",
            Verdict::Inconclusive => "Inconclusive",
        }
    }
}

impl Outcome {
    /// The condition with the observables named as in the state lines (`1:r3`, `s[1]`).
    pub fn log_condition(&self) -> String {
        crate::program::naming::log_condition(&self.condition, &self.observable_names, &self.log_names)
    }

    /// Allowed / Forbidden / Undefined (digest §14.8 item 6: UB in any consistent execution
    /// makes the whole program undefined, C-style).
    pub fn verdict(&self) -> Verdict {
        if !self.undefined.is_empty() {
            Verdict::Undefined
        } else if self.incomplete.is_some() {
            Verdict::Unknown
        } else if self.positive > 0 {
            Verdict::Allowed
        } else if self.inconclusive().is_some() {
            Verdict::Inconclusive
        } else {
            Verdict::Forbidden
        }
    }

    /// Why no verdict follows from a finished search that never reached the outcome: a run cut
    /// by the unrolling bound might reach it if it went on, and with no complete execution at
    /// all "never reached" says nothing. None when the search decides.
    pub fn inconclusive(&self) -> Option<String> {
        if !self.undefined.is_empty() || self.incomplete.is_some() || self.positive > 0 {
            return None;
        }
        if self.loop_cut {
            let none = if self.stats.consistent == 0 { "no run completes within it" } else { "no complete run reaches the outcome" };
            Some(format!("{} and {none}; a longer run might reach it ({})", self.bound_cut(), self.raise_hint()))
        } else if self.stats.consistent == 0 && self.no_consistent_execution {
            Some("no execution is consistent with the model: it rejects every candidate execution, complete or hanging, so no final state exists to satisfy the condition".to_string())
        } else if self.stats.consistent == 0 {
            let barriers = match self.blocked_combinations {
                0 => String::new(),
                n => format!(" ({n} combination(s) of runs wait at a barrier that never completes)"),
            };
            Some(format!("no execution completes: no consistent execution runs every thread to its end{barriers}, so no final state exists to satisfy the condition"))
        } else {
            None
        }
    }

    /// Which loops the unrolling bound cut, at which bound (and, raised automatically, why it
    /// was not raised further).
    pub fn bound_cut(&self) -> String {
        let cut: Vec<String> =
            LoopReport::lanes_alike(&self.loops).into_iter().filter(|(l, _)| l.cut).map(|(l, last)| l.place_to(last)).collect();
        let loops = match cut.len() {
            0 => "some loop".to_string(),
            1 => format!("the loop at {}", cut[0]),
            _ => format!("the loops at {}", cut.join(", ")),
        };
        if self.bounds_tried.is_empty() {
            format!("the unrolling bound (--unroll {}) cut runs of {loops}", self.unroll)
        } else {
            let tried = self.bounds_tried.iter().map(usize::to_string).collect::<Vec<_>>().join(", ");
            let why = self.unroll_stop.as_deref().map(|w| format!("; {w}")).unwrap_or_default();
            format!("runs of {loops} were cut at every unrolling bound tried ({tried}{why})")
        }
    }

    /// The flag that explores longer runs.
    fn raise_hint(&self) -> &'static str {
        if self.bounds_tried.is_empty() {
            "raise --unroll"
        } else {
            "raise --max-unroll, or give --unroll N"
        }
    }

    /// herd7's `Ok` / `No`.
    pub fn ok(&self) -> bool {
        match self.quantifier {
            Quantifier::Exists => self.positive > 0,
            Quantifier::NotExists => self.positive == 0,
            Quantifier::Forall => self.negative == 0,
        }
    }
}

/// A warning when `program` uses asynchronous operations that `model` does not know about (it
/// never reads the async-agent events): its verdicts would treat them as ordinary accesses.
pub fn model_mismatch(program: &Program, model: &CatModel) -> Option<String> {
    use crate::program::Op;
    let is_async = |op: &Op| {
        matches!(
            op,
            Op::AsyncCopy(_)
                | Op::Mbarrier { .. }
                | Op::CpAsyncArrive { .. }
                | Op::Wgmma { .. }
                | Op::WaitGroup { .. }
                | Op::CommitGroup(_)
        )
    };
    let uses_async = program.threads.iter().flat_map(|t| &t.code).any(|i| is_async(&i.op));
    (uses_async && !model.free_names().contains("AGENT")).then(|| {
        format!(
            "warning: {}: the model `{}` does not model asynchronous operations (it never reads the async-agent events); its verdicts treat them as ordinary accesses with no completion rules. Use the default model `ptx`.",
            program.source.name(),
            model.title()
        )
    })
}

/// The verdict mode's hooks: they tally every consistent execution into an [`Outcome`].
pub(super) struct VerdictHooks<'p> {
    program: &'p Program,
    outcome: Outcome,
    flags: BTreeSet<String>,
    max_states: usize,
    /// `Config::every_source`.
    every_source: bool,
    speedcheck: bool,
    /// The consistent executions the enumeration may still tally before it stops (None: no such
    /// budget: `--all-states`, `--speedcheck`, or no directed search for the condition).
    enumeration_left: Option<u64>,
    /// `--speedcheck`: set once an execution settles the condition.
    settled: bool,
    start: crate::clock::Instant,
}

impl<'p> VerdictHooks<'p> {
    pub(super) fn new(program: &'p Program, config: &Config) -> Self {
        let observables = crate::program::naming::observables(program);
        let outcome = Outcome {
            test: program.name.clone(),
            quantifier: program.condition.quantifier,
            condition: program.condition.text.clone(),
            observable_names: observables.iter().map(|o| program.observable_name(o)).collect(),
            log_names: crate::program::naming::log_names(program, &observables),
            float_types: observables.iter().map(|o| crate::program::naming::observable_float_type(program, o)).collect(),
            hash: crate::program::naming::test_hash(program),
            speedcheck_stopped: false,
            skipped_checks: config.model.skipped_checks().to_vec(),
            observables,
            states: BTreeMap::new(),
            positive: 0,
            negative: 0,
            loop_cut: false,
            unroll: config.limits.unroll,
            loops: Vec::new(),
            unchecked: Vec::new(),
            bounds_tried: Vec::new(),
            unroll_stop: None,
            blocked_combinations: 0,
            no_consistent_execution: false,
            stats: SearchStats::default(),
            elapsed: Duration::ZERO,
            flags: Vec::new(),
            undefined: BTreeSet::new(),
            races: BTreeSet::new(),
            flag_findings: BTreeSet::new(),
            readings: config.readings.describe(),
            incomplete: None,
            enumeration_cut: false,
            partial_states: None,
            groups_apart: Vec::new(),
        };
        VerdictHooks {
            program,
            outcome,
            flags: BTreeSet::new(),
            max_states: config.limits.max_states,
            every_source: config.every_source,
            speedcheck: config.speedcheck,
            enumeration_left: config.enumeration_budget.filter(|_| !config.speedcheck && crate::decide::target::target(program).is_some()),
            settled: false,
            start: crate::clock::Instant::now(),
        }
    }

    /// The outcome, once the driver's loop ended with `result`: a limit that stopped the search
    /// leaves it incomplete, with what was found by then.
    pub(super) fn finish(mut self, result: Result<(), RunError>) -> Result<Outcome, RunError> {
        if let Err(e) = result {
            self.outcome.incomplete = Some(limit_message(e)?);
        }
        let mut outcome = self.outcome;
        outcome.speedcheck_stopped = self.settled;
        outcome.flags = self.flags.into_iter().collect();
        crate::decide::findings::drop_covered_races(&mut outcome.undefined, &mut outcome.races);
        outcome.elapsed = self.start.elapsed();
        Ok(outcome)
    }

    /// Tally one consistent execution: whether to go on (`--speedcheck` stops once the condition
    /// is settled), or None when a new state would exceed `--max-states`.
    fn consistent(&mut self, cand: &Candidate, eval: &crate::cat::Evaluation, prepared: Option<&crate::cat::Prepared>) -> Option<bool> {
        if let Some(left) = self.enumeration_left.as_mut() {
            if *left == 0 {
                // One execution more than the enumeration's budget: the directed search decides.
                self.outcome.enumeration_cut = true;
                return Some(false);
            }
            *left -= 1;
        }
        let fired = eval.fired_flags();
        for f in &fired {
            self.flags.insert(f.name.clone());
        }
        let mut found = crate::decide::findings::of_execution(cand, &fired, prepared);
        if let Some(model) = prepared {
            let o = &self.outcome;
            let to_test = |rule: &str, sites: &[crate::decide::findings::FindingSite]| {
                [&o.undefined, &o.races, &o.flag_findings]
                    .into_iter()
                    .find_map(|set| crate::decide::findings::readings_to_test(set, rule, sites))
            };
            crate::decide::reading_notes::annotate(cand, model, &mut found, &to_test);
        }
        for f in found.undefined {
            crate::decide::findings::insert(&mut self.outcome.undefined, f);
        }
        for f in found.races {
            crate::decide::findings::insert(&mut self.outcome.races, f);
        }
        for f in found.flags {
            crate::decide::findings::insert(&mut self.outcome.flag_findings, f);
        }
        let room = record_final_states(self.program, cand, &mut self.outcome, self.max_states);
        if self.speedcheck && settles(&self.outcome) {
            self.settled = true;
        }
        room.then_some(!self.settled)
    }
}

impl<'p> Hooks<'p> for VerdictHooks<'p> {
    fn structure(&mut self, _traces: &[&Trace], _structure: &EventStructure<'p>) -> Result<SearchGoal, RunError> {
        // Without observables the condition is constant and every final state the same: only
        // the findings of the executions are looked at.
        Ok(SearchGoal { values_unobserved: self.outcome.observables.is_empty() && !self.every_source, ..SearchGoal::default() })
    }

    fn groups_apart(&self) -> bool {
        // No observable: the condition is constant, an execution's answer is its findings.
        self.outcome.observables.is_empty()
    }

    fn apart(&mut self, groups: &[Vec<usize>]) {
        let ctas = |group: &Vec<usize>| {
            let set: BTreeSet<i64> = group.iter().map(|&t| self.program.threads[t].placement.cta).collect();
            set.into_iter().collect()
        };
        self.outcome.groups_apart = groups.iter().map(ctas).collect();
    }

    fn explored(&mut self, per_thread: &[ThreadTraces]) {
        self.outcome.loop_cut = per_thread.iter().any(|t| t.cut);
        self.outcome.loops = loop_reports(self.program, per_thread);
        self.outcome.unchecked = unchecked_accesses(self.program, per_thread);
    }

    fn resolution(&mut self, resolution: &BarrierResolution) -> AtResolution {
        if resolution.blocked.is_empty() {
            AtResolution::Search
        } else {
            // Some thread waits forever at a barrier: no final state (liveness reports it).
            self.outcome.blocked_combinations += 1;
            AtResolution::EndStructure
        }
    }

    fn search(&mut self, site: &SearchSite<'_, 'p, '_>, budget: &mut Budget) -> Result<ControlFlow<()>, RunError> {
        let mut states_full = false;
        let lazy = site.model;
        let mut visit = Visit(|cand: &Candidate, eval: &crate::cat::Evaluation| match self.consistent(cand, eval, lazy.get().ok()) {
            Some(go_on) => go_on,
            None => {
                states_full = true;
                false
            }
        });
        search(site.statics, site.model, site.plan, site.goal, budget, &mut visit)?;
        if self.outcome.enumeration_cut {
            return Ok(ControlFlow::Break(()));
        }
        if states_full {
            return Err(RunError::Explore(ExploreError::TooManyStates { limit: self.max_states }));
        }
        Ok(if self.settled { ControlFlow::Break(()) } else { ControlFlow::Continue(()) })
    }

    fn finished(&mut self, budget: Budget, _counters_pruned: bool) {
        self.outcome.stats = budget.stats;
    }
}

/// The message of a limit that stopped a search (the outcome is then incomplete); any other
/// error as it is.
pub(super) fn limit_message(e: RunError) -> Result<String, RunError> {
    match e {
        RunError::Explore(
            e @ (ExploreError::TooManyCandidates { .. }
            | ExploreError::Timeout { .. }
            | ExploreError::OutOfMemory { .. }
            | ExploreError::TooManyMbarrierStates { .. }
            | ExploreError::TooManyStates { .. }),
        ) => Ok(e.to_string()),
        e => Err(e),
    }
}

/// What the runs of every thread did at each of its loops, in thread and line order.
pub(super) fn loop_reports(program: &Program, per_thread: &[ThreadTraces]) -> Vec<LoopReport> {
    let mut out = Vec::new();
    for (thread, runs) in program.threads.iter().zip(per_thread) {
        for (&back_edge, l) in &runs.loops {
            let header = match thread.code[back_edge].op {
                crate::program::Op::Branch { target, .. } => target.min(back_edge),
                _ => back_edge,
            };
            let line = |i: usize| thread.code.get(i).map_or(0, |instr| instr.line);
            out.push(LoopReport { thread: thread.name(), lines: (line(header), line(back_edge)), iterations: l.iterations, cut: l.cut });
        }
    }
    out
}

/// The instructions of every thread some run did not check (see [`UncheckedAccess`]).
pub(super) fn unchecked_accesses(program: &Program, per_thread: &[ThreadTraces]) -> Vec<UncheckedAccess> {
    use crate::program::{AccessSpace, Op};
    let mut out = Vec::new();
    for (thread, runs) in program.threads.iter().zip(per_thread) {
        for (&pc, &origin) in &runs.unchecked {
            let instr = &thread.code[pc];
            let access = match &instr.op {
                Op::Load { .. } | Op::LoadVector { .. } => "global load",
                Op::Store { .. } | Op::StoreVector { .. } => "global store",
                Op::AsyncCopy(c) if c.tensor.is_some() && c.dst_space == AccessSpace::Global => "tensor copy to global memory",
                Op::AsyncCopy(c) if c.tensor.is_some() => "tensor copy from global memory",
                Op::AsyncCopy(_) => "copy from global memory",
                _ => "bulk prefetch",
            };
            let o = program.unknowns.get(origin as usize);
            let fix = o.and_then(|o| o.parameter_flag());
            out.push(UncheckedAccess {
                thread: thread.name(),
                line: instr.line,
                instruction: instr.text.split_whitespace().next().unwrap_or("").to_string(),
                access,
                because: o.map_or_else(|| "an unknown value".to_string(), |o| o.describe()),
                fix,
            });
        }
    }
    out
}

/// Whether the executions tallied so far settle the condition whatever the others do: a
/// witness of `exists`, a counterexample of `~exists` or `forall` (herd7's `-speedcheck fast`).
fn settles(o: &Outcome) -> bool {
    match o.quantifier {
        Quantifier::Exists | Quantifier::NotExists => o.positive > 0,
        Quantifier::Forall => o.negative > 0,
    }
}

/// The final states of one execution, as values of `observables`. PTX coherence is partial, so
/// a location may end with the value of any co-maximal write (Dat3M's reading); each choice is
/// a state.
pub(crate) fn final_states(cand: &Candidate, observables: &[Observable]) -> Vec<State> {
    let s = cand.structure();
    let choices: Vec<Vec<i64>> = observables
        .iter()
        .map(|o| match o {
            Observable::Register(t, r) => match s.symbolic_registers.get(&(*t, *r)) {
                // An open value: its expression over the values the reads read.
                Some(e) => e.eval(&mut |x| Some(cand.value_of(x))).into_iter().collect(),
                None => vec![s.registers[*t][*r]],
            },
            Observable::Location(p) => cand.final_values(*p),
        })
        .collect();
    let sizes: Vec<usize> = choices.iter().map(|c| c.len()).collect();
    if sizes.contains(&0) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut idx = vec![0usize; choices.len()];
    loop {
        out.push(idx.iter().enumerate().map(|(k, &i)| choices[k][i]).collect());
        if !advance(&mut idx, &sizes) {
            return out;
        }
    }
}

/// The value of an observable in a state over `observables`.
pub(crate) fn value_in(observables: &[Observable], state: &[i64], o: &Observable) -> i64 {
    state[observables.iter().position(|x| x == o).expect("every observable of the test was collected")]
}

/// Tally the final states of one consistent execution; false (stop the search) when a new
/// state would exceed `max_states`.
/// Where a final state gives an observable of the condition (or the filter) an unknown value
/// (`program::unknown`), the proposition's truth is unknown: the message that makes the outcome
/// incomplete, naming the value's origin.
fn unknown_in_condition(program: &Program, get: &dyn Fn(&Observable) -> i64) -> Option<String> {
    let mut named = Vec::new();
    program.condition.prop.observables(&mut named);
    if let Some(f) = &program.filter {
        f.observables(&mut named);
    }
    named.iter().find_map(|o| {
        let v = get(o);
        let origin = crate::program::unknown::origin(v)?;
        let from = program.unknowns.get(origin as usize).map_or_else(|| "an unknown value".to_string(), |u| u.describe());
        Some(format!(
            "the condition reads `{}`, whose final value is unknown in some execution: it comes from {from}",
            crate::program::naming::observable_log_name(program, o)
        ))
    })
}

fn record_final_states(program: &Program, cand: &Candidate, out: &mut Outcome, max_states: usize) -> bool {
    for state in final_states(cand, &out.observables) {
        if out.states.len() >= max_states && !out.states.contains_key(&state) {
            return false;
        }
        let get = |o: &Observable| value_in(&out.observables, &state, o);
        if out.incomplete.is_none() {
            out.incomplete = unknown_in_condition(program, &get);
        }
        if program.filter.as_ref().is_none_or(|f| f.eval(&get)) {
            let sat = program.condition.prop.eval(&get);
            if sat {
                out.positive += 1;
            } else {
                out.negative += 1;
            }
            out.states.insert(state, sat);
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::LoopReport;

    fn report(thread: &str, lines: (usize, usize), cut: bool) -> LoopReport {
        LoopReport { thread: thread.to_string(), lines, iterations: 1, cut }
    }

    /// The lanes of a warp column whose loop did the same are one entry, `P1.0-P1.2 lines 4-6`;
    /// a lane that did otherwise, another loop, or a thread of no column stays apart.
    #[test]
    fn lanes_alike_are_one_range() {
        let loops = [
            report("P0", (4, 6), false),
            report("P1.0", (4, 6), false),
            report("P1.0", (8, 9), true),
            report("P1.1", (4, 6), false),
            report("P1.1", (8, 9), true),
            report("P1.2", (4, 6), false),
            report("P1.2", (8, 9), false),
            report("P2", (4, 6), false),
        ];
        let places: Vec<String> = LoopReport::lanes_alike(&loops).iter().map(|(l, last)| l.place_to(last)).collect();
        assert_eq!(places, ["P0 lines 4-6", "P1.0-P1.2 lines 4-6", "P1.0-P1.1 lines 8-9", "P1.2 lines 8-9", "P2 lines 4-6"]);
    }
}
