//! Liveness: ptxmm's own hang tests (one per hang reason, plus fixed versions), with the exact
//! diagnostic, and Dat3M's liveness CSVs (skipped when ../shared is absent).

mod common;

use assert_cmd::Command;
use ptxmm::config::models;
use ptxmm::decide::suite::SuiteKind;

const CASES: &[(&str, &str)] = &[
    (
        "barrier-count-too-high",
        "Liveness: may hang
  P0 stuck at line 6 `bar.cta.sync 1, 1, 3`: bar.cta.sync 1, 1, 3 expects 3 threads, 2 can arrive
  P1 stuck at line 5 `bar.cta.sync 1, 1, 3`: bar.cta.sync 1, 1, 3 expects 3 threads, 2 can arrive
",
    ),
    ("barrier-count-met", "Liveness: ok\n"),
    (
        "cluster-barrier-partner-spins",
        "Liveness: may hang
  P0 stuck at line 11 `barrier.cluster.wait.acquire`: barrier.cluster.wait.acquire waits for every thread of the cluster that has not exited (PTX ISA 9.7.13.3); 2 of 3 arrive: P2 is stuck in a loop
  P1 stuck at line 11 `barrier.cluster.wait.acquire`: barrier.cluster.wait.acquire waits for every thread of the cluster that has not exited (PTX ISA 9.7.13.3); 2 of 3 arrive: P2 is stuck in a loop
  P2 stuck at line 12 `beq r0, 0, LW`: spins forever in the loop of lines 11-12: it keeps reading flag=0 (the final value in this execution) and never exits (every other writer of it is stuck: P1)
",
    ),
    ("cluster-barrier-partner-exits", "Liveness: ok\n"),
    (
        "barrier-other-id",
        "Liveness: may hang
  P0 stuck at line 5 `bar.cta.sync 1, 1, 2`: bar.cta.sync 1, 1, 2 expects 2 threads, 1 can arrive: P1 is stuck at another barrier
  P1 stuck at line 5 `bar.cta.sync 1, 2, 2`: bar.cta.sync 1, 2, 2 expects 2 threads, 1 can arrive: P0 is stuck at another barrier
",
    ),
    (
        "barrier-different-ids",
        "Liveness: may hang
  P0 stuck at line 10 `bar.cta.sync 0`: bar.cta.sync 0 expects 2 threads, 1 can arrive: P1 is stuck at another barrier
  P1 stuck at line 10 `bar.cta.sync 1`: bar.cta.sync 1 expects 2 threads, 1 can arrive: P0 is stuck at another barrier
",
    ),
    (
        "barrier-count-leftover",
        "Liveness: may hang
  P2 stuck at line 9 `bar.cta.sync 1, 1, 2`: bar.cta.sync 1, 1, 2 completes each time 2 threads arrive; 3 arrive, so 1 waits for arrivals that never come (PTX ISA 9.7.13.1; --reading dat3m-barriers lets any 2 or more complete it)
",
    ),
    (
        "barrier-skipped",
        "Liveness: may hang
  P0 stuck at line 5 `bar.cta.sync 0`: bar.cta.sync 0 expects 2 threads, 1 can arrive: P1 finishes without reaching it
",
    ),
    (
        "spin-never-written",
        "Liveness: may hang
  P1 stuck at line 7 `beq r0, 0, LC00`: spins forever in the loop of lines 6-7: it keeps reading flag=0 (the final value in this execution) and never exits (no other thread writes what it polls)
",
    ),
    (
        "spin-writer-blocked",
        "Liveness: may hang
  P0 stuck at line 7 `beq r0, 0, LC00`: spins forever in the loop of lines 6-7: it keeps reading flag=0 (the final value in this execution) and never exits (every other writer of it is stuck: P1)
  P1 stuck at line 5 `bar.cta.sync 1, 1, 3`: bar.cta.sync 1, 1, 3 expects 3 threads, 2 can arrive: P0 is stuck in a loop
  P2 stuck at line 5 `bar.cta.sync 1, 1, 3`: bar.cta.sync 1, 1, 3 expects 3 threads, 2 can arrive: P0 is stuck in a loop
",
    ),
    (
        "spin-flag-reset",
        "Liveness: may hang
  P2 stuck at line 7 `beq r0, 0, LC00`: spins forever in the loop of lines 6-7: it keeps reading f=0 (the final value in this execution) and never exits (every other writer of it has finished: P0, P1)
",
    ),
    ("spin-published", "Liveness: ok\n"),
    (
        "ring-missing-arrive",
        "Liveness: may hang
  P0 stuck at line 36 `@!p bra LP3`: spins forever in the loop of lines 35-36: it keeps reading empty1 in state (phase 0, pending 1/2, tx 0) (the final value in this execution) and never exits (every other writer of it is stuck: P1, P2)
  P1 stuck at line 33 `@!p bra LA3`: spins forever in the loop of lines 32-33: it keeps reading full1 in state (phase 1, pending 1/1, tx 0) (the final value in this execution) and never exits (every other writer of it is stuck: P0)
  P2 stuck at line 33 `@!p bra LB3`: spins forever in the loop of lines 32-33: it keeps reading full1 in state (phase 1, pending 1/1, tx 0) (the final value in this execution) and never exits (every other writer of it is stuck: P0)
",
    ),
];

