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

mod hw_cli;

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
    /// Colour in diagnostics: auto (on a terminal, unless NO_COLOR is set and non-empty),
    /// always, or never.
    #[arg(long, value_enum, global = true, default_value_t = ColorMode::Auto)]
    color: ColorMode,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ColorMode {
    Auto,
    Always,
    Never,
}

/// Whether diagnostics on stderr are coloured, decided once from `--color` and `NO_COLOR`.
static COLOR: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

fn color() -> bool {
    *COLOR.get().unwrap_or(&false)
}

/// `--color auto`: a terminal, and no `NO_COLOR` (https://no-color.org: set and non-empty).
fn color_choice(mode: ColorMode) -> bool {
    match mode {
        ColorMode::Always => true,
        ColorMode::Never => false,
        ColorMode::Auto => std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stderr().is_terminal(),
    }
}

#[derive(Subcommand)]
enum Command {
    /// Run litmus tests on an NVIDIA GPU: generate a CUDA harness (`gen`), build and run it and
    /// judge what the hardware shows with the model (`run`, `suite`). See docs/hardware.md.
    Hw {
        #[command(subcommand)]
        command: hw_cli::HwCommand,
    },
    /// Decide litmus tests and print herd7's result block and the verdict (Allowed / Forbidden /
    /// Undefined), or JSON, for each.
    Run {
        /// Litmus files, folders (every `*.litmus` below, sorted) or `-` for standard input.
        #[arg(required = true)]
        tests: Vec<PathBuf>,
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        limits: LimitArgs,
        /// Print one JSON object per test instead of the herd7 block (docs/json.md), a malformed
        /// test included.
        #[arg(long)]
        json: bool,
        /// Include each test's `time_seconds` in the JSON (without it, the output is the same
        /// run to run).
        #[arg(long, requires = "json")]
        timing: bool,
        /// Check whether some fair execution can hang (check), skip that check, or run only it.
        #[arg(long, value_enum, default_value_t = LivenessMode::Check)]
        liveness: LivenessMode,
        #[command(flatten)]
        herd: HerdRunArgs,
    },
    /// Explain the verdict of a test: a witness execution, or why every candidate that would
    /// reach the outcome is rejected (the axiom and the cycle, step by step).
    Explain {
        /// Litmus files, folders (every `*.litmus` below, sorted) or `-` for standard input.
        #[arg(required = true)]
        tests: Vec<PathBuf>,
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        limits: LimitArgs,
        /// Print the explanation as JSON, one object per test (docs/json.md).
        #[arg(long, conflicts_with_all = ["dot", "svg"])]
        json: bool,
        /// Print the execution shown as a Graphviz DOT graph (one test only).
        #[arg(long, conflicts_with = "svg")]
        dot: bool,
        /// Print the execution shown as an SVG picture, rendered in-process (one test only).
        #[arg(long)]
        svg: bool,
    },
    /// Run every test of a Dat3M-style expectation CSV (`path,1|0`) and report mismatches.
    Suite {
        /// The CSV file.
        csv: Option<PathBuf>,
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
        /// `only`: compare liveness instead of the condition in `path,1|0` rows (`1`: every fair
        /// execution terminates); `skip`: ignore the liveness column of `path,Verdict,Liveness`
        /// rows; `check` (the default): the condition for `1|0` rows, and the liveness column
        /// where a row has one. A bare `--liveness` means `only` (`suite --liveness CSV` as
        /// before).
        #[arg(long, num_args = 0..=1, default_missing_value = "only", value_name = "MODE")]
        liveness: Option<String>,
    },
    /// Decide tests under two models (or two readings, or a model against a log of herd7,
    /// litmus7 or `ptxmm hw` results, or two logs) and print the tests whose answers or
    /// allowed states differ, with the states each side has, as mcompare7 does.
    Compare(CompareArgs),
    /// Measure the benchmark families (src/families.rs): for each point, the time of the verdict
    /// and liveness check, of the explanation, the peak memory, and the candidates examined.
    /// Each point runs in its own child process. Prints a markdown table (for
    /// docs/performance.md) with the machine and the command, or one JSON object per point.
    /// Exit code 1 when a point's verdict or liveness differs from the expected one, or a child
    /// crashed; points stopped by a limit are reported and do not fail the bench.
    Bench {
        /// Only a representative subset of the points (a few seconds).
        #[arg(long)]
        quick: bool,
        /// Only the points of this family (repeatable): tma-ring, cp.async-loop, SB, IRIW, ISA2,
        /// independent.
        #[arg(long = "family", value_name = "NAME")]
        families: Vec<String>,
        /// Print one JSON object per point instead of the table (the machine and the command go
        /// to stderr).
        #[arg(long)]
        json: bool,
        /// Limit of each point's verdict, liveness check and explanation, each, in seconds; 0 for
        /// no limit.
        #[arg(long, value_name = "SECONDS", default_value_t = BENCH_TIMEOUT_SECS)]
        timeout: f64,
        /// Do not time the explanation.
        #[arg(long)]
        no_explain: bool,
    },
    /// Generate litmus tests from cycles of relaxations (diy7's idea for PTX, with asynchronous
    /// edges): one test from the edges given, or with --family every cycle up to --size, written
    /// to -o DIR with an index.csv of the verdicts (docs/for-researchers.md).
    Gen {
        /// The edges of one cycle, e.g. `PodWW Rfe PodRR Fre` (MP); not with --family.
        #[arg(conflicts_with = "family")]
        cycle: Vec<String>,
        /// Write every cycle of 2..=--size edges from --edges (or the built-in sets).
        #[arg(long)]
        family: bool,
        /// The largest cycle of a family, in edges.
        #[arg(long, default_value_t = 4, requires = "family")]
        size: usize,
        /// The most threads of a test.
        #[arg(long, default_value_t = 4)]
        nprocs: usize,
        /// The family's edges, separated by spaces or commas (default: the generic set).
        #[arg(long, requires = "family", conflicts_with = "async_family")]
        edges: Option<String>,
        /// Use the asynchronous edge set instead of the generic one.
        #[arg(long = "async", requires = "family")]
        async_family: bool,
        /// The most tests a family may have.
        #[arg(long, default_value_t = 5000)]
        max_tests: usize,
        /// The scope of relaxed, acquire and release accesses and of unscoped fences.
        #[arg(long, default_value = "gpu", value_parser = ["cta", "gpu", "sys"])]
        scope: String,
        /// Output folder (required with --family; without it one test is printed).
        #[arg(short = 'o', long = "out", value_name = "DIR")]
        out: Option<PathBuf>,
        /// Do not decide the family's tests (no index.csv).
        #[arg(long)]
        no_decide: bool,
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Serve the web playground (built by `bash web/build.sh` into web/dist) on 127.0.0.1, for
    /// offline use; prints the address, then serves until interrupted.
    Serve {
        /// The port (0: any free port; the address printed says which).
        #[arg(long, default_value_t = 8000)]
        port: u16,
        /// The folder of the built page (default: web/dist here, or in the checkout ptxmm was
        /// built from).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Measure one point of a benchmark family in this process and print one JSON object
    /// (what `ptxmm bench` runs in each child process).
    #[command(hide = true)]
    BenchPoint {
        /// Limit of the verdict, the liveness check and the explanation, each, in seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = BENCH_TIMEOUT_SECS)]
        timeout: f64,
        /// Do not time the explanation.
        #[arg(long)]
        no_explain: bool,
        /// The family name.
        family: String,
        /// The parameters, as in `FamilyPoint::params` (e.g. `S=3 C=2 L=3`, `N=4 fence.sc`).
        params: Vec<String>,
    },
}

/// `ptxmm compare`'s arguments: a left and a right side, each a model (built-in or cat
/// file, with readings) or a log.
#[derive(Args)]
struct CompareArgs {
    /// Tests, folders or `@INDEX` files to decide on the sides that are models (none when
    /// both sides are logs).
    tests: Vec<PathBuf>,
    /// The left side's cat file.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["left_model", "left_log"])]
    left_cat: Option<PathBuf>,
    /// The left side's built-in model (default: ptx).
    #[arg(long, value_name = "NAME", conflicts_with = "left_log")]
    left_model: Option<String>,
    /// A reading of the left side (repeatable; see `run --reading`).
    #[arg(long = "left-reading", value_name = "FLAG", conflicts_with = "left_log")]
    left_readings: Vec<String>,
    /// The left side is this log (herd7, litmus7, `ptxmm hw` or `ptxmm run` output).
    #[arg(long, value_name = "LOG")]
    left_log: Option<PathBuf>,
    /// The right side's cat file.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["right_model", "right_log"])]
    right_cat: Option<PathBuf>,
    /// The right side's built-in model (default: ptx).
    #[arg(long, value_name = "NAME", conflicts_with = "right_log")]
    right_model: Option<String>,
    /// A reading of the right side (repeatable).
    #[arg(long = "right-reading", value_name = "FLAG", conflicts_with = "right_log")]
    right_readings: Vec<String>,
    /// The right side is this log.
    #[arg(long, value_name = "LOG")]
    right_log: Option<PathBuf>,
    /// A folder to search for the cat files' includes (repeatable; herd7's `-I`).
    #[arg(short = 'I', long = "include", value_name = "DIR")]
    include: Vec<PathBuf>,
    /// The library folder searched after the `-I` folders (herd7's `-set-libdir`).
    #[arg(long, value_name = "DIR")]
    set_libdir: Option<PathBuf>,
    #[command(flatten)]
    limits: LimitArgs,
    /// Worker threads (default: all cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Print the comparison as one JSON object.
    #[arg(long)]
    json: bool,
}

/// One side of `ptxmm compare`: its description and its results.
fn compare_side(
    args: &CompareArgs,
    cat: &Option<PathBuf>,
    model: &Option<String>,
    readings: &[String],
    log: &Option<PathBuf>,
    tests: &[(String, ptxmm::program::Program)],
    by_file: bool,
) -> Result<(String, Vec<ptxmm::herdlog::LogTest>, usize), String> {
    use rayon::prelude::*;
    if let Some(log) = log {
        let text = std::fs::read_to_string(log).map_err(|e| format!("{}: cannot read: {e}", log.display()))?;
        let tests = ptxmm::herdlog::parse_log(&text).map_err(|e| format!("{}:{e}", log.display()))?;
        return Ok((format!("log {}", log.display()), tests, 0));
    }
    let margs = ModelArgs {
        cat: cat.clone(),
        model: model.clone(),
        readings: readings.to_vec(),
        include: args.include.clone(),
        set_libdir: args.set_libdir.clone(),
        through: Through::None,
        skipchecks: Vec::new(),
    };
    let (m, name) = load_model(&margs)?;
    let r = margs.readings()?;
    let opts = args.limits.options();
    let results: Vec<Result<ptxmm::herdlog::LogTest, String>> = tests
        .par_iter()
        .map(|(file, program)| {
            let mut program = program.clone();
            program.readings = r;
            let o = run(&program, &m, &opts.starting_now()).map_err(|e| format!("{file}: {e}"))?;
            let text = format!("{}{}", ptxmm::report::headline(&o, None), ptxmm::report::herd_block(&o));
            let mut parsed = ptxmm::herdlog::parse_log(&text).map_err(|e| format!("{file}: ptxmm's own block does not read back: {e}"))?;
            let mut t = parsed.pop().ok_or_else(|| format!("{file}: ptxmm's own block has no test"))?;
            if by_file {
                // Two models decide the same files: match them by file, as test names repeat.
                t.name = file.clone();
            }
            Ok(t)
        })
        .collect();
    let mut out = Vec::new();
    let mut errors = 0;
    for res in results {
        match res {
            Ok(t) => out.push(t),
            Err(e) => {
                eprintln!("{e}");
                errors += 1;
            }
        }
    }
    let readings = if readings.is_empty() { String::new() } else { format!(" --reading {}", readings.join(" --reading ")) };
    Ok((format!("model {name}{readings}"), out, errors))
}

fn cmd_compare(args: &CompareArgs) -> ExitCode {
    if let Some(j) = args.jobs {
        let _ = rayon::ThreadPoolBuilder::new().num_threads(j.max(1)).build_global();
    }
    let needs_tests = args.left_log.is_none() || args.right_log.is_none();
    if needs_tests && args.tests.is_empty() {
        eprintln!("error: compare: a side is a model, so tests are needed (files, folders or @INDEX)");
        return ExitCode::from(2);
    }
    let mut status = ExitCode::SUCCESS;
    let mut tests = Vec::new();
    if needs_tests {
        for input in expand_inputs(&args.tests) {
            match load_input(input, &args.limits.input(), false, None) {
                Some(t) => tests.push(t),
                None => status = ExitCode::from(1),
            }
        }
    }
    let by_file = args.left_log.is_none() && args.right_log.is_none();
    let left = compare_side(args, &args.left_cat, &args.left_model, &args.left_readings, &args.left_log, &tests, by_file);
    let right = compare_side(args, &args.right_cat, &args.right_model, &args.right_readings, &args.right_log, &tests, by_file);
    let ((lname, l, lerr), (rname, r, rerr)) = match (left, right) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if lerr + rerr > 0 {
        status = ExitCode::from(1);
    }
    let c = ptxmm::compare::compare(&l, &r);
    if args.json {
        let mut v = serde_json::to_value(&c).expect("comparison serialises");
        v["schema_version"] = ptxmm::report::SCHEMA_VERSION.into();
        v["left"] = lname.into();
        v["right"] = rname.into();
        v["errors"] = (lerr + rerr).into();
        outln!("{v}");
    } else {
        outln!("Left:  {lname}");
        outln!("Right: {rname}");
        out!("{}", c.text());
    }
    if !c.differences.is_empty() && status == ExitCode::SUCCESS {
        status = ExitCode::from(1);
    }
    status
}

/// herd7's options of `run` (`docs/herd-options.md`).
#[derive(Args)]
struct HerdRunArgs {
    /// Stop at the first execution that settles the condition (herd7's `-speedcheck`; `true`
    /// and `fast`, or the bare flag, stop; `false` does not): the answer is reported, the
    /// states, counts and findings are partial and the report says so.
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "fast", default_value_t = Speedcheck::False)]
    speedcheck: Speedcheck,
    /// Draw the execution `ptxmm explain` shows of each test into the `-o` folder (herd7's
    /// `-show`): `prop` and `wit`, an execution reaching the condition's proposition (or, when
    /// none is allowed, the first rejected candidate that reaches it); `none`, no drawing.
    #[arg(long, value_enum)]
    show: Option<ShowMode>,
    /// The folder the drawings go to, one per test, named after the test file (`MP.dot`);
    /// it must exist (herd7's `-o`). Without --show, `--show prop`.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    output: Option<PathBuf>,
    /// The drawings' format: Graphviz `dot` (herd7's) or `svg`.
    #[arg(long, value_enum, default_value_t = DrawFormat::Dot)]
    show_format: DrawFormat,
    /// Stop drawing after N drawings (in all; herd7's `-nshow`).
    #[arg(long, value_name = "N")]
    nshow: Option<usize>,
    /// Run only the tests named in FILE (first word of each line; repeatable; herd7's `-names`).
    #[arg(long, value_name = "FILE")]
    names: Vec<PathBuf>,
    /// Do not run the tests named in FILE (repeatable; herd7's `-excl`).
    #[arg(long, value_name = "FILE")]
    excl: Vec<PathBuf>,
    /// Replace the final conditions of the tests FILE names: lines `NAME "exists (...)"`
    /// (repeatable; herd7's `-conds`).
    #[arg(long, value_name = "FILE")]
    conds: Vec<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Speedcheck {
    False,
    True,
    Fast,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ShowMode {
    Prop,
    Wit,
    None,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum DrawFormat {
    Dot,
    Svg,
}

/// [`HerdRunArgs`] with its files read.
struct HerdRun {
    speedcheck: bool,
    draw: Option<(PathBuf, DrawFormat)>,
    nshow: Option<usize>,
    names: Option<std::collections::BTreeSet<String>>,
    excl: std::collections::BTreeSet<String>,
    conds: std::collections::BTreeMap<String, ptxmm::herdopts::CondOverride>,
}

impl HerdRunArgs {
    fn load(&self) -> Result<HerdRun, String> {
        let draw = match (self.show, &self.output) {
            (Some(ShowMode::None), _) => None,
            (_, Some(dir)) if !dir.is_dir() => return Err(format!("-o {}: not an existing folder", dir.display())),
            (_, Some(dir)) => Some((dir.clone(), self.show_format)),
            (Some(_), None) => return Err("--show needs a folder for the drawings: -o DIR".to_string()),
            (None, None) => None,
        };
        let mut names = None;
        for f in &self.names {
            names.get_or_insert_with(std::collections::BTreeSet::new).extend(ptxmm::herdopts::read_names(f)?);
        }
        let mut excl = std::collections::BTreeSet::new();
        for f in &self.excl {
            excl.extend(ptxmm::herdopts::read_names(f)?);
        }
        let mut conds = std::collections::BTreeMap::new();
        for f in &self.conds {
            conds.extend(ptxmm::herdopts::read_conds(f)?);
        }
        Ok(HerdRun { speedcheck: self.speedcheck != Speedcheck::False, draw, nshow: self.nshow, names, excl, conds })
    }
}

impl HerdRun {
    /// Whether `--names` / `--excl` select the test named `name`.
    fn selects(&self, name: &str) -> bool {
        self.names.as_ref().is_none_or(|n| n.contains(name)) && !self.excl.contains(name)
    }
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
    /// A folder to search for a cat file's includes (herd7's `-I`; repeatable), before the
    /// library folder.
    #[arg(short = 'I', long = "include", value_name = "DIR")]
    include: Vec<PathBuf>,
    /// The library folder searched for includes after the `-I` folders (herd7's
    /// `-set-libdir`; herd7's library holds `stdlib.cat` and `cos.cat`).
    #[arg(long, value_name = "DIR")]
    set_libdir: Option<PathBuf>,
    /// Let executions the model rejects through (herd7's `-through`): `all` and `invalid`
    /// apply none of the model's consistency checks (flags and undefined_unless still run);
    /// `none` (the default) applies them all.
    #[arg(long, value_enum, default_value_t = Through::None)]
    through: Through,
    /// Do not apply the named checks of the model (`as NAME`; comma-separated, repeatable;
    /// herd7's `-skipchecks`).
    #[arg(long, value_name = "NAME[,NAME]", value_delimiter = ',')]
    skipchecks: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Through {
    All,
    Invalid,
    None,
}

impl ModelArgs {
    /// The include search folders: `-I` folders, then `--set-libdir`.
    fn search_dirs(&self) -> Vec<PathBuf> {
        self.include.iter().cloned().chain(self.set_libdir.clone()).collect()
    }

    fn skip(&self) -> ptxmm::cat::Skip {
        ptxmm::cat::Skip { all_consistency: self.through != Through::None, names: self.skipchecks.clone() }
    }

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
    /// The search budget of one test, in model evaluations, partial candidates included (trace
    /// combinations and mbarrier states count too); beyond it the search stops, what was found
    /// by then is reported, and the verdict is Unknown unless it is Undefined.
    #[arg(long, default_value_t = Limits::default().max_candidates)]
    max_candidates: u64,
    /// Give up on one test after this many seconds (condition and liveness together, or one
    /// explanation); 0 for no limit. What was found by then is reported.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_TIMEOUT_SECS)]
    timeout: f64,
    /// The most memory events one run of one thread may have.
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_trace_events)]
    max_events: usize,
    /// The most distinct final states kept for one test; beyond it the search stops and what
    /// was found is reported (each state costs memory in proportion to the observables).
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_states)]
    max_states: usize,
    /// The largest test file read, in bytes; a larger one is refused before it is parsed.
    #[arg(long, value_name = "BYTES", default_value_t = ptxmm::InputLimits::default().max_file_bytes)]
    max_file_size: u64,
    /// The most instructions (labels included) one thread of a test may have.
    #[arg(long, value_name = "N", default_value_t = ptxmm::InputLimits::default().max_instructions)]
    max_instructions: usize,
    /// The most threads a test may have.
    #[arg(long, value_name = "N", default_value_t = ptxmm::InputLimits::default().max_threads)]
    max_threads: usize,
}

