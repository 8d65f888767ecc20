//! The launch a kernel check models: its grid, cluster and block shape (from the command line,
//! else from the kernel's `.reqntid`/`.maxntid`/`.reqnctapercluster`), and which of its threads
//! become threads of the program (lane 0 of every warp of every CTA unless the options
//! choose; `super::build` then keeps the warps whose code differs).

use super::module::Function;
use super::KernelOptions;

/// One thread of the program: its CTA (linear id in the grid, x fastest), cluster (None: the
/// launch has no explicit clusters) and linear thread index in its CTA (x fastest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchThread {
    pub cta: u64,
    pub cluster: Option<u64>,
    pub tid: u64,
}

/// A column of a kernel's test: threads `first..first + threads` of the launch, a warp column
/// where `warp` is some (then they are its lanes, in order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    pub first: usize,
    pub threads: usize,
    pub warp: Option<u64>,
}

/// The launch: its shape and the threads modelled.
#[derive(Clone, Debug)]
pub struct Launch {
    /// Threads per CTA, x, y, z.
    pub block_dims: [u64; 3],
    /// CTAs in the grid, x, y, z.
    pub grid_dims: [u64; 3],
    /// CTAs per cluster, x, y, z (None: no explicit clusters).
    pub cluster_dims: Option<[u64; 3]>,
    /// Threads per CTA (the product of `block_dims`).
    pub block: u64,
    /// CTAs in the grid (the product of `grid_dims`).
    pub grid: u64,
    /// CTAs per cluster (the product of `cluster_dims`).
    pub cluster: Option<u64>,
    /// Bytes of dynamic shared memory (`--dynamic-smem`), if given.
    pub dynamic_smem: Option<u64>,
    pub threads: Vec<LaunchThread>,
    /// How the block size was chosen (`--block`, `.reqntid`, `.maxntid`).
    pub block_from: &'static str,
}

/// `64` or `64x2x1` for a shape.
fn shape(d: [u64; 3]) -> String {
    match d {
        [x, 1, 1] => x.to_string(),
        [x, y, 1] => format!("{x}x{y}"),
        [x, y, z] => format!("{x}x{y}x{z}"),
    }
}

impl Launch {
    /// `1 CTA of 64 threads (--block)`, `2x2 CTAs in clusters of 2, 128 threads each (.maxntid)`.
    pub fn describe(&self) -> String {
        let ctas = if self.grid == 1 { "1 CTA".to_string() } else { format!("{} CTAs", shape(self.grid_dims)) };
        let clusters = self.cluster_dims.map(|c| format!(" in clusters of {}", shape(c))).unwrap_or_default();
        let smem = self.dynamic_smem.map(|b| format!(", {b} bytes of dynamic shared memory")).unwrap_or_default();
        format!("{ctas}{clusters} of {} thread(s){smem} (block size from {})", shape(self.block_dims), self.block_from)
    }

    /// The test's columns for the threads modelled, in thread order: every lane of a warp is one
    /// warp column (its threads named `P<col>.<lane>`, as in a litmus test), any other thread a
    /// column of its own.
    pub fn columns(&self) -> Vec<Column> {
        let mut out: Vec<Column> = Vec::new();
        let mut i = 0;
        while i < self.threads.len() {
            let t = &self.threads[i];
            let warp = t.tid / 32;
            let lanes = (self.block - warp * 32).min(32) as usize;
            let whole = t.tid.is_multiple_of(32)
                && i + lanes <= self.threads.len()
                && (0..lanes).all(|l| {
                    let u = &self.threads[i + l];
                    u.cta == t.cta && u.cluster == t.cluster && u.tid == t.tid + l as u64
                });
            let n = if whole { lanes } else { 1 };
            out.push(Column { first: i, threads: n, warp: whole.then_some(warp) });
            i += n;
        }
        out
    }

    /// The name of each thread modelled, in thread order (`P3`, or `P1.7`: lane 7 of warp column 1).
    pub fn thread_names(&self) -> Vec<String> {
        self.columns()
            .iter()
            .enumerate()
            .flat_map(|(c, col)| (0..col.threads).map(move |l| crate::litmus::ast::thread_name(c, col.warp.map(|_| l))))
            .collect()
    }

