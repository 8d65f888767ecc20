//! `ptxmm run`, `explain` and `suite`: decide tests and print their reports.

use crate::cli::color;
use crate::cli::inputs::{expand_inputs, load_input, report_failure};
use crate::cli::options::{DrawFormat, HerdRun, LivenessMode};
use crate::cli::ExitCode;
use crate::config::Config;
use crate::decide::suite::{self, RowResult};
use crate::decide::Decider;
use crate::diag::SourceFile;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;

/// `suite`'s CSV and liveness mode. `--liveness` takes `check|skip|only` as `run`'s does; the
/// older bare flag means `only`, and in `suite --liveness CSV` the word after it is the CSV.
pub(crate) fn suite_liveness(csv: Option<PathBuf>, liveness: Option<String>) -> Result<(PathBuf, LivenessMode), String> {
    use clap::ValueEnum as _;
    let (csv, mode) = match liveness {
        // Dat3M names its liveness expectations `…-Liveness-expected.csv`; its rows are
        // `path,1|0` as the condition CSVs', so only the name tells them apart.
        None if csv.as_ref().is_some_and(|p| is_liveness_csv_name(p)) => {
            eprintln!(
                "note: {} is read as a liveness CSV (its name says so): `1` means every fair execution terminates; --liveness check compares conditions instead",
                csv.as_ref().map(|p| p.display().to_string()).unwrap_or_default()
            );
            (csv, LivenessMode::Only)
        }
        None => (csv, LivenessMode::Check),
        Some(word) => match LivenessMode::from_str(&word, false) {
            Ok(mode) => (csv, mode),
            Err(_) if csv.is_none() => (Some(PathBuf::from(word)), LivenessMode::Only),
            Err(_) => return Err(format!("--liveness: expected `check`, `skip` or `only`, found `{word}`")),
        },
    };
    Ok((csv.ok_or("suite: the CSV file is required (`ptxmm suite CSV`)")?, mode))
}

/// Whether a suite CSV's file name says it holds liveness expectations (`*liveness*.csv`).
fn is_liveness_csv_name(path: &std::path::Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.to_ascii_lowercase().contains("liveness"))
}

/// The exit status of a command over many tests: the worst of theirs (0 decided, 1 a test
/// without a result, 2 a bad model), so a later test never hides an earlier failure.
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Status(u8);

impl Status {
    pub(crate) const FAILED: Status = Status(1);
    pub(crate) const BAD_MODEL: Status = Status(2);

    pub(crate) fn raise(&mut self, other: Status) {
        *self = (*self).max(other);
    }

    /// The status of a test whose run failed with `e`: a model that cannot be applied is a bad
    /// model (README: status 2), anything else a test without a result.
    fn of_run_error(e: &crate::decide::RunError) -> Status {
        if matches!(e, crate::decide::RunError::Model(_)) {
            Status::BAD_MODEL
        } else {
            Status::FAILED
        }
    }
}

impl From<Status> for ExitCode {
    fn from(s: Status) -> ExitCode {
        ExitCode::from(s.0)
    }
}

/// Run `decide` on one test, catching a panic so that the tests after it still get their
/// results: the panic becomes the test's error (and its JSON record).
fn guarded(json: bool, file: &str, test: &str, model: Option<&str>, decide: impl FnOnce() -> Status) -> Status {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(decide)) {
        Ok(status) => status,
        Err(payload) => {
            let what = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            let message = format!("internal error (please report it): {what}");
            report_failure(
                json,
                file,
                Some(test),
                model,
                &format!("{file}: {message}"),
                crate::decide::report::JsonError::plain(message.clone()),
            );
            Status::FAILED
        }
    }
}

