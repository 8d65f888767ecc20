//! The cat environments of the search: the static names of an event structure under one
//! resolution of its barriers ([`StaticEnv`]), and a complete candidate execution on top of
//! them ([`Candidate`]).

use crate::cat::{CatEnv, Value};
use crate::exec::structure::{BarrierResolution, EventStructure};
use crate::relation::{EventSet, Relation};

/// Cat environment of an event structure plus its barrier matching: the static names.
pub struct StaticEnv<'a> {
    pub structure: &'a EventStructure<'a>,
    pub syncbar: &'a Relation,
    pub syncclu: &'a Relation,
}

impl<'a> StaticEnv<'a> {
    /// The static names of a structure under one resolution of its barriers.
    pub fn new(structure: &'a EventStructure<'a>, barriers: &'a BarrierResolution) -> Self {
        StaticEnv { structure, syncbar: &barriers.syncbar, syncclu: &barriers.syncclu }
    }

    pub(super) fn lookup_static(&self, name: &str) -> Option<Value> {
        if name == "syncbar" {
            return Some(Value::Rel(self.syncbar.clone()));
        }
        if name == "syncclu" {
            return Some(Value::Rel(self.syncclu.clone()));
        }
        if let Some(s) = self.structure.sets.get(name) {
            return Some(Value::Set(s.clone()));
        }
        if let Some(r) = self.structure.relations.get(name) {
            return Some(Value::Rel(r.clone()));
        }
        match name {
            "0" | "emptyset" => Some(Value::Rel(Relation::empty(self.structure.n()))),
            _ => None,
        }
    }
}

impl CatEnv for StaticEnv<'_> {
    fn universe(&self) -> usize {
        self.structure.n()
    }
    fn lookup(&self, name: &str) -> Option<Value> {
        self.lookup_static(name)
    }
}

/// One complete candidate execution: an event structure with rf, co, the fence-SC order and the
/// mbarrier histories chosen.
#[derive(Clone)]
pub struct Candidate<'a> {
    pub statics: &'a StaticEnv<'a>,
    pub rf: Relation,
    /// Coherence, including the order of each mbarrier object's writes.
    pub co: Relation,
    pub sync_fence: Relation,
    /// The order of each mbarrier object's writes.
    pub mo: Relation,
    /// Events with undefined behaviour: those the traces found, and the mbarrier misuses the
    /// chosen histories replay.
    pub ub: EventSet,
    /// Writes that leave a valid mbarrier object.
    pub mbvalid: EventSet,
    /// The value of every event (mbarrier events get theirs from the chosen histories).
    pub values: Vec<i64>,
    /// The undefined behaviour of every event, with its rule and explanation.
    pub ub_reasons: Vec<Option<String>>,
}

impl Candidate<'_> {
    pub fn structure(&self) -> &EventStructure<'_> {
        self.statics.structure
    }

    pub fn fr(&self) -> Relation {
        self.rf.inverse().seq(&self.co)
    }

    /// For each physical location, the values of its co-maximal writes (the possible final values).
    pub fn final_values(&self, physical: usize) -> Vec<i64> {
        let s = self.structure();
        let mut vals: Vec<i64> = s
            .events
            .iter()
            .enumerate()
            .filter(|(i, e)| e.is_write() && e.physical == Some(physical) && self.co.successors(*i).is_empty())
            .map(|(i, _)| self.values[i])
            .collect();
        vals.sort_unstable();
        vals.dedup();
        vals
    }

    /// The value event `e` reads or writes in this execution: a symbolic read shows the value of
    /// the write it reads from.
    pub fn value_of(&self, e: usize) -> i64 {
        let s = self.structure();
        if s.symbolic_reads[e] {
            if let Some(w) = (0..s.n()).find(|&w| self.rf.contains(w, e)) {
                return self.values[w];
            }
        }
        self.values[e]
    }
}

impl CatEnv for Candidate<'_> {
    fn universe(&self) -> usize {
        self.structure().n()
    }
    fn lookup(&self, name: &str) -> Option<Value> {
        let int = || &self.structure().relations["int"];
        let ext = || &self.structure().relations["ext"];
        let r = match name {
            "rf" => self.rf.clone(),
            "co" => self.co.clone(),
            "fr" => self.fr(),
            "rfe" => self.rf.intersection(ext()),
            "rfi" => self.rf.intersection(int()),
            "coe" => self.co.intersection(ext()),
            "coi" => self.co.intersection(int()),
            "fre" => self.fr().intersection(ext()),
            "fri" => self.fr().intersection(int()),
            "com" => self.rf.union(&self.co).union(&self.fr()),
            "sync_fence" => self.sync_fence.clone(),
            "mo" => self.mo.clone(),
            "UB" => return Some(Value::Set(self.ub.clone())),
            "MBVALID" => return Some(Value::Set(self.mbvalid.clone())),
            _ => return self.statics.lookup_static(name),
        };
        Some(Value::Rel(r))
    }
}
