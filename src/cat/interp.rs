//! Evaluation of a resolved model over bit-matrix relations.
//!
//! Evaluation is split in phases so that work shared by many candidate executions is done once:
//!
//! * [`CatModel::prepare`](super::CatModel::prepare) classifies every environment name as
//!   static or dynamic, evaluates every definition unit that depends only on static names, and
//!   decides every check that depends only on static names.
//!   Inside the remaining (dynamic) expressions, every maximal static subexpression such as
//!   `same-proxy & scta & vloc` is evaluated once and replaced by a constant.
//! * Optionally, [`Prepared::stage`] fixes some of the dynamic names (say `rf` and
//!   `sync_fence` while the engine enumerates `co`): the dynamic units that depend only on them
//!   are then evaluated at most once for the whole stage, by whichever call first needs them,
//!   and kept in the [`Stage`].
//! * [`Prepared::evaluate`] (and its pruning variants) then evaluates, per candidate, only the
//!   dynamic units the checks need, in definition order, each at most once.
//!
//! Values are looked up in three layers: static (the preparation), staged (a [`Stage`], when
//! given) and per call. Before evaluation, resolved expressions are compiled into a form that
//! says in which layer each name lives (per-call and staged values are numbered densely), and
//! in which:
//!
//! * `[S] ; r` and `r ; [S]` keep rows or columns of `r` instead of composing with a diagonal;
//! * `a \ (t1 | … | c^-1 | …)` removes a converse pair by pair instead of transposing `c`;
//! * an expression known at preparation to be `0` or an empty relation whatever the candidate
//!   (a composition with a relation that is empty in this structure, such as the completions
//!   of a test without asynchronous copies) is evaluated for its type only: the type decides
//!   which of the two it is, and raises exactly the errors full evaluation would.
//!
//! An empty relation is kept as [`Val::NoPairs`], without a matrix, and every operator
//! short-cuts on it; the operators report the emptiness of their results as they compute them.
//! Expressions borrow from the layers where they can (`Cow`), so naming a definition never
//! copies its matrix, and an operator whose operand is a fresh value works in place on it
//! instead of allocating another matrix.
//!
//! None of this changes a value, a verdict or an error: the tests compare every query, with
//! and without stages, with a plain evaluator of the language on random executions.

use super::ast::{BinOp, CheckKind, FlagKind, UnOp};
use super::resolve::{Bound, Check, IExpr, IKind, Program, SlotSet};
use super::{CatEnv, CatError, Value};
use crate::diag::Span;
use crate::relation::{EventSet, Relation};
use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

/// A runtime value. `Empty` is the polymorphic empty value (`0`, and the starting point of a
/// `let rec` fixpoint): it acts as an empty set next to sets and an empty relation next to
/// relations, so models can use `0` without committing to a type. `NoPairs` is an empty
/// *relation* (typed as one, unlike `Empty`) whose matrix is not materialised: most relations
/// of a given execution are empty (fences, async operations, aliases that it does not have),
/// and operators on them then cost nothing.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    Set(EventSet),
    Rel(Relation),
    Empty,
    NoPairs,
}

static EMPTY: Val = Val::Empty;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    Set,
    Rel,
    Empty,
}

impl Val {
    fn ty(&self) -> Ty {
        match self {
            Val::Set(_) => Ty::Set,
            Val::Rel(_) | Val::NoPairs => Ty::Rel,
            Val::Empty => Ty::Empty,
        }
    }

    fn from_value(v: Value) -> Val {
        match v {
            Value::Set(s) => Val::Set(s),
            Value::Rel(r) => Val::Rel(r).normal(),
        }
    }

    fn into_value(self, n: usize) -> Value {
        match self {
            Val::Set(s) => Value::Set(s),
            Val::Rel(r) => Value::Rel(r),
            Val::Empty | Val::NoPairs => Value::Rel(Relation::empty(n)),
        }
    }

    /// The same value, with an empty relation as `NoPairs`.
    fn normal(self) -> Val {
        match self {
            Val::Rel(r) if r.is_empty() => Val::NoPairs,
            v => v,
        }
    }

    /// Equality of the values denoted (`NoPairs` is the empty relation).
    fn same(&self, o: &Val) -> bool {
        match (self, o) {
            (Val::Set(a), Val::Set(b)) => a == b,
            (Val::Rel(a), Val::Rel(b)) => a == b,
            (Val::Rel(r), Val::NoPairs) | (Val::NoPairs, Val::Rel(r)) => r.is_empty(),
            (Val::Empty, Val::Empty) | (Val::NoPairs, Val::NoPairs) => true,
            _ => false,
        }
    }
}

/// The value as a relation (a set `S` becomes `[S]`), moved out of an owned value.
fn into_relation(v: Cow<'_, Val>, n: usize) -> Relation {
    match v {
        Cow::Owned(Val::Rel(r)) => r,
        v => match &*v {
            Val::Set(s) => Relation::of_set(s),
            Val::Rel(r) => r.clone(),
            Val::Empty | Val::NoPairs => Relation::empty(n),
        },
    }
}

/// The matrix of a materialised relation, moved out when owned and copied when borrowed (to
/// be modified in place).
fn owned_rel(v: Cow<'_, Val>) -> Relation {
    match v {
        Cow::Owned(Val::Rel(r)) => r,
        Cow::Borrowed(Val::Rel(r)) => r.clone(),
        _ => unreachable!("operand type checked by the caller"),
    }
}

fn rel_of(v: &Val) -> &Relation {
    match v {
        Val::Rel(r) => r,
        _ => unreachable!("operand type checked by the caller"),
    }
}

fn set_of(v: &Val) -> &EventSet {
    match v {
        Val::Set(s) => s,
        _ => unreachable!("operand type checked by the caller"),
    }
}

/// A relation result, as `NoPairs` when empty.
fn rel_result<'a>(r: Relation) -> Result<Cow<'a, Val>, EvalError> {
    Ok(Cow::Owned(Val::Rel(r).normal()))
}

/// A relation result whose emptiness the operator computed: `nonempty` false gives `NoPairs`
/// (and the matrix goes back to the spare storage).
fn rel_checked<'a>(r: Relation, nonempty: bool) -> Result<Cow<'a, Val>, EvalError> {
    Ok(Cow::Owned(if nonempty { Val::Rel(r) } else { Val::NoPairs }))
}

static NO_PAIRS: Val = Val::NoPairs;

fn describe(t: Ty) -> &'static str {
    match t {
        Ty::Set => "a set",
        Ty::Rel => "a relation",
        Ty::Empty => "the empty value",
    }
}

