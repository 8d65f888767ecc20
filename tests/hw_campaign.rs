//! `ptxmm hw campaign` and `ptxmm hw judge` without a GPU: a bundle is built (sources only),
//! its run script runs stand-in programs (shell scripts printing what a harness prints: states,
//! a CUDA fault, a launch that never ends), and the judge classifies each outcome.

use ptxmm::decide::Decider;
use ptxmm::hw::judge::{judge_test, Class, Evidence, ModelFacts, Observed};
use ptxmm::hw::report::parse_output;
use std::path::{Path, PathBuf};
use std::process::Command;

fn ptxmm() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ptxmm"))
}

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("hw-campaign-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn judged(path: &str, output: &str) -> ptxmm::hw::judge::TestJudgement {
    let config = ptxmm::Config::default_model();
    let test = ptxmm::hw::load(Path::new(path), &config.input).unwrap();
    let decider = Decider::new(&config);
    let facts = ModelFacts::decide(&decider, &test);
    let out = parse_output(output).unwrap();
    let id = test.program.name.clone();
    judge_test(&decider, &test, &id, &facts, &Evidence::of(&out, &id))
}

const HEAD: &str = "ptxmm-hw 1\ndevice fake|sm_90|1 SMs|driver 13000|runtime 13000\n";

#[test]
fn a_fault_is_consistent_for_an_undefined_program_and_a_mismatch_for_a_defined_one() {
    let fault = |name: &str| format!("{HEAD}start {name}\nerror kernel: unspecified launch failure\nexit 3 wall_ms 900\n");
    let j = judged("tests/async/S6a-tma-store-no-proxy-fence.litmus", &fault("S6a-tma-store-no-proxy-fence"));
    assert!(matches!(j.observed, Observed::Fault(_)), "{j:?}");
    assert_eq!(j.class, Class::Consistent, "{}", j.why);
    let j = judged("examples/MP.litmus", &fault("MP"));
    assert_eq!(j.class, Class::FaultOfDefined, "{}", j.why);
    assert!(j.why.contains("unspecified launch failure") && j.why.contains("Forbidden"), "{}", j.why);
    // An old harness printed no `start` line: a one-process output with nothing else is about
    // the test it was asked to run.
    let old = format!("{HEAD}error kernel: an illegal instruction was encountered\nexit 3 wall_ms 2633\n");
    assert_eq!(judged("examples/MP.litmus", &old).class, Class::FaultOfDefined);
}

#[test]
fn a_hang_is_judged_by_the_liveness_check() {
    // A launch that did not finish, in a program that may hang: consistent.
    let hang = |name: &str, obs: &str| {
        format!("{HEAD}start {name}\ntest {name}\nthreads 2\nobservables {obs}\ndone {name} instances 4 iterations 0 time_ms 4000 timeout\nexit 4 wall_ms 5000\n")
    };
    let j = judged("tests/verdicts/barrier-never-fills.litmus", &hang("barrier-never-fills", "1:r0"));
    assert!(matches!(j.observed, Observed::Hang { .. }), "{j:?}");
    assert_eq!(j.class, Class::Consistent, "{}", j.why);
    assert!(j.why.contains("may hang"), "{}", j.why);
    // The same in MP, whose every fair execution terminates: a liveness mismatch.
    let j = judged("examples/MP.litmus", &hang("MP", "1:r0 1:r1"));
    assert_eq!(j.class, Class::LivenessMismatch, "{}", j.why);
    // A process killed at its deadline during the test.
    let killed = format!("{HEAD}start MP\nexit 124 wall_ms 60000\n");
    let j = judged("examples/MP.litmus", &killed);
    assert_eq!(j.class, Class::LivenessMismatch, "{}", j.why);
    assert!(j.why.contains("killed at its deadline after 60 s"), "{}", j.why);
}

