//! Suite mode: run every test of an expectation CSV and compare.
//!
//! Dat3M's rows are `path,1|0`: `1` means the test's condition holds (herd7 prints `Ok`), `0`
//! that it does not (`No`). ptxmm's own async suite uses `path,Verdict[,Liveness]` rows, with
//! Verdict one of [`VERDICT_WORDS`] and Liveness `ok` or `hang`.
//! Tests run in parallel; the result keeps the CSV order so reports are stable.

use super::liveness::LivenessStatus;
use super::verdict::Outcome;
use super::Decider;
use super::RunError;
use crate::clock::Instant;
use crate::config::Config;
use crate::diag::{Diagnostic, FileDiagnostic, SourceFile, Span};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One row of an expectation CSV.
#[derive(Clone, Debug)]
pub struct SuiteRow {
    pub path: String,
    pub expected: bool,
    pub line: usize,
    /// For `path,Verdict[,Liveness]` rows: the verdict and the liveness (`ok`/`hang`) expected.
    pub verdict: Option<(String, Option<String>)>,
}

/// The verdict words a `path,Verdict[,Liveness]` row may expect. Every message about a row
/// lists them from here.
pub const VERDICT_WORDS: &[&str] = &["Allowed", "Forbidden", "Undefined", "Inconclusive"];

/// `Allowed, Forbidden, …`, for messages.
pub fn verdict_words() -> String {
    VERDICT_WORDS.join(", ")
}

/// Parse a CSV of `path,1|0` rows. Blank lines and `//` comments are skipped.
pub fn parse_csv(file: &SourceFile) -> Result<Vec<SuiteRow>, FileDiagnostic> {
    let mut rows = Vec::new();
    let mut offset = 0;
    for (i, line) in file.text().split('\n').enumerate() {
        let start = offset;
        offset += line.len() + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with("//") {
            continue;
        }
        let span = Span::new(start, start + line.trim_end().len());
        let fields: Vec<&str> = trimmed.split(',').map(str::trim).collect();
        if fields.len() >= 2 && VERDICT_WORDS.contains(&fields[1]) {
            let liveness = match fields.get(2).copied() {
                None => None,
                Some(l @ ("ok" | "hang")) => Some(l.to_string()),
                Some(other) => {
                    return Err(FileDiagnostic::new(
                        file,
                        Diagnostic::expected(span, "a liveness `ok` or `hang` after the verdict", format!("`{other}`")),
                    ))
                }
            };
            if fields.len() > 3 {
                return Err(FileDiagnostic::new(
                    file,
                    Diagnostic::expected(span, "a row `path,Verdict[,Liveness]`", format!("`{trimmed}`")),
                ));
            }
            rows.push(SuiteRow {
                path: fields[0].to_string(),
                expected: true,
                line: i + 1,
                verdict: Some((fields[1].to_string(), liveness)),
            });
            continue;
        }
        let Some((path, value)) = trimmed.rsplit_once(',') else {
            return Err(FileDiagnostic::new(
                file,
                Diagnostic::expected(span, "a row `path,1`, `path,0` or `path,Verdict[,Liveness]`", format!("`{trimmed}`"))
                    .with_note(format!("a Verdict is one of {}; a Liveness `ok` or `hang`", verdict_words())),
            ));
        };
        let expected = match value.trim() {
            "1" => true,
            "0" => false,
            other => {
                let vstart = start + line.rfind(',').unwrap_or(0) + 1;
                return Err(FileDiagnostic::new(
                    file,
                    Diagnostic::expected(
                        Span::new(vstart, vstart + other.len().max(1)),
                        format!("`1`, `0` or a verdict ({})", verdict_words()),
                        format!("`{other}`"),
                    ),
                ));
            }
        };
        rows.push(SuiteRow { path: path.trim().to_string(), expected, line: i + 1, verdict: None });
    }
    Ok(rows)
}

/// The verdict of one row.
#[derive(Clone, Debug)]
pub enum RowResult {
    Pass,
    Mismatch {
        got: bool,
    },
    /// A `path,Verdict[,Liveness]` row that came out differently: expected and got, as written.
    VerdictMismatch {
        expected: String,
        got: String,
    },
    Error(String),
}

#[derive(Clone, Debug)]
pub struct SuiteReport {
    pub rows: Vec<(SuiteRow, RowResult, Duration)>,
    pub elapsed: Duration,
}

impl SuiteReport {
    pub fn passed(&self) -> usize {
        self.rows.iter().filter(|r| matches!(r.1, RowResult::Pass)).count()
    }
    pub fn failed(&self) -> usize {
        self.rows.len() - self.passed()
    }
}

