//! In-process SVG rendering of an [`ExecutionGraph`], without Graphviz.
//!
//! # Layout
//!
//! Events sit on a fixed grid, as in herd7's pictures (herd7 pins node positions for Graphviz's `neato` for
//! the same reason): one column per thread, in thread order, its events in program order down the column,
//! the k-th events of all threads on one row, and the initial writes on a row of their own above. Memory-model
//! readers expect exactly this, it is trivially correct for thread grouping (each column is boxed and labelled
//! like a Graphviz cluster, and boxes can never overlap), and it costs nothing to compute. What is left to
//! decide is the route of each edge: straight when nothing is in the way, else the nearest curve that keeps
//! clear of the other events (see `route`).
//!
//! A general graph-layout crate was tried first and rejected, with measurements on synthetic execution graphs
//! (4 threads x 7 events, 3 locations, po/rf/co/fr: 31 events, ~83 edges, release build):
//!
//! * `layout-rs` 0.1.3 (Sugiyama layout with an SVG writer) took ~180 ms per graph (its crossing reduction is
//!   cubic in rank width, and every labelled or long edge adds dummy nodes), panicked on ~1.3% of random
//!   graphs (an assertion in its edge straightening pass), and, having neither clusters nor `rank=same`,
//!   staggered the threads diagonally so that their boxes overlapped.
//! * `dagre` 0.1.2 (a port of dagre.js, with compound nodes) never panicked but took 56–96 ms per graph.
//!
//! The grid renders such a graph in about a millisecond (release; a few ms in a debug build), and never
//! panics.
//!
//! # Drawing
//!
//! Edges are coloured by relation as in [`super::dot::to_dot`] (rf dark green, co blue, fr orange, po gray),
//! and edges of the violated cycle are red and thicker with bold labels; a racing pair is a red dashed
//! `race` edge without an arrowhead. The events they join (class `event focus`) have a red outline. Each
//! thread's events are tinted with the thread's colour. All text is XML-escaped, and the characters XML
//! forbids even escaped (most control characters) are replaced, so the document is always well-formed.
//!
//! # Size
//!
//! [`to_svg`] folds what the explanation is not about (`fold`: initial writes, events of other
//! variables; boxes of class `event folded` stand for them), [`to_svg_all`] draws everything. The document's
//! size is its view box, one unit a pixel, and no text is smaller than [`MIN_FONT`] units: drawn at its own
//! size (the page's default zoom) every letter is at least 11 px high, however large the execution.

use super::dot::relation_color;
use super::fold::{self, Folded};
use super::graph::{ExecutionGraph, GraphEdge, GraphNode, GraphThread};
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;

/// The smallest font size (px at the document's own size) of any text in the drawing.
pub const MIN_FONT: f64 = 11.0;
/// Font size (px) of event text, edge labels, the title and group names.
const NODE_FONT: f64 = 12.0;
const EDGE_FONT: f64 = MIN_FONT;
const TITLE_FONT: f64 = 14.0;
const GROUP_FONT: f64 = 12.0;
/// Advance of one monospace character, as a fraction of the font size (true for the common monospace fonts).
/// All text is drawn in monospace precisely so that this estimate sizes boxes right.
const CHAR_WIDTH: f64 = 0.6;
/// Line height as a fraction of the font size.
const LINE_HEIGHT: f64 = 1.3;
/// Horizontal and vertical padding inside an event box.
const NODE_PAD_X: f64 = 10.0;
const NODE_PAD_Y: f64 = 6.0;
/// Space between thread columns and between rows: room for edge labels and for arcs to pass.
const COLUMN_GAP: f64 = 90.0;
const ROW_GAP: f64 = 48.0;
/// Space between initial writes on their row, and between the init box and the thread boxes.
const INIT_GAP: f64 = 30.0;
const INIT_ROW_GAP: f64 = 56.0;
/// Margin between a group's events and its box, and room at the top of the box for the group's name.
const CLUSTER_PAD: f64 = 12.0;
const CLUSTER_LABEL: f64 = 16.0;
/// Margin around the whole picture, and the height of the title line.
const MARGIN: f64 = 10.0;
const TITLE_HEIGHT: f64 = 28.0;
/// Stroke widths of an ordinary edge and of one on the violated cycle (Graphviz's `penwidth=2.5` in `dot`).
const EDGE_WIDTH: f64 = 1.2;
const HIGHLIGHT_WIDTH: f64 = 2.5;
/// Sideways step between the candidate routes of an edge (see [`route`]); parallel edges between the same
/// two events start this far apart.
const DETOUR_STEP: f64 = 26.0;
/// How many detours of each sign [`route`] tries before giving up on avoiding every box.
const MAX_DETOURS: usize = 12;
/// Points sampled along a curve to test it against event boxes: at least `MIN_SAMPLES`, and one per
/// `SAMPLE_SPACING` px of its length (boxes are taller than that, so none can slip between two samples).
/// The curve must keep `CLEARANCE` px from the boxes.
const MIN_SAMPLES: usize = 16;
const SAMPLE_SPACING: f64 = 8.0;
const CLEARANCE: f64 = 4.0;

/// A group's colours: a pale fill for its events and box, a dark one for its outline and name.
#[derive(Clone, Copy)]
struct Tint {
    fill: &'static str,
    dark: &'static str,
}

const INIT_TINT: Tint = Tint { fill: "#eeeeee", dark: "#606060" };
/// Thread colours, reused cyclically past eight threads (the boxed names still tell threads apart).
const THREAD_TINTS: [Tint; 8] = [
    Tint { fill: "#e3eefc", dark: "#2a5aa0" },
    Tint { fill: "#e4f4e4", dark: "#2e7d32" },
    Tint { fill: "#fdf0dc", dark: "#a86200" },
    Tint { fill: "#f1e6f7", dark: "#7b3fa0" },
    Tint { fill: "#dff3f3", dark: "#00796b" },
    Tint { fill: "#fbe6ee", dark: "#ad1457" },
    Tint { fill: "#f0f0dc", dark: "#6d6d1e" },
    Tint { fill: "#e8e8f8", dark: "#4545a0" },
];

