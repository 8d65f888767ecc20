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
use crate::clock::Instant;
use crate::config::{Config, Limits};
use crate::exec::reduce::F32Subnormals;
use crate::exec::search::{search, Budget, LazyModel, PrunePlan, SearchError, SearchGoal, StaticEnv, Visit};
use crate::exec::structure::{resolve_barriers, BarrierResolution, EventStructure};
use crate::exec::trace::{explore_until, ExploreError, ThreadTraces, Trace};
use crate::program::Program;
use std::ops::ControlFlow;

/// Why a decision failed (a limit that stopped the search is not a failure of the verdict:
/// see `Outcome::incomplete`).
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

impl AtResolution {
    /// For a mode that wants complete executions: a resolution where some thread waits
    /// forever at a barrier has no final state, and neither has any later one of the structure.
    pub(super) fn complete_only(resolution: &BarrierResolution) -> AtResolution {
        if resolution.blocked.is_empty() {
            AtResolution::Search
        } else {
            AtResolution::EndStructure
        }
    }
}

/// What a mode tells the driver at each step of the loop.
pub(super) trait Hooks<'p> {
    /// Whether runs that stop forever (at a barrier, in a polling loop) are explored too, and
    /// interchangeable threads' runs combined once per multiset (liveness).
    fn stuck_runs(&self) -> bool {
        false
    }

    /// Whether the search may deny a read the sources its own thread rules out (per-thread
    /// coherence, where the model forbids them: `exec::search::own_order`). An explanation wants
    /// those candidates built, to show the check that rejects them.
    fn own_order(&self) -> bool {
        true
    }

    /// Whether the question decomposes over groups of threads that share nothing one of them
    /// writes (`decide::groups`): it names no value, so an execution's answer is the union of
    /// its groups' (a verdict without observables, liveness).
    fn groups_apart(&self) -> bool {
        false
    }

    /// The groups decided apart so far found a hang, but another group has no execution at
    /// all: neither has the program; forget what was found (`decide::groups::apart`).
    fn no_execution(&mut self) {}

    /// The groups of threads the walks take one at a time (more than one, each in thread
    /// order), before they start.
    fn apart(&mut self, _groups: &[Vec<usize>]) {}

    /// Every thread's runs, once explored.
    fn explored(&mut self, _per_thread: &[ThreadTraces]) {}

    /// Whether a combination of runs is worth an event structure (asked before it is built).
    fn keep(&mut self, _traces: &[&Trace]) -> bool {
        true
    }

    /// Whether some combination starting with the runs of the first threads (`traces`, one
    /// per thread so far) may be worth one: false leaves them all out.
    fn keep_start(&mut self, _traces: &[&Trace]) -> bool {
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

    /// The driver's budget once the loop is over (its statistics), and whether runs or
    /// combinations were left out before any search because coherence and atomicity rule them
    /// out on a counter (see `exec::trace` counters).
    fn finished(&mut self, _budget: Budget, _counters_pruned: bool) {}
}

/// A fresh budget for one search of a decision (`--max-candidates`, the deadline).
pub(super) fn budget(config: &Config, deadline: Option<Instant>) -> Budget {
    Budget::new(&config.limits, deadline)
}

/// Every thread's runs under `limits` (the configuration's, or a probe's), with the stuck runs
/// when `stuck_runs` (liveness).
pub(super) fn explore(
    program: &Program,
    config: &Config,
    limits: &Limits,
    stuck_runs: bool,
    deadline: Option<Instant>,
) -> Result<Vec<ThreadTraces>, ExploreError> {
    let f32_subnormals = if config.readings.f32_reduce_flushes { F32Subnormals::Flush } else { F32Subnormals::Keep };
    Ok(explore_until(program, limits, stuck_runs, f32_subnormals, deadline)?.1)
}

/// The loop every mode runs: explore, combine, build, resolve barriers, search; `deadline` is
/// the decision's (`--timeout`).
pub(super) fn drive<'p>(
    program: &'p Program,
    config: &Config,
    deadline: Option<Instant>,
    hooks: &mut dyn Hooks<'p>,
) -> Result<(), RunError> {
    crate::exec::mbgraph::forget_shared_states();
    let result = drive_combinations(program, config, deadline, hooks);
    crate::exec::mbgraph::forget_shared_states();
    result
}

