//! `ptxmm kernel`: a kernel of a real PTX module (as `nvcc -ptx` writes it) turned into a litmus
//! test that the one driver decides (`decide::Decider`), as `--emit-litmus` writes it.
//!
//! The module is read (`module`), one `.entry` is taken, its launch chosen (`launch`; by default
//! lane 0 of the warps whose code differs, `warps`), its parameters bound (`params`: pointers become fresh
//! global buffers), and its body pasted unchanged below a generated init block and placement
//! line, padded so that every line of the body keeps its line number in the `.ptx` file: a
//! finding's `line N` is the PTX line, and `.loc` debug lines (`nvcc -lineinfo`) give the CUDA
//! line of each (`Kernel::source_of`). Register-only instructions the model does not interpret
//! are then abstracted, or rejected where their values matter (`slice`).

pub mod check;
pub mod launch;
pub mod launch_file;
pub mod module;
pub mod params;
pub mod record;
pub mod slice;
pub mod tensor_maps;
pub mod warps;

use crate::diag::{FileDiagnostic, SourceFile};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// What the command line chooses of a kernel check.
#[derive(Clone, Debug, Default)]
pub struct KernelOptions {
    /// The `.entry` (default: the module's only one).
    pub entry: Option<String>,
    pub block: Option<Vec<u64>>,
    pub grid: Option<Vec<u64>>,
    pub cluster: Option<Vec<u64>>,
    /// The CTAs, warps (of each CTA) and lanes (of each warp) modelled.
    pub ctas: Option<Vec<u64>>,
    pub warps: Option<Vec<u64>>,
    /// `--warps all`: every warp, rather than one or two of each group of warps that run the
    /// same code (`warps`).
    pub every_warp: bool,
    pub lanes: Option<Vec<u64>>,
    /// Bytes of dynamic shared memory the launch gives (`--dynamic-smem`): the size of the
    /// kernel's `.extern .shared` array.
    pub dynamic_smem: Option<u64>,
    /// `--param NAME=VALUE`, in order.
    pub params: Vec<(String, String)>,
    /// `--tensor-map NAME[+OFF]=DESC`, in order.
    pub tensor_maps: Vec<(String, String)>,
    /// A condition over the buffers that must hold at the end of every execution, or a whole
    /// litmus condition (`exists (...)`, `~exists (...)`, `forall (...)`).
    pub assert: Option<String>,
}

/// A kernel made a litmus test.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub entry: String,
    /// The `.ptx` file's name, as given.
    pub file: String,
    /// The litmus test: its line N is line N of the `.ptx` file from the body's `{` on.
    pub litmus: String,
    pub launch: launch::Launch,
    pub bindings: Vec<String>,
    pub abstracted: Vec<slice::Abstracted>,
    /// The test's condition; without a whole condition in `--assert`, `exists (false)` or the
    /// negation of the assertion (so Forbidden means it holds).
    pub condition: String,
    /// The assertion, when `condition` is its negation.
    pub assertion: Option<String>,
    /// How the warps modelled were chosen by default: the warps left out as running the code of
    /// a warp kept (`warps`), or why every warp is modelled. None where `--warps` chose them.
    pub warp_choice: Option<String>,
    /// Whether warps were left out by default as running the code of a warp kept (a count of
    /// arrivals or of `bar.sync` threads that counts them can then make the check hang).
    pub warps_left_out: bool,
    /// Why every lane is modelled where `--lanes` was not given (lane 0 of each warp hung or
    /// never completed; `cli::kernel` checks every lane then), or a caution where that check
    /// did not finish. None otherwise.
    pub lane_choice: Option<String>,
    /// The CUDA source location of PTX lines (from `.loc`), by line: as reports name it.
    sources: BTreeMap<usize, String>,
    /// The whole inline chain of each PTX line's `.loc`, innermost frame first.
    chains: BTreeMap<usize, Vec<String>>,
    /// The module's `.file` table (number, path as nvcc wrote it), for the paths of
    /// [`Kernel::source_path_of`].
    files: Vec<(u64, String)>,
}

