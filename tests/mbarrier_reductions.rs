//! Differential test of the mbarrier graphs' two reductions (`exec::mbgraph`, ARCHITECTURE.md):
//! the pairs of updates the model forces before any choice taken as static order, and the
//! updates nothing tells apart placed in one order. By default only graphs past
//! `Limits::plain_mbarrier_states` states use them; here every litmus test of the repository and
//! the per-lane kernels of `tests/kernels/cmd` are decided with the default and with every graph
//! reduced (`plain_mbarrier_states = 0`): the verdict, every finding and the liveness answer must
//! be the same. Cases one way cannot decide within the limits are counted as skipped.

use ptxmm::diag::SourceFile;

mod common;

/// Decide `program` both ways and count it.
fn compare(tally: &mut common::Tally, name: &str, program: &ptxmm::program::Program) {
    let with = |states: usize| common::answers(program, |l| l.plain_mbarrier_states = states);
    match (with(ptxmm::config::DEFAULT_PLAIN_MBARRIER_STATES), with(0)) {
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
