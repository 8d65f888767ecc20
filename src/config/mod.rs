//! The one configuration of a decision: the model, the readings of the spec's ambiguities, the
//! limits of the search and of the input, and herd7's run options.
//!
//! Every front end (the command line's commands, the web playground, `ptxmm hw`, the benchmark
//! families, `ptxmm gen`) builds one [`Config`] and hands it to the driver
//! (`decide::Decider`); nothing else carries model options, so a flag cannot be honoured by one
//! command and forgotten by another. The [`Program`](crate::program::Program) carries no model
//! options at all.

pub mod models;
pub mod readings;

use crate::cat::CatModel;
use readings::Readings;
use std::time::Duration;

/// `--timeout`'s default, per test, for every command that decides (the library's own
/// [`Limits::default`] has no deadline).
pub const DEFAULT_TIMEOUT_SECS: f64 = 10.0;

/// `--max-memory`'s default, in MiB: well below the memory of a development machine, far above
/// what any test of the suites needs.
pub const DEFAULT_MAX_MEMORY_MIB: u64 = 2048;

/// `Limits::plain_mbarrier_states`' default: an mbarrier graph of more states is built again in
/// the order the model forces, with interchangeable updates in one order.
pub const DEFAULT_PLAIN_MBARRIER_STATES: usize = 4096;

/// `--max-unroll`'s default: the largest unrolling bound tried automatically.
pub const DEFAULT_MAX_UNROLL: usize = 16;

/// Limits that keep exploration finite and report, rather than hang, when exceeded. Each names
/// the flag that raises it in its error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// How often the back edge of a loop that is not an await may be taken in one instance of
    /// the loop (`--unroll N`): a run that takes it once more is cut. With `max_unroll`, the
    /// first bound tried.
    pub unroll: usize,
    /// Raise the unrolling bound automatically (doubling from `unroll`) while runs are cut and
    /// the answer still changes, up to this bound (`--max-unroll`); None: `unroll` is the one
    /// bound (`--unroll N` given).
    pub max_unroll: Option<usize>,
    /// Maximum distinct values per location in the value domain (`--max-values`).
    pub max_domain: usize,
    /// Maximum runs of one thread (`--max-traces`).
    pub max_traces: usize,
    /// Maximum memory events in one trace (`--max-events`).
    pub max_trace_events: usize,
    /// Maximum model evaluations (and mbarrier states, trace combinations) for one test
    /// (`--max-candidates`).
    pub max_candidates: u64,
    /// Wall-clock limit of one decision (`--timeout`); None: no limit.
    pub timeout: Option<Duration>,
    /// Maximum distinct final states one decision keeps (`--max-states`): each is a row of
    /// every observable's value, so this bounds the memory of a test with many outcomes.
    pub max_states: usize,
    /// The memory one decision may use, in MiB (`--max-memory`): the estimated size of an event
    /// structure's relations is checked before they are allocated, and the process's resident
    /// size while the search runs (where the system tells it: Linux).
    pub max_memory_mib: u64,
    /// The states an mbarrier graph is built with in static order alone; past them it is built
    /// again in the order the model forces, with interchangeable updates in one order
    /// (`exec::search::engine`'s `build_objects`). Not a command-line limit (neither way loses an
    /// execution, see ARCHITECTURE.md): tests/mbarrier_reductions.rs sets 0 to compare every
    /// graph built both ways.
    pub plain_mbarrier_states: usize,
    /// Elide the words a program's runs touch together where its addresses are not static
    /// (`exec::trace::survey`). Not a limit (it loses no execution, see ARCHITECTURE.md):
    /// `--every-word` turns it off, as tests/word_survey.rs does to compare both ways.
    pub word_survey: bool,
    /// Decide groups of threads that share nothing one of them writes (whole clusters) apart,
    /// where the question names no value and the model is one whose checks relate such
    /// groups' events through nothing (`decide::groups`). Not a limit (it loses no execution,
    /// see ARCHITECTURE.md): `--whole-program` turns it off, as tests/independent_groups.rs
    /// does to compare both ways.
    pub groups_apart: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            unroll: 1,
            max_unroll: Some(DEFAULT_MAX_UNROLL),
            max_domain: 64,
            max_traces: 20_000,
            max_trace_events: 4096,
            max_candidates: 2_000_000,
            timeout: None,
            max_states: 250_000,
            max_memory_mib: DEFAULT_MAX_MEMORY_MIB,
            plain_mbarrier_states: DEFAULT_PLAIN_MBARRIER_STATES,
            word_survey: true,
            groups_apart: true,
        }
    }
}

