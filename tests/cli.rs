//! The command line: herd7's block byte for byte, JSON, suite mode and exit codes.

use assert_cmd::Command;

fn ptxmm() -> Command {
    Command::cargo_bin("ptxmm").unwrap()
}

#[test]
fn run_prints_herd_block() {
    let out = ptxmm().args(["run", "examples/MP.litmus"]).output().unwrap();
    assert!(out.status.success());
    // The verdict leads; herd7's block follows byte for byte (its `Test MP Allowed` is the
    // test's kind, from `exists`, not the answer); then what ptxmm adds.
    let expected = "Verdict: Forbidden\n\
Test MP Allowed\n\
States 3\n\
1:r0=0; 1:r1=0;\n\
1:r0=0; 1:r1=1;\n\
1:r0=1; 1:r1=1;\n\
No\n\
Witnesses\n\
Positive: 0 Negative: 3\n\
Flag data-race\n\
Condition exists (1:r0=1 /\\ 1:r1=0)\n\
Observation MP Never 0 3\n\
Hash=0db2240ebba04014\n\
Data races (1):\n  [data-race] `st.weak x, 1` (P0 line 8) and `ld.weak r1, x` (P1 line 9)\n    hint: a weak access";
    assert!(String::from_utf8_lossy(&out.stdout).starts_with(expected), "got:\n{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn not_exists_swaps_witnesses() {
    let out = ptxmm().args(["run", "tests/litmus/LB-data-deps.litmus"]).output().unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.starts_with("Verdict: Forbidden\nTest LB-data-deps Forbidden\n"), "{s}");
    assert!(s.contains("\nOk\n"), "{s}");
    // herd7 swaps the witness counts for ~exists: Positive counts the executions that do NOT
    // satisfy the proposition, while Observation keeps the raw counts.
    assert!(s.contains("Positive: 3 Negative: 0"), "{s}");
    assert!(s.contains("Observation LB-data-deps Never 0 3"), "{s}");
    // forall: Required
    let out = ptxmm().args(["run", "tests/litmus/SB-fence-sc.litmus"]).output().unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("\nTest SB-fence-sc Required\n") && s.starts_with("Verdict: "), "{s}");
    assert!(s.contains("\nOk\n"));
    // Executions are counted once per reads-from and coherence: the fence-SC order only has to
    // exist (it never changes the final state), so the state 0:r0=1; 1:r1=1 counts once.
    assert!(s.contains("Observation SB-fence-sc Always 3 0"), "{s}");
}

#[test]
fn json_has_the_same_facts() {
    let out = ptxmm().args(["run", "--json", "examples/MP.litmus"]).output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["test"], "MP");
    assert_eq!(v["result"], "No");
    assert_eq!(v["ok"], false);
    assert_eq!(v["positive"], 0);
    assert_eq!(v["negative"], 3);
    assert_eq!(v["states"].as_array().unwrap().len(), 3);
    assert_eq!(v["observation"], "Never");
}

#[test]
fn suite_mode_reports_counts_and_exit_code() {
    let out = ptxmm().args(["suite", "tests/expected-ptx-7.5.csv", "--model", "ptx-7.5"]).output().unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{s}");
    assert!(s.lines().any(|l| l == "27 passed, 0 failed"), "{s}");
    // The same expectations do not all hold under ptx-6.0 (no aliases there): exit code 1.
    let out = ptxmm().args(["suite", "tests/expected-ptx-7.5.csv", "--model", "ptx-6.0"]).output().unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(s.contains("MISMATCH") && s.contains("CoWR-alias-nofence"), "{s}");
}

