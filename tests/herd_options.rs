//! herd7's options, logs that mcompare7 reads, and `ptxmm compare` (docs/herd-options.md).

use assert_cmd::Command;
use ptxmm::herd::log::parse_log;
use std::path::{Path, PathBuf};

fn ptxmm() -> Command {
    Command::cargo_bin("ptxmm").unwrap()
}

/// Run ptxmm; (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    let out = ptxmm().args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A fresh empty folder under the target directory.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("herd-options-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

// ---------------------------------------------------------------- logs

#[test]
fn reads_a_herd7_log() {
    let tests = parse_log(&std::fs::read_to_string("tests/logs/herd7.log").unwrap()).unwrap();
    assert_eq!(tests.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["MP", "SB", "W"]);
    let mp = &tests[0];
    assert_eq!((mp.kind.as_deref(), mp.answer(), mp.states.len()), (Some("Allowed"), "No", 3));
    assert_eq!(mp.flags, ["data-race"]);
    assert_eq!(mp.witnesses, Some((0, 3)));
    assert_eq!(mp.observation.as_deref(), Some("Never"));
    assert_eq!(mp.hash.as_deref(), Some("5e3a9d5b0a8b1c2d3e4f5a6b7c8d9e0f"));
    assert_eq!(mp.condition.as_deref(), Some("exists (1:r0=1 /\\ 1:r1=0)"));
    let w = &tests[2];
    // `[x]` is `x`, hexadecimal values are decimal, `y[1]` is kept; `Loop Ok` is Ok with a cut.
    assert_eq!(w.state_set().into_iter().collect::<Vec<_>>(), ["x=1; y[1]=2;", "x=2; y[1]=2;"]);
    assert!(w.loop_cut);
    assert_eq!(w.answer(), "Ok");
    assert_eq!(w.flags, ["*undef*"]);
}

#[test]
fn reads_a_litmus7_log() {
    let tests = parse_log(&std::fs::read_to_string("tests/logs/litmus7.log").unwrap()).unwrap();
    assert_eq!(tests.len(), 2);
    let mp = &tests[0];
    assert_eq!(mp.states.iter().map(|s| (s.count, s.witness_mark)).collect::<Vec<_>>(), [(500000, false), (499998, false), (2, true)]);
    assert_eq!(mp.witnesses, Some((2, 999998)));
    assert_eq!(mp.condition.as_deref(), Some("exists (1:r0=1 /\\ 1:r1=0)"));
    assert_eq!(mp.observation.as_deref(), Some("Sometimes"));
    assert_eq!(mp.hash.as_deref(), Some("5e3a9d5b0a8b1c2d3e4f5a6b7c8d9e0f"));
    assert_eq!(tests[1].states.len(), 3);
}

#[test]
fn the_old_spellings_are_lex_errors() {
    // What ptxmm printed before: mcompare7's lexer rejects both (and drops the whole file).
    let e = parse_log(&std::fs::read_to_string("tests/logs/old-ptxmm-percent.log").unwrap()).unwrap_err();
    assert_eq!((e.line, e.column), (4, 3), "{e}");
    let e = parse_log(&std::fs::read_to_string("tests/logs/old-ptxmm-offset.log").unwrap()).unwrap_err();
    assert_eq!((e.line, e.column), (4, 7), "{e}");
}

/// Every block `ptxmm run` prints for the repository's tests reads back: the same tests, the
/// states of the `States N` line, a hash, and the verdict.
#[test]
fn run_output_reads_back_through_the_log_grammar() {
    let dirs = ["examples", "tests/litmus", "tests/async", "tests/typed", "tests/tensor", "tests/verdicts"];
    let mut args = vec!["run", "--liveness", "skip", "--json"];
    args.extend(dirs);
    let (_, json, _) = run(&args);
    let mut args = vec!["run", "--liveness", "skip"];
    args.extend(dirs);
    let (_, text, _) = run(&args);
    let tests = parse_log(&text).unwrap_or_else(|e| panic!("{e}"));
    let records: Vec<serde_json::Value> =
        json.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()).filter(|v| v.get("verdict").is_some()).collect();
    assert!(records.len() > 100, "{} records", records.len());
    assert_eq!(tests.len(), records.len());
    let mut renamed = 0;
    for (t, r) in tests.iter().zip(&records) {
        assert_eq!(t.name, r["test"].as_str().unwrap());
        assert_eq!(t.verdict.as_deref(), r["verdict"].as_str());
        assert_eq!(t.states.len(), r["states"].as_array().unwrap().len(), "{}", t.name);
        assert_eq!(t.answer(), r["result"].as_str().unwrap(), "{}", t.name);
        assert_eq!(t.hash.as_deref(), r["hash"].as_str(), "{}", t.name);
        assert_eq!(t.flags.contains(&"*undef*".to_string()), r["verdict"] == "Undefined", "{}", t.name);
        // JSON names the observables as the state lines do (`1:r0` for `%r0`, `s[1]` for `s+4`).
        let json_names: std::collections::BTreeSet<&str> =
            r["states"].get(0).map_or(Default::default(), |s| s["values"].as_object().unwrap().keys().map(|k| k.as_str()).collect());
        let log_names: std::collections::BTreeSet<&str> =
            t.states.first().map_or(Default::default(), |s| s.bindings.iter().map(|(n, _)| n.as_str()).collect());
        assert_eq!(json_names, log_names, "{}", t.name);
        if json_names.iter().any(|n| n.contains('[')) {
            renamed += 1;
        }
    }
    // Some tests do name words of locations (`s+4`), so the renaming is exercised.
    assert!(renamed > 0);
}

