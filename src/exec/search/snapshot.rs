//! A partial candidate as the checks see it ([`Snapshot`]): lower and upper bounds of its
//! dynamic names and what its mbarrier histories replay, built from the engine's choices; and
//! the model's checks evaluated on those bounds.

use super::bounds::{BoundEnv, Bounds, STAGED};
use super::engine::Engine;
use super::env::Candidate;
use super::plan::Bound;
use super::SearchError;
use crate::cat::CheckOutcome;
use crate::exec::structure::EventStructure;
use crate::program::mbarrier::MbState;
use crate::relation::{EventSet, Relation};

/// A partial candidate: bounds of its dynamic names and what its mbarrier histories replay.
pub(super) struct Snapshot {
    pub(super) b: Bounds,
    pub(super) ub: EventSet,
    pub(super) mbvalid: EventSet,
    pub(super) values: Vec<i64>,
    pub(super) ub_reasons: Vec<Option<String>>,
    /// The values of open writes and symbolic reads, where the reads-from chosen determines them.
    pub(super) open: Vec<Option<i64>>,
    /// The model's definitions that depend only on rf, the fence-SC order and mo, at their lower
    /// bounds (reset whenever one of them changes).
    pub(super) stage: std::cell::OnceCell<crate::cat::Stage>,
}

impl<'e, 'a, 'm, 's> Engine<'e, 'a, 'm, 's> {
    /// The mbarrier part of the candidate, added to `snap`: rf of updates and reads (and what
    /// the reads not placed yet may read, in the upper bound), mo (lower and upper), values,
    /// undefined behaviour, valid objects.
    fn assemble_objects(&self, snap: &mut Snapshot) {
        for (o, g) in self.objects.iter().enumerate() {
            let st = &self.state[o];
            let Snapshot { b, ub, mbvalid, values, ub_reasons, .. } = snap;
            let mut writer = vec![usize::MAX; g.nodes.len()];
            writer[0] = g.init;
            let mut order = vec![g.init];
            let mut here = 0;
            if MbState::decode(values[g.init]).is_some() {
                mbvalid.insert(g.init);
            }
            let mut placed = EventSet::empty(g.units.len());
            for e in g.walk(0, &st.member) {
                let unit = g.units[e.unit];
                if let Some(r) = unit.read {
                    b.rf[0].insert(order[order.len() - 1], r);
                    values[r] = g.nodes[here].value;
                    if let Some(reason) = &e.ub {
                        ub.insert(r);
                        ub_reasons[r] = Some(reason.to_string());
                    }
                }
                values[unit.write] = g.nodes[e.to].value;
                if MbState::decode(values[unit.write]).is_some() {
                    mbvalid.insert(unit.write);
                }
                here = e.to;
                writer[here] = unit.write;
                order.push(unit.write);
                placed.insert(e.unit);
            }
            for (node, read, reason) in &st.chosen {
                let Some(r) = read else { continue };
                b.rf[0].insert(writer[*node], *r);
                values[*r] = g.nodes[*node].value;
                if let Some(reason) = reason {
                    ub.insert(*r);
                    ub_reasons[*r] = Some(reason.clone());
                }
            }
            let [mo_lower, mo_upper] = &mut b.mo;
            for i in 0..order.len() {
                for j in i + 1..order.len() {
                    mo_lower.insert(order[i], order[j]);
                }
            }
            // Units not placed yet come after every placed one, in some order.
            let unplaced: Vec<usize> = (0..g.units.len()).filter(|&u| !placed.contains(u)).collect();
            for &u in &unplaced {
                for &x in &order {
                    mo_lower.insert(x, g.units[u].write);
                }
            }
            mo_upper.union_with(mo_lower);
            for &u in &unplaced {
                for &v in &unplaced {
                    if u != v {
                        mo_upper.insert(g.units[u].write, g.units[v].write);
                    }
                }
            }
            // Reads not placed yet may read any write of the object.
            let all_writes: Vec<usize> = order.iter().copied().chain(unplaced.iter().map(|&u| g.units[u].write)).collect();
            let decided_reads: Vec<usize> = st.chosen.iter().filter_map(|c| c.1).collect();
            let open_reads =
                unplaced.iter().filter_map(|&u| g.units[u].read).chain(g.reads.iter().copied().filter(|r| !decided_reads.contains(r)));
            for r in open_reads {
                for &w in &all_writes {
                    b.rf[1].insert(w, r);
                }
            }
        }
    }