impl Kernel {
    /// `file.cu:37` for a PTX line under a `.loc` (the outer location of an inlined call).
    pub fn source_of(&self, ptx_line: usize) -> Option<&str> {
        self.sources.get(&ptx_line).map(String::as_str)
    }

    /// The whole inline chain of a PTX line's `.loc`, innermost frame first
    /// (`cuda_pipeline_helpers.h:219`, `k3.cu:43`).
    pub fn chain_of(&self, ptx_line: usize) -> &[String] {
        self.chains.get(&ptx_line).map_or(&[], Vec::as_slice)
    }

    /// The CUDA file (its path as the `.file` table has it) and line that [`Kernel::source_of`]
    /// names, for tools that open the file (SARIF): the path is the first in the table whose
    /// file name is that frame's.
    pub fn source_path_of(&self, ptx_line: usize) -> Option<(&str, u64)> {
        let frames = self.chains.get(&ptx_line)?;
        let frame = &frames[primary_frame(frames, &self.files)];
        let (name, line) = frame.rsplit_once(':')?;
        let path = self.files.iter().map(|(_, p)| p.as_str()).find(|p| p.rsplit(['/', '\\']).next() == Some(name))?;
        Some((path, line.parse().ok()?))
    }

    /// A report's text with the CUDA location added to each mention of one PTX line whose
    /// source is known: `(P0 line 124)` becomes `(P0 line 124, tma_pipeline.cu:31)`, and
    /// `stuck at line 151 \`...\`` becomes `stuck at line 151 (tma_pipeline.cu:40) \`...\``.
    /// Line ranges (`lines 140-151`) are left as they are. The decision procedure's messages
    /// name PTX lines only (they know litmus tests, not `.loc`): the kernel report adds these
    /// afterwards, so `run` of a litmus file prints what it always did.
    pub fn with_sources(&self, text: &str) -> String {
        annotate(text, &self.sources)
    }
}