// ---------------------------------------------------------------- options

#[test]
fn through_lets_rejected_executions_through() {
    let (code, out, _) = run(&["run", "--model", "ptx-7.5", "examples/MP.litmus"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("Verdict: Forbidden\n"), "{out}");
    for spelling in [["--through", "all"], ["-through", "invalid"]] {
        let (code, out, _) = run(&["run", "--model", "ptx-7.5", spelling[0], spelling[1], "examples/MP.litmus"]);
        assert_eq!(code, 0, "{out}");
        assert!(out.starts_with("Verdict: Allowed\n"), "{out}");
        assert!(out.contains("1:r0=1; 1:r1=0;"), "{out}");
        assert!(
            out.contains("Skipped checks (not applied): Coherence, Coherence-MoralStrength, FenceSC, Atomicity, NoThinAir, Causality"),
            "{out}"
        );
    }
    // Flags still run (the default model's race flag).
    let (_, out, _) = run(&["run", "--through", "all", "examples/MP.litmus"]);
    assert!(out.starts_with("Verdict: Allowed\n") && out.contains("\nFlag data-race\n"), "{out}");
    let (_, out, _) = run(&["run", "--model", "ptx-7.5", "--through", "none", "examples/MP.litmus"]);
    assert!(out.starts_with("Verdict: Forbidden\n"), "{out}");
}

#[test]
fn skipchecks_skips_named_checks() {
    let (code, out, _) = run(&["run", "--model", "ptx-7.5", "-skipchecks", "Causality", "examples/MP.litmus"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("Verdict: Allowed\n"), "{out}");
    assert!(out.contains("Skipped checks (not applied): Causality\n"), "{out}");
    let (_, json, _) = run(&["run", "--model", "ptx-7.5", "--skipchecks", "NoThinAir,Causality", "--json", "examples/MP.litmus"]);
    let v: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(v["skipped_checks"], serde_json::json!(["NoThinAir", "Causality"]));
    // Another check does not forbid MP: skipping it changes nothing.
    let (_, out, _) = run(&["run", "--model", "ptx-7.5", "--skipchecks", "Atomicity", "examples/MP.litmus"]);
    assert!(out.starts_with("Verdict: Forbidden\n"), "{out}");
    let (code, _, err) = run(&["run", "--model", "ptx-7.5", "--skipchecks", "Causalty", "examples/MP.litmus"]);
    assert_eq!(code, 2);
    assert!(err.contains("no check named `Causalty`") && err.contains("Causality"), "{err}");
}

#[test]
fn speedcheck_stops_at_the_first_witness() {
    let (_, full, _) = run(&["run", "--json", "--liveness", "skip", "tests/litmus/MP-fence-sc.litmus", "tests/litmus/MP-relaxed.litmus"]);
    let (_, fast, _) =
        run(&["run", "--json", "--liveness", "skip", "-speedcheck", "tests/litmus/MP-fence-sc.litmus", "tests/litmus/MP-relaxed.litmus"]);
    let parse = |s: &str| s.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()).collect::<Vec<_>>();
    let (full, fast) = (parse(&full), parse(&fast));
    for (f, s) in full.iter().zip(&fast) {
        assert_eq!(f["result"], s["result"], "{f}\n{s}");
        assert_eq!(f["verdict"], s["verdict"], "{f}\n{s}");
        let count = |v: &serde_json::Value| v["positive"].as_u64().unwrap() + v["negative"].as_u64().unwrap();
        if f["verdict"] == "Allowed" {
            // Stopped at the witness: fewer executions tallied, and said so.
            assert_eq!(s["speedcheck_stopped"], true, "{s}");
            assert_eq!(s["positive"], 1, "{s}");
            assert!(count(s) < count(f), "{f}\n{s}");
        } else {
            // Nothing settles a forbidden `exists` early: the whole search runs.
            assert_eq!(s["speedcheck_stopped"], false, "{s}");
            assert_eq!(count(s), count(f));
        }
    }
    assert!(full.iter().any(|f| f["verdict"] == "Allowed") && full.iter().any(|f| f["verdict"] == "Forbidden"));
    let (_, text, _) = run(&["run", "--speedcheck", "fast", "--liveness", "skip", "tests/litmus/MP-relaxed.litmus"]);
    assert!(text.contains("\nSpeedcheck: the search stopped at the first execution that settles the condition"), "{text}");
    let (_, text, _) = run(&["run", "--speedcheck", "false", "--liveness", "skip", "tests/litmus/MP-relaxed.litmus"]);
    assert!(!text.contains("Speedcheck"), "{text}");
}

#[test]
fn show_draws_one_file_per_test() {
    let dir = scratch("show");
    let d = dir.to_str().unwrap();
    let (code, _, err) = run(&["run", "-show", "prop", "-o", d, "examples/MP.litmus", "tests/litmus/MP-red.litmus"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(files_in(&dir), ["MP-red.dot", "MP.dot"]);
    assert!(std::fs::read_to_string(dir.join("MP.dot")).unwrap().starts_with("digraph"));
    let dir = scratch("nshow");
    let d = dir.to_str().unwrap();
    let (code, _, _) = run(&["run", "-nshow", "1", "--show-format", "svg", "-o", d, "examples/MP.litmus", "tests/litmus/MP-red.litmus"]);
    assert_eq!(code, 0);
    assert_eq!(files_in(&dir), ["MP.svg"]);
    assert!(std::fs::read_to_string(dir.join("MP.svg")).unwrap().contains("<svg"));
    let dir = scratch("show-none");
    let (_, _, _) = run(&["run", "--show", "none", "-o", dir.to_str().unwrap(), "examples/MP.litmus"]);
    assert!(files_in(&dir).is_empty());
    let (code, _, err) = run(&["run", "--show", "prop", "examples/MP.litmus"]);
    assert_eq!(code, 2);
    assert!(err.contains("-o DIR"), "{err}");
    let (code, _, err) = run(&["run", "--show", "neg", "-o", d, "examples/MP.litmus"]);
    assert_eq!(code, 2);
    assert!(err.contains("neg"), "{err}");
}

#[test]
fn names_and_excl_select_tests() {
    let tests = ["examples/MP.litmus", "tests/litmus/MP-red.litmus", "tests/litmus/CoRR.litmus"];
    let names_in = |out: &str| parse_log(out).unwrap().into_iter().map(|t| t.name).collect::<Vec<_>>();
    let mut args = vec!["run", "--liveness", "skip", "-names", "tests/herd/names.txt"];
    args.extend(tests);
    assert_eq!(names_in(&run(&args).1), ["MP-red"]);
    let mut args = vec!["run", "--liveness", "skip", "-excl", "tests/herd/names.txt"];
    args.extend(tests);
    assert_eq!(names_in(&run(&args).1), ["MP", "CoRR"]);
    let (code, _, err) = run(&["run", "--names", "tests/herd/absent.txt", "examples/MP.litmus"]);
    assert_eq!(code, 2);
    assert!(err.contains("absent.txt"), "{err}");
}

#[test]
fn conds_replace_conditions() {
    let (code, out, _) =
        run(&["run", "--liveness", "skip", "-conds", "tests/herd/conds.txt", "examples/MP.litmus", "tests/litmus/MP-red.litmus"]);
    assert_eq!(code, 0);
    let tests = parse_log(&out).unwrap();
    assert_eq!(tests[0].condition.as_deref(), Some("exists (1:r0=1 /\\ 1:r1=1)"));
    assert_eq!((tests[0].answer(), tests[0].verdict.as_deref()), ("Ok", Some("Allowed")));
    // MP-red is not in the file: its own condition.
    let own = std::fs::read_to_string("tests/litmus/MP-red.litmus").unwrap();
    assert!(own.contains("exists") && tests[1].condition.is_some());
    let dir = scratch("conds");
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, "MP \"exists (1:r9=1)\"\n").unwrap();
    let (code, _, err) = run(&["run", "--conds", bad.to_str().unwrap(), "examples/MP.litmus"]);
    assert_eq!(code, 1);
    assert!(err.contains("condition from") && err.contains("bad.txt:1"), "{err}");
}

#[test]
fn index_files_list_tests() {
    let (code, out, _) = run(&["run", "--liveness", "skip", "@tests/herd/index.txt"]);
    assert_eq!(code, 0);
    assert_eq!(parse_log(&out).unwrap().into_iter().map(|t| t.name).collect::<Vec<_>>(), ["MP", "MP-red"]);
    let (code, _, err) = run(&["run", "@tests/herd/no-such-index.txt"]);
    assert_eq!(code, 1);
    assert!(err.contains("no-such-index.txt"), "{err}");
}

#[test]
fn libdir_and_include_folders_resolve_includes() {
    let (code, _, err) = run(&["run", "--cat", "tests/herd/uses-stdlib.cat", "examples/MP.litmus"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("cannot find included file \"stdlib.cat\"") && err.contains("--set-libdir DIR") && err.contains("-I DIR"),
        "{err}"
    );
    for flag in ["-set-libdir", "-I"] {
        let (code, out, err) = run(&["run", "--cat", "tests/herd/uses-stdlib.cat", flag, "tests/herd/lib", "examples/MP.litmus"]);
        assert_eq!(code, 0, "{err}");
        assert!(out.starts_with("Verdict: Forbidden\n"), "{out}");
    }
}

#[test]
fn cat_procedures_run_their_checks_at_the_call() {
    // The procedure call states causality again, named by the call: skipping the model's own
    // check leaves it forbidden; skipping both allows it.
    let (code, out, err) = run(&["run", "--cat", "tests/herd/procedure.cat", "--skipchecks", "Causality", "examples/MP.litmus"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Verdict: Forbidden\n"), "{out}");
    let (_, out, _) = run(&["run", "--cat", "tests/herd/procedure.cat", "--skipchecks", "Causality,CausalityByCall", "examples/MP.litmus"]);
    assert!(out.starts_with("Verdict: Allowed\n"), "{out}");
}

// ---------------------------------------------------------------- compare

#[test]
fn compare_two_logs() {
    let (code, out, _) = run(&["compare", "--left-log", "tests/logs/herd7.log", "--right-log", "tests/logs/litmus7.log"]);
    assert_eq!(code, 1);
    // MP: herd7 says No with 3 states; the hardware saw the forbidden outcome.
    assert!(out.contains("Test MP: left No, right Ok\n"), "{out}");
    assert!(out.contains("1:r0=1; 1:r1=0;   <- only right"), "{out}");
    assert!(out.contains("0:r0=1; 1:r0=1;   <- only left"), "{out}");
    assert!(out.contains("Only in the left side (1): W"), "{out}");
    assert!(out.ends_with("2 test(s) compared: 2 differ, 0 agree; 1 only left, 0 only right\n"), "{out}");
}

#[test]
fn compare_a_model_with_its_own_log_finds_nothing() {
    let dir = scratch("own-log");
    let (_, log, _) = run(&["run", "--liveness", "skip", "tests/litmus"]);
    let path = dir.join("ptxmm.log");
    std::fs::write(&path, log).unwrap();
    let (code, out, _) = run(&["compare", "--right-log", path.to_str().unwrap(), "tests/litmus"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(" compared: 0 differ"), "{out}");
}

#[test]
fn compare_two_readings() {
    let (code, out, _) = run(&["compare", "--json", "--left-reading", READING, READING_TEST]);
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["differences"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["left"], format!("model ptx --reading {READING}"));
}

const READING: &str = "proxy-fence-anywhere";
const READING_TEST: &str = "tests/async/A01-proxy-fence-in-other-cta.litmus";

/// The Dat3M corpus under ptxmm's models and Dat3M's cat files, and ptxmm's own tests of
/// the model differences: the differences are exactly those of docs/divergences.md.
#[test]
fn dat3m_models_differ_only_where_documented() {
    let shared = Path::new("../shared/peers/dat3m");
    if !shared.is_dir() {
        eprintln!(
            "SKIPPED: {}/../shared/peers/dat3m is absent (the Dat3M corpus lives in ../shared beside the checkout)",
            env!("CARGO_MANIFEST_DIR")
        );
        return;
    }
    let differing = |version: &str, tests: &str| {
        let cat = format!("../shared/peers/dat3m/cat/ptx-v{version}.cat");
        let (code, out, err) = run(&["compare", "--json", "--left-model", &format!("ptx-{version}"), "--right-cat", &cat, tests]);
        assert!(code == 0 || code == 1, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["errors"], 0, "{err}");
        assert!(v["compared"].as_u64().unwrap() > 0);
        v["differences"].as_array().unwrap().iter().map(|d| d["test"].as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    for version in ["7.5", "6.0"] {
        let corpus = differing(version, "../shared/peers/dat3m/litmus/PTX");
        assert!(corpus.is_empty(), "ptx-{version} and Dat3M's ptx-v{version}.cat differ on the corpus: {corpus:?}");
        let own = differing(version, "tests/litmus");
        assert_eq!(own, ["tests/litmus/MP-fence-sc-acquire.litmus", "tests/litmus/MP-red.litmus"], "ptx-{version}");
    }
}

#[test]
fn cat_procedure_errors_point_at_the_source() {
    let dir = scratch("procedure-errors");
    // Each procedure calls the previous one twice: 2^30 checks if nothing stopped it.
    let mut doubling = "\"x\"\nprocedure p0(r) =\n  acyclic r\nend\n".to_string();
    for i in 1..30 {
        doubling += &format!("procedure p{i}(r) =\n  call p{}(r)\n  call p{}(r)\nend\n", i - 1, i - 1);
    }
    doubling += "call p29(po)\n";
    let cases: [(&str, &str, &str); 5] = [
        ("unknown.cat", "\"x\"\ninclude \"ptx-7.5.cat\"\ncall nope(po)\n", "3:6: unknown procedure `nope`"),
        ("no-end.cat", "\"x\"\ninclude \"ptx-7.5.cat\"\nprocedure p(r) =\n  acyclic r\n", "3:1: procedure `p` has no `end`"),
        (
            "arity.cat",
            "\"x\"\nprocedure p(r) =\n  acyclic r\nend\ncall p(po, rf)\n",
            "5:1: procedure `p` takes 1 argument(s) but 2 were given",
        ),
        // Lexically scoped and not recursive: a procedure does not see itself.
        ("recursive.cat", "\"x\"\nprocedure p(r) =\n  call p(r)\nend\ncall p(po)\n", "3:8: unknown procedure `p`"),
        ("doubling.cat", &doubling, "procedure calls expand to more than 100000 items"),
    ];
    for (name, text, expected) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let (code, _, err) = run(&["run", "--color", "never", "--cat", path.to_str().unwrap(), "examples/MP.litmus"]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains(expected), "{name}: {err}");
    }
}

#[test]
fn explain_draws_a_rejected_execution_with_through() {
    let (_, out, _) = run(&["explain", "--model", "ptx-7.5", "examples/MP.litmus"]);
    assert!(out.starts_with("Test MP: the outcome 1:r0=1 /\\ 1:r1=0 is forbidden."), "{out}");
    let (code, out, _) = run(&["explain", "--model", "ptx-7.5", "-through", "all", "examples/MP.litmus"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("Test MP: the outcome 1:r0=1 /\\ 1:r1=0 is allowed.\nWitness execution"), "{out}");
}

/// herd7's `-model` takes a cat file or a model name; its `-q` has no counterpart and is
/// refused with what to do instead (issue 27: both were "unexpected argument").
#[test]
fn herd_model_and_refused_options() {
    let cat = "../shared/peers/dat3m/cat/ptx-v7.5.cat";
    if std::path::Path::new(cat).exists() {
        let (code, out, err) = run(&["run", "-model", cat, "--liveness", "skip", "examples/MP.litmus"]);
        assert_eq!(code, 0, "{out}{err}");
        assert!(out.starts_with("Verdict: Forbidden"), "{out}");
    }
    let (code, out, err) = run(&["run", "-model", "ptx-7.5", "--liveness", "skip", "examples/MP.litmus"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("Verdict: Forbidden"), "{out}");
    let (code, _, err) = run(&["run", "-q", "examples/MP.litmus"]);
    assert_eq!(code, 2);
    assert!(err.contains("herd7's `-q` is not a ptxmm option") && err.contains("2>/dev/null"), "{err}");
    // herd7's `-v` is refused where the subcommand has no `-v` of its own (`hw judge` has one:
    // tests/hw_campaign.rs).
    let (code, _, err) = run(&["run", "-v", "examples/MP.litmus"]);
    assert_eq!(code, 2);
    assert!(err.contains("herd7's `-v` is not a ptxmm option"), "{err}");
}
