//! Evaluation of a resolved model over bit-matrix relations.
//!
//! Evaluation is split in two phases so that work shared by all candidate executions of one
//! event structure is done once:
//!
//! * [`CatModel::prepare`](super::CatModel::prepare) classifies every environment name as
//!   static or dynamic, evaluates every definition unit that depends only on static names, and
//!   decides every check that depends only on static names.
//!   Inside the remaining (dynamic) expressions, every maximal static subexpression such as
//!   `[GEN]` or `same-proxy & scta & vloc` is evaluated once and replaced by a constant.
//! * [`Prepared::evaluate`] then evaluates, per candidate, only the dynamic units the checks
//!   need, on demand and in definition order, each at most once.
//!
//! Values are looked up by slot number in two layers (static, then per-candidate), and
//! expressions borrow from those layers where they can (`Cow`), so naming a definition never
//! copies its matrix.

use super::ast::{BinOp, CheckKind, FlagKind, UnOp};
use super::resolve::{Bound, Check, IExpr, IKind, Program, SlotSet};
use super::{CatEnv, CatError, Value};
use crate::diag::Span;
use crate::relation::{EventSet, Relation};
use std::borrow::Cow;

/// A runtime value. `Empty` is the polymorphic empty value (`0`, and the starting point of a
/// `let rec` fixpoint): it acts as an empty set next to sets and an empty relation next to
/// relations, so models can use `0` without committing to a type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Val {
    Set(EventSet),
    Rel(Relation),
    Empty,
}

static EMPTY: Val = Val::Empty;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ty {
    Set,
    Rel,
    Empty,
}

impl Val {
    fn ty(&self) -> Ty {
        match self {
            Val::Set(_) => Ty::Set,
            Val::Rel(_) => Ty::Rel,
            Val::Empty => Ty::Empty,
        }
    }

    fn from_value(v: Value) -> Val {
        match v {
            Value::Set(s) => Val::Set(s),
            Value::Rel(r) => Val::Rel(r),
        }
    }

    fn into_value(self, n: usize) -> Value {
        match self {
            Val::Set(s) => Value::Set(s),
            Val::Rel(r) => Value::Rel(r),
            Val::Empty => Value::Rel(Relation::empty(n)),
        }
    }

    /// The value as a relation; a set `S` becomes `[S]`.
    fn to_relation(&self, n: usize) -> Relation {
        match self {
            Val::Set(s) => Relation::of_set(s),
            Val::Rel(r) => r.clone(),
            Val::Empty => Relation::empty(n),
        }
    }
}

fn describe(t: Ty) -> &'static str {
    match t {
        Ty::Set => "a set",
        Ty::Rel => "a relation",
        Ty::Empty => "the empty value",
    }
}

/// An evaluation error with a *global* span; turned into a [`CatError`] at the API boundary.
#[derive(Debug)]
pub(crate) struct EvalError {
    message: String,
    span: Option<Span>,
}

impl EvalError {
    fn new(span: Span, message: impl Into<String>) -> Self {
        EvalError { message: message.into(), span: Some(span) }
    }

    pub(crate) fn into_cat(self, prog: &Program) -> CatError {
        match self.span.and_then(|s| prog.files.locate(s)) {
            Some((file, local)) => CatError { message: self.message, span: Some(local), file: Some(file.clone()) },
            None => CatError { message: self.message, span: None, file: None },
        }
    }
}

fn expected_relation(span: Span) -> EvalError {
    EvalError::new(span, "expected a relation, found a set; write [S] for the identity on S")
}

fn expected_set(span: Span) -> EvalError {
    EvalError::new(span, "expected a set, found a relation")
}

/// Values of definitions and environment names, indexed by slot.
#[derive(Clone, Debug, Default)]
struct Layer {
    defs: Vec<Option<Val>>,
    env: Vec<Option<Val>>,
}

impl Layer {
    fn new(defs: usize, env: usize) -> Self {
        Layer { defs: vec![None; defs], env: vec![None; env] }
    }
}

