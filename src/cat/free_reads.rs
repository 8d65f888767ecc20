//! Which reads' sources the findings of a model cannot see.
//!
//! A kernel's data often decides nothing: a lane loads a word and stores it elsewhere, and no
//! address, branch, synchronization operand or shown value depends on it. Each such read may read
//! several writes, and an engine that enumerates every choice multiplies its executions by them
//! (32 lanes each reading a neighbour's word racily: 2^32) although the findings are the same in
//! all. This module says, from the model alone, when that is so: it computes how each
//! definition may differ between two executions that differ only in the writes some set `X` of
//! reads read (their `rf` edges), and accepts the model when no `flag`/`undefined_unless` check
//! can differ. What it needs of `X` it returns as [`Guard`]s, which an engine evaluates on its
//! event structure: `morally-strong & rf` hides the reads-from edges of `X` when no candidate
//! edge into `X` is morally strong, `rf ; [MBOK]` when no read of `X` is in `MBOK`.
//!
//! The analysis is syntactic and conservative, like `polarity.rs`: an expression it cannot
//! follow is taken to differ anywhere, and the model is then refused.

use super::ast::{BinOp, UnOp};
use super::resolve::{IExpr, IKind, Program};

/// Where a value may differ between two such executions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Varies {
    /// Nowhere: the value is the same.
    Not,
    /// Only in pairs whose second event is in `X` (or, for a set, only in elements of `X`).
    IntoX,
    /// Only in pairs whose first event is in `X`.
    FromX,
    /// Possibly anywhere.
    Any,
}

impl Varies {
    fn join(self, other: Varies) -> Varies {
        match (self, other) {
            (Varies::Not, v) | (v, Varies::Not) => v,
            (a, b) if a == b => a,
            _ => Varies::Any,
        }
    }

    fn inverse(self) -> Varies {
        match self {
            Varies::IntoX => Varies::FromX,
            Varies::FromX => Varies::IntoX,
            v => v,
        }
    }
}

/// A name whose value is the same in every candidate of an event structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum StaticSlot {
    Env(u32),
    Def(u32),
}

/// What must hold of `X` on an event structure for the model's findings not to depend on the
/// sources of `X`'s reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Guard {
    /// `G & rf` (a relation): no pair of `G` ends in a read of `X` (for a set `G`, no read of `X`
    /// is in it).
    Pairs(StaticSlot),
    /// `rf ; [S]`: no read of `X` is in the set `S`.
    Targets(StaticSlot),
}

/// The model's conditions on `X`, when it has them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FreeReads {
    pub guards: Vec<Guard>,
    /// Some finding depends on `sync_fence`, the order of SC fences an engine chooses with the
    /// coherence orders: the findings are then the same only when that order has one choice.
    pub on_fence_order: bool,
}

/// Environment names that an engine chooses per candidate (see `exec::search::DYNAMIC_NAMES`)
/// and how they differ when only the sources of `X` do. `co` and the names over it are chosen
/// after the reads-from relation, and which of them are consistent can depend on it: a finding
/// that depends on them is refused.
fn env_varies(name: &str) -> Option<Varies> {
    match name {
        "rf" | "rfe" | "rfi" => Some(Varies::IntoX),
        "fr" | "fre" | "fri" => Some(Varies::FromX),
        "co" | "coe" | "coi" | "com" => Some(Varies::Any),
        // Chosen before the reads of `X` (mbarrier histories, undefined behaviour of the
        // histories, valid objects) or handled by `on_fence_order`.
        "mo" | "UB" | "MBVALID" | "sync_fence" => Some(Varies::Not),
        _ => None,
    }
}

