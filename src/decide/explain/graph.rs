//! A drawable execution: events grouped by thread, labelled edges, some highlighted.
//!
//! The explanation stage builds it; `dot` and `svg` render it.

use serde::Serialize;

/// One execution as a graph.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ExecutionGraph {
    /// Test name and what the picture shows (e.g. "MP: forbidden outcome, Causality cycle").
    pub title: String,
    /// Initial writes, drawn apart from the threads.
    pub init: Vec<GraphNode>,
    /// One column per thread, nodes in program order.
    pub threads: Vec<GraphThread>,
    pub edges: Vec<GraphEdge>,
}

#[derive(Clone, Debug, Serialize)]
pub struct GraphThread {
    /// `P0`, `P1`, ...
    pub name: String,
    pub nodes: Vec<GraphNode>,
}

#[derive(Clone, Debug, Serialize)]
pub struct GraphNode {
    /// Unique across the graph (the event index).
    pub id: usize,
    /// Short event text, e.g. `a: W x=1`.
    pub label: String,
    /// The instruction and line, e.g. `st.weak x, 1 (line 6)`.
    pub detail: String,
    /// The variable the event accesses (`x`; all words of an array are one variable), None for
    /// fences and barriers. The SVG folds events of variables the highlighted edges do not touch.
    /// Not in the JSON record, whose graph lists what is drawn.
    #[serde(skip)]
    pub variable: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct GraphEdge {
    pub from: usize,
    pub to: usize,
    /// Relation name: `po`, `rf`, `co`, `fr`, `sync`, `cause`, ...
    pub label: String,
    /// What the explanation is about (drawn bold and red): an edge of the violated axiom's
    /// cycle, or a racing pair (label `race`).
    pub highlighted: bool,
}