/// [`Kernel::with_sources`] over a map of PTX lines to CUDA locations.
fn annotate(text: &str, sources: &BTreeMap<usize, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("line ") {
        let word_start = !rest[..at].chars().next_back().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        let after = &rest[at + 5..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        out.push_str(&rest[..at + 5 + digits]);
        rest = &after[digits..];
        let next = rest.chars().next();
        let (true, true, false) = (word_start, digits > 0, next.is_some_and(|c| c == '-' || c.is_ascii_alphanumeric())) else {
            continue;
        };
        let Some(src) = after[..digits].parse().ok().and_then(|n| sources.get(&n)) else { continue };
        if next == Some(')') {
            let _ = write!(out, ", {src}");
        } else {
            let _ = write!(out, " ({src})");
        }
    }
    out.push_str(rest);
    out
}

/// Why a kernel cannot be checked.
#[derive(Debug)]
pub enum KernelError {
    /// An error in the PTX (module syntax, or an instruction of the body), at its place.
    Ptx(FileDiagnostic),
    /// A launch, parameter or flag choice that does not fit the kernel, or one it needs and was
    /// not given (`--block`, `--entry`, `--dynamic-smem`, `--assert`): a bad option.
    Options(String),
    /// A module that ptxmm cannot check whatever the options (no kernel, a `.const` or
    /// `.extern .global` variable, a body too close to the module's head).
    Module(String),
}

impl KernelError {
    pub fn render(&self, color: bool) -> String {
        match self {
            KernelError::Ptx(d) => d.render(color),
            KernelError::Options(m) | KernelError::Module(m) => format!("error: {m}\n"),
        }
    }

    /// The exit status `ptxmm kernel` gives it: 2 for a bad option, 1 for a kernel that cannot
    /// be checked (as for the other commands: 2 a bad model or option, 1 no result).
    pub fn exit_status(&self) -> u8 {
        match self {
            KernelError::Options(_) => 2,
            KernelError::Ptx(_) | KernelError::Module(_) => 1,
        }
    }
}

/// Build the litmus test of a kernel of the module `ptx`. Without `--warps`, the warps of each
/// CTA that run the same code as a warp kept are left out (`warps`), with the lanes chosen.
pub fn build(ptx: &SourceFile, options: &KernelOptions, limits: &crate::InputLimits) -> Result<Kernel, KernelError> {
    let mut kernel = build_launch(ptx, options, limits)?;
    let warps_in_block = kernel.launch.block.div_ceil(32);
    if options.warps.is_some() {
        return Ok(kernel);
    }
    if options.every_warp || warps_in_block < 2 {
        kernel.warp_choice = options.every_warp.then(|| "every warp (--warps all)".to_string());
        return Ok(kernel);
    }
    let all = || format!("every warp: {warps_in_block} modelled, --warps LIST chooses fewer");
    let program = match crate::parse_program_with(SourceFile::new(ptx.name(), kernel.litmus.clone()), limits) {
        Ok(p) => p,
        Err(_) => return Ok(kernel),
    };
    let of_thread: Vec<(u64, u64)> = kernel.launch.threads.iter().map(|t| (t.cta, t.tid / 32)).collect();
    match warps::group(&program, &of_thread, &crate::config::Limits::default()) {
        Ok(g) if (g.kept.len() as u64) < warps_in_block => {
            let kept = warps::compact(&g.kept);
            let narrowed = KernelOptions { warps: Some(g.kept.clone()), ..options.clone() };
            match build_launch(ptx, &narrowed, limits) {
                Ok(mut k) => {
                    k.warp_choice = Some(format!("{kept}; {}: --warps all models them{}", g.groups.join("; "), cut_note(&g)));
                    k.warps_left_out = true;
                    Ok(k)
                }
                Err(_) => {
                    kernel.warp_choice = Some(all());
                    Ok(kernel)
                }
            }
        }
        Ok(g) => {
            let why = match (g.shared, g.cut.is_empty()) {
                (true, _) => "warps that run the same code are kept in twos where it writes memory (they may race)",
                (false, true) => "the code of each differs",
                (false, false) => "no two are known to run the same code",
            };
            kernel.warp_choice = Some(format!("every warp ({warps_in_block}): {why}{}", cut_note(&g)));
            Ok(kernel)
        }
        Err(e) => {
            kernel.warp_choice = Some(format!("{} (the warps were not grouped by their code: {e})", all()));
            Ok(kernel)
        }
    }
}

/// The warps the grouping kept alone because a loop of theirs ran past its bound, for the report.
fn cut_note(g: &warps::Grouping) -> String {
    match g.cut.as_slice() {
        [] => String::new(),
        cut => format!(
            " (warps {} kept: a loop of theirs runs past {} iterations, so what they reach and write after it is not compared)",
            warps::compact(cut),
            crate::config::DEFAULT_MAX_UNROLL
        ),
    }
}

/// [`build`] for the launch the options choose.
fn build_launch(ptx: &SourceFile, options: &KernelOptions, limits: &crate::InputLimits) -> Result<Kernel, KernelError> {
    let module = module::parse(ptx.text()).map_err(|d| KernelError::Ptx(FileDiagnostic::new(ptx, d)))?;
    let entry = pick_entry(&module, options, ptx.name())?;
    let body = entry.body.expect("entries have bodies");
    let body_text = &ptx.text()[body.range()];
    let launch = launch::launch(entry, options).map_err(KernelError::Options)?;
    let bindings = params::bind(&entry.params, &options.params).map_err(KernelError::Options)?;
    let maps = tensor_maps::bind(&entry.params, &options.tensor_maps).map_err(KernelError::Options)?;
    let mut init: Vec<String> = vec![launch.litmus_item()];
    init.extend(bindings.iter().flat_map(|b| b.init.iter().cloned()));
    init.extend(maps.iter().flat_map(|b| b.init.iter().cloned()));
    let mut shared = Vec::new();
    for v in &module.vars {
        let used = mentions(body_text, &v.name);
        match v.space.as_str() {
            // Dynamic shared memory: as many bytes as the launch gives.
            ".shared" if v.external && used => {
                let Some(bytes) = launch.dynamic_smem else {
                    return Err(KernelError::Options(format!(
                        "`{}` is the kernel's dynamic shared memory (`.extern .shared`): give its size with --dynamic-smem BYTES (what the host passes as the launch's shared memory bytes, e.g. CUTLASS's SharedStorageSize)",
                        v.name
                    )));
                };
                shared.push(dynamic_shared(v, bytes));
            }
            _ if v.external && used => {
                return Err(KernelError::Module(format!(
                    "`{}` is an .extern {} variable: only dynamic shared memory (`.extern .shared`) is modelled",
                    v.name, v.space
                )))
            }
            ".const" if used => {
                return Err(KernelError::Module(format!("`{}` is a .const variable: the constant state space is not modelled", v.name)))
            }
            // A variable the body never names cannot be reached (the host's pointers to it are
            // parameters, which are buffers of their own here), so it costs nothing.
            ".global" if used => init.push(one_line(&v.text)),
            ".shared" if used => shared.push(one_line(&v.text)),
            _ => {}
        }
    }
    let (condition, assertion) = match options.assert.as_deref().map(str::trim) {
        None => ("exists (false)".to_string(), None),
        Some(a) if ["exists", "~exists", "forall"].iter().any(|q| a.starts_with(q)) => (a.to_string(), None),
        Some(a) => (format!("exists (~({a}))"), Some(a.to_string())),
    };
    let (body_line, body_col) = ptx.line_col(body.start);
    let mut litmus = header(entry, ptx.name(), &launch, &init, body_line).map_err(KernelError::Module)?;
    // The body from its `{`, in the same column, with the module's shared variables it uses.
    litmus.push_str(&" ".repeat(body_col - 1));
    litmus.push('{');
    for s in &shared {
        litmus.push(' ');
        litmus.push_str(s);
    }
    litmus.push_str(&body_text[1..]);
    litmus.push('\n');
    litmus.push_str(&condition);
    litmus.push('\n');
    if let Some(at) = find_call(body_text) {
        let span = crate::diag::Span::new(body.start + at, body.start + at + 4);
        let callees: Vec<&str> = module.functions.iter().filter(|f| !f.is_entry).map(|f| f.name.as_str()).collect();
        let d = crate::diag::Diagnostic::error(span, "a call: ptxmm kernel models one kernel body, without calls")
            .with_note(format!("the module's functions: {}", callees.join(", ")))
            .with_note("inline the callee (`__forceinline__`, or drop `__noinline__`) and compile again");
        return Err(KernelError::Ptx(FileDiagnostic::new(ptx, d)));
    }
    let condition_start = litmus.len() - condition.len() - 1;
    let abstracted = slice::abstracted(ptx.name(), &litmus, limits).map_err(|d| {
        // An error in the condition is about the flag that gave it.
        if let (Some(flag), true) = (options.assert.as_deref(), d.span.start >= condition_start) {
            let notes: String = d.notes.iter().map(|n| format!("; {n}")).collect();
            return KernelError::Options(format!("--assert `{}`: {}{notes}", flag.trim(), d.message));
        }
        let line = SourceFile::new("", litmus.clone()).line_col(d.span.start).0;
        let file = if line >= body_line {
            SourceFile::new(ptx.name(), litmus.clone())
        } else {
            SourceFile::new(format!("{} (the generated litmus test)", ptx.name()), litmus.clone())
        };
        KernelError::Ptx(FileDiagnostic::new(&file, d))
    })?;
    let chains = sources(ptx.text(), &module.files, body_line, ptx.line_col(body.end.saturating_sub(1)).0);
    Ok(Kernel {
        entry: entry.name.clone(),
        file: ptx.name().to_string(),
        litmus,
        launch,
        bindings: bindings.into_iter().map(|b| b.description).chain(maps.into_iter().map(|m| m.description)).collect(),
        abstracted,
        condition,
        assertion,
        warp_choice: None,
        warps_left_out: false,
        lane_choice: None,
        sources: chains.iter().map(|(&l, f)| (l, short_location(f, &module.files))).collect(),
        chains,
        files: module.files.clone(),
    })
}

/// The entry `--entry` names, or the only one.
fn pick_entry<'m>(module: &'m module::Module, options: &KernelOptions, file: &str) -> Result<&'m module::Function, KernelError> {
    let names: Vec<&str> = module.entries().map(|e| e.name.as_str()).collect();
    match &options.entry {
        Some(n) => module.entries().find(|e| &e.name == n).ok_or_else(|| {
            KernelError::Options(format!(
                "{file} has no entry `{n}`; its entries: {}",
                if names.is_empty() { "none".to_string() } else { names.join(", ") }
            ))
        }),
        None => match names.len() {
            1 => Ok(module.entries().next().expect("one entry")),
            0 => Err(KernelError::Module(format!("{file} defines no kernel (`.entry` with a body)"))),
            _ => Err(KernelError::Options(format!("{file} has {} entries: choose one with --entry ({})", names.len(), names.join(", ")))),
        },
    }
}

