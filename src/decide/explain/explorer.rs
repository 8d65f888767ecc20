//! The steered search of an explanation: it stops at the first consistent execution reaching
//! the outcome, records why the search cut each partial candidate that could still reach it,
//! and cuts those that cannot.

use super::describe::{describe_events, describe_steps, resolve_read_values, satisfying_state, violation_steps, Shown, Vocabulary};
use super::RejectionGroup;
use crate::cat::{CheckOutcome, Prepared};
use crate::exec::search::{Candidate, Explorer, Partial};
use crate::litmus::ast::Quantifier;
use crate::program::{Observable, Program};
use std::collections::BTreeMap;

/// What the search for an explanation collects over every event structure.
pub(super) struct Collected {
    pub(super) witness: Option<Shown>,
    pub(super) first_rejected: Option<Shown>,
    pub(super) groups: BTreeMap<(String, Vec<String>), RejectionGroup>,
    pub(super) rejected: u64,
}

/// The explorer of one event structure: stops at the first consistent execution reaching the
/// outcome, records why the search cut each partial candidate that could still reach it, and
/// cuts those that cannot.
pub(super) struct ExplainExplorer<'x, 'p> {
    pub(super) program: &'p Program,
    pub(super) prepared: &'x Prepared<'x>,
    pub(super) checks: &'x [crate::cat::CheckInfo],
    pub(super) observables: &'x [Observable],
    pub(super) out: &'x mut Collected,
}

impl Explorer for ExplainExplorer<'_, '_> {
    fn consistent(&mut self, cand: &Candidate, _eval: &crate::cat::Evaluation) -> bool {
        match satisfying_state(self.program, cand, self.observables) {
            Some(state) => {
                self.out.witness = Some(Shown::capture(self.program, cand, self.prepared, None, state));
                false
            }
            None => true,
        }
    }

    fn wants_rejections(&self) -> bool {
        true
    }

    fn rejected(&mut self, cand: &Candidate, failed: &CheckOutcome) {
        if failed.flag.is_some() {
            return;
        }
        self.out.rejected += 1;
        let vocab = Vocabulary::new(cand, self.prepared);
        let steps = violation_steps(failed.kind, &failed.relation, &vocab);
        let shape: Vec<String> = steps.iter().map(|s| s.relation.clone()).collect();
        let key = (failed.name.clone(), shape.clone());
        let program = self.program;
        let info = &self.checks[failed.index];
        let entry = self.out.groups.entry(key).or_insert_with(|| RejectionGroup {
            axiom: failed.name.clone(),
            check: info.file.slice(info.span).trim().to_string(),
            shape,
            count: 0,
            // Described with this candidate's own events (another structure's events may carry
            // other values).
            text: describe_steps(&failed.name, &steps, &describe_events(program, &resolve_read_values(cand))),
            steps: steps.clone(),
        });
        entry.count += 1;
        if self.out.first_rejected.is_none() {
            let outcome = if program.condition.quantifier == Quantifier::Forall {
                format!("~({})", program.condition.text)
            } else {
                program.condition.text.clone()
            };
            self.out.first_rejected = Some(Shown::capture(program, cand, self.prepared, Some(steps), outcome));
        }
    }

    fn steers(&self) -> bool {
        true
    }

    fn may_reach(&mut self, partial: &Partial) -> bool {
        let values = |o: &Observable| crate::decide::directed::partial_values(partial, o);
        let filter = self.program.filter.as_ref().is_none_or(|f| f.may_be(&values).0);
        let (can_true, can_false) = self.program.condition.prop.may_be(&values);
        let wanted = self.program.condition.quantifier != Quantifier::Forall;
        filter && if wanted { can_true } else { can_false }
    }
}
