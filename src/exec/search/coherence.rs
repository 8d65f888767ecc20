//! Coherence, once every read has its source: branch and bound over the orders of the
//! locations not fixed yet, and the enumeration of a location's coherence orders.

use super::engine::Engine;
use super::snapshot::Snapshot;
use super::{Explorer, SearchError};
use crate::exec::trace::ExploreError;
use crate::relation::Relation;

impl<'e, 'a, 'm, 's> Engine<'e, 'a, 'm, 's> {
    /// Every read has its source and every mbarrier its history: search coherence and the
    /// fence-SC order.
    pub(super) fn rf_complete(&mut self, ex: &mut dyn Explorer) -> Result<bool, SearchError> {
        let Some(mut snap) = self.forced_snapshot(ex)? else { return Ok(false) };
        if !self.reachable(&snap, false, ex) {
            return Ok(false);
        }
        if !self.values_consistent(&snap.b.rf[0], &snap.open, true) {
            return Ok(false);
        }
        // Locations whose coherence is not fixed yet: observable ones first (every order is
        // an execution of its own), then the others (only existence matters).
        let observable = &self.observable;
        let mut free: Vec<(usize, bool)> = Vec::new();
        for pass in [true, false] {
            for (p, ws) in self.writes.iter().enumerate() {
                if self.is_object[p] || observable[p] != pass || total(&snap.b.co[0], ws) {
                    continue;
                }
                free.push((p, pass));
            }
        }
        // With coherence and the fence-SC order both fixed already, the complete evaluation
        // that follows checks everything the bounds would.
        if (!free.is_empty() || self.fences_open(&snap.b.sync[0])) && !self.groups_hold(&snap, ex)? {
            return Ok(false);
        }
        let co = snap.b.co[0].clone();
        self.co_dfs(&free, co, &mut snap, ex)
    }

    /// Branch and bound over the coherence of the free locations, one write at a time: each
    /// write is inserted with a down-closed set of predecessors and an up-closed set of
    /// successors among the writes placed before it, so every partial order is produced once,
    /// and only those that contain the forced pairs. The levels (one per write placed) are kept
    /// on a stack of their own, not the call stack.
    fn co_dfs(&mut self, free: &[(usize, bool)], co: Relation, snap: &mut Snapshot, ex: &mut dyn Explorer) -> Result<bool, SearchError> {
        let mut stack = match self.co_level(free, 0, 0, Vec::new(), co, snap, ex)? {
            CoStep::Leaf(found) => return Ok(found),
            CoStep::Level(level) => vec![level],
        };
        // What the level above the top one found: set when a level (or a leaf) ends.
        let mut returned: Option<bool> = None;
        while let Some(top) = stack.len().checked_sub(1) {
            if let Some(hit) = returned.take() {
                let level = &mut stack[top];
                level.found |= hit;
                snap.b.co = level.saved.take().expect("a write was being placed at this level");
                if hit && !free[level.loc].1 {
                    // Only the existence of an order of this location matters.
                    stack.pop();
                    returned = Some(true);
                    continue;
                }
            }
            let Some((d, u)) = stack[top].next_placement() else {
                let level = stack.pop().expect("the top level");
                returned = Some(level.found);
                continue;
            };
            let level = &mut stack[top];
            let (loc, m) = (level.loc, level.m);
            let rest = &self.writes[free[loc].0][1..];
            let x = rest[m];
            let mut next = level.co.clone();
            for (i, &w) in rest.iter().enumerate().take(m) {
                if d & (1 << i) != 0 {
                    next.insert(w, x);
                }
                if u & (1 << i) != 0 {
                    next.insert(x, w);
                }
            }
            // Bounds: what is placed, plus the forced pairs; the largest extension.
            let saved = snap.b.co.clone();
            snap.b.co[0] = next.union(&saved[0]).plus();
            snap.b.co[1] = self.co_upper_partial(&snap.b.co[0], free, loc, m + 1, &saved[1]);
            let level = &mut stack[top];
            level.saved = Some(saved);
            let mut poset = level.poset.clone();
            if !self.groups_hold(snap, ex)? {
                snap.b.co = stack[top].saved.take().expect("just saved");
                continue;
            }
            for (i, row) in poset.iter_mut().enumerate() {
                if d & (1 << i) != 0 {
                    *row |= 1 << m;
                }
            }
            poset.push(u);
            match self.co_level(free, loc, m + 1, poset, next, snap, ex)? {
                CoStep::Leaf(found) => returned = Some(found),
                CoStep::Level(level) => stack.push(level),
            }
        }
        Ok(returned.unwrap_or(false))
    }

