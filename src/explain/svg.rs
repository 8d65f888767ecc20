//! In-process SVG rendering of an [`ExecutionGraph`], without Graphviz.
//!
//! Layout is done by the pure-Rust `layout-rs` crate (lib name `layout`): a Sugiyama-style layered layout
//! (longest-path ranking, crossing reduction, Brandes–Köpf placement) like Graphviz's `dot`, which also
//! reserves room for edge labels the way `dot` does. It has neither clusters nor `rank=same`, so this module
//! adds what the picture needs on top of it:
//!
//! * **Edge orientation.** layout-rs needs a DAG and reverses an edge whenever it would close a cycle, in the
//!   order edges are added, checking each with a path search. We orient every edge ourselves against a fixed
//!   order of the events (init first, then herd7-style rows: the k-th event of every thread) and hand the
//!   edges over sorted by that order. That keeps `po` pointing down, makes the choice of reversed edges
//!   deterministic, and makes each of layout-rs's cycle checks trivial (the target has no outgoing edge yet),
//!   so layout stays fast on dense graphs.
//! * **Init on top.** layout-rs sinks a node with no predecessors down to just above its nearest successor,
//!   which would scatter the initial writes among the threads. Each initial write gets an invisible edge to a
//!   hidden sink node (which can never sink, and holds every initial write on the top rank), and the first
//!   initial write an invisible edge to each thread's first event (which keeps the threads below).
//! * **Threads.** Each thread's events are tinted with the thread's colour. When the threads' bounding boxes
//!   come out disjoint (the usual case for small tests) they are drawn as labelled boxes behind the events,
//!   like Graphviz clusters; when the layered layout interleaves threads, overlapping boxes would lie about
//!   membership, so a colour legend under the title names the threads instead.
//! * **Drawing.** Our own [`RenderBackend`] writes the SVG, so that text is XML-escaped (and characters XML
//!   forbids are replaced), arrowheads take the edge's colour, and the picture has a title.

use super::dot::relation_color;
use super::graph::{ExecutionGraph, GraphEdge, GraphNode};
use layout::adt::dag::NodeHandle;
use layout::core::base::Orientation;
use layout::core::color::Color;
use layout::core::format::{ClipHandle, RenderBackend};
use layout::core::geometry::{Point, Position};
use layout::core::style::{LineStyleKind, StyleAttr};
use layout::std_shapes::shapes::{Arrow, Element, LineEndKind, ShapeKind};
use layout::topo::layout::VisualGraph;
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;

/// Font size (px) of event text.
const NODE_FONT: usize = 12;
/// Font size (px) of edge labels; smaller than events so that the relations do not dominate.
const EDGE_FONT: usize = 11;
/// Font size (px) of the title, and of thread names.
const TITLE_FONT: f64 = 14.0;
const GROUP_FONT: f64 = 12.0;
/// Advance of one monospace character, as a fraction of the font size (true for the common monospace fonts).
/// All text is drawn in monospace precisely so that this estimate sizes the boxes right.
const CHAR_WIDTH: f64 = 0.6;
/// Line height as a fraction of the font size.
const LINE_HEIGHT: f64 = 1.3;
/// Horizontal and vertical padding inside an event box.
const NODE_PAD: Point = Point { x: 10.0, y: 6.0 };
/// Margin between a thread's events and its box, and extra room at the top for the thread name.
const CLUSTER_PAD: f64 = 12.0;
const CLUSTER_LABEL: f64 = 16.0;
/// Margin around the whole picture, and the height of a header line (title or legend).
const MARGIN: f64 = 10.0;
const HEADER_LINE: f64 = 22.0;
/// Stroke width of an ordinary edge and of one on the violated cycle (layout-rs widths are integers).
const EDGE_WIDTH: usize = 1;
const HIGHLIGHT_WIDTH: usize = 3;
/// Marks the hidden anchor node for [`SvgCanvas`], through the element's `properties`, which layout-rs passes
/// to `draw_rect` untouched.
const HIDDEN: &str = "ptxmm-hidden";

/// A group's colours: a pale fill for its events (and box), a dark one for its outline and name. RGBA.
#[derive(Clone, Copy)]
struct Tint {
    fill: u32,
    dark: u32,
}

const INIT_TINT: Tint = Tint { fill: 0xeeeeeeff, dark: 0x606060ff };
/// Thread colours, reused cyclically past eight threads (the legend still tells them apart by name).
const THREAD_TINTS: [Tint; 8] = [
    Tint { fill: 0xe3eefcff, dark: 0x2a5aa0ff },
    Tint { fill: 0xe4f4e4ff, dark: 0x2e7d32ff },
    Tint { fill: 0xfdf0dcff, dark: 0xa86200ff },
    Tint { fill: 0xf1e6f7ff, dark: 0x7b3fa0ff },
    Tint { fill: 0xdff3f3ff, dark: 0x00796bff },
    Tint { fill: 0xfbe6eeff, dark: 0xad1457ff },
    Tint { fill: 0xf0f0dcff, dark: 0x6d6d1eff },
    Tint { fill: 0xe8e8f8ff, dark: 0x4545a0ff },
];

