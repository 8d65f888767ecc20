//! Every finding kind has a hint that names the fix; applying the hint removes the finding.
//!
//! `tests/hints/NAME.litmus` has the finding; `tests/hints/NAME.fixed.litmus` is the same program
//! with exactly the hinted change applied. Also: a cat file's `flag` that is not a race check is
//! reported as a flag, not as a data race.

use ptxmm::cat::CatModel;
use ptxmm::config::models;
use ptxmm::decide::findings::Finding;
use ptxmm::decide::{Decider, Outcome};
use ptxmm::diag::SourceFile;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

fn outcome(path: &Path, model: &CatModel) -> Outcome {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file = SourceFile::new(path.display().to_string(), text);
    let test = ptxmm::litmus::parse(&file).unwrap_or_else(|d| panic!("{}: {d:?}", path.display()));
    let program = ptxmm::program::lower(&test, &file).unwrap_or_else(|d| panic!("{}: {d:?}", path.display()));
    Decider::new(&ptxmm::Config::new(model.clone(), model.title())).verdict(&program).unwrap()
}

fn findings(o: &Outcome) -> Vec<&Finding> {
    o.undefined.iter().chain(&o.races).collect()
}

/// `NAME.litmus` has a `rule` finding whose hint mentions every `key` and none of `not`;
/// `NAME.fixed.litmus` has no `rule` finding at all.
fn check(name: &str, rule: &str, keys: &[&str], not: &[&str]) {
    let model = models::builtin(models::DEFAULT_MODEL).unwrap();
    let before = outcome(&dir().join(format!("hints/{name}.litmus")), &model);
    let all = findings(&before);
    let f = all.iter().find(|f| f.rule == rule).unwrap_or_else(|| panic!("{name}: no {rule} finding in {all:#?}"));
    let hint = f.hint.as_deref().unwrap_or_else(|| panic!("{name}: the {rule} finding has no hint"));
    for k in keys {
        assert!(hint.contains(k), "{name}: the hint should mention `{k}`: {hint}");
    }
    for k in not {
        assert!(!hint.contains(k), "{name}: the hint should not mention `{k}`: {hint}");
    }
    assert!(!f.message.contains("hint"), "{name}: the hint is not part of the message");
    assert!(!f.sites.is_empty() && f.sites.iter().all(|s| s.line > 0 && s.thread.starts_with('P')), "{name}: sites {:?}", f.sites);
    let after = outcome(&dir().join(format!("hints/{name}.fixed.litmus")), &model);
    let left: Vec<_> = findings(&after).into_iter().filter(|f| f.rule == rule).collect();
    assert!(left.is_empty(), "{name}: applying the hint leaves {left:#?}");
}

#[test]
fn forgotten_expect_tx_hint_is_expect_tx() {
    check("expect-tx", "U1-read-before-completion", &["mbarrier.expect_tx", "[bar], 16"], &["fence.proxy"]);
}

#[test]
fn read_wait_before_release_hint_is_full_wait() {
    check("wait-read-release", "U1-read-before-completion", &["cp.async.bulk.wait_group 0", "without .read"], &["fence.proxy"]);
}

#[test]
fn other_threads_cp_async_hint_is_wait_then_barrier() {
    check("cp-async-other-thread", "U1-read-before-completion", &["in P0", "cp.async.wait_all", "bar.sync"], &["fence.proxy"]);
}

#[test]
fn generic_then_async_hint_is_proxy_fence() {
    check("proxy-fence", "mixed-size-race", &["fence.proxy.async", "in P1"], &[]);
}

#[test]
fn weak_race_hint_is_strong_accesses() {
    check("weak-race", "data-race", &[".relaxed.gpu"], &[]);
}

#[test]
fn scope_race_hint_is_wider_scope() {
    check("scope-race", "data-race", &[".gpu"], &[]);
}

#[test]
fn mixed_size_race_hint_is_synchronization() {
    check("mixed-size-race", "mixed-size-race", &["bar.sync", "cp.async.bulk.wait_group 0"], &["fence.proxy"]);
}

#[test]
fn u1_in_one_thread_hint_is_wait() {
    check("u1-same-thread", "U1-read-before-completion", &["cp.async.wait_all"], &["bar.sync"]);
}

#[test]
fn u2_hint_is_read_wait() {
    check("u2-source", "U2-source-modified-before-completion", &["cp.async.bulk.wait_group.read 0"], &[]);
}