/// An evaluation error with a *global* span; turned into a [`CatError`] at the API boundary.
#[derive(Clone, Debug)]
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

fn plain_error(message: String) -> CatError {
    CatError { message, span: None, file: None }
}

/// Values of definitions and environment names of the static layer, indexed by slot.
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

/// The per-call layer: values of the dynamic environment names and definitions, indexed by
/// cell (see [`Prepared::env_cell`] and [`Prepared::def_cell`]).
struct Call {
    cells: Vec<Option<Val>>,
    /// The units known evaluated, in `cells` or in the stage, as a bit set.
    done: Vec<u64>,
    /// Every dynamic environment value fetched into `cells` is a relation.
    dyn_rel: bool,
}

fn set_bit(words: &mut [u64], i: usize) {
    words[i / 64] |= 1 << (i % 64);
}

/// The bit set of `items`, over `0..universe`.
fn bit_set(items: impl IntoIterator<Item = u32>, universe: usize) -> Vec<u64> {
    let mut words = vec![0u64; universe.div_ceil(64)];
    for i in items {
        set_bit(&mut words, i as usize);
    }
    words
}

/// A compiled expression: names resolved to the layer they live in.
#[derive(Clone, Debug)]
struct CExpr {
    node: Node,
    span: Span,
}

#[derive(Clone, Debug)]
enum Node {
    /// A definition of the static layer.
    StaticDef(u32),
    /// An environment name of the static layer.
    StaticEnv(u32),
    /// A static subexpression evaluated at preparation.
    Const(u32),
    /// A dynamic definition, by cell.
    DynDef(u32),
    /// A dynamic environment name, by cell.
    DynEnv(u32),
    Zero,
    /// A function parameter left unsubstituted (an internal error if ever evaluated).
    Param,
    Un(UnOp, Box<CExpr>),
    Bin(BinOp, Box<CExpr>, Box<CExpr>),
    /// `[s] ; r`, as the rows of `r` of the events of `s`: `(s, r)`.
    MaskRows(Box<CExpr>, Box<CExpr>),
    /// `r ; [s]`, as the columns of `r` of the events of `s`: `(r, s)`.
    MaskCols(Box<CExpr>, Box<CExpr>),
    /// `a \ (t1 | t2 | … | tk)` where some terms are converses `c^-1`: `(a, terms)`, each term
    /// with the span of the `|` that joins it (none for the first) and whether it is a converse
    /// (then the expression is `c`). The difference removes each term in turn, and a converse
    /// pair by pair, so that `loc \ (path | path^-1 | same-op)` never transposes `path`.
    DiffUnion(Box<CExpr>, Vec<(CExpr, Option<Span>, bool)>),
    /// An expression whose value is known, at preparation, to be `0` or an empty relation
    /// whenever it is defined (such as `cpl ; base-causality?` when the structure has no
    /// completion): only its type is evaluated, which decides which of the two it is and
    /// raises the errors its evaluation would, in the same order. With the type (or error)
    /// found at preparation assuming that every dynamic name is a relation, `None` when it
    /// depends on a recursive definition; used when the call's dynamic names are relations.
    TypeOnly(Box<CExpr>, Option<Result<Ty, EvalError>>),
}

/// Read-only view of the layers and the hoisted constants.
struct Store<'a> {
    n: usize,
    statics: &'a Layer,
    consts: &'a [Val],
    stage: Option<&'a Stage>,
    local: &'a [Option<Val>],
    /// Every dynamic environment value of the call (and stage) is a relation.
    dyn_rel: bool,
}

