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

/// Every run cut by the unrolling bound: `States 0`, `Loop No`, and the verdict says so instead
/// of Forbidden; raising the bound decides it.
#[test]
fn a_loop_cut_by_the_bound_is_inconclusive() {
    let (code, out, err) = run(&["run", "tests/verdicts/loop-cut.litmus"]);
    insta::assert_snapshot!("loop_cut_run", out);
    assert_eq!(code, Some(1), "an undecided test fails the run");
    assert!(err.contains("inconclusive") && err.contains("--unroll"), "{err}");

    let (code, out, _) = run(&["run", "--unroll", "3", "tests/verdicts/loop-cut.litmus"]);
    assert_eq!(code, Some(0));
    assert!(out.starts_with("Verdict: Allowed\n"), "{out}");

    let (_, out, _) = run(&["explain", "tests/verdicts/loop-cut.litmus"]);
    assert!(out.starts_with("Test loop-cut: Inconclusive: the unrolling bound (--unroll 1) cut some runs"), "{out}");
    assert!(!out.contains("is forbidden"), "{out}");

    let (_, out, _) = run(&["run", "--json", "tests/verdicts/loop-cut.litmus"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["verdict"], "Inconclusive");
    assert!(v["inconclusive"].as_str().unwrap().contains("raise --unroll"), "{v}");
    assert_eq!(v["loop_cut"], true);
}

/// The cp.async double buffer written as a loop, at the default bound: every run is cut, so
/// nothing is decided; at the bound that covers the loop it is Forbidden.
#[test]
fn a_cp_async_loop_below_its_bound_is_inconclusive() {
    let point = ptxmm::families::cp_async_loop(4);
    let program = ptxmm::parse_program(ptxmm::diag::SourceFile::new("cp-async-loop.litmus".to_string(), point.source.clone())).unwrap();
    let mut config = ptxmm::Config::default_model();
    let o = ptxmm::decide::Decider::new(&config).verdict(&program).unwrap();
    assert_eq!(o.verdict(), ptxmm::decide::verdict::Verdict::Inconclusive);
    assert!(o.loop_cut && o.states.is_empty());
    config.limits.unroll = point.unroll;
    let o = ptxmm::decide::Decider::new(&config).verdict(&program).unwrap();
    assert_eq!(o.verdict(), ptxmm::decide::verdict::Verdict::Forbidden);
    assert!(o.inconclusive().is_none());
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
    assert!(out.starts_with("Verdict: Inconclusive (no execution completes)\nInconclusive: no execution completes"), "{out}");

    let (_, out, _) = run(&["explain", "tests/verdicts/barrier-never-fills.litmus"]);
    assert!(out.starts_with("Test barrier-never-fills: Inconclusive: no execution completes"), "{out}");
    assert!(!out.contains("is forbidden"), "{out}");
    let (_, out, _) = run(&["explain", "--json", "tests/verdicts/barrier-never-fills.litmus"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["program_verdict"], "Inconclusive");
    assert!(v["program_verdict_reason"].as_str().unwrap().contains("no execution completes"));
}

/// A verdict CSV can expect Inconclusive, and a row expecting Forbidden for a vacuous test fails.
#[test]
fn suites_tell_inconclusive_from_forbidden() {
    let (code, out, _) = run(&["suite", "tests/verdicts/expected.csv"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("2 passed, 0 failed"), "{out}");

    let dir = std::env::temp_dir().join(format!("ptxmm-verdicts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("wrong.csv");
    let test = std::fs::canonicalize("tests/verdicts/loop-cut.litmus").unwrap();
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
