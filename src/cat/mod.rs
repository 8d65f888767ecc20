//! The cat language: parser and interpreter over bit-matrix relations.
//!
//! A memory model is data: a `.cat` file (herd7 / Dat3M dialect) defines sets and relations
//! over the events of a candidate execution from base names the engine provides (`po`, `rf`,
//! `co`, `W`, ...), and states checks (`acyclic`, `irreflexive`, `empty`) that a consistent
//! execution satisfies.
//!
//! Pipeline: [`lexer`] → [`parser`] (surface [`ast`]) → `resolve` (includes spliced, names
//! bound to numbered slots, functions inlined, dependencies computed) → `interp` (evaluation).
//! Loading does all the string work; evaluating a candidate only indexes vectors. At load time,
//! `polarity` also classifies how each check varies as an environment name grows
//! ([`CatModel::expression_polarity`], [`CheckInfo::monotonicity`]), so that the engine can
//! prune partial candidates with [`Prepared::check_subset`].
//!
//! ```text
//! let model = CatModel::load(path, &[])?;
//! let prepared = model.prepare(&structure_env, &["rf", "co"])?;   // once per event structure
//! for candidate in candidates {
//!     let eval = prepared.evaluate(&candidate_env, true)?;          // per candidate
//!     if eval.consistent() { ... }
//! }
//! ```
//!
//! Language notes (beyond Dat3M's `Cat.g4`): `0` is the empty set/relation, `_` is the set of
//! all events unless the engine binds it, `let a = e and b = e` (non-recursive) and herd's
//! `unshow` are accepted, and `let x = newSet()` / `newRelation()` declares `x` as a name the
//! engine must provide.

mod analysis;
pub mod ast;
mod free_reads;
mod interp;
pub mod lexer;
pub mod parser;
mod polarity;
mod resolve;
mod scope;
mod source;

pub use ast::{CheckKind, FlagKind};
pub use interp::{CheckOutcome, Evaluation, Prepared, Stage};
pub use polarity::{Monotonicity, Polarity};

use crate::diag::{Diagnostic, FileDiagnostic, SourceFile, Span};
use crate::relation::{EventSet, Relation};
use resolve::Program;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A value of the cat language.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Set(EventSet),
    Rel(Relation),
}

impl Value {
    /// Number of events the value ranges over.
    pub fn universe(&self) -> usize {
        match self {
            Value::Set(s) => s.universe(),
            Value::Rel(r) => r.universe(),
        }
    }

    /// The value as a relation; a set `S` becomes `[S]`.
    pub fn to_relation(&self) -> Relation {
        match self {
            Value::Set(s) => Relation::of_set(s),
            Value::Rel(r) => r.clone(),
        }
    }
}

/// The environment of base names an execution provides (`po`, `rf`, `co`, `W`, `R`, `M`,
/// `_`, ...).
pub trait CatEnv {
    /// Number of events; every provided value must range over exactly this many.
    fn universe(&self) -> usize;
    fn lookup(&self, name: &str) -> Option<Value>;
}

/// A [`CatEnv`] backed by a map, for tests and tools.
#[derive(Clone, Debug, Default)]
pub struct MapEnv {
    n: usize,
    values: HashMap<String, Value>,
}

impl MapEnv {
    pub fn new(n: usize) -> Self {
        MapEnv { n, values: HashMap::new() }
    }

    pub fn insert(&mut self, name: impl Into<String>, v: Value) {
        self.values.insert(name.into(), v);
    }

    /// Builder form of [`MapEnv::insert`].
    pub fn with(mut self, name: impl Into<String>, v: Value) -> Self {
        self.insert(name, v);
        self
    }
}

impl CatEnv for MapEnv {
    fn universe(&self) -> usize {
        self.n
    }

    fn lookup(&self, name: &str) -> Option<Value> {
        self.values.get(name).cloned()
    }
}