/// `--timeout`'s default, per test.
const DEFAULT_TIMEOUT_SECS: f64 = 10.0;

/// `bench --timeout`'s default, per point and per stage (verdict, liveness, explanation).
const BENCH_TIMEOUT_SECS: f64 = 60.0;

impl LimitArgs {
    fn input(&self) -> ptxmm::InputLimits {
        ptxmm::InputLimits { max_file_bytes: self.max_file_size, max_instructions: self.max_instructions, max_threads: self.max_threads }
    }

    fn options(&self) -> RunOptions {
        let timeout = (self.timeout > 0.0 && self.timeout.is_finite()).then(|| std::time::Duration::from_secs_f64(self.timeout));
        RunOptions {
            limits: Limits {
                unroll: self.unroll,
                max_candidates: self.max_candidates,
                max_trace_events: self.max_events,
                max_states: self.max_states,
                timeout,
                ..Limits::default()
            },
            deadline: None,
            speedcheck: false,
        }
    }
}

fn load_model(args: &ModelArgs) -> Result<(CatModel, String), String> {
    let color = color();
    let (model, name) = match (&args.cat, &args.model) {
        (Some(path), _) => {
            ptxmm::models::from_file_with(path, &args.search_dirs()).map(|m| (m, path.display().to_string())).map_err(|d| d.render(color))
        }
        (None, name) => {
            let name = name.clone().unwrap_or_else(|| ptxmm::models::DEFAULT_MODEL.to_string());
            ptxmm::models::builtin(&name).map(|m| (m, name)).map_err(|d| d.render(color))
        }
    }?;
    let skip = args.skip();
    if skip == ptxmm::cat::Skip::default() {
        return Ok((model, name));
    }
    model.skipping(&skip).map(|m| (m, name)).map_err(|e| format!("error: {e}"))
}

