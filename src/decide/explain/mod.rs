//! Explanations of verdicts, in the program's own terms.
//!
//! - **Allowed**: one witness execution that reaches the outcome: its events (instruction and
//!   line), reads-from, coherence and fence-SC orders, and any data races in it.
//! - **Forbidden**: every candidate execution that would give the outcome is rejected by some
//!   axiom. Candidates are grouped by (axiom, shape of the violating cycle); each group shows one
//!   cycle event by event with the relation of each step, e.g.
//!   `Causality: c: R x=0 (P1 line 7) –fr→ a: W x=1 (P0 line 6) –po→ … –po→ back`.
//!
//! Cycles are read off the evaluated relation of the failing check and labelled with the
//! model's own relations (`sync`, `rf`, `fr`, `po`, … as the model names them), preferring the
//! most specific relation that contains each step.

mod describe;
pub mod dot;
mod explorer;
mod fold;
pub mod graph;
pub mod svg;

use super::driver::{budget, AtResolution, Hooks, RunError, SearchSite};
use super::verdict::VerdictHooks;
use crate::clock::Instant;
use crate::config::Config;
use crate::exec::search::{search, Budget, SearchGoal};
use crate::exec::structure::{BarrierResolution, EventStructure};
use crate::exec::trace::{ThreadTraces, Trace};
use crate::litmus::ast::Quantifier;
use crate::program::{Observable, Program};
use describe::describe_execution;
use explorer::{Collected, ExplainExplorer};
use graph::ExecutionGraph;
use serde::Serialize;
use std::collections::BTreeMap;
use std::ops::ControlFlow;

/// What the explanation concludes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Verdict {
    /// Some consistent execution satisfies the condition's proposition.
    Allowed,
    /// No consistent execution does.
    Forbidden,
}

/// An event as shown to the user.
#[derive(Clone, Debug, Serialize)]
pub struct EventDesc {
    /// `a`, `b`, … for thread events (herd7's naming), `init x` for initial writes.
    pub name: String,
    /// `W x=1`, `R flag=0`, `F sc.gpu`, `B bar.cta.sync 1`.
    pub action: String,
    /// The value as a float (`3.0f32`) when the access's type says float (`.f32`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub float: Option<String>,
    pub thread: Option<String>,
    pub line: Option<usize>,
    pub instruction: Option<String>,
}

impl EventDesc {
    /// `a: W x=1 (P0 line 6)`.
    pub fn short(&self) -> String {
        match (&self.thread, self.line) {
            (Some(t), Some(l)) => format!("{}: {} ({} line {})", self.name, self.action, t, l),
            _ => format!("{}: {}", self.name, self.action),
        }
    }
}

/// One step of a cycle or path: `from –relation→ to`.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    pub from: usize,
    pub relation: String,
    pub to: usize,
}

/// Candidates rejected the same way.
#[derive(Clone, Debug, Serialize)]
pub struct RejectionGroup {
    pub axiom: String,
    /// The check as written in the model.
    pub check: String,
    /// The sequence of relation labels of the cycle (the group key together with the axiom).
    pub shape: Vec<String>,
    /// How many candidates reaching the outcome fail this way.
    pub count: u64,
    /// One of them, step by step (event indices into `events`).
    pub steps: Vec<Step>,
    /// The text form of `steps`.
    pub text: String,
}

/// What separates a race's pair from its hint in [`Race::text`].
pub(crate) const CAUSALITY_COLON: &str = " conflict and are neither morally strong nor ordered by causality: ";

/// Two conflicting accesses that are neither morally strong nor ordered by causality.
#[derive(Clone, Debug, Serialize)]
pub struct Race {
    pub first: usize,
    pub second: usize,
    pub text: String,
}

