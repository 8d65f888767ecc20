//! Candidate executions of one event structure, built decision by decision and checked against
//! the cat model as they are built.
//!
//! A candidate execution fixes reads-from (`rf`), coherence (`co`, a strict partial order per
//! location, PTX ISA §8.9.6), the fence-SC order (`sync_fence`) and, for each mbarrier object,
//! the order of its updates (`mo`). The search makes these choices one at a time, depth first:
//!
//! 1. **mbarrier reads** (waits, ordinary loads of an object): which state of the object's
//!    history each one reads ([`super::mbgraph`]); then, per object, which final state the
//!    history ends in. A history through the chosen states is the object's `mo` and the `rf` of
//!    its updates; histories that differ only between chosen states are one execution (every
//!    read sees the same updates and values in all of them).
//! 2. **data reads**: the write each read reads from (a write of the same location with the
//!    value the read returned, or any write for a read whose value is only shown).
//! 3. **coherence** of the locations whose order can be observed, by branch and bound; the other
//!    locations only need some consistent order (the first found is kept).
//! 4. **the fence-SC order**: only its existence matters (the final state does not depend on
//!    it), so the first consistent order ends the search for one.
//!
//! After every choice that had alternatives, each check of the model is evaluated on *bounds*
//! of the candidate: a check that can only fail more as a name grows (e.g. Causality in `rf`,
//! `co`) is evaluated with that name's smallest possible value (what is chosen so far); one
//! that can only hold more (e.g. Coherence in `co`) with the largest. A check that fails there
//! fails in every completion, so the whole subtree is cut. Checks of the form `empty (E \ co)`
//! (Coherence) are used the other way round too: once `E`'s inputs are bounded below, every
//! pair of `E` is *forced* into `co` (and likewise into `sync_fence` for FenceSC), so coherence
//! the model already implies is never guessed.

use super::mbgraph::{self, ObjectGraph};
use super::structure::{EventKind, EventStructure};
use super::trace::ExploreError;
use crate::cat::{CatEnv, CatModel, CheckOutcome, Evaluation, Monotonicity, Polarity, Prepared, Value};
use crate::clock::Instant;
use crate::program::mbarrier::MbState;
use crate::relation::{EventSet, Relation};

/// The most states one mbarrier object's graph may have (each is also charged to the budget).
const MAX_MBARRIER_STATES: u64 = 1_000_000;

/// The names a candidate execution provides on top of its event structure.
pub const DYNAMIC_NAMES: &[&str] =
    &["rf", "co", "fr", "rfe", "rfi", "coe", "coi", "fre", "fri", "com", "sync_fence", "mo", "UB", "MBVALID"];

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

/// Statistics of a search, for reports and benchmarks.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct SearchStats {
    /// Model evaluations of every kind: on partial candidates (pruning, forcing) and complete ones.
    pub evaluations: u64,
    /// Complete candidate executions evaluated.
    pub candidates: u64,
    /// Partial candidates built: each choice of a write to read from or of an mbarrier state
    /// to read, on top of the choices above it.
    pub partial: u64,
    /// Of those, the ones with no consistent execution below them: work the model threw away.
    pub dead_ends: u64,
    /// Consistent executions found.
    pub consistent: u64,
}

