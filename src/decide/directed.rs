//! The outcome-directed verdict search (issue 24): when listing every final state would take
//! too long, the verdict is decided by searching for the condition's outcome itself.
//!
//! The verdict mode enumerates every consistent execution (herd7's output lists every final
//! state) within a deterministic work budget, `config::ENUMERATION_BUDGET` consistent executions.
//! Beyond it, the states kept so far are reported as partial and the verdict comes from this
//! search instead:
//!
//! - the target is the condition's proposition (`exists P`, `~exists P`: some execution
//!   satisfying `P` decides), under the test's `filter`, put in disjunctive normal form of at
//!   most `target::MAX_DISJUNCTS` disjuncts (`forall`, and larger forms, have no directed search);
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
use super::target::target;
use super::verdict::{final_states, value_in, Outcome, PartialStates, State};
use crate::config::Config;
use crate::exec::search::{flags_may_fire, search, Budget, Candidate, Explorer, Partial, SearchGoal, SearchStats};
use crate::exec::structure::{BarrierResolution, EventStructure};
use crate::exec::trace::SymExpr;
use crate::program::{Observable, Program, Prop};
use std::ops::ControlFlow;

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
    /// Some write's value is open (computed from reads): it has no value of its own on a partial
    /// candidate until its inputs are read, so no cut is made, only the check of complete ones.
    open_writes: bool,
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
        if self.open_writes {
            return true;
        }
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
    /// The search's statistics, once the driver's loop is over.
    stats: SearchStats,
}

impl<'p> Hooks<'p> for DirectedHooks<'p> {
    fn resolution(&mut self, resolution: &BarrierResolution) -> AtResolution {
        // A thread waits forever at a barrier: no final state (as in the verdict mode).
        AtResolution::complete_only(resolution)
    }

    fn search(&mut self, site: &SearchSite<'_, 'p, '_>, budget: &mut Budget) -> Result<ControlFlow<()>, RunError> {
        if flags_may_fire(site.statics, site.model, site.plan, budget)? {
            self.flags_may_fire = true;
            return Ok(ControlFlow::Break(()));
        }
        let open_writes = site.structure.events.iter().any(|e| e.sym.is_some());
        for disjunct in &self.disjuncts {
            let goal = SearchGoal {
                final_reads: site.goal.final_reads.clone(),
                first_reads: reads_of(disjunct, site.structure),
                values_unobserved: false,
            };
            let mut ex = DisjunctExplorer { program: self.program, disjunct, observables: &self.observables, open_writes, witness: None };
            search(site.statics, site.model, site.plan, &goal, budget, &mut ex)?;
            if let Some(w) = ex.witness {
                self.witness = Some(w);
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    fn finished(&mut self, budget: Budget, _counters_pruned: bool) {
        self.stats = budget.stats;
    }
}

/// What the directed search of a program decided.
pub(super) enum Directed {
    /// The verdict: a witness state, or None (no execution reaches the outcome); with the
    /// search's statistics.
    Decided(Option<State>, SearchStats),
    /// No directed search applies (some candidate may fire a flag).
    NotApplicable,
    /// A limit stopped it (the message).
    Stopped(String),
}

/// Decide `program`'s condition, as the `disjuncts` of its target, by the directed search under
/// `config` and `deadline`.
fn decide(program: &Program, disjuncts: Vec<Prop>, config: &Config, deadline: Option<crate::clock::Instant>) -> Result<Directed, RunError> {
    let observables = crate::program::naming::observables(program);
    let mut hooks = DirectedHooks { program, observables, disjuncts, witness: None, flags_may_fire: false, stats: SearchStats::default() };
    match drive(program, config, deadline, &mut hooks) {
        Ok(()) if hooks.flags_may_fire => Ok(Directed::NotApplicable),
        Ok(()) => Ok(Directed::Decided(hooks.witness, hooks.stats)),
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
    let Some(target) = target(program) else { return Ok(false) };
    let disjuncts = target.len();
    match decide(program, target, config, deadline)? {
        Directed::NotApplicable => return Ok(false),
        Directed::Stopped(msg) => outcome.incomplete = Some(msg),
        Directed::Decided(None, _) if outcome.stats.consistent == 0 => return Ok(false),
        Directed::Decided(witness, stats) => {
            // The statistics count the work of both searches.
            outcome.stats.add(&stats);
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
