//! The harness's histogram (its machine-readable output), the model's judgement of each
//! observed state, and litmus7's report shape.
//!
//! Harness output (one block per test, after a `ptxmm-hw 1` line and a `device …` line):
//!
//! ```text
//! start NAME                      (before the first launch: a fault or a kill names its test)
//! test NAME
//! threads 2
//! observables 0:r0 1:r1 x
//! state COUNT HANG V1 V2 V3        (HANG: bit t set when thread t exhausted its spin bound)
//! done NAME instances I iterations N time_ms T [timeout]
//! error WHAT                       (the harness stopped: a CUDA error)
//! exit RC wall_ms MS               (written by whoever ran the process: `hw run`, a campaign's run.sh)
//! ```
//!
//! Several processes' outputs may follow each other (each from its `ptxmm-hw 1` line to its
//! `exit` line): [`HwOutput::processes`] keeps what each one started, finished and ended with.

use crate::decide::verdict::Outcome;
use crate::litmus::ast::Quantifier;
use crate::program::{Observable, Program};
use std::fmt::Write;

/// One observed final state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HwState {
    pub count: u64,
    /// Bit t: thread t (index in the test) exhausted its spin bound.
    pub hang: u64,
    pub values: Vec<u64>,
}

/// One test's histogram.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct HwHistogram {
    pub test: String,
    pub observables: Vec<String>,
    pub states: Vec<HwState>,
    pub instances: u64,
    pub iterations: u64,
    pub time_ms: f64,
    /// A launch did not finish within the harness's timeout (the histogram holds the launches
    /// before it).
    pub timeout: bool,
    /// The wall time of the process that ran only this test (its `exit` line), CUDA set-up
    /// included; None when unknown or shared with other tests.
    pub wall_ms: Option<f64>,
}

/// How a harness process ended, as its runner recorded it (`exit RC wall_ms MS`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProcessExit {
    /// The exit status: 0 done, 3 a CUDA error, 4 a launch timed out, 124/137 killed at the
    /// runner's deadline (`timeout`'s codes), 128+N killed by signal N.
    pub code: i32,
    /// None when the runner did not time it (`exit RC`).
    pub wall_ms: Option<f64>,
}

/// One harness process's part of an output.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HwProcess {
    /// Tests it announced (`start`), in order.
    pub started: Vec<String>,
    /// Indices into [`HwOutput::tests`] of the histograms it printed.
    pub finished: Vec<usize>,
    pub error: Option<String>,
    pub exit: Option<ProcessExit>,
}

impl HwProcess {
    /// The tests it started but printed no histogram for: the process faulted, was killed or
    /// timed out during them.
    pub fn unfinished<'a>(&'a self, tests: &'a [HwHistogram]) -> impl Iterator<Item = &'a String> + 'a {
        self.started.iter().filter(move |s| !self.finished.iter().any(|&k| &tests[k].test == *s))
    }
}

/// Everything one run of a harness printed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HwOutput {
    /// `name|sm_90|132 SMs|driver 12040|runtime 12040`.
    pub device: Option<String>,
    /// The harness stopped with this error (no device, a CUDA error): the first process's
    /// error.
    pub error: Option<String>,
    pub tests: Vec<HwHistogram>,
    pub processes: Vec<HwProcess>,
}

