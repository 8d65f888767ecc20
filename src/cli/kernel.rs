//! `ptxmm kernel`: check the synchronization of one kernel of a PTX module (docs/kernels.md).
//! The kernel becomes a litmus test (`ptxmm::kernel`), decided by the one driver as `run`
//! decides a test; the report names PTX lines and, from `-lineinfo`, CUDA lines.

use crate::cli::kernel_out::{self, Checked, Format, Summary};
use crate::cli::options::{LimitArgs, LivenessMode, ModelArgs};
use crate::color;
use ptxmm::decide::liveness::LivenessOutcome;
use ptxmm::decide::report::JsonError;
use ptxmm::decide::{Decider, RunError, Verdict};
use ptxmm::diag::SourceFile;
use ptxmm::kernel::{launch::parse_list, Kernel, KernelOptions};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub(crate) struct KernelArgs {
    /// The PTX module (`nvcc -ptx`, `-keep`, `cuobjdump -ptx`; with `-lineinfo` the report
    /// names CUDA lines too).
    file: PathBuf,
    /// The kernel (`.entry`) to check; default: the module's only one.
    #[arg(long)]
    entry: Option<String>,
    /// Threads per CTA, `X`, `X,Y` or `X,Y,Z`; default: the kernel's .reqntid or .maxntid.
    #[arg(long, value_name = "X[,Y,Z]")]
    block: Option<String>,
    /// CTAs in the grid, `X[,Y,Z]`; default: one cluster, else 1.
    #[arg(long, value_name = "X[,Y,Z]")]
    grid: Option<String>,
    /// CTAs per cluster, `X[,Y,Z]`; default: the kernel's .reqnctapercluster, else no clusters.
    #[arg(long, value_name = "X[,Y,Z]")]
    cluster: Option<String>,
    /// Bytes of dynamic shared memory the launch gives (the size of the kernel's
    /// `.extern .shared` array; `%dynamic_smem_size`).
    #[arg(long, value_name = "BYTES")]
    dynamic_smem: Option<u64>,
    /// The CTAs modelled (linear ids, x fastest), e.g. `0,1` or `0-3` (default: all, up to 64).
    #[arg(long, value_name = "LIST")]
    ctas: Option<String>,
    /// The warps of each CTA modelled, or `all` (default: the warps whose code differs: one of
    /// each group of warps that run the same lines, two where that code writes memory).
    #[arg(long, value_name = "LIST")]
    warps: Option<String>,
    /// The lanes of each warp modelled, or `all` (every lane the launch has; default: 0).
    #[arg(long, value_name = "LIST")]
    lanes: Option<String>,
    /// A parameter's value: a number, `buffer:BYTES` (a zero-filled global buffer) or
    /// `{w0,w1,...}` (a buffer of those 32-bit words); NAME is the parameter's name or its
    /// buffer's (`param_0` for nvcc's `..._param_0`). Pointer parameters default to a buffer.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// A tensor map the kernel receives (a `CUtensorMap` parameter, or one inside an aggregate at
    /// byte OFF), as the host gave cuTensorMapEncodeTiled: `TYPE,DIMS,box=BOX[,stride=S]
    /// [,swizzle=none|32B|64B|128B][,base=BUFFER]`, extents innermost first, e.g.
    /// `--tensor-map param_0+128=bf16,320x256,box=64x128,swizzle=128B` (docs/kernels.md).
    #[arg(long = "tensor-map", value_name = "NAME[+OFF]=DESC")]
    tensor_maps: Vec<String>,
    /// A condition over the buffers (litmus syntax, e.g. `param_1 = 1 /\ param_1+4 = 5`) that
    /// must hold at the end of every execution; or a whole condition (`exists (...)`).
    #[arg(long, value_name = "CONDITION")]
    assert: Option<String>,
    /// Write the litmus test the kernel becomes to OUT (`ptxmm run OUT` decides it the same way).
    #[arg(long, value_name = "OUT")]
    emit_litmus: Option<PathBuf>,
    /// Check whether some fair execution can hang (check), skip that check, or run only it.
    #[arg(long, value_enum, default_value_t = LivenessMode::Check)]
    liveness: LivenessMode,
    /// A launch file (JSON: entry, block, grid, cluster, dynamic_smem, params, tensor_maps, ctas,
    /// warps, lanes, assert; docs/ptxmm-launch.schema.json). A flag given too overrides the
    /// file's setting; a --param or --tensor-map the file's entry for the same parameter and offset.
    #[arg(long, value_name = "FILE.json")]
    launch: Option<PathBuf>,
    /// Print one JSON document instead of the report: the record of `run --json` with the
    /// launch, what was abstracted and the CUDA lines (docs/json.md, docs/ptxmm-kernel.schema.json).
    #[arg(long, conflicts_with = "sarif")]
    json: bool,
    /// Print a SARIF 2.1.0 log instead of the report: one result per finding at its CUDA line,
    /// for code scanning (docs/ci.md).
    #[arg(long)]
    sarif: bool,
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    limits: LimitArgs,
}