    /// Bounds of the partial candidate (rf, co, fence-SC order, mo) and its mbarrier facts.
    pub(super) fn snapshot(&self) -> Snapshot {
        let n = self.n;
        let empty = || Relation::empty(n);
        let mut snap = Snapshot {
            b: Bounds {
                rf: [self.rf.clone(), empty()],
                co: [empty(), empty()],
                sync: [empty(), self.sync_full.clone()],
                mo: [empty(), empty()],
            },
            ub: self.static_ub.clone(),
            mbvalid: EventSet::empty(n),
            values: self.s.events.iter().map(|e| e.value).collect(),
            ub_reasons: self.s.events.iter().map(|e| e.ub.clone()).collect(),
            open: Vec::new(),
            stage: std::cell::OnceCell::new(),
        };
        self.assemble_objects(&mut snap);
        // Open values known from the reads-from chosen so far (symbolic reads alone need none:
        // their values are read off rf when a final state is formed).
        let open = if self.open_writes { self.open_values(&snap.b.rf[0], &snap.values) } else { Vec::new() };
        for (e, v) in open.iter().enumerate() {
            if let (Some(v), true) = (v, self.s.events[e].sym.is_some() || self.s.symbolic_reads[e]) {
                snap.values[e] = *v;
            }
        }
        snap.open = open;
        let b = &mut snap.b;
        let lower = b.rf[0].clone();
        b.rf[1].union_with(&lower);
        for (k, &r) in self.reads.iter().enumerate() {
            if !self.decided[k] {
                for &w in &self.sources[k] {
                    b.rf[1].insert(w, r);
                }
            }
        }
        b.co[0] = self.init_first.union(&b.mo[0]);
        b.co[1] = self.upper_of(&b.co[0], &b.mo[1]);
        snap
    }

