//! `ptxmm kernel --json` and `--sarif`: the check's facts for tools. The JSON document is the
//! record of `run --json` (`decide::report::json`, one schema version) with the kernel's launch,
//! what was abstracted or left unknown, and the CUDA line of every PTX line it names
//! (`docs/ptxmm-kernel.schema.json`); the SARIF log (2.1.0) has one result per finding, located at
//! its CUDA line (docs/ci.md).

use crate::decide::report::{self, JsonError};
use crate::kernel::check::Checked;
use crate::kernel::Kernel;
use serde_json::{json, Value};

/// What `ptxmm kernel` prints on stdout.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Text,
    Json,
    Sarif,
}

/// One SARIF result before it is written: a finding, a hang, a failing assertion, or accesses
/// not checked.
struct Issue {
    rule: String,
    kind: &'static str,
    level: &'static str,
    message: String,
    hint: Option<String>,
    /// Thread, PTX line, instruction, part.
    sites: Vec<(String, usize, String, Option<String>)>,
    readings: Vec<crate::config::readings::ReadingDependence>,
}

fn issues(c: &Checked) -> Vec<Issue> {
    let k = &c.kernel;
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut finding = |out: &mut Vec<Issue>, f: &crate::decide::findings::Finding, kind: &'static str, level: &'static str| {
        if !seen.insert((f.rule.clone(), f.sites.clone())) {
            return;
        }
        out.push(Issue {
            rule: f.rule.clone(),
            kind,
            level,
            message: k.with_sources(&f.message),
            hint: f.hint.as_deref().map(|h| k.with_sources(h)),
            sites: f.sites.iter().map(|s| (s.thread.clone(), s.line, s.instruction.clone(), s.part.clone())).collect(),
            readings: f.readings.clone(),
        });
    };
    if let Some(o) = &c.outcome {
        o.undefined.iter().for_each(|f| finding(&mut out, f, "undefined", "error"));
        o.races.iter().for_each(|f| finding(&mut out, f, "race", "error"));
        // A user model's other flags name what it was asked to flag: no bug in themselves.
        o.flag_findings.iter().for_each(|f| finding(&mut out, f, "flag", "warning"));
    }
    if let Some(l) = &c.live {
        l.undefined.iter().for_each(|f| finding(&mut out, f, "undefined", "error"));
        if !l.hang.is_empty() {
            let stuck: Vec<String> =
                l.hang.iter().map(|t| format!("{} stuck at line {} `{}`: {}", t.thread, t.line, t.instruction, t.reason)).collect();
            out.push(Issue {
                rule: "hang".to_string(),
                kind: "hang",
                level: "error",
                message: k.with_sources(&format!("some fair execution hangs: {}", stuck.join("; "))),
                hint: None,
                sites: l.hang.iter().map(|t| (t.thread.clone(), t.line, t.instruction.clone(), None)).collect(),
                readings: Vec::new(),
            });
        }
    }
    if let (Some(a), Some(o)) = (&k.assertion, &c.outcome) {
        if o.verdict() == crate::decide::Verdict::Allowed {
            let states: Vec<String> = o.states.iter().filter(|(_, &fails)| fails).map(|(s, _)| report::state_line(o, s)).take(8).collect();
            out.push(Issue {
                rule: "assertion-fails".to_string(),
                kind: "assertion",
                level: "error",
                message: format!("the assertion `{a}` fails in some execution; final states where it fails: {}", states.join(" | ")),
                hint: None,
                sites: Vec::new(),
                readings: Vec::new(),
            });
        }
    }
    if let Some(o) = &c.outcome {
        // One note per instruction: its global accesses were not checked, which is no finding.
        let mut by_line: std::collections::BTreeMap<usize, &crate::decide::verdict::UncheckedAccess> = Default::default();
        for u in &o.unchecked {
            by_line.entry(u.line).or_insert(u);
        }
        for (line, u) in by_line {
            out.push(Issue {
                rule: "not-checked".to_string(),
                kind: "not-checked",
                level: "note",
                message: format!(
                    "not checked: the {} at line {line} (`{}`) has an address that depends on {}, so its races and the bytes it touches are not checked",
                    u.access, u.instruction, u.because
                ),
                hint: u.fix.as_ref().map(|f| format!("give {f}")),
                sites: vec![(u.thread.clone(), line, u.instruction.clone(), None)],
                readings: Vec::new(),
            });
        }
    }
    out
}