/// Render `g` as a standalone SVG document.
///
/// Every event is a box with its label over its detail, tinted by thread; threads are boxed or named in a
/// legend (see the module doc); every edge whose endpoints are events of `g` is drawn with its label, coloured
/// by relation as in [`super::dot::to_dot`], and edges on the violated cycle are red and thicker. Edges naming
/// an unknown node id cannot be placed and are left out. Never panics, whatever the graph (empty included).
pub fn to_svg(g: &ExecutionGraph) -> String {
    let mut canvas = SvgCanvas { edges: g.edges.iter().map(edge_style).collect(), ..SvgCanvas::default() };
    let groups = groups(g);
    let clusters = if groups.iter().all(|grp| grp.nodes.is_empty()) {
        // layout-rs refuses an empty graph (it asserts), and there is nothing to lay out anyway.
        Vec::new()
    } else {
        lay_out(g, &groups, &mut canvas)
    };
    canvas.finish(&g.title, &clusters)
}

/// The initial writes or one thread.
struct Group<'a> {
    name: &'a str,
    nodes: &'a [GraphNode],
    /// The initial writes, which come before every thread in the orientation order.
    is_init: bool,
    tint: Tint,
}

/// The init group (if any) followed by the threads, in the order they are drawn left to right.
fn groups(g: &ExecutionGraph) -> Vec<Group<'_>> {
    let init = (!g.init.is_empty()).then_some(Group { name: "init", nodes: &g.init, is_init: true, tint: INIT_TINT });
    let threads = g.threads.iter().enumerate().map(|(i, t)| Group {
        name: &t.name,
        nodes: &t.nodes,
        is_init: false,
        tint: THREAD_TINTS[i % THREAD_TINTS.len()],
    });
    init.into_iter().chain(threads).collect()
}

/// A laid-out group with at least one event: its name, colours, and the bounding box of its events.
struct Cluster<'a> {
    name: &'a str,
    tint: Tint,
    top_left: Point,
    bottom_right: Point,
}

/// An edge for layout-rs, already oriented: `src_key <= dst_key` in the orientation order.
struct Oriented {
    src_key: (usize, usize),
    dst_key: (usize, usize),
    /// Tie-break keeping the caller's edge order, for determinism.
    seq: usize,
    from: NodeHandle,
    to: NodeHandle,
    arrow: Arrow,
}

/// Lay `g` out with layout-rs, draw it on `canvas`, and return the boxes of the non-empty groups.
fn lay_out<'a>(g: &ExecutionGraph, groups: &[Group<'a>], canvas: &mut SvgCanvas) -> Vec<Cluster<'a>> {
    let mut vg = VisualGraph::new(Orientation::TopToBottom);
    // layout-rs re-checks the whole graph for cycles after every edge it adds (a path search per edge, each
    // exponential in the worst case); our edges are acyclic by construction, so the check is pure cost.
    vg.dag.set_validate(false);

    // Node id -> (layout handle, orientation key). If an id repeats, edges attach to its first event.
    let mut handles: HashMap<usize, (NodeHandle, (usize, usize))> = HashMap::new();
    let mut group_handles: Vec<Vec<NodeHandle>> = Vec::with_capacity(groups.len());
    let mut thread_index = 0;
    for group in groups {
        let mut hs = Vec::with_capacity(group.nodes.len());
        for (k, node) in group.nodes.iter().enumerate() {
            let key = if group.is_init { (0, k) } else { (k + 1, thread_index) };
            let h = vg.add_node(node_element(node, group.tint));
            handles.entry(node.id).or_insert((h, key));
            hs.push(h);
        }
        if !group.is_init {
            thread_index += 1;
        }
        group_handles.push(hs);
    }

    let mut edges: Vec<Oriented> = Vec::with_capacity(g.edges.len() + groups.len() * 2);
    for (seq, edge) in g.edges.iter().enumerate() {
        let (Some(&(from, from_key)), Some(&(to, to_key))) = (handles.get(&edge.from), handles.get(&edge.to)) else {
            continue;
        };
        let arrow = edge_arrow(edge, seq);
        if to_key < from_key {
            // Drawn from `to` to `from` with the arrowhead moved to the start: it still points at `edge.to`.
            edges.push(Oriented { src_key: to_key, dst_key: from_key, seq, from: to, to: from, arrow: arrow.reverse() });
        } else {
            edges.push(Oriented { src_key: from_key, dst_key: to_key, seq, from, to, arrow });
        }
    }
    if std::env::var("NOANCHOR").is_err() {
        add_init_anchors(&mut vg, groups, &group_handles, &mut edges);
    }

    // Sorted by source, an edge goes in while its target has no outgoing edge yet (see the module doc).
    edges.sort_by_key(|e| (e.src_key, e.dst_key, e.seq));
    for e in edges {
        vg.add_edge(e.arrow, e.from, e.to);
    }

    vg.do_it(false, std::env::var("NOOPT").is_ok(), std::env::var("NOLAYOUT").is_ok(), canvas);

    groups
        .iter()
        .zip(&group_handles)
        .filter_map(|(group, hs)| {
            let mut boxes = hs.iter().map(|&h| vg.pos(h).bbox(false));
            let first = boxes.next()?;
            let (top_left, bottom_right) = boxes
                .fold(first, |(a0, a1), (b0, b1)| (Point::new(a0.x.min(b0.x), a0.y.min(b0.y)), Point::new(a1.x.max(b1.x), a1.y.max(b1.y))));
            Some(Cluster { name: group.name, tint: group.tint, top_left, bottom_right })
        })
        .collect()
}