/// A runtime error: an unknown name, a type error, a missing value from the engine.
///
/// `span` is relative to `file` (the model file, or the included file, the error is in).
#[derive(Clone, Debug)]
pub struct CatError {
    pub message: String,
    pub span: Option<Span>,
    pub file: Option<SourceFile>,
    /// The evaluation stopped at the deadline it was given (a `let rec` still iterating): not
    /// an error of the model; the caller reports its time limit.
    pub timed_out: bool,
}

impl CatError {
    /// The error as a renderable diagnostic, when it points into a file.
    pub fn to_diagnostic(&self) -> Option<FileDiagnostic> {
        match (&self.file, self.span) {
            (Some(f), Some(s)) => Some(FileDiagnostic::new(f, Diagnostic::error(s, self.message.clone()))),
            _ => None,
        }
    }
}

impl fmt::Display for CatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.span) {
            (Some(file), Some(span)) => {
                let (line, col) = file.line_col(span.start);
                write!(f, "{}:{}:{}: {}", file.name(), line, col, self.message)
            }
            _ => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for CatError {}

/// Static information about one check of a model.
#[derive(Clone, Debug)]
pub struct CheckInfo {
    /// The `as` name, or `kind#k` for the k-th check (1-based) when it has none.
    pub name: String,
    pub kind: CheckKind,
    pub negated: bool,
    pub flag: Option<FlagKind>,
    /// The whole check, relative to `file`.
    pub span: Span,
    pub file: SourceFile,
    /// Environment names the check depends on, transitively through definitions.
    pub depends_on: BTreeSet<String>,
    /// How the checked expression varies as each name of `depends_on` grows (computed at load
    /// time); every other name is [`Polarity::Independent`].
    pub polarity: BTreeMap<String, Polarity>,
    /// For a check `empty (E \ N)`: the environment name `N`, and how `E` varies as each name
    /// it depends on grows. Every consistent execution has `N ⊇ E`; when `E` only grows with the
    /// names an engine varies, the engine may force `E`'s pairs into `N`.
    pub inclusion: Option<(String, BTreeMap<String, Polarity>)>,
    /// For a check `acyclic (N1 | N2 | ...)` over environment names: the names. Every
    /// consistent execution has no cycle of their union.
    pub acyclic_union: Option<Vec<String>>,
    /// For a check `irreflexive (D ; S)` whose union `D` holds `rf` or from-read and whose `S`
    /// is a definition: see [`ReadComposition`].
    pub read_composition: Option<ReadComposition>,
}

/// A check `irreflexive (D ; S)` (or `(S ; D)`) whose union `D` holds reads-from and/or
/// from-read (`fr`, or a definition `rf^-1 ; co`) and whose `S` is a definition of the model.
/// In every consistent execution no read reads a write `S` orders after the read, and (with
/// from-read) none reads a write coherence-before a write `S` orders before the read.
#[derive(Clone, Debug)]
pub struct ReadComposition {
    pub rf: bool,
    pub fr: bool,
    /// `S`, for [`Prepared::definition_on`].
    pub after: DefId,
    /// `S`'s name as the model writes it.
    pub after_name: String,
    /// How `S` varies as each environment name it depends on grows.
    pub after_polarity: BTreeMap<String, Polarity>,
}

/// A name of a model whose value is the same in every candidate of an event structure.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum StaticName {
    /// An environment name (a set or relation of the structure).
    Env(String),
    /// A definition, for [`Prepared::static_definition`].
    Def(DefId),
}

/// What a set `X` of reads must satisfy on an event structure for the model's findings not to
/// depend on which writes the reads of `X` read (see `free_reads.rs`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ReadGuard {
    /// No pair of the relation ends in a read of `X` (no read of `X` is in it, for a set).
    Pairs(StaticName),
    /// No read of `X` is in the set.
    Targets(StaticName),
}

/// The model's conditions under which its findings do not see the sources of a set of reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FreeReads {
    pub guards: Vec<ReadGuard>,
    /// Some finding depends on `sync_fence`: the findings are then the same only where the order
    /// of SC fences has one choice.
    pub on_fence_order: bool,
}

