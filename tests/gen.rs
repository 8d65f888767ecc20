//! `ptxmm gen`: the generic family against Dat3M's cat, every asynchronous edge kind with a
//! test of its own, the family's index as a suite, and the command line.

mod common;

use assert_cmd::Command;
use predicates::prelude::*;
use ptxmm::cat::CatModel;
use ptxmm::decide::Verdict;
use ptxmm::gen::{self, edges, emit::EmitOptions, FamilyBounds, Generated};
use std::collections::BTreeSet;
use std::path::Path;

/// The generic tests whose herd7 Ok/No differs between `models/ptx-7.5.cat` and Dat3M's
/// `ptx-v7.5.cat`. Every one is docs/divergences.md's model difference 2 (`fence.sc` is also a
/// release and an acquire fence): a `fence.sc` on one side of the cycle meets a
/// release/acquire pattern that is not `fence.sc` on the other; Dat3M's patterns accept only
/// `[F & ACQ_REL]`, so it allows what ours forbids.
const DOCUMENTED_DIVERGENCES: &[&str] = &[
    "Rfe+FenceAcqReldRR+Fre+FenceScdWW",
    "Rfe+FenceAcqReldRW+Coe+FenceScdWW",
    "Rfe+FenceScdRR+Fre+FenceAcqReldWW",
    "Rfe+FenceScdRR+Fre+PodWWPL",
    "Rfe+FenceScdRW+Coe+FenceAcqReldWW",
    "Rfe+FenceScdRW+Coe+PodWWPL",
    "Rfe+FenceScdRW+Rfe+FenceAcqReldRW",
    "Rfe+PodRRAP+Fre+FenceScdWW",
    "Rfe+PodRWAL+Coe+FenceScdWW",
    "Rfe+PodRWAL+Rfe+FenceScdRW",
    "RfeCta+FenceAcqReldRR+FreCta+FenceScCtadWW",
    "RfeCta+FenceAcqReldRR+FreCta+FenceScdWW",
    "RfeCta+FenceAcqReldRW+CoeCta+FenceScCtadWW",
    "RfeCta+FenceAcqReldRW+CoeCta+FenceScdWW",
    "RfeCta+FenceScCtadRR+FreCta+FenceAcqReldWW",
    "RfeCta+FenceScCtadRR+FreCta+PodWWPL",
    "RfeCta+FenceScdRR+FreCta+FenceAcqReldWW",
    "RfeCta+FenceScdRR+FreCta+PodWWPL",
    "RfeCta+FenceScdRW+CoeCta+FenceAcqReldWW",
    "RfeCta+FenceScdRW+CoeCta+PodWWPL",
    "RfeCta+FenceScdRW+RfeCta+FenceAcqReldRW",
    "RfeCta+PodRRAP+FreCta+FenceScCtadWW",
    "RfeCta+PodRRAP+FreCta+FenceScdWW",
    "RfeCta+PodRWAL+CoeCta+FenceScCtadWW",
    "RfeCta+PodRWAL+CoeCta+FenceScdWW",
    "RfeCta+PodRWAL+RfeCta+FenceScdRW",
];