#[test]
fn states_are_judged_and_the_wall_time_is_reported() {
    let text = format!(
        "{HEAD}start MP\ntest MP\nthreads 2\nobservables 1:r0 1:r1\nstate 6 0 0 0\nstate 4 0 1 0\ndone MP instances 2 iterations 5 time_ms 10\nexit 0 wall_ms 2100\n"
    );
    let j = judged("examples/MP.litmus", &text);
    assert_eq!(j.class, Class::Mismatch, "{}", j.why);
    assert!(j.why.contains("1:r0=1 1:r1=0 seen 4 times"), "{}", j.why);
    let h = j.histogram().unwrap();
    assert_eq!(h.histogram.wall_ms, Some(2100.0));
    let report = ptxmm::hw::report::render(h, None);
    assert!(report.contains("Time MP 2.10\n"), "{report}");
    assert!(report.contains("Runs 10 = 2 instances x 5 iterations, launches 0.01 s"), "{report}");
}

/// The stand-in for a harness program: prints what a harness prints for the test named.
const FAKE: &str = r#"#!/usr/bin/env bash
for last; do :; done
echo "ptxmm-hw 1"
echo "device fake|sm_90|1 SMs|driver 13000|runtime 13000"
echo "start $last"
case $last in
  MP) printf 'test MP\nthreads 2\nobservables 1:r0 1:r1\nstate 10 0 0 0\ndone MP instances 2 iterations 5 time_ms 3\n' ;;
  MP~2) printf 'test MP~2\nthreads 2\nobservables 1:r0 1:r1\nstate 9 0 0 0\nstate 1 0 1 0\ndone MP~2 instances 2 iterations 5 time_ms 3\n' ;;
  S6a-tma-store-no-proxy-fence) echo "error kernel: unspecified launch failure"; exit 3 ;;
  *) sleep 30 ;;
esac
"#;

#[test]
fn a_campaign_bundle_runs_resumes_shards_and_is_judged() {
    let dir = scratch("bundle");
    // Two tests named MP (a copy in another folder), an Undefined one, one that hangs.
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::copy("examples/MP.litmus", other.join("MP.litmus")).unwrap();
    let bundle = dir.join("bundle");
    let (code, out, err) = run(ptxmm()
        .args(["hw", "campaign", "examples/MP.litmus"])
        .arg(other.join("MP.litmus"))
        .args([
            "tests/async/S6a-tma-store-no-proxy-fence.litmus",
            "tests/async/U12-wrong-parity.litmus",
            "--no-build",
            "--per-program",
            "3",
            "-o",
        ])
        .arg(&bundle));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("hw campaign: 4 tests: 4 ready in 2 programs (not built"), "{out}");
    let manifest = std::fs::read_to_string(bundle.join("manifest.tsv")).unwrap();
    let ids: Vec<&str> = manifest.lines().skip(1).map(|l| l.split('\t').nth(1).unwrap()).collect();
    assert_eq!(ids, ["MP", "MP~2", "S6a-tma-store-no-proxy-fence", "U12-wrong-parity"], "{manifest}");
    for f in ["run.sh", "build.sh", "README.txt", "src/prog_0.cu", "src/prog_1.cu", "tests/0.litmus", "tests/3.litmus"] {
        assert!(bundle.join(f).is_file(), "{f} missing");
    }
    let prog0 = std::fs::read_to_string(bundle.join("src/prog_0.cu")).unwrap();
    assert!(prog0.contains("selected(o, \"MP~2\")"), "the second MP is selected by its own name");
    let build = std::fs::read_to_string(bundle.join("build.sh")).unwrap();
    assert!(build.contains("-o bin/prog_1 src/prog_1.cu"), "{build}");

    // A bundle whose programs are not built is refused by run.sh with the way out.
    let (code, _, err) = run(Command::new("bash").arg(bundle.join("run.sh")));
    assert_eq!(code, 2);
    assert!(err.contains("bash build.sh"), "{err}");

    for p in ["prog_0", "prog_1"] {
        let exe = bundle.join("bin").join(p);
        std::fs::write(&exe, FAKE).unwrap();
        std::process::Command::new("chmod").arg("+x").arg(&exe).status().unwrap();
    }
    // Shard 1 of 2 first (indices 1 and 3), then everything: the shard's outputs are kept.
    let (code, out, err) = run(Command::new("bash").arg(bundle.join("run.sh")).args(["--shard", "1/2", "--deadline", "2", "--jobs", "2"]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("run.sh: 2 tests (shard 1/2)"), "{out}");
    let hang = std::fs::read_to_string(bundle.join("out/3.out")).unwrap();
    assert!(hang.contains("start U12-wrong-parity") && hang.contains("exit 124 wall_ms"), "{hang}");
    let first = std::fs::read_to_string(bundle.join("out/1.out")).unwrap();
    let (code, out, err) = run(Command::new("bash").arg(bundle.join("run.sh")).args(["--deadline", "2", "--jobs", "2"]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("1 MP~2: exit") && out.contains("0 MP: exit 0"), "resumed: only the missing tests run\n{out}");
    assert_eq!(std::fs::read_to_string(bundle.join("out/1.out")).unwrap(), first);

    let (code, out, err) = run(ptxmm().args(["hw", "judge"]).arg(&bundle));
    assert_eq!(code, 1, "a forbidden state is a failure\n{out}{err}");
    assert!(out.contains("MISMATCH   MP~2 (") && out.contains("1:r0=1 1:r1=0 seen 1 times"), "{out}");
    assert!(out.contains("states observed           3 (1 the model forbids, in 1 tests)"), "{out}");
    assert!(out.contains("faults                    1 (1 of Undefined programs: consistent; 0 of defined programs)"), "{out}");
    assert!(out.contains("hangs                     1 (1 consistent"), "{out}");
    let (_, json, _) = run(ptxmm().args(["hw", "judge", "--json"]).arg(&bundle));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["summary"]["mismatches"], 1);
    assert_eq!(v["tests"].as_array().unwrap().len(), 4);
    // `-v` is `hw judge`'s own `--verbose` (herd7's `-v` is refused by the commands without
    // one): the consistent tests are listed too.
    let (code, verbose, err) = run(ptxmm().args(["hw", "judge"]).arg(&bundle).arg("-v"));
    assert_eq!(code, 1, "{verbose}{err}");
    assert!(verbose.contains("ok         MP ("), "{verbose}{err}");
    assert!(!out.contains("ok         MP ("), "without -v the consistent tests are not listed\n{out}");

    // A new campaign never writes into a bundle.
    let (code, _, err) = run(ptxmm().args(["hw", "campaign", "examples/MP.litmus", "--no-build", "-o"]).arg(&bundle));
    assert_eq!(code, 2);
    assert!(err.contains("is not empty"), "{err}");
}