/// The offset in `body` of its first `call` instruction (`call`, `call.uni`, after a guard).
fn find_call(body: &str) -> Option<usize> {
    let mut offset = 0;
    for line in body.split_inclusive('\n') {
        let code = line.split("//").next().unwrap_or("");
        let trimmed = code.trim_start();
        let mut at = offset + (code.len() - trimmed.len());
        let mut rest = trimmed;
        if let Some(after) = rest.strip_prefix('@') {
            let guard_len = after.find(char::is_whitespace).unwrap_or(after.len());
            let next = after[guard_len..].trim_start();
            at += 1 + (after.len() - next.len());
            rest = next;
        }
        if rest.starts_with("call") && rest[4..].starts_with(|c: char| c == '.' || c.is_whitespace()) {
            return Some(at);
        }
        offset += line.len();
    }
    None
}

/// Whether `text` has the word `name` (not as part of a longer name).
fn mentions(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%' | '.');
    text.match_indices(name).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(word) && !text[i + name.len()..].chars().next().is_some_and(|c| word(c) && c != '.')
    })
}

/// The declaration of dynamic shared memory (`.extern .shared .align 16 .b8 smem[];`) with the
/// launch's bytes (`... smem[BYTES];`).
fn dynamic_shared(v: &module::ModuleVar, bytes: u64) -> String {
    let text = one_line(&v.text);
    let open = text.rfind('[').unwrap_or(text.len());
    // The array's elements: the bytes over the element type's width (`.b8` usually).
    let width = text
        .split_whitespace()
        .filter_map(|w| w.strip_prefix('.'))
        .find_map(|t| crate::program::Ty::parse(t).map(|t| u64::from(t.bits / 8).max(1)))
        .unwrap_or(1);
    format!("{}[{}];", text[..open].trim_end(), bytes.div_ceil(width))
}

