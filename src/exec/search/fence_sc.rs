//! The fence-SC order, once coherence is complete (only its existence matters), and the
//! evaluation of every check on a complete candidate.

use super::engine::Engine;
use super::snapshot::Snapshot;
use super::{Candidate, Explorer, SearchError, Visit};
use crate::cat::Evaluation;
use crate::relation::Relation;

impl<'e, 'a, 'm, 's> Engine<'e, 'a, 'm, 's> {
    /// Coherence is complete: find a fence-SC order (its existence is all that matters).
    pub(super) fn fsc_search(&mut self, co: Relation, snap: &mut Snapshot, ex: &mut dyn Explorer) -> Result<bool, SearchError> {
        let co = co.union(&snap.b.co[0]).plus();
        let mut forced = snap.b.sync[0].plus().intersection(&self.sync_full);
        if !self.fences_open(&forced) {
            return self.complete(co, forced, snap, ex);
        }
        // An explanation wants every order rejected for its own reason: enumerate them.
        if ex.wants_rejections() {
            let closure = forced.plus();
            return self.fsc_dfs(&co, &closure, &mut Vec::new(), snap, ex);
        }
        // First the order the execution itself suggests: fences in the order of program order
        // and communication (rf, co, fr) between them, when that is an order. Most executions
        // that have a fence-SC order at all have this one.
        let fr = snap.b.rf[0].inverse().seq(&co);
        let mut hint = self.s.relations["po"].union(&snap.b.rf[0]).union(&co).union(&fr);
        hint.union_with(&forced);
        let hint = hint.plus();
        if hint.is_irreflexive() {
            let order = self.linear_order(&hint);
            if self.complete(co.clone(), order, snap, ex)? {
                return Ok(true);
            }
        }
        // Then pairwise forcing: the checks that only fail more as the order grows rule out an
        // orientation of a pair on its own, which forces the other one.
        let saved = (snap.b.sync.clone(), snap.b.co.clone());
        snap.b.co = [co.clone(), co.clone()];
        let verdict = self.force_fence_pairs(&mut forced, &hint, snap);
        snap.b.sync = saved.0;
        snap.b.co = saved.1;
        snap.stage = std::cell::OnceCell::new();
        if !verdict? {
            return Ok(false);
        }
        if !self.fences_open(&forced) {
            return self.complete(co, forced, snap, ex);
        }
        let closure = forced.plus();
        let mut placed = Vec::new();
        self.fsc_dfs(&co, &closure, &mut placed, snap, ex)
    }

    /// Whether some morally strong pair of `fence.sc` is not ordered by `order` yet.
    pub(super) fn fences_open(&self, order: &Relation) -> bool {
        self.sc_fences
            .iter()
            .any(|&a| self.sc_fences.iter().any(|&c| self.sync_full.contains(a, c) && !order.contains(a, c) && !order.contains(c, a)))
    }

    /// A linear extension of the acyclic `hint` on the fences, restricted to morally strong pairs.
    fn linear_order(&self, hint: &Relation) -> Relation {
        let mut fences = self.sc_fences.clone();
        // Sort by the number of fences before each: a topological order of a transitive relation.
        fences.sort_by_key(|&f| (self.sc_fences.iter().filter(|&&g| hint.contains(g, f)).count(), f));
        let mut order = Relation::empty(self.n);
        for i in 0..fences.len() {
            for j in i + 1..fences.len() {
                if self.sync_full.contains(fences[i], fences[j]) {
                    order.insert(fences[i], fences[j]);
                }
            }
        }
        order
    }

    /// Orient, in `forced`, every pair of fences one of whose orientations alone already fails a
    /// check that only fails more as the fence-SC order grows; false when both orientations of
    /// some pair fail (no order works).
    fn force_fence_pairs(&mut self, forced: &mut Relation, hint: &Relation, snap: &mut Snapshot) -> Result<bool, SearchError> {
        let mut quiet = Visit(|_: &Candidate, _: &Evaluation| true);
        // Pairs the communication order relates both ways first: a contradiction, when there is
        // one, is usually there.
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        for i in 0..self.sc_fences.len() {
            for j in i + 1..self.sc_fences.len() {
                pairs.push((self.sc_fences[i], self.sc_fences[j]));
            }
        }
        pairs.sort_by_key(|&(a, b)| !(hint.contains(a, b) && hint.contains(b, a)));
        loop {
            let mut changed = false;
            for &(a, b) in &pairs {
                {
                    if !self.sync_full.contains(a, b) || forced.contains(a, b) || forced.contains(b, a) {
                        continue;
                    }
                    let mut holds = [true, true];
                    for (k, (x, y)) in [(a, b), (b, a)].into_iter().enumerate() {
                        let mut with = forced.clone();
                        with.insert(x, y);
                        let with = with.plus();
                        if !with.is_irreflexive() {
                            holds[k] = false;
                            continue;
                        }
                        let lower = with.intersection(&self.sync_full);
                        snap.b.sync = [lower.clone(), self.sync_full.difference(&lower.inverse())];
                        snap.stage = std::cell::OnceCell::new();
                        holds[k] = self.groups_hold(snap, &mut quiet)?;
                    }
                    match holds {
                        [false, false] => return Ok(false),
                        [false, true] => forced.insert(b, a),
                        [true, false] => forced.insert(a, b),
                        [true, true] => continue,
                    }
                    changed = true;
                }
            }
            if !changed {
                return Ok(true);
            }
            let closed = forced.plus();
            if !closed.is_irreflexive() {
                return Ok(false);
            }
            *forced = closed.intersection(&self.sync_full);
        }
    }

