//! `ptxmm gen`: litmus tests from cycles of relaxations (docs/for-researchers.md).

use crate::cli::options::{LimitArgs, ModelArgs};
use crate::cli::ExitCode;
use std::path::PathBuf;

/// `ptxmm gen`'s arguments.
pub(crate) struct GenRequest {
    pub(crate) cycle: Vec<String>,
    pub(crate) family: bool,
    pub(crate) size: usize,
    pub(crate) nprocs: usize,
    pub(crate) edges: Option<String>,
    pub(crate) async_family: bool,
    pub(crate) rmw: bool,
    pub(crate) max_tests: usize,
    pub(crate) scope: String,
    pub(crate) out: Option<PathBuf>,
    pub(crate) no_decide: bool,
}

pub(crate) fn cmd_gen(req: &GenRequest, model: &ModelArgs, limits: &LimitArgs) -> ExitCode {
    use crate::gen::{edges, emit::EmitOptions};
    let fail = |msg: String| {
        eprintln!("error: {msg}");
        ExitCode::from(2)
    };
    let opts = EmitOptions { scope: edges::Scope::parse(&req.scope).unwrap_or(edges::Scope::Gpu) };
    if !req.family {
        if req.cycle.is_empty() {
            return fail(format!(
                "gen: give the edges of a cycle (e.g. `ptxmm gen PodWW Rfe PodRR Fre`) or --family; {}",
                edges::vocabulary_help()
            ));
        }
        let cycle = match edges::parse_edges(&req.cycle.join(" ")) {
            Ok(c) => c,
            Err(e) => return fail(e),
        };
        let test = match crate::gen::generate(&cycle, req.nprocs, &opts) {
            Ok(t) => t,
            Err(why) => return fail(format!("the cycle `{}` gives no test: {why}", req.cycle.join(" "))),
        };
        return match &req.out {
            None => {
                out!("{}", test.text);
                ExitCode::SUCCESS
            }
            Some(dir) => match crate::gen::write_family(dir, std::slice::from_ref(&test), None) {
                Ok(_) => {
                    eprintln!("wrote {}", dir.join(format!("{}.litmus", test.name)).display());
                    ExitCode::SUCCESS
                }
                Err(e) => fail(format!("{}: {e}", dir.display())),
            },
        };
    }
    let Some(dir) = &req.out else { return fail("gen --family: the output folder is required (-o DIR)".to_string()) };
    let list = match (&req.edges, req.async_family, req.rmw) {
        (Some(l), _, _) => l.as_str(),
        (None, true, _) => edges::ASYNC_EDGES,
        (None, false, true) => edges::RMW_EDGES,
        (None, false, false) => edges::GENERIC_EDGES,
    };
    let vocab = match edges::parse_edges(list) {
        Ok(v) => v,
        Err(e) => return fail(format!("--edges: {e}")),
    };
    let timeout = crate::Limits::timeout_from_secs(limits.timeout);
    let bounds = crate::gen::FamilyBounds {
        size: req.size,
        nprocs: req.nprocs,
        max_tests: req.max_tests,
        deadline: timeout.and_then(|t| crate::clock::Instant::now().checked_add(t)),
        timeout_seconds: limits.timeout,
        max_bytes: limits.max_memory.saturating_mul(1 << 20),
    };
    let family = match crate::gen::family(&vocab, &bounds, &opts) {
        Ok(f) => f,
        Err(e) => return fail(e),
    };
    let config = if req.no_decide {
        None
    } else {
        match model.config(limits) {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        }
    };
    match crate::gen::write_family(dir, &family.tests, config.as_ref()) {
        Ok(counts) => {
            let verdicts: Vec<String> = counts.iter().map(|(v, n)| format!("{n} {v}")).collect();
            eprintln!(
                "gen family: {} tests in {}{}",
                family.tests.len(),
                dir.display(),
                if verdicts.is_empty() { String::new() } else { format!(" ({}; index.csv)", verdicts.join(", ")) }
            );
            for (why, n) in &family.rejected {
                eprintln!("  {n} cycles skipped: {why}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(format!("{}: {e}", dir.display())),
    }
}
