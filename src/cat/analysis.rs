//! The polarity analysis over a resolved model (see `polarity.rs` for what is computed and why):
//! each check's polarity in every environment name, the `empty (E \ N)` checks that can force
//! pairs into `N`, and the `acyclic (N1 | N2 | ...)` unions of environment names.

use super::ast::{BinOp, UnOp};
use super::polarity::Polarity;
use super::resolve::{IExpr, IKind, Program};

/// For each check of `prog`, the polarity of its expression in each environment slot it
/// depends on, as `(slot, polarity)` in ascending slot order. Slots a check does not depend on
/// are left out: no occurrence is reachable, so they are `Independent` by construction.
pub(crate) fn check_polarities(prog: &Program) -> Vec<Vec<(u32, Polarity)>> {
    let mut out = vec![Vec::new(); prog.checks.len()];
    // Scratch: polarity of every definition in the slot being analysed; fully rewritten (in
    // unit order) for each slot, so stale values from the previous slot are never read.
    let mut defs = vec![Polarity::Independent; prog.defs.len()];
    for slot in 0..prog.env.len() as u32 {
        if !prog.checks.iter().any(|c| c.env_deps.contains(slot)) {
            continue;
        }
        def_polarities(prog, slot, &mut defs);
        for (check, out) in prog.checks.iter().zip(&mut out) {
            if check.env_deps.contains(slot) {
                out.push((slot, expr_polarity(&check.expr, slot, &defs)));
            }
        }
    }
    out
}

