//! What a drawing of an execution leaves out by default, so that the part that matters is readable.
//!
//! An explanation is about a few events: the violated cycle, or a racing pair (the highlighted edges).
//! A TMA ring shows dozens of others (every word of every copy, every mbarrier update) and one initial write
//! per word, which made its picture a 5748-pixel-wide thumbnail. By default the drawing keeps the events at
//! the ends of highlighted edges, every event on a variable one of them accesses, and nothing else: each run
//! of consecutive left-out events of a thread becomes one `⋯ N events folded` box in its place (so program
//! order stays visible), and the initial writes one box of their own. With nothing highlighted (an allowed
//! outcome without races) only the initial writes are folded. `explain --svg --all-events` and the page's
//! *All events* draw everything.

use super::graph::{ExecutionGraph, GraphEdge, GraphNode, GraphThread};
use std::collections::{BTreeSet, HashSet};

/// A graph ready to draw, with what the drawing marks.
pub(super) struct Folded {
    pub(super) graph: ExecutionGraph,
    /// Events at an end of a highlighted edge.
    pub(super) focus: HashSet<usize>,
    /// The `⋯ N events folded` boxes (ids beyond every event's).
    pub(super) placeholders: HashSet<usize>,
    /// How many events the placeholders stand for.
    pub(super) hidden: usize,
    /// How many of them are initial writes.
    pub(super) hidden_init: usize,
}

/// The events at an end of a highlighted edge.
fn focus_of(g: &ExecutionGraph) -> HashSet<usize> {
    g.edges.iter().filter(|e| e.highlighted).flat_map(|e| [e.from, e.to]).collect()
}

/// `g` drawn in full: only the focus is marked.
pub(super) fn unfolded(g: &ExecutionGraph) -> Folded {
    Folded { graph: g.clone(), focus: focus_of(g), placeholders: HashSet::new(), hidden: 0, hidden_init: 0 }
}

/// `g` with the initial writes and the events unrelated to the highlighted edges folded (module
/// documentation).
pub(super) fn folded(g: &ExecutionGraph) -> Folded {
    let focus = focus_of(g);
    let thread_nodes = || g.threads.iter().flat_map(|t| &t.nodes);
    let related: BTreeSet<&str> =
        g.init.iter().chain(thread_nodes()).filter(|n| focus.contains(&n.id)).filter_map(|n| n.variable.as_deref()).collect();
    let keep_event =
        |n: &GraphNode| focus.is_empty() || focus.contains(&n.id) || n.variable.as_deref().is_some_and(|v| related.contains(v));
    let mut ph =
        Placeholders { next_id: g.init.iter().chain(thread_nodes()).map(|n| n.id + 1).max().unwrap_or(0), ids: HashSet::new(), hidden: 0 };

    let mut init: Vec<GraphNode> = g.init.iter().filter(|n| focus.contains(&n.id)).cloned().collect();
    let folded_init = g.init.len() - init.len();
    if folded_init > 0 {
        init.push(ph.make(folded_init, "initial write"));
    }
    let mut extra_po = Vec::new();
    let mut threads = Vec::with_capacity(g.threads.len());
    for t in &g.threads {
        let mut nodes: Vec<GraphNode> = Vec::with_capacity(t.nodes.len());
        let mut run = 0;
        for n in &t.nodes {
            if keep_event(n) {
                if run > 0 {
                    nodes.push(ph.make(run, "event"));
                    run = 0;
                }
                nodes.push(n.clone());
            } else {
                run += 1;
            }
        }
        if run > 0 {
            nodes.push(ph.make(run, "event"));
        }
        // Program order through a placeholder: the events around it were consecutive only through it.
        for pair in nodes.windows(2) {
            if let [a, b] = pair {
                if ph.ids.contains(&a.id) || ph.ids.contains(&b.id) {
                    extra_po.push(GraphEdge { from: a.id, to: b.id, label: "po".into(), highlighted: false });
                }
            }
        }
        threads.push(GraphThread { name: t.name.clone(), nodes });
    }
    let kept: HashSet<usize> = init.iter().chain(threads.iter().flat_map(|t| &t.nodes)).map(|n| n.id).collect();
    let mut edges: Vec<GraphEdge> = g.edges.iter().filter(|e| kept.contains(&e.from) && kept.contains(&e.to)).cloned().collect();
    edges.extend(extra_po);
    let graph = ExecutionGraph { title: g.title.clone(), init, threads, edges };
    Folded { graph, focus, placeholders: ph.ids, hidden: ph.hidden, hidden_init: folded_init }
}