/// The tests of the read-modify-write family (`--rmw`, size 5) whose herd7 Ok/No differs
/// between `models/ptx-7.5.cat` and Dat3M's `ptx-v7.5.cat`: again only docs/divergences.md's
/// model difference 2. Each has a `fence.sc` (`FenceScdWR`, `FenceScdWREX`) on one side and a
/// release or acquire that is not a fence on the other: `st.release` (`PodWWPL`), `ld.acquire`
/// (`PodRRAP`), or an atomic's own semantics (`RmwXL`, `RmwAL`, `RmwRedXL`); an atomic on the
/// path (`Rmw`, `RmwAdd`, …) only carries the observation (§8.9.2).
const RMW_DOCUMENTED_DIVERGENCES: &[&str] = &[
    "Coe+PodWWPL+Coe+FenceScdWREX+PodRW",
    "Coe+PodWWPL+Coe+FenceScdWREX+PosRW",
    "Fre+Coe+PodWWPL+Coe+FenceScdWREX",
    "Fre+Coi+PodWWPL+Coe+FenceScdWREX",
    "Fre+PodWR+RmwAL+Coe+FenceScdWREX",
    "Fre+PodWR+RmwRedXL+Coe+FenceScdWREX",
    "Fre+PodWR+RmwXL+Coe+FenceScdWREX",
    "Fre+PodWW+PodWWPL+Coe+FenceScdWREX",
    "Fre+PodWWPL+Coe+FenceScdWREX+PodRR",
    "Fre+PodWWPL+Coe+FenceScdWREX",
    "Fre+PodWWPL+Coe+PodWWEE+FenceScdWR",
    "Fre+PodWWPL+Coe+PodWWEE+FenceScdWREX",
    "Fre+PodWWPL+PosWR+Fre+FenceScdWREX",
    "Rfe+Fre+FenceScdWREX+Fre+PodWWPL",
    "Rfe+PodRRAP+Fre+FenceScdWR+PodRW",
    "Rfe+PodRRAP+Fre+FenceScdWR+PosRW",
    "Rfe+PodRRAP+Fre+FenceScdWR+Rmw",
    "Rfe+PodRRAP+Fre+FenceScdWR+RmwAX",
    "Rfe+PodRRAP+Fre+FenceScdWR+RmwAdd",
    "Rfe+PodRRAP+Fre+FenceScdWR+RmwCas",
    "Rfe+PodRRAP+Fre+FenceScdWR+RmwRed",
    "Rfe+PodRRAP+Fre+FenceScdWREX+PodRW",
    "Rfe+PodRRAP+Fre+FenceScdWREX+PosRW",
    "Rfe+PodRW+FenceScdWR+Fre+PodWWPL",
    "Rfe+PodRW+FenceScdWREX+Fre+PodWWPL",
    "Rfe+PosRW+FenceScdWR+Fre+PodWWPL",
    "Rfe+PosRW+FenceScdWREX+Fre+PodWWPL",
    "Rfe+Rmw+FenceScdWR+Fre+PodWWPL",
    "Rfe+RmwAdd+FenceScdWR+Fre+PodWWPL",
    "Rfe+RmwCas+FenceScdWR+Fre+PodWWPL",
    "Rfe+RmwXL+FenceScdWR+Fre+PodWWPL",
    "Rfi+Fre+FenceScdWREX+Fre+PodWWPL",
];

fn family(list: &str, size: usize) -> Vec<Generated> {
    let vocab = edges::parse_edges(list).unwrap();
    let bounds = FamilyBounds::new(size, 4, 5000);
    gen::family(&vocab, &bounds, &EmitOptions::default()).unwrap().tests
}

fn decide(t: &Generated, model: &CatModel) -> (Verdict, bool) {
    gen::decide(t, &ptxmm::Config::new(model.clone(), model.title())).unwrap_or_else(|e| panic!("{}: {e}\n{}", t.name, t.text))
}

#[test]
fn generic_family_matches_dat3m_except_documented_divergences() {
    let tests = family(edges::GENERIC_EDGES, 4);
    assert!(tests.len() > 500, "the size-4 generic family has {} tests", tests.len());
    matches_dat3m_except("gen family", &tests, DOCUMENTED_DIVERGENCES);
}

#[test]
fn rmw_family_matches_dat3m_except_documented_divergences() {
    let tests = family(edges::RMW_EDGES, 5);
    assert!(tests.len() > 1000, "the size-5 rmw family has {} tests", tests.len());
    // Every read-modify-write form is in the family.
    for form in ["Rmw+", "RmwAdd", "RmwCas", "RmwRed+", "RmwAX", "RmwXL", "RmwAL", "RmwRedXL", "EE", "EX", "DX"] {
        assert!(tests.iter().any(|t| format!("{}+", t.name).contains(form)), "no test with {form}");
    }
    matches_dat3m_except("rmw family", &tests, RMW_DOCUMENTED_DIVERGENCES);
}

