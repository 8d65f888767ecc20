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
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// The hints `explain` prints for the test at `path` (one per finding of the execution it shows).
fn explain_hints(path: &Path, model: &CatModel) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file = SourceFile::new(path.display().to_string(), text);
    let test = ptxmm::litmus::parse(&file).unwrap_or_else(|d| panic!("{}: {d:?}", path.display()));
    let program = ptxmm::program::lower(&test, &file).unwrap_or_else(|d| panic!("{}: {d:?}", path.display()));
    let x = Decider::new(&ptxmm::Config::new(model.clone(), model.title())).explain(&program).unwrap();
    x.text.lines().filter_map(|l| l.trim_start().strip_prefix("hint: ")).map(str::to_string).collect()
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

/// The programs with the hint of `NAME.litmus` applied: `NAME.fixed.litmus`, and where the hint
/// offers alternatives, `NAME.fixed-ALTERNATIVE.litmus`.
fn fixed_files(name: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir().join("hints"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let f = p.file_name().unwrap().to_str().unwrap();
            f == format!("{name}.fixed.litmus") || (f.starts_with(&format!("{name}.fixed-")) && f.ends_with(".litmus"))
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "{name}: no fixed program");
    out
}

/// `NAME.litmus` has a `rule` finding whose hint mentions every `key` and none of `not`;
/// each fixed program (`NAME.fixed*.litmus`) has no finding at all: applying the hint removes
/// the finding and brings no new one (of any rule).
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
    // explain gives the hints run gives (for the findings of the execution it shows), never
    // another one: a user who reads either gets the same fix.
    let run_hints: BTreeSet<&str> = all.iter().filter_map(|f| f.hint.as_deref()).collect();
    for h in explain_hints(&dir().join(format!("hints/{name}.litmus")), &model) {
        assert!(run_hints.contains(h.as_str()), "{name}: explain's hint is none of run's: {h}\nrun's: {run_hints:#?}");
    }
    for fixed in fixed_files(name) {
        let after = outcome(&fixed, &model);
        let left: Vec<_> = findings(&after).into_iter().chain(&after.flag_findings).collect();
        assert!(left.is_empty(), "{}: applying the hint leaves or brings {left:#?}", fixed.display());
    }
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

/// The release/acquire pair is in the test: the hint names it and makes the read wait for it,
/// never "add a release of a flag" (issue 44).
#[test]
fn race_beside_an_existing_pair_hint_is_wait_for_it() {
    check(
        "pair-not-waited",
        "data-race",
        &["`st.release.gpu flag, 1` (P0 line 6) and `ld.acquire.gpu r0, flag` (P1 line 5)", "loop on the acquire"],
        &["of a flag after"],
    );
}