impl KernelArgs {
    fn format(&self) -> Format {
        match (self.json, self.sarif) {
            (true, _) => Format::Json,
            (_, true) => Format::Sarif,
            _ => Format::Text,
        }
    }

    /// The flags' options over the launch file's, if one is given.
    fn options(&self, max_file_bytes: u64) -> Result<KernelOptions, Failure> {
        let flags = self.flag_options().map_err(|e| Failure::plain(2, format!("error: {e}")))?;
        let Some(path) = &self.launch else { return Ok(flags) };
        let name = path.display().to_string();
        let text = ptxmm::open_regular(path)
            .map_err(|source| ptxmm::LoadError::Io { path: name.clone(), source })
            .and_then(|f| ptxmm::read_text(f, &name, max_file_bytes, "--max-file-size"))
            .map_err(|e| Failure { file: Some(name.clone()), ..Failure::plain(2, format!("error: {e}")) })?;
        let file = ptxmm::kernel::launch_file::parse(&name, &text).map_err(|e| Failure {
            code: 2,
            file: Some(name.clone()),
            rendered: format!("{e}"),
            error: Box::new(JsonError { message: e.message.clone(), line: Some(e.line), column: Some(e.column), rendered: e.to_string() }),
        })?;
        Ok(file.overridden_by(&flags))
    }

    fn flag_options(&self) -> Result<KernelOptions, String> {
        let dims = |flag: &str, v: &Option<String>| v.as_deref().map(|s| parse_list(flag, s)).transpose();
        // `NAME=VALUE` pairs of a repeated flag (split at the first `=`).
        let pairs = |flag: &str, shape: &str, given: &[String]| -> Result<Vec<(String, String)>, String> {
            given
                .iter()
                .map(|p| {
                    p.split_once('=')
                        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
                        .ok_or(format!("{flag}: expected {shape}, found `{p}`"))
                })
                .collect()
        };
        let params = pairs("--param", "NAME=VALUE", &self.params)?;
        let tensor_maps = pairs("--tensor-map", "NAME[+OFF]=DESC", &self.tensor_maps)?;
        Ok(KernelOptions {
            entry: self.entry.clone(),
            block: dims("--block", &self.block)?,
            grid: dims("--grid", &self.grid)?,
            cluster: dims("--cluster", &self.cluster)?,
            ctas: dims("--ctas", &self.ctas)?,
            warps: match self.warps.as_deref() {
                Some("all") | None => None,
                Some(w) => Some(parse_list("--warps", w)?),
            },
            every_warp: self.warps.as_deref() == Some("all"),
            // `all`: the lanes a warp has (a warp past the block's end keeps those below it).
            lanes: match self.lanes.as_deref() {
                Some("all") => Some((0..32).collect()),
                _ => dims("--lanes", &self.lanes)?,
            },
            dynamic_smem: self.dynamic_smem,
            params,
            tensor_maps,
            assert: self.assert.clone(),
        })
    }
}

/// The exit status of a kernel with a finding (a race, undefined behaviour, a hang, or a failing
/// assertion), so that a script or CI job can fail on it as it would on a sanitizer's report.
const FINDINGS_STATUS: u8 = 3;

/// Why a check ended without a report: its exit status, the diagnostic as printed on stderr,
/// the same for a JSON error record, and the file it is about when that is not the PTX (a
/// launch file).
struct Failure {
    code: u8,
    file: Option<String>,
    rendered: String,
    /// Boxed: a failure is rare, and the results that carry one stay small.
    error: Box<JsonError>,
}

impl Failure {
    fn plain(code: u8, rendered: String) -> Failure {
        let message = rendered.trim_end().strip_prefix("error: ").unwrap_or(rendered.trim_end()).to_string();
        let error = Box::new(JsonError { rendered: rendered.trim_end().to_string(), ..JsonError::plain(message) });
        Failure { code, file: None, error, rendered }
    }
}

