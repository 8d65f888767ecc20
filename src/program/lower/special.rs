//! Each thread's position in the launch (its `tid` in its CTA, its warp and lane) and the special
//! registers that read it (`%tid.x`, `%ctaid.x`, `%cluster_ctarank`, ...).
//!
//! PTX ISA §10 ("Special Registers"): "PTX includes a number of predefined, read-only variables,
//! which are visible as special registers and accessed through mov or cvt instructions." In a
//! litmus test they are constants of each thread, taken from its placement (`P0@cta 1,gpu 0,tid
//! 32`); registers whose values differ from run to run (`%clock`, `%smid`, ...) are rejected, since
//! no placement fixes them.

use crate::diag::Diagnostic;
use crate::litmus::ast;
use crate::program::{cluster_ctas, Placement, Variable};

/// Threads a CTA may have (PTX ISA: at most 1024 threads per CTA).
const MAX_CTA_THREADS: i64 = 1024;

/// Where a thread sits in its warp: the threads of a CTA with tids 32w..32w+31 form warp w, and a
/// thread's lane is its tid mod 32. `lanes` has a bit for each lane of this thread's warp that
/// some thread of the test occupies; `launched` one for each lane the launch has (the test's
/// launch item gives the block; without one, the lanes the test occupies are all there are).
#[derive(Clone, Copy, Debug)]
pub(super) struct Warp {
    pub(super) lane: u32,
    pub(super) lanes: u32,
    pub(super) launched: u32,
}

/// Where a thread runs, as its special registers see it: each vector register's x, y and z.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Specials {
    /// The thread's linear index in its CTA (x fastest), which gives its warp and lane.
    linear_tid: i64,
    tid: [i64; 3],
    ntid: [i64; 3],
    ctaid: [i64; 3],
    nctaid: [i64; 3],
    clusterid: [i64; 3],
    nclusterid: [i64; 3],
    cluster_ctaid: [i64; 3],
    cluster_nctaid: [i64; 3],
    rank: i64,
    nrank: i64,
    explicit_cluster: bool,
    dynamic_smem: Option<i64>,
}

impl Specials {
    /// The value of the special register `name` (`%tid.x`), `Ok(None)` when `name` is not one, or
    /// why it cannot be read in a litmus test.
    pub(super) fn read(&self, name: &str) -> Result<Option<i64>, String> {
        let lane = self.linear_tid % 32;
        let (base, component) = match name.split_once('.') {
            Some((b, c)) => (b, Some(c)),
            None => (name, None),
        };
        let xyz = |v: [i64; 3]| -> Result<Option<i64>, String> {
            match component {
                Some("x") => Ok(Some(v[0])),
                Some("y") => Ok(Some(v[1])),
                Some("z") => Ok(Some(v[2])),
                _ => Err(format!("`{base}` is a vector: read `{base}.x`, `{base}.y` or `{base}.z`")),
            }
        };
        let scalar = |v: i64| -> Result<Option<i64>, String> {
            match component {
                None => Ok(Some(v)),
                Some(_) => Err(format!("`{base}` has no components: read `{base}`")),
            }
        };
        let threads = self.ntid.iter().product::<i64>();
        match base {
            "%tid" => xyz(self.tid),
            "%ntid" => xyz(self.ntid),
            "%ctaid" => xyz(self.ctaid),
            "%nctaid" => xyz(self.nctaid),
            "%clusterid" => xyz(self.clusterid),
            "%nclusterid" => xyz(self.nclusterid),
            "%cluster_ctaid" => xyz(self.cluster_ctaid),
            "%cluster_nctaid" => xyz(self.cluster_nctaid),
            "%cluster_ctarank" => scalar(self.rank),
            "%cluster_nctarank" => scalar(self.nrank),
            "%is_explicit_cluster" => scalar(i64::from(self.explicit_cluster)),
            "%laneid" => scalar(lane),
            "%warpid" => scalar(self.linear_tid / 32),
            "%nwarpid" => scalar((threads + 31) / 32),
            "%gridid" => scalar(0),
            "%lanemask_eq" => scalar(1 << lane),
            "%lanemask_le" => scalar((1 << (lane + 1)) - 1),
            "%lanemask_lt" => scalar((1 << lane) - 1),
            "%lanemask_ge" => scalar(!((1i64 << lane) - 1) & 0xffff_ffff),
            "%lanemask_gt" => scalar(!((1i64 << (lane + 1)) - 1) & 0xffff_ffff),
            "%dynamic_smem_size" => match self.dynamic_smem {
                Some(b) => scalar(b),
                None => Err(format!("`{name}` reads the launch's dynamic shared memory: give it in the test's launch (`k @ launch {{ dynamic_smem = BYTES; }}`)")),
            },
            "%clock" | "%clock_hi" | "%clock64" | "%globaltimer" | "%globaltimer_lo" | "%globaltimer_hi" | "%smid" | "%nsmid" => {
                Err(format!("`{name}` reads a value that differs from run to run; a litmus test's placement cannot fix it"))
            }
            b if b.starts_with("%pm") || b.starts_with("%envreg") || b.ends_with("smem_size") || b.starts_with("%reserved_smem") => {
                Err(format!("`{name}` reads the hardware or the launch configuration, which ptxmm does not model"))
            }
            "%current_graph_exec" => Err(format!("`{name}` reads the launch configuration, which ptxmm does not model")),
            _ => Ok(None),
        }
    }
}

