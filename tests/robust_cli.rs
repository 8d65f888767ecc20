//! Regression tests for issue 25's command-line classes (5–8 outside the cat front end and
//! `ptxmm serve`, whose tests live in `tests/serve.rs` and `src/serve.rs`): exit codes and JSON
//! records of a bad model, `suite` jobs, empty CSVs and rows outside the root, FIFOs as
//! inputs, directory walks through link loops, forged harness outputs, `compare` of a log with
//! many states, and tensor-map arithmetic. Every input is generated here; each test ends in a
//! few seconds in a debug build.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn ptxmm() -> Command {
    Command::cargo_bin("ptxmm").unwrap()
}

/// A scratch folder unique to this test and process.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ptxmm-robust-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = ptxmm().args(args).timeout(std::time::Duration::from_secs(60)).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

const MP: &str = "tests/litmus/MP-acq-rel-fences.litmus";

// ---- class 8: exit codes and JSON as documented ----------------------------------------------

/// A cat syntax error exits 2 (README: a bad model) and, with --json, has one error record
/// pointing into the cat file.
#[test]
fn a_cat_syntax_error_exits_2_with_a_json_record() {
    let dir = scratch("catsyntax");
    let cat = dir.join("bad.cat");
    std::fs::write(&cat, "let x = po |\n").unwrap();
    for cmd in ["run", "explain"] {
        let (code, out, err) = run(&[cmd, "--json", "--cat", s(&cat), MP, MP]);
        assert_eq!(code, Some(2), "{cmd}: {err}");
        let records: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(records.len(), 1, "{cmd}: {out}");
        let e = &records[0];
        assert_eq!(e["file"], s(&cat), "{e}");
        assert!(e["test"].is_null(), "{e}");
        assert_eq!((e["error"]["line"].as_u64(), e["error"]["column"].as_u64()), (Some(2), Some(1)), "{e}");
        assert!(e["error"]["message"].as_str().unwrap().contains("expected an expression"), "{e}");
        assert_eq!(e.get("model").is_some(), cmd == "run", "{e}");
    }
}

/// A model that parses but cannot be applied (an unknown relation) is a bad model too: exit 2,
/// and every test still gets its record.
#[test]
fn an_error_applying_the_model_exits_2_and_every_test_has_a_record() {
    let dir = scratch("catapply");
    let cat = dir.join("unknown.cat");
    std::fs::write(&cat, "let x = no_such_relation\nacyclic x as a\n").unwrap();
    let (code, out, err) = run(&["run", "--json", "--cat", s(&cat), MP, "tests/litmus/CoRR.litmus"]);
    assert_eq!(code, Some(2), "{err}");
    let records: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records.len(), 2, "{out}");
    assert!(records.iter().all(|r| r["error"]["message"].as_str().unwrap().contains("no_such_relation")), "{out}");
    let (code, _, err) = run(&["explain", "--cat", s(&cat), MP]);
    assert_eq!(code, Some(2), "{err}");
}

/// A failure in one input (missing, malformed, a FIFO) does not cost the inputs after it their
/// records, and the exit status is 1.
#[test]
fn every_input_after_a_failure_gets_its_record() {
    let dir = scratch("records");
    let bad = dir.join("bad.litmus");
    std::fs::write(&bad, "PTX bad\n{ x = 0; }\nP0 ;\n st.relaxed.gpu x 1 ;\nexists (x == 1)\n").unwrap();
    let missing = dir.join("missing.litmus");
    let (code, out, _) = run(&["run", "--json", MP, s(&missing), s(&bad), MP]);
    assert_eq!(code, Some(1));
    let records: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records.len(), 4, "{out}");
    assert!(records[0]["verdict"].is_string() && records[3]["verdict"].is_string(), "{out}");
    assert!(records[1]["error"].is_object() && records[2]["error"].is_object(), "{out}");
}

// ---- class 7: suite, FIFOs, compare, harness outputs, tensor maps -----------------------------