/// An execution shown in full.
#[derive(Clone, Debug, Serialize)]
pub struct ExecutionDesc {
    /// `(write, read)` pairs.
    pub rf: Vec<(usize, usize)>,
    /// Immediate coherence successors.
    pub co: Vec<(usize, usize)>,
    /// Fence-SC order (immediate pairs).
    pub fence_sc: Vec<(usize, usize)>,
    /// The final state reached.
    pub state: String,
    /// Words the execution's accesses cover whose events were not generated: each mirrors a
    /// word shown (word elision, `exec::trace::word_fates`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mirrored: Vec<MirroredWords>,
}

/// Words covered by the same instructions as a shown word, the same way, whose events would
/// only mirror its events (no thread reads them, no final state shows them): not generated.
#[derive(Clone, Debug, Serialize)]
pub struct MirroredWords {
    /// The word shown (`s[1]`).
    pub word: String,
    /// The words it stands for (`s[2]`, `s[3]`).
    pub also: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Explanation {
    pub test: String,
    pub condition: String,
    /// Whether the outcome is reached by some consistent execution explored.
    pub verdict: Verdict,
    /// The verdict of the program as `ptxmm run` gives it (Undefined, Inconclusive, Unknown
    /// take precedence over the outcome's reachability); None when that run failed.
    pub program_verdict: Option<crate::decide::verdict::Verdict>,
    /// Why the program verdict is Inconclusive or Unknown.
    pub program_verdict_reason: Option<String>,
    /// The events of the execution shown (the witness, or the first rejected candidate).
    pub events: Vec<EventDesc>,
    pub witness: Option<ExecutionDesc>,
    pub rejections: Vec<RejectionGroup>,
    pub races: Vec<Race>,
    /// Undefined behaviour of the execution shown (the model's `undefined_unless` checks).
    pub undefined: Vec<crate::decide::findings::Finding>,
    /// Candidates that reach the outcome but were rejected (Forbidden), examined in total.
    pub rejected_candidates: u64,
    #[serde(skip)]
    pub graph: ExecutionGraph,
    /// The human-readable explanation.
    pub text: String,
}

/// The explain mode's hooks: per structure, the search steered to the outcome (stopping at a
/// witness, reporting every rejection with its check) and, on the same structure and prepared
/// model, the verdict's search, whose outcome gives the program's verdict.
pub(super) struct ExplainHooks<'p> {
    program: &'p Program,
    checks: Vec<crate::cat::CheckInfo>,
    observables: Vec<Observable>,
    collected: Collected,
    /// Combinations of runs in which some barrier never completes (no final state).
    hanging: u64,
    /// A witness was found: the steered search is over.
    explained: bool,
    verdict: VerdictHooks<'p>,
    /// The verdict's own budget (the driver's is the explanation's).
    verdict_budget: Budget,
    /// The verdict's search is over (settled by `--speedcheck`, or stopped by `verdict_error`).
    verdict_done: bool,
    /// Why the verdict's search stopped early, if it did.
    verdict_error: Option<RunError>,
    /// Candidates were left out before the search on a counter (coherence and atomicity).
    counters_pruned: bool,
}

impl<'p> ExplainHooks<'p> {
    pub(in crate::decide) fn new(program: &'p Program, config: &Config, deadline: Option<Instant>) -> Self {
        ExplainHooks {
            program,
            checks: config.model.checks(),
            observables: crate::program::naming::observables(program),
            collected: Collected { witness: None, first_rejected: None, groups: BTreeMap::new(), rejected: 0 },
            hanging: 0,
            explained: false,
            verdict: VerdictHooks::new(program, config),
            verdict_budget: budget(config, deadline),
            verdict_done: false,
            verdict_error: None,
            counters_pruned: false,
        }
    }

    /// Stop the verdict's search with `e` (the verdict then reports it).
    fn stop_verdict(&mut self, e: RunError) {
        if !self.verdict_done {
            self.verdict_done = true;
            self.verdict_error = Some(e);
        }
    }

