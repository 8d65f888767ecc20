//! ptxmm for the web playground: one JSON request in, one JSON answer out.
//!
//! The page (web/page/ptxmm.js) writes a UTF-8 JSON request into the module's linear memory
//! (`ptxmm_alloc`), calls `ptxmm_request`, and reads the answer back (`ptxmm_result_ptr` /
//! `ptxmm_result_len`). The same [`handle`] runs natively in this crate's tests, so what the
//! page shows is what these functions return. Requests (`op`):
//!
//! - `info`: the built-in models, the readings, and the example menu.
//! - `run`: `{text, file?, model?, readings?, liveness?, LIMIT?...}` → the text `ptxmm run`
//!   prints, its `--json` record, the stderr lines, the verdict; or the diagnostic. The limits
//!   are `ptxmm run`'s, by their flag names (`timeout` in seconds, `unroll`, `max_candidates`,
//!   `max_events`, `max_states`, `max_values`, `max_file_size`, `max_instructions`, `max_threads`, `max_memory`), with its
//!   defaults.
//! - `explain`: the same fields → the text `ptxmm explain` prints, its JSON, and the SVG of
//!   `explain --svg` (`svg`) and of `explain --svg --all-events` (`svg_all`).
//!
//! A diagnostic answer carries the CLI's rendered message (`file:line:col`), the line and column
//! of the span's start and end, so the page can mark the span.

use ptxmm::config::{Config, LimitOptions};
use ptxmm::decide::report::JsonError;
use ptxmm::decide::Decider;
use ptxmm::diag::SourceFile;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::HashMap;

include!(concat!(env!("OUT_DIR"), "/examples.rs"));

thread_local! {
    /// Built-in models parsed once per name (the page runs many tests under one model).
    static MODELS: RefCell<HashMap<String, ptxmm::cat::CatModel>> = RefCell::new(HashMap::new());
}

/// Answer one JSON request (see the module documentation); never panics on bad input.
pub fn handle(request: &str) -> String {
    let answer = match serde_json::from_str::<Value>(request) {
        Err(e) => failure(format!("bad request: {e}")),
        Ok(req) => match req["op"].as_str() {
            Some("info") => info(),
            Some("run") => decide(&req),
            Some("explain") => explain(&req),
            other => failure(format!("bad request: unknown op {other:?}")),
        },
    };
    answer.to_string()
}

/// An answer for a request that could not be served at all (not a diagnostic about the test).
fn failure(message: String) -> Value {
    json!({ "ok": false, "error": JsonError::plain(message) })
}

fn info() -> Value {
    let models: Vec<Value> = ptxmm::config::models::BUILTIN.iter().map(|(name, file, _)| json!({ "name": name, "file": file })).collect();
    let readings: Vec<Value> = ptxmm::config::readings::AMBIGUITIES
        .iter()
        .map(|a| json!({ "id": a.id, "flag": a.flag, "default": a.default, "alternative": a.alternative }))
        .collect();
    let examples: Vec<Value> = EXAMPLES.iter().map(|(group, path, text)| json!({ "group": group, "path": path, "text": text })).collect();
    json!({ "ok": true, "default_model": ptxmm::config::models::DEFAULT_MODEL, "models": models, "readings": readings, "examples": examples })
}

/// The fields of a `run` or `explain` request, checked.
struct Request {
    file: String,
    config: Config,
    program: ptxmm::program::Program,
}

