//! Helpers shared by the suite tests.
#![allow(dead_code)]

use ptxmm::cat::CatModel;
use ptxmm::decide::suite::{parse_csv, run_suite, RowResult, SuiteKind};
use ptxmm::diag::SourceFile;
use std::path::{Path, PathBuf};

/// `../shared/peers/dat3m` beside the checkout, if present.
pub fn dat3m() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/peers/dat3m");
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!("SKIPPED: {} is absent (the Dat3M corpus lives in ../shared beside the checkout)", p.display());
        None
    }
}

/// Run a CSV suite, print `N passed, M failed` and every mismatch; return the failures.
pub fn run_csv(label: &str, csv: &Path, root: &Path, model: &CatModel) -> Vec<String> {
    run_csv_kind(label, csv, root, model, SuiteKind::Condition)
}

/// As `run_csv`, for a given kind of expectation.
pub fn run_csv_kind(label: &str, csv: &Path, root: &Path, model: &CatModel, kind: SuiteKind) -> Vec<String> {
    run_csv_with(label, csv, root, model, kind, &[])
}

/// Dat3M's expectations read `bar.cta.sync N` as Dat3M does (issue 23, item 7): its suites run
/// under the reading `dat3m-barriers`.
pub const DAT3M_READINGS: &[&str] = &["dat3m-barriers"];

/// As `run_csv_kind`, with the alternative `readings` selected.
pub fn run_csv_with(label: &str, csv: &Path, root: &Path, model: &CatModel, kind: SuiteKind, readings: &[&str]) -> Vec<String> {
    let text = std::fs::read_to_string(csv).unwrap_or_else(|e| panic!("{}: {e}", csv.display()));
    let rows = parse_csv(&SourceFile::new(csv.display().to_string(), text)).expect("well-formed CSV");
    let config = ptxmm::Config::new(model.clone(), label).with_readings(readings).expect("readings the model expresses");
    let report = run_suite(&rows, root, &config, kind, &|| {});
    let mut failures = Vec::new();
    for (row, res, _) in &report.rows {
        match res {
            RowResult::Pass => {}
            RowResult::Mismatch { got } => failures.push(format!("{}: expected {}, got {}", row.path, row.expected as u8, *got as u8)),
            RowResult::VerdictMismatch { expected, got } => failures.push(format!("{}: expected {expected}, got {got}", row.path)),
            RowResult::Error(e) => failures.push(format!("{}: error: {e}", row.path)),
        }
    }
    for f in &failures {
        println!("  MISMATCH {f}");
    }
    println!("{label}: {} passed, {} failed ({:.2}s)", report.passed(), report.failed(), report.elapsed.as_secs_f64());
    failures
}

/// The rows `FILE,Verdict,Liveness` of a suite folder's expected.csv (tests/async, tests/ptx, ...).
pub fn verdict_rows(dir: &Path) -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(dir.join("expected.csv")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').map(str::trim).collect();
            assert_eq!(f.len(), 3, "bad row `{l}`: expected FILE,Verdict,Liveness");
            (f[0].to_string(), f[1].to_string(), f[2].to_string())
        })
        .collect()
}

/// Decide every row of a suite folder's expected.csv under the default model, print
/// `LABEL suite: N passed, M failed` and every mismatch; return the mismatches.
pub fn run_verdict_suite(label: &str, dir: &Path) -> Vec<String> {
    use ptxmm::decide::{Decider, LivenessStatus};
    let config = ptxmm::Config::default_model();
    let (mut passed, mut failed) = (0, Vec::new());
    for (file, verdict, liveness) in verdict_rows(dir) {
        let program = ptxmm::load_program(&dir.join(&file)).unwrap_or_else(|e| panic!("{file}: {}", e.render(false)));
        let decider = Decider::new(&config);
        let outcome = decider.verdict(&program).unwrap_or_else(|e| panic!("{file}: {e}"));
        let live = decider.liveness(&program).unwrap_or_else(|e| panic!("{file}: {e}"));
        let got_live = if live.status == LivenessStatus::Ok { "ok" } else { "hang" };
        let got = outcome.verdict().name();
        if got == verdict && got_live == liveness {
            passed += 1;
        } else {
            failed.push(format!("{file}: expected {verdict}/{liveness}, got {got}/{got_live}"));
        }
    }
    println!("{label} suite: {passed} passed, {} failed", failed.len());
    for f in &failed {
        println!("MISMATCH {f}");
    }
    failed
}

/// Every `.litmus` file of a suite folder has a row in its expected.csv.
pub fn assert_every_test_listed(dir: &Path) {
    let listed: std::collections::BTreeSet<String> = verdict_rows(dir).into_iter().map(|r| r.0).collect();
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        if name.ends_with(".litmus") {
            assert!(listed.contains(&name), "{}/{name} has no row in its expected.csv", dir.display());
        }
    }
}