/// Build, decide and report one kernel. Exit status: 0 decided with no finding, 1 no result (a
/// kernel that cannot be checked, an inconclusive or incomplete answer, accesses not checked), 2 a bad model or
/// option, [`FINDINGS_STATUS`] a finding. `--json` and `--sarif` exit the same way.
pub(crate) fn cmd_kernel(args: &KernelArgs) -> ExitCode {
    let format = args.format();
    let model = args.model.model.clone().or_else(|| args.model.cat.as_ref().map(|p| p.display().to_string()));
    let model = model.unwrap_or_else(|| ptxmm::config::models::DEFAULT_MODEL.to_string());
    match check(args, format, &model) {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            eprintln!("{}", f.rendered.trim_end());
            let file = f.file.unwrap_or_else(|| args.file.display().to_string());
            if let Some(doc) = kernel_out::error_document(format, &file, &model, f.code, &f.error) {
                outln!("{doc}");
            }
            ExitCode::from(f.code)
        }
    }
}

fn check(args: &KernelArgs, format: Format, model: &str) -> Result<u8, Failure> {
    let config = args.model.config_or_error(&args.limits).map_err(|e| Failure {
        code: 2,
        file: Some(e.file.clone()),
        rendered: e.rendered.clone(),
        error: Box::new(e.json.clone()),
    })?;
    let name = args.file.display().to_string();
    // Writing the test over the module it came from would lose the module.
    if let Some(out) = &args.emit_litmus {
        let same = |a: &std::path::Path, b: &std::path::Path| matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y);
        if same(out, &args.file) {
            return Err(Failure::plain(
                2,
                format!("error: --emit-litmus {}: that is the kernel's own PTX file; name another file for the litmus test", out.display()),
            ));
        }
    }
    // The module is charged to --max-file-size as a test is: reading one costs memory in
    // proportion to its bytes.
    let text = ptxmm::open_regular(&args.file)
        .map_err(|source| ptxmm::LoadError::Io { path: name.clone(), source })
        .and_then(|f| ptxmm::read_text(f, &name, config.input.max_file_bytes, "--max-file-size"))
        .map_err(|e| {
            let text = e.to_string();
            let rendered = if text.contains(": error: ") { text } else { format!("error: {text}") };
            Failure { error: Box::new(JsonError::of_load(&e)), ..Failure::plain(1, rendered) }
        })?;
    let options = args.options(config.input.max_file_bytes)?;
    let ptx = SourceFile::new(name.clone(), text);
    // The grouping of warps and both checks share one --timeout.
    let started = std::time::Instant::now();
    let kernel = ptxmm::kernel::build(&ptx, &options, &config.input).map_err(|e| Failure {
        code: e.exit_status(),
        file: None,
        rendered: e.render(color()),
        error: Box::new(match &e {
            ptxmm::kernel::KernelError::Ptx(d) => JsonError::of_diagnostic(d),
            _ => JsonError::plain(e.render(false).trim_end().trim_start_matches("error: ")),
        }),
    })?;
    let write_litmus = |kernel: &Kernel| -> Result<(), Failure> {
        match &args.emit_litmus {
            Some(out) => {
                std::fs::write(out, &kernel.litmus).map_err(|e| Failure::plain(1, format!("error: {}: cannot write: {e}", out.display())))
            }
            None => Ok(()),
        }
    };
    // Written before the decision, so that a kernel that stops can be read as the test it became
    // (and written again below when every warp had to be modelled).
    write_litmus(&kernel)?;
    let deadline = config.limits.timeout.map(|t| started + t);
    let again = Again { ptx: &ptx, options: &options, config: &config, deadline, liveness: args.liveness };
    let (kernel, (outcome, live)) = match decide(&kernel, &name, &config, deadline, args.liveness)? {
        d if kernel.warps_left_out && hangs_or_never_completes(&d) => recheck_with_every_warp(kernel, d, &again),
        d => (kernel, d),
    };
    // Lane 0 of each warp (the default) cannot meet a count of lanes (one arrival per lane, a
    // named barrier's thread count): a hang there is checked again with every lane.
    let first = (outcome, live);
    let (kernel, (outcome, live)) = if options.lanes.is_none() && lanes_left_out(&kernel) && hangs_or_never_completes(&first) {
        recheck_with_every_lane(kernel, first, &again)
    } else {
        (kernel, first)
    };
    write_litmus(&kernel)?;
    let mut status = 0u8;
    let (live, live_error) = match live.transpose() {
        Ok(l) => (l, None),
        Err(e) => {
            eprintln!("{name}: liveness not decided: {e}");
            status = 1;
            (None, Some(e.to_string()))
        }
    };
    // Accesses left unchecked (unknown global addresses) leave the answer partial: no finding is
    // not "no bug" then.
    if outcome.as_ref().is_some_and(|o| o.incomplete.is_some() || o.inconclusive().is_some() || !o.unchecked.is_empty()) {
        status = 1;
    }
    let summary = summary(outcome.as_ref(), live.as_ref(), live_error.as_deref(), kernel.assertion.is_some());
    // A finding is established even where another check stopped early, so it wins over 1.
    let status = if summary.found { FINDINGS_STATUS } else { status };
    let checked = Checked {
        kernel: &kernel,
        outcome: outcome.as_ref(),
        live: live.as_ref(),
        live_error: live_error.as_deref(),
        model,
        summary: &summary,
        status,
    };
    match format {
        Format::Text => {
            let mut text = report(&kernel, outcome.as_ref(), live.as_ref());
            text.push_str(&summary.text);
            out!("{text}");
        }
        Format::Json => outln!("{}", kernel_out::json_record(&checked)),
        Format::Sarif => outln!("{:#}", kernel_out::sarif(&checked, &args.model.readings)),
    }
    Ok(status)
}

