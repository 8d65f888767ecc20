//! Surface syntax of a cat model, as produced by the parser.
//!
//! Spans in this tree are *global* offsets (see [`super::resolve::Files`]): every file of a
//! model, including the ones pulled in by `include`, occupies its own range of offsets, so a
//! single `Span` identifies both the file and the position inside it.

use crate::diag::Span;

/// Binary operators, from the loosest-binding to the tightest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `a | b`
    Union,
    /// `a ; b`
    Seq,
    /// `a \ b`
    Diff,
    /// `a & b`
    Inter,
    /// `A * B`, the cartesian product of two sets.
    Product,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Union => "|",
            BinOp::Seq => ";",
            BinOp::Diff => "\\",
            BinOp::Inter => "&",
            BinOp::Product => "*",
        }
    }
}

/// Unary operators: the postfix closures and inverse, prefix complement, and the built-in
/// functions `domain`, `range` and `toid`/`[_]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `r+`
    Plus,
    /// `r*`
    Star,
    /// `r?`
    Opt,
    /// `r^-1`
    Inverse,
    /// `~e`
    Complement,
    /// `domain(r)`
    Domain,
    /// `range(r)`
    Range,
    /// `[S]` or `toid(S)`
    ToId,
}

impl UnOp {
    pub fn symbol(self) -> &'static str {
        match self {
            UnOp::Plus => "+",
            UnOp::Star => "*",
            UnOp::Opt => "?",
            UnOp::Inverse => "^-1",
            UnOp::Complement => "~",
            UnOp::Domain => "domain",
            UnOp::Range => "range",
            UnOp::ToId => "[_]",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExprKind {
    Name(String),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Unary(UnOp, Box<Expr>),
    /// `f(a, b)`; the span of the function name is kept for "unknown function" errors.
    Call {
        name: String,
        name_span: Span,
        args: Vec<Expr>,
    },
    /// `newSet()`: a set the model does not define itself.
    NewSet,
    /// `newRelation()`: a relation the model does not define itself.
    NewRelation,
}

/// The three kinds of constraint a model can state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CheckKind {
    Acyclic,
    Irreflexive,
    Empty,
}

impl CheckKind {
    pub fn keyword(self) -> &'static str {
        match self {
            CheckKind::Acyclic => "acyclic",
            CheckKind::Irreflexive => "irreflexive",
            CheckKind::Empty => "empty",
        }
    }
}

/// Checks that do not take part in consistency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlagKind {
    /// `flag check`: fires when the check *holds* (herd's convention, so that
    /// `flag ~empty races` fires when there is a race).
    Flag,
    /// `undefined_unless check`: fires when the check *fails* (the behaviour is undefined
    /// unless the condition holds).
    UndefinedUnless,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    pub name: String,
    pub name_span: Span,
    pub body: Expr,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// `let a = e (and b = e)*`, or with `rec` a group of mutually recursive definitions.
    Let {
        rec: bool,
        bindings: Vec<Binding>,
    },
    /// `let f(x, y) = e`
    LetFun {
        name: String,
        name_span: Span,
        params: Vec<(String, Span)>,
        body: Expr,
    },
    Check {
        flag: Option<FlagKind>,
        negated: bool,
        kind: CheckKind,
        expr: Expr,
        name: Option<String>,
        span: Span,
    },
    Include {
        path: String,
        span: Span,
    },
    /// herd7's `procedure f(x, y) = items end`: items (definitions, checks, calls) run at
    /// each call with the parameters bound to the arguments.
    Procedure {
        name: String,
        name_span: Span,
        params: Vec<(String, Span)>,
        body: Vec<Item>,
    },
    /// `call f(a, b) [as name]`.
    Call {
        name: String,
        name_span: Span,
        args: Vec<Expr>,
        as_name: Option<String>,
        span: Span,
    },
}

/// One parsed file: its header title (if any) and its items. `show`, `unshow` and `cut`
/// have no effect on consistency and are dropped by the parser.
#[derive(Clone, Debug, Default)]
pub struct ParsedFile {
    pub title: Option<String>,
    pub items: Vec<Item>,
}
