//! A necessary condition for a combination of runs to hang, checked over every mbarrier object
//! at once, from the model's thin-air check (see [`ThinAirFilter`]).
//!
//! The per-object filter (`poll_filter`) looks at one object at a time, so it keeps
//! combinations in which each object's history exists on its own but the histories feed each
//! other in a circle: a producer passes its wait on `empty` thanks to a consumer's arrival that
//! the consumer only makes after a wait on `full` that the producer's own later arrival
//! completes. Such a circle runs through reads-from edges (every mbarrier update reads its
//! predecessor, every wait the update whose state it sees) and the dependencies inside each run
//! (a spin loop's branch on its wait controls everything after it), so a model that forbids
//! cycles of `rf | data | ctrl` (PTX's NoThinAir) rules it out. The filter is used only when
//! the loaded model has such a check; it adds no promise of its own.

use super::poll_filter::{twins, PollFilter, Step, StepKind};
use crate::cat::CatModel;
use crate::exec::structure::Dependency;
use crate::exec::trace::{ThreadTraces, Trace, TraceOp};
use crate::program::Program;
use crate::relation::Relation;
use rustc_hash::FxHashMap;
use std::rc::Rc;

/// The dependency relations of a check `acyclic (rf | ...)` of the model whose union also holds
/// `data`: the updates of an mbarrier form a chain of reads-from and data edges (each reads
/// its predecessor's state and writes the next one from it), so every update before the state
/// a read sees reaches the read through the union.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ThinAirCheck {
    pub(super) addr: bool,
    pub(super) ctrl: bool,
}

impl ThinAirCheck {
    /// The first check of `model` of the form `acyclic (rf | data | ...)` (through plain
    /// definitions) with `ctrl` or `addr` among its operands; None when the model has none
    /// (or `--skipchecks` and `--through` removed it), and then the filter is not used.
    pub(super) fn of_model(model: &CatModel) -> Option<Self> {
        model.checks().into_iter().find_map(|c| {
            let names = c.acyclic_union?;
            let has = |n: &str| names.iter().any(|x| x == n);
            let check = ThinAirCheck { addr: has("addr"), ctrl: has("ctrl") };
            (has("rf") && has("data") && (check.addr || check.ctrl)).then_some(check)
        })
    }
}

/// An object and the step lists of the runs touching it (run, list id), as `PollFilter`
/// numbers them.
type ObjectKey = (usize, Vec<(usize, usize)>);

/// Per step of an object: for a read with a state, the updates every one of its states holds.
type HeldByReads = Rc<Vec<Option<u128>>>;

/// A step of a run of a combination: (run, index among the run's steps).
type RunStep = (usize, usize);

/// The most entries the filter remembers (views of objects, and their reads' answers).
const MEMO_ENTRIES: usize = 1 << 20;

/// One run's steps on mbarrier objects, in trace order, with the steps each depends on.
struct RunSteps {
    /// (object, position in the run's step list of that object).
    steps: Vec<(usize, usize)>,
    /// `deps[i]`: the earlier steps (indices into `steps`) that step `i` depends on through
    /// the check's dependency relations, transitively within the run.
    deps: Vec<Vec<usize>>,
    /// Per update, its run's earlier updates of its object (which its history places first).
    update_order: Vec<Vec<usize>>,
    /// Per step, how many steps it waits for: its dependencies and, for an update, its run's
    /// earlier updates of its object.
    waits: Vec<usize>,
    /// Per step, the steps that wait for it.
    dependents: Vec<Vec<usize>>,
}

/// Whether the runs of a combination can all take their steps in some order that no cycle of
/// the model's `acyclic (rf | data | ctrl ...)` check forbids, every object's updates forming
/// one history (as in `poll_filter`) and every read seeing its result in a state of that
/// history made of updates taken before it.
///
/// In a consistent execution the union is acyclic, so its events have a topological order.
/// Along it, the updates of an object come in the order of its history (each reads its
/// predecessor's write), and a read comes after every update of the state it sees. So at
/// every point of that order the updates taken of each object can be arranged into a
/// history in which every read taken sees its result, a run's reads of one object seeing
/// states in their order (the object is sequential in each run). The filter takes, from
/// nothing, every step whose dependencies are taken and (an update) whose run's earlier updates
/// of its object are taken, or (a read) for which such a state exists among the updates taken;
/// that is monotone, so what it takes contains every prefix of every such order. A combination
/// some step of which (before a run's final polls) is never taken has no consistent execution.
pub(super) struct ThinAirFilter<'p> {
    program: &'p Program,
    check: ThinAirCheck,
    runs: FxHashMap<usize, Rc<RunSteps>>,
    /// Per object and the step lists of its runs (as `PollFilter` numbers them), the object's
    /// steps.
    views: FxHashMap<ObjectKey, Rc<ObjectView>>,
    /// Per view (by address) and the updates taken: the reads that have a state.
    memo: FxHashMap<(usize, u128), u128>,
    /// Per view (by address): its states with every update taken (None: too many), for
    /// [`ThinAirFilter::ordered`], and how many states they hold (at most `GRAPH_STATES`).
    graphs: FxHashMap<usize, Option<Rc<StateGraph>>>,
    graph_states: usize,
    /// Per view (by address) and the updates each read's states must not hold: the updates
    /// every state of each read holds.
    read_memo: FxHashMap<(usize, Vec<u128>), HeldByReads>,
    /// Per thread, the complete run its other runs are prefixes of (see
    /// [`ThinAirFilter::explored`]).
    complete: Vec<Option<Box<Trace>>>,
    /// Per run (by address), its place among its thread's runs, and per thread the first
    /// thread interchangeable with it (itself if none): the names of pairs of runs.
    run_index: FxHashMap<usize, usize>,
    class: Vec<usize>,
    /// Per pair of runs of two threads (by class and place, see [`ThinAirFilter::pair_allows`]):
    /// whether both can take their steps.
    pairs: FxHashMap<(usize, usize, usize, usize), bool>,
    /// Combinations ruled out.
    pub(super) cut: usize,
    /// Runs of the first threads ruled out with every combination starting with them.
    pub(super) cut_start: usize,
}

