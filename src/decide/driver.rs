//! The one driver: every mode (verdict, liveness, explain) runs the same loop over the
//! pipeline, and differs only in the hooks it gives the loop.
//!
//! ```text
//! explore (runs per thread) → combinations of runs (pruned by values) → event structure
//!   → barrier resolutions → static environment + the model prepared on first use
//!   → search of candidate executions (the mode's explorer)
//! ```
//!
//! As GenMC's driver takes its mode as data and keeps consistency behind one checker, the
//! driver here takes a [`Mode`] and leaves every judgement of consistency to the cat model
//! (through `exec::search`). A mode decides which runs it wants (liveness adds the runs that
//! stop forever), which combinations and barrier resolutions are worth a search, and what a
//! search reports to.

use super::combos::TraceCombinations;
use super::explain::{ExplainHooks, Explanation};
use super::liveness::{LivenessHooks, LivenessOutcome};
use super::verdict::{Outcome, RunError, VerdictHooks};
use crate::clock::Instant;
use crate::config::Config;
use crate::exec::search::{Budget, LazyModel, PrunePlan, SearchGoal, StaticEnv};
use crate::exec::structure::{resolve_barriers, BarrierResolution, EventStructure};
use crate::exec::trace::{explore_until, ThreadTraces, Trace};
use crate::program::Program;
use std::ops::ControlFlow;

/// What to decide about a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The condition: every consistent execution's final state, the findings, the verdict.
    Verdict,
    /// Whether some fair execution hangs.
    Liveness,
    /// Why the verdict is what it is: a witness, or the rejected candidates reaching the
    /// outcome (with the program's verdict from the same pass).
    Explain,
}

/// The answer of one [`Mode`].
#[derive(Clone, Debug)]
pub enum Decision {
    Verdict(Box<Outcome>),
    Liveness(LivenessOutcome),
    Explain(Box<Explanation>),
}

/// Decides programs under one configuration, against one deadline (`--timeout` from when the
/// decider is made): a test's condition and its liveness share it.
#[derive(Clone, Copy, Debug)]
pub struct Decider<'c> {
    config: &'c Config,
    deadline: Option<Instant>,
}

impl<'c> Decider<'c> {
    /// A decider whose deadline is the configuration's timeout from now.
    pub fn new(config: &'c Config) -> Self {
        Decider { config, deadline: config.limits.timeout.map(|t| Instant::now() + t) }
    }

    pub fn config(&self) -> &'c Config {
        self.config
    }

    /// Decide `mode` for `program`.
    pub fn decide(&self, program: &Program, mode: Mode) -> Result<Decision, RunError> {
        Ok(match mode {
            Mode::Verdict => Decision::Verdict(Box::new(self.verdict(program)?)),
            Mode::Liveness => Decision::Liveness(self.liveness(program)?),
            Mode::Explain => Decision::Explain(Box::new(self.explain(program)?)),
        })
    }

    /// The condition's verdict. A limit that stops the search leaves the outcome `incomplete`
    /// with what was found by then (see [`Outcome::verdict`]).
    pub fn verdict(&self, program: &Program) -> Result<Outcome, RunError> {
        let mut hooks = VerdictHooks::new(program, self.config);
        let result = drive(program, self, &mut hooks);
        hooks.finish(result)
    }

    /// Whether some fair execution hangs.
    pub fn liveness(&self, program: &Program) -> Result<LivenessOutcome, RunError> {
        let mut hooks = LivenessHooks::new(program);
        drive(program, self, &mut hooks)?;
        Ok(hooks.finish())
    }

    /// The explanation of the verdict, with the program's verdict decided in the same pass.
    pub fn explain(&self, program: &Program) -> Result<Explanation, RunError> {
        let mut hooks = ExplainHooks::new(program, self);
        let result = drive(program, self, &mut hooks);
        hooks.finish(result)
    }

    /// A fresh budget for one search (`--max-candidates`, the deadline).
    pub(super) fn budget(&self) -> Budget {
        Budget::new(&self.config.limits, self.deadline)
    }
}