type Decision = (Option<ptxmm::decide::Outcome>, Option<Result<LivenessOutcome, RunError>>);

/// Decide a kernel's litmus test: the verdict (an error ends the check with its exit status) and
/// the liveness answer, as `run` decides one.
fn decide(
    kernel: &Kernel,
    name: &str,
    config: &ptxmm::config::Config,
    deadline: Option<std::time::Instant>,
    liveness: LivenessMode,
) -> Result<Decision, Failure> {
    let program = ptxmm::parse_program_with(SourceFile::new(name.to_string(), kernel.litmus.clone()), &config.input)
        .map_err(|e| Failure { error: Box::new(JsonError::of_load(&e)), ..Failure::plain(1, e.render(color())) })?;
    let decider = Decider::until(config, deadline);
    let outcome = if liveness == LivenessMode::Only { None } else { Some(decider.verdict(&program)) };
    let live = if liveness == LivenessMode::Skip { None } else { Some(decider.liveness(&program)) };
    match outcome.transpose() {
        Ok(o) => Ok((o, live)),
        Err(e) => {
            // An address error carries its own `line:col: ` prefix (as in `run`).
            let sep = if matches!(&e, RunError::Explore(x) if x.is_located()) { ":" } else { ": " };
            let mut rendered = format!("{name}{sep}{e}");
            if matches!(e, RunError::Explore(ptxmm::exec::trace::ExploreError::BadAddress { .. })) {
                rendered.push_str(&format!(
                    "\nnote: a pointer parameter is a buffer of {} bytes unless --param NAME=buffer:BYTES gives its size",
                    ptxmm::kernel::params::DEFAULT_BUFFER_BYTES
                ));
            }
            let error = located_error(&e.to_string(), &rendered);
            Err(Failure { code: if matches!(e, RunError::Model(_)) { 2 } else { 1 }, file: None, rendered, error: Box::new(error) })
        }
    }
}

/// The JSON error of a search error, with the `line:col: ` its message starts with when it has one.
fn located_error(message: &str, rendered: &str) -> JsonError {
    let mut parts = message.splitn(3, ':');
    match (parts.next().map(str::parse::<usize>), parts.next().map(str::parse::<usize>), parts.next()) {
        (Some(Ok(line)), Some(Ok(column)), Some(rest)) => {
            JsonError { message: rest.trim_start().to_string(), line: Some(line), column: Some(column), rendered: rendered.to_string() }
        }
        _ => JsonError { message: message.to_string(), line: None, column: None, rendered: rendered.to_string() },
    }
}

/// Whether a decision hangs or has no complete execution: with warps left out, an arrival count
/// (`mbarrier.init`, `bar.sync N`) that counts them can cause either.
fn hangs_or_never_completes(d: &Decision) -> bool {
    d.0.as_ref().is_some_and(|o| o.inconclusive().is_some() && !o.loop_cut) || matches!(&d.1, Some(Ok(l)) if !l.hang.is_empty())
}