impl<'p> ThinAirFilter<'p> {
    pub(super) fn new(program: &'p Program, check: ThinAirCheck) -> Self {
        ThinAirFilter {
            program,
            check,
            runs: Default::default(),
            views: Default::default(),
            memo: Default::default(),
            graphs: Default::default(),
            graph_states: 0,
            read_memo: Default::default(),
            complete: Vec::new(),
            run_index: Default::default(),
            class: Vec::new(),
            pairs: Default::default(),
            cut: 0,
            cut_start: 0,
        }
    }

    /// The steps of `tr` (thread `t`) and their dependencies.
    fn run_steps(&self, t: usize, tr: &Trace, lists: &[(usize, Vec<Step>)]) -> RunSteps {
        let n = tr.events.len();
        let words = n.div_ceil(64);
        // The direct dependencies of each event that the check's union holds.
        let mut direct: Vec<Vec<usize>> = vec![Vec::new(); n];
        crate::exec::structure::for_each_dependency(self.program, t, tr, |from, to, kind| {
            let held = match kind {
                Dependency::Addr => self.check.addr,
                Dependency::Data => true,
                Dependency::Ctrl => self.check.ctrl,
            };
            if held && from < to {
                direct[to].push(from);
            }
        });
        // closure[e]: the events e depends on, transitively.
        let mut closure: Vec<Vec<u64>> = Vec::with_capacity(n);
        for deps in &direct {
            let mut set = vec![0u64; words];
            for &j in deps {
                set[j / 64] |= 1 << (j % 64);
                for (w, x) in set.iter_mut().zip(&closure[j]) {
                    *w |= x;
                }
            }
            closure.push(set);
        }
        let contains = |set: &[u64], j: usize| set[j / 64] & (1 << (j % 64)) != 0;
        let mut steps: Vec<(usize, usize, usize)> = Vec::new();
        for (object, list) in lists {
            for (pos, s) in list.iter().enumerate() {
                steps.push((s.index, *object, pos));
            }
        }
        steps.sort_unstable();
        let events_of = |index: usize| -> Vec<usize> { std::iter::once(index).chain(tr.events[index].rmw_partner).collect() };
        // A step is depended on through the value it read: its read (an update's read half).
        let source_of = |index: usize| -> Option<usize> {
            let e = &tr.events[index];
            match e.op {
                TraceOp::Read => Some(index),
                _ => e.rmw_partner,
            }
        };
        let deps: Vec<Vec<usize>> = steps
            .iter()
            .map(|&(index, _, _)| {
                let mine = events_of(index);
                steps
                    .iter()
                    .enumerate()
                    .filter(|&(_, &(other, _, _))| other != index)
                    .filter_map(|(i, &(other, _, _))| {
                        let src = source_of(other)?;
                        mine.iter().any(|&m| contains(&closure[m], src)).then_some(i)
                    })
                    .collect()
            })
            .collect();
        // An update also waits for its run's earlier updates of its object (the history
        // respects the run's order; an async operation's update only its own and its thread's).
        let step_at = |(_, object, pos): (usize, usize, usize)| -> &Step {
            &lists.iter().find(|(p, _)| *p == object).expect("the run's object").1[pos]
        };
        let update_order: Vec<Vec<usize>> = steps
            .iter()
            .enumerate()
            .map(|(i, &me)| {
                let mine = step_at(me);
                if !mine.kind.is_update() {
                    return Vec::new();
                }
                (0..i)
                    .filter(|&j| {
                        let o = step_at(steps[j]);
                        steps[j].1 == me.1 && o.kind.is_update() && (o.agent.is_none() || o.agent == mine.agent)
                    })
                    .collect()
            })
            .collect();
        let waits_for: Vec<Vec<usize>> = deps
            .iter()
            .zip(&update_order)
            .map(|(d, order)| {
                let mut w = d.clone();
                w.extend(order.iter().filter(|j| !d.contains(j)));
                w
            })
            .collect();
        let mut dependents = vec![Vec::new(); steps.len()];
        for (i, w) in waits_for.iter().enumerate() {
            for &j in w {
                dependents[j].push(i);
            }
        }
        RunSteps {
            steps: steps.into_iter().map(|(_, object, pos)| (object, pos)).collect(),
            deps,
            update_order,
            waits: waits_for.iter().map(Vec::len).collect(),
            dependents,
        }
    }