/// The invisible structure that keeps the initial writes on the top rank (see the module doc).
fn add_init_anchors(vg: &mut VisualGraph, groups: &[Group], group_handles: &[Vec<NodeHandle>], edges: &mut Vec<Oriented>) {
    let Some((_, init_handles)) = groups.iter().zip(group_handles).find(|(grp, _)| grp.is_init) else {
        return;
    };
    let Some(&first_init) = init_handles.first() else {
        return;
    };
    // A 1x1 box with a 1px halo: it takes no visible room in its rank. `Position::new` takes the middle,
    // size, centre offset and halo.
    let mut sink = Element::create(ShapeKind::Box(String::new()), StyleAttr::simple(), Orientation::TopToBottom, Point::splat(1.0));
    sink.pos = Position::new(Point::zero(), Point::splat(1.0), Point::zero(), Point::splat(1.0));
    sink.properties = Some(HIDDEN.to_string());
    let sink = vg.add_node(sink);
    // The sink sorts after every initial write and before every thread event.
    let sink_key = (0, usize::MAX);
    let mut seq = usize::MAX / 2;
    let mut next_seq = || {
        seq += 1;
        seq
    };
    for (k, &h) in init_handles.iter().enumerate() {
        edges.push(Oriented { src_key: (0, k), dst_key: sink_key, seq: next_seq(), from: h, to: sink, arrow: Arrow::invisible() });
    }
    let mut thread_index = 0;
    for (group, hs) in groups.iter().zip(group_handles) {
        if group.is_init {
            continue;
        }
        if let Some(&head) = hs.first() {
            edges.push(Oriented {
                src_key: (0, 0),
                dst_key: (1, thread_index),
                seq: next_seq(),
                from: first_init,
                to: head,
                arrow: Arrow::invisible(),
            });
        }
        thread_index += 1;
    }
}

/// The text of an event box: label over detail (no empty second line when there is no detail).
fn node_text(node: &GraphNode) -> String {
    if node.detail.is_empty() {
        node.label.clone()
    } else {
        format!("{}\n{}", node.label, node.detail)
    }
}

/// An event box sized for its text in our monospace font (layout-rs's own estimate assumes a full em per
/// character, which makes boxes almost twice too wide).
fn node_element(node: &GraphNode, tint: Tint) -> Element {
    let text = node_text(node);
    let columns = text.lines().map(|l| l.chars().count()).max().unwrap_or(0).max(1);
    let lines = text.lines().count().max(1);
    let font = NODE_FONT as f64;
    let size = Point::new(columns as f64 * font * CHAR_WIDTH + 2.0 * NODE_PAD.x, lines as f64 * font * LINE_HEIGHT + 2.0 * NODE_PAD.y);
    // A fill colour marks this look as an event's (edge looks have none): `draw_text` relies on it.
    let look = StyleAttr::new(Color::new(0x000000ff), 1, Some(Color::new(tint.fill)), 6, NODE_FONT);
    Element::create(ShapeKind::Box(text), look, Orientation::TopToBottom, size)
}

/// Colour name and stroke width of `edge`: relation colour, or red and thick on the violated cycle.
fn edge_color(edge: &GraphEdge) -> (&'static str, usize) {
    if edge.highlighted {
        ("red", HIGHLIGHT_WIDTH)
    } else {
        (relation_color(&edge.label), EDGE_WIDTH)
    }
}

fn edge_style(edge: &GraphEdge) -> EdgeStyle {
    EdgeStyle { label: edge.label.clone(), color: rgb(Color::fast(edge_color(edge).0)), highlighted: edge.highlighted }
}

/// The arrow for `g.edges[seq]`, tagged with `seq` so the canvas can tell which edge it is drawing.
fn edge_arrow(edge: &GraphEdge, seq: usize) -> Arrow {
    let (color, width) = edge_color(edge);
    let look = StyleAttr::new(Color::fast(color), width, None, 0, EDGE_FONT);
    let mut arrow = Arrow::new(LineEndKind::None, LineEndKind::Arrow, LineStyleKind::Normal, &edge.label, &look, &None, &None);
    arrow.properties = Some(seq.to_string());
    arrow
}

/// Whether `look` is an event's (see [`node_element`]): layout-rs also draws edge labels, with the edge's look
/// (no fill) or a generic connector look (font size 15), and both differ from it.
fn is_event_look(look: &StyleAttr) -> bool {
    look.fill_color.is_some() && look.font_size == NODE_FONT
}