/// Render `g` as a standalone SVG document, with the initial writes and the events unrelated to the
/// highlighted edges folded (see `fold`); what `ptxmm explain --svg` prints and the page shows first.
pub fn to_svg(g: &ExecutionGraph) -> String {
    render(&fold::folded(g))
}

/// Render every event of `g` (`explain --svg --all-events`, the page's *All events*).
pub fn to_svg_all(g: &ExecutionGraph) -> String {
    render(&fold::unfolded(g))
}

/// Every event of `f.graph` is a box with its label (bold) over its detail, in its thread's column; every
/// edge whose endpoints are events of the graph is drawn with its label. An edge naming an id that no event
/// has cannot be placed and is left out; if two events share an id, edges attach to the first. Never panics,
/// whatever the graph (the empty one included).
fn render(f: &Folded) -> String {
    let g = &f.graph;
    let grid = Grid::new(f);
    let mut canvas = Canvas::default();
    for cluster in &grid.clusters {
        canvas.cluster(cluster);
    }
    let routes = route_all(g, &grid);
    for (edge, route) in &routes {
        canvas.edge(edge, route);
    }
    for node in &grid.nodes {
        canvas.node(node);
    }
    for (edge, route) in &routes {
        canvas.label(edge, route.label_at);
    }
    canvas.finish(&g.title, f.hidden, f.hidden_init)
}

/// A point or a vector.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pt {
    x: f64,
    y: f64,
}

impl Pt {
    const fn new(x: f64, y: f64) -> Pt {
        Pt { x, y }
    }
    fn add(self, o: Pt) -> Pt {
        Pt::new(self.x + o.x, self.y + o.y)
    }
    fn sub(self, o: Pt) -> Pt {
        Pt::new(self.x - o.x, self.y - o.y)
    }
    fn scale(self, k: f64) -> Pt {
        Pt::new(self.x * k, self.y * k)
    }
    fn len(self) -> f64 {
        self.x.hypot(self.y)
    }
}

/// An axis-aligned rectangle, by centre and half-size.
#[derive(Clone, Copy, Debug)]
struct Rect {
    center: Pt,
    half: Pt,
}

impl Rect {
    /// Whether `p` is inside the rectangle grown by `margin` on every side.
    fn contains(&self, p: Pt, margin: f64) -> bool {
        (p.x - self.center.x).abs() <= self.half.x + margin && (p.y - self.center.y).abs() <= self.half.y + margin
    }
    fn grown(&self, margin: f64) -> Rect {
        Rect { center: self.center, half: self.half.add(Pt::new(margin, margin)) }
    }
    /// Whether the rectangles share any area (touching edges do not count; a degenerate rectangle can still
    /// overlap through its inside).
    fn overlaps(&self, o: &Rect) -> bool {
        (self.center.x - o.center.x).abs() < self.half.x + o.half.x && (self.center.y - o.center.y).abs() < self.half.y + o.half.y
    }
    fn top_left(&self) -> Pt {
        self.center.sub(self.half)
    }
    fn bottom_right(&self) -> Pt {
        self.center.add(self.half)
    }
    /// The smallest rectangle covering both corners.
    fn spanning(a: Pt, b: Pt) -> Rect {
        let lo = Pt::new(a.x.min(b.x), a.y.min(b.y));
        let hi = Pt::new(a.x.max(b.x), a.y.max(b.y));
        Rect { center: lo.add(hi).scale(0.5), half: hi.sub(lo).scale(0.5) }
    }
}

/// How an event's box is drawn.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mark {
    Plain,
    /// At an end of a highlighted edge.
    Focus,
    /// Stands for folded events.
    Folded,
}

/// An event placed on the grid.
struct PlacedNode<'a> {
    node: &'a GraphNode,
    rect: Rect,
    tint: Tint,
    mark: Mark,
}

/// A labelled box around a group's events.
struct Cluster<'a> {
    name: &'a str,
    rect: Rect,
    tint: Tint,
}

/// The grid: every event's box and every group's box.
struct Grid<'a> {
    nodes: Vec<PlacedNode<'a>>,
    clusters: Vec<Cluster<'a>>,
    /// Node id -> index into `nodes` (the first event with that id).
    index: HashMap<usize, usize>,
}

/// The size (width, height) of an event's box for its text in our monospace font.
fn node_size(node: &GraphNode) -> Pt {
    let (columns, lines) = text_extent(&node.label, &node.detail);
    Pt::new(columns as f64 * NODE_FONT * CHAR_WIDTH + 2.0 * NODE_PAD_X, lines as f64 * NODE_FONT * LINE_HEIGHT + 2.0 * NODE_PAD_Y)
}

/// Longest line (in characters) and number of lines of an event's text: label lines, then detail lines
/// (no detail line when the detail is empty).
fn text_extent(label: &str, detail: &str) -> (usize, usize) {
    let lines = event_lines(label, detail);
    (lines.iter().map(|l| l.chars().count()).max().unwrap_or(0).max(1), lines.len().max(1))
}

/// The lines drawn in an event's box.
fn event_lines<'a>(label: &'a str, detail: &'a str) -> Vec<&'a str> {
    let mut lines: Vec<&str> = label.lines().collect();
    lines.extend(detail.lines());
    lines
}

