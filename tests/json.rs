//! The JSON records of `run --json` and `explain --json` (docs/json.md): snapshots of one record
//! of each kind, determinism, and conformance of every record to the JSON Schemas in docs/.
//! Review snapshot changes with `cargo insta review` when a record intentionally changes.

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

fn ptxmm() -> Command {
    Command::cargo_bin("ptxmm").unwrap()
}

/// The records printed by `ptxmm ARGS`, one per line, and the exit code.
fn records(args: &[&str]) -> (Vec<Value>, Option<i32>) {
    let out = ptxmm().args(args).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let records = stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect();
    (records, out.status.code())
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap()
}

/// The one record of `ptxmm run --json TEST`.
fn run_one(test: &str) -> Value {
    run_one_with(&["run", "--json", test])
}

/// A record of each kind: Allowed, Forbidden, Undefined, a liveness hang.
#[test]
fn snapshots_of_each_verdict() {
    for (name, test) in [
        ("run_allowed", "tests/litmus/MP-relaxed.litmus"),
        ("run_forbidden", "examples/MP.litmus"),
        ("run_undefined", "tests/async/U03-bar-sync-no-proxy-fence.litmus"),
        ("run_liveness_hang", "tests/liveness/barrier-count-too-high.litmus"),
    ] {
        insta::assert_snapshot!(name, pretty(&run_one(test)));
    }
}

/// A malformed test gets its record (with the diagnostic) and the exit code 1, and the tests
/// after it still get theirs.
#[test]
fn snapshot_malformed() {
    let (r, code) = records(&["run", "--json", "tests/bad/missing-semicolon.litmus", "examples/MP.litmus"]);
    assert_eq!(code, Some(1));
    assert_eq!(r.len(), 2);
    assert_eq!(r[1]["test"], "MP");
    insta::assert_snapshot!("run_malformed", pretty(&r[0]));
}

#[test]
fn output_is_the_same_run_to_run_unless_timed() {
    let args = ["run", "--json", "examples/MP.litmus", "tests/async/S1b-no-wait.litmus", "tests/liveness/spin-never-written.litmus"];
    let a = ptxmm().args(args).output().unwrap().stdout;
    let b = ptxmm().args(args).output().unwrap().stdout;
    assert_eq!(a, b);
    assert!(!String::from_utf8_lossy(&a).contains("time_seconds"));
    let v = run_one_with(&["run", "--json", "--timing", "examples/MP.litmus"]);
    assert!(v["time_seconds"].as_f64().is_some_and(|t| t >= 0.0), "{v}");
}

fn run_one_with(args: &[&str]) -> Value {
    let (mut r, _) = records(args);
    assert_eq!(r.len(), 1, "one record per test");
    r.remove(0)
}

#[test]
fn readings_are_structured() {
    let v = run_one_with(&["run", "--json", "--reading", "commit-order", "tests/async/S1-wait-group.litmus"]);
    let readings = v["readings"].as_array().unwrap();
    assert_eq!(readings.len(), ptxmm::config::readings::AMBIGUITIES.len());
    let alt: Vec<&Value> = readings.iter().filter(|r| r["value"] == "alternative").collect();
    assert_eq!(alt.len(), 1, "{v}");
    assert_eq!(alt[0]["name"], "commit-order");
    assert_eq!(alt[0]["id"], "AMBIG-18");
    assert!(alt[0]["description"].as_str().unwrap().contains("--reading commit-order"));
}

// ---- schema conformance ----------------------------------------------------------------------

