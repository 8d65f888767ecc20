//! Executions and rejections described in the program's own terms: events named and
//! labelled, cycles labelled with the model's relations, the execution drawn.

use super::graph::{ExecutionGraph, GraphEdge, GraphNode, GraphThread};
use super::{EventDesc, ExecutionDesc, MirroredWords, Race, Step};
use crate::cat::{CheckKind, Prepared, Value};
use crate::decide::verdict::{final_states, value_in};
use crate::exec::search::Candidate;
use crate::exec::structure::{Event, EventKind, EventStructure};
use crate::litmus::ast::Quantifier;
use crate::program::naming::{float_text, location_log_name, observable_float_type, typed_value, word_float_type};
use crate::program::{Observable, Program};
use crate::relation::Relation;

/// If some final state of the candidate is the outcome explained (the proposition, or its
/// negation for `forall`) and passes the filter, that state as text.
pub(super) fn satisfying_state(program: &Program, cand: &Candidate, observables: &[Observable]) -> Option<String> {
    // For `forall P` the outcome of interest is a counterexample, i.e. `~P`.
    let wanted = program.condition.quantifier != Quantifier::Forall;
    final_states(cand, observables).into_iter().find_map(|state| {
        let get = |o: &Observable| value_in(observables, &state, o);
        let hit = program.filter.as_ref().is_none_or(|f| f.eval(&get)) && program.condition.prop.eval(&get) == wanted;
        hit.then(|| {
            observables
                .iter()
                .zip(&state)
                .map(|(o, v)| {
                    let shown = typed_value(observable_float_type(program, o), *v);
                    format!("{}={shown}", crate::program::naming::observable_log_name(program, o))
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
    })
}

/// The relations used to label steps, most specific first.
pub(super) struct Vocabulary {
    entries: Vec<(String, Relation)>,
}

/// (model name, label) of model definitions worth naming, in order of preference. Both our
/// models' and Dat3M's spellings are listed.
const MODEL_VOCABULARY: &[(&str, &str)] =
    &[("sync-pattern", "sync"), ("sync", "sync"), ("sync-barrier", "bar-sync"), ("sync_barrier", "bar-sync"), ("sync_fence", "fence-sc")];
const COARSE_VOCABULARY: &[(&str, &str)] =
    &[("observation", "obs"), ("base-causality", "base-causality"), ("cause-base", "base-causality"), ("cause", "cause")];

impl Vocabulary {
    pub(super) fn new(cand: &Candidate, prepared: &Prepared) -> Self {
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
pub(super) fn violation_steps(kind: CheckKind, relation: &Relation, vocab: &Vocabulary) -> Vec<Step> {
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

pub(super) fn describe_steps(axiom: &str, steps: &[Step], events: &[EventDesc]) -> String {
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
pub(super) struct Shown {
    /// Descriptions of every event of the structure (indexed like the structure).
    pub(super) all_events: Vec<EventDesc>,
    pub(super) events: Vec<EventDesc>,
    pub(super) desc: ExecutionDesc,
    pub(super) races: Vec<Race>,
    pub(super) undefined: Vec<crate::decide::findings::Finding>,
    pub(super) graph: ExecutionGraph,
}

impl Shown {
    pub(super) fn capture(program: &Program, cand: &Candidate, prepared: &Prepared, cycle: Option<Vec<Step>>, state: String) -> Self {
        let resolved = resolve_read_values(cand);
        let s = &resolved;
        let all_events = describe_events(program, s);
        let immediate = |r: &Relation| {
            let two = r.seq(r);
            r.difference(&two).pairs().collect::<Vec<_>>()
        };
        let desc = ExecutionDesc {
            rf: cand.rf.pairs().collect(),
            co: immediate(&cand.co),
            fence_sc: immediate(&cand.sync_fence),
            state,
            mirrored: mirrored_words(program, s),
        };
        let races = races(s, cand, prepared, &all_events);
        let graph = build_graph(program, s, cand, &all_events, cycle.as_deref());
        let undefined = match prepared.evaluate(cand, false) {
            Ok(eval) => crate::decide::findings::of_execution(cand, &eval.fired_flags(), Some(prepared)).undefined,
            Err(_) => Vec::new(),
        };
        Shown { events: all_events.clone(), all_events, desc, races, undefined, graph }
    }
}

/// The structure with the values events have in this candidate: mbarrier events get theirs
/// from the histories, a symbolic read (its value is only observed at the end) shows the value
/// of the write it reads.
pub(super) fn resolve_read_values<'p>(cand: &'p Candidate<'_>) -> EventStructure<'p> {
    let s = cand.structure();
    let mut resolved: EventStructure = s.clone();
    for e in 0..s.n() {
        resolved.events[e].value = cand.value_of(e);
        resolved.events[e].ub = cand.ub_reasons[e].clone();
    }
    resolved
}

pub(super) fn describe_events(program: &Program, s: &EventStructure) -> Vec<EventDesc> {
    let mut letter = 0usize;
    s.events
        .iter()
        .map(|e| {
            let loc = |e: &Event| e.location.map(|l| location_log_name(&program.location_name(l))).unwrap_or_default();
            match e.thread {
                None => {
                    let p = e.physical.expect("init has a location");
                    let float = observable_float_type(program, &Observable::Location(p));
                    EventDesc {
                        name: format!("init {}", location_log_name(&program.physical_name(p))),
                        action: format!("W {}={}", location_log_name(&program.physical_name(p)), typed_value(float, e.value)),
                        float: float.map(|t| float_text(t, e.value)),
                        thread: None,
                        line: None,
                        instruction: None,
                    }
                }
                Some(t) => {
                    let instr = &program.threads[t].code[e.instr.expect("thread events have an instruction")];
                    let mbarrier = e.location.is_some_and(|l| s.is_mbarrier(l));
                    // The words of an `.f32` access or reduction carry floats.
                    let float = word_float_type(&instr.op).filter(|_| !mbarrier && e.location.is_some());
                    let value = |e: &Event| match mbarrier {
                        true => format!("({})", crate::program::mbarrier::MbState::describe(e.value)),
                        false => typed_value(float, e.value),
                    };
                    let mut action = match &e.kind {
                        EventKind::Read => format!("R {}={}", loc(e), value(e)),
                        EventKind::Write | EventKind::Init => format!("W {}={}", loc(e), value(e)),
                        EventKind::Fence => {
                            format!("F {}", instr.text.split_whitespace().next().unwrap_or("fence").trim_start_matches("fence."))
                        }
                        EventKind::Barrier { .. } | EventKind::ClusterBarrier { .. } | EventKind::WarpBarrier { .. } => {
                            format!("B {}", instr.text)
                        }
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
                        float: float.map(|t| float_text(t, e.value)),
                        thread: Some(program.threads[t].name()),
                        line: Some(instr.line),
                        instruction: Some(instr.text.clone()),
                    }
                }
            }
        })
        .collect()
}

/// The words that accesses of the structure cover but that have no events of their own,
/// grouped by the shown word whose events stand for them.
fn mirrored_words(program: &Program, s: &EventStructure) -> Vec<MirroredWords> {
    let fates = crate::exec::trace::word_fates(program);
    let shown: std::collections::BTreeSet<usize> = s.events.iter().filter(|e| e.thread.is_some()).filter_map(|e| e.location).collect();
    let mut out: Vec<MirroredWords> = Vec::new();
    for (l, fate) in fates.iter().enumerate() {
        let crate::exec::trace::WordFate::Mirrors(first) = *fate else { continue };
        if !shown.contains(&first) {
            continue;
        }
        let word = location_log_name(&program.location_name(first));
        let also = location_log_name(&program.location_name(l));
        match out.iter_mut().find(|m| m.word == word) {
            Some(m) => m.also.push(also),
            None => out.push(MirroredWords { word, also: vec![also] }),
        }
    }
    out
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
                    "{} and {}{}{}",
                    events[a].short(),
                    events[b].short(),
                    super::CAUSALITY_COLON,
                    crate::decide::findings::missing_order(s, a, b)
                ),
            });
        }
    }
    out
}

pub(super) fn describe_execution(s: &Shown) -> String {
    let mut t = String::new();
    for e in s.all_events.iter().filter(|e| e.thread.is_some()) {
        t.push_str(&format!("  {}  `{}`\n", e.short(), e.instruction.as_deref().unwrap_or("")));
    }
    if !s.desc.mirrored.is_empty() {
        let groups: Vec<String> = s.desc.mirrored.iter().map(|m| format!("{} (as {})", m.also.join(", "), m.word)).collect();
        t.push_str(&format!(
            "  also covered: {}: their events would mirror those of the word named (the same instructions touch them the same way) and their values matter to no read and no final state, so they are not generated\n",
            groups.join(", ")
        ));
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
        variable: s.events[i].location.map(|l| program.variable_of(l).name.clone()),
    };
    let init = (0..s.n()).filter(|&i| s.events[i].thread.is_none()).map(node).collect();
    let threads = s
        .thread_events
        .iter()
        .enumerate()
        .map(|(t, ids)| GraphThread { name: program.threads[t].name(), nodes: ids.iter().map(|&i| node(i)).collect() })
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
    let condition = crate::program::naming::condition_log_text(program);
    let outcome = if program.condition.quantifier == Quantifier::Forall { format!("~({condition})") } else { condition };
    let title = match cycle {
        Some(_) => format!("{}: a rejected candidate reaching {}", program.name, outcome),
        None => format!("{}: an execution reaching {}", program.name, outcome),
    };
    ExecutionGraph { title, init, threads, edges }
}