impl<'a> Grid<'a> {
    fn new(f: &'a Folded) -> Grid<'a> {
        let g = &f.graph;
        let mark = |n: &GraphNode| {
            if f.placeholders.contains(&n.id) {
                Mark::Folded
            } else if f.focus.contains(&n.id) {
                Mark::Focus
            } else {
                Mark::Plain
            }
        };
        // Only threads with events get a column: an empty column would only be an empty box.
        let threads: Vec<(usize, &'a GraphThread)> = g.threads.iter().enumerate().filter(|(_, t)| !t.nodes.is_empty()).collect();
        // A column is as wide as its widest event, and wide enough for the thread's name in its box.
        let column_widths: Vec<f64> = threads
            .iter()
            .map(|(_, t)| t.nodes.iter().map(|n| node_size(n).x).fold(text_width(&t.name, GROUP_FONT) + 12.0 - 2.0 * CLUSTER_PAD, f64::max))
            .collect();
        let depth = threads.iter().map(|(_, t)| t.nodes.len()).max().unwrap_or(0);
        let row_heights: Vec<f64> =
            (0..depth).map(|k| threads.iter().filter_map(|(_, t)| t.nodes.get(k)).map(|n| node_size(n).y).fold(0.0, f64::max)).collect();
        let init_sizes: Vec<Pt> = g.init.iter().map(node_size).collect();

        // Widths of the two bands (init row, thread columns); the narrower one is centred on the wider.
        let threads_width = column_widths.iter().sum::<f64>() + COLUMN_GAP * column_widths.len().saturating_sub(1) as f64;
        let init_width = init_sizes.iter().map(|s| s.x).sum::<f64>() + INIT_GAP * init_sizes.len().saturating_sub(1) as f64;
        let width = threads_width.max(init_width);

        let mut nodes = Vec::new();
        let mut clusters = Vec::new();
        let mut y = 0.0;
        if !g.init.is_empty() {
            let row_height = init_sizes.iter().map(|s| s.y).fold(0.0, f64::max);
            let top = y;
            let center_y = top + CLUSTER_LABEL + CLUSTER_PAD + row_height / 2.0;
            let mut x = (width - init_width) / 2.0;
            for (node, size) in g.init.iter().zip(&init_sizes) {
                let rect = Rect { center: Pt::new(x + size.x / 2.0, center_y), half: size.scale(0.5) };
                nodes.push(PlacedNode { node, rect, tint: INIT_TINT, mark: mark(node) });
                x += size.x + INIT_GAP;
            }
            let bottom = center_y + row_height / 2.0 + CLUSTER_PAD;
            let left = (width - init_width) / 2.0 - CLUSTER_PAD;
            let rect = Rect::spanning(Pt::new(left, top), Pt::new(left + init_width + 2.0 * CLUSTER_PAD, bottom));
            clusters.push(Cluster { name: "init", rect, tint: INIT_TINT });
            y = bottom + INIT_ROW_GAP;
        }

        // Row centres, shared by all threads.
        let top = y;
        let mut row_centers = Vec::with_capacity(depth);
        let mut row_top = top + CLUSTER_LABEL + CLUSTER_PAD;
        for h in &row_heights {
            row_centers.push(row_top + h / 2.0);
            row_top += h + ROW_GAP;
        }
        let mut x = (width - threads_width) / 2.0;
        for ((thread_index, thread), column_width) in threads.iter().zip(&column_widths) {
            let tint = THREAD_TINTS[thread_index % THREAD_TINTS.len()];
            let center_x = x + column_width / 2.0;
            let mut bottom = top;
            for (node, center_y) in thread.nodes.iter().zip(&row_centers) {
                let size = node_size(node);
                let rect = Rect { center: Pt::new(center_x, *center_y), half: size.scale(0.5) };
                bottom = rect.bottom_right().y;
                nodes.push(PlacedNode { node, rect, tint, mark: mark(node) });
            }
            let rect = Rect::spanning(Pt::new(x - CLUSTER_PAD, top), Pt::new(x + column_width + CLUSTER_PAD, bottom + CLUSTER_PAD));
            clusters.push(Cluster { name: &thread.name, rect, tint });
            x += column_width + COLUMN_GAP;
        }

        let mut index = HashMap::with_capacity(nodes.len());
        for (i, placed) in nodes.iter().enumerate() {
            index.entry(placed.node.id).or_insert(i);
        }
        Grid { nodes, clusters, index }
    }
}

/// How an edge is drawn.
#[derive(Debug)]
struct Route {
    shape: Shape,
    /// Centre of the edge's label.
    label_at: Pt,
}

#[derive(Debug)]
enum Shape {
    /// Quadratic Bézier: start, control point, end. A straight edge has its control point on the line.
    Quad(Pt, Pt, Pt),
    /// Cubic Bézier, for loops from an event to itself.
    Cubic(Pt, Pt, Pt, Pt),
}

impl Shape {
    /// Points along the curve, excluding its ends, spaced as [`SAMPLE_SPACING`] says.
    fn samples(&self) -> impl Iterator<Item = Pt> + '_ {
        // The control polygon is at least as long as the curve.
        let length = match *self {
            Shape::Quad(a, c, b) => c.sub(a).len() + b.sub(c).len(),
            Shape::Cubic(a, c1, c2, b) => c1.sub(a).len() + c2.sub(c1).len() + b.sub(c2).len(),
        };
        let n = ((length / SAMPLE_SPACING).ceil() as usize).clamp(MIN_SAMPLES, 4096);
        (1..n).map(move |i| self.at(i as f64 / n as f64))
    }

    /// The point at parameter `t` in [0, 1].
    fn at(&self, t: f64) -> Pt {
        let u = 1.0 - t;
        match *self {
            Shape::Quad(a, c, b) => a.scale(u * u).add(c.scale(2.0 * u * t)).add(b.scale(t * t)),
            Shape::Cubic(a, c1, c2, b) => {
                a.scale(u * u * u).add(c1.scale(3.0 * u * u * t)).add(c2.scale(3.0 * u * t * t)).add(b.scale(t * t * t))
            }
        }
    }
}

/// Route every drawable edge of `g`, in order; edges with an unknown endpoint are skipped.
fn route_all<'g>(g: &'g ExecutionGraph, grid: &Grid) -> Vec<(&'g GraphEdge, Route)> {
    // Edges between the same two events (either direction) start 0, +1, -1, +2, ... steps aside in turn, so
    // that parallel and opposite edges (e.g. `po` and `rf` between neighbours) stay apart.
    let mut seen_pairs: HashMap<(usize, usize), usize> = HashMap::new();
    let boxes: Vec<Rect> = grid.nodes.iter().map(|n| n.rect).collect();
    let mut labels: Vec<Rect> = Vec::new();
    let mut routes = Vec::with_capacity(g.edges.len());
    for edge in &g.edges {
        let (Some(&a), Some(&b)) = (grid.index.get(&edge.from), grid.index.get(&edge.to)) else {
            continue;
        };
        let nth = seen_pairs.entry((a.min(b), a.max(b))).or_insert(0);
        let route = route(&boxes, a, b, *nth, &edge.label, &mut labels);
        *nth += 1;
        routes.push((edge, route));
    }
    routes
}

