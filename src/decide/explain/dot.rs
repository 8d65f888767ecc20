//! Graphviz DOT rendering of an [`ExecutionGraph`].
//!
//! The output is plain text for users who have Graphviz (`dot -Tsvg`, `-Tpdf`, ...); ptxmm itself never
//! runs Graphviz. The picture follows herd7's conventions: one box per thread with its events stacked in
//! program order, the initial writes in a box of their own above, relations colour-coded, and the edges of
//! the violated axiom's cycle in bold red.

use super::graph::{ExecutionGraph, GraphEdge, GraphNode};
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

/// Render `g` as a Graphviz digraph.
///
/// Node `id`s become DOT node names `n<id>`; threads become `subgraph cluster_<i>` (the `cluster_` prefix is
/// what makes Graphviz draw a box around them), the initial writes `subgraph cluster_init`. Every edge of
/// `g.edges` is emitted, including `po`; an edge naming an id that no node has is kept too, so Graphviz draws
/// a bare node for it and the inconsistency stays visible instead of being silently dropped.
pub fn to_dot(g: &ExecutionGraph) -> String {
    let mut out = String::new();
    // `write!` into a `String` cannot fail, so its `Result` is discarded (`let _ =`) rather than unwrapped.
    let _ = writeln!(out, "digraph ptxmm {{");
    // `labelloc=t` puts the title above the picture.
    let _ = writeln!(
        out,
        "  graph [label=\"{}\", labelloc=t, fontname=\"Helvetica\", fontsize=14, nodesep=0.6, ranksep=0.5];",
        escape(&g.title)
    );
    let _ = writeln!(out, "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Courier\", fontsize=11];");
    let _ = writeln!(out, "  edge [fontname=\"Helvetica\", fontsize=10];");

    if !g.init.is_empty() {
        let _ = writeln!(out, "  subgraph cluster_init {{");
        let _ = writeln!(out, "    label=\"init\"; style=\"dashed,rounded\"; color=gray50;");
        for node in &g.init {
            write_node(&mut out, node);
        }
        // Initial writes happen "before" every thread: keep them on one row.
        write_same_rank(&mut out, g.init.iter());
        let _ = writeln!(out, "  }}");
    }

    for (i, thread) in g.threads.iter().enumerate() {
        let _ = writeln!(out, "  subgraph cluster_{i} {{");
        let _ = writeln!(out, "    label=\"{}\"; style=rounded; color=gray30;", escape(&thread.name));
        for node in &thread.nodes {
            write_node(&mut out, node);
        }
        let _ = writeln!(out, "  }}");
    }

    write_layout_hints(&mut out, g);

    // Where each event sits in program order: (thread, index). The first event wins if an id repeats.
    let mut place: HashMap<usize, (usize, usize)> = HashMap::new();
    for (t, thread) in g.threads.iter().enumerate() {
        for (k, node) in thread.nodes.iter().enumerate() {
            place.entry(node.id).or_insert((t, k));
        }
    }
    for edge in &g.edges {
        write_edge(&mut out, edge, &place);
    }
    let _ = writeln!(out, "}}");
    out
}

/// One node statement: the event label on the first line, the instruction under it (if any).
fn write_node(out: &mut String, node: &GraphNode) {
    if node.detail.is_empty() {
        let _ = writeln!(out, "    n{} [label=\"{}\"];", node.id, escape(&node.label));
    } else {
        let _ = writeln!(out, "    n{} [label=\"{}\\n{}\"];", node.id, escape(&node.label), escape(&node.detail));
    }
}

/// `{rank=same; ...}` over `nodes`, or nothing for fewer than two (a one-node constraint is noise).
fn write_same_rank<'a>(out: &mut String, nodes: impl Iterator<Item = &'a GraphNode>) {
    let names: Vec<String> = nodes.map(|n| format!("n{}", n.id)).collect();
    if names.len() > 1 {
        let _ = writeln!(out, "    {{rank=same; {};}}", names.join("; "));
    }
}

