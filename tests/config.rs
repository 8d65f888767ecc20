//! One configuration for every command that decides: `run`, `explain`, `suite`, `compare`,
//! `gen`, `hw gen|run|suite` (and the web crate, in web/src/lib.rs) take the model, the
//! `--reading` flags and the limit flags the same way, so none can honour a flag another
//! ignores. Each case shows the flag changing what the command answers, and a flag that cannot
//! take effect being refused.
//!
//! The reading used is AMBIG-13 (`read-wait-without-fence`): under it, S7 (a TMA store's source
//! overwritten after `cp.async.bulk.wait_group.read 0`) turns from Forbidden to Undefined.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

const S7: &str = "tests/async/S7-wait-read-then-overwrite.litmus";
const READING: &str = "read-wait-without-fence";

fn ptxmm() -> Command {
    Command::cargo_bin("ptxmm").unwrap()
}

/// (exit code, stdout, stderr) of `ptxmm ARGS`.
fn ptxmm_run(args: &[&str]) -> (i32, String, String) {
    let out = ptxmm().args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A fresh folder under the target directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("config-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A suite CSV expecting S7 to be Undefined (true only under the alternative reading).
fn s7_undefined_csv(dir: &Path) -> PathBuf {
    let csv = dir.join("s7.csv");
    std::fs::write(&csv, "S7-wait-read-then-overwrite.litmus,Undefined\n").unwrap();
    csv
}

#[test]
fn run_and_explain_take_the_reading() {
    let (_, default, _) = ptxmm_run(&["run", S7]);
    assert!(default.starts_with("Verdict: Forbidden"), "{default}");
    let (_, alt, _) = ptxmm_run(&["run", "--reading", READING, S7]);
    assert!(alt.starts_with("Verdict: Undefined"), "{alt}");
    let (_, x, _) = ptxmm_run(&["explain", "--reading", READING, S7]);
    assert!(x.starts_with("Test S7-wait-read-then-overwrite is Undefined"), "{x}");
}

#[test]
fn suite_takes_the_reading_and_refuses_an_unknown_one() {
    let dir = scratch("suite-reading");
    let csv = s7_undefined_csv(&dir);
    let (csv, root) = (csv.to_str().unwrap(), "tests/async");
    let (code, out, _) = ptxmm_run(&["suite", csv, "--root", root]);
    assert_eq!(code, 1, "under the default reading S7 is Forbidden:\n{out}");
    assert!(out.contains("expected Undefined, got Forbidden"), "{out}");
    let (code, out, _) = ptxmm_run(&["suite", csv, "--root", root, "--reading", READING]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1 passed, 0 failed"), "{out}");
    let (code, _, err) = ptxmm_run(&["suite", csv, "--root", root, "--reading", "no-such-flag"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown reading `no-such-flag`"), "{err}");
}

#[test]
fn suite_takes_the_search_and_input_limits() {
    let dir = scratch("suite-limits");
    let csv = s7_undefined_csv(&dir);
    let (csv, root) = (csv.to_str().unwrap(), "tests/async");
    let (code, out, _) = ptxmm_run(&["suite", csv, "--root", root, "--reading", READING, "--max-candidates", "1"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("ERROR") && out.contains("--max-candidates"), "{out}");
    let (code, out, _) = ptxmm_run(&["suite", csv, "--root", root, "--max-file-size", "100"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("ERROR") && out.contains("--max-file-size"), "{out}");
}

#[test]
fn a_reading_the_model_cannot_express_is_refused() {
    // Our ptx-7.5 model has no asynchronous operations: it reads no `ALT-…` set and no AGENT.
    for command in [&["run", S7][..], &["suite", "tests/async/expected.csv"], &["explain", S7]] {
        let mut args = command.to_vec();
        args.extend(["--model", "ptx-7.5", "--reading", "commit-order"]);
        let (code, _, err) = ptxmm_run(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains("is not expressed by the model `ptx-7.5`") && err.contains("ALT-COMMIT-ORDER"), "{args:?}: {err}");
    }
    let (code, _, err) = ptxmm_run(&["run", S7, "--model", "ptx-6.0", "--reading", "signal-by-issuer"]);
    assert_eq!(code, 2);
    assert!(err.contains("does not model asynchronous operations"), "{err}");
}

#[test]
fn compare_takes_each_sides_reading_and_the_limits() {
    let (code, out, _) = ptxmm_run(&["compare", S7, "--left-model", "ptx", "--right-model", "ptx", "--right-reading", READING]);
    assert_eq!(code, 1, "the two readings differ on S7:\n{out}");
    assert!(out.contains("Right: model ptx --reading read-wait-without-fence"), "{out}");
    let (code, _, err) = ptxmm_run(&["compare", S7, "--left-model", "ptx", "--right-model", "ptx", "--left-reading", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown reading `nope`"), "{err}");
    let (code, _, err) =
        ptxmm_run(&["compare", S7, "--left-model", "ptx", "--right-model", "ptx-7.5", "--unroll", "1", "--max-events", "1"]);
    assert_eq!(code, 1);
    assert!(err.contains("--max-events"), "{err}");
}

#[test]
fn gen_decides_its_index_under_the_reading_and_the_limits() {
    let index = |args: &[&str], name: &str| {
        let dir = scratch(name);
        let mut all = vec!["gen", "--family", "--size", "4", "--async", "-o", dir.to_str().unwrap()];
        all.extend(args);
        let (code, _, err) = ptxmm_run(&all);
        assert_eq!(code, 0, "{err}");
        std::fs::read_to_string(dir.join("index.csv")).unwrap()
    };
    let default = index(&[], "gen-default");
    let alternative = index(&["--reading", READING], "gen-reading");
    // A wait_group.read edge followed by an overwrite: Forbidden by default, Undefined under AMBIG-13.
    let row = "RfeCta+PodRW+MbarSyncdWR+WaitReadsRW.litmus";
    assert!(default.contains(&format!("{row},Forbidden")), "{default}");
    assert!(alternative.contains(&format!("{row},Undefined")), "{alternative}");
    let limited = index(&["--max-candidates", "1"], "gen-limited");
    assert!(limited.contains("(a limit stopped the search)"), "{limited}");
    let (code, _, err) = ptxmm_run(&["gen", "--family", "--async", "-o", scratch("gen-bad").to_str().unwrap(), "--reading", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown reading `nope`"), "{err}");
}

/// What a harness printed for S7 on a GPU (hand-written): the overwritten value seen 5 times.
const S7_OUTPUT: &str = "ptxmm-hw 1
device NVIDIA H100 80GB HBM3|sm_90|132 SMs|driver 12040|runtime 13000
test S7-wait-read-then-overwrite
threads 1
observables 0:r0
state 95 0 1
state 5 0 7
done S7-wait-read-then-overwrite instances 10 iterations 10 time_ms 3
";

#[test]
fn hw_judges_under_the_reading_and_the_limits() {
    let dir = scratch("hw");
    let output = dir.join("s7.out");
    std::fs::write(&output, S7_OUTPUT).unwrap();
    let output = output.to_str().unwrap();
    // Default reading: r0 = 7 is forbidden, a mismatch (exit 1).
    let (code, out, _) = ptxmm_run(&["hw", "run", S7, "--harness-output", output]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("FORBIDDEN"), "{out}");
    // AMBIG-13's alternative: the program is undefined, no state is a mismatch.
    let (code, out, _) = ptxmm_run(&["hw", "run", S7, "--harness-output", output, "--reading", READING]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("FORBIDDEN"), "{out}");
    // A search stopped by a limit judges nothing as forbidden.
    let (code, out, _) = ptxmm_run(&["hw", "run", S7, "--harness-output", output, "--max-candidates", "1"]);
    assert_ne!(code, 1, "{out}");
    assert!(!out.contains("FORBIDDEN"), "{out}");
    // Generation takes the model flags too (they decide tensor-map stores in flight).
    let (code, _, err) = ptxmm_run(&["hw", "gen", S7, "-o", dir.join("gen").to_str().unwrap(), "--reading", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown reading `nope`"), "{err}");
    let (code, _, err) = ptxmm_run(&["hw", "gen", S7, "-o", dir.join("gen").to_str().unwrap(), "--max-file-size", "10"]);
    assert_ne!(code, 0);
    assert!(err.contains("--max-file-size"), "{err}");
}

/// The library's configuration: a flag that no reading has, and a model that cannot express
/// one, are errors naming what is wrong.
#[test]
fn config_with_readings_checks_flags_against_the_model() {
    let config = ptxmm::Config::default_model();
    let alt = config.clone().with_readings(&["AMBIG-13"]).unwrap();
    assert!(alt.readings.read_wait_without_fence);
    let e = config.clone().with_readings(&["nope"]).unwrap_err();
    assert!(e.contains("unknown reading `nope`"), "{e}");
    let e = ptxmm::Config::builtin("ptx-7.5").unwrap().with_readings(&["proxy-fence-anywhere"]).unwrap_err();
    assert!(e.contains("ALT-PROXY-FENCE-ANYWHERE"), "{e}");
}

/// The values one location may take are a limit with a flag: a thread of 70 additions to `x`
/// (71 values) stops at the default 64 with a message naming `--max-values`, and goes past it when
/// the flag raises the limit.
#[test]
fn the_value_limit_has_a_flag() {
    let rows = " red.relaxed.gpu.add x, 1 ;\n".repeat(70);
    let text = format!("PTX adds\n{{ x = 0; }}\nP0@cta 0,gpu 0 ;\n{rows}exists (x == 70)\n");
    let run = |extra: &[&str]| {
        let out = assert_cmd::Command::cargo_bin("ptxmm")
            .unwrap()
            .args(["run", "--liveness", "skip", "--timeout", "3"])
            .args(extra)
            .arg("-")
            .write_stdin(text.clone())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout)
    };
    let limited = run(&[]);
    assert!(limited.contains("can hold more than 64 distinct values") && limited.contains("--max-values"), "{limited}");
    let raised = run(&["--max-values", "100"]);
    assert!(!raised.contains("distinct values"), "{raised}");
}

/// Under `read-wait-without-fence`, S7's `wait_group.read 0` is already there: the hint asks for
/// the missing `fence.proxy.async` after it, and with that fence the finding is gone.
#[test]
fn the_s7_hint_under_the_reading_asks_for_what_is_missing() {
    let out = ptxmm().args(["run", "--reading", READING, S7]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("`cp.async.bulk.wait_group.read 0` (P0 line 14) already waits for the source reads")
            && text.contains("put a `fence.proxy.async` after it"),
        "{text}"
    );
    let source = std::fs::read_to_string(S7).unwrap();
    let fixed = source.replace(" st.shared.v4.u32 [s]", " fence.proxy.async.shared::cta ;\n st.shared.v4.u32 [s]");
    let out = ptxmm().args(["run", "--reading", READING, "-"]).write_stdin(fixed).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("Verdict: Forbidden") && !text.contains("hint:"), "{text}");
}
