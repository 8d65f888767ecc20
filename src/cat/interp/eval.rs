//! Evaluation of candidates on a [`Prepared`] model, with or without a [`Stage`]: every
//! check, the checks that can be decided on a partial candidate, a subset of the checks, and
//! the value of one name.

use super::expr::Store;
use super::fixpoint::{eval_unit, Target};
use super::layers::{bit_set, set_bit, Call, Stage};
use super::ops::decide;
use super::prepare::Prepared;
use super::value::{checked_env_value, into_relation, plain_error, EvalError, Ty, Val};
use crate::cat::ast::{CheckKind, FlagKind};
use crate::cat::resolve::{Bound, SlotSet};
use crate::cat::{CatEnv, CatError, Value};
use crate::relation::Relation;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// The result of one check on one candidate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckOutcome {
    /// Position of the check in [`CatModel::checks`](crate::cat::CatModel::checks).
    pub index: usize,
    pub name: String,
    pub kind: CheckKind,
    pub flag: Option<FlagKind>,
    /// For ordinary checks: the constraint is satisfied. For flagged checks: the flag did
    /// **not** fire (`flag c` fires when `c` holds, `undefined_unless c` fires when `c` fails).
    pub holds: bool,
    /// The value the check was evaluated on (a set `S` is given as `[S]`), for explanations.
    pub relation: Relation,
}

/// The checks of one candidate, in model order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Evaluation {
    pub checks: Vec<CheckOutcome>,
}

impl Evaluation {
    /// All evaluated non-flag checks hold.
    pub fn consistent(&self) -> bool {
        self.checks.iter().all(|c| c.flag.is_some() || c.holds)
    }

    /// The flagged checks that fired.
    pub fn fired_flags(&self) -> Vec<&CheckOutcome> {
        self.checks.iter().filter(|c| c.flag.is_some() && !c.holds).collect()
    }

    /// The non-flag checks that failed.
    pub fn failed(&self) -> Vec<&CheckOutcome> {
        self.checks.iter().filter(|c| c.flag.is_none() && !c.holds).collect()
    }
}

/// Which values of the checks an evaluation returns.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    Always,
    Never,
    /// Only of a check that fails (or, flagged, fires).
    UnlessHolds,
}

impl Keep {
    fn wants(self, holds: bool) -> bool {
        self == Keep::Always || (self == Keep::UnlessHolds && !holds)
    }
}

/// The cells of one call.
struct CallTarget<'x> {
    prepared: &'x Prepared<'x>,
    stage: Option<&'x Stage>,
    local: &'x mut Call,
}

impl Target for CallTarget<'_> {
    fn store(&self) -> Store<'_> {
        let p = self.prepared;
        let dyn_rel = self.local.dyn_rel && self.stage.is_none_or(|st| !st.not_rel.load(Ordering::Relaxed));
        Store { n: p.n, statics: &p.statics, consts: &p.consts, stage: self.stage, local: &self.local.cells, dyn_rel }
    }
    fn slot(&mut self, d: u32) -> &mut Option<Val> {
        &mut self.local.cells[self.prepared.def_cell[d as usize] as usize]
    }
    fn deadline(&self) -> Option<crate::clock::Instant> {
        self.prepared.deadline
    }
}

impl<'m> Prepared<'m> {
    /// Whether the model reads the environment name `name` (a set such as `ALT-COMMIT-ORDER`).
    pub fn reads(&self, name: &str) -> bool {
        self.prog.env_slot(name).is_some()
    }

