//! The engine of the search: its state, and the choices it makes one decision at a time (the
//! state each mbarrier read reads, the final state of each history, the write each data read
//! reads), each followed by a check of the partial candidate. The checks, coherence and the
//! fence-SC order are the engine's methods in the files next to this one.

use super::{Budget, Explorer, LazyModel, PrunePlan, SearchError, SearchGoal, StaticEnv};
use crate::cat::Value;
use crate::exec::mbgraph::{self, ObjectGraph};
use crate::exec::structure::{EventKind, EventStructure};
use crate::exec::trace::ExploreError;
use crate::relation::{EventSet, Relation};

/// The most states one mbarrier object's graph may have (each is also charged to the budget).
const MAX_MBARRIER_STATES: u64 = 1_000_000;

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
pub(super) struct ObjectState {
    /// (node, the read that chose it, the read's undefined behaviour there); the final node has
    /// no read.
    pub(super) chosen: Vec<(usize, Option<usize>, Option<String>)>,
    /// The representative history: units from the initial state through every chosen node.
    pub(super) member: Vec<usize>,
    /// Whether the history reaches a final node.
    complete: bool,
    /// Orders between two units the model forces (unit a before unit b), learned from
    /// coherence pairs the representative history contradicted.
    pub(super) after: Vec<(usize, usize)>,
}

pub(super) struct Engine<'e, 'a, 'm, 's> {
    pub(super) statics: &'e StaticEnv<'a>,
    pub(super) s: &'e EventStructure<'a>,
    pub(super) model: &'e LazyModel<'m, 's>,
    pub(super) plan: &'e PrunePlan,
    pub(super) goal: &'e SearchGoal,
    pub(super) budget: &'e mut Budget,
    pub(super) n: usize,
    /// Data reads and the writes each may read from.
    pub(super) reads: Vec<usize>,
    pub(super) sources: Vec<Vec<usize>>,
    pub(super) objects: Vec<ObjectGraph>,
    decisions: Vec<Decision>,
    /// Writes of each physical location (initial write first).
    pub(super) writes: Vec<Vec<usize>>,
    /// Physical locations holding mbarrier objects.
    pub(super) is_object: Vec<bool>,
    /// Coherence every candidate has: the initial write first.
    pub(super) init_first: Relation,
    /// Same-location write pairs (the largest coherence).
    pub(super) co_full: Relation,
    /// Morally strong pairs of `fence.sc` (the largest fence-SC order, both directions).
    pub(super) sync_full: Relation,
    pub(super) sc_fences: Vec<usize>,
    /// Events with undefined behaviour found in the traces.
    pub(super) static_ub: EventSet,
    /// The static part of the model's acyclic `rf | ...` union, if it has one.
    pub(super) deps: Option<Relation>,
    /// Whether some write's value is open (computed from reads).
    pub(super) open_writes: bool,
    /// Physical locations whose coherence can be observed (see [`observable_locations`]).
    pub(super) observable: Vec<bool>,
    /// Per decision depth: how often the check after a choice ran and cut.
    depth_stats: Vec<DepthStats>,
    // Search state.
    pub(super) rf: Relation,
    pub(super) decided: Vec<bool>,
    /// Per data read: whether its sources no finding sees (`free.rs`); decided last, and
    /// left once one choice of them completes consistently.
    pub(super) free: Vec<bool>,
    pub(super) state: Vec<ObjectState>,
    /// Each object's narrowed options per its choices (`Engine::narrowed_object_options`).
    pub(super) narrowed_memo: NarrowedMemo,
}

/// An object, its chosen states (with the reads that chose them) and its learned orders.
pub(super) type NarrowKey = (usize, Vec<(usize, Option<usize>)>, Vec<(usize, usize)>);

/// Per read of an object, the states it may still read (None: some read has none).
pub(super) type Narrowed = Option<std::rc::Rc<Vec<Vec<usize>>>>;

/// Each object's narrowed options per its choices and learned orders.
pub(super) type NarrowedMemo = std::cell::RefCell<rustc_hash::FxHashMap<NarrowKey, Narrowed>>;

