//! `ptxmm kernel` (issue 28) on the six kernel pairs of tests/kernels, compiled by nvcc with
//! `-lineinfo`: the correct version has no finding, the buggy one the finding of its bug at its
//! PTX line and CUDA line (the verdicts agree with tests/kernels/expected.csv, where the
//! hand-written litmus tests of the same bodies are decided); `--emit-litmus` writes a test
//! that `ptxmm run` decides the same way; slicing abstracts what nothing observes and rejects
//! the rest; bad input is rejected with a message that says what to do.

use std::path::{Path, PathBuf};
use std::process::Command;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels")
}

/// Run `ptxmm ARGS` in tests/kernels: (exit status, stdout, stderr).
fn ptxmm(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmm")).args(args).current_dir(dir()).output().expect("ptxmm runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// One kernel pair: its launch flags, and what the buggy version must report.
struct Pair {
    name: &'static str,
    flags: &'static [&'static str],
    /// The verdict line of the buggy version.
    bug_verdict: &'static str,
    /// The rule of the bug's finding, and a PTX and a CUDA line it names (`file.ptx:N
    /// (file.cu:M)`).
    bug_rule: &'static str,
    bug_line: &'static str,
    bug_hangs: bool,
}

const PAIRS: &[Pair] = &[
    Pair {
        name: "tma_pipeline",
        flags: &["--block", "64"],
        bug_verdict: "Verdict: Undefined",
        bug_rule: "[U1-read-before-completion]",
        // The consumer's read of the stage, `out[k] = tile[0]`.
        bug_line: "tma_pipeline-bug.ptx:101 (tma_pipeline.cu:38)",
        bug_hangs: true,
    },
    Pair {
        name: "tma_store",
        flags: &["--block", "4", "--lanes", "0-3"],
        bug_verdict: "Verdict: Undefined",
        bug_rule: "[mixed-size-race]",
        // `tile[threadIdx.x] = ...` without fence.proxy.async before the bulk store.
        bug_line: "tma_store-bug.ptx:34 (tma_store.cu:12)",
        bug_hangs: false,
    },
    Pair {
        name: "cp_async_double",
        flags: &["--block", "32"],
        bug_verdict: "Verdict: Undefined",
        bug_rule: "[U1-read-before-completion]",
        bug_line: "cp_async_double-bug.ptx:86 (cp_async_double.cu:",
        bug_hangs: false,
    },
    Pair {
        name: "multicast",
        // The cluster of 2 comes from the kernel's .reqnctapercluster.
        flags: &["--block", "32"],
        bug_verdict: "Verdict: Inconclusive (no execution completes)",
        bug_rule: "",
        bug_line: "",
        bug_hangs: true,
    },
    Pair {
        name: "splitk",
        flags: &["--block", "32", "--grid", "2", "--assert", "param_2 = 3"],
        bug_verdict: "Verdict: Allowed",
        bug_rule: "[data-race]",
        bug_line: "splitk-bug.ptx:91 (splitk.cu:",
        bug_hangs: false,
    },
    Pair {
        name: "remote_arrive",
        flags: &["--block", "32", "--assert", "param_0 = 42"],
        bug_verdict: "Verdict: Allowed",
        bug_rule: "[data-race]",
        bug_line: "remote_arrive-bug.ptx:128 (remote_arrive.cu:",
        bug_hangs: false,
    },
];

fn check(file: &str, flags: &[&str]) -> (i32, String, String) {
    let mut args = vec!["kernel", file];
    args.extend_from_slice(flags);
    ptxmm(&args)
}

#[test]
fn correct_kernels_have_no_finding() {
    for p in PAIRS {
        let file = format!("{}.ptx", p.name);
        let (code, out, err) = check(&file, p.flags);
        assert_eq!(code, 0, "{file}: {err}\n{out}");
        let asked = if p.flags.contains(&"--assert") {
            "Verdict: Forbidden\n"
        } else {
            // No condition of the user's: the generated `exists (false)` is no verdict to show.
            "Verdict: none asked (no --assert condition): the findings and the liveness check are the answer\n"
        };
        assert!(out.contains(asked) && !out.contains("Condition: exists (false)"), "{file}:\n{out}");
        assert!(out.contains("Liveness: ok\n"), "{file}:\n{out}");
        assert!(out.ends_with("Summary: no finding\n"), "{file}:\n{out}");
        if p.flags.contains(&"--assert") {
            assert!(out.contains("holds at the end of every execution"), "{file}:\n{out}");
        }
    }
}

#[test]
fn buggy_kernels_have_the_finding_of_their_bug_at_its_ptx_and_cuda_lines() {
    for p in PAIRS {
        let file = format!("{}-bug.ptx", p.name);
        let (code, out, err) = check(&file, p.flags);
        // A finding exits with 3, also where the verdict is Inconclusive (no execution completes).
        assert_eq!(code, 3, "{file}: {err}\n{out}");
        assert!(out.contains(&format!("{}\n", p.bug_verdict)), "{file}:\n{out}");
        assert!(out.contains(p.bug_rule), "{file}: no {}:\n{out}", p.bug_rule);
        assert!(out.contains(p.bug_line), "{file}: no line {}:\n{out}", p.bug_line);
        assert_eq!(out.contains("Liveness: may hang"), p.bug_hangs, "{file}:\n{out}");
        assert!(!out.contains("Summary: no finding"), "{file}:\n{out}");
        if p.flags.contains(&"--assert") {
            assert!(out.contains("fails in some execution"), "{file}:\n{out}");
        }
    }
}

/// The answer lines of a report: the verdict, the liveness status and the summary.
fn answer(out: &str) -> Vec<&str> {
    out.lines().filter(|l| l.starts_with("Verdict:") || l.starts_with("Liveness:") || l.starts_with("Summary:")).collect()
}

/// By default every lane of each warp is modelled, with the answers lane 0 gives on these
/// kernels, whose other lanes only meet at barriers (lanes whose runs are the same are
/// interchangeable in the liveness search, `decide::combos::interchangeable`), and with every
/// warp too.
#[test]
fn every_lane_of_every_warp_gives_the_answers_of_lane_zero() {
    for p in PAIRS.iter().filter(|p| !p.flags.contains(&"--lanes")) {
        for file in [format!("{}.ptx", p.name), format!("{}-bug.ptx", p.name)] {
            let (code, lane0, err) = check(&file, &[p.flags, &["--lanes", "0"]].concat());
            let (code_default, default, err_default) = check(&file, p.flags);
            assert_eq!(code, code_default, "{file}: {err}\n{lane0}\n---\n{err_default}\n{default}");
            assert_eq!(answer(&lane0), answer(&default), "{file}:\n{lane0}\n---\n{default}");
            assert!(default.contains("Lanes modelled: every lane of each warp modelled (the default)\n"), "{file}:\n{default}");
            assert!(default.contains("P0 = CTA 0 warp 0 (tid 0-31)"), "{file}: lane 31 is not modelled:\n{default}");
            let every: Vec<&str> = [p.flags, &["--warps", "all", "--lanes", "0-31"]].concat();
            let (code_all, all, err_all) = check(&file, &every);
            assert_eq!(code, code_all, "{file}: {err}\n{lane0}\n---\n{err_all}\n{all}");
            assert_eq!(answer(&lane0), answer(&all), "{file}:\n{lane0}\n---\n{all}");
        }
    }
}