impl SearchStats {
    pub fn add(&mut self, o: &SearchStats) {
        self.evaluations += o.evaluations;
        self.candidates += o.candidates;
        self.partial += o.partial;
        self.dead_ends += o.dead_ends;
        self.consistent += o.consistent;
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

/// What every search of one test shares: the budget of model evaluations, the deadline, the
/// statistics.
#[derive(Debug)]
pub struct Budget {
    /// Evaluations left.
    pub left: u64,
    /// The configured limit (for messages).
    pub limit: u64,
    /// Give up at this instant (`--timeout`).
    pub deadline: Option<Instant>,
    /// The configured timeout in seconds (for messages).
    pub timeout_secs: f64,
    pub stats: SearchStats,
}

impl Budget {
    /// A budget of `limits.max_candidates`, ending at `deadline` (or `limits.timeout` from now).
    pub fn new(limits: &crate::config::Limits, deadline: Option<Instant>) -> Self {
        Budget {
            left: limits.max_candidates,
            limit: limits.max_candidates,
            deadline: deadline.or_else(|| limits.timeout.map(|t| Instant::now() + t)),
            timeout_secs: limits.timeout.map(|t| t.as_secs_f64()).unwrap_or(0.0),
            stats: SearchStats::default(),
        }
    }

    /// Spend one unit (one model evaluation, one trace combination, one mbarrier state).
    pub fn charge(&mut self) -> Result<(), SearchError> {
        if self.left == 0 {
            return Err(SearchError::Explore(ExploreError::TooManyCandidates { limit: self.limit }));
        }
        self.left -= 1;
        if let Some(d) = self.deadline {
            // Instant::now is cheap next to a model evaluation.
            if Instant::now() >= d {
                return Err(SearchError::Explore(ExploreError::Timeout { seconds: self.timeout_secs }));
            }
        }
        Ok(())
    }

    fn evaluation(&mut self) -> Result<(), SearchError> {
        self.charge()?;
        self.stats.evaluations += 1;
        Ok(())
    }
}

/// What a search is for, besides listing consistent executions.
#[derive(Clone, Debug, Default)]
pub struct SearchGoal {
    /// Reads that must read the last write of their location (the polls of a run that spins
    /// forever, under fairness); for mbarrier objects the search enforces it, for data reads the
    /// visitor checks it.
    pub final_reads: Vec<usize>,
}

/// What a search reports to, and how it can be steered.
pub trait Explorer {
    /// A consistent execution; return false to stop the search.
    fn consistent(&mut self, cand: &Candidate, eval: &Evaluation) -> bool;
    /// Whether the search should say why it rejects (partial) candidates: `rejected` is then
    /// called with the failing check (this costs one evaluation per check instead of one per
    /// group of checks).
    fn wants_rejections(&self) -> bool {
        false
    }
    /// The search cut every candidate extending `cand` (a partial candidate: what is chosen so
    /// far, the rest at its smallest), or rejected a complete one, because `check` fails.
    fn rejected(&mut self, _cand: &Candidate, _check: &CheckOutcome) {}
    /// Whether some completion of the partial candidate can still be of interest (e.g. reach
    /// the outcome being explained); false cuts it without evaluating the model.
    fn may_reach(&mut self, _partial: &Partial) -> bool {
        true
    }
    /// Whether `may_reach` is worth asking (building a partial candidate costs).
    fn steers(&self) -> bool {
        false
    }
}

/// A closure as an [`Explorer`] that only wants the consistent executions.
pub struct Visit<F>(pub F);

impl<F: FnMut(&Candidate, &Evaluation) -> bool> Explorer for Visit<F> {
    fn consistent(&mut self, cand: &Candidate, eval: &Evaluation) -> bool {
        (self.0)(cand, eval)
    }
}

/// A partial candidate as [`Explorer::may_reach`] sees it.
pub struct Partial<'c, 'a> {
    /// What is chosen so far (rf of the reads decided, mbarrier histories so far).
    pub cand: &'c Candidate<'a>,
    /// The data reads not decided yet, with the writes each may still read.
    pub open_reads: Vec<(usize, &'c [usize])>,
    /// Whether coherence is complete (so final values are `cand.final_values`).
    pub co_complete: bool,
}

/// A model specialised to one event structure on first use: `CatModel::prepare` evaluates every
/// static definition, which a search that propagation alone decides never needs.
pub struct LazyModel<'m, 'a> {
    model: &'m CatModel,
    statics: &'a StaticEnv<'a>,
    prepared: std::cell::OnceCell<Prepared<'m>>,
}

impl<'m, 'a> LazyModel<'m, 'a> {
    pub fn new(model: &'m CatModel, statics: &'a StaticEnv<'a>) -> Self {
        LazyModel { model, statics, prepared: std::cell::OnceCell::new() }
    }

    /// The prepared model (preparing it the first time).
    pub fn get(&self) -> Result<&Prepared<'m>, SearchError> {
        if let Some(p) = self.prepared.get() {
            return Ok(p);
        }
        let p = self.model.prepare(self.statics, DYNAMIC_NAMES).map_err(SearchError::Model)?;
        Ok(self.prepared.get_or_init(|| p))
    }
}

/// Enumerate the candidates of one structure and report each consistent one to `ex`.
pub fn search(
    statics: &StaticEnv,
    model: &LazyModel,
    plan: &PrunePlan,
    goal: &SearchGoal,
    budget: &mut Budget,
    ex: &mut dyn Explorer,
) -> Result<(), SearchError> {
    let Some(mut engine) = Engine::new(statics, model, plan, goal, budget)? else { return Ok(()) };
    match engine.dfs(0, ex, None) {
        Err(SearchError::Stopped) | Ok(_) => Ok(()),
        Err(e) => Err(e),
    }
}

// ---------------------------------------------------------------------------------------------
// Pruning plan: which checks can be decided on bounds, and which force pairs.

/// The dynamic names, in `PrunePlan` bound order.
const BOUNDED: [&str; 12] = ["rf", "rfe", "rfi", "co", "coe", "coi", "fr", "fre", "fri", "com", "sync_fence", "mo"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bound {
    Lower,
    Upper,
}

/// Checks decided together on partial candidates: each dynamic name at the same bound.
#[derive(Clone, Debug)]
struct CheckGroup {
    bounds: [Bound; 12],
    checks: Vec<usize>,
}

/// A check `empty (E \ N)` used to force pairs into `N`.
#[derive(Clone, Debug)]
struct Forcing {
    check: usize,
    target: Target,
    /// Whether `E` depends on co (and the names derived from it) or on the fence-SC order: only
    /// then can pairs added to those change it.
    on_co: bool,
    on_sync: bool,
}

/// Which name a forcing check adds pairs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Co,
    SyncFence,
}

/// How a model's checks are used on partial candidates (computed once per model).
#[derive(Clone, Debug, Default)]
pub struct PrunePlan {
    groups: Vec<CheckGroup>,
    /// `empty (E \ co)` / `empty (E \ sync_fence)` checks (see `CheckInfo::inclusion`).
    forcing: Vec<Forcing>,
    /// The static names of an `acyclic (rf | N1 | ...)` check (NoThinAir): the search never
    /// lets a read read from a write that depends on it through these and `rf`.
    acyclic_with_rf: Option<Vec<String>>,
}

impl PrunePlan {
    /// Classify the model's checks by how they vary with each dynamic name.
    pub fn for_model(model: &CatModel) -> Self {
        let mut plan = PrunePlan::default();
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

/// Lower and upper bounds of the base dynamic names of a partial candidate.
#[derive(Clone)]
struct Bounds {
    rf: [Relation; 2],
    co: [Relation; 2],
    sync: [Relation; 2],
    mo: [Relation; 2],
}

/// The environment a check group is evaluated in: every name at the bound the group needs.
struct BoundEnv<'a> {
    statics: &'a StaticEnv<'a>,
    bounds: &'a Bounds,
    choice: [Bound; 12],
    ub: &'a EventSet,
    mbvalid: &'a EventSet,
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

// ---------------------------------------------------------------------------------------------
// The engine.

/// One choice the depth-first search makes.
#[derive(Clone, Copy, Debug)]
enum Decision {
    /// The write data read `k` (index into `Engine::reads`) reads from.
    Read(usize),
    /// The state mbarrier read `i` of object `o` reads.
    MbRead(usize, usize),
    /// The final state of object `o`'s history.
    MbFinal(usize),
}

/// The search state of one mbarrier object.
#[derive(Clone, Debug, Default)]
struct ObjectState {
    /// (node, the read that chose it, the read's undefined behaviour there); the final node has
    /// no read.
    chosen: Vec<(usize, Option<usize>, Option<String>)>,
    /// The representative history: units from the initial state through every chosen node.
    member: Vec<usize>,
    /// Whether the history reaches a final node.
    complete: bool,
    /// Orders between two units the model forces (unit a before unit b), learned from
    /// coherence pairs the representative history contradicted.
    after: Vec<(usize, usize)>,
}

struct Engine<'e, 'a, 'm, 's> {
    statics: &'e StaticEnv<'a>,
    s: &'e EventStructure<'a>,
    model: &'e LazyModel<'m, 's>,
    plan: &'e PrunePlan,
    goal: &'e SearchGoal,
    budget: &'e mut Budget,
    n: usize,
    /// Data reads and the writes each may read from.
    reads: Vec<usize>,
    sources: Vec<Vec<usize>>,
    objects: Vec<ObjectGraph>,
    decisions: Vec<Decision>,
    /// Writes of each physical location (initial write first).
    writes: Vec<Vec<usize>>,
    /// Physical locations holding mbarrier objects.
    is_object: Vec<bool>,
    /// Coherence every candidate has: the initial write first.
    init_first: Relation,
    /// Same-location write pairs (the largest coherence).
    co_full: Relation,
    /// Morally strong pairs of `fence.sc` (the largest fence-SC order, both directions).
    sync_full: Relation,
    sc_fences: Vec<usize>,
    /// Events with undefined behaviour found in the traces.
    static_ub: EventSet,
    /// The static part of the model's acyclic `rf | ...` union, if it has one.
    deps: Option<Relation>,
    /// Whether some write's value is open (computed from reads).
    open_writes: bool,
    /// Physical locations whose coherence can be observed (see [`observable_locations`]).
    observable: Vec<bool>,
    /// Per decision depth: how often the check after a choice ran and cut.
    depth_stats: Vec<DepthStats>,
    // Search state.
    rf: Relation,
    decided: Vec<bool>,
    state: Vec<ObjectState>,
}

impl<'e, 'a, 'm, 's> Engine<'e, 'a, 'm, 's> {
    fn new(
        statics: &'e StaticEnv<'a>,
        model: &'e LazyModel<'m, 's>,
        plan: &'e PrunePlan,
        goal: &'e SearchGoal,
        budget: &'e mut Budget,
    ) -> Result<Option<Self>, SearchError> {
        let s = statics.structure;
        let n = s.n();
        let writes = s.writes_by_location();
        let program = s.program;
        let object_locations = mbgraph::objects(s);
        let mut is_object = vec![false; program.physical.len()];
        for &p in &object_locations {
            is_object[p] = true;
        }
        let order = s.relations["po"].union(&s.relations["iss"]).union(&s.relations["intra"]).plus();
        let mut objects = Vec::new();
        for &p in &object_locations {
            // Each state costs like a trace combination: charge a budget share for all of them.
            let max_nodes = budget.left.min(MAX_MBARRIER_STATES) as usize;
            let g = ObjectGraph::build(s, p, &order, max_nodes).map_err(|e| {
                SearchError::Explore(if budget.left < MAX_MBARRIER_STATES {
                    // The states are charged to the search budget, and it ran out.
                    ExploreError::TooManyCandidates { limit: budget.limit }
                } else {
                    ExploreError::TooManyMbarrierStates { object: e.object, limit: e.limit as u64 }
                })
            })?;
            budget.left = budget.left.saturating_sub(g.nodes.len() as u64);
            objects.push(g);
        }
        // Data reads and their possible sources.
        let rmw = &s.relations["rmw"];
        let mut reads = Vec::new();
        let mut sources = Vec::new();
        for r in (0..n).filter(|&i| s.events[i].is_read()) {
            let p = s.events[r].physical.expect("reads have a location");
            if is_object[p] {
                continue;
            }
            let symbolic = s.symbolic_reads[r];
            let v = s.events[r].value;
            // A write of an open value may be read when the value can be the one read.
            let may_give = |w: usize| match (&s.events[w].sym, &s.events[w].possible) {
                (None, _) => s.events[w].value == v,
                (Some(_), Some(values)) => values.contains(&v),
                (Some(_), None) => true,
            };
            let cands: Vec<usize> = writes[p].iter().copied().filter(|&w| (symbolic || may_give(w)) && !rmw.contains(r, w)).collect();
            if cands.is_empty() {
                return Ok(None);
            }
            reads.push(r);
            sources.push(cands);
        }
        let line = |e: usize| s.events[e].instr.zip(s.events[e].thread).map(|(i, t)| program.threads[t].code[i].line).unwrap_or(0);
        // mbarrier reads first: they decide the synchronisation of the rest. Within each group,
        // by source line: litmus rows run roughly in time order across threads, so causal chains
        // close (and doomed prefixes die) early.
        let mut mb_reads: Vec<(usize, usize, usize)> = Vec::new();
        for (o, g) in objects.iter().enumerate() {
            for (i, &r) in g.reads.iter().enumerate() {
                let mut options = g.read_options[i].iter().filter(|opt| !goal.final_reads.contains(&r) || g.finals.contains(&opt.node));
                if options.next().is_none() {
                    return Ok(None);
                }
                mb_reads.push((line(r), o, i));
            }
        }
        mb_reads.sort();
        let mut decisions: Vec<Decision> = mb_reads.iter().map(|&(_, o, i)| Decision::MbRead(o, i)).collect();
        decisions.extend((0..objects.len()).map(Decision::MbFinal));
        let mut order: Vec<usize> = (0..reads.len()).collect();
        order.sort_by_key(|&k| (line(reads[k]), k));
        decisions.extend(order.into_iter().map(Decision::Read));

        let depths = decisions.len();
        let mut init_first = Relation::empty(n);
        let mut co_full = Relation::empty(n);
        for ws in &writes {
            if let Some((&init, rest)) = ws.split_first() {
                for &w in rest {
                    init_first.insert(init, w);
                    co_full.insert(init, w);
                    for &v in rest {
                        if v != w {
                            co_full.insert(w, v);
                        }
                    }
                }
            }
        }
        let sc_fences: Vec<usize> = (0..n).filter(|&i| s.events[i].kind == EventKind::Fence && s.events[i].has_tag("SC")).collect();
        let sr = &s.relations["sr"];
        let mut sync_full = Relation::empty(n);
        for &a in &sc_fences {
            for &b in &sc_fences {
                if a != b && (s.events[a].thread == s.events[b].thread || sr.contains(a, b)) {
                    sync_full.insert(a, b);
                }
            }
        }
        let static_ub = EventSet::from_fn(n, |i| s.events[i].ub.is_some());
        let state = vec![ObjectState::default(); objects.len()];
        let deps = plan.acyclic_with_rf.as_ref().and_then(|names| {
            let mut d = Relation::empty(n);
            for name in names {
                match statics.lookup_static(name) {
                    Some(Value::Rel(r)) => d.union_with(&r),
                    _ => return None,
                }
            }
            Some(d)
        });
        Ok(Some(Engine {
            statics,
            s,
            model,
            plan,
            goal,
            budget,
            n,
            rf: Relation::empty(n),
            decided: vec![false; reads.len()],
            reads,
            sources,
            objects,
            decisions,
            writes,
            is_object,
            init_first,
            co_full,
            sync_full,
            sc_fences,
            static_ub,
            deps,
            open_writes: s.events.iter().any(|e| e.sym.is_some()),
            observable: observable_locations(s),
            depth_stats: vec![DepthStats::default(); depths + 1],
            state,
        }))
    }

    /// Make the choice of decision `depth` in every possible way, and go on with each.
    /// Returns whether some consistent execution was found below.
    /// `known`: the options propagation left for the state here, when the caller's check
    /// already computed them.
    fn dfs(&mut self, depth: usize, ex: &mut dyn Explorer, known: Option<Options>) -> Result<bool, SearchError> {
        if depth == self.decisions.len() {
            return self.rf_complete(ex);
        }
        let options_here = |engine: &Self, known: Option<Options>| known.or_else(|| engine.propagate());
        // The last mbarrier decision is followed by a check even without alternatives: an
        // inconsistent set of histories dies before any data read is chosen.
        let last_mb =
            matches!(self.decisions[depth], Decision::MbFinal(_)) && !matches!(self.decisions.get(depth + 1), Some(Decision::MbFinal(_)));
        let mut found = false;
        match self.decisions[depth] {
            Decision::Read(k) => {
                let r = self.reads[k];
                let Some(options) = options_here(self, known).map(|mut p| std::mem::take(&mut p.data[k])) else { return Ok(false) };
                // The deepest decision is followed by the complete check anyway.
                let check = options.len() > 1 && depth + 1 < self.decisions.len();
                for w in options {
                    // Checks may learn orders of mbarrier updates: they hold for this subtree.
                    let saved = self.state.clone();
                    self.rf.insert(w, r);
                    self.decided[k] = true;
                    let below = self.checked_dfs(depth, check, ex)?;
                    self.count_partial(below);
                    found |= below;
                    self.decided[k] = false;
                    self.rf.remove(w, r);
                    self.state = saved;
                }
            }
            Decision::MbRead(o, i) => {
                let r = self.objects[o].reads[i];
                let Some(allowed) = options_here(self, known).map(|mut p| std::mem::take(&mut p.mb[o][i])) else { return Ok(false) };
                let g = &self.objects[o];
                let options: Vec<(usize, Option<String>)> =
                    g.read_options[i].iter().filter(|opt| allowed.contains(&opt.node)).map(|opt| (opt.node, opt.ub.clone())).collect();
                let check = options.len() > 1 || last_mb;

                for (node, ub) in options {
                    let saved = self.state.clone();
                    let below = match self.choose(o, node, Some(r), ub) {
                        true => self.checked_dfs(depth, check, ex)?,
                        false => false,
                    };
                    self.count_partial(below);
                    found |= below;
                    self.state = saved;
                }
            }
            Decision::MbFinal(o) => {
                let g = &self.objects[o];
                let chosen: Vec<usize> = self.state[o].chosen.iter().map(|c| c.0).collect();
                let options: Vec<usize> = g.finals.iter().copied().filter(|&f| g.compatible(&chosen, f)).collect();
                let check = options.len() > 1 || last_mb;
                for node in options {
                    let saved = self.state.clone();
                    let below = match self.choose(o, node, None, None) {
                        true => self.checked_dfs(depth, check, ex)?,
                        false => false,
                    };
                    self.count_partial(below);
                    found |= below;
                    self.state = saved;
                }
            }
        }
        Ok(found)
    }

    /// The check after a choice at `depth`, then the decisions below it: whether some
    /// consistent execution was found there.
    fn checked_dfs(&mut self, depth: usize, check: bool, ex: &mut dyn Explorer) -> Result<bool, SearchError> {
        match self.checked(depth, check, ex)? {
            Some(next) => self.dfs(depth + 1, ex, next),
            None => Ok(false),
        }
    }

    fn count_partial(&mut self, found_below: bool) {
        self.budget.stats.partial += 1;
        if !found_below {
            self.budget.stats.dead_ends += 1;
        }
    }

    /// After a choice at `depth`: None when the check (if `check`) cuts the subtree, else the
    /// options propagation left (when the check computed them).
    ///
    /// Checks at a depth where they have cut nothing in the last many tries are only sampled (one
    /// in [`SAMPLE`]): a check that cannot cut costs as much as the leaves it would save, and
    /// skipping one never changes what the search finds, only how early it cuts.
    fn checked(&mut self, depth: usize, check: bool, ex: &mut dyn Explorer) -> Result<Option<Option<Options>>, SearchError> {
        if !check {
            return Ok(Some(None));
        }
        let stats = &mut self.depth_stats[depth];
        let useful = stats.checks < SAMPLE * 4 || stats.cuts * SAMPLE >= stats.checks;
        stats.tries += 1;
        if !useful && !stats.tries.is_multiple_of(SAMPLE) {
            return Ok(Some(None));
        }
        let r = self.prefix_holds(ex)?;
        let stats = &mut self.depth_stats[depth];
        stats.checks += 1;
        if r.is_none() {
            stats.cuts += 1;
        }
        Ok(r.map(Some))
    }

    /// Add `node` to the chosen states of object `o` and rebuild its representative history.
    fn choose(&mut self, o: usize, node: usize, read: Option<usize>, ub: Option<String>) -> bool {
        self.state[o].chosen.push((node, read, ub));
        self.rebuild(o)
    }

    /// Rebuild the representative history of object `o`: a path through its chosen nodes, in
    /// order of units placed, that respects the learned orders. False when there is none.
    fn rebuild(&mut self, o: usize) -> bool {
        let g = &self.objects[o];
        let st = &mut self.state[o];
        let mut path_nodes: Vec<usize> = st.chosen.iter().map(|c| c.0).collect();
        path_nodes.sort_by_key(|&x| (g.nodes[x].placed.len(), x));
        path_nodes.dedup();
        let mut member = Vec::new();
        let mut here = 0;
        for &next in &path_nodes {
            match g.path(here, next, &st.after) {
                Some(p) => member.extend(p),
                None => return false,
            }
            here = next;
        }
        // A learned order whose first unit is not placed while the second is cannot hold later.
        let placed = &g.nodes[here].placed;
        if st.after.iter().any(|&(a, b)| placed.contains(b) && !placed.contains(a)) {
            return false;
        }
        st.member = member;
        st.complete = g.finals.contains(&here);
        true
    }

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
                        ub_reasons[r] = Some(reason.clone());
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
    fn snapshot(&self) -> Snapshot {
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
    fn lower_candidate(&self, snap: &Snapshot) -> Candidate<'e> {
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
    fn values_consistent(&self, rf: &Relation, values: &[Option<i64>], complete: bool) -> bool {
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
    fn failing(&mut self, snap: &Snapshot, choice: [Bound; 12], checks: &[usize]) -> Result<Option<CheckOutcome>, SearchError> {
        self.budget.evaluation()?;
        let prepared = self.model.get()?;
        let env = BoundEnv { statics: self.statics, bounds: &snap.b, choice, ub: &snap.ub, mbvalid: &snap.mbvalid };
        let staged = [0, 1, 2, 10, 11].iter().all(|&k| choice[k] == Bound::Lower);
        let fresh;
        let stage = if staged {
            if snap.stage.get().is_none() {
                let _ = snap.stage.set(prepared.stage(&env, &STAGED).map_err(SearchError::Model)?);
            }
            snap.stage.get().expect("set above")
        } else {
            fresh = prepared.stage(&env, &[]).map_err(SearchError::Model)?;
            &fresh
        };
        prepared.first_failure_on(stage, &env, checks).map_err(SearchError::Model)
    }

    /// The outcome of one check on the bounds (see [`Engine::failing`]); a check that holds
    /// comes back with an empty relation.
    fn check_outcome(&mut self, snap: &Snapshot, choice: [Bound; 12], check: usize) -> Result<CheckOutcome, SearchError> {
        Ok(self.failing(snap, choice, &[check])?.unwrap_or_else(|| CheckOutcome {
            index: check,
            name: String::new(),
            kind: crate::cat::CheckKind::Empty,
            flag: None,
            holds: true,
            relation: Relation::empty(self.n),
        }))
    }

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
    fn forced_snapshot(&mut self, ex: &mut dyn Explorer) -> Result<Option<Snapshot>, SearchError> {
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
    fn prefix_holds(&mut self, ex: &mut dyn Explorer) -> Result<Option<Options>, SearchError> {
        let Some(options) = self.propagate() else { return Ok(None) };
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
            return Ok(self.propagate());
        }
        Ok(Some(options))
    }

    /// How many orders of mbarrier updates the search learned so far.
    fn learned_count(&self) -> usize {
        self.state.iter().map(|s| s.after.len()).sum()
    }

    /// Forward checking with the model's acyclic `rf | ...` union (NoThinAir): the dependencies
    /// known so far are its static names, the reads-from chosen, and for each mbarrier read
    /// every update all of its remaining states include (the chain of read-modify-writes up to
    /// the write it reads is rf and data in every history). A read cannot read a write (or a
    /// state with an update) that depends on the read itself. Options are filtered until no
    /// read's set of certain updates grows; None when some read has no option left. Without
    /// such a union in the model, every option is kept.
    fn propagate(&self) -> Option<Options> {
        let Some(base) = &self.deps else { return Some(self.options_without_dependencies()) };
        let mut opts = self.options_without_dependencies();
        loop {
            let mut d = base.clone();
            d.union_with(&self.rf);
            for (k, &r) in self.reads.iter().enumerate() {
                if let [w] = opts.data[k].as_slice() {
                    d.insert(*w, r);
                }
            }
            for (o, g) in self.objects.iter().enumerate() {
                for (i, &r) in g.reads.iter().enumerate() {
                    let mut must: Option<EventSet> = None;
                    for &n in &opts.mb[o][i] {
                        let p = &g.nodes[n].placed;
                        must = Some(match must {
                            None => p.clone(),
                            Some(m) => m.intersection(p),
                        });
                    }
                    for u in must.iter().flat_map(|m| m.iter()) {
                        d.insert(g.units[u].write, r);
                    }
                }
            }
            let dep = d.plus();
            let mut changed = false;
            // Reads of one object ordered in their threads see states in the same order: each
            // option of a later read must be reachable from some option of the earlier one, and
            // the other way round. Reachability is transitive, so supporting each read by its
            // immediate predecessors, until nothing changes, supports it by all of them.
            for (o, g) in self.objects.iter().enumerate() {
                if g.reads_prev.iter().all(|p| p.is_empty()) {
                    continue;
                }
                let m = g.nodes.len();
                let mut sets: Vec<EventSet> = opts.mb[o].iter().map(|v| EventSet::from_iter_in(m, v.iter().copied())).collect();
                let mut narrowed = false;
                loop {
                    let mut again = false;
                    for j in 0..g.reads.len() {
                        for &i in &g.reads_prev[j] {
                            let later = sets[j].intersection(&g.reached_from(&sets[i]));
                            let earlier = sets[i].intersection(&g.reaching(&later));
                            if later.is_empty() || earlier.is_empty() {
                                return None;
                            }
                            again |= later != sets[j] || earlier != sets[i];
                            sets[j] = later;
                            sets[i] = earlier;
                        }
                    }
                    if !again {
                        break;
                    }
                    narrowed = true;
                }
                if narrowed {
                    changed = true;
                    opts.mb[o] = sets.iter().map(|s| s.iter().collect()).collect();
                }
            }
            for (k, &r) in self.reads.iter().enumerate() {
                let before = opts.data[k].len();
                opts.data[k].retain(|&w| !dep.contains(r, w));
                if opts.data[k].is_empty() {
                    return None;
                }
                changed |= opts.data[k].len() != before;
            }
            for (o, g) in self.objects.iter().enumerate() {
                for (i, &r) in g.reads.iter().enumerate() {
                    let before = opts.mb[o][i].len();
                    // The updates whose write depends on the read.
                    let depending = EventSet::from_fn(g.units.len(), |u| dep.contains(r, g.units[u].write));
                    opts.mb[o][i].retain(|&n| g.nodes[n].placed.is_disjoint(&depending));
                    if opts.mb[o][i].is_empty() {
                        return None;
                    }
                    changed |= opts.mb[o][i].len() != before;
                }
            }
            if !changed {
                return Some(opts);
            }
        }
    }

    /// The options every read still has: decided reads their choice, data reads their sources,
    /// mbarrier reads the states compatible with the chosen ones (one history through them, and
    /// coherent with the other reads of the object ordered before or after them).
    fn options_without_dependencies(&self) -> Options {
        let data = (0..self.reads.len())
            .map(|k| if self.decided[k] { self.rf.predecessors(self.reads[k]) } else { self.sources[k].clone() })
            .collect();
        let mb = self
            .objects
            .iter()
            .enumerate()
            .map(|(o, g)| {
                let st = &self.state[o];
                let chosen: Vec<usize> = st.chosen.iter().map(|c| c.0).collect();
                let mut node_of: Vec<Option<usize>> = vec![None; g.reads.len()];
                for c in &st.chosen {
                    if let Some(j) = c.1.and_then(|r| g.read_index(r)) {
                        node_of[j].get_or_insert(c.0);
                    }
                }
                let read_node = |j: usize| node_of[j];
                let compatible = g.compatible_nodes(&chosen);
                g.reads
                    .iter()
                    .enumerate()
                    .map(|(i, &r)| match read_node(i) {
                        Some(n) => vec![n],
                        None => g.read_options[i]
                            .iter()
                            .map(|opt| opt.node)
                            .filter(|&n| !self.goal.final_reads.contains(&r) || g.finals.contains(&n))
                            .filter(|&n| compatible.contains(n) && g.read_order_allows(i, n, &read_node))
                            .collect(),
                    })
                    .collect()
            })
            .collect();
        Options { data, mb }
    }

    /// Ask the explorer whether the partial candidate can still be of interest.
    fn reachable(&self, snap: &Snapshot, co_complete: bool, ex: &mut dyn Explorer) -> bool {
        if !ex.steers() {
            return true;
        }
        let cand = self.lower_candidate(snap);
        let open_reads = (0..self.reads.len()).filter(|&k| !self.decided[k]).map(|k| (self.reads[k], self.sources[k].as_slice())).collect();
        ex.may_reach(&Partial { cand: &cand, open_reads, co_complete })
    }

    fn groups_hold(&mut self, snap: &Snapshot, ex: &mut dyn Explorer) -> Result<bool, SearchError> {
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

    /// Every read has its source and every mbarrier its history: search coherence and the
    /// fence-SC order.
    fn rf_complete(&mut self, ex: &mut dyn Explorer) -> Result<bool, SearchError> {
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
        self.co_dfs(&free, 0, 0, &[], co, &mut snap, ex)
    }

    /// Branch and bound over the coherence of the free locations, one write at a time: each
    /// write is inserted with a down-closed set of predecessors and an up-closed set of
    /// successors among the writes placed before it, so every partial order is produced once,
    /// and only those that contain the forced pairs.
    #[allow(clippy::too_many_arguments)]
    fn co_dfs(
        &mut self,
        free: &[(usize, bool)],
        loc: usize,
        m: usize,
        poset: &[u32],
        co: Relation,
        snap: &mut Snapshot,
        ex: &mut dyn Explorer,
    ) -> Result<bool, SearchError> {
        if loc == free.len() {
            return self.fsc_search(co, snap, ex);
        }
        let (p, observable) = free[loc];
        let ws = self.writes[p].clone();
        let rest = &ws[1..];
        if m == rest.len() {
            return self.co_dfs(free, loc + 1, 0, &[], co, snap, ex);
        }
        if m >= 31 {
            return Err(SearchError::Explore(ExploreError::TooManyCandidates { limit: self.budget.limit }));
        }
        let x = rest[m];
        let forced = &snap.b.co[0];
        let must_below: u32 = (0..m).filter(|&i| forced.contains(rest[i], x)).fold(0, |acc, i| acc | (1 << i));
        let must_above: u32 = (0..m).filter(|&i| forced.contains(x, rest[i])).fold(0, |acc, i| acc | (1 << i));
        let mut found = false;
        for d in 0u32..(1 << m) {
            if d & must_below != must_below || !is_down_closed(poset, d, m) {
                continue;
            }
            for u in 0u32..(1 << m) {
                if u & d != 0 || u & must_above != must_above || !is_up_closed(poset, u, m) {
                    continue;
                }
                // Every predecessor must already be below every successor (transitivity).
                if !(0..m).filter(|i| d & (1 << i) != 0).all(|i| poset[i] & u == u) {
                    continue;
                }
                let mut next = co.clone();
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
                let ok = self.groups_hold(snap, ex)?;
                if ok {
                    let mut q = poset.to_vec();
                    for (i, row) in q.iter_mut().enumerate() {
                        if d & (1 << i) != 0 {
                            *row |= 1 << m;
                        }
                    }
                    q.push(u);
                    let hit = self.co_dfs(free, loc, m + 1, &q, next, snap, ex)?;
                    found |= hit;
                    snap.b.co = saved;
                    if hit && !observable {
                        // Only the existence of an order of this location matters.
                        return Ok(true);
                    }
                } else {
                    snap.b.co = saved;
                }
            }
        }
        Ok(found)
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

    /// Coherence is complete: find a fence-SC order (its existence is all that matters).
    fn fsc_search(&mut self, co: Relation, snap: &mut Snapshot, ex: &mut dyn Explorer) -> Result<bool, SearchError> {
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
    fn fences_open(&self, order: &Relation) -> bool {
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
    /// bounds after every fence placed; the first consistent one ends the search.
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
            let mut order = Relation::empty(self.n);
            for i in 0..placed.len() {
                for j in i + 1..placed.len() {
                    if self.sync_full.contains(placed[i], placed[j]) {
                        order.insert(placed[i], placed[j]);
                    }
                }
            }
            return self.complete(co.clone(), order, snap, ex);
        }
        for &f in &fences {
            if placed.contains(&f) || fences.iter().any(|&g| !placed.contains(&g) && g != f && closure.contains(g, f)) {
                continue;
            }
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
            let saved = (snap.b.sync.clone(), snap.b.co.clone());
            snap.b.sync = [lower.clone(), self.sync_full.difference(&lower.inverse())];
            snap.b.co = [co.clone(), co.clone()];
            snap.stage = std::cell::OnceCell::new();
            let ok = self.groups_hold(snap, ex)?;
            let hit = ok && self.fsc_dfs(co, closure, placed, snap, ex)?;
            snap.b.sync = saved.0;
            snap.b.co = saved.1;
            snap.stage = std::cell::OnceCell::new();
            placed.pop();
            if hit {
                return Ok(true);
            }
        }
        Ok(false)
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
        let eval = match snap.stage.get() {
            Some(stage) if cand.sync_fence == snap.b.sync[0] => prepared.evaluate_on(stage, &cand, true),
            _ => prepared.evaluate(&cand, true),
        }
        .map_err(SearchError::Model)?;
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

/// How useful the checks after choices at one depth have been.
#[derive(Clone, Copy, Debug, Default)]
struct DepthStats {
    tries: u64,
    checks: u64,
    cuts: u64,
}

/// Checks at a depth that cut less than once in this many are sampled once in this many.
const SAMPLE: u64 = 16;

/// The options each read still has after propagation.
struct Options {
    /// Per data read (as `Engine::reads`): the writes it may read.
    data: Vec<Vec<usize>>,
    /// Per object, per read of the object: the states it may read.
    mb: Vec<Vec<Vec<usize>>>,
}

/// What forcing found.
enum Forced {
    /// The forced pairs were added; nothing contradicts them.
    Holds,
    /// A forced pair can never hold: the candidate is inconsistent.
    Fails,
    /// Object `o`'s history contradicts a forced order of its units (`a` before `b`).
    Learn(usize, usize, usize),
}

/// A partial candidate: bounds of its dynamic names and what its mbarrier histories replay.
struct Snapshot {
    b: Bounds,
    ub: EventSet,
    mbvalid: EventSet,
    values: Vec<i64>,
    ub_reasons: Vec<Option<String>>,
    /// The values of open writes and symbolic reads, where the reads-from chosen determines them.
    open: Vec<Option<i64>>,
    /// The model's definitions that depend only on rf, the fence-SC order and mo, at their lower
    /// bounds (reset whenever one of them changes).
    stage: std::cell::OnceCell<crate::cat::Stage>,
}

/// The dynamic names a snapshot's stage keeps fixed.
const STAGED: [&str; 5] = ["rf", "rfe", "rfi", "sync_fence", "mo"];

/// Whether `co` orders every pair of `ws`.
fn total(co: &Relation, ws: &[usize]) -> bool {
    ws.iter().enumerate().all(|(i, &a)| ws[i + 1..].iter().all(|&b| co.contains(a, b) || co.contains(b, a)))
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
    for o in crate::program::naming::observables(program) {
        if let crate::program::Observable::Location(p) = o {
            out[p] = true;
        }
    }
    out
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
