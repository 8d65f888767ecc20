//! Explanations of verdicts, in the program's own terms.
//!
//! - **Allowed**: one witness execution that reaches the outcome: its events (instruction and
//!   line), reads-from, coherence and fence-SC orders, and any data races in it.
//! - **Forbidden**: every candidate execution that would give the outcome is rejected by some
//!   axiom. Candidates are grouped by (axiom, shape of the violating cycle); each group shows one
//!   cycle event by event with the relation of each step, e.g.
//!   `Causality: c: R x=0 (P1 line 7) –fr→ a: W x=1 (P0 line 6) –po→ … –po→ back`.
//!
//! Cycles are read off the evaluated relation of the failing check and labelled with the
//! model's own relations (`sync`, `rf`, `fr`, `po`, … as the model names them), preferring the
//! most specific relation that contains each step.

pub mod dot;
pub mod graph;
pub mod svg;

use crate::cat::CheckOutcome;
use crate::cat::{CatModel, CheckKind, Prepared, Value};
use crate::check::{each_structure, final_states, observables, value_in, RunError, RunOptions, TraceCombinations};
use crate::exec::search::{search, Budget, Candidate, Explorer, LazyModel, Partial, PrunePlan, SearchGoal, StaticEnv};
use crate::exec::structure::{resolve_barriers, Event, EventKind, EventStructure};
use crate::exec::trace::explore_until;
use crate::litmus::ast::Quantifier;
use crate::program::{Observable, Program};
use crate::relation::Relation;
use graph::{ExecutionGraph, GraphEdge, GraphNode, GraphThread};
use serde::Serialize;
use std::collections::BTreeMap;
use std::ops::ControlFlow;

/// What the explanation concludes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Verdict {
    /// Some consistent execution satisfies the condition's proposition.
    Allowed,
    /// No consistent execution does.
    Forbidden,
}

/// An event as shown to the user.
#[derive(Clone, Debug, Serialize)]
pub struct EventDesc {
    /// `a`, `b`, … for thread events (herd7's naming), `init x` for initial writes.
    pub name: String,
    /// `W x=1`, `R flag=0`, `F sc.gpu`, `B bar.cta.sync 1`.
    pub action: String,
    pub thread: Option<String>,
    pub line: Option<usize>,
    pub instruction: Option<String>,
}

impl EventDesc {
    /// `a: W x=1 (P0 line 6)`.
    pub fn short(&self) -> String {
        match (&self.thread, self.line) {
            (Some(t), Some(l)) => format!("{}: {} ({} line {})", self.name, self.action, t, l),
            _ => format!("{}: {}", self.name, self.action),
        }
    }
}

/// One step of a cycle or path: `from –relation→ to`.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    pub from: usize,
    pub relation: String,
    pub to: usize,
}

/// Candidates rejected the same way.
#[derive(Clone, Debug, Serialize)]
pub struct RejectionGroup {
    pub axiom: String,
    /// The check as written in the model.
    pub check: String,
    /// The sequence of relation labels of the cycle (the group key together with the axiom).
    pub shape: Vec<String>,
    /// How many candidates reaching the outcome fail this way.
    pub count: u64,
    /// One of them, step by step (event indices into `events`).
    pub steps: Vec<Step>,
    /// The text form of `steps`.
    pub text: String,
}

/// Two conflicting accesses that are neither morally strong nor ordered by causality.
#[derive(Clone, Debug, Serialize)]
pub struct Race {
    pub first: usize,
    pub second: usize,
    pub text: String,
}