/// A rule's short description and help, in the words of docs/findings.md.
fn rule_text(rule: &str, kind: &str) -> (String, String) {
    let known: &[(&str, &str, &str)] = &[
        ("U1", "An access to an asynchronous operation's destination before the operation completes", "Wait for the copy's completion before the access: announce its bytes (mbarrier.expect_tx) and wait for the phase (mbarrier.try_wait.parity in a loop) on the mbarrier it completes on; cp.async.bulk.wait_group N (not .read) for a bulk group; cp.async.wait_all or cp.async.wait_group for cp.async; wgmma.commit_group and wgmma.wait_group for a wgmma."),
        ("U2-tensor", "A tensor map modified while a tensor copy that reads it is in flight", "Wait for the copy's phase (an mbarrier.try_wait.parity loop) before modifying the tensor map."),
        ("U2", "A write to an asynchronous copy's source before the copy has read it", "cp.async.bulk.wait_group.read 0 before the write (.read is enough), then synchronize with the writing thread."),
        ("U3", "Two copies of one cp.async group write one location", "Give them distinct destinations, or cp.async.commit_group and cp.async.wait_group 0 between them."),
        ("M1", "An mbarrier used before its initialization is ordered before the use", "bar.sync 0 after mbarrier.init and before the use in one CTA; across CTAs fence.mbarrier_init.release.cluster then barrier.cluster.arrive/wait."),
        ("M2", "An ordinary write to a valid mbarrier object", "mbarrier.inval after the mbarrier's last use, before the store."),
        ("NC", "An ld.global.nc of a location the kernel writes", "Load it with ld.global (.relaxed or .acquire with a scope where it is synchronized on), or do not write it during the kernel."),
        ("T1", "A tensor map written on the device and used without the tensormap proxy's fences", "fence.proxy.tensormap::generic (release at the writer, acquire at the user) between writing the map and the copy that uses it."),
        ("data-race", "A data race: two conflicting accesses not ordered by synchronization", "Make both accesses strong with the narrowest scope that contains both threads (.relaxed.gpu, ...), or order them (bar.sync within a CTA, else release/acquire of that scope)."),
        ("mixed-size-race", "A race between accesses of different sizes or proxies (undefined behaviour)", "Order them (bar.sync, release/acquire); between a generic and an async-proxy access, fence.proxy.async between them after the synchronization."),
        ("undefined-operation", "An operation whose result the PTX ISA leaves undefined (mbarrier misuse, a bad size, alignment or count, a divergent aligned barrier, trap)", "The finding's hint names the instruction and the operand to change (docs/findings.md, undefined-operation)."),
        ("hang", "Some fair execution hangs: a thread waits forever", "The stuck threads name where they wait: an arrival count or tx-count that is never met, a parity that never completes, a barrier part of the threads never reach."),
        ("assertion-fails", "The --assert condition fails at the end of some execution", "The final states where it fails are listed; look for the missing synchronization before the writes it reads."),
        ("not-checked", "Global accesses at unknown addresses, not checked", "Give the parameter bytes the address depends on (--param NAME+OFF=VALUE) so that the accesses are checked."),
    ];
    match known.iter().find(|(id, _, _)| rule == *id || rule.starts_with(&format!("{id}-"))) {
        Some((_, short, help)) => (short.to_string(), help.to_string()),
        None => (
            format!("{} `{rule}` of the model", if kind == "flag" { "A flag" } else { "A check" }),
            "See docs/findings.md for what the check means and how its hint is computed.".to_string(),
        ),
    }
}