/// Parse the request's test and options; `Err` is the answer to give (a diagnostic or a bad
/// option).
fn prepare(req: &Value) -> Result<Request, Value> {
    let file = req["file"].as_str().unwrap_or("playground.litmus").to_string();
    let model_name = req["model"].as_str().unwrap_or(ptxmm::config::models::DEFAULT_MODEL).to_string();
    let model = MODELS.with(|cache| -> Result<_, Value> {
        if let Some(m) = cache.borrow().get(&model_name) {
            return Ok(m.clone());
        }
        let m = ptxmm::config::models::builtin(&model_name).map_err(|d| failure(d.render(false)))?;
        cache.borrow_mut().insert(model_name.clone(), m.clone());
        Ok(m)
    })?;
    let mut flags = Vec::new();
    for flag in req["readings"].as_array().into_iter().flatten() {
        flags.push(flag.as_str().ok_or_else(|| failure("bad request: readings are strings".into()))?);
    }
    // The limits by `ptxmm run`'s flag names, with its defaults.
    let named: serde_json::Map<String, Value> =
        LimitOptions::NAMES.iter().filter_map(|&n| req.get(n).map(|v| (n.to_string(), v.clone()))).collect();
    let limits: LimitOptions = serde_json::from_value(Value::Object(named)).map_err(|e| failure(format!("bad request: {e}")))?;
    let config = Config::new(model, model_name.clone())
        .with_readings(&flags)
        .map_err(|e| failure(format!("error: --reading: {e}")))?
        .with_limit_options(&limits);
    let text = req["text"].as_str().ok_or_else(|| failure("bad request: no `text`".into()))?;
    let source = SourceFile::new(file.clone(), text.to_string());
    let program = match ptxmm::parse_program_with(source, &config.input) {
        Ok(p) => p,
        Err(e) => return Err(load_failure(&file, &model_name, &e)),
    };
    Ok(Request { file, config, program })
}

/// The answer for a test that does not load: the CLI's JSON error record plus the span's end,
/// so the page marks the whole span.
fn load_failure(file: &str, model: &str, e: &ptxmm::LoadError) -> Value {
    let error = JsonError::of_load(e);
    let end = match e {
        ptxmm::LoadError::Syntax(d) => Some(d.file.line_col(d.diagnostic.span.end.max(d.diagnostic.span.start))),
        _ => None,
    };
    json!({
        "ok": false,
        "error": error,
        "end_line": end.map(|e| e.0),
        "end_column": end.map(|e| e.1),
        "record": ptxmm::decide::report::json_error(file, None, Some(model), error.clone()),
    })
}

/// `ptxmm run FILE` (and `--json`) for one test, liveness as `--liveness` says.
fn decide(req: &Value) -> Value {
    let r = match prepare(req) {
        Ok(r) => r,
        Err(answer) => return answer,
    };
    let liveness = req["liveness"].as_str().unwrap_or("check");
    if !matches!(liveness, "check" | "skip" | "only") {
        return failure(format!("--liveness: expected `check`, `skip` or `only`, found `{liveness}`"));
    }
    let mut stderr = Vec::new();
    stderr.extend(ptxmm::decide::model_mismatch(&r.program, &r.config.model));
    stderr.extend(r.program.warnings.iter().map(|w| w.render(&r.program.source, false).trim_end().to_string()));
    let decider = Decider::new(&r.config);
    let outcome = (liveness != "only").then(|| decider.verdict(&r.program));
    let live = (liveness != "skip").then(|| decider.liveness(&r.program));
    let outcome = match outcome.transpose() {
        Ok(o) => o,
        Err(e) => {
            let error = JsonError::plain(format!("{}: {e}", r.file));
            return json!({ "ok": false, "error": error, "record": ptxmm::decide::report::json_error(&r.file, Some(&r.program.name), Some(&r.config.model_name), error.clone()) });
        }
    };
    if let Some(why) = outcome.as_ref().and_then(|o| o.incomplete.as_ref()) {
        stderr.push(format!("{}: not decided: {why}", r.file));
    }
    // The verdict lines give the reason; the CLI's stderr says only that it is inconclusive.
    if outcome.as_ref().is_some_and(|o| o.inconclusive().is_some()) {
        stderr.push(format!("{}: inconclusive (the verdict lines say why)", r.file));
    }
    let (live, live_error) = match live.transpose() {
        Ok(l) => (l, None),
        Err(e) => {
            stderr.push(format!("{}: liveness not decided: {e}", r.file));
            (None, Some(e.to_string()))
        }
    };
    let mut record = match &outcome {
        Some(o) => ptxmm::decide::report::json(o, &r.file, &r.config.model_name, ptxmm::decide::report::JsonOptions { timing: true }),
        None => {
            json!({ "schema_version": ptxmm::decide::report::SCHEMA_VERSION, "test": r.program.name, "file": r.file, "model": r.config.model_name })
        }
    };
    if let Some(l) = &live {
        record["liveness"] = serde_json::to_value(l).unwrap_or(Value::Null);
    }
    if let Some(e) = live_error {
        record["liveness_error"] = e.into();
    }
    let mut text = match &outcome {
        Some(o) => ptxmm::decide::report::run_text(o, live.as_ref()),
        None => format!("Test {}\n", r.program.name),
    };
    if let Some(l) = &live {
        text.push_str(&l.report());
    }
    // The text's parts, for the page to show the findings first and herd7's block folded.
    let sections = outcome.as_ref().map(|o| {
        use ptxmm::decide::report;
        json!({
            "headline": report::headline(o, live.as_ref()),
            "findings": report::findings_block(o),
            "herd": report::herd_block(o),
            "notes": report::notes_block(o),
            "liveness": live.as_ref().map(|l| l.report()).unwrap_or_default(),
        })
    });
    json!({
        "ok": true,
        "verdict": outcome.as_ref().map(|o| o.verdict().name()),
        "text": text,
        "sections": sections,
        "stderr": stderr,
        "json": record,
    })
}

