//! The outcome-directed verdict search (issue 24): when listing every final state would take
//! too long, the verdict is decided by searching for the condition's outcome itself.
//!
//! The verdict mode enumerates every consistent execution (herd7's output lists every final
//! state) within a deterministic work budget, [`ENUMERATION_BUDGET`] consistent executions.
//! Beyond it, the states kept so far are reported as partial and the verdict comes from this
//! search instead:
//!
//! - the target is the condition's proposition (`exists P`, `~exists P`: some execution
//!   satisfying `P` decides), under the test's `filter`, put in disjunctive normal form of at
//!   most [`MAX_DISJUNCTS`] disjuncts (`forall`, and larger forms, have no directed search);
//! - for each disjunct, a search that decides first the reads its register literals read
//!   (`SearchGoal::first_reads`), cuts every partial candidate on which the disjunct is already
//!   false (three-valued evaluation over the writes each open read may still read: the
//!   explain mode's steering, [`partial_values`]), and stops at the first consistent execution
//!   whose final state satisfies it: Allowed. Forbidden when every disjunct is exhausted.
//!
//! A search that stops early sees few executions, so it cannot collect their findings: it only
//! runs on structures where no candidate can fire a flag of the model or an
//! `undefined_unless` check (`exec::search::flags_may_fire`, on bounds). Anywhere that cannot
//! be shown, and where no directed search exists, the full enumeration runs to its end as before.

use super::driver::{drive, AtResolution, Hooks, RunError, SearchSite};
use super::verdict::{final_states, value_in, Outcome, State};
use crate::config::Config;
use crate::exec::search::{flags_may_fire, search, Budget, Candidate, Explorer, Partial, SearchGoal};
use crate::exec::structure::{BarrierResolution, EventStructure};
use crate::exec::trace::SymExpr;
use crate::litmus::ast::Quantifier;
use crate::program::{Observable, Program, Prop};
use std::ops::ControlFlow;

/// The consistent executions the verdict's enumeration of every final state may tally before
/// the verdict is decided by the directed search instead (without `--all-states`). Every test of
/// the suites and of the tracked examples stays below it (the largest, the async pipeline ring
/// of 2 laps under the models without asynchronous operations, has 59,049), as do MP broadcast
/// up to 11 readers and SB up to 16 threads; at about 20,000 to 40,000 executions a second on
/// one core it stops the enumeration within a few seconds.
pub const ENUMERATION_BUDGET: u64 = 65_536;

/// The most disjuncts a condition's disjunctive normal form may have for a directed search.
pub const MAX_DISJUNCTS: usize = 64;

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

/// The disjuncts of the directed search's target for `program`, each a conjunction of
/// literals; None when it has none (`forall`, or more than [`MAX_DISJUNCTS`] disjuncts).
pub(super) fn target(program: &Program) -> Option<Vec<Prop>> {
    if program.condition.quantifier == Quantifier::Forall {
        return None;
    }
    let d = dnf(&program.condition.prop, false)?;
    Some(d.into_iter().map(|lits| lits.into_iter().reduce(|a, b| Prop::And(Box::new(a), Box::new(b))).unwrap_or(Prop::True)).collect())
}

/// The disjunctive normal form of `p` (of `¬p` when `negated`): disjuncts of literals; None
/// beyond [`MAX_DISJUNCTS`].
fn dnf(p: &Prop, negated: bool) -> Option<Vec<Vec<Prop>>> {
    let d = match (p, negated) {
        (Prop::True, false) | (Prop::False, true) => vec![Vec::new()],
        (Prop::True, true) | (Prop::False, false) => Vec::new(),
        (Prop::Not(q), _) => dnf(q, !negated)?,
        (Prop::Cmp(..), false) => vec![vec![p.clone()]],
        (Prop::Cmp(..), true) => vec![vec![Prop::Not(Box::new(p.clone()))]],
        // ¬(a ∧ b) = ¬a ∨ ¬b.
        (Prop::Or(a, b), false) | (Prop::And(a, b), true) => {
            let mut d = dnf(a, negated)?;
            d.extend(dnf(b, negated)?);
            d
        }
        (Prop::And(a, b), false) | (Prop::Or(a, b), true) => {
            let (da, db) = (dnf(a, negated)?, dnf(b, negated)?);
            if da.len().saturating_mul(db.len()) > MAX_DISJUNCTS {
                return None;
            }
            da.iter().flat_map(|x| db.iter().map(move |y| x.iter().chain(y).cloned().collect())).collect()
        }
    };
    (d.len() <= MAX_DISJUNCTS).then_some(d)
}

