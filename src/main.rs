//! The `ptxmm` command line. All the work lives in the library; this file parses arguments,
//! picks the model, and prints.

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ptxmm::cat::CatModel;
use ptxmm::check::{run, RunOptions};
use ptxmm::diag::SourceFile;
use ptxmm::exec::trace::Limits;
use ptxmm::liveness::check_liveness;
use ptxmm::suite::{self, RowResult};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

/// `println!` that ends the program quietly when stdout is closed (e.g. piped into `head`).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

/// `print!` with the same behaviour as [`outln!`].
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if write!(std::io::stdout(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

#[derive(Parser)]
#[command(name = "ptxmm", version, about = "Decide PTX litmus tests under the PTX memory consistency model")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Decide litmus tests and print herd7's result block and the verdict (Allowed / Forbidden /
    /// Undefined), or JSON, for each.
    Run {
        /// Litmus files.
        #[arg(required = true)]
        tests: Vec<PathBuf>,
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        limits: LimitArgs,
        /// Print one JSON object per test instead of the herd7 block.
        #[arg(long)]
        json: bool,
        /// Check whether some fair execution can hang (check), skip that check, or run only it.
        #[arg(long, value_enum, default_value_t = LivenessMode::Check)]
        liveness: LivenessMode,
    },
    /// Explain the verdict of a test: a witness execution, or why every candidate that would
    /// reach the outcome is rejected (the axiom and the cycle, step by step).
    Explain {
        /// The litmus file.
        test: PathBuf,
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        limits: LimitArgs,
        /// Print the explanation as JSON.
        #[arg(long, conflicts_with_all = ["dot", "svg"])]
        json: bool,
        /// Print the execution shown as a Graphviz DOT graph.
        #[arg(long, conflicts_with = "svg")]
        dot: bool,
        /// Print the execution shown as an SVG picture (rendered in-process).
        #[arg(long)]
        svg: bool,
    },
    /// Run every test of a Dat3M-style expectation CSV (`path,1|0`) and report mismatches.
    Suite {
        /// The CSV file.
        csv: PathBuf,
        /// Folder the CSV paths are relative to (default: the CSV's folder, or its parent).
        #[arg(long)]
        root: Option<PathBuf>,
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        limits: LimitArgs,
        /// Worker threads (default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Compare liveness instead of the condition: `1` means every fair execution terminates.
        #[arg(long)]
        liveness: bool,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LivenessMode {
    Check,
    Skip,
    Only,
}

#[derive(Args)]
struct ModelArgs {
    /// A cat model file (herd7/Dat3M dialect), e.g. Dat3M's ptx-v7.5.cat.
    #[arg(long, value_name = "FILE", conflicts_with = "model")]
    cat: Option<PathBuf>,
    /// A built-in model: ptx (the default: PTX 7.5 plus asynchronous operations), ptx-7.5 or ptx-6.0.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// Select the alternative reading of an ambiguity of the spec (repeatable):
    /// proxy-fence-anywhere (AMBIG-1), signal-by-issuer (AMBIG-3), ct-needs-release-arrive
    /// (AMBIG-7), read-wait-without-fence (AMBIG-13), mbarrier-chain-strict (AMBIG-14),
    /// wgmma-issue-fences (AMBIG-17), commit-order (AMBIG-18). See docs/async-model.md.
    #[arg(long = "reading", value_name = "FLAG")]
    readings: Vec<String>,
}

impl ModelArgs {
    fn readings(&self) -> Result<ptxmm::readings::Readings, String> {
        let mut r = ptxmm::readings::Readings::default();
        for f in &self.readings {
            r.select(f).map_err(|e| format!("error: --reading: {e}"))?;
        }
        Ok(r)
    }
}

#[derive(Args)]
struct LimitArgs {
    /// How often a loop that is not a side-effect-free spin loop may iterate back.
    #[arg(long, default_value_t = Limits::default().unroll)]
    unroll: usize,
    /// Give up after this many model evaluations of one test (partial candidates included);
    /// what was found by then is reported, and the verdict is Unknown unless it is Undefined.
    #[arg(long, default_value_t = Limits::default().max_candidates)]
    max_candidates: u64,
    /// Give up on one test after this many seconds (condition and liveness together, or one
    /// explanation); 0 for no limit. What was found by then is reported.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_TIMEOUT_SECS)]
    timeout: f64,
    /// The most memory events one run of one thread may have.
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_trace_events)]
    max_events: usize,
}

/// `--timeout`'s default, per test.
const DEFAULT_TIMEOUT_SECS: f64 = 10.0;

impl LimitArgs {
    fn options(&self) -> RunOptions {
        let timeout = (self.timeout > 0.0 && self.timeout.is_finite()).then(|| std::time::Duration::from_secs_f64(self.timeout));
        RunOptions {
            limits: Limits {
                unroll: self.unroll,
                max_candidates: self.max_candidates,
                max_trace_events: self.max_events,
                timeout,
                ..Limits::default()
            },
            deadline: None,
        }
    }
}

fn load_model(args: &ModelArgs) -> Result<(CatModel, String), String> {
    let color = std::io::stderr().is_terminal();
    match (&args.cat, &args.model) {
        (Some(path), _) => ptxmm::models::from_file(path).map(|m| (m, path.display().to_string())).map_err(|d| d.render(color)),
        (None, name) => {
            let name = name.clone().unwrap_or_else(|| ptxmm::models::DEFAULT_MODEL.to_string());
            ptxmm::models::builtin(&name).map(|m| (m, name)).map_err(|d| d.render(color))
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run { tests, model, limits, json, liveness } => cmd_run(&tests, &model, &limits, json, liveness),
        Command::Explain { test, model, limits, json, dot, svg } => cmd_explain(&test, &model, &limits, json, dot, svg),
        Command::Suite { csv, root, model, limits, jobs, liveness } => cmd_suite(&csv, root, &model, &limits, jobs, liveness),
    }
}

fn cmd_run(tests: &[PathBuf], model_args: &ModelArgs, limits: &LimitArgs, json: bool, liveness: LivenessMode) -> ExitCode {
    let (model, model_name) = match load_model(model_args) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let readings = match model_args.readings() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let color = std::io::stderr().is_terminal();
    let opts = limits.options();
    let mut status = ExitCode::SUCCESS;
    for path in tests {
        let mut program = match ptxmm::load_program(path) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{}", e.render(color));
                status = ExitCode::from(1);
                continue;
            }
        };
        program.readings = readings;
        if let Some(w) = ptxmm::check::model_mismatch(&program, &model) {
            eprintln!("{w}");
        }
        // One deadline for the condition and the liveness check of this test.
        let opts = opts.starting_now();
        let outcome = if liveness == LivenessMode::Only { None } else { Some(run(&program, &model, &opts)) };
        let live = if liveness == LivenessMode::Skip { None } else { Some(check_liveness(&program, &model, &opts)) };
        let outcome = match outcome.transpose() {
            Ok(o) => o,
            Err(e @ ptxmm::check::RunError::Explore(ptxmm::exec::trace::ExploreError::BadAddress { .. })) => {
                eprintln!("{}:{e}", path.display());
                status = ExitCode::from(1);
                continue;
            }
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                status = ExitCode::from(1);
                continue;
            }
        };
        if let Some(why) = outcome.as_ref().and_then(|o| o.incomplete.as_ref()) {
            eprintln!("{}: not decided: {why}", path.display());
            status = ExitCode::from(1);
        }
        // A liveness failure (e.g. the search budget) does not hide the decided condition.
        let live = match live.transpose() {
            Ok(l) => l,
            Err(e) => {
                eprintln!("{}: liveness not decided: {e}", path.display());
                status = ExitCode::from(1);
                None
            }
        };
        if json {
            let mut v = match &outcome {
                Some(o) => ptxmm::report::json(o, &path.display().to_string(), &model_name),
                None => serde_json::json!({ "test": program.name, "file": path.display().to_string(), "model": model_name }),
            };
            if let Some(l) = &live {
                v["liveness"] = serde_json::to_value(l).expect("liveness serialises");
            }
            outln!("{v}");
        } else {
            match &outcome {
                Some(o) => out!("{}{}", ptxmm::report::herd_block(o), ptxmm::report::verdict_block(o)),
                None => outln!("Test {}", program.name),
            }
            if let Some(l) = &live {
                out!("{}", l.report());
            }
            outln!();
        }
    }
    status
}