/// Read-only view of the static layer, the per-candidate layer and the hoisted constants.
struct Store<'a> {
    n: usize,
    fixed: &'a Layer,
    local: &'a Layer,
    consts: &'a [Val],
}

impl<'a> Store<'a> {
    fn def(&self, d: u32) -> Option<&'a Val> {
        let d = d as usize;
        self.fixed.defs.get(d).and_then(Option::as_ref).or_else(|| self.local.defs.get(d).and_then(Option::as_ref))
    }

    fn env(&self, s: u32) -> Option<&'a Val> {
        let s = s as usize;
        self.fixed.env.get(s).and_then(Option::as_ref).or_else(|| self.local.env.get(s).and_then(Option::as_ref))
    }

    fn eval(&self, e: &IExpr) -> Result<Cow<'a, Val>, EvalError> {
        match &e.kind {
            IKind::Env(s) => {
                self.env(*s).map(Cow::Borrowed).ok_or_else(|| EvalError::new(e.span, "internal error: environment value not available"))
            }
            IKind::Def(d) => {
                self.def(*d).map(Cow::Borrowed).ok_or_else(|| EvalError::new(e.span, "internal error: definition evaluated out of order"))
            }
            IKind::Const(c) => self
                .consts
                .get(*c as usize)
                .map(Cow::Borrowed)
                .ok_or_else(|| EvalError::new(e.span, "internal error: constant out of range")),
            IKind::Zero => Ok(Cow::Borrowed(&EMPTY)),
            IKind::Param(_) => Err(EvalError::new(e.span, "internal error: unsubstituted function parameter")),
            IKind::Un(op, a) => {
                let v = self.eval(a)?;
                unary(*op, v, a.span, self.n)
            }
            IKind::Bin(op, a, b) => {
                let x = self.eval(a)?;
                let y = self.eval(b)?;
                binary(*op, x, y, a.span, b.span, e.span)
            }
        }
    }
}

