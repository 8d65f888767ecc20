//! Differential test of the mbarrier graphs' two reductions (`exec::mbgraph`, ARCHITECTURE.md):
//! the pairs of updates the model forces before any choice taken as static order, and the
//! updates nothing tells apart placed in one order. By default only graphs past
//! `Limits::plain_mbarrier_states` states use them; here every litmus test of the repository and
//! the per-lane kernels of `tests/kernels/cmd` are decided with the default and with every graph
//! reduced (`plain_mbarrier_states = 0`): the verdict, every finding and the liveness answer must
//! be the same. Cases one way cannot decide within the limits are counted as skipped.

use ptxmm::config::Config;
use ptxmm::decide::Decider;
use ptxmm::diag::SourceFile;
use std::time::Duration;

mod common;

/// The verdict, the findings and the liveness answer; None when a limit stopped either.
fn answers(program: &ptxmm::program::Program, plain_states: usize) -> Option<String> {
    let mut config = Config::default_model().with_timeout(Some(Duration::from_secs(10)));
    config.limits.plain_mbarrier_states = plain_states;
    let decider = Decider::new(&config);
    let o = decider.verdict(program).ok()?;
    if o.incomplete.is_some() {
        return None;
    }
    let live = decider.liveness(program).ok()?;
    let list = |set: &std::collections::BTreeSet<ptxmm::decide::findings::Finding>| {
        set.iter().map(|f| format!("{f:?}")).collect::<Vec<_>>().join("\n")
    };
    Some(format!(
        "verdict {:?}\nundefined:\n{}\nraces:\n{}\nflags:\n{}\nliveness {:?}",
        o.verdict(),
        list(&o.undefined),
        list(&o.races),
        list(&o.flag_findings),
        live.status
    ))
}

/// Decide `program` both ways and count it.
fn compare(tally: &mut common::Tally, name: &str, program: &ptxmm::program::Program) {
    match (answers(program, ptxmm::config::DEFAULT_PLAIN_MBARRIER_STATES), answers(program, 0)) {
        (Some(default), Some(reduced)) => tally.agree(name, ("default", &default), ("every graph reduced", &reduced)),
        _ => tally.skipped += 1,
    }
}

#[test]
fn reduced_mbarrier_graphs_give_the_answers_of_the_full_ones() {
    let mut tally = common::Tally::default();
    for (name, text) in common::repository_litmus_tests() {
        if !text.contains("mbarrier") {
            continue;
        }
        if let Ok(program) = ptxmm::parse_program(SourceFile::new(name.clone(), text)) {
            compare(&mut tally, &name, &program);
        }
    }
    // Kernels whose lanes arrive on one mbarrier, with every lane.
    for file in ["lane_arrivals.ptx", "lane_arrivals-bug.ptx"] {
        compare(&mut tally, file, &common::kernel_with_every_lane(file, None, 64));
    }
    println!(
        "mbarrier reductions: {} passed, {} failed ({} skipped: not decided within the limits)",
        tally.passed,
        tally.failed.len(),
        tally.skipped
    );
    assert!(tally.failed.is_empty(), "{}", tally.failed.join("\n\n"));
    assert!(tally.passed > 50, "too few cases compared: {}", tally.passed);
}