/// Resolve the folder that CSV paths are relative to: the CSV's folder, or its parent (Dat3M's
/// CSVs live in `expected/` and name paths from the corpus root).
pub fn default_root(csv: &Path, rows: &[SuiteRow]) -> PathBuf {
    let dir = csv.parent().map(Path::to_path_buf).unwrap_or_default();
    if let Some(first) = rows.first() {
        if !dir.join(&first.path).exists() {
            if let Some(parent) = dir.parent() {
                if parent.join(&first.path).exists() {
                    return parent.to_path_buf();
                }
            }
        }
    }
    dir
}

/// What a suite's `1`/`0` column means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SuiteKind {
    /// `1`: the test's condition holds (herd7's `Ok`).
    Condition,
    /// `1`: every fair execution terminates (Dat3M's liveness CSVs).
    Liveness,
}

/// Run all rows under `config`, in parallel, calling `progress` after each.
pub fn run_suite(rows: &[SuiteRow], root: &Path, config: &Config, kind: SuiteKind, progress: &(dyn Fn() + Sync)) -> SuiteReport {
    run_suite_with(rows, root, RowPaths::BelowRoot, config, kind, progress)
}

/// Where a row's path may lead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowPaths {
    /// Below the root only: no `..`, no absolute path or link that leads out of it (the
    /// default, so a CSV from elsewhere reads no file outside its corpus).
    BelowRoot,
    /// Anywhere (`suite --allow-outside-root`).
    Anywhere,
}

/// The file a row names, below `root` unless `paths` allows anywhere. Err: why not.
pub fn row_file(root: &Path, path: &str, paths: RowPaths) -> Result<PathBuf, String> {
    let file = root.join(path);
    if paths == RowPaths::Anywhere {
        return Ok(file);
    }
    let outside = || format!("outside the suite's root {} (pass --allow-outside-root to run it)", root.display());
    let named = Path::new(path);
    if named.components().any(|c| c == std::path::Component::ParentDir) {
        return Err(outside());
    }
    // An absolute path is below the root only when it says so (`--root /`, say); a link below
    // the root may still lead out of it.
    match (std::fs::canonicalize(root), std::fs::canonicalize(&file)) {
        (Ok(r), Ok(f)) if !f.starts_with(&r) => Err(outside()),
        _ if named.is_absolute() && !named.starts_with(root) && !std::fs::canonicalize(root).is_ok_and(|r| named.starts_with(r)) => {
            Err(outside())
        }
        _ => Ok(file),
    }
}

/// [`run_suite`], with the rows' paths confined as `paths` says.
pub fn run_suite_with(
    rows: &[SuiteRow],
    root: &Path,
    paths: RowPaths,
    config: &Config,
    kind: SuiteKind,
    progress: &(dyn Fn() + Sync),
) -> SuiteReport {
    let start = Instant::now();
    let results: Vec<(SuiteRow, RowResult, Duration)> = rows
        .par_iter()
        .map(|row| {
            let t = Instant::now();
            let decider = Decider::new(config);
            let loaded =
                row_file(root, &row.path, paths).and_then(|f| crate::load_program_with(&f, &config.input).map_err(|e| e.to_string()));
            let res = match loaded {
                Err(e) => RowResult::Error(e),
                Ok(program) if row.verdict.is_some() => verdict_row(row, &program, &decider),
                Ok(program) => {
                    let verdict = match kind {
                        SuiteKind::Condition => decider.verdict(&program).and_then(decided).map(|o| o.ok()),
                        SuiteKind::Liveness => decider.liveness(&program).map(|l| l.status == LivenessStatus::Ok),
                    };
                    match verdict {
                        Err(e) => RowResult::Error(e.to_string()),
                        Ok(v) if v == row.expected => RowResult::Pass,
                        Ok(v) => RowResult::Mismatch { got: v },
                    }
                }
            };
            progress();
            (row.clone(), res, t.elapsed())
        })
        .collect();
    SuiteReport { rows: results, elapsed: start.elapsed() }
}

/// An outcome a limit stopped is an error for a suite row (its counts decide nothing).
fn decided(o: Outcome) -> Result<Outcome, RunError> {
    match &o.incomplete {
        Some(why) => Err(RunError::Incomplete(why.clone())),
        None => Ok(o),
    }
}

/// Decide a `path,Verdict[,Liveness]` row.
fn verdict_row(row: &SuiteRow, program: &crate::program::Program, decider: &Decider) -> RowResult {
    let (verdict, liveness) = row.verdict.as_ref().expect("a verdict row");
    let got = match decider.verdict(program).and_then(decided) {
        Ok(o) => o.verdict().name().to_string(),
        Err(e) => return RowResult::Error(e.to_string()),
    };
    let (expected, got) = match liveness {
        None => (verdict.clone(), got),
        Some(l) => match decider.liveness(program) {
            Ok(live) => (format!("{verdict},{l}"), format!("{got},{}", if live.status == LivenessStatus::Ok { "ok" } else { "hang" })),
            Err(e) => return RowResult::Error(e.to_string()),
        },
    };
    if expected == got {
        RowResult::Pass
    } else {
        RowResult::VerdictMismatch { expected, got }
    }
}