/// The test's lines before the body: its name, a comment, the init block, the placement line,
/// then blank lines up to `body_line`.
fn header(entry: &module::Function, file: &str, launch: &launch::Launch, init: &[String], body_line: usize) -> Result<String, String> {
    let placement: Vec<String> = launch
        .columns()
        .iter()
        .enumerate()
        .map(|(i, col)| {
            let t = &launch.threads[col.first];
            let cluster = t.cluster.map(|k| format!("cluster {k},")).unwrap_or_default();
            match col.warp {
                Some(w) => format!("P{i}@cta {},{cluster}gpu 0,warp {w}", t.cta),
                None => format!("P{i}@cta {},{cluster}gpu 0,tid {}", t.cta, t.tid),
            }
        })
        .collect();
    let comment = format!(
        "\"ptxmm kernel {file} --entry {}: {}; from its `{{` on, each line of this test is the line of that number in {file}\"",
        entry.name,
        launch.describe()
    );
    let room = body_line.saturating_sub(1);
    let mut lines = vec![format!("PTX {}", entry.name)];
    if room >= 4 {
        lines.push(comment);
    }
    if room >= lines.len() + 3 + init.len() {
        lines.push("{".to_string());
        lines.extend(init.iter().map(|i| format!("  {i}")));
        lines.push("}".to_string());
    } else {
        lines.push(format!("{{ {} }}", init.join(" ")));
    }
    lines.push(format!("{} ;", placement.join(" | ")));
    if lines.len() > room {
        return Err(format!(
            "the body of `{}` starts on line {body_line}: a kernel check needs {} lines before it (for its init block and placement), so that the test's lines are the file's",
            entry.name,
            lines.len()
        ));
    }
    lines.resize(room, String::new());
    Ok(lines.iter().map(|l| format!("{l}\n")).collect())
}

