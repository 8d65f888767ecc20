//! `ptxmm kernel`: check the synchronization of one kernel of a PTX module (docs/kernels.md).
//! The kernel becomes a litmus test (`ptxmm::kernel`), decided by the one driver as `run`
//! decides a test; the report names PTX lines and, from `-lineinfo`, CUDA lines.

use crate::cli::color;
use crate::cli::kernel_out::{self, Format};
use crate::cli::options::{LimitArgs, LivenessMode, ModelArgs};
use crate::cli::ExitCode;
use crate::decide::report::JsonError;
use crate::diag::SourceFile;
use crate::kernel::check::{CheckRequest, Failure, Liveness};
use crate::kernel::{launch::parse_list, Kernel, KernelOptions};
use std::path::PathBuf;

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
    /// The lanes of each warp modelled, or `all` (every lane the launch has; the default: every lane, lane 0 where that does not finish in half of the time).
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
        let text = crate::open_regular(path)
            .map_err(|source| crate::LoadError::Io { path: name.clone(), source })
            .and_then(|f| crate::read_text(f, &name, max_file_bytes, "--max-file-size"))
            .map_err(|e| Failure { file: Some(name.clone()), ..Failure::plain(2, load_error_text(&e)) })?;
        let file = crate::kernel::launch_file::parse(&name, &text).map_err(|e| Failure {
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

/// Build, decide and report one kernel. Exit status: 0 decided with no finding, 1 no result (a
/// kernel that cannot be checked, an inconclusive or incomplete answer, accesses not checked), 2 a bad model or
/// option, [`FINDINGS_STATUS`] a finding. `--json` and `--sarif` exit the same way.
pub(crate) fn cmd_kernel(args: &KernelArgs) -> ExitCode {
    let format = args.format();
    let model = args.model.model.clone().or_else(|| args.model.cat.as_ref().map(|p| p.display().to_string()));
    let model = model.unwrap_or_else(|| crate::config::models::DEFAULT_MODEL.to_string());
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
    let text = crate::open_regular(&args.file)
        .map_err(|source| crate::LoadError::Io { path: name.clone(), source })
        .and_then(|f| crate::read_text(f, &name, config.input.max_file_bytes, "--max-file-size"))
        .map_err(|e| Failure { error: Box::new(JsonError::of_load(&e)), ..Failure::plain(1, load_error_text(&e)) })?;
    let options = args.options(config.input.max_file_bytes)?;
    let ptx = SourceFile::new(name.clone(), text);
    // The grouping of warps and both checks share one --timeout.
    let deadline = config.limits.timeout.map(|t| std::time::Instant::now() + t);
    let liveness = match args.liveness {
        LivenessMode::Check => Liveness::Check,
        LivenessMode::Skip => Liveness::Skip,
        LivenessMode::Only => Liveness::Only,
    };
    let request = CheckRequest { ptx: &ptx, options: &options, config: &config, model, liveness, deadline, color: color() };
    let mut write_litmus = |kernel: &Kernel| -> Result<(), Failure> {
        match &args.emit_litmus {
            Some(out) => {
                std::fs::write(out, &kernel.litmus).map_err(|e| Failure::plain(1, format!("error: {}: cannot write: {e}", out.display())))
            }
            None => Ok(()),
        }
    };
    let checked = crate::kernel::check::check(&request, &mut write_litmus)?;
    if let Some(e) = &checked.live_error {
        eprintln!("{name}: liveness not decided: {e}");
    }
    match format {
        Format::Text => out!("{}", checked.report()),
        Format::Json => outln!("{}", crate::kernel::record::json_record(&checked)),
        Format::Sarif => outln!("{:#}", kernel_out::sarif(&checked, &args.model.readings)),
    }
    Ok(checked.status)
}

/// A file's load error as printed: its message carries `error: ` where it has one (an I/O error
/// or a located one), else it gets it.
fn load_error_text(e: &crate::LoadError) -> String {
    let text = e.to_string();
    if text.contains("error: ") {
        text
    } else {
        format!("error: {text}")
    }
}