#[test]
fn u3_hint_is_separate_groups() {
    check("u3-same-group", "U3-same-group-same-destination", &["cp.async.commit_group", "cp.async.wait_group 0"], &[]);
}

#[test]
fn m1_hint_is_barrier_after_init() {
    check("m1-init", "M1-use-not-ordered-after-init", &["bar.sync", "fence.mbarrier_init"], &[]);
}

#[test]
fn m2_hint_is_inval() {
    check("m2-reuse", "M2-ordinary-write-to-valid-mbarrier", &["mbarrier.inval"], &[]);
}

#[test]
fn mbarrier_misuse_hint_names_the_operand() {
    check("mbarrier-parity", "undefined-operation", &["try_wait.parity", "0 or 1"], &[]);
}

#[test]
fn copy_size_hint_is_multiple_of_16() {
    check("copy-size", "undefined-operation", &["multiple of 16"], &[]);
}

#[test]
fn prefetch_size_hint_is_multiple_of_16() {
    check("prefetch-size", "undefined-operation", &["multiple of 16", "cp.async.bulk.prefetch"], &["positive"]);
}

#[test]
fn one_finding_per_instruction_pair() {
    // A 16-byte copy read word by word in several executions: one U1, no race beside it.
    let model = models::builtin(models::DEFAULT_MODEL).unwrap();
    let o = outcome(&dir().join("hints/expect-tx.litmus"), &model);
    assert_eq!(o.undefined.len(), 1, "{:#?}", o.undefined);
    assert!(o.races.is_empty(), "{:#?}", o.races);
    let f = o.undefined.iter().next().unwrap();
    let threads: Vec<&str> = f.sites.iter().map(|s| s.thread.as_str()).collect();
    assert_eq!(threads, ["P0", "P1"]);
    assert_eq!(f.sites[0].part.as_deref(), Some("destination write"));
    assert!(f.message.contains("(P0 line 5)") && f.message.contains("(P1 line 9)"), "{}", f.message);
}

#[test]
fn a_cat_flag_that_is_not_a_race_is_reported_as_a_flag() {
    let dirs = [Path::new(env!("CARGO_MANIFEST_DIR")).join("models")];
    let model = CatModel::load(&dir().join("cat/flag-ext-rf.cat"), &dirs).unwrap();
    let o = outcome(&dir().join("hints/weak-race.fixed.litmus"), &model);
    assert!(o.flags.iter().any(|f| f == "has-ext-rf"), "{:?}", o.flags);
    assert!(o.races.is_empty(), "has-ext-rf is not a race check: {:#?}", o.races);
    assert!(o.flag_findings.iter().all(|f| f.rule == "has-ext-rf" && f.hint.is_none()), "{:#?}", o.flag_findings);
    assert!(!o.flag_findings.is_empty());
    let text = ptxmm::decide::report::verdict_block(&o);
    assert!(text.contains("Flagged by the model (2):") && !text.contains("Data races"), "{text}");
    assert!(ptxmm::decide::report::herd_block(&o).contains("Flag has-ext-rf"));
}

#[test]
fn written_nc_location_hint_is_a_plain_load() {
    check("nc-written", "NC-location-written", &["`ld.global`", "instead of `ld.global.nc.u32 %r1, [g]`"], &["fence.proxy"]);
}

/// A fence whose scope does not contain both threads (`membar.cta` between CTAs): the hint names
/// the scope as the bug; with `membar.gl` the race is gone.
#[test]
fn narrow_fence_scope_hint_names_the_scope() {
    check("membar-cta-scope", "data-race", &["the scope .cta of `membar.cta`", "does not contain both threads", "use .gpu"], &[]);
}

/// A race between a write and a read: the release goes after the write and the acquire before the
/// read, whichever comes first in the text.
#[test]
fn race_hint_puts_the_release_after_the_write() {
    let model = models::builtin(models::DEFAULT_MODEL).unwrap();
    let o = outcome(&dir().join("hints/race-writer-first.litmus"), &model);
    let hints: Vec<&str> = findings(&o).iter().filter_map(|f| f.hint.as_deref()).collect();
    assert_eq!(hints.len(), 2, "{hints:#?}");
    for h in hints {
        let after = h.split("a `st.release.gpu` of a flag after ").nth(1).unwrap_or_else(|| panic!("{h}"));
        assert!(after.starts_with("`st.weak"), "the release must follow the write: {h}");
    }
}
