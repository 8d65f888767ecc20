//! The operators of the language on values, and the conditions of checks.

use super::value::{
    describe, expected_relation, expected_set, owned_rel, rel_checked, rel_of, rel_result, set_of, EvalError, Ty, Val, EMPTY,
};
use crate::cat::ast::{BinOp, CheckKind, FlagKind, UnOp};
use crate::cat::resolve::Check;
use crate::diag::Span;
use crate::relation::{EventSet, Relation};
use std::borrow::Cow;

pub(super) fn unary(op: UnOp, v: Cow<'_, Val>, arg: Span, n: usize) -> Result<Cow<'_, Val>, EvalError> {
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

pub(super) fn binary<'a>(op: BinOp, x: Cow<'a, Val>, y: Cow<'a, Val>, xs: Span, ys: Span, span: Span) -> Result<Cow<'a, Val>, EvalError> {
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

/// Whether `check` holds on value `v` of its expression.
pub(super) fn decide(check: &Check, v: &Val) -> Result<bool, EvalError> {
    let condition = check_condition(check.kind, v, check.expr.span)? != check.negated;
    Ok(match check.flag {
        None | Some(FlagKind::UndefinedUnless) => condition,
        Some(FlagKind::Flag) => !condition,
    })
}