/// The values observable `o` may still take on a partial candidate (None: any): a register the
/// reads decided so far fix, or one of the values of the writes its open read may still read;
/// a location's final values once coherence is complete, else any value written there.
pub(crate) fn partial_values(partial: &Partial, o: &Observable) -> Option<Vec<i64>> {
    let cand = partial.cand;
    let s = cand.structure();
    match o {
        Observable::Register(t, r) => match s.symbolic_registers.get(&(*t, *r)) {
            Some(SymExpr::Read(e)) => match partial.open_reads.iter().find(|(x, _)| x == e) {
                Some((_, ws)) => Some(ws.iter().map(|&w| cand.values[w]).collect()),
                None => cand.rf.predecessors(*e).first().map(|&w| vec![cand.values[w]]),
            },
            // A computed value: known once every read it depends on is decided.
            Some(e) => {
                let open = |x: usize| partial.open_reads.iter().any(|(y, _)| *y == x);
                e.eval(&mut |x| (!open(x)).then(|| cand.value_of(x))).map(|v| vec![v])
            }
            None => Some(vec![s.registers[*t][*r]]),
        },
        Observable::Location(p) if partial.co_complete => Some(cand.final_values(*p)),
        Observable::Location(p) => {
            Some(s.events.iter().enumerate().filter(|(_, e)| e.is_write() && e.physical == Some(*p)).map(|(i, _)| cand.values[i]).collect())
        }
    }
}

/// The reads of `structure` whose values the registers `prop` mentions take, in the order the
/// proposition mentions them (what a directed search decides first).
fn reads_of(prop: &Prop, structure: &EventStructure) -> Vec<usize> {
    let mut observables = Vec::new();
    prop.observables(&mut observables);
    let mut reads = Vec::new();
    for o in &observables {
        let Observable::Register(t, r) = o else { continue };
        let Some(e) = structure.symbolic_registers.get(&(*t, *r)) else { continue };
        // Every read the expression asks for (the value given back does not matter here).
        e.eval(&mut |x| {
            if !reads.contains(&x) {
                reads.push(x);
            }
            Some(0)
        });
    }
    reads
}

/// The explorer of one disjunct: cuts what cannot satisfy it, stops at the first consistent
/// execution whose final state does.
struct DisjunctExplorer<'x> {
    program: &'x Program,
    disjunct: &'x Prop,
    observables: &'x [Observable],
    witness: Option<State>,
}

impl Explorer for DisjunctExplorer<'_> {
    fn consistent(&mut self, cand: &Candidate, _eval: &crate::cat::Evaluation) -> bool {
        for state in final_states(cand, self.observables) {
            let get = |o: &Observable| value_in(self.observables, &state, o);
            if self.program.filter.as_ref().is_none_or(|f| f.eval(&get)) && self.disjunct.eval(&get) {
                self.witness = Some(state);
                return false;
            }
        }
        true
    }

    fn steers(&self) -> bool {
        true
    }

    fn may_reach(&mut self, partial: &Partial) -> bool {
        let values = |o: &Observable| partial_values(partial, o);
        self.program.filter.as_ref().is_none_or(|f| f.may_be(&values).0) && self.disjunct.may_be(&values).0
    }
}

/// The directed search's hooks: every structure searched once per disjunct until a witness.
struct DirectedHooks<'p> {
    program: &'p Program,
    observables: Vec<Observable>,
    disjuncts: Vec<Prop>,
    witness: Option<State>,
    /// Some candidate may fire a flag of the model: the search cannot decide.
    flags_may_fire: bool,
}

