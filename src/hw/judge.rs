//! Judging what GPU runs recorded, test by test and for a whole campaign: every test ends in one
//! [`Observed`] outcome (states, a fault, a hang, a harness error, nothing), which the model's
//! verdict and liveness classify ([`Class`]) and a [`Summary`] counts.
//!
//! A fault (the process stopped with a CUDA error during the test) is what an Undefined program
//! may do, and a mismatch (or a harness bug) for a defined one. A hang (a launch that did not
//! finish, a process killed at its deadline, a spin loop that ran out of its bound) is what a
//! program that may hang does, and a liveness mismatch for one whose every fair execution
//! terminates; an Undefined program may do either.

use super::report::{self, HwHistogram, HwOutput, Judged, Judgement};
use super::LoadedTest;
use crate::decide::liveness::LivenessStatus;
use crate::decide::{Decider, Outcome, Verdict};
use std::fmt::Write;

/// What the GPU did with one test.
#[derive(Clone, Debug)]
pub enum Observed {
    /// Every launch finished: the histogram, judged.
    States(Box<Judged>),
    /// The process stopped with a CUDA error during the test (`error kernel: …`).
    Fault(String),
    /// The test did not finish (a launch timed out, the process was killed at its deadline);
    /// the launches before, judged, when there were any.
    Hang { why: String, partial: Option<Box<Judged>> },
    /// Nothing to judge: the harness could not run it, or its output does not fit the test.
    Error(String),
    /// No output names the test.
    NotRun,
}

/// The judgement of one test's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub enum Class {
    /// A state the model forbids was observed.
    Mismatch,
    /// A program the model calls defined faulted: a harness bug or a mismatch.
    FaultOfDefined,
    /// A program whose every fair execution terminates (`Liveness: ok`) hung.
    LivenessMismatch,
    /// The names of the output fit several tests that judge it differently.
    Ambiguous,
    /// Nothing could be judged (see the message).
    HarnessError,
    NotRun,
    /// The model could not decide what it would need (a limit, an unrolling bound).
    Undecided,
    /// Everything observed is what the model allows.
    Consistent,
}

impl Class {
    pub fn word(self) -> &'static str {
        match self {
            Class::Mismatch => "MISMATCH",
            Class::FaultOfDefined => "FAULT",
            Class::LivenessMismatch => "LIVENESS",
            Class::Ambiguous => "AMBIGUOUS",
            Class::HarnessError => "ERROR",
            Class::NotRun => "NOT RUN",
            Class::Undecided => "UNDECIDED",
            Class::Consistent => "ok",
        }
    }

    /// A disagreement between the model and the hardware (or the harness).
    pub fn is_failure(self) -> bool {
        matches!(self, Class::Mismatch | Class::FaultOfDefined | Class::LivenessMismatch)
    }
}

/// One test judged.
#[derive(Clone, Debug)]
pub struct TestJudgement {
    /// The test's name in the harness (unique in its program).
    pub id: String,
    /// Where the test's source is.
    pub path: String,
    pub observed: Observed,
    /// The model's verdict of the condition (None when the model could not decide).
    pub verdict: Option<Verdict>,
    /// The model's liveness, asked only when the test hung.
    pub liveness: Option<LivenessStatus>,
    pub class: Class,
    /// One line saying why, for the report.
    pub why: String,
}

/// What the model says about one test, decided once however often the test is judged.
pub struct ModelFacts {
    pub outcome: Result<Outcome, String>,
    /// Whether some fair execution hangs (None: not decided), asked once, when a hang is seen.
    liveness: std::sync::OnceLock<Option<LivenessStatus>>,
}

impl ModelFacts {
    pub fn decide(decider: &Decider<'_>, test: &LoadedTest) -> Self {
        ModelFacts { outcome: decider.verdict(&test.program).map_err(|e| e.to_string()), liveness: Default::default() }
    }

