//! Issue 11, the async-copy section: typed `cp.reduce.async.bulk` elements, `.cp_mask`,
//! `createpolicy` and cache hints, predicate guards, `elect.sync`, `mapa`, and undeclared
//! locations (herd7's default 0). Each file of tests/async_section has its verdict in
//! tests/async_section/expected.csv (`FILE,Verdict`); rejected files are in CASES below.

use ptxmm::config::Config;
use ptxmm::decide::Decider;
use std::path::Path;

mod common;

fn dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/async_section")
}

#[test]
fn async_section_verdicts() {
    let config = Config::default_model();
    let text = std::fs::read_to_string(dir().join("expected.csv")).unwrap();
    let mut failed = Vec::new();
    let mut n = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (file, verdict) = line.split_once(',').unwrap_or_else(|| panic!("bad row `{line}`"));
        let program = ptxmm::load_program(&dir().join(file)).unwrap_or_else(|e| panic!("{file}: {}", e.render(false)));
        let outcome = Decider::new(&config).verdict(&program).unwrap_or_else(|e| panic!("{file}: {e}"));
        let got = outcome.verdict().name();
        n += 1;
        if got != verdict.trim() {
            failed.push(format!("{file}: expected {verdict}, got {got}"));
        }
    }
    println!("async section: {} of {n} as expected", n - failed.len());
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// f32 bulk reductions and subnormals (issue 23, item 6): by default a subnormal input and result
/// are kept, as an H200 did in every run (reduce-f32.litmus); the reading `f32-reduce-flushes`
/// follows the text ("flushes subnormal inputs and results to sign-preserving zero") and turns the
/// two around.
#[test]
fn the_f32_flush_is_a_reading() {
    let flushing = Config::default_model().with_readings(&["f32-reduce-flushes"]).unwrap();
    for (file, verdict) in [("reduce-f32.litmus", "Forbidden"), ("reduce-f32-flush.litmus", "Allowed")] {
        let program = ptxmm::load_program(&dir().join(file)).unwrap();
        let outcome = Decider::new(&flushing).verdict(&program).unwrap();
        assert_eq!(outcome.verdict().name(), verdict, "{file} under --reading f32-reduce-flushes");
        assert!(outcome.readings.iter().any(|r| r.contains("--reading f32-reduce-flushes")), "{:?}", outcome.readings);
    }
}

/// Every litmus file of the folder is either in expected.csv or rejected in `REJECTED`.
#[test]
fn every_file_is_covered() {
    let text = std::fs::read_to_string(dir().join("expected.csv")).unwrap();
    for entry in std::fs::read_dir(dir()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".litmus") {
            let listed = text.lines().any(|l| l.split(',').next() == Some(name.as_str()));
            let rejected = REJECTED.iter().any(|(f, _, _)| *f == name);
            assert!(listed || rejected, "{name} is neither in expected.csv nor in REJECTED");
        }
    }
}

/// (file, `line:col`, a fragment of the message)
const REJECTED: &[(&str, &str, &str)] = &[
    ("reject-add-f16-without-noftz.litmus", "5:53", "`.add.f16` needs `.noftz`"),
    ("reject-add-f32-shared-cluster.litmus", "5:84", "expected an element type of `.add` to `.shared::cluster`: .u32 .s32 .u64"),
    ("reject-min-f32.litmus", "5:57", "expected an element type of `.min` to `.global`: .u32 .s32 .u64 .s64 .f16 .bf16"),
    ("reject-noftz-min.litmus", "5:57", "`.noftz` exists only as `.add.noftz.f16`"),
    ("reject-xor-s32.litmus", "5:72", "expected an element type of `.xor` to `.global`: .b32 .b64"),
    ("reject-elect-not-in-mask.litmus", "5:45", "membermask 0x1 does not select this thread's lane 1"),
    ("reject-mapa-rank.litmus", "5:2", "`mapa`: the cluster of P0 has no CTA of rank 2"),
];

#[test]
fn rejected_forms_name_the_problem() {
    for (file, line_col, fragment) in REJECTED {
        let e = ptxmm::load_program(&dir().join(file)).err().unwrap_or_else(|| panic!("{file} should be rejected"));
        let msg = e.to_string();
        assert!(msg.contains(&format!("{file}:{line_col}")), "{file}: expected {line_col} in `{msg}`");
        assert!(msg.contains(fragment), "{file}: expected `{fragment}` in `{msg}`");
    }
}

/// herd7 and Dat3M give undeclared locations the initial value 0: every file of Dat3M's corpus
/// decides (Allowed, Forbidden or Inconclusive, never an error).
#[test]
fn dat3m_files_with_undeclared_locations_decide() {
    let Some(root) = common::dat3m() else {
        println!("SKIPPED: ../shared/peers/dat3m is absent");
        return;
    };
    let config = Config::default_model();
    let mut stack = vec![root.join("litmus")];
    let mut n = 0;
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "litmus") {
                let program = ptxmm::load_program(&p).unwrap_or_else(|e| panic!("{}: {}", p.display(), e.render(false)));
                Decider::new(&config).verdict(&program).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                n += 1;
            }
        }
    }
    println!("dat3m corpus: {n} files decide");
}