/// The placeholder boxes made so far.
struct Placeholders {
    /// The id of the next one (beyond every event's).
    next_id: usize,
    ids: HashSet<usize>,
    /// How many events they stand for.
    hidden: usize,
}

impl Placeholders {
    /// A box standing for `count` folded `what`s.
    fn make(&mut self, count: usize, what: &str) -> GraphNode {
        let id = self.next_id;
        self.next_id += 1;
        self.ids.insert(id);
        self.hidden += count;
        let plural = if count == 1 { "" } else { "s" };
        GraphNode { id, label: format!("⋯ {count} {what}{plural} folded"), detail: String::new(), variable: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::explain::dot::tests::mp_graph;

    fn labels(t: &GraphThread) -> Vec<&str> {
        t.nodes.iter().map(|n| n.label.as_str()).collect()
    }

    #[test]
    fn a_cycle_keeps_its_variables_and_folds_the_initial_writes() {
        let f = folded(&mp_graph());
        // The cycle touches x and y: every thread event stays, the two initial writes become one box.
        assert_eq!(f.graph.init.len(), 1);
        assert_eq!(f.graph.init[0].label, "⋯ 2 initial writes folded");
        assert_eq!(labels(&f.graph.threads[0]), ["a: W x=1", "b: W y=1"]);
        assert_eq!(f.hidden, 2);
        assert_eq!(f.focus, [2, 3, 4, 5].into_iter().collect());
        // Edges from the initial writes go with them.
        assert!(f.graph.edges.iter().all(|e| e.from != 0 && e.from != 1));
        assert_eq!(f.graph.edges.len(), mp_graph().edges.len() - 3);
    }

    #[test]
    fn a_race_folds_other_variables_in_program_order() {
        let mut g = mp_graph();
        for e in &mut g.edges {
            e.highlighted = false;
        }
        // P0: a W x, b W y; P1: c R y, d R x. A race on x (a, d) keeps a and d, folds b and c.
        g.edges.push(GraphEdge { from: 2, to: 5, label: "race".into(), highlighted: true });
        g.threads[0].nodes.push(GraphNode { id: 6, label: "e: W x=2".into(), detail: String::new(), variable: Some("x".into()) });
        let f = folded(&g);
        assert_eq!(labels(&f.graph.threads[0]), ["a: W x=1", "⋯ 1 event folded", "e: W x=2"]);
        assert_eq!(labels(&f.graph.threads[1]), ["⋯ 1 event folded", "d: R x=0"]);
        assert_eq!((f.hidden, f.hidden_init), (4, 2));
        assert_eq!(f.placeholders.len(), 3);
        // Program order runs through the placeholder; nothing points at a folded event.
        let ids: HashSet<usize> = f.graph.init.iter().chain(f.graph.threads.iter().flat_map(|t| &t.nodes)).map(|n| n.id).collect();
        assert!(f.graph.edges.iter().all(|e| ids.contains(&e.from) && ids.contains(&e.to)));
        assert_eq!(f.graph.edges.iter().filter(|e| e.label == "po").count(), 3);
        assert!(f.graph.edges.iter().any(|e| e.label == "race" && e.highlighted));
    }

    #[test]
    fn nothing_highlighted_folds_only_the_initial_writes() {
        let mut g = mp_graph();
        for e in &mut g.edges {
            e.highlighted = false;
        }
        let f = folded(&g);
        assert!(f.focus.is_empty());
        assert_eq!(f.graph.threads[0].nodes.len(), 2);
        assert_eq!(f.graph.threads[1].nodes.len(), 2);
        assert_eq!(f.hidden, 2);
        let all = unfolded(&g);
        assert_eq!((all.hidden, all.graph.init.len()), (0, 2));
    }
}
