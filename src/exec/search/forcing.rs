//! The check after a choice: the pairs the model forces into co and the fence-SC order (and
//! the orders of mbarrier updates they teach), whether the explorer still wants the partial
//! candidate, and the check groups evaluated on its bounds.

use super::engine::{Engine, Options};
use super::plan::{Bound, Forcing, Target};
use super::snapshot::Snapshot;
use super::{Explorer, Partial, SearchError};

/// What forcing found.
enum Forced {
    /// The forced pairs were added; nothing contradicts them.
    Holds,
    /// A forced pair can never hold: the candidate is inconsistent.
    Fails,
    /// Object `o`'s history contradicts a forced order of its units (`a` before `b`).
    Learn(usize, usize, usize),
}

impl<'e, 'a, 'm, 's> Engine<'e, 'a, 'm, 's> {
    /// Add the pairs the forcing checks imply to the lower bounds of co and the fence-SC order
    /// (and drop their reverses from the upper bounds), until nothing changes. False when a
    /// forced pair cannot be in the name at all (the candidate is inconsistent).
    fn force(&mut self, snap: &mut Snapshot, ex: &mut dyn Explorer) -> Result<Forced, SearchError> {
        if self.plan.forcing.is_empty() {
            return Ok(Forced::Holds);
        }
        let lower = [Bound::Lower; 12];
        // Which targets grew in the last round: a check is evaluated again only if it depends
        // on one of them.
        let (mut co_grew, mut sync_grew) = (true, true);
        loop {
            let mut changed = false;
            let (co_before, sync_before) = (snap.b.co[0].len(), snap.b.sync[0].len());
            for Forcing { check, target, on_co, on_sync } in self.plan.forcing.clone() {
                if !(on_co && co_grew || on_sync && sync_grew || co_grew && sync_grew) {
                    continue;
                }
                let out = self.check_outcome(snap, lower, check)?;
                if out.holds {
                    continue;
                }
                // The order of an mbarrier object's writes is its history's. When the history
                // contradicts a forced pair, another history through the same states may not:
                // learn the order and rebuild (before judging the other pairs, which may only
                // follow from the wrong history).
                if target == Target::Co {
                    for (x, y) in out.relation.pairs() {
                        if x == y || !self.co_full.contains(x, y) || snap.b.mo[1].contains(x, y) {
                            continue;
                        }
                        let Some(o) = self.s.events[x].physical.and_then(|p| self.objects.iter().position(|g| g.physical == p)) else {
                            continue;
                        };
                        let unit = |e: usize| self.objects[o].units.iter().position(|u| u.write == e);
                        if let (Some(ux), Some(uy)) = (unit(x), unit(y)) {
                            if !self.state[o].after.contains(&(ux, uy)) {
                                return Ok(Forced::Learn(o, ux, uy));
                            }
                        }
                    }
                }
                let b = &mut snap.b;
                let mut impossible = false;
                for (x, y) in out.relation.pairs() {
                    let (low, full) = match target {
                        Target::Co => (&mut b.co[0], &self.co_full),
                        Target::SyncFence => (&mut b.sync[0], &self.sync_full),
                    };
                    let object = self.s.events[x].physical.is_some_and(|p| self.is_object[p]);
                    // A pair that cannot be in the name, or whose reverse already is.
                    let bad = !full.contains(x, y) || low.contains(y, x) || (object && !b.mo[1].contains(x, y));
                    if bad {
                        impossible = true;
                        break;
                    }
                    if !low.contains(x, y) {
                        low.insert(x, y);
                        changed = true;
                    }
                }
                if impossible {
                    if ex.wants_rejections() {
                        // The check fails on every completion: show it at its largest co.
                        let mut choice = lower;
                        choice[3] = Bound::Upper;
                        choice[10] = Bound::Upper;
                        let shown = self.check_outcome(snap, choice, check)?;
                        let cand = self.lower_candidate(snap);
                        ex.rejected(&cand, if shown.holds { &out } else { &shown });
                    }
                    return Ok(Forced::Fails);
                }
            }
            if !changed {
                break;
            }
            // Both orders are transitive (a fence-SC order is a linear order restricted to
            // morally strong pairs): close, and fail on a cycle.
            let b = &mut snap.b;
            b.co[0] = b.co[0].plus();
            let closed = b.sync[0].plus();
            if !b.co[0].is_irreflexive() || !closed.is_irreflexive() {
                return Ok(Forced::Fails);
            }
            b.sync[0] = closed.intersection(&self.sync_full);
            if b.sync[0].len() != sync_before {
                snap.stage = std::cell::OnceCell::new();
            }
            let b = &mut snap.b;
            co_grew = b.co[0].len() != co_before;
            sync_grew = b.sync[0].len() != sync_before;
        }
        let b = &mut snap.b;
        b.co[1] = b.co[1].difference(&b.co[0].inverse()).union(&b.co[0]);
        b.sync[1] = b.sync[1].difference(&b.sync[0].inverse()).union(&b.sync[0]);
        Ok(Forced::Holds)
    }

