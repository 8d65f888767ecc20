//! Candidate executions of one event structure, checked against a cat model as they are built.
//!
//! The search fixes, in order: reads-from (a read may only read a write of the same physical
//! location that wrote the value the read returned), the fence-SC order among morally strong
//! `fence.sc`, and coherence, a strict partial order per location with the initial write first
//! (PTX ISA §8.9.6: co is not total). After rf, and again after the fence-SC order, every model
//! check whose inputs are already fixed is evaluated, so a failing prefix prunes its whole
//! subtree; no candidate is materialised before the checks that can reject it ran.

use super::structure::{EventKind, EventStructure};
use super::trace::ExploreError;
use crate::cat::{CatEnv, Evaluation, Prepared, Value};
use crate::relation::Relation;
use std::collections::HashSet;

/// The names a candidate execution provides on top of its event structure.
pub const DYNAMIC_NAMES: &[&str] = &["rf", "co", "fr", "rfe", "rfi", "coe", "coi", "fre", "fri", "com", "sync_fence"];

/// Names available once rf is fixed.
const RF_NAMES: &[&str] = &["rf", "rfe", "rfi"];
/// Names available once rf and the fence-SC order are fixed.
const RF_FSC_NAMES: &[&str] = &["rf", "rfe", "rfi", "sync_fence"];

/// Cat environment of an event structure plus its barrier matching: the static names.
pub struct StaticEnv<'a> {
    pub structure: &'a EventStructure<'a>,
    pub syncbar: &'a Relation,
    pub syncclu: &'a Relation,
}

impl<'a> StaticEnv<'a> {
    /// The static names of a structure under one resolution of its barriers.
    pub fn new(structure: &'a EventStructure<'a>, barriers: &'a super::structure::BarrierResolution) -> Self {
        StaticEnv { structure, syncbar: &barriers.syncbar, syncclu: &barriers.syncclu }
    }

    fn lookup_static(&self, name: &str) -> Option<Value> {
        if name == "syncbar" {
            return Some(Value::Rel(self.syncbar.clone()));
        }
        if name == "syncclu" {
            return Some(Value::Rel(self.syncclu.clone()));
        }
        if name == "mo" {
            return Some(Value::Rel(self.structure.mb_co.clone()));
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

/// One candidate execution: an event structure with rf, co and the fence-SC order chosen.
pub struct Candidate<'a> {
    pub statics: &'a StaticEnv<'a>,
    pub rf: Relation,
    pub co: Relation,
    pub sync_fence: Relation,
}

impl Candidate<'_> {
    fn structure(&self) -> &EventStructure<'_> {
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
            .map(|(_, e)| e.value)
            .collect();
        vals.sort_unstable();
        vals.dedup();
        vals
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
            _ => return self.statics.lookup_static(name),
        };
        Some(Value::Rel(r))
    }
}

/// Statistics of a search, for reports and benchmarks.
#[derive(Clone, Copy, Debug, Default)]
pub struct SearchStats {
    pub candidates: u64,
    pub consistent: u64,
}

