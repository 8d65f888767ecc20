//! `ptxmm compare`: decide tests on two sides (models, readings or logs) and list the differences.

use crate::cli::inputs::{expand_inputs, load_input};
use crate::cli::options::{LimitArgs, ModelArgs, Through};
use crate::cli::ExitCode;
use crate::decide::Decider;
use clap::Args;
use std::path::PathBuf;

/// `ptxmm compare`'s arguments: a left and a right side, each a model (built-in or cat
/// file, with readings) or a log.
#[derive(Args)]
pub(crate) struct CompareArgs {
    /// Tests, folders or `@INDEX` files to decide on the sides that are models (none when
    /// both sides are logs).
    pub(crate) tests: Vec<PathBuf>,
    /// The left side's cat file.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["left_model", "left_log"])]
    pub(crate) left_cat: Option<PathBuf>,
    /// The left side's built-in model (default: ptx).
    #[arg(long, value_name = "NAME", conflicts_with = "left_log")]
    pub(crate) left_model: Option<String>,
    /// A reading of the left side (repeatable; see `run --reading`).
    #[arg(long = "left-reading", value_name = "FLAG", conflicts_with = "left_log")]
    pub(crate) left_readings: Vec<String>,
    /// The left side is this log (herd7, litmus7, `ptxmm hw` or `ptxmm run` output).
    #[arg(long, value_name = "LOG")]
    pub(crate) left_log: Option<PathBuf>,
    /// The right side's cat file.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["right_model", "right_log"])]
    pub(crate) right_cat: Option<PathBuf>,
    /// The right side's built-in model (default: ptx).
    #[arg(long, value_name = "NAME", conflicts_with = "right_log")]
    pub(crate) right_model: Option<String>,
    /// A reading of the right side (repeatable).
    #[arg(long = "right-reading", value_name = "FLAG", conflicts_with = "right_log")]
    pub(crate) right_readings: Vec<String>,
    /// The right side is this log.
    #[arg(long, value_name = "LOG")]
    pub(crate) right_log: Option<PathBuf>,
    /// A folder to search for the cat files' includes (repeatable; herd7's `-I`).
    #[arg(short = 'I', long = "include", value_name = "DIR")]
    pub(crate) include: Vec<PathBuf>,
    /// The library folder searched after the `-I` folders (herd7's `-set-libdir`).
    #[arg(long, value_name = "DIR")]
    pub(crate) set_libdir: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub(crate) jobs: Option<usize>,
    /// Print the comparison as one JSON object.
    #[arg(long)]
    pub(crate) json: bool,
}

/// One side of `ptxmm compare`: its description and its results.
pub(crate) fn compare_side(
    args: &CompareArgs,
    cat: &Option<PathBuf>,
    model: &Option<String>,
    readings: &[String],
    log: &Option<PathBuf>,
    tests: &[(String, crate::program::Program)],
    by_file: bool,
) -> Result<(String, Vec<crate::herd::log::LogTest>, usize), String> {
    use rayon::prelude::*;
    if let Some(log) = log {
        let text = crate::read_regular(log).map_err(|e| format!("{}: cannot read: {e}", log.display()))?;
        let tests = crate::herd::log::parse_log(&text).map_err(|e| format!("{}:{e}", log.display()))?;
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
        every_source: false,
        every_word: false,
        whole_program: false,
    };
    let config = margs.config(&args.limits)?;
    let results: Vec<Result<crate::herd::log::LogTest, String>> = tests
        .par_iter()
        .map(|(file, program)| {
            let o = Decider::new(&config).verdict(program).map_err(|e| format!("{file}: {e}"))?;
            let text = format!("{}{}", crate::decide::report::headline(&o, None), crate::decide::report::herd_block(&o));
            let mut parsed =
                crate::herd::log::parse_log(&text).map_err(|e| format!("{file}: ptxmm's own block does not read back: {e}"))?;
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
    Ok((format!("model {}{readings}", config.model_name), out, errors))
}

pub(crate) fn cmd_compare(args: &CompareArgs) -> ExitCode {
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
            match load_input(input, &args.limits.options().input(), false, None) {
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
    let c = crate::herd::compare::compare(&l, &r);
    if args.json {
        let mut v = serde_json::to_value(&c).expect("comparison serialises");
        v["schema_version"] = crate::decide::report::SCHEMA_VERSION.into();
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