    /// The init-block item giving the program this launch (`program::lower::special`).
    pub fn litmus_item(&self) -> String {
        let list = |d: [u64; 3]| format!("{{{}, {}, {}}}", d[0], d[1], d[2]);
        let cluster = self.cluster_dims.map(|c| format!(" cluster = {};", list(c))).unwrap_or_default();
        let smem = self.dynamic_smem.map(|b| format!(" dynamic_smem = {b};")).unwrap_or_default();
        format!("kernel @ launch {{ block = {}; grid = {};{cluster}{smem} }};", list(self.block_dims), list(self.grid_dims))
    }
}

/// Threads per CTA (PTX ISA: at most 1024) and CTAs a check may model.
const MAX_BLOCK: u64 = 1024;
const MAX_MODELLED_CTAS: u64 = 64;
/// The largest grid dimension (CUDA: 2^31 - 1 in x, 65535 in y and z).
const MAX_GRID_DIM: [u64; 3] = [(1 << 31) - 1, 65535, 65535];

/// A shape `X[,Y[,Z]]` (missing components are 1).
fn dims3(flag: &str, dims: &[u64]) -> Result<[u64; 3], String> {
    if dims.is_empty() || dims.len() > 3 || dims.contains(&0) {
        return Err(format!(
            "{flag}: expected X, X,Y or X,Y,Z with every size at least 1, found {}",
            dims.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
        ));
    }
    let mut out = [1; 3];
    out[..dims.len()].copy_from_slice(dims);
    Ok(out)
}

/// The launch of `entry` under the options.
pub fn launch(entry: &Function, options: &KernelOptions) -> Result<Launch, String> {
    let (dims, block_from) = match (&options.block, &entry.reqntid, &entry.maxntid) {
        (Some(b), _, _) => (b.clone(), "--block"),
        (None, Some(r), _) => (r.clone(), ".reqntid"),
        (None, None, Some(m)) => (m.clone(), ".maxntid"),
        (None, None, None) => {
            return Err(format!(
            "the kernel `{}` declares no block size (.reqntid or .maxntid): give one with --block X[,Y,Z] (e.g. --block 64 for two warps)",
            entry.name
        ))
        }
    };
    let block_dims = dims3(block_from, &dims)?;
    let block: u64 = block_dims.iter().product();
    if block > MAX_BLOCK {
        return Err(format!("{block_from}: a CTA has at most {MAX_BLOCK} threads, found {block}"));
    }
    if let (Some(req), "--block") = (&entry.reqntid, block_from) {
        if dims3(".reqntid", req)? != block_dims {
            return Err(format!(
                "--block {} differs from the kernel's .reqntid {}: the launch would fail",
                shape(block_dims),
                shape(dims3(".reqntid", req)?)
            ));
        }
    }
    if let (Some(max), "--block") = (&entry.maxntid, block_from) {
        let max: u64 = dims3(".maxntid", max)?.iter().product();
        if block > max {
            return Err(format!(
                "--block {}: {block} threads, more than the kernel's .maxntid of {max}: the launch would fail",
                shape(block_dims)
            ));
        }
    }
    let cluster_dims = match (&options.cluster, &entry.reqnctapercluster) {
        (Some(c), Some(r)) if dims3("--cluster", c)? != dims3(".reqnctapercluster", r)? => {
            return Err(format!(
                "--cluster {} differs from the kernel's .reqnctapercluster {}: the launch would fail",
                shape(dims3("--cluster", c)?),
                shape(dims3(".reqnctapercluster", r)?)
            ));
        }
        (Some(c), _) => Some(dims3("--cluster", c)?),
        (None, Some(r)) => Some(dims3(".reqnctapercluster", r)?),
        (None, None) if entry.explicit_cluster => {
            return Err("the kernel is .explicitcluster: give the cluster shape with --cluster X[,Y,Z]".to_string())
        }
        (None, None) => None,
    };
    let grid_dims = match &options.grid {
        Some(g) => dims3("--grid", g)?,
        None => cluster_dims.unwrap_or([1; 3]),
    };
    if let Some(k) = (0..3).find(|&k| grid_dims[k] > MAX_GRID_DIM[k]) {
        return Err(format!(
            "--grid: dimension {} is {}, more than a launch allows ({})",
            ["x", "y", "z"][k],
            grid_dims[k],
            MAX_GRID_DIM[k]
        ));
    }
    let grid: u64 = grid_dims.iter().product();
    if let Some(c) = cluster_dims {
        if (0..3).any(|k| grid_dims[k] % c[k] != 0) {
            return Err(format!("--grid {} is not a whole number of clusters of {} in every dimension", shape(grid_dims), shape(c)));
        }
    }
    let threads = threads(block, grid_dims, cluster_dims, options)?;
    Ok(Launch {
        block_dims,
        grid_dims,
        cluster_dims,
        block,
        grid,
        cluster: cluster_dims.map(|c| c.iter().product()),
        dynamic_smem: options.dynamic_smem,
        threads,
        block_from,
    })
}