/// An execution shown in full.
#[derive(Clone, Debug, Serialize)]
pub struct ExecutionDesc {
    /// `(write, read)` pairs.
    pub rf: Vec<(usize, usize)>,
    /// Immediate coherence successors.
    pub co: Vec<(usize, usize)>,
    /// Fence-SC order (immediate pairs).
    pub fence_sc: Vec<(usize, usize)>,
    /// The final state reached.
    pub state: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Explanation {
    pub test: String,
    pub condition: String,
    /// Whether the outcome is reached by some consistent execution explored.
    pub verdict: Verdict,
    /// The verdict of the program as `ptxmm run` gives it (Undefined, Inconclusive, Unknown
    /// take precedence over the outcome's reachability); None when that run failed.
    pub program_verdict: Option<crate::check::Verdict>,
    /// Why the program verdict is Inconclusive or Unknown.
    pub program_verdict_reason: Option<String>,
    /// The events of the execution shown (the witness, or the first rejected candidate).
    pub events: Vec<EventDesc>,
    pub witness: Option<ExecutionDesc>,
    pub rejections: Vec<RejectionGroup>,
    pub races: Vec<Race>,
    /// Undefined behaviour of the execution shown (the model's `undefined_unless` checks).
    pub undefined: Vec<crate::findings::Finding>,
    /// Candidates that reach the outcome but were rejected (Forbidden), examined in total.
    pub rejected_candidates: u64,
    #[serde(skip)]
    pub graph: ExecutionGraph,
    /// The human-readable explanation.
    pub text: String,
}

/// What the search for an explanation collects over every event structure.
struct Collected {
    witness: Option<Shown>,
    first_rejected: Option<Shown>,
    groups: BTreeMap<(String, Vec<String>), RejectionGroup>,
    rejected: u64,
}

/// The explorer of one event structure: stops at the first consistent execution reaching the
/// outcome, records why the search cut each partial candidate that could still reach it, and
/// cuts those that cannot.
struct ExplainExplorer<'x, 'p> {
    program: &'p Program,
    prepared: &'x Prepared<'x>,
    checks: &'x [crate::cat::CheckInfo],
    observables: &'x [Observable],
    out: &'x mut Collected,
}

impl Explorer for ExplainExplorer<'_, '_> {
    fn consistent(&mut self, cand: &Candidate, _eval: &crate::cat::Evaluation) -> bool {
        match satisfying_state(self.program, cand, self.observables) {
            Some(state) => {
                self.out.witness = Some(Shown::capture(self.program, cand, self.prepared, None, state));
                false
            }
            None => true,
        }
    }

    fn wants_rejections(&self) -> bool {
        true
    }

    fn rejected(&mut self, cand: &Candidate, failed: &CheckOutcome) {
        if failed.flag.is_some() {
            return;
        }
        self.out.rejected += 1;
        let vocab = Vocabulary::new(cand, self.prepared);
        let steps = violation_steps(failed.kind, &failed.relation, &vocab);
        let shape: Vec<String> = steps.iter().map(|s| s.relation.clone()).collect();
        let key = (failed.name.clone(), shape.clone());
        let program = self.program;
        let info = &self.checks[failed.index];
        let entry = self.out.groups.entry(key).or_insert_with(|| RejectionGroup {
            axiom: failed.name.clone(),
            check: info.file.slice(info.span).trim().to_string(),
            shape,
            count: 0,
            // Described with this candidate's own events (another structure's events may carry
            // other values).
            text: describe_steps(&failed.name, &steps, &describe_events(program, &resolve_read_values(cand))),
            steps: steps.clone(),
        });
        entry.count += 1;
        if self.out.first_rejected.is_none() {
            let outcome = if program.condition.quantifier == Quantifier::Forall {
                format!("~({})", program.condition.text)
            } else {
                program.condition.text.clone()
            };
            self.out.first_rejected = Some(Shown::capture(program, cand, self.prepared, Some(steps), outcome));
        }
    }

    fn steers(&self) -> bool {
        true
    }