/// One barrier resolution of one structure, ready to be searched.
pub(super) struct SearchSite<'s, 'p, 'm> {
    pub(super) traces: &'s [&'s Trace],
    pub(super) structure: &'s EventStructure<'p>,
    pub(super) resolution: &'s BarrierResolution,
    pub(super) statics: &'s StaticEnv<'s>,
    pub(super) model: &'s LazyModel<'m, 's>,
    pub(super) plan: &'s PrunePlan,
    pub(super) goal: &'s SearchGoal,
}

/// What a mode does with a barrier resolution.
pub(super) enum AtResolution {
    Search,
    /// Not this one; the next.
    Skip,
    /// None of this structure's resolutions (from this one on).
    EndStructure,
}

/// What a mode tells the driver at each step of the loop.
pub(super) trait Hooks<'p> {
    /// Whether runs that stop forever (at a barrier, in a polling loop) are explored too, and
    /// interchangeable threads' runs combined once per multiset (liveness).
    fn stuck_runs(&self) -> bool {
        false
    }

    /// Every thread's runs, once explored.
    fn explored(&mut self, _per_thread: &[ThreadTraces]) {}

    /// Whether a combination of runs is worth an event structure (asked before it is built).
    fn keep(&mut self, _traces: &[&Trace]) -> bool {
        true
    }

    /// A structure was built: what its searches are for.
    fn structure(&mut self, _traces: &[&Trace], _structure: &EventStructure<'p>) -> Result<SearchGoal, RunError> {
        Ok(SearchGoal::default())
    }

    /// Whether to search the candidates of `resolution`.
    fn resolution(&mut self, resolution: &BarrierResolution) -> AtResolution;

    /// Search the candidates of one resolution, charging `budget`; `Break` ends the decision.
    fn search(&mut self, site: &SearchSite<'_, 'p, '_>, budget: &mut Budget) -> Result<ControlFlow<()>, RunError>;

    /// The driver's budget once the loop is over (its statistics).
    fn finished(&mut self, _budget: Budget) {}
}

/// The loop every mode runs: explore, combine, build, resolve barriers, search.
pub(super) fn drive<'p>(program: &'p Program, decider: &Decider, hooks: &mut dyn Hooks<'p>) -> Result<(), RunError> {
    let config = decider.config;
    let (_domains, per_thread) = explore_until(program, &config.limits, hooks.stuck_runs(), decider.deadline)?;
    hooks.explored(&per_thread);
    let runs: Vec<Vec<&Trace>> = per_thread
        .iter()
        .map(|t| if hooks.stuck_runs() { t.traces.iter().chain(&t.stuck).collect() } else { t.traces.iter().collect() })
        .collect();
    let mut combos = TraceCombinations::new(program, runs);
    if hooks.stuck_runs() {
        // Whether a run hangs does not depend on which of two interchangeable threads runs it.
        combos = combos.up_to_symmetry();
    }
    let mut budget = decider.budget();
    let plan = PrunePlan::for_model(&config.model);
    let result = combos.try_for_each(&mut |traces| {
        if !hooks.keep(traces) {
            return Ok(ControlFlow::Continue(()));
        }
        budget.charge()?;
        let structure = EventStructure::build(program, &config.readings, traces);
        let goal = hooks.structure(traces, &structure)?;
        for resolution in resolve_barriers(&structure) {
            match hooks.resolution(&resolution) {
                AtResolution::Search => {}
                AtResolution::Skip => continue,
                AtResolution::EndStructure => break,
            }
            let statics = StaticEnv::new(&structure, &resolution);
            let model = LazyModel::new(&config.model, &statics);
            let site = SearchSite {
                traces,
                structure: &structure,
                resolution: &resolution,
                statics: &statics,
                model: &model,
                plan: &plan,
                goal: &goal,
            };
            if hooks.search(&site, &mut budget)?.is_break() {
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    });
    hooks.finished(budget);
    result
}