/// Enumerate the candidates of one structure and report each consistent one to `visit`.
pub fn search(
    statics: &StaticEnv,
    prepared: &Prepared,
    prune: &CoPruning,
    budget: &mut u64,
    stats: &mut SearchStats,
    visit: &mut dyn FnMut(&Candidate, &Evaluation) -> bool,
) -> Result<(), SearchError> {
    let s = statics.structure;
    let n = s.n();
    let writes = s.writes_by_location();
    let Some((reads, sources)) = rf_sources(s, &writes) else { return Ok(()) };
    let fsc_orders = fence_sc_orders(s);
    let mb = mbarrier_locations(s);
    // The coherence of mbarrier objects is fixed per structure (`EventStructure::mb_co`, from
    // `mbarrier::witness`); the search enumerates the other locations.
    let observable = observable_locations(s);
    let mut free_writes: Vec<Vec<usize>> = Vec::new();
    for pass in [true, false] {
        for (p, ws) in writes.iter().enumerate() {
            if !mb[p] && observable[p] == pass {
                free_writes.push(ws.clone());
            }
        }
    }
    let unobservable_from = observable.iter().enumerate().filter(|(p, o)| **o && !mb[*p]).count();
    let co_search = CoSearch::new(&free_writes, prune, unobservable_from);

    // Reads-from is chosen read by read, depth first; after each choice with alternatives, the
    // checks that can only fail as rf grows (Causality, Coherence) are evaluated on the partial
    // rf, with coherence at its bounds, so a doomed prefix is cut with its whole subtree.
    // mbarrier reads go first: their choices decide the synchronization of the rest.
    let mut order: Vec<usize> = (0..reads.len()).collect();
    // Within each group, by source line: litmus rows run roughly in time order across threads,
    // so causal chains close (and doomed prefixes die) early.
    let line = |e: usize| s.events[e].instr.zip(s.events[e].thread).map(|(i, t)| s.program.threads[t].code[i].line).unwrap_or(0);
    order.sort_by_key(|&k| (!s.forced_rf.contains_key(&reads[k]), line(reads[k]), k));
    // Every coherence order puts the initial write first.
    let mut lower = s.mb_co.clone();
    for ws in &free_writes {
        if let Some((&init, rest)) = ws.split_first() {
            for &w in rest {
                lower.insert(init, w);
            }
        }
    }
    let upper = co_search.upper_bound(&s.mb_co, 0, 0);
    let ctx = RfDfs { statics, prepared, reads: &reads, sources: &sources, order: &order, lower, upper, prune };
    let mut cand = Candidate { statics, rf: Relation::empty(n), co: Relation::empty(n), sync_fence: Relation::empty(n) };
    match ctx.dfs(0, &mut cand, &fsc_orders, &co_search, budget, stats, visit) {
        Err(SearchError::Stopped) => Ok(()),
        r => r,
    }
}

/// The depth-first choice of reads-from in [`search`].
struct RfDfs<'a> {
    statics: &'a StaticEnv<'a>,
    prepared: &'a Prepared<'a>,
    reads: &'a [usize],
    sources: &'a [Vec<usize>],
    order: &'a [usize],
    /// Coherence known before the search (mbarrier objects), and its largest extension.
    lower: Relation,
    upper: Relation,
    prune: &'a CoPruning,
}

