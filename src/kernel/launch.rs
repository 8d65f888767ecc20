//! The launch a kernel check models: its grid, cluster and block shape (from the command line,
//! else from the kernel's `.reqntid`/`.maxntid`/`.reqnctapercluster`), and which of its threads
//! become threads of the program (lane 0 of every warp of every CTA unless the options
//! choose; `super::build` then keeps the warps whose code differs).

use super::module::Function;
use super::KernelOptions;

/// One thread of the program: its CTA, cluster (None: the launch has no explicit clusters) and
/// thread index in its CTA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchThread {
    pub cta: u64,
    pub cluster: Option<u64>,
    pub tid: u64,
}

/// The launch: its shape and the threads modelled.
#[derive(Clone, Debug)]
pub struct Launch {
    pub block: u64,
    pub grid: u64,
    pub cluster: Option<u64>,
    pub threads: Vec<LaunchThread>,
    /// How the block size was chosen (`--block`, `.reqntid`, `.maxntid`).
    pub block_from: &'static str,
}

impl Launch {
    /// `1 CTA of 64 threads (--block)`, `2 CTAs in clusters of 2, 32 threads each (.maxntid)`.
    pub fn describe(&self) -> String {
        let ctas = if self.grid == 1 { "1 CTA".to_string() } else { format!("{} CTAs", self.grid) };
        let clusters = self.cluster.map(|c| format!(" in clusters of {c}")).unwrap_or_default();
        format!("{ctas}{clusters} of {} thread(s) (block size from {})", self.block, self.block_from)
    }
}

/// Threads per CTA (PTX ISA: at most 1024) and CTAs a check may model.
const MAX_BLOCK: u64 = 1024;
const MAX_GRID: u64 = 64;

/// A one-dimensional size from `X[,Y,Z]`: only X may exceed 1 (the program's threads see
/// `%tid.y`/`%tid.z` as 0).
fn one_dim(flag: &str, dims: &[u64]) -> Result<u64, String> {
    match dims {
        [x] | [x, 1] | [x, 1, 1] if *x >= 1 => Ok(*x),
        _ => Err(format!(
            "{flag}: only one-dimensional shapes are modelled (X, X,1 or X,1,1 with X >= 1), found {}",
            dims.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
        )),
    }
}

/// The launch of `entry` under the options.
pub fn launch(entry: &Function, options: &KernelOptions) -> Result<Launch, String> {
    let (dims, block_from) = match (&options.block, &entry.reqntid, &entry.maxntid) {
        (Some(b), _, _) => (b.clone(), "--block"),
        (None, Some(r), _) => (r.clone(), ".reqntid"),
        (None, None, Some(m)) => (m.clone(), ".maxntid"),
        (None, None, None) => {
            return Err(format!(
                "the kernel `{}` declares no block size (.reqntid or .maxntid): give one with --block X (e.g. --block 64 for two warps)",
                entry.name
            ))
        }
    };
    let block = one_dim(block_from, &dims)?;
    if block > MAX_BLOCK {
        return Err(format!("{block_from}: a CTA has at most {MAX_BLOCK} threads, found {block}"));
    }
    if let (Some(req), "--block") = (&entry.reqntid, block_from) {
        if one_dim(".reqntid", req)? != block {
            return Err(format!("--block {block} differs from the kernel's .reqntid {}: the launch would fail", req[0]));
        }
    }
    let cluster = match (&options.cluster, &entry.reqnctapercluster) {
        (Some(c), _) => Some(one_dim("--cluster", c)?),
        (None, Some(r)) => Some(one_dim(".reqnctapercluster", r)?),
        (None, None) if entry.explicit_cluster => {
            return Err("the kernel is .explicitcluster: give the cluster size with --cluster N".to_string())
        }
        (None, None) => None,
    };
    let grid = match &options.grid {
        Some(g) => one_dim("--grid", g)?,
        None => cluster.unwrap_or(1),
    };
    if grid > MAX_GRID {
        return Err(format!("--grid: ptxmm kernel models at most {MAX_GRID} CTAs, found {grid}"));
    }
    if let Some(c) = cluster {
        if !grid.is_multiple_of(c) {
            return Err(format!("--grid {grid} is not a multiple of the cluster size {c}"));
        }
    }
    let threads = threads(block, grid, cluster, options)?;
    Ok(Launch { block, grid, cluster, threads, block_from })
}

/// The threads modelled: for each CTA of `--ctas` (default all), each warp of `--warps`
/// (default all), each lane of `--lanes` (default 0) that exists in the block.
fn threads(block: u64, grid: u64, cluster: Option<u64>, options: &KernelOptions) -> Result<Vec<LaunchThread>, String> {
    let warps_in_block = block.div_ceil(32);
    let ctas = pick("--ctas", options.ctas.as_deref(), grid, "CTA")?;
    let warps = pick("--warps", options.warps.as_deref(), warps_in_block, "warp")?;
    let lanes = match options.lanes.as_deref() {
        None => vec![0],
        Some(l) => pick("--lanes", Some(l), 32, "lane")?,
    };
    let mut out = Vec::new();
    for &cta in &ctas {
        for &w in &warps {
            for &l in &lanes {
                let tid = w * 32 + l;
                if tid < block {
                    out.push(LaunchThread { cta, cluster: cluster.map(|c| cta / c), tid });
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
    fn lists_take_ranges() {
        assert_eq!(parse_list("--lanes", "0,2-4").unwrap(), vec![0, 2, 3, 4]);
        assert!(parse_list("--lanes", "x").is_err());
    }
}
