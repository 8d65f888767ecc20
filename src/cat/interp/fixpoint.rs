//! Evaluation of one definition unit into the layer that receives it: a plain definition
//! directly, a `let rec` group as a least fixpoint.

use super::expr::{CExpr, Store};
use super::layers::Layer;
use super::value::{EvalError, Val};
use crate::cat::resolve::Program;
use crate::clock::Instant;
use std::borrow::Cow;

/// Where a unit's values go while it is evaluated.
pub(super) trait Target {
    /// A view of every value evaluation may read, including the target's own.
    fn store(&self) -> Store<'_>;
    /// The cell of definition `d`.
    fn slot(&mut self, d: u32) -> &mut Option<Val>;
    /// When a `let rec` must stop iterating.
    fn deadline(&self) -> Option<Instant>;
}

/// The static layer, while `prepare` fills it.
pub(super) struct StaticTarget<'x> {
    pub(super) n: usize,
    pub(super) layer: &'x mut Layer,
    pub(super) deadline: Option<Instant>,
}

impl Target for StaticTarget<'_> {
    fn store(&self) -> Store<'_> {
        Store { n: self.n, statics: self.layer, consts: &[], stage: None, local: &[], dyn_rel: false }
    }
    fn slot(&mut self, d: u32) -> &mut Option<Val> {
        &mut self.layer.defs[d as usize]
    }
    fn deadline(&self) -> Option<Instant> {
        self.deadline
    }
}

/// Events from which each unit checks the deadline before it is evaluated.
const CLOCKED_UNIVERSE: usize = 256;

/// Evaluates unit `u`, whose compiled bodies are `bodies`, into `target`.
pub(super) fn eval_unit(prog: &Program, u: u32, bodies: &[CExpr], target: &mut impl Target) -> Result<(), EvalError> {
    let unit = &prog.units[u as usize];
    // One unit over a large execution can take a while: there every unit starts under the
    // clock (over a small one a whole evaluation takes microseconds, less than reading it).
    if target.store().n >= CLOCKED_UNIVERSE && target.deadline().is_some_and(|t| Instant::now() >= t) {
        let d = &prog.defs[unit.slots[0] as usize];
        return Err(EvalError::timeout(d.span, format!("`{}` was not evaluated by the time limit", d.name)));
    }
    if !unit.rec {
        let v = target.store().eval(&bodies[0])?.into_owned();
        *target.slot(unit.slots[0]) = Some(v);
        return Ok(());
    }
    // Least fixpoint by Kleene iteration from the empty value. For monotone bodies every
    // non-final round adds at least one pair (or settles a type), which bounds the rounds;
    // exceeding the bound means the body is not monotone and may oscillate forever.
    for &s in &unit.slots {
        *target.slot(s) = Some(Val::Empty);
    }
    let n = target.store().n;
    let limit = unit.slots.len() * (n * n + 2) + 2;
    let d = &prog.defs[unit.slots[0] as usize];
    for _ in 0..limit {
        // A body that is not monotone can take up to `limit` rounds: under the clock.
        if target.deadline().is_some_and(|t| Instant::now() >= t) {
            return Err(EvalError::timeout(d.span, format!("`let rec {}` was still iterating at the time limit", d.name)));
        }
        let next = {
            let st = target.store();
            bodies.iter().map(|b| st.eval(b).map(Cow::into_owned)).collect::<Result<Vec<_>, _>>()?
        };
        let mut changed = false;
        for (&s, v) in unit.slots.iter().zip(next) {
            let cell = target.slot(s);
            if !cell.as_ref().is_some_and(|c| c.same(&v)) {
                changed = true;
                *cell = Some(v);
            }
        }
        if !changed {
            return Ok(());
        }
    }
    Err(EvalError::new(d.span, format!("`let rec {}` does not reach a fixpoint (is the definition monotone?)", d.name)))
}
