//! One naming of registers and locations, and values shown as their type says, in every report:
//! `run` (herd7's block and ptxmm's lines), `run --json`, `explain` and `explain --json` name a
//! register `1:r1` and the word `a+12` `a[3]` (herd7's state-list forms), quote instructions as
//! written, show `.f32` values as floats next to their bits (never inside herd7's block), list
//! every word a copy covers, and give an Inconclusive reason once.

use assert_cmd::Command;
use serde_json::Value;
use std::collections::BTreeSet;

/// A `%`-register, two words of an array and `.f32` accesses.
const NAMES: &str = r#"PTX names
"One naming in every report: a %-register, words of an array, .f32 values."
{ a[16]; }
 P0@cta 0,gpu 0                         | P1@cta 0,gpu 0                 ;
 st.relaxed.gpu.u32 [a+12], 1           | ld.relaxed.gpu.u32 %r1, [a+12] ;
 st.relaxed.gpu.f32 [a+4], 0f3F800000   | ld.relaxed.gpu.f32 %r2, [a+4]  ;
exists (1:%r1 == 1 /\ 1:%r2 == 0f3F800000 /\ a+12 == 1 /\ a+4 == 0f3F800000)
"#;

/// stdout and stderr of `ptxmm ARGS` with `input` on stdin (`-`).
fn ptxmm(args: &[&str], input: &str) -> (String, String) {
    let out = Command::cargo_bin("ptxmm").unwrap().args(args).write_stdin(input).output().unwrap();
    (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn json(args: &[&str], input: &str) -> Value {
    let (out, err) = ptxmm(args, input);
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {out}{err}"))
}

/// The names of herd7's state lines (`1:r1=0; a[3]=1;`) in a `run` report.
fn state_line_names(run: &str) -> BTreeSet<String> {
    let line = run.lines().skip_while(|l| !l.starts_with("States ")).nth(1).unwrap();
    line.split(';').filter_map(|b| b.trim().split_once('=')).map(|(n, _)| n.to_string()).collect()
}

/// The names of explain's final state (`final state 1:r1=1 1:r2=1065353216 (1.0f32) a[3]=1`).
fn explained_state_names(explain: &str) -> BTreeSet<String> {
    let state = explain.split("(final state ").nth(1).unwrap().split("):\n").next().unwrap();
    state.split(' ').filter_map(|b| b.split_once('=')).map(|(n, _)| n.to_string()).collect()
}

#[test]
fn registers_and_array_words_have_one_name_in_every_report() {
    let names: BTreeSet<String> = ["1:r1", "1:r2", "a[1]", "a[3]"].map(String::from).into();
    let (run, _) = ptxmm(&["run", "-"], NAMES);
    assert_eq!(state_line_names(&run), names, "{run}");
    assert!(run.contains("Condition exists (1:r1=1 /\\ 1:r2=1065353216 /\\ a[3]=1 /\\ a[1]=1065353216)\n"), "{run}");

    let record = json(&["run", "--json", "-"], NAMES);
    for state in record["states"].as_array().unwrap() {
        assert_eq!(state["values"].as_object().unwrap().keys().cloned().collect::<BTreeSet<_>>(), names, "{record}");
    }
    assert_eq!(record["condition"], "exists (1:r1=1 /\\ 1:r2=1065353216 /\\ a[3]=1 /\\ a[1]=1065353216)");

    let (explain, _) = ptxmm(&["explain", "-"], NAMES);
    assert_eq!(explained_state_names(&explain), names, "{explain}");
    assert!(explain.starts_with("Test names: the outcome 1:r1=1 /\\ 1:r2=1065353216 /\\ a[3]=1 /\\ a[1]=1065353216 is allowed.\n"));
    // Events name the word as the state lines do; the instruction stays as written.
    assert!(explain.contains("c: R a[3]=1 (P1 line 5)  `ld.relaxed.gpu.u32 %r1, [a+12]`\n"), "{explain}");
    assert!(explain.contains("co: init a[1] -> b, init a[3] -> a\n"), "{explain}");
    let outside_instructions: String = explain.split('`').step_by(2).collect();
    assert!(!outside_instructions.contains('%') && !outside_instructions.contains("a+"), "{explain}");

    let x = json(&["explain", "--json", "-"], NAMES);
    assert_eq!(x["condition"], record["condition"]);
    let actions: Vec<&str> = x["events"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert!(actions.contains(&"W a[3]=1") && actions.contains(&"R a[3]=1"), "{actions:?}");
    assert!(actions.iter().all(|a| !a.contains('+') && !a.contains('%')), "{actions:?}");
    let inits: Vec<&str> = x["events"].as_array().unwrap().iter().filter_map(|e| e["name"].as_str()?.strip_prefix("init ")).collect();
    assert!(inits.contains(&"a[3]"), "{inits:?}");
    assert_eq!(x["graph"]["title"], "names: an execution reaching 1:r1=1 /\\ 1:r2=1065353216 /\\ a[3]=1 /\\ a[1]=1065353216");
}

#[test]
fn floats_are_shown_next_to_their_bits_outside_the_herd_block() {
    let (run, _) = ptxmm(&["run", "-"], NAMES);
    // herd7's block keeps the bits (tools compare its state lines); the floats come after it.
    assert!(run.contains("\n1:r1=1; 1:r2=1065353216; a[1]=1065353216; a[3]=1;\n"), "{run}");
    let herd = &run[..run.find("Hash=").unwrap()];
    assert!(!herd.contains("f32"), "{run}");
    assert!(run.contains("\nFloats: 1:r2=0 (0.0f32), 1:r2=1065353216 (1.0f32), a[1]=1065353216 (1.0f32)\n"), "{run}");

    let record = json(&["run", "--json", "-"], NAMES);
    let reached = record["states"].as_array().unwrap().iter().find(|s| s["satisfies"] == true).unwrap();
    assert_eq!(reached["floats"], serde_json::json!({ "1:r2": "1.0f32", "a[1]": "1.0f32" }), "{record}");
    assert_eq!(reached["values"]["1:r2"], 1065353216);

    let (explain, _) = ptxmm(&["explain", "-"], NAMES);
    assert!(explain.contains("(final state 1:r1=1 1:r2=1065353216 (1.0f32) a[1]=1065353216 (1.0f32) a[3]=1):\n"), "{explain}");
    assert!(explain.contains("d: R a[1]=1065353216 (1.0f32) (P1 line 6)  `ld.relaxed.gpu.f32 %r2, [a+4]`\n"), "{explain}");
    // An untyped (`.u32`) access shows the integer only.
    assert!(explain.contains("c: R a[3]=1 (P1 line 5)"), "{explain}");

    let x = json(&["explain", "--json", "-"], NAMES);
    let d = x["events"].as_array().unwrap().iter().find(|e| e["name"] == "d").unwrap();
    assert_eq!(d["float"], "1.0f32");
    assert_eq!(d["action"], "R a[1]=1065353216 (1.0f32)");
    let c = x["events"].as_array().unwrap().iter().find(|e| e["name"] == "c").unwrap();
    assert!(c.get("float").is_none(), "{c}");
}

/// A predicate `setp.f32` writes is 0 or 1, not a float; an `.f64` register is one.
#[test]
fn a_float_comparison_writes_no_float_and_f64_registers_are_floats() {
    let source = r#"PTX setp-f32
{ x=0; }
 P0@cta 0,gpu 0 ;
 mov.f32 r0, 1.5 ;
 setp.eq.f32 p, r0, 1.5 ;
 mov.f64 r2, 2.5 ;
exists (P0:p == 1 /\ P0:r2 == 0d4004000000000000)
"#;
    let record = json(&["run", "--json", "-"], source);
    assert_eq!(record["states"][0]["values"]["0:p"], 1, "{record}");
    assert_eq!(record["states"][0]["floats"], serde_json::json!({ "0:r2": "2.5f64" }), "{record}");
    let (explain, _) = ptxmm(&["explain", "-"], source);
    assert!(explain.contains("(final state 0:p=1 0:r2=4612811918334230528 (2.5f64)):"), "{explain}");
}

#[test]
fn a_witness_lists_every_word_of_a_16_byte_copy() {
    // P1 reads only `s`: the copy's words `s+8`, `s+12` (and their sources) mirror `s+4`.
    let source = std::fs::read_to_string("tests/async/S4b-no-await.litmus").unwrap();
    let (explain, _) = ptxmm(&["explain", "-"], &source);
    assert!(explain.contains("Witness execution"), "{explain}");
    for word in ["W s=1", "W s[1]=1", "R g=1", "R g[1]=1"] {
        assert!(explain.contains(&format!("async {word} (P0 line 9)")), "{word}: {explain}");
    }
    assert!(explain.contains("  also covered: g[2], g[3] (as g[1]), s[2], s[3] (as s[1]): their events would mirror"), "{explain}");

    let x = json(&["explain", "--json", "-"], &source);
    assert_eq!(
        x["witness"]["mirrored"],
        serde_json::json!([{ "word": "g[1]", "also": ["g[2]", "g[3]"] }, { "word": "s[1]", "also": ["s[2]", "s[3]"] }]),
        "{x}"
    );
    // A copy whose every word is read has none to list.
    let every = std::fs::read_to_string("tests/async/W01-tma-load-every-word.litmus").unwrap();
    let (explain, _) = ptxmm(&["explain", "-"], &every);
    assert!(explain.contains("async W s[3]=4") && !explain.contains("also covered"), "{explain}");
}

#[test]
fn an_inconclusive_reason_is_given_once() {
    let source = std::fs::read_to_string("tests/async/U14-tx-count-mismatch.litmus").unwrap();
    let reason = "no consistent execution runs every thread to its end";
    let (run, err) = ptxmm(&["run", "--liveness", "skip", "-"], &source);
    assert!(run.starts_with("Verdict: Inconclusive (no execution completes)\nInconclusive: no consistent execution"), "{run}");
    assert_eq!(format!("{run}{err}").matches(reason).count(), 1, "{run}{err}");
    assert_eq!(format!("{run}{err}").matches("no execution completes").count(), 1, "{run}{err}");
    let (explain, err) = ptxmm(&["explain", "-"], &source);
    assert_eq!(format!("{explain}{err}").matches(reason).count(), 1, "{explain}{err}");
    // JSON keeps the reason for tools, on stderr as well as in the record.
    let (record, err) = ptxmm(&["run", "--json", "--liveness", "skip", "-"], &source);
    assert!(record.contains(reason) && err.contains(reason), "{record}{err}");
}
