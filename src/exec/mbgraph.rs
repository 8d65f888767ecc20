//! The histories of one mbarrier object as a graph of states.
//!
//! An mbarrier's updates are totally ordered (`mo`, digest §14.4) and each reads its predecessor,
//! so a history is a path that places the object's updates one at a time, replaying each from
//! the state before it (`MbUpdate::apply`). Enumerating every path up front is what made TMA
//! pipelines explode: C consumers arriving on one phase give C! orders per phase, and all of them
//! are consistent. But what the rest of the execution sees of a history is only what its reads
//! see: a wait (or an ordinary load of the object) reads one *state* of the path, and through the
//! chain of read-modify-writes it observes exactly the updates placed before that state
//! (§8.9.2). So the search decides, for each read of the object, which state it reads, and a
//! history is any path through the chosen states.
//!
//! A state (a node of the graph) is the set of updates placed so far, the value they leave, and
//! the updates that had undefined behaviour on the way (so that two histories reaching one node
//! have the same findings). Edges place one more update whose static predecessors (program
//! order, issue order, the order inside an async operation) are placed and whose observed result
//! (the phase an arrive returned to its thread) matches.
//!
//! Reachability is kept sparse. A pipeline whose phases carry several completions (two TMA
//! copies per stage) has states for every subset of completions across laps, most of them
//! after an update with undefined behaviour that only the model can rule out; dense
//! states×states matrices of those took gigabytes. Nodes are numbered in a topological order
//! (every edge goes to a higher number), so the nodes one node reaches, or that reach it, are one
//! sweep over the edges; the search asks for few of them (the states its reads chose), and
//! those rows are cached, within a bound on their memory.

use super::structure::{EventKind, EventStructure};
use crate::program::mbarrier::{MbState, MbUpdate};
use crate::relation::{EventSet, Relation};
use std::cell::RefCell;
use std::rc::Rc;

/// An update of the object (the read and write halves of an mbarrier RMW), or an ordinary write
/// to it.
#[derive(Clone, Copy, Debug)]
pub struct Unit {
    pub read: Option<usize>,
    pub write: usize,
}

/// A state of the object: the units placed, the value they leave, and which of them had
/// undefined behaviour.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Node {
    pub placed: EventSet,
    pub value: i64,
    pub ub: EventSet,
}

/// Placing `unit` in the state `from` leads to state `to`.
#[derive(Clone, Debug)]
pub struct Edge {
    pub unit: usize,
    pub to: usize,
    /// The undefined behaviour of the update applied to that state.
    pub ub: Option<Rc<str>>,
}

/// What a read of the object may read: a node, and the undefined behaviour the read has there.
#[derive(Clone, Debug)]
pub struct ReadOption {
    pub node: usize,
    pub ub: Option<String>,
}

/// Too many states: the limit and how far the construction got.
#[derive(Clone, Debug)]
pub struct TooManyStates {
    pub object: String,
    pub limit: usize,
}

/// Why the construction of a graph stopped: too many states, or the caller's check (its
/// deadline, its memory limit) said stop.
#[derive(Clone, Debug)]
pub enum BuildError<E> {
    TooManyStates(TooManyStates),
    Stopped(E),
}

/// How many states the construction builds between two calls of the caller's check.
pub const STATES_PER_CHECK: usize = 4096;

/// The bytes of cached reachability rows one graph keeps (beyond it, the cache starts over).
const ROW_CACHE_BYTES: usize = 32 << 20;

/// Sets of at most this many nodes are reached (or reaching) through their cached rows; larger
/// ones through one sweep over the edges.
const ROWS_PER_QUERY: usize = 8;

/// Cached rows of reachability: the nodes a node reaches (`forward`) or that reach it
/// (`backward`), each with the node included.
#[derive(Clone, Debug, Default)]
struct RowCache {
    forward: rustc_hash::FxHashMap<usize, Rc<EventSet>>,
    backward: rustc_hash::FxHashMap<usize, Rc<EventSet>>,
    bytes: usize,
}

/// The state graph of one mbarrier object of one event structure.
#[derive(Clone, Debug)]
pub struct ObjectGraph {
    /// The object's physical location.
    pub physical: usize,
    /// Its name in messages.
    pub name: String,
    /// The initial write (the start of every history).
    pub init: usize,
    pub units: Vec<Unit>,
    /// Events that read the object without writing it (waits, ordinary loads).
    pub reads: Vec<usize>,
    /// For each read: the nodes it may read.
    pub read_options: Vec<Vec<ReadOption>>,
    /// `reads_before[i]`: the reads (indices into `reads`) statically ordered before read `i`
    /// (program order, issue order). A later read never reads an earlier state (coherence of
    /// reads per location).
    pub reads_before: Vec<Vec<usize>>,
    /// `reads_after[i]`: the reads statically ordered after read `i`.
    pub reads_after: Vec<Vec<usize>>,
    /// `reads_prev[i]`: the reads immediately before read `i` (the transitive reduction of
    /// `reads_before`).
    pub reads_prev: Vec<Vec<usize>>,
    /// The states, numbered in a topological order: every edge goes to a higher number.
    pub nodes: Rc<Vec<Node>>,
    pub edges: Rc<Vec<Vec<Edge>>>,
    /// `back[b]`: the nodes with an edge to `b`.
    back: Rc<Vec<Vec<u32>>>,
    /// Reachability rows computed so far (see [`RowCache`]).
    rows: RefCell<RowCache>,
    /// Nodes with every unit placed.
    pub finals: Rc<Vec<usize>>,
    /// The units each node placed, as bit masks, when there are at most 128 units.
    masks: Option<Rc<Vec<u128>>>,
    /// The states this build made (0 when another structure of the decision had built the same
    /// ones: see [`forget_shared_states`]).
    pub built_states: usize,
    /// Groups of interchangeable units placed in one order (see [`ObjectGraph::build`]), each
    /// in that order; empty unless the build was asked to.
    pub chained: Vec<Vec<usize>>,
}

