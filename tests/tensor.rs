//! Tile-mode tensor copies (`cp.async.bulk.tensor`, `cp.reduce.async.bulk.tensor`,
//! `cp.async.bulk.prefetch.tensor`) with tensor maps declared in the init block: each test of
//! `tests/tensor/` with its verdict, final states and findings, and the rejected forms with
//! their messages.

use ptxmm::check::{Outcome, RunOptions, Verdict};
use ptxmm::diag::SourceFile;

fn load(path: &str) -> Result<ptxmm::program::Program, String> {
    let text = std::fs::read_to_string(path).unwrap();
    ptxmm::parse_program(SourceFile::new(path.to_string(), text)).map_err(|e| e.to_string())
}

fn run(name: &str) -> Outcome {
    let program = load(&format!("tests/tensor/{name}.litmus")).unwrap_or_else(|e| panic!("{e}"));
    let model = ptxmm::models::builtin(ptxmm::models::DEFAULT_MODEL).unwrap();
    ptxmm::check::run(&program, &model, &RunOptions::default()).unwrap()
}

/// The final states, each as `name=value; ...` in the order of the outcome's observables.
fn states(o: &Outcome) -> Vec<String> {
    o.states
        .keys()
        .map(|s| o.observable_names.iter().zip(s.iter()).map(|(n, v)| format!("{n}={v};")).collect::<Vec<_>>().join(" "))
        .collect()
}

fn rules(o: &Outcome) -> Vec<&str> {
    o.undefined.iter().map(|f| f.rule.as_str()).collect()
}

#[test]
fn a_2d_load_through_the_mbarrier_has_no_stale_read() {
    let o = run("T01-load-2d-mbarrier");
    assert_eq!(o.verdict(), Verdict::Forbidden, "{:?}", states(&o));
    assert_eq!(states(&o), ["1:r0=14; 1:r1=17; 1:r2=24; 1:r3=27;"]);
    assert!(o.undefined.is_empty() && o.races.is_empty());
}

#[test]
fn writing_the_tensor_map_while_the_copy_is_in_flight_is_undefined() {
    let o = run("T02-tensor-map-modified-in-flight");
    assert_eq!(o.verdict(), Verdict::Undefined);
    assert_eq!(rules(&o), ["U2-tensor-map-modified-in-flight"]);
    let f = o.undefined.iter().next().unwrap();
    assert!(
        f.message.contains("source read of `cp.async.bulk.tensor.2d") && f.message.contains("st.global.u32 [tmap], 1"),
        "{}",
        f.message
    );
}

#[test]
fn writing_the_tensor_map_after_the_phase_completes_is_defined() {
    let o = run("T03-tensor-map-modified-after-completion");
    assert_eq!(o.verdict(), Verdict::Forbidden);
    assert!(o.undefined.is_empty() && o.races.is_empty());
}