pub(crate) fn cmd_run(tests: &[PathBuf], config: &Config, json: bool, timing: bool, liveness: LivenessMode, herd: &HerdRun) -> ExitCode {
    use crate::decide::report::JsonError;
    let config = &Config { speedcheck: herd.speedcheck, ..config.clone() };
    let model_name = &config.model_name;
    let mut status = Status::default();
    let mut drawn = 0;
    for input in expand_inputs(tests) {
        let Some((file, mut program)) = load_input(input, &config.input, json, Some(model_name)) else {
            status.raise(Status::FAILED);
            continue;
        };
        if !herd.selects(&program.name) {
            continue;
        }
        if let Some(cond) = herd.conds.get(&program.name) {
            let replaced = crate::herd::options::with_condition(&program.source, cond)
                .map_err(|d| crate::LoadError::Syntax(crate::diag::FileDiagnostic::new(&program.source, d)))
                .and_then(|f| crate::parse_program_with(f, &config.input));
            match replaced {
                Ok(p) => program = p,
                Err(e) => {
                    report_failure(json, &file, Some(&program.name), Some(model_name), &e.render(color()), JsonError::of_load(&e));
                    status.raise(Status::FAILED);
                    continue;
                }
            }
        }
        let test = RunTest { program: &program, file: &file, config, json, timing, liveness, herd };
        status.raise(guarded(json, &file, &program.name, Some(model_name), || test.run(&mut drawn)));
    }
    status.into()
}

/// One test of `ptxmm run`, loaded, with the options that decide and print it.
struct RunTest<'a> {
    program: &'a crate::program::Program,
    file: &'a str,
    config: &'a Config,
    json: bool,
    timing: bool,
    liveness: LivenessMode,
    herd: &'a HerdRun,
}

impl RunTest<'_> {
    /// Decide the test and print its report; `drawn` counts the drawings made so far.
    fn run(&self, drawn: &mut usize) -> Status {
        use crate::decide::report::JsonError;
        let RunTest { program, file, config, json, timing, liveness, herd } = *self;
        let model_name = &config.model_name;
        let mut status = Status::default();
        if let Some(w) = crate::decide::model_mismatch(program, &config.model) {
            eprintln!("{w}");
        }
        for w in &program.warnings {
            eprint!("{}", w.render(&program.source, color()));
        }
        // One deadline for the condition and the liveness check of this test.
        let decider = Decider::new(config);
        let outcome = if liveness == LivenessMode::Only { None } else { Some(decider.verdict(program)) };
        let live = if liveness == LivenessMode::Skip { None } else { Some(decider.liveness(program)) };
        let outcome = match outcome.transpose() {
            Ok(o) => o,
            Err(e) => {
                // An address error carries its own `line:col: ` prefix.
                let sep = if matches!(&e, crate::decide::RunError::Explore(x) if x.is_located()) { ":" } else { ": " };
                report_failure(
                    json,
                    file,
                    Some(&program.name),
                    Some(model_name),
                    &format!("{file}{sep}{e}"),
                    JsonError::plain(e.to_string()),
                );
                status.raise(Status::of_run_error(&e));
                return status;
            }
        };
        if let Some(why) = outcome.as_ref().and_then(|o| o.incomplete.as_ref()) {
            eprintln!("{file}: not decided: {why}");
            status.raise(Status::FAILED);
        }
        if let Some(why) = outcome.as_ref().and_then(|o| o.inconclusive()) {
            // The text report's verdict lines give the reason: said once, not again here.
            if json {
                eprintln!("{file}: inconclusive: {why}");
            } else {
                eprintln!("{file}: inconclusive (exit status 1; the verdict lines say why)");
            }
            status.raise(Status::FAILED);
        }
        // A liveness failure (e.g. the search budget) does not hide the decided condition.
        let (live, live_error) = match live.transpose() {
            Ok(l) => (l, None),
            Err(e) => {
                eprintln!("{file}: liveness not decided: {e}");
                status.raise(Status::of_run_error(&e));
                (None, Some(e.to_string()))
            }
        };
        if let Some((dir, format)) = herd.draw.as_ref().filter(|_| herd.nshow.is_none_or(|n| *drawn < n)) {
            match draw(program, &decider, file, dir, *format) {
                Ok(()) => *drawn += 1,
                Err(e) => {
                    eprintln!("{file}: no drawing: {e}");
                    status.raise(Status::FAILED);
                }
            }
        }
        if json {
            let mut v = match &outcome {
                Some(o) => crate::decide::report::json_streamed(o, file, model_name, crate::decide::report::JsonOptions { timing }),
                None => serde_json::json!({
                    "schema_version": crate::decide::report::SCHEMA_VERSION,
                    "test": program.name,
                    "file": file,
                    "model": model_name,
                }),
            };
            if let Some(l) = &live {
                v["liveness"] = serde_json::to_value(l).expect("liveness serialises");
            }
            if let Some(e) = live_error {
                v["liveness_error"] = e.into();
            }
            let printed = {
                use std::io::Write as _;
                let mut out = std::io::BufWriter::new(std::io::stdout().lock());
                match &outcome {
                    Some(o) => crate::decide::report::write_json(o, &v, &mut out),
                    None => write!(out, "{v}"),
                }
                .and_then(|()| writeln!(out))
                .and_then(|()| out.flush())
            };
            if printed.is_err() {
                std::process::exit(0);
            }
        } else {
            match &outcome {
                Some(o) => {
                    out!("{}", crate::decide::report::run_text(o, live.as_ref()))
                }
                None => outln!("Test {}", program.name),
            }
            if let Some(l) = &live {
                out!("{}", l.report());
            }
            outln!();
        }
        status
    }
}

