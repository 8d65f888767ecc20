//! The default warps of a kernel check: the warps whose code differs (issue 28). A 16-warp
//! block modelled whole is past the time limit, while a warp-specialized kernel has two or three
//! kinds of warps (a producer, consumers): the warps of a CTA are grouped by the PTX lines the
//! runs of each of their lanes modelled can reach, and one warp per group is kept, two where the group's
//! runs write memory (so that a race between two warps running the same code stays visible).
//!
//! The runs are those of the per-thread exploration the decision itself starts with
//! (`exec::trace::explore`): branches on `%tid`, `%ctaid` and constants are evaluated, branches
//! on loaded values are taken every way the value domains allow, loops up to `--max-unroll`'s
//! default bound. A warp some run of which that bound cuts is kept, in a group of its own: what
//! it reaches and writes after the cut is not known. What is left out: a third warp of a group,
//! so a finding that needs three warps of the same code (e.g. an arrival count that only three
//! arrivals overflow) is not found unless `--warps all` models them all.

use crate::program::Program;
use std::collections::{BTreeMap, BTreeSet};

/// How long the grouping may take: it is a shortcut, and the check falls back to every warp.
const GROUPING_TIME: std::time::Duration = std::time::Duration::from_secs(3);

/// The warps kept of each CTA, and how the others were grouped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grouping {
    /// The warps modelled (the same in every CTA: the union over the CTAs).
    pub kept: Vec<u64>,
    /// One line per group with a warp left out, for the report.
    pub groups: Vec<String>,
    /// The warps kept alone because a loop of theirs ran past the bound (see the module doc).
    pub cut: Vec<u64>,
    /// Some group has more than one warp (all kept: two that write memory).
    pub shared: bool,
}

/// Warps of one CTA whose lanes reach the same PTX lines: those lines, lane by lane (None: a warp
/// some run of which was cut, alone in its group), whether the runs write memory, and the warps,
/// in order.
type Group = (LaneLines, bool, Vec<u64>);

/// The lines each lane of a warp reaches, in lane order (None: some run was cut).
type LaneLines = Option<Vec<BTreeSet<usize>>>;

/// Group the warps of the program (`warps[t]` is thread `t`'s (CTA, warp); each warp with the
/// same lanes, as the launch makes them). An error where the runs cannot be computed (the caller
/// then models every warp and says why).
pub fn group(program: &Program, warps: &[(u64, u64)], limits: &crate::config::Limits) -> Result<Grouping, String> {
    let deadline = crate::clock::Instant::now() + GROUPING_TIME;
    let limits = crate::config::Limits { unroll: limits.unroll.max(crate::config::DEFAULT_MAX_UNROLL), max_unroll: None, ..*limits };
    let (_, traces) =
        crate::exec::trace::explore_until(program, &limits, false, Default::default(), Some(deadline)).map_err(|e| match e {
            // The grouping has its own time, not the user's --timeout.
            crate::exec::trace::ExploreError::Timeout { .. } => {
                format!("the runs of one thread per warp took longer than the {} s the grouping may take", GROUPING_TIME.as_secs_f64())
            }
            e => e.to_string(),
        })?;
    // Per warp: the lines of each of its lanes modelled, in lane order (None: some run was cut),
    // and whether some lane writes memory.
    let mut by_warp: BTreeMap<(u64, u64), (LaneLines, bool)> = BTreeMap::new();
    for (t, tt) in traces.iter().enumerate() {
        let code = &program.threads[t].code;
        let runs = || tt.traces.iter().chain(&tt.stuck);
        let lines: Option<BTreeSet<usize>> =
            (!tt.has_cut_runs()).then(|| runs().flat_map(|r| r.path.iter().map(|&i| code[i].line)).collect());
        let writes = runs().any(|r| r.events.iter().any(|e| e.op == crate::exec::trace::TraceOp::Write && e.mb_op.is_none()));
        let entry = by_warp.entry(warps[t]).or_insert_with(|| (Some(Vec::new()), false));
        entry.0 = match (entry.0.take(), lines) {
            (Some(mut v), Some(l)) => {
                v.push(l);
                Some(v)
            }
            _ => None,
        };
        entry.1 |= writes;
    }
    // Per CTA: the groups of warps whose lanes reach the same lines, in warp order.
    let mut by_cta: BTreeMap<u64, Vec<Group>> = BTreeMap::new();
    for ((cta, warp), (lines, writes)) in by_warp {
        let groups = by_cta.entry(cta).or_default();
        match groups.iter_mut().find(|g| g.0.is_some() && g.0 == lines) {
            Some(g) => {
                g.1 |= writes;
                g.2.push(warp)
            }
            None => groups.push((lines, writes, vec![warp])),
        }
    }
    let mut kept = BTreeSet::new();
    let mut lines = Vec::new();
    let cut: BTreeSet<u64> = by_cta.values().flatten().filter(|g| g.0.is_none()).flat_map(|g| g.2.iter().copied()).collect();
    for (cta, groups) in &by_cta {
        for (_, writes, members) in groups {
            let keep = if *writes { 2 } else { 1 };
            kept.extend(members.iter().take(keep));
            if members.len() > keep {
                let shown: Vec<String> = members.iter().take(keep).map(u64::to_string).collect();
                let left = compact(&members[keep..]);
                let why = if *writes { " (two are kept: their code writes memory, so they may race)" } else { "" };
                let cta = if by_cta.len() > 1 { format!("CTA {cta}: ") } else { String::new() };
                let of = if keep == 2 { "warps" } else { "warp" };
                lines.push(format!("{cta}warps {left} run the code of {of} {}{why}", shown.join(" and ")));
            }
        }
    }
    let shared = by_cta.values().flatten().any(|g| g.2.len() > 1);
    Ok(Grouping { kept: kept.into_iter().collect(), groups: lines, cut: cut.into_iter().collect(), shared })
}

/// `2-7,9` for sorted warps.
pub fn compact(warps: &[u64]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < warps.len() {
        let mut j = i;
        while j + 1 < warps.len() && warps[j + 1] == warps[j] + 1 {
            j += 1;
        }
        parts.push(if j == i { warps[i].to_string() } else { format!("{}-{}", warps[i], warps[j]) });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    #[test]
    fn ranges_are_compacted() {
        assert_eq!(super::compact(&[1, 2, 3, 5, 7, 8]), "1-3,5,7-8");
    }
}