/// A pair of too narrow a scope: widen it, without suggesting a second pair.
#[test]
fn narrow_pair_hint_is_wider_scope_only() {
    check("pair-scope", "data-race", &["use .gpu (or wider)"], &["of a flag after", "release/acquire pair"]);
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

/// A thread refilling a buffer that another thread still reads (issue 23, item 9): the hint
/// orders the read before the refill, never the refill's completion before the read, and names
/// lines in program order. With a barrier after the refill: move the refill after it.
#[test]
fn refill_hint_orders_the_read_before_the_refill() {
    check(
        "refill-cp-async",
        "U1-read-before-completion",
        &["refills `s`", "order the read before the refill", "move it after P0's `bar.sync 0` (line 11)"],
        &["completes for P0 at"],
    );
}

/// A TMA refill after an mbarrier hand-off of the first fill: a barrier (or an mbarrier
/// hand-off) between the read and the refill, and the proxy fence an async write after a generic
/// read needs. Both alternatives are applied (`.fixed` and `.fixed-handoff`).
#[test]
fn tma_refill_hint_is_barrier_and_proxy_fence() {
    check(
        "refill-tma",
        "U1-read-before-completion",
        &[
            "`bar.sync 0` in P1 after `ld.shared.u32 r0, [s]` (P1 line 9) and in P0 before",
            "mbarrier hand-off",
            "`fence.proxy.async` in P0",
        ],
        &["parity operand"],
    );
}

/// The wait for a copy placed after the barrier meant to publish it: move the wait (and its
/// commit) before the barrier.
#[test]
fn wait_after_barrier_hint_moves_the_wait_before_it() {
    check(
        "wait-after-barrier",
        "U1-read-before-completion",
        &["after P0's `bar.sync 0` (line 6)", "move the wait (and `cp.async.commit_group` (line 7) with it) before that barrier"],
        &[],
    );
}

/// Another thread reuses a TMA store's source after the issuing thread's `.read` wait, with no
/// barrier: the hint names the wait as present and asks for the barrier.
#[test]
fn reuse_after_read_wait_hint_is_a_barrier() {
    check(
        "reuse-barrier",
        "U2-source-modified-before-completion",
        &["`cp.async.bulk.wait_group.read 0` (P0 line 8) already waits", "`bar.sync 0` in both threads"],
        &["wait for the copy's source reads in P0"],
    );
}

/// Every reason of an `undefined-operation` finding that a litmus test can reach (issue 23,
/// item 9): `NAME.litmus` has it, its hint names the change (`keys`, none of `not`), and
/// `NAME.fixed.litmus`, with exactly that change, has no finding.
#[test]
fn undefined_operation_hints_remove_the_finding() {
    let cases: &[(&str, &[&str], &[&str])] = &[
        ("m1-uninit", &["`mbarrier.init` before `mbarrier.arrive"], &[]),
        ("m2-reinit", &["`mbarrier.inval` on `bar`", "before the new init `mbarrier.init.shared::cta.b64 [bar], 2`"], &[]),
        ("m3-init-count", &["give `mbarrier.init.shared::cta.b64 [bar], 0` (P0 line 5) an arrival count between 1 and 2^20-1"], &[]),
        ("m3-arrive-count", &["give `mbarrier.arrive.shared::cta.b64 _, [bar], 0` (P0 line 5) a count between 1 and 2^20-1"], &[]),
        // The pending count of an object initialised with 2^20-1, raised once more.
        ("m3-pending-overflow", &["issue fewer `cp.async.mbarrier.arrive`", "`.noinc`"], &[]),
        // The arrival count is set by the litmus declaration here (no `mbarrier.init`).
        ("arrive-underflow", &["raise its arrival count (`mbarrier(N)` in the declaration of `bar`)"], &["its `mbarrier.init`"]),
        ("m4-nocomplete", &["plain `mbarrier.arrive` (without .noComplete)"], &[]),
        ("m6-state", &["the current phase or the immediately preceding one", "`.parity` form"], &[]),
        ("m10-tx-count", &["(16 in this program)", "`mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 1048576` (P0 line 5)"], &[]),
        ("u6-range", &["reduce the size of `cp.async.bulk"], &[]),
        ("u5-align", &["align `g+8`", "to 16 bytes", "a multiple of 16"], &[]),
        ("u4-src-size", &["a src-size between 0 and its cp-size"], &[]),
        ("mapa-rank", &["the rank of a CTA of the cluster"], &[]),
        ("u13-space", &["`.shared::cta` for the executing CTA's shared memory"], &[]),
        ("copy-mbarrier", &["not the mbarrier object"], &[]),
        ("multicast-mask", &["clear bit 2 of the ctaMask"], &[]),
        ("mbarrier-other-cta", &["`mapa`", "in the CTA of the copy's destination"], &["complete-tx of"]),
    ];
    for (name, keys, not) in cases {
        check(name, "undefined-operation", keys, not);
    }
}

/// A line a hint names: `(P0 line 5)`, or `P0's `…` (line 5)` / `… (line 5)` with the thread
/// named last before it; `at` is where the reference ends in the hint.
struct LineRef {
    thread: String,
    line: usize,
    start: usize,
    end: usize,
}

/// The text of `hint` outside backquotes, with the backquoted spans blanked (same offsets).
fn prose(hint: &str) -> String {
    let mut inside = false;
    let mut out = String::with_capacity(hint.len());
    for c in hint.chars() {
        if c == '`' {
            inside = !inside;
        }
        if c == '`' || inside {
            out.extend(std::iter::repeat_n(' ', c.len_utf8()));
        } else {
            out.push(c);
        }
    }
    out
}

fn line_refs(hint: &str) -> Vec<LineRef> {
    let text = prose(hint);
    let mut out = Vec::new();
    let mut last_thread = String::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !text.is_char_boundary(i) {
            i += 1;
            continue;
        }
        if bytes[i] == b'P' && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric()) {
            let digits: String = text[i + 1..].chars().take_while(char::is_ascii_digit).collect();
            if !digits.is_empty() {
                last_thread = format!("P{digits}");
                let rest = &text[i + 1 + digits.len()..];
                if let Some(n) = rest.strip_prefix(" line ") {
                    let line: String = n.chars().take_while(char::is_ascii_digit).collect();
                    out.push(LineRef {
                        thread: last_thread.clone(),
                        line: line.parse().unwrap(),
                        start: i,
                        end: i + 1 + digits.len() + 6 + line.len(),
                    });
                }
                i += 1 + digits.len();
                continue;
            }
        }
        if text[i..].starts_with("(line ") {
            let line: String = text[i + 6..].chars().take_while(char::is_ascii_digit).collect();
            out.push(LineRef { thread: last_thread.clone(), line: line.parse().unwrap(), start: i, end: i + 6 + line.len() });
        }
        i += 1;
    }
    out
}

