//! Whether any candidate execution of a structure can fire one of the model's flags (`flag`,
//! `undefined_unless`), decided before the search on the bounds of the empty partial candidate.
//!
//! A search that stops early (the outcome-directed verdict search stops at its first witness
//! and cuts the branches that cannot reach the condition) never sees most executions, so it
//! cannot collect their findings. It may only run where no execution has any: each flagged
//! check is evaluated once with every dynamic name at the bound where the check fires most
//! (by the polarity analysis, as the pruning uses it the other way round). A flag that does
//! not fire there fires in no candidate. A check whose outcome is the same in every candidate
//! (`Prepared::check_is_constant`) is evaluated at any bound. Only structures without mbarrier
//! objects are answered (with none, `mo` is empty and `UB`/`MBVALID` are the same in every
//! candidate); any object, and a check whose polarity is unknown, answer "may fire".

use super::engine::Engine;
use super::plan::{Bound, BOUNDED};
use super::{Budget, LazyModel, PrunePlan, SearchError, SearchGoal, StaticEnv};
use crate::cat::{FlagKind, Monotonicity};

/// Whether some candidate execution of `statics`' structure may fire a flag or an
/// `undefined_unless` check of the model (true also where that cannot be ruled out); see the
/// module's comment. Charges one model evaluation per distinct bound choice to `budget`.
pub fn flags_may_fire(statics: &StaticEnv, model: &LazyModel, plan: &PrunePlan, budget: &mut Budget) -> Result<bool, SearchError> {
    let goal = SearchGoal::default();
    // No engine: propagation found no candidate at all, so none fires anything.
    let Some(mut engine) = Engine::new(statics, model, plan, &goal, budget)? else { return Ok(false) };
    engine.flags_may_fire()
}

impl Engine<'_, '_, '_, '_> {
    fn flags_may_fire(&mut self) -> Result<bool, SearchError> {
        if !self.objects.is_empty() {
            return Ok(true);
        }
        // The flagged checks by the bounds where each fires most.
        let mut groups: Vec<([Bound; 12], Vec<usize>)> = Vec::new();
        let prepared = self.model.get()?;
        for (i, c) in self.model.model.checks().iter().enumerate() {
            let Some(kind) = c.flag else { continue };
            let mut choice = [Bound::Lower; 12];
            // The same in every candidate: any bound will do.
            let constant = prepared.check_is_constant(i);
            for (k, name) in BOUNDED.iter().enumerate() {
                // A `flag` fires when its condition holds, an `undefined_unless` when it fails.
                choice[k] = match (c.monotonicity(name), kind) {
                    // Without mbarrier objects, `mo` is empty in every candidate.
                    _ if constant || *name == "mo" => Bound::Lower,
                    (Monotonicity::Independent, _) => Bound::Lower,
                    (Monotonicity::Monotone, FlagKind::Flag) | (Monotonicity::Antitone, FlagKind::UndefinedUnless) => Bound::Upper,
                    (Monotonicity::Antitone, FlagKind::Flag) | (Monotonicity::Monotone, FlagKind::UndefinedUnless) => Bound::Lower,
                    (Monotonicity::Unknown, _) => return Ok(true),
                };
            }
            match groups.iter_mut().find(|(b, _)| *b == choice) {
                Some((_, checks)) => checks.push(i),
                None => groups.push((choice, vec![i])),
            }
        }
        let snap = self.snapshot();
        for (choice, checks) in groups {
            let eval = self.evaluate_on_bounds(&snap, choice)?;
            if checks.iter().any(|&i| eval.checks.get(i).is_none_or(|o| !o.holds)) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