    /// The same model prepared afresh on `env`, every name static: to evaluate one complete
    /// candidate under a changed environment (a reading flipped), once.
    pub fn prepare_all_static(&self, env: &dyn CatEnv) -> Result<Prepared<'m>, CatError> {
        super::prepare(self.prog, env, &[], self.deadline)
    }

    /// Number of events of the executions this preparation is for.
    pub fn universe(&self) -> usize {
        self.n
    }

    /// Number of static subexpressions hoisted out of the per-candidate work.
    pub fn hoisted_constants(&self) -> usize {
        self.consts.len()
    }

    /// Decides check `i` (ensuring what it needs in `local` and the stage); also returns the
    /// value it was decided on when `keep` asks for it.
    fn run(
        &self,
        i: usize,
        local: &mut Call,
        stage: Option<&Stage>,
        dyn_env: &dyn CatEnv,
        keep: Keep,
    ) -> Result<(bool, Option<Relation>), EvalError> {
        let plan = &self.plans[i];
        let check = &self.prog.checks[i];
        match (&plan.fixed, &plan.expr) {
            (Some((holds, relation)), _) => Ok((*holds, keep.wants(*holds).then(|| relation.clone()))),
            (None, Some(expr)) => {
                self.ensure(local, stage, dyn_env, &plan.dyn_env, &plan.dyn_units)?;
                let dyn_rel = local.dyn_rel && stage.is_none_or(|st| !st.not_rel.load(Ordering::Relaxed));
                let st = Store { n: self.n, statics: &self.statics, consts: &self.consts, stage, local: &local.cells, dyn_rel };
                let v = st.eval(expr)?;
                let holds = decide(check, &v)?;
                Ok((holds, keep.wants(holds).then(|| into_relation(v, self.n))))
            }
            (None, None) => Err(EvalError::new(check.span, "internal error: check was not prepared")),
        }
    }

    fn outcome(&self, i: usize, local: &mut Call, stage: Option<&Stage>, env: &dyn CatEnv, keep: Keep) -> Result<CheckOutcome, CatError> {
        let (holds, relation) = self.run(i, local, stage, env, keep).map_err(|e| e.into_cat(self.prog))?;
        let check = &self.prog.checks[i];
        // A relation not kept is the empty relation over no events (no matrix).
        let relation = relation.unwrap_or_else(|| Relation::empty(0));
        Ok(CheckOutcome { index: i, name: check.name.clone(), kind: check.kind, flag: check.flag, holds, relation })
    }

    fn fetch(&self, s: u32, dyn_env: &dyn CatEnv) -> Result<Val, EvalError> {
        let e = &self.prog.env[s as usize];
        let v = dyn_env
            .lookup(&e.name)
            .ok_or_else(|| EvalError::new(e.first_use, format!("the engine did not provide `{}` for this candidate", e.name)))?;
        checked_env_value(v, self.n, &e.name, e.first_use)
    }

    /// Makes sure the given dynamic environment slots are fetched and units (a bit set)
    /// evaluated, in the stage for the available names and staged units, in `local` for the
    /// others.
    fn ensure(&self, local: &mut Call, stage: Option<&Stage>, dyn_env: &dyn CatEnv, env: &[u32], units: &[u64]) -> Result<(), EvalError> {
        for &s in env {
            let c = self.env_cell[s as usize] as usize;
            match stage.filter(|st| st.available.contains(s)) {
                Some(st) => {
                    if st.cells[c].get().is_none() {
                        let v = self.fetch(s, dyn_env)?;
                        if v.ty() != Ty::Rel {
                            st.not_rel.store(true, Ordering::Relaxed);
                        }
                        // Another thread may have set it meanwhile: to the same value.
                        let _ = st.cells[c].set(v);
                    }
                }
                None => {
                    if local.cells[c].is_none() {
                        let v = self.fetch(s, dyn_env)?;
                        local.dyn_rel &= v.ty() == Ty::Rel;
                        local.cells[c] = Some(v);
                    }
                }
            }
        }
        for (wi, &need) in units.iter().enumerate() {
            let mut todo = need & !local.done[wi];
            while todo != 0 {
                let u = wi * 64 + todo.trailing_zeros() as usize;
                todo &= todo - 1;
                let staged = stage.filter(|st| st.staged[u]);
                if staged.is_some_and(|st| st.cells[self.unit_cell[u] as usize].get().is_some()) {
                    set_bit(&mut local.done, u);
                    continue;
                }
                let unit = &self.prog.units[u];
                let Some(bodies) = &self.bodies[u] else {
                    let span = self.prog.defs[unit.slots[0] as usize].span;
                    return Err(EvalError::new(span, "internal error: static unit scheduled per candidate"));
                };
                eval_unit(self.prog, u as u32, bodies, &mut CallTarget { prepared: self, stage, local })?;
                set_bit(&mut local.done, u);
                if let Some(st) = staged {
                    // Staged units only read staged values, so the result moves to the stage.
                    for &d in &unit.slots {
                        let c = self.def_cell[d as usize] as usize;
                        if let Some(v) = local.cells[c].take() {
                            let _ = st.cells[c].set(v);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn check_universe(&self, dyn_env: &dyn CatEnv) -> Result<(), CatError> {
        if dyn_env.universe() != self.n {
            return Err(plain_error(format!("candidate has {} events but the model was prepared for {}", dyn_env.universe(), self.n)));
        }
        Ok(())
    }

    fn fresh_cells(&self, dyn_env: &dyn CatEnv) -> Result<Call, CatError> {
        self.check_universe(dyn_env)?;
        Ok(Call { cells: vec![None; self.cells], done: vec![0; self.prog.units.len().div_ceil(64)], dyn_rel: true })
    }

    fn check_stage(&self, stage: &Stage) -> Result<(), CatError> {
        if stage.owner != self.id {
            return Err(plain_error("the stage was made by another preparation".to_string()));
        }
        Ok(())
    }

    fn check_indices(&self, checks: &[usize]) -> Result<(), CatError> {
        if let Some(&bad) = checks.iter().find(|&&i| i >= self.plans.len()) {
            return Err(plain_error(format!("no check with index {bad}: the model has {} checks", self.plans.len())));
        }
        Ok(())
    }

    fn available_slots(&self, available: &[&str]) -> SlotSet {
        let mut avail = SlotSet::default();
        for name in available {
            if let Some(s) = self.prog.env_slot(name) {
                avail.insert(s);
            }
        }
        avail
    }

    /// Evaluates every check for one candidate. `dyn_env` supplies the dynamic names. With
    /// `stop_at_first_failure`, evaluation stops after the first failing non-flag check (the
    /// result then lists only the checks evaluated so far, the failing one last).
    pub fn evaluate(&self, dyn_env: &dyn CatEnv, stop_at_first_failure: bool) -> Result<Evaluation, CatError> {
        self.evaluate_in(None, dyn_env, stop_at_first_failure, Keep::Always)
    }

    /// As [`Prepared::evaluate`] (with `stop_at_first_failure`), or [`Prepared::evaluate_on`]
    /// with a stage, but only the checks that fail or fire keep their relation; a check that
    /// holds comes with the empty relation over no events. For searches, which read only those
    /// relations: at thousands of events, a matrix per check held until the evaluation ends
    /// was a quarter of the peak memory.
    pub fn evaluate_failures(&self, stage: Option<&Stage>, env: &dyn CatEnv) -> Result<Evaluation, CatError> {
        if let Some(stage) = stage {
            self.check_stage(stage)?;
        }
        self.evaluate_in(stage, env, true, Keep::UnlessHolds)
    }

    fn evaluate_in(
        &self,
        stage: Option<&Stage>,
        dyn_env: &dyn CatEnv,
        stop_at_first_failure: bool,
        keep: Keep,
    ) -> Result<Evaluation, CatError> {
        let mut local = self.fresh_cells(dyn_env)?;
        let mut checks = Vec::with_capacity(self.plans.len());
        for i in 0..self.plans.len() {
            let o = self.outcome(i, &mut local, stage, dyn_env, keep)?;
            let stop = stop_at_first_failure && o.flag.is_none() && !o.holds;
            checks.push(o);
            if stop {
                break;
            }
        }
        Ok(Evaluation { checks })
    }

    /// Pruning support: evaluates only the non-flag checks whose dependencies are all static
    /// or among `available` (dynamic names that `dyn_env` can already supply); returns `false`
    /// as soon as one of them fails.
    pub fn check_partial(&self, dyn_env: &dyn CatEnv, available: &[&str]) -> Result<bool, CatError> {
        self.check_partial_in(None, dyn_env, available)
    }

    fn check_partial_in(&self, stage: Option<&Stage>, dyn_env: &dyn CatEnv, available: &[&str]) -> Result<bool, CatError> {
        let avail = self.available_slots(available);
        let mut local: Option<Call> = None;
        for (i, plan) in self.plans.iter().enumerate() {
            if self.prog.checks[i].flag.is_some() || !plan.dyn_env.iter().all(|&s| avail.contains(s)) {
                continue;
            }
            if !self.holds_lazily(i, &mut local, stage, dyn_env)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Pruning support: evaluates only the checks at `checks` (indices into
    /// [`CatModel::checks`](crate::cat::CatModel::checks)) and returns whether all of them hold.
    /// Flagged checks (`flag`, `undefined_unless`) among them are skipped, as they do not take
    /// part in consistency. `dyn_env` follows the conventions of [`Prepared::evaluate`], but is
    /// asked only for the dynamic names the listed checks need, and only once one of them
    /// needs it; evaluation stops at the first failing check.
    ///
    /// Fails on an index that is not a check (before evaluating anything), and on evaluation
    /// errors of the checks evaluated.
    pub fn check_subset(&self, dyn_env: &dyn CatEnv, checks: &[usize]) -> Result<bool, CatError> {
        Ok(self.first_failure_in(None, dyn_env, checks, false)?.is_none())
    }

    /// Checks `checks` in order (flags skipped) until one fails: `Some((index, relation))`
    /// (the relation only with `want_relation`), or `None` when all hold.
    fn first_failure_in(
        &self,
        stage: Option<&Stage>,
        dyn_env: &dyn CatEnv,
        checks: &[usize],
        want_relation: bool,
    ) -> Result<Option<(usize, Option<Relation>)>, CatError> {
        self.check_indices(checks)?;
        let mut local: Option<Call> = None;
        for &i in checks {
            if self.prog.checks[i].flag.is_some() {
                continue;
            }
            if want_relation && self.plans[i].fixed.is_none() {
                let layer = self.layer(&mut local, dyn_env)?;
                let (holds, relation) = self.run(i, layer, stage, dyn_env, Keep::UnlessHolds).map_err(|e| e.into_cat(self.prog))?;
                if !holds {
                    return Ok(Some((i, relation)));
                }
            } else if !self.holds_lazily(i, &mut local, stage, dyn_env)? {
                let relation = self.plans[i].fixed.as_ref().filter(|_| want_relation).map(|(_, r)| r.clone());
                return Ok(Some((i, relation)));
            }
        }
        Ok(None)
    }

    /// The per-call cells, created on first need.
    fn layer<'l>(&self, local: &'l mut Option<Call>, dyn_env: &dyn CatEnv) -> Result<&'l mut Call, CatError> {
        Ok(match local {
            Some(layer) => layer,
            None => local.insert(self.fresh_cells(dyn_env)?),
        })
    }

    /// Whether check `i` holds, reusing the per-call cells `local` across calls. The cells are
    /// only created once a check actually needs dynamic values, so that decided (static)
    /// checks cost nothing and touch nothing in `dyn_env`.
    fn holds_lazily(&self, i: usize, local: &mut Option<Call>, stage: Option<&Stage>, dyn_env: &dyn CatEnv) -> Result<bool, CatError> {
        if let Some((holds, _)) = &self.plans[i].fixed {
            return Ok(*holds);
        }
        let layer = self.layer(local, dyn_env)?;
        Ok(self.run(i, layer, stage, dyn_env, Keep::Never).map_err(|e| e.into_cat(self.prog))?.0)
    }

    /// A stage for the dynamic names `available`, which the caller will keep fixed across the
    /// calls that use it (see [`Stage`] for the contract). The staged units are those dynamic
    /// units whose dynamic environment dependencies are all among `available`; they are not
    /// evaluated here but by the first `_on` call that needs them (with its environment), once
    /// for the whole stage. `env` is the partial environment the stage is for: only its
    /// universe is checked here. Names that are not dynamic environment names of the model are
    /// ignored; a stage for no names (`available = []`) stages nothing, and the `_on` methods
    /// then behave exactly as their counterparts without a stage.
    pub fn stage(&self, env: &dyn CatEnv, available: &[&str]) -> Result<Stage, CatError> {
        self.check_universe(env)?;
        let mut avail = SlotSet::default();
        for s in self.available_slots(available).iter() {
            if self.dynamic.contains(s) {
                avail.insert(s);
            }
        }
        let mut last = self.last_plan.lock().unwrap_or_else(|e| e.into_inner());
        let staged = match &*last {
            Some((a, staged)) if *a == avail => staged.clone(),
            _ => {
                let staged: std::sync::Arc<Vec<bool>> = std::sync::Arc::new(
                    self.prog
                        .units
                        .iter()
                        .enumerate()
                        .map(|(u, unit)| {
                            !self.unit_static[u] && unit.env_deps.iter().all(|s| !self.dynamic.contains(s) || avail.contains(s))
                        })
                        .collect(),
                );
                *last = Some((avail.clone(), staged.clone()));
                staged
            }
        };
        drop(last);
        let cells = (0..self.cells).map(|_| OnceLock::new()).collect();
        Ok(Stage { owner: self.id, available: avail, staged, cells, not_rel: AtomicBool::new(false) })
    }

    /// As [`Prepared::evaluate`], with the staged units taken from (or evaluated once into)
    /// `stage`. `env` must give the stage's available names the same values as every other
    /// environment used with the stage.
    pub fn evaluate_on(&self, stage: &Stage, env: &dyn CatEnv, stop_at_first_failure: bool) -> Result<Evaluation, CatError> {
        self.check_stage(stage)?;
        self.evaluate_in(Some(stage), env, stop_at_first_failure, Keep::Always)
    }

    /// As [`Prepared::check_subset`], with the staged units taken from (or evaluated once into)
    /// `stage`.
    pub fn check_subset_on(&self, stage: &Stage, env: &dyn CatEnv, checks: &[usize]) -> Result<bool, CatError> {
        self.check_stage(stage)?;
        Ok(self.first_failure_in(Some(stage), env, checks, false)?.is_none())
    }

    /// As [`Prepared::check_partial`], with the staged units taken from (or evaluated once
    /// into) `stage`. `available` names what `env` can supply now; it may be more than the
    /// stage's names.
    pub fn check_partial_on(&self, stage: &Stage, env: &dyn CatEnv, available: &[&str]) -> Result<bool, CatError> {
        self.check_stage(stage)?;
        self.check_partial_in(Some(stage), env, available)
    }

    /// Like [`Prepared::check_subset_on`], but returns the outcome of the first failing
    /// non-flag check among `checks` (with the relation it was decided on, for the engine to
    /// see which events the violation involves and for explanations), or `None` when all of
    /// them hold. Fails on an index that is not a check, before evaluating anything.
    pub fn first_failure_on(&self, stage: &Stage, env: &dyn CatEnv, checks: &[usize]) -> Result<Option<CheckOutcome>, CatError> {
        self.check_stage(stage)?;
        Ok(self.first_failure_in(Some(stage), env, checks, true)?.map(|(i, relation)| {
            let check = &self.prog.checks[i];
            CheckOutcome {
                index: i,
                name: check.name.clone(),
                kind: check.kind,
                flag: check.flag,
                holds: false,
                relation: relation.expect("relation requested"),
            }
        }))
    }

    /// Whether check `i` (an index into [`CatModel::checks`](crate::cat::CatModel::checks)) has
    /// the same outcome in every candidate of the structure: decided at preparation (it reads
    /// no dynamic name), or its expression known empty whenever it is defined (such as
    /// `[MBINIT] ; ...` in a structure without mbarrier initialisations).
    pub fn check_is_constant(&self, i: usize) -> bool {
        self.plans.get(i).is_some_and(|plan| {
            plan.fixed.is_some()
                || plan.expr.as_ref().is_some_and(|e| matches!(e.node, super::expr::Node::TypeOnly(..) | super::expr::Node::Zero))
        })
    }

    /// Fresh cells with definition `d` (not static) and what it needs evaluated for `env`, the
    /// staged units in `stage` when there is one.
    fn definition_cells(&self, d: u32, stage: Option<&Stage>, env: &dyn CatEnv) -> Result<Call, CatError> {
        let u = self.prog.defs[d as usize].unit;
        let unit = &self.prog.units[u as usize];
        let units = bit_set(unit.deps.iter().chain(std::iter::once(u)).filter(|&u| !self.unit_static[u as usize]), self.prog.units.len());
        let needs: Vec<u32> = unit.env_deps.iter().filter(|&s| self.dynamic.contains(s)).collect();
        let mut local = self.fresh_cells(env)?;
        self.ensure(&mut local, stage, env, &needs, &units).map_err(|e| e.into_cat(self.prog))?;
        Ok(local)
    }

    /// The value of definition `def` for the environment `env`, with the staged units taken
    /// from (or evaluated once into) `stage`: for an engine that reads a definition a check is
    /// made of (see [`crate::cat::ReadComposition`]); None for a function or a set.
    pub fn definition_on(&self, stage: &Stage, env: &dyn CatEnv, def: crate::cat::DefId) -> Result<Option<Relation>, CatError> {
        self.check_stage(stage)?;
        let d = def.0;
        if d as usize >= self.prog.defs.len() {
            return Err(plain_error(format!("no definition with index {d}")));
        }
        let value = if let Some(v) = &self.statics.defs[d as usize] {
            v.clone()
        } else {
            let local = self.definition_cells(d, Some(stage), env)?;
            let c = self.def_cell[d as usize] as usize;
            let u = self.prog.defs[d as usize].unit;
            let staged = stage.staged[u as usize].then(|| stage.cells[c].get()).flatten();
            match staged.or(local.cells[c].as_ref()) {
                Some(v) => v.clone(),
                None => return Ok(None),
            }
        };
        Ok(match value.into_value(self.n) {
            Value::Rel(r) => Some(r),
            _ => None,
        })
    }

    /// The value of a definition that is the same in every candidate (None for one that
    /// depends on a name supplied per candidate).
    pub(crate) fn static_definition(&self, def: crate::cat::DefId) -> Option<Value> {
        self.statics.defs.get(def.0 as usize)?.clone().map(|v| v.into_value(self.n))
    }

    /// The value of a name as the end of the model sees it (a definition such as `cause`, or an
    /// environment name such as `po`) for one candidate; `None` for names the model does not
    /// know and for functions.
    pub fn value_of(&self, name: &str, dyn_env: &dyn CatEnv) -> Result<Option<Value>, CatError> {
        let bound = match self.prog.scope.get(name) {
            Some(b) => *b,
            None => match self.prog.env_slot(name) {
                Some(s) => Bound::Env(s),
                None => return Ok(None),
            },
        };
        let into = |v: &Val| Some(v.clone().into_value(self.n));
        match bound {
            Bound::Fun(_) => Ok(None),
            Bound::Env(s) => {
                if let Some(v) = &self.statics.env[s as usize] {
                    return Ok(into(v));
                }
                if !self.dynamic.contains(s) {
                    // A static name no per-candidate expression reads: its value was dropped
                    // after preparation (`drop_unread_env`); the environment has it.
                    let e = &self.prog.env[s as usize];
                    return match dyn_env.lookup(&e.name) {
                        Some(v) => Ok(into(&checked_env_value(v, self.n, &e.name, e.first_use).map_err(|e| e.into_cat(self.prog))?)),
                        None if e.name == "_" => Ok(Some(Value::Set(crate::relation::EventSet::full(self.n)))),
                        None => Ok(None),
                    };
                }
                let mut local = self.fresh_cells(dyn_env)?;
                self.ensure(&mut local, None, dyn_env, &[s], &[]).map_err(|e| e.into_cat(self.prog))?;
                Ok(local.cells[self.env_cell[s as usize] as usize].as_ref().and_then(into))
            }
            Bound::Def(d) => {
                if let Some(v) = &self.statics.defs[d as usize] {
                    return Ok(into(v));
                }
                let local = self.definition_cells(d, None, dyn_env)?;
                Ok(local.cells[self.def_cell[d as usize] as usize].as_ref().and_then(into))
            }
        }
    }
}