/// `--jobs 3000` is capped with a message (it used to panic when the threads could not be
/// spawned); an empty CSV is an error, not "0 passed".
#[test]
fn suite_jobs_are_capped_and_an_empty_suite_fails() {
    let dir = scratch("suite");
    let csv = dir.join("one.csv");
    std::fs::write(&csv, "// one row\nMP.litmus,0\n").unwrap();
    std::fs::copy(MP, dir.join("MP.litmus")).unwrap();
    let (code, out, err) = run(&["suite", "--jobs", "3000", s(&csv)]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(err.contains("--jobs 3000 is more than 256 worker threads; using 256"), "{err}");
    assert!(out.contains("1 passed, 0 failed"), "{out}");
    let empty = dir.join("empty.csv");
    std::fs::write(&empty, "// nothing here\n\n").unwrap();
    let (code, out, err) = run(&["suite", s(&empty)]);
    assert_eq!(code, Some(2), "{out}");
    assert!(err.contains("no test rows"), "{err}");
}

/// Rows that leave `--root` (an absolute path, `..`, a link out of it) are errors unless
/// `--allow-outside-root` is given.
#[test]
#[cfg(unix)]
fn suite_rows_stay_below_the_root() {
    let dir = scratch("suiteroot");
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::copy(MP, dir.join("outside.litmus")).unwrap();
    std::os::unix::fs::symlink(dir.join("outside.litmus"), root.join("link.litmus")).unwrap();
    let abs = std::fs::canonicalize(dir.join("outside.litmus")).unwrap();
    let csv = root.join("rows.csv");
    std::fs::write(&csv, format!("../outside.litmus,0\n{},0\nlink.litmus,0\n", abs.display())).unwrap();
    let (code, out, _) = run(&["suite", s(&csv)]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(out.matches("outside the suite's root").count(), 3, "{out}");
    assert!(out.contains("--allow-outside-root"), "{out}");
    let (code, out, _) = run(&["suite", "--allow-outside-root", s(&csv)]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("3 passed, 0 failed"), "{out}");
}

/// A FIFO named as a test, a suite CSV or a log is refused at once (reading it would block).
#[test]
#[cfg(unix)]
fn a_fifo_is_refused_not_read() {
    let dir = scratch("fifo");
    let fifo = dir.join("t.litmus");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        println!("SKIPPED: mkfifo is not available");
        return;
    }
    for args in [
        vec!["run", s(&fifo)],
        vec!["explain", s(&fifo)],
        vec!["suite", s(&fifo)],
        vec!["compare", "--left-log", s(&fifo), "--right-log", s(&fifo)],
    ] {
        let (code, _, err) = run(&args);
        assert!(matches!(code, Some(1 | 2)), "{args:?}: {err}");
        assert!(err.contains("not a regular file"), "{args:?}: {err}");
    }
}

/// Directory walks: two self-links and a link to `/` neither loop nor leave the folder; a
/// link inside it to a sibling folder is followed once.
#[test]
#[cfg(unix)]
fn directory_walks_stop_at_loops_and_stay_inside() {
    let dir = scratch("walk");
    std::fs::create_dir_all(dir.join("a/b")).unwrap();
    std::fs::copy(MP, dir.join("a/b/MP.litmus")).unwrap();
    std::os::unix::fs::symlink(".", dir.join("a/self")).unwrap();
    std::os::unix::fs::symlink("..", dir.join("a/b/up")).unwrap();
    std::os::unix::fs::symlink("/", dir.join("a/root")).unwrap();
    std::os::unix::fs::symlink("b", dir.join("a/again")).unwrap();
    let start = std::time::Instant::now();
    let (found, errors) = ptxmm::litmus_files(&dir.join("a"));
    assert!(start.elapsed().as_secs() < 5);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(found.len(), 1, "{found:?}");
    let (code, out, _) = run(&["run", s(&dir.join("a"))]);
    assert_eq!(code, Some(0));
    assert_eq!(out.matches("\nTest ").count() + usize::from(out.starts_with("Test ")), 1, "{out}");
}

/// `compare` of two logs of 200 000 states each, all different: was quadratic (over 30 s).
#[test]
fn compare_is_not_quadratic_in_the_states() {
    let dir = scratch("compare");
    let log = |name: &str, offset: usize| {
        let mut text = String::from("Test BIG Allowed\nStates 200000\n");
        for k in 0..200_000 {
            text.push_str(&format!("0:r0={}; 1:r1={k};\n", k + offset));
        }
        text.push_str("Ok\nWitnesses\nPositive: 1 Negative: 2\nCondition exists (0:r0=1)\nObservation BIG Sometimes 1 2\n\n");
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let (left, right) = (log("left.log", 0), log("right.log", 1));
    let start = std::time::Instant::now();
    let (code, out, err) = run(&["compare", "--left-log", s(&left), "--right-log", s(&right)]);
    let took = start.elapsed();
    assert_eq!(code, Some(1), "{err}");
    assert!(out.contains("1 test(s) compared: 1 differ"), "{err}");
    assert!(out.contains("0:r0=0; 1:r1=0;   <- only left"));
    assert!(took.as_secs() < 10, "{took:?}");
}

/// A tensor map whose dimensions overflow a 64-bit byte offset is refused at the number (it
/// used to wrap into rows of negative bytes, or panic in a debug build).
#[test]
fn tensor_map_extents_that_overflow_are_errors() {
    let dir = scratch("tensor");
    for (dims, strides) in
        [("{4611686018427387904, 2}", ""), ("{4, 4611686018427387904}", "strides = {16};"), ("{4, 3}", "strides = {4611686018427387904};")]
    {
        let f = dir.join("tm.litmus");
        std::fs::write(
            &f,
            format!("PTX TM\n{{\ng[64];\ntmap @ tensormap {{ base = g; dims = {dims}; {strides} box = {{4, 2}}; }}\n}}\n P0 ;\n mov.u32 r0, 1 ;\nexists (0:r0=1)\n"),
        )
        .unwrap();
        let (code, _, err) = run(&["run", s(&f)]);
        assert_eq!(code, Some(1), "{dims} {strides}: {err}");
        assert!(err.contains("tm.litmus:4:") && (err.contains("does not fit a 64-bit byte offset") || err.contains("the stride")), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// The recorded-output header and MP's block, with the counts, hang bits and names given.
fn forged(states: &str, done: &str) -> String {
    format!("ptxmm-hw 1\ndevice forged|sm_90\ntest MP\nthreads 2\nobservables 1:r0 1:r1\n{states}done MP {done} time_ms 1\n")
}

/// Forged harness outputs: counts that wrap or do not sum to instances × iterations, hang
/// bits of threads the test lacks, other observables, escape sequences, and a block repeated
/// 100 times are each refused with a message; a consistent output is judged.
#[test]
fn forged_harness_outputs_are_validated() {
    use ptxmm::hw::report::{judge, parse_output};
    let ok = forged("state 6 0 0 0\nstate 4 0 1 1\n", "instances 2 iterations 5");
    assert!(parse_output(&ok).is_ok());
    let wrap = forged("state 18446744073709551615 0 0 0\nstate 1 0 1 1\n", "instances 1 iterations 0");
    assert!(parse_output(&wrap).unwrap_err().contains("overflow 64 bits"));
    let short = forged("state 6 0 0 0\n", "instances 2 iterations 5");
    assert!(parse_output(&short).unwrap_err().contains("sum to 6, not instances × iterations = 10"));
    let escape = forged("state 10 0 0 0\n", "instances 2 iterations 5").replace("device forged", "device \x1b]0;pwned\x07");
    let e = parse_output(&escape).unwrap_err();
    assert!(e.contains("control character") && !e.contains('\x1b'), "{e:?}");

    let dir = scratch("forged");
    let test = Path::new("examples/MP.litmus");
    let loaded = ptxmm::hw::load(test, &ptxmm::InputLimits::default()).unwrap();
    let outcome = ptxmm::decide::Decider::new(&ptxmm::Config::default_model()).verdict(&loaded.program).unwrap();
    let judged = |text: &str| judge(&loaded.program, &outcome, &parse_output(text).unwrap().tests[0]);
    assert!(judged(&ok).is_ok());
    let hang = judged(&forged("state 10 8 0 0\n", "instances 2 iterations 5")).unwrap_err();
    assert!(hang.contains("hang bits 0x8 name threads the test does not have (it has 2)"), "{hang}");
    let names = judged(&ok.replace("observables 1:r0 1:r1", "observables 1:r0 x")).unwrap_err();
    assert!(names.contains("the harness reports observables 1:r0 x, the test has 1:r0 1:r1"), "{names}");

    // One block 100 times: judged once, the repeats refused.
    let block = forged("state 10 0 0 0\n", "instances 2 iterations 5");
    let rest = block.split_once("test MP").unwrap().1;
    let text = format!("{block}{}", format!("test MP{rest}").repeat(99));
    let out = dir.join("forged.out");
    std::fs::write(&out, text).unwrap();
    let (code, stdout, err) = run(&["hw", "run", s(test), "--harness-output", s(&out)]);
    assert_eq!(code, Some(2), "{stdout}{err}");
    assert_eq!(err.matches("more often than the 1 test(s) of that name").count(), 1, "{err}");
    assert_eq!(stdout.matches("Test MP ").count(), 1, "{stdout}");
}
