//! The liveness check's thin-air filter (issue 24): combinations of runs whose mbarrier
//! histories could only feed each other in a circle (a producer passing its wait on `empty`
//! thanks to an arrival its consumer makes only after a wait the producer's own later arrival
//! completes) are ruled out by the model's `acyclic (rf | addr | data | ctrl)` (PTX's
//! NoThinAir) before any event structure is built. Nothing the check answers changes, which is
//! checked here against the same model with the check written in a form the filter does not
//! recognise, and with the check skipped.

mod common;

use ptxmm::cat::Skip;
use ptxmm::config::Config;
use ptxmm::decide::Decider;
use ptxmm::decide::{LivenessOutcome, LivenessStatus};
use ptxmm::diag::SourceFile;
use ptxmm::families;
use std::path::Path;

/// The default model with NoThinAir as `acyclic (rf | addr | data | ctrl | 0)`: the same
/// check, which the liveness check does not take for a union of names.
fn model_without_filter() -> Config {
    common::default_model_with_check("acyclic (rf | addr | data | ctrl) as NoThinAir", "acyclic (rf | addr | data | ctrl | 0) as NoThinAir")
}

fn liveness(config: &Config, name: &str, source: &str) -> LivenessOutcome {
    let program = ptxmm::parse_program(SourceFile::new(format!("{name}.litmus"), source.to_string())).unwrap();
    Decider::new(config).liveness(&program).unwrap()
}

/// What the check found, without its timing and statistics.
fn found(l: &LivenessOutcome) -> String {
    format!("{:?} {:?} cut {} unroll {} {:?} undefined {:?}", l.status, l.hang, l.loop_cut, l.unroll, l.bounds_tried, l.undefined)
}

/// The program with one more arrival expected on `empty0` than the consumers make: the
/// producer hangs there.
fn one_expected_arrival_too_many(source: &str) -> String {
    let at = source.find("empty0 @ shared cta 0 mbarrier(").expect("the ring declares empty0");
    let open = at + "empty0 @ shared cta 0 mbarrier(".len();
    let close = open + source[open..].find(')').unwrap();
    let count: usize = source[open..close].parse().unwrap();
    format!("{}{}{}", &source[..open], count + 1, &source[close..])
}

#[test]
fn pipelines_lose_their_circular_combinations_and_keep_their_answers() {
    let with = Config::default_model();
    let without = model_without_filter();
    // Small rings: without the filter (and without the search's own use of the check, which
    // the rewriting also hides) each is still decided in well under a second.
    let points = [
        (families::cluster_ring(2, 1, 2, true), false),
        // Two copies per stage: the combinations left after the per-object filter have, on a
        // full barrier, histories only with the producer's next announcement placed before the
        // lap's copies complete, which the order across objects rules out (even with one
        // consumer): nothing is left to search.
        (families::tma_ring2(2, 2, 2, true), true),
        (families::tma_ring2(2, 1, 3, true), true),
    ];
    for (p, nothing_left) in points {
        for (source, status) in
            [(p.source.clone(), LivenessStatus::Ok), (one_expected_arrival_too_many(&p.source), LivenessStatus::MayHang)]
        {
            let a = liveness(&with, &p.name, &source);
            let b = liveness(&without, &p.name, &source);
            assert_eq!(a.status, status, "{}", p.name);
            assert_eq!(found(&a), found(&b), "{}", p.name);
            assert_eq!(b.thin_air_cut, 0, "{}: the rewritten check is not used", p.name);
            println!("{}: {} combinations searched with the filter, {} without", p.name, a.searched, b.searched);
            if status == LivenessStatus::Ok {
                assert!(a.thin_air_cut > 0 && a.searched < b.searched, "{}: circular combinations are cut", p.name);
                assert_eq!(a.searched == 0, nothing_left, "{}", p.name);
            } else {
                assert!(a.hang.iter().any(|t| t.thread == "P0"), "{}: the producer waits on empty0: {:?}", p.name, a.hang);
            }
        }
    }
    // With the check skipped, nothing rules the circles out and the filter is not used.
    let skipped = Config {
        model: with.model.skipping(&Skip { all_consistency: false, names: vec!["NoThinAir".to_string()] }).unwrap(),
        ..Config::default_model()
    };
    let p = families::tma_ring2(2, 2, 2, true);
    assert!(liveness(&with, &p.name, &p.source).thin_air_cut > 0, "{}", p.name);
    assert_eq!(liveness(&skipped, &p.name, &p.source).thin_air_cut, 0, "{}: the skipped check is not used", p.name);
}

#[test]
fn every_repository_test_has_the_same_liveness_with_and_without_the_filter() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files = Vec::new();
    for dir in ["async", "async_section", "litmus", "ptx", "liveness", "hints", "loops"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        files.extend(entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "litmus")));
    }
    files.sort();
    assert!(files.len() > 100, "the repository's tests are found ({})", files.len());
    let limits = ptxmm::config::Limits { timeout: Some(std::time::Duration::from_secs(20)), ..Default::default() };
    let with = Config { limits, ..Config::default_model() };
    let without = Config { limits, ..model_without_filter() };
    let (mut same, mut cut, mut hangs) = (0, 0, 0);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let Ok(program) = ptxmm::parse_program(SourceFile::new(f.display().to_string(), text)) else { continue };
        let (Ok(a), Ok(b)) = (Decider::new(&with).liveness(&program), Decider::new(&without).liveness(&program)) else { continue };
        assert_eq!(found(&a), found(&b), "{}", f.display());
        same += 1;
        cut += usize::from(a.thin_air_cut > 0);
        hangs += usize::from(a.status == LivenessStatus::MayHang);
    }
    println!("{same} tests have the same liveness with and without the filter; it cut combinations in {cut}; {hangs} may hang");
    assert!(same > 100 && cut > 2 && hangs > 5, "{same} compared, {cut} with combinations cut, {hangs} hangs");
}