fn main() -> ExitCode {
    // herd7's single-dash spellings (`-through all`) become ptxmm's long options first.
    let cli = Cli::parse_from(ptxmm::herdopts::rewrite_herd_argv(std::env::args_os()));
    let _ = COLOR.set(color_choice(cli.color));
    match cli.command {
        Command::Run { tests, model, limits, json, timing, liveness, herd } => match herd.load() {
            Ok(h) => cmd_run(&tests, &model, &limits, json, timing, liveness, &h),
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        },
        Command::Compare(args) => cmd_compare(&args),
        Command::Explain { tests, model, limits, json, dot, svg } => cmd_explain(&tests, &model, &limits, json, dot, svg),
        Command::Suite { csv, root, model, limits, jobs, liveness } => match suite_liveness(csv, liveness) {
            Ok((csv, liveness)) => cmd_suite(&csv, root, &model, &limits, jobs, liveness),
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        },
        Command::Bench { quick, families, json, timeout, no_explain } => cmd_bench(quick, &families, json, timeout, no_explain),
        Command::BenchPoint { timeout, no_explain, family, params } => cmd_bench_point(&family, &params, timeout, no_explain),
        Command::Gen { cycle, family, size, nprocs, edges, async_family, max_tests, scope, out, no_decide, model, limits } => {
            let request = GenRequest { cycle, family, size, nprocs, edges, async_family, max_tests, scope, out, no_decide };
            cmd_gen(&request, &model, &limits)
        }
        Command::Serve { port, dir } => cmd_serve(port, dir.as_deref()),
        Command::Hw { command } => hw_cli::cmd_hw(command),
    }
}

