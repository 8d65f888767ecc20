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

/// Warp columns (issue 39): `warp W` stands for the lanes of warp W, each a thread named
/// `P0.7` in findings and hangs; a launch gives a warp fewer lanes; a condition names a lane;
/// races between lanes, a proxy fence after per-lane stmatrix, per-lane arrivals and named
/// barriers across warp columns.
#[test]
fn warp_columns_are_their_lanes() {
    let config = Config::default_model();
    let load = |file: &str| ptxmm::load_program(&dir().join(file)).unwrap();
    let program = load("warp-column-neighbour.litmus");
    assert_eq!(program.threads.len(), 32);
    assert!(program.threads.iter().enumerate().all(|(l, t)| t.lane == Some(l) && t.specials.get("%laneid") == Some(&(l as i64))));
    assert_eq!(program.threads[7].name(), "P0.7");
    // Three neighbour reads race with the neighbour's store, each named by its lanes, and the
    // hint is the warp's own barrier.
    let outcome = Decider::new(&config).verdict(&load("warp-column-neighbour-race.litmus")).unwrap();
    assert_eq!(outcome.races.len(), 3, "{:#?}", outcome.races);
    for race in &outcome.races {
        let threads: Vec<&str> = race.sites.iter().map(|s| s.thread.as_str()).collect();
        assert!(threads.iter().all(|t| t.starts_with("P0.")), "{threads:?}");
        assert!(race.hint.as_deref().is_some_and(|h| h.contains("`bar.warp.sync` (`__syncwarp()`)")), "{race:#?}");
    }
    // One arrival per lane: with one too many counted, the waiter hangs on b with one arrival
    // left over (pending 1/5), and every lane of the warp column is a writer that finished.
    let live = Decider::new(&config).liveness(&load("warp-column-arrive-count-hang.litmus")).unwrap();
    let text = format!("{:?}", live.hang);
    assert!(text.contains("pending 1/5") && text.contains("P1.0, P1.1, P1.2, P1.3"), "{text}");
    // stmatrix rows (generic proxy) read by a bulk copy (async proxy): without a proxy fence,
    // each lane's row is a finding whose hint is the fence; with one, no finding.
    let outcome = Decider::new(&config).verdict(&load("warp-column-stmatrix-tma-store.litmus")).unwrap();
    assert_eq!(outcome.undefined.len(), 2, "{:#?}", outcome.undefined);
    for f in &outcome.undefined {
        assert!(f.sites.iter().any(|s| s.thread == "P0.0") && f.sites.iter().any(|s| s.instruction.starts_with("stmatrix")), "{f:#?}");
        assert!(f.hint.as_deref().is_some_and(|h| h.contains("fence.proxy.async")), "{f:#?}");
    }
    let outcome = Decider::new(&config).verdict(&load("warp-column-stmatrix-tma-store-fenced.litmus")).unwrap();
    assert!(outcome.undefined.is_empty() && outcome.races.is_empty(), "{:#?} {:#?}", outcome.undefined, outcome.races);
    // A `.local` declaration has an instance per lane, named by the lane.
    let text = "PTX t\n{ k @ launch { block = 2; }; }\n P0@cta 0,gpu 0,warp 0 ;\n {\n .local .b32 buf[2];\n mov.u32 %r0, %laneid ;\n st.u32 [buf], %r0 ;\n }\nexists (buf@P0.1 == 1 /\\ buf@P0.0 == 0)\n";
    let program = ptxmm::parse_program(ptxmm::diag::SourceFile::new("t.litmus", text)).unwrap();
    assert_eq!(Decider::new(&config).verdict(&program).unwrap().verdict(), ptxmm::decide::Verdict::Allowed);
    // Named barriers count the lanes of both warp columns.
    let live = Decider::new(&config).liveness(&load("warp-column-named-barrier-hang.litmus")).unwrap();
    assert_eq!(live.hang.len(), 32, "{:#?}", live.hang);
    let text = format!("{:?}", live.hang);
    assert!(text.contains("P1.31") && text.contains("expects 96 threads, 64 can arrive"), "{text}");
}

/// What a warp column may not say, each a located error.
#[test]
fn warp_column_errors_are_located() {
    let parse = |head: &str, init: &str, cond: &str| {
        let text = format!("PTX t\n{{ {init} }}\n {head} ;\n mov.u32 %r0, %laneid | mov.u32 %r0, 1 ;\nexists ({cond})\n");
        ptxmm::parse_program(ptxmm::diag::SourceFile::new("t.litmus", text)).err().map(|e| e.to_string())
    };
    let ok = "P0@cta 0,gpu 0,warp 0 | P1@cta 0,gpu 0,tid 40";
    assert_eq!(parse(ok, "P0:%r0 = 1;", "P0.31:%r0 == 31 /\\ P1:%r0 == 1"), None);
    for (head, init, cond, message) in [
        (ok, "", "P0:%r0 == 0", "5:9: error: P0 is a warp column: name one of its lanes"),
        (ok, "", "P1.3:%r0 == 0", "P1 is one thread, not a warp column: `P1.3` names no lane"),
        (ok, "", "P0.32:%r0 == 0", "expected a lane in 0..=31 (`P1.7`), found `P0.32`"),
        (ok, "k @ launch { block = 48; };", "P0.20:%r0 == 0 /\\ P1:%r0 == 1", ""),
        ("P0@cta 0,gpu 0,warp 1 | P1@cta 0,gpu 0,tid 0", "k @ launch { block = 36; };", "P0.4:%r0 == 0", "warp column P0 has 4 lanes"),
        (
            "P0@cta 0,gpu 0,warp 2 | P1@cta 0,gpu 0,tid 0",
            "k @ launch { block = 64; };",
            "true",
            "warp 2 starts at thread 64, past the 64 threads",
        ),
        ("P0@cta 0,gpu 0,warp 0,tid 3 | P1@cta 0,gpu 0,tid 40", "", "true", "P0 is a warp column: `tid` and `warp` both place it"),
        ("P0@cta 0,gpu 0,warp 0 | P1@cta 0,gpu 0,tid 4", "", "true", "are both thread 4 of CTA 0"),
    ] {
        let err = parse(head, init, cond);
        if message.is_empty() {
            assert_eq!(err, None, "{head} {init} {cond}");
        } else {
            let err = err.unwrap_or_else(|| panic!("{head} {init} {cond}: parsed"));
            assert!(err.contains(message), "{head} {init} {cond}: {err}");
        }
    }
}