impl<'p> Hooks<'p> for DirectedHooks<'p> {
    fn resolution(&mut self, resolution: &BarrierResolution) -> AtResolution {
        // A thread waits forever at a barrier: no final state (as in the verdict mode).
        if resolution.blocked.is_empty() {
            AtResolution::Search
        } else {
            AtResolution::EndStructure
        }
    }

    fn search(&mut self, site: &SearchSite<'_, 'p, '_>, budget: &mut Budget) -> Result<ControlFlow<()>, RunError> {
        if flags_may_fire(site.statics, site.model, site.plan, budget)? {
            self.flags_may_fire = true;
            return Ok(ControlFlow::Break(()));
        }
        for disjunct in &self.disjuncts {
            let goal = SearchGoal { final_reads: site.goal.final_reads.clone(), first_reads: reads_of(disjunct, site.structure) };
            let mut ex = DisjunctExplorer { program: self.program, disjunct, observables: &self.observables, witness: None };
            search(site.statics, site.model, site.plan, &goal, budget, &mut ex)?;
            if let Some(w) = ex.witness {
                self.witness = Some(w);
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    }
}

/// What the directed search of a program decided.
pub(super) enum Directed {
    /// The verdict: a witness state, or None (no execution reaches the outcome).
    Decided(Option<State>),
    /// No directed search applies (no target, or some candidate may fire a flag).
    NotApplicable,
    /// A limit stopped it (the message).
    Stopped(String),
}

/// Decide `program`'s condition by the directed search, under `config` and `deadline`.
pub(super) fn decide(program: &Program, config: &Config, deadline: Option<crate::clock::Instant>) -> Result<Directed, RunError> {
    let Some(disjuncts) = target(program) else { return Ok(Directed::NotApplicable) };
    let observables = crate::program::naming::observables(program);
    let mut hooks = DirectedHooks { program, observables, disjuncts, witness: None, flags_may_fire: false };
    match drive(program, config, deadline, &mut hooks) {
        Ok(()) if hooks.flags_may_fire => Ok(Directed::NotApplicable),
        Ok(()) => Ok(Directed::Decided(hooks.witness)),
        Err(e) => Ok(Directed::Stopped(super::verdict::limit_message(e)?)),
    }
}

/// Settle `outcome`, whose enumeration stopped at its budget, with the directed search: its
/// verdict, the witness's state among the states. False when no directed search applies (the
/// caller then enumerates in full).
pub(super) fn settle(
    program: &Program,
    config: &Config,
    deadline: Option<crate::clock::Instant>,
    outcome: &mut Outcome,
) -> Result<bool, RunError> {
    let disjuncts = target(program).map_or(0, |d| d.len());
    match decide(program, config, deadline)? {
        Directed::NotApplicable => return Ok(false),
        Directed::Stopped(msg) => outcome.incomplete = Some(msg),
        Directed::Decided(None) if outcome.stats.consistent == 0 => return Ok(false),
        Directed::Decided(witness) => {
            if let Some(state) = &witness {
                outcome.states.insert(state.clone(), true);
                if outcome.positive == 0 {
                    // The enumeration counted no execution reaching the outcome: this one is new.
                    outcome.positive = 1;
                }
            }
            outcome.partial_states =
                Some(PartialStates { budget: config.enumeration_budget.unwrap_or(0), witness: witness.is_some(), disjuncts });
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prop_of(cond: &str) -> Program {
        let src = format!("PTX T\n{{ x=0; }}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n ld.relaxed.gpu r0, x | ld.relaxed.gpu r0, x ;\n ld.relaxed.gpu r1, x | ld.relaxed.gpu r1, x ;\n{cond}\n");
        crate::program::load::parse_program(crate::diag::SourceFile::new("T.litmus", src)).expect("a valid test")
    }

    #[test]
    fn the_target_in_disjunctive_normal_form() {
        let n = |cond: &str| target(&prop_of(cond)).map(|d| d.len());
        assert_eq!(n("exists (0:r0=1 /\\ 0:r1=0 \\/ 1:r0=1 /\\ 1:r1=0)"), Some(2));
        // (a ∨ b) ∧ (c ∨ d): four disjuncts; a negation pushed inwards.
        assert_eq!(n("exists ((0:r0=1 \\/ 0:r1=1) /\\ (1:r0=1 \\/ 1:r1=1))"), Some(4));
        assert_eq!(n("~exists (~(0:r0=1 /\\ 0:r1=1))"), Some(2));
        assert_eq!(n("forall (0:r0=0)"), None);
    }

    #[test]
    fn too_many_disjuncts_have_no_target() {
        // A product of 7 binary disjunctions has 128 disjuncts.
        let lits: Vec<String> = (0..7).map(|_| "(0:r0=1 \\/ 0:r1=1)".to_string()).collect();
        assert_eq!(target(&prop_of(&format!("exists ({})", lits.join(" /\\ ")))).map(|d| d.len()), None);
    }
}