impl<'a> Store<'a> {
    /// A dynamic cell: the stage's value if it has one, else this call's.
    #[inline]
    fn cell(&self, c: u32) -> Option<&'a Val> {
        let c = c as usize;
        if let Some(v) = self.stage.and_then(|st| st.cells.get(c)).and_then(OnceLock::get) {
            return Some(v);
        }
        self.local.get(c).and_then(Option::as_ref)
    }

    /// The value of a leaf (a name, a constant, `0`) when it has one; `None` for operators and
    /// for missing values (which [`Store::eval`] reports).
    #[inline(always)]
    fn leaf(&self, e: &CExpr) -> Option<&'a Val> {
        match &e.node {
            Node::StaticDef(d) => self.statics.defs.get(*d as usize).and_then(Option::as_ref),
            Node::StaticEnv(s) => self.statics.env.get(*s as usize).and_then(Option::as_ref),
            Node::DynDef(c) | Node::DynEnv(c) => self.cell(*c),
            Node::Const(c) => self.consts.get(*c as usize),
            Node::Zero => Some(&EMPTY),
            _ => None,
        }
    }

    /// [`Store::eval`], without a call for leaves (half of all nodes).
    #[inline(always)]
    fn operand(&self, e: &CExpr) -> Result<Cow<'a, Val>, EvalError> {
        match self.leaf(e) {
            Some(v) => Ok(Cow::Borrowed(v)),
            None => self.eval(e),
        }
    }

    fn eval(&self, e: &CExpr) -> Result<Cow<'a, Val>, EvalError> {
        match &e.node {
            Node::Un(op, a) => {
                let v = self.operand(a)?;
                unary(*op, v, a.span, self.n)
            }
            Node::Bin(op, a, b) => {
                let x = self.operand(a)?;
                let y = self.operand(b)?;
                binary(*op, x, y, a.span, b.span, e.span)
            }
            Node::MaskRows(s, r) => {
                // As `[s] ; r`: `[s]` first (a relation `s` is an error), then `r`.
                let sv = self.operand(s)?;
                if sv.ty() == Ty::Rel {
                    return Err(expected_set(s.span));
                }
                let rv = self.operand(r)?;
                match (&*sv, &*rv) {
                    (_, Val::Set(_)) => Err(expected_relation(r.span)),
                    (Val::Empty, _) => Ok(sv),
                    (_, Val::Empty | Val::NoPairs) => Ok(rv),
                    (Val::Set(set), _) if set.is_empty() => Ok(Cow::Borrowed(&NO_PAIRS)),
                    _ => {
                        let mut rel = owned_rel(rv);
                        let nonempty = rel.restrict_domain(set_of(&sv));
                        rel_checked(rel, nonempty)
                    }
                }
            }
            Node::MaskCols(r, s) => {
                // As `r ; [s]`: `r` first, then `[s]`, then the type of `r`.
                let rv = self.operand(r)?;
                let sv = self.operand(s)?;
                if sv.ty() == Ty::Rel {
                    return Err(expected_set(s.span));
                }
                match (&*rv, &*sv) {
                    (Val::Set(_), _) => Err(expected_relation(r.span)),
                    (Val::Empty, _) => Ok(rv),
                    (_, Val::Empty) => Ok(sv),
                    (Val::NoPairs, _) => Ok(rv),
                    (_, Val::Set(set)) if set.is_empty() => Ok(Cow::Borrowed(&NO_PAIRS)),
                    _ => {
                        let mut rel = owned_rel(rv);
                        let nonempty = rel.restrict_range(set_of(&sv));
                        rel_checked(rel, nonempty)
                    }
                }
            }
            Node::DiffUnion(a, terms) => self.diff_union(a, terms, e.span),
            // Leaves: only reached when their value is missing, or from `operand`'s callers.
            Node::StaticDef(_) | Node::DynDef(_) => {
                self.leaf(e).map(Cow::Borrowed).ok_or_else(|| EvalError::new(e.span, "internal error: definition evaluated out of order"))
            }
            Node::StaticEnv(_) | Node::DynEnv(_) => {
                self.leaf(e).map(Cow::Borrowed).ok_or_else(|| EvalError::new(e.span, "internal error: environment value not available"))
            }
            Node::Const(_) => {
                self.leaf(e).map(Cow::Borrowed).ok_or_else(|| EvalError::new(e.span, "internal error: constant out of range"))
            }
            Node::Zero => Ok(Cow::Borrowed(&EMPTY)),
            Node::Param => Err(EvalError::new(e.span, "internal error: unsubstituted function parameter")),
            Node::TypeOnly(a, assumed) => match match assumed {
                Some(known) if self.dyn_rel => known.clone()?,
                _ => self.ty_of(a)?,
            } {
                Ty::Empty => Ok(Cow::Borrowed(&EMPTY)),
                Ty::Rel => Ok(Cow::Borrowed(&NO_PAIRS)),
                // Not reached (a known-empty expression is a relation or `0`), but exact.
                Ty::Set => self.eval(a),
            },
        }
    }

    /// `a \ (t1 | … | tk)` (see [`Node::DiffUnion`]), with the values, types and errors of
    /// evaluating the union and then the difference.
    fn diff_union(&self, a: &CExpr, terms: &[(CExpr, Option<Span>, bool)], span: Span) -> Result<Cow<'a, Val>, EvalError> {
        let mut x = self.operand(a)?;
        let tx = x.ty();
        // Converses wait until the plain terms have thinned the result out.
        let mut converses: Vec<Cow<'a, Val>> = Vec::new();
        let mut tu = Ty::Empty;
        for (i, (t, join, converse)) in terms.iter().enumerate() {
            let v = self.operand(t)?;
            let tt = v.ty();
            if *converse && tt == Ty::Set {
                return Err(expected_relation(t.span));
            }
            tu = match join {
                None if i == 0 => tt,
                _ => match (tu, tt) {
                    (Ty::Empty, _) => tt,
                    (_, Ty::Empty) => tu,
                    (p, q) if p != q => {
                        let message = format!("`|` needs two sets or two relations, found {} and {}", describe(p), describe(q));
                        return Err(EvalError::new(join.unwrap_or(span), message));
                    }
                    (p, _) => p,
                },
            };
            // Only a term of the type of `a` is removed (another is an error to come), and
            // nothing is removed from an empty `a`.
            if tt != tx || matches!(*x, Val::Empty | Val::NoPairs) || matches!(*v, Val::NoPairs) {
                continue;
            }
            if *converse {
                converses.push(v);
                continue;
            }
            x = match (x, &*v) {
                (Cow::Owned(Val::Rel(mut m)), Val::Rel(r)) => {
                    let nonempty = m.difference_with(r);
                    Cow::Owned(if nonempty { Val::Rel(m) } else { Val::NoPairs })
                }
                // The first removal from a borrowed relation writes a fresh one.
                (Cow::Borrowed(Val::Rel(m)), Val::Rel(r)) => {
                    let (m, nonempty) = m.difference_checked(r);
                    Cow::Owned(if nonempty { Val::Rel(m) } else { Val::NoPairs })
                }
                (mut x, Val::Set(r)) => {
                    if let Val::Set(m) = x.to_mut() {
                        m.difference_with(r);
                    }
                    x
                }
                (x, _) => x,
            };
        }
        match (tx, tu) {
            (Ty::Empty, _) | (_, Ty::Empty) => return Ok(x),
            (p, q) if p != q => {
                return Err(EvalError::new(
                    span,
                    format!("`\\` needs two sets or two relations, found {} and {}", describe(p), describe(q)),
                ));
            }
            _ => {}
        }
        for c in &converses {
            let m = x.to_mut();
            let Val::Rel(rel) = m else { break };
            if !rel.difference_with_inverse(rel_of(c)) {
                *m = Val::NoPairs;
            }
        }
        Ok(x)
    }

    /// The type of `e`'s value, without computing it (see [`ty_walk`]).
    fn ty_of(&self, e: &CExpr) -> Result<Ty, EvalError> {
        let mut leaf = |e: &CExpr| self.eval(e).map(|v| v.ty()).map_err(TyError::Eval);
        ty_walk(e, &mut leaf).map_err(|e| match e {
            TyError::Eval(e) => e,
            TyError::Unknown => unreachable!("leaves are known at evaluation"),
        })
    }
}

/// Why a type could not be had: the error evaluation raises, or (at preparation, assuming
/// types for what is not known yet) a leaf whose type is not known.
#[derive(Clone, Debug)]
enum TyError {
    Eval(EvalError),
    Unknown,
}

impl From<EvalError> for TyError {
    fn from(e: EvalError) -> Self {
        TyError::Eval(e)
    }
}