/// The longest time limit kept as given (about 31 years); a longer one is this long.
pub const MAX_TIMEOUT_SECS: f64 = 1e9;

impl Limits {
    /// These limits with the one unrolling bound `unroll` (no automatic raising).
    pub fn with_fixed_unroll(self, unroll: usize) -> Limits {
        Limits { unroll, max_unroll: None, ..self }
    }

    /// A timeout in seconds as the command line gives it: 0 (or anything not positive and
    /// finite) means no limit. One past [`MAX_TIMEOUT_SECS`] (31 years) is that long: a
    /// deadline of `now + timeout` must not overflow the clock.
    pub fn timeout_from_secs(seconds: f64) -> Option<Duration> {
        (seconds > 0.0 && seconds.is_finite()).then(|| Duration::from_secs_f64(seconds.min(MAX_TIMEOUT_SECS)))
    }
}

/// Limits on the size of an input test, checked while reading it (before it is parsed) and
/// before it is lowered, so that a huge file costs neither minutes nor gigabytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputLimits {
    /// The most bytes a test file may have (`--max-file-size`).
    pub max_file_bytes: u64,
    /// The most instructions (labels included) in one thread's column (`--max-instructions`).
    pub max_instructions: usize,
    /// The most threads a test may have (`--max-threads`).
    pub max_threads: usize,
    /// The memory one test may use, in MiB (`--max-memory`): its declared variables are
    /// charged to it while they are lowered, at [`crate::program::BYTES_PER_WORD`] a word.
    pub max_memory_mib: u64,
}

impl Default for InputLimits {
    fn default() -> Self {
        InputLimits { max_file_bytes: 1 << 20, max_instructions: 10_000, max_threads: 1024, max_memory_mib: 2048 }
    }
}

/// The limit options every front end takes, by their command-line names (`--unroll`,
/// `--max-candidates`, `--timeout` in seconds, ...) and with the command line's defaults, so
/// that the command line and the web playground read them the same way.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitOptions {
    /// None: the bound is raised automatically, up to `max_unroll`.
    pub unroll: Option<usize>,
    pub max_unroll: usize,
    pub max_candidates: u64,
    /// Seconds; 0 for no limit.
    pub timeout: f64,
    pub max_events: usize,
    pub max_traces: usize,
    pub max_states: usize,
    pub max_values: usize,
    pub max_file_size: u64,
    pub max_instructions: usize,
    pub max_threads: usize,
    /// MiB.
    pub max_memory: u64,
}

impl Default for LimitOptions {
    fn default() -> Self {
        let (l, i) = (Limits::default(), InputLimits::default());
        LimitOptions {
            unroll: None,
            max_unroll: DEFAULT_MAX_UNROLL,
            max_candidates: l.max_candidates,
            timeout: DEFAULT_TIMEOUT_SECS,
            max_events: l.max_trace_events,
            max_traces: l.max_traces,
            max_states: l.max_states,
            max_values: l.max_domain,
            max_file_size: i.max_file_bytes,
            max_instructions: i.max_instructions,
            max_threads: i.max_threads,
            max_memory: l.max_memory_mib,
        }
    }
}

impl LimitOptions {
    /// The names [`LimitOptions`] reads (as JSON keys; `--` and `-` for `_` on the command line).
    pub const NAMES: &'static [&'static str] = &[
        "unroll",
        "max_unroll",
        "max_candidates",
        "timeout",
        "max_events",
        "max_traces",
        "max_states",
        "max_values",
        "max_file_size",
        "max_instructions",
        "max_threads",
        "max_memory",
    ];

    pub fn limits(&self) -> Limits {
        Limits {
            unroll: self.unroll.unwrap_or(1),
            max_unroll: self.unroll.is_none().then_some(self.max_unroll),
            max_candidates: self.max_candidates,
            max_trace_events: self.max_events,
            max_traces: self.max_traces,
            max_states: self.max_states,
            max_domain: self.max_values,
            timeout: Limits::timeout_from_secs(self.timeout),
            max_memory_mib: self.max_memory,
            plain_mbarrier_states: DEFAULT_PLAIN_MBARRIER_STATES,
            word_survey: true,
            groups_apart: true,
        }
    }

    pub fn input(&self) -> InputLimits {
        InputLimits {
            max_file_bytes: self.max_file_size,
            max_instructions: self.max_instructions,
            max_threads: self.max_threads,
            max_memory_mib: self.max_memory,
        }
    }
}