    /// The partial candidate at its lower bounds, as explorers see it.
    pub(super) fn lower_candidate(&self, snap: &Snapshot) -> Candidate<'e> {
        Candidate {
            statics: self.statics,
            rf: snap.b.rf[0].clone(),
            co: snap.b.co[0].clone(),
            sync_fence: snap.b.sync[0].clone(),
            mo: snap.b.mo[0].clone(),
            ub: snap.ub.clone(),
            mbvalid: snap.mbvalid.clone(),
            values: snap.values.clone(),
            ub_reasons: snap.ub_reasons.clone(),
        }
    }

    /// The value of every event as far as `rf` determines it: known values as they are (`base`:
    /// the structure's, and the mbarrier histories'), a symbolic read the value of the write it
    /// reads, an open write its expression. None where an input is not chosen yet, or where the
    /// values depend on each other in a cycle (out of thin air).
    fn open_values(&self, rf: &Relation, base: &[i64]) -> Vec<Option<i64>> {
        let s = self.s;
        let n = self.n;
        // 0: not computed, 1: in progress, 2: done.
        let mut state = vec![0u8; n];
        let mut value: Vec<Option<i64>> = vec![None; n];
        fn go(e: usize, s: &EventStructure, rf: &Relation, base: &[i64], state: &mut [u8], value: &mut [Option<i64>]) -> Option<i64> {
            match state[e] {
                2 => return value[e],
                1 => return None,
                _ => {}
            }
            state[e] = 1;
            let v = if let Some(expr) = &s.events[e].sym {
                expr.eval(&mut |r| go(r, s, rf, base, state, value))
            } else if s.symbolic_reads[e] {
                rf.predecessors(e).first().and_then(|&w| go(w, s, rf, base, state, value))
            } else {
                Some(base[e])
            };
            state[e] = 2;
            value[e] = v;
            v
        }
        for e in 0..n {
            go(e, s, rf, base, &mut state, &mut value);
        }
        value
    }

    /// Whether every read with a known value reads a write whose open value, once known, is
    /// that value; and, with `complete`, whether every open value is known (a cycle of open
    /// values depending on each other has none).
    pub(super) fn values_consistent(&self, rf: &Relation, values: &[Option<i64>], complete: bool) -> bool {
        if !self.open_writes {
            return true;
        }
        let s = self.s;
        for (w, r) in rf.pairs() {
            if s.events[w].sym.is_some() && !s.symbolic_reads[r] && s.events[r].mb_op.is_none() {
                match values[w] {
                    Some(v) if v != s.events[r].value => return false,
                    None if complete => return false,
                    _ => {}
                }
            }
        }
        !complete || (0..self.n).all(|e| (s.events[e].sym.is_none() && !s.symbolic_reads[e]) || values[e].is_some())
    }

    /// The largest coherence compatible with `lower`: every same-location pair of writes except
    /// the reverse of a pair of `lower`; mbarrier objects take `mo_upper`.
    fn upper_of(&self, lower: &Relation, mo_upper: &Relation) -> Relation {
        let mut up = self.co_full.difference(&lower.inverse());
        for (p, ws) in self.writes.iter().enumerate() {
            if self.is_object[p] {
                for &a in ws {
                    for &b in ws {
                        if !mo_upper.contains(a, b) {
                            up.remove(a, b);
                        }
                    }
                }
            }
        }
        up.union_with(lower);
        up
    }

    /// Evaluate `checks` on the bounds, each name at the bound `choice` gives, until one fails:
    /// its outcome (with its relation), or None when all hold. When rf, the fence-SC order and
    /// mo are at their lower bounds, the definitions that depend only on them (cause, ...) come
    /// from the snapshot's stage, evaluated once for all the checks of the snapshot.
    pub(super) fn failing(&mut self, snap: &Snapshot, choice: [Bound; 12], checks: &[usize]) -> Result<Option<CheckOutcome>, SearchError> {
        self.budget.evaluation()?;
        let prepared = self.model.get()?;
        let env = BoundEnv { statics: self.statics, bounds: &snap.b, choice, ub: &snap.ub, mbvalid: &snap.mbvalid };
        let staged = [0, 1, 2, 10, 11].iter().all(|&k| choice[k] == Bound::Lower);
        let fresh;
        let stage = if staged {
            self.lower_stage(snap, prepared, &env)?
        } else {
            fresh = prepared.stage(&env, &[]).map_err(|e| self.model.error(e))?;
            &fresh
        };
        prepared.first_failure_on(stage, &env, checks).map_err(|e| self.model.error(e))
    }

    /// Definition `def` of the model on the lower bounds of `snap` (from the snapshot's stage
    /// where it depends only on rf, the fence-SC order and mo); None for a set.
    pub(super) fn lower_definition(&mut self, snap: &Snapshot, def: crate::cat::DefId) -> Result<Option<Relation>, SearchError> {
        self.budget.check_deadline()?;
        let prepared = self.model.get()?;
        let choice = [Bound::Lower; 12];
        let env = BoundEnv { statics: self.statics, bounds: &snap.b, choice, ub: &snap.ub, mbvalid: &snap.mbvalid };
        let stage = self.lower_stage(snap, prepared, &env)?;
        prepared.definition_on(stage, &env, def).map_err(|e| self.model.error(e))
    }

    /// The snapshot's stage (made on first use): the definitions that depend only on rf, the
    /// fence-SC order and mo, at their lower bounds.
    fn lower_stage<'n>(
        &self,
        snap: &'n Snapshot,
        prepared: &crate::cat::Prepared,
        env: &BoundEnv,
    ) -> Result<&'n crate::cat::Stage, SearchError> {
        if snap.stage.get().is_none() {
            let _ = snap.stage.set(prepared.stage(env, &STAGED).map_err(|e| self.model.error(e))?);
        }
        Ok(snap.stage.get().expect("set above"))
    }

    /// Every check of the model, flags included, evaluated on the bounds `choice` gives (see
    /// [`Engine::failing`]).
    pub(super) fn evaluate_on_bounds(&mut self, snap: &Snapshot, choice: [Bound; 12]) -> Result<crate::cat::Evaluation, SearchError> {
        self.budget.evaluation()?;
        let prepared = self.model.get()?;
        let env = BoundEnv { statics: self.statics, bounds: &snap.b, choice, ub: &snap.ub, mbvalid: &snap.mbvalid };
        let stage = prepared.stage(&env, &[]).map_err(|e| self.model.error(e))?;
        prepared.evaluate_on(&stage, &env, false).map_err(|e| self.model.error(e))
    }

    /// The outcome of one check on the bounds (see [`Engine::failing`]); a check that holds
    /// comes back with an empty relation.
    pub(super) fn check_outcome(&mut self, snap: &Snapshot, choice: [Bound; 12], check: usize) -> Result<CheckOutcome, SearchError> {
        Ok(self.failing(snap, choice, &[check])?.unwrap_or_else(|| CheckOutcome {
            index: check,
            name: String::new(),
            kind: crate::cat::CheckKind::Empty,
            flag: None,
            holds: true,
            relation: Relation::empty(self.n),
        }))
    }
}