    /// What the pass found, once the driver's loop ended with `result`.
    pub(in crate::decide) fn finish(mut self, result: Result<(), RunError>) -> Result<Explained<'p>, RunError> {
        if let Err(e) = result {
            if !self.explained {
                return Err(e);
            }
            // The explanation was complete; only the verdict's search was cut.
            self.stop_verdict(e);
        }
        let ExplainHooks { program, collected, hanging, mut verdict, verdict_budget, verdict_error, counters_pruned, .. } = self;
        verdict.finished(verdict_budget, counters_pruned);
        let whole = verdict.finish(verdict_error.map_or(Ok(()), Err)).ok();
        Ok(Explained { program, collected, hanging, whole, counters_pruned })
    }
}

/// What one explain pass found, before it is written up: the steered search's witness or
/// rejections, and the program's verdict (None when its search failed).
pub(in crate::decide) struct Explained<'p> {
    program: &'p Program,
    collected: Collected,
    hanging: u64,
    pub(in crate::decide) whole: Option<crate::decide::verdict::Outcome>,
    counters_pruned: bool,
}

impl Explained<'_> {
    /// The explanation, in the program's own terms.
    pub(in crate::decide) fn write_up(self) -> Explanation {
        let mut x = assemble(self.program, self.collected, self.hanging, self.whole);
        if self.counters_pruned && x.verdict == Verdict::Forbidden && !x.rejections.is_empty() {
            x.text.push_str(
                "Not shown: candidates in which a thread reads a counter below a value it saw there (coherence), or two read-modify-writes take the same value of it (atomicity), were left out before the search.\n",
            );
        }
        x
    }
}

impl<'p> Hooks<'p> for ExplainHooks<'p> {
    fn own_order(&self) -> bool {
        false
    }

    fn explored(&mut self, per_thread: &[ThreadTraces]) {
        self.verdict.explored(per_thread);
    }

    fn finished(&mut self, _budget: Budget, counters_pruned: bool) {
        self.counters_pruned = counters_pruned;
    }

    fn structure(&mut self, _traces: &[&Trace], _structure: &EventStructure<'p>) -> Result<SearchGoal, RunError> {
        if !self.verdict_done {
            if let Err(e) = self.verdict_budget.charge() {
                self.stop_verdict(e.into());
            }
        }
        Ok(SearchGoal::default())
    }

    fn resolution(&mut self, resolution: &BarrierResolution) -> AtResolution {
        if resolution.blocked.is_empty() {
            return AtResolution::Search;
        }
        if !self.explained {
            self.hanging += 1;
        }
        if !self.verdict_done {
            self.verdict.resolution(resolution);
        }
        AtResolution::EndStructure
    }

    fn search(&mut self, site: &SearchSite<'_, 'p, '_>, budget: &mut Budget) -> Result<ControlFlow<()>, RunError> {
        if !self.explained {
            let prepared = site.model.get()?;
            let mut ex = ExplainExplorer {
                program: self.program,
                prepared,
                checks: &self.checks,
                observables: &self.observables,
                out: &mut self.collected,
            };
            search(site.statics, site.model, site.plan, site.goal, budget, &mut ex)?;
            self.explained = self.collected.witness.is_some();
        }
        if !self.verdict_done {
            match self.verdict.search(site, &mut self.verdict_budget) {
                Ok(ControlFlow::Continue(())) => {}
                // `--speedcheck` settled the condition.
                Ok(ControlFlow::Break(())) => self.verdict_done = true,
                Err(e) => self.stop_verdict(e),
            }
        }
        Ok(if self.explained && self.verdict_done { ControlFlow::Break(()) } else { ControlFlow::Continue(()) })
    }
}