/// `--show`: the execution `explain` shows, drawn into `dir` as `STEM.dot` or `STEM.svg`.
pub(crate) fn draw(
    program: &crate::program::Program,
    decider: &Decider,
    file: &str,
    dir: &std::path::Path,
    format: DrawFormat,
) -> Result<(), String> {
    let x = decider.explain(program).map_err(|e| e.to_string())?;
    let stem = std::path::Path::new(file).file_stem().map_or_else(|| program.name.clone(), |s| s.to_string_lossy().into_owned());
    let (text, ext) = match format {
        DrawFormat::Dot => (crate::decide::explain::dot::to_dot(&x.graph), "dot"),
        DrawFormat::Svg => (crate::decide::explain::svg::to_svg(&x.graph), "svg"),
    };
    let path = dir.join(format!("{stem}.{ext}"));
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// What `explain` draws instead of its text.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Drawing {
    None,
    /// `--dot`.
    Dot,
    /// `--svg`: what the explanation is about, the rest folded.
    Svg,
    /// `--svg --all-events`.
    SvgAll,
}

pub(crate) fn cmd_explain(tests: &[PathBuf], config: &Config, json: bool, draw: Drawing) -> ExitCode {
    use crate::decide::report::JsonError;
    let inputs = expand_inputs(tests);
    if draw != Drawing::None && inputs.len() != 1 {
        eprintln!("error: --dot and --svg draw one test; {} were given", inputs.len());
        return ExitCode::from(2);
    }
    let mut status = Status::default();
    for (i, input) in inputs.into_iter().enumerate() {
        let Some((file, program)) = load_input(input, &config.input, json, None) else {
            status.raise(Status::FAILED);
            continue;
        };
        status.raise(guarded(json, &file, &program.name, None, || match Decider::new(config).explain(&program) {
            Ok(x) => {
                if json {
                    let mut v = serde_json::to_value(&x).expect("explanation serialises");
                    v["graph"] = serde_json::to_value(&x.graph).expect("graph serialises");
                    v["schema_version"] = crate::decide::report::SCHEMA_VERSION.into();
                    v["file"] = file.clone().into();
                    outln!("{v}");
                } else if draw == Drawing::Dot {
                    out!("{}", crate::decide::explain::dot::to_dot(&x.graph));
                } else if draw == Drawing::Svg {
                    out!("{}", crate::decide::explain::svg::to_svg(&x.graph));
                } else if draw == Drawing::SvgAll {
                    out!("{}", crate::decide::explain::svg::to_svg_all(&x.graph));
                } else {
                    if i > 0 {
                        outln!();
                    }
                    out!("{}", x.text);
                }
                Status::default()
            }
            Err(e) => {
                report_failure(json, &file, Some(&program.name), None, &format!("{file}: {e}"), JsonError::plain(e.to_string()));
                Status::of_run_error(&e)
            }
        }));
    }
    status.into()
}