/// Decide `tests` under ptx-7.5 (each Allowed or Forbidden, and the default model agreeing)
/// and compare with Dat3M's `ptx-v7.5.cat`: the tests that differ are exactly `documented`.
fn matches_dat3m_except(what: &str, tests: &[Generated], documented: &[&str]) {
    use rayon::prelude::*;
    let start = std::time::Instant::now();
    let ours = ptxmm::config::models::builtin("ptx-7.5").unwrap();
    let full = ptxmm::config::models::builtin("ptx").unwrap();
    let verdicts: Vec<(Verdict, bool)> = tests.par_iter().map(|t| decide(t, &ours)).collect();
    // Every test is decided (none stopped by a limit or inconclusive), and the default model,
    // which adds the asynchronous operations, answers the generic tests as ptx-7.5 does.
    for (t, (v, ok)) in tests.iter().zip(&verdicts) {
        assert!(matches!(v, Verdict::Allowed | Verdict::Forbidden), "{}: {v:?}", t.name);
        assert_eq!(decide(t, &full).1, *ok, "{}: ptx and ptx-7.5 differ", t.name);
    }
    let Some(dat3m) = common::dat3m() else { return };
    let theirs = ptxmm::config::models::from_file(&dat3m.join("cat/ptx-v7.5.cat")).unwrap();
    let differing: BTreeSet<String> =
        tests.par_iter().zip(&verdicts).filter(|(t, (_, ok))| decide(t, &theirs).1 != *ok).map(|(t, _)| t.name.clone()).collect();
    let documented: BTreeSet<String> = documented.iter().map(|s| s.to_string()).collect();
    eprintln!(
        "{what}: {} tests, {} agree, {} documented divergences ({:.1}s)",
        tests.len(),
        tests.len() - differing.len(),
        differing.intersection(&documented).count(),
        start.elapsed().as_secs_f64()
    );
    let undocumented: Vec<_> = differing.difference(&documented).collect();
    let vanished: Vec<_> = documented.difference(&differing).collect();
    assert!(undocumented.is_empty(), "divergences from Dat3M's ptx-v7.5.cat not in docs/divergences.md: {undocumented:?}");
    assert!(vanished.is_empty(), "documented divergences that no longer differ (update the list and the docs): {vanished:?}");
}

/// One cycle per asynchronous edge kind, with the verdict of the default model. `hand` marks
/// the verdicts checked by hand against the spec (the reason in the comment).
const ASYNC_CASES: &[(&str, Verdict, bool)] = &[
    // A release arrive and an acquire wait order the write before the read (§9.7.13.15).
    ("MbarSyncsWR FreCta", Verdict::Forbidden, true),
    // Relaxed arrive and wait synchronise nothing.
    ("MbarRelaxedsWR FreCta", Verdict::Allowed, true),
    // A remote .release.cluster arrive and an .acquire.cluster wait (digest S8b).
    ("MbarClustersWR FreCluster", Verdict::Forbidden, true),
    // barrier.cluster.arrive.release / wait.acquire order the two CTAs.
    ("BarClustersWR FreCluster", Verdict::Forbidden, true),
    // arrive.relaxed gives no release.
    ("BarClusterRelaxedsWR FreCluster", Verdict::Allowed, true),
    // The copy's write completes before wait_group returns (digest S1).
    ("FreCta CoeCta CpAsyncWaitsWR", Verdict::Forbidden, true),
    // Without the wait the read of the destination races with the copy: undefined (§9.7.9.25.1).
    ("FreCta CoeCta CpAsyncNoWaitsWR", Verdict::Undefined, true),
    // cp.async.mbarrier.arrive.noinc: the phase completes after the copy (digest S3).
    ("CpAsyncMbarsWR FreCta", Verdict::Forbidden, true),
    // complete_tx on the consumer's mbarrier (digest S4).
    ("TmaLoadMbarsWR FreCta", Verdict::Forbidden, true),
    ("TmaLoadWaitdWW MbarSyncdWR FreCta", Verdict::Forbidden, false),
    // A multicast TMA load from another CTA of the cluster writes the reader's CTA and performs
    // complete-tx on the mbarrier at the same offset there (§9.7.9.25.4.1); the reader armed it
    // with expect_tx and waits with the default .acquire.cta (tests/async/M01).
    ("TmaMulticastsWR FreCluster", Verdict::Forbidden, true),
    // A generic write, synchronisation, fence.proxy.async, TMA store: the store reads the
    // value (digest S6b, user case 3 fixed) ...
    ("FreCta MbarSyncsWW TmaStoreFencedsWR", Verdict::Forbidden, true),
    // ... and without the proxy fence, a mixed-size race: undefined (user case 3).
    ("FreCta MbarSyncsWW TmaStoreNoFencesWR", Verdict::Undefined, true),
    ("RfeCta PodRW MbarSyncdWR WaitReadsRW", Verdict::Forbidden, false),
    ("FreCta MbarSyncsWW ReduceFencedsWR", Verdict::Forbidden, false),
];