fn unary(op: UnOp, v: Cow<'_, Val>, arg: Span, n: usize) -> Result<Cow<'_, Val>, EvalError> {
    let out = match (op, &*v) {
        (UnOp::Complement, Val::Set(s)) => Val::Set(s.complement()),
        (UnOp::Complement, Val::Rel(r)) => Val::Rel(r.complement()),
        (UnOp::Complement, Val::Empty) => Val::Rel(Relation::empty(n).complement()),
        (UnOp::ToId, Val::Set(s)) => Val::Rel(Relation::of_set(s)),
        (UnOp::ToId, Val::Rel(_)) => return Err(expected_set(arg)),
        (UnOp::ToId, Val::Empty) => return Ok(v),
        // Every remaining operator takes a relation.
        (_, Val::Set(_)) => return Err(expected_relation(arg)),
        (UnOp::Plus | UnOp::Inverse | UnOp::Domain | UnOp::Range, Val::Empty) => return Ok(v),
        (UnOp::Star | UnOp::Opt, Val::Empty) => Val::Rel(Relation::identity(n)),
        (UnOp::Plus, Val::Rel(r)) => Val::Rel(r.plus()),
        (UnOp::Star, Val::Rel(r)) => Val::Rel(r.star()),
        (UnOp::Opt, Val::Rel(r)) => Val::Rel(r.optional()),
        (UnOp::Inverse, Val::Rel(r)) => Val::Rel(r.inverse()),
        (UnOp::Domain, Val::Rel(r)) => Val::Set(r.domain()),
        (UnOp::Range, Val::Rel(r)) => Val::Set(r.range()),
    };
    Ok(Cow::Owned(out))
}

fn binary<'a>(op: BinOp, x: Cow<'a, Val>, y: Cow<'a, Val>, xs: Span, ys: Span, span: Span) -> Result<Cow<'a, Val>, EvalError> {
    let (tx, ty) = (x.ty(), y.ty());
    match op {
        BinOp::Union | BinOp::Inter | BinOp::Diff => {
            match (tx, ty) {
                (Ty::Empty, _) => return Ok(if op == BinOp::Union { y } else { x }),
                (_, Ty::Empty) => return Ok(if op == BinOp::Inter { y } else { x }),
                (a, b) if a != b => {
                    return Err(EvalError::new(
                        span,
                        format!("`{}` needs two sets or two relations, found {} and {}", op.symbol(), describe(a), describe(b)),
                    ));
                }
                _ => {}
            }
            let out = match (x, &*y) {
                // Reuse an owned left operand rather than allocating a fresh matrix.
                (Cow::Owned(Val::Rel(mut a)), Val::Rel(b)) if op == BinOp::Union => {
                    a.union_with(b);
                    Val::Rel(a)
                }
                (x, y) => match (&*x, y) {
                    (Val::Set(a), Val::Set(b)) => Val::Set(match op {
                        BinOp::Union => a.union(b),
                        BinOp::Inter => a.intersection(b),
                        _ => a.difference(b),
                    }),
                    (Val::Rel(a), Val::Rel(b)) => Val::Rel(match op {
                        BinOp::Union => a.union(b),
                        BinOp::Inter => a.intersection(b),
                        _ => a.difference(b),
                    }),
                    _ => unreachable!("operand types checked above"),
                },
            };
            Ok(Cow::Owned(out))
        }
        BinOp::Seq => match (&*x, &*y) {
            (Val::Set(_), _) => Err(expected_relation(xs)),
            (_, Val::Set(_)) => Err(expected_relation(ys)),
            (Val::Empty, _) => Ok(x),
            (_, Val::Empty) => Ok(y),
            (Val::Rel(a), Val::Rel(b)) => Ok(Cow::Owned(Val::Rel(a.seq(b)))),
        },
        BinOp::Product => match (&*x, &*y) {
            (Val::Rel(_), _) => Err(expected_set(xs)),
            (_, Val::Rel(_)) => Err(expected_set(ys)),
            (Val::Empty, _) | (_, Val::Empty) => Ok(Cow::Borrowed(&EMPTY)),
            (Val::Set(a), Val::Set(b)) => Ok(Cow::Owned(Val::Rel(Relation::product(a, b)))),
        },
    }
}

/// Whether `kind v` holds (before negation).
fn check_condition(kind: CheckKind, v: &Val, span: Span) -> Result<bool, EvalError> {
    Ok(match (kind, v) {
        (_, Val::Empty) => true,
        (CheckKind::Empty, Val::Set(s)) => s.is_empty(),
        (CheckKind::Empty, Val::Rel(r)) => r.is_empty(),
        (_, Val::Set(_)) => return Err(expected_relation(span)),
        (CheckKind::Acyclic, Val::Rel(r)) => r.is_acyclic(),
        (CheckKind::Irreflexive, Val::Rel(r)) => r.is_irreflexive(),
    })
}

/// The result of one check on one candidate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckOutcome {
    /// Position of the check in [`CatModel::checks`](super::CatModel::checks).
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

/// Per-check plan computed by `prepare`.
#[derive(Clone, Debug)]
struct CheckPlan {
    /// The check's expression with static subexpressions hoisted (dynamic checks only).
    expr: Option<IExpr>,
    /// Dynamic units the check needs, in evaluation order.
    dyn_units: Vec<u32>,
    /// Dynamic environment slots the check needs (transitively).
    dyn_env: Vec<u32>,
    /// For checks that depend only on static names: `(holds, relation)`, decided once.
    fixed: Option<(bool, Relation)>,
}

/// A model specialised to one event structure: static definitions are evaluated, and
/// candidates are evaluated with [`Prepared::evaluate`]. `Send + Sync`, so one `Prepared` can
/// serve candidates on several threads.
#[derive(Debug)]
pub struct Prepared<'m> {
    prog: &'m Program,
    n: usize,
    statics: Layer,
    dynamic: SlotSet,
    unit_static: Vec<bool>,
    /// Bodies of the dynamic units, with static subexpressions hoisted into `consts`; `None`
    /// for static units (already evaluated into `statics`).
    bodies: Vec<Option<Vec<IExpr>>>,
    consts: Vec<Val>,
    plans: Vec<CheckPlan>,
}

