//! The pruning plan of a model: which of its checks can be decided on bounds of a partial
//! candidate (grouped by the bound each dynamic name takes), and which force pairs into co or
//! the fence-SC order. Computed once per model.

use super::own_order::OwnOrderOracle;
use super::DYNAMIC_NAMES;
use crate::cat::{CatModel, Monotonicity, Polarity};

/// The dynamic names, in `PrunePlan` bound order.
pub(super) const BOUNDED: [&str; 12] = ["rf", "rfe", "rfi", "co", "coe", "coi", "fr", "fre", "fri", "com", "sync_fence", "mo"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Bound {
    Lower,
    Upper,
}

/// Checks decided together on partial candidates: each dynamic name at the same bound.
#[derive(Clone, Debug)]
pub(super) struct CheckGroup {
    pub(super) bounds: [Bound; 12],
    pub(super) checks: Vec<usize>,
}

/// A check `empty (E \ N)` used to force pairs into `N`.
#[derive(Clone, Debug)]
pub(super) struct Forcing {
    pub(super) check: usize,
    pub(super) target: Target,
    /// Whether `E` depends on co (and the names derived from it) or on the fence-SC order: only
    /// then can pairs added to those change it.
    pub(super) on_co: bool,
    pub(super) on_sync: bool,
}

/// Which name a forcing check adds pairs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Target {
    Co,
    SyncFence,
}

/// How a model's checks are used on partial candidates (computed once per model).
#[derive(Clone, Debug, Default)]
pub struct PrunePlan {
    pub(super) groups: Vec<CheckGroup>,
    /// `empty (E \ co)` / `empty (E \ sync_fence)` checks (see `CheckInfo::inclusion`).
    pub(super) forcing: Vec<Forcing>,
    /// The static names of an `acyclic (rf | N1 | ...)` check (NoThinAir): the search never
    /// lets a read read from a write that depends on it through these and `rf`.
    pub(super) acyclic_with_rf: Option<Vec<String>>,
    /// Whether the model forbids a thread's accesses to one location to read against program
    /// order (see `own_order.rs`); None: every source is kept.
    pub(super) own_order: Option<OwnOrderOracleBox>,
    /// A check `irreflexive ((rf | fr) ; S)` (Causality) whose `S` only grows with the names
    /// the search fixes: the search denies a read the writes `S` on the lower bounds already
    /// rules out, without trying each (see `causal.rs`).
    pub(super) causal: Option<CausalFilter>,
    /// The model's conditions under which its findings do not see the sources of a set of
    /// reads (`free.rs`); None: every source of every read is tried.
    pub(super) free_reads: Option<crate::cat::FreeReads>,
}

/// How the search uses a check `irreflexive (D ; S)` with reads-from or from-read in `D`.
#[derive(Clone, Debug)]
pub(super) struct CausalFilter {
    pub(super) rf: bool,
    pub(super) fr: bool,
    pub(super) after: crate::cat::DefId,
}

/// The oracle of [`PrunePlan::with_own_order`], printable.
#[derive(Clone)]
pub(super) struct OwnOrderOracleBox(pub(super) OwnOrderOracle);

impl std::fmt::Debug for OwnOrderOracleBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OwnOrderOracle")
    }
}

impl PrunePlan {
    /// The plan with per-thread coherence: a read is denied the sources of a pattern `oracle`
    /// says the model forbids (`own_order.rs`).
    pub fn with_own_order(mut self, oracle: OwnOrderOracle) -> Self {
        self.own_order = Some(OwnOrderOracleBox(oracle));
        self
    }

    /// Classify the model's checks by how they vary with each dynamic name.
    pub fn for_model(model: &CatModel) -> Self {
        let mut plan = PrunePlan { free_reads: model.free_reads(), ..PrunePlan::default() };
        for (i, c) in model.checks().iter().enumerate() {
            if c.flag.is_some() {
                continue;
            }
            if let Some(names) = &c.acyclic_union {
                // Usable when rf is its only dynamic name (rfe or co would need their own bounds).
                let dynamic: Vec<&String> = names.iter().filter(|n| DYNAMIC_NAMES.contains(&n.as_str())).collect();
                if plan.acyclic_with_rf.is_none() && dynamic.iter().all(|n| *n == "rf") && !dynamic.is_empty() {
                    plan.acyclic_with_rf = Some(names.iter().filter(|n| *n != "rf").cloned().collect());
                }
            }
            if let Some(rc) = &c.read_composition {
                // S must only grow as the names the search bounds grow, and must not read the
                // replayed undefined behaviour (which has no bounds).
                let grows = rc.after_polarity.iter().all(|(name, p)| {
                    !DYNAMIC_NAMES.contains(&name.as_str())
                        || matches!(p, Polarity::Independent)
                        || (matches!(p, Polarity::Increasing) && !["UB", "MBVALID"].contains(&name.as_str()))
                });
                if grows && plan.causal.is_none() {
                    plan.causal = Some(CausalFilter { rf: rc.rf, fr: rc.fr, after: rc.after });
                }
            }
            if let Some((target, lhs)) = &c.inclusion {
                // E must only grow as the names the search fixes grow.
                let grows = lhs
                    .iter()
                    .all(|(name, p)| !DYNAMIC_NAMES.contains(&name.as_str()) || matches!(p, Polarity::Independent | Polarity::Increasing));
                let depends = |names: &[&str]| lhs.iter().any(|(n, p)| names.contains(&n.as_str()) && *p != Polarity::Independent);
                let on_co = depends(&["co", "coe", "coi", "fr", "fre", "fri", "com"]);
                let on_sync = depends(&["sync_fence"]);
                match target.as_str() {
                    "co" if grows => plan.forcing.push(Forcing { check: i, target: Target::Co, on_co, on_sync }),
                    "sync_fence" if grows => plan.forcing.push(Forcing { check: i, target: Target::SyncFence, on_co, on_sync }),
                    _ => {}
                }
            }
            // Checks over the replayed undefined behaviour cannot be bounded.
            if ["UB", "MBVALID"].iter().any(|n| c.monotonicity(n) != Monotonicity::Independent) {
                continue;
            }
            let mut bounds = [Bound::Lower; 12];
            let mut usable = true;
            let mut dynamic = false;
            for (k, name) in BOUNDED.iter().enumerate() {
                bounds[k] = match c.monotonicity(name) {
                    Monotonicity::Independent => Bound::Lower,
                    Monotonicity::Antitone => {
                        dynamic = true;
                        Bound::Lower
                    }
                    Monotonicity::Monotone => {
                        dynamic = true;
                        Bound::Upper
                    }
                    Monotonicity::Unknown => {
                        usable = false;
                        Bound::Lower
                    }
                };
            }
            if !usable || !dynamic {
                continue;
            }
            // A forcing check evaluated with its target at the upper bound and everything else at
            // the lower one holds whenever forcing succeeded: nothing to check again.
            let target_slot = match c.inclusion.as_ref().map(|(t, _)| t.as_str()) {
                Some("co") => Some(3),
                Some("sync_fence") => Some(10),
                _ => None,
            };
            if plan.forcing.iter().any(|f| f.check == i)
                && target_slot
                    .is_some_and(|t| bounds.iter().enumerate().all(|(k, b)| *b == if k == t { Bound::Upper } else { Bound::Lower }))
            {
                continue;
            }
            match plan.groups.iter_mut().find(|g| g.bounds == bounds) {
                Some(g) => g.checks.push(i),
                None => plan.groups.push(CheckGroup { bounds, checks: vec![i] }),
            }
        }
        plan
    }
}