/// Parse a harness's output. Malformed lines are errors naming the line.
pub fn parse_output(text: &str) -> Result<HwOutput, String> {
    let mut out = HwOutput::default();
    let mut current: Option<HwHistogram> = None;
    let mut saw_header = false;
    for (i, line) in text.lines().enumerate() {
        if line.chars().any(|c| c.is_control() && c != '\t') {
            // Never echo the line: its escape sequences would reach the terminal.
            return Err(format!("harness output line {}: a control character (not a ptxmm harness's output)", i + 1));
        }
        let bad = |what: &str| format!("harness output line {}: {what}: `{line}`", i + 1);
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        match word {
            "" => {}
            "ptxmm-hw" => {
                if rest.trim() != "1" {
                    return Err(bad("unknown harness output version"));
                }
                if let Some(h) = current.take() {
                    finish_cut(&mut out, h);
                }
                if !saw_header || out.processes.last().is_some_and(|p| p.exit.is_some() || !p.started.is_empty() || !p.finished.is_empty())
                {
                    out.processes.push(HwProcess::default());
                }
                saw_header = true;
            }
            "device" => {
                out.device.get_or_insert_with(|| rest.to_string());
            }
            "error" => {
                out.error.get_or_insert_with(|| rest.to_string());
                process(&mut out).error.get_or_insert_with(|| rest.to_string());
            }
            "start" => process(&mut out).started.push(rest.to_string()),
            "exit" => {
                let f: Vec<&str> = rest.split_whitespace().collect();
                let (code, wall_ms) = match f.as_slice() {
                    [rc, "wall_ms", ms] => (rc.parse::<i32>().ok(), ms.parse::<f64>().ok().filter(|m| m.is_finite() && *m >= 0.0)),
                    [rc] => (rc.parse::<i32>().ok(), Some(f64::NAN)),
                    _ => (None, None),
                };
                let (Some(code), Some(wall_ms)) = (code, wall_ms) else { return Err(bad("expected `exit RC wall_ms MS`")) };
                let wall_ms = Some(wall_ms).filter(|w| !w.is_nan());
                if let Some(h) = current.take() {
                    finish_cut(&mut out, h);
                }
                let p = process(&mut out);
                p.exit = Some(ProcessExit { code, wall_ms });
                let only = if let [only] = p.finished[..] { Some(only) } else { None };
                if let (Some(only), Some(_)) = (only, wall_ms) {
                    out.tests[only].wall_ms = wall_ms;
                }
            }
            "test" => {
                if current.is_some() {
                    return Err(bad("`test` before the previous test's `done`"));
                }
                current = Some(HwHistogram { test: rest.to_string(), ..HwHistogram::default() });
            }
            "threads" => {}
            "observables" => {
                let h = current.as_mut().ok_or_else(|| bad("`observables` outside a test"))?;
                h.observables = rest.split_whitespace().map(str::to_string).collect();
            }
            "state" => {
                let h = current.as_mut().ok_or_else(|| bad("`state` outside a test"))?;
                let nums: Vec<u64> =
                    rest.split_whitespace().map(str::parse).collect::<Result<_, _>>().map_err(|_| bad("a non-numeric field"))?;
                if nums.len() != h.observables.len() + 2 {
                    return Err(bad(&format!("expected {} values", h.observables.len() + 2)));
                }
                h.states.push(HwState { count: nums[0], hang: nums[1], values: nums[2..].to_vec() });
            }
            "done" => {
                let mut h = current.take().ok_or_else(|| bad("`done` outside a test"))?;
                let fields: Vec<&str> = rest.split_whitespace().collect();
                let get = |key: &str| fields.iter().position(|f| *f == key).and_then(|p| fields.get(p + 1)).map(|v| v.to_string());
                h.instances = get("instances").and_then(|v| v.parse().ok()).ok_or_else(|| bad("no instance count"))?;
                h.iterations = get("iterations").and_then(|v| v.parse().ok()).ok_or_else(|| bad("no iteration count"))?;
                h.time_ms = get("time_ms").and_then(|v| v.parse().ok()).unwrap_or(0.0);
                h.timeout = fields.contains(&"timeout");
                check_counts(&h).map_err(|e| bad(&e))?;
                out.tests.push(h);
                let k = out.tests.len() - 1;
                process(&mut out).finished.push(k);
            }
            _ => return Err(bad("unknown line")),
        }
    }
    if !saw_header {
        return Err("harness output: no `ptxmm-hw 1` header (not a ptxmm harness?)".into());
    }
    if let Some(h) = current {
        finish_cut(&mut out, h);
    }
    Ok(out)
}

/// The process being read (the last one).
fn process(out: &mut HwOutput) -> &mut HwProcess {
    if out.processes.is_empty() {
        out.processes.push(HwProcess::default());
    }
    out.processes.last_mut().expect("pushed above")
}

/// A block cut off before its `done` (the process was killed): what it printed, marked as
/// timed out.
fn finish_cut(out: &mut HwOutput, h: HwHistogram) {
    out.tests.push(HwHistogram { timeout: true, ..h });
    let k = out.tests.len() - 1;
    process(out).finished.push(k);
}

/// The counts of a finished test add up: every run ends in exactly one state, so they sum to
/// instances × iterations (no more when a launch timed out), without overflowing 64 bits.
fn check_counts(h: &HwHistogram) -> Result<(), String> {
    let total = h.states.iter().try_fold(0u64, |sum, s| sum.checked_add(s.count)).ok_or("the state counts overflow 64 bits")?;
    let runs = h.instances.checked_mul(h.iterations).ok_or("instances × iterations overflow 64 bits")?;
    if total > runs || (total != runs && !h.timeout) {
        return Err(format!("the state counts sum to {total}, not instances × iterations = {runs}"));
    }
    Ok(())
}

/// The model's judgement of one observed state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Judgement {
    /// Some consistent execution ends in this state.
    Allowed,
    /// No consistent execution ends in it: a model/hardware mismatch.
    Forbidden,
    /// The program has undefined behaviour: every state is possible.
    Undefined,
    /// A thread exhausted its spin bound (hangs are not final states).
    Hang,
    /// The model's search was bounded (loop unrolling, a limit): absence proves nothing.
    Unknown,
    /// The state fails the test's `filter` (litmus7 does not count it).
    Filtered,
}