/// The consistent executions the verdict's enumeration of every final state may tally before
/// the verdict is decided by the outcome-directed search instead (`decide::directed`;
/// `Config::enumeration_budget`, which `run --all-states` lifts). Every test of the suites and
/// of the tracked examples stays below it (the largest, the async pipeline ring
/// of 2 laps under the models without asynchronous operations, has 59,049), as do MP broadcast
/// up to 11 readers and SB up to 16 threads; at about 20,000 to 40,000 executions a second on
/// one core it stops the enumeration within a few seconds.
pub const ENUMERATION_BUDGET: u64 = 65_536;

/// Everything a decision depends on besides the program.
#[derive(Clone, Debug)]
pub struct Config {
    /// The model every candidate execution is checked against.
    pub model: CatModel,
    /// How reports name the model: a built-in name or the cat file's path.
    pub model_name: String,
    /// The reading of every exposed ambiguity (digest §14.10); checked against the model by
    /// [`Config::with_readings`].
    pub readings: Readings,
    pub limits: Limits,
    pub input: InputLimits,
    /// Stop at the first consistent execution that settles the condition (herd7's
    /// `-speedcheck`): the answer is reported, the counts, states and findings are partial.
    pub speedcheck: bool,
    /// The consistent executions the verdict's enumeration of final states may tally before the
    /// verdict is decided by the outcome-directed search, the states then partial
    /// (`decide::directed`; default [`ENUMERATION_BUDGET`]); None
    /// (`--all-states`): enumerate every final state whatever it costs.
    pub enumeration_budget: Option<u64>,
    /// Try every source of every read (`--every-source`). Without it, where the verdict looks
    /// at no value (no observable), a read whose value decides nothing and whose sources no
    /// finding of the model sees gets one consistent source (`exec::search`'s `free.rs`).
    pub every_source: bool,
}

impl Config {
    /// The default readings and limits under `model`.
    pub fn new(model: CatModel, model_name: impl Into<String>) -> Config {
        Config {
            model,
            model_name: model_name.into(),
            readings: Readings::default(),
            limits: Limits::default(),
            input: InputLimits::default(),
            speedcheck: false,
            enumeration_budget: Some(ENUMERATION_BUDGET),
            every_source: false,
        }
    }

    /// The default model (`ptx`) with the default readings and limits.
    pub fn default_model() -> Config {
        let model = models::builtin(models::DEFAULT_MODEL).expect("the default model is built in and valid");
        Config::new(model, models::DEFAULT_MODEL)
    }

    /// A built-in model by name, with the default readings and limits.
    pub fn builtin(name: &str) -> Result<Config, crate::diag::FileDiagnostic> {
        Ok(Config::new(models::builtin(name)?, name))
    }

    /// These options with the alternative readings `flags` selected (`proxy-fence-anywhere`
    /// or `AMBIG-1`, ...). A flag no reading has, or a reading the model cannot express (it
    /// never reads the reading's `ALT-…` set, or, for a reading of how async events are built,
    /// has no async events at all), is an error: the reading would be ignored without a word.
    pub fn with_readings<S: AsRef<str>>(mut self, flags: &[S]) -> Result<Config, String> {
        let free = self.model.free_names();
        for flag in flags {
            let flag = flag.as_ref();
            let ambiguity = self.readings.select(flag)?;
            let read_as = ambiguity.cat_set.unwrap_or("AGENT");
            if !ambiguity.any_model && !free.contains(read_as) {
                return Err(format!(
                    "the reading `{}` ({}) is not expressed by the model `{}`: it never reads `{read_as}`{}, so the reading would change nothing; use a model that reads it (the default `{}`)",
                    ambiguity.flag,
                    ambiguity.id,
                    self.model_name,
                    if ambiguity.cat_set.is_none() { " (it does not model asynchronous operations)" } else { "" },
                    models::DEFAULT_MODEL
                ));
            }
        }
        Ok(self)
    }

    /// These options with the limits `options` give.
    pub fn with_limit_options(mut self, options: &LimitOptions) -> Config {
        self.limits = options.limits();
        self.input = options.input();
        self
    }

    /// These options with a wall-clock limit per decision (None: no limit).
    pub fn with_timeout(mut self, timeout: Option<Duration>) -> Config {
        self.limits.timeout = timeout;
        self
    }
}