/// The type of `e`'s value given the types of its leaves (`leaf`), without computing any
/// value: types follow from the types of the leaves alone, and so do the errors, which are
/// raised as [`Store::eval`] raises them, in the same order.
fn ty_walk(e: &CExpr, leaf: &mut impl FnMut(&CExpr) -> Result<Ty, TyError>) -> Result<Ty, TyError> {
    Ok(match &e.node {
        Node::Un(op, a) => match (op, ty_walk(a, leaf)?) {
            (UnOp::Complement, Ty::Set) => Ty::Set,
            (UnOp::Complement, _) => Ty::Rel,
            (UnOp::ToId, Ty::Set) => Ty::Rel,
            (UnOp::ToId, Ty::Rel) => return Err(expected_set(a.span).into()),
            (UnOp::ToId, Ty::Empty) => Ty::Empty,
            (_, Ty::Set) => return Err(expected_relation(a.span).into()),
            (UnOp::Plus | UnOp::Inverse | UnOp::Domain | UnOp::Range, Ty::Empty) => Ty::Empty,
            (UnOp::Star | UnOp::Opt | UnOp::Plus | UnOp::Inverse, _) => Ty::Rel,
            (UnOp::Domain | UnOp::Range, _) => Ty::Set,
        },
        Node::Bin(op, a, b) => {
            let x = ty_walk(a, leaf)?;
            let y = ty_walk(b, leaf)?;
            match op {
                BinOp::Union | BinOp::Inter | BinOp::Diff => match (x, y) {
                    (Ty::Empty, _) => {
                        if *op == BinOp::Union {
                            y
                        } else {
                            x
                        }
                    }
                    (_, Ty::Empty) => {
                        if *op == BinOp::Inter {
                            y
                        } else {
                            x
                        }
                    }
                    (x, y) if x != y => {
                        let message =
                            format!("`{}` needs two sets or two relations, found {} and {}", op.symbol(), describe(x), describe(y));
                        return Err(EvalError::new(e.span, message).into());
                    }
                    (x, _) => x,
                },
                BinOp::Seq => match (x, y) {
                    (Ty::Set, _) => return Err(expected_relation(a.span).into()),
                    (_, Ty::Set) => return Err(expected_relation(b.span).into()),
                    (Ty::Empty, _) | (_, Ty::Empty) => Ty::Empty,
                    _ => Ty::Rel,
                },
                BinOp::Product => match (x, y) {
                    (Ty::Rel, _) => return Err(expected_set(a.span).into()),
                    (_, Ty::Rel) => return Err(expected_set(b.span).into()),
                    (Ty::Empty, _) | (_, Ty::Empty) => Ty::Empty,
                    _ => Ty::Rel,
                },
            }
        }
        Node::MaskRows(s, r) => {
            let ts = ty_walk(s, leaf)?;
            if ts == Ty::Rel {
                return Err(expected_set(s.span).into());
            }
            match (ts, ty_walk(r, leaf)?) {
                (_, Ty::Set) => return Err(expected_relation(r.span).into()),
                (Ty::Empty, _) | (_, Ty::Empty) => Ty::Empty,
                _ => Ty::Rel,
            }
        }
        Node::MaskCols(r, s) => {
            let tr = ty_walk(r, leaf)?;
            let ts = ty_walk(s, leaf)?;
            if ts == Ty::Rel {
                return Err(expected_set(s.span).into());
            }
            match (tr, ts) {
                (Ty::Set, _) => return Err(expected_relation(r.span).into()),
                (Ty::Empty, _) | (_, Ty::Empty) => Ty::Empty,
                _ => Ty::Rel,
            }
        }
        Node::DiffUnion(a, terms) => {
            let tx = ty_walk(a, leaf)?;
            let mut tu = Ty::Empty;
            for (i, (t, join, converse)) in terms.iter().enumerate() {
                let tt = match (*converse, ty_walk(t, leaf)?) {
                    (true, Ty::Set) => return Err(expected_relation(t.span).into()),
                    (_, ty) => ty,
                };
                tu = match (i, join) {
                    (0, _) | (_, None) => tt,
                    (_, Some(join)) => match (tu, tt) {
                        (Ty::Empty, _) => tt,
                        (_, Ty::Empty) => tu,
                        (p, q) if p != q => {
                            let message = format!("`|` needs two sets or two relations, found {} and {}", describe(p), describe(q));
                            return Err(EvalError::new(*join, message).into());
                        }
                        (p, _) => p,
                    },
                };
            }
            match (tx, tu) {
                (Ty::Empty, _) | (_, Ty::Empty) => tx,
                (p, q) if p != q => {
                    let message = format!("`\\` needs two sets or two relations, found {} and {}", describe(p), describe(q));
                    return Err(EvalError::new(e.span, message).into());
                }
                (p, _) => p,
            }
        }
        Node::TypeOnly(a, _) => ty_walk(a, leaf)?,
        _ => leaf(e)?,
    })
}