impl Judgement {
    pub fn word(self) -> &'static str {
        match self {
            Judgement::Allowed => "allowed",
            Judgement::Forbidden => "FORBIDDEN (model/hardware mismatch)",
            Judgement::Undefined => "program Undefined",
            Judgement::Hang => "hang (spin bound exhausted)",
            Judgement::Unknown => "unknown (model search bounded)",
            Judgement::Filtered => "filtered out",
        }
    }
}

/// One observed state judged.
#[derive(Clone, Debug, PartialEq)]
pub struct JudgedState {
    pub state: HwState,
    /// Whether it satisfies the condition's proposition.
    pub satisfies: bool,
    pub judgement: Judgement,
}

/// A histogram judged against the model.
#[derive(Clone, Debug)]
pub struct Judged {
    pub histogram: HwHistogram,
    pub quantifier: Quantifier,
    pub condition: String,
    pub verdict: String,
    pub states: Vec<JudgedState>,
}

impl Judged {
    pub fn mismatches(&self) -> usize {
        self.states.iter().filter(|s| s.judgement == Judgement::Forbidden).count()
    }
    /// Observations satisfying / not satisfying the proposition (hangs excluded).
    pub fn positive_negative(&self) -> (u64, u64) {
        let mut pn = (0, 0);
        for s in self.states.iter().filter(|s| !matches!(s.judgement, Judgement::Hang | Judgement::Filtered)) {
            if s.satisfies {
                pn.0 += s.state.count;
            } else {
                pn.1 += s.state.count;
            }
        }
        pn
    }
}

/// A hardware value equals a model value: 32-bit values compare modulo 2^32 (the harness reads
/// words and 32-bit registers zero-extended; the model keeps signed or unbounded integers).
fn same_value(hw: u64, model: i64) -> bool {
    if hw <= u64::from(u32::MAX) {
        hw == (model as u64) & 0xffff_ffff
    } else {
        hw == model as u64
    }
}

/// Judge every observed state with the model's outcome of the same program.
pub fn judge(program: &Program, outcome: &Outcome, hist: &HwHistogram) -> Result<Judged, String> {
    let obs = super::codegen::observables(program);
    if obs.len() != hist.observables.len() {
        return Err(format!("{}: the harness reports {} observables, the test has {}", hist.test, hist.observables.len(), obs.len()));
    }
    let names: Vec<String> = obs.iter().map(|o| program.observable_name(o)).collect();
    if names != hist.observables {
        return Err(format!(
            "{}: the harness reports observables {}, the test has {}",
            hist.test,
            hist.observables.join(" "),
            names.join(" ")
        ));
    }
    let threads = program.threads.len();
    if let Some(s) = hist.states.iter().find(|s| threads < 64 && s.hang >> threads != 0) {
        return Err(format!("{}: a state's hang bits {:#x} name threads the test does not have (it has {threads})", hist.test, s.hang));
    }
    // Position of each harness observable in the model's state vectors.
    let index: Vec<Option<usize>> = obs.iter().map(|o| outcome.observables.iter().position(|m| m == o)).collect();
    let undefined = !outcome.undefined.is_empty();
    // A search a limit or the unrolling bound stopped, or that found no complete execution, decides
    // nothing: a state it did not reach may still be one the program has.
    let bounded = outcome.incomplete.is_some() || outcome.loop_cut || outcome.inconclusive().is_some();
    // The enumeration of final states stopped at its budget (or `--speedcheck` stopped it): the
    // states listed are those found by then, so a state not among them may still be one the
    // program has, unless it satisfies the condition's proposition and the outcome-directed
    // search established that no execution does.
    let partial = outcome.enumeration_cut || outcome.speedcheck_stopped || outcome.partial_states.is_some();
    let proposition_unreached = outcome.partial_states.as_ref().is_some_and(|p| !p.witness);
    let mut states = Vec::new();
    for s in &hist.states {
        let model = outcome.states.iter().find(|(ms, _)| {
            s.values.iter().zip(&index).all(|(v, i)| match i {
                Some(i) => ms.get(*i).is_some_and(|m| same_value(*v, *m)),
                None => true,
            })
        });
        let get = |o: &Observable| obs.iter().position(|x| x == o).map(|k| s.values[k] as i64).unwrap_or(0);
        let satisfies = match model {
            Some((_, sat)) => *sat,
            None => program.condition.prop.eval(&get),
        };
        let judgement = if s.hang != 0 {
            Judgement::Hang
        } else if program.filter.as_ref().is_some_and(|f| !f.eval(&get)) {
            Judgement::Filtered
        } else if undefined {
            Judgement::Undefined
        } else if model.is_some() {
            Judgement::Allowed
        } else if bounded || index.iter().any(Option::is_none) || partial && !(proposition_unreached && satisfies) {
            Judgement::Unknown
        } else {
            Judgement::Forbidden
        };
        states.push(JudgedState { state: s.clone(), satisfies, judgement });
    }
    // Mismatches first (issue 13: a forbidden observed state is printed first).
    states.sort_by_key(|s| (s.judgement != Judgement::Forbidden, std::cmp::Reverse(s.state.count)));
    Ok(Judged {
        histogram: hist.clone(),
        quantifier: outcome.quantifier,
        condition: outcome.condition.clone(),
        verdict: outcome.verdict().name().to_string(),
        states,
    })
}