pub(crate) fn prepare<'m>(prog: &'m Program, static_env: &dyn CatEnv, dynamic: &[&str]) -> Result<Prepared<'m>, CatError> {
    prepare_inner(prog, static_env, dynamic).map_err(|e| e.into_cat(prog))
}

fn prepare_inner<'m>(prog: &'m Program, static_env: &dyn CatEnv, dynamic: &[&str]) -> Result<Prepared<'m>, EvalError> {
    let n = static_env.universe();
    let mut statics = Layer::new(prog.defs.len(), prog.env.len());
    let mut dyn_slots = SlotSet::default();
    for (slot, env) in prog.env.iter().enumerate() {
        if dynamic.contains(&env.name.as_str()) {
            dyn_slots.insert(slot as u32);
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
    // Static units only depend on earlier static units, so one pass in order suffices.
    let empty = Layer::default();
    for (u, unit) in prog.units.iter().enumerate() {
        if unit_static[u] {
            eval_unit(prog, u as u32, &unit.bodies, n, &empty, &mut statics, &[])?;
        }
    }
    let mut hoister = Hoister { prog, n, statics: &statics, dynamic: &dyn_slots, unit_static: &unit_static, consts: Vec::new() };
    let mut bodies = Vec::with_capacity(prog.units.len());
    for (u, unit) in prog.units.iter().enumerate() {
        bodies.push(if unit_static[u] {
            None
        } else {
            Some(unit.bodies.iter().map(|b| hoister.rewrite(b)).collect::<Result<Vec<_>, _>>()?)
        });
    }
    let mut plans = Vec::with_capacity(prog.checks.len());
    for check in &prog.checks {
        let dyn_units: Vec<u32> = check.units.iter().copied().filter(|&u| !unit_static[u as usize]).collect();
        let dyn_env: Vec<u32> = check.env_deps.iter().filter(|&s| dyn_slots.contains(s)).collect();
        let (expr, fixed) = if dyn_env.is_empty() {
            let st = Store { n, fixed: &statics, local: &empty, consts: &[] };
            (None, Some(run_check(check, &check.expr, &st)?))
        } else {
            (Some(hoister.rewrite(&check.expr)?), None)
        };
        plans.push(CheckPlan { expr, dyn_units, dyn_env, fixed });
    }
    let consts = hoister.consts;
    Ok(Prepared { prog, n, statics, dynamic: dyn_slots, unit_static, bodies, consts, plans })
}

/// Rewrites expressions of dynamic units and checks so that every maximal subexpression that
/// depends only on static names (such as `[GEN]` or `same-proxy & scta & vloc`) is evaluated
/// once, at preparation, instead of once per candidate.
struct Hoister<'a> {
    prog: &'a Program,
    n: usize,
    statics: &'a Layer,
    dynamic: &'a SlotSet,
    unit_static: &'a [bool],
    consts: Vec<Val>,
}

