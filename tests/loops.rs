//! Loops decided (issue 21): every loop of tests/loops with its verdict and liveness at the
//! default, automatically raised, unrolling bound (`tests/loops/expected.csv`), what the report
//! says each loop needed, and the Dat3M corpus with no Inconclusive verdict where no execution
//! hangs.

use ptxmm::config::Config;
use ptxmm::decide::{Decider, LivenessStatus, Verdict};
use std::path::{Path, PathBuf};

mod common;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/loops")
}

fn decide(name: &str) -> ptxmm::decide::Outcome {
    let program = ptxmm::load_program(&dir().join(name)).unwrap_or_else(|e| panic!("{name}: {}", e.render(false)));
    Decider::new(&Config::default_model()).verdict(&program).unwrap()
}

#[test]
fn loop_suite() {
    let failures = common::run_csv("loops", &dir().join("expected.csv"), &dir(), &ptxmm::config::models::builtin("ptx").unwrap());
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A loop that ends after a known number of iterations is decided exactly: the bound is raised
/// until no run is cut, and each loop reports the iterations it needed.
#[test]
fn counted_loops_are_decided_exactly() {
    let o = decide("nested-k-tiles.litmus");
    assert_eq!(o.verdict(), Verdict::Allowed);
    assert!(!o.loop_cut);
    assert_eq!(o.bounds_tried, [1, 2]);
    // Per loop instance: the inner loop iterates back twice in each of the outer iterations.
    let inner = o.loops.iter().find(|l| l.lines == (11, 14)).expect("the inner loop");
    let outer = o.loops.iter().find(|l| l.lines == (9, 17)).expect("the outer loop");
    assert_eq!((inner.iterations, inner.cut), (2, false));
    assert_eq!((outer.iterations, outer.cut), (1, false));

    let o = decide("tile-scheduler.litmus");
    assert_eq!(o.verdict(), Verdict::Forbidden);
    assert!(!o.loop_cut, "a counter's runs are bounded by its tiles");
    assert!(o.loops.iter().all(|l| l.iterations == 3 && !l.cut), "{:?}", o.loops);
}

/// A loop that ends on what it reads from a shared counter: with three workers and three tiles
/// the answer is the same at bounds 1 and 2 (runs cut, no complete execution leaves a tile
/// unwritten), but the threads' runs alone show that none is cut at bound 4, so the bound is
/// raised there and the answer is exact (before issue 24's change: Inconclusive at bound 2).
/// The liveness check goes the same way.
#[test]
fn a_loop_that_ends_on_a_counter_is_decided_past_an_unchanged_answer() {
    let program = ptxmm::load_program(&dir().join("tile-scheduler-3w-3t.litmus")).unwrap();
    let config = Config::default_model();
    let o = Decider::new(&config).verdict(&program).unwrap();
    assert_eq!(o.verdict(), Verdict::Forbidden);
    assert!(!o.loop_cut);
    assert_eq!(o.bounds_tried, [1, 2, 4]);
    assert_eq!(o.unroll_stop, None);
    assert!(o.loops.iter().all(|l| l.iterations == 3 && !l.cut), "{:?}", o.loops);
    let live = Decider::new(&config).liveness(&program).unwrap();
    assert_eq!(live.status, LivenessStatus::Ok);
    assert!(!live.loop_cut, "every run of the liveness check ends at bound 4 too");
    assert_eq!(live.bounds_tried, [1, 2, 4]);
}

/// Issue 24's target: the tile scheduler with 4 workers and 4 tiles written as a loop, decided
/// with default options (Forbidden at bound 4, where no run is cut).
#[test]
fn the_four_worker_tile_scheduler_is_decided_with_default_options() {
    let point = ptxmm::families::tile_scheduler(4, 4);
    let program = ptxmm::parse_program(ptxmm::diag::SourceFile::new("tile-sched.litmus", &point.source)).unwrap();
    let o = Decider::new(&Config::default_model()).verdict(&program).unwrap();
    assert_eq!(o.verdict(), Verdict::Forbidden);
    assert_eq!(o.bounds_tried, [1, 2, 4]);
}

/// The smallest lost run of the issue: one thread reads its own write on the second iteration.
/// The run that keeps reading the initial value after writing another cannot happen (nothing
/// else writes it), so it is no cut: the answer is exact at bound 1.
#[test]
fn reading_back_ones_own_write_ends_the_loop() {
    let o = decide("read-own-write.litmus");
    assert_eq!(o.verdict(), Verdict::Allowed);
    assert!(!o.loop_cut);
    assert_eq!(o.states.len(), 1);
}

/// Retry loops: a failed attempt (the CAS of a held lock writes back what it read) is dropped,
/// so the lock is decided without a bound and no loop is reported.
#[test]
fn failed_attempts_of_a_retry_loop_need_no_bound() {
    let o = decide("cas-lock.litmus");
    assert_eq!(o.verdict(), Verdict::Forbidden);
    assert!(!o.loop_cut && o.loops.is_empty(), "{:?}", o.loops);
}

/// Loops that can run forever stay cut; the answer says which bound it covers.
#[test]
fn endless_loops_say_what_the_answer_covers() {
    let o = decide("exch-livelock.litmus");
    assert_eq!(o.verdict(), Verdict::Allowed);
    assert!(o.loop_cut);
    assert_eq!(o.unroll_stop.as_deref(), Some("the answer did not change between the last two bounds"));
    let o = decide("tile-scheduler-two-gpus.litmus");
    assert_eq!(o.verdict(), Verdict::Inconclusive);
    let why = o.inconclusive().unwrap();
    assert!(why.contains("P0 lines 10-15") && why.contains("(1, 2;"), "{why}");
}

/// Every Dat3M file decides at the default options: no Inconclusive verdict where the liveness
/// check finds no hang (the CADP loops, the CAS retry loop of MICRO24-Fig4b), and where no
/// execution completes the liveness check does find a hang.
#[test]
fn dat3m_files_decide_unless_they_hang() {
    let Some(root) = common::dat3m() else { return };
    let config = Config::default_model();
    let (files, errors) = ptxmm::litmus_files(&root.join("litmus"));
    assert!(errors.is_empty(), "{errors:?}");
    let mut undecided = Vec::new();
    let mut counts = std::collections::BTreeMap::new();
    for f in &files {
        let program = ptxmm::load_program(f).unwrap();
        let decider = Decider::new(&config);
        let o = decider.verdict(&program).unwrap();
        let live = decider.liveness(&program).unwrap();
        *counts.entry(o.verdict().name()).or_insert(0) += 1;
        if o.verdict() == Verdict::Inconclusive && live.status == LivenessStatus::Ok {
            undecided.push(format!("{}: {}", f.display(), o.inconclusive().unwrap()));
        }
        if o.verdict() == Verdict::Unknown {
            undecided.push(format!("{}: {}", f.display(), o.incomplete.clone().unwrap()));
        }
    }
    println!("Dat3M at the default options: {} files, {counts:?}", files.len());
    assert_eq!(files.len(), 597);
    assert!(undecided.is_empty(), "undecided without a hang:\n{}", undecided.join("\n"));
}