    /// The steps and dependencies of a run of thread `t`, computed once per run.
    fn steps_of(&mut self, t: usize, tr: &Trace, objects: &mut PollFilter) -> Rc<RunSteps> {
        let key = tr as *const Trace as usize;
        if let Some(r) = self.runs.get(&key) {
            return Rc::clone(r);
        }
        let ids = objects.object_steps(tr).to_vec();
        let lists: Vec<(usize, Vec<Step>)> = ids.iter().map(|&(p, id)| (p, objects.list(id).to_vec())).collect();
        let r = Rc::new(self.run_steps(t, tr, &lists));
        self.runs.insert(key, Rc::clone(&r));
        r
    }

    /// Every thread's runs, once explored: for each thread whose runs are all prefixes of its
    /// one complete run (the steps of a run stuck in a loop or at a barrier are the complete
    /// run's first ones, with the same dependencies, then its final polls), that run, which
    /// stands for the thread's unknown run in [`ThinAirFilter::allows_start`].
    pub(super) fn explored(&mut self, per_thread: &[ThreadTraces], objects: &mut PollFilter) {
        self.run_index = per_thread
            .iter()
            .flat_map(|runs| runs.traces.iter().chain(&runs.stuck).enumerate().map(|(k, tr)| (tr as *const Trace as usize, k)))
            .collect();
        let runs: Vec<Vec<&Trace>> = per_thread.iter().map(|runs| runs.traces.iter().chain(&runs.stuck).collect()).collect();
        let same_as = super::combos::interchangeable(self.program, &runs);
        self.class = Vec::with_capacity(same_as.len());
        for (t, same) in same_as.iter().enumerate() {
            let class = same.map_or(t, |s| self.class[s]);
            self.class.push(class);
        }
        self.pairs.clear();
        self.complete = per_thread
            .iter()
            .enumerate()
            .map(|(t, runs)| {
                let [complete] = &runs.traces[..] else { return None };
                let complete = Box::new(complete.clone());
                let whole = self.steps_of(t, &complete, objects);
                let whole_ids = objects.object_steps(&complete).to_vec();
                let step_of = |ids: &[(usize, usize)], objects: &PollFilter, (p, pos): (usize, usize)| {
                    let id = ids.iter().find(|(q, _)| *q == p).map(|&(_, id)| id)?;
                    let step = &objects.list(id)[pos];
                    (!matches!(step.kind, StepKind::FinalPoll { .. })).then(|| (p, step.clone()))
                };
                for stuck in &runs.stuck {
                    let part = self.steps_of(t, stuck, objects);
                    let ids = objects.object_steps(stuck).to_vec();
                    let mine: Vec<_> =
                        (0..part.steps.len()).filter_map(|i| Some((step_of(&ids, objects, part.steps[i])?, &part.deps[i]))).collect();
                    let prefix = mine.len() <= whole.steps.len()
                        && mine.iter().enumerate().all(|(i, (step, deps))| {
                            step_of(&whole_ids, objects, whole.steps[i]).as_ref() == Some(step) && whole.deps[i] == **deps
                        });
                    if !prefix {
                        return None;
                    }
                }
                Some(complete)
            })
            .collect();
    }

    /// Whether the last run of `traces` can take its steps with each earlier one, every other
    /// thread running its complete run, whose steps may be taken but need not be (see
    /// [`ThinAirFilter::pair_allows`]); None when some thread has no such complete run.
    pub(super) fn allows_last(&mut self, traces: &[&Trace], objects: &mut PollFilter) -> Option<bool> {
        if self.complete.len() != self.program.threads.len() || self.complete.iter().any(Option::is_none) {
            return None;
        }
        let j = traces.len() - 1;
        let ok = (0..j).all(|i| self.pair_allows(i, traces[i], j, traces[j], objects));
        if !ok && traces.len() == self.program.threads.len() {
            self.cut += 1;
        } else if !ok {
            self.cut_start += 1;
        }
        Some(ok)
    }

    /// Whether run `a` of thread `i` and run `b` of thread `j` can both take their steps, every
    /// other thread's complete run standing for its unknown one (every run of a thread is a
    /// prefix of its complete run, so whatever a combination with `a` and `b` takes, this takes
    /// too). Interchangeable threads run the same runs in the same order, so a pair is named by
    /// the threads' classes and the runs' places, and decided once.
    fn pair_allows(&mut self, i: usize, a: &Trace, j: usize, b: &Trace, objects: &mut PollFilter) -> bool {
        let place = |tr: &Trace| self.run_index.get(&(tr as *const Trace as usize)).copied();
        let (Some(pa), Some(pb)) = (place(a), place(b)) else { return true };
        let (ci, cj) = (self.class[i], self.class[j]);
        let key = if (ci, pa) <= (cj, pb) { (ci, pa, cj, pb) } else { (cj, pb, ci, pa) };
        if let Some(&ok) = self.pairs.get(&key) {
            return ok;
        }
        if self.pairs.len() >= MEMO_ENTRIES {
            self.pairs.clear();
        }
        let complete = std::mem::take(&mut self.complete);
        let mut all: Vec<&Trace> = complete.iter().map(|c| c.as_deref().expect("every thread has a complete run")).collect();
        all[i] = a;
        all[j] = b;
        let ok = self.all_taken_of(&all, &|t| t == i || t == j, objects);
        self.complete = complete;
        self.pairs.insert(key, ok);
        ok
    }