/// The most worker threads `suite --jobs` starts: more only cost memory (a stack each).
pub(crate) const MAX_JOBS: usize = 256;

/// The worker pool of `suite --jobs N` (None: rayon's global pool, one thread per core). Err:
/// the threads could not be started (the message names --jobs).
fn suite_pool(jobs: Option<usize>) -> Result<Option<rayon::ThreadPool>, String> {
    let Some(asked) = jobs else { return Ok(None) };
    let mut n = asked.clamp(1, MAX_JOBS);
    if n != asked {
        eprintln!("suite: --jobs {asked} is more than {MAX_JOBS} worker threads; using {n}");
    }
    // Deciding is CPU work: threads past the cores only share them, and each test's --timeout
    // (wall-clock time) would then measure its wait for a core, not its own work.
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    if n > cores {
        eprintln!(
            "suite: --jobs {n} is more than the {cores} core(s) here; using {cores}, so that each test's --timeout measures its own work"
        );
        n = cores;
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .map(Some)
        .map_err(|e| format!("error: cannot start {n} worker threads: {e} (lower --jobs)"))
}

pub(crate) fn cmd_suite(
    csv: &std::path::Path,
    root: Option<PathBuf>,
    paths: suite::RowPaths,
    config: &Config,
    jobs: Option<usize>,
    liveness: LivenessMode,
) -> ExitCode {
    let pool = match suite_pool(jobs) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let text = match crate::read_regular(csv) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{}: cannot read: {e}", csv.display());
            return ExitCode::from(2);
        }
    };
    let file = SourceFile::new(csv.display().to_string(), text);
    let mut rows = match suite::parse_csv(&file) {
        Ok(r) => r,
        Err(d) => {
            eprintln!("{}", d.render(color()));
            return ExitCode::from(2);
        }
    };
    if rows.is_empty() {
        eprintln!("{}: error: no test rows (`path,1|0` or `path,Verdict[,Liveness]`): a suite of no test checks nothing", csv.display());
        return ExitCode::from(2);
    }
    let root = root.unwrap_or_else(|| suite::default_root(csv, &rows));
    let bar = ProgressBar::new(rows.len() as u64);
    if std::io::stderr().is_terminal() {
        bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed}").expect("valid template"));
    } else {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    if liveness == LivenessMode::Skip {
        for (_, l) in rows.iter_mut().filter_map(|r| r.verdict.as_mut()) {
            *l = None;
        }
    }
    let kind = if liveness == LivenessMode::Only { suite::SuiteKind::Liveness } else { suite::SuiteKind::Condition };
    let run = || suite::run_suite_with(&rows, &root, paths, config, kind, &|| bar.inc(1));
    let report = match &pool {
        Some(pool) => pool.install(run),
        None => run(),
    };
    bar.finish_and_clear();
    for (row, res, _) in &report.rows {
        match res {
            RowResult::Pass => {}
            RowResult::VerdictMismatch { expected, got } => {
                outln!("MISMATCH {}:{}: {} expected {expected}, got {got}", csv.display(), row.line, row.path)
            }
            RowResult::Mismatch { got } => {
                outln!("MISMATCH {}:{}: {} expected {}, got {}", csv.display(), row.line, row.path, row.expected as u8, *got as u8)
            }
            RowResult::Error(e) => outln!("ERROR {}:{}: {}: {}", csv.display(), row.line, row.path, e),
        }
    }
    outln!("model {}, {} tests in {:.2}s", config.model_name, report.rows.len(), report.elapsed.as_secs_f64());
    outln!("{} passed, {} failed", report.passed(), report.failed());
    if report.failed() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
