//! The outcome-directed verdict search (issue 24, `decide::directed`): once the enumeration of
//! final states passes its work budget, the verdict comes from a search for the outcome, and the
//! states are marked partial; tests whose executions may have findings (races, undefined
//! behaviour) are enumerated in full whatever the budget. Small budgets stand in for the default
//! one here, so that small tests take the directed path; no timing assertions (the timings are
//! in docs/performance.md).

use assert_cmd::Command;
use ptxmm::config::Config;
use ptxmm::decide::{Decider, Outcome, Verdict};
use ptxmm::diag::SourceFile;
use ptxmm::families::{self, FamilyPoint};

fn program_of(name: &str, source: &str) -> ptxmm::program::Program {
    ptxmm::parse_program(SourceFile::new(format!("{name}.litmus"), source.to_string())).expect("the test lowers")
}

/// The verdict outcome of `source` with the enumeration budget `budget` (None: every state).
fn decide(name: &str, source: &str, budget: Option<u64>) -> Outcome {
    let config = Config { enumeration_budget: budget, ..Config::default_model() };
    Decider::new(&config).verdict(&program_of(name, source)).expect("the test decides")
}

fn point(p: FamilyPoint, budget: Option<u64>) -> Outcome {
    decide(&p.name, &p.source, budget)
}

#[test]
fn mp_broadcast_is_forbidden_with_partial_states() {
    // 3^4 = 81 consistent executions; a budget of 10 stops the enumeration.
    let o = point(families::mp_broadcast(4), Some(10));
    assert_eq!(o.verdict(), Verdict::Forbidden);
    let p = o.partial_states.as_ref().expect("the states are partial");
    assert!(!p.witness);
    assert_eq!(p.disjuncts, 4);
    assert_eq!(o.states.len(), 10);
    assert_eq!((o.positive, o.negative), (0, 10));
    // Every state, as before.
    let all = point(families::mp_broadcast(4), None);
    assert_eq!(all.verdict(), Verdict::Forbidden);
    assert!(all.partial_states.is_none() && !all.enumeration_cut);
    assert_eq!(all.states.len(), 81);
    // The default budget enumerates a small test in full.
    let default = point(families::mp_broadcast(4), Config::default_model().enumeration_budget);
    assert!(default.partial_states.is_none());
    assert_eq!(default.states, all.states);
}

#[test]
fn iriw_is_allowed_and_forbidden_with_fence_sc() {
    let o = point(families::iriw(3, false), Some(5));
    assert_eq!(o.verdict(), Verdict::Allowed);
    assert!(o.partial_states.as_ref().expect("partial").witness);
    // The witness's state is among the states, as satisfying the condition.
    assert!(o.states.values().any(|&sat| sat));
    assert!(o.positive >= 1 && o.ok());
    let f = point(families::iriw(3, true), Some(5));
    assert_eq!(f.verdict(), Verdict::Forbidden);
    assert!(!f.partial_states.as_ref().expect("partial").witness);
    assert_eq!(f.positive, 0);
    // The same verdicts from every state.
    assert_eq!(point(families::iriw(3, false), None).verdict(), Verdict::Allowed);
    assert_eq!(point(families::iriw(3, true), None).verdict(), Verdict::Forbidden);
}

#[test]
fn sb_verdicts_agree_with_the_full_enumeration() {
    for fence in [false, true] {
        let partial = point(families::sb(5, fence), Some(3));
        let full = point(families::sb(5, fence), None);
        assert!(partial.partial_states.is_some());
        assert_eq!(partial.verdict(), full.verdict(), "SB-5 fence.sc {fence}");
        assert_eq!(full.verdict(), if fence { Verdict::Forbidden } else { Verdict::Allowed });
    }
}

#[test]
fn not_exists_is_decided_by_the_directed_search() {
    let p = families::mp_broadcast(3);
    let source = p.source.replacen("exists (", "~exists (", 1);
    let o = decide(&p.name, &source, Some(4));
    assert!(o.partial_states.is_some());
    assert_eq!(o.verdict(), Verdict::Forbidden);
    // herd7's `Ok` of `~exists`: no execution reaches the proposition.
    assert!(o.ok());
}