/// Two references of one thread in a row with "before" between them name lines in program
/// order (the first is earlier); with "after" between them, the reverse.
fn assert_lines_in_program_order(name: &str, hint: &str) {
    let text = prose(hint);
    for w in line_refs(hint).windows(2) {
        let (a, b) = (&w[0], &w[1]);
        if a.thread != b.thread || a.thread.is_empty() {
            continue;
        }
        let between = &text[a.end..b.start];
        if between.len() > 80 {
            continue;
        }
        let word = |w: &str| between.split(|c: char| !c.is_alphanumeric()).any(|x| x == w);
        if word("before") {
            assert!(a.line < b.line, "{name}: line {} is named before line {} of {}: {hint}", a.line, b.line, a.thread);
        } else if word("after") {
            assert!(a.line > b.line, "{name}: line {} is named after line {} of {}: {hint}", a.line, b.line, a.thread);
        }
    }
}

/// The instructions a hint asks to add: a backquoted instruction of the kinds below that is not
/// a reference to an existing one (followed by its line).
fn asked_instructions(hint: &str) -> Vec<String> {
    const KINDS: [&str; 7] = [
        "cp.async.bulk.wait_group",
        "cp.async.wait_group",
        "cp.async.wait_all",
        "fence.proxy.async",
        "bar.sync",
        "mbarrier.expect_tx",
        "mbarrier.arrive.expect_tx",
    ];
    let parts: Vec<&str> = hint.split('`').collect();
    let mut out = Vec::new();
    for (k, part) in parts.iter().enumerate().filter(|(k, _)| k % 2 == 1) {
        let next = parts.get(k + 1).copied().unwrap_or("");
        let reference = next.starts_with(" (P") || next.starts_with(" (line");
        if !reference && KINDS.iter().any(|kind| part.starts_with(kind)) {
            out.push(part.to_string());
        }
    }
    out
}

/// A hint never asks for an instruction that is already where it names: for each thread the
/// hint names, the asked instruction is not in that thread's code between the first and the last
/// line the hint names there (or next to the one line it names; anywhere in it when it names no
/// line of it).
fn assert_asks_nothing_present(name: &str, source: &str, hint: &str) {
    let rows: Vec<Vec<(usize, String)>> = thread_code(source);
    let refs = line_refs(hint);
    let threads: BTreeSet<usize> =
        prose(hint).split(|c: char| !c.is_alphanumeric()).filter_map(|w| w.strip_prefix('P').and_then(|d| d.parse().ok())).collect();
    for asked in asked_instructions(hint) {
        for &t in &threads {
            let Some(code) = rows.get(t) else { continue };
            let lines: Vec<usize> = refs.iter().filter(|r| r.thread == format!("P{t}")).map(|r| r.line).collect();
            let (lo, hi) = match (lines.iter().min(), lines.iter().max()) {
                (Some(&a), Some(&b)) if a < b => (a, b),
                (Some(&a), _) => (a.saturating_sub(1), a + 1),
                _ => (0, usize::MAX),
            };
            let present =
                code.iter().find(|(l, text)| (lo..=hi).contains(l) && (text.starts_with(&asked) || asked.starts_with(text.as_str())));
            assert!(present.is_none(), "{name}: the hint asks for `{asked}`, which P{t} has at line {}: {hint}", present.unwrap().0);
        }
    }
}