/// The conditions under which no `flag` or `undefined_unless` check of `prog` depends on the
/// sources of a set of reads; None when the analysis cannot show it for any set.
pub(crate) fn free_reads(prog: &Program) -> Option<FreeReads> {
    let dynamic = |slot: u32| env_varies(&prog.env[slot as usize].name).is_some();
    let mut a = Analysis { prog, defs: vec![Varies::Not; prog.defs.len()], guards: Vec::new(), dynamic: &dynamic };
    for unit in &prog.units {
        if !unit.rec {
            a.defs[unit.slots[0] as usize] = a.varies(&unit.bodies[0]);
            continue;
        }
        // `let rec`: the value is the union of iterates from the empty one; the lattice has
        // height 3, so the abstraction reaches its fixpoint in a few rounds.
        loop {
            let mut changed = false;
            for (&d, body) in unit.slots.iter().zip(&unit.bodies) {
                let v = a.defs[d as usize].join(a.varies(body));
                // A closure over a part that differs is taken to differ anywhere.
                let v = if v == Varies::Not { v } else { Varies::Any };
                if v != a.defs[d as usize] {
                    a.defs[d as usize] = v;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }
    let fence_slot = prog.env_slot("sync_fence");
    let mut on_fence_order = false;
    for check in prog.checks.iter().filter(|c| c.flag.is_some()) {
        if a.varies(&check.expr) != Varies::Not {
            return None;
        }
        on_fence_order |= fence_slot.is_some_and(|s| check.env_deps.contains(s));
    }
    let mut guards = a.guards;
    guards.sort_by_key(|g| format!("{g:?}"));
    guards.dedup();
    Some(FreeReads { guards, on_fence_order })
}

struct Analysis<'p, 'd> {
    prog: &'p Program,
    defs: Vec<Varies>,
    guards: Vec<Guard>,
    dynamic: &'d dyn Fn(u32) -> bool,
}

impl Analysis<'_, '_> {
    /// The name `e` is, when its value is the same in every candidate of a structure.
    fn static_slot(&self, e: &IExpr) -> Option<StaticSlot> {
        match e.kind {
            IKind::Env(s) if !(self.dynamic)(s) => Some(StaticSlot::Env(s)),
            IKind::Def(d) => {
                let unit = &self.prog.units[self.prog.defs[d as usize].unit as usize];
                (!unit.env_deps.iter().any(|s| (self.dynamic)(s))).then_some(StaticSlot::Def(d))
            }
            _ => None,
        }
    }

    /// `[S]` of a static name `S`.
    fn static_identity(&self, e: &IExpr) -> Option<StaticSlot> {
        match &e.kind {
            IKind::Un(UnOp::ToId, s) => self.static_slot(s),
            _ => None,
        }
    }

    fn varies(&mut self, e: &IExpr) -> Varies {
        match &e.kind {
            IKind::Env(s) => env_varies(&self.prog.env[*s as usize].name).unwrap_or(Varies::Not),
            IKind::Def(d) => self.defs[*d as usize],
            IKind::Param | IKind::Const(_) | IKind::Zero => Varies::Not,
            IKind::Un(op, a) => {
                let v = self.varies(a);
                match op {
                    _ if v == Varies::Not => Varies::Not,
                    UnOp::Inverse => v.inverse(),
                    // Adding the identity, or complementing, changes the same pairs.
                    UnOp::Opt | UnOp::Complement => v,
                    // The identity on a set that differs in elements of X: pairs (x, x).
                    UnOp::ToId => v,
                    UnOp::Range if v == Varies::IntoX => Varies::IntoX,
                    UnOp::Domain if v == Varies::FromX => Varies::IntoX,
                    _ => Varies::Any,
                }
            }
            IKind::Bin(op, a, b) => {
                let (va, vb) = (self.varies(a), self.varies(b));
                match op {
                    BinOp::Union | BinOp::Diff => va.join(vb),
                    BinOp::Inter => match (va, vb) {
                        (Varies::Not, Varies::Not) => Varies::Not,
                        // Intersecting with a name that holds no pair into X hides the pairs
                        // that differ.
                        (Varies::IntoX, Varies::Not) | (Varies::Not, Varies::IntoX) => {
                            let guard = if va == Varies::Not { a } else { b };
                            match self.static_slot(guard) {
                                Some(slot) => {
                                    self.guards.push(Guard::Pairs(slot));
                                    Varies::Not
                                }
                                None => Varies::IntoX,
                            }
                        }
                        // Intersection only removes pairs: the parts that differ stay within
                        // those of either side.
                        _ => va.join(vb),
                    },
                    BinOp::Seq => match (va, vb) {
                        (Varies::Not, Varies::Not) => Varies::Not,
                        // (a ; b) differs in (x, z) through a pair (y, z) of b that differs: z
                        // in X when b's differ only into X; the other way round for a.
                        (Varies::Not, Varies::IntoX) | (Varies::FromX, Varies::Not) => va.join(vb),
                        (Varies::IntoX, Varies::Not) => match self.static_identity(b) {
                            Some(slot) => {
                                self.guards.push(Guard::Targets(slot));
                                Varies::Not
                            }
                            None => Varies::Any,
                        },
                        (Varies::Not, Varies::FromX) => match self.static_identity(a) {
                            Some(slot) => {
                                self.guards.push(Guard::Targets(slot));
                                Varies::Not
                            }
                            None => Varies::Any,
                        },
                        _ => Varies::Any,
                    },
                    BinOp::Product => {
                        if va == Varies::Not && vb == Varies::Not {
                            Varies::Not
                        } else {
                            Varies::Any
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::SourceFile;

    fn analyse(src: &str) -> Option<FreeReads> {
        let prog = super::super::resolve::compile(SourceFile::new("t.cat", src), None, &[]).unwrap();
        free_reads(&prog)
    }

    fn names(prog_src: &str, f: &FreeReads) -> Vec<String> {
        let prog = super::super::resolve::compile(SourceFile::new("t.cat", prog_src), None, &[]).unwrap();
        let name = |s: StaticSlot| match s {
            StaticSlot::Env(e) => prog.env[e as usize].name.clone(),
            StaticSlot::Def(d) => prog.defs[d as usize].name.clone(),
        };
        f.guards
            .iter()
            .map(|g| match g {
                Guard::Pairs(s) => format!("pairs {}", name(*s)),
                Guard::Targets(s) => format!("targets {}", name(*s)),
            })
            .collect()
    }

    #[test]
    fn findings_over_guarded_reads_from_are_accepted_with_their_guards() {
        let src = "let ms = po | sr\nlet obs = (ms & rf) | ([MB] ; rf ; [MB])\nlet hb = (po | obs)+\nacyclic (rf | co | hb) as Ax\nflag ~empty ((W * R) \\ (hb | hb^-1)) as race\n";
        let f = analyse(src).expect("the findings do not see unguarded rf");
        assert_eq!(names(src, &f), vec!["pairs ms".to_string(), "targets MB".to_string()]);
        assert!(!f.on_fence_order);
    }

    #[test]
    fn a_finding_over_plain_reads_from_or_coherence_is_refused() {
        assert_eq!(analyse("let hb = (po | rf)+\nflag ~empty (hb & loc) as f\n"), None);
        assert_eq!(analyse("flag ~empty (rf ; po) as f\n"), None);
        assert_eq!(analyse("let fr = rf^-1 ; co\nflag ~empty fr as f\n"), None);
        assert_eq!(analyse("flag ~empty (co & po) as f\n"), None);
        // A guard that is itself chosen per candidate does not hide anything.
        assert_eq!(analyse("flag ~empty (co & rf) as f\n"), None);
    }

    #[test]
    fn axioms_may_depend_on_reads_from() {
        let f = analyse("acyclic (rf | po) as A\nirreflexive (rf^-1 ; co ; po) as B\nflag ~empty (po & loc) as f\n").unwrap();
        assert!(f.guards.is_empty());
    }

    #[test]
    fn the_fence_order_is_noted() {
        let f = analyse("let hb = po | sync_fence\nflag ~empty ((W * R) \\ hb) as f\n").unwrap();
        assert!(f.on_fence_order);
    }

    #[test]
    fn the_shipped_model_is_accepted() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/ptx.cat");
        let model = crate::cat::CatModel::load(&path, &[]).unwrap();
        let f = free_reads(&model.prog).expect("ptx.cat's findings see rf only through guards");
        assert!(!f.guards.is_empty());
        assert!(f.on_fence_order, "races depend on the SC fence order through synchronizes-with");
    }
}