/// Route one edge from event `a` to event `b` (indices into `boxes`, the events' boxes), the `nth` between
/// them, and place its label (recorded in `labels`, which later labels avoid).
///
/// The edge is a quadratic curve whose control point lies on the perpendicular bisector of the two centres:
/// on the line itself it is straight. Candidates move the control point sideways in growing steps, both
/// ways, starting from the `nth` parallel offset; the first whose curve keeps clear of every other event box
/// wins (straight, if nothing is in the way). Sideways is measured along a normal that does not depend on
/// which way the edge points, so the parallel offsets of an edge and of its opposite never coincide. The
/// ends are clipped to the boxes' borders along the tangent, so arrowheads touch the boxes.
fn route(boxes: &[Rect], a: usize, b: usize, nth: usize, label: &str, labels: &mut Vec<Rect>) -> Route {
    let (Some(&ra), Some(&rb)) = (boxes.get(a), boxes.get(b)) else {
        // Unreachable by construction (indices come from the grid's own index); a harmless dot if not.
        let origin = Pt::new(0.0, 0.0);
        return Route { shape: Shape::Quad(origin, origin, origin), label_at: origin };
    };
    let chord = if a < b { rb.center.sub(ra.center) } else { ra.center.sub(rb.center) };
    if a == b || chord.len() < 1e-9 {
        return self_loop(ra, nth, label, labels);
    }
    let normal = Pt::new(-chord.y, chord.x).scale(1.0 / chord.len());
    let mid = ra.center.add(rb.center).scale(0.5);
    let base = signed_step(nth) * DETOUR_STEP;

    let mut chosen = None;
    for k in 0..=2 * MAX_DETOURS {
        // The curve's apex is halfway between the chord and the control point, so double the detour.
        let offset = base + signed_step(k) * DETOUR_STEP;
        let control = mid.add(normal.scale(2.0 * offset));
        let (start, end) = (clip(ra, control), clip(rb, control));
        // Only boxes meeting the control triangle's bounding box can touch the curve (it lies inside the
        // triangle); usually there are none, and sampling is skipped.
        let hull = Rect::spanning(
            Pt::new(start.x.min(control.x).min(end.x), start.y.min(control.y).min(end.y)),
            Pt::new(start.x.max(control.x).max(end.x), start.y.max(control.y).max(end.y)),
        );
        let near: Vec<&Rect> =
            boxes.iter().enumerate().filter(|&(i, r)| i != a && i != b && r.grown(CLEARANCE).overlaps(&hull)).map(|(_, r)| r).collect();
        let shape = Shape::Quad(start, control, end);
        let clear = near.is_empty() || shape.samples().all(|p| near.iter().all(|r| !r.contains(p, CLEARANCE)));
        if clear {
            chosen = Some(shape);
            break;
        }
    }
    let shape = chosen.unwrap_or_else(|| {
        // Nothing clear: take the first candidate and let it cross a box (it is drawn under the events).
        let control = mid.add(normal.scale(2.0 * base));
        Shape::Quad(clip(ra, control), control, clip(rb, control))
    });
    let label_at = place_label(&shape, label, boxes, labels);
    Route { shape, label_at }
}

/// 0, +1, -1, +2, -2, ... for k = 0, 1, 2, 3, 4, ...
fn signed_step(k: usize) -> f64 {
    let magnitude = k.div_ceil(2) as f64;
    if k % 2 == 1 {
        magnitude
    } else {
        -magnitude
    }
}

/// The point where the segment from `r`'s centre towards `toward` leaves `r` (1px outside, so strokes and
/// arrowheads do not overlap the border), or `toward` itself if it is inside `r`.
fn clip(r: Rect, toward: Pt) -> Pt {
    let d = toward.sub(r.center);
    let half = r.half.add(Pt::new(1.0, 1.0));
    let tx = if d.x.abs() > 1e-9 { half.x / d.x.abs() } else { f64::INFINITY };
    let ty = if d.y.abs() > 1e-9 { half.y / d.y.abs() } else { f64::INFINITY };
    let t = tx.min(ty);
    if t >= 1.0 {
        toward
    } else {
        r.center.add(d.scale(t))
    }
}

/// A loop on the right side of box `r`, bigger for each further loop on the same event.
fn self_loop(r: Rect, nth: usize, label: &str, labels: &mut Vec<Rect>) -> Route {
    let right = r.center.x + r.half.x + 1.0;
    let reach = 34.0 + 14.0 * nth as f64;
    let rise = r.half.y + 8.0 + 6.0 * nth as f64;
    let (y0, y1) = (r.center.y - r.half.y / 2.0, r.center.y + r.half.y / 2.0);
    let shape = Shape::Cubic(Pt::new(right, y0), Pt::new(right + reach, y0 - rise), Pt::new(right + reach, y1 + rise), Pt::new(right, y1));
    // The loop's apex is at 3/4 of `reach`; the label goes just right of it.
    let size = label_size(label);
    let label_at = Pt::new(right + 0.75 * reach + 4.0 + size.x / 2.0, r.center.y);
    labels.push(Rect { center: label_at, half: size.scale(0.5) });
    Route { shape, label_at }
}

/// Width and height of an edge label.
fn label_size(label: &str) -> Pt {
    Pt::new(text_width(label, EDGE_FONT) + 4.0, EDGE_FONT * LINE_HEIGHT)
}

/// Estimated width of one line of `text` at `font` px in our monospace font.
fn text_width(text: &str, font: f64) -> f64 {
    text.chars().count() as f64 * font * CHAR_WIDTH
}

