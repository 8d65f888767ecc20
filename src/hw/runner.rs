//! Finding nvcc, building a generated harness and running it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where nvcc was looked for, in order: `--nvcc`, `PATH`, `$CUDA_HOME/bin`, and the PyPI
/// install that `tests/hw/compile_all.sh` makes (`~/.cache/ptxmm-nvcc`).
pub fn find_nvcc(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = explicit {
        return if p.is_file() { Ok(p.to_path_buf()) } else { Err(format!("--nvcc {}: no such file", p.display())) };
    }
    let mut tried = Vec::new();
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let c = dir.join("nvcc");
            if c.is_file() {
                return Ok(c);
            }
        }
        tried.push("PATH".to_string());
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(home) = std::env::var_os(var) {
            let c = PathBuf::from(home).join("bin").join("nvcc");
            if c.is_file() {
                return Ok(c);
            }
            tried.push(format!("${var}/bin"));
        }
    }
    if let Some(home) = std::env::var_os("HOME") {
        let c = PathBuf::from(home).join(".cache/ptxmm-nvcc/nvidia/cu13/bin/nvcc");
        if c.is_file() {
            return Ok(c);
        }
        tried.push("~/.cache/ptxmm-nvcc".into());
    }
    Err(format!(
        "nvcc not found (looked in {}); install the CUDA toolkit, or `python3 -m pip install --target ~/.cache/ptxmm-nvcc nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-cccl`, or pass --nvcc PATH",
        tried.join(", ")
    ))
}

/// The nvcc command line that builds a harness (also written in the file's header).
pub fn build_command(nvcc: &Path, arch: &str, source: &Path, exe: &Path) -> Command {
    let mut c = Command::new(nvcc);
    c.args(["-O2", "-std=c++17"]).args(gencode(arch)).arg("-o").arg(exe).arg(source);
    c
}

/// Build a harness; the error carries nvcc's diagnostics.
pub fn build(nvcc: &Path, arch: &str, source: &Path, exe: &Path) -> Result<(), String> {
    let out = build_command(nvcc, arch, source, exe).output().map_err(|e| format!("cannot run {}: {e}", nvcc.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "nvcc failed on {}:\n{}{}",
            source.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Run a built harness; its standard output is the histogram text (`hw::report`), ended with
/// the `exit RC wall_ms MS` line of how the process ended and how long it took. A harness that
/// exits non-zero still returns what it printed (a timeout, no device) for the caller to
/// report.
pub fn run(exe: &Path, args: &[String]) -> Result<(String, Option<i32>), String> {
    let started = std::time::Instant::now();
    let out = Command::new(exe).args(args).output().map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if !out.status.success() && !out.stderr.is_empty() {
        let err = String::from_utf8_lossy(&out.stderr);
        let err: String = err.trim().chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
        text.push_str(&format!("error {err}\n"));
    }
    let code = out.status.code();
    text.push_str(&format!("exit {} wall_ms {wall_ms:.0}\n", exit_code(&out.status)));
    Ok((text, code))
}

/// The exit status as a shell reports it: the code, or 128 + the signal that killed it.
fn exit_code(status: &std::process::ExitStatus) -> i32 {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return 128 + sig;
        }
    }
    status.code().unwrap_or(-1)
}

/// nvcc's code-generation flags for an architecture: `sm_90a` gives
/// `-gencode arch=compute_90a,code=sm_90a` (plain `-arch=sm_90a` also embeds compute_90 PTX,
/// where ptxas warns about the `a` features).
pub fn gencode(arch: &str) -> Vec<String> {
    match arch.strip_prefix("sm_") {
        Some(v) => vec!["-gencode".into(), format!("arch=compute_{v},code={arch}")],
        None => vec![format!("-arch={arch}")],
    }
}
