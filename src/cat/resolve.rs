//! From parsed files to a resolved [`Program`]: includes are spliced in, every name is bound
//! to a slot (a definition, an environment name, or a function parameter), function calls are
//! inlined, and each definition and check learns which environment names it depends on.
//!
//! After this pass, evaluation never looks at a string: expressions refer to numbered slots.

use super::ast::{BinOp, CheckKind, Expr, ExprKind, FlagKind, Item, UnOp};
use super::parser::parse_file;
use super::polarity::Polarity;
use super::scope::Scope;
use super::source::{include_roots, read_cat_file};
use crate::diag::{Diagnostic, FileDiagnostic, SourceFile, Span};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// The most items procedure calls may expand to in one model: calls inside procedures can
/// double the model per level of nesting, so a short file could otherwise be enormous.
const MAX_CALL_EXPANSION: usize = 100_000;

/// Guards against runaway `include` chains that are not literal cycles (e.g. through symlinks).
const MAX_INCLUDE_DEPTH: usize = 64;

/// The most `include`s one model may perform in all: a file that includes the next one twice,
/// 40 deep, would otherwise be read 2^40 times although nesting stays shallow.
const MAX_INCLUDES: usize = 1_000;

/// The most bytes of cat source one model may read, its includes counted each time. Loading
/// is linear in them but has no clock (the model is loaded once, before any test's
/// `--timeout` starts): 4 MiB of definitions load in about a second.
const MAX_MODEL_BYTES: usize = 4 << 20;

/// The most expression nodes function calls may expand to in one model. Arguments used more
/// than once are shared (bound to a definition) rather than copied, so only genuinely large
/// expansions (a function applying another twice, nested many levels) reach it.
const MAX_INLINED_NODES: usize = 1_000_000;

/// The most 64-bit words the transitive dependencies of all definitions and checks may take
/// (256 MiB): each definition keeps the set of definitions it depends on, as a bit set over the
/// definitions before it, so a chain of n definitions costs n²/128 words; a 1 MiB file of
/// chained lets stays below it, a model that includes such a file four times would need
/// gigabytes.
const MAX_DEPENDENCY_WORDS: usize = 32 << 20;

/// The files of one model, each mapped to its own range of global offsets so that a bare
/// [`Span`] identifies its file.
#[derive(Clone, Debug, Default)]
pub(crate) struct Files {
    /// `(base, file)`, sorted by base.
    entries: Vec<(usize, SourceFile)>,
    next_base: usize,
}

impl Files {
    /// Registers a file and returns its base offset.
    pub fn add(&mut self, file: SourceFile) -> usize {
        let base = self.next_base;
        // +1 so that the end-of-file offset of one file is not the start of the next.
        self.next_base += file.text().len() + 1;
        self.entries.push((base, file));
        base
    }

    /// The file a global span lies in, and the span relative to that file.
    pub fn locate(&self, span: Span) -> Option<(&SourceFile, Span)> {
        let i = self.entries.partition_point(|(base, _)| *base <= span.start).checked_sub(1)?;
        let (base, file) = &self.entries[i];
        Some((file, Span::new(span.start - base, span.end.saturating_sub(*base))))
    }

    /// Binds a diagnostic with a global span to its file.
    pub fn file_diagnostic(&self, mut d: Diagnostic) -> FileDiagnostic {
        match self.locate(d.span) {
            Some((file, local)) => {
                d.span = local;
                FileDiagnostic::new(file, d)
            }
            None => {
                let file = self.entries.first().map(|(_, f)| f.clone()).unwrap_or_else(|| SourceFile::new("<cat>", ""));
                d.span = Span::default();
                FileDiagnostic::new(&file, d)
            }
        }
    }
}

/// A small bit set over slot numbers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SlotSet {
    words: Vec<u64>,
}

impl SlotSet {
    pub fn insert(&mut self, i: u32) {
        let (w, b) = (i as usize / 64, i % 64);
        if self.words.len() <= w {
            self.words.resize(w + 1, 0);
        }
        self.words[w] |= 1 << b;
    }