impl RfDfs<'_> {
    #[allow(clippy::too_many_arguments)]
    fn dfs(
        &self,
        depth: usize,
        cand: &mut Candidate,
        fsc_orders: &[Relation],
        co_search: &CoSearch,
        budget: &mut u64,
        stats: &mut SearchStats,
        visit: &mut dyn FnMut(&Candidate, &Evaluation) -> bool,
    ) -> Result<(), SearchError> {
        if depth == self.order.len() {
            charge(budget)?;
            cand.co = Relation::empty(self.statics.structure.n());
            cand.sync_fence = Relation::empty(self.statics.structure.n());
            if !self.prepared.check_partial(cand, RF_NAMES).map_err(SearchError::Model)? {
                return Ok(());
            }
            for fsc in fsc_orders {
                cand.sync_fence = fsc.clone();
                if !self.prepared.check_partial(cand, RF_FSC_NAMES).map_err(SearchError::Model)? {
                    continue;
                }
                co_search.run(cand, self.lower.clone(), self.prepared, budget, stats, visit)?;
            }
            return Ok(());
        }
        let k = self.order[depth];
        let read = self.reads[k];
        // Check after every choice that had alternatives, and once the mbarrier reads (which go
        // first) are all placed: an inconsistent mbarrier witness dies before the data reads.
        let last_forced = self.statics.structure.forced_rf.contains_key(&read)
            && self.order.get(depth + 1).is_none_or(|&j| !self.statics.structure.forced_rf.contains_key(&self.reads[j]));
        let branching = self.sources[k].len() > 1 || last_forced;
        for &w in &self.sources[k] {
            cand.rf.insert(w, read);
            let keep = !branching || self.prefix_holds(cand, budget)?;
            if keep {
                self.dfs(depth + 1, cand, fsc_orders, co_search, budget, stats, visit)?;
            }
            cand.rf.remove(w, read);
        }
        Ok(())
    }

    /// Whether the checks that fail for good on a partial rf still hold.
    fn prefix_holds(&self, cand: &mut Candidate, budget: &mut u64) -> Result<bool, SearchError> {
        if self.prune.rf_lower.is_empty() && self.prune.rf_upper.is_empty() {
            return Ok(true);
        }
        charge(budget)?;
        cand.sync_fence = Relation::empty(self.statics.structure.n());
        if !self.prune.rf_lower.is_empty() {
            cand.co = self.lower.clone();
            if !self.prepared.check_subset(cand, &self.prune.rf_lower).map_err(SearchError::Model)? {
                return Ok(false);
            }
        }
        if !self.prune.rf_upper.is_empty() {
            cand.co = self.upper.clone();
            if !self.prepared.check_subset(cand, &self.prune.rf_upper).map_err(SearchError::Model)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The visitor asked to stop (internal; `search` returns Ok).
    #[error("search stopped")]
    Stopped,
    #[error("{0}")]
    Model(crate::cat::CatError),
    #[error("{0}")]
    Explore(ExploreError),
}

/// Visit every candidate of one structure, consistent or not, with the full evaluation of every
/// check (no pruning). Explanations need the rejected candidates and why they were rejected.
/// `visit` returns false to stop.
pub fn search_all(
    statics: &StaticEnv,
    prepared: &Prepared,
    budget: &mut u64,
    visit: &mut dyn FnMut(&Candidate, &Evaluation) -> bool,
) -> Result<(), SearchError> {
    let s = statics.structure;
    let n = s.n();
    let writes = s.writes_by_location();
    let Some((reads, sources)) = rf_sources(s, &writes) else { return Ok(()) };
    let fsc_orders = fence_sc_orders(s);
    let mb = mbarrier_locations(s);
    // mbarrier objects take their fixed order, as one more "location".
    let mut co_choices: Vec<Vec<Relation>> =
        writes.iter().enumerate().map(|(p, ws)| if mb[p] { vec![Relation::empty(n)] } else { coherence_orders(n, ws) }).collect();
    co_choices.push(vec![s.mb_co.clone()]);
    let co_sizes: Vec<usize> = co_choices.iter().map(|c| c.len()).collect();
    let mut choice = vec![0usize; reads.len()];
    loop {
        let mut rf = Relation::empty(n);
        for (k, &r) in reads.iter().enumerate() {
            rf.insert(sources[k][choice[k]], r);
        }
        for fsc in &fsc_orders {
            let mut idx = vec![0usize; co_choices.len()];
            loop {
                let mut co = Relation::empty(n);
                for (l, ch) in co_choices.iter().enumerate() {
                    co.union_with(&ch[idx[l]]);
                }
                charge(budget)?;
                let cand = Candidate { statics, rf: rf.clone(), co, sync_fence: fsc.clone() };
                let eval = prepared.evaluate(&cand, false).map_err(SearchError::Model)?;
                if !visit(&cand, &eval) {
                    return Ok(());
                }
                if !advance(&mut idx, &co_sizes) {
                    break;
                }
            }
        }
        if !advance(&mut choice, &sources.iter().map(|c| c.len()).collect::<Vec<_>>()) {
            return Ok(());
        }
    }
}

/// Spend one unit of the search budget (one model evaluation or one trace combination).
pub fn charge(budget: &mut u64) -> Result<(), SearchError> {
    if *budget == 0 {
        // The caller knows the configured limit and fills it in.
        return Err(SearchError::Explore(ExploreError::TooManyCandidates { limit: 0 }));
    }
    *budget -= 1;
    Ok(())
}

/// The reads of a structure and, for each, the writes it may read from: same physical location,
/// same value, not its own RMW write. None when some read has no possible source.
fn rf_sources(s: &EventStructure, writes: &[Vec<usize>]) -> Option<(Vec<usize>, Vec<Vec<usize>>)> {
    let reads: Vec<usize> = (0..s.n()).filter(|&i| s.events[i].is_read()).collect();
    let rmw = &s.relations["rmw"];
    let mut sources = Vec::with_capacity(reads.len());
    for &r in &reads {
        let e = &s.events[r];
        if let Some(ws) = s.forced_rf.get(&r) {
            sources.push(ws.clone());
            continue;
        }
        let symbolic = s.symbolic_reads[r];
        let cands: Vec<usize> = writes[e.physical.expect("reads have a location")]
            .iter()
            .copied()
            .filter(|&w| (symbolic || s.events[w].value == e.value) && !rmw.contains(r, w))
            .collect();
        if cands.is_empty() {
            return None;
        }
        sources.push(cands);
    }
    Some((reads, sources))
}

/// Odometer increment; false when every combination was visited.
pub(crate) fn advance(idx: &mut [usize], sizes: &[usize]) -> bool {
    for k in (0..idx.len()).rev() {
        idx[k] += 1;
        if idx[k] < sizes[k] {
            return true;
        }
        idx[k] = 0;
    }
    false
}

/// How each model check can be used to prune partial coherence orders.
#[derive(Clone, Debug, Default)]
pub struct CoPruning {
    /// Checks that can only become false as co grows (e.g. Causality): they reject a partial
    /// order, and with it every extension.
    pub antitone: Vec<usize>,
    /// Checks that can only become true as co grows (e.g. Coherence): they reject a partial
    /// order when even its largest possible extension fails them.
    pub monotone: Vec<usize>,
    /// Checks that can only become false as rf (and the fence-SC order) grows and as co grows:
    /// evaluated on a partial rf with the smallest co.
    pub rf_lower: Vec<usize>,
    /// Checks that can only become false as rf grows but only true as co grows: evaluated on a
    /// partial rf with the largest co.
    pub rf_upper: Vec<usize>,
}

/// Engine names that grow with co.
const CO_NAMES: &[&str] = &["co", "fr", "coe", "coi", "fre", "fri", "com"];

impl CoPruning {
    /// Classify the model's checks by their monotonicity in co (and the names derived from it).
    pub fn for_model(model: &crate::cat::CatModel) -> Self {
        use crate::cat::Monotonicity::*;
        let mut out = CoPruning::default();
        for (i, c) in model.checks().iter().enumerate() {
            if c.flag.is_some() {
                continue;
            }
            let ms: Vec<_> = CO_NAMES.iter().map(|n| c.monotonicity(n)).filter(|m| *m != Independent).collect();
            if ms.is_empty() {
                continue;
            }
            if ms.iter().all(|m| *m == Antitone) {
                out.antitone.push(i);
            } else if ms.iter().all(|m| *m == Monotone) {
                out.monotone.push(i);
            }
            // Reads-from pruning.
            let all = |names: &[&str], ok: &dyn Fn(crate::cat::Monotonicity) -> bool| names.iter().all(|n| ok(c.monotonicity(n)));
            let grows_rf = ["rf", "rfe", "rfi", "sync_fence"];
            let both = ["fr", "fre", "fri", "com"];
            let co_only = ["co", "coe", "coi"];
            if !grows_rf.iter().chain(&both).any(|n| c.monotonicity(n) != Independent) {
                continue;
            }
            let anti = |m: crate::cat::Monotonicity| matches!(m, Antitone | Independent);
            let mono = |m: crate::cat::Monotonicity| matches!(m, Monotone | Independent);
            if all(&grows_rf, &anti) && all(&both, &anti) && all(&co_only, &anti) {
                out.rf_lower.push(i);
            } else if all(&grows_rf, &anti) && all(&both, &|m| m == Independent) && all(&co_only, &mono) {
                out.rf_upper.push(i);
            }
        }
        out
    }
}

/// Branch-and-bound over coherence orders: locations one after another, and within a location
/// the writes one at a time, each inserted with a down-closed set of predecessors and an
/// up-closed set of successors (so every labelled partial order is produced exactly once, and the
/// relation built so far is always the final order restricted to the writes placed so far).
struct CoSearch<'w> {
    writes: &'w [Vec<usize>],
    prune: &'w CoPruning,
    /// Locations from this index on are unobservable: nothing reads them, no RMW updates them,
    /// and no final state shows them. Their coherence only has to exist, so the first
    /// consistent choice is kept and the other (equivalent) ones are not enumerated.
    unobservable_from: usize,
}