/// [`drive`], between the two calls that keep the mbarrier states shared by its structures
/// within the decision.
fn drive_combinations<'p>(
    program: &'p Program,
    config: &Config,
    deadline: Option<Instant>,
    hooks: &mut dyn Hooks<'p>,
) -> Result<(), RunError> {
    let per_thread = explore(program, config, &config.limits, hooks.stuck_runs(), deadline)?;
    hooks.explored(&per_thread);
    let counter_pruned = per_thread.iter().any(|t| t.counter_pruned);
    let runs: Vec<Vec<&Trace>> = per_thread
        .iter()
        .map(|t| if hooks.stuck_runs() { t.traces.iter().chain(&t.stuck).collect() } else { t.traces.iter().collect() })
        .collect();
    let mut budget = budget(config, deadline);
    let mut plan = PrunePlan::for_model(&config.model);
    if hooks.own_order() {
        plan = plan.with_own_order(super::own_order::oracle(config));
    }
    let groups_apart = hooks.groups_apart() && config.limits.groups_apart && crate::config::models::groups_decide_apart(&config.model);
    let groups = if groups_apart { super::groups::independent(program, &per_thread) } else { Vec::new() };
    let (result, claims_shared) = if groups.len() > 1 {
        hooks.apart(&groups);
        apart(program, config, &groups, &runs, hooks, &mut budget, &plan)
    } else {
        let (result, shared) = walk(program, config, runs, hooks, &mut budget, &plan);
        (result.map(|_| ()), shared)
    };
    hooks.finished(budget, counter_pruned || claims_shared > 0);
    result
}

/// One walk over the combinations of `runs` (one list per thread): build, resolve barriers,
/// search, as `hooks` say, charging `budget`. Returns whether the mode broke off, and how many
/// combinations were left out because two runs claim one value of a counter.
fn walk<'p>(
    program: &'p Program,
    config: &Config,
    runs: Vec<Vec<&Trace>>,
    hooks: &mut dyn Hooks<'p>,
    budget: &mut Budget,
    plan: &PrunePlan,
) -> (Result<ControlFlow<()>, RunError>, u64) {
    if runs.iter().any(Vec::is_empty) {
        // A thread without a run (every one cut at the unrolling bound) leaves no combination;
        // the walk would only find that out after going through every other thread's.
        return (Ok(ControlFlow::Continue(())), 0);
    }
    let mut combos = TraceCombinations::new(program, runs);
    if hooks.stuck_runs() {
        // Whether a run hangs does not depend on which of two interchangeable threads runs it.
        combos = combos.up_to_symmetry();
    }
    // Both the combination's callback and the early question about its first runs ask the
    // mode: one at a time.
    let shared_hooks = std::cell::RefCell::new(&mut *hooks);
    let mut keep_start = |traces: &[&Trace]| shared_hooks.borrow_mut().keep_start(traces);
    let (deadline, timeout_secs) = (budget.deadline, budget.timeout_secs);
    let mut past_deadline = || -> Result<(), RunError> {
        match deadline {
            Some(d) if Instant::now() >= d => Err(SearchError::Explore(ExploreError::Timeout { seconds: timeout_secs }).into()),
            _ => Ok(()),
        }
    };
    let result = combos.try_for_each(
        &mut |traces| -> Result<ControlFlow<()>, RunError> {
            let mut hooks = shared_hooks.borrow_mut();
            if !hooks.keep(traces) {
                return Ok(ControlFlow::Continue(()));
            }
            budget.charge()?;
            budget.check_deadline()?;
            let events = EventStructure::event_count(program, traces);
            budget.check_estimate(EventStructure::estimated_bytes(events, config.model.definition_count()), || {
                format!("an event structure of {events} events")
            })?;
            let Ok(structure) = EventStructure::build_until(program, &config.readings, traces, budget.deadline) else {
                return Err(budget.timeout().into());
            };
            let goal = hooks.structure(traces, &structure)?;
            for resolution in resolve_barriers(&structure, &config.readings) {
                match hooks.resolution(&resolution) {
                    AtResolution::Search => {}
                    AtResolution::Skip => continue,
                    AtResolution::EndStructure => break,
                }
                let statics = StaticEnv::new(&structure, &resolution);
                let model = LazyModel::under(&config.model, &statics, budget);
                let site = SearchSite {
                    traces,
                    structure: &structure,
                    resolution: &resolution,
                    statics: &statics,
                    model: &model,
                    plan,
                    goal: &goal,
                };
                if hooks.search(&site, budget)?.is_break() {
                    return Ok(ControlFlow::Break(()));
                }
            }
            Ok(ControlFlow::Continue(()))
        },
        &mut keep_start,
        &mut past_deadline,
    );
    (result, combos.claims_shared())
}

