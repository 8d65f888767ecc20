//! Sources a read cannot read because of a check `irreflexive ((rf | fr) ; S)` (PTX's
//! Causality), found on the bounds of a partial candidate instead of by trying each.
//!
//! The engine proposes, the cat file decides: the check and `S` are the model's (found by
//! `cat::analysis::read_compositions`), and the plan uses them only when `S` can only grow as
//! rf, co, the fence-SC order and mo grow. Every completion of a partial candidate has those
//! names above their lower bounds, so its `S` contains `S` evaluated on the lower bounds. Then
//! a read `r` cannot read a write `w` that `S` already orders after `r` (`rf ; S` would hold
//! `(w, w)`), nor a write coherence-before (on the lower bound of co, forced pairs included) a
//! write that `S` already orders before `r` (`fr ; S` would hold `(r, r)`): the check fails in
//! every completion where `r` reads `w`. A pipeline's consumer reading a tile written once per
//! lap has one source left after its waits are chosen, where each stale or future copy was a
//! model evaluation thrown away.

use super::engine::{Engine, Options};
use super::snapshot::Snapshot;
use super::SearchError;

impl<'e, 'a, 'm, 's> Engine<'e, 'a, 'm, 's> {
    /// Drop from `opts` the sources the plan's causal check denies on the bounds of `snap`;
    /// false when some undecided read has none left (no completion is consistent).
    pub(super) fn causal_filter(&mut self, snap: &Snapshot, opts: &mut Options) -> Result<bool, SearchError> {
        let Some(filter) = self.plan.causal.clone() else { return Ok(true) };
        if self.decided.iter().all(|&d| d) {
            return Ok(true);
        }
        let Some(after) = self.lower_definition(snap, filter.after)? else { return Ok(true) };
        let co = &snap.b.co[0];
        let mut denied = 0;
        for (k, &r) in self.reads.iter().enumerate() {
            if self.decided[k] {
                continue;
            }
            let before_r = filter.fr.then(|| crate::relation::EventSet::from_fn(self.n, |a| after.contains(a, r)));
            let before = opts.data[k].len();
            opts.data[k].retain(|&w| {
                let future = filter.rf && after.contains(r, w);
                let stale = before_r.as_ref().is_some_and(|b| !co.successors(w).is_disjoint(b));
                !(future || stale)
            });
            denied += before - opts.data[k].len();
            if opts.data[k].is_empty() {
                self.budget.stats.causal_denied += denied as u64;
                return Ok(false);
            }
        }
        self.budget.stats.causal_denied += denied as u64;
        Ok(true)
    }
}