    /// Whether the runs of the first threads (`traces`) can all take their steps (as in
    /// [`ThinAirFilter::allows`]) alongside the later threads' complete runs, whose steps may be
    /// taken but need not be: every run of a later thread is a prefix of its complete run, so
    /// whatever a combination starting with `traces` takes, this takes too.
    pub(super) fn allows_start(&mut self, traces: &[&Trace], objects: &mut PollFilter) -> bool {
        let complete = std::mem::take(&mut self.complete);
        let ok = match complete.get(traces.len()..).and_then(|rest| rest.iter().map(|c| c.as_deref()).collect::<Option<Vec<&Trace>>>()) {
            Some(later) => {
                let all: Vec<&Trace> = traces.iter().copied().chain(later).collect();
                self.all_taken(&all, traces.len(), objects)
            }
            None => true,
        };
        self.complete = complete;
        if !ok {
            self.cut_start += 1;
        }
        ok
    }

    /// Whether the steps of `traces` can all be taken (see [`ThinAirFilter`]); true when some
    /// object is too large to tell.
    pub(super) fn allows(&mut self, traces: &[&Trace], objects: &mut PollFilter) -> bool {
        let Some(layout) = self.layout(traces, objects) else { return true };
        let ok = self.taken_in(&layout, &|_| true) && self.ordered(&layout);
        if !ok {
            self.cut += 1;
        }
        ok
    }

    /// Whether the steps of a combination whose steps are all taken ([`ThinAirFilter::allows`])
    /// can also be ordered: every read (final polls included, in a state holding every update)
    /// has a state of its object's history that holds none of the updates the union orders
    /// after it.
    ///
    /// In a consistent execution, an update in the state a read sees reaches the read through
    /// the union (its read half, data to its write, then reads-from and data along the history),
    /// so an update the read reaches through the union is not in that state. What the read
    /// reaches is known in part: its run's dependencies, its run's later updates of an object
    /// (placed after their run's earlier ones), and every update held by every state a read can
    /// see. Leaving out of each read's states the updates it reaches can make more updates held
    /// by every state of some read, so this is repeated until nothing changes. A cycle, or a
    /// read with no state left, rules the combination out: this is how a consumer's wait on a
    /// full barrier cannot see a phase completed only after the producer's next announcement,
    /// which the producer makes after the consumer's own later arrival.
    fn ordered(&mut self, layout: &Layout) -> bool {
        const MAX_STEPS: usize = 2048;
        const MAX_ROUNDS: usize = 16;
        const GRAPH_STATES: usize = 1 << 20;
        let Layout { runs, views, at } = layout;
        let mut first = Vec::with_capacity(runs.len());
        let mut n = 0;
        for info in runs {
            first.push(n);
            n += info.steps.len();
        }
        if n > MAX_STEPS {
            return true;
        }
        // Every step has a node (where it reads); an update has a second (where it writes).
        let mut is_update = vec![false; n];
        let mut gid: Vec<Vec<usize>> = views.iter().map(|v| vec![0; v.steps.len()]).collect();
        for (run, places) in at.iter().enumerate() {
            for (i, &(v, local)) in places.iter().enumerate() {
                gid[v][local] = first[run] + i;
                is_update[first[run] + i] = views[v].steps[local].kind.is_update();
            }
        }
        let reads_at = |g: usize| (2 * g) as u32;
        let writes_at = |g: usize| (2 * g + usize::from(is_update[g])) as u32;
        let mut fixed: Vec<(u32, u32)> = Vec::new();
        for (run, info) in runs.iter().enumerate() {
            for i in 0..info.steps.len() {
                let g = first[run] + i;
                fixed.extend(info.deps[i].iter().map(|&j| (reads_at(first[run] + j), writes_at(g))));
                fixed.extend(info.update_order[i].iter().map(|&j| (writes_at(first[run] + j), reads_at(g))));
                if is_update[g] {
                    fixed.push((reads_at(g), writes_at(g)));
                }
            }
        }
        let mut graphs = Vec::with_capacity(views.len());
        for view in views {
            let key = Rc::as_ptr(view) as usize;
            let graph = match self.graphs.get(&key) {
                Some(g) => g.clone(),
                None => {
                    let g = view.state_graph(self.program.physical[view.physical].init, view.updates()).map(Rc::new);
                    let states = g.as_ref().map_or(0, |g| g.states.len());
                    // The graphs kept stay bounded: past the limit they are built again.
                    if self.graph_states + states > GRAPH_STATES {
                        self.graphs.clear();
                        self.graph_states = 0;
                    }
                    self.graph_states += states;
                    self.graphs.insert(key, g.clone());
                    g
                }
            };
            let Some(graph) = graph else { return true };
            graphs.push(graph);
        }
        let mut excluded: Vec<Vec<u128>> = views.iter().map(|v| vec![0; v.steps.len()]).collect();
        for _ in 0..MAX_ROUNDS {
            let mut edges = fixed.clone();
            for (v, view) in views.iter().enumerate() {
                let key = (Rc::as_ptr(view) as usize, excluded[v].clone());
                let held = match self.read_memo.get(&key) {
                    Some(h) => Rc::clone(h),
                    None => {
                        let h = Rc::new(view.read_states(&graphs[v], view.updates(), &excluded[v], true));
                        self.read_memo.insert(key, Rc::clone(&h));
                        h
                    }
                };
                for (r, step) in view.steps.iter().enumerate() {
                    if !matches!(step.kind, StepKind::Read { .. } | StepKind::FinalPoll { .. }) {
                        continue;
                    }
                    let Some(all) = held[r] else { return false };
                    let all = view.twins_closed(all);
                    edges.extend(
                        (0..view.steps.len()).filter(|&u| all & (1 << u) != 0).map(|u| (writes_at(gid[v][u]), reads_at(gid[v][r]))),
                    );
                }
            }
            let mut reach = Relation::from_pairs(2 * n, edges.iter().map(|&(a, b)| (a as usize, b as usize)));
            if !reach.is_acyclic() {
                return false;
            }
            reach.plus_in_place();
            let mut changed = false;
            for (v, view) in views.iter().enumerate() {
                let updates = view.updates();
                for (r, step) in view.steps.iter().enumerate() {
                    if !matches!(step.kind, StepKind::Read { .. }) {
                        continue;
                    }
                    let from = reads_at(gid[v][r]) as usize;
                    let after = (0..view.steps.len())
                        .filter(|&u| updates & (1 << u) != 0 && reach.contains(from, writes_at(gid[v][u]) as usize))
                        .fold(0u128, |m, u| m | (1 << u));
                    let now = view.twins_closed(after) | excluded[v][r];
                    if now != excluded[v][r] {
                        excluded[v][r] = now;
                        changed = true;
                    }
                }
            }
            if !changed {
                return true;
            }
        }
        true
    }