#[test]
fn every_asynchronous_kind_has_a_test() {
    let model = ptxmm::config::models::builtin("ptx").unwrap();
    let mut kinds = BTreeSet::new();
    for &(cycle, expected, _) in ASYNC_CASES {
        let edges = edges::parse_edges(cycle).unwrap();
        kinds.extend(edges.iter().filter_map(|e| e.async_kind()));
        let test = gen::generate(&edges, 4, &EmitOptions::default()).unwrap_or_else(|e| panic!("{cycle}: {e}"));
        let (verdict, _) = decide(&test, &model);
        assert_eq!(verdict, expected, "{cycle}\n{}", test.text);
    }
    assert_eq!(
        kinds.len(),
        edges::ASYNC_KINDS.len(),
        "kinds without a test: {:?}",
        edges::ASYNC_KINDS.iter().filter(|k| !kinds.contains(k)).collect::<Vec<_>>()
    );
}

/// One cycle per read-modify-write form, with the default model's verdict, each checked by
/// hand against the spec (the reason in the comment).
const RMW_CASES: &[(&str, Verdict)] = &[
    // MP whose acquire is an `atom.acquire.exch` reading the release write (§8.9: an atomic's
    // acquire read is an acquire pattern).
    ("PodWWPL Rfe RmwAX PodWR Fre", Verdict::Forbidden),
    // The same with a relaxed atomic: no acquire, no order.
    ("PodWWPL Rfe Rmw PodWR Fre", Verdict::Allowed),
    // A release write observed through an atomic of a third thread (observation order §8.9.2:
    // W obs Z and Z obs R for an atomic Z, `atom` or `red`): the acquire read synchronises with
    // the release write, so the message is seen.
    ("PodWWPL Rfe Rmw Rfe PodRRAP Fre", Verdict::Forbidden),
    ("PodWWPL Rfe RmwAdd Rfe PodRRAP Fre", Verdict::Forbidden),
    ("PodWWPL Rfe RmwCas Rfe PodRRAP Fre", Verdict::Forbidden),
    ("PodWWPL Rfe RmwRed Rfe PodRRAP Fre", Verdict::Forbidden),
    // A relaxed ld/st in the middle is no atomic: the chain breaks (ISA2 without the middle
    // synchronisation).
    ("PodWWPL Rfe PodRW Rfe PodRRAP Fre", Verdict::Allowed),
    // MP whose flag is written by a release atomic (`atom.release`, a release pattern): the
    // write before it is ordered; a relaxed atomic orders nothing. Two `atom.acq_rel` (one
    // writes the flag, the other reads it) synchronise as well.
    ("PodWR RmwXL Rfe PodRRAP Fre", Verdict::Forbidden),
    ("PodWR Rmw Rfe PodRRAP Fre", Verdict::Allowed),
    ("PodWR RmwAL Rfe RmwAL PodWR Fre", Verdict::Forbidden),
    // SB whose loads are atomics: relaxed or acq_rel, nothing orders a write before a later read
    // of another location (no fence.sc): allowed; with fence.sc (Fence-SC order, §8.9.3)
    // forbidden.
    ("PodWR Rmw Coe PodWR Rmw Coe", Verdict::Allowed),
    ("PodWR RmwAL Coe PodWR RmwAL Coe", Verdict::Allowed),
    ("FenceScdWR Rmw Coe FenceScdWR Rmw Coe", Verdict::Forbidden),
    // SB whose stores are `atom.exch` (E) or `red.add` (D): the same answers.
    ("PodWREX Fre PodWREX Fre", Verdict::Allowed),
    ("PodWRDX Fre PodWRDX Fre", Verdict::Allowed),
    ("FenceScdWREX Fre FenceScdWREX Fre", Verdict::Forbidden),
    // 2+2W with atom.exch (and with a red.add first): relaxed writes to two locations are not
    // ordered, so both coherence orders can contradict po.
    ("PodWWEE Coe PodWWEE Coe", Verdict::Allowed),
    ("PodWWDE Coe PodWWDE Coe", Verdict::Allowed),
    // S with a red.add as the last write: the acquire read orders it after the release write.
    ("PodWWPL Rfe PodRWAD Coe", Verdict::Forbidden),
    // Coherence through an atomic: the atomic reads the thread's own write and another thread
    // then reads the atomic's value, then the initial value (CoRR).
    ("Rfi Rmw Rfe PosRR Fre", Verdict::Forbidden),
];

