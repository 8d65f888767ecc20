//! The asynchronous-operations suite (tests/async): every scenario of digest §14.12 and every
//! in-scope row of user-cases.md, with its expected verdict (Allowed / Forbidden / Undefined) and
//! liveness (ok / hang) in tests/async/expected.csv, under the default model. Needs nothing
//! outside the repository.

mod common;

use ptxmm::config::Config;
use ptxmm::decide::Decider;

use std::path::Path;

fn dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/async")
}

#[test]
fn async_scenarios_and_user_cases() {
    let failed = common::run_verdict_suite("async", &dir());
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn every_async_test_has_an_expectation() {
    common::assert_every_test_listed(&dir());
}

/// Each alternative reading of an ambiguity changes the verdict of the scenario that exposes it,
/// and the report names the reading.
#[test]
fn readings_change_the_verdicts_they_should() {
    let config = Config::default_model();
    let cases = [
        // AMBIG-13: without the implied fence after wait_group.read, the overwrite races with the bulk read.
        ("S7-wait-read-then-overwrite.litmus", "read-wait-without-fence", "Forbidden", "Undefined"),
        // AMBIG-18: commit order orders the writes of two groups, so the older value cannot win.
        ("S2c-two-groups-value-g1.litmus", "commit-order", "Allowed", "Forbidden"),
        // AMBIG-7: the complete-tx alone no longer publishes the copy when the issuer's arrive is relaxed.
        ("S5-r0-copy-visible.litmus", "ct-needs-release-arrive", "Forbidden", "Undefined"),
        // AMBIG-3: a .cta wait in CTA 1 does not synchronize with a complete-tx performed by CTA 0's issuer.
        ("S9-fixed-expect-tx-await.litmus", "signal-by-issuer", "Forbidden", "Undefined"),
        // AMBIG-1: a proxy fence in another CTA than the async access counts under the alternative.
        ("A01-proxy-fence-in-other-cta.litmus", "proxy-fence-anywhere", "Undefined", "Forbidden"),
        // AMBIG-17: without a fence or completed wait before it, a wgmma is not ordered after the acquire.
        ("A17-wgmma-after-acquire.litmus", "wgmma-issue-fences", "Allowed", "Undefined"),
        // AMBIG-14: a .cta arrive of another CTA between release and acquire breaks a strict chain.
        ("A14-mbarrier-chain-through-cta-arrive.litmus", "mbarrier-chain-strict", "Forbidden", "Allowed"),
        // AMBIG-24: the mbarrier hand-off of CUTLASS's PipelineTmaAsync orders the read before the refill.
        ("A24-pipeline-tma-async-consumer-release.litmus", "mbarrier-handoff", "Undefined", "Forbidden"),
        ("pipeline-ring-no-proxy-fence.litmus", "mbarrier-handoff", "Undefined", "Forbidden"),
    ];
    for (file, flag, default, alternative) in cases {
        let program = ptxmm::load_program(&dir().join(file)).unwrap();
        let d = Decider::new(&config).verdict(&program).unwrap();
        assert_eq!(d.verdict().name(), default, "{file} under the default reading");
        let alternative_config = config.clone().with_readings(&[flag]).unwrap();
        let a = Decider::new(&alternative_config).verdict(&program).unwrap();
        assert_eq!(a.verdict().name(), alternative, "{file} under --reading {flag}");
        assert!(a.readings.iter().any(|r| r.contains(flag)), "{:?}", a.readings);
    }
}

/// A finding that exists under one reading only says so, in the report and in JSON: the reading,
/// the other one and its flag, and why (issue 23, item 8). A finding that no reading removes
/// (a `bar.sync` is no mbarrier hand-off) names none.
#[test]
fn findings_that_depend_on_a_reading_name_it() {
    let config = Config::default_model();
    let program = ptxmm::load_program(&dir().join("A24-pipeline-tma-async-consumer-release.litmus")).unwrap();
    let d = Decider::new(&config).verdict(&program).unwrap();
    assert_eq!(d.verdict().name(), "Undefined");
    let f = d.undefined.iter().next().unwrap();
    assert_eq!(f.readings.len(), 1, "{f:?}");
    let r = &f.readings[0];
    assert_eq!((r.id, r.flag, r.in_effect), ("AMBIG-24", "mbarrier-handoff", "default"));
    let text = ptxmm::decide::report::verdict_block(&d);
    for words in
        ["reading: depends on the reading AMBIG-24", "with --reading mbarrier-handoff", "requires fence.proxy.async", "PipelineTmaAsync"]
    {
        assert!(text.contains(words), "{words:?} missing from\n{text}");
    }
    // Under the alternative, the alternative of AMBIG-13 names the way back to the default.
    let s7 = ptxmm::load_program(&dir().join("S7-wait-read-then-overwrite.litmus")).unwrap();
    let alt = config.clone().with_readings(&["read-wait-without-fence"]).unwrap();
    let d = Decider::new(&alt).verdict(&s7).unwrap();
    let r = &d.undefined.iter().next().unwrap().readings[0];
    assert_eq!((r.id, r.in_effect), ("AMBIG-13", "alternative"));
    assert!(r.line().contains("without --reading read-wait-without-fence"), "{}", r.line());
    // No reading removes the race of a bar.sync hand-off.
    let u05 = ptxmm::load_program(&dir().join("U05-lds-bar-sync-tma-refill-no-fence.litmus")).unwrap();
    let d = Decider::new(&config).verdict(&u05).unwrap();
    assert_eq!(d.verdict().name(), "Undefined");
    assert!(d.undefined.iter().all(|f| f.readings.is_empty()), "{:?}", d.undefined);
}