    pub fn contains(&self, i: u32) -> bool {
        self.words.get(i as usize / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    pub fn union_with(&mut self, o: &SlotSet) {
        if self.words.len() < o.words.len() {
            self.words.resize(o.words.len(), 0);
        }
        for (a, b) in self.words.iter_mut().zip(&o.words) {
            *a |= b;
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(wi, &w)| (0..64u32).filter(move |b| w & (1 << b) != 0).map(move |b| wi as u32 * 64 + b))
    }
}

/// A resolved expression: names are slots.
#[derive(Clone, Debug)]
pub(crate) struct IExpr {
    pub kind: IKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub(crate) enum IKind {
    /// A name provided by the environment (an execution's `po`, `rf`, `W`, ...).
    Env(u32),
    /// A `let`-bound definition.
    Def(u32),
    /// A function parameter; only occurs while a function's body is checked at its definition
    /// (calls resolve the body anew with the arguments in place).
    Param,
    /// A static subexpression evaluated once by `prepare` (an index into its constants);
    /// only occurs in the expressions a `Prepared` rewrites, never in a `Program`.
    Const(u32),
    /// `0`, the empty set or relation (whichever the context needs).
    Zero,
    Bin(BinOp, Box<IExpr>, Box<IExpr>),
    Un(UnOp, Box<IExpr>),
}

impl IExpr {
    /// Calls `f` on every environment and definition slot this expression mentions.
    fn visit_slots(&self, f: &mut impl FnMut(&IKind)) {
        match &self.kind {
            IKind::Bin(_, a, b) => {
                a.visit_slots(f);
                b.visit_slots(f);
            }
            IKind::Un(_, a) => a.visit_slots(f),
            k => f(k),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct EnvName {
    pub name: String,
    /// Where the model first reads it; unknown-name errors point here.
    pub first_use: Span,
}

#[derive(Clone, Debug)]
pub(crate) struct DefInfo {
    pub name: String,
    pub span: Span,
    pub unit: u32,
}

/// A unit of evaluation: one plain definition, or a `let rec ... and ...` group that is solved
/// as a single least fixpoint.
#[derive(Clone, Debug)]
pub(crate) struct Unit {
    pub slots: Vec<u32>,
    pub bodies: Vec<IExpr>,
    pub rec: bool,
    /// Environment names this unit depends on, transitively.
    pub env_deps: SlotSet,
    /// Units this unit depends on, transitively (iterated in ascending = evaluation order);
    /// never includes the unit itself. A bit set: a chain of n definitions costs n²/8 bytes
    /// and word-wide unions, not n² tree insertions.
    pub deps: SlotSet,
}

#[derive(Clone, Debug)]
pub(crate) struct Check {
    pub name: String,
    pub kind: CheckKind,
    pub negated: bool,
    pub flag: Option<FlagKind>,
    pub expr: IExpr,
    pub span: Span,
    pub env_deps: SlotSet,
    /// Units the check needs, transitively, in evaluation order.
    pub units: Vec<u32>,
    /// Polarity of `expr` in each slot of `env_deps`, as `(slot, polarity)` in ascending slot
    /// order; filled once the whole model is resolved.
    pub polarity: Vec<(u32, Polarity)>,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Bound {
    Def(u32),
    Env(u32),
    Fun(u32),
}

/// A `procedure`: its body and the scope it was defined in (procedures are lexically scoped,
/// and a procedure is not in its own scope, so calls cannot recurse).
struct ProcDef {
    params: Vec<(String, Span)>,
    body: Vec<Item>,
    scope: Scope<Bound, ProcDef>,
    dir: Option<PathBuf>,
}

/// A function: its body, resolved anew at each call in the scope it was defined in (so that
/// calls nested in functions are expanded once per call, not copied into every caller).
struct FunDef {
    name: String,
    params: Vec<String>,
    /// How often each parameter occurs in the body: an argument used more than once is bound
    /// to a definition and shared.
    uses: Vec<usize>,
    body: Expr,
    scope: Scope<Bound, ProcDef>,
}

/// A fully resolved model.
#[derive(Clone, Debug)]
pub(crate) struct Program {
    pub files: Files,
    pub title: String,
    pub env: Vec<EnvName>,
    pub defs: Vec<DefInfo>,
    pub units: Vec<Unit>,
    pub checks: Vec<Check>,
    /// Bindings visible at the end of the model (what `value_of` looks names up in).
    pub scope: HashMap<String, Bound>,
}

impl Program {
    pub fn env_slot(&self, name: &str) -> Option<u32> {
        self.env.iter().position(|e| e.name == name).map(|i| i as u32)
    }
}

/// Resolves a model whose root file is `root`; `root_dir` anchors its relative includes.
pub(crate) fn compile(root: SourceFile, root_dir: Option<PathBuf>, include_dirs: &[PathBuf]) -> Result<Program, FileDiagnostic> {
    let mut c = Compiler {
        files: Files::default(),
        include_roots: include_roots(root_dir.as_deref(), include_dirs),
        include_dirs: include_dirs.to_vec(),
        include_stack: Vec::new(),
        includes: 0,
        scope: Scope::default(),
        env: Vec::new(),
        env_index: HashMap::new(),
        defs: Vec::new(),
        units: Vec::new(),
        funs: Vec::new(),
        checks: Vec::new(),
        expanded: 0,
        inlined_nodes: 0,
        dependency_words: 0,
        defining_function: 0,
        in_rec: false,
    };
    // The root counts for cycle detection too (when its name is a real path).
    if let Ok(canonical) = Path::new(root.name()).canonicalize() {
        c.include_stack.push(canonical);
    }
    let title = match c.process_file(root, root_dir) {
        Ok(t) => t.unwrap_or_default(),
        Err(d) => return Err(c.files.file_diagnostic(d)),
    };
    for (i, ch) in c.checks.iter_mut().enumerate() {
        if ch.name.is_empty() {
            ch.name = format!("{}#{}", ch.kind.keyword(), i + 1);
        }
    }
    let scope = c.scope.flatten();
    Ok(Program { files: c.files, title, env: c.env, defs: c.defs, units: c.units, checks: c.checks, scope })
}

struct Compiler {
    files: Files,
    /// Canonical folders includes may come from: the model's and the `-I` / `--set-libdir` ones.
    include_roots: Vec<PathBuf>,
    include_dirs: Vec<PathBuf>,
    /// Canonical paths of the files currently being processed, to reject include cycles.
    include_stack: Vec<PathBuf>,
    /// Includes performed so far (at most [`MAX_INCLUDES`]).
    includes: usize,
    /// The names and procedures in scope.
    scope: Scope<Bound, ProcDef>,
    env: Vec<EnvName>,
    env_index: HashMap<String, u32>,
    defs: Vec<DefInfo>,
    units: Vec<Unit>,
    funs: Vec<FunDef>,
    checks: Vec<Check>,
    /// Items expanded by procedure calls so far (at most [`MAX_CALL_EXPANSION`]).
    expanded: usize,
    /// Expression nodes built by function calls so far (at most [`MAX_INLINED_NODES`]).
    inlined_nodes: usize,
    /// Words of transitive dependency sets so far (at most [`MAX_DEPENDENCY_WORDS`]).
    dependency_words: usize,
    /// Nonzero while a function's body is checked at its definition: calls are checked, not
    /// expanded (the body is expanded at each call).
    defining_function: usize,
    /// While the bodies of a `let rec` are resolved: arguments are copied, not bound to
    /// definitions (a definition outside the group would be evaluated outside its fixpoint).
    in_rec: bool,
}

impl Compiler {
    /// Parses and resolves one file (recursively its includes); returns its header title.
    fn process_file(&mut self, file: SourceFile, dir: Option<PathBuf>) -> Result<Option<String>, Diagnostic> {
        let text = file.text().to_string();
        let base = self.files.add(file);
        let parsed = parse_file(&text, base)?;
        for item in parsed.items {
            self.item(item, dir.as_deref())?;
        }
        Ok(parsed.title)
    }

    fn item(&mut self, item: Item, dir: Option<&Path>) -> Result<(), Diagnostic> {
        match item {
            Item::Include { path, span } => self.include(&path, span, dir),
            Item::Let { rec: false, bindings } => {
                // `let a = e1 and b = e2`: all bodies see the scope before the `let`.
                let mut resolved = Vec::new();
                for b in &bindings {
                    let body = match b.body.kind {
                        ExprKind::NewSet | ExprKind::NewRelation => None,
                        _ => Some(self.expr(&b.body, &[])?),
                    };
                    resolved.push(body);
                }
                for (b, body) in bindings.into_iter().zip(resolved) {
                    match body {
                        // `let r = newRelation()`: a name the engine must provide.
                        None => {
                            let slot = self.env_slot(&b.name, b.name_span);
                            self.scope.insert(b.name, Bound::Env(slot));
                        }
                        Some(body) => {
                            let unit = self.new_unit(vec![(b.name.clone(), b.name_span)], false);
                            self.finish_unit(unit, vec![body])?;
                            let def = self.units[unit as usize].slots[0];
                            self.scope.insert(b.name, Bound::Def(def));
                        }
                    }
                }
                Ok(())
            }
            Item::Let { rec: true, bindings } => {
                let names = bindings.iter().map(|b| (b.name.clone(), b.name_span)).collect();
                let unit = self.new_unit(names, true);
                let slots = self.units[unit as usize].slots.clone();
                for (b, &slot) in bindings.iter().zip(&slots) {
                    self.scope.insert(b.name.clone(), Bound::Def(slot));
                }
                let mut bodies = Vec::new();
                let was_in_rec = std::mem::replace(&mut self.in_rec, true);
                for b in &bindings {
                    match self.expr(&b.body, &[]) {
                        Ok(e) => bodies.push(e),
                        Err(d) => {
                            self.in_rec = was_in_rec;
                            return Err(d);
                        }
                    }
                }
                self.in_rec = was_in_rec;
                self.finish_unit(unit, bodies)?;
                Ok(())
            }
            Item::LetFun { name, name_span: _, params, body } => {
                // Checked here, so that errors show even in a function never called; the
                // result is dropped (each call resolves the body anew).
                let bound: Vec<(String, IExpr)> = params.iter().map(|(p, s)| (p.clone(), IExpr { kind: IKind::Param, span: *s })).collect();
                self.defining_function += 1;
                let checked = self.expr(&body, &bound);
                self.defining_function -= 1;
                checked?;
                let params: Vec<String> = params.into_iter().map(|(p, _)| p).collect();
                let mut uses = vec![0; params.len()];
                count_uses(&body, &params, &mut uses);
                let scope = self.scope.snapshot();
                self.funs.push(FunDef { name: name.clone(), params, uses, body, scope });
                self.scope.insert(name, Bound::Fun(self.funs.len() as u32 - 1));
                Ok(())
            }
            Item::Procedure { name, name_span: _, params, body } => {
                let def = ProcDef { params, body, scope: self.scope.snapshot(), dir: dir.map(Path::to_path_buf) };
                self.scope.insert_proc(name, def);
                Ok(())
            }
            Item::Call { name, name_span, args, as_name, span } => self.call(&name, name_span, &args, as_name, span),
            Item::Check { flag, negated, kind, expr, name, span } => {
                let expr = self.expr(&expr, &[])?;
                let (env_deps, direct) = self.direct_deps(std::slice::from_ref(&expr));
                let (env_deps, units) = self.close_deps(env_deps, &direct, None);
                // A check keeps its units as a list: 32 bits per unit.
                self.charge_dependencies(units.iter().count().div_ceil(2) + env_deps.words.len(), span)?;
                let name = name.unwrap_or_default();
                self.checks.push(Check {
                    name,
                    kind,
                    negated,
                    flag,
                    expr,
                    span,
                    env_deps,
                    units: units.iter().collect(),
                    polarity: Vec::new(),
                });
                Ok(())
            }
        }
    }

    /// `call f(args) [as name]`: the body of `f` runs in `f`'s own scope with each parameter
    /// bound to its argument (evaluated in the caller's scope); its definitions are dropped
    /// afterwards and its checks stay. Checks of the body without an `as` name take the call's.
    fn call(&mut self, name: &str, name_span: Span, args: &[Expr], as_name: Option<String>, span: Span) -> Result<(), Diagnostic> {
        let Some(def) = self.scope.proc(name) else {
            return Err(Diagnostic::error(name_span, format!("unknown procedure `{name}`"))
                .with_note("define it before the call with `procedure NAME(PARAMS) = ... end`"));
        };
        if args.len() != def.params.len() {
            return Err(Diagnostic::error(
                span,
                format!("procedure `{name}` takes {} argument(s) but {} were given", def.params.len(), args.len()),
            ));
        }
        self.expanded += def.body.len() + 1;
        if self.expanded > MAX_CALL_EXPANSION {
            return Err(Diagnostic::error(span, format!("procedure calls expand to more than {MAX_CALL_EXPANSION} items"))
                .with_note("calls nested inside procedures multiply; call fewer times"));
        }
        let mut bound = Vec::with_capacity(args.len());
        for a in args {
            bound.push(self.expr(a, &[])?);
        }
        let saved_scope = std::mem::replace(&mut self.scope, def.scope.clone());
        for ((p, p_span), body) in def.params.iter().zip(bound) {
            let unit = self.new_unit(vec![(p.clone(), *p_span)], false);
            self.finish_unit(unit, vec![body])?;
            let slot = self.units[unit as usize].slots[0];
            self.scope.insert(p.clone(), Bound::Def(slot));
        }
        let first_check = self.checks.len();
        let mut result = Ok(());
        for item in def.body.iter().cloned() {
            result = self.item(item, def.dir.as_deref());
            if result.is_err() {
                break;
            }
        }
        self.scope = saved_scope;
        result?;
        if let Some(call_name) = as_name {
            for c in &mut self.checks[first_check..] {
                if c.name.is_empty() {
                    c.name = call_name.clone();
                }
            }
        }
        Ok(())
    }

    fn include(&mut self, path: &str, span: Span, dir: Option<&Path>) -> Result<(), Diagnostic> {
        let rel = Path::new(path);
        let mut candidates = Vec::new();
        if rel.is_absolute() {
            candidates.push(rel.to_path_buf());
        } else {
            candidates.push(dir.map_or_else(|| rel.to_path_buf(), |d| d.join(rel)));
            candidates.extend(self.include_dirs.iter().map(|d| d.join(rel)));
        }
        let Some(found) = candidates.iter().find(|c| c.is_file()) else {
            let searched: Vec<String> = candidates.iter().map(|c| c.display().to_string()).collect();
            let mut d = Diagnostic::error(span, format!("cannot find included file \"{path}\""))
                .with_note(format!("searched: {}", searched.join(", ")))
                .with_note("add a folder to search with -I DIR or --set-libdir DIR");
            if matches!(path, "stdlib.cat" | "cos.cat") {
                d = d.with_note(format!(
                    "\"{path}\" is part of herd7's library, which ptxmm does not ship: pass herd7's library folder (`herd7 -libdir` prints it) with --set-libdir DIR or -I DIR"
                ));
            }
            return Err(d);
        };
        let canonical = found.canonicalize().unwrap_or_else(|_| found.clone());
        if !self.include_roots.iter().any(|r| canonical.starts_with(r)) {
            return Err(Diagnostic::error(span, format!("\"{path}\" is outside the model's folder and the include folders")).with_note(
                "includes are read only from the model's own folder and the -I DIR / --set-libdir DIR folders: add its folder with -I DIR",
            ));
        }
        if self.include_stack.contains(&canonical) {
            return Err(Diagnostic::error(span, format!("\"{path}\" includes itself (include cycle)")));
        }
        if self.include_stack.len() >= MAX_INCLUDE_DEPTH {
            return Err(Diagnostic::error(span, "includes nested too deeply"));
        }
        self.includes += 1;
        if self.includes > MAX_INCLUDES {
            return Err(Diagnostic::error(span, format!("the model performs more than {MAX_INCLUDES} includes in all (internal limit)"))
                .with_note("a file included twice is read twice; files that include the next one more than once multiply"));
        }
        let text =
            read_cat_file(found).map_err(|e| Diagnostic::error(span, format!("cannot read included file {}: {e}", found.display())))?;
        if self.files.next_base + text.len() > MAX_MODEL_BYTES {
            return Err(Diagnostic::error(
                span,
                format!("the model's files, includes counted each time, exceed {MAX_MODEL_BYTES} bytes (internal limit)"),
            ));
        }
        let file = SourceFile::new(found.display().to_string(), text);
        self.include_stack.push(canonical);
        let result = self.process_file(file, found.parent().map(Path::to_path_buf));
        self.include_stack.pop();
        result.map(|_| ())
    }

    fn env_slot(&mut self, name: &str, span: Span) -> u32 {
        if let Some(&s) = self.env_index.get(name) {
            return s;
        }
        let s = self.env.len() as u32;
        self.env.push(EnvName { name: name.to_string(), first_use: span });
        self.env_index.insert(name.to_string(), s);
        s
    }

    /// Allocates a unit and its definition slots; the bodies are attached by `finish_unit`
    /// (a recursive group must be in scope while its bodies are resolved).
    fn new_unit(&mut self, names: Vec<(String, Span)>, rec: bool) -> u32 {
        let unit = self.units.len() as u32;
        let mut slots = Vec::new();
        for (name, span) in names {
            slots.push(self.defs.len() as u32);
            self.defs.push(DefInfo { name, span, unit });
        }
        self.units.push(Unit { slots, bodies: Vec::new(), rec, env_deps: SlotSet::default(), deps: SlotSet::default() });
        unit
    }

    fn finish_unit(&mut self, unit: u32, bodies: Vec<IExpr>) -> Result<(), Diagnostic> {
        let (env_deps, direct) = self.direct_deps(&bodies);
        let (env_deps, deps) = self.close_deps(env_deps, &direct, Some(unit));
        let span = self.defs[self.units[unit as usize].slots[0] as usize].span;
        self.charge_dependencies(deps.words.len() + env_deps.words.len(), span)?;
        let u = &mut self.units[unit as usize];
        u.bodies = bodies;
        u.env_deps = env_deps;
        u.deps = deps;
        Ok(())
    }

    /// Charges `words` of dependency sets to [`MAX_DEPENDENCY_WORDS`].
    fn charge_dependencies(&mut self, words: usize, span: Span) -> Result<(), Diagnostic> {
        self.dependency_words = self.dependency_words.saturating_add(words);
        if self.dependency_words > MAX_DEPENDENCY_WORDS {
            return Err(Diagnostic::error(
                span,
                format!(
                    "the model's definitions depend on too many others: their transitive dependencies exceed {} MiB (internal limit)",
                    (MAX_DEPENDENCY_WORDS * 8) >> 20
                ),
            )
            .with_note("each definition keeps the set of definitions it depends on; a long chain of definitions, repeated by includes, grows with its square"));
        }
        Ok(())
    }

    /// Environment slots and units mentioned directly by some expressions.
    fn direct_deps(&self, exprs: &[IExpr]) -> (SlotSet, BTreeSet<u32>) {
        let mut env = SlotSet::default();
        let mut units = BTreeSet::new();
        for e in exprs {
            e.visit_slots(&mut |k| match k {
                IKind::Env(s) => env.insert(*s),
                IKind::Def(d) => {
                    units.insert(self.defs[*d as usize].unit);
                }
                _ => {}
            });
        }
        (env, units)
    }

    /// Transitive closure of direct dependencies. Units only refer to earlier units (or to
    /// themselves, for `let rec`), so the closures of the direct dependencies are complete.
    fn close_deps(&self, mut env: SlotSet, direct: &BTreeSet<u32>, this: Option<u32>) -> (SlotSet, SlotSet) {
        let mut all = SlotSet::default();
        for &u in direct {
            if Some(u) == this {
                continue;
            }
            let unit = &self.units[u as usize];
            env.union_with(&unit.env_deps);
            all.insert(u);
            all.union_with(&unit.deps);
        }
        (env, all)
    }

    /// Resolves an expression; `params` binds the parameters in scope inside a function body
    /// (to `Param` slots while a definition is checked, to the arguments at a call).
    fn expr(&mut self, e: &Expr, params: &[(String, IExpr)]) -> Result<IExpr, Diagnostic> {
        if self.defining_function == 0 && !params.is_empty() {
            self.charge_inlined(1, e.span)?;
        }
        let kind = match &e.kind {
            ExprKind::Name(n) => {
                if let Some((_, arg)) = params.iter().find(|(p, _)| p == n) {
                    if self.defining_function == 0 {
                        self.charge_inlined(size(arg), e.span)?;
                    }
                    return Ok(arg.clone());
                }
                match self.scope.get(n) {
                    Some(Bound::Def(d)) => IKind::Def(d),
                    Some(Bound::Env(s)) => IKind::Env(s),
                    Some(Bound::Fun(_)) => {
                        return Err(Diagnostic::error(e.span, format!("`{n}` is a function, not a set or relation"))
                            .with_note(format!("call it with arguments: `{n}(...)`")));
                    }
                    None if n == "0" => IKind::Zero,
                    None => IKind::Env(self.env_slot(n, e.span)),
                }
            }
            ExprKind::Binary(op, a, b) => IKind::Bin(*op, Box::new(self.expr(a, params)?), Box::new(self.expr(b, params)?)),
            ExprKind::Unary(op, a) => IKind::Un(*op, Box::new(self.expr(a, params)?)),
            ExprKind::Call { name, name_span, args } => {
                let is_param = params.iter().any(|(p, _)| p == name);
                let fun = match self.scope.get(name) {
                    Some(Bound::Fun(f)) if !is_param => f as usize,
                    _ if is_param => {
                        return Err(Diagnostic::error(*name_span, "calling a function parameter is not supported")
                            .with_note("functions cannot be passed as arguments"));
                    }
                    Some(_) => {
                        return Err(Diagnostic::error(*name_span, format!("`{name}` is not a function")));
                    }
                    None => return Err(Diagnostic::error(*name_span, format!("unknown function `{name}`"))),
                };
                let (arity, fname) = (self.funs[fun].params.len(), self.funs[fun].name.clone());
                if args.len() != arity {
                    return Err(Diagnostic::error(e.span, format!("`{fname}` takes {arity} argument(s) but {} were given", args.len())));
                }
                let mut resolved = Vec::with_capacity(args.len());
                for a in args {
                    resolved.push(self.expr(a, params)?);
                }
                if self.defining_function > 0 {
                    // Checked only; the body is expanded when the enclosing function is called.
                    return Ok(IExpr { kind: IKind::Zero, span: e.span });
                }
                return self.inline(fun, resolved, e.span);
            }
            ExprKind::NewSet | ExprKind::NewRelation => {
                return Err(Diagnostic::error(e.span, "`newSet()`/`newRelation()` can only be the whole body of a `let`")
                    .with_note("write `let name = newRelation()` and use `name`"));
            }
        };
        Ok(IExpr { kind, span: e.span })
    }

    /// Charges `nodes` expression nodes built by function calls to [`MAX_INLINED_NODES`].
    fn charge_inlined(&mut self, nodes: usize, span: Span) -> Result<(), Diagnostic> {
        self.inlined_nodes += nodes;
        if self.inlined_nodes > MAX_INLINED_NODES {
            return Err(Diagnostic::error(
                span,
                format!("function calls expand to more than {MAX_INLINED_NODES} expression nodes (internal limit)"),
            )
            .with_note("a function that applies another more than once multiplies its size at each level of nesting"));
        }
        Ok(())
    }

    /// The call of function `fun` on `args` (resolved in the caller's scope): its body resolved
    /// in its own (definition-time) scope, which gives lexical scoping without runtime closures.
    /// An argument the body uses more than once is bound to a definition named after the
    /// parameter and shared, so that nested calls such as `f(f(f(po)))` stay linear.
    fn inline(&mut self, fun: usize, args: Vec<IExpr>, span: Span) -> Result<IExpr, Diagnostic> {
        let mut bound = Vec::with_capacity(args.len());
        for (i, arg) in args.into_iter().enumerate() {
            let name = self.funs[fun].params[i].clone();
            let leaf = matches!(arg.kind, IKind::Env(_) | IKind::Def(_) | IKind::Zero);
            if leaf || self.in_rec || self.funs[fun].uses[i] <= 1 {
                bound.push((name, arg));
                continue;
            }
            let arg_span = arg.span;
            let unit = self.new_unit(vec![(name.clone(), arg_span)], false);
            self.finish_unit(unit, vec![arg])?;
            let slot = self.units[unit as usize].slots[0];
            bound.push((name, IExpr { kind: IKind::Def(slot), span: arg_span }));
        }
        self.charge_inlined(1, span)?;
        let body = self.funs[fun].body.clone();
        let saved_scope = std::mem::replace(&mut self.scope, self.funs[fun].scope.clone());
        let result = self.expr(&body, &bound);
        self.scope = saved_scope;
        result
    }
}

/// The number of nodes of `e`.
fn size(e: &IExpr) -> usize {
    let mut n = 0;
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        n += 1;
        match &e.kind {
            IKind::Bin(_, a, b) => {
                stack.push(a);
                stack.push(b);
            }
            IKind::Un(_, a) => stack.push(a),
            _ => {}
        }
    }
    n
}

/// Adds to `uses[i]` the occurrences of parameter `params[i]` in `e`.
fn count_uses(e: &Expr, params: &[String], uses: &mut [usize]) {
    match &e.kind {
        ExprKind::Name(n) => {
            if let Some(i) = params.iter().position(|p| p == n) {
                uses[i] += 1;
            }
        }
        ExprKind::Binary(_, a, b) => {
            count_uses(a, params, uses);
            count_uses(b, params, uses);
        }
        ExprKind::Unary(_, a) => count_uses(a, params, uses),
        ExprKind::Call { args, .. } => args.iter().for_each(|a| count_uses(a, params, uses)),
        ExprKind::NewSet | ExprKind::NewRelation => {}
    }
}