/// The reading lines of the run's race finding about the same two instructions as `race` (by
/// thread and line), if it depends on a reading.
fn race_readings(whole: &crate::decide::verdict::Outcome, events: &[EventDesc], race: &Race) -> Vec<String> {
    let at = |e: usize| events.get(e).and_then(|d| Some((d.thread.clone()?, d.line?)));
    let (Some(a), Some(b)) = (at(race.first), at(race.second)) else { return Vec::new() };
    let same = |f: &&crate::decide::findings::Finding| {
        let sites: std::collections::BTreeSet<(String, usize)> = f.sites.iter().map(|s| (s.thread.clone(), s.line)).collect();
        f.is_race() && sites == [a.clone(), b.clone()].into_iter().collect()
    };
    whole.races.iter().chain(&whole.undefined).find(same).map(|f| f.readings.iter().map(|r| r.line()).collect()).unwrap_or_default()
}

/// The explanation from what the steered search collected and the program's verdict (None
/// when the verdict's search failed).
fn assemble(program: &Program, collected: Collected, hanging: u64, whole: Option<crate::decide::verdict::Outcome>) -> Explanation {
    let Collected { witness, first_rejected, groups, rejected } = collected;

    // Observables named as the state lists name them (`1:r3`, `s[1]`), as `run` does.
    let logged = crate::program::naming::condition_log_text(program);
    let condition = format!("{} ({logged})", program.condition.quantifier.keyword());
    let (verdict, shown) = match witness {
        Some(w) => (Verdict::Allowed, Some(w)),
        None => (Verdict::Forbidden, first_rejected),
    };
    let mut text = String::new();
    let mut rejections: Vec<RejectionGroup> = groups.into_values().collect();
    rejections.sort_by(|a, b| b.count.cmp(&a.count).then(a.axiom.cmp(&b.axiom)));
    let (events, witness_desc, races, mut graph) = match &shown {
        Some(s) => (s.events.clone(), Some(s.desc.clone()), s.races.clone(), s.graph.clone()),
        None => (Vec::new(), None, Vec::new(), ExecutionGraph { title: program.name.clone(), ..Default::default() }),
    };
    // A racing pair is what the explanation of a race is about: drawn highlighted, like a cycle.
    graph.edges.extend(races.iter().map(|r| graph::GraphEdge { from: r.first, to: r.second, label: "race".into(), highlighted: true }));
    let mut undefined: Vec<crate::decide::findings::Finding> =
        shown.as_ref().filter(|_| verdict == Verdict::Allowed).map(|s| s.undefined.clone()).unwrap_or_default();
    undefined.dedup();
    // Texts of the rejection groups refer to the events of the shown candidate only when it is
    // the same structure; each group carries its own event descriptions through `describe_steps`.
    let outcome = if program.condition.quantifier == Quantifier::Forall {
        format!("~({logged}) (a counterexample to the forall)")
    } else {
        logged.clone()
    };
    // The verdict of the whole program leads: undefined behaviour anywhere, or a search that
    // could not answer, matters more than what one execution shows.
    let program_verdict = whole.as_ref().map(|w| w.verdict());
    let reached = if verdict == Verdict::Allowed { "allowed" } else { "forbidden" };
    if program_verdict != Some(crate::decide::verdict::Verdict::Allowed) && undefined.is_empty() {
        if let Some(w) = whole.as_ref().filter(|w| w.verdict() == crate::decide::verdict::Verdict::Undefined) {
            undefined = w.undefined.iter().cloned().collect();
        }
    }
    // The readings a finding depends on are established over every execution that shows it,
    // by the verdict's search: take them from there, so that explain says what run says.
    if let Some(w) = &whole {
        for f in &mut undefined {
            if let Some(g) = w.undefined.iter().find(|g| g.rule == f.rule && g.sites == f.sites) {
                f.readings.clone_from(&g.readings);
            }
        }
    }
    match (program_verdict, whole.as_ref()) {
        _ if !undefined.is_empty() => {
            text.push_str(&format!(
                "Test {} is Undefined: {} undefined-behaviour finding(s), so the program has no defined outcome (the outcome {} is {reached} among its executions):\n",
                program.name,
                undefined.len(),
                outcome
            ));
            for f in &undefined {
                text.push_str(&format!("- [{}] {}\n", f.rule, f.message));
                if let Some(h) = &f.hint {
                    text.push_str(&format!("  hint: {h}\n"));
                }
                for r in &f.readings {
                    text.push_str(&format!("  reading: {}\n", r.line()));
                }
            }
        }
        (Some(crate::decide::verdict::Verdict::Inconclusive), Some(w)) => {
            text.push_str(&format!("Test {}: Inconclusive: {}.\n", program.name, w.inconclusive().unwrap_or_default()));
        }
        (Some(crate::decide::verdict::Verdict::Unknown), Some(w)) => {
            text.push_str(&format!("Test {}: Unknown: {}.\n", program.name, w.incomplete.clone().unwrap_or_default()));
        }
        _ => {}
    }
    let inconclusive = matches!(program_verdict, Some(crate::decide::verdict::Verdict::Inconclusive));
    match verdict {
        Verdict::Allowed => {
            let s = shown.as_ref().expect("allowed has a witness");
            text.push_str(&format!("Test {}: the outcome {} is allowed.\n", program.name, outcome));
            text.push_str(&format!("Witness execution (final state {}):\n", s.desc.state));
            text.push_str(&describe_execution(s));
        }
        Verdict::Forbidden => {
            if inconclusive {
                text.push_str(&format!("No complete execution that was explored reaches the outcome {outcome}.\n"));
            } else {
                text.push_str(&format!("Test {}: the outcome {} is forbidden.\n", program.name, outcome));
            }
            if rejections.is_empty() && hanging > 0 {
                text.push_str(&format!(
                    "No terminating execution reaches it; {hanging} combination(s) of thread runs wait forever at a barrier (see the Liveness report of `ptxmm run`).\n"
                ));
            } else if rejections.is_empty() && inconclusive {
                text.push_str("No candidate execution of the runs explored reaches it.\n");
            } else if rejections.is_empty() {
                text.push_str("No candidate execution reaches it: no combination of reads-from gives these values.\n");
            } else {
                text.push_str(&format!(
                    "Every candidate execution that could reach it violates an axiom; the search rejected them in {rejected} group(s), each as soon as its violation was certain:\n"
                ));
                for g in &rejections {
                    text.push_str(&format!("- {} group(s): {}\n", g.count, g.text));
                }
                if let Some(s) = &shown {
                    text.push_str("First rejected candidate:\n");
                    text.push_str(&describe_execution(s));
                }
            }
        }
    }
    if !races.is_empty() {
        text.push_str("Data races in this execution:\n");
        // A race whose fix the findings above already give is not given it again (each hint
        // once: a ring's four findings were otherwise repeated under every race).
        let printed: Vec<&str> = undefined.iter().filter_map(|f| f.hint.as_deref()).collect();
        for r in &races {
            match r.text.split_once(CAUSALITY_COLON) {
                Some((pair, hint)) if printed.contains(&hint) => {
                    text.push_str(&format!("- {pair}{CAUSALITY_COLON}see the hint of the same pair above\n"));
                }
                _ => {
                    text.push_str(&format!("- {}\n", r.text));
                    for line in whole.as_ref().map(|w| race_readings(w, &events, r)).unwrap_or_default() {
                        text.push_str(&format!("  reading: {line}\n"));
                    }
                }
            }
        }
    }
    let program_verdict_reason = whole.as_ref().and_then(|w| w.inconclusive().or_else(|| w.incomplete.clone()));
    Explanation {
        test: program.name.clone(),
        condition,
        verdict,
        program_verdict,
        program_verdict_reason,
        events,
        witness: witness_desc.filter(|_| verdict == Verdict::Allowed),
        rejections,
        races,
        undefined,
        rejected_candidates: rejected,
        graph,
        text,
    }
}
