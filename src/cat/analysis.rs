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
            if check.kind != super::ast::CheckKind::Empty || check.negated || check.flag.is_some() {
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
            if check.kind != super::ast::CheckKind::Acyclic || check.negated || check.flag.is_some() {
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