/// Invisible edges that shape the picture without being part of the execution.
///
/// * Consecutive events of a thread that have no `po` edge between them in `g.edges` get an invisible edge,
///   so a thread is always a vertical column in program order even if the caller left `po` out.
/// * Each thread's first event hangs invisibly under the first initial write, so the init box sits on top.
///
/// Since only these and the `po` edges constrain ranks (see [`write_edge`]), the k-th events of all threads
/// land on the same rank: herd7's rows, with cross-thread edges between "simultaneous" instructions
/// horizontal. This is done without `rank=same` across clusters, which needs `newrank=true`, and that
/// combination with `constraint=false` edges makes Graphviz fail ("trouble in init_rank").
fn write_layout_hints(out: &mut String, g: &ExecutionGraph) {
    let po: HashSet<(usize, usize)> = g.edges.iter().filter(|e| e.label == "po").map(|e| (e.from, e.to)).collect();
    for thread in &g.threads {
        for pair in thread.nodes.windows(2) {
            if let [a, b] = pair {
                if !po.contains(&(a.id, b.id)) {
                    let _ = writeln!(out, "  n{} -> n{} [style=invis];", a.id, b.id);
                }
            }
        }
    }
    if let Some(first_init) = g.init.first() {
        for thread in &g.threads {
            if let Some(first) = thread.nodes.first() {
                let _ = writeln!(out, "  n{} -> n{} [style=invis];", first_init.id, first.id);
            }
        }
    }
}

/// One edge statement, styled by relation; highlighting wins over the relation colour.
///
/// Only a `po` edge that goes down its own thread may influence ranking. Every other edge gets
/// `constraint=false`, so that the rows stay those of program order (see [`write_layout_hints`]): a
/// cross-thread edge allowed to push ranks around would stagger the threads, and the cyclic relations that a
/// violation shows would make Graphviz reverse some of them arbitrarily.
///
/// Those edges carry their text as `xlabel`, placed after layout, rather than `label`: a `label` becomes a
/// virtual node that must be ranked, and `dot` then fails with "trouble in init_rank" on some graphs mixing
/// clusters and unconstrained labelled edges (seen on arbitrary graphs with Graphviz 2.43 and later).
fn write_edge(out: &mut String, edge: &GraphEdge, place: &HashMap<usize, (usize, usize)>) {
    let mut style = if edge.highlighted {
        "color=red, penwidth=2.5, fontcolor=red".to_string()
    } else {
        let color = relation_color(&edge.label);
        format!("color={color}, fontcolor={color}")
    };
    let down_its_thread = matches!((place.get(&edge.from), place.get(&edge.to)), (Some((t1, k1)), Some((t2, k2))) if t1 == t2 && k1 < k2);
    let ranks = edge.label == "po" && down_its_thread;
    let label = if ranks { "label" } else { "xlabel" };
    if !ranks {
        style.push_str(", constraint=false");
    }
    let _ = writeln!(out, "  n{} -> n{} [{label}=\"{}\", {style}];", edge.from, edge.to, escape(&edge.label));
}

/// herd7-like colours per relation; anything else (sync, cause, ...) is black.
pub(crate) fn relation_color(label: &str) -> &'static str {
    match label {
        "po" => "gray",
        "rf" => "darkgreen",
        "co" => "blue",
        "fr" => "orange",
        _ => "black",
    }
}