/// A CUDA source position of a `.loc`: file number, line, column.
type LocPos = (u64, u64, u64);

/// The CUDA location of each line of the body, from the `.loc FILE LINE COL[, function_name
/// F, inlined_at FILE LINE COL]` lines above it: the whole inline chain, innermost frame first
/// (`cuda_pipeline_helpers.h:219`, then `k3.cu:43`). A `.loc` names one caller; the caller's own
/// caller is the `inlined_at` of the latest `.loc` of that position (nvcc writes the caller's
/// before the callee's), followed to any depth.
fn sources(text: &str, files: &[(u64, String)], body_line: usize, last_line: usize) -> BTreeMap<usize, Vec<String>> {
    let mut out = BTreeMap::new();
    let mut callers: std::collections::HashMap<LocPos, LocPos> = std::collections::HashMap::new();
    let mut current: Option<Vec<String>> = None;
    let name = |f: u64, l: u64| -> Option<String> {
        // Line 0: code the compiler made up (no source line).
        files.iter().find(|(k, _)| *k == f).filter(|_| l > 0).map(|(_, path)| {
            let short = std::path::Path::new(path).file_name().map_or(path.clone(), |s| s.to_string_lossy().into_owned());
            format!("{short}:{l}")
        })
    };
    let position = |words: &str| -> Option<LocPos> {
        let mut w = words.split(|c: char| c.is_whitespace() || c == ',').filter(|w| !w.is_empty()).map(|w| w.parse::<u64>().ok());
        Some((w.next()??, w.next()??, w.next().flatten().unwrap_or(0)))
    };
    for (n, line) in text.lines().enumerate().take(last_line).skip(body_line - 1) {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix(".loc") {
            let (here, at) = match rest.split_once("inlined_at") {
                Some((h, a)) => (position(h.split(", function_name").next().unwrap_or(h)), position(a)),
                None => (position(rest), None),
            };
            let Some(here) = here else { continue };
            if let Some(at) = at {
                callers.insert(here, at);
            }
            let mut frames = Vec::new();
            let mut pos = Some(here);
            let mut seen = std::collections::HashSet::new();
            while let Some(p) = pos.filter(|p| seen.insert(*p)) {
                frames.extend(name(p.0, p.1));
                pos = if p == here { at } else { callers.get(&p).copied() };
            }
            current = (!frames.is_empty()).then_some(frames);
            continue;
        }
        if let Some(c) = &current {
            out.insert(n + 1, c.clone());
        }
    }
    out
}

