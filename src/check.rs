//! Deciding a litmus test: explore every candidate execution under a model and tally outcomes.

use crate::cat::CatModel;
use crate::exec::search::{search, SearchError, SearchStats, StaticEnv, DYNAMIC_NAMES};
use crate::exec::structure::{resolve_barriers, BarrierOutcome, EventStructure};
use crate::exec::trace::{explore, ExploreError, Limits, Trace};
use crate::litmus::ast::Quantifier;
use crate::program::{Observable, Program};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Options of one run.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    pub limits: Limits,
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
    /// Distinct final states of consistent executions, and whether each satisfies the condition.
    pub states: BTreeMap<State, bool>,
    /// Consistent executions whose final state satisfies / does not satisfy the proposition.
    pub positive: u64,
    pub negative: u64,
    /// Some run was cut by the loop unrolling bound (herd7's `Loop`).
    pub loop_cut: bool,
    /// Trace combinations in which some barrier can never complete (these executions hang).
    pub blocked_combinations: u64,
    pub stats: SearchStats,
    pub elapsed: Duration,
    /// Names of model flags (`flag ~empty ...`) that fired in some consistent execution.
    pub flags: Vec<String>,
}

impl Outcome {
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
}

impl From<SearchError> for RunError {
    fn from(e: SearchError) -> Self {
        match e {
            SearchError::Model(m) => RunError::Model(m),
            SearchError::Explore(x) => RunError::Explore(x),
        }
    }
}

/// Decide `program` under `model`.
pub fn run(program: &Program, model: &CatModel, opts: &RunOptions) -> Result<Outcome, RunError> {
    let start = Instant::now();
    let mut observables = Vec::new();
    program.condition.prop.observables(&mut observables);
    if let Some(f) = &program.filter {
        f.observables(&mut observables);
    }
    for o in &program.extra_observables {
        if !observables.contains(o) {
            observables.push(o.clone());
        }
    }
    observables.sort();
    let mut outcome = Outcome {
        test: program.name.clone(),
        quantifier: program.condition.quantifier,
        condition: program.condition.text.clone(),
        observable_names: observables.iter().map(|o| program.observable_name(o)).collect(),
        observables,
        states: BTreeMap::new(),
        positive: 0,
        negative: 0,
        loop_cut: false,
        blocked_combinations: 0,
        stats: SearchStats::default(),
        elapsed: Duration::ZERO,
        flags: Vec::new(),
    };

    let (_domains, per_thread) = explore(program, &opts.limits)?;
    outcome.loop_cut = per_thread.iter().any(|t| t.cut);
    if per_thread.iter().any(|t| t.traces.is_empty()) {
        outcome.elapsed = start.elapsed();
        return Ok(outcome);
    }
    let mut budget = opts.limits.max_candidates;
    let sizes: Vec<usize> = per_thread.iter().map(|t| t.traces.len()).collect();
    let mut idx = vec![0usize; sizes.len()];
    let mut flags = std::collections::BTreeSet::new();
    loop {
        let traces: Vec<&Trace> = idx.iter().enumerate().map(|(t, &i)| &per_thread[t].traces[i]).collect();
        let structure = EventStructure::build(program, &traces);
        for barrier in resolve_barriers(&structure) {
            let syncbar = match barrier {
                BarrierOutcome::Completed(r) => r,
                BarrierOutcome::Blocked(_) => {
                    outcome.blocked_combinations += 1;
                    continue;
                }
            };
            let statics = StaticEnv { structure: &structure, syncbar: &syncbar };
            let prepared = model.prepare(&statics, DYNAMIC_NAMES).map_err(RunError::Model)?;
            let mut stats = SearchStats::default();
            search(&statics, &prepared, &mut budget, &mut stats, &mut |cand, eval| {
                for f in eval.fired_flags() {
                    flags.insert(f.name.clone());
                }
                record_final_states(program, &structure, cand, &mut outcome);
            })?;
            outcome.stats.candidates += stats.candidates;
            outcome.stats.consistent += stats.consistent;
        }
        if !advance(&mut idx, &sizes) {
            break;
        }
    }
    outcome.flags = flags.into_iter().collect();
    outcome.elapsed = start.elapsed();
    Ok(outcome)
}

fn advance(idx: &mut [usize], sizes: &[usize]) -> bool {
    for k in (0..idx.len()).rev() {
        idx[k] += 1;
        if idx[k] < sizes[k] {
            return true;
        }
        idx[k] = 0;
    }
    false
}

/// Add the final states of one consistent execution. PTX coherence is partial, so a location
/// may end with the value of any co-maximal write (Dat3M's reading); each choice is a state.
fn record_final_states(program: &Program, s: &EventStructure, cand: &crate::exec::search::Candidate, out: &mut Outcome) {
    let mut choices: Vec<Vec<i64>> = Vec::with_capacity(out.observables.len());
    for o in &out.observables {
        choices.push(match o {
            Observable::Register(t, r) => vec![s.registers[*t][*r]],
            Observable::Location(p) => cand.final_values(*p),
        });
    }
    let sizes: Vec<usize> = choices.iter().map(|c| c.len()).collect();
    if sizes.contains(&0) {
        return;
    }
    let mut idx = vec![0usize; choices.len()];
    loop {
        let state: State = idx.iter().enumerate().map(|(k, &i)| choices[k][i]).collect();
        let get = |o: &Observable| -> i64 {
            let k = out.observables.iter().position(|x| x == o).expect("observable was collected");
            state[k]
        };
        let keep = program.filter.as_ref().is_none_or(|f| f.eval(&get));
        if keep {
            let sat = program.condition.prop.eval(&get);
            if sat {
                out.positive += 1;
            } else {
                out.negative += 1;
            }
            out.states.insert(state, sat);
        }
        if !advance(&mut idx, &sizes) {
            break;
        }
    }
}