    /// The liveness status, when the search decided it (a hang found counts even with loops
    /// cut; `ok` only when no loop was cut).
    fn liveness(&self, decider: &Decider<'_>, test: &LoadedTest) -> Option<LivenessStatus> {
        self.liveness
            .get_or_init(|| {
                let live = decider.liveness(&test.program).ok()?;
                (!live.loop_cut || live.status == LivenessStatus::MayHang).then_some(live.status)
            })
            .clone()
    }
}

/// What one test's processes showed: `hists` are the blocks named by the test, `fault` the
/// error of a process that stopped during it, `unfinished` how a process ended when it did not
/// finish the test.
pub struct Evidence<'a> {
    pub hists: Vec<&'a HwHistogram>,
    pub fault: Option<String>,
    pub unfinished: Option<String>,
}

impl<'a> Evidence<'a> {
    /// The evidence about `id` in one output (every process of it).
    pub fn of(output: &'a HwOutput, id: &str) -> Self {
        let hists: Vec<&HwHistogram> = output.tests.iter().filter(|h| h.test == id).collect();
        let mut fault = None;
        let mut unfinished = None;
        for p in &output.processes {
            let started = p.started.iter().any(|s| s == id);
            let finished = p.finished.iter().any(|&k| output.tests[k].test == id);
            // An old harness printed no `start`: an output of one process with no histogram is
            // about the test it was asked to run.
            let only = output.processes.len() == 1 && p.started.is_empty() && p.finished.is_empty();
            if !(started || finished || only) {
                continue;
            }
            if let Some(e) = &p.error {
                if !finished || only {
                    fault = Some(e.clone());
                }
            }
            if (started || only) && !finished && p.error.is_none() {
                unfinished = Some(match p.exit {
                    Some(x) if x.code == 124 || x.code == 137 => match x.wall_ms {
                        Some(ms) => format!("the process was killed at its deadline after {:.0} s", ms / 1000.0),
                        None => "the process was killed at its deadline".to_string(),
                    },
                    Some(x) if x.code > 128 => format!("the process was killed by signal {}", x.code - 128),
                    Some(x) => format!("the process exited with status {} before the test's histogram", x.code),
                    None => "the output ends before the test's histogram".to_string(),
                });
            }
        }
        Evidence { hists, fault, unfinished }
    }
}