/// The check again with every warp, kept where it decides (no limit stopped it); otherwise the
/// first decision, with a caution that the warps left out may be the cause.
fn recheck_with_every_warp(kernel: Kernel, first: Decision, again: &Again) -> (Kernel, Decision) {
    let Again { options, .. } = *again;
    let every = ptxmm::kernel::KernelOptions { every_warp: true, ..options.clone() };
    // The warps the first check left out, named, so that "every warp" and "left out" do not
    // read as a contradiction.
    let kept: std::collections::BTreeSet<u64> = kernel.launch.threads.iter().map(|t| t.tid / 32).collect();
    let left: Vec<u64> = (0..kernel.launch.block.div_ceil(32)).filter(|w| !kept.contains(w)).collect();
    let why = format!(
        "the first check, with warps {} left out, hangs or never completes, which a count of the warps left out can cause",
        ptxmm::kernel::warps::compact(&left)
    );
    if let Some((mut all, d)) = again.decide(&every) {
        all.warp_choice = Some(format!("every warp: {why}, so every warp was checked"));
        return (all, d);
    }
    let mut kernel = kernel;
    if let Some(w) = &mut kernel.warp_choice {
        w.push_str(&format!("; caution: {why}, and the check with every warp (--warps all) did not finish within the limits"));
    }
    (kernel, first)
}

/// What a second check of the kernel (every warp, every lane) is built and decided with.
#[derive(Clone, Copy)]
struct Again<'a> {
    ptx: &'a SourceFile,
    options: &'a ptxmm::kernel::KernelOptions,
    config: &'a ptxmm::config::Config,
    deadline: Option<std::time::Instant>,
    liveness: LivenessMode,
}

impl Again<'_> {
    /// The kernel built again with `options` and decided, where time is left and the decision
    /// finishes (no limit stopped it).
    fn decide(&self, options: &ptxmm::kernel::KernelOptions) -> Option<(Kernel, Decision)> {
        let has_time =
            self.deadline.is_none_or(|d| d.saturating_duration_since(std::time::Instant::now()) >= std::time::Duration::from_millis(200));
        let kernel = has_time.then(|| ptxmm::kernel::build(self.ptx, options, &self.config.input).ok()).flatten()?;
        let d = decide(&kernel, self.ptx.name(), self.config, self.deadline, self.liveness).ok()?;
        let decided = d.0.as_ref().is_none_or(|o| o.incomplete.is_none()) && !matches!(&d.1, Some(Err(_)));
        decided.then_some((kernel, d))
    }
}

/// Whether a warp modelled has lanes of the launch that the threads modelled leave out.
fn lanes_left_out(kernel: &Kernel) -> bool {
    let modelled: std::collections::BTreeSet<(u64, u64)> = kernel.launch.threads.iter().map(|t| (t.cta, t.tid)).collect();
    modelled.iter().any(|&(cta, tid)| {
        let first = tid / 32 * 32;
        (first..(first + 32).min(kernel.launch.block)).any(|lane| !modelled.contains(&(cta, lane)))
    })
}

/// The check again with every lane of the warps modelled, kept where it decides (no limit
/// stopped it); otherwise the first decision, with a caution that the lanes left out may be the
/// cause.
fn recheck_with_every_lane(kernel: Kernel, first: Decision, again: &Again) -> (Kernel, Decision) {
    let Again { options, .. } = *again;
    // The warps the first check modelled, each with every lane.
    let warps: std::collections::BTreeSet<u64> = kernel.launch.threads.iter().map(|t| t.tid / 32).collect();
    let every =
        ptxmm::kernel::KernelOptions { warps: Some(warps.into_iter().collect()), lanes: Some((0..32).collect()), ..options.clone() };
    let why = "the check with lane 0 of each warp (the default) hangs or never completes, which a count of the lanes left out (one arrival per lane, a barrier's thread count) can cause";
    match again.decide(&every) {
        Some((mut all, d)) if !hangs_or_never_completes(&d) => {
            all.warp_choice = kernel.warp_choice.clone();
            all.lane_choice = Some(format!("every lane: {why}, so every lane was checked"));
            return (all, d);
        }
        // Every lane hangs too: lane 0's report (its threads fewer, its names shorter) stands.
        Some(_) => {
            let mut kernel = kernel;
            kernel.lane_choice =
                Some("lane 0 of each warp (the default); the check with every lane (--lanes all) hangs or never completes too".to_string());
            return (kernel, first);
        }
        None => {}
    }
    let mut kernel = kernel;
    kernel.lane_choice =
        Some(format!("lane 0 of each warp; caution: {why}, and the check with every lane (--lanes all) did not finish within the limits"));
    (kernel, first)
}

