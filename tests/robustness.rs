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

// Round 3 (issue 43): the kernel reader, the harness generator, gen, suite and time limits.

/// A PTX module: `.version`, `.target`, `.address_size`, then `rest`.
fn module(name: &str, rest: &str) -> PathBuf {
    scratch(name, &format!(".version 8.0\n.target sm_90\n.address_size 64\n{rest}"))
}

/// Item 4: module-level `.global` arrays the kernel never names cost nothing (4,000 of 4 KB
/// took 14.5 s and 1.5 GB); the one it names is declared.
#[test]
fn unused_module_globals_cost_nothing() {
    let globals: String = (0..4000).map(|i| format!(".global .align 4 .b8 g{i}[4096];\n")).collect();
    let f = module(
        "globals.ptx",
        &format!(
            "{globals}.visible .entry k(.param .u64 p)\n{{\n\t.reg .b64 %rd<4>;\n\tmov.u64 %rd1, g7;\n\tst.global.u32 [%rd1], 1;\n\tret;\n}}\n"
        ),
    );
    let (code, out, err) =
        run(&["kernel", f.to_str().unwrap(), "--block", "32", "--emit-litmus", f.with_extension("litmus").to_str().unwrap()]);
    assert!(code.is_some() && !err.contains("panicked"), "{err}");
    let litmus = std::fs::read_to_string(f.with_extension("litmus")).unwrap();
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(litmus.contains(" g7[4096]"), "{litmus}");
    assert!(!litmus.contains(" g8[4096]"), "an unused global is declared: {out}");
}