/// Lanes that meet each other (`cmd/lanes.cu`), decided with every lane of the warp: a
/// neighbour's word read after `__syncwarp()` has no finding, without it the read races with the
/// neighbour's store; `__syncthreads()` reached by half of the warp is undefined (a divergent
/// aligned barrier) and hangs. Lane 0 alone meets no other lane, so it sees neither bug.
#[test]
fn lanes_that_meet_are_checked_lane_by_lane() {
    let run = |file: &str, entry: &str, lanes: &str| {
        check(file, &["--entry", entry, "--block", "32", "--lanes", lanes, "--param", "param_0=buffer:128", "--color", "never"])
    };
    for entry in ["_Z9neighbourPi", "_Z9divergentPi"] {
        let (code, out, err) = run("cmd/lanes.ptx", entry, "0-31");
        assert_eq!(code, 0, "{entry}: {err}\n{out}");
        assert!(out.contains("Liveness: ok\n") && out.ends_with("Summary: no finding\n"), "{entry}:\n{out}");
        let (code, out, err) = run("cmd/lanes-bug.ptx", entry, "0");
        assert_eq!(code, 0, "{entry}: lane 0 alone: {err}\n{out}");
    }
    // Two lanes show the race; so do all 32, decided: each racy read may read either write, but
    // nothing looks at the value (no --assert), so one source of each is enough (the search's
    // free reads), not 2^32 executions.
    let (code, out, err) = run("cmd/lanes-bug.ptx", "_Z9neighbourPi", "0,31");
    assert_eq!(code, 3, "{err}\n{out}");
    assert!(
        out.contains(
            "[data-race] `st.shared.u32 [%r7], %r3` (P0 line 39, lanes.cu:16) and `ld.shared.u32 %r11, [%r10]` (P1 line 44, lanes.cu:20)"
        ),
        "{out}"
    );
    let (code, out, err) = run("cmd/lanes-bug.ptx", "_Z9neighbourPi", "all");
    assert_eq!(code, 3, "{err}\n{out}");
    assert!(out.contains("Data races (32):") && out.contains("Liveness: ok\n") && out.ends_with("Summary: 32 data race(s)\n"), "{out}");
    // `--lanes all`: every lane of the warp.
    let (code, out, err) = run("cmd/lanes-bug.ptx", "_Z9divergentPi", "all");
    assert_eq!(code, 3, "{err}\n{out}");
    assert!(
        out.contains("divergent aligned barrier: P0.0 at line 81 (lanes.cu:30) `bar.sync 0` reaches barrier 1 of warp 0, and P0.16 of the same warp finishes without reaching it"),
        "{out}"
    );
    assert!(out.contains("hint: let every lane of the warp reach `bar.sync 0`"), "{out}");
    assert!(out.contains("Liveness: may hang"), "{out}");
}

/// A named barrier with a thread count across two warps (`cmd/lanes.cu`, `named`): every lane
/// (the default) makes up its 64 threads, so the correct kernel has no finding, and the buggy
/// one (96 threads) hangs with the 32 lanes of the warp that waits named in one line. Lane 0 of
/// each warp, asked for, cannot make up the count: its hang is the one of those two threads.
#[test]
fn a_count_of_lanes_is_met_with_every_lane() {
    let run = |file: &str| check(file, &["--entry", "_Z5namedPi", "--block", "64", "--param", "param_0=buffer:128", "--color", "never"]);
    let (code, out, err) = run("cmd/lanes.ptx");
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(out.contains("Lanes modelled: every lane of each warp modelled (the default)\n"), "{out}");
    assert!(out.contains("P1 = CTA 0 warp 1 (tid 32-63)") && out.ends_with("Summary: no finding\n"), "{out}");
    let (code, out, err) = run("cmd/lanes-bug.ptx");
    assert_eq!(code, 3, "{err}\n{out}");
    assert!(out.contains("Lanes modelled: every lane of each warp modelled (the default)\n"), "{out}");
    assert!(
        out.contains("  P1.0-P1.31 stuck at line 130 (lanes.cu:51) `bar.sync 1, 96`: bar.sync 1, 96 expects 96 threads, 64 can arrive\n"),
        "{out}"
    );
    let (code, out, _) =
        check("cmd/lanes.ptx", &["--entry", "_Z5namedPi", "--block", "64", "--lanes", "0", "--param", "param_0=buffer:128"]);
    assert_eq!(code, 3, "{out}");
    assert!(!out.contains("Lanes modelled") && out.contains("expects 64 threads, 2 can arrive"), "{out}");
}

/// A kernel hint names what the thread ran in this execution, on the operation's own mbarrier,
/// with the execution's byte counts: no placeholder, no wait of another branch (the threads of a
/// kernel share one body; issue 44).
#[test]
fn kernel_hints_name_what_the_thread_ran() {
    for p in PAIRS {
        let file = format!("{}-bug.ptx", p.name);
        let (_, out, _) = check(&file, p.flags);
        for hint in out.lines().filter(|l| l.trim_start().starts_with("hint:")) {
            assert!(!hint.contains("<bytes") && !hint.contains("`its mbarrier`"), "{file}: a placeholder: {hint}");
        }
    }
    // tma_pipeline-bug: the two copies of the stage race; the producer's wait on `empty`
    // (line 175) is no wait on the copy's `full`.
    let (_, out, _) = check("tma_pipeline-bug.ptx", &["--block", "64"]);
    let hint = out.lines().find(|l| l.contains("hint:") && l.contains("completes through the mbarrier")).unwrap_or_else(|| panic!("{out}"));
    assert!(hint.contains("`_ZZ12tma_pipelinePKiPiE4full`: wait for that phase in P0") && !hint.contains("line 175"), "{hint}");
}