/// `ptxmm gen`'s arguments.
struct GenRequest {
    cycle: Vec<String>,
    family: bool,
    size: usize,
    nprocs: usize,
    edges: Option<String>,
    async_family: bool,
    max_tests: usize,
    scope: String,
    out: Option<PathBuf>,
    no_decide: bool,
}

fn cmd_gen(req: &GenRequest, model: &ModelArgs, limits: &LimitArgs) -> ExitCode {
    use ptxmm::gen::{edges, emit::EmitOptions};
    let fail = |msg: String| {
        eprintln!("error: {msg}");
        ExitCode::from(2)
    };
    let opts = EmitOptions { scope: edges::Scope::parse(&req.scope).unwrap_or(edges::Scope::Gpu) };
    if !req.family {
        if req.cycle.is_empty() {
            return fail(format!(
                "gen: give the edges of a cycle (e.g. `ptxmm gen PodWW Rfe PodRR Fre`) or --family; {}",
                edges::vocabulary_help()
            ));
        }
        let cycle = match edges::parse_edges(&req.cycle.join(" ")) {
            Ok(c) => c,
            Err(e) => return fail(e),
        };
        let test = match ptxmm::gen::generate(&cycle, req.nprocs, &opts) {
            Ok(t) => t,
            Err(why) => return fail(format!("the cycle `{}` gives no test: {why}", req.cycle.join(" "))),
        };
        return match &req.out {
            None => {
                out!("{}", test.text);
                ExitCode::SUCCESS
            }
            Some(dir) => match ptxmm::gen::write_family(dir, std::slice::from_ref(&test), None) {
                Ok(_) => {
                    eprintln!("wrote {}", dir.join(format!("{}.litmus", test.name)).display());
                    ExitCode::SUCCESS
                }
                Err(e) => fail(format!("{}: {e}", dir.display())),
            },
        };
    }
    let Some(dir) = &req.out else { return fail("gen --family: the output folder is required (-o DIR)".to_string()) };
    let list = match (&req.edges, req.async_family) {
        (Some(l), _) => l.as_str(),
        (None, true) => edges::ASYNC_EDGES,
        (None, false) => edges::GENERIC_EDGES,
    };
    let vocab = match edges::parse_edges(list) {
        Ok(v) => v,
        Err(e) => return fail(format!("--edges: {e}")),
    };
    let bounds = ptxmm::gen::FamilyBounds { size: req.size, nprocs: req.nprocs, max_tests: req.max_tests };
    let family = match ptxmm::gen::family(&vocab, &bounds, &opts) {
        Ok(f) => f,
        Err(e) => return fail(e),
    };
    let decided = if req.no_decide {
        None
    } else {
        match load_model(model) {
            Ok((m, _)) => Some(m),
            Err(e) => return fail(e),
        }
    };
    let run_opts = limits.options();
    match ptxmm::gen::write_family(dir, &family.tests, decided.as_ref().map(|m| (m, &run_opts))) {
        Ok(counts) => {
            let verdicts: Vec<String> = counts.iter().map(|(v, n)| format!("{n} {v}")).collect();
            eprintln!(
                "gen family: {} tests in {}{}",
                family.tests.len(),
                dir.display(),
                if verdicts.is_empty() { String::new() } else { format!(" ({}; index.csv)", verdicts.join(", ")) }
            );
            for (why, n) in &family.rejected {
                eprintln!("  {n} cycles skipped: {why}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(format!("{}: {e}", dir.display())),
    }
}

fn cmd_serve(port: u16, dir: Option<&std::path::Path>) -> ExitCode {
    let root = match ptxmm::serve::page_dir(dir) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let listener = match ptxmm::serve::bind(port) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: cannot listen on 127.0.0.1:{port}: {e}");
            return ExitCode::from(2);
        }
    };
    let addr = listener.local_addr().map_or_else(|_| format!("127.0.0.1:{port}"), |a| a.to_string());
    outln!("Serving the ptxmm playground ({}) at http://{addr}/ (Ctrl-C stops)", root.display());
    match ptxmm::serve::serve(listener, root) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// `suite`'s CSV and liveness mode. `--liveness` takes `check|skip|only` as `run`'s does; the
/// older bare flag means `only`, and in `suite --liveness CSV` the word after it is the CSV.
fn suite_liveness(csv: Option<PathBuf>, liveness: Option<String>) -> Result<(PathBuf, LivenessMode), String> {
    use clap::ValueEnum as _;
    let (csv, mode) = match liveness {
        None => (csv, LivenessMode::Check),
        Some(word) => match LivenessMode::from_str(&word, false) {
            Ok(mode) => (csv, mode),
            Err(_) if csv.is_none() => (Some(PathBuf::from(word)), LivenessMode::Only),
            Err(_) => return Err(format!("--liveness: expected `check`, `skip` or `only`, found `{word}`")),
        },
    };
    Ok((csv.ok_or("suite: the CSV file is required (`ptxmm suite CSV`)")?, mode))
}

/// One test named on the command line: a file, or standard input (`-`).
enum Input {
    File(PathBuf),
    Stdin,
}

impl Input {
    /// The name reports use: the path, or `<stdin>`.
    fn name(&self) -> String {
        match self {
            Input::File(p) => p.display().to_string(),
            Input::Stdin => "<stdin>".to_string(),
        }
    }

    fn load(&self, limits: &ptxmm::InputLimits) -> Result<ptxmm::program::Program, ptxmm::LoadError> {
        match self {
            Input::File(p) => ptxmm::load_program_with(p, limits),
            Input::Stdin => {
                let text = ptxmm::read_limited(std::io::stdin(), &self.name(), limits)?;
                ptxmm::parse_program_with(SourceFile::new(self.name(), text), limits)
            }
        }
    }
}

/// The tests named by `paths`: files as given, `-` as standard input, and for a folder every
/// `*.litmus` file below it, sorted. A folder with no test is an error (the message).
fn expand_inputs(paths: &[PathBuf]) -> Vec<Result<Input, String>> {
    let mut inputs = Vec::new();
    for p in paths {
        if let Some(index) = p.to_str().and_then(|s| s.strip_prefix('@')).filter(|_| !p.exists()) {
            // herd7's index file: a list of tests (`docs/herd-options.md`).
            match ptxmm::herdopts::read_index(std::path::Path::new(index)) {
                Ok(listed) => inputs.extend(expand_inputs(&listed)),
                Err(e) => inputs.push(Err(e)),
            }
        } else if p.as_os_str() == "-" {
            inputs.push(Ok(Input::Stdin));
        } else if p.is_dir() {
            let mut found = Vec::new();
            let mut stack = vec![p.clone()];
            while let Some(dir) = stack.pop() {
                let entries = match std::fs::read_dir(&dir) {
                    Ok(e) => e,
                    Err(e) => {
                        inputs.push(Err(format!("{}: cannot read: {e}", dir.display())));
                        continue;
                    }
                };
                for e in entries.flatten() {
                    let path = e.path();
                    if path.is_dir() {
                        stack.push(path);
                    } else if path.extension().is_some_and(|x| x == "litmus") {
                        found.push(path);
                    }
                }
            }
            if found.is_empty() {
                inputs.push(Err(format!("{}: no `*.litmus` file in this folder", p.display())));
            }
            found.sort();
            inputs.extend(found.into_iter().map(|f| Ok(Input::File(f))));
        } else {
            inputs.push(Ok(Input::File(p.clone())));
        }
    }
    inputs
}

/// Report a test that has no result: the diagnostic on stderr and, in JSON mode, its record.
fn report_failure(json: bool, file: &str, test: Option<&str>, model: Option<&str>, rendered: &str, error: ptxmm::report::JsonError) {
    eprintln!("{rendered}");
    if json {
        outln!("{}", ptxmm::report::json_error(file, test, model, error));
    }
}

/// Load one test named on the command line; a failure is reported (stderr, and its JSON
/// record in JSON mode) and gives None.
fn load_input(
    input: Result<Input, String>,
    limits: &ptxmm::InputLimits,
    json: bool,
    model: Option<&str>,
) -> Option<(String, ptxmm::program::Program)> {
    use ptxmm::report::JsonError;
    let input = match input {
        Ok(i) => i,
        Err(why) => {
            report_failure(json, &why, None, model, &why, JsonError::plain(why.clone()));
            return None;
        }
    };
    let file = input.name();
    match input.load(limits) {
        Ok(p) => Some((file, p)),
        Err(e) => {
            report_failure(json, &file, None, model, &e.render(color()), JsonError::of_load(&e));
            None
        }
    }
}

fn cmd_run(
    tests: &[PathBuf],
    model_args: &ModelArgs,
    limits: &LimitArgs,
    json: bool,
    timing: bool,
    liveness: LivenessMode,
    herd: &HerdRun,
) -> ExitCode {
    use ptxmm::report::JsonError;
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
    let opts = RunOptions { speedcheck: herd.speedcheck, ..limits.options() };
    let mut status = ExitCode::SUCCESS;
    let mut drawn = 0;
    for input in expand_inputs(tests) {
        let Some((file, mut program)) = load_input(input, &limits.input(), json, Some(&model_name)) else {
            status = ExitCode::from(1);
            continue;
        };
        if !herd.selects(&program.name) {
            continue;
        }
        if let Some(cond) = herd.conds.get(&program.name) {
            let replaced = ptxmm::herdopts::with_condition(&program.source, cond)
                .map_err(|d| ptxmm::LoadError::Syntax(ptxmm::diag::FileDiagnostic::new(&program.source, d)))
                .and_then(|f| ptxmm::parse_program_with(f, &limits.input()));
            match replaced {
                Ok(p) => program = p,
                Err(e) => {
                    report_failure(json, &file, Some(&program.name), Some(&model_name), &e.render(color()), JsonError::of_load(&e));
                    status = ExitCode::from(1);
                    continue;
                }
            }
        }
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
            Err(e) => {
                // An address error carries its own `line:col: ` prefix.
                let sep = if matches!(e, ptxmm::check::RunError::Explore(ptxmm::exec::trace::ExploreError::BadAddress { .. })) {
                    ":"
                } else {
                    ": "
                };
                report_failure(
                    json,
                    &file,
                    Some(&program.name),
                    Some(&model_name),
                    &format!("{file}{sep}{e}"),
                    JsonError::plain(e.to_string()),
                );
                status = ExitCode::from(1);
                continue;
            }
        };
        if let Some(why) = outcome.as_ref().and_then(|o| o.incomplete.as_ref()) {
            eprintln!("{file}: not decided: {why}");
            status = ExitCode::from(1);
        }
        if let Some(why) = outcome.as_ref().and_then(|o| o.inconclusive()) {
            eprintln!("{file}: inconclusive: {why}");
            status = ExitCode::from(1);
        }
        // A liveness failure (e.g. the search budget) does not hide the decided condition.
        let (live, live_error) = match live.transpose() {
            Ok(l) => (l, None),
            Err(e) => {
                eprintln!("{file}: liveness not decided: {e}");
                status = ExitCode::from(1);
                (None, Some(e.to_string()))
            }
        };
        if let Some((dir, format)) = herd.draw.as_ref().filter(|_| herd.nshow.is_none_or(|n| drawn < n)) {
            match draw(&program, &model, &opts, &file, dir, *format) {
                Ok(()) => drawn += 1,
                Err(e) => {
                    eprintln!("{file}: no drawing: {e}");
                    status = ExitCode::from(1);
                }
            }
        }
        if json {
            let mut v = match &outcome {
                Some(o) => ptxmm::report::json(o, &file, &model_name, ptxmm::report::JsonOptions { timing }),
                None => serde_json::json!({
                    "schema_version": ptxmm::report::SCHEMA_VERSION,
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
            outln!("{v}");
        } else {
            match &outcome {
                Some(o) => {
                    out!("{}{}{}", ptxmm::report::headline(o, live.as_ref()), ptxmm::report::herd_block(o), ptxmm::report::verdict_block(o))
                }
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

/// `--show`: the execution `explain` shows, drawn into `dir` as `STEM.dot` or `STEM.svg`.
fn draw(
    program: &ptxmm::program::Program,
    model: &CatModel,
    opts: &RunOptions,
    file: &str,
    dir: &std::path::Path,
    format: DrawFormat,
) -> Result<(), String> {
    let x = ptxmm::explain::explain(program, model, opts).map_err(|e| e.to_string())?;
    let stem = std::path::Path::new(file).file_stem().map_or_else(|| program.name.clone(), |s| s.to_string_lossy().into_owned());
    let (text, ext) = match format {
        DrawFormat::Dot => (ptxmm::explain::dot::to_dot(&x.graph), "dot"),
        DrawFormat::Svg => (ptxmm::explain::svg::to_svg(&x.graph), "svg"),
    };
    let path = dir.join(format!("{stem}.{ext}"));
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn cmd_explain(tests: &[PathBuf], model_args: &ModelArgs, limits: &LimitArgs, json: bool, dot: bool, svg: bool) -> ExitCode {
    use ptxmm::report::JsonError;
    let (model, _) = match load_model(model_args) {
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
    let inputs = expand_inputs(tests);
    if (dot || svg) && inputs.len() != 1 {
        eprintln!("error: --dot and --svg draw one test; {} were given", inputs.len());
        return ExitCode::from(2);
    }
    let mut status = ExitCode::SUCCESS;
    for (i, input) in inputs.into_iter().enumerate() {
        let Some((file, mut program)) = load_input(input, &limits.input(), json, None) else {
            status = ExitCode::from(1);
            continue;
        };
        program.readings = readings;
        match ptxmm::explain::explain(&program, &model, &limits.options()) {
            Ok(x) => {
                if json {
                    let mut v = serde_json::to_value(&x).expect("explanation serialises");
                    v["graph"] = serde_json::to_value(&x.graph).expect("graph serialises");
                    v["schema_version"] = ptxmm::report::SCHEMA_VERSION.into();
                    v["file"] = file.into();
                    outln!("{v}");
                } else if dot {
                    out!("{}", ptxmm::explain::dot::to_dot(&x.graph));
                } else if svg {
                    out!("{}", ptxmm::explain::svg::to_svg(&x.graph));
                } else {
                    if i > 0 {
                        outln!();
                    }
                    out!("{}", x.text);
                }
            }
            Err(e) => {
                report_failure(json, &file, Some(&program.name), None, &format!("{file}: {e}"), JsonError::plain(e.to_string()));
                status = ExitCode::from(1);
            }
        }
    }
    status
}

fn cmd_suite(
    csv: &PathBuf,
    root: Option<PathBuf>,
    model_args: &ModelArgs,
    limits: &LimitArgs,
    jobs: Option<usize>,
    liveness: LivenessMode,
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
    let mut rows = match suite::parse_csv(&file) {
        Ok(r) => r,
        Err(d) => {
            eprintln!("{}", d.render(color()));
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
    if liveness == LivenessMode::Skip {
        for (_, l) in rows.iter_mut().filter_map(|r| r.verdict.as_mut()) {
            *l = None;
        }
    }
    let kind = if liveness == LivenessMode::Only { suite::SuiteKind::Liveness } else { suite::SuiteKind::Condition };
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

/// `bench --timeout` (or `bench-point --timeout`) as a limit: None for 0 (no limit).
fn bench_timeout(secs: f64) -> Option<std::time::Duration> {
    (secs > 0.0 && secs.is_finite()).then(|| std::time::Duration::from_secs_f64(secs))
}

/// The machine, for the context of a table: cores and CPU model.
fn machine_line() -> String {
    let cores = std::thread::available_parallelism().map_or_else(|_| "? cores".to_string(), |n| format!("{n} cores"));
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| t.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split_once(':')).map(|(_, v)| v.trim().to_string()));
    match cpu {
        Some(cpu) => format!("{cores} (available_parallelism), {cpu}"),
        None => format!("{cores} (available_parallelism), CPU model unknown"),
    }
}

/// This process's command line, quoted for a shell where needed.
fn command_line() -> String {
    let quote = |a: String| {
        if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c)) {
            a
        } else {
            format!("'{}'", a.replace('\'', "'\\''"))
        }
    };
    std::env::args().map(quote).collect::<Vec<_>>().join(" ")
}

/// `ptxmm bench`: measure each point in a child process (`bench-point`) and print the table.
fn cmd_bench(quick: bool, families: &[String], json: bool, timeout: f64, no_explain: bool) -> ExitCode {
    use ptxmm::families::{self, Measurement};
    let mut wanted = Vec::new();
    for f in families {
        match families::family_name(f) {
            Some(name) => wanted.push(name),
            None => {
                eprintln!("error: --family: unknown family `{f}` (one of: {})", families::FAMILIES.join(", "));
                return ExitCode::from(2);
            }
        }
    }
    let points: Vec<_> = if quick { families::quick_points() } else { families::all_points() }
        .into_iter()
        .filter(|p| wanted.is_empty() || wanted.contains(&p.family))
        .collect();
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: cannot find this executable to run the points: {e}");
            return ExitCode::from(2);
        }
    };
    let limit = bench_timeout(timeout);
    let started = std::time::Instant::now();
    if json {
        eprintln!("Machine: {}", machine_line());
        eprintln!("Command: {}", command_line());
    }
    let mut rows = Vec::new();
    // Points whose child crashed (not those stopped by a limit).
    let mut failed = Vec::new();
    for (i, point) in points.iter().enumerate() {
        let (row, crashed) = measure_in_child(&exe, point, timeout, limit, no_explain);
        if crashed {
            failed.push(row.name.clone());
        }
        let note = match (&row.error, row.mismatch()) {
            (_, true) => " MISMATCH".to_string(),
            (Some(e), _) => format!(" ({e})"),
            _ => String::new(),
        };
        eprintln!(
            "[{}/{}] {} {}: {} in {:.3} s{note}",
            i + 1,
            points.len(),
            point.family,
            point.params,
            row.verdict.as_deref().unwrap_or("error"),
            row.run_s
        );
        if json {
            let mut v = serde_json::to_value(&row).expect("measurements serialise");
            v["schema_version"] = ptxmm::report::SCHEMA_VERSION.into();
            outln!("{v}");
        }
        rows.push(row);
    }
    if !json {
        outln!("Machine: {}", machine_line());
        outln!("Command: {}", command_line());
        outln!(
            "Limits: --timeout {timeout} s for each of verdict, liveness{} per point; --unroll per point; model {}",
            if no_explain { "" } else { ", explanation" },
            ptxmm::models::DEFAULT_MODEL
        );
        outln!("Peak MB: the child process's VmHWM (MiB). The verdict's search statistics: evaluations (of the model, on partial and complete candidates), partial (candidates built a choice at a time), dead ends (partial candidates with nothing consistent below), candidates (complete ones evaluated), consistent");
        outln!();
        out!("{}", families::markdown_table(&rows));
        outln!();
        outln!("{} points in {:.1} s", rows.len(), started.elapsed().as_secs_f64());
    }
    let mismatches: Vec<&Measurement> = rows.iter().filter(|r| r.mismatch()).collect();
    let crashed: Vec<&Measurement> = rows.iter().filter(|r| failed.contains(&r.name)).collect();
    for r in &mismatches {
        eprintln!(
            "MISMATCH {} ({} {}): verdict {} (expected {}), liveness {} (expected {})",
            r.name,
            r.family,
            r.params,
            r.verdict.as_deref().unwrap_or("-"),
            r.expected_verdict,
            r.liveness.as_deref().unwrap_or("-"),
            r.expected_liveness
        );
    }
    for r in &crashed {
        eprintln!("FAILED {} ({} {}): {}", r.name, r.family, r.params, r.error.as_deref().unwrap_or(""));
    }
    if mismatches.is_empty() && crashed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Run `ptxmm bench-point` for `point` and read its JSON line. A child that crashes, prints no
/// measurement, or outlives every limit it was given (three stages plus a margin) gives a row
/// with the reason; the flag says whether the child crashed (rather than ran past its limits).
fn measure_in_child(
    exe: &std::path::Path,
    point: &ptxmm::families::FamilyPoint,
    timeout: f64,
    limit: Option<std::time::Duration>,
    no_explain: bool,
) -> (ptxmm::families::Measurement, bool) {
    use ptxmm::families::Measurement;
    use std::io::Read as _;
    use std::process::{Command as Process, Stdio};
    let mut cmd = Process::new(exe);
    cmd.arg("bench-point").arg("--timeout").arg(timeout.to_string());
    if no_explain {
        cmd.arg("--no-explain");
    }
    cmd.arg(point.family).args(point.params.split_whitespace()).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return (Measurement::failed(point, format!("cannot start {}: {e}", exe.display())), true),
    };
    let reader = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let stdout = reader(child.stdout.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    let stderr = reader(child.stderr.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    // The child enforces its own limits; this only catches one that ignores them.
    let watchdog = limit.map(|l| l * 4 + std::time::Duration::from_secs(30));
    let started = std::time::Instant::now();
    let mut killed = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {
                if watchdog.is_some_and(|w| started.elapsed() > w) {
                    let _ = child.kill();
                    killed = true;
                    break child.wait();
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => break Err(e),
        }
    };
    let out = stdout.join().unwrap_or_default();
    let err = stderr.join().unwrap_or_default();
    let tail = |s: &str| {
        let s = s.trim();
        let start = s.char_indices().rev().nth(400).map_or(0, |(i, _)| i);
        s[start..].replace('\n', " ")
    };
    if killed {
        return (Measurement::failed(point, format!("killed after {:.0} s (past every limit)", started.elapsed().as_secs_f64())), false);
    }
    let failed = |why: String| (Measurement::failed(point, why), true);
    match status {
        Ok(s) if s.success() => match out.lines().rev().find_map(|l| serde_json::from_str::<Measurement>(l).ok()) {
            Some(m) => (m, false),
            None => failed(format!("the child printed no measurement: {}", tail(&err))),
        },
        Ok(s) => failed(format!("the child failed ({s}): {}", tail(&err))),
        Err(e) => failed(format!("cannot wait for the child: {e}")),
    }
}

/// `ptxmm bench-point`: measure one point in this process and print its JSON object.
fn cmd_bench_point(family: &str, params: &[String], timeout: f64, no_explain: bool) -> ExitCode {
    let point = match ptxmm::families::point(family, &params.join(" ")) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let model = match ptxmm::models::builtin(ptxmm::models::DEFAULT_MODEL) {
        Ok(m) => m,
        Err(d) => {
            eprintln!("{}", d.render(false));
            return ExitCode::from(2);
        }
    };
    let m = ptxmm::families::measure(&point, &model, bench_timeout(timeout), !no_explain);
    outln!("{}", serde_json::to_string(&m).expect("measurements serialise"));
    ExitCode::SUCCESS
}
