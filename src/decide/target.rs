//! The target of the outcome-directed verdict search (`decide::directed`): the condition's
//! proposition in disjunctive normal form, when that form is small.

use crate::litmus::ast::Quantifier;
use crate::program::{Program, Prop};

/// The most disjuncts a condition's disjunctive normal form may have for a directed search.
pub const MAX_DISJUNCTS: usize = 64;

/// The disjuncts of the directed search's target for `program`, each a conjunction of
/// literals; None when it has none (`forall`, or more than [`MAX_DISJUNCTS`] disjuncts).
pub(super) fn target(program: &Program) -> Option<Vec<Prop>> {
    if program.condition.quantifier == Quantifier::Forall {
        return None;
    }
    let d = dnf(&program.condition.prop, false)?;
    Some(d.into_iter().map(|lits| lits.into_iter().reduce(|a, b| Prop::And(Box::new(a), Box::new(b))).unwrap_or(Prop::True)).collect())
}

/// The disjunctive normal form of `p` (of `¬p` when `negated`): disjuncts of literals; None
/// beyond [`MAX_DISJUNCTS`].
fn dnf(p: &Prop, negated: bool) -> Option<Vec<Vec<Prop>>> {
    let d = match (p, negated) {
        (Prop::True, false) | (Prop::False, true) => vec![Vec::new()],
        (Prop::True, true) | (Prop::False, false) => Vec::new(),
        (Prop::Not(q), _) => dnf(q, !negated)?,
        (Prop::Cmp(..), false) => vec![vec![p.clone()]],
        (Prop::Cmp(..), true) => vec![vec![Prop::Not(Box::new(p.clone()))]],
        // ¬(a ∧ b) = ¬a ∨ ¬b.
        (Prop::Or(a, b), false) | (Prop::And(a, b), true) => {
            let mut d = dnf(a, negated)?;
            d.extend(dnf(b, negated)?);
            d
        }
        (Prop::And(a, b), false) | (Prop::Or(a, b), true) => {
            let (da, db) = (dnf(a, negated)?, dnf(b, negated)?);
            if da.len().saturating_mul(db.len()) > MAX_DISJUNCTS {
                return None;
            }
            da.iter().flat_map(|x| db.iter().map(move |y| x.iter().chain(y).cloned().collect())).collect()
        }
    };
    (d.len() <= MAX_DISJUNCTS).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prop_of(cond: &str) -> Program {
        let src = format!("PTX T\n{{ x=0; }}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n ld.relaxed.gpu r0, x | ld.relaxed.gpu r0, x ;\n ld.relaxed.gpu r1, x | ld.relaxed.gpu r1, x ;\n{cond}\n");
        crate::program::load::parse_program(crate::diag::SourceFile::new("T.litmus", src)).expect("a valid test")
    }

    #[test]
    fn the_target_in_disjunctive_normal_form() {
        let n = |cond: &str| target(&prop_of(cond)).map(|d| d.len());
        assert_eq!(n("exists (0:r0=1 /\\ 0:r1=0 \\/ 1:r0=1 /\\ 1:r1=0)"), Some(2));
        // (a ∨ b) ∧ (c ∨ d): four disjuncts; a negation pushed inwards.
        assert_eq!(n("exists ((0:r0=1 \\/ 0:r1=1) /\\ (1:r0=1 \\/ 1:r1=1))"), Some(4));
        assert_eq!(n("~exists (~(0:r0=1 /\\ 0:r1=1))"), Some(2));
        assert_eq!(n("forall (0:r0=0)"), None);
    }

    #[test]
    fn too_many_disjuncts_have_no_target() {
        // A product of 7 binary disjunctions has 128 disjuncts.
        let lits: Vec<String> = (0..7).map(|_| "(0:r0=1 \\/ 0:r1=1)".to_string()).collect();
        assert_eq!(target(&prop_of(&format!("exists ({})", lits.join(" /\\ ")))).map(|d| d.len()), None);
    }
}