/// A definition of a model (shadowed ones included), as [`Prepared::definition_on`] takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DefId(pub(crate) u32);

impl CheckInfo {
    /// Whether the check's condition (`[~] kind e`, flags aside) can only become false
    /// ([`Monotonicity::Antitone`]) or only become true ([`Monotonicity::Monotone`]) as edges or
    /// elements are added to environment name `name`. `acyclic e`, `irreflexive e` and
    /// `empty e` are antitone when `e` is increasing in `name` and monotone when it is
    /// decreasing (`empty (A \ co)`); `~` swaps the two.
    pub fn monotonicity(&self, name: &str) -> Monotonicity {
        let p = self.polarity.get(name).copied().unwrap_or(Polarity::Independent);
        Monotonicity::of_check(p, self.negated)
    }
}

/// A parsed and name-resolved model. Cloning is cheap (shared), and it is `Send + Sync`.
#[derive(Clone, Debug)]
pub struct CatModel {
    prog: Arc<Program>,
    /// Names of the checks removed by [`CatModel::skipping`], in model order.
    skipped: Vec<String>,
    /// Facts about this model that its users established by evaluating it (see
    /// [`CatModel::memo_fact`]), shared by its clones.
    facts: Arc<std::sync::Mutex<std::collections::HashMap<String, bool>>>,
    /// A digest of the model's text (its main file), for [`CatModel::has_text`].
    text_digest: u64,
}

/// Which checks [`CatModel::skipping`] removes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Skip {
    /// herd7's `-through all|invalid`: every consistency check (`acyclic`, `irreflexive`,
    /// `empty`); `flag` and `undefined_unless` checks still run.
    pub all_consistency: bool,
    /// herd7's `-skipchecks`: the checks named (with `as NAME`).
    pub names: Vec<String>,
}

impl CatModel {
    /// Loads a model from a file. `include "x"` is resolved relative to the including file's
    /// directory, then in each of `include_dirs`; included files must lie in the model's folder
    /// or one of `include_dirs`. Only regular files of at most 1 MiB are read.
    pub fn load(path: &Path, include_dirs: &[PathBuf]) -> Result<CatModel, FileDiagnostic> {
        let name = path.display().to_string();
        let text = source::read_cat_file(path).map_err(|e| {
            let file = SourceFile::new(name.clone(), "");
            FileDiagnostic::new(&file, Diagnostic::error(Span::default(), format!("cannot read cat model: {e}")))
        })?;
        let dir = path.parent().map(Path::to_path_buf);
        Self::compile(SourceFile::new(name, text), dir, include_dirs)
    }

    /// Loads a model from source text; relative includes are resolved against the directory
    /// part of the file's name, then `include_dirs`.
    pub fn from_source(file: SourceFile, include_dirs: &[PathBuf]) -> Result<CatModel, FileDiagnostic> {
        let dir = Path::new(file.name()).parent().map(Path::to_path_buf);
        Self::compile(file, dir, include_dirs)
    }

    fn compile(file: SourceFile, dir: Option<PathBuf>, include_dirs: &[PathBuf]) -> Result<CatModel, FileDiagnostic> {
        let text_digest = digest(file.text());
        let mut prog = resolve::compile(file, dir, include_dirs)?;
        // Done here, once per model, so that `CatModel::checks` and the engine's pruning
        // queries are plain lookups.
        let polarities = analysis::check_polarities(&prog);
        for (check, p) in prog.checks.iter_mut().zip(polarities) {
            check.polarity = p;
        }
        Ok(CatModel { prog: Arc::new(prog), skipped: Vec::new(), facts: Arc::default(), text_digest })
    }