#[test]
fn every_rmw_form_has_a_hand_checked_test() {
    let model = ptxmm::config::models::builtin("ptx").unwrap();
    let mut ops = BTreeSet::new();
    let mut atomic_writes = BTreeSet::new();
    for &(cycle, expected) in RMW_CASES {
        let edges = edges::parse_edges(cycle).unwrap();
        for e in &edges {
            if let edges::EdgeKind::Rmw(op) = e.kind {
                ops.insert(op);
            }
            if let Some((_, w)) = e.annots.filter(|_| e.dst == edges::Dir::W) {
                atomic_writes.insert(format!("{w:?}"));
            }
        }
        let test = gen::generate(&edges, 4, &EmitOptions::default()).unwrap_or_else(|e| panic!("{cycle}: {e}"));
        let (verdict, _) = decide(&test, &model);
        assert_eq!(verdict, expected, "{cycle}\n{}", test.text);
    }
    assert_eq!(ops.len(), edges::RMW_OPS.len(), "forms with a test: {ops:?}");
    assert!(atomic_writes.contains("Exch") && atomic_writes.contains("Red"), "{atomic_writes:?}");
}

#[test]
fn rmw_instructions_and_values() {
    let text = |cycle: &str| gen::generate(&edges::parse_edges(cycle).unwrap(), 4, &EmitOptions::default()).unwrap().text;
    // The atomic reads the value before its write's (atomicity): 1, and writes 2.
    let t = text("PodWWPL Rfe RmwAX PodWR Fre");
    assert!(t.contains("atom.acquire.gpu.exch r0, x, 2") && t.contains("P0:r0 == 1 /\\ P0:r1 == 0 /\\ x == 2"), "{t}");
    let t = text("PodWWPL Rfe RmwAdd Rfe PodRRAP Fre");
    assert!(t.contains("atom.relaxed.gpu.add r0, x, 1") && t.contains("P0:r0 == 1"), "{t}");
    let t = text("PodWWPL Rfe RmwCas Rfe PodRRAP Fre");
    assert!(t.contains("atom.relaxed.gpu.cas r0, x, 1, 2"), "{t}");
    // red has no register: its read is checked through the value it writes.
    let t = text("PodWWPL Rfe RmwRedXL Rfe PodRRAP Fre");
    assert!(t.contains("red.release.gpu.add x, 1") && t.contains("exists (P1:r0 == 2 /\\ P1:r1 == 0 /\\ x == 2)"), "{t}");
    let t = text("PodWR RmwAL Coe PodWR RmwAL Coe");
    assert!(t.contains("atom.acq_rel.gpu.exch r0, y, 1"), "{t}");
    // A data dependency into a red.add adds 1 through the dependency.
    let t = text("PodWW Rfe DpDatadWXD Coe");
    assert!(t.contains("add r1, r1, 1") && t.contains("red.relaxed.gpu.add y, r1"), "{t}");
    // Two red.add to one location end with the same value in both orders.
    let e = gen::generate(&edges::parse_edges("PodWWDD Coe PodWWDD Coe").unwrap(), 4, &EmitOptions::default()).unwrap_err();
    assert_eq!(e, gen::cycle::Reject::ReductionsOnly);
    // An atomic's events take no other edge's annotation.
    let e = gen::generate(&edges::parse_edges("PodWRXA Rmw Coe PodWR Rmw Coe").unwrap(), 4, &EmitOptions::default()).unwrap_err();
    assert_eq!(e, gen::cycle::Reject::Annotations);
}