    /// The runs of `traces`, the objects they touch and where each step is; None when some
    /// object is beyond the filter (more than 128 steps, or writes that do not read their
    /// predecessor).
    fn layout(&mut self, traces: &[&Trace], objects: &mut PollFilter) -> Option<Layout> {
        // The memo stays bounded: past its limit it starts again (the views go with it, as the
        // memo names them by address).
        if self.memo.len() >= MEMO_ENTRIES || self.views.len() >= MEMO_ENTRIES || self.read_memo.len() >= MEMO_ENTRIES {
            self.memo.clear();
            self.views.clear();
            self.graphs.clear();
            self.graph_states = 0;
            self.read_memo.clear();
        }
        let runs: Vec<Rc<RunSteps>> = traces.iter().enumerate().map(|(t, tr)| self.steps_of(t, tr, objects)).collect();
        // Each object's runs and their step lists.
        let mut touching: std::collections::BTreeMap<usize, Vec<(usize, usize)>> = Default::default();
        for (run, tr) in traces.iter().enumerate() {
            for &(p, id) in objects.object_steps(tr) {
                touching.entry(p).or_default().push((run, id));
            }
        }
        let mut views: Vec<Rc<ObjectView>> = Vec::with_capacity(touching.len());
        let mut view_of: FxHashMap<usize, usize> = Default::default();
        for (p, lists) in touching {
            let key = (p, lists);
            let view = match self.views.get(&key) {
                Some(v) => Rc::clone(v),
                None => {
                    let v = Rc::new(ObjectView::new(p, &key.1, objects));
                    self.views.insert(key, Rc::clone(&v));
                    v
                }
            };
            if !view.usable {
                return None;
            }
            view_of.insert(p, views.len());
            views.push(view);
        }
        let at: Vec<Vec<(usize, usize)>> = runs
            .iter()
            .enumerate()
            .map(|(run, info)| {
                info.steps
                    .iter()
                    .map(|&(p, pos)| {
                        let v = view_of[&p];
                        (v, views[v].local(run, pos))
                    })
                    .collect()
            })
            .collect();
        Some(Layout { runs, views, at })
    }

    /// Whether every step of the first `required` runs of `traces` (thread `i` runs
    /// `traces[i]`) but their final polls is taken.
    fn all_taken(&mut self, traces: &[&Trace], required: usize, objects: &mut PollFilter) -> bool {
        self.all_taken_of(traces, &|t| t < required, objects)
    }

    /// Whether every step of the runs of `traces` that `required` names (by thread) but their
    /// final polls is taken.
    fn all_taken_of(&mut self, traces: &[&Trace], required: &dyn Fn(usize) -> bool, objects: &mut PollFilter) -> bool {
        match self.layout(traces, objects) {
            Some(layout) => self.taken_in(&layout, required),
            None => true,
        }
    }