    /// This model without the checks `skip` names (herd7's `-skipchecks` and `-through`): an
    /// execution they would reject is consistent. A name that is no check of the model is an
    /// error that lists the names there are, since a misspelt name would skip nothing.
    pub fn skipping(&self, skip: &Skip) -> Result<CatModel, String> {
        for n in &skip.names {
            if !self.prog.checks.iter().any(|c| c.name == *n) {
                let names: Vec<&str> = self.prog.checks.iter().map(|c| c.name.as_str()).collect();
                return Err(format!("--skipchecks: the model has no check named `{n}` (its checks: {})", names.join(", ")));
            }
        }
        let dropped = |c: &resolve::Check| (skip.all_consistency && c.flag.is_none()) || skip.names.contains(&c.name);
        let mut prog = (*self.prog).clone();
        let mut skipped = self.skipped.clone();
        skipped.extend(prog.checks.iter().filter(|c| dropped(c)).map(|c| c.name.clone()));
        prog.checks.retain(|c| !dropped(c));
        Ok(CatModel { prog: Arc::new(prog), skipped, facts: Arc::default(), text_digest: self.text_digest })
    }

    /// Whether the model's main file is `text` (for a `text` without includes: the model is
    /// then that text's): a property a caller established by reading that text (as
    /// `config::models` does for the built-in models) holds of this model, whatever file it
    /// was loaded from. Checks removed by [`CatModel::skipping`] do not change the answer.
    pub fn has_text(&self, text: &str) -> bool {
        self.text_digest == digest(text)
    }

    /// A fact about this model named by `key`, computed by `compute` the first time it is asked
    /// (outside the lock: `compute` may evaluate the model) and remembered by every clone. A
    /// user of the model that learns something by evaluating it (the engine's per-thread
    /// coherence probes) pays for it once per model, not once per test.
    pub fn memo_fact(&self, key: &str, compute: impl FnOnce() -> bool) -> bool {
        let known = self.facts.lock().map(|f| f.get(key).copied()).unwrap_or(None);
        if let Some(v) = known {
            return v;
        }
        let v = compute();
        if let Ok(mut f) = self.facts.lock() {
            f.insert(key.to_string(), v);
        }
        v
    }

    /// The checks [`CatModel::skipping`] removed.
    pub fn skipped_checks(&self) -> &[String] {
        &self.skipped
    }

    /// The title from the header (`PTX`, or a quoted string); empty if the model has none.
    pub fn title(&self) -> &str {
        &self.prog.title
    }

    /// Names the model reads from the environment: names used before (or without) any `let`
    /// defining them, and names declared with `newSet()` / `newRelation()`.
    /// How many values a preparation of the model may hold: one per definition (shadowed ones
    /// and function-call expansions included), for estimates of memory.
    pub fn definition_count(&self) -> usize {
        self.prog.defs.len()
    }

    pub fn free_names(&self) -> BTreeSet<String> {
        self.prog.env.iter().map(|e| e.name.clone()).collect()
    }

    /// Names of all `let` definitions, in order (shadowed ones included).
    pub fn definitions(&self) -> Vec<&str> {
        self.prog.defs.iter().map(|d| d.name.as_str()).collect()
    }

    /// The checks, in model order.
    pub fn checks(&self) -> Vec<CheckInfo> {
        let inclusions = analysis::inclusion_targets(&self.prog);
        let unions = analysis::acyclic_unions(&self.prog);
        let compositions = analysis::read_compositions(&self.prog);
        self.prog
            .checks
            .iter()
            .zip(inclusions)
            .zip(unions)
            .zip(compositions)
            .map(|(((c, inclusion), union), composition)| {
                let (file, span) = match self.prog.files.locate(c.span) {
                    Some((f, s)) => (f.clone(), s),
                    None => (SourceFile::new("<cat>", ""), Span::default()),
                };
                CheckInfo {
                    name: c.name.clone(),
                    kind: c.kind,
                    negated: c.negated,
                    flag: c.flag,
                    span,
                    file,
                    depends_on: c.env_deps.iter().map(|s| self.prog.env[s as usize].name.clone()).collect(),
                    polarity: c.polarity.iter().map(|&(s, p)| (self.prog.env[s as usize].name.clone(), p)).collect(),
                    inclusion: inclusion.map(|(target, lhs)| {
                        let name = |s: u32| self.prog.env[s as usize].name.clone();
                        (name(target), lhs.into_iter().map(|(s, p)| (name(s), p)).collect())
                    }),
                    acyclic_union: union.map(|slots| slots.into_iter().map(|s| self.prog.env[s as usize].name.clone()).collect()),
                    read_composition: composition.map(|c| ReadComposition {
                        rf: c.rf,
                        fr: c.fr,
                        after: DefId(c.after),
                        after_name: self.prog.defs[c.after as usize].name.clone(),
                        after_polarity: c.after_polarity.into_iter().map(|(s, p)| (self.prog.env[s as usize].name.clone(), p)).collect(),
                    }),
                }
            })
            .collect()
    }

