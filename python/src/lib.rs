//! `ptxmm._native`: the library under the Python package. It takes and returns JSON text (a
//! launch file in, the `kernel --json` / `run --json` records out), so that Python sees exactly
//! the documented schemas, and the Python side (`ptxmm/__init__.py`) turns them into typed objects
//! and exceptions. The work runs with the GIL released.

use ptxmm::config::Config;
use ptxmm::decide::report::{self, JsonError};
use ptxmm::decide::Decider;
use ptxmm::diag::SourceFile;
use ptxmm::kernel::check::{self, CheckRequest, Liveness};
use pyo3::prelude::*;
use serde_json::{json, Value};

/// The model and its readings, with a wall-clock limit per check (seconds; 0 or less: none).
fn config(model: Option<&str>, cat: Option<&str>, readings: &[String], timeout: f64) -> Result<(Config, String), Value> {
    let (loaded, name) = match (cat, model) {
        (Some(path), _) => (ptxmm::config::models::from_file(std::path::Path::new(path)), path.to_string()),
        (None, name) => {
            let name = name.unwrap_or(ptxmm::config::models::DEFAULT_MODEL);
            (ptxmm::config::models::builtin(name), name.to_string())
        }
    };
    let model = loaded.map_err(|d| failure(2, Some(d.file.name()), JsonError::of_diagnostic(&d)))?;
    let config = Config::new(model, name.clone())
        .with_readings(readings)
        .map_err(|e| failure(2, None, JsonError::plain(format!("reading: {e}"))))?
        .with_timeout(ptxmm::config::Limits::timeout_from_secs(timeout));
    Ok((config, name))
}

/// An error document: the exit status the command line gives it, the file it is about, and the
/// located message.
fn failure(code: u8, file: Option<&str>, error: JsonError) -> Value {
    json!({ "error": { "code": code, "file": file, "message": error.message, "line": error.line, "column": error.column, "rendered": error.rendered } })
}

fn liveness(mode: &str) -> Result<Liveness, Value> {
    match mode {
        "check" => Ok(Liveness::Check),
        "skip" => Ok(Liveness::Skip),
        "only" => Ok(Liveness::Only),
        other => Err(failure(2, None, JsonError::plain(format!("liveness: expected check, skip or only, found `{other}`")))),
    }
}

/// Check one kernel: `launch` is a launch file's text (docs/ptxmm-launch.schema.json). Returns
/// `{"record": <kernel --json record>, "report": <the text report>}` or `{"error": {...}}`.
#[pyfunction]
#[pyo3(signature = (ptx, name, launch, model=None, cat=None, readings=Vec::new(), timeout=10.0, liveness_mode="check".to_string()))]
#[allow(clippy::too_many_arguments)]
fn check_kernel(
    py: Python<'_>,
    ptx: String,
    name: String,
    launch: String,
    model: Option<String>,
    cat: Option<String>,
    readings: Vec<String>,
    timeout: f64,
    liveness_mode: String,
) -> String {
    py.detach(|| {
        let run = || -> Result<Value, Value> {
            let (config, model_name) = config(model.as_deref(), cat.as_deref(), &readings, timeout)?;
            let live = liveness(&liveness_mode)?;
            if ptx.len() as u64 > config.input.max_file_bytes {
                return Err(failure(
                    1,
                    None,
                    JsonError::plain(format!(
                        "{name}: {} bytes, more than the {} a module may have",
                        ptx.len(),
                        config.input.max_file_bytes
                    )),
                ));
            }
            let file = ptxmm::kernel::launch_file::parse("launch", &launch).map_err(|e| {
                failure(
                    2,
                    Some("launch"),
                    JsonError { message: e.message.clone(), line: Some(e.line), column: Some(e.column), rendered: e.to_string() },
                )
            })?;
            let options = file.options;
            let source = SourceFile::new(name.clone(), ptx);
            let deadline = config.limits.timeout.map(|t| std::time::Instant::now() + t);
            let request = CheckRequest {
                ptx: &source,
                options: &options,
                config: &config,
                model: &model_name,
                liveness: live,
                deadline,
                color: false,
            };
            let checked = check::check(&request, &mut |_| Ok(())).map_err(|f| failure(f.code, f.file.as_deref(), *f.error))?;
            Ok(json!({ "record": ptxmm::kernel::record::json_record(&checked), "report": checked.report() }))
        };
        run().unwrap_or_else(|e| e).to_string()
    })
}

/// Decide one litmus test. Returns `{"record": <run --json record>, "report": <herd7 block>}`
/// or `{"error": {...}}`.
#[pyfunction]
#[pyo3(signature = (text, name, model=None, cat=None, readings=Vec::new(), timeout=10.0, liveness_mode="check".to_string()))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    text: String,
    name: String,
    model: Option<String>,
    cat: Option<String>,
    readings: Vec<String>,
    timeout: f64,
    liveness_mode: String,
) -> String {
    py.detach(|| {
        let go = || -> Result<Value, Value> {
            let (config, model_name) = config(model.as_deref(), cat.as_deref(), &readings, timeout)?;
            let live = liveness(&liveness_mode)?;
            let program = ptxmm::parse_program_with(SourceFile::new(name.clone(), text), &config.input)
                .map_err(|e| failure(1, Some(&name), JsonError::of_load(&e)))?;
            let decider = Decider::new(&config);
            let outcome = if live == Liveness::Only { None } else { Some(decider.verdict(&program)) };
            let outcome = outcome.transpose().map_err(|e| failure(1, Some(&name), JsonError::plain(e.to_string())))?;
            let lived = if live == Liveness::Skip { None } else { Some(decider.liveness(&program)) };
            let (lived, live_error) = match lived.transpose() {
                Ok(l) => (l, None),
                Err(e) => (None, Some(e.to_string())),
            };
            let mut v = match &outcome {
                Some(o) => report::json(o, &name, &model_name, report::JsonOptions::default()),
                None => json!({ "schema_version": report::SCHEMA_VERSION, "test": program.name, "file": name, "model": model_name }),
            };
            if let Some(l) = &lived {
                v["liveness"] = serde_json::to_value(l).map_err(|e| failure(1, None, JsonError::plain(e.to_string())))?;
            }
            if let Some(e) = live_error {
                v["liveness_error"] = e.into();
            }
            let mut text =
                outcome.as_ref().map(|o| report::run_text(o, lived.as_ref())).unwrap_or_else(|| format!("Test {}\n", program.name));
            if let Some(l) = &lived {
                text.push_str(&l.report());
            }
            Ok(json!({ "record": v, "report": text }))
        };
        go().unwrap_or_else(|e| e).to_string()
    })
}

/// The `ptxmm` command line, in this process: `argv` as `sys.argv` gives it; returns the exit
/// status.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| ptxmm::cli::main(argv.into_iter().map(Into::into).collect()).code())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(check_kernel, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
