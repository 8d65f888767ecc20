//! Honest verdicts: a question the search could not answer is `Inconclusive`, never Forbidden,
//! in `run`, `explain`, `--json` and `suite`; and the verdict leads the report.

use assert_cmd::Command;

fn ptxmm() -> Command {
    Command::cargo_bin("ptxmm").unwrap()
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = ptxmm().args(args).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A fixed bound below what the loop needs (`--unroll 1` for a counter that iterates back
/// twice): every run is cut, `States 0`, `Loop No`, and the verdict says so instead of
/// Forbidden, naming the loop and the flag; the bound that covers the loop decides it.
#[test]
fn a_fixed_bound_below_the_loop_is_inconclusive() {
    let (code, out, err) = run(&["run", "--unroll", "1", "tests/verdicts/loop-cut.litmus"]);
    insta::assert_snapshot!("loop_cut_run", out);
    assert_eq!(code, Some(1), "an undecided test fails the run");
    // The reason is given once, by the verdict lines; stderr only says the test is undecided.
    assert_eq!(out.matches("raise --unroll").count(), 1, "{out}");
    assert!(err.contains("inconclusive") && !err.contains("--unroll"), "{err}");
    let (_, _, err) = run(&["run", "--json", "--unroll", "1", "tests/verdicts/loop-cut.litmus"]);
    assert!(err.contains("inconclusive") && err.contains("--unroll"), "{err}");

    let (code, out, _) = run(&["run", "--unroll", "2", "tests/verdicts/loop-cut.litmus"]);
    assert_eq!(code, Some(0));
    assert!(out.starts_with("Verdict: Allowed\n"), "{out}");

    let (_, out, _) = run(&["explain", "--unroll", "1", "tests/verdicts/loop-cut.litmus"]);
    assert!(
        out.starts_with("Test loop-cut: Inconclusive: the unrolling bound (--unroll 1) cut runs of the loop at P0 lines 9-12"),
        "{out}"
    );
    assert!(!out.contains("is forbidden"), "{out}");

    let (_, out, _) = run(&["run", "--json", "--unroll", "1", "tests/verdicts/loop-cut.litmus"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["verdict"], "Inconclusive");
    assert!(v["inconclusive"].as_str().unwrap().contains("raise --unroll"), "{v}");
    assert_eq!(v["loop_cut"], true);
    assert_eq!(v["bounds_tried"], serde_json::json!([]));
}

/// By default the bound is raised (1, 2, 4, ...) until no run is cut: the counter loop is
/// decided, and the report says which bound it needed.
#[test]
fn the_bound_is_raised_until_no_run_is_cut() {
    let (code, out, _) = run(&["run", "tests/verdicts/loop-cut.litmus"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.starts_with("Verdict: Allowed\n"), "{out}");
    assert!(out.contains("\nOk\n"), "no `Loop`: every run was explored to its end\n{out}");
    assert!(out.contains("Loops: unrolling bound 2 (raised automatically: 1, 2; no run cut)\n"), "{out}");
    assert!(out.contains("  P0 lines 9-12: every complete run iterates back at most 2 time(s)\n"), "{out}");
    let (_, out, _) = run(&["run", "--json", "tests/verdicts/loop-cut.litmus"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["bounds_tried"], serde_json::json!([1, 2]));
    assert_eq!(v["loops"], serde_json::json!([{ "thread": "P0", "lines": [9, 12], "iterations": 2, "cut": false }]));
    // explain settles on the same bound.
    let (_, out, _) = run(&["explain", "tests/verdicts/loop-cut.litmus"]);
    assert!(out.starts_with("Test loop-cut: the outcome x=3 is allowed."), "{out}");
}

/// A loop that never ends (it waits for a flag no thread sets) is cut at every bound: the
/// answer stays Inconclusive, with the bounds tried and why raising stopped.
#[test]
fn a_loop_that_never_ends_is_inconclusive_at_every_bound() {
    let (code, out, _) = run(&["run", "--json", "tests/verdicts/loop-forever.litmus"]);
    assert_eq!(code, Some(1));
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["verdict"], "Inconclusive");
    assert_eq!(v["bounds_tried"], serde_json::json!([1, 2, 4, 8, 16]));
    let why = v["inconclusive"].as_str().unwrap();
    assert!(why.contains("the loop at P0 lines 8-10") && why.contains("--max-unroll 16"), "{why}");
    let (_, out, _) = run(&["run", "--json", "--max-unroll", "4", "tests/verdicts/loop-forever.litmus"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["bounds_tried"], serde_json::json!([1, 2, 4]));
    assert_eq!(v["unroll_stop"], "the largest bound, --max-unroll 4");
}

/// The cp.async double buffer written as a loop: at a fixed bound below its trip count every
/// run is cut, so nothing is decided; at the bound that covers the loop, or by default (the
/// bound raised), it is Forbidden.
#[test]
fn a_cp_async_loop_below_its_bound_is_inconclusive() {
    let point = ptxmm::families::cp_async_loop(4);
    let program = ptxmm::parse_program(ptxmm::diag::SourceFile::new("cp-async-loop.litmus".to_string(), point.source.clone())).unwrap();
    let config = ptxmm::Config::default_model();
    let fixed = |unroll: usize| ptxmm::Config { limits: config.limits.with_fixed_unroll(unroll), ..config.clone() };
    let o = ptxmm::decide::Decider::new(&fixed(1)).verdict(&program).unwrap();
    assert_eq!(o.verdict(), ptxmm::decide::verdict::Verdict::Inconclusive);
    assert!(o.loop_cut && o.states.is_empty());
    let o = ptxmm::decide::Decider::new(&fixed(point.unroll)).verdict(&program).unwrap();
    assert_eq!(o.verdict(), ptxmm::decide::verdict::Verdict::Forbidden);
    assert!(o.inconclusive().is_none());
    let o = ptxmm::decide::Decider::new(&config).verdict(&program).unwrap();
    assert_eq!(o.verdict(), ptxmm::decide::verdict::Verdict::Forbidden);
    assert_eq!(o.bounds_tried, [1, 2, 4]);
}

/// A barrier nobody fills: no execution completes, so "never reached" says nothing. The verdict
/// says so and names a stuck thread; `explain` leads with it.
#[test]
fn no_completing_execution_is_inconclusive() {
    let (code, out, _) = run(&["run", "tests/verdicts/barrier-never-fills.litmus"]);
    insta::assert_snapshot!("barrier_never_fills_run", out);
    assert_eq!(code, Some(1));

    // Without the liveness check the verdict still says why.
    let (_, out, _) = run(&["run", "--liveness", "skip", "tests/verdicts/barrier-never-fills.litmus"]);
    assert!(
        out.starts_with("Verdict: Inconclusive (no execution completes)\nInconclusive: no consistent execution runs every thread to its end (1 combination(s) of runs wait at a barrier that never completes)"),
        "{out}"
    );

    let (_, out, _) = run(&["explain", "tests/verdicts/barrier-never-fills.litmus"]);
    assert!(out.starts_with("Test barrier-never-fills: Inconclusive: no execution completes"), "{out}");
    assert!(!out.contains("is forbidden"), "{out}");
    let (_, out, _) = run(&["explain", "--json", "tests/verdicts/barrier-never-fills.litmus"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["program_verdict"], "Inconclusive");
    assert!(v["program_verdict_reason"].as_str().unwrap().contains("no execution completes"));
}

/// Undefined behaviour that every execution performs before it hangs: the program is Undefined,
/// not Inconclusive, in `run` (with or without the liveness check) and in `explain`.
#[test]
fn undefined_behaviour_before_a_hang_is_undefined() {
    for args in [&["run"][..], &["run", "--liveness", "skip"][..]] {
        let (code, out, _) = run(&[args, &["tests/verdicts/ub-before-hang.litmus"]].concat());
        assert!(out.starts_with("Verdict: Undefined\n"), "{out}");
        assert!(out.contains("[undefined-operation] M10: the tx-count 9223372036854775807"), "{out}");
        assert_eq!(code, Some(0), "{out}");
    }
    let (_, out, _) = run(&["explain", "tests/verdicts/ub-before-hang.litmus"]);
    assert!(out.starts_with("Test ub-before-hang is Undefined"), "{out}");
}

/// A model that rejects every execution, complete or hanging: the verdict says so, and does not
/// speak of a hang (the liveness check finds none).
#[test]
fn a_model_that_rejects_everything_is_not_a_hang() {
    let args = ["run", "--cat", "tests/cat/reject-every-execution.cat", "examples/MP.litmus"];
    let (code, out, _) = run(&args);
    assert!(
        out.starts_with(
            "Verdict: Inconclusive (no consistent execution)\nInconclusive: no execution is consistent with the model: it rejects every candidate execution, complete or hanging"
        ),
        "{out}"
    );
    assert!(!out.contains("no execution completes") && !out.contains("stuck") && out.contains("Liveness: ok"), "{out}");
    assert_eq!(code, Some(1));
    let (_, out, _) = run(&["explain", "--cat", "tests/cat/reject-every-execution.cat", "examples/MP.litmus"]);
    assert!(out.starts_with("Test MP: Inconclusive: no execution is consistent with the model"), "{out}");
}

/// A verdict CSV can expect Inconclusive, and a row expecting Forbidden for a vacuous test fails.
#[test]
fn suites_tell_inconclusive_from_forbidden() {
    let (code, out, _) = run(&["suite", "tests/verdicts/expected.csv"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("4 passed, 0 failed"), "{out}");

    let dir = std::env::temp_dir().join(format!("ptxmm-verdicts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("wrong.csv");
    let test = std::fs::canonicalize("tests/verdicts/loop-forever.litmus").unwrap();
    std::fs::write(&csv, format!("{},Forbidden\n", test.display())).unwrap();
    let (code, out, _) = run(&["suite", csv.to_str().unwrap()]);
    assert_ne!(code, Some(0), "{out}");
    assert!(out.contains("0 passed, 1 failed"), "{out}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The verdict leads: `run` prints it before herd7's `Test NAME Allowed` line (the test's kind),
/// and `explain` of an Undefined program says so first, with the undefined behaviour.
#[test]
fn the_headline_is_the_verdict() {
    let (_, out, _) = run(&["run", "examples/MP.litmus"]);
    assert!(out.starts_with("Verdict: Forbidden\nTest MP Allowed\n"), "{out}");
    let (_, out, _) = run(&["explain", "tests/async/U03-bar-sync-no-proxy-fence.litmus"]);
    let first = out.lines().next().unwrap();
    assert!(first.starts_with("Test U03-bar-sync-no-proxy-fence is Undefined: 1 undefined-behaviour finding(s)"), "{out}");
    assert!(out.lines().nth(1).unwrap().starts_with("- [mixed-size-race]"), "{out}");
}