    /// [`ThinAirFilter::all_taken_of`] on a combination's layout.
    fn taken_in(&mut self, layout: &Layout, required: &dyn Fn(usize) -> bool) -> bool {
        let Layout { runs, views, at } = layout;
        let mut waiting: Vec<Vec<usize>> = runs.iter().map(|r| r.waits.clone()).collect();
        let mut fired: Vec<Vec<bool>> = runs.iter().map(|r| vec![false; r.steps.len()]).collect();
        let mut taken: Vec<u128> = vec![0; views.len()];
        let mut seeing: Vec<Option<u128>> = vec![None; views.len()];
        let mut pending: Vec<Vec<RunStep>> = vec![Vec::new(); views.len()];
        let mut in_order: Vec<TakenHistory> =
            views.iter().map(|v| TakenHistory::new(self.program.physical[v.physical].init, v.steps.len())).collect();
        let mut ready: Vec<RunStep> = runs
            .iter()
            .enumerate()
            .flat_map(|(run, info)| (0..info.steps.len()).filter(move |&i| info.waits[i] == 0).map(move |i| (run, i)))
            .collect();
        loop {
            while let Some((run, i)) = ready.pop() {
                let (v, local) = at[run][i];
                match views[v].steps[local].kind {
                    StepKind::Update { .. } => {
                        taken[v] |= 1 << local;
                        seeing[v] = None;
                        in_order[v].take(&views[v], local);
                    }
                    StepKind::Read { .. } if in_order[v].place_read(&views[v], local) => {}
                    StepKind::Read { .. } if seeing[v].is_some_and(|s| s & (1 << local) != 0) => {}
                    StepKind::Read { .. } => {
                        pending[v].push((run, i));
                        continue;
                    }
                    StepKind::FinalPoll { .. } => continue,
                }
                fired[run][i] = true;
                for &d in &runs[run].dependents[i] {
                    waiting[run][d] -= 1;
                    if waiting[run][d] == 0 {
                        ready.push((run, d));
                    }
                }
            }
            // The objects whose updates taken changed decide their waiting reads again.
            for v in 0..views.len() {
                if pending[v].is_empty() || seeing[v].is_some() {
                    continue;
                }
                let (now, later): (Vec<RunStep>, Vec<RunStep>) =
                    pending[v].iter().partition(|&&(run, i)| in_order[v].place_read(&views[v], at[run][i].1));
                ready.extend(now);
                pending[v] = later;
                if pending[v].is_empty() {
                    continue;
                }
                let key = (Rc::as_ptr(&views[v]) as usize, taken[v]);
                let sat = match self.memo.get(&key) {
                    Some(&s) => s,
                    None => {
                        let s = views[v].reads_with_a_state(self.program.physical[views[v].physical].init, taken[v]);
                        self.memo.insert(key, s);
                        s
                    }
                };
                seeing[v] = Some(sat);
                let (now, later): (Vec<RunStep>, Vec<RunStep>) = pending[v].iter().partition(|&&(run, i)| sat & (1 << at[run][i].1) != 0);
                ready.extend(now);
                pending[v] = later;
            }
            if ready.is_empty() {
                break;
            }
        }
        runs.iter().enumerate().filter(|&(run, _)| required(run)).all(|(run, info)| {
            (0..info.steps.len()).all(|i| {
                let (v, local) = at[run][i];
                fired[run][i] || matches!(views[v].steps[local].kind, StepKind::FinalPoll { .. })
            })
        })
    }
}

/// One history of an object: its updates in the order the filter takes them (every update after
/// its run's earlier ones, so a history the search of states also builds), as long as each
/// applies. A read that sees its result in one of its states, after the states its run's
/// earlier reads were given, has a state, and most do: the reads of a pipeline are decided
/// here, without building every state of the object.
struct TakenHistory {
    /// `values[p]`: the object after the first `p` updates.
    values: Vec<i64>,
    /// Per step of the view: an update's place (the first state holding it), a read's state;
    /// `usize::MAX` for none.
    placed_at: Vec<usize>,
    /// An update that does not apply was taken: later ones are not appended.
    broken: bool,
}

impl TakenHistory {
    fn new(init: i64, steps: usize) -> Self {
        TakenHistory { values: vec![init], placed_at: vec![usize::MAX; steps], broken: false }
    }

    fn take(&mut self, view: &ObjectView, u: usize) {
        if self.broken {
            return;
        }
        match view.steps[u].kind.after(*self.values.last().expect("the initial state")) {
            Some(w) => {
                self.placed_at[u] = self.values.len();
                self.values.push(w);
            }
            None => self.broken = true,
        }
    }

    /// Whether read `r` sees its result in a state of this history after its run's earlier
    /// updates and reads, before its later updates (then it is placed there).
    fn place_read(&mut self, view: &ObjectView, r: usize) -> bool {
        let mut lo = 0;
        for u in (0..view.steps.len()).filter(|&u| view.update_preds[r] & (1 << u) != 0).chain(view.read_preds[r].iter().copied()) {
            match self.placed_at[u] {
                usize::MAX => return false,
                p => lo = lo.max(p),
            }
        }
        let hi = (0..view.steps.len())
            .filter(|&u| view.update_succs[r] & (1 << u) != 0)
            .map(|u| self.placed_at[u])
            .fold(self.values.len(), usize::min);
        let kind = view.steps[r].kind;
        match (lo..hi).find(|&p| kind.sees(self.values[p])) {
            Some(p) => {
                self.placed_at[r] = p;
                true
            }
            None => false,
        }
    }
}

/// The steps of one object in one combination (in run order, at most 128).
struct ObjectView {
    physical: usize,
    /// At most 128 steps, every update reading its predecessor.
    usable: bool,
    /// (run, index of its first step in `steps`).
    offsets: Vec<(usize, usize)>,
    steps: Vec<Step>,
    /// Per step: the updates ordered before it in its run (an async operation's after every
    /// earlier step of its thread).
    update_preds: Vec<u128>,
    update_succs: Vec<u128>,
    /// Per update, an interchangeable update before it (same operation and result, after and
    /// before the same steps: two copies of one stage completing on one barrier): when both
    /// are taken, only the states that place them in this order are built, since swapping
    /// them in a history gives a history with the same values.
    twin: Vec<Option<usize>>,
    /// Per read: the reads of its run immediately before it.
    read_preds: Vec<Vec<usize>>,
}