/// Judge one test from its evidence.
pub fn judge_test(decider: &Decider<'_>, test: &LoadedTest, id: &str, facts: &ModelFacts, ev: &Evidence<'_>) -> TestJudgement {
    let mut out =
        TestJudgement::unjudged(id, &test.path.display().to_string(), Observed::NotRun, Class::NotRun, "no output names this test");
    let outcome = match &facts.outcome {
        Ok(o) => o,
        Err(e) => {
            out.class = Class::Undecided;
            out.why = format!("the model cannot decide the test: {e}");
            return out;
        }
    };
    let verdict = outcome.verdict();
    out.verdict = Some(verdict);
    let undefined = verdict == Verdict::Undefined;
    if ev.hists.len() > 1 {
        out.observed = Observed::Error(format!("{} histograms name this test (one was expected)", ev.hists.len()));
        out.class = Class::HarnessError;
        out.why = "the output repeats the test's block: not judged".into();
        return out;
    }
    let hist = ev.hists.first().map(|h| report::judge(&test.program, outcome, h));
    if let Some(Err(e)) = &hist {
        out.observed = Observed::Error(e.clone());
        out.class = Class::HarnessError;
        out.why = e.clone();
        return out;
    }
    let hist = hist.and_then(Result::ok);
    if let Some(fault) = &ev.fault {
        out.observed = Observed::Fault(fault.clone());
        (out.class, out.why) = if undefined {
            (Class::Consistent, format!("fault ({fault}) of a program the model calls Undefined"))
        } else {
            (Class::FaultOfDefined, format!("fault ({fault}); the model: {}, defined: a harness bug or a mismatch", verdict.name()))
        };
        return out;
    }
    let timed_out = hist.as_ref().is_some_and(|j| j.histogram.timeout);
    let spin_hangs: u64 =
        hist.as_ref().map_or(0, |j| j.states.iter().filter(|s| s.judgement == Judgement::Hang).map(|s| s.state.count).sum());
    let hang_why = if let Some(why) = &ev.unfinished {
        Some(why.clone())
    } else if timed_out {
        Some(format!(
            "a launch did not finish within the harness's timeout (after {} iterations)",
            hist.as_ref().map_or(0, |j| j.histogram.iterations)
        ))
    } else if spin_hangs > 0 {
        Some(format!("{spin_hangs} run(s) exhausted a spin loop's bound"))
    } else {
        None
    };
    if let Some(j) = &hist {
        if j.mismatches() > 0 {
            let seen: Vec<String> = j
                .states
                .iter()
                .filter(|s| s.judgement == Judgement::Forbidden)
                .map(|s| format!("{} seen {} times", state_words(&j.histogram.observables, &s.state.values), s.state.count))
                .collect();
            out.class = Class::Mismatch;
            out.why = format!("{} observed state(s) the model forbids: {}", seen.len(), seen.join("; "));
            out.observed = Observed::States(Box::new(j.clone()));
            return out;
        }
    }
    match hang_why {
        Some(why) => {
            out.observed = Observed::Hang { why: why.clone(), partial: hist.map(Box::new) };
            if undefined {
                out.class = Class::Consistent;
                out.why = format!("hang ({why}) of a program the model calls Undefined");
                return out;
            }
            let status = facts.liveness(decider, test);
            out.liveness = status.clone();
            (out.class, out.why) = match status {
                Some(LivenessStatus::MayHang) => (Class::Consistent, format!("hang ({why}); the model: Liveness: may hang")),
                Some(LivenessStatus::Ok) => (Class::LivenessMismatch, format!("hang ({why}); the model: Liveness: ok")),
                None => (Class::Undecided, format!("hang ({why}); the model's liveness search did not decide")),
            };
        }
        None => {
            if let Some(j) = hist {
                let (pos, _) = j.positive_negative();
                let bounded = j.states.iter().any(|s| s.judgement == Judgement::Unknown);
                out.why = format!(
                    "{} state(s), the model: {}{}",
                    j.states.len(),
                    verdict.name(),
                    if verdict == Verdict::Allowed {
                        if pos > 0 {
                            ", condition seen"
                        } else {
                            ", condition not seen"
                        }
                    } else {
                        ""
                    }
                );
                out.class = if bounded { Class::Undecided } else { Class::Consistent };
                out.observed = Observed::States(Box::new(j));
            }
        }
    }
    out
}

fn state_words(names: &[String], values: &[u64]) -> String {
    names.iter().zip(values).map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join(" ")
}

impl TestJudgement {
    /// A test the model has not judged (yet): no verdict, no liveness.
    pub fn unjudged(id: &str, path: &str, observed: Observed, class: Class, why: impl Into<String>) -> Self {
        TestJudgement { id: id.into(), path: path.into(), observed, verdict: None, liveness: None, class, why: why.into() }
    }

    /// The judged histogram, when the test printed one.
    pub fn histogram(&self) -> Option<&Judged> {
        match &self.observed {
            Observed::States(j) => Some(j),
            Observed::Hang { partial: Some(j), .. } => Some(j),
            _ => None,
        }
    }

    /// The condition's proposition held in some observed run.
    pub fn condition_seen(&self) -> bool {
        self.histogram().is_some_and(|j| j.positive_negative().0 > 0)
    }

    /// An Undefined program that did something a defined one would not be allowed to: its
    /// condition (the bad outcome the test asks about) seen, a fault or a hang.
    pub fn misbehaved(&self) -> bool {
        self.condition_seen() || matches!(self.observed, Observed::Fault(_) | Observed::Hang { .. })
    }
}

