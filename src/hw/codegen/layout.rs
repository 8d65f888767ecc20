//! Where a test lives on the device: its CTAs, clusters and warps, each variable's place in an
//! instance's global block or its CTA's shared-memory window, and the C++ expression of a
//! variable's address as a thread sees it.

use super::super::{reject, HwTest, Rejection};
use crate::program::{Op, Space, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Padding between two global variables of an instance and between instances (bytes): two
/// variables never share a 128-byte line, as in the GPU-litmus literature's default layout.
const GLOBAL_PAD: i64 = 128;

/// Which address form an address operand takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum AddrForm {
    /// 64-bit generic address (`.l` operand).
    Generic,
    /// 64-bit global address.
    Global,
    /// 32-bit `.shared::cta` window address.
    SharedCta,
    /// 32-bit `.shared::cluster` window address (`mapa` for another CTA).
    SharedCluster,
}

/// Geometry of one test on the device.
pub(super) struct Layout {
    /// Test CTA ids, sorted; index = dense CTA index.
    pub ctas: Vec<i64>,
    /// Clusters: for each, the dense CTA indices by rank.
    pub clusters: Vec<Vec<usize>>,
    pub cluster_dim: usize,
    /// Per dense CTA: thread indices, one per warp (empty: a keeper warp only).
    pub warps: Vec<Vec<usize>>,
    /// Per global variable: byte offset in an instance's global block.
    pub global_off: BTreeMap<usize, i64>,
    pub global_stride: i64,
    pub smem_bytes: i64,
}

impl Layout {
    pub fn dense_cta(&self, cta: i64) -> usize {
        self.ctas.binary_search(&cta).unwrap_or(0)
    }
    fn rank_of(&self, dense: usize) -> usize {
        self.clusters.iter().find_map(|c| c.iter().position(|&d| d == dense)).unwrap_or(0)
    }
    pub fn max_warps(&self) -> usize {
        self.warps.iter().map(|w| w.len().max(1)).max().unwrap_or(1)
    }
}

pub(super) fn layout(test: &HwTest) -> Result<Layout, Rejection> {
    let p = test.program;
    let gpus: BTreeSet<i64> = p.threads.iter().map(|t| t.placement.gpu).collect();
    if gpus.len() > 1 {
        let span = p.threads.iter().find(|t| t.placement.gpu != p.threads[0].placement.gpu).map(|t| t.span).unwrap_or_default();
        return Err(reject(
            p,
            span,
            format!("the test places threads on {} GPUs; the harness runs on one GPU (multi-GPU placement is not generated)", gpus.len()),
        ));
    }
    // A harness binds kernel parameters as the constants `ld.param` reads; the address of a
    // parameter (`mov.b64 %rd, NAME`) names no memory the harness lays out.
    for t in &p.threads {
        for i in &t.code {
            if let Op::Local { a: Value::Const(c), .. } = i.op {
                if p.decode_address(c).is_some_and(|(v, _)| p.variables[v].space == Space::Param) {
                    return Err(reject(
                        p,
                        i.span,
                        "it takes the address of a kernel parameter (the harness binds parameters as constants)",
                    ));
                }
                if crate::program::unknown::is_unknown(c) {
                    return Err(reject(
                        p,
                        i.span,
                        "it reads an unknown value (a parameter byte no value binds): the harness needs every value",
                    ));
                }
            }
        }
    }
    let mut ctas: BTreeSet<i64> = p.threads.iter().map(|t| t.placement.cta).collect();
    for v in &p.variables {
        if let Space::Shared { cta } = v.space {
            ctas.insert(cta);
        }
    }
    let ctas: Vec<i64> = ctas.into_iter().collect();
    let mut by_cluster: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for (d, &c) in ctas.iter().enumerate() {
        by_cluster.entry(p.cluster_of_cta(c)).or_default().push(d);
    }
    let clusters: Vec<Vec<usize>> = by_cluster.into_values().collect();
    let cluster_dim = clusters.iter().map(Vec::len).max().unwrap_or(1);
    if cluster_dim > 8 {
        return Err(reject(p, p.threads[0].span, format!("a cluster of {cluster_dim} CTAs; the portable maximum is 8")));
    }
    let mut warps = vec![Vec::new(); ctas.len()];
    for (i, t) in p.threads.iter().enumerate() {
        warps[ctas.binary_search(&t.placement.cta).unwrap_or(0)].push(i);
    }
    if let Some(w) = warps.iter().find(|w| w.len() > 32) {
        return Err(reject(p, p.threads[w[0]].span, "more than 32 threads in one CTA (one warp per thread)"));
    }
    let mut global_off = BTreeMap::new();
    let mut end = 0i64;
    let mut smem_bytes = 16i64;
    for (i, v) in p.variables.iter().enumerate() {
        match v.space {
            Space::Global => {
                let align = v.align.max(GLOBAL_PAD);
                let start = (end + align - 1) / align * align;
                global_off.insert(i, start);
                // A tensor map's word holds the whole encoded descriptor on the device.
                let size = if super::super::tensor::is_map_variable(p, i) { super::super::tensor::TENSOR_MAP_BYTES } else { v.size };
                end = start + size;
            }
            Space::Shared { .. } => {
                let w = p.window_offset(i).unwrap_or(0);
                smem_bytes = smem_bytes.max(w + v.size);
            }
            Space::Param => {}
        }
    }
    let global_stride = ((end + GLOBAL_PAD - 1) / GLOBAL_PAD * GLOBAL_PAD).max(GLOBAL_PAD);
    Ok(Layout { ctas, clusters, cluster_dim, warps, global_off, global_stride, smem_bytes: (smem_bytes + 15) / 16 * 16 })
}

/// The C++ expression of a variable's address as seen from a thread of `dense_cta`.
pub(super) fn address_expr(test: &HwTest, layout: &Layout, dense_cta: usize, var: usize, form: AddrForm) -> (String, &'static str) {
    let v = &test.program.variables[var];
    match v.space {
        Space::Global => (format!("(gbase + {})", layout.global_off[&var]), "l"),
        // Rejected by `layout`: no harness addresses a kernel parameter.
        Space::Param => ("0".to_string(), "l"),
        Space::Shared { cta } => {
            let owner = layout.dense_cta(cta);
            let off = test.program.window_offset(var).unwrap_or(0);
            let rank = layout.rank_of(owner);
            let local = owner == dense_cta;
            match (form, local) {
                (AddrForm::SharedCta | AddrForm::SharedCluster, true) => (format!("smem_addr({off})"), "r"),
                (AddrForm::SharedCta | AddrForm::SharedCluster, false) => (format!("cluster_addr({off}, {rank})"), "r"),
                (_, true) => (format!("(smem + {off})"), "l"),
                (_, false) => (format!("__cluster_map_shared_rank(smem + {off}, {rank})"), "l"),
            }
        }
    }
}