fn unary(op: UnOp, v: Cow<'_, Val>, arg: Span, n: usize) -> Result<Cow<'_, Val>, EvalError> {
    let out = match (op, &*v) {
        (UnOp::Complement, Val::Empty | Val::NoPairs) => Val::Rel(Relation::empty(n).complement()),
        (UnOp::Complement, _) => match v {
            Cow::Owned(Val::Set(mut s)) => {
                s.complement_in_place();
                Val::Set(s)
            }
            Cow::Owned(Val::Rel(mut r)) => {
                r.complement_in_place();
                Val::Rel(r).normal()
            }
            v => match &*v {
                Val::Set(s) => Val::Set(s.complement()),
                v => Val::Rel(rel_of(v).complement()).normal(),
            },
        },
        (UnOp::ToId, Val::Set(s)) if s.is_empty() => Val::NoPairs,
        (UnOp::ToId, Val::Set(s)) => Val::Rel(Relation::of_set(s)),
        (UnOp::ToId, Val::Rel(_) | Val::NoPairs) => return Err(expected_set(arg)),
        (UnOp::ToId, Val::Empty) => return Ok(v),
        // Every remaining operator takes a relation.
        (_, Val::Set(_)) => return Err(expected_relation(arg)),
        (UnOp::Plus | UnOp::Inverse | UnOp::Domain | UnOp::Range, Val::Empty) => return Ok(v),
        (UnOp::Plus | UnOp::Inverse, Val::NoPairs) => return Ok(v),
        (UnOp::Domain | UnOp::Range, Val::NoPairs) => Val::Set(EventSet::empty(n)),
        (UnOp::Star | UnOp::Opt, Val::Empty | Val::NoPairs) => Val::Rel(Relation::identity(n)),
        (UnOp::Plus, Val::Rel(_)) => {
            let mut r = owned_rel(v);
            r.plus_in_place();
            Val::Rel(r)
        }
        (UnOp::Star, Val::Rel(_)) => {
            let mut r = owned_rel(v);
            r.star_in_place();
            Val::Rel(r)
        }
        (UnOp::Opt, Val::Rel(_)) => {
            let mut r = owned_rel(v);
            r.optional_in_place();
            Val::Rel(r)
        }
        (UnOp::Inverse, Val::Rel(r)) => Val::Rel(r.inverse()),
        (UnOp::Domain, Val::Rel(r)) => Val::Set(r.domain()),
        (UnOp::Range, Val::Rel(r)) => Val::Set(r.range()),
    };
    Ok(Cow::Owned(out))
}

/// `a op= b` for a set operator `op` (`|`, `&` or `\`) on two materialised relations;
/// whether the result has a pair (a union of non-empty relations has).
fn rel_assign(op: BinOp, a: &mut Relation, b: &Relation) -> bool {
    match op {
        BinOp::Union => {
            a.union_with(b);
            true
        }
        BinOp::Inter => a.intersect_with(b),
        _ => a.difference_with(b),
    }
}

/// `b = a op b`, in place on the right operand; whether the result has a pair.
fn rel_assign_right(op: BinOp, a: &Relation, b: &mut Relation) -> bool {
    match op {
        BinOp::Union => {
            b.union_with(a);
            true
        }
        BinOp::Inter => b.intersect_with(a),
        _ => b.subtract_from(a),
    }
}

fn set_assign(op: BinOp, a: &mut EventSet, b: &EventSet) {
    match op {
        BinOp::Union => a.union_with(b),
        BinOp::Inter => a.intersect_with(b),
        _ => a.difference_with(b),
    }
}

fn set_assign_right(op: BinOp, a: &EventSet, b: &mut EventSet) {
    match op {
        BinOp::Union => b.union_with(a),
        BinOp::Inter => b.intersect_with(a),
        _ => b.subtract_from(a),
    }
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
            // An empty relation without a matrix decides the result.
            match (&*x, &*y, op) {
                (Val::NoPairs, _, BinOp::Union) => return Ok(y),
                (_, Val::NoPairs, BinOp::Union | BinOp::Diff) | (Val::NoPairs, _, _) => return Ok(x),
                (_, Val::NoPairs, _) => return Ok(y),
                _ => {}
            }
            // Work in place on an owned operand rather than allocating a fresh value (a copy
            // when both are borrowed).
            let out = match (x, y) {
                (Cow::Owned(Val::Rel(mut a)), y) => {
                    let nonempty = rel_assign(op, &mut a, rel_of(&y));
                    return rel_checked(a, nonempty);
                }
                (x, Cow::Owned(Val::Rel(mut b))) => {
                    let nonempty = rel_assign_right(op, rel_of(&x), &mut b);
                    return rel_checked(b, nonempty);
                }
                (Cow::Borrowed(Val::Rel(a)), y) => {
                    let b = rel_of(&y);
                    let (r, nonempty) = match op {
                        BinOp::Union => (a.union(b), true),
                        BinOp::Inter => a.intersection_checked(b),
                        _ => a.difference_checked(b),
                    };
                    return rel_checked(r, nonempty);
                }
                (Cow::Owned(Val::Set(mut a)), y) => {
                    set_assign(op, &mut a, set_of(&y));
                    Val::Set(a)
                }
                (x, Cow::Owned(Val::Set(mut b))) => {
                    set_assign_right(op, set_of(&x), &mut b);
                    Val::Set(b)
                }
                (x, y) => match (&*x, &*y) {
                    (Val::Set(a), Val::Set(b)) => Val::Set(match op {
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
            (Val::NoPairs, _) => Ok(x),
            (_, Val::NoPairs) => Ok(y),
            _ => {
                let (r, nonempty) = match x {
                    // Row `a` of `x ; y` depends only on row `a` of `x`: compose in place.
                    Cow::Owned(Val::Rel(mut a)) => {
                        let nonempty = a.seq_with(rel_of(&y));
                        (a, nonempty)
                    }
                    x => rel_of(&x).seq_checked(rel_of(&y)),
                };
                rel_checked(r, nonempty)
            }
        },
        BinOp::Product => match (&*x, &*y) {
            (Val::Rel(_) | Val::NoPairs, _) => Err(expected_set(xs)),
            (_, Val::Rel(_) | Val::NoPairs) => Err(expected_set(ys)),
            (Val::Empty, _) | (_, Val::Empty) => Ok(Cow::Borrowed(&EMPTY)),
            (Val::Set(a), Val::Set(b)) => rel_result(Relation::product(a, b)),
        },
    }
}

/// Whether `kind v` holds (before negation).
fn check_condition(kind: CheckKind, v: &Val, span: Span) -> Result<bool, EvalError> {
    Ok(match (kind, v) {
        (_, Val::Empty | Val::NoPairs) => true,
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
    /// The check's expression, compiled with static subexpressions hoisted (dynamic checks only).
    expr: Option<CExpr>,
    /// Dynamic units the check needs, as a bit set (units are evaluated in ascending order).
    dyn_units: Vec<u64>,
    /// Dynamic environment slots the check needs (transitively).
    dyn_env: Vec<u32>,
    /// For checks that depend only on static names: `(holds, relation)`, decided once.
    fixed: Option<(bool, Relation)>,
}

/// Marks cells and slots that have none.
const NO_CELL: u32 = u32::MAX;

/// Distinguishes preparations, so that a [`Stage`] is only used with the one that made it.
static NEXT_PREPARATION: AtomicU64 = AtomicU64::new(1);

/// A model specialised to one event structure: static definitions are evaluated, and
/// candidates are evaluated with [`Prepared::evaluate`]. `Send + Sync`, so one `Prepared` can
/// serve candidates on several threads.
#[derive(Debug)]
pub struct Prepared<'m> {
    prog: &'m Program,
    n: usize,
    /// Identifies this preparation to the stages it makes.
    id: u64,
    statics: Layer,
    dynamic: SlotSet,
    unit_static: Vec<bool>,
    /// Cell of each dynamic environment slot (`NO_CELL` for static ones).
    env_cell: Vec<u32>,
    /// Cell of each dynamic definition (`NO_CELL` for static ones).
    def_cell: Vec<u32>,
    /// Cell of the first definition of each dynamic unit (`NO_CELL` for static ones).
    unit_cell: Vec<u32>,
    /// Number of cells (dynamic environment names, then dynamic definitions).
    cells: usize,
    /// Compiled bodies of the dynamic units, with static subexpressions hoisted into `consts`;
    /// `None` for static units (already evaluated into `statics`).
    bodies: Vec<Option<Vec<CExpr>>>,
    consts: Vec<Val>,
    plans: Vec<CheckPlan>,
    /// The last set of available names a stage was made for, and its staged units (a search
    /// makes many stages for the same names).
    last_plan: std::sync::Mutex<Option<(SlotSet, std::sync::Arc<Vec<bool>>)>>,
}

/// Dynamic definitions evaluated once for a partial environment, reused by later calls.
///
/// Made by [`Prepared::stage`] for a set of dynamic names the caller keeps fixed (the
/// *available* names, say `rf` and `sync_fence` while it enumerates `co`). A staged unit is a
/// dynamic definition (or `let rec` group) whose dynamic dependencies are all available, such
/// as `cause` in `ptx.cat`. The `_on` methods of [`Prepared`] evaluate each staged unit at most
/// once for the whole stage, the first time one of them needs it, and keep its value (and the
/// values of the available names) here; everything else is evaluated per call, as without a
/// stage. Values are looked up in the static layer, then the stage, then the call's own.
///
/// Contract: every environment passed with a stage gives the same values for the available
/// names (they may differ in every other dynamic name). A stage belongs to the preparation
/// that made it; other preparations reject it. It is `Send + Sync`: calls on several threads
/// may share it.
#[derive(Debug)]
pub struct Stage {
    /// The preparation the stage belongs to.
    owner: u64,
    /// Dynamic environment slots the stage assumes fixed.
    available: SlotSet,
    /// Per unit: staged (all its dynamic environment dependencies are available).
    staged: std::sync::Arc<Vec<bool>>,
    /// Values of the available dynamic names and of the staged units, by cell, once computed.
    cells: Vec<OnceLock<Val>>,
    /// Some available name's value is not a relation.
    not_rel: AtomicBool,
}

impl Stage {
    /// Number of definition units the stage evaluates (at most once each, on demand).
    pub fn staged_units(&self) -> usize {
        self.staged.iter().filter(|s| **s).count()
    }
}

pub(crate) fn prepare<'m>(prog: &'m Program, static_env: &dyn CatEnv, dynamic: &[&str]) -> Result<Prepared<'m>, CatError> {
    prepare_inner(prog, static_env, dynamic).map_err(|e| e.into_cat(prog))
}

fn prepare_inner<'m>(prog: &'m Program, static_env: &dyn CatEnv, dynamic: &[&str]) -> Result<Prepared<'m>, EvalError> {
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
    for (u, unit) in prog.units.iter().enumerate() {
        if unit_static[u] {
            let c = Compiler::new(prog, n, &empty, &dyn_slots, &unit_static, &env_cell, &def_cell);
            let bodies: Vec<CExpr> = unit.bodies.iter().map(|b| c.structural(b)).collect();
            eval_unit(prog, u as u32, &bodies, &mut StaticTarget { n, layer: &mut statics })?;
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
    })
}