/// A validator for the part of JSON Schema (draft 2020-12) that docs/*.schema.json use: `type`,
/// `const`, `enum`, `properties`, `required`, `additionalProperties`, `items`, `prefixItems`,
/// `minItems`, `minimum`, `oneOf`, `anyOf` and local `$ref`s. Any other keyword fails the test,
/// so the schema cannot silently rely on one this does not check.
fn validate(root: &Value, schema: &Value, v: &Value, at: &str, errors: &mut Vec<String>) {
    if let Value::Bool(b) = schema {
        if !b {
            errors.push(format!("{at}: no value allowed here"));
        }
        return;
    }
    let s = schema.as_object().unwrap_or_else(|| panic!("{at}: a schema is an object or a boolean"));
    for key in s.keys() {
        const KNOWN: &[&str] = &[
            "$schema",
            "$id",
            "$defs",
            "title",
            "description",
            "type",
            "const",
            "enum",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "prefixItems",
            "minItems",
            "minimum",
            "oneOf",
            "anyOf",
            "$ref",
        ];
        assert!(KNOWN.contains(&key.as_str()), "{at}: the schema uses `{key}`, which this validator does not check");
    }
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.strip_prefix("#/$defs/").unwrap_or_else(|| panic!("{at}: only local $defs refs: {r}"));
        let target = root["$defs"].get(name).unwrap_or_else(|| panic!("{at}: no $defs/{name}"));
        validate(root, target, v, at, errors);
    }
    if let Some(t) = s.get("type") {
        let types: Vec<&str> = match t {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().map(|t| t.as_str().unwrap()).collect(),
            _ => panic!("{at}: bad type"),
        };
        let ok = types.iter().any(|t| match *t {
            "null" => v.is_null(),
            "boolean" => v.is_boolean(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            "string" => v.is_string(),
            "array" => v.is_array(),
            "object" => v.is_object(),
            other => panic!("{at}: unknown type {other}"),
        });
        if !ok {
            errors.push(format!("{at}: expected {types:?}, found {v}"));
            return;
        }
    }
    if let Some(c) = s.get("const") {
        if c != v {
            errors.push(format!("{at}: expected {c}, found {v}"));
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            errors.push(format!("{at}: {v} is not one of {e:?}"));
        }
    }
    if let (Some(m), Some(n)) = (s.get("minimum").and_then(Value::as_f64), v.as_f64()) {
        if n < m {
            errors.push(format!("{at}: {n} < {m}"));
        }
    }
    if let Some(obj) = v.as_object() {
        let props = s.get("properties").and_then(Value::as_object);
        for r in s.get("required").and_then(Value::as_array).into_iter().flatten() {
            let r = r.as_str().unwrap();
            if !obj.contains_key(r) {
                errors.push(format!("{at}: missing required field `{r}`"));
            }
        }
        for (k, val) in obj {
            match props.and_then(|p| p.get(k)) {
                Some(p) => validate(root, p, val, &format!("{at}.{k}"), errors),
                None => {
                    if let Some(extra) = s.get("additionalProperties") {
                        validate(root, extra, val, &format!("{at}.{k}"), errors);
                    }
                }
            }
        }
    }
    if let Some(arr) = v.as_array() {
        let prefix = s.get("prefixItems").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        for (i, item) in arr.iter().enumerate() {
            let sub = if i < prefix.len() { Some(&prefix[i]) } else { s.get("items") };
            if let Some(sub) = sub {
                validate(root, sub, item, &format!("{at}[{i}]"), errors);
            }
        }
        if let Some(min) = s.get("minItems").and_then(Value::as_u64) {
            if (arr.len() as u64) < min {
                errors.push(format!("{at}: fewer than {min} items"));
            }
        }
    }
    if let Some(alts) = s.get("oneOf").and_then(Value::as_array) {
        let matching = alts
            .iter()
            .filter(|alt| {
                let mut e = Vec::new();
                validate(root, alt, v, at, &mut e);
                e.is_empty()
            })
            .count();
        if matching != 1 {
            let mut why = Vec::new();
            for alt in alts {
                validate(root, alt, v, at, &mut why);
            }
            errors.push(format!("{at}: matches {matching} of the oneOf alternatives (exactly one expected): {}", why.join("; ")));
        }
    }
    if let Some(alts) = s.get("anyOf").and_then(Value::as_array) {
        let any = alts.iter().any(|alt| {
            let mut e = Vec::new();
            validate(root, alt, v, at, &mut e);
            e.is_empty()
        });
        if !any {
            errors.push(format!("{at}: matches none of the anyOf alternatives"));
        }
    }
}

fn schema(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs").join(name);
    let s: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
    s
}

