//! Preparation of a model for one event structure: static names and definitions evaluated,
//! dynamic ones numbered into cells, bodies and checks compiled, static checks decided.

use super::compile::Compiler;
use super::expr::{ty_walk, CExpr, Node, Store, TyError};
use super::fixpoint::{eval_unit, StaticTarget};
use super::layers::{bit_set, Layer, NO_CELL};
use super::ops::decide;
use super::value::{checked_env_value, into_relation, EvalError, Val};
use crate::cat::resolve::{Program, SlotSet};
use crate::cat::{CatEnv, CatError};
use crate::clock::Instant;
use crate::relation::{EventSet, Relation};
use std::sync::atomic::{AtomicU64, Ordering};

/// Per-check plan computed by `prepare`.
#[derive(Clone, Debug)]
pub(super) struct CheckPlan {
    /// The check's expression, compiled with static subexpressions hoisted (dynamic checks only).
    pub(super) expr: Option<CExpr>,
    /// Dynamic units the check needs, as a bit set (units are evaluated in ascending order).
    pub(super) dyn_units: Vec<u64>,
    /// Dynamic environment slots the check needs (transitively).
    pub(super) dyn_env: Vec<u32>,
    /// For checks that depend only on static names: `(holds, relation)`, decided once.
    pub(super) fixed: Option<(bool, Relation)>,
}

/// Distinguishes preparations, so that a [`Stage`] is only used with the one that made it.
///
/// [`Stage`]: super::Stage
static NEXT_PREPARATION: AtomicU64 = AtomicU64::new(1);

/// A model specialised to one event structure: static definitions are evaluated, and
/// candidates are evaluated with [`Prepared::evaluate`]. `Send + Sync`, so one `Prepared` can
/// serve candidates on several threads.
#[derive(Debug)]
pub struct Prepared<'m> {
    pub(super) prog: &'m Program,
    pub(super) n: usize,
    /// Identifies this preparation to the stages it makes.
    pub(super) id: u64,
    pub(super) statics: Layer,
    pub(super) dynamic: SlotSet,
    pub(super) unit_static: Vec<bool>,
    /// Cell of each dynamic environment slot (`NO_CELL` for static ones).
    pub(super) env_cell: Vec<u32>,
    /// Cell of each dynamic definition (`NO_CELL` for static ones).
    pub(super) def_cell: Vec<u32>,
    /// Cell of the first definition of each dynamic unit (`NO_CELL` for static ones).
    pub(super) unit_cell: Vec<u32>,
    /// Number of cells (dynamic environment names, then dynamic definitions).
    pub(super) cells: usize,
    /// Compiled bodies of the dynamic units, with static subexpressions hoisted into `consts`;
    /// `None` for static units (already evaluated into `statics`).
    pub(super) bodies: Vec<Option<Vec<CExpr>>>,
    pub(super) consts: Vec<Val>,
    pub(super) plans: Vec<CheckPlan>,
    /// The last set of available names a stage was made for, and its staged units (a search
    /// makes many stages for the same names).
    pub(super) last_plan: std::sync::Mutex<Option<(SlotSet, std::sync::Arc<Vec<bool>>)>>,
    /// When `let rec` fixpoints stop iterating (`--timeout`).
    pub(super) deadline: Option<Instant>,
}

pub(crate) fn prepare<'m>(
    prog: &'m Program,
    static_env: &dyn CatEnv,
    dynamic: &[&str],
    deadline: Option<Instant>,
) -> Result<Prepared<'m>, CatError> {
    prepare_inner(prog, static_env, dynamic, deadline).map_err(|e| e.into_cat(prog))
}