/// The terms of a union chain `t1 | t2 | … | tk` (left-nested, as parsed; `k >= 1`), each with
/// the span of the `|` that joins it and whether it is a converse `c^-1` (then given as `c`),
/// when at least one is.
fn converse_terms(e: &IExpr) -> Option<Vec<(&IExpr, Option<Span>, bool)>> {
    let mut terms = Vec::new();
    let mut cur = e;
    while let IKind::Bin(BinOp::Union, l, r) = &cur.kind {
        terms.push((&**r, Some(cur.span)));
        cur = l;
    }
    terms.push((cur, None));
    terms.reverse();
    let terms: Vec<_> = terms
        .into_iter()
        .map(|(t, join)| match &t.kind {
            IKind::Un(UnOp::Inverse, c) => (&**c, join, true),
            _ => (t, join, false),
        })
        .collect();
    terms.iter().any(|t| t.2).then_some(terms)
}

/// Compiles resolved expressions: names to layers and cells, `[S] ; r` and `r ; [S]` to masks,
/// and (for [`Compiler::hoisted`]) every maximal subexpression that depends only on static
/// names (such as `same-proxy & scta & vloc`) to a constant evaluated once, at preparation,
/// instead of once per candidate.
struct Compiler<'a> {
    prog: &'a Program,
    n: usize,
    statics: &'a Layer,
    dynamic: &'a SlotSet,
    unit_static: &'a [bool],
    env_cell: &'a [u32],
    def_cell: &'a [u32],
    consts: Vec<Val>,
    /// Per cell: a dynamic definition known to be `0` or an empty relation (see
    /// [`Node::TypeOnly`]); filled unit by unit, in order.
    cell_empty: Vec<bool>,
    /// Per cell: the type of a dynamic definition assuming every dynamic environment name is a
    /// relation (or the error its evaluation raises), when found; filled unit by unit.
    cell_ty: Vec<Option<Result<Ty, EvalError>>>,
}

impl<'a> Compiler<'a> {
    fn new(
        prog: &'a Program,
        n: usize,
        statics: &'a Layer,
        dynamic: &'a SlotSet,
        unit_static: &'a [bool],
        env_cell: &'a [u32],
        def_cell: &'a [u32],
    ) -> Self {
        let cells = def_cell.iter().chain(env_cell).filter(|&&c| c != NO_CELL).count();
        Compiler {
            prog,
            n,
            statics,
            dynamic,
            unit_static,
            env_cell,
            def_cell,
            consts: Vec::new(),
            cell_empty: vec![false; cells],
            cell_ty: vec![None; cells],
        }
    }

    /// The node of a name, a constant or `0`; `None` for operators.
    fn leaf(&self, kind: &IKind) -> Option<Node> {
        Some(match kind {
            IKind::Env(s) if self.dynamic.contains(*s) => Node::DynEnv(self.env_cell[*s as usize]),
            IKind::Env(s) => Node::StaticEnv(*s),
            IKind::Def(d) if self.unit_static[self.prog.defs[*d as usize].unit as usize] => Node::StaticDef(*d),
            IKind::Def(d) => Node::DynDef(self.def_cell[*d as usize]),
            IKind::Const(c) => Node::Const(*c),
            IKind::Zero => Node::Zero,
            IKind::Param(_) => Node::Param,
            IKind::Un(..) | IKind::Bin(..) => return None,
        })
    }

    /// The expression compiled as it is.
    fn structural(&self, e: &IExpr) -> CExpr {
        let node = match &e.kind {
            IKind::Un(op, a) => Node::Un(*op, Box::new(self.structural(a))),
            IKind::Bin(BinOp::Seq, a, b) => match (&a.kind, &b.kind) {
                (IKind::Un(UnOp::ToId, s), _) => Node::MaskRows(Box::new(self.structural(s)), Box::new(self.structural(b))),
                (_, IKind::Un(UnOp::ToId, s)) => Node::MaskCols(Box::new(self.structural(a)), Box::new(self.structural(s))),
                _ => Node::Bin(BinOp::Seq, Box::new(self.structural(a)), Box::new(self.structural(b))),
            },
            IKind::Bin(BinOp::Diff, a, b) if converse_terms(b).is_some() => {
                let terms = converse_terms(b).expect("checked").into_iter();
                let terms = terms.map(|(t, join, converse)| (self.structural(t), join, converse)).collect();
                Node::DiffUnion(Box::new(self.structural(a)), terms)
            }
            IKind::Bin(op, a, b) => Node::Bin(*op, Box::new(self.structural(a)), Box::new(self.structural(b))),
            k => self.leaf(k).expect("a leaf"),
        };
        CExpr { node, span: e.span }
    }

