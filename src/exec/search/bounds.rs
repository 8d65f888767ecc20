//! The cat environment of a partial candidate's bounds ([`BoundEnv`]): every dynamic name at
//! its lower or upper bound, the static names from the structure; and what the model forces
//! before any choice ([`forced_co_at_bottom`]).

use super::env::StaticEnv;
use super::plan::{Bound, PrunePlan, Target};
use super::{LazyModel, SearchError};
use crate::cat::{CatEnv, Value};
use crate::relation::{EventSet, Relation};

/// The dynamic names a snapshot's stage keeps fixed.
pub(super) const STAGED: [&str; 5] = ["rf", "rfe", "rfi", "sync_fence", "mo"];

/// Lower and upper bounds of the base dynamic names of a partial candidate.
#[derive(Clone)]
pub(super) struct Bounds {
    pub(super) rf: [Relation; 2],
    pub(super) co: [Relation; 2],
    pub(super) sync: [Relation; 2],
    pub(super) mo: [Relation; 2],
}

/// The environment a check group is evaluated in: every name at the bound the group needs.
pub(super) struct BoundEnv<'a> {
    pub(super) statics: &'a StaticEnv<'a>,
    pub(super) bounds: &'a Bounds,
    pub(super) choice: [Bound; 12],
    pub(super) ub: &'a EventSet,
    pub(super) mbvalid: &'a EventSet,
}

impl BoundEnv<'_> {
    fn at(&self, name: usize) -> usize {
        match self.choice[name] {
            Bound::Lower => 0,
            Bound::Upper => 1,
        }
    }
}

impl CatEnv for BoundEnv<'_> {
    fn universe(&self) -> usize {
        self.statics.structure.n()
    }
    fn lookup(&self, name: &str) -> Option<Value> {
        let s = self.statics.structure;
        let b = self.bounds;
        let rf = |k: usize| &b.rf[self.at(k)];
        let co = |k: usize| &b.co[self.at(k)];
        let fr = |k: usize| b.rf[self.at(k)].inverse().seq(&b.co[self.at(k)]);
        let r = match name {
            "rf" => rf(0).clone(),
            "rfe" => rf(1).intersection(&s.relations["ext"]),
            "rfi" => rf(2).intersection(&s.relations["int"]),
            "co" => co(3).clone(),
            "coe" => co(4).intersection(&s.relations["ext"]),
            "coi" => co(5).intersection(&s.relations["int"]),
            "fr" => fr(6),
            "fre" => fr(7).intersection(&s.relations["ext"]),
            "fri" => fr(8).intersection(&s.relations["int"]),
            "com" => rf(9).union(co(9)).union(&fr(9)),
            "sync_fence" => b.sync[self.at(10)].clone(),
            "mo" => b.mo[self.at(11)].clone(),
            "UB" => return Some(Value::Set(self.ub.clone())),
            "MBVALID" => return Some(Value::Set(self.mbvalid.clone())),
            _ => return self.statics.lookup_static(name),
        };
        Some(Value::Rel(r))
    }
}

/// The pairs of writes the model's forcing checks (`empty (E \ co)`, see `plan.rs`) put in co
/// before the search chooses anything: `E` evaluated with every dynamic name empty (and the
/// undefined behaviour the structure has by itself). Forcing checks only use an `E` that grows
/// with every dynamic name, so each pair is in co in every consistent execution of the
/// structure: program order, barriers, issue order, whatever the model's `E` holds statically
/// (PTX: the causality order between writes of one location, `Coherence`). The mbarrier graphs
/// take the pairs between an object's updates as static order, so that a history the model
/// rejects before any choice (an arrive placed before the `mbarrier.init` a `bar.sync` orders
/// it after) is never built.
pub(super) fn forced_co_at_bottom(statics: &StaticEnv, model: &LazyModel, plan: &PrunePlan) -> Result<Relation, SearchError> {
    let s = statics.structure;
    let n = s.n();
    let mut forced = Relation::empty(n);
    let checks: Vec<usize> = plan.forcing.iter().filter(|f| f.target == Target::Co).map(|f| f.check).collect();
    if checks.is_empty() {
        return Ok(forced);
    }
    let empty = || Relation::empty(n);
    let bounds = Bounds { rf: [empty(), empty()], co: [empty(), empty()], sync: [empty(), empty()], mo: [empty(), empty()] };
    let ub = EventSet::from_fn(n, |i| s.events[i].ub.is_some());
    let mbvalid = EventSet::empty(n);
    let env = BoundEnv { statics, bounds: &bounds, choice: [Bound::Lower; 12], ub: &ub, mbvalid: &mbvalid };
    let prepared = model.get()?;
    let stage = prepared.stage(&env, &STAGED).map_err(|e| model.error(e))?;
    for check in checks {
        if let Some(out) = prepared.first_failure_on(&stage, &env, &[check]).map_err(|e| model.error(e))? {
            forced.union_with(&out.relation);
        }
    }
    Ok(forced)
}