impl Hoister<'_> {
    fn rewrite(&mut self, e: &IExpr) -> Result<IExpr, EvalError> {
        let (e, is_static) = self.walk(e)?;
        if is_static {
            self.freeze(e)
        } else {
            Ok(e)
        }
    }

    /// The rewritten expression, and whether it is entirely static (in which case the caller
    /// decides whether to freeze it or a larger static expression containing it).
    fn walk(&mut self, e: &IExpr) -> Result<(IExpr, bool), EvalError> {
        let span = e.span;
        Ok(match &e.kind {
            IKind::Env(s) => (e.clone(), !self.dynamic.contains(*s)),
            IKind::Def(d) => {
                let unit = self.prog.defs[*d as usize].unit;
                (e.clone(), self.unit_static[unit as usize])
            }
            IKind::Zero => (e.clone(), true),
            IKind::Param(_) | IKind::Const(_) => (e.clone(), false),
            IKind::Un(op, a) => {
                let (a, sa) = self.walk(a)?;
                (IExpr { kind: IKind::Un(*op, Box::new(a)), span }, sa)
            }
            IKind::Bin(op, a, b) => {
                let (a, sa) = self.walk(a)?;
                let (b, sb) = self.walk(b)?;
                if sa && sb {
                    (IExpr { kind: IKind::Bin(*op, Box::new(a), Box::new(b)), span }, true)
                } else {
                    let a = if sa { self.freeze(a)? } else { a };
                    let b = if sb { self.freeze(b)? } else { b };
                    (IExpr { kind: IKind::Bin(*op, Box::new(a), Box::new(b)), span }, false)
                }
            }
        })
    }

    /// Evaluates a static expression into a constant; names and `0` are already cheap lookups.
    fn freeze(&mut self, e: IExpr) -> Result<IExpr, EvalError> {
        if matches!(e.kind, IKind::Env(_) | IKind::Def(_) | IKind::Zero) {
            return Ok(e);
        }
        let empty = Layer::default();
        let st = Store { n: self.n, fixed: self.statics, local: &empty, consts: &[] };
        let v = st.eval(&e)?.into_owned();
        self.consts.push(v);
        Ok(IExpr { kind: IKind::Const(self.consts.len() as u32 - 1), span: e.span })
    }
}

fn checked_env_value(v: Value, n: usize, name: &str, span: Span) -> Result<Val, EvalError> {
    let m = match &v {
        Value::Set(s) => s.universe(),
        Value::Rel(r) => r.universe(),
    };
    if m != n {
        return Err(EvalError::new(span, format!("the engine provided `{name}` over {m} events, but the execution has {n}")));
    }
    Ok(Val::from_value(v))
}

/// Evaluates unit `u`, whose (possibly hoisted) bodies are `bodies`, into `local`; `fixed`
/// holds values computed earlier (the static layer).
fn eval_unit(
    prog: &Program,
    u: u32,
    bodies: &[IExpr],
    n: usize,
    fixed: &Layer,
    local: &mut Layer,
    consts: &[Val],
) -> Result<(), EvalError> {
    let unit = &prog.units[u as usize];
    if !unit.rec {
        let st = Store { n, fixed, local, consts };
        let v = st.eval(&bodies[0])?.into_owned();
        local.defs[unit.slots[0] as usize] = Some(v);
        return Ok(());
    }
    // Least fixpoint by Kleene iteration from the empty value. For monotone bodies every
    // non-final round adds at least one pair (or settles a type), which bounds the rounds;
    // exceeding the bound means the body is not monotone and may oscillate forever.
    for &s in &unit.slots {
        local.defs[s as usize] = Some(Val::Empty);
    }
    let limit = unit.slots.len() * (n * n + 2) + 2;
    for _ in 0..limit {
        let next = {
            let st = Store { n, fixed, local, consts };
            bodies.iter().map(|b| st.eval(b).map(Cow::into_owned)).collect::<Result<Vec<_>, _>>()?
        };
        let mut changed = false;
        for (&s, v) in unit.slots.iter().zip(next) {
            let cell = &mut local.defs[s as usize];
            if cell.as_ref() != Some(&v) {
                changed = true;
                *cell = Some(v);
            }
        }
        if !changed {
            return Ok(());
        }
    }
    let d = &prog.defs[unit.slots[0] as usize];
    Err(EvalError::new(d.span, format!("`let rec {}` does not reach a fixpoint (is the definition monotone?)", d.name)))
}