fn prepare_inner<'m>(
    prog: &'m Program,
    static_env: &dyn CatEnv,
    dynamic: &[&str],
    deadline: Option<Instant>,
) -> Result<Prepared<'m>, EvalError> {
    let n = static_env.universe();
    let mut statics = Layer::new(prog.defs.len(), prog.env.len());
    let mut dyn_slots = SlotSet::default();
    let mut env_cell = vec![NO_CELL; prog.env.len()];
    let mut cells = 0u32;
    for (slot, env) in prog.env.iter().enumerate() {
        if dynamic.contains(&env.name.as_str()) {
            dyn_slots.insert(slot as u32);
            env_cell[slot] = cells;
            cells += 1;
            continue;
        }
        let v = match static_env.lookup(&env.name) {
            Some(v) => checked_env_value(v, n, &env.name, env.first_use)?,
            // `_` is the universe unless the engine says otherwise.
            None if env.name == "_" => Val::Set(EventSet::full(n)),
            None => {
                return Err(EvalError::new(
                    env.first_use,
                    format!("unknown relation `{}` (not defined in the model and not provided by the engine)", env.name),
                ));
            }
        };
        statics.env[slot] = Some(v);
    }
    let unit_static: Vec<bool> = prog.units.iter().map(|u| u.env_deps.iter().all(|s| !dyn_slots.contains(s))).collect();
    let mut def_cell = vec![NO_CELL; prog.defs.len()];
    for (u, unit) in prog.units.iter().enumerate() {
        if !unit_static[u] {
            for &d in &unit.slots {
                def_cell[d as usize] = cells;
                cells += 1;
            }
        }
    }
    // Static units only depend on earlier static units, so one pass in order suffices.
    let empty = Layer::default();
    // One compiler for every static unit: its tables are as long as the model (a compiler per
    // unit made preparation quadratic in the definitions).
    let structural = Compiler::new(prog, n, &empty, &dyn_slots, &unit_static, &env_cell, &def_cell);
    for (u, unit) in prog.units.iter().enumerate() {
        if unit_static[u] {
            let c = &structural;
            let bodies: Vec<CExpr> = unit.bodies.iter().map(|b| c.structural(b)).collect();
            eval_unit(prog, u as u32, &bodies, &mut StaticTarget { n, layer: &mut statics, deadline })?;
        }
    }
    let mut c = Compiler::new(prog, n, &statics, &dyn_slots, &unit_static, &env_cell, &def_cell);
    let mut bodies = Vec::with_capacity(prog.units.len());
    for (u, unit) in prog.units.iter().enumerate() {
        if unit_static[u] {
            bodies.push(None);
            continue;
        }
        let compiled = unit.bodies.iter().map(|b| c.hoisted(b)).collect::<Result<Vec<_>, _>>()?;
        // A plain definition whose body is known empty is known empty where it is used.
        let cell = def_cell[unit.slots[0] as usize] as usize;
        if !unit.rec {
            c.cell_empty[cell] = matches!(compiled[0].node, Node::TypeOnly(..));
            c.cell_ty[cell] = match ty_walk(&compiled[0], &mut |e| c.assumed_leaf_ty(e)) {
                Ok(t) => Some(Ok(t)),
                Err(TyError::Eval(e)) => Some(Err(e)),
                Err(TyError::Unknown) => None,
            };
        }
        bodies.push(Some(compiled));
    }
    let mut plans = Vec::with_capacity(prog.checks.len());
    for check in &prog.checks {
        let dyn_units = bit_set(check.units.iter().copied().filter(|&u| !unit_static[u as usize]), prog.units.len());
        let dyn_env: Vec<u32> = check.env_deps.iter().filter(|&s| dyn_slots.contains(s)).collect();
        let (expr, fixed) = if dyn_env.is_empty() {
            let st = Store { n, statics: &statics, consts: &[], stage: None, local: &[], dyn_rel: false };
            let v = st.eval(&c.structural(&check.expr))?;
            let holds = decide(check, &v)?;
            (None, Some((holds, into_relation(v, n))))
        } else {
            (Some(c.hoisted(&check.expr)?), None)
        };
        plans.push(CheckPlan { expr, dyn_units, dyn_env, fixed });
    }
    let consts = c.consts;
    drop_unread_env(&mut statics, &bodies, &plans);
    let id = NEXT_PREPARATION.fetch_add(1, Ordering::Relaxed);
    let unit_cell = prog.units.iter().map(|u| def_cell[u.slots[0] as usize]).collect();
    Ok(Prepared {
        prog,
        n,
        id,
        statics,
        dynamic: dyn_slots,
        unit_static,
        env_cell,
        def_cell,
        unit_cell,
        cells: cells as usize,
        bodies,
        consts,
        plans,
        last_plan: std::sync::Mutex::new(None),
        deadline,
    })
}

/// Drops the environment values (`po`, `loc`, ...) that no per-candidate expression reads: the
/// static definitions and hoisted constants made from them are evaluated, and the engine keeps
/// the values themselves (`Prepared::value_of` asks it). At thousands of events each is a
/// matrix of megabytes, held twice.
fn drop_unread_env(statics: &mut Layer, bodies: &[Option<Vec<CExpr>>], plans: &[CheckPlan]) {
    let mut read = vec![false; statics.env.len()];
    let exprs = bodies.iter().flatten().flatten().chain(plans.iter().filter_map(|p| p.expr.as_ref()));
    for e in exprs {
        e.each_leaf(&mut |node| {
            if let Node::StaticEnv(s) = node {
                read[*s as usize] = true;
            }
        });
    }
    for (value, read) in statics.env.iter_mut().zip(read) {
        if !read {
            *value = None;
        }
    }
}
