//! Runtime values of the interpreter (with the empty relation kept without a matrix), their
//! types, and evaluation errors.

use crate::cat::resolve::Program;
use crate::cat::{CatError, Value};
use crate::diag::Span;
use crate::relation::{EventSet, Relation};
use std::borrow::Cow;

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

pub(super) static EMPTY: Val = Val::Empty;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ty {
    Set,
    Rel,
    Empty,
}

impl Val {
    pub(super) fn ty(&self) -> Ty {
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

    pub(super) fn into_value(self, n: usize) -> Value {
        match self {
            Val::Set(s) => Value::Set(s),
            Val::Rel(r) => Value::Rel(r),
            Val::Empty | Val::NoPairs => Value::Rel(Relation::empty(n)),
        }
    }

    /// The same value, with an empty relation as `NoPairs`.
    pub(super) fn normal(self) -> Val {
        match self {
            Val::Rel(r) if r.is_empty() => Val::NoPairs,
            v => v,
        }
    }

    /// Equality of the values denoted (`NoPairs` is the empty relation).
    pub(super) fn same(&self, o: &Val) -> bool {
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
pub(super) fn into_relation(v: Cow<'_, Val>, n: usize) -> Relation {
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
pub(super) fn owned_rel(v: Cow<'_, Val>) -> Relation {
    match v {
        Cow::Owned(Val::Rel(r)) => r,
        Cow::Borrowed(Val::Rel(r)) => r.clone(),
        _ => unreachable!("operand type checked by the caller"),
    }
}

pub(super) fn rel_of(v: &Val) -> &Relation {
    match v {
        Val::Rel(r) => r,
        _ => unreachable!("operand type checked by the caller"),
    }
}

pub(super) fn set_of(v: &Val) -> &EventSet {
    match v {
        Val::Set(s) => s,
        _ => unreachable!("operand type checked by the caller"),
    }
}

/// A relation result, as `NoPairs` when empty.
pub(super) fn rel_result<'a>(r: Relation) -> Result<Cow<'a, Val>, EvalError> {
    Ok(Cow::Owned(Val::Rel(r).normal()))
}

/// A relation result whose emptiness the operator computed: `nonempty` false gives `NoPairs`
/// (and the matrix goes back to the spare storage).
pub(super) fn rel_checked<'a>(r: Relation, nonempty: bool) -> Result<Cow<'a, Val>, EvalError> {
    Ok(Cow::Owned(if nonempty { Val::Rel(r) } else { Val::NoPairs }))
}

pub(super) static NO_PAIRS: Val = Val::NoPairs;

pub(super) fn describe(t: Ty) -> &'static str {
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
    timed_out: bool,
}

impl EvalError {
    pub(super) fn new(span: Span, message: impl Into<String>) -> Self {
        EvalError { message: message.into(), span: Some(span), timed_out: false }
    }

    /// The evaluation reached its deadline at `span`.
    pub(super) fn timeout(span: Span, message: impl Into<String>) -> Self {
        EvalError { message: message.into(), span: Some(span), timed_out: true }
    }

    pub(crate) fn into_cat(self, prog: &Program) -> CatError {
        match self.span.and_then(|s| prog.files.locate(s)) {
            Some((file, local)) => {
                CatError { message: self.message, span: Some(local), file: Some(file.clone()), timed_out: self.timed_out }
            }
            None => CatError { message: self.message, span: None, file: None, timed_out: self.timed_out },
        }
    }
}

pub(super) fn expected_relation(span: Span) -> EvalError {
    EvalError::new(span, "expected a relation, found a set; write [S] for the identity on S")
}

pub(super) fn expected_set(span: Span) -> EvalError {
    EvalError::new(span, "expected a set, found a relation")
}

pub(super) fn plain_error(message: String) -> CatError {
    CatError { message, span: None, file: None, timed_out: false }
}

pub(super) fn checked_env_value(v: Value, n: usize, name: &str, span: Span) -> Result<Val, EvalError> {
    let m = match &v {
        Value::Set(s) => s.universe(),
        Value::Rel(r) => r.universe(),
    };
    if m != n {
        return Err(EvalError::new(span, format!("the engine provided `{name}` over {m} events, but the execution has {n}")));
    }
    Ok(Val::from_value(v))
}