    /// The conditions under which no finding of the model (`flag`, `undefined_unless`) depends
    /// on the writes a set of reads reads; None when the analysis cannot show it for any set.
    pub(crate) fn free_reads(&self) -> Option<FreeReads> {
        let f = free_reads::free_reads(&self.prog)?;
        let name = |slot: free_reads::StaticSlot| match slot {
            free_reads::StaticSlot::Env(s) => StaticName::Env(self.prog.env[s as usize].name.clone()),
            free_reads::StaticSlot::Def(d) => StaticName::Def(DefId(d)),
        };
        let guards = f
            .guards
            .into_iter()
            .map(|g| match g {
                free_reads::Guard::Pairs(s) => ReadGuard::Pairs(name(s)),
                free_reads::Guard::Targets(s) => ReadGuard::Targets(name(s)),
            })
            .collect();
        Some(FreeReads { guards, on_fence_order: f.on_fence_order })
    }

    /// How the expression of check `check_index` (in [`CatModel::checks`] order) varies as
    /// edges or elements are added to environment name `name`. Names the model reads from the
    /// environment are meant, not definitions: after `let co = co+`, `"co"` is the engine's
    /// `co`, and later uses of `co` count through the definition. Names the check does not
    /// depend on (or the model never reads) are [`Polarity::Independent`].
    ///
    /// # Panics
    ///
    /// If `check_index` is not the index of a check.
    pub fn expression_polarity(&self, check_index: usize, name: &str) -> Polarity {
        let check = &self.prog.checks[check_index];
        self.prog
            .env_slot(name)
            .and_then(|slot| check.polarity.binary_search_by_key(&slot, |&(s, _)| s).ok())
            .map_or(Polarity::Independent, |i| check.polarity[i].1)
    }

    /// Specialises the model to one event structure. `static_env` provides the names that are
    /// the same for every candidate execution; `dynamic` lists the names supplied per
    /// candidate (they are not looked up in `static_env`). Every definition and check that
    /// depends only on static names is evaluated here, once.
    ///
    /// Fails on a free name that is neither dynamic nor provided by `static_env` (`_` defaults
    /// to the set of all events), and on errors in static definitions.
    pub fn prepare<'m>(&'m self, static_env: &dyn CatEnv, dynamic: &[&str]) -> Result<Prepared<'m>, CatError> {
        interp::prepare(&self.prog, static_env, dynamic, None)
    }

    /// [`CatModel::prepare`], with every `let rec` fixpoint (here and in the evaluations of the
    /// preparation) stopping at `deadline` with a [`CatError`] that is `timed_out`.
    pub fn prepare_until<'m>(
        &'m self,
        static_env: &dyn CatEnv,
        dynamic: &[&str],
        deadline: Option<crate::clock::Instant>,
    ) -> Result<Prepared<'m>, CatError> {
        interp::prepare(&self.prog, static_env, dynamic, deadline)
    }
}

#[cfg(test)]
mod reference_tests;
#[cfg(test)]
mod tests;

/// A digest of a model's text ([`CatModel::has_text`]).
fn digest(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}