    /// The level that places write `m` of free location `loc` (the next location's first write
    /// once every write of this one is placed), or, past the last location, the fence-SC search
    /// of the coherence built.
    #[allow(clippy::too_many_arguments)]
    fn co_level(
        &mut self,
        free: &[(usize, bool)],
        mut loc: usize,
        mut m: usize,
        mut poset: Vec<u32>,
        co: Relation,
        snap: &mut Snapshot,
        ex: &mut dyn Explorer,
    ) -> Result<CoStep, SearchError> {
        loop {
            if loc == free.len() {
                return Ok(CoStep::Leaf(self.fsc_search(co, snap, ex)?));
            }
            let rest_len = self.writes[free[loc].0].len() - 1;
            if m < rest_len {
                break;
            }
            (loc, m, poset) = (loc + 1, 0, Vec::new());
        }
        if m >= 31 {
            return Err(SearchError::Explore(ExploreError::TooManyCandidates { limit: self.budget.limit }));
        }
        let rest = &self.writes[free[loc].0][1..];
        let x = rest[m];
        let forced = &snap.b.co[0];
        let must_below: u32 = (0..m).filter(|&i| forced.contains(rest[i], x)).fold(0, |acc, i| acc | (1 << i));
        let must_above: u32 = (0..m).filter(|&i| forced.contains(x, rest[i])).fold(0, |acc, i| acc | (1 << i));
        Ok(CoStep::Level(CoLevel { loc, m, poset, co, must_below, must_above, d: 0, u: 0, found: false, saved: None }))
    }
    /// The largest coherence extending the partial one: pairs among placed writes of the
    /// locations done so far are fixed; pairs involving a write not placed yet are open.
    fn co_upper_partial(&self, lower: &Relation, free: &[(usize, bool)], loc: usize, placed: usize, prev_upper: &Relation) -> Relation {
        let mut up = prev_upper.difference(&lower.inverse());
        for (l, &(p, _)) in free.iter().enumerate().take(loc + 1) {
            let ws = &self.writes[p];
            let done = if l < loc { ws.len() - 1 } else { placed };
            for (i, &a) in ws[1..].iter().enumerate().take(done) {
                for (j, &bw) in ws[1..].iter().enumerate().take(done) {
                    if i != j && !lower.contains(a, bw) {
                        up.remove(a, bw);
                    }
                }
            }
        }
        up.union_with(lower);
        up
    }
}

/// Whether `co` orders every pair of `ws`.
fn total(co: &Relation, ws: &[usize]) -> bool {
    ws.iter().enumerate().all(|(i, &a)| ws[i + 1..].iter().all(|&b| co.contains(a, b) || co.contains(b, a)))
}