fn state_text(names: &[String], s: &HwState) -> String {
    let mut t: String = names.iter().zip(&s.values).map(|(n, v)| format!("{n}={v}; ")).collect();
    if s.hang != 0 {
        let threads: Vec<String> = (0..64).filter(|b| s.hang >> b & 1 == 1).map(|b| format!("P{b}")).collect();
        let _ = write!(t, "hang={}; ", threads.join(","));
    }
    t.trim_end().to_string()
}

/// litmus7's report shape, with the model's judgement beside each state.
pub fn render(j: &Judged, device: Option<&str>) -> String {
    let h = &j.histogram;
    let mut s = String::new();
    let total: u64 = h.states.iter().map(|s| s.count).sum();
    let mism = j.mismatches();
    if mism > 0 {
        let _ = writeln!(s, "MISMATCH {}: {mism} observed state(s) the model forbids", h.test);
    }
    let kind = match j.quantifier {
        Quantifier::Exists => "Allowed",
        Quantifier::NotExists => "Forbidden",
        Quantifier::Forall => "Required",
    };
    let _ = writeln!(s, "Test {} {kind}", h.test);
    let _ = writeln!(s, "Histogram ({} states)", h.states.len());
    for st in &j.states {
        let mark = if st.satisfies { "*>" } else { ":>" };
        let _ = writeln!(s, "{:<8}{mark}{}    # model: {}", st.state.count, state_text(&h.observables, &st.state), st.judgement.word());
    }
    let (pos, neg) = j.positive_negative();
    let validated = match j.quantifier {
        Quantifier::Exists => pos > 0,
        Quantifier::NotExists => pos == 0,
        Quantifier::Forall => neg == 0,
    };
    let _ = writeln!(s, "{}", if validated { "Ok" } else { "No" });
    let _ = writeln!(s, "\nWitnesses");
    let (wp, wn) = if j.quantifier == Quantifier::NotExists { (neg, pos) } else { (pos, neg) };
    let _ = writeln!(s, "Positive: {wp}, Negative: {wn}");
    let _ = writeln!(s, "Condition {} ({}) is {}validated", j.quantifier.keyword(), j.condition, if validated { "" } else { "NOT " });
    let obs_word = if pos == 0 {
        "Never"
    } else if neg == 0 {
        "Always"
    } else {
        "Sometimes"
    };
    let _ = writeln!(s, "Observation {} {obs_word} {pos} {neg}", h.test);
    let _ = writeln!(s, "Model verdict {}; mismatches {mism}", j.verdict);
    // litmus7's Time is the test's whole run; the launch loop alone is given with the runs.
    let _ = writeln!(s, "Time {} {:.2}", h.test, h.wall_ms.unwrap_or(h.time_ms) / 1000.0);
    let _ = writeln!(
        s,
        "Runs {} = {} instances x {} iterations, launches {:.2} s{}",
        total,
        h.instances,
        h.iterations,
        h.time_ms / 1000.0,
        if h.timeout { " (stopped: a launch timed out)" } else { "" }
    );
    if let Some(d) = device {
        let _ = writeln!(s, "Device {d}");
    }
    s
}

/// The JSON record of one judged test (`hw suite --json`).
pub fn json(j: &Judged) -> serde_json::Value {
    let h = &j.histogram;
    let (pos, neg) = j.positive_negative();
    serde_json::json!({
        "test": h.test,
        "verdict": j.verdict,
        "condition": j.condition,
        "instances": h.instances,
        "iterations": h.iterations,
        "time_ms": h.time_ms,
        "wall_ms": h.wall_ms,
        "timeout": h.timeout,
        "positive": pos,
        "negative": neg,
        "mismatches": j.mismatches(),
        "observables": h.observables,
        "states": j.states.iter().map(|s| serde_json::json!({
            "count": s.state.count,
            "values": s.state.values,
            "hang": s.state.hang,
            "satisfies": s.satisfies,
            "judgement": s.judgement,
        })).collect::<Vec<_>>(),
    })
}
