//! Snapshots of what a kernel engineer reads for the patterns of issue 10: the hint names the
//! real fix (a forgotten expect-tx, a `.read` wait before a release, another thread's
//! `cp.async`), a user cat flag is not a data race, one finding per rule and instruction pair
//! with threads named, and the verdict leads. (Inconclusive verdicts: `tests/verdicts.rs`; JSON:
//! `tests/json.rs`.) Review changes with `cargo insta review`.

use assert_cmd::Command;

fn run(args: &[&str]) -> String {
    let out = Command::cargo_bin("ptxmm").unwrap().args(args).output().unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn forgotten_expect_tx() {
    let out = run(&["run", "--liveness", "skip", "tests/hints/expect-tx.litmus"]);
    assert!(!out.contains("fence.proxy"), "{out}");
    insta::assert_snapshot!("forgotten_expect_tx", out);
}

#[test]
fn read_wait_before_a_release() {
    let out = run(&["run", "--liveness", "skip", "tests/hints/wait-read-release.litmus"]);
    assert!(!out.contains("fence.proxy"), "{out}");
    insta::assert_snapshot!("read_wait_before_release", out);
}

#[test]
fn another_threads_cp_async() {
    let out = run(&["run", "--liveness", "skip", "tests/hints/cp-async-other-thread.litmus"]);
    insta::assert_snapshot!("cp_async_other_thread", out);
}

#[test]
fn a_user_flag_is_not_a_race() {
    let out = run(&["run", "--liveness", "skip", "--cat", "tests/cat/flag-ext-rf.cat", "examples/MP.litmus"]);
    assert!(out.contains("Flag has-ext-rf\n") && out.contains("Flagged by the model"), "{out}");
    let races = out.split("Data races").nth(1).and_then(|r| r.split("Flagged by the model").next()).unwrap_or("");
    assert!(!races.contains("[has-ext-rf]"), "a user flag is listed as a race:\n{out}");
    insta::assert_snapshot!("user_flag", out);
}

#[test]
fn one_finding_per_rule_and_pair() {
    let out = run(&["run", "--liveness", "skip", "tests/async/S1b-no-wait.litmus"]);
    assert_eq!(out.matches("[U1-read-before-completion]").count(), 1, "{out}");
    assert!(!out.contains("Data races"), "the U1 pair is not listed again as a race:\n{out}");
    insta::assert_snapshot!("one_finding_per_pair", out);
}