/// The default configuration with one check of `models/ptx.cat` written another way: `old`,
/// which must be in the file, replaced by `new` (a form an engine shortcut does not recognise,
/// to compare what the shortcut finds with what the plain search finds).
pub fn default_model_with_check(old: &str, new: &str) -> ptxmm::config::Config {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/ptx.cat");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(old), "the default model no longer has `{old}`");
    let model = CatModel::from_source(SourceFile::new(path.display().to_string(), text.replace(old, new)), &[]).unwrap();
    ptxmm::config::Config { model, ..ptxmm::config::Config::default_model() }
}

/// Every litmus test of the repository (under `tests/` and `examples/`, but not the rejected
/// inputs of `tests/bad`), as (path from the checkout, text), in path order.
pub fn repository_litmus_tests() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in ["tests", "examples"] {
        let (found, _) = ptxmm::files_below(&root.join(dir), &|p| p.extension().is_some_and(|e| e == "litmus"));
        files.extend(found);
    }
    files.sort();
    files
        .iter()
        .filter(|p| !p.components().any(|c| c.as_os_str() == "bad"))
        .filter_map(|path| {
            let text = std::fs::read_to_string(path).ok()?;
            Some((path.strip_prefix(root).unwrap_or(path).display().to_string(), text))
        })
        .collect()
}

/// The test `text` (named `name`) with nothing observed: its condition made `exists (false)`,
/// its `locations` and filter dropped (None when it does not parse or lower).
pub fn unobserved(name: &str, text: &str) -> Option<ptxmm::program::Program> {
    use ptxmm::diag::Spanned;
    use ptxmm::litmus::ast::{Condition, Prop, Quantifier};
    let file = SourceFile::new(name.to_string(), text.to_string());
    let mut ast = ptxmm::litmus::parse(&file).ok()?;
    let span = ast.name.span;
    ast.condition = Some(Condition { quantifier: Spanned { node: Quantifier::Exists, span }, prop: Spanned { node: Prop::False, span } });
    ast.locations.clear();
    ast.filter = None;
    ptxmm::program::lower(&ast, &file).ok()
}

/// The cases a differential test compared: agreeing, disagreeing (with both answers), skipped.
#[derive(Default)]
pub struct Tally {
    pub passed: usize,
    pub failed: Vec<String>,
    pub skipped: usize,
}

impl Tally {
    /// Count case `name` as passed when its two answers, each with its label, are the same.
    pub fn agree(&mut self, name: &str, (left, a): (&str, &str), (right, b): (&str, &str)) {
        if a == b {
            self.passed += 1;
        } else {
            self.failed.push(format!("{name}:\n--- {left}\n{a}\n--- {right}\n{b}"));
        }
    }
}

/// The test `ptxmm kernel` builds of `tests/kernels/cmd/FILE` with every lane of every warp
/// (`entry` where the file has several), `block` threads and `param_0` a 128-byte buffer.
pub fn kernel_with_every_lane(file: &str, entry: Option<&str>, block: u64) -> ptxmm::program::Program {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/cmd").join(file);
    let ptx = SourceFile::new(path.display().to_string(), std::fs::read_to_string(&path).unwrap());
    let options = ptxmm::kernel::KernelOptions {
        entry: entry.map(str::to_string),
        block: Some(vec![block]),
        lanes: Some((0..32).collect()),
        every_warp: true,
        params: vec![("param_0".to_string(), "buffer:128".to_string())],
        ..Default::default()
    };
    let kernel = ptxmm::kernel::build(&ptx, &options, &Default::default()).unwrap();
    let name = entry.map_or(file.to_string(), |e| format!("{file} {e}"));
    ptxmm::parse_program(SourceFile::new(name, kernel.litmus.clone())).unwrap()
}

/// The verdict, the findings and the liveness answer of `program` under the default model with
/// a 10 s time limit and `limits` changed by `change`; None when a limit stopped either (for
/// the differential tests of the engine's reductions).
pub fn answers(program: &ptxmm::program::Program, change: impl Fn(&mut ptxmm::config::Limits)) -> Option<String> {
    let mut config = ptxmm::config::Config::default_model().with_timeout(Some(std::time::Duration::from_secs(10)));
    change(&mut config.limits);
    let decider = ptxmm::decide::Decider::new(&config);
    let o = decider.verdict(program).ok()?;
    if o.incomplete.is_some() {
        return None;
    }
    let live = decider.liveness(program).ok()?;
    let list = |set: &std::collections::BTreeSet<ptxmm::decide::findings::Finding>| {
        set.iter().map(|f| format!("{f:?}")).collect::<Vec<_>>().join("\n")
    };
    Some(format!(
        "verdict {:?}\nundefined:\n{}\nraces:\n{}\nflags:\n{}\nliveness {:?}",
        o.verdict(),
        list(&o.undefined),
        list(&o.races),
        list(&o.flag_findings),
        live.status
    ))
}
