//! Polarity: how the value of an expression, and the truth of a check, varies when edges or
//! elements are *added* to one environment name (the analysis is `analysis.rs`).
//!
//! The engine builds candidate coherence orders edge by edge and wants to prune a partial
//! `co` early. That is only sound for a check whose truth can only be lost as `co` grows
//! (`acyclic (... co ...)`: once it fails, every extension fails too); a check such as
//! `empty (A \ co)` can only be *gained*, so it must wait for the complete `co`. This module
//! classifies both, statically, over the resolved program (`analysis.rs`).
//!
//! The analysis is syntactic over the name-resolved expressions (definitions followed
//! transitively, function calls already inlined by `resolve`), so it is conservative:
//! `a \ a` is reported [`Polarity::Mixed`] although it is constant.

/// How a relation-valued expression varies when edges/elements are added to one environment
/// name.
///
/// Ordered as a lattice for the analysis: `Independent` below `Increasing` and `Decreasing`,
/// both below `Mixed` (no claim).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Polarity {
    /// The value does not mention the name at all.
    Independent,
    /// Adding to the name can only add to the value.
    Increasing,
    /// Adding to the name can only remove from the value.
    Decreasing,
    /// Neither is guaranteed (the name occurs both positively and negatively).
    Mixed,
}

impl Polarity {
    /// The polarity of an operator that is monotone in two operands varying as `self` and
    /// `other` (the least upper bound in the lattice): `Independent` is neutral, equal
    /// polarities stay, and opposite ones give `Mixed`.
    pub(crate) fn join(self, other: Polarity) -> Polarity {
        match (self, other) {
            (Polarity::Independent, p) | (p, Polarity::Independent) => p,
            (a, b) if a == b => a,
            _ => Polarity::Mixed,
        }
    }

    /// The polarity of an antitone operation (`~e`, the right side of `\`) applied to `self`.
    pub(crate) fn flip(self) -> Polarity {
        match self {
            Polarity::Increasing => Polarity::Decreasing,
            Polarity::Decreasing => Polarity::Increasing,
            p => p,
        }
    }
}

/// How the truth of a check's condition (`acyclic e`, `~empty e`, ...) varies as one
/// environment name grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Monotonicity {
    /// The check does not depend on the name.
    Independent,
    /// The check can only become false as the name grows: a failure on a partial value is
    /// final, so it can prune.
    Antitone,
    /// The check can only become true as the name grows: a success on a partial value is final.
    Monotone,
    /// No guarantee either way.
    Unknown,
}

impl Monotonicity {
    /// The monotonicity of `[~] kind e` given the polarity of `e`. All three kinds
    /// (`acyclic`, `irreflexive`, `empty`) are antitone in their argument: if one holds of a
    /// relation it holds of every subset. So the check reverses the expression's direction,
    /// and a negation reverses it back.
    pub(crate) fn of_check(expr: Polarity, negated: bool) -> Monotonicity {
        let m = match expr {
            Polarity::Independent => Monotonicity::Independent,
            Polarity::Increasing => Monotonicity::Antitone,
            Polarity::Decreasing => Monotonicity::Monotone,
            Polarity::Mixed => Monotonicity::Unknown,
        };
        match (m, negated) {
            (Monotonicity::Antitone, true) => Monotonicity::Monotone,
            (Monotonicity::Monotone, true) => Monotonicity::Antitone,
            (m, _) => m,
        }
    }
}