impl<'w> CoSearch<'w> {
    fn new(writes: &'w [Vec<usize>], prune: &'w CoPruning, unobservable_from: usize) -> Self {
        CoSearch { writes, prune, unobservable_from }
    }

    fn run(
        &self,
        cand: &mut Candidate,
        co: Relation,
        prepared: &Prepared,
        budget: &mut u64,
        stats: &mut SearchStats,
        visit: &mut dyn FnMut(&Candidate, &Evaluation) -> bool,
    ) -> Result<(), SearchError> {
        if !self.bounds_hold(cand, prepared, &co, 0, 0, budget)? {
            return Ok(());
        }
        self.dfs(0, &[], co, cand, prepared, budget, stats, visit).map(|_| ())
    }

    /// The largest coherence any extension can reach: fixed pairs as they are, plus every pair
    /// (both directions) that involves a write not placed yet.
    pub(crate) fn upper_bound(&self, co: &Relation, loc: usize, placed: usize) -> Relation {
        let mut up = co.clone();
        for (l, ws) in self.writes.iter().enumerate().skip(loc) {
            let Some((&init, rest)) = ws.split_first() else { continue };
            let first_open = if l == loc { placed } else { 0 };
            for (i, &a) in rest.iter().enumerate() {
                up.insert(init, a);
                for (j, &b) in rest.iter().enumerate() {
                    if a != b && (i >= first_open || j >= first_open) {
                        up.insert(a, b);
                    }
                }
            }
        }
        up
    }