/// A file's URI in a SARIF log: an absolute path as a `file://` URI, a relative one as it is
/// (relative to where ptxmm ran), with the characters a URI cannot hold escaped.
fn uri(path: &str) -> String {
    let mut s = String::new();
    for c in path.replace('\\', "/").chars() {
        match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '-' | '.' | '_' | '~' | '/' | ':' | '+' | '@' => s.push(c),
            c => {
                let mut b = [0; 4];
                for byte in c.encode_utf8(&mut b).bytes() {
                    s.push_str(&format!("%{byte:02X}"));
                }
            }
        }
    }
    if s.starts_with('/') {
        format!("file://{s}")
    } else {
        s
    }
}

/// A `.file` path of the PTX: relative paths are relative to the PTX file's folder (where nvcc
/// ran, as `tests/kernels/build.sh` writes them), so the URI is made relative to where ptxmm runs.
fn source_uri(k: &Kernel, path: &str) -> String {
    let p = std::path::Path::new(path);
    if p.is_absolute() {
        return uri(path);
    }
    let dir = std::path::Path::new(&k.file).parent().unwrap_or(std::path::Path::new(""));
    uri(&dir.join(p).to_string_lossy())
}

fn physical(uri: String, line: Option<u64>) -> Value {
    let mut p = json!({ "artifactLocation": { "uri": uri } });
    if let Some(l) = line.filter(|&l| l > 0) {
        p["region"] = json!({ "startLine": l });
    }
    p
}