impl ObjectView {
    fn new(physical: usize, lists: &[(usize, usize)], objects: &PollFilter) -> Self {
        let mut steps: Vec<Step> = Vec::new();
        let mut offsets = Vec::new();
        for &(run, id) in lists {
            offsets.push((run, steps.len()));
            steps.extend(objects.list(id).iter().map(|s| Step { run, ..s.clone() }));
        }
        let usable = steps.len() <= 128 && !steps.iter().any(|s| matches!(s.kind, StepKind::Update { op: None, .. }));
        if !usable {
            return ObjectView {
                physical,
                usable,
                offsets,
                steps,
                update_preds: vec![],
                update_succs: vec![],
                twin: vec![],
                read_preds: vec![],
            };
        }
        let k = steps.len();
        let is_update = |s: &Step| s.kind.is_update();
        let is_read = |s: &Step| matches!(s.kind, StepKind::Read { .. });
        let mask = |f: &dyn Fn(usize) -> bool| (0..k).filter(|&v| f(v)).fold(0u128, |m, v| m | (1 << v));
        let update_preds = (0..k).map(|u| mask(&|v| is_update(&steps[v]) && steps[v].before(&steps[u]))).collect();
        let update_succs = (0..k).map(|u| mask(&|v| is_update(&steps[v]) && steps[u].before(&steps[v]))).collect();
        let read_preds = (0..k)
            .map(|r| {
                let earlier: Vec<usize> = (0..k).filter(|&v| is_read(&steps[v]) && steps[v].before(&steps[r])).collect();
                earlier.iter().copied().filter(|&v| !earlier.iter().any(|&w| w != v && steps[v].before(&steps[w]))).collect()
            })
            .collect();
        let all_preds: Vec<u128> = (0..k).map(|u| mask(&|v| steps[v].before(&steps[u]))).collect();
        let all_succs: Vec<u128> = (0..k).map(|u| mask(&|v| steps[u].before(&steps[v]))).collect();
        let twin = twins(&steps, &all_preds, &all_succs);
        ObjectView { physical, usable, offsets, steps, update_preds, update_succs, twin, read_preds }
    }

    fn local(&self, run: usize, pos: usize) -> usize {
        let (_, start) = self.offsets.iter().find(|(r, _)| *r == run).expect("the run touches the object");
        start + pos
    }

    /// The reads (as a mask of steps) that see their result in some state made of the updates
    /// in `taken`, at or after their run's earlier updates, before its later ones, and reachable
    /// from a state of each read of their run before them. Every read when the states are too
    /// many to tell.
    fn reads_with_a_state(&self, init: i64, taken: u128) -> u128 {
        let k = self.steps.len();
        let reads = (0..k).filter(|&r| matches!(self.steps[r].kind, StepKind::Read { .. }));
        match self.state_graph(init, taken) {
            None => reads.fold(0u128, |m, r| m | (1 << r)),
            Some(graph) => {
                let held = self.read_states(&graph, taken, &[], false);
                reads.filter(|&r| held[r].is_some()).fold(0u128, |m, r| m | (1 << r))
            }
        }
    }

    /// The states made of the updates in `taken` (each placed after its run's earlier updates
    /// and, of interchangeable updates, in one order), in breadth-first order; None past
    /// `MAX_STATES`.
    fn state_graph(&self, init: i64, taken: u128) -> Option<StateGraph> {
        let k = self.steps.len();
        // Every edge goes to a later state (one more update), so one pass in order sweeps
        // reachability.
        let mut states: Vec<(u128, i64)> = vec![(0, init)];
        let mut index: FxHashMap<(u128, i64), u32> = Default::default();
        index.insert((0, init), 0);
        let mut edges: Vec<Vec<u32>> = Vec::new();
        let mut effects: FxHashMap<(u32, i64), Option<i64>> = Default::default();
        let mut next = 0;
        while next < states.len() {
            let (placed, v) = states[next];
            let mut out = Vec::new();
            for u in 0..k {
                let twin = self.twin[u].filter(|&v| taken & (1 << v) != 0).map_or(0, |v| 1u128 << v);
                if taken & (1 << u) == 0 || placed & (1 << u) != 0 || (self.update_preds[u] | twin) & !placed != 0 {
                    continue;
                }
                // Most states share a few values: each effect is computed once.
                let Some(written) = *effects.entry((u as u32, v)).or_insert_with(|| self.steps[u].kind.after(v)) else { continue };
                let key = (placed | (1 << u), written);
                let to = match index.get(&key) {
                    Some(&to) => to,
                    None => {
                        if states.len() >= MAX_STATES {
                            return None;
                        }
                        states.push(key);
                        index.insert(key, (states.len() - 1) as u32);
                        (states.len() - 1) as u32
                    }
                };
                out.push(to);
            }
            edges.push(out);
            next += 1;
        }
        Some(StateGraph { states, edges })
    }