/// Escape `s` for the inside of a DOT double-quoted string.
///
/// A backslash must be doubled, or Graphviz reads it as the start of an escape (`\n`, `\l`, `\N`, ...); a
/// quote must be backslashed; a line break becomes the `\n` escape (a raw newline would be kept but centred
/// oddly). Other control characters have no meaning in a label and are replaced so they cannot confuse
/// Graphviz's lexer.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' | '\r' => out.push_str("\\n"),
            '\t' => out.push(' '),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::decide::explain::graph::GraphThread;

    /// An event; its variable is read off a label of the form `a: W x=1`.
    fn node(id: usize, label: &str, detail: &str) -> GraphNode {
        let action = label.split_once(": ").map_or("", |(_, a)| a);
        let variable =
            action.strip_prefix("R ").or_else(|| action.strip_prefix("W ")).and_then(|a| a.split_once('=')).map(|(v, _)| v.to_string());
        GraphNode { id, label: label.into(), detail: detail.into(), variable }
    }

    fn edge(from: usize, to: usize, label: &str, highlighted: bool) -> GraphEdge {
        GraphEdge { from, to, label: label.into(), highlighted }
    }

    /// MP with the forbidden outcome: P1 sees the flag but not the data; the cycle
    /// `a -po-> b -rf-> c -po-> d -fr-> a` is highlighted.
    pub(crate) fn mp_graph() -> ExecutionGraph {
        ExecutionGraph {
            title: "MP: forbidden outcome, Causality cycle".into(),
            init: vec![node(0, "ix: W x=0", "init"), node(1, "iy: W y=0", "init")],
            threads: vec![
                GraphThread {
                    name: "P0".into(),
                    nodes: vec![node(2, "a: W x=1", "st.weak x, 1 (line 6)"), node(3, "b: W y=1", "st.release.gpu y, 1 (line 7)")],
                },
                GraphThread {
                    name: "P1".into(),
                    nodes: vec![node(4, "c: R y=1", "ld.acquire.gpu r0, y (line 10)"), node(5, "d: R x=0", "ld.weak r1, x (line 11)")],
                },
            ],
            edges: vec![
                edge(2, 3, "po", true),
                edge(4, 5, "po", true),
                edge(3, 4, "rf", true),
                edge(0, 5, "rf", false),
                edge(5, 2, "fr", true),
                edge(0, 2, "co", false),
                edge(1, 3, "co", false),
            ],
        }
    }

    /// Labels with every character that needs escaping in DOT or XML.
    pub(crate) fn nasty_graph() -> ExecutionGraph {
        ExecutionGraph {
            title: "weird \"test\" <&> \\ 'q'".into(),
            init: vec![node(0, "i: W x<y=0", "init & \"zero\"")],
            threads: vec![GraphThread {
                name: "P<0>&\"".into(),
                nodes: vec![node(1, "a: R x=\"1\"", "ld r0, [x] \\ <&> (line 3)"), node(2, "b: W y=1\nsecond", "st\ttab\u{1}ctl")],
            }],
            edges: vec![edge(1, 2, "po", false), edge(0, 1, "rf<&>\"", true)],
        }
    }

    /// `threads` threads of `per_thread` events each, chained by po, with rf/fr/co between neighbours.
    pub(crate) fn wide_graph(threads: usize, per_thread: usize) -> ExecutionGraph {
        let mut g = ExecutionGraph { title: format!("{threads} threads"), ..Default::default() };
        g.init.push(node(0, "ix: W x=0", "init"));
        let mut next = 1;
        for t in 0..threads {
            let nodes: Vec<GraphNode> =
                (0..per_thread).map(|k| node(next + k, &format!("e{}: R x=0", next + k), &format!("ld.weak r{k}, x (line {k})"))).collect();
            for pair in nodes.windows(2) {
                g.edges.push(edge(pair[0].id, pair[1].id, "po", false));
            }
            next += per_thread;
            g.threads.push(GraphThread { name: format!("P{t}"), nodes });
        }
        // Cross-thread edges between neighbouring threads, in both directions, so there are cycles.
        for t in 0..threads.saturating_sub(1) {
            for k in 0..per_thread {
                let a = 1 + t * per_thread + k;
                let b = a + per_thread;
                let label = ["rf", "fr", "co", "sync"][k % 4];
                if k % 2 == 0 {
                    g.edges.push(edge(a, b, label, k == 0));
                } else {
                    g.edges.push(edge(b, a, label, false));
                }
            }
            g.edges.push(edge(0, 1 + t * per_thread, "rf", false));
        }
        g
    }

    #[test]
    fn mp_has_clusters_edges_and_styles() {
        let dot = to_dot(&mp_graph());
        assert!(dot.starts_with("digraph ptxmm {"), "{dot}");
        assert!(dot.trim_end().ends_with('}'));
        assert!(dot.contains("label=\"MP: forbidden outcome, Causality cycle\""));
        assert!(dot.contains("subgraph cluster_init {"));
        assert!(dot.contains("label=\"init\""));
        assert!(dot.contains("subgraph cluster_0 {"));
        assert!(dot.contains("subgraph cluster_1 {"));
        assert!(dot.contains("label=\"P0\""));
        assert!(dot.contains("label=\"P1\""));
        assert!(dot.contains("n2 [label=\"a: W x=1\\nst.weak x, 1 (line 6)\"];"));
        // Every edge, po included, with its relation style or the highlight; only po down a thread ranks.
        assert!(dot.contains("n2 -> n3 [label=\"po\", color=red, penwidth=2.5, fontcolor=red];"));
        assert!(dot.contains("n3 -> n4 [xlabel=\"rf\", color=red, penwidth=2.5, fontcolor=red, constraint=false];"));
        assert!(dot.contains("n5 -> n2 [xlabel=\"fr\", color=red, penwidth=2.5, fontcolor=red, constraint=false];"));
        assert!(dot.contains("n0 -> n5 [xlabel=\"rf\", color=darkgreen, fontcolor=darkgreen, constraint=false];"));
        assert!(dot.contains("n1 -> n3 [xlabel=\"co\", color=blue, fontcolor=blue, constraint=false];"));
        // po is present, so no invisible stacking edge duplicates it; init still hangs above the threads.
        assert!(!dot.contains("n2 -> n3 [style=invis]"));
        assert!(dot.contains("n0 -> n2 [style=invis];"));
        assert!(dot.contains("n0 -> n4 [style=invis];"));
        // Initial writes share a row; nothing but program order ranks the threads.
        assert!(dot.contains("{rank=same; n0; n1;}"));
        assert!(!dot.contains("newrank") && !dot.contains("{rank=same; n2"));
        // Cluster bodies come before the edges, and each node is declared inside its own cluster.
        let c0 = dot.find("subgraph cluster_0").unwrap_or(usize::MAX);
        let c1 = dot.find("subgraph cluster_1").unwrap_or(usize::MAX);
        let n2 = dot.find("n2 [label=").unwrap_or(usize::MAX);
        let n4 = dot.find("n4 [label=").unwrap_or(usize::MAX);
        assert!(c0 < n2 && n2 < c1 && c1 < n4);
    }

    #[test]
    fn missing_po_gets_invisible_stacking_edges() {
        let mut g = mp_graph();
        g.edges.retain(|e| e.label != "po");
        let dot = to_dot(&g);
        assert!(dot.contains("n2 -> n3 [style=invis];"));
        assert!(dot.contains("n4 -> n5 [style=invis];"));
    }

    #[test]
    fn escapes_quotes_backslashes_and_newlines() {
        let dot = to_dot(&nasty_graph());
        assert!(dot.contains(r#"graph [label="weird \"test\" <&> \\ 'q'""#), "{dot}");
        assert!(dot.contains(r#"label="P<0>&\"";"#));
        assert!(dot.contains(r#"n1 [label="a: R x=\"1\"\nld r0, [x] \\ <&> (line 3)"];"#));
        // A newline inside a label becomes the DOT escape; a tab a space; other control characters vanish.
        assert!(dot.contains("n2 [label=\"b: W y=1\\nsecond\\nst tab\u{FFFD}ctl\"];"));
        assert!(dot.contains(r#"n0 -> n1 [xlabel="rf<&>\"", color=red"#));
        assert!(!dot.contains('\t') && !dot.contains('\u{1}'));
        // Outside the quoted strings, every quote is balanced: an odd count per line would mean a bad escape.
        for line in dot.lines() {
            let unescaped = line.replace("\\\\", "").replace("\\\"", "");
            assert_eq!(unescaped.matches('"').count() % 2, 0, "unbalanced quotes in {line}");
        }
    }

    #[test]
    fn empty_and_wide_graphs() {
        let dot = to_dot(&ExecutionGraph::default());
        assert!(dot.starts_with("digraph ptxmm {"));
        assert!(!dot.contains("cluster"));
        let dot = to_dot(&wide_graph(8, 4));
        for i in 0..8 {
            assert!(dot.contains(&format!("subgraph cluster_{i} {{")));
            assert!(dot.contains(&format!("label=\"P{i}\"")));
        }
        assert!(!dot.contains("cluster_8"));
    }

    #[test]
    fn unknown_edge_endpoints_are_kept() {
        let mut g = mp_graph();
        g.edges.push(edge(2, 99, "rf", false));
        assert!(to_dot(&g).contains("n2 -> n99 [xlabel=\"rf\""));
    }
}
