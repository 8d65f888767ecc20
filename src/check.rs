//! Deciding a litmus test: explore every candidate execution under a model and tally outcomes.

use crate::cat::CatModel;
use crate::clock::Instant;
use crate::exec::search::{
    advance, search, Budget, Candidate, LazyModel, PrunePlan, SearchError, SearchGoal, SearchStats, StaticEnv, Visit,
};
use crate::exec::structure::{resolve_barriers, EventStructure};
use crate::exec::trace::{explore_until, ExploreError, Limits, Trace, TraceOp};
use crate::findings::Finding;
use crate::litmus::ast::Quantifier;
use crate::program::{Observable, Program};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::ops::ControlFlow;
use std::time::Duration;

/// Options of one run.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    pub limits: Limits,
    /// When the decision must stop (`--timeout`): set once per test, so that the condition and
    /// the liveness check share it. None: `limits.timeout` from the start of each call.
    pub deadline: Option<Instant>,
    /// Stop at the first consistent execution that settles the condition (herd7's
    /// `-speedcheck`): the answer is reported, the counts, states and findings are partial.
    pub speedcheck: bool,
}

impl RunOptions {
    /// These options with the deadline `limits.timeout` from now (unless one is set).
    pub fn starting_now(&self) -> RunOptions {
        RunOptions { deadline: self.deadline.or_else(|| self.limits.timeout.map(|t| Instant::now() + t)), ..*self }
    }
}

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
    /// The unrolling bound the runs were explored with (`--unroll`).
    pub unroll: usize,
    /// Trace combinations in which some barrier can never complete (these executions hang).
    pub blocked_combinations: u64,
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
    /// bound cut runs and no complete run reaches the outcome, or no execution completes at
    /// all (every one hangs). `Outcome::inconclusive` says which.
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
            Some(format!(
                "the unrolling bound (--unroll {}) cut some runs and {none}; a longer run might reach it (raise --unroll)",
                self.unroll
            ))
        } else if self.stats.consistent == 0 {
            Some("no execution completes: in every execution some thread waits forever at a barrier or in a polling loop, so no final state exists to satisfy the condition".to_string())
        } else {
            None
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

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Explore(#[from] ExploreError),
    #[error("model error: {0}")]
    Model(crate::cat::CatError),
    /// A limit stopped the search (the message names it and its flag).
    #[error("not decided: {0}")]
    Incomplete(String),
}

impl From<SearchError> for RunError {
    fn from(e: SearchError) -> Self {
        match e {
            SearchError::Model(m) => RunError::Model(m),
            SearchError::Stopped => unreachable!("search() absorbs Stopped"),
            SearchError::Explore(x) => RunError::Explore(x),
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

/// Decide `program` under `model`.
pub fn run(program: &Program, model: &CatModel, opts: &RunOptions) -> Result<Outcome, RunError> {
    let start = Instant::now();
    let observables = observables(program);
    let mut outcome = Outcome {
        test: program.name.clone(),
        quantifier: program.condition.quantifier,
        condition: program.condition.text.clone(),
        observable_names: observables.iter().map(|o| program.observable_name(o)).collect(),
        log_names: crate::herdlog::log_names(program, &observables),
        hash: crate::herdlog::test_hash(program),
        speedcheck_stopped: false,
        skipped_checks: model.skipped_checks().to_vec(),
        observables,
        states: BTreeMap::new(),
        positive: 0,
        negative: 0,
        loop_cut: false,
        unroll: opts.limits.unroll,
        blocked_combinations: 0,
        stats: SearchStats::default(),
        elapsed: Duration::ZERO,
        flags: Vec::new(),
        undefined: BTreeSet::new(),
        races: BTreeSet::new(),
        flag_findings: BTreeSet::new(),
        readings: program.readings.describe(),
        incomplete: None,
    };

    let opts = &opts.starting_now();
    let (_domains, per_thread) = explore_until(program, &opts.limits, false, opts.deadline)?;
    outcome.loop_cut = per_thread.iter().any(|t| t.cut);
    if per_thread.iter().any(|t| t.traces.is_empty()) {
        outcome.elapsed = start.elapsed();
        return Ok(outcome);
    }
    let mut budget = Budget::new(&opts.limits, opts.deadline);
    let plan = PrunePlan::for_model(model);
    let goal = SearchGoal::default();
    let mut flags = std::collections::BTreeSet::new();
    let max_states = opts.limits.max_states;
    let mut states_full = false;
    // `--speedcheck`: set once an execution settles the condition.
    let mut settled = false;
    let combos = TraceCombinations::new(program, per_thread.iter().map(|t| t.traces.iter().collect()).collect());
    let result = each_structure(program, &combos, &mut budget, &mut |_, structure, budget| {
        for barrier in resolve_barriers(structure) {
            if !barrier.blocked.is_empty() {
                // Some thread waits forever at a barrier: no final state (liveness reports it).
                outcome.blocked_combinations += 1;
                break;
            }
            let statics = StaticEnv::new(structure, &barrier);
            let lazy = LazyModel::new(model, &statics);
            let mut visit = Visit(|cand: &Candidate, eval: &crate::cat::Evaluation| {
                let fired = eval.fired_flags();
                for f in &fired {
                    flags.insert(f.name.clone());
                }
                let found = crate::findings::of_execution(cand, &fired, lazy.get().ok());
                for f in found.undefined {
                    crate::findings::insert(&mut outcome.undefined, f);
                }
                for f in found.races {
                    crate::findings::insert(&mut outcome.races, f);
                }
                for f in found.flags {
                    crate::findings::insert(&mut outcome.flag_findings, f);
                }
                let room = record_final_states(program, cand, &mut outcome, max_states);
                states_full |= !room;
                if opts.speedcheck && settles(&outcome) {
                    settled = true;
                    return false;
                }
                room
            });
            search(&statics, &lazy, &plan, &goal, budget, &mut visit)?;
            if states_full {
                return Err(RunError::Explore(ExploreError::TooManyStates { limit: max_states }));
            }
            if settled {
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    });
    outcome.stats = budget.stats;
    match result {
        // A limit stopped the search: keep what was found, and say so.
        Err(RunError::Explore(
            e @ (ExploreError::TooManyCandidates { .. }
            | ExploreError::Timeout { .. }
            | ExploreError::TooManyMbarrierStates { .. }
            | ExploreError::TooManyStates { .. }),
        )) => outcome.incomplete = Some(e.to_string()),
        r => r?,
    }
    outcome.speedcheck_stopped = settled;
    outcome.flags = flags.into_iter().collect();
    crate::findings::drop_covered_races(&mut outcome.undefined, &mut outcome.races);
    outcome.elapsed = start.elapsed();
    Ok(outcome)
}

/// Whether the executions tallied so far settle the condition whatever the others do: a
/// witness of `exists`, a counterexample of `~exists` or `forall` (herd7's `-speedcheck fast`).
fn settles(o: &Outcome) -> bool {
    match o.quantifier {
        Quantifier::Exists | Quantifier::NotExists => o.positive > 0,
        Quantifier::Forall => o.negative > 0,
    }
}

/// The combinations of one trace per thread whose reads can all be satisfied by some write.
///
/// Threads are chosen one at a time; a read of value v at location l survives only if v is the
/// initial value of l, is written to l by a trace already chosen, or can be written to l by some
/// trace of a thread not chosen yet. Most value guesses die here, before any event structure
/// or model evaluation exists.
pub(crate) struct TraceCombinations<'a> {
    program: &'a Program,
    /// The runs each thread may contribute.
    per_thread: Vec<Vec<&'a Trace>>,
    /// For each thread, every (physical location, value) some trace of it writes (None: any).
    may_write: Vec<HashSet<(usize, Option<i64>)>>,
    /// For each thread, an earlier thread interchangeable with it (see [`TraceCombinations::up_to_symmetry`]).
    same_as: Vec<Option<usize>>,
}

impl<'a> TraceCombinations<'a> {
    pub(crate) fn new(program: &'a Program, per_thread: Vec<Vec<&'a Trace>>) -> Self {
        let may_write = per_thread.iter().map(|tt| tt.iter().flat_map(|tr| writes_of(program, tr)).collect::<HashSet<_>>()).collect();
        let same_as = vec![None; per_thread.len()];
        TraceCombinations { program, per_thread, may_write, same_as }
    }

    /// Only one combination per multiset of runs of interchangeable threads: threads with the
    /// same code, initial registers and placement (so the same runs, in the same order), whose
    /// runs are then chosen in non-decreasing order. Swapping two such threads maps executions
    /// to executions, so a question that does not name threads (liveness) has the same answer
    /// on every permutation of a combination.
    pub(crate) fn up_to_symmetry(mut self) -> Self {
        let threads = &self.program.threads;
        let same = |a: usize, b: usize| {
            let (x, y) = (&threads[a], &threads[b]);
            x.placement == y.placement
                && x.reg_init == y.reg_init
                && x.code.len() == y.code.len()
                && x.code.iter().zip(&y.code).all(|(i, j)| i.op == j.op)
                && self.per_thread[a].len() == self.per_thread[b].len()
        };
        self.same_as = (0..threads.len()).map(|t| (0..t).rev().find(|&s| same(s, t))).collect();
        self
    }

    /// Call `f` with each combination until it breaks or fails.
    pub(crate) fn try_for_each(&self, f: &mut dyn FnMut(&[&'a Trace]) -> Flow) -> Result<(), RunError> {
        let mut chosen: Vec<&'a Trace> = Vec::with_capacity(self.per_thread.len());
        let mut index = Vec::with_capacity(self.per_thread.len());
        self.go(&mut chosen, &mut index, f).map(|_| ())
    }

    fn satisfiable(&self, chosen: &[&'a Trace], p: usize, v: i64) -> bool {
        let writes = |w: (usize, Option<i64>)| w == (p, Some(v)) || w == (p, None);
        self.program.physical[p].init == v
            || chosen.iter().any(|tr| writes_of(self.program, tr).any(writes))
            || self.may_write[chosen.len()..].iter().any(|m| m.contains(&(p, Some(v))) || m.contains(&(p, None)))
    }

    fn go(&self, chosen: &mut Vec<&'a Trace>, index: &mut Vec<usize>, f: &mut dyn FnMut(&[&'a Trace]) -> Flow) -> Flow {
        let t = chosen.len();
        if t == self.per_thread.len() {
            return f(chosen);
        }
        let first = self.same_as[t].map_or(0, |s| index[s]);
        for (k, &tr) in self.per_thread[t].iter().enumerate().skip(first) {
            chosen.push(tr);
            index.push(k);
            // Reads of every chosen trace must remain satisfiable by what is chosen or still open.
            let ok = chosen.iter().all(|t| reads_of(self.program, t).all(|(p, v)| self.satisfiable(chosen, p, v)));
            let flow = if ok { self.go(chosen, index, f)? } else { ControlFlow::Continue(()) };
            chosen.pop();
            index.pop();
            if flow.is_break() {
                return Ok(flow);
            }
        }
        Ok(ControlFlow::Continue(()))
    }
}

/// Whether to go on after one trace combination (or stop, or fail).
pub(crate) type Flow = Result<ControlFlow<()>, RunError>;

/// Call `f` with the event structure of every combination of `combos` (each charged to the
/// budget), until it breaks or fails.
pub(crate) fn each_structure<'p>(
    program: &'p Program,
    combos: &TraceCombinations<'p>,
    budget: &mut Budget,
    f: &mut dyn FnMut(&[&'p Trace], &EventStructure<'p>, &mut Budget) -> Flow,
) -> Result<(), RunError> {
    each_structure_where(program, combos, budget, &mut |_| true, f)
}

/// [`each_structure`] for the combinations `keep` accepts (checked before anything is built).
pub(crate) fn each_structure_where<'p>(
    program: &'p Program,
    combos: &TraceCombinations<'p>,
    budget: &mut Budget,
    keep: &mut dyn FnMut(&[&'p Trace]) -> bool,
    f: &mut dyn FnMut(&[&'p Trace], &EventStructure<'p>, &mut Budget) -> Flow,
) -> Result<(), RunError> {
    combos.try_for_each(&mut |traces| {
        if !keep(traces) {
            return Ok(ControlFlow::Continue(()));
        }
        budget.charge()?;
        let structure = EventStructure::build(program, traces);
        f(traces, &structure, budget)
    })
}

/// The (physical location, value) pairs a trace may write; an open value gives every value it
/// can take, or None for "any value" when there are too many to list.
fn writes_of<'t>(program: &'t Program, tr: &'t Trace) -> impl Iterator<Item = (usize, Option<i64>)> + 't {
    tr.events.iter().filter(|e| e.op == TraceOp::Write && e.mb_op.is_none()).flat_map(move |e| {
        let p = program.locations[e.location.expect("writes have a location")].physical;
        let values: Vec<Option<i64>> = match (&e.sym, &e.possible) {
            (None, _) => vec![Some(e.value)],
            (Some(_), Some(vs)) => vs.iter().map(|&v| Some(v)).collect(),
            (Some(_), None) => vec![None],
        };
        values.into_iter().map(move |v| (p, v))
    })
}

fn reads_of<'t>(program: &'t Program, tr: &'t Trace) -> impl Iterator<Item = (usize, i64)> + 't {
    tr.events
        .iter()
        .filter(|e| e.op == TraceOp::Read && e.mb_op.is_none() && !e.symbolic)
        .map(move |e| (program.locations[e.location.expect("reads have a location")].physical, e.value))
}

/// Every observable a final state shows: those of the condition, the filter and `locations`,
/// in a stable order.
pub(crate) fn observables(program: &Program) -> Vec<Observable> {
    let mut obs = Vec::new();
    program.condition.prop.observables(&mut obs);
    if let Some(f) = &program.filter {
        f.observables(&mut obs);
    }
    for o in &program.extra_observables {
        if !obs.contains(o) {
            obs.push(o.clone());
        }
    }
    obs.sort();
    obs
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
fn record_final_states(program: &Program, cand: &Candidate, out: &mut Outcome, max_states: usize) -> bool {
    for state in final_states(cand, &out.observables) {
        if out.states.len() >= max_states && !out.states.contains_key(&state) {
            return false;
        }
        let get = |o: &Observable| value_in(&out.observables, &state, o);
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
