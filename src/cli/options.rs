//! The options shared by the commands: the model and readings, limits, herd7's run options.

use crate::cat::CatModel;
use crate::cli::color;
use crate::config::{Config, LimitOptions};
use clap::Args;
use std::path::PathBuf;

/// herd7's options of `run` (`docs/herd-options.md`).
#[derive(Args)]
pub(crate) struct HerdRunArgs {
    /// Stop at the first execution that settles the condition (herd7's `-speedcheck`; `true`
    /// and `fast`, or the bare flag, stop; `false` does not): the answer is reported, the
    /// states, counts and findings are partial and the report says so.
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "fast", default_value_t = Speedcheck::False)]
    pub(crate) speedcheck: Speedcheck,
    /// Draw the execution `ptxmm explain` shows of each test into the `-o` folder (herd7's
    /// `-show`): `prop` and `wit`, an execution reaching the condition's proposition (or, when
    /// none is allowed, the first rejected candidate that reaches it); `none`, no drawing.
    #[arg(long, value_enum)]
    pub(crate) show: Option<ShowMode>,
    /// The folder the drawings go to, one per test, named after the test file (`MP.dot`);
    /// it must exist (herd7's `-o`). Without --show, `--show prop`.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub(crate) output: Option<PathBuf>,
    /// The drawings' format: Graphviz `dot` (herd7's) or `svg`.
    #[arg(long, value_enum, default_value_t = DrawFormat::Dot)]
    pub(crate) show_format: DrawFormat,
    /// Stop drawing after N drawings (in all; herd7's `-nshow`).
    #[arg(long, value_name = "N")]
    pub(crate) nshow: Option<usize>,
    /// Run only the tests named in FILE (first word of each line; repeatable; herd7's `-names`).
    #[arg(long, value_name = "FILE")]
    pub(crate) names: Vec<PathBuf>,
    /// Do not run the tests named in FILE (repeatable; herd7's `-excl`).
    #[arg(long, value_name = "FILE")]
    pub(crate) excl: Vec<PathBuf>,
    /// Replace the final conditions of the tests FILE names: lines `NAME "exists (...)"`
    /// (repeatable; herd7's `-conds`).
    #[arg(long, value_name = "FILE")]
    pub(crate) conds: Vec<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Speedcheck {
    False,
    True,
    Fast,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ShowMode {
    Prop,
    Wit,
    None,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DrawFormat {
    Dot,
    Svg,
}

/// [`HerdRunArgs`] with its files read.
pub(crate) struct HerdRun {
    pub(crate) speedcheck: bool,
    pub(crate) draw: Option<(PathBuf, DrawFormat)>,
    pub(crate) nshow: Option<usize>,
    pub(crate) names: Option<std::collections::BTreeSet<String>>,
    pub(crate) excl: std::collections::BTreeSet<String>,
    pub(crate) conds: std::collections::BTreeMap<String, crate::herd::options::CondOverride>,
}

impl HerdRunArgs {
    pub(crate) fn load(&self) -> Result<HerdRun, String> {
        let draw = match (self.show, &self.output) {
            (Some(ShowMode::None), _) => None,
            (_, Some(dir)) if !dir.is_dir() => return Err(format!("-o {}: not an existing folder", dir.display())),
            (_, Some(dir)) => Some((dir.clone(), self.show_format)),
            (Some(_), None) => return Err("--show needs a folder for the drawings: -o DIR".to_string()),
            (None, None) => None,
        };
        let mut names = None;
        for f in &self.names {
            names.get_or_insert_with(std::collections::BTreeSet::new).extend(crate::herd::options::read_names(f)?);
        }
        let mut excl = std::collections::BTreeSet::new();
        for f in &self.excl {
            excl.extend(crate::herd::options::read_names(f)?);
        }
        let mut conds = std::collections::BTreeMap::new();
        for f in &self.conds {
            conds.extend(crate::herd::options::read_conds(f)?);
        }
        Ok(HerdRun { speedcheck: self.speedcheck != Speedcheck::False, draw, nshow: self.nshow, names, excl, conds })
    }
}

impl HerdRun {
    /// Whether `--names` / `--excl` select the test named `name`.
    pub(crate) fn selects(&self, name: &str) -> bool {
        self.names.as_ref().is_none_or(|n| n.contains(name)) && !self.excl.contains(name)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LivenessMode {
    Check,
    Skip,
    Only,
}

#[derive(Args)]
pub(crate) struct ModelArgs {
    /// A cat model file (herd7/Dat3M dialect), e.g. Dat3M's ptx-v7.5.cat.
    #[arg(long, value_name = "FILE", conflicts_with = "model")]
    pub(crate) cat: Option<PathBuf>,
    /// A built-in model: ptx (the default: PTX 7.5 plus asynchronous operations), ptx-7.5 or ptx-6.0.
    #[arg(long, value_name = "NAME")]
    pub(crate) model: Option<String>,
    /// Select the alternative reading of an ambiguity of the spec (repeatable):
    /// proxy-fence-anywhere (AMBIG-1), signal-by-issuer (AMBIG-3), ct-needs-release-arrive
    /// (AMBIG-7), read-wait-without-fence (AMBIG-13), mbarrier-chain-strict (AMBIG-14),
    /// wgmma-issue-fences (AMBIG-17), commit-order (AMBIG-18), mbarrier-handoff (AMBIG-24),
    /// f32-reduce-flushes (AMBIG-25), dat3m-barriers (AMBIG-26). See docs/async-model.md.
    #[arg(long = "reading", value_name = "FLAG")]
    pub(crate) readings: Vec<String>,
    /// A folder to search for a cat file's includes (herd7's `-I`; repeatable), before the
    /// library folder.
    #[arg(short = 'I', long = "include", value_name = "DIR")]
    pub(crate) include: Vec<PathBuf>,
    /// The library folder searched for includes after the `-I` folders (herd7's
    /// `-set-libdir`; herd7's library holds `stdlib.cat` and `cos.cat`).
    #[arg(long, value_name = "DIR")]
    pub(crate) set_libdir: Option<PathBuf>,
    /// Let executions the model rejects through (herd7's `-through`): `all` and `invalid`
    /// apply none of the model's consistency checks (flags and undefined_unless still run);
    /// `none` (the default) applies them all.
    #[arg(long, value_enum, default_value_t = Through::None)]
    pub(crate) through: Through,
    /// Do not apply the named checks of the model (`as NAME`; comma-separated, repeatable;
    /// herd7's `-skipchecks`).
    #[arg(long, value_name = "NAME[,NAME]", value_delimiter = ',')]
    pub(crate) skipchecks: Vec<String>,
    /// Try every write each read may read, also for reads whose value nothing looks at and whose
    /// sources no finding of the model sees (without it, when no value is observed, one
    /// consistent choice of those is enough: docs/performance.md). Slower, the same findings;
    /// for checking the engine.
    #[arg(long)]
    pub(crate) every_source: bool,
    /// Give every word its own events, also where a program's runs touch words together
    /// (without it, the words one instruction instance touches the same way as others, and
    /// whose values no thread loads, are one event: docs/performance.md, "Words touched
    /// together"). Slower, the same findings; for checking the engine.
    #[arg(long)]
    pub(crate) every_word: bool,
    /// Decide the program as one, also where its threads fall into groups (whole clusters)
    /// that share nothing one of them writes (without it, such groups are decided one at a
    /// time when no value is observed: docs/performance.md, "Independent groups"). Slower, the
    /// same findings; for checking the engine.
    #[arg(long)]
    pub(crate) whole_program: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Through {
    All,
    Invalid,
    None,
}

impl ModelArgs {
    /// The include search folders: `-I` folders, then `--set-libdir`.
    pub(crate) fn search_dirs(&self) -> Vec<PathBuf> {
        self.include.iter().cloned().chain(self.set_libdir.clone()).collect()
    }

    pub(crate) fn skip(&self) -> crate::cat::Skip {
        crate::cat::Skip { all_consistency: self.through != Through::None, names: self.skipchecks.clone() }
    }

    /// The model with its readings and `limits`: the one configuration every command that
    /// decides hands to the library.
    pub(crate) fn config(&self, limits: &LimitArgs) -> Result<Config, String> {
        self.config_or_error(limits).map_err(|e| e.rendered)
    }

    /// [`ModelArgs::config`], with the error as a JSON record too (`run --json`).
    pub(crate) fn config_or_error(&self, limits: &LimitArgs) -> Result<Config, Box<ModelError>> {
        let (model, name) = load_model(self)?;
        let config = Config::new(model, name.clone())
            .with_readings(&self.readings)
            .map_err(|e| ModelError::plain(&name, format!("error: --reading: {e}")))?;
        let mut config = Config { every_source: self.every_source, ..config.with_limit_options(&limits.options()) };
        config.limits.word_survey = !self.every_word;
        config.limits.groups_apart = !self.whole_program;
        Ok(config)
    }
}

/// Why the model (cat file, built-in name, readings or skipped checks) cannot be used: the
/// diagnostic as printed, the same for a JSON error record, the model's name, and the file the
/// error points into (an included file, say; else the model's name).
pub(crate) struct ModelError {
    pub(crate) model: String,
    pub(crate) file: String,
    pub(crate) rendered: String,
    pub(crate) json: crate::decide::report::JsonError,
}

impl ModelError {
    fn plain(model: &str, message: String) -> Box<ModelError> {
        Box::new(ModelError {
            model: model.to_string(),
            file: model.to_string(),
            json: crate::decide::report::JsonError::plain(message.clone()),
            rendered: message,
        })
    }

    fn of_diagnostic(model: &str, d: &crate::diag::FileDiagnostic) -> Box<ModelError> {
        let json = crate::decide::report::JsonError::of_diagnostic(d);
        Box::new(ModelError { model: model.to_string(), file: d.file.name().to_string(), rendered: d.render(color()), json })
    }

    /// The JSON error record: `file` is the model's file (or name), `test` null.
    pub(crate) fn record(&self) -> serde_json::Value {
        crate::decide::report::json_error(&self.file, None, Some(&self.model), self.json.clone())
    }
}

#[derive(Args)]
pub(crate) struct LimitArgs {
    /// How often one instance of a loop (other than a side-effect-free spin loop or a retry
    /// loop's failed attempts) may iterate back: a run that iterates once more is cut. Without
    /// it, the bound is raised automatically (1, 2, 4, ...) while runs are cut and the verdict
    /// or the final states still change, up to --max-unroll.
    #[arg(long, value_name = "N")]
    pub(crate) unroll: Option<usize>,
    /// The largest unrolling bound tried automatically (without --unroll).
    #[arg(long, value_name = "N", default_value_t = LimitOptions::default().max_unroll)]
    pub(crate) max_unroll: usize,
    /// The search budget of one test, in model evaluations, partial candidates included (trace
    /// combinations and mbarrier states count too); beyond it the search stops, what was found
    /// by then is reported, and the verdict is Unknown unless it is Undefined.
    #[arg(long, default_value_t = LimitOptions::default().max_candidates)]
    pub(crate) max_candidates: u64,
    /// Give up on one test after this many seconds (condition and liveness together, or one
    /// explanation); 0 for no limit. What was found by then is reported.
    #[arg(long, value_name = "SECONDS", default_value_t = LimitOptions::default().timeout)]
    pub(crate) timeout: f64,
    /// The most memory events one run of one thread may have.
    #[arg(long, value_name = "N", default_value_t = LimitOptions::default().max_events)]
    pub(crate) max_events: usize,
    /// The most runs of one thread explored (each branch on a value read, each way through
    /// a loop, is a run).
    #[arg(long, value_name = "N", default_value_t = LimitOptions::default().max_traces)]
    pub(crate) max_traces: usize,
    /// The most distinct final states kept for one test; beyond it the search stops and what
    /// was found is reported (each state costs memory in proportion to the observables).
    #[arg(long, value_name = "N", default_value_t = LimitOptions::default().max_states)]
    pub(crate) max_states: usize,
    /// The most distinct values one location may take in the search (each adds a way for every
    /// read of it to go); a counter that keeps growing stops at this bound with a message.
    #[arg(long, value_name = "N", default_value_t = LimitOptions::default().max_values)]
    pub(crate) max_values: usize,
    /// The largest test file (or PTX module) read, in bytes; a larger one is refused before it is parsed.
    #[arg(long, value_name = "BYTES", default_value_t = LimitOptions::default().max_file_size)]
    pub(crate) max_file_size: u64,
    /// The most instructions (labels included) one thread of a test may have.
    #[arg(long, value_name = "N", default_value_t = LimitOptions::default().max_instructions)]
    pub(crate) max_instructions: usize,
    /// The most threads a test may have.
    #[arg(long, value_name = "N", default_value_t = LimitOptions::default().max_threads)]
    pub(crate) max_threads: usize,
    /// The memory one test may use, in MiB: checked against the estimated size of each event
    /// structure before it is built, and against the process's resident size while it is
    /// decided (on Linux). Beyond it the search stops and what was found is reported.
    #[arg(long, value_name = "MIB", default_value_t = LimitOptions::default().max_memory)]
    pub(crate) max_memory: u64,
}

/// `bench --timeout`'s default, per point and per stage (verdict, liveness, explanation).
pub(crate) const BENCH_TIMEOUT_SECS: f64 = 60.0;

impl LimitArgs {
    pub(crate) fn options(&self) -> LimitOptions {
        LimitOptions {
            unroll: self.unroll,
            max_unroll: self.max_unroll,
            max_candidates: self.max_candidates,
            timeout: self.timeout,
            max_events: self.max_events,
            max_traces: self.max_traces,
            max_states: self.max_states,
            max_values: self.max_values,
            max_file_size: self.max_file_size,
            max_instructions: self.max_instructions,
            max_threads: self.max_threads,
            max_memory: self.max_memory,
        }
    }
}

pub(crate) fn load_model(args: &ModelArgs) -> Result<(CatModel, String), Box<ModelError>> {
    let (model, name) = match (&args.cat, &args.model) {
        (Some(path), _) => {
            let name = path.display().to_string();
            crate::config::models::from_file_with(path, &args.search_dirs())
                .map(|m| (m, name.clone()))
                .map_err(|d| ModelError::of_diagnostic(&name, &d))
        }
        (None, name) => {
            let name = name.clone().unwrap_or_else(|| crate::config::models::DEFAULT_MODEL.to_string());
            crate::config::models::builtin(&name).map(|m| (m, name.clone())).map_err(|d| ModelError::of_diagnostic(&name, &d))
        }
    }?;
    let skip = args.skip();
    if skip == crate::cat::Skip::default() {
        return Ok((model, name));
    }
    model.skipping(&skip).map(|m| (m, name.clone())).map_err(|e| ModelError::plain(&name, format!("error: {e}")))
}