#[test]
fn multicast_writes_both_ctas_and_each_waits_on_its_own_mbarrier() {
    let test = gen::generate(&edges::parse_edges("TmaMulticastsWR FreCluster").unwrap(), 4, &EmitOptions::default()).unwrap();
    let t = &test.text;
    // The reader's CTA holds the destination and its mbarrier, the issuer's CTA a mirror of both
    // at the same offsets; ctaMask 0b11 selects cluster ranks 0 and 1.
    assert!(
        t.contains("{ x[16] @ shared cta 0; bar0 @ shared cta 0 mbarrier(1); m1[16] @ shared cta 1; bar2 @ shared cta 1 mbarrier(1);"),
        "{t}"
    );
    assert!(t.contains(".multicast::cluster [m1], [c3], 16, [bar2], 3"), "{t}");
    assert!(t.contains("mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar0], 16"), "{t}");
    // The issuer waits for its own copy at the end, so the final state is defined.
    assert_eq!(t.matches("mbarrier.try_wait.parity").count(), 2, "{t}");
    assert_eq!(decide(&test, &ptxmm::config::models::builtin("ptx").unwrap()).0, Verdict::Forbidden, "{t}");
}

#[test]
fn the_asynchronous_family_covers_every_kind_and_decides_every_test() {
    use rayon::prelude::*;
    let tests = family(edges::ASYNC_EDGES, 4);
    let model = ptxmm::config::models::builtin("ptx").unwrap();
    let verdicts: Vec<Verdict> = tests.par_iter().map(|t| decide(t, &model).0).collect();
    let mut kinds = BTreeSet::new();
    for (t, v) in tests.iter().zip(&verdicts) {
        assert!(matches!(v, Verdict::Allowed | Verdict::Forbidden | Verdict::Undefined), "{}: {v:?}", t.name);
        kinds.extend(t.edges.iter().filter_map(|e| e.async_kind()));
    }
    assert!(kinds.len() >= 10 && kinds.len() == edges::ASYNC_KINDS.len(), "kinds in the family: {kinds:?}");
    let count = |v: Verdict| verdicts.iter().filter(|&&x| x == v).count();
    eprintln!(
        "async family: {} tests ({} Allowed, {} Forbidden, {} Undefined), {} kinds",
        tests.len(),
        count(Verdict::Allowed),
        count(Verdict::Forbidden),
        count(Verdict::Undefined),
        kinds.len()
    );
    // Each kind that orders something gives both answers somewhere in the family.
    assert!(count(Verdict::Forbidden) > 0 && count(Verdict::Allowed) > 0 && count(Verdict::Undefined) > 0);
}