/// The `kernel --sarif` log.
pub(crate) fn sarif(c: &Checked, readings_given: &[String]) -> Value {
    let k = &c.kernel;
    let issues = issues(c);
    let mut rules: Vec<(String, &'static str, &'static str)> = Vec::new();
    for i in &issues {
        if !rules.iter().any(|(r, _, _)| *r == i.rule) {
            rules.push((i.rule.clone(), i.kind, i.level));
        }
    }
    let results: Vec<Value> = issues
        .iter()
        .map(|i| {
            let first = i.sites.first();
            let location = match first.and_then(|s| k.source_path_of(s.1)) {
                Some((path, line)) => physical(source_uri(k, path), Some(line)),
                None => physical(uri(&k.file), first.map(|s| s.1 as u64)),
            };
            let mut related: Vec<Value> = i
                .sites
                .iter()
                .map(|(thread, line, instruction, part)| {
                    let part = part.as_deref().map(|p| format!(" ({p})")).unwrap_or_default();
                    json!({ "physicalLocation": physical(uri(&k.file), Some(*line as u64)),
                            "message": { "text": format!("{thread} at PTX line {line}: `{instruction}`{part}") } })
                })
                .collect();
            for (thread, line, instruction, _) in i.sites.iter().skip(1) {
                if let Some((path, l)) = k.source_path_of(*line) {
                    related.push(json!({ "physicalLocation": physical(source_uri(k, path), Some(l)),
                                         "message": { "text": format!("{thread}: `{instruction}` (PTX line {line})") } }));
                }
            }
            for (n, r) in related.iter_mut().enumerate() {
                r["id"] = n.into();
            }
            let text = match &i.hint {
                Some(h) => format!("{}. Hint: {h}", i.message),
                None => i.message.clone(),
            };
            let mut properties = json!({ "kind": i.kind, "hint": i.hint, "ptxLine": first.map(|s| s.1) });
            if !i.readings.is_empty() {
                properties["readings"] = serde_json::to_value(&i.readings).expect("readings serialise");
                properties["onlyUnderAReading"] = true.into();
            }
            if !readings_given.is_empty() {
                properties["readingFlags"] = readings_given.into();
            }
            let mut r = json!({
                "ruleId": i.rule,
                "ruleIndex": rules.iter().position(|(id, _, _)| *id == i.rule).expect("a rule per result"),
                "level": i.level,
                "message": { "text": text },
                "locations": [{ "physicalLocation": location }],
                "properties": properties,
            });
            if !related.is_empty() {
                r["relatedLocations"] = related.into();
            }
            r
        })
        .collect();
    let rules: Vec<Value> = rules
        .iter()
        .map(|(id, kind, level)| {
            let (short, help) = rule_text(id, kind);
            json!({
                "id": id,
                "shortDescription": { "text": short },
                "help": { "text": help },
                "helpUri": "https://github.com/ptxmm/ptxmm/blob/main/docs/findings.md",
                "defaultConfiguration": { "level": level },
                "properties": { "kind": kind },
            })
        })
        .collect();
    let mut notifications: Vec<Value> = c
        .summary
        .open
        .iter()
        .map(|o| json!({ "level": "warning", "message": { "text": format!("not decided: {o}; no result is claimed past it") } }))
        .collect();
    let unchecked: std::collections::BTreeSet<usize> = c.outcome.iter().flat_map(|o| o.unchecked.iter().map(|u| u.line)).collect();
    if !unchecked.is_empty() {
        notifications.push(json!({ "level": "warning", "message": { "text": format!(
            "{} instruction(s) with unknown global addresses not checked (the `not-checked` results): no finding there is no proof of none",
            unchecked.len()
        ) } }));
    }
    for caution in [&k.warp_choice, &k.lane_choice].into_iter().flatten().filter(|w| w.contains("caution")) {
        notifications.push(json!({ "level": "warning", "message": { "text": caution } }));
    }
    if !k.abstracted.is_empty() {
        let lines: Vec<String> = k.abstracted.iter().map(|a| a.line.to_string()).collect();
        notifications.push(json!({ "level": "note", "message": { "text": format!(
            "{} instruction(s) abstracted (their results are unknown values): PTX lines {}", k.abstracted.len(), lines.join(", ")
        ) } }));
    }
    let invocation = json!({
        // A check that ran and found something succeeded; one that stopped, or left a part
        // undecided, did not establish its answer.
        "executionSuccessful": c.status != 1 && c.summary.open.is_empty(),
        "exitCode": c.status,
        "toolExecutionNotifications": notifications,
        "properties": { "summary": c.summary.text.lines().next().unwrap_or("").trim_start_matches("Summary: ") },
    });
    log(
        vec![invocation],
        results,
        rules,
        json!({ "entry": k.entry, "launch": k.launch.describe(), "parameters": k.bindings, "model": &c.model, "readingFlags": readings_given }),
    )
}

fn log(invocations: Vec<Value>, results: Vec<Value>, rules: Vec<Value>, properties: Value) -> Value {
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "ptxmm",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/ptxmm/ptxmm",
                "rules": rules,
            } },
            "invocations": invocations,
            "results": results,
            "properties": properties,
        }],
    })
}

/// A check that ended in an error: the JSON error record, or a SARIF log with no result whose
/// invocation failed with the error.
pub(crate) fn error_document(format: Format, file: &str, model: &str, code: u8, error: &JsonError) -> Option<Value> {
    match format {
        Format::Text => None,
        Format::Json => Some(report::json_error(file, None, Some(model), error.clone())),
        Format::Sarif => {
            let mut n = json!({ "level": "error", "message": { "text": error.message } });
            if let Some(line) = error.line {
                let mut region = json!({ "startLine": line });
                if let Some(col) = error.column {
                    region["startColumn"] = col.into();
                }
                n["locations"] = json!([{ "physicalLocation": { "artifactLocation": { "uri": uri(file) }, "region": region } }]);
            }
            let invocation = json!({ "executionSuccessful": false, "exitCode": code, "toolExecutionNotifications": [n] });
            Some(log(vec![invocation], Vec::new(), Vec::new(), json!({ "model": model })))
        }
    }
}