/// The states of an object's graph and their edges: what depends only on the object's units
/// (their operations, the results their threads saw, their static order) and initial value,
/// shared by the structures whose objects have the same (see [`forget_shared_states`]).
struct Core {
    nodes: Rc<Vec<Node>>,
    edges: Rc<Vec<Vec<Edge>>>,
    back: Rc<Vec<Vec<u32>>>,
    finals: Rc<Vec<usize>>,
    masks: Option<Rc<Vec<u128>>>,
}

/// What a graph's states depend on: the initial value, each unit's operation, the phase an
/// arrive returned to its thread and the value an ordinary write leaves, and each unit's
/// static predecessors.
type CoreKey = (i64, Vec<(Option<MbUpdate>, Option<i64>, i64)>, Vec<Vec<usize>>);

/// The most states the shared cores hold together (beyond, they start over).
const SHARED_STATES: usize = 1 << 20;

thread_local! {
    /// Cores built by this thread for the decision under way: a liveness check builds a
    /// structure per combination of runs, and the objects a combination's runs update the same
    /// way (a pipeline's full barriers, whatever the consumers do) have the same states.
    static SHARED: RefCell<(rustc_hash::FxHashMap<CoreKey, Rc<Core>>, usize)> = RefCell::default();
}

/// Drop the cores shared between the structures of a decision (the driver calls it when a
/// decision starts and ends, so they never outlive it).
pub fn forget_shared_states() {
    SHARED.with(|s| *s.borrow_mut() = Default::default());
}

