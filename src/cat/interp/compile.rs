//! Compilation of resolved expressions for a preparation: names to layers and cells, masks
//! for compositions with `[S]`, static subexpressions hoisted into constants, and known-empty
//! subexpressions marked for evaluation of their type only.

use super::expr::{ty_walk, CExpr, Node, Store, TyError};
use super::layers::{Layer, NO_CELL};
use super::value::{expected_set, EvalError, Ty, Val, EMPTY};
use crate::cat::ast::{BinOp, UnOp};
use crate::cat::resolve::{IExpr, IKind, Program, SlotSet};
use crate::diag::Span;

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
pub(super) struct Compiler<'a> {
    prog: &'a Program,
    n: usize,
    statics: &'a Layer,
    dynamic: &'a SlotSet,
    unit_static: &'a [bool],
    env_cell: &'a [u32],
    def_cell: &'a [u32],
    pub(super) consts: Vec<Val>,
    /// Per cell: a dynamic definition known to be `0` or an empty relation (see
    /// [`Node::TypeOnly`]); filled unit by unit, in order.
    pub(super) cell_empty: Vec<bool>,
    /// Per cell: the type of a dynamic definition assuming every dynamic environment name is a
    /// relation (or the error its evaluation raises), when found; filled unit by unit.
    pub(super) cell_ty: Vec<Option<Result<Ty, EvalError>>>,
}

impl<'a> Compiler<'a> {
    pub(super) fn new(
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
            IKind::Param => Node::Param,
            IKind::Un(..) | IKind::Bin(..) => return None,
        })
    }

    /// The expression compiled as it is.
    pub(super) fn structural(&self, e: &IExpr) -> CExpr {
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
    pub(super) fn hoisted(&mut self, e: &IExpr) -> Result<CExpr, EvalError> {
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
    pub(super) fn assumed_leaf_ty(&self, e: &CExpr) -> Result<Ty, TyError> {
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
            IKind::Param | IKind::Const(_) => (e.clone(), false),
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
