//! The instruction-set suite (tests/isa): one semantics test per instruction form that real PTX
//! (what nvcc prints) needs besides the memory model's own (issue 22, D4): `cvta`, `mul.wide`,
//! `mad`, `cvt`, `not`, `selp`, `ret`/`exit`, `bra.uni`, `ld.global.nc`, `ld.volatile`, the old
//! `mbarrier.init.shared` spelling, registers as operands, 64-bit atomics, 8- and 16-bit
//! registers and accesses, unread arrive states. Each file's expected verdict and liveness are in
//! tests/isa/expected.csv (`FILE,Verdict,Liveness`), under the default model.

mod common;

use ptxmm::config::Config;
use ptxmm::decide::Decider;
use std::path::Path;

fn dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/isa")
}

#[test]
fn instruction_forms_decide_as_expected() {
    let failed = common::run_verdict_suite("isa", &dir());
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn every_isa_test_has_an_expectation() {
    common::assert_every_test_listed(&dir());
}

/// The findings the suite's undefined tests are about, by rule.
#[test]
fn undefined_tests_name_their_rule() {
    let config = Config::default_model();
    let cases = [
        ("ld-nc-written.litmus", "NC-location-written"),
        ("ld-nc-written-same-thread.litmus", "NC-location-written"),
        ("subword-mixed-race.litmus", "mixed-size-race"),
        ("mapa-register-bad-rank.litmus", "undefined-operation"),
        ("cvta-space-violation.litmus", "undefined-operation"),
        ("trap.litmus", "undefined-operation"),
    ];
    for (file, rule) in cases {
        let program = ptxmm::load_program(&dir().join(file)).unwrap();
        let outcome = Decider::new(&config).verdict(&program).unwrap();
        assert!(outcome.undefined.iter().any(|f| f.rule == rule), "{file}: no {rule} finding in {:#?}", outcome.undefined);
    }
    // Sub-word stores of different bytes neither race nor lose a byte; an unread .nc load has no finding.
    for file in ["subword-bytes-of-a-word.litmus", "ld-nc-read-only.litmus", "subword-relaxed-counter.litmus"] {
        let program = ptxmm::load_program(&dir().join(file)).unwrap();
        let outcome = Decider::new(&config).verdict(&program).unwrap();
        assert!(outcome.undefined.is_empty() && outcome.races.is_empty(), "{file}: {:#?} {:#?}", outcome.undefined, outcome.races);
    }
}

/// The warp collectives (issue 38): `ldmatrix`/`stmatrix` rows of two warps race unless a
/// barrier orders them, a lane without a row accesses nothing; `bar.warp.sync` orders the lanes of
/// one warp and no other.
#[test]
fn warp_collectives_race_or_not() {
    let config = Config::default_model();
    let races = |file: &str| {
        let program = ptxmm::load_program(&dir().join(file)).unwrap();
        let outcome = Decider::new(&config).verdict(&program).unwrap();
        assert!(outcome.undefined.is_empty(), "{file}: {:#?}", outcome.undefined);
        outcome.races.len()
    };
    for file in ["matrix-race.litmus", "warp-sync-none.litmus", "warp-sync-other-warp.litmus"] {
        assert_eq!(races(file), 1, "{file}: one data race expected");
    }
    for file in ["matrix-barrier.litmus", "matrix-lane-without-row.litmus", "matrix-x4-rows.litmus", "warp-sync-mp.litmus"] {
        assert_eq!(races(file), 0, "{file}: no race expected");
    }
}
