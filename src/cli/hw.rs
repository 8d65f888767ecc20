//! `ptxmm hw gen|run|suite`: the command line of the hardware harness (`ptxmm::hw`).

use crate::cli::hw_campaign::csv_paths;
use crate::cli::options::{LimitArgs, ModelArgs};
use crate::cli::ExitCode;
use crate::config::{Config, InputLimits};
use crate::decide::Decider;
use crate::hw::report::{self, HwOutput, Judged};
use crate::hw::{codegen, runner, Incantations, LoadedTest};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum HwCommand {
    /// Write a self-contained CUDA program per test (or per chunk of tests) into a folder; the
    /// build line is in each file's header.
    Gen {
        /// Litmus files or folders (every `*.litmus` below, sorted).
        #[arg(required = true)]
        tests: Vec<PathBuf>,
        /// The folder to write into (created if needed).
        #[arg(short, long, value_name = "DIR")]
        out: PathBuf,
        /// Put the tests into N files `chunk_K.cu` (many tests per program) instead of one
        /// file per test.
        #[arg(long, value_name = "N")]
        chunks: Option<usize>,
        /// Exit 0 even when some tests cannot be generated (they are still listed).
        #[arg(long)]
        keep_going: bool,
        #[command(flatten)]
        harness: HarnessArgs,
        /// The model that decides what only it can tell (a store to a tensor map while a copy
        /// reading it is in flight is not generated).
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Generate, build (nvcc) and run tests on the GPU; print litmus7's report with the model's
    /// judgement beside each observed state. Exit status 1 when the hardware shows a state the
    /// model forbids.
    Run {
        #[arg(required = true)]
        tests: Vec<PathBuf>,
        #[command(flatten)]
        harness: HarnessArgs,
        #[command(flatten)]
        device: DeviceArgs,
        /// The model that judges the observed states (default `ptx`).
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// `hw run` over a suite CSV (`ptxmm suite`'s format), with a summary table.
    Suite {
        csv: PathBuf,
        /// Folder the CSV's paths are relative to (default: as `ptxmm suite` finds it).
        #[arg(long)]
        root: Option<PathBuf>,
        /// Run rows whose paths leave --root (absolute paths, `..`, links out of it); without
        /// it such a row is an error.
        #[arg(long)]
        allow_outside_root: bool,
        /// Print one JSON object (every test's states and the totals) instead of the reports.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        harness: HarnessArgs,
        #[command(flatten)]
        device: DeviceArgs,
        /// The model that judges the observed states (default `ptx`).
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Build every test into harness programs for a GPU machine (here, with nvcc; no GPU
    /// needed): a bundle with a run script (one test per process, N at once, a deadline,
    /// resumable, `--shard I/N`) that `hw judge` judges afterwards.
    Campaign {
        /// Litmus files, folders (every `*.litmus` below) or suite CSVs.
        #[arg(required = true)]
        tests: Vec<PathBuf>,
        /// The bundle folder to create (must be new or empty).
        #[arg(short, long, value_name = "DIR")]
        out: PathBuf,
        /// Tests per program (fewer programs build faster; each test still runs in its own
        /// process).
        #[arg(long, value_name = "N", default_value_t = 64)]
        per_program: usize,
        /// Write the sources and build.sh only (build on the GPU machine).
        #[arg(long)]
        no_build: bool,
        /// nvcc processes at once (default: one per core).
        #[arg(long, value_name = "N")]
        jobs: Option<usize>,
        /// nvcc to use (default: PATH, $CUDA_HOME/bin, ~/.cache/ptxmm-nvcc).
        #[arg(long, value_name = "PATH")]
        nvcc: Option<PathBuf>,
        #[command(flatten)]
        harness: HarnessArgs,
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Judge recorded harness outputs with the model: a campaign bundle (its out/ folder), or
    /// output files and folders with --tests naming the tests they ran. Prints every test that
    /// disagrees and a summary (states, mismatches, faults, hangs, liveness mismatches,
    /// conditions seen); exit status 1 when the hardware disagrees with the model.
    Judge {
        /// A bundle folder, or output files / folders.
        #[arg(required = true)]
        outputs: Vec<PathBuf>,
        /// The tests the outputs are of (litmus files, folders, suite CSVs); not needed for a
        /// bundle.
        #[arg(long, value_name = "PATH", num_args = 1..)]
        tests: Vec<PathBuf>,
        /// A bundle's outputs elsewhere than its out/ folder.
        #[arg(long, value_name = "DIR")]
        outputs_dir: Option<PathBuf>,
        /// One JSON object: the summary and every test.
        #[arg(long)]
        json: bool,
        /// List the consistent tests too.
        #[arg(short, long)]
        verbose: bool,
        /// Print litmus7's report of every histogram.
        #[arg(long)]
        reports: bool,
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        limits: LimitArgs,
    },
}

#[derive(Args)]
pub struct HarnessArgs {
    /// Target architecture (nvcc -arch).
    #[arg(long, default_value = "sm_90a")]
    arch: String,
    /// Launches (iterations); variables are reset before each (at least 1; the harness counts
    /// them in a `long long`).
    #[arg(long, default_value_t = Incantations::default().iterations, value_parser = clap::value_parser!(u64).range(1..=i64::MAX as u64))]
    iterations: u64,
    /// Test instances per launch (at least 1; the harness counts them in an `int`).
    #[arg(long, default_value_t = Incantations::default().instances, value_parser = clap::value_parser!(u32).range(1..=i32::MAX as i64))]
    instances: u32,
    /// No per-iteration start barrier among an instance's threads.
    #[arg(long)]
    no_start_barrier: bool,
    /// Keep instances on fixed blocks (no random placement).
    #[arg(long)]
    no_shuffle: bool,
    /// Extra warps per block that stress memory (a block has at most 32 warps).
    #[arg(long, value_name = "WARPS", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=31))]
    stress: u32,
    /// Spin-loop iterations before a thread records a hang.
    #[arg(long, default_value_t = Incantations::default().spin_bound)]
    bound: u32,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

impl HarnessArgs {
    fn incantations(&self) -> Incantations {
        Incantations {
            iterations: self.iterations,
            instances: self.instances,
            start_barrier: !self.no_start_barrier,
            shuffle: !self.no_shuffle,
            stress_warps: self.stress,
            spin_bound: self.bound,
            seed: self.seed,
        }
    }
}

#[derive(Args)]
pub struct DeviceArgs {
    /// nvcc to use (default: PATH, $CUDA_HOME/bin, ~/.cache/ptxmm-nvcc).
    #[arg(long, value_name = "PATH")]
    nvcc: Option<PathBuf>,
    /// Judge a recorded harness output instead of building and running (what the harness
    /// printed on a GPU machine).
    #[arg(long, value_name = "FILE")]
    harness_output: Option<PathBuf>,
    /// Keep the generated source and binary in this folder.
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
}

pub fn cmd_hw(cmd: HwCommand) -> ExitCode {
    let config = |model: &ModelArgs, limits: &LimitArgs| {
        model.config(limits).map_err(|e| {
            eprintln!("{e}");
            ExitCode::from(2)
        })
    };
    match cmd {
        HwCommand::Gen { tests, out, chunks, keep_going, harness, model, limits } => match config(&model, &limits) {
            Ok(config) => cmd_gen(&tests, &out, chunks, keep_going, &harness, &config),
            Err(code) => code,
        },
        HwCommand::Run { tests, harness, device, model, limits } => {
            let config = match config(&model, &limits) {
                Ok(c) => c,
                Err(code) => return code,
            };
            match load_all(&tests, &config.input) {
                Ok(loaded) => execute(loaded, &harness, &device, &config, false),
                Err(code) => code,
            }
        }
        HwCommand::Campaign { tests, out, per_program, no_build, jobs, nvcc, harness, model, limits } => match config(&model, &limits) {
            Ok(config) => {
                let plan = crate::cli::hw_campaign::CampaignPlan {
                    inputs: &tests,
                    out: &out,
                    per_program,
                    build: !no_build,
                    jobs,
                    nvcc: nvcc.as_deref(),
                    arch: &harness.arch,
                    inc: harness.incantations(),
                };
                crate::cli::hw_campaign::cmd_campaign(&plan, &config)
            }
            Err(code) => code,
        },
        HwCommand::Judge { outputs, tests, outputs_dir, json, verbose, reports, model, limits } => match config(&model, &limits) {
            Ok(config) => {
                let plan = crate::cli::hw_campaign::JudgePlan {
                    inputs: &outputs,
                    tests: &tests,
                    outputs: outputs_dir.as_deref(),
                    json,
                    verbose,
                    reports,
                };
                crate::cli::hw_campaign::cmd_judge(&plan, &config)
            }
            Err(code) => code,
        },
        HwCommand::Suite { csv, root, allow_outside_root, json, harness, device, model, limits } => {
            let config = match config(&model, &limits) {
                Ok(c) => c,
                Err(code) => return code,
            };
            let paths = match csv_paths(&csv, root, allow_outside_root) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::from(2);
                }
            };
            match load_all(&paths, &config.input) {
                Ok(loaded) => execute(loaded, &harness, &device, &config, json),
                Err(code) => code,
            }
        }
    }
}

/// Load every test; a test the model rejects stops here (its message names file:line:col).
fn load_all(paths: &[PathBuf], limits: &InputLimits) -> Result<Vec<LoadedTest>, ExitCode> {
    let files = crate::hw::expand_paths(paths).map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    })?;
    let mut out = Vec::new();
    let mut failed = false;
    for f in files {
        match crate::hw::load(&f, limits) {
            Ok(t) => out.push(t),
            Err(e) => {
                eprintln!("{e}");
                failed = true;
            }
        }
    }
    if failed {
        eprintln!("error: some tests are rejected by the model (above); no harness is generated for them");
        if out.is_empty() {
            return Err(ExitCode::from(2));
        }
    }
    Ok(out)
}

fn cmd_gen(paths: &[PathBuf], out: &Path, chunks: Option<usize>, keep_going: bool, harness: &HarnessArgs, config: &Config) -> ExitCode {
    let files = match crate::hw::expand_paths(paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("error: {}: {e}", out.display());
        return ExitCode::from(2);
    }
    let inc = harness.incantations();
    let mut loaded = Vec::new();
    let mut model_rejected = 0usize;
    for f in &files {
        match crate::hw::load(f, &config.input) {
            Ok(t) => loaded.push(t),
            Err(e) => {
                eprintln!("{e}");
                model_rejected += 1;
            }
        }
    }
    name_uniquely(&mut loaded);
    // Groups of tests, one program each.
    let groups: Vec<(String, Vec<&LoadedTest>)> = match chunks {
        Some(n) if n > 0 => {
            let per = loaded.len().div_ceil(n).max(1);
            loaded.chunks(per).enumerate().map(|(k, c)| (format!("chunk_{k}.cu"), c.iter().collect())).collect()
        }
        _ => loaded.iter().map(|t| (format!("{}.cu", file_stem(&t.path)), vec![t])).collect(),
    };
    let mut generated = 0usize;
    let mut rejected = Vec::new();
    let mut written = 0usize;
    for (name, tests) in &groups {
        let hw: Vec<crate::hw::HwTest> = tests.iter().map(|t| t.hw()).collect();
        let g = codegen::generate(&hw, &inc, &harness.arch, name, config);
        generated += g.included.len();
        rejected.extend(g.rejected);
        if g.included.is_empty() {
            continue;
        }
        if let Err(e) = std::fs::write(out.join(name), &g.source) {
            eprintln!("error: {}: {e}", out.join(name).display());
            return ExitCode::from(2);
        }
        written += 1;
    }
    for r in &rejected {
        eprintln!("{r}");
    }
    println!(
        "hw gen: {} tests: {generated} generated into {written} file(s) in {}, {} rejected by the harness generator, {model_rejected} rejected by the model",
        files.len(),
        out.display(),
        rejected.len()
    );
    if (rejected.is_empty() && model_rejected == 0) || (keep_going && generated > 0) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Give every test a name of its own (`3_simple`, `3_simple~2`, …): a program selects its tests
/// by name, and a report must tell them apart.
pub(crate) fn name_uniquely(tests: &mut [LoadedTest]) {
    let ids = crate::hw::campaign::unique_ids(tests.iter().map(|t| t.program.name.as_str()));
    for (t, id) in tests.iter_mut().zip(ids) {
        t.program.name = id;
    }
}

fn file_stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect())
        .unwrap_or_else(|| "test".into())
}

/// Generate one program for every test, build and run it (or read a recorded output), judge
/// every histogram with the model and print.
fn execute(mut tests: Vec<LoadedTest>, harness: &HarnessArgs, device: &DeviceArgs, config: &Config, json: bool) -> ExitCode {
    name_uniquely(&mut tests);
    let inc = harness.incantations();
    let hw: Vec<crate::hw::HwTest> = tests.iter().map(|t| t.hw()).collect();
    let g = codegen::generate(&hw, &inc, &harness.arch, "ptxmm_hw.cu", config);
    for r in &g.rejected {
        eprintln!("{r}");
    }
    if g.included.is_empty() {
        eprintln!("error: no test could be generated");
        return ExitCode::from(2);
    }
    let text = match &device.harness_output {
        Some(path) => match crate::read_regular(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {}: {e}", path.display());
                return ExitCode::from(2);
            }
        },
        None => match build_and_run(&g.source, &g.included, harness, device, &inc) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
    };
    let output: HwOutput = match report::parse_output(&text) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(e) = &output.error {
        eprintln!("error: the harness stopped: {e}");
        if output.tests.is_empty() {
            return ExitCode::from(2);
        }
    }
    let mut judged: Vec<Judged> = Vec::new();
    let mut failed = false;
    // The model decides each test once, however often the output repeats its block; a name
    // reported more often than tests have it is an error (a forged or mixed-up output).
    let mut seen: std::collections::HashMap<&str, (usize, Option<crate::decide::Outcome>)> = std::collections::HashMap::new();
    for h in &output.tests {
        let Some(t) = tests.iter().find(|t| t.program.name == h.test) else {
            eprintln!("error: the harness reports an unknown test {}", h.test);
            failed = true;
            continue;
        };
        let entry = seen.entry(h.test.as_str()).or_insert((0, None));
        entry.0 += 1;
        let named = tests.iter().filter(|t| t.program.name == h.test).count();
        if entry.0 > named {
            if entry.0 == named + 1 {
                eprintln!(
                    "error: the harness reports test {} more often than the {named} test(s) of that name; the repeats are ignored",
                    h.test
                );
            }
            failed = true;
            continue;
        }
        if entry.1.is_none() {
            match Decider::new(config).verdict(&t.program) {
                Ok(o) => entry.1 = Some(o),
                Err(e) => {
                    eprintln!("error: {}: the model cannot decide the test: {e}", h.test);
                    failed = true;
                    continue;
                }
            }
        }
        let Some(outcome) = entry.1.as_ref() else { continue };
        match report::judge(&t.program, outcome, h) {
            Ok(j) => judged.push(j),
            Err(e) => {
                eprintln!("error: {e}");
                failed = true;
            }
        }
    }
    let mismatches: usize = judged.iter().map(Judged::mismatches).sum();
    if json {
        let record = serde_json::json!({
            "device": output.device,
            "tests": judged.iter().map(report::json).collect::<Vec<_>>(),
            "rejected": g.rejected.iter().map(|r| r.to_string()).collect::<Vec<_>>(),
            "mismatches": mismatches,
        });
        println!("{}", serde_json::to_string_pretty(&record).unwrap_or_default());
    } else {
        // Tests with a mismatch first.
        let mut order: Vec<&Judged> = judged.iter().collect();
        order.sort_by_key(|j| j.mismatches() == 0);
        for j in &order {
            println!("{}", report::render(j, output.device.as_deref()));
        }
        if judged.len() > 1 {
            println!("{:<50} {:>7} {:>12} {:>10}  verdict", "test", "states", "runs", "mismatches");
            for j in &judged {
                let runs: u64 = j.histogram.states.iter().map(|s| s.count).sum();
                println!("{:<50} {:>7} {:>12} {:>10}  {}", j.histogram.test, j.states.len(), runs, j.mismatches(), j.verdict);
            }
            println!(
                "{} tests, {} states seen, {mismatches} mismatches, {} not generated",
                judged.len(),
                judged.iter().map(|j| j.states.len()).sum::<usize>(),
                g.rejected.len()
            );
        }
    }
    if mismatches > 0 {
        ExitCode::from(1)
    } else if failed || output.error.is_some() {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

/// Build the program, then run it once per test (a launch that times out ends its process, so
/// the other tests still run); the outputs are concatenated.
fn build_and_run(source: &str, names: &[String], harness: &HarnessArgs, device: &DeviceArgs, inc: &Incantations) -> Result<String, String> {
    let nvcc = runner::find_nvcc(device.nvcc.as_deref())?;
    let dir = match &device.keep {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("ptxmm-hw-{}", std::process::id())),
    };
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let result = build_and_run_in(&nvcc, &dir, source, names, harness, inc);
    if device.keep.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

fn build_and_run_in(
    nvcc: &Path,
    dir: &Path,
    source: &str,
    names: &[String],
    harness: &HarnessArgs,
    inc: &Incantations,
) -> Result<String, String> {
    let src = dir.join("ptxmm_hw.cu");
    let exe = dir.join("ptxmm_hw");
    std::fs::write(&src, source).map_err(|e| format!("{}: {e}", src.display()))?;
    eprintln!("building {} with {}", src.display(), nvcc.display());
    runner::build(nvcc, &harness.arch, &src, &exe)?;
    let mut all = String::new();
    for name in names {
        let mut args = inc.harness_args();
        args.push(name.clone());
        let (text, code) = runner::run(&exe, &args)?;
        if text.contains("error no CUDA device") {
            let line = text.lines().find(|l| l.starts_with("error")).unwrap_or("").trim_start_matches("error ").to_string();
            return Err(format!("no GPU: the harness found no CUDA device ({line}); `ptxmm hw gen` still writes the program"));
        }
        if code.is_none() {
            return Err(format!("{name}: the harness was killed by a signal"));
        }
        all.push_str(&text);
    }
    Ok(all)
}