/// The threads modelled: for each CTA of `--ctas` (default all, up to 64), each warp of
/// `--warps` (default all), each lane of `--lanes` (default 0) that exists in the block.
fn threads(block: u64, grid_dims: [u64; 3], cluster_dims: Option<[u64; 3]>, options: &KernelOptions) -> Result<Vec<LaunchThread>, String> {
    let grid: u64 = grid_dims.iter().product();
    let warps_in_block = block.div_ceil(32);
    if options.ctas.is_none() && grid > MAX_MODELLED_CTAS {
        return Err(format!(
            "the grid has {grid} CTAs; ptxmm kernel models at most {MAX_MODELLED_CTAS}: choose those to model with --ctas (e.g. --ctas 0-1; the launch, %nctaid and the CTA ids stay those of the whole grid)"
        ));
    }
    let ctas = pick("--ctas", options.ctas.as_deref(), grid, "CTA")?;
    if ctas.len() as u64 > MAX_MODELLED_CTAS {
        return Err(format!("--ctas: {} CTAs, more than the {MAX_MODELLED_CTAS} ptxmm kernel models", ctas.len()));
    }
    let warps = pick("--warps", options.warps.as_deref(), warps_in_block, "warp")?;
    let lanes = match options.lanes.as_deref() {
        None => vec![0],
        Some(l) => pick("--lanes", Some(l), 32, "lane")?,
    };
    // The cluster of a CTA: its cluster coordinates, numbered x fastest.
    let cluster_of = |cta: u64| {
        cluster_dims.map(|c| {
            let (x, y, z) = (cta % grid_dims[0], (cta / grid_dims[0]) % grid_dims[1], cta / (grid_dims[0] * grid_dims[1]));
            let (gx, gy) = (grid_dims[0] / c[0], grid_dims[1] / c[1]);
            x / c[0] + (y / c[1]) * gx + (z / c[2]) * gx * gy
        })
    };
    let mut out = Vec::new();
    for &cta in &ctas {
        for &w in &warps {
            for &l in &lanes {
                let tid = w * 32 + l;
                if tid < block {
                    out.push(LaunchThread { cta, cluster: cluster_of(cta), tid });
                }
            }
        }
    }
    if out.is_empty() {
        return Err("the chosen --warps and --lanes select no thread of the block".to_string());
    }
    Ok(out)
}

/// The chosen indices below `count`, or all of them.
fn pick(flag: &str, chosen: Option<&[u64]>, count: u64, what: &str) -> Result<Vec<u64>, String> {
    match chosen {
        None => Ok((0..count).collect()),
        Some(list) => {
            if let Some(bad) = list.iter().find(|&&i| i >= count) {
                return Err(format!("{flag}: there is no {what} {bad} (the launch has {count})"));
            }
            let mut v = list.to_vec();
            v.sort_unstable();
            v.dedup();
            Ok(v)
        }
    }
}