/// The launch of a test's threads (`k @ launch { ... }`): the shapes of the block, the grid and
/// the cluster, x first, and the dynamic shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct LaunchShape {
    pub(super) block: [i64; 3],
    pub(super) grid: [i64; 3],
    pub(super) cluster: Option<[i64; 3]>,
    pub(super) dynamic_smem: Option<i64>,
}

impl LaunchShape {
    /// The launch declared in the init block, checked, if there is one.
    pub(super) fn of(init: &[crate::diag::Spanned<ast::InitItem>]) -> Result<Option<LaunchShape>, Diagnostic> {
        let mut found = None;
        for item in init {
            let ast::InitItem::Launch(d) = &item.node else { continue };
            if found.is_some() {
                return Err(Diagnostic::error(item.span, "a test has one launch"));
            }
            let mut shape = LaunchShape { block: [1; 3], grid: [1; 3], cluster: None, dynamic_smem: None };
            for (key, value) in &d.fields {
                let dims = || -> Result<[i64; 3], Diagnostic> {
                    let v: Vec<i64> = match &value.node {
                        ast::TensorMapValue::Int(n) => vec![*n],
                        ast::TensorMapValue::List(l) => l.clone(),
                        ast::TensorMapValue::Word(_) => vec![],
                    };
                    if v.is_empty() || v.len() > 3 || v.iter().any(|&n| !(1..=1 << 31).contains(&n)) {
                        return Err(Diagnostic::expected(value.span, "1 to 3 positive sizes (`{64, 2, 1}`)", "something else"));
                    }
                    let mut out = [1; 3];
                    out[..v.len()].copy_from_slice(&v);
                    Ok(out)
                };
                match key.node.as_str() {
                    "block" => shape.block = dims()?,
                    "grid" => shape.grid = dims()?,
                    "cluster" => shape.cluster = Some(dims()?),
                    "dynamic_smem" => match value.node {
                        ast::TensorMapValue::Int(n) if n >= 0 => shape.dynamic_smem = Some(n),
                        _ => return Err(Diagnostic::expected(value.span, "a number of bytes", "something else")),
                    },
                    other => {
                        return Err(Diagnostic::expected(
                            key.span,
                            "a launch field (block, grid, cluster, dynamic_smem)",
                            format!("`{other}`"),
                        ))
                    }
                }
            }
            if shape.block.iter().product::<i64>() > MAX_CTA_THREADS {
                return Err(Diagnostic::error(item.span, format!("a CTA has at most {MAX_CTA_THREADS} threads")));
            }
            if let Some(c) = shape.cluster {
                if (0..3).any(|k| shape.grid[k] % c[k] != 0) {
                    return Err(Diagnostic::error(item.span, "the grid is not a whole number of clusters in every dimension"));
                }
            }
            found = Some(shape);
        }
        Ok(found)
    }
}

/// The x, y and z of a linear index in a shape (x fastest).
fn components(linear: i64, shape: [i64; 3]) -> [i64; 3] {
    [linear % shape[0], (linear / shape[0]) % shape[1], linear / (shape[0] * shape[1])]
}

/// A thread's position: its `tid`, its warp (for `elect.sync`) and its special registers.
pub(super) struct Position {
    pub(super) warp: Warp,
    pub(super) specials: Specials,
}

