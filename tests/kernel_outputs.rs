//! `ptxmm kernel --json`, `--sarif` and `--launch` (issue 41): the document of a correct and of a
//! buggy kernel (findings at their PTX and CUDA lines, with hints), the SARIF log's results at the
//! CUDA line with the PTX line related, a launch file deciding as the same flags do (and flags
//! overriding it), and located errors in every format with the text mode's exit statuses.
//! tests/schemas/validate.sh checks the same documents against the schemas.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels")
}

fn ptxmm(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmm")).args(args).current_dir(dir()).output().expect("ptxmm runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// `ptxmm ARGS`: its exit status and stdout as one JSON document.
fn document(args: &[&str]) -> (i32, Value) {
    let (code, out, err) = ptxmm(args);
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: not one JSON document ({e}):\n{out}\n{err}"));
    (code, v)
}

fn temp(name: &str, text: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("ptxmm-outputs-{}-{name}", std::process::id()));
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn the_document_is_the_same_run_to_run() {
    // The hash included: a kernel's uninitialised registers are unknowns numbered in register
    // order, not in a hash map's.
    let run = || document(&["kernel", "tma_pipeline-bug.ptx", "--block", "64", "--json"]);
    let first = run();
    assert!(first.1["hash"].as_str().is_some_and(|h| h.len() == 16), "{}", first.1);
    assert_eq!(first, run());
    assert_eq!(first, run());
}

#[test]
fn json_of_a_correct_kernel_has_its_launch_and_no_finding() {
    let (code, v) = document(&["kernel", "tma_store.ptx", "--block", "4", "--lanes", "0-3", "--json"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["schema_version"], 1);
    assert_eq!((v["entry"].as_str(), v["file"].as_str()), (Some("_Z9tma_storePi"), Some("tma_store.ptx")));
    assert_eq!(v["launch"]["block"], serde_json::json!([4, 1, 1]));
    assert_eq!(v["launch"]["lanes"], serde_json::json!([0, 1, 2, 3]));
    assert_eq!(v["launch"]["threads"].as_array().unwrap().len(), 4);
    assert_eq!(v["launch"]["threads"][3]["tid"], 3);
    assert!(v["undefined"].as_array().unwrap().is_empty() && v["races"].as_array().unwrap().is_empty(), "{v:#}");
    assert_eq!((v["found"].as_bool(), v["exit_status"].as_u64(), v["summary"].as_str()), (Some(false), Some(0), Some("no finding")));
    assert_eq!(v["liveness"]["status"], "ok");
    assert_eq!(v["abstracted"], serde_json::json!([]));
    assert!(v["parameters"][0].as_str().unwrap().contains("a fresh global buffer of 64 bytes"), "{v:#}");
}

#[test]
fn json_of_a_buggy_kernel_names_the_ptx_and_cuda_lines_and_the_hint() {
    let (code, v) = document(&["kernel", "tma_store-bug.ptx", "--block", "4", "--lanes", "0-3", "--json"]);
    assert_eq!(code, 3, "{v:#}");
    assert_eq!((v["verdict"].as_str(), v["found"].as_bool(), v["exit_status"].as_u64()), (Some("Undefined"), Some(true), Some(3)));
    let f = v["undefined"].as_array().unwrap().iter().find(|f| f["sites"][0]["line"] == 34).expect("a finding at line 34");
    assert_eq!(f["rule"], "mixed-size-race");
    let site = &f["sites"][0];
    assert_eq!(
        (site["source"].as_str(), site["source_file"].as_str(), site["source_line"].as_u64()),
        (Some("tma_store.cu:12"), Some("tma_store.cu"), Some(12))
    );
    // The bulk copy is inlined from the toolkit's header: the frame named is the kernel's line.
    let copy = &f["sites"][1];
    assert_eq!(
        (copy["line"].as_u64(), copy["source"].as_str(), copy["part"].as_str()),
        (Some(49), Some("tma_store.cu:18"), Some("source read"))
    );
    assert_eq!(copy["inline_chain"], serde_json::json!(["cp_async_bulk.h:170", "tma_store.cu:18"]));
    let hint = f["hint"].as_str().unwrap();
    assert!(hint.starts_with("put a `fence.proxy.async` between `st.shared.u32 [%r5], %r2` (P0.0 line 34, tma_store.cu:12)"), "{hint}");
    assert!(f["message"].as_str().unwrap().contains("(P0.0 line 49, tma_store.cu:18)"), "{f:#}");
    assert_eq!(v["source_lines"]["34"]["source"], "tma_store.cu:12");
    // A hang: its stuck threads at their CUDA lines.
    let (code, v) = document(&["kernel", "tma_pipeline-bug.ptx", "--block", "64", "--json"]);
    assert_eq!(code, 3);
    let stuck = &v["liveness"]["hang"][0];
    assert!(stuck["source"].as_str().is_some_and(|s| s.starts_with("tma_pipeline.cu:")), "{v:#}");
}

#[test]
fn sarif_results_sit_at_the_cuda_line_with_the_ptx_line_related() {
    let (code, v) = document(&["kernel", "tma_store-bug.ptx", "--block", "4", "--lanes", "0-3", "--sarif"]);
    assert_eq!(code, 3);
    assert_eq!(v["version"], "2.1.0");
    let run = &v["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "ptxmm");
    assert_eq!(run["invocations"][0]["executionSuccessful"], true);
    assert_eq!(run["invocations"][0]["exitCode"], 3);
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 4, "one result per finding: {v:#}");
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    for r in results {
        let rule = &rules[r["ruleIndex"].as_u64().unwrap() as usize];
        assert_eq!(rule["id"], r["ruleId"]);
        assert!(rule["help"]["text"].as_str().is_some_and(|h| !h.is_empty()));
        assert_eq!(r["level"], "error");
    }
    let r = results.iter().find(|r| r["properties"]["ptxLine"] == 34).expect("the store's finding");
    assert_eq!(r["ruleId"], "mixed-size-race");
    let at = &r["locations"][0]["physicalLocation"];
    assert_eq!((at["artifactLocation"]["uri"].as_str(), at["region"]["startLine"].as_u64()), (Some("tma_store.cu"), Some(12)));
    let related: Vec<(&str, u64)> = r["relatedLocations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["physicalLocation"]["artifactLocation"]["uri"].as_str().unwrap(),
                l["physicalLocation"]["region"]["startLine"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(related, vec![("tma_store-bug.ptx", 34), ("tma_store-bug.ptx", 49), ("tma_store.cu", 18)]);
    assert!(r["message"]["text"].as_str().unwrap().contains("Hint: put a `fence.proxy.async`"), "{r:#}");
    // A failing assertion and races; a correct kernel has no result.
    let (code, v) = document(&["kernel", "splitk-bug.ptx", "--block", "32", "--grid", "2", "--assert", "param_2 = 3", "--sarif"]);
    assert_eq!(code, 3);
    let ids: Vec<&str> = v["runs"][0]["results"].as_array().unwrap().iter().map(|r| r["ruleId"].as_str().unwrap()).collect();
    assert!(ids.contains(&"data-race") && ids.contains(&"assertion-fails"), "{ids:?}");
    let (code, v) = document(&["kernel", "splitk.ptx", "--block", "32", "--grid", "2", "--assert", "param_2 = 3", "--sarif"]);
    assert_eq!(code, 0);
    assert_eq!(v["runs"][0]["results"], serde_json::json!([]));
}

#[test]
fn sarif_says_which_reading_a_finding_depends_on() {
    let (code, v) = document(&["kernel", "cmd/handoff_no_fence.ptx", "--block", "64", "--sarif"]);
    assert_eq!(code, 3);
    let r = &v["runs"][0]["results"][0];
    assert_eq!(r["properties"]["onlyUnderAReading"], true, "{r:#}");
    assert_eq!(r["properties"]["readings"][0]["id"], "AMBIG-24");
    assert_eq!(r["properties"]["readings"][0]["flag"], "mbarrier-handoff");
}

#[test]
fn a_check_that_does_not_finish_claims_nothing_past_it() {
    let (code, v) = document(&["kernel", "tma_pipeline.ptx", "--block", "1024", "--warps", "all", "--max-candidates", "2", "--sarif"]);
    assert_eq!(code, 1, "{v:#}");
    let inv = &v["runs"][0]["invocations"][0];
    assert_eq!(inv["executionSuccessful"], false, "{inv:#}");
    assert!(inv["toolExecutionNotifications"][0]["message"]["text"].as_str().unwrap().starts_with("not decided: "), "{inv:#}");
}

/// Accesses at unknown global addresses: `note` results at their lines, a warning, and an
/// invocation that did not establish its answer (exit status 1).
#[test]
fn accesses_not_checked_are_notes_not_findings() {
    let (code, v) = document(&["kernel", "cmd/launch2d.ptx", "--block", "32,2", "--grid", "1,2", "--dynamic-smem", "64", "--sarif"]);
    assert_eq!(code, 1, "{v:#}");
    let run = &v["runs"][0];
    let results = run["results"].as_array().unwrap();
    assert!(!results.is_empty() && results.iter().all(|r| r["ruleId"] == "not-checked" && r["level"] == "note"), "{v:#}");
    let lines: Vec<u64> = results.iter().map(|r| r["properties"]["ptxLine"].as_u64().unwrap()).collect();
    assert_eq!(lines, vec![37, 42, 43]);
    assert!(results[0]["properties"]["hint"].as_str().unwrap().contains("--param param_0+0=VALUE"), "{v:#}");
    let inv = &run["invocations"][0];
    assert_eq!((inv["executionSuccessful"].as_bool(), inv["exitCode"].as_u64()), (Some(false), Some(1)));
    assert!(inv["toolExecutionNotifications"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["message"]["text"].as_str().unwrap().starts_with("3 instruction(s) with unknown global addresses not checked")));
}

#[test]
fn a_launch_file_decides_as_the_same_flags() {
    let given = ["--param", "param_0=buffer:64", "--param", "_Z6splitkPiPjS__param_1=buffer:64"];
    let flags = document(
        &[&["kernel", "splitk-bug.ptx", "--block", "32", "--grid", "2", "--assert", "param_2 = 3", "--json"][..], &given].concat(),
    );
    let file = document(&["kernel", "splitk-bug.ptx", "--launch", "../schemas/splitk.launch.json", "--json"]);
    assert_eq!(flags.0, 3);
    assert_eq!(flags, file);
    // Fields by byte offset.
    let base = ["kernel", "cmd/launch2d.ptx", "--json"];
    let flags = document(
        &[
            &base[..],
            &["--block", "32,2", "--grid", "1,2", "--dynamic-smem", "64", "--param", "param_0+0=buffer:64", "--param", "param_0+8=5"],
        ]
        .concat(),
    );
    let file = document(&[&base[..], &["--launch", "../schemas/launch2d.launch.json"]].concat());
    assert_eq!(flags.0, 0, "{:#}", flags.1);
    assert_eq!(flags, file);
}

#[test]
fn flags_override_the_launch_file() {
    let launch = temp("override.json", r#"{"block": 64, "grid": 2, "params": {"param_2": "buffer:128"}, "assert": "param_2 = 3"}"#);
    let (_, v) = document(&[
        "kernel",
        "splitk.ptx",
        "--launch",
        launch.to_str().unwrap(),
        "--block",
        "32",
        "--param",
        "param_2=buffer:64",
        "--json",
    ]);
    assert_eq!(v["launch"]["block"], serde_json::json!([32, 1, 1]), "{v:#}");
    assert_eq!(v["launch"]["grid"], serde_json::json!([2, 1, 1]));
    assert_eq!(v["assertion"]["condition"], "param_2 = 3");
    let bound = v["parameters"][2].as_str().unwrap();
    assert!(bound.contains("64 bytes") && !bound.contains("128"), "{bound}");
    let _ = std::fs::remove_file(launch);
}

#[test]
fn a_bad_launch_file_is_a_located_error_in_every_format() {
    let launch = temp("bad.json", "{\n  \"block\": 32,\n  \"grid\": [2, 0]\n}\n");
    let name = launch.to_str().unwrap();
    let (code, out, err) = ptxmm(&["kernel", "splitk.ptx", "--launch", name]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.starts_with(&format!("{name}:3:16: expected a shape")) && err.contains("found the shape `2,0`"), "{err}");
    let (code, v) = document(&["kernel", "splitk.ptx", "--launch", name, "--json"]);
    assert_eq!(code, 2);
    assert_eq!((v["file"].as_str(), v["error"]["line"].as_u64(), v["error"]["column"].as_u64()), (Some(name), Some(3), Some(16)));
    assert!(v["test"].is_null());
    let (code, v) = document(&["kernel", "splitk.ptx", "--launch", name, "--sarif"]);
    assert_eq!(code, 2);
    let inv = &v["runs"][0]["invocations"][0];
    assert_eq!((inv["executionSuccessful"].as_bool(), inv["exitCode"].as_u64()), (Some(false), Some(2)));
    assert_eq!(inv["toolExecutionNotifications"][0]["locations"][0]["physicalLocation"]["region"]["startLine"], 3);
    let typo = temp("typo.json", r#"{"blok": 32}"#);
    let (code, _, err) = ptxmm(&["kernel", "splitk.ptx", "--launch", typo.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains(":1:7: expected one of `$schema`, `entry`") && err.contains("found the key `blok`"), "{err}");
    let (code, _, err) = ptxmm(&["kernel", "splitk.ptx", "--launch", "no-such-launch.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("no-such-launch.json"), "{err}");
    let _ = std::fs::remove_file(launch);
    let _ = std::fs::remove_file(typo);
}

#[test]
fn errors_are_json_records_with_the_text_modes_exit_status() {
    // A bad option: 2; the module's syntax error: 1, at its line and column.
    let (code, v) = document(&["kernel", "splitk.ptx", "--json"]);
    assert_eq!(code, 2);
    assert!(v["error"]["message"].as_str().unwrap().contains("declares no block size"), "{v:#}");
    let bad = temp("bad.ptx", ".version 8.0\n.target sm_90a\n.entry k( {\n}\n");
    let (code, v) = document(&["kernel", bad.to_str().unwrap(), "--json"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["error"]["line"], 3, "{v:#}");
    let (code, v) = document(&["kernel", bad.to_str().unwrap(), "--sarif"]);
    assert_eq!(code, 1);
    assert_eq!(v["runs"][0]["invocations"][0]["executionSuccessful"], false);
    let _ = std::fs::remove_file(bad);
    // An error of the search (an access past a buffer), located in the PTX.
    let (code, v) = document(&["kernel", "tma_store.ptx", "--block", "64", "--json"]);
    assert_eq!(code, 1);
    assert_eq!((v["error"]["line"].as_u64(), v["error"]["column"].as_u64()), (Some(34), Some(2)), "{v:#}");
}
