//! The benchmark families (src/families.rs) and `ptxmm bench`: every point of the grid parses
//! and lowers, the quick points decide as expected, and the bench prints one JSON object per
//! point. No timing assertions: timings go to docs/performance.md.

use assert_cmd::Command;
use ptxmm::config::Config;
use ptxmm::decide::{Decider, LivenessStatus};
use ptxmm::diag::SourceFile;
use ptxmm::families::{self, FamilyPoint};

fn lower(p: &FamilyPoint) -> ptxmm::program::Program {
    ptxmm::parse_program(SourceFile::new(format!("{}.litmus", p.name), p.source.clone()))
        .unwrap_or_else(|e| panic!("{} ({} {}) does not lower:\n{}\n{}", p.name, p.family, p.params, e.render(false), p.source))
}

#[test]
fn every_point_parses_and_lowers() {
    let points = families::all_points();
    assert_eq!(points.len(), 36 + 8 + 2 * 8 + 2 * 8 + 15 + 6 + families::LOOP_SHAPES.len() * 5 + 4 + 6 + 5 + 10 + 8);
    for p in points.iter().chain([
        &families::ring(2, 2, 2, false),
        &families::tma_ring2(2, 2, 2, false),
        &families::cluster_ring(2, 2, 2, false),
    ]) {
        let program = lower(p);
        assert_eq!(program.name, p.name);
    }
    // Grouped by family, in FAMILIES order.
    let mut order: Vec<&str> = points.iter().map(|p| p.family).collect();
    order.dedup();
    assert_eq!(order, families::FAMILIES);
}

#[test]
fn quick_points_are_in_the_grid() {
    let all = families::all_points();
    for q in families::quick_points() {
        assert!(all.contains(&q), "{} is not in all_points()", q.name);
    }
}

/// Every quick point decides with its expected verdict and liveness (all of them take well
/// under a second each today), plus the ring without the proxy fence.
#[test]
fn quick_points_decide_as_expected() {
    let config = Config::default_model();
    for p in families::quick_points().iter().chain([&families::ring(1, 1, 2, false)]) {
        let program = lower(p);
        let config = families::point_config(p, &config);
        let outcome = Decider::new(&config).verdict(&program).unwrap();
        assert_eq!(outcome.incomplete, None, "{}", p.name);
        assert_eq!(outcome.verdict().name(), p.expected.0, "{}", p.name);
        let live = Decider::new(&config).liveness(&program).unwrap();
        assert_eq!(live.status, LivenessStatus::Ok, "{}", p.name);
        assert_eq!(p.expected.1, "ok");
    }
}

/// The pipelines of issue 24 at small sizes: two copies per stage on one full barrier, and the
/// 2-CTA cluster with multicast and remote arrives. Fenced: Forbidden with one consistent
/// execution (every wait reads the one state its causal chain allows); without the proxy fence
/// a refill races with the previous lap's reads: Undefined. Liveness ok either way.
#[test]
fn pipeline_families_decide_as_expected() {
    let config = Config::default_model();
    for p in [
        families::tma_ring2(2, 2, 2, true),
        families::tma_ring2(2, 1, 2, false),
        families::cluster_ring(2, 1, 2, true),
        families::cluster_ring(2, 1, 2, false),
        families::cluster_ring(2, 2, 1, true),
    ] {
        let program = lower(&p);
        let config = families::point_config(&p, &config);
        let outcome = Decider::new(&config).verdict(&program).unwrap();
        assert_eq!(outcome.incomplete, None, "{}", p.name);
        assert_eq!(outcome.verdict().name(), p.expected.0, "{}", p.name);
        if p.expected.0 == "Forbidden" {
            assert_eq!(outcome.stats.consistent, 1, "{}", p.name);
        }
        let live = Decider::new(&config).liveness(&program).unwrap();
        assert_eq!(live.status, LivenessStatus::Ok, "{}", p.name);
    }
}

/// The counts the definitions promise: ISA2-n has 2^n - 1 consistent executions, SB-n 2^n
/// (2^n - 1 with fence.sc), n independent accesses one.
#[test]
fn small_points_have_the_expected_executions() {
    let config = Config::default_model();
    let consistent = |p: &FamilyPoint| Decider::new(&families::point_config(p, &config)).verdict(&lower(p)).unwrap().stats.consistent;
    for n in 2..=5 {
        assert_eq!(consistent(&families::isa2(n)), (1 << n) - 1, "ISA2-{n}");
        assert_eq!(consistent(&families::sb(n, false)), 1 << n, "SB-{n}");
        assert_eq!(consistent(&families::sb(n, true)), (1 << n) - 1, "SB-{n}-fsc");
    }
    assert_eq!(consistent(&families::independent(20)), 1);
}

#[test]
fn bench_quick_json_prints_one_object_per_point() {
    let out = Command::cargo_bin("ptxmm").unwrap().args(["bench", "--quick", "--no-explain", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let quick = families::quick_points();
    let rows: Vec<serde_json::Value> =
        stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect();
    assert_eq!(rows.len(), quick.len(), "{stdout}");
    for (row, p) in rows.iter().zip(&quick) {
        for field in [
            "name",
            "family",
            "params",
            "verdict",
            "expected_verdict",
            "liveness",
            "expected_liveness",
            "matches_expected",
            "run_s",
            "explain_s",
            "peak_mb",
            "evaluations",
            "partial",
            "dead_ends",
            "candidates",
            "consistent",
            "candidates_per_consistent",
            "dead_ends_per_consistent",
            "evaluations_per_consistent",
            "error",
        ] {
            assert!(row.get(field).is_some(), "{} lacks `{field}`: {row}", p.name);
        }
        assert_eq!(row["name"], p.name.as_str());
        assert_eq!(row["family"], p.family);
        assert_eq!(row["params"], p.params.as_str());
        assert_eq!(row["verdict"], p.expected.0, "{row}");
        assert_eq!(row["expected_verdict"], p.expected.0);
        assert_eq!(row["liveness"], "ok", "{row}");
        assert_eq!(row["matches_expected"], true, "{row}");
        assert!(row["explain_s"].is_null(), "--no-explain: {row}");
        assert!(row["run_s"].as_f64().is_some_and(|s| s >= 0.0), "{row}");
        assert!(row["consistent"].as_u64().is_some_and(|c| c >= 1), "{row}");
        assert!(row["dead_ends"].as_u64() <= row["partial"].as_u64(), "{row}");
        assert!(row["error"].is_null(), "{row}");
    }
}

#[test]
fn bench_prints_a_markdown_table_with_its_context() {
    let out = Command::cargo_bin("ptxmm").unwrap().args(["bench", "--quick", "--no-explain", "--family", "SB"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.starts_with("Machine: "), "{stdout}");
    assert!(stdout.contains("\nCommand: "), "{stdout}");
    assert!(stdout.contains("| family "), "{stdout}");
    let rows: Vec<&str> = stdout.lines().filter(|l| l.starts_with("| SB ")).collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    assert!(rows[1].contains("N=4 fence.sc") && rows[1].contains("Forbidden ✓"), "{stdout}");
}

#[test]
fn bench_point_rejects_bad_parameters() {
    let out = Command::cargo_bin("ptxmm").unwrap().args(["bench-point", "SB", "N=1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::cargo_bin("ptxmm").unwrap().args(["bench", "--family", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
