//! Candidate executions of one event structure, built decision by decision and checked against
//! the cat model as they are built.
//!
//! A candidate execution fixes reads-from (`rf`), coherence (`co`, a strict partial order per
//! location, PTX ISA §8.9.6), the fence-SC order (`sync_fence`) and, for each mbarrier object,
//! the order of its updates (`mo`). The search makes these choices one at a time, depth first:
//!
//! 1. **mbarrier reads** (waits, ordinary loads of an object): which state of the object's
//!    history each one reads ([`super::mbgraph`]); then, per object, which final state the
//!    history ends in. A history through the chosen states is the object's `mo` and the `rf` of
//!    its updates; histories that differ only between chosen states are one execution (every
//!    read sees the same updates and values in all of them).
//! 2. **data reads**: the write each read reads from (a write of the same location with the
//!    value the read returned, or any write for a read whose value is only shown).
//! 3. **coherence** of the locations whose order can be observed, by branch and bound; the other
//!    locations only need some consistent order (the first found is kept).
//! 4. **the fence-SC order**: only its existence matters (the final state does not depend on
//!    it), so the first consistent order ends the search for one.
//!
//! After every choice that had alternatives, each check of the model is evaluated on *bounds*
//! of the candidate: a check that can only fail more as a name grows (e.g. Causality in `rf`,
//! `co`) is evaluated with that name's smallest possible value (what is chosen so far); one
//! that can only hold more (e.g. Coherence in `co`) with the largest. A check that fails there
//! fails in every completion, so the whole subtree is cut. Checks of the form `empty (E \ co)`
//! (Coherence) are used the other way round too: once `E`'s inputs are bounded below, every
//! pair of `E` is *forced* into `co` (and likewise into `sync_fence` for FenceSC), so coherence
//! the model already implies is never guessed.
//!
//! The files of this folder:
//! - `env.rs`: the cat environments of a structure ([`StaticEnv`]) and of a complete
//!   candidate ([`Candidate`]);
//! - `budget.rs`: the [`Budget`] every search of a test shares, [`SearchStats`], [`SearchError`];
//! - `plan.rs`: the [`PrunePlan`], how each check of a model is used on partial candidates;
//! - `engine.rs`: the engine's state and the decision-by-decision depth-first search;
//! - `snapshot.rs`: the bounds of a partial candidate, and checks evaluated on them;
//! - `propagate.rs`: the options each read still has (forward checking with NoThinAir);
//! - `forcing.rs`: the check after a choice: forced pairs, the explorer's steering, the groups;
//! - `own_order.rs`: sources denied by a read's own thread (per-thread coherence), where the
//!   model forbids them;
//! - `causal.rs`: sources denied by the model's causality check on the bounds of a partial
//!   candidate;
//! - `coherence.rs`: branch and bound over coherence once reads-from is complete;
//! - `flag_bounds.rs`: whether any candidate may fire a flag of the model (before a search that
//!   stops early);
//! - `fence_sc.rs`: the search for a fence-SC order, and the evaluation of complete candidates;
//! - `free.rs`: the reads whose sources no finding sees, decided once (where the caller looks at
//!   no value).

mod bounds;
mod budget;
mod causal;
mod coherence;
mod engine;
mod env;
mod fence_sc;
mod flag_bounds;
mod forcing;
mod free;
mod own_order;
mod plan;
mod propagate;
mod snapshot;

pub use budget::{Budget, SearchError, SearchStats};
pub use coherence::coherence_orders;
pub use env::{Candidate, StaticEnv};
pub use flag_bounds::flags_may_fire;
pub use own_order::{Access, AccessKind, OwnOrderOracle, OwnPattern};
pub use plan::PrunePlan;

use crate::cat::{CatModel, CheckOutcome, Evaluation, Prepared};
use engine::Engine;

/// The names a candidate execution provides on top of its event structure.
pub const DYNAMIC_NAMES: &[&str] =
    &["rf", "co", "fr", "rfe", "rfi", "coe", "coi", "fre", "fri", "com", "sync_fence", "mo", "UB", "MBVALID"];

/// What a search is for, besides listing consistent executions.
#[derive(Clone, Debug, Default)]
pub struct SearchGoal {
    /// Reads that must read the last write of their location (the polls of a run that spins
    /// forever, under fairness); for mbarrier objects the search enforces it, for data reads the
    /// visitor checks it.
    pub final_reads: Vec<usize>,
    /// Data reads to decide before all others, in this order (the reads an outcome-directed
    /// search's target depends on, so that a branch that cannot reach it is cut early); the
    /// others follow in program line order.
    pub first_reads: Vec<usize>,
    /// The caller looks at no value of an execution (no observable: the condition is constant
    /// and the final states are empty), only at its findings: reads whose sources no finding of
    /// the model sees need one consistent choice, not every one (`free.rs`).
    pub values_unobserved: bool,
}