    /// Per step of the object: for a read (and, with `final_polls`, a final poll: in a state
    /// holding every update of `taken`) that has a state in `graph` (as in
    /// [`ObjectView::reads_with_a_state`]) holding none of the updates `excluded` names for it
    /// (`excluded` empty: none), the updates every such state holds; None otherwise.
    fn read_states(&self, graph: &StateGraph, taken: u128, excluded: &[u128], final_polls: bool) -> Vec<Option<u128>> {
        let k = self.steps.len();
        let StateGraph { states, edges } = graph;
        let m = states.len();
        let mut sees: FxHashMap<(u32, i64), bool> = Default::default();
        let mut of_read: Vec<Option<Vec<bool>>> = vec![None; k];
        let mut held: Vec<Option<u128>> = vec![None; k];
        for r in 0..k {
            let kind = self.steps[r].kind;
            let is_final = matches!(kind, StepKind::FinalPoll { .. });
            if !(matches!(kind, StepKind::Read { .. }) || final_polls && is_final) {
                continue;
            }
            let out = excluded.get(r).copied().unwrap_or(0);
            let mut set: Vec<bool> = states
                .iter()
                .map(|&(placed, v)| {
                    placed & self.update_preds[r] == self.update_preds[r]
                        && placed & (self.update_succs[r] | out) == 0
                        && (!is_final || placed == taken)
                        && *sees.entry((r as u32, v)).or_insert_with(|| kind.sees(v))
                })
                .collect();
            for &q in &self.read_preds[r] {
                let Some(from) = &of_read[q] else {
                    set.iter_mut().for_each(|x| *x = false);
                    break;
                };
                let mut reach = from.clone();
                for a in 0..m {
                    if reach[a] {
                        for &b in &edges[a] {
                            reach[b as usize] = true;
                        }
                    }
                }
                set.iter_mut().zip(&reach).for_each(|(x, y)| *x &= *y);
            }
            if set.iter().any(|&x| x) {
                held[r] = Some(set.iter().zip(states).filter(|(x, _)| **x).fold(u128::MAX, |all, (_, &(placed, _))| all & placed));
                of_read[r] = Some(set);
            }
        }
        held
    }

    /// `mask` without the interchangeable updates (see `twin`) it holds only some of: the
    /// state graph places them in one order, and a fact about one of them holds of all only
    /// when it holds of each.
    fn twins_closed(&self, mut mask: u128) -> u128 {
        loop {
            let mut changed = false;
            for (u, twin) in self.twin.iter().enumerate() {
                if let Some(v) = *twin {
                    if (mask >> u) & 1 != (mask >> v) & 1 {
                        mask &= !((1 << u) | (1 << v));
                        changed = true;
                    }
                }
            }
            if !changed {
                return mask;
            }
        }
    }

    /// The updates of the object (as a mask of steps).
    fn updates(&self) -> u128 {
        self.steps.iter().enumerate().filter(|(_, s)| s.kind.is_update()).fold(0u128, |m, (u, _)| m | (1 << u))
    }
}

/// The most states of one object's history the filter builds.
const MAX_STATES: usize = 50_000;

/// The states of one object's history made of some updates, and the updates leading from each
/// to the next (`edges[i]`: the states one update after state `i`).
struct StateGraph {
    states: Vec<(u128, i64)>,
    edges: Vec<Vec<u32>>,
}

/// The runs of a combination, the objects they touch and where each run's steps are.
struct Layout {
    runs: Vec<Rc<RunSteps>>,
    views: Vec<Rc<ObjectView>>,
    /// Per run and step: (view, step of the view).
    at: Vec<Vec<(usize, usize)>>,
}

#[cfg(test)]
mod tests {
    use super::ThinAirCheck;
    use crate::cat::{CatModel, Skip};
    use crate::diag::SourceFile;

    fn check_of(src: &str) -> Option<ThinAirCheck> {
        ThinAirCheck::of_model(&CatModel::from_source(SourceFile::new("t.cat", src), &[]).unwrap())
    }

    #[test]
    fn the_check_is_the_models_own_union_of_reads_from_and_dependencies() {
        assert_eq!(check_of("acyclic (rf | addr | data | ctrl) as NoThinAir"), Some(ThinAirCheck { addr: true, ctrl: true }));
        // Dat3M names the dependencies first.
        assert_eq!(check_of("let dep = data | ctrl\nacyclic (rf | dep) as NoThinAir"), Some(ThinAirCheck { addr: false, ctrl: true }));
        // Without data an mbarrier's updates are no chain; without rf nothing crosses threads;
        // with anything but names the union is not known; a flag forbids nothing.
        assert_eq!(check_of("acyclic (rf | addr | ctrl)"), None);
        assert_eq!(check_of("acyclic (po | data | ctrl)"), None);
        assert_eq!(check_of("acyclic (rf | data | ctrl | 0)"), None);
        assert_eq!(check_of("flag ~acyclic (rf | data | ctrl) as cycle"), None);
        let default = crate::config::Config::default_model().model;
        assert_eq!(ThinAirCheck::of_model(&default), Some(ThinAirCheck { addr: true, ctrl: true }));
        let skipped = default.skipping(&Skip { all_consistency: false, names: vec!["NoThinAir".into()] }).unwrap();
        assert_eq!(ThinAirCheck::of_model(&skipped), None);
        let through = default.skipping(&Skip { all_consistency: true, names: vec![] }).unwrap();
        assert_eq!(ThinAirCheck::of_model(&through), None);
    }
}
