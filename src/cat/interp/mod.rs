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
//!
//! Files, each using only those listed before it: `value` (values, types, errors), `ops` (the
//! operators), `layers` (per-call cells and stages), `expr` (compiled expressions and their
//! evaluation), `compile` (from resolved expressions), `fixpoint` (one definition unit),
//! `prepare` (the [`Prepared`] model) and `eval` (the queries on it).
//!
//! [`Val::NoPairs`]: value::Val::NoPairs

mod compile;
mod eval;
mod expr;
mod fixpoint;
mod layers;
mod ops;
mod prepare;
mod value;

pub use eval::{CheckOutcome, Evaluation};
pub use layers::Stage;
pub(crate) use prepare::prepare;
pub use prepare::Prepared;