/// Where on `shape` to centre its label: the middle, or else the first of a few points around it whose label
/// box covers no event and no label already placed (else the middle anyway). Records the choice in `labels`.
fn place_label(shape: &Shape, label: &str, obstacles: &[Rect], labels: &mut Vec<Rect>) -> Pt {
    let half = label_size(label).scale(0.5);
    if label.is_empty() {
        return shape.at(0.5);
    }
    let free = |at: Pt| {
        let r = Rect { center: at, half };
        obstacles.iter().chain(labels.iter()).all(|o| !o.overlaps(&r))
    };
    let at = [0.5, 0.4, 0.6, 0.3, 0.7, 0.22, 0.78].into_iter().map(|t| shape.at(t)).find(|&p| free(p)).unwrap_or_else(|| shape.at(0.5));
    labels.push(Rect { center: at, half });
    at
}

/// Accumulates SVG elements and the extent of what was drawn.
#[derive(Default)]
struct Canvas {
    body: String,
    /// Colours that need arrowhead markers.
    marker_colors: BTreeSet<&'static str>,
    /// Smallest and largest coordinates drawn so far (`None` until something is drawn).
    extent: Option<(Pt, Pt)>,
}

/// Whether `edge` joins a racing pair (the explanation's `race` edges).
fn is_race(edge: &GraphEdge) -> bool {
    edge.label == "race"
}

/// Stroke colour and width of `edge` (its label takes the same colour, bold when highlighted).
fn edge_style(edge: &GraphEdge) -> (&'static str, f64) {
    if edge.highlighted {
        ("red", HIGHLIGHT_WIDTH)
    } else {
        (relation_color(&edge.label), EDGE_WIDTH)
    }
}

impl Canvas {
    /// Grow the drawn extent to cover `p` (ignoring non-finite points, which would poison the view box).
    fn cover(&mut self, p: Pt) {
        if !(p.x.is_finite() && p.y.is_finite()) {
            return;
        }
        self.extent = Some(match self.extent {
            None => (p, p),
            Some((lo, hi)) => (Pt::new(lo.x.min(p.x), lo.y.min(p.y)), Pt::new(hi.x.max(p.x), hi.y.max(p.y))),
        });
    }

    fn cover_rect(&mut self, r: &Rect) {
        self.cover(r.top_left());
        self.cover(r.bottom_right());
    }

    fn cluster(&mut self, c: &Cluster) {
        self.cover_rect(&c.rect);
        let lo = c.rect.top_left();
        let size = c.rect.half.scale(2.0);
        let _ = writeln!(
            self.body,
            r#"<g class="cluster"><rect x="{}" y="{}" width="{}" height="{}" rx="8" fill="{}" fill-opacity="0.45" stroke="{}" stroke-width="1"/><text x="{}" y="{}" font-size="{GROUP_FONT}" font-weight="bold" fill="{}">{}</text></g>"#,
            num(lo.x),
            num(lo.y),
            num(size.x),
            num(size.y),
            c.tint.fill,
            c.tint.dark,
            num(lo.x + 6.0),
            num(lo.y + 13.0),
            c.tint.dark,
            escape(c.name)
        );
    }