/// `ptxmm explain FILE` (text, `--json` and `--svg`) for one test.
fn explain(req: &Value) -> Value {
    let r = match prepare(req) {
        Ok(r) => r,
        Err(answer) => return answer,
    };
    match Decider::new(&r.config).explain(&r.program) {
        Ok(x) => {
            let mut record = serde_json::to_value(&x).unwrap_or(Value::Null);
            record["graph"] = serde_json::to_value(&x.graph).unwrap_or(Value::Null);
            record["schema_version"] = ptxmm::decide::report::SCHEMA_VERSION.into();
            record["file"] = r.file.clone().into();
            json!({
                "ok": true,
                "text": x.text,
                "svg": ptxmm::decide::explain::svg::to_svg(&x.graph),
                "svg_all": ptxmm::decide::explain::svg::to_svg_all(&x.graph),
                "json": record,
            })
        }
        Err(e) => {
            let error = JsonError::plain(format!("{}: {e}", r.file));
            json!({ "ok": false, "error": error, "record": ptxmm::decide::report::json_error(&r.file, Some(&r.program.name), None, error.clone()) })
        }
    }
}

/// The C ABI the page's glue calls (web/page/ptxmm.js).
#[cfg(target_arch = "wasm32")]
mod abi {
    use std::cell::RefCell;

    thread_local! {
        /// The last answer, kept until the next request so the page can copy it out.
        static RESULT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
        /// The message of a panic, for the page to show after the trap.
        static PANIC: RefCell<String> = const { RefCell::new(String::new()) };
    }

    #[link(wasm_import_module = "env")]
    extern "C" {
        /// `performance.now()`, in milliseconds.
        fn ptxmm_now_ms() -> f64;
    }

    fn now_ms() -> f64 {
        // SAFETY: an import with no arguments that returns a number.
        unsafe { ptxmm_now_ms() }
    }

    /// A buffer of `len` bytes for the page to write a request into.
    #[no_mangle]
    pub extern "C" fn ptxmm_alloc(len: usize) -> *mut u8 {
        let mut v = Vec::<u8>::with_capacity(len.max(1));
        let p = v.as_mut_ptr();
        std::mem::forget(v);
        p
    }

    /// Free a buffer from [`ptxmm_alloc`].
    ///
    /// # Safety
    /// `ptr` and `len` are those of one `ptxmm_alloc` call, freed once.
    #[no_mangle]
    pub unsafe extern "C" fn ptxmm_free(ptr: *mut u8, len: usize) {
        drop(Vec::from_raw_parts(ptr, 0, len.max(1)));
    }

