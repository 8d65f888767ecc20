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
/// barrier orders them, each lane's row is the 16 bytes at its own address, a lane without a row
/// accesses nothing; `bar.warp.sync` orders the lanes of one warp and no other.
#[test]
fn warp_collectives_race_or_not() {
    let config = Config::default_model();
    let races = |file: &str| {
        let program = ptxmm::load_program(&dir().join(file)).unwrap();
        let outcome = Decider::new(&config).verdict(&program).unwrap();
        assert!(outcome.undefined.is_empty(), "{file}: {:#?}", outcome.undefined);
        outcome.races.len()
    };
    // (file, its data races: pairs of instructions)
    for (file, expected) in [
        ("matrix-race.litmus", 2),
        ("matrix-x4-rows.litmus", 1),
        ("matrix-sm100-shapes.litmus", 1),
        ("warp-sync-none.litmus", 1),
        ("warp-sync-other-warp.litmus", 1),
        ("matrix-barrier.litmus", 0),
        ("matrix-lane-without-row.litmus", 0),
        ("warp-sync-mp.litmus", 0),
    ] {
        assert_eq!(races(file), expected, "{file}: data races");
    }
}

/// The warp exchanges (issues 38, 39): every form the PTX ISA documents (those of
/// tests/ptx/K19-warp-exchanges.litmus) passes its form check; the `.sync` forms of integers are
/// modelled (computed from the lanes that take part), the deprecated forms without a membermask,
/// `activemask` and the `.f32` reductions are rejected in a litmus test as "not modelled"; a form
/// the ISA does not have is an error about the form.
#[test]
fn warp_exchanges_parse_in_every_documented_form() {
    let lower = |line: &str| {
        let text = format!(
            "PTX t\n{{ }}\nP0@cta 0,gpu 0 ;\nP0 {{\n mov.u32 %r1, 1;\n setp.ne.s32 %p4, %r1, 0;\n mov.b64 %rd1, 7;\n mov.b32 %f1, 0;\n {line}\n}}\nexists (true)\n"
        );
        match ptxmm::parse_program(ptxmm::diag::SourceFile::new("t.litmus", text)) {
            Ok(_) => None,
            Err(e) => Some(e.to_string()),
        }
    };
    let kernel = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ptx/K19-warp-exchanges.litmus")).unwrap();
    let forms: Vec<&str> = kernel
        .lines()
        .map(str::trim)
        .filter(|l| l.ends_with(';') && ["shfl", "vote", "match", "redux", "activemask"].iter().any(|h| l.starts_with(&format!("{h}."))))
        .collect();
    assert_eq!(forms.len(), 24, "{forms:#?}");
    for line in forms {
        let modelled = line.contains(".sync") && !line.contains(".f32") && !line.starts_with("activemask");
        match lower(line) {
            None => assert!(modelled, "{line}: lowered"),
            Some(err) => {
                assert!(!modelled, "{line}: {err}");
                assert!(err.contains("9:2:") && err.contains("is not modelled"), "{line}: {err}");
            }
        }
    }
    for (line, message) in [
        ("shfl.sync.b32 %r2, %r1, 1, 31, -1;", "`shfl` needs a mode: .up .down .bfly .idx"),
        ("shfl.sync.idx.b32 %r2, %r1, 1, 31;", "expected 5 operand(s) for `shfl.sync.idx.b32`"),
        ("vote.sync.ballot.pred %p5, %p4, -1;", "`vote` needs the type .b32 with .ballot"),
        ("vote.sync.all.pred %r2|%p5, %p4, -1;", "expected a destination register of `vote.sync.all.pred`"),
        ("match.any.sync.b32 %r2|%p5, %r1, -1;", "expected a destination register of `match.any.sync.b32`"),
        ("match.all.b32 %r2, %r1, -1;", "`match` needs .sync"),
        ("redux.sync.add.f32 %f2, %f1, -1;", "`redux` needs a type of `.add`: .u32 .s32"),
        ("redux.sync.min.abs.s32 %r2, %r1, -1;", "`.abs` exists only in `redux.sync.min|max.f32`"),
        ("activemask.b32 %r2, %r1;", "expected 1 operand(s) for `activemask.b32`"),
    ] {
        let err = lower(line).unwrap_or_else(|| panic!("{line}: lowered"));
        assert!(err.contains(message) && !err.contains("not modelled"), "{line}: {err}");
    }
}