    /// The bounds of the partial candidate with the forced pairs added, learning orders of
    /// mbarrier updates on the way; None when the candidate is inconsistent.
    pub(super) fn forced_snapshot(&mut self, ex: &mut dyn Explorer) -> Result<Option<Snapshot>, SearchError> {
        loop {
            let mut snap = self.snapshot();
            match self.force(&mut snap, ex)? {
                Forced::Holds => return Ok(Some(snap)),
                Forced::Fails => return Ok(None),
                Forced::Learn(o, a, b) => {
                    self.state[o].after.push((a, b));
                    if !self.rebuild(o) {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// Whether the partial candidate may still be of interest and every check that can be
    /// decided on bounds still holds.
    pub(super) fn prefix_holds(&mut self, ex: &mut dyn Explorer) -> Result<Option<Options>, SearchError> {
        let Some(mut options) = self.propagate() else { return Ok(None) };
        let learned = self.learned_count();
        let Some(snap) = self.forced_snapshot(ex)? else { return Ok(None) };
        if !self.reachable(&snap, false, ex) {
            return Ok(None);
        }
        if !self.values_consistent(&snap.b.rf[0], &snap.open, false) || !self.groups_hold(&snap, ex)? {
            return Ok(None);
        }
        // Learned orders of mbarrier updates may have changed what is still possible.
        if self.learned_count() != learned {
            let Some(again) = self.propagate() else { return Ok(None) };
            options = again;
        }
        // An explanation wants the rejected candidates built, to show the check that rejects them.
        if !ex.wants_rejections() && !self.causal_filter(&snap, &mut options)? {
            return Ok(None);
        }
        Ok(Some(options))
    }

    /// How many orders of mbarrier updates the search learned so far.
    fn learned_count(&self) -> usize {
        self.state.iter().map(|s| s.after.len()).sum()
    }

    /// Ask the explorer whether the partial candidate can still be of interest.
    pub(super) fn reachable(&self, snap: &Snapshot, co_complete: bool, ex: &mut dyn Explorer) -> bool {
        if !ex.steers() {
            return true;
        }
        let cand = self.lower_candidate(snap);
        let open_reads = (0..self.reads.len()).filter(|&k| !self.decided[k]).map(|k| (self.reads[k], self.sources[k].as_slice())).collect();
        ex.may_reach(&Partial { cand: &cand, open_reads, co_complete })
    }

    /// Whether every check group holds on the bounds of `snap` (telling the explorer which
    /// check fails, when it wants rejections).
    pub(super) fn groups_hold(&mut self, snap: &Snapshot, ex: &mut dyn Explorer) -> Result<bool, SearchError> {
        for gi in 0..self.plan.groups.len() {
            let group = self.plan.groups[gi].clone();
            if ex.wants_rejections() {
                if let Some(out) = self.failing(snap, group.bounds, &group.checks)? {
                    let cand = self.lower_candidate(snap);
                    ex.rejected(&cand, &out);
                    return Ok(false);
                }
                continue;
            }
            if self.failing(snap, group.bounds, &group.checks)?.is_some() {
                return Ok(false);
            }
        }
        Ok(true)
    }
}