/// The report: the launch, the parameters, what was abstracted, the verdict and findings with
/// their PTX and CUDA lines, the liveness answer, and a summary line.
fn report(k: &Kernel, o: Option<&ptxmm::decide::Outcome>, live: Option<&ptxmm::decide::liveness::LivenessOutcome>) -> String {
    let mut s = String::new();
    let threads: Vec<String> = k.launch.threads.iter().enumerate().map(|(i, t)| format!("P{i} = CTA {} tid {}", t.cta, t.tid)).collect();
    let _ = writeln!(s, "Kernel {} of {}: {}", k.entry, k.file, k.launch.describe());
    if let Some(w) = &k.warp_choice {
        let _ = writeln!(s, "Warps modelled: {w}");
    }
    if let Some(l) = &k.lane_choice {
        let _ = writeln!(s, "Lanes modelled: {l}");
    }
    let _ = writeln!(s, "Threads modelled: {}", threads.join(", "));
    for b in &k.bindings {
        let _ = writeln!(s, "Parameter {b}");
    }
    if k.abstracted.is_empty() {
        let _ = writeln!(s, "Abstracted: nothing (every instruction is modelled)");
    } else {
        let _ =
            writeln!(s, "Abstracted ({}): instructions whose results the model does not compute (register-only instructions it does not interpret, the fragments of ldmatrix/stmatrix); their results are unknown values (stored as unknown, never an address, a size or a count; a branch on one goes both ways):", k.abstracted.len());
        for a in &k.abstracted {
            let _ = writeln!(s, "  {} `{}`: {}", place(k, a.line), a.instruction, a.why);
        }
    }
    let mut lines = std::collections::BTreeSet::new();
    if let Some(o) = o {
        let headline = ptxmm::decide::report::headline(o, live);
        // Without --assert the condition is the generated `exists (false)`: its Forbidden says
        // only that some execution completes, which is no verdict a user asked for.
        let generated = k.assertion.is_none() && k.condition == "exists (false)";
        match headline.strip_prefix("Verdict: Forbidden\n") {
            Some(rest) if generated => {
                s.push_str("Verdict: none asked (no --assert condition): the findings and the liveness check are the answer\n");
                s.push_str(&k.with_sources(rest));
            }
            _ => {
                s.push_str(&k.with_sources(&headline));
                if k.assertion.is_none() {
                    let _ = writeln!(s, "Condition: {} (the findings and the liveness check are the answer)", k.condition);
                }
            }
        }
        s.push_str(&k.with_sources(&ptxmm::decide::report::findings_block(o)));
        for f in o.undefined.iter().chain(&o.races).chain(&o.flag_findings) {
            lines.extend(f.sites.iter().map(|site| (site.line, site.instruction.clone())));
        }
        if let Some(a) = &k.assertion {
            let holds = match o.verdict() {
                Verdict::Forbidden => "holds at the end of every execution",
                Verdict::Allowed => "fails in some execution; final states where it fails:",
                _ => "not decided (see the verdict)",
            };
            let _ = writeln!(s, "Assertion `{a}`: {holds}");
            if o.verdict() == Verdict::Allowed {
                for state in o.states.iter().filter(|(_, &fails)| fails).map(|(state, _)| state).take(8) {
                    let _ = writeln!(s, "  {}", ptxmm::decide::report::state_line(o, state));
                }
            }
        }
        s.push_str(&k.with_sources(&ptxmm::decide::report::loops_block(o)));
        s.push_str(&k.with_sources(&ptxmm::decide::report::unchecked_block(o)));
    }
    if let Some(l) = live {
        s.push_str(&k.with_sources(&l.report()));
        lines.extend(l.hang.iter().map(|t| (t.line, t.instruction.clone())));
    }
    if !lines.is_empty() {
        let _ = writeln!(s, "Lines of the findings:");
        for (line, instruction) in &lines {
            let _ = writeln!(s, "  {} `{instruction}`", place(k, *line));
        }
    }
    s
}