/// Fills `defs` with the polarity of every definition in environment slot `slot`.
fn def_polarities(prog: &Program, slot: u32, defs: &mut [Polarity]) {
    // Units only refer to earlier units (or to themselves, for `let rec`), so one pass in
    // order sees every referenced definition already computed.
    for unit in &prog.units {
        if !unit.env_deps.contains(slot) {
            for &d in &unit.slots {
                defs[d as usize] = Polarity::Independent;
            }
            continue;
        }
        if !unit.rec {
            defs[unit.slots[0] as usize] = expr_polarity(&unit.bodies[0], slot, defs);
            continue;
        }
        // `let rec`: evaluation iterates from the empty value (Independent) and the fixpoint is
        // the union of the iterates, so its polarity is the join of theirs. Iterate the
        // abstraction the same way; the lattice has height 2, so this stops within a few rounds.
        for &d in &unit.slots {
            defs[d as usize] = Polarity::Independent;
        }
        loop {
            let mut changed = false;
            for (&d, body) in unit.slots.iter().zip(&unit.bodies) {
                let p = defs[d as usize].join(expr_polarity(body, slot, defs));
                if p != defs[d as usize] {
                    defs[d as usize] = p;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }
}

/// The polarity of `e` in environment slot `slot`, given the polarity of every definition it
/// may name.
fn expr_polarity(e: &IExpr, slot: u32, defs: &[Polarity]) -> Polarity {
    match &e.kind {
        IKind::Env(s) if *s == slot => Polarity::Increasing,
        IKind::Env(_) | IKind::Zero | IKind::Const(_) => Polarity::Independent,
        // A shadowing `let co = ...` is a definition, not the environment name: follow it.
        IKind::Def(d) => defs[*d as usize],
        // Parameters are substituted away when calls are inlined; should one remain, claim
        // nothing rather than something unsound.
        IKind::Param => Polarity::Mixed,
        IKind::Un(op, a) => {
            let p = expr_polarity(a, slot, defs);
            match op {
                UnOp::Complement => p.flip(),
                UnOp::Plus | UnOp::Star | UnOp::Opt | UnOp::Inverse | UnOp::Domain | UnOp::Range | UnOp::ToId => p,
            }
        }
        IKind::Bin(op, a, b) => {
            let (pa, pb) = (expr_polarity(a, slot, defs), expr_polarity(b, slot, defs));
            match op {
                BinOp::Diff => pa.join(pb.flip()),
                BinOp::Union | BinOp::Inter | BinOp::Seq | BinOp::Product => pa.join(pb),
            }
        }
    }
}

/// The target slot of an inclusion check, and the polarity of its left side in each slot.
pub(crate) type Inclusion = (u32, Vec<(u32, Polarity)>);

/// Whether `check` is a check of `kind` that forbids (not negated, not a flag): the form every
/// analysis below reads.
fn is_plain(check: &super::resolve::Check, kind: super::ast::CheckKind) -> bool {
    check.kind == kind && !check.negated && check.flag.is_none()
}

/// For each check of `prog` of the form `empty (E \ N)` (not negated, not a flag), where `N` is
/// an environment name, or a definition whose body is `N`, `N+` or `N*` (Dat3M writes
/// `let co = co+`): `N`'s slot, and the polarity of `E` in each environment slot it depends on.
///
/// Such a check says every consistent execution has `N ⊇ E` (up to the closure). When `E` can
/// only grow as the names an engine varies grow, the pairs of `E` evaluated on lower bounds of
/// those names are pairs every completion's `N` contains: the engine can add them to `N`'s lower
/// bound ("forced" pairs) instead of guessing `N` and letting the check reject wrong guesses.
pub(crate) fn inclusion_targets(prog: &Program) -> Vec<Option<Inclusion>> {
    let mut defs = vec![Polarity::Independent; prog.defs.len()];
    prog.checks
        .iter()
        .map(|check| {
            if !is_plain(check, super::ast::CheckKind::Empty) {
                return None;
            }
            let IKind::Bin(BinOp::Diff, lhs, rhs) = &check.expr.kind else { return None };
            let target = env_behind(prog, rhs)?;
            let mut lhs_polarity = Vec::new();
            for slot in check.env_deps.iter() {
                def_polarities(prog, slot, &mut defs);
                lhs_polarity.push((slot, expr_polarity(lhs, slot, &defs)));
            }
            Some((target, lhs_polarity))
        })
        .collect()
}

/// The environment slot `e` stands for when it is `N`, `N+`, `N*` or a plain definition of one
/// of those.
fn env_behind(prog: &Program, e: &IExpr) -> Option<u32> {
    match &e.kind {
        IKind::Env(s) => Some(*s),
        IKind::Un(UnOp::Plus | UnOp::Star, a) => env_behind(prog, a),
        IKind::Def(d) => {
            let unit = &prog.units[prog.defs[*d as usize].unit as usize];
            if unit.rec || unit.bodies.len() != 1 {
                return None;
            }
            env_behind(prog, &unit.bodies[0])
        }
        _ => None,
    }
}

/// For each check of `prog` of the form `acyclic (N1 | N2 | ...)` (not negated, not a flag),
/// where every operand is an environment name or a plain definition of such a union (Dat3M
/// writes `let dep = addr | data | ctrl`): the slots of the names.
///
/// Such a check forbids every cycle of the union. An engine that knows some of its edges before
/// the candidate is complete can rule out choices that would close a cycle, without evaluating.
pub(crate) fn acyclic_unions(prog: &Program) -> Vec<Option<Vec<u32>>> {
    prog.checks
        .iter()
        .map(|check| {
            if !is_plain(check, super::ast::CheckKind::Acyclic) {
                return None;
            }
            let mut names = Vec::new();
            let mut seen = super::resolve::SlotSet::default();
            union_of_env(prog, &check.expr, &mut names, &mut seen).then_some(names)
        })
        .collect()
}

/// Collect the environment names of a union of names (through plain definitions); false when
/// `e` is anything else. A definition met again (`seen`) adds nothing new: it is followed once,
/// so that definitions naming the previous one twice stay linear.
fn union_of_env(prog: &Program, e: &IExpr, out: &mut Vec<u32>, seen: &mut super::resolve::SlotSet) -> bool {
    match &e.kind {
        IKind::Env(s) => {
            out.push(*s);
            true
        }
        IKind::Bin(BinOp::Union, a, b) => union_of_env(prog, a, out, seen) && union_of_env(prog, b, out, seen),
        IKind::Def(d) if seen.contains(*d) => true,
        IKind::Def(d) => {
            seen.insert(*d);
            let unit = &prog.units[prog.defs[*d as usize].unit as usize];
            !unit.rec && unit.bodies.len() == 1 && union_of_env(prog, &unit.bodies[0], out, seen)
        }
        _ => false,
    }
}

/// A check `irreflexive (D ; S)` (or `irreflexive (S ; D)`, the same cycle) whose `D` is a
/// union containing reads-from and/or from-read, and whose `S` is a definition: see
/// [`read_compositions`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ReadComposition {
    /// `D` contains `rf` (the environment name).
    pub rf: bool,
    /// `D` contains from-read: the environment name `fr`, or a definition `rf^-1 ; co` of the
    /// environment names.
    pub fr: bool,
    /// The definition `S`.
    pub after: u32,
    /// The polarity of `S` in each environment slot it depends on.
    pub after_polarity: Vec<(u32, Polarity)>,
}

/// For each check of `prog` of the form `irreflexive (D ; S)` or `irreflexive (S ; D)` (not
/// negated, not a flag) where `D` is a union (through plain definitions) with `rf` or
/// from-read among its operands and `S` is a definition: what [`ReadComposition`] records.
///
/// Such a check says no read reads a write `S` orders after it (`rf ; S`), and no read reads a
/// write coherence-before one `S` orders before the read (`fr ; S`). When `S` only grows with
/// the names an engine varies, `S` evaluated on their lower bounds denies those sources to
/// every completion: an engine can drop them without trying each one. Operands of `D` other
/// than `rf` and from-read are ignored (denying less is always sound).
pub(crate) fn read_compositions(prog: &Program) -> Vec<Option<ReadComposition>> {
    let slot = |name: &str| prog.env_slot(name);
    let (rf, co, fr) = (slot("rf"), slot("co"), slot("fr"));
    prog.checks
        .iter()
        .map(|check| {
            if !is_plain(check, super::ast::CheckKind::Irreflexive) {
                return None;
            }
            let IKind::Bin(BinOp::Seq, a, b) = &check.expr.kind else { return None };
            [(a, b), (b, a)].into_iter().find_map(|(d, s)| {
                let IKind::Def(after) = s.kind else { return None };
                let mut terms = (false, false);
                let mut seen = super::resolve::SlotSet::default();
                read_terms(prog, d, (rf, co, fr), &mut terms, &mut seen);
                if !(terms.0 || terms.1) {
                    return None;
                }
                let unit = &prog.units[prog.defs[after as usize].unit as usize];
                let mut defs = vec![Polarity::Independent; prog.defs.len()];
                let after_polarity = unit
                    .env_deps
                    .iter()
                    .map(|slot| {
                        def_polarities(prog, slot, &mut defs);
                        (slot, defs[after as usize])
                    })
                    .collect();
                Some(ReadComposition { rf: terms.0, fr: terms.1, after, after_polarity })
            })
        })
        .collect()
}

/// Whether the union `e` has `rf` (`found.0`) or from-read (`found.1`) among its operands.
fn read_terms(
    prog: &Program,
    e: &IExpr,
    (rf, co, fr): (Option<u32>, Option<u32>, Option<u32>),
    found: &mut (bool, bool),
    seen: &mut super::resolve::SlotSet,
) {
    let is_env = |e: &IExpr, slot: Option<u32>| matches!(e.kind, IKind::Env(s) if Some(s) == slot);
    match &e.kind {
        IKind::Env(_) if is_env(e, rf) => found.0 = true,
        IKind::Env(_) if is_env(e, fr) => found.1 = true,
        IKind::Bin(BinOp::Seq, a, b)
            if matches!(&a.kind, IKind::Un(UnOp::Inverse, x) if is_env(x, rf)) && co.is_some() && env_behind(prog, b) == co =>
        {
            found.1 = true
        }
        IKind::Bin(BinOp::Union, a, b) => {
            read_terms(prog, a, (rf, co, fr), found, seen);
            read_terms(prog, b, (rf, co, fr), found, seen);
        }
        IKind::Def(d) if !seen.contains(*d) => {
            seen.insert(*d);
            let unit = &prog.units[prog.defs[*d as usize].unit as usize];
            if !unit.rec && unit.bodies.len() == 1 {
                read_terms(prog, &unit.bodies[0], (rf, co, fr), found, seen);
            }
        }
        _ => {}
    }
}