#[test]
fn own_hang_tests_have_exact_diagnostics() {
    let mut failures = Vec::new();
    for (name, expected) in CASES {
        let path = format!("tests/liveness/{name}.litmus");
        let out = Command::cargo_bin("ptxmm").unwrap().args(["run", "--liveness", "only", &path]).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let want = format!("Test {name}\n{expected}\n");
        if !out.status.success() || stdout != want {
            failures.push(format!("{name}:\n--- expected\n{want}--- got\n{stdout}{}", String::from_utf8_lossy(&out.stderr)));
        }
    }
    println!("{} passed, {} failed", CASES.len() - failures.len(), failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Barriers (issue 23, item 7): PTX's meaning by default, Dat3M's under `--reading
/// dat3m-barriers`, where the tests PTX (and an H200) hang on terminate.
#[test]
fn dat3m_barriers_is_a_reading() {
    let cases = [
        ("barrier-different-ids", "Liveness: ok\n"),
        ("barrier-count-leftover", "Liveness: ok\n"),
        (
            "barrier-other-id",
            "Liveness: may hang
  P0 stuck at line 5 `bar.cta.sync 1, 1, 2`: bar.cta.sync 1, 1, 2 expects 2 threads, 1 can arrive (1 other arrival is on another barrier id)
  P1 stuck at line 5 `bar.cta.sync 1, 2, 2`: bar.cta.sync 1, 2, 2 expects 2 threads, 1 can arrive (1 other arrival is on another barrier id)
",
        ),
    ];
    for (name, expected) in cases {
        let path = format!("tests/liveness/{name}.litmus");
        let out = Command::cargo_bin("ptxmm")
            .unwrap()
            .args(["run", "--liveness", "only", "--reading", "dat3m-barriers", &path])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), format!("Test {name}\n{expected}\n"), "{name}");
    }
}

#[test]
fn liveness_is_in_the_json() {
    let out = Command::cargo_bin("ptxmm").unwrap().args(["run", "--json", "tests/liveness/barrier-skipped.litmus"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["liveness"]["status"], "may_hang");
    assert_eq!(v["liveness"]["hang"][0]["thread"], "P0");
    assert_eq!(v["liveness"]["hang"][0]["line"], 5);
    // Executions that hang have no final state: reading 0 makes P0 wait forever, so no
    // terminating execution satisfies the condition.
    assert_eq!(v["result"], "No");
    assert_eq!(v["hanging_combinations"], 1);
    let out = Command::cargo_bin("ptxmm")
        .unwrap()
        .args(["run", "--json", "--liveness", "skip", "tests/liveness/barrier-skipped.litmus"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.get("liveness").is_none());
}

fn dat3m_liveness(csv: &str, model: ptxmm::cat::CatModel, label: &str) {
    let Some(root) = common::dat3m() else { return };
    let failures =
        common::run_csv_with(label, &root.join("expected").join(csv), &root, &model, SuiteKind::Liveness, common::DAT3M_READINGS);
    assert!(failures.is_empty(), "{label}: {} mismatches", failures.len());
}

#[test]
fn dat3m_v6_0_liveness_csv() {
    dat3m_liveness("PTXv6_0-Liveness-expected.csv", models::builtin("ptx-6.0").unwrap(), "PTXv6_0 liveness / models/ptx-6.0.cat");
}

#[test]
fn dat3m_v7_5_liveness_csv() {
    dat3m_liveness("PTXv7_5-Liveness-expected.csv", models::builtin("ptx-7.5").unwrap(), "PTXv7_5 liveness / models/ptx-7.5.cat");
}

#[test]
fn dat3m_v7_5_liveness_csv_under_the_default_model() {
    dat3m_liveness(
        "PTXv7_5-Liveness-expected.csv",
        models::builtin(models::DEFAULT_MODEL).unwrap(),
        "PTXv7_5 liveness / models/ptx.cat (default)",
    );
}

#[test]
fn dat3m_liveness_csv_under_dat3m_cat() {
    let Some(root) = common::dat3m() else { return };
    let model = models::from_file(&root.join("cat/ptx-v7.5.cat")).unwrap();
    dat3m_liveness("PTXv7_5-Liveness-expected.csv", model, "PTXv7_5 liveness / Dat3M ptx-v7.5.cat");
}

/// Pipelines (issue 24): the liveness of kernel-sized rings is decided, and a hang is still
/// found when the producer's empty barrier expects one arrival more than the consumers make.
#[test]
fn pipelines_are_live_and_an_extra_expected_arrival_hangs() {
    use ptxmm::decide::{Decider, LivenessStatus};
    let config = ptxmm::config::Config::default_model();
    let decide = |name: &str, source: &str| {
        let program = ptxmm::parse_program(ptxmm::diag::SourceFile::new(format!("{name}.litmus"), source.to_string())).unwrap();
        Decider::new(&config).liveness(&program).unwrap()
    };
    let cases = [
        (ptxmm::families::tma_ring2(4, 2, 4, true), "empty0 @ shared cta 0 mbarrier(2);", "empty0 @ shared cta 0 mbarrier(3);"),
        (ptxmm::families::cluster_ring(2, 2, 3, true), "empty0 @ shared cta 0 mbarrier(4);", "empty0 @ shared cta 0 mbarrier(5);"),
    ];
    for (p, count, one_more) in cases {
        let live = decide(&p.name, &p.source);
        assert_eq!(live.status, LivenessStatus::Ok, "{}", p.name);
        assert!(p.source.contains(count), "{}: {count}", p.name);
        let hang = decide(&p.name, &p.source.replace(count, one_more));
        assert_eq!(hang.status, LivenessStatus::MayHang, "{}", p.name);
        assert!(hang.hang.iter().any(|t| t.thread == "P0"), "{}: the producer waits on empty0: {:?}", p.name, hang.hang);
    }
}