/// Evaluates `expr` (the check's own expression, or its hoisted form) and decides the check.
fn run_check(check: &Check, expr: &IExpr, st: &Store<'_>) -> Result<(bool, Relation), EvalError> {
    let v = st.eval(expr)?;
    let condition = check_condition(check.kind, &v, check.expr.span)? != check.negated;
    let holds = match check.flag {
        None | Some(FlagKind::UndefinedUnless) => condition,
        Some(FlagKind::Flag) => !condition,
    };
    Ok((holds, v.to_relation(st.n)))
}

impl<'m> Prepared<'m> {
    /// Number of events of the executions this preparation is for.
    pub fn universe(&self) -> usize {
        self.n
    }

    /// Number of static subexpressions hoisted out of the per-candidate work.
    pub fn hoisted_constants(&self) -> usize {
        self.consts.len()
    }

    fn outcome(&self, i: usize, local: &mut Layer, dyn_env: &dyn CatEnv) -> Result<CheckOutcome, EvalError> {
        let plan = &self.plans[i];
        let check = &self.prog.checks[i];
        let (holds, relation) = match (&plan.fixed, &plan.expr) {
            (Some(fixed), _) => fixed.clone(),
            (None, Some(expr)) => {
                self.ensure(local, dyn_env, &plan.dyn_env, &plan.dyn_units)?;
                let st = Store { n: self.n, fixed: &self.statics, local, consts: &self.consts };
                run_check(check, expr, &st)?
            }
            (None, None) => return Err(EvalError::new(check.span, "internal error: check was not prepared")),
        };
        Ok(CheckOutcome { index: i, name: check.name.clone(), kind: check.kind, flag: check.flag, holds, relation })
    }

    /// Makes sure the given dynamic environment slots are fetched and units evaluated.
    fn ensure(&self, local: &mut Layer, dyn_env: &dyn CatEnv, env: &[u32], units: &[u32]) -> Result<(), EvalError> {
        for &s in env {
            if local.env[s as usize].is_none() {
                let e = &self.prog.env[s as usize];
                let v = dyn_env
                    .lookup(&e.name)
                    .ok_or_else(|| EvalError::new(e.first_use, format!("the engine did not provide `{}` for this candidate", e.name)))?;
                local.env[s as usize] = Some(checked_env_value(v, self.n, &e.name, e.first_use)?);
            }
        }
        for &u in units {
            let first = self.prog.units[u as usize].slots[0] as usize;
            if local.defs[first].is_some() {
                continue;
            }
            let Some(bodies) = &self.bodies[u as usize] else {
                let span = self.prog.defs[first].span;
                return Err(EvalError::new(span, "internal error: static unit scheduled per candidate"));
            };
            eval_unit(self.prog, u, bodies, self.n, &self.statics, local, &self.consts)?;
        }
        Ok(())
    }

    fn fresh_layer(&self, dyn_env: &dyn CatEnv) -> Result<Layer, CatError> {
        if dyn_env.universe() != self.n {
            return Err(CatError {
                message: format!("candidate has {} events but the model was prepared for {}", dyn_env.universe(), self.n),
                span: None,
                file: None,
            });
        }
        Ok(Layer::new(self.prog.defs.len(), self.prog.env.len()))
    }