#[test]
fn a_barrier_count_no_cta_can_hold_is_rejected_by_the_generator() {
    let dir = scratch("bar-count");
    let (code, out, err) = run(ptxmm().args(["hw", "gen", "tests/verdicts/barrier-never-fills.litmus", "-o"]).arg(&dir));
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("counts 64 threads") && err.contains("2048 hardware threads"), "{err}");
}

/// Every option the bundle's README.txt names exists: those of `bash run.sh` in the run script's
/// option parser, those of `ptxmm hw judge` in its `--help` (the README once said `--outputs`
/// for `--outputs-dir`).
#[test]
fn every_option_the_bundle_readme_names_exists() {
    let readme = ptxmm::hw::campaign::readme(2, 1);
    let options = |line: &str| -> Vec<String> {
        line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .filter(|w| w.starts_with('-') && !w.trim_start_matches('-').is_empty())
            .map(str::to_string)
            .collect()
    };
    let judge_options = options(&run(ptxmm().args(["hw", "judge", "--help"])).1);
    let (mut run_sh, mut judge) = (0, 0);
    for line in readme.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("bash run.sh") {
            for o in options(rest) {
                assert!(ptxmm::hw::campaign::run_script().contains(&format!("        {o})")), "run.sh has no option {o}: {line}");
                run_sh += 1;
            }
        } else if let Some(rest) = line.strip_prefix("ptxmm hw judge") {
            for o in options(rest) {
                assert!(judge_options.contains(&o), "`ptxmm hw judge` has no option {o}: {line}\n{judge_options:?}");
                judge += 1;
            }
        }
    }
    assert!(run_sh >= 4 && judge >= 4, "the README's command lines were not found:\n{readme}");
}