#[test]
fn any_cat_file_runs() {
    let dir = std::env::temp_dir().join(format!("ptxmm-cat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cat = dir.join("sc.cat");
    std::fs::write(&cat, "SC\n(* sequential consistency, for comparison *)\nlet fr = rf^-1 ; co\nacyclic (po | rf | co | fr) as sc\n")
        .unwrap();
    let out = ptxmm().args(["run", "--cat", cat.to_str().unwrap(), "tests/litmus/SB-fence-acq-rel.litmus"]).output().unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("\nNo\n"), "SC forbids the SB outcome:\n{s}");
    std::fs::write(&cat, "SC\nacyclic (po | rf | bogus) as sc\n").unwrap();
    let out = ptxmm().args(["run", "--cat", cat.to_str().unwrap(), "tests/litmus/SB-fence-acq-rel.litmus"]).output().unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bogus"));
}

// ---- asynchronous operations: verdicts, findings, readings ---------------------------------------

fn stdout_of(args: &[&str]) -> String {
    let out = ptxmm().args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "ptxmm {args:?} failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

#[test]
fn async_wait_group_is_forbidden() {
    let s = stdout_of(&["run", "tests/async/S1-wait-group.litmus"]);
    assert!(s.lines().any(|l| l == "Verdict: Forbidden"), "{s}");
    assert!(!s.contains("Undefined behaviour"), "{s}");
}

#[test]
fn async_read_before_completion_is_undefined_with_both_lines() {
    let s = stdout_of(&["run", "tests/async/S1b-no-wait.litmus"]);
    assert!(s.lines().any(|l| l == "Verdict: Undefined"), "{s}");
    // The section lists the finding under its rule, naming the copy (line 9) and the load (line 10).
    let section: Vec<&str> = s.lines().skip_while(|l| !l.starts_with("Undefined behaviour (")).collect();
    assert!(!section.is_empty(), "no `Undefined behaviour` section:\n{s}");
    let finding = section.iter().find(|l| l.contains("[U1-read-before-completion]")).unwrap_or_else(|| panic!("{s}"));
    assert!(finding.contains("cp.async.ca.shared.global [s], [g], 4` (P0 line 9)"), "{finding}");
    assert!(finding.contains("ld.shared.u32 r0, [s]` (P0 line 10)"), "{finding}");
}

#[test]
fn async_missing_proxy_fence_is_named() {
    let s = stdout_of(&["run", "tests/async/S6a-tma-store-no-proxy-fence.litmus"]);
    assert!(s.lines().any(|l| l == "Verdict: Undefined"), "{s}");
    let lines: Vec<&str> = s.lines().collect();
    let at = lines.iter().position(|l| l.trim_start().starts_with('[') && l.contains("cp.async.bulk")).unwrap_or_else(|| panic!("{s}"));
    // The hint is its own line under the finding.
    let hint = lines.get(at + 1).copied().unwrap_or_default();
    assert!(
        hint.trim_start().starts_with("hint: ") && hint.contains("fence.proxy.async"),
        "the hint should name the missing fence: {hint}"
    );
}

#[test]
fn reading_flag_changes_verdict_and_is_reported() {
    let default = stdout_of(&["run", "tests/async/S7-wait-read-then-overwrite.litmus"]);
    assert!(default.lines().any(|l| l == "Verdict: Forbidden"), "{default}");
    assert!(default.lines().any(|l| l == "Readings: defaults of every ambiguity (see --reading)"), "{default}");
    let alt = stdout_of(&["run", "--reading", "read-wait-without-fence", "tests/async/S7-wait-read-then-overwrite.litmus"]);
    assert!(alt.lines().any(|l| l == "Verdict: Undefined"), "{alt}");
    // With an alternative selected, `Readings:` lists every ambiguity and marks the selected one.
    let readings: Vec<&str> = alt.lines().skip_while(|l| *l != "Readings:").skip(1).take_while(|l| l.starts_with("  ")).collect();
    let selected = readings.iter().find(|l| l.contains("AMBIG-13")).unwrap_or_else(|| panic!("no AMBIG-13 line:\n{alt}"));
    assert!(selected.contains("alternative") && selected.contains("read-wait-without-fence"), "{selected}");
    assert!(readings.iter().filter(|l| l.contains(" default: ")).count() == readings.len() - 1, "{alt}");
    // The ambiguity id selects the same reading.
    let by_id = stdout_of(&["run", "--reading", "AMBIG-13", "tests/async/S7-wait-read-then-overwrite.litmus"]);
    assert!(by_id.lines().any(|l| l == "Verdict: Undefined"), "{by_id}");
}

#[test]
fn unknown_reading_is_a_usage_error() {
    let out = ptxmm().args(["run", "--reading", "no-such-flag", "tests/async/S1-wait-group.litmus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown reading `no-such-flag`"), "{stderr}");
    for flag in ptxmm::config::readings::AMBIGUITIES.iter().map(|a| a.flag) {
        assert!(stderr.contains(flag), "the message should list `{flag}`: {stderr}");
    }
    assert!(out.stdout.is_empty(), "nothing is run: {}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn async_json_has_verdict_and_undefined() {
    let out = ptxmm().args(["run", "--json", "tests/async/S1b-no-wait.litmus"]).output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "Undefined");
    let undefined = v["undefined"].as_array().expect("`undefined` is an array");
    assert!(undefined.iter().any(|f| f["rule"] == "U1-read-before-completion"), "{v}");
    assert!(v["readings"].as_array().is_some_and(|r| r.len() == ptxmm::config::readings::AMBIGUITIES.len()), "{v}");
    let out = ptxmm().args(["run", "--json", "tests/async/S1-wait-group.litmus"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "Forbidden");
    assert_eq!(v["undefined"].as_array().map(Vec::len), Some(0), "{v}");
}

/// Suite mode also reads ptxmm's verdict CSVs (`path,Verdict[,Liveness]`), such as
/// tests/async/expected.csv, and reports a mismatch in the same terms.
#[test]
fn suite_mode_reads_verdict_rows() {
    let dir = std::env::temp_dir().join(format!("ptxmm-verdicts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("expected.csv");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/async");
    std::fs::write(&csv, "S1-wait-group.litmus,Forbidden,ok\nS1b-no-wait.litmus,Undefined\nS4b-no-await.litmus,Allowed,ok\n").unwrap();
    let out = ptxmm().args(["suite", csv.to_str().unwrap(), "--root", root.to_str().unwrap()]).output().unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{s}");
    assert!(s.lines().any(|l| l == "2 passed, 1 failed"), "{s}");
    assert!(s.contains("S4b-no-await.litmus expected Allowed,ok, got Undefined,ok"), "{s}");
}

/// A limit that stops the search gives the partial result, said plainly: the herd block with
/// what was found (its answer `Undef` when not settled), `Verdict: Unknown`, the limit and the
/// flag that raises it, and a failing exit code.
#[test]
fn a_limit_gives_a_partial_result() {
    let out = ptxmm()
        .args(["run", "--liveness", "skip", "--max-candidates", "10", "tests/async/pipeline-ring-2stage-2consumer-2laps.litmus"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("\nUndef\n"), "{s}");
    assert!(s.contains("Verdict: Unknown\n"), "{s}");
    assert!(s.contains("Incomplete: the search exceeded its budget of 10 model evaluations"), "{s}");
    assert!(s.contains("raise --max-candidates"), "{s}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not decided"));

    // The same through the time limit (a deadline already past at the first check).
    let out = ptxmm().args(["run", "--timeout", "0.000001", "tests/async/pipeline-ring-2stage-2consumer-2laps.litmus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("time limit") && err.contains("--timeout"), "{err}");

    // In JSON, the verdict is Unknown and the reason is a field.
    let out = ptxmm()
        .args(["run", "--json", "--liveness", "skip", "--max-candidates", "10", "tests/async/pipeline-ring-2stage-2consumer-2laps.litmus"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "Unknown");
    assert!(v["incomplete"].as_str().unwrap().contains("--max-candidates"));
    assert_eq!(v["result"], "Undef");
}

/// The number of distinct final states kept is bounded: beyond `--max-states` the search stops
/// with the states found so far, names the flag, and the verdict is Unknown; at the bound
/// exactly it completes.
#[test]
fn the_final_states_kept_are_bounded() {
    // examples/MP.litmus has three final states (r0, r1) under the default model.
    let out = ptxmm().args(["run", "--liveness", "skip", "--max-states", "2", "examples/MP.litmus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("States 2\n"), "{s}");
    assert!(s.contains("Verdict: Unknown\n"), "{s}");
    assert!(s.contains("more than 2 distinct final states") && s.contains("raise --max-states"), "{s}");
    let out = ptxmm().args(["run", "--liveness", "skip", "--max-states", "3", "examples/MP.litmus"]).output().unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("States 3\n") && !s.contains("Unknown"), "{s}");
}

/// Undefined behaviour found before a limit stops the search settles the verdict; without it
/// the verdict is Unknown. (Budgets from small to large: the search finds the race part of the
/// way through this test.)
#[test]
fn undefined_behaviour_found_before_a_limit_is_the_verdict() {
    let mut seen_partial_undefined = false;
    for budget in [10, 50, 100, 200, 400, 800, 1600] {
        let out = ptxmm()
            .args(["run", "--liveness", "skip", "--max-candidates", &budget.to_string(), "tests/async/pipeline-ring-no-proxy-fence.litmus"])
            .output()
            .unwrap();
        let s = String::from_utf8_lossy(&out.stdout);
        let found = s.contains("Undefined behaviour (");
        assert_eq!(s.contains("Verdict: Undefined\n"), found, "{s}");
        if s.contains("Incomplete:") {
            assert!(found || s.contains("Verdict: Unknown\n"), "{s}");
            seen_partial_undefined |= found;
        }
    }
    assert!(seen_partial_undefined, "some budget stops the search after the race was found");
}

// ---- input forms, colour, suite options (issue 10) -----------------------------------------------

/// A scratch folder for one test.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ptxmm-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `NO_COLOR` (set and non-empty) turns colour off; `--color always|never` decides explicitly.
#[test]
fn no_color_and_the_color_flag() {
    let bad = "tests/bad/missing-semicolon.litmus";
    let stderr = |args: &[&str], no_color: Option<&str>| {
        let mut cmd = ptxmm();
        cmd.args(args);
        match no_color {
            Some(v) => cmd.env("NO_COLOR", v),
            None => cmd.env_remove("NO_COLOR"),
        };
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(stderr(&["--color", "always", "run", bad], None).contains('\u{1b}'), "--color always colours");
    assert!(stderr(&["run", "--color", "always", bad], Some("")).contains('\u{1b}'), "an empty NO_COLOR is ignored");
    for (args, no_color) in [(&["run", bad][..], Some("1")), (&["--color", "never", "run", bad], None), (&["run", bad], None)] {
        let s = stderr(args, no_color);
        assert!(!s.contains('\u{1b}'), "{args:?} NO_COLOR={no_color:?}: {s:?}");
        assert!(s.contains("missing-semicolon.litmus:4:33"), "{s}");
    }
}

/// A folder stands for every `*.litmus` file below it, sorted; `-` reads standard input.
#[test]
fn folders_and_standard_input() {
    let dir = scratch("dir-input");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::copy("examples/MP.litmus", dir.join("b.litmus")).unwrap();
    std::fs::copy("tests/litmus/SB-fence-sc.litmus", dir.join("sub/a.litmus")).unwrap();
    std::fs::copy("tests/litmus/LB-data-deps.litmus", dir.join("a.litmus")).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a test").unwrap();
    let s = stdout_of(&["run", "--liveness", "skip", dir.to_str().unwrap()]);
    let tests: Vec<&str> = s.lines().filter(|l| l.starts_with("Test ")).collect();
    assert_eq!(tests, ["Test LB-data-deps Forbidden", "Test MP Allowed", "Test SB-fence-sc Required"], "{s}");

    let empty = scratch("dir-empty");
    let out = ptxmm().args(["run", empty.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no `*.litmus` file"));

    let out = ptxmm().args(["run", "--json", "-"]).write_stdin(std::fs::read("examples/MP.litmus").unwrap()).output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["file"].as_str(), v["test"].as_str(), v["verdict"].as_str()), (Some("<stdin>"), Some("MP"), Some("Forbidden")));

    let out = ptxmm().args(["run", "-"]).write_stdin("PTX broken\n{ x=0; }\n P0 ;\n st.weak x, 1\n").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("<stdin>:"), "{}", String::from_utf8_lossy(&out.stderr));

    let out = ptxmm().args(["explain", "-"]).write_stdin(std::fs::read("examples/MP.litmus").unwrap()).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("Test MP: the outcome"));
}

/// `explain` takes several tests (and folders); `--dot`/`--svg` draw exactly one.
#[test]
fn explain_takes_several_tests() {
    let s = stdout_of(&["explain", "examples/MP.litmus", "tests/litmus/MP-relaxed.litmus"]);
    let heads: Vec<&str> = s.lines().filter(|l| l.starts_with("Test ")).collect();
    assert_eq!(heads.len(), 2, "{s}");
    assert!(heads[0].starts_with("Test MP:") && heads[1].starts_with("Test MP-relaxed:"), "{s}");
    let out = ptxmm().args(["explain", "--json", "examples/MP.litmus", "tests/bad/missing-semicolon.litmus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["file"], "examples/MP.litmus");
    assert!(lines[1]["test"].is_null() && lines[1]["error"]["message"].as_str().unwrap().contains("expected `;`"));
    let out = ptxmm().args(["explain", "--dot", "examples/MP.litmus", "tests/litmus/MP-relaxed.litmus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A malformed test among others: its record says where, the others are decided, exit code 1.
#[test]
fn a_malformed_test_has_a_json_record() {
    let out = ptxmm().args(["run", "--json", "examples/MP.litmus", "tests/bad/undefined-register.litmus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["verdict"], "Forbidden");
    let e = &lines[1];
    assert_eq!(e["schema_version"], 1);
    assert!(e["test"].is_null());
    assert_eq!((e["error"]["line"].as_u64(), e["error"]["column"].as_u64()), (Some(4), Some(13)));
    assert!(e["error"]["message"].as_str().unwrap().contains("undefined register `r5`"));
    assert!(e["error"]["rendered"].as_str().unwrap().contains("undefined-register.litmus:4:13"));
}

/// `suite --liveness` takes `check|skip|only` as `run` does; a bare `--liveness` still means `only`.
#[test]
fn suite_liveness_takes_a_mode() {
    let dir = scratch("suite-liveness");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/liveness");
    let root = root.to_str().unwrap();
    // `1|0` rows: `1` means every fair execution terminates (with --liveness only).
    let csv = dir.join("live.csv");
    std::fs::write(&csv, "barrier-count-met.litmus,1\nbarrier-count-too-high.litmus,0\n").unwrap();
    let csv = csv.to_str().unwrap();
    for args in [
        &["suite", csv, "--root", root, "--liveness", "only"][..],
        &["suite", csv, "--root", root, "--liveness"],
        &["suite", "--liveness=only", csv, "--root", root],
        &["suite", "--liveness", csv, "--root", root],
    ] {
        let s = stdout_of(args);
        assert!(s.lines().any(|l| l == "2 passed, 0 failed"), "{args:?}: {s}");
    }
    // Verdict rows with a wrong liveness column: checked by default, ignored with `skip`.
    let rows = dir.join("verdicts.csv");
    std::fs::write(&rows, "barrier-count-too-high.litmus,Inconclusive,ok\n").unwrap();
    let rows = rows.to_str().unwrap();
    let out = ptxmm().args(["suite", rows, "--root", root, "--liveness", "check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    let s = stdout_of(&["suite", rows, "--root", root, "--liveness", "skip"]);
    assert!(s.lines().any(|l| l == "1 passed, 0 failed"), "{s}");
    let out = ptxmm().args(["suite", rows, "--liveness", "sometimes"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected `check`, `skip` or `only`, found `sometimes`"));
}

/// A CSV named like Dat3M's liveness expectations (`…-Liveness-expected.csv`) is read as
/// liveness rows without `--liveness` (issue 27: it was quietly compared with the conditions),
/// with a note; `--liveness check` still compares the conditions.
#[test]
fn suite_recognises_a_liveness_csv_by_its_name() {
    let dir = scratch("suite-liveness-name");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/liveness");
    let root = root.to_str().unwrap();
    // As liveness rows both pass; as condition rows the second fails (its condition holds,
    // yet it may hang).
    let csv = dir.join("PTX-Liveness-expected.csv");
    std::fs::write(&csv, "barrier-count-met.litmus,1\nspin-flag-reset.litmus,0\n").unwrap();
    let csv = csv.to_str().unwrap();
    let out = ptxmm().args(["suite", csv, "--root", root]).output().unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.lines().any(|l| l == "2 passed, 0 failed"), "{s}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("read as a liveness CSV"));
    let plain = dir.join("plain.csv");
    std::fs::copy(csv, &plain).unwrap();
    let s =
        String::from_utf8_lossy(&ptxmm().args(["suite", plain.to_str().unwrap(), "--root", root]).output().unwrap().stdout).into_owned();
    assert!(!s.lines().any(|l| l == "2 passed, 0 failed"), "{s}");
}

/// A CSV row with an unknown verdict word is rejected with the list of the accepted ones.
#[test]
fn suite_csv_error_lists_the_verdict_words() {
    let dir = scratch("suite-words");
    let csv = dir.join("bad.csv");
    std::fs::write(&csv, "S1-wait-group.litmus,Forbiden\n").unwrap();
    let out = ptxmm().args(["suite", csv.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.csv:1:22"), "{err}");
    for w in ptxmm::decide::suite::VERDICT_WORDS {
        assert!(err.contains(w), "`{w}` is not listed: {err}");
    }
    assert!(ptxmm::decide::suite::VERDICT_WORDS.contains(&"Inconclusive"));
}

/// A condition names a word as the state lines print it (`g[3]`) or by its byte offset
/// (`g+12`): the same word, the same answer (issue 44).
#[test]
fn a_word_is_named_by_index_or_offset() {
    let dir = std::env::temp_dir().join(format!("ptxmm-word-index-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut outs = Vec::new();
    for (name, word) in [("index", "g[3]"), ("offset", "g+12")] {
        let path = dir.join(format!("{name}.litmus"));
        let text = format!("PTX W\n{{ g[16] = 0; }}\nP0@cta 0,gpu 0 ;\nst.relaxed.gpu [g+12], 1 ;\nexists ({word} = 1)\n");
        std::fs::write(&path, text).unwrap();
        let out = ptxmm().args(["run", path.to_str().unwrap()]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(stdout.starts_with("Verdict: Allowed\n") && stdout.contains("g[3]=1;"), "{word}:\n{stdout}");
        outs.push(stdout.lines().find(|l| l.starts_with("Verdict")).unwrap().to_string());
    }
    assert_eq!(outs[0], outs[1]);
    let _ = std::fs::remove_dir_all(&dir);
}
