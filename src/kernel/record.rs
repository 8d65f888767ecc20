//! `ptxmm kernel --json` (and the Python API's result): the record of `run --json`
//! (`decide::report::json`, one schema version) with the kernel's launch, what was abstracted or
//! left unknown, and the CUDA line of every PTX line it names (`docs/ptxmm-kernel.schema.json`).

use crate::decide::report;
use crate::kernel::check::Checked;
use crate::kernel::Kernel;
use serde_json::{json, Value};

/// The `source*` fields of something at a PTX line: its CUDA location as the report names it,
/// the file and line of that frame, and the whole inline chain.
fn add_source(k: &Kernel, at: &mut Value) {
    let Some(line) = at.get("line").and_then(Value::as_u64) else { return };
    let line = line as usize;
    let path = k.source_path_of(line);
    at["source"] = k.source_of(line).into();
    at["source_file"] = path.map(|(p, _)| p).into();
    at["source_line"] = path.map(|(_, l)| l).into();
    at["inline_chain"] = k.chain_of(line).into();
}

/// A list of findings of the record with their messages and hints naming CUDA lines, as the text
/// report prints them, and each site's CUDA location.
fn annotate_findings(k: &Kernel, list: Option<&mut Value>) {
    for f in list.and_then(Value::as_array_mut).into_iter().flatten() {
        for key in ["message", "hint"] {
            if let Some(text) = f.get(key).and_then(Value::as_str) {
                f[key] = k.with_sources(text).into();
            }
        }
        for site in f.get_mut("sites").and_then(Value::as_array_mut).into_iter().flatten() {
            add_source(k, site);
        }
    }
}

fn launch(k: &Kernel) -> Value {
    let l = &k.launch;
    let set = |f: &dyn Fn(&crate::kernel::launch::LaunchThread) -> u64| {
        let s: std::collections::BTreeSet<u64> = l.threads.iter().map(f).collect();
        s.into_iter().collect::<Vec<_>>()
    };
    json!({
        "block": l.block_dims,
        "grid": l.grid_dims,
        "cluster": l.cluster_dims,
        "dynamic_smem": l.dynamic_smem,
        "block_from": l.block_from,
        "description": l.describe(),
        "threads": l.threads.iter().zip(l.thread_names()).map(|(t, name)| json!({
            "thread": name, "cta": t.cta, "cluster": t.cluster, "tid": t.tid, "warp": t.tid / 32, "lane": t.tid % 32,
        })).collect::<Vec<_>>(),
        "ctas": set(&|t| t.cta),
        "warps": set(&|t| t.tid / 32),
        "lanes": set(&|t| t.tid % 32),
        "warp_choice": k.warp_choice,
        "lane_choice": k.lane_choice,
    })
}

/// The `kernel --json` document.
pub fn json_record(c: &Checked) -> Value {
    let k = &c.kernel;
    let mut v = match &c.outcome {
        Some(o) => report::json(o, &k.file, &c.model, report::JsonOptions::default()),
        None => json!({ "schema_version": report::SCHEMA_VERSION, "test": k.entry, "file": k.file, "model": &c.model }),
    };
    if let Some(l) = &c.live {
        v["liveness"] = serde_json::to_value(l).expect("liveness serialises");
    }
    if let Some(e) = &c.live_error {
        v["liveness_error"] = e.as_str().into();
    }
    for key in ["undefined", "races", "flag_findings"] {
        annotate_findings(k, v.get_mut(key));
    }
    if let Some(l) = v.get_mut("liveness") {
        annotate_findings(k, l.get_mut("undefined"));
        for t in l.get_mut("hang").and_then(Value::as_array_mut).into_iter().flatten() {
            add_source(k, t);
        }
    }
    // Every PTX line the record names, with its CUDA location (the `unchecked` entries keep the
    // fields of `run --json`, so their lines are looked up here).
    let mut lines = std::collections::BTreeSet::new();
    let sites = |v: &Value, key: &str| -> Vec<u64> {
        v.get(key).and_then(Value::as_array).into_iter().flatten().filter_map(|x| x.get("line").and_then(Value::as_u64)).collect()
    };
    for key in ["undefined", "races", "flag_findings"] {
        for f in v.get(key).and_then(Value::as_array).into_iter().flatten() {
            lines.extend(sites(f, "sites"));
        }
    }
    lines.extend(sites(&v, "unchecked"));
    if let Some(l) = v.get("liveness") {
        lines.extend(sites(l, "hang"));
        for f in l.get("undefined").and_then(Value::as_array).into_iter().flatten() {
            lines.extend(sites(f, "sites"));
        }
    }
    lines.extend(k.abstracted.iter().map(|a| a.line as u64));
    let mut source_lines = serde_json::Map::new();
    for line in lines {
        let mut at = json!({ "line": line });
        add_source(k, &mut at);
        at.as_object_mut().expect("an object").remove("line");
        source_lines.insert(line.to_string(), at);
    }
    v["source_lines"] = source_lines.into();
    v["entry"] = k.entry.clone().into();
    v["launch"] = launch(k);
    v["parameters"] = k.bindings.clone().into();
    v["abstracted"] = k
        .abstracted
        .iter()
        .map(|a| {
            let mut x = json!({ "line": a.line, "instruction": a.instruction, "why": a.why });
            add_source(k, &mut x);
            x
        })
        .collect::<Vec<_>>()
        .into();
    v["kernel_condition"] = k.condition.clone().into();
    v["assertion"] = match (&k.assertion, &c.outcome) {
        (Some(a), Some(o)) => json!({ "condition": a, "holds": match o.verdict() {
            crate::decide::Verdict::Forbidden => Value::Bool(true),
            crate::decide::Verdict::Allowed => Value::Bool(false),
            _ => Value::Null,
        }}),
        (Some(a), None) => json!({ "condition": a, "holds": null }),
        (None, _) => Value::Null,
    };
    v["summary"] = c.summary.text.lines().next().unwrap_or("").trim_start_matches("Summary: ").into();
    v["found"] = c.summary.found.into();
    v["not_decided"] = c.summary.open.clone().into();
    v["exit_status"] = c.status.into();
    v
}