/// A count of one arrival per consumer warp (`mbarrier.init` 7 in an 8-warp block) is not met
/// with consumer warps left out: the hang that check finds is checked again with every warp,
/// which completes, so no hang is reported.
#[test]
fn a_hang_found_with_warps_left_out_is_checked_with_every_warp() {
    let (code, out, err) = check("cmd/warp_counts.ptx", &[]);
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(out.contains("Warps modelled: every warp: the first check, with warps 2-7 left out, hangs or never completes"), "{out}");
    assert!(
        out.contains("P7 = CTA 0 warp 7 (tid 224-255)\n") && out.contains("Liveness: ok\n") && out.ends_with("Summary: no finding\n"),
        "{out}"
    );
    // Chosen by the user, the two warps hang as the model says they do.
    let (code, out, err) = check("cmd/warp_counts.ptx", &["--warps", "0,1"]);
    assert_eq!(code, 3, "{err}\n{out}");
    assert!(out.contains("Liveness: may hang") && out.contains("pending 6/7"), "{out}");
}

#[test]
fn by_default_warps_that_run_the_same_code_are_left_out_but_two_that_write() {
    // 8 warps: a producer (warp 0) and 7 consumers running the same code, which writes memory.
    let grouping = "Warps modelled: 0-2; warps 3-7 run the code of warps 1 and 2 (two are kept: their code writes memory, so they may race): --warps all models them\n";
    let (code, out, err) = check("cmd/warp_groups.ptx", &[]);
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(out.contains(grouping), "{out}");
    assert!(
        out.contains("Threads modelled: P0 = CTA 0 warp 0 (tid 0-31), P1 = CTA 0 warp 1 (tid 32-63), P2 = CTA 0 warp 2 (tid 64-95)\n"),
        "{out}"
    );
    assert!(out.ends_with("Summary: no finding\n"), "{out}");
    // Every consumer stores to out[0]: the two consumers kept race.
    let (code, out, err) = check("cmd/warp_groups-bug.ptx", &[]);
    assert_eq!(code, 3, "{err}\n{out}");
    assert!(out.contains(grouping), "{out}");
    assert!(out.contains("[data-race] `st.global.u32 [%rd2], %r4` (P1.0 line 39) and `st.global.u32 [%rd2], %r4` (P2.0 line 39)"), "{out}");
    // `--warps all` models the eight; `--warps LIST` keeps its meaning.
    let (code, out, err) = check("cmd/warp_groups.ptx", &["--warps", "all"]);
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(out.contains("Warps modelled: every warp (--warps all)\n") && out.contains("P7 = CTA 0 warp 7 (tid 224-255)\n"), "{out}");
    let (_, out, _) = check("cmd/warp_groups.ptx", &["--warps", "0,5"]);
    assert!(
        !out.contains("Warps modelled")
            && out.contains("Threads modelled: P0 = CTA 0 warp 0 (tid 0-31), P1 = CTA 0 warp 5 (tid 160-191)\n"),
        "{out}"
    );
    // Two warps of different code: both modelled, and said so.
    let (_, out, _) = check("tma_pipeline.ptx", &["--block", "64"]);
    assert!(out.contains("Warps modelled: every warp (2): the code of each differs\n"), "{out}");
}

#[test]
fn findings_and_hints_name_the_cuda_line_of_each_ptx_line() {
    let cases: &[(&str, &[&str], &str, &str)] = &[
        // The consumer's read of the stage and the TMA load it races with.
        (
            "tma_pipeline-bug.ptx",
            &["--block", "64"],
            "  [U1-read-before-completion]",
            "(P0.0 line 124, tma_pipeline.cu:31) and `ld.shared.u32 %r13, [_ZZ12tma_pipelinePKiPiE4tile]` (P1.0 line 101, tma_pipeline.cu:38)",
        ),
        ("tma_pipeline-bug.ptx", &["--block", "64"], "    hint: the wait", "(P1.0 line 91, tma_pipeline.cu:34)"),
        ("tma_pipeline-bug.ptx", &["--block", "64"], "  P1.0 stuck at", "stuck at line 151 (tma_pipeline.cu:34) `@%p10 bra"),
        (
            "tma_store-bug.ptx",
            &["--block", "4", "--lanes", "0-3"],
            "  [mixed-size-race]",
            "`st.shared.u32 [%r5], %r2` (P0.0 line 34, tma_store.cu:12)",
        ),
        ("tma_store-bug.ptx", &["--block", "4", "--lanes", "0-3"], "    hint: put", "(P0.0 line 49, tma_store.cu:18)"),
    ];
    for (file, flags, lead, mention) in cases {
        let (_, out, err) = check(file, flags);
        assert!(out.lines().any(|l| l.starts_with(lead) && l.contains(mention)), "{file}: no line `{lead}...{mention}...`: {err}\n{out}");
    }
}

/// What `run` and `kernel` both print of a decision: the verdict line and the findings, without
/// the CUDA locations that only the kernel report adds (`line 34, k.cu:12)`, `line 151 (k.cu:40)`).
fn decision(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.starts_with("Verdict:") || l.starts_with("  [") || l.starts_with("Liveness:"))
        // The kernel words run's `Verdict: Forbidden` of the generated `exists (false)` so.
        .map(|l| if l.starts_with("Verdict: none asked") { "Verdict: Forbidden" } else { l })
        .map(|l| {
            let mut kept = String::new();
            let mut rest = l;
            while let Some(at) = rest.find(".cu:") {
                let start = rest[..at].rfind([',', '(']).expect("a CUDA location after `, ` or `(`");
                let digits = rest[at + 4..].find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len() - at - 4);
                let end = at + 4 + digits;
                // ` (k.cu:40)` goes with its parentheses; `, k.cu:12` keeps the `)` that follows.
                let (start, end) = if rest.as_bytes()[start] == b'(' { (start - 1, end + 1) } else { (start, end) };
                kept.push_str(&rest[..start]);
                rest = &rest[end..];
            }
            kept.push_str(rest);
            kept
        })
        .collect()
}