fn assert_conforms(schema: &Value, records: &[Value]) {
    let mut errors = Vec::new();
    for r in records {
        validate(schema, schema, r, &format!("<{}>", r["file"]), &mut errors);
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// Every record `run --json` prints for the own tests (results, Undefined, hangs, malformed
/// tests, liveness alone, a limit) conforms to docs/ptxmm-run.schema.json, and a record missing
/// a required field does not.
#[test]
fn run_records_conform_to_the_schema() {
    let schema = schema("ptxmm-run.schema.json");
    let (all, _) = records(&["run", "--json", "examples", "tests/async", "tests/liveness", "tests/bad", "tests/litmus"]);
    assert!(all.len() > 150, "{}", all.len());
    for kind in ["verdict", "error"] {
        assert!(all.iter().any(|r| r.get(kind).is_some()), "some record has `{kind}`");
    }
    assert!(all.iter().any(|r| r["liveness"]["status"] == "may_hang"));
    assert_conforms(&schema, &all);
    let (only, _) = records(&["run", "--json", "--liveness", "only", "tests/liveness"]);
    assert_conforms(&schema, &only);
    let timed = run_one_with(&["run", "--json", "--timing", "examples/MP.litmus"]);
    let limited = run_one_with(&["run", "--json", "--max-candidates", "10", "tests/async/pipeline-ring-2stage-2consumer-2laps.litmus"]);
    assert_conforms(&schema, &[timed, limited]);

    let mut broken = all.iter().find(|r| r.get("verdict").is_some()).unwrap().clone();
    broken.as_object_mut().unwrap().remove("readings");
    let mut errors = Vec::new();
    validate(&schema, &schema, &broken, "broken", &mut errors);
    assert!(!errors.is_empty(), "a record without `readings` must not conform");
}

#[test]
fn explain_records_conform_to_the_schema() {
    let schema = schema("ptxmm-explain.schema.json");
    let (all, code) = records(&[
        "explain",
        "--json",
        "examples/MP.litmus",
        "tests/litmus/MP-relaxed.litmus",
        "tests/async/U03-bar-sync-no-proxy-fence.litmus",
        "tests/bad/missing-semicolon.litmus",
        "tests/litmus/SB-fence-sc.litmus",
    ]);
    assert_eq!(code, Some(1), "a malformed test makes the exit code 1");
    assert_eq!(all.len(), 5);
    assert!(all.iter().all(|r| r["schema_version"] == 1));
    assert!(all[3]["test"].is_null() && all[3]["error"]["line"] == 4);
    assert_conforms(&schema, &all);
}

/// `run --json` prints the states one at a time as it writes the record (issue 24: the record
/// held every state as a JSON value, 5.7 times the memory of the search): the line is byte for
/// byte the whole record the library builds, for a test with float values and one with many
/// states.
#[test]
fn streamed_records_are_the_whole_record() {
    let config = ptxmm::Config::default_model();
    for test in ["tests/typed/float-decimal.litmus", "examples/MP.litmus", "tests/async/S6a-tma-store-no-proxy-fence.litmus"] {
        let file = ptxmm::diag::SourceFile::new(test.to_string(), std::fs::read_to_string(test).unwrap());
        let ast = ptxmm::litmus::parse(&file).unwrap();
        let program = ptxmm::program::lower(&ast, &file).unwrap();
        let decider = ptxmm::decide::Decider::new(&config);
        let outcome = decider.verdict(&program).unwrap();
        let mut whole = ptxmm::decide::report::json(&outcome, test, "ptx", Default::default());
        whole["liveness"] = serde_json::to_value(decider.liveness(&program).unwrap()).unwrap();
        let out = ptxmm().args(["run", "--json", test]).output().unwrap();
        let printed = String::from_utf8(out.stdout).unwrap();
        assert_eq!(printed, format!("{whole}\n"), "{test}");
        assert!(printed.contains("\"states\":[{"), "{test}: {printed}");
    }
}

/// A kernel's test whose global accesses depend on an unknown parameter byte has `unchecked`,
/// and its record conforms to the schema.
#[test]
fn unchecked_accesses_conform_to_the_schema() {
    let litmus = std::env::temp_dir().join(format!("ptxmm-unchecked-{}.litmus", std::process::id()));
    let kernel = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/cmd/unknown_index.ptx");
    let out =
        ptxmm().args(["kernel", kernel.to_str().unwrap(), "--block", "64", "--emit-litmus", litmus.to_str().unwrap()]).output().unwrap();
    assert!(litmus.exists(), "{}", String::from_utf8_lossy(&out.stderr));
    let record = run_one_with(&["run", "--json", litmus.to_str().unwrap()]);
    let _ = std::fs::remove_file(&litmus);
    let unchecked = record["unchecked"].as_array().expect("`unchecked` is present");
    assert!(
        unchecked.iter().any(|u| u["access"] == "global load" && u["line"] == 28 && u["fix"] == "--param param_2+0=VALUE"),
        "{unchecked:?}"
    );
    assert_conforms(&schema("ptxmm-run.schema.json"), &[record]);
}
