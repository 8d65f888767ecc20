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
/// some thread of the test occupies.
#[derive(Clone, Copy, Debug)]
pub(super) struct Warp {
    pub(super) lane: u32,
    pub(super) lanes: u32,
}

/// Where a thread runs, as its special registers see it.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Specials {
    tid: i64,
    ntid: i64,
    ctaid: i64,
    nctaid: i64,
    clusterid: i64,
    nclusterid: i64,
    rank: i64,
    nrank: i64,
    explicit_cluster: bool,
}

impl Specials {
    /// The value of the special register `name` (`%tid.x`), `Ok(None)` when `name` is not one, or
    /// why it cannot be read in a litmus test.
    pub(super) fn read(&self, name: &str) -> Result<Option<i64>, String> {
        let lane = self.tid % 32;
        let (base, component) = match name.split_once('.') {
            Some((b, c)) => (b, Some(c)),
            None => (name, None),
        };
        let xyz = |x: i64, other: i64| -> Result<Option<i64>, String> {
            match component {
                Some("x") => Ok(Some(x)),
                Some("y" | "z") => Ok(Some(other)),
                _ => Err(format!("`{base}` is a vector: read `{base}.x`, `{base}.y` or `{base}.z`")),
            }
        };
        let scalar = |v: i64| -> Result<Option<i64>, String> {
            match component {
                None => Ok(Some(v)),
                Some(_) => Err(format!("`{base}` has no components: read `{base}`")),
            }
        };
        match base {
            "%tid" => xyz(self.tid, 0),
            "%ntid" => xyz(self.ntid, 1),
            "%ctaid" => xyz(self.ctaid, 0),
            "%nctaid" => xyz(self.nctaid, 1),
            "%clusterid" => xyz(self.clusterid, 0),
            "%nclusterid" => xyz(self.nclusterid, 1),
            "%cluster_ctaid" => xyz(self.rank, 0),
            "%cluster_nctaid" => xyz(self.nrank, 1),
            "%cluster_ctarank" => scalar(self.rank),
            "%cluster_nctarank" => scalar(self.nrank),
            "%is_explicit_cluster" => scalar(i64::from(self.explicit_cluster)),
            "%laneid" => scalar(lane),
            "%warpid" => scalar(self.tid / 32),
            "%nwarpid" => scalar((self.ntid + 31) / 32),
            "%gridid" => scalar(0),
            "%lanemask_eq" => scalar(1 << lane),
            "%lanemask_le" => scalar((1 << (lane + 1)) - 1),
            "%lanemask_lt" => scalar((1 << lane) - 1),
            "%lanemask_ge" => scalar(!((1i64 << lane) - 1) & 0xffff_ffff),
            "%lanemask_gt" => scalar(!((1i64 << (lane + 1)) - 1) & 0xffff_ffff),
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
        let ntid = mates().map(|j| tids[j] + 1).max().unwrap_or(1);
        let lane = tids[i] % 32;
        let lanes = mates().filter(|&j| tids[j] / 32 == tids[i] / 32).fold(0u32, |acc, j| acc | 1 << (tids[j] % 32));
        let on_gpu = || placements.iter().filter(|q| q.gpu == p.gpu);
        let nctaid = on_gpu().map(|q| q.cta + 1).max().unwrap_or(1);
        let explicit = explicit_cluster(&headers[i]);
        let (clusterid, nclusterid, rank, nrank) = if explicit {
            let ctas = cluster_ctas(placements, variables, p.cluster);
            let rank = ctas.iter().position(|&c| c == p.cta).unwrap_or(0) as i64;
            (p.cluster, on_gpu().map(|q| q.cluster + 1).max().unwrap_or(1).max(1), rank, ctas.len() as i64)
        } else {
            // Without cluster dimensions a launch is an implicit 1x1x1 cluster (PTX ISA §2.2.2).
            (p.cta, nctaid, 0, 1)
        };
        out.push(Position {
            warp: Warp { lane: lane as u32, lanes },
            specials: Specials { tid: tids[i], ntid, ctaid: p.cta, nctaid, clusterid, nclusterid, rank, nrank, explicit_cluster: explicit },
        });
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