/// Whether a source file is the CUDA toolkit's own (its intrinsics, `cuda::ptx`, cooperative
/// groups): a finding's location names the innermost frame outside them.
fn is_toolkit(path: &str) -> bool {
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    ["nvidia/cu", "cuda/include/", "/crt/", "cccl/cuda/", "cccl/nv/", "cooperative_groups"].iter().any(|d| path.contains(d))
        || file.starts_with("cuda_")
        || (file.starts_with("sm_") && (file.contains("intrinsics") || file.contains("_rt.")))
}

/// How a report names the CUDA location of a PTX line: the innermost frame outside the toolkit's
/// headers (`k3.cu:43` for code of `cuda_pipeline_helpers.h:219` inlined there) and, for code
/// inlined from a library, with the outermost frame, the kernel that instantiates it
/// (`sm90_pipeline.hpp:420, inlined at device_kernel.h:123`). `Lines of the findings` shows the
/// whole chain.
fn short_location(frames: &[String], files: &[(u64, String)]) -> String {
    let primary = primary_frame(frames, files);
    let mut s = frames[primary].clone();
    if frames.len() > primary + 1 {
        s.push_str(&format!(", inlined at {}", frames[frames.len() - 1]));
    }
    s
}

/// The frame a finding names: the innermost one outside the toolkit's headers (else the first).
fn primary_frame(frames: &[String], files: &[(u64, String)]) -> usize {
    let toolkit = |f: &String| {
        let file = f.rsplit_once(':').map_or(f.as_str(), |(n, _)| n);
        files.iter().any(|(_, p)| p.ends_with(file) && is_toolkit(p))
    };
    frames.iter().position(|f| !toolkit(f)).unwrap_or(0)
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_chains_are_followed_to_any_depth_and_name_the_user_frame_first() {
        let files = vec![
            (1, "k3.cu".to_string()),
            (2, "/opt/nvidia/cu13/include/cuda_pipeline_helpers.h".to_string()),
            (3, "cutlass/include/cutlass/device_kernel.h".to_string()),
            (4, "cutlass/include/cutlass/pipeline/sm90_pipeline.hpp".to_string()),
            (5, "cutlass/include/cutlass/gemm/kernel/sm90_gemm.hpp".to_string()),
        ];
        let text = "{\n.loc 1 43 5\nld.u32 %r1, [%rd1];\n.loc 2 219 3, function_name $L__info_string0, inlined_at 1 43 5\ncp.async.ca.shared.global [%r1], [%rd1], 4;\n\
                    .loc 3 123 3\n.loc 5 300 5, function_name $L__info_string1, inlined_at 3 123 3\n.loc 4 420 9, function_name $L__info_string2, inlined_at 5 300 5\nmbarrier.arrive.shared.b64 _, [%r2];\n}\n";
        let chains = sources(text, &files, 1, 12);
        assert_eq!(chains[&3], vec!["k3.cu:43"]);
        assert_eq!(chains[&5], vec!["cuda_pipeline_helpers.h:219", "k3.cu:43"]);
        assert_eq!(chains[&9], vec!["sm90_pipeline.hpp:420", "sm90_gemm.hpp:300", "device_kernel.h:123"]);
        assert_eq!(short_location(&chains[&5], &files), "k3.cu:43");
        assert_eq!(short_location(&chains[&9], &files), "sm90_pipeline.hpp:420, inlined at device_kernel.h:123");
    }

    #[test]
    fn single_lines_get_their_cuda_location_ranges_do_not() {
        let sources: BTreeMap<usize, String> = [(34, "k.cu:12".to_string()), (49, "k.cu:18".to_string())].into();
        let text = "`st` (P0 line 34) and `cp` (line 49); P1 stuck at line 34 `bra`: loop of lines 34-49, line 7, pipeline 34\n";
        assert_eq!(
            annotate(text, &sources),
            "`st` (P0 line 34, k.cu:12) and `cp` (line 49, k.cu:18); P1 stuck at line 34 (k.cu:12) `bra`: loop of lines 34-49, line 7, pipeline 34\n"
        );
    }
}