#[test]
fn forall_has_no_directed_search() {
    let p = families::mp_broadcast(3);
    let source = p.source.replacen("exists (", "forall ~(", 1);
    let o = decide(&p.name, &source, Some(4));
    assert!(o.partial_states.is_none() && !o.enumeration_cut);
    assert_eq!(o.states.len(), 27);
}

/// MP broadcast whose readers read `data` weakly: the model's data-race flag fires.
fn racy_broadcast() -> (String, String) {
    let p = families::mp_broadcast(3);
    (p.name, p.source.replace("ld.relaxed.gpu r1, data", "ld.weak r1, data").replace("st.relaxed.gpu data, 1", "st.weak data, 1"))
}

#[test]
fn races_are_all_found_whatever_the_budget() {
    let (name, source) = racy_broadcast();
    let full = decide(&name, &source, None);
    assert!(!full.races.is_empty(), "the weak accesses race");
    // A flag may fire: no directed search, every state enumerated.
    let budgeted = decide(&name, &source, Some(2));
    assert!(budgeted.partial_states.is_none() && !budgeted.enumeration_cut);
    assert_eq!(budgeted.states, full.states);
    assert_eq!(budgeted.races, full.races);
    assert_eq!(budgeted.verdict(), full.verdict());
}

#[test]
fn undefined_tests_stay_undefined_whatever_the_budget() {
    let root = env!("CARGO_MANIFEST_DIR");
    for file in ["tests/kernels/cp_async_double-bug.litmus", "tests/async/pipeline-ring-no-proxy-fence.litmus"] {
        let source = std::fs::read_to_string(format!("{root}/{file}")).expect("the test exists");
        let full = decide(file, &source, None);
        let budgeted = decide(file, &source, Some(2));
        assert_eq!(full.verdict(), Verdict::Undefined, "{file}");
        assert_eq!(budgeted.verdict(), Verdict::Undefined, "{file}");
        assert!(budgeted.partial_states.is_none(), "{file}: the states are complete");
        assert_eq!(budgeted.states, full.states, "{file}");
        assert_eq!(budgeted.undefined, full.undefined, "{file}");
    }
}

#[test]
fn the_report_and_json_say_the_states_are_partial() {
    let o = point(families::mp_broadcast(4), Some(10));
    let text = ptxmm::decide::report::run_text(&o, None);
    assert!(
        text.starts_with("Verdict: Forbidden\nPartial states: the enumeration of final states stopped at its work budget of 10"),
        "{text}"
    );
    assert!(text.contains("\nStates 10\n"), "{text}");
    let json = ptxmm::decide::report::json(&o, "MP-broadcast-4.litmus", "ptx", Default::default());
    assert_eq!(json["states_complete"], serde_json::Value::Bool(false));
    // A complete enumeration's record has no such field (the records of small tests are as before).
    let full = point(families::mp_broadcast(4), None);
    let json = ptxmm::decide::report::json(&full, "MP-broadcast-4.litmus", "ptx", Default::default());
    assert!(json.get("states_complete").is_none());
}

#[test]
fn all_states_is_accepted_by_run() {
    let p = families::mp_broadcast(2);
    let run = |extra: &[&str]| {
        let out = Command::cargo_bin("ptxmm").unwrap().arg("run").args(extra).arg("-").write_stdin(p.source.clone()).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let plain = run(&[]);
    assert!(plain.starts_with("Verdict: Forbidden\n") && plain.contains("\nStates 9\n"), "{plain}");
    assert_eq!(run(&["--all-states"]), plain);
}

#[test]
fn explain_settles_the_program_verdict_after_a_partial_enumeration() {
    use ptxmm::decide::explain::Verdict as Reach;
    let cases =
        [(families::mp_broadcast(4), Verdict::Forbidden, Reach::Forbidden), (families::iriw(3, false), Verdict::Allowed, Reach::Allowed)];
    for (p, verdict, reach) in cases {
        let config = Config { enumeration_budget: Some(5), ..Config::default_model() };
        let x = Decider::new(&config).explain(&program_of(&p.name, &p.source)).expect("explains");
        assert_eq!(x.verdict, reach, "{}", p.name);
        assert_eq!(x.program_verdict, Some(verdict), "{}", p.name);
    }
}