/// Every thread's position, in header order. `tid N` in a placement fixes a thread's `%tid.x`;
/// without it a thread's tid is its position among its CTA's threads by id. Two threads of one
/// CTA with one tid are an error.
pub(super) fn positions(
    headers: &[ast::ThreadHeader],
    placements: &[Placement],
    variables: &[Variable],
    launch: Option<LaunchShape>,
) -> Result<Vec<Position>, Diagnostic> {
    let explicit: Vec<Option<i64>> = headers.iter().map(explicit_tid).collect::<Result<_, _>>()?;
    let same_cta = |a: &Placement, b: &Placement| a.cta == b.cta && a.gpu == b.gpu;
    let mut tids = Vec::new();
    for (i, (h, p)) in headers.iter().zip(placements).enumerate() {
        let tid = match explicit[i] {
            Some(t) => t,
            None => {
                let mut mates: Vec<usize> =
                    headers.iter().zip(placements).filter(|(_, q)| same_cta(p, q)).map(|(g, _)| g.id.node).collect();
                mates.sort_unstable();
                mates.iter().position(|&m| m == h.id.node).unwrap_or(0) as i64
            }
        };
        tids.push(tid);
    }
    for i in 0..headers.len() {
        for j in 0..i {
            if same_cta(&placements[i], &placements[j]) && tids[i] == tids[j] {
                return Err(Diagnostic::error(
                    headers[i].span,
                    format!("P{} and P{} are both thread {} of CTA {}", headers[j].id.node, headers[i].id.node, tids[i], placements[i].cta),
                )
                .with_note(
                    "give each thread of a CTA its own `tid N` (a thread without one takes its position among its CTA's threads by id)",
                ));
            }
        }
    }
    let explicit_cluster = |h: &ast::ThreadHeader| h.placement.iter().any(|(l, _)| l.node == "cluster");
    let mut out = Vec::new();
    for (i, p) in placements.iter().enumerate() {
        let mates = || (0..headers.len()).filter(|&j| same_cta(p, &placements[j]));
        let lane = tids[i] % 32;
        let lanes = mates().filter(|&j| tids[j] / 32 == tids[i] / 32).fold(0u32, |acc, j| acc | 1 << (tids[j] % 32));
        let on_gpu = || placements.iter().filter(|q| q.gpu == p.gpu);
        let explicit = explicit_cluster(&headers[i]);
        let specials = match launch {
            Some(l) => {
                let threads = l.block.iter().product::<i64>();
                if tids[i] >= threads {
                    return Err(Diagnostic::error(
                        headers[i].span,
                        format!("P{} is thread {} of a CTA of {threads} threads (the test's launch)", headers[i].id.node, tids[i]),
                    ));
                }
                if p.cta >= l.grid.iter().product::<i64>() {
                    return Err(Diagnostic::error(
                        headers[i].span,
                        format!("P{} is in CTA {}, outside the test's grid", headers[i].id.node, p.cta),
                    ));
                }
                let ctaid = components(p.cta, l.grid);
                let c = l.cluster.unwrap_or([1; 3]);
                let cluster_ctaid = [ctaid[0] % c[0], ctaid[1] % c[1], ctaid[2] % c[2]];
                Specials {
                    linear_tid: tids[i],
                    tid: components(tids[i], l.block),
                    ntid: l.block,
                    ctaid,
                    nctaid: l.grid,
                    clusterid: [ctaid[0] / c[0], ctaid[1] / c[1], ctaid[2] / c[2]],
                    nclusterid: [l.grid[0] / c[0], l.grid[1] / c[1], l.grid[2] / c[2]],
                    cluster_ctaid,
                    cluster_nctaid: c,
                    rank: cluster_ctaid[0] + cluster_ctaid[1] * c[0] + cluster_ctaid[2] * c[0] * c[1],
                    nrank: c.iter().product(),
                    explicit_cluster: l.cluster.is_some(),
                    dynamic_smem: l.dynamic_smem,
                }
            }
            None => {
                let ntid = mates().map(|j| tids[j] + 1).max().unwrap_or(1);
                let nctaid = on_gpu().map(|q| q.cta + 1).max().unwrap_or(1);
                let (clusterid, nclusterid, rank, nrank) = if explicit {
                    let ctas = cluster_ctas(placements, variables, p.cluster);
                    let rank = ctas.iter().position(|&c| c == p.cta).unwrap_or(0) as i64;
                    (p.cluster, on_gpu().map(|q| q.cluster + 1).max().unwrap_or(1).max(1), rank, ctas.len() as i64)
                } else {
                    // Without cluster dimensions a launch is an implicit 1x1x1 cluster (PTX ISA §2.2.2).
                    (p.cta, nctaid, 0, 1)
                };
                Specials {
                    linear_tid: tids[i],
                    tid: [tids[i], 0, 0],
                    ntid: [ntid, 1, 1],
                    ctaid: [p.cta, 0, 0],
                    nctaid: [nctaid, 1, 1],
                    clusterid: [clusterid, 0, 0],
                    nclusterid: [nclusterid, 1, 1],
                    cluster_ctaid: [rank, 0, 0],
                    cluster_nctaid: [nrank, 1, 1],
                    rank,
                    nrank,
                    explicit_cluster: explicit,
                    dynamic_smem: None,
                }
            }
        };
        let launched = match launch {
            Some(l) => {
                let threads = l.block.iter().product::<i64>();
                let first = tids[i] / 32 * 32;
                (0..32).filter(|k| first + k < threads).fold(0u32, |acc, k| acc | 1 << k)
            }
            None => lanes,
        };
        out.push(Position { warp: Warp { lane: lane as u32, lanes, launched }, specials });
    }
    Ok(out)
}

/// The `tid N` level of a placement, checked.
fn explicit_tid(h: &ast::ThreadHeader) -> Result<Option<i64>, Diagnostic> {
    let Some((_, n)) = h.placement.iter().find(|(l, _)| l.node == "tid") else { return Ok(None) };
    if !(0..MAX_CTA_THREADS).contains(&n.node) {
        return Err(Diagnostic::expected(
            n.span,
            format!("a thread id in [0, {MAX_CTA_THREADS}) (a CTA has at most {MAX_CTA_THREADS} threads)"),
            n.node,
        ));
    }
    Ok(Some(n.node))
}
