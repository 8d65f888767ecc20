//! Differential test of the search's free reads (`exec::search`'s `free.rs`): where no value is
//! observed, a read whose value decides nothing and whose sources no finding of the model sees
//! gets one consistent source instead of every one. Every litmus test of the repository, with
//! its condition made `exists (false)` and its `locations` dropped (so that nothing is
//! observed), and the kernels of `tests/kernels/cmd` with every lane, are decided both ways
//! (`Config::every_source`): the verdict and every finding must be the same. Cases that one way
//! cannot decide within the limits are counted as skipped, not compared.

use ptxmm::config::Config;
use ptxmm::decide::verdict::Outcome;
use ptxmm::decide::Decider;
use std::time::Duration;

mod common;

/// What must agree: the verdict and the findings (undefined behaviour, races, flags).
fn answers(o: &Outcome) -> String {
    let list = |set: &std::collections::BTreeSet<ptxmm::decide::findings::Finding>| {
        set.iter().map(|f| format!("{f:?}")).collect::<Vec<_>>().join("\n")
    };
    format!("verdict {:?}\nundefined:\n{}\nraces:\n{}\nflags:\n{}", o.verdict(), list(&o.undefined), list(&o.races), list(&o.flag_findings))
}

fn decide(program: &ptxmm::program::Program, every_source: bool) -> Option<Outcome> {
    let mut config = Config::default_model().with_timeout(Some(Duration::from_secs(10)));
    config.every_source = every_source;
    let o = Decider::new(&config).verdict(program).ok()?;
    o.incomplete.is_none().then_some(o)
}

#[derive(Default)]
struct Tally {
    cases: common::Tally,
    /// Cases where the free reads left choices unvisited (the shortcut applied).
    shortened: usize,
}

impl Tally {
    fn compare(&mut self, name: &str, program: &ptxmm::program::Program) {
        let Some(every) = decide(program, true) else {
            self.cases.skipped += 1;
            return;
        };
        let Some(free) = decide(program, false) else {
            self.cases.failed.push(format!("{name}: decided with every source, not with free reads"));
            return;
        };
        if free.stats.free_left > 0 {
            self.shortened += 1;
        }
        self.cases.agree(name, ("every source", &answers(&every)), ("free reads", &answers(&free)));
    }
}

#[test]
fn free_reads_give_the_findings_of_every_source() {
    let mut tally = Tally::default();
    for (name, text) in common::repository_litmus_tests() {
        if let Some(program) = common::unobserved(&name, &text) {
            tally.compare(&name, &program);
        }
    }
    // Kernels whose lanes meet, with every lane (the racy neighbour read is the case the free
    // reads are for: 32 racy reads).
    for file in ["lanes.ptx", "lanes-bug.ptx"] {
        for (entry, block) in [("_Z9neighbourPi", 32), ("_Z9divergentPi", 32), ("_Z5namedPi", 64)] {
            tally.compare(&format!("{file} {entry}"), &common::kernel_with_every_lane(file, Some(entry), block));
        }
    }
    println!(
        "free reads: {} passed, {} failed ({} skipped: not decided within the limits with every source; the shortcut applied in {})",
        tally.cases.passed,
        tally.cases.failed.len(),
        tally.cases.skipped,
        tally.shortened
    );
    assert!(tally.cases.failed.is_empty(), "{}", tally.cases.failed.join("\n\n"));
    assert!(tally.shortened >= 10, "the shortcut applied in only {} cases: the test compares too little", tally.shortened);
}