    fn bounds_hold(
        &self,
        cand: &mut Candidate,
        prepared: &Prepared,
        co: &Relation,
        loc: usize,
        placed: usize,
        budget: &mut u64,
    ) -> Result<bool, SearchError> {
        charge(budget)?;
        if !self.prune.antitone.is_empty() {
            cand.co = co.clone();
            if !prepared.check_subset(cand, &self.prune.antitone).map_err(SearchError::Model)? {
                return Ok(false);
            }
        }
        if !self.prune.monotone.is_empty() {
            cand.co = self.upper_bound(co, loc, placed);
            if !prepared.check_subset(cand, &self.prune.monotone).map_err(SearchError::Model)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    #[allow(clippy::too_many_arguments)]
    fn dfs(
        &self,
        loc: usize,
        poset: &[u32],
        co: Relation,
        cand: &mut Candidate,
        prepared: &Prepared,
        budget: &mut u64,
        stats: &mut SearchStats,
        visit: &mut dyn FnMut(&Candidate, &Evaluation) -> bool,
    ) -> Result<bool, SearchError> {
        charge(budget)?;
        if loc == self.writes.len() {
            stats.candidates += 1;
            cand.co = co;
            let eval = prepared.evaluate(cand, true).map_err(SearchError::Model)?;
            if eval.consistent() {
                stats.consistent += 1;
                if !visit(cand, &eval) {
                    return Err(SearchError::Stopped);
                }
                return Ok(true);
            }
            return Ok(false);
        }
        let ws = &self.writes[loc];
        let Some((&init, rest)) = ws.split_first() else {
            return self.dfs(loc + 1, &[], co, cand, prepared, budget, stats, visit);
        };
        let m = poset.len();
        if m == rest.len() {
            return self.dfs(loc + 1, &[], co, cand, prepared, budget, stats, visit);
        }
        if m >= 31 {
            return Err(SearchError::Explore(ExploreError::TooManyCandidates { limit: 0 }));
        }
        let x = rest[m];
        let mut any = false;
        for d in 0u32..(1 << m) {
            if !is_down_closed(poset, d, m) {
                continue;
            }
            for u in 0u32..(1 << m) {
                if u & d != 0 || !is_up_closed(poset, u, m) {
                    continue;
                }
                // Every predecessor must already be below every successor (transitivity).
                if !(0..m).filter(|i| d & (1 << i) != 0).all(|i| poset[i] & u == u) {
                    continue;
                }
                let mut next = co.clone();
                next.insert(init, x);
                for (i, &w) in rest.iter().enumerate().take(m) {
                    if d & (1 << i) != 0 {
                        next.insert(w, x);
                    }
                    if u & (1 << i) != 0 {
                        next.insert(x, w);
                    }
                }
                if !self.bounds_hold(cand, prepared, &next, loc, m + 1, budget)? {
                    continue;
                }
                let mut p = poset.to_vec();
                for (i, row) in p.iter_mut().enumerate() {
                    if d & (1 << i) != 0 {
                        *row |= 1 << m;
                    }
                }
                p.push(u);
                let found = self.dfs(loc, &p, next, cand, prepared, budget, stats, visit)?;
                if found && loc >= self.unobservable_from {
                    return Ok(true);
                }
                any |= found;
            }
        }
        Ok(any)
    }
}

/// Physical locations whose coherence order can matter to anything but its own existence: read
/// by some event, updated by an RMW, or shown in a final state.
fn observable_locations(s: &EventStructure) -> Vec<bool> {
    let program = s.program;
    let mut out = vec![false; program.physical.len()];
    let rmw = &s.relations["rmw"];
    for (i, e) in s.events.iter().enumerate() {
        if let Some(p) = e.physical {
            if e.is_read() || !rmw.predecessors(i).is_empty() {
                out[p] = true;
            }
        }
    }
    for o in crate::check::observables(program) {
        if let crate::program::Observable::Location(p) = o {
            out[p] = true;
        }
    }
    out
}

/// Physical locations that hold mbarrier objects.
fn mbarrier_locations(s: &EventStructure) -> Vec<bool> {
    let p = s.program;
    let mut out = vec![false; p.physical.len()];
    for v in &p.variables {
        if v.kind == crate::program::VariableKind::Mbarrier {
            out[p.locations[v.first_location].physical] = true;
        }
    }
    out
}

/// Every fence-SC order: the restrictions of a linear order of the `fence.sc` events to their
/// morally strong pairs (same thread, or each scope includes the other's thread; §8.9.3).
fn fence_sc_orders(s: &EventStructure) -> Vec<Relation> {
    let n = s.n();
    let fences: Vec<usize> = (0..n).filter(|&i| s.events[i].kind == EventKind::Fence && s.events[i].has_tag("SC")).collect();
    let sr = &s.relations["sr"];
    let ms = |a: usize, b: usize| s.events[a].thread == s.events[b].thread || sr.contains(a, b);
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut perm = fences.clone();
    permutations(&mut perm, 0, &mut |p| {
        let mut r = Relation::empty(n);
        for i in 0..p.len() {
            for j in i + 1..p.len() {
                if ms(p[i], p[j]) {
                    r.insert(p[i], p[j]);
                }
            }
        }
        if seen.insert(r.clone()) {
            out.push(r);
        }
    });
    out
}

fn permutations(v: &mut [usize], k: usize, f: &mut dyn FnMut(&[usize])) {
    if k == v.len() {
        f(v);
        return;
    }
    for i in k..v.len() {
        v.swap(k, i);
        permutations(v, k + 1, f);
        v.swap(k, i);
    }
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
            // Enumerate down-sets D and up-sets U of p on elements 0..m, disjoint, with D < U.
            for d in 0u32..(1 << m) {
                if !is_down_closed(p, d, m) {
                    continue;
                }
                for u in 0u32..(1 << m) {
                    if u & d != 0 || !is_up_closed(p, u, m) {
                        continue;
                    }
                    // Every element of D must be below every element of U already.
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