/// Physical locations of mbarrier objects that some thread event accesses, in location order.
pub fn objects(s: &EventStructure) -> Vec<usize> {
    let mut out: Vec<usize> =
        s.events.iter().filter(|e| e.thread.is_some()).filter_map(|e| e.physical).filter(|&p| s.mbarrier_words[p]).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The units a node placed (or had undefined behaviour at), as the construction keys states
/// by: a bit mask when there are at most 128 units (no allocation per edge), else a set.
trait Marks: Clone + Eq + std::hash::Hash {
    fn none(k: usize) -> Self;
    fn has(&self, u: usize) -> bool;
    fn with(&self, u: usize) -> Self;
    /// Every unit of `other` is in `self`.
    fn covers(&self, other: &Self) -> bool;
    fn to_set(&self, k: usize) -> EventSet;
    /// The mask, when `Self` is one.
    fn mask(&self) -> Option<u128>;
}

impl Marks for u128 {
    fn none(_: usize) -> Self {
        0
    }
    fn has(&self, u: usize) -> bool {
        self & (1 << u) != 0
    }
    fn with(&self, u: usize) -> Self {
        self | (1 << u)
    }
    fn covers(&self, other: &Self) -> bool {
        other & !self == 0
    }
    fn to_set(&self, k: usize) -> EventSet {
        let mut set = EventSet::empty(k);
        let mut rest = *self;
        while rest != 0 {
            set.insert(rest.trailing_zeros() as usize);
            rest &= rest - 1;
        }
        set
    }
    fn mask(&self) -> Option<u128> {
        Some(*self)
    }
}

impl Marks for EventSet {
    fn none(k: usize) -> Self {
        EventSet::empty(k)
    }
    fn has(&self, u: usize) -> bool {
        self.contains(u)
    }
    fn with(&self, u: usize) -> Self {
        let mut s = self.clone();
        s.insert(u);
        s
    }
    fn covers(&self, other: &Self) -> bool {
        other.is_subset(self)
    }
    fn to_set(&self, _: usize) -> EventSet {
        self.clone()
    }
    fn mask(&self) -> Option<u128> {
        None
    }
}

/// A set of at most 128 units as a mask.
fn mask_of(set: &EventSet) -> u128 {
    set.iter().fold(0u128, |m, u| m | (1 << u))
}

/// A unit's effect on a value: the value it leaves and its finding (None: it cannot be
/// placed on that value).
type Effect = Option<(i64, Option<Rc<str>>)>;

/// The states of an object and their edges, as built.
struct Explored {
    nodes: Vec<Node>,
    edges: Vec<Vec<Edge>>,
    masks: Option<Vec<u128>>,
}

/// Every state reachable from the initial value `init` by placing units whose static
/// predecessors (`preds`) are placed, one at a time, in breadth-first order of the number of
/// units placed; `effect` gives a unit's value and finding on a value (None: it cannot be
/// placed there).
fn explore_states<M: Marks, E>(
    k: usize,
    init: i64,
    preds: &[M],
    effect: &mut dyn FnMut(usize, i64) -> Effect,
    max_nodes: usize,
    check: &mut dyn FnMut() -> Result<(), E>,
    name: &str,
) -> Result<Explored, BuildError<E>> {
    let start = (M::none(k), init, M::none(k));
    let mut keys = vec![start.clone()];
    let mut index: rustc_hash::FxHashMap<(M, i64, M), usize> = Default::default();
    index.insert(start, 0);
    let mut edges: Vec<Vec<Edge>> = vec![Vec::new()];
    let mut next = 0;
    while next < keys.len() {
        let (placed, value, ubs) = keys[next].clone();
        for (u, before) in preds.iter().enumerate() {
            if placed.has(u) || !placed.covers(before) {
                continue;
            }
            let Some((to_value, ub)) = effect(u, value) else { continue };
            let key = (placed.with(u), to_value, if ub.is_some() { ubs.with(u) } else { ubs.clone() });
            let to = match index.get(&key) {
                Some(&t) => t,
                None => {
                    if keys.len() >= max_nodes {
                        return Err(BuildError::TooManyStates(TooManyStates { object: name.to_string(), limit: max_nodes }));
                    }
                    if keys.len().is_multiple_of(STATES_PER_CHECK) {
                        check().map_err(BuildError::Stopped)?;
                    }
                    keys.push(key.clone());
                    edges.push(Vec::new());
                    index.insert(key, keys.len() - 1);
                    keys.len() - 1
                }
            };
            edges[next].push(Edge { unit: u, to, ub });
        }
        next += 1;
    }
    drop(index);
    let masks = keys.iter().map(|(placed, _, _)| placed.mask()).collect::<Option<Vec<u128>>>();
    let nodes = keys.into_iter().map(|(placed, value, ub)| Node { placed: placed.to_set(k), value, ub: ub.to_set(k) }).collect();
    Ok(Explored { nodes, edges, masks })
}

impl Core {
    fn of(states: Explored, k: usize) -> Core {
        let Explored { nodes, edges, masks } = states;
        // Nodes were created in breadth-first order of the number of units placed, and every
        // edge goes to a node with one more unit, created after every node with fewer: creation
        // order is a topological order, which the sweeps of `forward_sweep` and
        // `backward_sweep` rely on.
        debug_assert!(edges.iter().enumerate().all(|(a, es)| es.iter().all(|e| e.to > a)));
        let m = nodes.len();
        let mut back: Vec<Vec<u32>> = vec![Vec::new(); m];
        for (a, es) in edges.iter().enumerate() {
            for e in es {
                back[e.to].push(a as u32);
            }
        }
        let finals: Vec<usize> = (0..m).filter(|&a| nodes[a].placed.len() == k).collect();
        Core { nodes: Rc::new(nodes), edges: Rc::new(edges), back: Rc::new(back), finals: Rc::new(finals), masks: masks.map(Rc::new) }
    }
}

/// Whether read `r` of an object may read the value `v`, and the undefined behaviour it has
/// there (None: it may not).
fn read_accepts(s: &EventStructure, r: usize, v: i64) -> Option<Option<String>> {
    let ev = &s.events;
    match ev[r].mb_op {
        Some(op) => {
            let eff = op.apply(v);
            ev[r].mb_result.is_none_or(|want| want == eff.result).then_some(eff.ub)
        }
        // An ordinary load of the object whose value is only shown: any state; reading a valid
        // object with an ordinary instruction is M2.
        None if s.symbolic_reads[r] => Some(MbState::decode(v).map(|_| {
            "M2: an ordinary load reads a valid mbarrier object (PTX ISA §9.7.13.15: only mbarrier instructions may access it)".to_string()
        })),
        None => (ev[r].value == v).then_some(None),
    }
}

/// Groups of at least two updates that nothing tells apart: the same operation and observed
/// result, the same static predecessors and successors among the object's units (so no two of
/// a group are ordered), each group in index order.
fn interchangeable_units(s: &EventStructure, units: &[Unit], preds: &[EventSet]) -> Vec<Vec<usize>> {
    let ev = &s.events;
    let k = units.len();
    let mut succs = vec![Vec::new(); k];
    for (u, before) in preds.iter().enumerate() {
        for v in before.iter() {
            succs[v].push(u);
        }
    }
    type Key = (MbUpdate, Option<i64>, Vec<usize>, Vec<usize>);
    let mut groups: rustc_hash::FxHashMap<Key, Vec<usize>> = Default::default();
    for (u, unit) in units.iter().enumerate() {
        let Some(op) = unit.read.and_then(|r| ev[r].mb_op) else { continue };
        let result = unit.read.and_then(|r| ev[r].mb_result).filter(|_| matches!(op, MbUpdate::Arrive { .. }));
        groups.entry((op, result, preds[u].iter().collect(), succs[u].clone())).or_default().push(u);
    }
    let mut out: Vec<Vec<usize>> = groups.into_values().filter(|g| g.len() >= 2).collect();
    out.sort();
    out
}

impl ObjectGraph {
    /// Build the graph of the object at physical location `p`. `order` is the static order the
    /// object's updates and reads must respect (program order, issue order and the order inside
    /// async operations, transitively closed); `forced` holds pairs of writes every consistent
    /// execution has in co (the model's, before any choice: `search::bounds`), which order
    /// the updates as well. At most `max_nodes` states are built; `check` is called every
    /// [`STATES_PER_CHECK`] states and stops the construction with its error.
    ///
    /// With `chain`, updates that nothing tells apart (the same operation and observed result,
    /// the same static predecessors and successors: the arrivals of the lanes of a warp on one
    /// phase) are placed in one order, their index order, instead of every order: L of them
    /// then make L + 1 states, not 2^L. Every history of the object has one with the same
    /// values at the same positions and the same placed sets where no group is partly placed
    /// (the k-th update of a group goes where any k-th went). It is exact when no read reads a
    /// state with a group partly placed and no update of a group has undefined behaviour,
    /// which [`ObjectGraph::chaining_is_exact`] tells; the caller builds the graph again without
    /// `chain` where it is not.
    #[allow(clippy::too_many_arguments)]
    pub fn build<E>(
        s: &EventStructure,
        p: usize,
        order: &Relation,
        forced: &Relation,
        chain: bool,
        max_nodes: usize,
        check: &mut dyn FnMut() -> Result<(), E>,
    ) -> Result<ObjectGraph, BuildError<E>> {
        let ev = &s.events;
        let init =
            (0..s.n()).find(|&i| ev[i].kind == EventKind::Init && ev[i].physical == Some(p)).expect("every location has an initial write");
        let rmw = &s.relations["rmw"];
        let mut units = Vec::new();
        let mut reads = Vec::new();
        for (i, e) in ev.iter().enumerate() {
            if e.physical != Some(p) || i == init {
                continue;
            }
            match (e.is_write(), rmw.predecessors(i).first().copied()) {
                (true, Some(r)) => units.push(Unit { read: Some(r), write: i }),
                (true, None) => units.push(Unit { read: None, write: i }),
                (false, _) if rmw.successors(i).is_empty() => reads.push(i),
                _ => {}
            }
        }
        let k = units.len();
        let events_of = |u: &Unit| [u.read, Some(u.write)];
        let before_unit = |a: &Unit, b: &Unit| {
            forced.contains(a.write, b.write)
                || events_of(a).iter().flatten().any(|&x| events_of(b).iter().flatten().any(|&y| order.contains(x, y)))
        };
        // Static predecessors of each unit, as unit sets.
        let mut preds: Vec<EventSet> = (0..k).map(|u| EventSet::from_fn(k, |v| v != u && before_unit(&units[v], &units[u]))).collect();
        let chained = if chain { interchangeable_units(s, &units, &preds) } else { Vec::new() };
        for group in &chained {
            for pair in group.windows(2) {
                preds[pair[1]].insert(pair[0]);
            }
        }
        let name = s.program.physical_name(p);
        // The effect of each unit on each value, once: most states of a pipeline share a few
        // values, and an effect with undefined behaviour spells out its finding.
        let mut effects: rustc_hash::FxHashMap<(usize, i64), Effect> = Default::default();
        let mut effect = |u: usize, value: i64| -> Effect {
            effects
                .entry((u, value))
                .or_insert_with(|| {
                    let unit = &units[u];
                    match unit.read.and_then(|r| ev[r].mb_op) {
                        Some(op) => {
                            let eff = op.apply(value);
                            let r = unit.read.expect("an update has a read");
                            // The phase an arrive returned to its thread must be the one it sees here.
                            if let (Some(want), MbUpdate::Arrive { .. }) = (ev[r].mb_result, op) {
                                if want != eff.result {
                                    return None;
                                }
                            }
                            Some((eff.write.unwrap_or(value), eff.ub.map(Rc::from)))
                        }
                        // An ordinary write (or an RMW of an ordinary instruction) leaves its value.
                        None => Some((ev[unit.write].value, None)),
                    }
                })
                .clone()
        };
        let key: CoreKey = (
            ev[init].value,
            units
                .iter()
                .map(|u| {
                    let op = u.read.and_then(|r| ev[r].mb_op);
                    let result = u.read.and_then(|r| ev[r].mb_result).filter(|_| matches!(op, Some(MbUpdate::Arrive { .. })));
                    (op, result, if op.is_none() { ev[u.write].value } else { 0 })
                })
                .collect(),
            preds.iter().map(|p| p.iter().collect()).collect(),
        );
        let shared = SHARED.with(|s| s.borrow().0.get(&key).cloned());
        let fresh = shared.is_none();
        let core = match shared {
            Some(core) => core,
            None => {
                let states = if k <= 128 {
                    let preds: Vec<u128> = preds.iter().map(mask_of).collect();
                    explore_states::<u128, E>(k, ev[init].value, &preds, &mut effect, max_nodes, check, &name)?
                } else {
                    explore_states::<EventSet, E>(k, ev[init].value, &preds, &mut effect, max_nodes, check, &name)?
                };
                let core = Rc::new(Core::of(states, k));
                SHARED.with(|s| {
                    let (map, held) = &mut *s.borrow_mut();
                    if *held + core.nodes.len() > SHARED_STATES {
                        map.clear();
                        *held = 0;
                    }
                    *held += core.nodes.len();
                    map.insert(key, Rc::clone(&core));
                });
                core
            }
        };
        let reads_before: Vec<Vec<usize>> =
            reads.iter().map(|&r| (0..reads.len()).filter(|&j| order.contains(reads[j], r)).collect()).collect();
        let reads_prev = reads_before
            .iter()
            .map(|before| before.iter().copied().filter(|&i| !before.iter().any(|&k| reads_before[k].contains(&i))).collect())
            .collect();
        let reads_after = reads.iter().map(|&r| (0..reads.len()).filter(|&j| order.contains(r, reads[j])).collect()).collect();
        let mut g = ObjectGraph {
            physical: p,
            name,
            init,
            units,
            reads,
            read_options: Vec::new(),
            reads_before,
            reads_after,
            nodes: Rc::clone(&core.nodes),
            edges: Rc::clone(&core.edges),
            back: Rc::clone(&core.back),
            rows: RefCell::default(),
            reads_prev,
            finals: Rc::clone(&core.finals),
            masks: core.masks.clone(),
            built_states: if fresh { core.nodes.len() } else { 0 },
            chained,
        };
        g.read_options = g.reads.iter().map(|&r| g.options_of(s, order, r)).collect();
        Ok(g)
    }

    /// The units `order` puts before read `r` (`before`) or after it.
    fn units_ordered(&self, order: &Relation, r: usize, before: bool) -> EventSet {
        EventSet::from_fn(self.units.len(), |u| {
            let unit = &self.units[u];
            [unit.read, Some(unit.write)].into_iter().flatten().any(|x| if before { order.contains(x, r) } else { order.contains(r, x) })
        })
    }

    /// The nodes read `r` may read: its static predecessors placed and its static successors
    /// not (a read can neither miss an update of its own thread before it nor see one after it:
    /// coherence per location), and a value that gives the result its thread saw.
    fn options_of(&self, s: &EventStructure, order: &Relation, r: usize) -> Vec<ReadOption> {
        let (must_before, must_after) = (self.units_ordered(order, r, true), self.units_ordered(order, r, false));
        let mut out = Vec::new();
        // Whether a value gives the read its result, and the undefined behaviour of reading it:
        // once per value, not per state (many states share a value, and a finding is a string).
        let mut by_value: rustc_hash::FxHashMap<i64, Option<Option<String>>> = Default::default();
        let masks = self.masks.as_ref().map(|m| (m, mask_of(&must_before), mask_of(&must_after)));
        for (n, node) in self.nodes.iter().enumerate() {
            let between = match masks {
                Some((m, before, after)) => m[n] & before == before && m[n] & after == 0,
                None => must_before.is_subset(&node.placed) && node.placed.is_disjoint(&must_after),
            };
            if !between {
                continue;
            }
            let v = node.value;
            let found = by_value.entry(v).or_insert_with(|| read_accepts(s, r, v));
            if let Some(ub) = found {
                out.push(ReadOption { node: n, ub: ub.clone() });
            }
        }
        out
    }

    /// Whether the order [`ObjectGraph::build`] gave its interchangeable units loses no
    /// history that matters: no update of a group has undefined behaviour (which update has
    /// it would depend on the order), and no read other than `final_reads` (which read the
    /// state with every unit placed) may read a state with a group partly placed. A read is
    /// judged by its value and by the units outside the groups its thread orders before or
    /// after it: within a group, another order could place the very units its thread orders
    /// around it, and the values with k units of a group placed are the same in every order.
    pub fn chaining_is_exact(&self, s: &EventStructure, order: &Relation, final_reads: &[usize]) -> bool {
        if self.chained.is_empty() {
            return true;
        }
        let k = self.units.len();
        let grouped = EventSet::from_iter_in(k, self.chained.iter().flatten().copied());
        if self.edges.iter().flatten().any(|e| e.ub.is_some() && grouped.contains(e.unit)) {
            return false;
        }
        let groups: Vec<EventSet> = self.chained.iter().map(|g| EventSet::from_iter_in(k, g.iter().copied())).collect();
        let partly = |placed: &EventSet| {
            groups.iter().any(|g| {
                let n = placed.intersection(g).len();
                n > 0 && n < g.len()
            })
        };
        let outside = |r: usize, before: bool| self.units_ordered(order, r, before).difference(&grouped);
        let reads: Vec<(usize, EventSet, EventSet)> =
            self.reads.iter().filter(|r| !final_reads.contains(r)).map(|&r| (r, outside(r, true), outside(r, false))).collect();
        let mut accepted: rustc_hash::FxHashMap<(usize, i64), bool> = Default::default();
        for node in self.nodes.iter().filter(|n| partly(&n.placed)) {
            for (r, before, after) in &reads {
                if before.is_subset(&node.placed)
                    && node.placed.is_disjoint(after)
                    && *accepted.entry((*r, node.value)).or_insert_with(|| read_accepts(s, *r, node.value).is_some())
                {
                    return false;
                }
            }
        }
        true
    }

    /// Every node some node of `from` reaches (`from` included): one sweep in topological order.
    fn forward_sweep(&self, from: &EventSet) -> EventSet {
        self.forward_sweep_to(from, self.nodes.len().saturating_sub(1))
    }

    /// [`ObjectGraph::forward_sweep`], exact for the nodes up to `last` (nodes after it are
    /// left out or in as the sweep happens to leave them: callers intersect with a set that
    /// ends there).
    fn forward_sweep_to(&self, from: &EventSet, last: usize) -> EventSet {
        let mut out = from.clone();
        // Edges go to higher numbers: the nodes met in increasing order are final when met.
        let mut at = out.next_from(0);
        while let Some(a) = at.filter(|&a| a <= last) {
            for e in &self.edges[a] {
                out.insert(e.to);
            }
            at = out.next_from(a + 1);
        }
        out
    }

    /// Every node that reaches some node of `to` (`to` included): one sweep in reverse
    /// topological order.
    fn backward_sweep(&self, to: &EventSet) -> EventSet {
        self.backward_sweep_from(to, 0)
    }

    /// [`ObjectGraph::backward_sweep`], exact for the nodes from `first` on.
    fn backward_sweep_from(&self, to: &EventSet, first: usize) -> EventSet {
        let mut out = to.clone();
        let mut at = out.prev_from(usize::MAX);
        while let Some(b) = at.filter(|&b| b >= first) {
            for &a in &self.back[b] {
                out.insert(a as usize);
            }
            at = b.checked_sub(1).and_then(|b| out.prev_from(b));
        }
        out
    }

    /// The row of node `a`: the nodes it reaches (`forward`) or that reach it, computed once and
    /// cached.
    fn row(&self, a: usize, forward: bool) -> Rc<EventSet> {
        let cached = {
            let rows = self.rows.borrow();
            if forward { rows.forward.get(&a) } else { rows.backward.get(&a) }.cloned()
        };
        if let Some(r) = cached {
            return r;
        }
        let one = EventSet::from_iter_in(self.nodes.len(), [a]);
        let r = Rc::new(if forward { self.forward_sweep(&one) } else { self.backward_sweep(&one) });
        let mut rows = self.rows.borrow_mut();
        let size = self.nodes.len().div_ceil(8) + 64;
        if rows.bytes + size > ROW_CACHE_BYTES {
            *rows = RowCache::default();
        }
        rows.bytes += size;
        if forward { &mut rows.forward } else { &mut rows.backward }.insert(a, Rc::clone(&r));
        r
    }

    /// Whether node `b` can be reached from node `a` (a path places more units after `a`).
    pub fn reaches(&self, a: usize, b: usize) -> bool {
        if a == b {
            return true;
        }
        if b < a {
            return false;
        }
        // A row already computed for either end answers; otherwise `a`'s row is computed.
        if let Some(r) = self.rows.borrow().backward.get(&b) {
            return r.contains(a);
        }
        self.row(a, true).contains(b)
    }

    /// The index of read event `r` in `reads`.
    pub fn read_index(&self, r: usize) -> Option<usize> {
        self.reads.iter().position(|&x| x == r)
    }

    /// The nodes up to `last` some node of `from` reaches (others may be in it or not).
    fn reached_from_until(&self, from: &EventSet, last: usize) -> EventSet {
        if from.len_exceeds(ROWS_PER_QUERY) {
            return self.forward_sweep_to(from, last);
        }
        self.reached_from(from)
    }

    /// The nodes from `first` on that reach some node of `to` (others may be in it or not).
    fn reaching_after(&self, to: &EventSet, first: usize) -> EventSet {
        if to.len_exceeds(ROWS_PER_QUERY) {
            return self.backward_sweep_from(to, first);
        }
        self.reaching(to)
    }

    /// The nodes some node of `from` reaches.
    pub fn reached_from(&self, from: &EventSet) -> EventSet {
        if from.len_exceeds(ROWS_PER_QUERY) {
            return self.forward_sweep(from);
        }
        let mut out = EventSet::empty(self.nodes.len());
        for a in from.iter() {
            out.union_with(&self.row(a, true));
        }
        out
    }

    /// The nodes that reach some node of `to`.
    pub fn reaching(&self, to: &EventSet) -> EventSet {
        if to.len_exceeds(ROWS_PER_QUERY) {
            return self.backward_sweep(to);
        }
        let mut out = EventSet::empty(self.nodes.len());
        for b in to.iter() {
            out.union_with(&self.row(b, false));
        }
        out
    }

    /// Narrow `sets` (per read, the nodes it may still read) by the order of reads within their
    /// threads: each option of a later read must be reachable from some option of the earlier
    /// one, and the other way round. Reachability is transitive, so supporting each read by its
    /// immediate predecessors, until nothing changes, supports it by all of them. None when
    /// some read is left without an option; else whether anything was narrowed.
    pub fn narrow_by_read_order(&self, sets: &mut [EventSet]) -> Option<bool> {
        let mut narrowed = false;
        loop {
            let mut again = false;
            for j in 0..self.reads.len() {
                for &i in &self.reads_prev[j] {
                    // Nodes are numbered in a topological order: only the nodes up to the last
                    // option of the later read, and from the first of the earlier one, matter.
                    let later = sets[j].intersection(&self.reached_from_until(&sets[i], sets[j].prev_from(usize::MAX).unwrap_or(0)));
                    let earlier = sets[i].intersection(&self.reaching_after(&later, sets[i].next_from(0).unwrap_or(0)));
                    if later.is_empty() || earlier.is_empty() {
                        return None;
                    }
                    again |= later != sets[j] || earlier != sets[i];
                    sets[j] = later;
                    sets[i] = earlier;
                }
            }
            if !again {
                return Some(narrowed);
            }
            narrowed = true;
        }
    }

    /// Whether the reads of the object alone can be given states: every read some option
    /// (a final state for the reads in `final_reads`: the polls of a run that spins forever),
    /// in the order of the reads within their threads: those options, or None when no
    /// candidate of the structure exists, whatever the other objects and the model say.
    pub fn reads_can_be_placed(&self, final_reads: &[usize]) -> Option<Vec<EventSet>> {
        let m = self.nodes.len();
        let finals = EventSet::from_iter_in(m, self.finals.iter().copied());
        let mut sets: Vec<EventSet> = self
            .reads
            .iter()
            .zip(&self.read_options)
            .map(|(r, opts)| {
                let set = EventSet::from_iter_in(m, opts.iter().map(|o| o.node));
                if final_reads.contains(r) {
                    set.intersection(&finals)
                } else {
                    set
                }
            })
            .collect();
        if sets.iter().any(EventSet::is_empty) {
            return None;
        }
        self.narrow_by_read_order(&mut sets)?;
        Some(sets)
    }

    /// Whether `node` lies on one path with every node of `chosen` (sorted by units placed).
    pub fn compatible(&self, chosen: &[usize], node: usize) -> bool {
        chosen.iter().all(|&c| self.reaches(c, node) || self.reaches(node, c))
    }

    /// The nodes that lie on one path with every node of `chosen`.
    pub fn compatible_nodes(&self, chosen: &[usize]) -> EventSet {
        let mut out = EventSet::full(self.nodes.len());
        for &c in chosen {
            out.intersect_with(&self.row(c, true).union(&self.row(c, false)));
        }
        out
    }

    /// Whether read `i` may read `node` given the nodes other reads of the object read
    /// (`read_node(j)`, None when undecided): a read reads a state at or after the state every
    /// read ordered before it reads, and at or before the state of every read ordered after it.
    pub fn read_order_allows(&self, i: usize, node: usize, read_node: &dyn Fn(usize) -> Option<usize>) -> bool {
        self.reads_before[i].iter().all(|&j| read_node(j).is_none_or(|m| self.reaches(m, node)))
            && self.reads_after[i].iter().all(|&j| read_node(j).is_none_or(|m| self.reaches(node, m)))
    }

    /// A path of units from node `from` to node `to` (which `from` reaches), choosing the
    /// lowest-numbered unit first, whose placement respects `after`: `(a, b)` in `after` means
    /// unit `a` must be placed before unit `b`. None when no path respects it.
    pub fn path(&self, from: usize, to: usize, after: &[(usize, usize)]) -> Option<Vec<usize>> {
        let mut out = Vec::new();
        self.path_from(from, to, after, &mut out).then_some(out)
    }

    fn path_from(&self, here: usize, to: usize, after: &[(usize, usize)], out: &mut Vec<usize>) -> bool {
        if here == to {
            return true;
        }
        let placed = &self.nodes[here].placed;
        let reaching_to = self.row(to, false);
        let mut options: Vec<&Edge> = self.edges[here].iter().filter(|e| reaching_to.contains(e.to)).collect();
        options.sort_by_key(|e| e.unit);
        for e in options {
            if after.iter().any(|&(a, b)| b == e.unit && !placed.contains(a)) {
                continue;
            }
            out.push(e.unit);
            if self.path_from(e.to, to, after, out) {
                return true;
            }
            out.pop();
        }
        false
    }

    /// Every path from `from` to `to`, at most `limit` of them.
    pub fn paths(&self, from: usize, to: usize, limit: usize) -> Vec<Vec<usize>> {
        let mut out = Vec::new();
        let mut cur = Vec::new();
        self.all_paths(from, to, limit, &mut cur, &mut out);
        out
    }

    fn all_paths(&self, here: usize, to: usize, limit: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if out.len() >= limit {
            return;
        }
        if here == to {
            out.push(cur.clone());
            return;
        }
        let reaching_to = self.row(to, false);
        for e in &self.edges[here] {
            if reaching_to.contains(e.to) {
                cur.push(e.unit);
                self.all_paths(e.to, to, limit, cur, out);
                cur.pop();
            }
        }
    }

    /// Follow `units` from node `from`: the nodes visited (excluding `from`) with the edge taken.
    pub fn walk<'g>(&'g self, from: usize, units: &'g [usize]) -> impl Iterator<Item = &'g Edge> + 'g {
        let mut here = from;
        units.iter().map(move |&u| {
            let e = self.edges[here].iter().find(|e| e.unit == u).expect("a path follows the graph's edges");
            here = e.to;
            e
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Limits;
    use crate::diag::SourceFile;
    use crate::exec::trace::explore;

    fn graphs(src: &str) -> Vec<ObjectGraph> {
        let file = SourceFile::new("t.litmus", src);
        let ast = crate::litmus::parse(&file).unwrap();
        let program = crate::program::lower(&ast, &file).unwrap();
        let (_, per_thread) = explore(&program, &Limits::default(), false).unwrap();
        let traces: Vec<_> = per_thread.iter().map(|t| &t.traces[0]).collect();
        let s = EventStructure::build(&program, &Default::default(), &traces);
        let order = s.relations["po"].union(&s.relations["iss"]).union(&s.relations["intra"]).plus();
        let mut go_on = || Ok::<(), ()>(());
        objects(&s)
            .into_iter()
            .map(|p| ObjectGraph::build(&s, p, &order, &Relation::empty(s.n()), false, 10_000, &mut go_on).unwrap())
            .collect()
    }

    /// The graphs of each run of the last thread (the others' first runs), built with `chain`,
    /// and whether chaining them was exact.
    fn graphs_per_last_run(src: &str, chain: bool) -> Vec<(Vec<ObjectGraph>, bool)> {
        let file = SourceFile::new("t.litmus", src);
        let ast = crate::litmus::parse(&file).unwrap();
        let program = crate::program::lower(&ast, &file).unwrap();
        let (_, per_thread) = explore(&program, &Limits::default(), false).unwrap();
        let (last, first) = per_thread.split_last().unwrap();
        last.traces
            .iter()
            .map(|run| {
                let traces: Vec<_> = first.iter().map(|t| &t.traces[0]).chain([run]).collect();
                let s = EventStructure::build(&program, &Default::default(), &traces);
                let order = s.relations["po"].union(&s.relations["iss"]).union(&s.relations["intra"]).plus();
                let mut go_on = || Ok::<(), ()>(());
                let gs: Vec<ObjectGraph> = objects(&s)
                    .into_iter()
                    .map(|p| ObjectGraph::build(&s, p, &order, &Relation::empty(s.n()), chain, 10_000, &mut go_on).unwrap())
                    .collect();
                let exact = gs.iter().all(|g| g.chaining_is_exact(&s, &order, &[]));
                (gs, exact)
            })
            .collect()
    }

    const FOUR_ARRIVALS_AND_AN_AWAIT: &str = "PTX t\n{ bar @ shared cta 0 mbarrier(4); }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 | P2@cta 0,gpu 0 | P3@cta 0,gpu 0 | P4@cta 0,gpu 0 ;\n mbarrier.arrive.shared::cta.b64 _, [bar] | mbarrier.arrive.shared::cta.b64 _, [bar] | mbarrier.arrive.shared::cta.b64 _, [bar] | mbarrier.arrive.shared::cta.b64 _, [bar] | LW: ;\n | | | | mbarrier.try_wait.parity.shared::cta.b64 p, [bar], 0 ;\n | | | | @!p bra LW ;\nexists (0 == 0)\n";

    #[test]
    fn interchangeable_arrivals_are_placed_in_one_order() {
        // Four arrivals nothing tells apart: 5 states in one order instead of 2^4, and the
        // await reads the same values either way (only the completed phase).
        let chained = graphs_per_last_run(FOUR_ARRIVALS_AND_AN_AWAIT, true);
        let plain = graphs_per_last_run(FOUR_ARRIVALS_AND_AN_AWAIT, false);
        assert_eq!(chained.len(), 1);
        let ((c, exact), (p, _)) = (&chained[0], &plain[0]);
        assert!(*exact);
        assert_eq!(c[0].chained, vec![vec![0, 1, 2, 3]]);
        assert!(p[0].chained.is_empty());
        assert_eq!((c[0].nodes.len(), p[0].nodes.len()), (5, 16));
        let values = |g: &ObjectGraph| -> Vec<i64> {
            let mut v: Vec<i64> = g.read_options[0].iter().map(|o| g.nodes[o.node].value).collect();
            v.sort();
            v.dedup();
            v
        };
        assert_eq!(values(&c[0]), values(&p[0]));
        assert_eq!(c[0].paths(0, c[0].finals[0], 100).len(), 1);
        assert_eq!(p[0].paths(0, p[0].finals[0], 100).len(), 24);
    }

    #[test]
    fn a_read_of_a_partly_placed_group_keeps_every_order() {
        // A test_wait that may return False can read the barrier with some arrivals placed:
        // which ones is then a difference the one order would hide, so chaining is not exact.
        let src = FOUR_ARRIVALS_AND_AN_AWAIT.replace(
            "LW: ;\n | | | | mbarrier.try_wait.parity.shared::cta.b64 p, [bar], 0 ;\n | | | | @!p bra LW ;",
            "mbarrier.test_wait.parity.shared::cta.b64 p, [bar], 0 ;",
        );
        let runs = graphs_per_last_run(&src, true);
        let exact: Vec<bool> = runs.iter().map(|(_, e)| *e).collect();
        assert!(exact.contains(&false), "{exact:?}");
    }

    #[test]
    fn identical_arrives_share_states() {
        // Three threads arrive once each on a barrier expecting 3: 3! orders, but only the 2^3
        // subsets of arrivals are states.
        let g = graphs(
            "PTX t\n{ bar @ shared cta 0 mbarrier(3); }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 | P2@cta 0,gpu 0 ;\n mbarrier.arrive.shared::cta.b64 _, [bar] | mbarrier.arrive.shared::cta.b64 _, [bar] | mbarrier.arrive.shared::cta.b64 _, [bar] ;\nexists (0 == 0)\n",
        );
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].units.len(), 3);
        assert_eq!(g[0].nodes.len(), 8);
        assert_eq!(g[0].finals.len(), 1);
        let f = g[0].finals[0];
        let s = MbState::decode(g[0].nodes[f].value).unwrap();
        assert_eq!((s.phase, s.pending), (1, 3), "the third arrival completes phase 0");
        assert_eq!(g[0].paths(0, f, 100).len(), 6, "every order is a path");
        assert!(g[0].path(0, f, &[]).is_some());
    }

    #[test]
    fn structures_with_the_same_updates_share_their_states_within_a_decision() {
        let src = "PTX t\n{ bar @ shared cta 0 mbarrier(2); }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n mbarrier.arrive.shared::cta.b64 _, [bar] | mbarrier.arrive.shared::cta.b64 _, [bar] ;\nexists (0 == 0)\n";
        forget_shared_states();
        let first = graphs(src);
        let again = graphs(src);
        assert_eq!(first[0].built_states, first[0].nodes.len(), "built the first time");
        assert_eq!(again[0].built_states, 0, "shared the second time");
        assert!(Rc::ptr_eq(&first[0].nodes, &again[0].nodes));
        forget_shared_states();
        assert_eq!(graphs(src)[0].built_states, first[0].nodes.len(), "built again once forgotten");
    }

    #[test]
    fn sparse_reachability_matches_the_closure_of_the_edges() {
        // Two laps of a stage with two copies on one full barrier and nothing ordering the
        // second lap's completions after the first phase: every subset of completions is a
        // state, the shape that made dense matrices explode.
        let g = graphs(
            "PTX t\n{ ga[16] = 1; gb[16] = 2; a[16] @ shared cta 0; b[16] @ shared cta 0; full @ shared cta 0 mbarrier(1); }\n P0@cta 0,gpu 0 ;\n mbarrier.arrive.expect_tx.shared::cta.b64 _, [full], 32 ;\n cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [a], [ga], 16, [full] ;\n cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [b], [gb], 16, [full] ;\n mbarrier.arrive.expect_tx.shared::cta.b64 _, [full], 32 ;\n cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [a], [ga], 16, [full] ;\n cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [b], [gb], 16, [full] ;\nexists (0 == 0)\n",
        );
        let g = &g[0];
        let m = g.nodes.len();
        assert!(m > 10, "{m} states");
        // The closure of the edges, node by node, by depth-first search.
        let closure: Vec<EventSet> = (0..m)
            .map(|a| {
                let mut seen = EventSet::empty(m);
                let mut stack = vec![a];
                while let Some(x) = stack.pop() {
                    if !seen.contains(x) {
                        seen.insert(x);
                        stack.extend(g.edges[x].iter().map(|e| e.to));
                    }
                }
                seen
            })
            .collect();
        for (a, row) in closure.iter().enumerate() {
            for b in 0..m {
                assert_eq!(g.reaches(a, b), row.contains(b), "{a} -> {b}");
            }
        }
        // Small sets go through rows, large ones through sweeps: both agree with the closure.
        for set in [vec![0], vec![1, m - 1], (0..m).step_by(2).collect(), (0..m).collect::<Vec<_>>()] {
            let from = EventSet::from_iter_in(m, set.iter().copied());
            let fwd = EventSet::from_fn(m, |b| set.iter().any(|&a| closure[a].contains(b)));
            let bwd = EventSet::from_fn(m, |a| set.iter().any(|&b| closure[a].contains(b)));
            assert_eq!(g.reached_from(&from), fwd, "{set:?}");
            assert_eq!(g.reaching(&from), bwd, "{set:?}");
        }
        let chosen = [1];
        assert_eq!(g.compatible_nodes(&chosen), EventSet::from_fn(m, |x| closure[1].contains(x) || closure[x].contains(1)));
    }

    #[test]
    fn program_order_constrains_the_histories() {
        // One thread arrives twice: one order only.
        let g = graphs(
            "PTX t\n{ bar @ shared cta 0 mbarrier(2); }\n P0@cta 0,gpu 0 ;\n mbarrier.arrive.shared::cta.b64 _, [bar] ;\n mbarrier.arrive.shared::cta.b64 _, [bar] ;\nexists (0 == 0)\n",
        );
        assert_eq!(g[0].nodes.len(), 3);
        assert_eq!(g[0].paths(0, g[0].finals[0], 100).len(), 1);
    }

    #[test]
    fn waits_read_states_that_give_their_result() {
        // The wait returns True (it is an await), so it reads a state where phase 0 completed:
        // only after the one expected arrival.
        let g = graphs(
            "PTX t\n{ bar @ shared cta 0 mbarrier(1); }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n mbarrier.arrive.shared::cta.b64 _, [bar] | LW: ;\n | mbarrier.try_wait.parity.shared::cta.b64 p, [bar], 0 ;\n | @!p bra LW ;\nexists (0 == 0)\n",
        );
        assert_eq!(g[0].reads.len(), 1);
        let options: Vec<usize> = g[0].read_options[0].iter().map(|o| o.node).collect();
        assert_eq!(options, *g[0].finals);
    }
}