/// Every coherence order of one location: the initial write first, then any strict partial order
/// of the other writes. Each labelled partial order is produced exactly once, by inserting the
/// writes one at a time with a down-closed set of predecessors and an up-closed set of successors.
pub fn coherence_orders(n: usize, writes: &[usize]) -> Vec<Relation> {
    let Some((&init, rest)) = writes.split_first() else {
        return vec![Relation::empty(n)];
    };
    let k = rest.len();
    // Posets over 0..k as adjacency bit masks: less[i] = set of j with i < j.
    let mut posets: Vec<Vec<u32>> = vec![vec![]];
    for m in 0..k {
        let mut next = Vec::new();
        for p in &posets {
            for d in 0u32..(1 << m) {
                if !is_down_closed(p, d, m) {
                    continue;
                }
                for u in 0u32..(1 << m) {
                    if u & d != 0 || !is_up_closed(p, u, m) {
                        continue;
                    }
                    let ok = (0..m).filter(|i| d & (1 << i) != 0).all(|i| p[i] & u == u);
                    if !ok {
                        continue;
                    }
                    let mut q = p.clone();
                    for (i, row) in q.iter_mut().enumerate() {
                        if d & (1 << i) != 0 {
                            *row |= 1 << m;
                        }
                    }
                    q.push(u);
                    next.push(q);
                }
            }
        }
        posets = next;
    }
    posets
        .into_iter()
        .map(|p| {
            let mut r = Relation::empty(n);
            for (i, &wi) in rest.iter().enumerate() {
                r.insert(init, wi);
                for (j, &wj) in rest.iter().enumerate() {
                    if p[i] & (1 << j) != 0 {
                        r.insert(wi, wj);
                    }
                }
            }
            r
        })
        .collect()
}

/// `d` is down-closed: if j ∈ d and i < j then i ∈ d.
fn is_down_closed(p: &[u32], d: u32, m: usize) -> bool {
    (0..m).all(|i| d & (1 << i) != 0 || p[i] & d == 0)
}

/// `u` is up-closed: if i ∈ u and i < j then j ∈ u.
fn is_up_closed(p: &[u32], u: u32, m: usize) -> bool {
    (0..m).filter(|i| u & (1 << i) != 0).all(|i| p[i] & !u == 0)
}

/// What placing the next write leads to: a level of the coherence search, or the result of the
/// search below the last one.
enum CoStep {
    Leaf(bool),
    Level(CoLevel),
}

/// One level of the coherence search: write `m` of free location `loc` is placed after the
/// writes before it (`poset`, `co`); `(d, u)` is the next set of predecessors and successors to
/// try; `saved` holds the bounds while a placement is explored below.
struct CoLevel {
    loc: usize,
    m: usize,
    poset: Vec<u32>,
    co: Relation,
    must_below: u32,
    must_above: u32,
    d: u32,
    u: u32,
    found: bool,
    saved: Option<[Relation; 2]>,
}

impl CoLevel {
    /// The next placement to try, in the order of `d` then `u`: `d` down-closed and containing
    /// the forced predecessors, `u` up-closed, disjoint from `d`, containing the forced
    /// successors, and every predecessor already below every successor (transitivity).
    fn next_placement(&mut self) -> Option<(u32, u32)> {
        let (m, span) = (self.m, 1u32 << self.m);
        while self.d < span {
            let d = self.d;
            if d & self.must_below != self.must_below || !is_down_closed(&self.poset, d, m) {
                (self.d, self.u) = (d + 1, 0);
                continue;
            }
            while self.u < span {
                let u = self.u;
                self.u += 1;
                if u & d != 0 || u & self.must_above != self.must_above || !is_up_closed(&self.poset, u, m) {
                    continue;
                }
                if !(0..m).filter(|i| d & (1 << i) != 0).all(|i| self.poset[i] & u == u) {
                    continue;
                }
                return Some((d, u));
            }
            (self.d, self.u) = (d + 1, 0);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_of_partial_orders() {
        // Labelled posets on k elements: 1, 1, 3, 19, 219.
        for (k, expected) in [(0, 1), (1, 1), (2, 3), (3, 19), (4, 219)] {
            let writes: Vec<usize> = (0..=k).collect();
            let orders = coherence_orders(k + 1, &writes);
            assert_eq!(orders.len(), expected, "k = {k}");
            for r in &orders {
                assert_eq!(r.plus(), *r, "coherence must be transitive");
                assert!(r.is_irreflexive());
            }
        }
    }
}
