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
    let text = std::fs::read_to_string(csv).unwrap_or_else(|e| panic!("{}: {e}", csv.display()));
    let rows = parse_csv(&SourceFile::new(csv.display().to_string(), text)).expect("well-formed CSV");
    let config = ptxmm::Config::new(model.clone(), label);
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