/// Write a `<text>` with `text`'s lines centred as a block around `xy`, the first line bold if `bold_first`,
/// and grow `extent` over its estimated box.
fn write_text(out: &mut String, extent: &mut Option<(Point, Point)>, xy: Point, text: &str, font: f64, attrs: &str, bold_first: bool) {
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return;
    }
    let line_height = font * LINE_HEIGHT;
    let columns = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64;
    let half = Point::new(columns * font * CHAR_WIDTH / 2.0, lines.len() as f64 * line_height / 2.0);
    cover(extent, xy.sub(half));
    cover(extent, xy.add(half));
    let _ = write!(
        out,
        r#"<text {attrs} x="{}" y="{}" font-size="{}" text-anchor="middle" dominant-baseline="central">"#,
        num(xy.x),
        num(xy.y),
        font
    );
    let first = xy.y - (lines.len() - 1) as f64 * line_height / 2.0;
    for (i, line) in lines.iter().enumerate() {
        let weight = if bold_first && i == 0 { r#" font-weight="bold""# } else { "" };
        let _ = write!(out, r#"<tspan x="{}" y="{}"{weight}>{}</tspan>"#, num(xy.x), num(first + i as f64 * line_height), escape(line));
    }
    out.push_str("</text>\n");
}

/// Grow `extent` to cover `p` (ignoring non-finite points, which would poison the view box).
fn cover(extent: &mut Option<(Point, Point)>, p: Point) {
    if !(p.x.is_finite() && p.y.is_finite()) {
        return;
    }
    *extent = Some(match *extent {
        None => (p, p),
        Some((lo, hi)) => (Point::new(lo.x.min(p.x), lo.y.min(p.y)), Point::new(hi.x.max(p.x), hi.y.max(p.y))),
    });
}

/// A [`RenderBackend`] that accumulates SVG elements and the extent of what was drawn.
#[derive(Default)]
struct SvgCanvas {
    body: String,
    /// Clip paths, emitted in `<defs>` (layout-rs only asks for them for rounded records, which we do not use).
    clips: Vec<String>,
    /// Colours (`#rrggbb`) that need arrowhead markers.
    marker_colors: BTreeSet<String>,
    /// Smallest and largest coordinates drawn so far (`None` until something is drawn).
    extent: Option<(Point, Point)>,
    /// The graph's edges, indexed like `ExecutionGraph::edges`; an arrow's `properties` holds its index.
    edges: Vec<EdgeStyle>,
    /// Each drawn arrow: its edge index (if it has one) and the points of its path.
    paths: Vec<(Option<usize>, Vec<Point>)>,
    /// Edge labels waiting for [`SvgCanvas::finish`]: where and what.
    ///
    /// layout-rs draws a label with the look of the connector node carrying it, which is the edge's look only
    /// until its "move labels to less busy rows" pass moves the text onto another connector of the same edge,
    /// whose look is a generic black one. The label's edge is therefore recovered geometrically: it is the
    /// edge with that label whose path passes closest to the label (through it, in fact).
    labels: Vec<(Point, String)>,
}

/// What the canvas needs to know about an edge to draw its label.
struct EdgeStyle {
    label: String,
    color: String,
    highlighted: bool,
}

/// `(top-left, bottom-right)` of `c`'s box, padded around its events and with room for its name.
fn cluster_rect(c: &Cluster) -> (Point, Point) {
    (
        Point::new(c.top_left.x - CLUSTER_PAD, c.top_left.y - CLUSTER_PAD - CLUSTER_LABEL),
        Point::new(c.bottom_right.x + CLUSTER_PAD, c.bottom_right.y + CLUSTER_PAD),
    )
}

/// Whether two rectangles share any area.
fn overlap(a: (Point, Point), b: (Point, Point)) -> bool {
    a.0.x < b.1.x && b.0.x < a.1.x && a.0.y < b.1.y && b.0.y < a.1.y
}

/// Estimated width of `text` at `font` px in our monospace font.
fn text_width(text: &str, font: f64) -> f64 {
    text.chars().count() as f64 * font * CHAR_WIDTH
}

impl SvgCanvas {
    /// Grow the drawn extent to cover `p`.
    fn cover(&mut self, p: Point) {
        cover(&mut self.extent, p);
    }

    /// Write the pending edge labels, each styled after its edge (see [`SvgCanvas::labels`]), over a white
    /// halo so that a line running through a label does not strike it out.
    fn write_labels(&mut self) {
        let labels = std::mem::take(&mut self.labels);
        for (xy, text) in labels {
            let distance = |points: &[Point]| points.iter().map(|p| p.distance_to(xy)).fold(f64::INFINITY, f64::min);
            let style = self
                .paths
                .iter()
                .filter_map(|(edge, points)| Some((self.edges.get((*edge)?)?, points)))
                .filter(|(style, _)| style.label == text)
                .map(|(style, points)| (style, distance(points)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(style, _)| style);
            let (color, bold) = style.map_or(("#000000", false), |s| (s.color.as_str(), s.highlighted));
            let weight = if bold { r#" font-weight="bold""# } else { "" };
            let attrs = format!(
                r#"class="label" fill="{color}" stroke="white" stroke-width="3" stroke-linejoin="round" paint-order="stroke"{weight}"#
            );
            write_text(&mut self.body, &mut self.extent, xy, &text, EDGE_FONT as f64, &attrs, false);
        }
    }

    /// The complete document: header (title, legend), group boxes behind the graph, then the graph.
    fn finish(mut self, title: &str, clusters: &[Cluster]) -> String {
        // Labels go last, over the edges.
        self.write_labels();
        let rects: Vec<(Point, Point)> = clusters.iter().map(cluster_rect).collect();
        let boxed = !rects.iter().enumerate().any(|(i, a)| rects[i + 1..].iter().any(|b| overlap(*a, *b)));
        let mut back = String::new();
        if boxed {
            for (c, &(lo, hi)) in clusters.iter().zip(&rects) {
                self.cover(lo);
                self.cover(hi);
                let _ = writeln!(
                    back,
                    r#"<g class="cluster"><rect x="{}" y="{}" width="{}" height="{}" rx="8" fill="{}" fill-opacity="0.45" stroke="{}" stroke-width="1"/><text x="{}" y="{}" font-size="{}" font-weight="bold" fill="{}">{}</text></g>"#,
                    num(lo.x),
                    num(lo.y),
                    num(hi.x - lo.x),
                    num(hi.y - lo.y),
                    rgb(Color::new(c.tint.fill)),
                    rgb(Color::new(c.tint.dark)),
                    num(lo.x + 6.0),
                    num(lo.y + 13.0),
                    GROUP_FONT,
                    rgb(Color::new(c.tint.dark)),
                    escape(c.name)
                );
            }
        }

        let (lo, hi) = self.extent.unwrap_or((Point::zero(), Point::zero()));
        // The header sits above everything: the title, then (when threads are not boxed) the legend.
        let legend = !boxed && !clusters.is_empty();
        let header = HEADER_LINE * if legend { 2.0 } else { 1.0 } + 6.0;
        let legend_width: f64 = clusters.iter().map(|c| 18.0 + text_width(c.name, GROUP_FONT) + 14.0).sum();
        let header_width = text_width(title, TITLE_FONT).max(if legend { legend_width } else { 0.0 });
        let lo = Point::new(lo.x - MARGIN, lo.y - MARGIN - header);
        let hi = Point::new(hi.x.max(lo.x + MARGIN + header_width) + MARGIN, hi.y + MARGIN);
        let (w, h) = (hi.x - lo.x, hi.y - lo.y);

        let mut out = String::with_capacity(self.body.len() + back.len() + 4096);
        let _ = writeln!(out, r#"<?xml version="1.0" encoding="UTF-8" standalone="no"?>"#);
        let _ = writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="{} {} {} {}" font-family="monospace">"#,
            num(w),
            num(h),
            num(lo.x),
            num(lo.y),
            num(w),
            num(h)
        );
        let _ = writeln!(out, "<title>{}</title>", escape(title));
        out.push_str("<defs>\n");
        for color in &self.marker_colors {
            // Two markers per colour: SVG 1.1 has no `context-stroke`, so an arrowhead cannot inherit the
            // edge colour, and no `auto-start-reverse`, so a start arrowhead needs its own mirrored shape.
            let id = color.trim_start_matches('#');
            let _ = writeln!(
                out,
                r#"<marker id="head-{id}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="10" markerHeight="10" markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{color}"/></marker>"#
            );
            let _ = writeln!(
                out,
                r#"<marker id="tail-{id}" viewBox="0 0 10 10" refX="0" refY="5" markerWidth="10" markerHeight="10" markerUnits="userSpaceOnUse" orient="auto"><path d="M10,0 L0,5 L10,10 z" fill="{color}"/></marker>"#
            );
        }
        for clip in &self.clips {
            out.push_str(clip);
        }
        out.push_str("</defs>\n");
        let _ = writeln!(out, r#"<rect x="{}" y="{}" width="{}" height="{}" fill="white"/>"#, num(lo.x), num(lo.y), num(w), num(h));
        let _ = writeln!(
            out,
            r#"<text class="title" x="{}" y="{}" font-size="{}" font-weight="bold">{}</text>"#,
            num(lo.x + MARGIN),
            num(lo.y + MARGIN + TITLE_FONT),
            TITLE_FONT,
            escape(title)
        );
        if legend {
            let y = lo.y + MARGIN + HEADER_LINE;
            let mut x = lo.x + MARGIN;
            for c in clusters {
                let _ = writeln!(
                    out,
                    r#"<g class="legend"><rect x="{}" y="{}" width="12" height="12" rx="2" fill="{}" stroke="{}"/><text x="{}" y="{}" font-size="{}" font-weight="bold" fill="{}">{}</text></g>"#,
                    num(x),
                    num(y),
                    rgb(Color::new(c.tint.fill)),
                    rgb(Color::new(c.tint.dark)),
                    num(x + 18.0),
                    num(y + 10.5),
                    GROUP_FONT,
                    rgb(Color::new(c.tint.dark)),
                    escape(c.name)
                );
                x += 18.0 + text_width(c.name, GROUP_FONT) + 14.0;
            }
        }
        out.push_str(&back);
        out.push_str(&self.body);
        out.push_str("</svg>\n");
        out
    }
}

impl RenderBackend for SvgCanvas {
    fn draw_rect(&mut self, xy: Point, size: Point, look: &StyleAttr, properties: Option<String>, clip: Option<ClipHandle>) {
        if properties.as_deref() == Some(HIDDEN) {
            return;
        }
        self.cover(xy);
        self.cover(xy.add(size));
        let clip = clip.map(|c| format!(r#" clip-path="url(#clip{c})""#)).unwrap_or_default();
        let _ = writeln!(
            self.body,
            r#"<rect x="{}" y="{}" width="{}" height="{}" rx="{}" fill="{}" stroke="{}" stroke-width="{}"{clip}/>"#,
            num(xy.x),
            num(xy.y),
            num(size.x),
            num(size.y),
            look.rounded,
            fill(look),
            rgb(look.line_color),
            look.line_width
        );
    }

    fn draw_line(&mut self, start: Point, stop: Point, look: &StyleAttr, _properties: Option<String>) {
        self.cover(start);
        self.cover(stop);
        let _ = writeln!(
            self.body,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="{}"/>"#,
            num(start.x),
            num(start.y),
            num(stop.x),
            num(stop.y),
            rgb(look.line_color),
            look.line_width
        );
    }

    fn draw_circle(&mut self, xy: Point, size: Point, look: &StyleAttr, _properties: Option<String>) {
        self.cover(xy.sub(size.scale(0.5)));
        self.cover(xy.add(size.scale(0.5)));
        let _ = writeln!(
            self.body,
            r#"<ellipse cx="{}" cy="{}" rx="{}" ry="{}" fill="{}" stroke="{}" stroke-width="{}"/>"#,
            num(xy.x),
            num(xy.y),
            num(size.x / 2.0),
            num(size.y / 2.0),
            fill(look),
            rgb(look.line_color),
            look.line_width
        );
    }

    /// Event text is written at once; an edge label is kept until [`SvgCanvas::finish`], which knows the
    /// edges' paths and so which edge the label belongs to (see [`SvgCanvas::labels`]).
    fn draw_text(&mut self, xy: Point, text: &str, look: &StyleAttr) {
        if is_event_look(look) {
            write_text(&mut self.body, &mut self.extent, xy, text, NODE_FONT as f64, r##"class="event" fill="#000000""##, true);
        } else {
            self.labels.push((xy, text.to_string()));
        }
    }

    fn draw_arrow(
        &mut self,
        path: &[(Point, Point)],
        dashed: bool,
        head: (bool, bool),
        look: &StyleAttr,
        properties: Option<String>,
        text: &str,
    ) {
        // layout-rs's path format: the first pair is (start, its control point); each later pair is
        // (control point, point), joined with a cubic Bézier first and smooth continuations after.
        let [(start, c0), (c1, p1), rest @ ..] = path else {
            return;
        };
        let mut d = format!(
            "M{},{} C{},{} {},{} {},{}",
            num(start.x),
            num(start.y),
            num(c0.x),
            num(c0.y),
            num(c1.x),
            num(c1.y),
            num(p1.x),
            num(p1.y)
        );
        for (c, p) in rest {
            let _ = write!(d, " S{},{} {},{}", num(c.x), num(c.y), num(p.x), num(p.y));
        }
        for (a, b) in path {
            self.cover(*a);
            self.cover(*b);
        }
        let color = rgb(look.line_color);
        let id = color.trim_start_matches('#').to_string();
        let mut attrs = String::new();
        if dashed {
            attrs.push_str(r#" stroke-dasharray="5,5""#);
        }
        if head.0 {
            let _ = write!(attrs, r#" marker-start="url(#tail-{id})""#);
        }
        if head.1 {
            let _ = write!(attrs, r#" marker-end="url(#head-{id})""#);
        }
        if head.0 || head.1 {
            self.marker_colors.insert(color.clone());
        }
        let class = if look.line_width > EDGE_WIDTH { "edge highlighted" } else { "edge" };
        let _ = writeln!(
            self.body,
            r#"<path class="{class}" d="{d}" fill="none" stroke="{color}" stroke-width="{}"{attrs}/>"#,
            look.line_width
        );
        self.paths.push((properties.and_then(|p| p.parse().ok()), path.iter().flat_map(|&(a, b)| [a, b]).collect()));
        // layout-rs moves an edge's label onto a connector node of its own (drawn with `draw_text`), so the
        // text passed here is normally empty; label the path's middle point if it is not.
        if !text.is_empty() {
            let mid = path[path.len() / 2].1;
            self.labels.push((mid, text.to_string()));
        }
    }

    fn create_clip(&mut self, xy: Point, size: Point, rounded_px: usize) -> ClipHandle {
        let handle = self.clips.len();
        self.clips.push(format!(
            r#"<clipPath id="clip{handle}"><rect x="{}" y="{}" width="{}" height="{}" rx="{rounded_px}"/></clipPath>"#,
            num(xy.x),
            num(xy.y),
            num(size.x),
            num(size.y)
        ));
        handle
    }
}

/// A coordinate for an attribute: one decimal is plenty, and a non-finite value (which SVG cannot parse)
/// degrades to 0 instead of breaking the document.
fn num(v: f64) -> String {
    let v = if v.is_finite() { v } else { 0.0 };
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// `#rrggbb` for a layout-rs colour (stored as RGBA; all our colours are opaque).
fn rgb(c: Color) -> String {
    let web = c.to_web_color();
    web.get(..7).unwrap_or("#000000").to_string()
}

/// The fill attribute value for a look: its colour, or `none`.
fn fill(look: &StyleAttr) -> String {
    look.fill_color.map(rgb).unwrap_or_else(|| "none".to_string())
}

/// Escape `s` for XML text and attribute values.
///
/// Besides the five markup characters, XML 1.0 forbids most control characters outright (even escaped), so
/// they are replaced with U+FFFD; a tab or line break becomes a space, since SVG collapses whitespace anyway.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(' '),
            c if c.is_control() || matches!(c, '\u{FFFE}' | '\u{FFFF}') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::dot::tests::{mp_graph, nasty_graph, wide_graph};
    use crate::explain::graph::GraphThread;

    /// Parse `svg` as XML (panicking with the document on failure) and return every text node's content.
    fn texts(svg: &str) -> Vec<String> {
        let doc = match roxmltree::Document::parse(svg) {
            Ok(doc) => doc,
            Err(e) => panic!("not well-formed XML: {e}\n{svg}"),
        };
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        doc.descendants().filter(|n| n.is_text()).filter_map(|n| n.text()).map(str::to_string).collect()
    }

    /// Element `name`s with attribute `attr` equal to `value`.
    fn count_with(svg: &str, name: &str, attr: &str, value: &str) -> usize {
        let doc = roxmltree::Document::parse(svg).map_err(|e| e.to_string());
        let Ok(doc) = doc else { return 0 };
        doc.descendants().filter(|n| n.has_tag_name(name) && n.attribute(attr) == Some(value)).count()
    }

    #[test]
    fn mp_is_xml_with_every_label_and_a_highlighted_cycle() {
        let g = mp_graph();
        let svg = to_svg(&g);
        let texts = texts(&svg);
        for node in g.init.iter().chain(g.threads.iter().flat_map(|t| &t.nodes)) {
            assert!(texts.contains(&node.label), "missing {}", node.label);
            assert!(texts.contains(&node.detail), "missing {}", node.detail);
        }
        for name in ["init", "P0", "P1", "MP: forbidden outcome, Causality cycle"] {
            assert!(texts.iter().any(|t| t == name), "missing {name}");
        }
        // One label per edge, one path per edge.
        for label in ["po", "rf", "fr", "co"] {
            let want = g.edges.iter().filter(|e| e.label == label).count();
            assert_eq!(texts.iter().filter(|t| *t == label).count(), want, "labels {label}");
        }
        let highlighted = g.edges.iter().filter(|e| e.highlighted).count();
        assert_eq!(count_with(&svg, "path", "class", "edge highlighted"), highlighted);
        assert_eq!(count_with(&svg, "path", "class", "edge"), g.edges.len() - highlighted);
        assert!(svg.contains(r##"stroke="#ff0000" stroke-width="3""##));
        assert!(svg.contains(r##"stroke="#006400" stroke-width="1""##), "rf is dark green");
        assert!(svg.contains(r#"id="head-ff0000""#), "red arrowheads");
        // Two threads plus init, boxed: the layout keeps them apart.
        assert_eq!(count_with(&svg, "g", "class", "cluster"), 3);
        assert_eq!(count_with(&svg, "g", "class", "legend"), 0);
    }

    #[test]
    fn threads_are_stacked_in_program_order() {
        let g = mp_graph();
        let svg = to_svg(&g);
        let doc = match roxmltree::Document::parse(&svg) {
            Ok(doc) => doc,
            Err(e) => panic!("{e}"),
        };
        // The y of the text element whose first line is `label`.
        let y_of = |label: &str| -> f64 {
            doc.descendants()
                .find(|n| n.has_tag_name("tspan") && n.text() == Some(label))
                .and_then(|n| n.attribute("y"))
                .and_then(|y| y.parse().ok())
                .unwrap_or(f64::NAN)
        };
        assert!(y_of("ix: W x=0") < y_of("a: W x=1"));
        assert!(y_of("a: W x=1") < y_of("b: W y=1"));
        assert!(y_of("c: R y=1") < y_of("d: R x=0"));
    }

    #[test]
    fn escapes_special_characters() {
        let g = nasty_graph();
        let svg = to_svg(&g);
        let texts = texts(&svg);
        // The parser un-escapes, so the original text must come back (control characters replaced).
        assert!(texts.contains(&"i: W x<y=0".to_string()));
        assert!(texts.contains(&"init & \"zero\"".to_string()));
        assert!(texts.contains(&"ld r0, [x] \\ <&> (line 3)".to_string()));
        assert!(texts.contains(&"second".to_string()), "a newline in a label starts a new line");
        assert!(texts.contains(&"st tab\u{FFFD}ctl".to_string()));
        assert!(texts.contains(&"rf<&>\"".to_string()));
        assert!(texts.contains(&"P<0>&\"".to_string()));
        assert!(texts.contains(&"weird \"test\" <&> \\ 'q'".to_string()));
        assert!(svg.contains("x&lt;y") && svg.contains("&amp;") && !svg.contains('\u{1}'));
    }

    #[test]
    fn empty_graph() {
        let svg = to_svg(&ExecutionGraph::default());
        texts(&svg);
        let svg = to_svg(&ExecutionGraph {
            title: "only edges".into(),
            edges: vec![GraphEdge { from: 0, to: 1, label: "rf".into(), highlighted: true }],
            ..Default::default()
        });
        assert!(texts(&svg).contains(&"only edges".to_string()));
        // A thread with no events is not drawn as a box.
        let svg = to_svg(&ExecutionGraph { threads: vec![GraphThread { name: "P0".into(), nodes: vec![] }], ..Default::default() });
        assert_eq!(count_with(&svg, "g", "class", "cluster"), 0);
    }

    #[test]
    fn eight_threads() {
        let g = wide_graph(8, 4);
        let svg = to_svg(&g);
        let texts = texts(&svg);
        for i in 0..8 {
            assert!(texts.contains(&format!("P{i}")));
        }
        // Boxed or in the legend, each thread and init once.
        assert_eq!(count_with(&svg, "g", "class", "cluster") + count_with(&svg, "g", "class", "legend"), 9);
        assert_eq!(svg.matches("<path class=\"edge").count(), g.edges.len());
    }

    #[test]
    fn odd_edges_do_not_panic() {
        let mut g = mp_graph();
        let e = |from, to, label: &str| GraphEdge { from, to, label: label.into(), highlighted: false };
        g.edges.push(e(2, 2, "loop"));
        g.edges.push(e(2, 3, "po"));
        g.edges.push(e(3, 2, "back"));
        g.edges.push(e(2, 77, "dangling"));
        g.edges.push(e(4, 5, ""));
        // A repeated id: drawn twice, edges attach to the first.
        g.threads[1].nodes.push(GraphNode { id: 2, label: "dup".into(), detail: String::new() });
        let svg = to_svg(&g);
        let texts = texts(&svg);
        assert!(texts.contains(&"dup".to_string()));
        assert!(!texts.contains(&"dangling".to_string()));
        assert_eq!(svg.matches("<path class=\"edge").count(), g.edges.len() - 1);
    }
}
#[cfg(test)]
mod tmp_dump {
    use super::*;
    use crate::explain::dot::tests::{mp_graph, nasty_graph, wide_graph};
    #[test]
    #[ignore]
    fn dump() {
        for (name, g) in [("mp", mp_graph()), ("nasty", nasty_graph()), ("wide", wide_graph(8, 4)), ("wide3", wide_graph(3, 6))] {
            std::fs::write(format!("/tmp/g_{name}.svg"), to_svg(&g)).unwrap();
            std::fs::write(format!("/tmp/g_{name}.dot"), crate::explain::dot::to_dot(&g)).unwrap();
        }
    }
}
#[cfg(test)]
mod tmp_fuzz {
    use super::*;
    use crate::explain::graph::GraphThread;
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, n: usize) -> usize {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((self.0 >> 33) as usize) % n.max(1)
        }
    }
    pub fn random_graph(seed: u64) -> ExecutionGraph {
        let mut r = Lcg(seed);
        let mut g = ExecutionGraph { title: format!("seed {seed}"), ..Default::default() };
        let mut id = 0;
        for _ in 0..r.next(4) {
            g.init.push(GraphNode { id, label: format!("i{id}: W x=0"), detail: "init".into() });
            id += 1;
        }
        for t in 0..r.next(9) {
            let mut nodes = vec![];
            for _ in 0..r.next(7) {
                nodes.push(GraphNode { id, label: format!("e{id}"), detail: "x".repeat(r.next(30)) });
                id += 1;
            }
            g.threads.push(GraphThread { name: format!("P{t}"), nodes });
        }
        let n = id + 1;
        for _ in 0..r.next(4 * n) {
            let label = ["po", "rf", "co", "fr", "sync", ""][r.next(6)];
            let (from, to) = (r.next(n), r.next(n));
            if std::env::var("NOSELF").is_ok() && from == to {
                continue;
            }
            if std::env::var("NODUP").is_ok() && g.edges.iter().any(|e| (e.from, e.to) == (from, to) || (e.from, e.to) == (to, from)) {
                continue;
            }
            let label = if std::env::var("NOEMPTY").is_ok() && label.is_empty() { "x" } else { label };
            g.edges.push(GraphEdge { from, to, label: label.into(), highlighted: r.next(3) == 0 });
        }
        g
    }
    #[test]
    #[ignore]
    fn one() {
        let seed: u64 = std::env::var("SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(560);
        let g = random_graph(seed);
        for _ in 0..5 {
            let _ = to_svg(&g);
        }
    }
    #[test]
    #[ignore]
    fn fuzz() {
        let mut bad = vec![];
        let mut worst = (0u128, 0);
        for seed in 0..3000 {
            let g = random_graph(seed);
            let t = std::time::Instant::now();
            let res = std::panic::catch_unwind(|| to_svg(&g));
            let el = t.elapsed().as_micros();
            if el > worst.0 {
                worst = (el, seed);
            }
            match res {
                Ok(svg) => {
                    roxmltree::Document::parse(&svg).unwrap();
                }
                Err(_) => bad.push(seed),
            }
        }
        eprintln!("bad: {} {:?}", bad.len(), &bad[..bad.len().min(20)]);
        eprintln!("worst: {:?}", worst);
        let mut rows = vec![];
        for seed in 0..0 {
            let g = random_graph(seed);
            let n = g.init.len() + g.threads.iter().map(|t| t.nodes.len()).sum::<usize>();
            let t = std::time::Instant::now();
            let _ = std::panic::catch_unwind(|| to_svg(&g));
            rows.push((t.elapsed().as_micros(), n, g.edges.len(), seed));
        }
        rows.sort();
        for r in rows.iter().rev().take(8) {
            eprintln!("{:?}", r);
        }
        let mut by = std::collections::BTreeMap::new();
        for r in &rows {
            let e = by.entry(r.1 / 10).or_insert((0u128, 0u128, 0));
            e.0 = e.0.max(r.0);
            e.1 += r.0;
            e.2 += 1;
        }
        for (k, (mx, sum, c)) in by {
            eprintln!("nodes {}x: max {}us avg {}us n={}", k, mx, sum / c as u128, c);
        }
    }
}