/// A list `0,2,5-7` of indices.
pub fn parse_list(flag: &str, text: &str) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let bad = || format!("{flag}: expected a list of numbers and ranges (`0,2,4-7`), found `{text}`");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (a.trim().parse::<u64>().map_err(|_| bad())?, b.trim().parse::<u64>().map_err(|_| bad())?);
                if b < a || b - a > 1024 {
                    return Err(bad());
                }
                out.extend(a..=b);
            }
            None => out.push(part.trim().parse::<u64>().map_err(|_| bad())?),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Function {
        Function {
            name: "k".into(),
            is_entry: true,
            params: vec![],
            reqntid: None,
            maxntid: None,
            reqnctapercluster: None,
            explicit_cluster: false,
            body: None,
            name_span: Default::default(),
        }
    }

    #[test]
    fn lane_zero_of_each_warp_by_default() {
        let o = KernelOptions { block: Some(vec![70]), ..Default::default() };
        let l = launch(&entry(), &o).unwrap();
        assert_eq!(l.threads.iter().map(|t| t.tid).collect::<Vec<_>>(), vec![0, 32, 64]);
    }

    #[test]
    fn a_cluster_shape_must_match_the_kernels_attribute() {
        let e = Function { reqnctapercluster: Some(vec![2, 1, 1]), ..entry() };
        let o = KernelOptions { block: Some(vec![32]), grid: Some(vec![4]), cluster: Some(vec![4]), ..Default::default() };
        let err = launch(&e, &o).unwrap_err();
        assert!(err.contains("--cluster 4 differs from the kernel's .reqnctapercluster 2"), "{err}");
        let o = KernelOptions { cluster: Some(vec![2, 1, 1]), ..o };
        assert!(launch(&e, &o).is_ok());
    }

    #[test]
    fn block_size_is_required_without_attributes() {
        let e = launch(&entry(), &KernelOptions::default()).unwrap_err();
        assert!(e.contains("--block"), "{e}");
    }

    #[test]
    fn clusters_from_the_attribute_set_the_grid() {
        let mut k = entry();
        k.reqnctapercluster = Some(vec![2, 1, 1]);
        let o = KernelOptions { block: Some(vec![32]), ..Default::default() };
        let l = launch(&k, &o).unwrap();
        assert_eq!(l.grid, 2);
        assert_eq!(l.threads.iter().map(|t| (t.cta, t.cluster)).collect::<Vec<_>>(), vec![(0, Some(0)), (1, Some(0))]);
    }

    #[test]
    fn two_dimensional_launches_number_ctas_x_fastest_and_clusters_by_coordinates() {
        let o = KernelOptions {
            block: Some(vec![32, 2]),
            grid: Some(vec![4, 2]),
            cluster: Some(vec![2, 1]),
            warps: Some(vec![0]),
            ..Default::default()
        };
        let l = launch(&entry(), &o).unwrap();
        assert_eq!((l.block, l.grid, l.cluster), (64, 8, Some(2)));
        // CTAs (x, y): 0=(0,0) 1=(1,0) 2=(2,0) 3=(3,0) 4=(0,1) ...; clusters of 2 along x.
        let clusters: Vec<(u64, Option<u64>)> = l.threads.iter().map(|t| (t.cta, t.cluster)).collect();
        assert_eq!(
            clusters,
            vec![(0, Some(0)), (1, Some(0)), (2, Some(1)), (3, Some(1)), (4, Some(2)), (5, Some(2)), (6, Some(3)), (7, Some(3))]
        );
        assert!(l.litmus_item().contains("block = {32, 2, 1}; grid = {4, 2, 1}; cluster = {2, 1, 1};"));
        let big = KernelOptions { block: Some(vec![32]), grid: Some(vec![132]), ..Default::default() };
        assert!(launch(&entry(), &big).unwrap_err().contains("--ctas"));
        let chosen = KernelOptions { ctas: Some(vec![0, 131]), ..big };
        assert_eq!(launch(&entry(), &chosen).unwrap().threads.len(), 2);
    }

    #[test]
    fn lists_take_ranges() {
        assert_eq!(parse_list("--lanes", "0,2-4").unwrap(), vec![0, 2, 3, 4]);
        assert!(parse_list("--lanes", "x").is_err());
    }
}