/// Each thread's instructions with their lines, read off the litmus table (column `t` of each
/// row between the header and the condition).
fn thread_code(source: &str) -> Vec<Vec<(usize, String)>> {
    let mut out: Vec<Vec<(usize, String)>> = Vec::new();
    let mut in_table = false;
    for (n, row) in source.lines().enumerate() {
        let cells: Vec<&str> = row.trim().trim_end_matches(';').split('|').map(str::trim).collect();
        if !in_table {
            in_table = cells.iter().all(|c| c.starts_with('P') && c.contains('@'));
            out = vec![Vec::new(); cells.len()];
            continue;
        }
        if row.starts_with("exists") || row.starts_with("forall") || row.starts_with("~exists") {
            break;
        }
        for (t, c) in cells.iter().enumerate().filter(|(_, c)| !c.is_empty()) {
            if let Some(code) = out.get_mut(t) {
                code.push((n + 1, c.to_string()));
            }
        }
    }
    out
}

/// Every hint of every program of `tests/hints/` names lines in program order and asks for
/// nothing that is already there.
#[test]
fn hints_name_lines_in_order_and_ask_for_nothing_present() {
    let model = models::builtin(models::DEFAULT_MODEL).unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir().join("hints")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut seen = 0;
    for f in files.iter().filter(|f| f.extension().is_some_and(|e| e == "litmus")) {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let source = std::fs::read_to_string(f).unwrap();
        let o = outcome(f, &model);
        for h in findings(&o).iter().filter_map(|f| f.hint.as_deref()) {
            assert_lines_in_program_order(&name, h);
            assert_asks_nothing_present(&name, &source, h);
            seen += 1;
        }
    }
    assert!(seen >= 30, "only {seen} hints checked");
}

/// The checks above catch the hints issue 23 quotes.
#[test]
fn the_hint_checks_catch_the_quoted_bugs() {
    let order = "the copy completes for P0 at `cp.async.wait_group 0` (line 33) before P0's `bar.sync 0` (line 31), so that …";
    assert!(std::panic::catch_unwind(|| assert_lines_in_program_order("quote", order)).is_err());
    let source = std::fs::read_to_string(dir().join("hints/reuse-barrier.litmus")).unwrap();
    let present = "wait for the copy's source reads in P0: `cp.async.bulk.wait_group.read 0` (`.read` is enough to reuse the source), then synchronize P0 with P1";
    assert!(std::panic::catch_unwind(|| assert_asks_nothing_present("quote", &source, present)).is_err());
}

/// `explain` prints the `reading:` lines that `run` prints under a finding that depends on a
/// reading (docs/findings.md), with the same text: under the undefined behaviour and under the
/// race of the execution shown.
#[test]
fn explain_prints_the_readings_a_finding_depends_on() {
    let model = models::builtin(models::DEFAULT_MODEL).unwrap();
    let config = ptxmm::Config::new(model.clone(), model.title());
    for (file, id) in
        [("async/A24-pipeline-tma-async-consumer-release.litmus", "AMBIG-24"), ("async/S2c-two-groups-value-g1.litmus", "AMBIG-18")]
    {
        let path = dir().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let src = SourceFile::new(path.display().to_string(), text);
        let program = ptxmm::program::lower(&ptxmm::litmus::parse(&src).unwrap(), &src).unwrap();
        let run = Decider::new(&config).verdict(&program).unwrap();
        let line =
            run.undefined.iter().chain(&run.races).flat_map(|f| &f.readings).next().unwrap_or_else(|| panic!("{file}: no reading")).line();
        assert!(line.starts_with(&format!("depends on the reading {id}")), "{file}: {line}");
        let explained = Decider::new(&config).explain(&program).unwrap();
        assert!(explained.text.contains(&format!("  reading: {line}\n")), "{file}: explain lacks `reading: {line}`:\n{}", explained.text);
    }
}

/// A tensor map rewritten while a tensor copy may still read it (U2 for the tensor map): wait for
/// the copy's phase before modifying the tensor map.
#[test]
fn tensor_map_hint_is_wait_before_modifying_it() {
    check(
        "tensor-map",
        "U2-tensor-map-modified-in-flight",
        &["wait for that phase in P2 before modifying the tensor map", "`mbarrier.try_wait.parity` on `bar`"],
        &["modifying the source"],
    );
}