    fn may_reach(&mut self, partial: &Partial) -> bool {
        let cand = partial.cand;
        let s = cand.structure();
        let values = |o: &Observable| -> Option<Vec<i64>> {
            match o {
                Observable::Register(t, r) => match s.symbolic_registers.get(&(*t, *r)) {
                    Some(crate::exec::trace::SymExpr::Read(e)) => match partial.open_reads.iter().find(|(x, _)| x == e) {
                        Some((_, ws)) => Some(ws.iter().map(|&w| cand.values[w]).collect()),
                        None => cand.rf.predecessors(*e).first().map(|&w| vec![cand.values[w]]),
                    },
                    // A computed value: known once every read it depends on is decided.
                    Some(e) => {
                        let open = |x: usize| partial.open_reads.iter().any(|(y, _)| *y == x);
                        e.eval(&mut |x| (!open(x)).then(|| cand.value_of(x))).map(|v| vec![v])
                    }
                    None => Some(vec![s.registers[*t][*r]]),
                },
                Observable::Location(p) if partial.co_complete => Some(cand.final_values(*p)),
                Observable::Location(p) => Some(
                    s.events
                        .iter()
                        .enumerate()
                        .filter(|(_, e)| e.is_write() && e.physical == Some(*p))
                        .map(|(i, _)| cand.values[i])
                        .collect(),
                ),
            }
        };
        let filter = self.program.filter.as_ref().is_none_or(|f| f.may_be(&values).0);
        let (can_true, can_false) = self.program.condition.prop.may_be(&values);
        let wanted = self.program.condition.quantifier != Quantifier::Forall;
        filter && if wanted { can_true } else { can_false }
    }
}

/// Explain the verdict of `program`'s condition under `model`.
pub fn explain(program: &Program, model: &CatModel, opts: &RunOptions) -> Result<Explanation, RunError> {
    let opts = &opts.starting_now();
    let (_domains, per_thread) = explore_until(program, &opts.limits, false, opts.deadline)?;
    let combos = TraceCombinations::new(program, per_thread.iter().map(|t| t.traces.iter().collect()).collect());
    let checks = model.checks();
    let plan = PrunePlan::for_model(model);
    let goal = SearchGoal::default();
    let mut budget = Budget::new(&opts.limits, opts.deadline);
    let mut collected = Collected { witness: None, first_rejected: None, groups: BTreeMap::new(), rejected: 0 };
    let mut hanging = 0u64;
    let observables = observables(program);
    each_structure(program, &combos, &mut budget, &mut |_, structure, budget| {
        for resolution in resolve_barriers(structure) {
            if !resolution.blocked.is_empty() {
                hanging += 1;
                return Ok(ControlFlow::Continue(()));
            }
            let statics = StaticEnv::new(structure, &resolution);
            let lazy = LazyModel::new(model, &statics);
            let prepared = lazy.get()?;
            let mut ex = ExplainExplorer { program, prepared, checks: &checks, observables: &observables, out: &mut collected };
            search(&statics, &lazy, &plan, &goal, budget, &mut ex)?;
            if collected.witness.is_some() {
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    })?;
    let Collected { witness, first_rejected, groups, rejected } = collected;

    let condition = format!("{} ({})", program.condition.quantifier.keyword(), program.condition.text);
    let (verdict, shown) = match witness {
        Some(w) => (Verdict::Allowed, Some(w)),
        None => (Verdict::Forbidden, first_rejected),
    };
    let mut text = String::new();
    let mut rejections: Vec<RejectionGroup> = groups.into_values().collect();
    rejections.sort_by(|a, b| b.count.cmp(&a.count).then(a.axiom.cmp(&b.axiom)));
    let (events, witness_desc, races, graph) = match &shown {
        Some(s) => (s.events.clone(), Some(s.desc.clone()), s.races.clone(), s.graph.clone()),
        None => (Vec::new(), None, Vec::new(), ExecutionGraph { title: program.name.clone(), ..Default::default() }),
    };
    let mut undefined: Vec<crate::findings::Finding> =
        shown.as_ref().filter(|_| verdict == Verdict::Allowed).map(|s| s.undefined.clone()).unwrap_or_default();
    undefined.dedup();
    // Texts of the rejection groups refer to the events of the shown candidate only when it is
    // the same structure; each group carries its own event descriptions through `describe_steps`.
    let outcome = if program.condition.quantifier == Quantifier::Forall {
        format!("~({}) (a counterexample to the forall)", program.condition.text)
    } else {
        program.condition.text.clone()
    };
    // The verdict of the whole program leads: undefined behaviour anywhere, or a search that
    // could not answer, matters more than what one execution shows.
    let whole = crate::check::run(program, model, opts).ok();
    let program_verdict = whole.as_ref().map(|w| w.verdict());
    let reached = if verdict == Verdict::Allowed { "allowed" } else { "forbidden" };
    if program_verdict != Some(crate::check::Verdict::Allowed) && undefined.is_empty() {
        if let Some(w) = whole.as_ref().filter(|w| w.verdict() == crate::check::Verdict::Undefined) {
            undefined = w.undefined.iter().cloned().collect();
        }
    }
    match (program_verdict, whole.as_ref()) {
        _ if !undefined.is_empty() => {
            text.push_str(&format!(
                "Test {} is Undefined: {} undefined-behaviour finding(s), so the program has no defined outcome (the outcome {} is {reached} among its executions):\n",
                program.name,
                undefined.len(),
                outcome
            ));
            for f in &undefined {
                text.push_str(&format!("- [{}] {}\n", f.rule, f.message));
                if let Some(h) = &f.hint {
                    text.push_str(&format!("  hint: {h}\n"));
                }
            }
        }
        (Some(crate::check::Verdict::Inconclusive), Some(w)) => {
            text.push_str(&format!("Test {}: Inconclusive: {}.\n", program.name, w.inconclusive().unwrap_or_default()));
        }
        (Some(crate::check::Verdict::Unknown), Some(w)) => {
            text.push_str(&format!("Test {}: Unknown: {}.\n", program.name, w.incomplete.clone().unwrap_or_default()));
        }
        _ => {}
    }
    let inconclusive = matches!(program_verdict, Some(crate::check::Verdict::Inconclusive));
    match verdict {
        Verdict::Allowed => {
            let s = shown.as_ref().expect("allowed has a witness");
            text.push_str(&format!("Test {}: the outcome {} is allowed.\n", program.name, outcome));
            text.push_str(&format!("Witness execution (final state {}):\n", s.desc.state));
            text.push_str(&describe_execution(s));
        }
        Verdict::Forbidden => {
            if inconclusive {
                text.push_str(&format!("No complete execution that was explored reaches the outcome {outcome}.\n"));
            } else {
                text.push_str(&format!("Test {}: the outcome {} is forbidden.\n", program.name, outcome));
            }
            if rejections.is_empty() && hanging > 0 {
                text.push_str(&format!(
                    "No terminating execution reaches it; {hanging} combination(s) of thread runs wait forever at a barrier (see the Liveness report of `ptxmm run`).\n"
                ));
            } else if rejections.is_empty() && inconclusive {
                text.push_str("No candidate execution of the runs explored reaches it.\n");
            } else if rejections.is_empty() {
                text.push_str("No candidate execution reaches it: no combination of reads-from gives these values.\n");
            } else {
                text.push_str(&format!(
                    "Every candidate execution that could reach it violates an axiom; the search rejected them in {rejected} group(s), each as soon as its violation was certain:\n"
                ));
                for g in &rejections {
                    text.push_str(&format!("- {} group(s): {}\n", g.count, g.text));
                }
                if let Some(s) = &shown {
                    text.push_str("First rejected candidate:\n");
                    text.push_str(&describe_execution(s));
                }
            }
        }
    }
    if !races.is_empty() {
        text.push_str("Data races in this execution:\n");
        for r in &races {
            text.push_str(&format!("- {}\n", r.text));
        }
    }
    let program_verdict_reason = whole.as_ref().and_then(|w| w.inconclusive().or_else(|| w.incomplete.clone()));
    Ok(Explanation {
        test: program.name.clone(),
        condition,
        verdict,
        program_verdict,
        program_verdict_reason,
        events,
        witness: witness_desc.filter(|_| verdict == Verdict::Allowed),
        rejections,
        races,
        undefined,
        rejected_candidates: rejected,
        graph,
        text,
    })
}

/// If some final state of the candidate is the outcome explained (the proposition, or its
/// negation for `forall`) and passes the filter, that state as text.
fn satisfying_state(program: &Program, cand: &Candidate, observables: &[Observable]) -> Option<String> {
    // For `forall P` the outcome of interest is a counterexample, i.e. `~P`.
    let wanted = program.condition.quantifier != Quantifier::Forall;
    final_states(cand, observables).into_iter().find_map(|state| {
        let get = |o: &Observable| value_in(observables, &state, o);
        let hit = program.filter.as_ref().is_none_or(|f| f.eval(&get)) && program.condition.prop.eval(&get) == wanted;
        hit.then(|| {
            observables.iter().zip(&state).map(|(o, v)| format!("{}={}", program.observable_name(o), v)).collect::<Vec<_>>().join(" ")
        })
    })
}

/// The relations used to label steps, most specific first.
struct Vocabulary {
    entries: Vec<(String, Relation)>,
}

/// (model name, label) of model definitions worth naming, in order of preference. Both our
/// models' and Dat3M's spellings are listed.
const MODEL_VOCABULARY: &[(&str, &str)] =
    &[("sync-pattern", "sync"), ("sync", "sync"), ("sync-barrier", "bar-sync"), ("sync_barrier", "bar-sync"), ("sync_fence", "fence-sc")];
const COARSE_VOCABULARY: &[(&str, &str)] =
    &[("observation", "obs"), ("base-causality", "base-causality"), ("cause-base", "base-causality"), ("cause", "cause")];

impl Vocabulary {
    fn new(cand: &Candidate, prepared: &Prepared) -> Self {
        let mut entries = Vec::new();
        let model = |list: &[(&str, &str)], entries: &mut Vec<(String, Relation)>| {
            for (name, label) in list {
                if entries.iter().any(|(l, _)| l == label) {
                    continue;
                }
                if let Ok(Some(Value::Rel(r))) = prepared.value_of(name, cand) {
                    if !r.is_empty() {
                        entries.push((label.to_string(), r));
                    }
                }
            }
        };
        model(MODEL_VOCABULARY, &mut entries);
        entries.push(("rf".into(), cand.rf.clone()));
        entries.push(("fr".into(), cand.fr()));
        entries.push(("co".into(), cand.co.clone()));
        entries.push(("po".into(), cand.statics.structure.relations["po"].clone()));
        for dep in ["addr", "data", "ctrl"] {
            entries.push((dep.into(), cand.statics.structure.relations[dep].clone()));
        }
        model(COARSE_VOCABULARY, &mut entries);
        Vocabulary { entries }
    }

    fn label(&self, a: usize, b: usize) -> Option<&str> {
        self.entries.iter().find(|(_, r)| r.contains(a, b)).map(|(l, _)| l.as_str())
    }

    /// Union of the entries up to (excluding) the coarse ones, or of all of them.
    fn union(&self, coarse: bool) -> Relation {
        let n = self.entries[0].1.universe();
        let mut u = Relation::empty(n);
        for (l, r) in &self.entries {
            if !coarse && COARSE_VOCABULARY.iter().any(|(_, c)| c == l) {
                continue;
            }
            u.union_with(r);
        }
        u
    }
}

/// A cycle or edge witnessing the failure of a check, labelled step by step.
fn violation_steps(kind: CheckKind, relation: &Relation, vocab: &Vocabulary) -> Vec<Step> {
    let label = |a: usize, b: usize| vocab.label(a, b).unwrap_or("?").to_string();
    match kind {
        CheckKind::Acyclic => match relation.find_cycle() {
            Some(c) => {
                (0..c.len()).map(|i| Step { from: c[i], relation: label(c[i], c[(i + 1) % c.len()]), to: c[(i + 1) % c.len()] }).collect()
            }
            None => Vec::new(),
        },
        CheckKind::Irreflexive => {
            let Some(e) = (0..relation.universe()).find(|&e| relation.contains(e, e)) else { return Vec::new() };
            // Find the shortest cycle through e, first with specific relations only.
            for coarse in [false, true] {
                if let Some(path) = shortest_cycle(&vocab.union(coarse), e) {
                    return (0..path.len())
                        .map(|i| Step {
                            from: path[i],
                            relation: label(path[i], path[(i + 1) % path.len()]),
                            to: path[(i + 1) % path.len()],
                        })
                        .collect();
                }
            }
            vec![Step { from: e, relation: "?".into(), to: e }]
        }
        CheckKind::Empty => match relation.pairs().next() {
            Some((a, b)) => vec![Step { from: a, relation: label(a, b), to: b }],
            None => Vec::new(),
        },
    }
}

/// Shortest cycle through `e` (breadth-first), as the list of its events starting at `e`.
fn shortest_cycle(r: &Relation, e: usize) -> Option<Vec<usize>> {
    let n = r.universe();
    let mut parent = vec![usize::MAX; n];
    let mut queue = std::collections::VecDeque::new();
    for s in r.successors(e).iter() {
        if s == e {
            return Some(vec![e]);
        }
        if parent[s] == usize::MAX {
            parent[s] = e;
            queue.push_back(s);
        }
    }
    while let Some(x) = queue.pop_front() {
        for y in r.successors(x).iter() {
            if y == e {
                let mut path = vec![x];
                let mut cur = x;
                while parent[cur] != e {
                    cur = parent[cur];
                    path.push(cur);
                }
                path.push(e);
                path.reverse();
                return Some(path);
            }
            if parent[y] == usize::MAX {
                parent[y] = x;
                queue.push_back(y);
            }
        }
    }
    None
}

fn describe_steps(axiom: &str, steps: &[Step], events: &[EventDesc]) -> String {
    if steps.is_empty() {
        return axiom.to_string();
    }
    let mut s = format!("{axiom}: {}", events[steps[0].from].short());
    let closes =
        steps.last().is_some_and(|l| l.to == steps[0].from) && steps.len() > 1 || (steps.len() == 1 && steps[0].from == steps[0].to);
    for (i, st) in steps.iter().enumerate() {
        if closes && i + 1 == steps.len() {
            s.push_str(&format!(" –{}→ back", st.relation));
        } else {
            s.push_str(&format!(" –{}→ {}", st.relation, events[st.to].short()));
        }
    }
    if !closes {
        s.push_str(" (this edge must not exist)");
    }
    s
}

/// One execution captured for display.
#[derive(Clone)]
struct Shown {
    /// Descriptions of every event of the structure (indexed like the structure).
    all_events: Vec<EventDesc>,
    events: Vec<EventDesc>,
    desc: ExecutionDesc,
    races: Vec<Race>,
    undefined: Vec<crate::findings::Finding>,
    graph: ExecutionGraph,
}

impl Shown {
    fn capture(program: &Program, cand: &Candidate, prepared: &Prepared, cycle: Option<Vec<Step>>, state: String) -> Self {
        let resolved = resolve_read_values(cand);
        let s = &resolved;
        let all_events = describe_events(program, s);
        let immediate = |r: &Relation| {
            let two = r.seq(r);
            r.difference(&two).pairs().collect::<Vec<_>>()
        };
        let desc = ExecutionDesc { rf: cand.rf.pairs().collect(), co: immediate(&cand.co), fence_sc: immediate(&cand.sync_fence), state };
        let races = races(s, cand, prepared, &all_events);
        let graph = build_graph(program, s, cand, &all_events, cycle.as_deref());
        let undefined = match prepared.evaluate(cand, false) {
            Ok(eval) => crate::findings::of_execution(cand, &eval.fired_flags(), Some(prepared)).undefined,
            Err(_) => Vec::new(),
        };
        Shown { events: all_events.clone(), all_events, desc, races, undefined, graph }
    }
}

/// The structure with the values events have in this candidate: mbarrier events get theirs
/// from the histories, a symbolic read (its value is only observed at the end) shows the value
/// of the write it reads.
fn resolve_read_values<'p>(cand: &'p Candidate<'_>) -> EventStructure<'p> {
    let s = cand.structure();
    let mut resolved: EventStructure = s.clone();
    for e in 0..s.n() {
        resolved.events[e].value = cand.value_of(e);
        resolved.events[e].ub = cand.ub_reasons[e].clone();
    }
    resolved
}

fn describe_events(program: &Program, s: &EventStructure) -> Vec<EventDesc> {
    let mut letter = 0usize;
    s.events
        .iter()
        .map(|e| {
            let loc = |e: &Event| e.location.map(|l| program.locations[l].name.clone()).unwrap_or_default();
            match e.thread {
                None => EventDesc {
                    name: format!("init {}", program.physical[e.physical.expect("init has a location")].name),
                    action: format!("W {}={}", program.physical[e.physical.expect("init has a location")].name, e.value),
                    thread: None,
                    line: None,
                    instruction: None,
                },
                Some(t) => {
                    let instr = &program.threads[t].code[e.instr.expect("thread events have an instruction")];
                    let value = |e: &Event| match e.location {
                        Some(l) if program.variable_of(l).kind == crate::program::VariableKind::Mbarrier => {
                            format!("({})", crate::exec::mbarrier::MbState::describe(e.value))
                        }
                        _ => e.value.to_string(),
                    };
                    let mut action = match &e.kind {
                        EventKind::Read => format!("R {}={}", loc(e), value(e)),
                        EventKind::Write | EventKind::Init => format!("W {}={}", loc(e), value(e)),
                        EventKind::Fence => {
                            format!("F {}", instr.text.split_whitespace().next().unwrap_or("fence").trim_start_matches("fence."))
                        }
                        EventKind::Barrier { .. } | EventKind::ClusterBarrier { .. } => format!("B {}", instr.text),
                        EventKind::Marker => format!("wait {}", instr.text),
                    };
                    if e.agent.is_some() {
                        action = format!("async {action}");
                    }
                    let name = event_letter(letter);
                    letter += 1;
                    EventDesc {
                        name,
                        action,
                        thread: Some(format!("P{}", program.threads[t].id)),
                        line: Some(instr.line),
                        instruction: Some(instr.text.clone()),
                    }
                }
            }
        })
        .collect()
}

/// `a`…`z`, then `a1`, `b1`, …
fn event_letter(i: usize) -> String {
    let c = (b'a' + (i % 26) as u8) as char;
    if i < 26 {
        c.to_string()
    } else {
        format!("{c}{}", i / 26)
    }
}

/// Conflicting accesses (same location, one writes, different threads) that are neither
/// morally strong nor ordered by causality (PTX ISA §8.7.1), when the model names both.
fn races(s: &EventStructure, cand: &Candidate, prepared: &Prepared, events: &[EventDesc]) -> Vec<Race> {
    let (Ok(Some(Value::Rel(ms))), Ok(Some(Value::Rel(cause)))) =
        (prepared.value_of("morally-strong", cand), prepared.value_of("cause", cand))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for a in 0..s.n() {
        for b in a + 1..s.n() {
            let (ea, eb) = (&s.events[a], &s.events[b]);
            // Different performers: threads, or a thread and an async agent (even its own).
            let same_performer = s.relations["int"].contains(a, b);
            let both_mbarrier = ea.has_tag("MB") && eb.has_tag("MB");
            if ea.thread.is_none()
                || eb.thread.is_none()
                || same_performer
                || both_mbarrier
                || ea.physical.is_none()
                || ea.physical != eb.physical
            {
                continue;
            }
            if !(ea.is_write() || eb.is_write()) || ms.contains(a, b) || cause.contains(a, b) || cause.contains(b, a) {
                continue;
            }
            out.push(Race {
                first: a,
                second: b,
                text: format!(
                    "{} and {} conflict and are neither morally strong nor ordered by causality: {}",
                    events[a].short(),
                    events[b].short(),
                    crate::findings::missing_order(s, a, b)
                ),
            });
        }
    }
    out
}

fn describe_execution(s: &Shown) -> String {
    let mut t = String::new();
    for e in s.all_events.iter().filter(|e| e.thread.is_some()) {
        t.push_str(&format!("  {}  `{}`\n", e.short(), e.instruction.as_deref().unwrap_or("")));
    }
    let name = |i: usize| s.all_events[i].name.clone();
    if !s.desc.rf.is_empty() {
        t.push_str(&format!(
            "  rf: {}\n",
            s.desc.rf.iter().map(|(w, r)| format!("{} -> {}", name(*w), name(*r))).collect::<Vec<_>>().join(", ")
        ));
    }
    if !s.desc.co.is_empty() {
        t.push_str(&format!(
            "  co: {}\n",
            s.desc.co.iter().map(|(a, b)| format!("{} -> {}", name(*a), name(*b))).collect::<Vec<_>>().join(", ")
        ));
    }
    if !s.desc.fence_sc.is_empty() {
        t.push_str(&format!(
            "  fence-sc: {}\n",
            s.desc.fence_sc.iter().map(|(a, b)| format!("{} -> {}", name(*a), name(*b))).collect::<Vec<_>>().join(", ")
        ));
    }
    t
}

fn build_graph(program: &Program, s: &EventStructure, cand: &Candidate, events: &[EventDesc], cycle: Option<&[Step]>) -> ExecutionGraph {
    let node = |i: usize| GraphNode {
        id: i,
        label: format!("{}: {}", events[i].name, events[i].action),
        detail: match (&events[i].instruction, events[i].line) {
            (Some(ins), Some(l)) => format!("{ins} (line {l})"),
            _ => String::new(),
        },
    };
    let init = (0..s.n()).filter(|&i| s.events[i].thread.is_none()).map(node).collect();
    let threads = s
        .thread_events
        .iter()
        .enumerate()
        .map(|(t, ids)| GraphThread { name: format!("P{}", program.threads[t].id), nodes: ids.iter().map(|&i| node(i)).collect() })
        .collect();
    let mut edges = Vec::new();
    let on_cycle = |a: usize, b: usize| cycle.is_some_and(|c| c.iter().any(|st| st.from == a && st.to == b));
    for ids in &s.thread_events {
        for w in ids.windows(2) {
            edges.push(GraphEdge { from: w[0], to: w[1], label: "po".into(), highlighted: on_cycle(w[0], w[1]) });
        }
    }
    let add = |r: &Relation, label: &str, edges: &mut Vec<GraphEdge>| {
        for (a, b) in r.pairs() {
            edges.push(GraphEdge { from: a, to: b, label: label.into(), highlighted: on_cycle(a, b) });
        }
    };
    add(&cand.rf, "rf", &mut edges);
    let co_imm = cand.co.difference(&cand.co.seq(&cand.co));
    // Edges from the initial write are implied; draw coherence between thread writes only.
    let co_threads = Relation::from_fn(s.n(), |a, b| co_imm.contains(a, b) && s.events[a].thread.is_some());
    add(&co_threads, "co", &mut edges);
    let fr = cand.fr();
    let fr_imm =
        Relation::from_fn(s.n(), |a, b| fr.contains(a, b) && !(0..s.n()).any(|c| fr.contains(a, c) && co_imm.contains(c, b) && c != b));
    add(&fr_imm, "fr", &mut edges);
    add(&cand.sync_fence.difference(&cand.sync_fence.seq(&cand.sync_fence)), "fence-sc", &mut edges);
    // Cycle steps not drawn yet (e.g. sync, cause) are added with their own label.
    if let Some(c) = cycle {
        for st in c {
            if !edges.iter().any(|e| e.from == st.from && e.to == st.to && e.label == st.relation) {
                edges.push(GraphEdge { from: st.from, to: st.to, label: st.relation.clone(), highlighted: true });
            }
        }
    }
    let outcome = if program.condition.quantifier == Quantifier::Forall {
        format!("~({})", program.condition.text)
    } else {
        program.condition.text.clone()
    };
    let title = match cycle {
        Some(_) => format!("{}: a rejected candidate reaching {}", program.name, outcome),
        None => format!("{}: an execution reaching {}", program.name, outcome),
    };
    ExecutionGraph { title, init, threads, edges }
}
