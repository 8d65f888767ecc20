//! Differential test of the word elision surveyed from the runs (`exec::trace::survey`,
//! ARCHITECTURE.md): where a program's addresses are not static (kernels, litmus tests that
//! address memory through registers), the words its runs touch together are elided but one.
//! Every such litmus test of the repository and the kernels of `tests/kernels/cmd` are decided
//! with the survey and without it (`Limits::word_survey = false`, every word its own events):
//! the verdict, every finding and the liveness answer must be the same. Cases one way cannot
//! decide within the limits are counted as skipped.

use ptxmm::diag::SourceFile;
use std::path::Path;

mod common;

/// The memory events of every run of every thread, with the survey or without.
fn events(program: &ptxmm::program::Program, survey: bool) -> Option<usize> {
    let limits = ptxmm::config::Limits { word_survey: survey, ..Default::default() };
    let (_, all) = ptxmm::exec::trace::explore(program, &limits, false).ok()?;
    Some(all.iter().flat_map(|tt| &tt.traces).map(|t| t.events.len()).sum())
}

fn compare(tally: &mut common::Tally, elided_in: &mut usize, name: &str, program: &ptxmm::program::Program) {
    if let (Some(fewer), Some(all)) = (events(program, true), events(program, false)) {
        assert!(fewer <= all, "{name}: the survey added events ({all} -> {fewer})");
        *elided_in += usize::from(fewer < all);
    }
    let with = |survey: bool| common::answers(program, |l| l.word_survey = survey);
    match (with(true), with(false)) {
        (Some(surveyed), Some(every_word)) => tally.agree(name, ("words surveyed", &surveyed), ("every word", &every_word)),
        _ => tally.skipped += 1,
    }
}

/// The test `ptxmm kernel` builds of `tests/kernels/cmd/FILE` with `options` (lane 0 or every
/// lane, every warp).
fn kernel(file: &str, options: ptxmm::kernel::KernelOptions) -> ptxmm::program::Program {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/cmd").join(file);
    let ptx = SourceFile::new(path.display().to_string(), std::fs::read_to_string(&path).unwrap());
    let kernel = ptxmm::kernel::build(&ptx, &options, &Default::default()).unwrap_or_else(|e| panic!("{file}: {e:?}"));
    ptxmm::parse_program(SourceFile::new(file.to_string(), kernel.litmus.clone())).unwrap()
}

#[test]
fn surveyed_word_elision_gives_the_answers_of_every_word() {
    let mut tally = common::Tally::default();
    let mut compared = Vec::new();
    // The cases whose runs have fewer events with the survey: where it elided something.
    let mut elided_in = 0;
    for (name, text) in common::repository_litmus_tests() {
        let Ok(program) = ptxmm::parse_program(SourceFile::new(name.clone(), text)) else { continue };
        if ptxmm::exec::trace::words_are_static(&program) {
            continue;
        }
        compare(&mut tally, &mut elided_in, &name, &program);
        compared.push(name);
    }
    let buffer = |name: &str, bytes: u64| (name.to_string(), format!("buffer:{bytes}"));
    let options = |block: u64, lanes: Vec<u64>, smem: Option<u64>, params: Vec<(String, String)>| ptxmm::kernel::KernelOptions {
        block: Some(vec![block]),
        lanes: Some(lanes),
        every_warp: true,
        dynamic_smem: smem,
        params,
        ..Default::default()
    };
    let every_lane = || (0..32).collect::<Vec<u64>>();
    let at = |v: &str| vec![("at".to_string(), v.to_string())];
    let kernels = [
        ("lane_arrivals.ptx", options(64, every_lane(), None, vec![buffer("param_0", 128)])),
        ("lane_arrivals-bug.ptx", options(64, every_lane(), None, vec![buffer("param_0", 128)])),
        ("shared_storage.ptx", options(64, vec![0], Some(144), vec![])),
        ("shared_storage-bug.ptx", options(64, vec![0], Some(144), vec![])),
        ("shared_storage-overrun.ptx", options(64, vec![0], Some(144), vec![buffer("param_0", 512)])),
        ("wgmma_mn_major.ptx", options(32, vec![0], None, at("0"))),
        ("wgmma_mn_major.ptx", options(32, vec![0], None, at("16"))),
    ];
    for (file, options) in kernels {
        compare(&mut tally, &mut elided_in, file, &kernel(file, options));
        compared.push(file.to_string());
    }
    println!(
        "word survey: {} passed, {} failed ({} skipped: not decided within the limits; words elided in {}) of {}",
        tally.passed,
        tally.failed.len(),
        tally.skipped,
        elided_in,
        compared.join(", ")
    );
    assert!(tally.failed.is_empty(), "{}", tally.failed.join("\n\n"));
    assert!(tally.passed > 20, "too few cases compared: {}", tally.passed);
    assert!(elided_in >= 10, "the survey elided words in only {elided_in} cases");
}

/// `--every-word` turns the survey off on the command line: two 16-byte `cp.async` tiles at
/// register addresses fit in 16 events per run with the survey, not with every word's events.
#[test]
fn every_word_gives_each_word_its_events() {
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ptxmm"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["run", "tests/hw/cp-async-ktile-64.litmus", "--max-events", "16", "--color", "never"])
            .args(extra)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).to_string(), String::from_utf8_lossy(&out.stderr).to_string())
    };
    let (code, out, err) = run(&[]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("Verdict: Forbidden"), "{out}");
    let (code, out, err) = run(&["--every-word"]);
    assert_ne!(code, Some(0), "{out}{err}");
    assert!(err.contains("a trace has more than 16 memory events") && err.contains("(raise --max-events"), "{err}");
}