impl<'e, 'a, 'm, 's> Engine<'e, 'a, 'm, 's> {
    pub(super) fn new(
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
        let Some((objects, narrowed_memo)) = build_objects(statics, model, plan, object_locations, goal, budget)? else { return Ok(None) };
        // Data reads and their possible sources.
        let rmw = &s.relations["rmw"];
        let mut own_order = plan.own_order.as_ref().map(|o| super::own_order::OwnOrder::new(s, &o.0));
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
            let mut cands: Vec<usize> = writes[p].iter().copied().filter(|&w| (symbolic || may_give(w)) && !rmw.contains(r, w)).collect();
            if let Some(own) = own_order.as_mut() {
                own.filter(s, r, &writes[p], &mut cands);
            }
            if cands.is_empty() {
                return Ok(None);
            }
            reads.push(r);
            sources.push(cands);
        }

        let sc_fences: Vec<usize> = (0..n).filter(|&i| s.events[i].kind == EventKind::Fence && s.events[i].has_tag("SC")).collect();
        let free = super::free::free_reads(s, statics, model, plan, goal, &reads, &sources, sc_fences.len())?;
        let Some(decisions) = decision_order(s, &objects, &reads, &free, goal) else { return Ok(None) };
        let depths = decisions.len();
        let mut init_first = Relation::empty(n);
        let mut co_full = Relation::empty(n);
        for ws in &writes {
            if let Some((&init, rest)) = ws.split_first() {
                for &w in rest {
                    // Quadratic in a location's writes: under the deadline.
                    budget.check_deadline()?;
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
            free,
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
            narrowed_memo,
        }))
    }

    /// Make every decision in every possible way, depth first, checking each partial candidate
    /// after a choice with alternatives. Returns whether some consistent execution was found.
    ///
    /// The depth-first search keeps its own stack of [`Frame`]s (one per decision made), not
    /// the thread's: a test has as many decisions as reads, and thousands of reads would
    /// overflow the call stack.
    pub(super) fn dfs(&mut self, ex: &mut dyn Explorer) -> Result<bool, SearchError> {
        let mut stack: Vec<Frame> = Vec::new();
        // The decision to enter next (its depth, and the options a check left for it), or the
        // answer of the subtree just finished.
        let mut enter = Some((0, None));
        let mut answer = None;
        loop {
            if let Some((depth, known)) = enter.take() {
                // A decision with one option charges no evaluation: the limits are checked here.
                self.budget.tick()?;
                if depth == self.decisions.len() {
                    answer = Some(self.rf_complete(ex)?);
                } else {
                    match self.frame(depth, known) {
                        Some(frame) => stack.push(frame),
                        None => answer = Some(false),
                    }
                }
            }
            let Some(top) = stack.last_mut() else { return Ok(answer.unwrap_or(false)) };
            if let Some(below) = answer.take() {
                // The subtree of the option in progress is done: undo its choice.
                if let Some(saved) = top.saved.take() {
                    self.budget.stats.partial += 1;
                    if !below {
                        self.budget.stats.dead_ends += 1;
                    }
                    top.found |= below;
                    if let Choices::Data { k, r, ref writes } = top.choices {
                        self.decided[k] = false;
                        self.rf.remove(writes[top.next - 1], r);
                        // Every decision below a free read is free: the choices of this
                        // assignment of the others have their findings.
                        if top.found && self.free[k] {
                            self.budget.stats.free_left += (top.choices.len() - top.next) as u64;
                            top.next = top.choices.len();
                        }
                    }
                    self.state = saved;
                }
            }
            if top.next == top.choices.len() {
                answer = Some(top.found);
                stack.pop();
                continue;
            }
            // The next option: choose it, check, and go down.
            let (depth, check, i) = (top.depth, top.check, top.next);
            top.next += 1;
            // Checks may learn orders of mbarrier updates: they hold for this subtree.
            top.saved = Some(self.state.clone());
            let chosen = match &top.choices {
                Choices::Data { k, r, writes } => {
                    self.rf.insert(writes[i], *r);
                    self.decided[*k] = true;
                    true
                }
                Choices::Mb { o, r, options } => {
                    let (o, r, (node, ub)) = (*o, *r, options[i].clone());
                    self.choose(o, node, Some(r), ub)
                }
                Choices::Final { o, options } => {
                    let (o, node) = (*o, options[i]);
                    self.choose(o, node, None, None)
                }
            };
            match chosen {
                true => match self.checked(depth, check, ex)? {
                    Some(next) => enter = Some((depth + 1, next.or_else(|| top_propagated(&mut stack)))),
                    None => answer = Some(false),
                },
                false => answer = Some(false),
            }
        }
    }

    /// The frame of decision `depth`: its options (None when propagation leaves the state no
    /// consistent completion), and whether each choice is followed by a check.
    /// `known`: the options propagation left for the state here, when the check above already
    /// computed them.
    fn frame(&self, depth: usize, known: Option<Options>) -> Option<Frame> {
        let options_here = |known: Option<Options>| known.or_else(|| self.propagate());
        // The last mbarrier decision is followed by a check even without alternatives: an
        // inconsistent set of histories dies before any data read is chosen.
        let last_mb =
            matches!(self.decisions[depth], Decision::MbFinal(_)) && !matches!(self.decisions.get(depth + 1), Some(Decision::MbFinal(_)));
        let (choices, check) = match self.decisions[depth] {
            Decision::Read(k) => {
                let mut opts = options_here(known)?;
                let writes = std::mem::take(&mut opts.data[k]);
                // The deepest decision is followed by the complete check anyway.
                let check = writes.len() > 1 && depth + 1 < self.decisions.len();
                if let [w] = writes[..] {
                    // Propagation already counted the one option as chosen: after choosing it,
                    // it would find these options again.
                    opts.data[k] = vec![w];
                    let choices = Choices::Data { k, r: self.reads[k], writes };
                    return Some(Frame { depth, choices, check, next: 0, found: false, saved: None, propagated: Some(opts) });
                }
                (Choices::Data { k, r: self.reads[k], writes }, check)
            }
            Decision::MbRead(o, i) => {
                let r = self.objects[o].reads[i];
                let allowed = options_here(known).map(|mut p| std::mem::take(&mut p.mb[o][i]))?;
                let g = &self.objects[o];
                let options: Vec<(usize, Option<String>)> =
                    g.read_options[i].iter().filter(|opt| allowed.contains(&opt.node)).map(|opt| (opt.node, opt.ub.clone())).collect();
                let check = options.len() > 1 || last_mb;
                (Choices::Mb { o, r, options }, check)
            }
            Decision::MbFinal(o) => {
                let g = &self.objects[o];
                let chosen: Vec<usize> = self.state[o].chosen.iter().map(|c| c.0).collect();
                let options: Vec<usize> = g.finals.iter().copied().filter(|&f| g.compatible(&chosen, f)).collect();
                let check = options.len() > 1 || last_mb;
                (Choices::Final { o, options }, check)
            }
        };
        Some(Frame { depth, choices, check, next: 0, found: false, saved: None, propagated: None })
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
    pub(super) fn rebuild(&mut self, o: usize) -> bool {
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
}

/// The state graphs of the structure's mbarrier objects (in location order), and each one's
/// options before any choice, remembered for the search's first propagation; None when the
/// reads of one object alone rule every candidate out (the other graphs are then not built).
fn build_objects(
    statics: &StaticEnv,
    model: &LazyModel,
    plan: &PrunePlan,
    object_locations: Vec<usize>,
    goal: &SearchGoal,
    budget: &mut Budget,
) -> Result<Option<(Vec<ObjectGraph>, NarrowedMemo)>, SearchError> {
    let s = statics.structure;
    let order = s.relations["po"].union(&s.relations["iss"]).union(&s.relations["intra"]).plus();
    // What the model puts in co before any choice orders the objects' updates too (a
    // `bar.sync` between an `mbarrier.init` and the arrivals after it): histories against it
    // are never built. It costs an evaluation of the forcing checks, and only a graph of many
    // states gains from it: it is read once the first graph passes `Limits::plain_mbarrier_states`
    // states built in static order alone (then each graph is built with the pairs, and with the
    // updates nothing tells apart in one order, `ObjectGraph::build`'s `chain`).
    let mut forced: Option<Relation> = None;
    // Objects a stuck run polls first: their reads alone often rule the structure out, and
    // then the other objects' graphs are never built.
    let mut object_locations = object_locations;
    let polled = |p: usize| goal.final_reads.iter().any(|&r| s.events[r].physical == Some(p));
    object_locations.sort_by_key(|&p| (!polled(p), p));
    let mut objects = Vec::new();
    for &p in &object_locations {
        // Each state built costs like a trace combination: charge a budget share for them.
        let max_nodes = budget.left.min(MAX_MBARRIER_STATES) as usize;
        // The deadline and the memory limit hold while the states are built.
        let build = |forced: &Relation, chain: bool, max_nodes: usize, budget: &mut Budget| {
            let mut check = || budget.check_deadline().and_then(|()| budget.check_resident());
            ObjectGraph::build(s, p, &order, forced, chain, max_nodes, &mut check)
        };
        let mut built = None;
        let plain_states = budget.plain_mbarrier_states;
        if forced.is_none() && plain_states > 0 {
            let plain = Relation::empty(s.n());
            match build(&plain, false, max_nodes.min(plain_states), budget) {
                // The states built so far are spent; the graph is built again in the model's order.
                Err(mbgraph::BuildError::TooManyStates(_)) if max_nodes > plain_states => {
                    budget.left = budget.left.saturating_sub(plain_states as u64);
                }
                other => built = Some(other),
            }
        }
        let built = match built {
            Some(built) => built,
            None => {
                let forced = match forced {
                    Some(ref f) => f,
                    None => {
                        budget.evaluation()?;
                        forced.insert(super::bounds::forced_co_at_bottom(statics, model, plan)?)
                    }
                };
                // Updates nothing tells apart (the lanes' arrivals on one phase) in one order,
                // unless a read could see the difference: then the graph again in every order.
                let max_nodes = budget.left.min(MAX_MBARRIER_STATES) as usize;
                match build(forced, true, max_nodes, budget) {
                    Ok(g) if !g.chaining_is_exact(s, &order, &goal.final_reads) => {
                        budget.left = budget.left.saturating_sub(g.built_states as u64);
                        let max_nodes = budget.left.min(MAX_MBARRIER_STATES) as usize;
                        build(forced, false, max_nodes, budget)
                    }
                    other => other,
                }
            }
        };
        let (left, limit) = (budget.left, budget.limit);
        let g = built.map_err(|e| match e {
            mbgraph::BuildError::Stopped(e) => e,
            // The states are charged to the search budget, and it ran out.
            mbgraph::BuildError::TooManyStates(_) if left < MAX_MBARRIER_STATES => {
                SearchError::Explore(ExploreError::TooManyCandidates { limit })
            }
            mbgraph::BuildError::TooManyStates(e) => {
                SearchError::Explore(ExploreError::TooManyMbarrierStates { object: e.object, limit: e.limit as u64 })
            }
        })?;
        // States another structure of the decision built are shared, not built again.
        budget.left = budget.left.saturating_sub(g.built_states as u64);
        let Some(first_options) = g.reads_can_be_placed(&goal.final_reads) else { return Ok(None) };
        objects.push((g, first_options));
    }
    // The search's order of objects stays the locations' (it decides which of several
    // executions is found first).
    objects.sort_by_key(|(g, _)| g.physical);
    // The options before any choice are those just computed: the search's first
    // propagation finds them remembered.
    let narrowed_memo = NarrowedMemo::default();
    for (o, (_, sets)) in objects.iter().enumerate() {
        let options: Vec<Vec<usize>> = sets.iter().map(|set| set.iter().collect()).collect();
        narrowed_memo.borrow_mut().insert((o, Vec::new(), Vec::new()), Some(std::rc::Rc::new(options)));
    }
    let objects: Vec<ObjectGraph> = objects.into_iter().map(|(g, _)| g).collect();
    Ok(Some((objects, narrowed_memo)))
}

/// The order of the decisions: mbarrier reads first (they decide the synchronisation of the
/// rest), then each object's final state, then the data reads, those of `goal.first_reads`
/// first. Within each group, by source line: litmus rows run roughly in time order across
/// threads, so causal chains close (and doomed prefixes die) early. None when some mbarrier read
/// the goal wants final can read no final state.
fn decision_order(s: &EventStructure, objects: &[ObjectGraph], reads: &[usize], free: &[bool], goal: &SearchGoal) -> Option<Vec<Decision>> {
    let program = s.program;
    let line = |e: usize| s.events[e].instr.zip(s.events[e].thread).map(|(i, t)| program.threads[t].code[i].line).unwrap_or(0);
    let mut mb_reads: Vec<(usize, usize, usize)> = Vec::new();
    for (o, g) in objects.iter().enumerate() {
        for (i, &r) in g.reads.iter().enumerate() {
            let mut options = g.read_options[i].iter().filter(|opt| !goal.final_reads.contains(&r) || g.finals.contains(&opt.node));
            options.next()?;
            mb_reads.push((line(r), o, i));
        }
    }
    mb_reads.sort();
    let mut decisions: Vec<Decision> = mb_reads.iter().map(|&(_, o, i)| Decision::MbRead(o, i)).collect();
    decisions.extend((0..objects.len()).map(Decision::MbFinal));
    let mut order: Vec<usize> = (0..reads.len()).collect();
    let first = |e: usize| goal.first_reads.iter().position(|&x| x == e).unwrap_or(usize::MAX);
    order.sort_by_key(|&k| (free[k], first(reads[k]), line(reads[k]), k));
    decisions.extend(order.into_iter().map(Decision::Read));
    Some(decisions)
}

/// The options propagation left below the top frame's choice, when the frame knows them.
fn top_propagated(stack: &mut [Frame]) -> Option<Options> {
    stack.last_mut().and_then(|f| f.propagated.take())
}

/// One decision being made, on the search's stack.
struct Frame {
    depth: usize,
    choices: Choices,
    /// Whether each choice is followed by a check of the partial candidate.
    check: bool,
    /// The option to try next (the one in progress is `next - 1`).
    next: usize,
    /// Whether some option tried so far had a consistent execution below it.
    found: bool,
    /// The mbarrier states from before the option in progress (None: no option in progress).
    saved: Option<Vec<ObjectState>>,
    /// For a data read with one option: the options propagation leaves once it is chosen.
    propagated: Option<Options>,
}

/// The options of one decision.
enum Choices {
    /// The writes data read `k` (event `r`) may read.
    Data { k: usize, r: usize, writes: Vec<usize> },
    /// The states (with the read's undefined behaviour there) mbarrier read `r` of object `o`
    /// may read.
    Mb { o: usize, r: usize, options: Vec<(usize, Option<String>)> },
    /// The final states object `o`'s history may end in.
    Final { o: usize, options: Vec<usize> },
}

impl Choices {
    fn len(&self) -> usize {
        match self {
            Choices::Data { writes, .. } => writes.len(),
            Choices::Mb { options, .. } => options.len(),
            Choices::Final { options, .. } => options.len(),
        }
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
pub(super) struct Options {
    /// Per data read (as `Engine::reads`): the writes it may read.
    pub(super) data: Vec<Vec<usize>>,
    /// Per object, per read of the object: the states it may read.
    pub(super) mb: Vec<Vec<Vec<usize>>>,
}

/// Physical locations whose coherence order can matter to anything but its own existence: read
/// by some event, updated by an RMW, or shown in a final state.
fn observable_locations(s: &EventStructure) -> Vec<bool> {
    let program = s.program;
    let mut out = vec![false; program.physical.len()];
    // Events some read-modify-write pair ends in (one pass, not a column scan per event).
    let rmw_targets = s.relations["rmw"].range();
    for (i, e) in s.events.iter().enumerate() {
        if let Some(p) = e.physical {
            if e.is_read() || rmw_targets.contains(i) {
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
