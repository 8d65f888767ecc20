//! Regression tests for adversarial inputs (issue: robustness): each ends with a verdict or a
//! message naming a limit and its flag, quickly and in little memory. CI also runs this file in
//! a debug build (`cargo test --test robustness`), where an arithmetic overflow would panic.

use assert_cmd::Command;
use std::path::PathBuf;

fn ptxmm() -> Command {
    Command::cargo_bin("ptxmm").unwrap()
}

/// A scratch file with `text`, unique to this test process.
fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ptxmm-robust-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = ptxmm().args(args).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Point 1: `explain` on one thread with many stores to one location used to build every
/// partial order of the writes before charging any budget (out of memory at 8 stores).
#[test]
fn explain_of_many_stores_to_one_location() {
    let stores: String = (1..=12).map(|v| format!(" st.relaxed.gpu x, {v} ;\n")).collect();
    let f = scratch("stores.litmus", &format!("PTX stores\n{{ x = 0; }}\nP0@cta 0,gpu 0 ;\n{stores}exists (x == 3)\n"));
    let (code, out, err) = run(&["explain", f.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("Test stores: the outcome x=3 is forbidden."), "{out}");
}

/// Point 2: one writer and many readers of one location: astronomically many outcomes. The
/// search stops at a limit and says which, with the partial result.
#[test]
fn many_readers_stop_at_a_named_limit() {
    let n = 40;
    let heads: Vec<String> = (0..n).map(|i| format!("P{i}@cta {i},gpu 0")).collect();
    let row: Vec<String> =
        (0..n).map(|i| if i == 0 { "st.relaxed.gpu x, 1".to_string() } else { "ld.relaxed.gpu r0, x".to_string() }).collect();
    let cond: Vec<String> = (1..n).map(|i| format!("P{i}:r0 == 1")).collect();
    let src = format!("PTX fanout\n{{ x = 0; }}\n{} ;\n{} ;\nexists ({})\n", heads.join(" | "), row.join(" | "), cond.join(" /\\ "));
    let f = scratch("fanout.litmus", &src);
    let (code, out, _) = run(&["run", "--liveness", "skip", "--max-states", "5000", f.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(out.contains("Verdict: Unknown"), "{out}");
    assert!(out.contains("raise --max-states"), "{out}");
    let (_, out, _) = run(&["run", "--liveness", "skip", "--timeout", "0.5", f.to_str().unwrap()]);
    assert!(out.contains("Verdict: Unknown") && out.contains("--timeout"), "{out}");
}

/// Point 3: a huge test is refused while it is read, naming the limit, before any parsing.
#[test]
fn huge_inputs_are_refused_while_reading() {
    let body: String = (0..60_000).map(|v| format!(" st.relaxed.gpu x, {} ;\n", v % 7)).collect();
    let f = scratch("huge.litmus", &format!("PTX huge\n{{ x = 0; }}\nP0@cta 0,gpu 0 ;\n{body}exists (x == 3)\n"));
    let (code, _, err) = run(&["run", f.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(err.contains("the test is too large: more than 1048576 bytes (raise --max-file-size)"), "{err}");
    // The same from standard input.
    let out = ptxmm().args(["run", "-"]).write_stdin(std::fs::read(&f).unwrap()).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("raise --max-file-size"));
    // Within the file size, the instruction count per thread is the limit.
    let (_, _, err) = run(&["run", "--max-file-size", "100000000", f.to_str().unwrap()]);
    assert!(err.contains("thread P0 has 60000 instructions, more than 10000 (raise --max-instructions)"), "{err}");
    let (_, _, err) = run(&["run", "--max-threads", "0", "examples/MP.litmus"]);
    assert!(err.contains("2 threads, more than 0 (raise --max-threads)"), "{err}");
}

/// Point 4: operands at the ends of the 64-bit range: the misuse is undefined behaviour with
/// the ISA's range, not an overflow (a panic in debug builds, a wrong value in release).
#[test]
fn extreme_operands_do_not_overflow() {
    let f = scratch(
        "tx.litmus",
        "PTX tx-huge\n{ bar @ shared cta 0 mbarrier(1); }\nP0@cta 0,gpu 0 ;\n mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 9223372036854775807 ;\nexists (bar == 0)\n",
    );
    let (_, out, err) = run(&["run", f.to_str().unwrap()]);
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.contains("Verdict: Undefined") && out.contains("M10: the tx-count"), "{out}");
    // atom.dec is defined for .u32 only: on the word of i64::MIN (0 as a .u32) it gives b.
    let f = scratch(
        "dec.litmus",
        "PTX dec-min\n{ x = -9223372036854775808; }\nP0@cta 0,gpu 0 ;\n atom.relaxed.gpu.dec r0, [x], 5 ;\nexists (x == 5)\n",
    );
    let (_, out, err) = run(&["run", f.to_str().unwrap()]);
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.starts_with("Verdict: Allowed"), "{out}");
}

/// Point 5: a long chain of `let`s in a cat file (was quadratic), an error on a very long line
/// (printed the line and as many carets), and CR-only line endings (the whole file was line 1).
#[test]
fn long_cat_chains_long_lines_and_cr_line_endings() {
    let mut cat = String::from("LETS\ninclude \"ptx.cat\"\nlet l0 = po\n");
    for i in 1..8000 {
        cat.push_str(&format!("let l{i} = l{} | po\n", i - 1));
    }
    cat.push_str("acyclic l7999 as deep\n");
    let c = scratch("lets.cat", &cat);
    let (code, out, err) = run(&["run", "--liveness", "skip", "--cat", c.to_str().unwrap(), "examples/MP.litmus"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("Verdict: Forbidden"), "{out}");

    let long = format!("PTX long\n{{ x = 0; }}\nP0@cta 0,gpu 0 ;\n st.relaxed.gpu x, 1 {};\nexists (x == 1)\n", "y ".repeat(200_000));
    let f = scratch("long.litmus", &long);
    let (_, _, err) = run(&["run", f.to_str().unwrap()]);
    assert!(err.contains("long.litmus:4:22: expected"), "{err}");
    assert!(err.len() < 2000, "a long line is shown as a window: {} bytes", err.len());
    assert!(err.contains("line 4 is 400022 bytes long"), "{err}");

    let f =
        scratch("cr.litmus", "PTX cr\r{ x = 0; }\rP0@cta 0,gpu 0 ;\r st.relaxed.gpu x, 1 ;\r ld.relaxed.gpu r0, y y ;\rexists (x == 1)\r");
    let (_, _, err) = run(&["run", f.to_str().unwrap()]);
    assert!(err.contains("cr.litmus:5:23: expected"), "{err}");
}

/// Point 5: undefined behaviour in an execution that hangs (no final state) is reported with
/// the hang, and makes the program Undefined (issue 23 item 4).
#[test]
fn undefined_behaviour_before_a_hang_is_reported() {
    let (_, out, _) = run(&["run", "tests/liveness/ub-then-hang.litmus"]);
    assert!(out.starts_with("Verdict: Undefined\n"), "{out}");
    let live = out.split("Liveness: may hang").nth(1).unwrap_or_else(|| panic!("a hang:\n{out}"));
    assert!(live.contains("undefined behaviour in this hanging execution (1):") && live.contains("M10: the tx-count"), "{out}");
    let (_, out, _) = run(&["run", "--json", "tests/liveness/ub-then-hang.litmus"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["liveness"]["undefined"][0]["rule"], "undefined-operation", "{v}");
}

/// Found by the `explain_liveness` fuzz target: a multicast copy completing on an mbarrier
/// whose counterpart in a destination CTA does not exist panicked; it is the undefined
/// behaviour of a ctaMask naming a CTA without the mbarrier.
#[test]
fn fuzz_multicast_without_the_mbarrier_in_a_destination_cta() {
    for cmd in ["run", "explain"] {
        let (code, out, err) = run(&[cmd, "tests/robustness/fuzz-multicast-mbarrier-other-cta.litmus"]);
        assert!(!err.contains("panicked"), "{cmd}: {err}");
        assert!(code.is_some(), "{cmd}");
        if cmd == "run" {
            assert!(out.contains("multicast ctaMask 0x3 selects cluster rank 1"), "{out}");
        }
    }
}
