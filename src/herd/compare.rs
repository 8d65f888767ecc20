//! `ptxmm compare`: two sets of results for the same tests, matched by test name, and the
//! tests on which they differ (mcompare7's question). Each side is a list of
//! [`LogTest`]s: read from a herd7 / litmus7 / `ptxmm hw` / ptxmm log, or made by deciding the
//! tests under a model and reading back the herd7 block ptxmm prints (so both kinds of side
//! go through the same reader and the same normal form of states).

use crate::herd::log::LogTest;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// One test on which the two sides differ.
#[derive(Clone, Debug, Serialize)]
pub struct Difference {
    pub test: String,
    pub left: SideResult,
    pub right: SideResult,
    /// States only the left side has, and only the right side has (each sorted).
    pub only_left: Vec<String>,
    pub only_right: Vec<String>,
    /// The `Ok`/`No` answers differ.
    pub answers_differ: bool,
    /// Both sides have a ptxmm verdict and the verdicts differ.
    pub verdicts_differ: bool,
}

/// What one side says about a test.
#[derive(Clone, Debug, Serialize)]
pub struct SideResult {
    pub answer: String,
    pub verdict: Option<String>,
    pub states: Vec<String>,
    pub flags: Vec<String>,
}

impl SideResult {
    fn of(t: &LogTest) -> SideResult {
        SideResult {
            answer: t.answer().to_string(),
            verdict: t.verdict.clone(),
            states: t.state_set().into_iter().collect(),
            flags: t.flags.clone(),
        }
    }

    fn describe(&self) -> String {
        match &self.verdict {
            Some(v) => format!("{} (verdict {v})", self.answer),
            None => self.answer.clone(),
        }
    }
}

/// The comparison of two sides.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Comparison {
    /// Tests present on both sides.
    pub compared: usize,
    pub differences: Vec<Difference>,
    /// Tests only one side has.
    pub only_left: Vec<String>,
    pub only_right: Vec<String>,
    /// Test names a side has more than once (the first is compared).
    pub duplicates: Vec<String>,
}

/// Index a side by test name; the first of duplicates is kept.
fn by_name<'a>(side: &'a [LogTest], dups: &mut BTreeSet<String>) -> BTreeMap<&'a str, &'a LogTest> {
    let mut m = BTreeMap::new();
    for t in side {
        if m.contains_key(t.name.as_str()) {
            dups.insert(t.name.clone());
        } else {
            m.insert(t.name.as_str(), t);
        }
    }
    m
}

/// Compare two sides: a test differs when its answers (`Ok`/`No`), its ptxmm verdicts (when
/// both sides have one), or its sets of final states differ.
pub fn compare(left: &[LogTest], right: &[LogTest]) -> Comparison {
    let mut dups = BTreeSet::new();
    let l = by_name(left, &mut dups);
    let r = by_name(right, &mut dups);
    let mut c = Comparison { duplicates: dups.into_iter().collect(), ..Comparison::default() };
    for (name, lt) in &l {
        let Some(rt) = r.get(name) else {
            c.only_left.push(name.to_string());
            continue;
        };
        c.compared += 1;
        let (ls, rs) = (lt.state_set(), rt.state_set());
        let answers_differ = lt.answer() != rt.answer();
        let verdicts_differ = matches!((&lt.verdict, &rt.verdict), (Some(a), Some(b)) if a != b);
        if answers_differ || verdicts_differ || ls != rs {
            c.differences.push(Difference {
                test: name.to_string(),
                left: SideResult::of(lt),
                right: SideResult::of(rt),
                only_left: ls.difference(&rs).cloned().collect(),
                only_right: rs.difference(&ls).cloned().collect(),
                answers_differ,
                verdicts_differ,
            });
        }
    }
    c.only_right = r.keys().filter(|n| !l.contains_key(*n)).map(|n| n.to_string()).collect();
    c
}

impl Comparison {
    /// The text report: each differing test with the states of each side (those the other
    /// side lacks marked), then the tests one side lacks, then a summary line.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for d in &self.differences {
            let _ = writeln!(s, "Test {}: left {}, right {}", d.test, d.left.describe(), d.right.describe());
            for (side, res, only) in [("left", &d.left, &d.only_left), ("right", &d.right, &d.only_right)] {
                let _ = writeln!(s, "  {side} states ({}):", res.states.len());
                for st in &res.states {
                    // `only` comes sorted from a set difference: a binary search keeps a log of
                    // many states linear-logarithmic, not quadratic.
                    let mark = if only.binary_search(st).is_ok() { format!("   <- only {side}") } else { String::new() };
                    let _ = writeln!(s, "    {}{mark}", if st.is_empty() { "(no observable)" } else { st });
                }
            }
        }
        if !self.only_left.is_empty() {
            let _ = writeln!(s, "Only in the left side ({}): {}", self.only_left.len(), self.only_left.join(" "));
        }
        if !self.only_right.is_empty() {
            let _ = writeln!(s, "Only in the right side ({}): {}", self.only_right.len(), self.only_right.join(" "));
        }
        if !self.duplicates.is_empty() {
            let _ = writeln!(s, "Tests named more than once on a side (the first compared): {}", self.duplicates.join(" "));
        }
        let _ = writeln!(
            s,
            "{} test(s) compared: {} differ, {} agree; {} only left, {} only right",
            self.compared,
            self.differences.len(),
            self.compared - self.differences.len(),
            self.only_left.len(),
            self.only_right.len()
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::herd::log::parse_log;

    const LEFT: &str = "Test A Allowed\nStates 2\n0:r0=0;\n0:r0=1;\nOk\nWitnesses\nPositive: 1 Negative: 1\nCondition exists (0:r0=1)\nObservation A Sometimes 1 1\nTest B Allowed\nStates 1\n0:r0=0;\nNo\nCondition exists (0:r0=1)\nTest C Allowed\nStates 1\nx=1;\nOk\n";
    const RIGHT: &str = "Test A Allowed\nHistogram (1 states)\n5     :> 0:r0=0;\nNo\nTest B Allowed\nStates 1\n0:r0=0;\nNo\nTest D Allowed\nStates 1\nx=1;\nOk\n";

    #[test]
    fn differences_and_one_sided_tests() {
        let c = compare(&parse_log(LEFT).unwrap(), &parse_log(RIGHT).unwrap());
        assert_eq!(c.compared, 2);
        assert_eq!(c.differences.len(), 1);
        let d = &c.differences[0];
        assert_eq!(d.test, "A");
        assert!(d.answers_differ);
        assert_eq!(d.only_left, ["0:r0=1;"]);
        assert!(d.only_right.is_empty());
        assert_eq!(c.only_left, ["C"]);
        assert_eq!(c.only_right, ["D"]);
        let text = c.text();
        assert!(text.contains("0:r0=1;   <- only left"), "{text}");
        assert!(text.contains("2 test(s) compared: 1 differ, 1 agree; 1 only left, 1 only right"), "{text}");
    }
}