/// What a search reports to, and how it can be steered.
pub trait Explorer {
    /// A consistent execution; return false to stop the search. Only the checks of `eval` that
    /// fired carry their relation ([`crate::cat::Prepared::evaluate_failures`]).
    fn consistent(&mut self, cand: &Candidate, eval: &Evaluation) -> bool;
    /// Whether the search should say why it rejects (partial) candidates: `rejected` is then
    /// called with the failing check (this costs one evaluation per check instead of one per
    /// group of checks).
    fn wants_rejections(&self) -> bool {
        false
    }
    /// The search cut every candidate extending `cand` (a partial candidate: what is chosen so
    /// far, the rest at its smallest), or rejected a complete one, because `check` fails.
    fn rejected(&mut self, _cand: &Candidate, _check: &CheckOutcome) {}
    /// Whether some completion of the partial candidate can still be of interest (e.g. reach
    /// the outcome being explained); false cuts it without evaluating the model.
    fn may_reach(&mut self, _partial: &Partial) -> bool {
        true
    }
    /// Whether `may_reach` is worth asking (building a partial candidate costs).
    fn steers(&self) -> bool {
        false
    }
}

/// A closure as an [`Explorer`] that only wants the consistent executions.
pub struct Visit<F>(pub F);

impl<F: FnMut(&Candidate, &Evaluation) -> bool> Explorer for Visit<F> {
    fn consistent(&mut self, cand: &Candidate, eval: &Evaluation) -> bool {
        (self.0)(cand, eval)
    }
}

/// A partial candidate as [`Explorer::may_reach`] sees it.
pub struct Partial<'c, 'a> {
    /// What is chosen so far (rf of the reads decided, mbarrier histories so far).
    pub cand: &'c Candidate<'a>,
    /// The data reads not decided yet, with the writes each may still read.
    pub open_reads: Vec<(usize, &'c [usize])>,
    /// Whether coherence is complete (so final values are `cand.final_values`).
    pub co_complete: bool,
}

/// A model specialised to one event structure on first use: `CatModel::prepare` evaluates every
/// static definition, which a search that propagation alone decides never needs.
pub struct LazyModel<'m, 'a> {
    model: &'m CatModel,
    statics: &'a StaticEnv<'a>,
    prepared: std::cell::OnceCell<Prepared<'m>>,
    /// The budget's deadline (for the model's `let rec` fixpoints) and timeout (for messages).
    deadline: Option<crate::clock::Instant>,
    timeout_secs: f64,
}

impl<'m, 'a> LazyModel<'m, 'a> {
    /// `model` for the structure of `statics`, with no deadline.
    pub fn new(model: &'m CatModel, statics: &'a StaticEnv<'a>) -> Self {
        LazyModel { model, statics, prepared: std::cell::OnceCell::new(), deadline: None, timeout_secs: 0.0 }
    }

    /// `model` for the structure of `statics`, its `let rec` fixpoints under `budget`'s deadline.
    pub fn under(model: &'m CatModel, statics: &'a StaticEnv<'a>, budget: &Budget) -> Self {
        LazyModel { deadline: budget.deadline, timeout_secs: budget.timeout_secs, ..LazyModel::new(model, statics) }
    }

    /// An error of the model as the search reports it: one that stopped at the deadline is the
    /// time limit's.
    pub fn error(&self, e: crate::cat::CatError) -> SearchError {
        match e.timed_out {
            true => SearchError::Explore(crate::exec::trace::ExploreError::Timeout { seconds: self.timeout_secs }),
            false => SearchError::Model(e),
        }
    }

    /// The prepared model (preparing it the first time).
    pub fn get(&self) -> Result<&Prepared<'m>, SearchError> {
        if let Some(p) = self.prepared.get() {
            return Ok(p);
        }
        let p = self.model.prepare_until(self.statics, DYNAMIC_NAMES, self.deadline).map_err(|e| self.error(e))?;
        Ok(self.prepared.get_or_init(|| p))
    }
}

/// Enumerate the candidates of one structure and report each consistent one to `ex`.
pub fn search(
    statics: &StaticEnv,
    model: &LazyModel,
    plan: &PrunePlan,
    goal: &SearchGoal,
    budget: &mut Budget,
    ex: &mut dyn Explorer,
) -> Result<(), SearchError> {
    let Some(mut engine) = Engine::new(statics, model, plan, goal, budget)? else { return Ok(()) };
    match engine.dfs(ex) {
        Err(SearchError::Stopped) | Ok(_) => Ok(()),
        Err(e) => Err(e),
    }
}