    fn node(&mut self, n: &PlacedNode) {
        self.cover_rect(&n.rect);
        let lo = n.rect.top_left();
        let size = n.rect.half.scale(2.0);
        let (class, fill, stroke) = match n.mark {
            Mark::Plain => ("event", n.tint.fill, format!(r#"stroke="{}" stroke-width="1""#, n.tint.dark)),
            Mark::Focus => ("event focus", n.tint.fill, r#"stroke="red" stroke-width="2.5""#.to_string()),
            Mark::Folded => ("event folded", "white", format!(r#"stroke="{}" stroke-width="1" stroke-dasharray="4 3""#, n.tint.dark)),
        };
        let _ = writeln!(
            self.body,
            r#"<rect class="{class}" x="{}" y="{}" width="{}" height="{}" rx="6" fill="{fill}" {stroke}/>"#,
            num(lo.x),
            num(lo.y),
            num(size.x),
            num(size.y),
        );
        let label_lines = n.node.label.lines().count();
        let lines = event_lines(&n.node.label, &n.node.detail);
        let line_height = NODE_FONT * LINE_HEIGHT;
        let first = n.rect.center.y - lines.len().saturating_sub(1) as f64 * line_height / 2.0;
        let x = num(n.rect.center.x);
        let _ = write!(
            self.body,
            r#"<text class="event" font-size="{NODE_FONT}" fill="black" text-anchor="middle" dominant-baseline="central">"#
        );
        for (i, line) in lines.iter().enumerate() {
            // The event label is bold, the instruction under it plain.
            let weight = if i < label_lines { r#" font-weight="bold""# } else { "" };
            let _ = write!(self.body, r#"<tspan x="{x}" y="{}"{weight}>{}</tspan>"#, num(first + i as f64 * line_height), escape(line));
        }
        self.body.push_str("</text>\n");
    }

    fn edge(&mut self, edge: &GraphEdge, route: &Route) {
        let (color, width) = edge_style(edge);
        if !(edge.highlighted && is_race(edge)) {
            self.marker_colors.insert(color);
        }
        let d = match route.shape {
            Shape::Quad(a, c, b) => format!("M{},{} Q{},{} {},{}", num(a.x), num(a.y), num(c.x), num(c.y), num(b.x), num(b.y)),
            Shape::Cubic(a, c1, c2, b) => {
                format!("M{},{} C{},{} {},{} {},{}", num(a.x), num(a.y), num(c1.x), num(c1.y), num(c2.x), num(c2.y), num(b.x), num(b.y))
            }
        };
        // The curve's own points, not its control points, bound what is visible.
        self.cover(route.shape.at(0.0));
        self.cover(route.shape.at(1.0));
        for p in route.shape.samples() {
            self.cover(p);
        }
        // A race has no direction: dashed, without an arrowhead.
        let (class, ending) = match (edge.highlighted, is_race(edge)) {
            (true, true) => ("edge highlighted race", r#" stroke-dasharray="6 4""#.to_string()),
            (true, false) => ("edge highlighted", format!(r#" marker-end="url(#head-{color})""#)),
            (false, _) => ("edge", format!(r#" marker-end="url(#head-{color})""#)),
        };
        let _ = writeln!(self.body, r#"<path class="{class}" d="{d}" fill="none" stroke="{color}" stroke-width="{width}"{ending}/>"#);
    }

    /// An edge label, in the edge's colour (bold on the violated cycle), over a white halo so that a line
    /// running through it does not strike it out.
    fn label(&mut self, edge: &GraphEdge, at: Pt) {
        if edge.label.is_empty() {
            return;
        }
        let (color, _) = edge_style(edge);
        let half = label_size(&edge.label).scale(0.5);
        self.cover(at.sub(half));
        self.cover(at.add(half));
        let weight = if edge.highlighted { r#" font-weight="bold""# } else { "" };
        let _ = writeln!(
            self.body,
            r#"<text class="label" x="{}" y="{}" font-size="{EDGE_FONT}" fill="{color}" stroke="white" stroke-width="3" stroke-linejoin="round" paint-order="stroke" text-anchor="middle" dominant-baseline="central"{weight}>{}</text>"#,
            num(at.x),
            num(at.y),
            escape(&edge.label)
        );
    }

    /// The complete document: title above the picture (and, when events were folded, a line saying how
    /// many), arrowhead markers, then everything drawn.
    fn finish(self, title: &str, hidden: usize, hidden_init: usize) -> String {
        let (lo, hi) = self.extent.unwrap_or((Pt::new(0.0, 0.0), Pt::new(0.0, 0.0)));
        let note = fold_note(hidden_init, hidden.saturating_sub(hidden_init));
        let note_height = if note.is_some() { MIN_FONT * LINE_HEIGHT } else { 0.0 };
        let head_width = text_width(title, TITLE_FONT).max(note.as_deref().map_or(0.0, |n| text_width(n, MIN_FONT)));
        let lo = Pt::new(lo.x - MARGIN, lo.y - MARGIN - TITLE_HEIGHT - note_height);
        let hi = Pt::new(hi.x.max(lo.x + MARGIN + head_width) + MARGIN, hi.y + MARGIN);
        let (w, h) = (hi.x - lo.x, hi.y - lo.y);

        let mut out = String::with_capacity(self.body.len() + 2048);
        let _ = writeln!(out, r#"<?xml version="1.0" encoding="UTF-8" standalone="no"?>"#);
        let _ = writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="ptxmm-graph" data-folded="{hidden}" width="{}" height="{}" viewBox="{} {} {} {}" font-family="monospace">"#,
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
            // One marker per colour: SVG 1.1 has no `context-stroke`, so an arrowhead cannot take the colour
            // of the edge it ends. Fixed size (user space), so thick edges do not get huge heads.
            let _ = writeln!(
                out,
                r#"<marker id="head-{color}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="10" markerHeight="10" markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{color}"/></marker>"#
            );
        }
        out.push_str("</defs>\n");
        let _ = writeln!(out, r#"<rect x="{}" y="{}" width="{}" height="{}" fill="white"/>"#, num(lo.x), num(lo.y), num(w), num(h));
        let _ = writeln!(
            out,
            r#"<text class="title" x="{}" y="{}" font-size="{TITLE_FONT}" font-weight="bold">{}</text>"#,
            num(lo.x + MARGIN),
            num(lo.y + MARGIN + TITLE_FONT),
            escape(title)
        );
        if let Some(note) = note {
            let _ = writeln!(
                out,
                r##"<text class="fold-note" x="{}" y="{}" font-size="{MIN_FONT}" fill="#555">{}</text>"##,
                num(lo.x + MARGIN),
                num(lo.y + MARGIN + TITLE_FONT + note_height),
                escape(&note)
            );
        }
        out.push_str(&self.body);
        out.push_str("</svg>\n");
        out
    }
}

/// The line under the title saying what is folded, if anything.
fn fold_note(initial: usize, events: usize) -> Option<String> {
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let other = "on variables the highlighted edges do not touch";
    match (initial, events) {
        (0, 0) => None,
        (i, 0) => Some(format!("folded: {}", plural(i, "initial write"))),
        (0, e) => Some(format!("folded: {} {other}", plural(e, "event"))),
        (i, e) => Some(format!("folded: {}, and {} {other}", plural(i, "initial write"), plural(e, "event"))),
    }
}

/// A coordinate for an attribute: one decimal is plenty, and a non-finite value (which SVG cannot parse)
/// degrades to 0 instead of breaking the document.
fn num(v: f64) -> String {
    let v = if v.is_finite() { v } else { 0.0 };
    let s = format!("{v:.1}");
    match s.strip_suffix(".0") {
        Some(whole) if whole != "-0" => whole.to_string(),
        Some(_) => "0".to_string(),
        None => s,
    }
}

/// Escape `s` for XML text and attribute values.
///
/// Besides the five markup characters, XML 1.0 forbids most control characters outright (even escaped), so
/// they are replaced with U+FFFD; a tab or line break becomes a space (lines are split before escaping).
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
    use crate::decide::explain::dot::tests::{mp_graph, nasty_graph, wide_graph};
    use crate::decide::explain::graph::GraphThread;

    fn parse(svg: &str) -> roxmltree::Document<'_> {
        match roxmltree::Document::parse(svg) {
            Ok(doc) => doc,
            Err(e) => panic!("not well-formed XML: {e}\n{svg}"),
        }
    }

    /// Every text node's content, after checking that `svg` is a well-formed SVG document.
    fn texts(svg: &str) -> Vec<String> {
        let doc = parse(svg);
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        doc.descendants().filter(|n| n.is_text()).filter_map(|n| n.text()).map(str::to_string).collect()
    }

    /// How many `name` elements have attribute `attr` equal to `value`.
    fn count_with(svg: &str, name: &str, attr: &str, value: &str) -> usize {
        parse(svg).descendants().filter(|n| n.has_tag_name(name) && n.attribute(attr) == Some(value)).count()
    }

    fn all_nodes(g: &ExecutionGraph) -> impl Iterator<Item = &GraphNode> {
        g.init.iter().chain(g.threads.iter().flat_map(|t| &t.nodes))
    }

    #[test]
    fn mp_is_xml_with_every_label_and_a_highlighted_cycle() {
        let g = mp_graph();
        let svg = to_svg_all(&g);
        let texts = texts(&svg);
        for node in all_nodes(&g) {
            assert!(texts.contains(&node.label), "missing {}", node.label);
            assert!(texts.contains(&node.detail), "missing {}", node.detail);
        }
        for name in ["init", "P0", "P1", "MP: forbidden outcome, Causality cycle"] {
            assert!(texts.iter().any(|t| t == name), "missing {name}");
        }
        for label in ["po", "rf", "fr", "co"] {
            let want = g.edges.iter().filter(|e| e.label == label).count();
            assert_eq!(texts.iter().filter(|t| *t == label).count(), want, "labels {label}");
        }
        let highlighted = g.edges.iter().filter(|e| e.highlighted).count();
        assert_eq!(count_with(&svg, "path", "class", "edge highlighted"), highlighted);
        assert_eq!(count_with(&svg, "path", "class", "edge"), g.edges.len() - highlighted);
        assert_eq!(count_with(&svg, "path", "stroke", "red"), highlighted);
        assert!(svg.contains(r#"stroke="red" stroke-width="2.5" marker-end="url(#head-red)""#));
        assert!(svg.contains(r#"stroke="darkgreen" stroke-width="1.2""#), "rf is dark green");
        assert!(svg.contains(r#"<marker id="head-red""#));
        assert_eq!(count_with(&svg, "g", "class", "cluster"), 3);
    }

    #[test]
    fn folded_by_default_with_the_focus_marked_and_no_text_under_the_minimum() {
        let mut g = mp_graph();
        g.edges.push(GraphEdge { from: 2, to: 5, label: "race".into(), highlighted: true });
        let svg = to_svg(&g);
        let doc = parse(&svg);
        assert_eq!(count_with(&svg, "rect", "class", "event folded"), 1, "the two initial writes, in one box");
        assert_eq!(count_with(&svg, "rect", "class", "event focus"), 4);
        assert_eq!(doc.root_element().attribute("data-folded"), Some("2"));
        assert!(texts(&svg).iter().any(|t| t == "⋯ 2 initial writes folded"));
        // The race: dashed, red, no arrowhead.
        let race = doc.descendants().find(|n| n.attribute("class") == Some("edge highlighted race"));
        assert!(race.is_some_and(|r| r.attribute("stroke") == Some("red") && r.attribute("marker-end").is_none()));
        for n in doc.descendants().filter(|n| n.attribute("font-size").is_some()) {
            assert!(n.attribute("font-size").and_then(|v| v.parse::<f64>().ok()).is_some_and(|v| v >= MIN_FONT), "{n:?}");
        }
        // Drawn in full, nothing is folded and no note says so.
        let all = to_svg_all(&g);
        assert_eq!(count_with(&all, "rect", "class", "event folded"), 0);
        assert!(!all.contains("fold-note") && svg.contains("fold-note"));
        assert!(texts(&svg).iter().any(|t| t == "folded: 2 initial writes"));
        assert_eq!(
            fold_note(1, 3).as_deref(),
            Some("folded: 1 initial write, and 3 events on variables the highlighted edges do not touch")
        );
        assert_eq!(fold_note(0, 1).as_deref(), Some("folded: 1 event on variables the highlighted edges do not touch"));
        assert_eq!(fold_note(0, 0), None);
    }

    #[test]
    fn threads_are_columns_in_program_order_under_init() {
        let g = mp_graph();
        let f = fold::unfolded(&g);
        let grid = Grid::new(&f);
        let center = |id: usize| grid.index.get(&id).and_then(|&i| grid.nodes.get(i)).map(|n| n.rect.center);
        let [Some(ix), Some(iy), Some(a), Some(b), Some(c), Some(d)] = [0, 1, 2, 3, 4, 5].map(center) else {
            panic!("an event is missing from the grid");
        };
        assert_eq!(ix.y, iy.y, "initial writes share a row");
        assert!(ix.y < a.y && ix.y < c.y, "init above the threads");
        assert_eq!((a.x, c.y), (b.x, a.y), "a column per thread, a row per po index");
        assert_eq!(c.x, d.x);
        assert!(a.y < b.y && c.y < d.y, "program order goes down");
        assert!(a.x < c.x, "P0 left of P1");
        // Group boxes contain their events and never overlap.
        for (i, c1) in grid.clusters.iter().enumerate() {
            for c2 in &grid.clusters[i + 1..] {
                assert!(!c1.rect.overlaps(&c2.rect), "{} overlaps {}", c1.name, c2.name);
            }
        }
        for n in &grid.nodes {
            assert!(grid.clusters.iter().any(|c| c.rect.contains(n.rect.top_left(), 0.0) && c.rect.contains(n.rect.bottom_right(), 0.0)));
        }
    }

    #[test]
    fn routes_avoid_other_events_and_parallel_edges_stay_apart() {
        for g in [mp_graph(), wide_graph(3, 6), wide_graph(8, 4)] {
            let f = fold::unfolded(&g);
            let grid = Grid::new(&f);
            let routes = route_all(&g, &grid);
            assert_eq!(routes.len(), g.edges.len());
            for (edge, route) in &routes {
                let ends = [edge.from, edge.to].map(|id| grid.index.get(&id).copied());
                for (i, n) in grid.nodes.iter().enumerate() {
                    if ends.contains(&Some(i)) {
                        continue;
                    }
                    // Finer than the router samples, so a box slipping between its samples would show.
                    for k in 1..1000 {
                        let p = route.shape.at(k as f64 / 1000.0);
                        assert!(!n.rect.contains(p, 0.0), "{} -> {} crosses {}", edge.from, edge.to, n.node.label);
                    }
                }
            }
        }
        // po and rf between the same two events, and an edge back: three distinct curves.
        let mut g = mp_graph();
        g.edges = vec![
            GraphEdge { from: 2, to: 3, label: "po".into(), highlighted: false },
            GraphEdge { from: 2, to: 3, label: "rf".into(), highlighted: false },
            GraphEdge { from: 3, to: 2, label: "fr".into(), highlighted: false },
        ];
        let f = fold::unfolded(&g);
        let grid = Grid::new(&f);
        let mids: Vec<Pt> = route_all(&g, &grid).iter().map(|(_, r)| r.shape.at(0.5)).collect();
        assert_eq!(mids.len(), 3);
        assert!(mids[0].sub(mids[1]).len() > 10.0 && mids[0].sub(mids[2]).len() > 10.0 && mids[1].sub(mids[2]).len() > 10.0, "{mids:?}");
    }

    #[test]
    fn labels_take_their_edge_style() {
        let g = wide_graph(3, 6);
        let svg = to_svg_all(&g);
        let doc = parse(&svg);
        let labels: Vec<(String, String, bool)> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text") && n.attribute("class") == Some("label"))
            .map(|n| {
                (
                    n.text().unwrap_or("").to_string(),
                    n.attribute("fill").unwrap_or("").to_string(),
                    n.attribute("font-weight") == Some("bold"),
                )
            })
            .collect();
        let want: Vec<(String, String, bool)> =
            g.edges.iter().map(|e| (e.label.clone(), edge_style(e).0.to_string(), e.highlighted)).collect();
        assert_eq!(labels, want);
    }

    #[test]
    fn escapes_special_characters() {
        let svg = to_svg_all(&nasty_graph());
        let texts = texts(&svg);
        // The parser un-escapes, so the original text comes back (control characters replaced).
        for want in [
            "i: W x<y=0",
            "init & \"zero\"",
            "a: R x=\"1\"",
            "ld r0, [x] \\ <&> (line 3)",
            "b: W y=1",
            "second",
            "st tab\u{FFFD}ctl",
            "rf<&>\"",
            "P<0>&\"",
            "weird \"test\" <&> \\ 'q'",
        ] {
            assert!(texts.iter().any(|t| t == want), "missing {want:?} in {texts:?}");
        }
        assert!(svg.contains("x&lt;y") && svg.contains("&amp;") && !svg.contains('\u{1}') && !svg.contains('\t'));
    }

    #[test]
    fn empty_graphs() {
        texts(&to_svg_all(&ExecutionGraph::default()));
        let only_edges = ExecutionGraph {
            title: "only edges".into(),
            edges: vec![GraphEdge { from: 0, to: 1, label: "rf".into(), highlighted: true }],
            ..Default::default()
        };
        let svg = to_svg_all(&only_edges);
        assert!(texts(&svg).contains(&"only edges".to_string()));
        assert!(!svg.contains("<path"));
        // A thread without events gets no box.
        let svg = to_svg_all(&ExecutionGraph { threads: vec![GraphThread { name: "P0".into(), nodes: vec![] }], ..Default::default() });
        assert_eq!(count_with(&svg, "g", "class", "cluster"), 0);
    }

    #[test]
    fn eight_threads() {
        let g = wide_graph(8, 4);
        let svg = to_svg_all(&g);
        let texts = texts(&svg);
        for i in 0..8 {
            assert!(texts.contains(&format!("P{i}")));
        }
        assert_eq!(count_with(&svg, "g", "class", "cluster"), 9);
        assert_eq!(svg.matches("<path class=\"edge").count(), g.edges.len());
    }

    #[test]
    fn odd_edges() {
        let mut g = mp_graph();
        let e = |from, to, label: &str| GraphEdge { from, to, label: label.into(), highlighted: false };
        g.edges.extend([e(2, 2, "loop"), e(2, 2, "loop2"), e(2, 3, "po"), e(3, 2, "back"), e(2, 77, "dangling"), e(4, 5, "")]);
        // A repeated id: drawn twice, edges attach to the first.
        g.threads[1].nodes.push(GraphNode { id: 2, label: "dup".into(), detail: String::new(), variable: None });
        let svg = to_svg_all(&g);
        let texts = texts(&svg);
        assert!(texts.contains(&"dup".to_string()) && texts.contains(&"loop".to_string()) && texts.contains(&"loop2".to_string()));
        assert!(!texts.contains(&"dangling".to_string()));
        assert_eq!(svg.matches("<path class=\"edge").count(), g.edges.len() - 1);
    }

    /// A deterministic generator of arbitrary graphs: up to 3 initial writes, 8 threads of up to 6 events,
    /// and up to 4 edges per event between random ids (self-loops, duplicates and unknown ids included).
    fn random_graph(seed: u64) -> ExecutionGraph {
        let mut state = seed;
        let mut next = |n: usize| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 33) as usize) % n.max(1)
        };
        let mut g = ExecutionGraph { title: format!("seed {seed}"), ..Default::default() };
        let mut id = 0;
        for _ in 0..next(4) {
            g.init.push(GraphNode { id, label: format!("i{id}: W x=0"), detail: "init".into(), variable: Some("x".into()) });
            id += 1;
        }
        for t in 0..next(9) {
            let mut nodes = Vec::new();
            for _ in 0..next(7) {
                nodes.push(GraphNode {
                    id,
                    label: format!("e{id}: R y=1"),
                    detail: "x".repeat(next(30)),
                    variable: Some(["x", "y"][next(2)].into()),
                });
                id += 1;
            }
            g.threads.push(GraphThread { name: format!("P{t}"), nodes });
        }
        for _ in 0..next(4 * (id + 1)) {
            let label = ["po", "rf", "co", "fr", "sync", ""][next(6)];
            g.edges.push(GraphEdge { from: next(id + 2), to: next(id + 2), label: label.into(), highlighted: next(3) == 0 });
        }
        g
    }

    #[test]
    fn arbitrary_graphs_render_well_formed() {
        for seed in 0..300 {
            let g = random_graph(seed);
            let svg = to_svg_all(&g);
            texts(&svg);
            let ids: std::collections::HashSet<usize> = all_nodes(&g).map(|n| n.id).collect();
            let drawable = g.edges.iter().filter(|e| ids.contains(&e.from) && ids.contains(&e.to)).count();
            assert_eq!(svg.matches("<path class=\"edge").count(), drawable, "seed {seed}");
        }
    }
}