#[test]
fn emitted_litmus_tests_are_decided_the_same_way_by_run() {
    let tmp = std::env::temp_dir().join(format!("ptxmm-kernel-emit-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for p in PAIRS {
        for v in [p.name.to_string(), format!("{}-bug", p.name)] {
            let out_file = tmp.join(format!("{v}.litmus"));
            let mut flags = p.flags.to_vec();
            let out_path = out_file.to_str().unwrap();
            flags.extend_from_slice(&["--emit-litmus", out_path]);
            let (_, kernel_out, err) = check(&format!("{v}.ptx"), &flags);
            assert!(out_file.is_file(), "{v}: no litmus written: {err}");
            let (_, run_out, run_err) = ptxmm(&["run", out_path]);
            assert_eq!(decision(&kernel_out), decision(&run_out), "{v}: kernel and run differ:\n{kernel_out}\n---\n{run_out}\n{run_err}");
            // The body keeps its line numbers: line N of the test is line N of the PTX.
            let litmus = std::fs::read_to_string(&out_file).unwrap();
            let ptx = std::fs::read_to_string(dir().join(format!("{v}.ptx"))).unwrap();
            let (ptx_lines, litmus_lines): (Vec<&str>, Vec<&str>) = (ptx.lines().collect(), litmus.lines().collect());
            let first = ptx_lines.iter().position(|l| *l == "{").unwrap();
            let last = ptx_lines.iter().rposition(|l| *l == "}").unwrap();
            assert_eq!(litmus_lines[first..=last], ptx_lines[first..=last], "{v}: the body moved");
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn register_only_math_is_abstracted_and_reported() {
    let (code, out, err) = ptxmm(&["kernel", "cmd/abstracted.ptx", "--param", "slice_demo_param_1=7", "--assert", "param_0+8 = 7"]);
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(out.contains("Abstracted (3)"), "{out}");
    assert!(out.contains("cmd/abstracted.ptx:24 `fma.rn.f32 %f2, %f1, %f1, %f1`: floating-point arithmetic"), "{out}");
    assert!(out.contains("cmd/abstracted.ptx:25 `sqrt.approx.f32 %f3, %f2`: floating-point arithmetic"), "{out}");
    assert!(out.contains("`shfl.sync.bfly.b32 %r6, %r2, 1, 31, -1`: a warp exchange with lanes the check does not model"), "{out}");
    assert!(out.contains("Assertion `param_0+8 = 7`: holds at the end of every execution"), "{out}");
}

#[test]
fn an_abstracted_value_that_reaches_an_address_is_named_at_its_place() {
    let (code, out, err) = ptxmm(&["kernel", "cmd/reaches_memory.ptx", "--param", "slice_bad_param_1=7"]);
    // A global store at an unknown address is listed as not checked (exit 1: the answer is
    // partial), naming the first instruction that made the address unknown.
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("global store at line(s) 28 (P0): the address depends on `fma.rn.f32 %f2, %f1, %f1, %f1` (line 22), which ptxmm abstracted: floating-point arithmetic"),
        "{out}"
    );
    assert!(out.contains("Summary: no finding; 1 instruction(s) with unknown global addresses not checked"), "{out}");
}

/// A 2-D launch (`%tid.y`, `%ctaid.y`, `%ntid.y`, `%nctaid.y` from `--block X,Y` and `--grid
/// X,Y`), dynamic shared memory (`--dynamic-smem`), and an aggregate parameter bound field by
/// field; each missing piece is named with the flag that gives it.
#[test]
fn two_dimensional_launches_dynamic_shared_memory_and_aggregate_parameters() {
    let base = ["kernel", "cmd/launch2d.ptx", "--block", "32,2", "--grid", "1,2"];
    let with = |extra: &[&str]| ptxmm(&[&base[..], extra].concat());
    let (code, out, err) = with(&[
        "--dynamic-smem",
        "64",
        "--param",
        "param_0+0=buffer:64",
        "--param",
        "param_0+8=5",
        "--assert",
        "param_0_0 = 5 /\\ param_0_0+4 = 5 /\\ param_0_0+16 = 2 /\\ param_0_0+20 = 2",
    ]);
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(out.contains("1x2 CTAs of 32x2 thread(s), 64 bytes of dynamic shared memory"), "{out}");
    assert!(out.contains("holds at the end of every execution"), "{out}");
    let (code, _, err) = with(&["--param", "param_0+0=buffer:64"]);
    assert_eq!(code, 2, "a flag the kernel needs is missing");
    assert!(
        err.contains("`smem` is the kernel's dynamic shared memory (`.extern .shared`): give its size with --dynamic-smem BYTES"),
        "{err}"
    );
    let (code, out, _) = with(&["--dynamic-smem", "64"]);
    assert_eq!(code, 1);
    assert!(
        out.contains("global store at line(s) 37, 42, 43 (P1.0, P3.0): the address depends on bytes 0.. of the kernel parameter `param_0`")
            && out.contains("give --param param_0+0=VALUE"),
        "{out}"
    );
}

/// A finding that holds only under one reading (AMBIG-24: the mbarrier hand-off without
/// fence.proxy.async, CUTLASS's PipelineTmaAsync consumer release) is counted apart in the
/// summary, with what production code does and the flag that accepts the hand-off.
#[test]
fn findings_under_a_reading_are_counted_apart_with_the_flag() {
    let (code, out, _) = ptxmm(&["kernel", "cmd/handoff_no_fence.ptx", "--block", "64"]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("Summary: 1 undefined behaviour (only under a reading, see below)"), "{out}");
    assert!(
        out.contains("Reading AMBIG-24: 1 finding(s) hold only under the default reading") && out.contains("--reading mbarrier-handoff"),
        "{out}"
    );
    assert!(out.contains("PipelineTmaAsync") && out.contains("1.35e9"), "{out}");
    let (code, out, _) = ptxmm(&["kernel", "cmd/handoff_no_fence.ptx", "--block", "64", "--reading", "mbarrier-handoff"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Summary: no finding") && !out.contains("Reading AMBIG-24"), "{out}");
}

#[test]
fn bad_input_is_rejected_with_what_to_do() {
    // Exit status 2 for a bad or missing option (issue 43), 1 for a kernel that cannot be checked.
    let cases: &[(&[&str], &str, i32)] = &[
        (&["kernel", "splitk.ptx", "--entry", "nope", "--block", "32"], "splitk.ptx has no entry `nope`; its entries: _Z6splitkPiPjS_", 2),
        (&["kernel", "splitk.ptx"], "declares no block size (.reqntid or .maxntid): give one with --block X", 2),
        (&["kernel", "splitk.ptx", "--block", "32", "--param", "x=1"], "--param x: the kernel has no such parameter", 2),
        (&["kernel", "splitk.ptx", "--block", "32", "--warps", "3"], "--warps: there is no warp 3 (the launch has 1)", 2),
        (&["kernel", "splitk.ptx", "--block", "32,0"], "--block: expected X, X,Y or X,Y,Z with every size at least 1", 2),
        (
            &["kernel", "splitk.ptx", "--block", "32", "--grid", "200"],
            "the grid has 200 CTAs; ptxmm kernel models at most 64: choose those to model with --ctas",
            2,
        ),
        (&["kernel", "splitk.ptx", "--block", "32", "--param", "param_0=1", "--param", "param_0=2"], "--param param_0 is given twice", 2),
        (&["kernel", "tma_store.ptx", "--block", "64"], "tma_store.ptx:34:2: error: thread P1: the address of byte 128", 1),
    ];
    for (args, message, status) in cases {
        let (code, out, err) = ptxmm(args);
        assert_eq!(code, *status, "{args:?}: {out}{err}");
        assert!(err.contains(message), "{args:?}: expected `{message}` in:\n{err}");
    }
}

#[test]
fn a_module_error_names_its_file_line_and_column() {
    let tmp = std::env::temp_dir().join(format!("ptxmm-kernel-bad-{}.ptx", std::process::id()));
    std::fs::write(&tmp, ".version 8.0\n.target sm_90\n.address_size 64\n.bogus x;\n").unwrap();
    let (code, _, err) = ptxmm(&["kernel", tmp.to_str().unwrap()]);
    let _ = std::fs::remove_file(&tmp);
    assert_eq!(code, 1);
    assert!(err.contains(":4:1: expected a module-scope directive"), "{err}");
}

#[test]
fn a_call_is_rejected_at_its_line() {
    let (code, _, err) = ptxmm(&["kernel", "cmd/call.ptx", "--entry", "_Z2k1Pi", "--block", "32"]);
    assert_eq!(code, 1);
    assert!(err.contains("cmd/call.ptx:56:2: a call: ptxmm kernel models one kernel body, without calls"), "{err}");
    assert!(err.contains("the module's functions: _Z6helperPi"), "{err}");
    let (code, _, err) = ptxmm(&["kernel", "cmd/call.ptx", "--block", "32"]);
    assert_eq!(code, 2, "an entry to choose is an option missing");
    assert!(err.contains("has 2 entries: choose one with --entry (_Z2k1Pi, _Z2k2Pii)"), "{err}");
}

/// nvcc as tests/kernels/build.sh finds it: $NVCC, `nvcc` on the PATH, or the PyPI copy that
/// tests/hw/compile_all.sh installs under ~/.cache/ptxmm-nvcc.
fn nvcc() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("NVCC").map(PathBuf::from).filter(|p| p.is_file()) {
        return Some(p);
    }
    if Command::new("nvcc").arg("--version").output().is_ok_and(|o| o.status.success()) {
        return Some(PathBuf::from("nvcc"));
    }
    let home = std::env::var_os("HOME").map(PathBuf::from)?;
    let cached = home.join(".cache/ptxmm-nvcc/nvidia/cu13/bin/nvcc");
    cached.is_file().then_some(cached)
}

/// Where nvcc is available: each kernel compiled afresh, with and without -DBUG, is decided as
/// its committed PTX is (the correct source, i.e. the hint applied, has no finding).
#[test]
fn kernels_compiled_afresh_decide_as_the_committed_ptx() {
    let Some(nvcc) = nvcc() else {
        eprintln!("skipped: no nvcc (set NVCC, or install it with bash tests/hw/compile_all.sh)");
        return;
    };
    let tmp = std::env::temp_dir().join(format!("ptxmm-kernel-nvcc-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let summary =
        |out: &str| out.lines().filter(|l| l.starts_with("Verdict:") || l.starts_with("Summary:")).map(str::to_string).collect::<Vec<_>>();
    std::thread::scope(|s| {
        for p in PAIRS {
            let (nvcc, tmp) = (&nvcc, &tmp);
            s.spawn(move || {
                for (suffix, define) in [("", None), ("-bug", Some("-DBUG"))] {
                    let fresh = tmp.join(format!("{}{suffix}.ptx", p.name));
                    let mut cmd = Command::new(nvcc);
                    cmd.args(["-arch=sm_90a", "-ptx", "-std=c++17", "-O3", "-lineinfo"])
                        .args(define)
                        .arg(format!("{}.cu", p.name))
                        .arg("-o")
                        .arg(&fresh);
                    let compiled = cmd.current_dir(dir()).output().expect("nvcc runs");
                    assert!(compiled.status.success(), "nvcc {}: {}", p.name, String::from_utf8_lossy(&compiled.stderr));
                    let (_, committed, _) = check(&format!("{}{suffix}.ptx", p.name), p.flags);
                    let (_, recompiled, err) = check(fresh.to_str().unwrap(), p.flags);
                    assert_eq!(summary(&committed), summary(&recompiled), "{}{suffix}: {err}", p.name);
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A check stopped by a limit never says "no finding": the summary says what was not decided,
/// and the exit status is 1. (Every warp of a 1024-thread block is decided in time: warps 2-31
/// run the same runs, so the liveness search takes them up to symmetry; a search budget of two
/// model evaluations stops it.)
#[test]
fn a_check_stopped_by_a_limit_says_so() {
    let every = ["kernel", "tma_pipeline.ptx", "--block", "1024", "--warps", "all"];
    let (code, out, err) = ptxmm(&every);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.ends_with("Summary: no finding\n"), "{out}");
    let (code, out, err) = ptxmm(&[&every[..], &["--max-candidates", "2"]].concat());
    assert_eq!(code, 1, "{out}\n{err}");
    let summary = out.lines().last().unwrap_or("");
    assert!(summary.contains("not decided:") && !summary.ends_with("no finding"), "{out}");
}

/// A tensor map passed by value (`__grid_constant__ const CUtensorMap`) and used through the
/// register nvcc puts its address in: without `--tensor-map` the copy stops at its line naming
/// the flag; with it, the box lands swizzled as the description says, over the tensor `base=`
/// names (the swizzle is what makes the assertion hold).
#[test]
fn a_tensor_map_parameter_is_described_by_its_flag() {
    let words: Vec<String> = (0..128).map(|k| k.to_string()).collect();
    let tensor = format!("param_2={{{}}}", words.join(","));
    let base = ["kernel", "cmd/tma_param_map.ptx", "--block", "32", "--param", "param_1=buffer:8", "--param", &tensor];
    let assert = ["--assert", "param_1 = 32 /\\ param_1+4 = 64"];
    let (code, _, err) = ptxmm(&base);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("cmd/tma_param_map.ptx:37:2: error: thread P0: the tensor copy's map is at `tma_param_map_param_0+0`, which no tensor map describes")
            && err.contains("--tensor-map param_0+0=TYPE,DIMS,box=BOX"),
        "{err}"
    );
    let map = |swizzle: &str| format!("param_0=bf16,64x4,box=64x2,base=param_2{swizzle}");
    let swizzled = map(",swizzle=128B");
    let (code, out, err) = ptxmm(&[&base[..], &["--tensor-map", &swizzled], &assert[..]].concat());
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(
        out.contains("Parameter param_0+0: a tensor map of bf16 64x4 (byte strides 128), box 64x2, swizzle 128B, over `param_2`"),
        "{out}"
    );
    assert!(out.contains("holds at the end of every execution"), "{out}");
    let plain = map("");
    let (code, out, _) = ptxmm(&[&base[..], &["--tensor-map", &plain], &assert[..]].concat());
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("fails in some execution"), "{out}");
    let (code, _, err) = ptxmm(&[&base[..], &["--tensor-map", "param_0=bf16,64x4"]].concat());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--tensor-map param_0+0: give the box"), "{err}");
}

/// A library's shared storage (the tile and the pipeline's mbarriers in one dynamic shared
/// array, cmd/shared_storage.cu): checked as the same pipeline with its own arrays is. The
/// mbarriers are words of the array that mbarrier operations address.
#[test]
fn shared_storage_mixing_mbarriers_and_data_is_checked() {
    let flags = ["--block", "64", "--dynamic-smem", "144"];
    let (code, out, err) = ptxmm(&[&["kernel", "cmd/shared_storage.ptx"][..], &flags].concat());
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Summary: no finding") && out.contains("Liveness: ok"), "{out}");
    // The wrong parity: the consumer reads the tile while the copy may still write it.
    let (code, out, err) = ptxmm(&[&["kernel", "cmd/shared_storage-bug.ptx"][..], &flags].concat());
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("[U1-read-before-completion] the destination write of `cp.async.bulk"), "{out}");
    assert!(out.contains("`ld.shared.u32 %r16, [smem]` (P1.0 line 96, shared_storage.cu:48)"), "{out}");
    // The hint names the mbarrier and the byte count of this execution (issue 44: the operands
    // are registers, and the hint said `its mbarrier` and `<bytes copied>`).
    assert!(out.contains("the expect_tx byte count on `smem+128` is 16"), "{out}");
    assert!(!out.contains("its mbarrier") && !out.contains("<bytes copied>"), "{out}");
    // A copy of 144 bytes into the 128-byte tile runs onto the `full` and `empty` mbarriers
    // (bytes 128 and 136: words 32 and 34 of `smem`).
    let (code, out, err) = ptxmm(&[&["kernel", "cmd/shared_storage-overrun.ptx", "--param", "param_0=buffer:512"][..], &flags].concat());
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        out.contains("[M2-ordinary-write-to-valid-mbarrier] the destination write of `cp.async.bulk")
            && out.contains("overwrites the valid mbarrier object `smem[34]`"),
        "{out}"
    );
}

/// A production kernel whose shared storage mixes mbarriers and tiles (CuTe's wgmma + TMA
/// tutorial) gets past the front end and past the size of its runs: with its launch, parameters
/// and tensor maps given, it stops at the time limit, which names its flag.
#[test]
fn a_production_shared_storage_kernel_gets_past_the_front_end() {
    let entry = std::fs::read_to_string(dir().join("../production/kernels.csv"))
        .unwrap()
        .lines()
        .find(|l| l.starts_with("cute/wgmma_tma_sm90_tn.ptx,"))
        .and_then(|l| l.split(',').nth(2).map(str::to_string))
        .unwrap();
    let map = "f16,256x256,box=64x128,swizzle=128B";
    let (code, out, err) = ptxmm(&[
        "kernel",
        "../production/cute/wgmma_tma_sm90_tn.ptx",
        "--entry",
        &entry,
        "--block",
        "128",
        "--grid",
        "2,2",
        "--cluster",
        "2",
        "--dynamic-smem",
        "98432",
        "--param",
        "param_0+0={256,256,256}",
        "--param",
        "param_6=buffer:131072",
        "--param",
        "param_7+0=256",
        "--tensor-map",
        &format!("param_3={map}"),
        "--tensor-map",
        &format!("param_5={map}"),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(!err.contains("holds both mbarrier objects"), "{err}");
    // Its TMA boxes and wgmma chunks no longer pass --max-events: the words each instance
    // touches together are one event (`exec::trace::survey`); the search is what is left.
    assert!(!err.contains("memory events") && !out.contains("memory events"), "{out}{err}");
    assert!(err.contains("(raise --timeout"), "{err}");
}

/// A kernel's register read before any instruction writes it has an unknown value (nvcc's
/// inline asm reads one as a guarded load's default): stored, the check goes on; in an
/// address, the check stops there, naming the register and its first read.
#[test]
fn a_register_read_before_it_is_written_is_unknown() {
    let (code, out, err) = ptxmm(&["kernel", "cmd/uninitialized.ptx", "--entry", "value", "--block", "32"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Summary: no finding"), "{out}");
    let (code, out, err) = ptxmm(&["kernel", "cmd/uninitialized.ptx", "--entry", "address", "--block", "32"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("global store at line(s) 38 (P0.0): the address depends on the register `%rd4` (first read at line 37): a register has no value before an instruction writes it"),
        "{out}"
    );
}

/// A time limit met after part of `--timeout` went to building the kernel's test names the
/// limit the user gave, not what was left of it.
#[test]
fn a_kernel_time_limit_names_the_timeout_given() {
    let (code, _, err) = ptxmm(&["kernel", "cmd/shared_storage.ptx", "--block", "64", "--dynamic-smem", "144", "--timeout", "0.000001"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("time limit of 0.000001 s"), "{err}");
}

/// Issue 43, wrong answer 1: two warps that run a register loop past the default unrolling
/// bound and then store to the same word race; the grouping of warps by their code must see the
/// store (it took the runs it cut for runs that write nothing, kept one warp and found nothing).
/// A loop past the grouping's own bound keeps its warps, saying so.
#[test]
fn the_warp_grouping_sees_the_writes_after_a_loop() {
    let (code, out, err) = ptxmm(&["kernel", "cmd/loop_then_store.ptx", "--block", "64"]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("Warps modelled: every warp (2): warps that run the same code are kept in twos"), "{out}");
    assert!(out.contains("Data races (1):") && out.contains("st.global.u32 [%rd2], %r4"), "{out}");
    let long = std::fs::read_to_string(dir().join("cmd/loop_then_store.ptx")).unwrap().replace("%r3, 3;", "%r3, 40;");
    let path = std::env::temp_dir().join(format!("ptxmm-loop40-{}.ptx", std::process::id()));
    std::fs::write(&path, long).unwrap();
    let (_, out, _) = ptxmm(&["kernel", path.to_str().unwrap(), "--block", "96"]);
    let _ = std::fs::remove_file(&path);
    assert!(out.contains("Warps modelled: every warp (3): no two are known to run the same code (warps 0-2 kept: a loop of theirs runs past 16 iterations"), "{out}");
}

/// Issue 43, wrong answer 2: an `--assert` naming nothing of the kernel is an error naming the
/// flag and what it may mean, not a fresh zero-filled location that trivially holds.
#[test]
fn an_assertion_naming_nothing_of_the_kernel_is_an_error() {
    let (code, out, err) = ptxmm(&["kernel", "cmd/loop_then_store.ptx", "--block", "64", "--assert", "parm_0 = 0"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("error: --assert `parm_0 = 0`: the condition names `parm_0`, which is no variable, parameter or register of the kernel; did you mean `param_0`?"),
        "{err}"
    );
    let (code, out, _) = ptxmm(&["kernel", "cmd/loop_then_store.ptx", "--block", "64", "--warps", "all", "--assert", "param_0 = 3"]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("Assertion `param_0 = 3`: holds at the end of every execution"), "{out}");
}

/// Issue 43, item 8: `--emit-litmus` naming the kernel's own PTX file is refused (it overwrote
/// the module); a `--cluster` other than the kernel's `.reqnctapercluster` is refused as the
/// launch would be (unit-tested in `kernel::launch`).
#[test]
fn emit_litmus_never_overwrites_the_kernel() {
    let tmp = std::env::temp_dir().join(format!("ptxmm-victim-{}.ptx", std::process::id()));
    let text = std::fs::read_to_string(dir().join("cmd/loop_then_store.ptx")).unwrap();
    std::fs::write(&tmp, &text).unwrap();
    let p = tmp.to_str().unwrap();
    let (code, _, err) = ptxmm(&["kernel", p, "--block", "64", "--emit-litmus", p]);
    let after = std::fs::read_to_string(&tmp).unwrap();
    let _ = std::fs::remove_file(&tmp);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("that is the kernel's own PTX file"), "{err}");
    assert_eq!(after, text);
}

/// Issue 38 (unknown values, said plainly): a global access whose address depends on a parameter
/// byte not given is not a rejection of the kernel: it has no events, the report lists it with
/// the flag that gives the byte, and the rest is checked. Given the byte, it is checked.
#[test]
fn global_accesses_at_unknown_addresses_are_listed_as_not_checked() {
    let (code, out, err) = ptxmm(&["kernel", "cmd/unknown_index.ptx", "--block", "64"]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("Not checked (2 instruction(s))"), "{out}");
    assert!(
        out.contains("global load at line(s) 28 (P0.0, P1.0): the address depends on bytes 0.. of the kernel parameter `param_2`"),
        "{out}"
    );
    assert!(out.contains("global store at line(s) 30 (P0.0, P1.0)") && out.contains("give --param param_2+0=VALUE"), "{out}");
    assert!(out.contains("Data races (1):") && out.contains("st.global.u32 [%rd4], %r4"), "{out}");
    assert!(out.contains("2 instruction(s) with unknown global addresses not checked"), "{out}");
    let (code, out, err) = ptxmm(&["kernel", "cmd/unknown_index.ptx", "--block", "64", "--param", "param_2=3"]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(!out.contains("Not checked"), "{out}");
}

/// A real wgmma matrix descriptor of an N-major B operand (`imm-trans-b` 1, A in registers, so
/// the flag is the seventh operand) reads the bytes of the ISA's canonical MN-major layout: a
/// generic store to one of them without `fence.proxy.async` is undefined, a store to a byte only
/// the K-major layout reads is not; with `imm-trans-b` 0 the K-major bytes are the ones read.
#[test]
fn an_mn_major_wgmma_operand_reads_its_canonical_layout() {
    let run = |file: &str, at: u32| {
        let (code, out, err) = ptxmm(&["kernel", file, "--block", "32", "--param", &format!("at={at}"), "--color", "never"]);
        assert!(err.is_empty(), "{err}");
        (code, out)
    };
    for at in [0, 144, 1024] {
        let (code, out) = run("cmd/wgmma_mn_major.ptx", at);
        assert_eq!(code, 3, "{out}");
        assert!(out.contains("Summary: 1 undefined behaviour") && out.contains("put a `fence.proxy.async` between"), "at {at}: {out}");
    }
    for at in [16, 1040] {
        let (code, out) = run("cmd/wgmma_mn_major.ptx", at);
        assert_eq!(code, 0, "{out}");
        assert!(out.contains("Summary: no finding"), "at {at}: {out}");
    }
    let k_major = std::fs::read_to_string(dir().join("cmd/wgmma_mn_major.ptx")).unwrap().replace("%rd2, 1, 1, 1, 1;", "%rd2, 1, 1, 1, 0;");
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("wgmma_k_major.ptx");
    std::fs::write(&path, k_major).unwrap();
    let path = path.to_str().unwrap();
    assert_eq!(run(path, 16).0, 3, "K-major B reads row 0's second chunk");
    assert_eq!(run(path, 1024).0, 0, "K-major B of 8 rows stops before the second group");
}

/// CUB's decoupled look-back scan (`tests/production`) votes across the warp and shuffles by
/// the vote: every lane computes it, lane 0 alone cannot (the other lanes' votes are unknown).
/// Where every lane does not finish in its half of the time, its partial answer is the report,
/// not lane 0's error, and `Lanes modelled` says both.
#[test]
fn where_lane_zero_cannot_stand_in_the_partial_check_with_every_lane_is_the_answer() {
    let ptx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/production/cub/device_scan_inclusive_sum.ptx");
    let entry = "_ZN3cub16_V_300500_SM_9006detail4scan16DeviceScanKernelINS2_26policy_selector_from_typesIPKiPiijN4cuda3std3__44plusIvEELb0EEES6_S7_NS0_13ScanTileStateIiLb1EEESC_NS0_8NullTypeEjiLb0ELb0ESG_EEvT0_T1_NS2_23tile_state_kernel_arg_tIT2_T6_EEiT3_T4_T5_i";
    let params = [
        "param_3=0",
        "param_4=0",
        "param_5=0",
        "param_6=12288",
        "param_7=1",
        "param_0=buffer:49152",
        "param_1=buffer:49152",
        "param_2+0=buffer:1024",
    ];
    let mut args =
        vec!["kernel", ptx.to_str().unwrap(), "--entry", entry, "--block", "128", "--grid", "4", "--timeout", "10", "--color", "never"];
    for p in &params {
        args.extend(["--param", p]);
    }
    let (code, out, err) = ptxmm(&args);
    assert_eq!(code, 1, "{err}\n{out}");
    assert!(
        out.contains("Lanes modelled: every lane of each warp modelled (the default), within half of the time: the check did not finish ("),
        "{out}"
    );
    // Lane 0 meets the vote it cannot compute, or (on a slower machine) stops before it.
    assert!(
        out.contains("lane 0 of each warp, checked in the other half, cannot stand in: thread P4: `%r801` is unknown here: its value comes from `vote.sync.ballot.b32")
            || out.contains("lane 0 of each warp, checked in the other half, did not finish either ("),
        "{out}"
    );
    assert!(
        out.contains("Abstracted: nothing (every instruction is modelled)") && out.contains("Summary: no finding so far; not decided"),
        "{out}"
    );
}

/// A 4-warp-group ring (`cmd/wg_ring.cu`, 512 threads) whose `empty` counts the 12 consumer
/// warps: the warp grouping keeps 2 of them, which hang at `pending 10/12`. Where the check with
/// every warp does not finish, that hang is not a finding: it is listed as not decided (exit 1),
/// with the warps left out named.
#[test]
fn a_hang_of_warps_left_out_that_every_warp_does_not_confirm_is_not_decided() {
    let (code, out, err) = check(
        "cmd/wg_ring.ptx",
        &[
            "--block",
            "512",
            "--lanes",
            "0",
            "--param",
            "param_0=buffer:512",
            "--param",
            "param_1=buffer:8192",
            "--timeout",
            "4",
            "--color",
            "never",
        ],
    );
    assert_eq!(code, 1, "{err}\n{out}");
    assert!(out.contains("the check with every warp (--warps all) did not finish within the limits"), "{out}");
    assert!(
        out.ends_with(
            "not decided: a hang found with warps 2-3,6-15 left out, which a count of the warps left out can cause (see Warps modelled)\n"
        ),
        "{out}"
    );
    assert!(!out.contains("Summary: a hang"), "{out}");
}

/// Per-lane arrival counts on one phase (`cmd/lane_arrivals.cu`): the 32 lanes of warp 1 each
/// arrive on `ready`, which counts 32. Their arrivals are interchangeable, so the mbarrier's
/// graph places them in one order (33 states, not 2^32) and every lane decides: the correct
/// kernel has no finding, and with lane 31 leaving out its arrival the waiting lane 0 hangs at
/// `pending 1/32`, a finding (not the lane-0 fallback's "not decided").
#[test]
fn thirty_two_lanes_arriving_on_one_phase_are_decided_with_every_lane() {
    let run = |file: &str| check(file, &["--block", "64", "--param", "param_0=buffer:128", "--color", "never"]);
    let (code, out, err) = run("cmd/lane_arrivals.ptx");
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(out.contains("Lanes modelled: every lane of each warp modelled (the default)\n"), "{out}");
    assert!(out.contains("Liveness: ok") && out.ends_with("Summary: no finding\n"), "{out}");
    let (code, out, err) = run("cmd/lane_arrivals-bug.ptx");
    assert_eq!(code, 3, "{err}\n{out}");
    assert!(out.contains("Lanes modelled: every lane of each warp modelled (the default)\n"), "{out}");
    assert!(out.contains("it keeps reading _ZZ13lane_arrivalsPiE5ready in state (phase 0, pending 1/32, tx 0)"), "{out}");
    assert!(out.ends_with("Summary: a hang\n"), "{out}");
}

/// The same ring whose `empty` mbarriers count 8 lanes, the 8 lanes of each warp modelled
/// (`--lanes 0-7`): decided with every lane it has. The arrivals of the 8 consumer lanes are
/// unordered among themselves, but each comes after the `bar.sync` that follows the
/// `mbarrier.init`, and the model's order puts it after the init before anything is chosen: the
/// histories of the mbarrier that place an arrival first are never built. The correct ring has no
/// finding; with lane 7 leaving out its arrival the producer's wait on `empty` hangs at 1 of 8.
#[test]
fn a_ring_counting_eight_lanes_is_decided_with_its_eight_lanes() {
    // The count is the one `mov.u32 %rN, 32;` of each file; the buggy one skips lane 31's arrival.
    let eight = |file: &str, name: &str, skip_lane_7: bool| {
        let text = std::fs::read_to_string(dir().join(file)).unwrap();
        let mut counted = text.replace("%r13, 32;", "%r13, 8;").replace("%r12, 32;", "%r12, 8;");
        assert_ne!(counted, text, "{file}: the count of `empty` was not found");
        if skip_lane_7 {
            assert!(counted.contains("%r2, 31;"), "{file}: the lane that skips its arrival was not found");
            counted = counted.replace("%r2, 31;", "%r2, 7;");
        }
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
        std::fs::write(&path, counted).unwrap();
        path
    };
    let flags = ["--block", "64", "--lanes", "0-7", "--param", "param_0=buffer:512", "--param", "param_1=buffer:512", "--color", "never"];
    let correct = eight("cmd/lane_counts.ptx", "lane_counts_8.ptx", false);
    let (code, out, err) = ptxmm(&[&["kernel", correct.to_str().unwrap()][..], &flags].concat());
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(out.contains("Liveness: ok") && out.ends_with("Summary: no finding\n"), "{out}");
    let buggy = eight("cmd/lane_counts-bug.ptx", "lane_counts_8-bug.ptx", true);
    let (code, out, err) = ptxmm(&[&["kernel", buggy.to_str().unwrap()][..], &flags].concat());
    assert_eq!(code, 3, "{err}\n{out}");
    assert!(out.contains("it keeps reading _ZZ11lane_countsPKiPiE5empty in state (phase 0, pending 1/8, tx 0)"), "{out}");
    assert!(!out.contains("Lanes modelled: lane 0") && out.ends_with("Summary: a hang\n"), "{out}");
}

/// The wall of every lane (issue 39, `cmd/lane_counts.cu`): a 2-stage TMA ring whose `empty`
/// mbarriers count the 32 consumer lanes, 4 laps. With every lane the mbarrier's reachable
/// states pass the limit, so the default check falls back to lane 0, which cannot make up the
/// count: its hang is listed as not decided (exit 1), never as a finding, and `Lanes modelled`
/// says why. (Where every lane decides this kernel, the correct version must have no finding and
/// the buggy one the hang of the arrival lane 31 leaves out.)
#[test]
fn where_every_lane_does_not_finish_lane_zero_stands_in_and_its_hang_is_not_decided() {
    for file in ["cmd/lane_counts.ptx", "cmd/lane_counts-bug.ptx"] {
        let (code, out, err) =
            check(file, &["--block", "64", "--param", "param_0=buffer:512", "--param", "param_1=buffer:512", "--color", "never"]);
        assert_eq!(code, 1, "{file}: {err}\n{out}");
        assert!(
            out.contains("Lanes modelled: lane 0 of each warp: the check with every lane (the default) did not finish within half of the time (mbarrier `_ZZ11lane_countsPKiPiE5empty` has more than"),
            "{file}:\n{out}"
        );
        assert!(out.contains("Liveness: may hang") && !out.contains("Summary: a hang"), "{file}:\n{out}");
        assert!(
            out.ends_with("not decided: a hang found with lane 0 of each warp only, which a count of the lanes left out can cause (see Lanes modelled)\n"),
            "{file}:\n{out}"
        );
    }
}
