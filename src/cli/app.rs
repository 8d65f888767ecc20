//! The `ptxmm` command line: its arguments (clap) and the dispatch to the command modules.

use crate::cli::ExitCode;
use clap::{CommandFactory, Parser, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;

use crate::cli::bench::{cmd_bench, cmd_bench_point};
use crate::cli::compare::{cmd_compare, CompareArgs};
use crate::cli::decide::{cmd_explain, cmd_run, cmd_suite, suite_liveness, Drawing};
use crate::cli::gen::{cmd_gen, GenRequest};
use crate::cli::options::{HerdRunArgs, LimitArgs, LivenessMode, ModelArgs, BENCH_TIMEOUT_SECS};
use crate::cli::serve::cmd_serve;
use crate::decide::suite::RowPaths;

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
        command: crate::cli::hw::HwCommand,
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
        /// List every final state, however long the enumeration takes. Without it, once the
        /// enumeration exceeds a fixed work budget (65,536 consistent executions) the verdict of an
        /// `exists`/`~exists` condition is decided by a search for the outcome itself, and the
        /// states, counts and findings shown are those enumerated by then, marked as partial
        /// (docs/performance.md).
        #[arg(long)]
        all_states: bool,
        #[command(flatten)]
        herd: HerdRunArgs,
    },
    /// Check one kernel of a PTX module (`nvcc -ptx`): its launch becomes a litmus test (see
    /// --emit-litmus) decided as `run` decides one, with findings at PTX and CUDA lines
    /// (docs/kernels.md).
    Kernel(Box<crate::cli::kernel::KernelArgs>),
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
        /// Print the execution shown as an SVG picture, rendered in-process (one test only). The
        /// initial writes and the events on variables the highlighted cycle or race does not touch
        /// are folded into `⋯ N events folded` boxes (see --all-events).
        #[arg(long)]
        svg: bool,
        /// With --svg: draw every event, nothing folded.
        #[arg(long, requires = "svg")]
        all_events: bool,
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
        /// Worker threads (default: all cores; at most 256).
        #[arg(long)]
        jobs: Option<usize>,
        /// Run rows whose paths leave --root (absolute paths, `..`, links out of it); without
        /// it such a row is an error.
        #[arg(long)]
        allow_outside_root: bool,
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
        /// independent, loops, long-thread, mp-broadcast, tile-sched, tma-ring2, cluster-ring.
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
        /// Use the read-modify-write edge set (atom, red) instead of the generic one.
        #[arg(long, requires = "family", conflicts_with_all = ["edges", "async_family"])]
        rmw: bool,
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
        /// Print the point's litmus source instead of measuring it (to run it with `ptxmm run`).
        #[arg(long)]
        source: bool,
        /// The family name.
        family: String,
        /// The parameters, as in `FamilyPoint::params` (e.g. `S=3 C=2 L=3`, `N=4 fence.sc`).
        params: Vec<String>,
    },
}

/// The short options of the subcommand a command line names (`ptxmm hw judge B -v`: `hw
/// judge`'s), found by following subcommand names through clap's definition: a herd7 spelling
/// among them (`-v`) is that subcommand's own option, not herd7's.
fn subcommand_short_options(argv: &[std::ffi::OsString]) -> Vec<char> {
    let mut command = Cli::command();
    for arg in argv.iter().skip(1) {
        let Some(arg) = arg.to_str() else { continue };
        if arg == "--" || !command.has_subcommands() {
            break;
        }
        if let Some(sub) = command.find_subcommand(arg) {
            command = sub.clone();
        }
    }
    command.get_arguments().filter_map(|a| a.get_short()).collect()
}

/// Run the command line `argv` (its first element the program's name): what `ptxmm` does, and
/// what the Python package's `ptxmm` command runs in process.
pub fn main(argv: Vec<std::ffi::OsString>) -> ExitCode {
    // herd7's single-dash spellings (`-through all`) become ptxmm's long options first.
    let own_short = subcommand_short_options(&argv);
    let argv = match crate::herd::options::rewrite_herd_argv(argv, &own_short) {
        Ok(argv) => argv,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let cli = Cli::parse_from(argv);
    let _ = super::COLOR.set(color_choice(cli.color));
    match cli.command {
        Command::Run { tests, model, limits, json, timing, liveness, all_states, herd } => match herd.load() {
            Ok(h) => with_config(&model, &limits, json.then_some(true), |config| {
                let budget = if all_states { None } else { config.enumeration_budget };
                cmd_run(&tests, &crate::config::Config { enumeration_budget: budget, ..config.clone() }, json, timing, liveness, &h)
            }),
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        },
        Command::Compare(args) => cmd_compare(&args),
        Command::Kernel(args) => crate::cli::kernel::cmd_kernel(&args),
        Command::Explain { tests, model, limits, json, dot, svg, all_events } => {
            // `explain` records carry no model (docs/json.md).
            let draw = if all_events {
                Drawing::SvgAll
            } else if svg {
                Drawing::Svg
            } else if dot {
                Drawing::Dot
            } else {
                Drawing::None
            };
            with_config(&model, &limits, json.then_some(false), |config| cmd_explain(&tests, config, json, draw))
        }
        Command::Suite { csv, root, model, limits, jobs, allow_outside_root, liveness } => match suite_liveness(csv, liveness) {
            Ok((csv, liveness)) => {
                let paths = if allow_outside_root { RowPaths::Anywhere } else { RowPaths::BelowRoot };
                with_config(&model, &limits, None, |config| cmd_suite(&csv, root, paths, config, jobs, liveness))
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        },
        Command::Bench { quick, families, json, timeout, no_explain } => cmd_bench(quick, &families, json, timeout, no_explain),
        Command::BenchPoint { timeout, no_explain, source, family, params } => {
            cmd_bench_point(&family, &params, timeout, no_explain, source)
        }
        Command::Gen { cycle, family, size, nprocs, edges, async_family, rmw, max_tests, scope, out, no_decide, model, limits } => {
            let request = GenRequest { cycle, family, size, nprocs, edges, async_family, rmw, max_tests, scope, out, no_decide };
            cmd_gen(&request, &model, &limits)
        }
        Command::Serve { port, dir } => cmd_serve(port, dir.as_deref()),
        Command::Hw { command } => crate::cli::hw::cmd_hw(command),
    }
}

/// Run a command that decides with the configuration its model and limit flags give; a bad
/// model or reading ends it with status 2, and with its JSON error record when `json_record`
/// is `Some(with_model)` (a bad model is an error of every test, so it gets one record).
fn with_config(
    model: &ModelArgs,
    limits: &LimitArgs,
    json_record: Option<bool>,
    command: impl FnOnce(&crate::Config) -> ExitCode,
) -> ExitCode {
    match model.config_or_error(limits) {
        Ok(config) => command(&config),
        Err(e) => {
            eprintln!("{}", e.rendered);
            if let Some(with_model) = json_record {
                let mut record = e.record();
                if !with_model {
                    record.as_object_mut().map(|o| o.remove("model"));
                }
                outln!("{record}");
            }
            ExitCode::from(2)
        }
    }
}