/// Item 4: the variables of a test are charged to --max-memory while they are lowered (40
/// global arrays of 4 MB took 303 s and 16 GB); a large CTA count with 227 KB of dynamic
/// shared memory each is within the default and stops, named, under a small one.
#[test]
fn declared_memory_is_charged_to_max_memory() {
    let globals: String = (0..40).map(|i| format!(".global .align 4 .b8 g{i}[4194304];\n")).collect();
    let stores: String = (0..40).map(|i| format!("\tst.global.u32 [g{i}+64], 1;\n")).collect();
    let f = module("big.ptx", &format!("{globals}.visible .entry k()\n{{\n{stores}\tret;\n}}\n"));
    let (code, _, err) = run(&["kernel", f.to_str().unwrap(), "--block", "32", "--max-memory", "256"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("`g1` brings the test's variables to") && err.contains("raise --max-memory"), "{err}");
    let dynamic = module(
        "dyn.ptx",
        ".extern .shared .align 16 .b8 smem[];\n.visible .entry k()\n{\n\t.reg .b32 %r<4>;\n\tmov.u32 %r1, smem;\n\tst.shared.u32 [%r1], 1;\n\tret;\n}\n",
    );
    let d = dynamic.to_str().unwrap();
    let (code, out, err) = run(&["kernel", d, "--block", "32", "--grid", "8", "--dynamic-smem", "232448"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("Summary: no finding"), "{out}");
    let (code, _, err) = run(&["kernel", d, "--block", "32", "--grid", "8", "--dynamic-smem", "232448", "--max-memory", "64"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("`smem@cta") && err.contains("more than --max-memory allows"), "{err}");
}

/// Items 4 and 7: a PTX module is charged to --max-file-size, and one that is not UTF-8 is
/// refused at the line and column of its first bad byte (as a litmus file is, also in JSON).
#[test]
fn modules_are_read_within_limits_and_bad_bytes_are_located() {
    let f = module("k.ptx", ".visible .entry k()\n{\n\tret;\n}\n");
    let (code, _, err) = run(&["kernel", f.to_str().unwrap(), "--block", "32", "--max-file-size", "40"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("more than 40 bytes (raise --max-file-size)"), "{err}");
    let bad = scratch("latin1.ptx", "");
    std::fs::write(&bad, b".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tret; // caf\xe9\n}\n").unwrap();
    let (code, _, err) = run(&["kernel", bad.to_str().unwrap(), "--block", "32"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("latin1.ptx:6:13: error: not UTF-8 text: byte 0xe9"), "{err}");
    let lit = scratch("latin1.litmus", "");
    std::fs::write(&lit, b"PTX a\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ; // \xff\nexists (x == 1)\n").unwrap();
    let (_, out, _) = run(&["run", "--json", lit.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!((v["error"]["line"].as_u64(), v["error"]["column"].as_u64()), (Some(4), Some(20)), "{v}");
}

/// Item 7: a module head on one line is read directive by directive, and a string that does
/// not end on its line is reported there, not at a later quote.
#[test]
fn module_heads_on_one_line_and_unterminated_strings() {
    let one = scratch("one.ptx", ".version 8.0 .target sm_90 .address_size 64\n.visible .entry _Z1kPi(\n.param .u64 p)\n{\n\tret;\n}\n");
    let (code, out, err) = run(&["kernel", one.to_str().unwrap(), "--block", "32"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let s = module("file.ptx", ".file 1 \"/home/a.cu\n.file 2 \"b.cu\"\n.visible .entry k()\n{\n\tret;\n}\n");
    let (code, _, err) = run(&["kernel", s.to_str().unwrap(), "--block", "32"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("file.ptx:4:9: a string that never ends"), "{err}");
}

/// Item 8: harness counts that the generated CUDA holds in an `int` (or `long long`) are
/// bounded where they are given, not wrapped (`--instances 4294967295` wrote -1).
#[test]
fn harness_counts_do_not_wrap() {
    for (flag, value) in [("--instances", "4294967295"), ("--instances", "0"), ("--iterations", "9223372036854775808"), ("--stress", "32")]
    {
        let (code, out, err) = run(&["hw", "gen", "examples/MP.litmus", flag, value, "--out", "/nonexistent/never-written"]);
        assert_eq!(code, Some(2), "{flag} {value}: {out}");
        assert!(err.contains(&format!("invalid value '{value}' for '{flag}")), "{err}");
    }
    let dir = std::env::temp_dir().join(format!("ptxmm-robust-{}-hw", std::process::id()));
    let (code, _, err) = run(&["hw", "gen", "examples/MP.litmus", "--instances", "2147483647", "--out", dir.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let source: String = std::fs::read_dir(&dir).unwrap().map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap_or_default()).collect();
    assert!(source.contains("int instances = 2147483647;"), "the generated source keeps the count");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Item 8: 10,000 `--param`s bind in one pass (they took 4.5 s, quadratically).
#[test]
fn many_parameters_bind_in_one_pass() {
    let n = 10_000;
    let params: Vec<String> = (0..n).map(|i| format!(".param .u32 p{i}")).collect();
    let f = module("params.ptx", &format!(".visible .entry k({})\n{{\n\tret;\n}}\n", params.join(",")));
    let mut args = vec!["kernel".to_string(), f.to_str().unwrap().to_string(), "--block".into(), "32".into()];
    for i in 0..n {
        args.push("--param".into());
        args.push(format!("p{i}={i}"));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = run(&args);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("Parameter p9999 = 9999 (--param)"), "{out}");
}

/// Item 3: a family of absurd size stops at --timeout (it ran 20-44 s whatever the limit) or
/// --max-memory, with the limit named.
#[test]
fn gen_families_stop_at_the_time_and_memory_limits() {
    let dir = std::env::temp_dir().join(format!("ptxmm-robust-{}-family", std::process::id()));
    let out = dir.to_str().unwrap();
    let absurd = ["gen", "--family", "--size", "1000", "--nprocs", "1000", "--max-tests", "100000000", "--no-decide", "-o", out];
    let (code, _, err) = run(&[&absurd[..], &["--timeout", "1"]].concat());
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("took longer than the time limit of 1 s") && err.contains("raise --timeout"), "{err}");
    let (code, _, err) = run(&[&absurd[..], &["--timeout", "0", "--max-memory", "8"]].concat());
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("more than the memory limit of 8 MiB (raise --max-memory"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A time limit too large for the clock is no limit, not a panic (`--timeout 1e300`).
#[test]
fn huge_time_limits_do_not_overflow_the_clock() {
    for t in ["1e300", "inf"] {
        let (code, out, err) = run(&["run", "--timeout", t, "examples/MP.litmus"]);
        assert_eq!(code, Some(0), "{t}: {err}");
        assert!(out.contains("Verdict: Forbidden"), "{out}");
    }
}

/// Item 6: `suite --jobs` past the cores runs as many tests at once as there are cores, so a
/// test's --timeout measures its own work, not its wait for a core; the message says so.
#[test]
fn suite_jobs_past_the_cores_are_capped() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let dir = std::env::temp_dir().join(format!("ptxmm-robust-{}-suite", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy("examples/MP.litmus", dir.join("MP.litmus")).unwrap();
    let csv = dir.join("s.csv");
    std::fs::write(&csv, "MP.litmus,0\n".repeat(20)).unwrap();
    let jobs = (cores + 1).to_string();
    let (code, out, err) = run(&["suite", "--jobs", &jobs, csv.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(err.contains(&format!("--jobs {jobs} is more than the {cores} core(s) here; using {cores}")), "{err}");
    assert!(out.contains("20 passed, 0 failed"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Item 3: 6,000 abstracted float instructions in a kernel (quadratic once: 9,000 took 74 s)
/// and 9,990 `.shared` declarations in a code block (killed at 15 s, 2.0 GB) are decided, each
/// within the default time limit.
#[test]
fn many_abstracted_instructions_and_declarations() {
    let body: String = (0..6000).map(|i| format!("\tex2.approx.f32 %f{}, %f{};\n", (i + 1) % 100, i % 100)).collect();
    let f = module(
        "floats.ptx",
        &format!(
            ".visible .entry k(.param .u64 p)\n{{\n\t.reg .f32 %f<100>;\n\t.reg .b64 %rd<4>;\n\tld.param.u64 %rd1, [p];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tld.global.f32 %f0, [%rd2];\n{body}\tst.global.f32 [%rd2+4], %f99;\n\tret;\n}}\n"
        ),
    );
    let (code, out, err) = run(&["kernel", f.to_str().unwrap(), "--block", "32"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("Summary: no finding"), "{out}");
    let decls: String = (0..9990).map(|i| format!("\t.shared .b32 s{i};\n")).collect();
    let t = scratch(
        "decls.litmus",
        &format!("PTX decls\n{{ x = 0; }}\nP0@cta 0,gpu 0 ;\n{{\n{decls}\tst.relaxed.gpu.u32 [x], 1;\n}}\nexists (x == 1)\n"),
    );
    let (code, out, err) = run(&["run", t.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("Verdict: Allowed"), "{out}");
}

/// Item 7: an `--assert` too large for the test is an error about `--assert`, not a position
/// far past the end of the module (`base.ptx:23:53272` of a 22-line file).
#[test]
fn an_assertion_too_large_names_its_flag() {
    let sum = vec!["param_0"; 9000].join(" + ");
    let (code, _, err) = run(&["kernel", "tests/kernels/cmd/loop_then_store.ptx", "--block", "64", "--assert", &format!("1 = {sum}")]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.starts_with("error: --assert `1 = param_0 + "), "{err}");
    assert!(!err.contains("loop_then_store.ptx:"), "{err}");
}