#[test]
fn the_index_is_a_suite_that_passes() {
    let dir = std::env::temp_dir().join(format!("ptxmm-gen-index-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let tests = family("Rfe Fre Coe PodWW PodWR PodRW PodRR PodWWPL PodRRAP FenceScdWR", 4);
    let model = ptxmm::config::models::builtin("ptx").unwrap();
    let counts = gen::write_family(&dir, &tests, Some(&ptxmm::Config::new(model.clone(), "ptx"))).unwrap();
    assert_eq!(counts.values().sum::<usize>(), tests.len());
    let failures = common::run_csv("gen index", &dir.join("index.csv"), &dir, &model);
    assert!(failures.is_empty(), "{failures:?}");
    let text = std::fs::read_to_string(dir.join("index.csv")).unwrap();
    assert!(text.contains("Rfe+PodRR+Fre+PodWW.litmus,Allowed"), "{text}");
    assert!(text.contains("Rfe+PodRRAP+Fre+PodWWPL.litmus,Forbidden"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn classic_shapes_are_named_and_decided_as_expected() {
    let model = ptxmm::config::models::builtin("ptx").unwrap();
    for (cycle, shape, verdict) in [
        ("PodWW Rfe PodRR Fre", "MP", Verdict::Allowed),
        ("PodWWPL Rfe PodRRAP Fre", "MP", Verdict::Forbidden),
        ("PodWWPL RfeSys PodRRAP FreSys", "MP", Verdict::Allowed),
        ("FenceScdWR Fre FenceScdWR Fre", "SB", Verdict::Forbidden),
        ("FenceScCtadWR Fre FenceScCtadWR Fre", "SB", Verdict::Allowed),
        ("FenceScCtadWR FreCta FenceScCtadWR FreCta", "SB", Verdict::Forbidden),
        ("DpDatadW Rfe DpDatadW Rfe", "LB", Verdict::Forbidden),
        ("DpAddrdW Rfe DpCtrldW Rfe", "LB", Verdict::Forbidden),
        ("PodRW Rfe PodRW Rfe", "LB", Verdict::Allowed),
        ("Rfe PosRR Fre", "CoRR", Verdict::Forbidden),
        ("PodWW Coe PodWW Coe", "2+2W", Verdict::Allowed),
    ] {
        let edges = edges::parse_edges(cycle).unwrap();
        assert_eq!(gen::emit::shape_name(&edges), Some(shape), "{cycle}");
        let test = gen::generate(&edges, 4, &EmitOptions::default()).unwrap();
        assert!(test.text.contains(&format!("(shape {shape})")), "{}", test.text);
        assert_eq!(decide(&test, &model).0, verdict, "{cycle}\n{}", test.text);
    }
}

fn ptxmm() -> Command {
    Command::cargo_bin("ptxmm").unwrap()
}

#[test]
fn cli_one_cycle_to_stdout_and_to_a_folder() {
    let out = ptxmm().args(["gen", "PodWW", "Rfe", "PodRR", "Fre"]).assert().success().get_output().stdout.clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("PTX PodWW+Rfe+PodRR+Fre\n"), "{text}");
    assert!(text.contains("exists (P0:r0 == 1 /\\ P0:r1 == 0)"), "{text}");
    let dir = std::env::temp_dir().join(format!("ptxmm-gen-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    ptxmm().args(["gen", "PodWWPL", "Rfe", "PodRRAP", "Fre", "-o"]).arg(&dir).assert().success();
    let file = dir.join("PodWWPL+Rfe+PodRRAP+Fre.litmus");
    ptxmm().arg("run").arg(&file).assert().success().stdout(predicates::str::starts_with("Verdict: Forbidden"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cli_scope_narrows_every_access() {
    // Release/acquire at .cta between two CTAs: not morally strong, so MP is allowed.
    let out = ptxmm().args(["gen", "--scope", "cta", "PodWWPL", "Rfe", "PodRRAP", "Fre"]).assert().success().get_output().stdout.clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("st.release.cta") && text.contains("ld.acquire.cta"), "{text}");
    assert!(text.contains("`ptxmm gen PodWWPL Rfe PodRRAP Fre --scope cta`"), "{text}");
    ptxmm().args(["run", "-"]).write_stdin(text).assert().success().stdout(predicates::str::starts_with("Verdict: Allowed"));
}

#[test]
fn cli_family_writes_the_tests_and_the_index() {
    let dir = std::env::temp_dir().join(format!("ptxmm-gen-family-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    ptxmm()
        .args(["gen", "--family", "--size", "4", "--edges", "Rfe,Fre,PodWW,PodRR,PodWWPL,PodRRAP", "-o"])
        .arg(&dir)
        .assert()
        .success()
        .stderr(predicates::str::contains("gen family: 10 tests"));
    ptxmm().arg("suite").arg(dir.join("index.csv")).assert().success();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 14's check through the user's path: `ptxmm gen --family` then `ptxmm compare` of
/// `ptx-7.5` against Dat3M's `ptx-v7.5.cat` lists exactly the documented divergences.
#[test]
fn compare_on_the_generated_family_lists_the_documented_divergences() {
    let Some(dat3m) = common::dat3m() else { return };
    let dir = std::env::temp_dir().join(format!("ptxmm-gen-compare-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    ptxmm().args(["gen", "--family", "--size", "4", "--no-decide", "-o"]).arg(&dir).assert().success();
    let out = ptxmm()
        .args(["compare", "--json", "--left-model", "ptx-7.5", "--right-cat"])
        .arg(dat3m.join("cat/ptx-v7.5.cat"))
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "differences exist: {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let differing: BTreeSet<String> = report["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| Path::new(d["test"].as_str().unwrap()).file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let documented: BTreeSet<String> = DOCUMENTED_DIVERGENCES.iter().map(|s| s.to_string()).collect();
    assert_eq!(differing, documented);
    assert!(report["errors"].as_array().is_none_or(|e| e.is_empty()), "{}", report["errors"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cli_rmw_family_and_names() {
    let dir = std::env::temp_dir().join(format!("ptxmm-gen-rmw-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    ptxmm().args(["gen", "--family", "--rmw", "-o"]).arg(&dir).assert().success().stderr(predicates::str::contains("gen family: 99 tests"));
    ptxmm().arg("suite").arg(dir.join("index.csv")).assert().success();
    let _ = std::fs::remove_dir_all(&dir);
    ptxmm()
        .args(["gen", "--family", "--rmw", "--async", "-o"])
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("cannot be used with"));
    // `red` has no acquire; the error lists the read-modify-write forms.
    ptxmm()
        .args(["gen", "PodWR", "RmwRedAL", "Coe", "PodWR", "Rmw", "Coe"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("unknown edge `RmwRedAL`").and(predicates::str::contains("RmwAdd RmwCas RmwRed")));
    ptxmm()
        .args(["gen", "PodWRDX", "Fre", "PodWRDX", "Fre"])
        .assert()
        .success()
        .stdout(predicates::str::contains("red.relaxed.gpu.add x, 1"));
}

#[test]
fn cli_rejections_name_the_fix() {
    ptxmm().args(["gen", "PodWW", "Rfx"]).assert().code(2).stderr(predicates::str::contains("unknown edge `Rfx`; valid edges:"));
    ptxmm().args(["gen", "Rfe", "Fre"]).assert().code(2).stderr(predicates::str::contains("a read would need two different values"));
    ptxmm().args(["gen", "--family"]).assert().code(2).stderr(predicates::str::contains("-o DIR"));
    let dir = std::env::temp_dir().join(format!("ptxmm-gen-budget-{}", std::process::id()));
    ptxmm()
        .args(["gen", "--family", "--max-tests", "5", "-o"])
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("more than 5 tests (raise --max-tests"));
    let _ = std::fs::remove_dir_all(&dir);
}
