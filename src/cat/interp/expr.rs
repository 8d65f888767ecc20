//! Compiled expressions (names resolved to the layer they live in) and their evaluation over
//! the layers: values, and types alone, with the same errors in the same order.

use super::layers::{Layer, Stage};
use super::ops::{binary, unary};
use super::value::{
    describe, expected_relation, expected_set, owned_rel, rel_checked, rel_of, set_of, EvalError, Ty, Val, EMPTY, NO_PAIRS,
};
use crate::cat::ast::{BinOp, UnOp};
use crate::diag::Span;
use std::borrow::Cow;
use std::sync::OnceLock;

/// A compiled expression: names resolved to the layer they live in.
#[derive(Clone, Debug)]
pub(super) struct CExpr {
    pub(super) node: Node,
    pub(super) span: Span,
}

#[derive(Clone, Debug)]
pub(super) enum Node {
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

impl CExpr {
    /// Calls `f` with every leaf of the expression (names, constants, `0`).
    pub(super) fn each_leaf(&self, f: &mut dyn FnMut(&Node)) {
        match &self.node {
            Node::Un(_, a) | Node::TypeOnly(a, _) => a.each_leaf(f),
            Node::Bin(_, a, b) | Node::MaskRows(a, b) | Node::MaskCols(a, b) => {
                a.each_leaf(f);
                b.each_leaf(f);
            }
            Node::DiffUnion(a, terms) => {
                a.each_leaf(f);
                terms.iter().for_each(|(t, _, _)| t.each_leaf(f));
            }
            leaf => f(leaf),
        }
    }
}

/// Read-only view of the layers and the hoisted constants.
pub(super) struct Store<'a> {
    pub(super) n: usize,
    pub(super) statics: &'a Layer,
    pub(super) consts: &'a [Val],
    pub(super) stage: Option<&'a Stage>,
    pub(super) local: &'a [Option<Val>],
    /// Every dynamic environment value of the call (and stage) is a relation.
    pub(super) dyn_rel: bool,
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

    pub(super) fn eval(&self, e: &CExpr) -> Result<Cow<'a, Val>, EvalError> {
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
pub(super) enum TyError {
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
pub(super) fn ty_walk(e: &CExpr, leaf: &mut impl FnMut(&CExpr) -> Result<Ty, TyError>) -> Result<Ty, TyError> {
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