    /// Evaluates every check for one candidate. `dyn_env` supplies the dynamic names. With
    /// `stop_at_first_failure`, evaluation stops after the first failing non-flag check (the
    /// result then lists only the checks evaluated so far, the failing one last).
    pub fn evaluate(&self, dyn_env: &dyn CatEnv, stop_at_first_failure: bool) -> Result<Evaluation, CatError> {
        let mut local = self.fresh_layer(dyn_env)?;
        let mut checks = Vec::with_capacity(self.plans.len());
        for i in 0..self.plans.len() {
            let o = self.outcome(i, &mut local, dyn_env).map_err(|e| e.into_cat(self.prog))?;
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
        let mut avail = SlotSet::default();
        for name in available {
            if let Some(s) = self.prog.env_slot(name) {
                avail.insert(s);
            }
        }
        let mut local: Option<Layer> = None;
        for (i, plan) in self.plans.iter().enumerate() {
            if self.prog.checks[i].flag.is_some() || !plan.dyn_env.iter().all(|&s| avail.contains(s)) {
                continue;
            }
            if !self.holds_lazily(i, &mut local, dyn_env)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Pruning support: evaluates only the checks at `checks` (indices into
    /// [`CatModel::checks`](super::CatModel::checks)) and returns whether all of them hold.
    /// Flagged checks (`flag`, `undefined_unless`) among them are skipped, as they do not take
    /// part in consistency. `dyn_env` follows the conventions of [`Prepared::evaluate`], but is
    /// asked only for the dynamic names the listed checks need, and only once one of them
    /// needs it; evaluation stops at the first failing check.
    ///
    /// Fails on an index that is not a check (before evaluating anything), and on evaluation
    /// errors of the checks evaluated.
    pub fn check_subset(&self, dyn_env: &dyn CatEnv, checks: &[usize]) -> Result<bool, CatError> {
        if let Some(&bad) = checks.iter().find(|&&i| i >= self.plans.len()) {
            let message = format!("no check with index {bad}: the model has {} checks", self.plans.len());
            return Err(CatError { message, span: None, file: None });
        }
        let mut local: Option<Layer> = None;
        for &i in checks {
            if self.prog.checks[i].flag.is_none() && !self.holds_lazily(i, &mut local, dyn_env)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Evaluates the checks at `checks` (indices into [`CatModel::checks`](super::CatModel::checks))
    /// and returns their outcomes, flags included, in the order given.
    pub fn evaluate_checks(&self, dyn_env: &dyn CatEnv, checks: &[usize]) -> Result<Vec<CheckOutcome>, CatError> {
        if let Some(&bad) = checks.iter().find(|&&i| i >= self.plans.len()) {
            let message = format!("no check with index {bad}: the model has {} checks", self.plans.len());
            return Err(CatError { message, span: None, file: None });
        }
        let mut local = self.fresh_layer(dyn_env)?;
        checks.iter().map(|&i| self.outcome(i, &mut local, dyn_env).map_err(|e| e.into_cat(self.prog))).collect()
    }

    /// Whether check `i` holds, reusing the per-candidate layer `local` across calls. The layer
    /// is only created once a check actually needs dynamic values, so that decided (static)
    /// checks cost nothing and touch nothing in `dyn_env`.
    fn holds_lazily(&self, i: usize, local: &mut Option<Layer>, dyn_env: &dyn CatEnv) -> Result<bool, CatError> {
        if let Some((holds, _)) = &self.plans[i].fixed {
            return Ok(*holds);
        }
        let layer = match local {
            Some(layer) => layer,
            None => local.insert(self.fresh_layer(dyn_env)?),
        };
        Ok(self.outcome(i, layer, dyn_env).map_err(|e| e.into_cat(self.prog))?.holds)
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
                let mut local = self.fresh_layer(dyn_env)?;
                self.ensure(&mut local, dyn_env, &[s], &[]).map_err(|e| e.into_cat(self.prog))?;
                Ok(local.env[s as usize].as_ref().and_then(into))
            }
            Bound::Def(d) => {
                if let Some(v) = &self.statics.defs[d as usize] {
                    return Ok(into(v));
                }
                let u = self.prog.defs[d as usize].unit;
                let unit = &self.prog.units[u as usize];
                let units: Vec<u32> =
                    unit.deps.iter().copied().chain(std::iter::once(u)).filter(|&u| !self.unit_static[u as usize]).collect();
                let env: Vec<u32> = unit.env_deps.iter().filter(|&s| self.dynamic.contains(s)).collect();
                let mut local = self.fresh_layer(dyn_env)?;
                self.ensure(&mut local, dyn_env, &env, &units).map_err(|e| e.into_cat(self.prog))?;
                Ok(local.defs[d as usize].as_ref().and_then(into))
            }
        }
    }
}