    /// The expression compiled with its maximal static subexpressions frozen, and its maximal
    /// known-empty subexpressions evaluated for their type only.
    fn hoisted(&mut self, e: &IExpr) -> Result<CExpr, EvalError> {
        let e = self.rewrite(e)?;
        let (c, empty) = self.known_empty(self.structural(&e));
        Ok(if empty { self.type_only(c) } else { c })
    }

    /// Wraps a known-empty expression for type-only evaluation (leaves stay as they are), with
    /// its type found now if it can be.
    fn type_only(&self, c: CExpr) -> CExpr {
        match c.node {
            Node::Un(..) | Node::Bin(..) | Node::MaskRows(..) | Node::MaskCols(..) | Node::DiffUnion(..) => {
                let span = c.span;
                let assumed = match ty_walk(&c, &mut |e| self.assumed_leaf_ty(e)) {
                    Ok(t) => Some(Ok(t)),
                    Err(TyError::Eval(e)) => Some(Err(e)),
                    Err(TyError::Unknown) => None,
                };
                CExpr { node: Node::TypeOnly(Box::new(c), assumed), span }
            }
            _ => c,
        }
    }

    /// The type of a leaf assuming every dynamic environment name is a relation: exact for
    /// static values, and for dynamic definitions whose type is found that way.
    fn assumed_leaf_ty(&self, e: &CExpr) -> Result<Ty, TyError> {
        let v = match &e.node {
            Node::StaticDef(d) => self.statics.defs[*d as usize].as_ref(),
            Node::StaticEnv(s) => self.statics.env[*s as usize].as_ref(),
            Node::Const(c) => self.consts.get(*c as usize),
            Node::Zero => Some(&EMPTY),
            Node::DynEnv(_) => return Ok(Ty::Rel),
            // A definition that fails is reported when it is evaluated, before any use.
            Node::DynDef(c) => return self.cell_ty[*c as usize].as_ref().and_then(|t| t.as_ref().ok()).copied().ok_or(TyError::Unknown),
            _ => None,
        };
        v.map(Val::ty).ok_or(TyError::Unknown)
    }

    /// Whether a leaf's value, when it has one now, is `0` or an empty relation (`None`: not a
    /// leaf, or not known now).
    fn empty_leaf(&self, node: &Node) -> Option<bool> {
        let v = match node {
            Node::StaticDef(d) => self.statics.defs[*d as usize].as_ref(),
            Node::StaticEnv(s) => self.statics.env[*s as usize].as_ref(),
            Node::Const(c) => self.consts.get(*c as usize),
            Node::Zero => Some(&EMPTY),
            Node::DynDef(c) => return Some(self.cell_empty[*c as usize]),
            _ => return None,
        };
        Some(matches!(v, Some(Val::Empty | Val::NoPairs)))
    }

    /// Whether a set operand is known to be the empty set (or `0`).
    fn empty_set(&self, e: &CExpr) -> bool {
        let v = match &e.node {
            Node::StaticDef(d) => self.statics.defs[*d as usize].as_ref(),
            Node::StaticEnv(s) => self.statics.env[*s as usize].as_ref(),
            Node::Const(c) => self.consts.get(*c as usize),
            Node::Zero => Some(&EMPTY),
            _ => None,
        };
        match v {
            Some(Val::Set(s)) => s.is_empty(),
            Some(Val::Empty) => true,
            _ => false,
        }
    }

    /// The expression with its maximal known-empty operator subexpressions wrapped in
    /// [`Node::TypeOnly`], and whether the whole is known empty (left to the caller to wrap,
    /// so that it wraps the largest one). Known empty: `0` and empty relations of the static
    /// layer, dynamic definitions with known-empty bodies, compositions and intersections with
    /// a known-empty side, differences from one, unions of two, closures and inverses of one,
    /// and masks by a known-empty set.
    fn known_empty(&self, e: CExpr) -> (CExpr, bool) {
        let CExpr { node, span } = e;
        let wrap = |(c, empty): (CExpr, bool)| if empty { self.type_only(c) } else { c };
        let (node, empty) = match node {
            Node::Un(op, a) => {
                let (a, ea) = self.known_empty(*a);
                let empty = ea && matches!(op, UnOp::Plus | UnOp::Inverse | UnOp::ToId);
                (Node::Un(op, Box::new(if empty { a } else { wrap((a, ea)) })), empty)
            }
            Node::Bin(op, a, b) => {
                let (a, ea) = self.known_empty(*a);
                let (b, eb) = self.known_empty(*b);
                let empty = match op {
                    BinOp::Seq | BinOp::Inter => ea || eb,
                    BinOp::Diff => ea,
                    BinOp::Union => ea && eb,
                    BinOp::Product => false,
                };
                if empty {
                    (Node::Bin(op, Box::new(a), Box::new(b)), true)
                } else {
                    (Node::Bin(op, Box::new(wrap((a, ea))), Box::new(wrap((b, eb)))), false)
                }
            }
            Node::DiffUnion(a, terms) => {
                let (a, ea) = self.known_empty(*a);
                let terms: Vec<_> = terms.into_iter().map(|(t, join, converse)| (wrap(self.known_empty(t)), join, converse)).collect();
                (Node::DiffUnion(Box::new(if ea { a } else { wrap((a, ea)) }), terms), ea)
            }
            Node::MaskRows(s, r) => {
                let es = self.empty_set(&s);
                let (r, er) = self.known_empty(*r);
                let empty = es || er;
                (Node::MaskRows(s, Box::new(if empty { r } else { wrap((r, er)) })), empty)
            }
            Node::MaskCols(r, s) => {
                let es = self.empty_set(&s);
                let (r, er) = self.known_empty(*r);
                let empty = es || er;
                (Node::MaskCols(Box::new(if empty { r } else { wrap((r, er)) }), s), empty)
            }
            leaf => {
                let empty = self.empty_leaf(&leaf).unwrap_or(false);
                // A leaf is already cheap: it is never wrapped itself.
                return (CExpr { node: leaf, span }, empty);
            }
        };
        (CExpr { node, span }, empty)
    }

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
                    let seq = *op == BinOp::Seq;
                    let a = if sa { self.freeze_operand(a, seq)? } else { a };
                    let b = if sb { self.freeze_operand(b, seq)? } else { b };
                    (IExpr { kind: IKind::Bin(*op, Box::new(a), Box::new(b)), span }, false)
                }
            }
        })
    }

    /// Freezes a static operand of a dynamic operator. A static `[s]` next to `;` keeps its
    /// brackets around the frozen set, so that the composition becomes a mask; freezing `[s]`
    /// would fail on a relation `s`, so that fails now too.
    fn freeze_operand(&mut self, e: IExpr, seq: bool) -> Result<IExpr, EvalError> {
        match e.kind {
            IKind::Un(UnOp::ToId, s) if seq => {
                let s = self.freeze(*s)?;
                let st = Store { n: self.n, statics: self.statics, consts: &self.consts, stage: None, local: &[], dyn_rel: false };
                if st.eval(&self.structural(&s))?.ty() == Ty::Rel {
                    return Err(expected_set(s.span));
                }
                Ok(IExpr { kind: IKind::Un(UnOp::ToId, Box::new(s)), span: e.span })
            }
            kind => self.freeze(IExpr { kind, span: e.span }),
        }
    }

    /// Evaluates a static expression into a constant; names and `0` are already cheap lookups.
    fn freeze(&mut self, e: IExpr) -> Result<IExpr, EvalError> {
        if matches!(e.kind, IKind::Env(_) | IKind::Def(_) | IKind::Zero) {
            return Ok(e);
        }
        let st = Store { n: self.n, statics: self.statics, consts: &self.consts, stage: None, local: &[], dyn_rel: false };
        let v = st.eval(&self.structural(&e))?.into_owned().normal();
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

/// Where a unit's values go while it is evaluated.
trait Target {
    /// A view of every value evaluation may read, including the target's own.
    fn store(&self) -> Store<'_>;
    /// The cell of definition `d`.
    fn slot(&mut self, d: u32) -> &mut Option<Val>;
}

/// The static layer, while `prepare` fills it.
struct StaticTarget<'x> {
    n: usize,
    layer: &'x mut Layer,
}