/// The groups a decision of `program` under `config` decides apart where its question names no
/// value (each group's threads in order; one group when nothing is apart, or when the model or
/// `Limits::groups_apart` does not allow it), from the runs at the configuration's unrolling
/// bound.
pub fn independent_groups(program: &Program, config: &Config) -> Result<Vec<Vec<usize>>, RunError> {
    if !config.limits.groups_apart || !crate::config::models::groups_decide_apart(&config.model) {
        return Ok(vec![(0..program.threads.len()).collect()]);
    }
    let per_thread = explore(program, config, &config.limits, false, None)?;
    Ok(super::groups::independent(program, &per_thread))
}

/// The walk of [`drive`] over `groups` (more than one) one group at a time,
/// every thread outside the group absent. First, whether each group has a complete consistent
/// execution (its threads' complete runs). Where every group has one, each group is decided in
/// turn until the mode breaks: the program's findings are the groups', and a hang of one group
/// is a hang of the program beside complete executions of the others. Where some have none,
/// neither has the program: the verdict walks only those groups (their blocked barriers), and
/// liveness asks each of them for a hang, the program hanging where each does (the mode
/// reports their stuck threads together) and having no execution where one does not. Returns
/// what the walks returned and the combinations left out because two runs claim one counter
/// value.
pub(super) fn apart<'p>(
    program: &'p Program,
    config: &Config,
    groups: &[Vec<usize>],
    runs: &[Vec<&Trace>],
    hooks: &mut dyn Hooks<'p>,
    budget: &mut Budget,
    plan: &PrunePlan,
) -> (Result<(), RunError>, u64) {
    let absent: Vec<Trace> = program.threads.iter().map(|t| Trace::absent(t.reg_init.clone())).collect();
    let restricted = |members: &[usize], complete_only: bool| -> Vec<Vec<&Trace>> {
        (0..program.threads.len())
            .map(|t| {
                if !members.contains(&t) {
                    vec![&absent[t]]
                } else if complete_only {
                    runs[t].iter().copied().filter(|r| r.stuck.is_none()).collect()
                } else {
                    runs[t].clone()
                }
            })
            .collect()
    };
    let mut shared = 0;
    let mut without: Vec<Vec<usize>> = Vec::new();
    for group in groups {
        let mut any = AnyExecution::default();
        // What this probe finds is found again by the mode's own walk: it is not counted.
        let counted = budget.stats.consistent;
        let (result, s) = walk(program, config, restricted(group, true), &mut any, budget, plan);
        budget.stats.consistent = counted;
        shared += s;
        if let Err(e) = result {
            return (Err(e), shared);
        }
        if !any.found {
            without.push(group.clone());
        }
    }
    if !without.is_empty() && hooks.stuck_runs() {
        // Every execution of the program stops forever in each of these groups: it hangs if
        // each of them has a hang (its fair executions are theirs together), and has no
        // execution at all if one of them has none.
        for group in &without {
            let (result, s) = walk(program, config, restricted(group, false), hooks, budget, plan);
            shared += s;
            match result {
                Ok(ControlFlow::Break(())) => {}
                Ok(ControlFlow::Continue(())) => {
                    hooks.no_execution();
                    return (Ok(()), shared);
                }
                Err(e) => return (Err(e), shared),
            }
        }
        return (Ok(()), shared);
    }
    // No complete execution in some group: then none of the program, and its incomplete
    // executions are those groups'. Otherwise each group's executions beside the others'.
    let order: &[Vec<usize>] = if without.is_empty() { groups } else { &without };
    for group in order {
        let (result, s) = walk(program, config, restricted(group, false), hooks, budget, plan);
        shared += s;
        match result {
            Ok(ControlFlow::Continue(())) => {}
            Ok(ControlFlow::Break(())) => return (Ok(()), shared),
            Err(e) => return (Err(e), shared),
        }
    }
    (Ok(()), shared)
}

/// Hooks that look for one complete consistent execution: the runs that finish, the barrier
/// resolutions where no thread waits forever, the first candidate the model accepts.
#[derive(Default)]
struct AnyExecution {
    found: bool,
}

impl<'p> Hooks<'p> for AnyExecution {
    fn resolution(&mut self, resolution: &BarrierResolution) -> AtResolution {
        AtResolution::complete_only(resolution)
    }

    fn search(&mut self, site: &SearchSite<'_, 'p, '_>, budget: &mut Budget) -> Result<ControlFlow<()>, RunError> {
        let mut found = false;
        let mut visit = Visit(|_: &crate::exec::search::Candidate, _: &crate::cat::Evaluation| {
            found = true;
            false
        });
        search(site.statics, site.model, site.plan, site.goal, budget, &mut visit)?;
        self.found |= found;
        Ok(if found { ControlFlow::Break(()) } else { ControlFlow::Continue(()) })
    }
}