/// `file.ptx:85 (tma_pipeline.cu:37)`, with the whole inline chain where there is one
/// (`file.ptx:124 (tma_pipeline.cu:31; inline chain: cp_async_bulk.h:63 in tma_pipeline.cu:31)`).
fn place(k: &Kernel, line: usize) -> String {
    let chain = k.chain_of(line);
    match k.source_of(line) {
        Some(src) if chain.len() > 1 => format!("{}:{line} ({src}; inline chain: {})", k.file, chain.join(" in ")),
        Some(src) => format!("{}:{line} ({src})", k.file),
        None => format!("{}:{line}", k.file),
    }
}

/// For each reading some finding depends on: how many findings, the reading, where production
/// code meets it, and the flag that accepts the other reading.
fn readings_note(o: Option<&ptxmm::decide::Outcome>) -> String {
    let Some(o) = o else { return String::new() };
    let mut by: std::collections::BTreeMap<&str, (usize, &ptxmm::config::readings::ReadingDependence)> = Default::default();
    for f in o.undefined.iter().chain(&o.races) {
        for r in &f.readings {
            by.entry(r.id).or_insert((0, r)).0 += 1;
        }
    }
    let mut s = String::new();
    for (id, (n, r)) in by {
        let practice = ptxmm::config::readings::AMBIGUITIES.iter().find(|a| a.id == id).and_then(|a| a.in_practice);
        let _ = writeln!(
            s,
            "Reading {id}: {n} finding(s) hold only under the {} reading ({}); --reading {} takes the other ({}){}",
            r.in_effect,
            r.reading,
            r.flag,
            r.other,
            practice.map(|p| format!(". In practice: {p}")).unwrap_or_default()
        );
    }
    s
}

/// One line: the findings counted, or none; and what was not decided (a limit stopped the
/// search, or it could not answer), so that "no finding" is said only of a finished check.
fn summary(
    o: Option<&ptxmm::decide::Outcome>,
    live: Option<&ptxmm::decide::liveness::LivenessOutcome>,
    live_error: Option<&str>,
    asserted: bool,
) -> Summary {
    let mut parts = Vec::new();
    let mut open = Vec::new();
    if let Some(o) = o {
        if asserted && o.verdict() == Verdict::Allowed {
            parts.push("the assertion fails".to_string());
        }
        // Findings that hold only under one reading of a documented ambiguity are counted apart.
        let apart =
            |fs: &std::collections::BTreeSet<ptxmm::decide::findings::Finding>| fs.iter().filter(|f| !f.readings.is_empty()).count();
        let count = |n: usize, m: usize, what: &str| match m {
            0 => format!("{n} {what}"),
            m if m == n => format!("{n} {what} (only under a reading, see below)"),
            m => format!("{n} {what} ({} under every reading, {m} only under a reading, see below)", n - m),
        };
        if !o.undefined.is_empty() {
            parts.push(count(o.undefined.len(), apart(&o.undefined), "undefined behaviour"));
        }
        if !o.races.is_empty() {
            parts.push(count(o.races.len(), apart(&o.races), "data race(s)"));
        }
        if let Some(why) = &o.incomplete {
            open.push(format!("the search stopped early ({why})"));
        } else if o.loop_cut && o.inconclusive().is_some() {
            open.push("the unrolling bound cut runs (see Loops)".to_string());
        } else if o.inconclusive().is_some() && live.is_none_or(|l| l.hang.is_empty()) {
            open.push("no execution completes".to_string());
        }
    }
    if live.is_some_and(|l| !l.hang.is_empty()) {
        parts.push("a hang".to_string());
    }
    if let Some(e) = live_error {
        open.push(format!("the liveness check did not finish ({e})"));
    }
    let found = if parts.is_empty() {
        if open.is_empty() {
            "no finding".to_string()
        } else {
            "no finding so far".to_string()
        }
    } else {
        parts.join(", ")
    };
    let unchecked = o.map_or(0, |o| o.unchecked.iter().map(|u| u.line).collect::<std::collections::BTreeSet<_>>().len());
    let unchecked = match unchecked {
        0 => String::new(),
        n => format!("; {n} instruction(s) with unknown global addresses not checked (see Not checked)"),
    };
    let mut line = if open.is_empty() {
        format!("Summary: {found}{unchecked}\n")
    } else {
        format!("Summary: {found}{unchecked}; not decided: {}\n", open.join("; "))
    };
    line.push_str(&readings_note(o));
    Summary { text: line, found: !parts.is_empty(), open }
}