    /// Linear extensions of the forced order on the fences, built left to right, checked on the
    /// bounds after every fence placed; the first consistent one ends the search. The levels
    /// (one per fence placed) are kept on a stack of their own, not the call stack: each holds
    /// the position of the next fence it tries and the orders it saved while one is explored.
    fn fsc_dfs(
        &mut self,
        co: &Relation,
        closure: &Relation,
        placed: &mut Vec<usize>,
        snap: &mut Snapshot,
        ex: &mut dyn Explorer,
    ) -> Result<bool, SearchError> {
        let fences = self.sc_fences.clone();
        if placed.len() == fences.len() {
            return self.fsc_leaf(co, placed, snap, ex);
        }
        let mut stack: Vec<(usize, Option<[[Relation; 2]; 2]>)> = vec![(0, None)];
        // What the level above the top one found: set when a level (or a leaf) ends.
        let mut returned: Option<bool> = None;
        while let Some(top) = stack.len().checked_sub(1) {
            if let Some(hit) = returned.take() {
                let [sync, co_saved] = stack[top].1.take().expect("a fence was being explored at this level");
                snap.b.sync = sync;
                snap.b.co = co_saved;
                snap.stage = std::cell::OnceCell::new();
                placed.pop();
                if hit {
                    stack.pop();
                    returned = Some(true);
                    continue;
                }
            }
            let mut chosen = None;
            while stack[top].0 < fences.len() {
                let f = fences[stack[top].0];
                stack[top].0 += 1;
                if !placed.contains(&f) && !fences.iter().any(|&g| !placed.contains(&g) && g != f && closure.contains(g, f)) {
                    chosen = Some(f);
                    break;
                }
            }
            let Some(f) = chosen else {
                stack.pop();
                returned = Some(false);
                continue;
            };
            placed.push(f);
            let mut lower = Relation::empty(self.n);
            for (i, &a) in placed.iter().enumerate() {
                for &c in &placed[i + 1..] {
                    if self.sync_full.contains(a, c) {
                        lower.insert(a, c);
                    }
                }
                for &c in fences.iter().filter(|c| !placed.contains(c)) {
                    if self.sync_full.contains(a, c) {
                        lower.insert(a, c);
                    }
                }
            }
            stack[top].1 = Some([snap.b.sync.clone(), snap.b.co.clone()]);
            snap.b.sync = [lower.clone(), self.sync_full.difference(&lower.inverse())];
            snap.b.co = [co.clone(), co.clone()];
            snap.stage = std::cell::OnceCell::new();
            if !self.groups_hold(snap, ex)? {
                returned = Some(false);
            } else if placed.len() == fences.len() {
                returned = Some(self.fsc_leaf(co, placed, snap, ex)?);
            } else {
                stack.push((0, None));
            }
        }
        Ok(returned.unwrap_or(false))
    }

    /// Every fence placed: the order is the placement, restricted to the pairs it must order.
    fn fsc_leaf(&mut self, co: &Relation, placed: &[usize], snap: &mut Snapshot, ex: &mut dyn Explorer) -> Result<bool, SearchError> {
        let mut order = Relation::empty(self.n);
        for i in 0..placed.len() {
            for j in i + 1..placed.len() {
                if self.sync_full.contains(placed[i], placed[j]) {
                    order.insert(placed[i], placed[j]);
                }
            }
        }
        self.complete(co.clone(), order, snap, ex)
    }

    /// A complete candidate: evaluate every check.
    fn complete(&mut self, co: Relation, sync_fence: Relation, snap: &Snapshot, ex: &mut dyn Explorer) -> Result<bool, SearchError> {
        self.budget.evaluation()?;
        self.budget.stats.candidates += 1;
        let cand = Candidate {
            statics: self.statics,
            rf: snap.b.rf[0].clone(),
            co,
            sync_fence,
            mo: snap.b.mo[0].clone(),
            ub: snap.ub.clone(),
            mbvalid: snap.mbvalid.clone(),
            values: snap.values.clone(),
            ub_reasons: snap.ub_reasons.clone(),
        };
        let prepared = self.model.get()?;
        // The snapshot's stage holds for the candidate when its fence-SC order is the snapshot's.
        // Explorers read the relations of failed and fired checks only.
        let stage = snap.stage.get().filter(|_| cand.sync_fence == snap.b.sync[0]);
        let eval = prepared.evaluate_failures(stage, &cand).map_err(|e| self.model.error(e))?;
        if !eval.consistent() {
            if ex.wants_rejections() {
                if let Some(failed) = eval.failed().first() {
                    ex.rejected(&cand, failed);
                }
            }
            return Ok(false);
        }
        self.budget.stats.consistent += 1;
        if !ex.consistent(&cand, &eval) {
            return Err(SearchError::Stopped);
        }
        Ok(true)
    }
}