fn cmd_explain(path: &std::path::Path, model_args: &ModelArgs, limits: &LimitArgs, json: bool, dot: bool, svg: bool) -> ExitCode {
    let (model, _) = match load_model(model_args) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let mut program = match ptxmm::load_program(path) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{}", e.render(std::io::stderr().is_terminal()));
            return ExitCode::from(1);
        }
    };
    match model_args.readings() {
        Ok(r) => program.readings = r,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    }
    match ptxmm::explain::explain(&program, &model, &limits.options()) {
        Ok(x) => {
            if json {
                let mut v = serde_json::to_value(&x).expect("explanation serialises");
                v["graph"] = serde_json::to_value(&x.graph).expect("graph serialises");
                outln!("{v}");
            } else if dot {
                out!("{}", ptxmm::explain::dot::to_dot(&x.graph));
            } else if svg {
                out!("{}", ptxmm::explain::svg::to_svg(&x.graph));
            } else {
                out!("{}", x.text);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{}: {e}", path.display());
            ExitCode::from(1)
        }
    }
}

fn cmd_suite(
    csv: &PathBuf,
    root: Option<PathBuf>,
    model_args: &ModelArgs,
    limits: &LimitArgs,
    jobs: Option<usize>,
    liveness: bool,
) -> ExitCode {
    let (model, model_name) = match load_model(model_args) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if let Some(j) = jobs {
        // Ignore the error: the pool may already exist, which is harmless.
        let _ = rayon::ThreadPoolBuilder::new().num_threads(j.max(1)).build_global();
    }
    let text = match std::fs::read_to_string(csv) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{}: cannot read: {e}", csv.display());
            return ExitCode::from(2);
        }
    };
    let file = SourceFile::new(csv.display().to_string(), text);
    let rows = match suite::parse_csv(&file) {
        Ok(r) => r,
        Err(d) => {
            eprintln!("{}", d.render(std::io::stderr().is_terminal()));
            return ExitCode::from(2);
        }
    };
    let root = root.unwrap_or_else(|| suite::default_root(csv, &rows));
    let bar = ProgressBar::new(rows.len() as u64);
    if std::io::stderr().is_terminal() {
        bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed}").expect("valid template"));
    } else {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    let kind = if liveness { suite::SuiteKind::Liveness } else { suite::SuiteKind::Condition };
    let report = suite::run_suite(&rows, &root, &model, &limits.options(), kind, &|| bar.inc(1));
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
    outln!("model {model_name}, {} tests in {:.2}s", report.rows.len(), report.elapsed.as_secs_f64());
    outln!("{} passed, {} failed", report.passed(), report.failed());
    if report.failed() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