impl Target for StaticTarget<'_> {
    fn store(&self) -> Store<'_> {
        Store { n: self.n, statics: self.layer, consts: &[], stage: None, local: &[], dyn_rel: false }
    }
    fn slot(&mut self, d: u32) -> &mut Option<Val> {
        &mut self.layer.defs[d as usize]
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
}

/// Evaluates unit `u`, whose compiled bodies are `bodies`, into `target`.
fn eval_unit(prog: &Program, u: u32, bodies: &[CExpr], target: &mut impl Target) -> Result<(), EvalError> {
    let unit = &prog.units[u as usize];
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
    for _ in 0..limit {
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
    let d = &prog.defs[unit.slots[0] as usize];
    Err(EvalError::new(d.span, format!("`let rec {}` does not reach a fixpoint (is the definition monotone?)", d.name)))
}

/// Whether `check` holds on value `v` of its expression.
fn decide(check: &Check, v: &Val) -> Result<bool, EvalError> {
    let condition = check_condition(check.kind, v, check.expr.span)? != check.negated;
    Ok(match check.flag {
        None | Some(FlagKind::UndefinedUnless) => condition,
        Some(FlagKind::Flag) => !condition,
    })
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

    /// Decides check `i` (ensuring what it needs in `local` and the stage); with `want_relation`,
    /// also returns the value it was decided on.
    fn run(
        &self,
        i: usize,
        local: &mut Call,
        stage: Option<&Stage>,
        dyn_env: &dyn CatEnv,
        want_relation: bool,
    ) -> Result<(bool, Option<Relation>), EvalError> {
        let plan = &self.plans[i];
        let check = &self.prog.checks[i];
        match (&plan.fixed, &plan.expr) {
            (Some((holds, relation)), _) => Ok((*holds, want_relation.then(|| relation.clone()))),
            (None, Some(expr)) => {
                self.ensure(local, stage, dyn_env, &plan.dyn_env, &plan.dyn_units)?;
                let dyn_rel = local.dyn_rel && stage.is_none_or(|st| !st.not_rel.load(Ordering::Relaxed));
                let st = Store { n: self.n, statics: &self.statics, consts: &self.consts, stage, local: &local.cells, dyn_rel };
                let v = st.eval(expr)?;
                let holds = decide(check, &v)?;
                Ok((holds, want_relation.then(|| into_relation(v, self.n))))
            }
            (None, None) => Err(EvalError::new(check.span, "internal error: check was not prepared")),
        }
    }

    fn outcome(&self, i: usize, local: &mut Call, stage: Option<&Stage>, dyn_env: &dyn CatEnv) -> Result<CheckOutcome, CatError> {
        let (holds, relation) = self.run(i, local, stage, dyn_env, true).map_err(|e| e.into_cat(self.prog))?;
        let check = &self.prog.checks[i];
        let relation = relation.expect("relation requested");
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
        self.evaluate_in(None, dyn_env, stop_at_first_failure)
    }

    fn evaluate_in(&self, stage: Option<&Stage>, dyn_env: &dyn CatEnv, stop_at_first_failure: bool) -> Result<Evaluation, CatError> {
        let mut local = self.fresh_cells(dyn_env)?;
        let mut checks = Vec::with_capacity(self.plans.len());
        for i in 0..self.plans.len() {
            let o = self.outcome(i, &mut local, stage, dyn_env)?;
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
    /// [`CatModel::checks`](super::CatModel::checks)) and returns whether all of them hold.
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
                let (holds, relation) = self.run(i, layer, stage, dyn_env, true).map_err(|e| e.into_cat(self.prog))?;
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
        Ok(self.run(i, layer, stage, dyn_env, false).map_err(|e| e.into_cat(self.prog))?.0)
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
        self.evaluate_in(Some(stage), env, stop_at_first_failure)
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
                let mut local = self.fresh_cells(dyn_env)?;
                self.ensure(&mut local, None, dyn_env, &[s], &[]).map_err(|e| e.into_cat(self.prog))?;
                Ok(local.cells[self.env_cell[s as usize] as usize].as_ref().and_then(into))
            }
            Bound::Def(d) => {
                if let Some(v) = &self.statics.defs[d as usize] {
                    return Ok(into(v));
                }
                let u = self.prog.defs[d as usize].unit;
                let unit = &self.prog.units[u as usize];
                let units =
                    bit_set(unit.deps.iter().chain(std::iter::once(u)).filter(|&u| !self.unit_static[u as usize]), self.prog.units.len());
                let env: Vec<u32> = unit.env_deps.iter().filter(|&s| self.dynamic.contains(s)).collect();
                let mut local = self.fresh_cells(dyn_env)?;
                self.ensure(&mut local, None, dyn_env, &env, &units).map_err(|e| e.into_cat(self.prog))?;
                Ok(local.cells[self.def_cell[d as usize] as usize].as_ref().and_then(into))
            }
        }
    }
}