/// The counts of a campaign.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Summary {
    pub tests: usize,
    pub not_generated: usize,
    pub judged: usize,
    pub states: usize,
    pub forbidden_states: usize,
    pub mismatches: usize,
    pub faults: usize,
    pub faults_of_undefined: usize,
    pub faults_of_defined: usize,
    pub hangs: usize,
    pub hangs_consistent: usize,
    pub liveness_mismatches: usize,
    pub allowed: usize,
    pub allowed_seen: usize,
    pub undefined: usize,
    pub undefined_misbehaved: usize,
    pub ambiguous: usize,
    pub harness_errors: usize,
    pub not_run: usize,
    pub undecided: usize,
}

impl Summary {
    pub fn of(tests: &[TestJudgement], not_generated: usize) -> Self {
        let mut s = Summary { tests: tests.len() + not_generated, not_generated, ..Summary::default() };
        for t in tests {
            if let Some(j) = t.histogram() {
                s.states += j.states.len();
                s.forbidden_states += j.mismatches();
            }
            match t.class {
                Class::Mismatch => s.mismatches += 1,
                Class::Ambiguous => s.ambiguous += 1,
                Class::HarnessError => s.harness_errors += 1,
                Class::NotRun => s.not_run += 1,
                Class::Undecided => s.undecided += 1,
                Class::Consistent | Class::FaultOfDefined | Class::LivenessMismatch => {}
            }
            if !matches!(t.class, Class::HarnessError | Class::NotRun) {
                s.judged += 1;
            }
            match &t.observed {
                Observed::Fault(_) => {
                    s.faults += 1;
                    if t.class == Class::Consistent {
                        s.faults_of_undefined += 1;
                    } else {
                        s.faults_of_defined += 1;
                    }
                }
                Observed::Hang { .. } => {
                    s.hangs += 1;
                    match t.class {
                        Class::Consistent => s.hangs_consistent += 1,
                        Class::LivenessMismatch => s.liveness_mismatches += 1,
                        _ => {}
                    }
                }
                _ => {}
            }
            match t.verdict {
                Some(Verdict::Allowed) if !matches!(t.class, Class::HarnessError | Class::NotRun) => {
                    s.allowed += 1;
                    s.allowed_seen += usize::from(t.condition_seen());
                }
                Some(Verdict::Undefined) if !matches!(t.class, Class::HarnessError | Class::NotRun) => {
                    s.undefined += 1;
                    s.undefined_misbehaved += usize::from(t.misbehaved());
                }
                _ => {}
            }
        }
        s
    }

    /// Model/hardware disagreements (states, faults of defined programs, liveness).
    pub fn failures(&self) -> usize {
        self.mismatches + self.faults_of_defined + self.liveness_mismatches
    }

    /// The summary table.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let pct = |a: usize, b: usize| if b == 0 { String::new() } else { format!(" ({:.0}%)", 100.0 * a as f64 / b as f64) };
        let _ = writeln!(s, "Summary");
        let _ = writeln!(
            s,
            "  tests                     {} ({} judged, {} not generated, {} not run, {} harness errors, {} ambiguous, {} undecided)",
            self.tests, self.judged, self.not_generated, self.not_run, self.harness_errors, self.ambiguous, self.undecided
        );
        let _ = writeln!(
            s,
            "  states observed           {} ({} the model forbids, in {} tests)",
            self.states, self.forbidden_states, self.mismatches
        );
        let _ = writeln!(
            s,
            "  faults                    {} ({} of Undefined programs: consistent; {} of defined programs)",
            self.faults, self.faults_of_undefined, self.faults_of_defined
        );
        let _ = writeln!(
            s,
            "  hangs                     {} ({} consistent: may hang or Undefined; {} liveness mismatches)",
            self.hangs, self.hangs_consistent, self.liveness_mismatches
        );
        let _ =
            writeln!(s, "  Allowed conditions seen   {} of {}{}", self.allowed_seen, self.allowed, pct(self.allowed_seen, self.allowed));
        let _ = writeln!(
            s,
            "  Undefined misbehaving     {} of {}{} (condition seen, fault or hang)",
            self.undefined_misbehaved,
            self.undefined,
            pct(self.undefined_misbehaved, self.undefined)
        );
        let _ = writeln!(s, "  mismatches                {}", self.failures());
        s
    }
}