    /// Answer the UTF-8 JSON request at `ptr..ptr+len`; the answer is at [`ptxmm_result_ptr`].
    ///
    /// # Safety
    /// `ptr..ptr+len` is readable memory the page wrote (from [`ptxmm_alloc`]).
    #[no_mangle]
    pub unsafe extern "C" fn ptxmm_request(ptr: *const u8, len: usize) -> usize {
        ptxmm::clock::set_source(now_ms);
        std::panic::set_hook(Box::new(|info| PANIC.with(|p| *p.borrow_mut() = info.to_string())));
        let bytes = std::slice::from_raw_parts(ptr, len);
        let answer = match std::str::from_utf8(bytes) {
            Ok(text) => super::handle(text),
            Err(e) => super::failure(format!("bad request: not UTF-8: {e}")).to_string(),
        };
        RESULT.with(|r| *r.borrow_mut() = answer.into_bytes());
        RESULT.with(|r| r.borrow().len())
    }

    #[no_mangle]
    pub extern "C" fn ptxmm_result_ptr() -> *const u8 {
        RESULT.with(|r| r.borrow().as_ptr())
    }

    #[no_mangle]
    pub extern "C" fn ptxmm_result_len() -> usize {
        RESULT.with(|r| r.borrow().len())
    }

    /// The length of the last panic's message, copied into the result buffer (after a trap).
    #[no_mangle]
    pub extern "C" fn ptxmm_panic_message() -> usize {
        let message = PANIC.with(|p| p.borrow().clone());
        RESULT.with(|r| *r.borrow_mut() = message.into_bytes());
        ptxmm_result_len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(request: Value) -> Value {
        serde_json::from_str(&handle(&request.to_string())).expect("answers are JSON")
    }

    #[test]
    fn info_lists_models_readings_and_every_async_test() {
        let a = ask(json!({ "op": "info" }));
        assert_eq!(a["default_model"], "ptx");
        assert!(a["models"].as_array().unwrap().iter().any(|m| m["name"] == "ptx-7.5"));
        assert!(a["readings"].as_array().unwrap().iter().any(|r| r["flag"] == "proxy-fence-anywhere"));
        let on_disk =
            std::fs::read_dir("../tests/async").unwrap().flatten().filter(|e| e.path().extension().is_some_and(|x| x == "litmus")).count();
        let examples = a["examples"].as_array().unwrap();
        assert_eq!(examples.iter().filter(|e| e["group"] == "async").count(), on_disk);
        assert!(examples.iter().any(|e| e["path"] == "examples/MP.litmus"));
    }

    #[test]
    fn run_mp_gives_the_cli_text() {
        let text = std::fs::read_to_string("../examples/MP.litmus").unwrap();
        let a = ask(json!({ "op": "run", "text": text, "file": "examples/MP.litmus" }));
        assert_eq!(a["ok"], true, "{a}");
        assert_eq!(a["verdict"], "Forbidden");
        assert!(a["text"].as_str().unwrap().starts_with("Verdict: Forbidden\nTest MP Allowed\n"));
        assert!(a["text"].as_str().unwrap().ends_with("Liveness: ok\n"));
        assert_eq!(a["json"]["verdict"], "Forbidden");
    }

    /// The sections are the text cut at its boundaries: herd7's block after the findings for an
    /// Undefined test, before them otherwise; liveness last.
    #[test]
    fn sections_are_the_text_in_pieces() {
        for (path, findings_first) in [("../examples/MP.litmus", false), ("../tests/async/U03-bar-sync-no-proxy-fence.litmus", true)] {
            let text = std::fs::read_to_string(path).unwrap();
            let a = ask(json!({ "op": "run", "text": text }));
            let p = |k: &str| a["sections"][k].as_str().unwrap().to_string();
            let whole = if findings_first {
                [p("headline"), p("findings"), p("herd"), p("notes"), p("liveness")].concat()
            } else {
                [p("headline"), p("herd"), p("findings"), p("notes"), p("liveness")].concat()
            };
            assert_eq!(whole, a["text"].as_str().unwrap(), "{path}");
            assert!(p("herd").starts_with("Test "), "{path}");
            assert!(!findings_first || !p("findings").is_empty(), "{path}");
        }
    }

    #[test]
    fn a_malformed_test_gives_its_line_and_column() {
        let a = ask(json!({ "op": "run", "text": "PTX T\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.bogus x, 1 ;\nexists (x == 1)\n" }));
        assert_eq!(a["ok"], false);
        assert_eq!(a["error"]["line"], 4, "{a}");
        assert!(a["error"]["rendered"].as_str().unwrap().contains("playground.litmus:4:"), "{a}");
        assert!(a["end_line"].as_u64().is_some());
    }

    #[test]
    fn explain_draws_the_svg_and_bad_options_are_errors() {
        let text = std::fs::read_to_string("../examples/MP.litmus").unwrap();
        let a = ask(json!({ "op": "explain", "text": text }));
        assert_eq!(a["ok"], true, "{a}");
        assert!(a["svg"].as_str().unwrap().contains("<svg"));
        assert!(a["svg"].as_str().unwrap().contains("edge highlighted"));
        // The drawing folds the initial writes; `svg_all` (the page's *All events*) draws them.
        assert!(a["svg"].as_str().unwrap().contains("initial writes folded"));
        assert!(a["svg_all"].as_str().unwrap().contains("init x"), "{}", a["svg_all"]);
        let bad = ask(json!({ "op": "run", "text": text, "model": "nope" }));
        assert!(bad["error"]["message"].as_str().unwrap().contains("unknown model `nope`"), "{bad}");
        let bad = ask(json!({ "op": "run", "text": text, "readings": ["nope"] }));
        assert!(bad["error"]["message"].as_str().unwrap().contains("unknown reading"), "{bad}");
        assert_eq!(ask(json!({ "op": "frobnicate" }))["ok"], false);
        assert_eq!(serde_json::from_str::<Value>(&handle("{not json")).unwrap()["ok"], false);
    }

    /// The page decides under the configuration `ptxmm run` builds from the same flags: the
    /// readings (checked against the model) and the limits by their flag names.
    #[test]
    fn readings_and_limits_are_those_of_ptxmm_run() {
        let s7 = std::fs::read_to_string("../tests/async/S7-wait-read-then-overwrite.litmus").unwrap();
        assert_eq!(ask(json!({ "op": "run", "text": s7 }))["verdict"], "Forbidden");
        let alt = ask(json!({ "op": "run", "text": s7, "readings": ["read-wait-without-fence"] }));
        assert_eq!(alt["verdict"], "Undefined", "{alt}");
        let x = ask(json!({ "op": "explain", "text": s7, "readings": ["read-wait-without-fence"] }));
        assert!(x["text"].as_str().unwrap().contains("is Undefined"), "{x}");
        let bad = ask(json!({ "op": "run", "text": s7, "model": "ptx-7.5", "readings": ["commit-order"] }));
        assert!(bad["error"]["message"].as_str().unwrap().contains("not expressed by the model `ptx-7.5`"), "{bad}");
        let limited = ask(json!({ "op": "run", "text": s7, "max_candidates": 1 }));
        assert_eq!(limited["verdict"], "Unknown", "{limited}");
        assert!(limited["stderr"].to_string().contains("--max-candidates"), "{limited}");
        let small = ask(json!({ "op": "run", "text": s7, "max_file_size": 10 }));
        assert!(small["error"]["message"].as_str().unwrap().contains("--max-file-size"), "{small}");
        let typo = ask(json!({ "op": "run", "text": s7, "unroll": "two" }));
        assert!(typo["error"]["message"].as_str().unwrap().contains("bad request"), "{typo}");
    }
}
