//! The face of the driver: a [`Decider`] decides a program in each [`Mode`] under one
//! configuration and one deadline.

use super::driver::{drive, RunError};
use super::explain::{ExplainHooks, Explanation};
use super::liveness::{LivenessHooks, LivenessOutcome, LivenessStatus};
use super::verdict::{Outcome, VerdictHooks};
use crate::clock::Instant;
use crate::config::{Config, Limits};
use crate::exec::trace::ThreadTraces;
use crate::program::Program;

/// What to decide about a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The condition: every consistent execution's final state, the findings, the verdict.
    Verdict,
    /// Whether some fair execution hangs.
    Liveness,
    /// Why the verdict is what it is: a witness, or the rejected candidates reaching the
    /// outcome (with the program's verdict from the same pass).
    Explain,
}

/// The answer of one [`Mode`].
#[derive(Clone, Debug)]
pub enum Decision {
    Verdict(Box<Outcome>),
    Liveness(LivenessOutcome),
    Explain(Box<Explanation>),
}

/// Decides programs under one configuration, against one deadline (`--timeout` from when the
/// decider is made): a test's condition and its liveness share it.
#[derive(Clone, Copy, Debug)]
pub struct Decider<'c> {
    config: &'c Config,
    deadline: Option<Instant>,
}

impl<'c> Decider<'c> {
    /// A decider whose deadline is the configuration's timeout from now.
    pub fn new(config: &'c Config) -> Self {
        Decider { config, deadline: config.limits.timeout.map(|t| Instant::now() + t) }
    }

    /// A decider against a deadline set earlier (a front end whose one `--timeout` covers work
    /// of its own before the decision): a limit it meets is still named as `--timeout`.
    pub fn until(config: &'c Config, deadline: Option<Instant>) -> Self {
        Decider { config, deadline }
    }

    pub fn config(&self) -> &'c Config {
        self.config
    }

    /// Decide `mode` for `program`.
    pub fn decide(&self, program: &Program, mode: Mode) -> Result<Decision, RunError> {
        Ok(match mode {
            Mode::Verdict => Decision::Verdict(Box::new(self.verdict(program)?)),
            Mode::Liveness => Decision::Liveness(self.liveness(program)?),
            Mode::Explain => Decision::Explain(Box::new(self.explain(program)?)),
        })
    }

    /// The condition's verdict. A limit that stops the search leaves the outcome `incomplete`
    /// with what was found by then (see [`Outcome::verdict`]). Unless the unrolling bound is
    /// fixed, it is raised while runs are cut and the answer changes (see [`Decider::raising`]).
    pub fn verdict(&self, program: &Program) -> Result<Outcome, RunError> {
        let start = Instant::now();
        let raised = self.raising(
            program,
            false,
            |d| d.verdict_at_bound(program),
            |o| Progress {
                cut: o.loop_cut,
                stopped: o.incomplete.clone(),
                settled: !o.undefined.is_empty() || o.speedcheck_stopped,
                key: (o.stats.consistent > 0).then(|| (o.verdict(), o.states.clone())),
            },
        )?;
        let Raised { mut answer, tried, why } = raised;
        answer.bounds_tried = tried;
        answer.unroll_stop = why;
        self.settle_without_completions(program, &mut answer);
        answer.elapsed = start.elapsed();
        Ok(answer)
    }

    /// When no execution completes, the verdict asks the hanging executions (the liveness
    /// search): undefined behaviour in a hanging execution makes the program undefined as in a
    /// complete one (digest §14.8 item 6, C-style: an operation with undefined behaviour that
    /// every execution performs is undefined whether or not a later wait hangs); and when no
    /// execution hangs either, the model rejects every execution, which is said as such
    /// (`Outcome::no_consistent_execution`), not as a hang. Costs nothing when some execution
    /// completes. A liveness search stopped by a limit leaves the outcome as it was.
    fn settle_without_completions(&self, program: &Program, o: &mut Outcome) {
        if o.stats.consistent > 0 || o.loop_cut || o.incomplete.is_some() || !o.undefined.is_empty() {
            return;
        }
        let Ok(live) = self.liveness(program) else { return };
        o.no_consistent_execution = live.status == LivenessStatus::Ok && !live.loop_cut;
        for f in live.undefined {
            super::findings::insert(&mut o.undefined, f);
        }
    }

    fn verdict_at_bound(&self, program: &Program) -> Result<Outcome, RunError> {
        let mut hooks = VerdictHooks::new(program, self.config);
        let result = drive(program, self.config, self.deadline, &mut hooks);
        let outcome = hooks.finish(result)?;
        self.settle_enumeration(program, outcome)
    }

    /// An outcome whose enumeration of final states stopped at its work budget, decided by the
    /// outcome-directed search (`directed`); where none applies, enumerated in full after all.
    fn settle_enumeration(&self, program: &Program, mut outcome: Outcome) -> Result<Outcome, RunError> {
        if !outcome.enumeration_cut {
            return Ok(outcome);
        }
        if super::directed::settle(program, self.config, self.deadline, &mut outcome)? {
            return Ok(outcome);
        }
        let config = Config { enumeration_budget: None, ..self.config.clone() };
        let mut hooks = VerdictHooks::new(program, &config);
        let result = drive(program, &config, self.deadline, &mut hooks);
        hooks.finish(result)
    }

    /// Whether some fair execution hangs; with the bound raised as for the verdict (a hang found
    /// at one bound is a hang).
    pub fn liveness(&self, program: &Program) -> Result<LivenessOutcome, RunError> {
        let raised = self.raising(
            program,
            true,
            |d| {
                let mut hooks = LivenessHooks::new(program, d.config.limits.unroll, &d.config.model);
                drive(program, d.config, d.deadline, &mut hooks)?;
                Ok(hooks.finish())
            },
            |l| Progress { cut: l.loop_cut, stopped: None, settled: l.status == LivenessStatus::MayHang, key: Some(l.status.clone()) },
        )?;
        let Raised { mut answer, tried, .. } = raised;
        answer.bounds_tried = tried;
        Ok(answer)
    }

    /// The explanation of the verdict, with the program's verdict decided in the same pass (at
    /// the unrolling bound the verdict settles on).
    pub fn explain(&self, program: &Program) -> Result<Explanation, RunError> {
        let raised = self.raising(
            program,
            false,
            |d| {
                let mut hooks = ExplainHooks::new(program, d.config, d.deadline);
                let result = drive(program, d.config, d.deadline, &mut hooks);
                let mut explained = hooks.finish(result)?;
                // The program's verdict, when its enumeration stopped at its budget.
                if let Some(o) = explained.whole.take() {
                    explained.whole = d.settle_enumeration(program, o).ok();
                }
                Ok(explained)
            },
            |x| match &x.whole {
                Some(o) => Progress {
                    cut: o.loop_cut,
                    stopped: o.incomplete.clone(),
                    settled: !o.undefined.is_empty(),
                    key: (o.stats.consistent > 0).then(|| (o.verdict(), o.states.clone())),
                },
                None => Progress { cut: false, stopped: None, settled: true, key: None },
            },
        )?;
        let Raised { mut answer, tried, why } = raised;
        if let Some(o) = answer.whole.as_mut() {
            o.bounds_tried = tried;
            o.unroll_stop = why;
            self.settle_without_completions(program, o);
        }
        Ok(answer.write_up())
    }

    /// The answer of `at` under the configured unrolling bound; when the bound is raised
    /// automatically (`Limits::max_unroll`), under bounds doubling from it while runs are cut
    /// and the answer still changes: until no run is cut (the answer is exact), the answer is
    /// settled whatever longer runs do (`Progress::settled`), it is the same at two bounds in a
    /// row (unless a larger bound cuts no run: see [`first_uncut_bound`]), or the largest bound
    /// is reached. When a limit or an error stops a raised bound's search, the previous bound's
    /// answer stands, and `why` says so. Every bound shares the decider's deadline. `stuck_runs`:
    /// whether the mode explores the runs that stop forever (liveness).
    fn raising<T, K: PartialEq>(
        &self,
        program: &Program,
        stuck_runs: bool,
        mut at: impl FnMut(&Decider) -> Result<T, RunError>,
        progress: impl Fn(&T) -> Progress<K>,
    ) -> Result<Raised<T>, RunError> {
        // An answer with no complete execution is never stable: longer runs may complete.
        let limits = &self.config.limits;
        let Some(max) = limits.max_unroll else {
            return Ok(Raised { answer: at(self)?, tried: Vec::new(), why: None });
        };
        let mut bound = limits.unroll;
        let mut tried = Vec::new();
        let mut last: Option<(T, Option<K>)> = None;
        loop {
            let config = Config { limits: limits.with_fixed_unroll(bound), ..self.config.clone() };
            let answer = match at(&Decider { config: &config, deadline: self.deadline }) {
                Ok(a) => a,
                Err(e) => match last {
                    Some((previous, _)) => {
                        return Ok(Raised { answer: previous, tried, why: Some(format!("raising the bound to {bound} failed: {e}")) })
                    }
                    None => return Err(e),
                },
            };
            let p = progress(&answer);
            if let Some(stop) = p.stopped {
                if let Some((previous, _)) = last {
                    return Ok(Raised { answer: previous, tried, why: Some(format!("raising the bound to {bound} was stopped: {stop}")) });
                }
                tried.push(bound);
                return Ok(Raised { answer, tried, why: None });
            }
            tried.push(bound);
            if !p.cut || p.settled {
                return Ok(Raised { answer, tried, why: None });
            }
            let mut next = (bound * 2).clamp(1, max);
            if p.key.is_some() && last.as_ref().is_some_and(|(_, k)| *k == p.key) {
                // The same answer twice says little when longer runs are only cut because the
                // bound is too small for them: a loop that ends on what it reads (a tile counter)
                // ends at some bound. Go to that bound, where the answer is exact.
                match first_uncut_bound(program, self.config, stuck_runs, bound, max, self.deadline) {
                    Some(exact) => next = exact,
                    None => {
                        let why = "the answer did not change between the last two bounds".to_string();
                        return Ok(Raised { answer, tried, why: Some(why) });
                    }
                }
            }
            if bound >= max {
                return Ok(Raised { answer, tried, why: Some(format!("the largest bound, --max-unroll {max}")) });
            }
            last = Some((answer, p.key));
            bound = next;
        }
    }
}

/// How many times more runs of a thread [`first_uncut_bound`] lets a doubled bound have. A loop
/// that ends on what it reads (a worker claiming tiles from a counter) has few more runs at a
/// doubled bound (99, then 272, for four workers and four tiles); a loop cut at every bound
/// (two threads exchanging a flag back and forth) multiplies its runs with every iteration
/// (14, then 62, then 1 022), and the search gives up on it early.
const UNCUT_PROBE_GROWTH: usize = 4;

/// The smallest bound of `2·bound, 4·bound, ...` up to `max` at which no run of any thread is
/// cut, found by exploring the threads' runs alone (no search): at that bound the answer covers
/// every run. None when runs are still cut at `max`, when exploring a bound fails, or when a
/// thread would have more than [`UNCUT_PROBE_GROWTH`] times as many runs as at the bound before
/// (the search stops there). Deterministic: it counts runs, not time.
fn first_uncut_bound(
    program: &Program,
    config: &Config,
    stuck_runs: bool,
    bound: usize,
    max: usize,
    deadline: Option<Instant>,
) -> Option<usize> {
    let explore = |limits: &Limits| super::driver::explore(program, config, limits, stuck_runs, deadline).ok();
    let most_runs = |per_thread: &[ThreadTraces]| per_thread.iter().map(|t| t.traces.len()).max().unwrap_or(0);
    let mut runs = most_runs(&explore(&config.limits.with_fixed_unroll(bound))?);
    let mut probe = bound;
    while probe < max {
        probe = (probe * 2).min(max);
        let allowed = config.limits.max_traces.min(runs.saturating_mul(UNCUT_PROBE_GROWTH).max(1));
        let per_thread = explore(&Limits { max_traces: allowed, ..config.limits.with_fixed_unroll(probe) })?;
        if per_thread.iter().all(|t| !t.cut) {
            return Some(probe);
        }
        runs = most_runs(&per_thread);
    }
    None
}

/// What [`Decider::raising`] looks at in an answer.
struct Progress<K> {
    /// Some run was cut by the unrolling bound.
    cut: bool,
    /// A limit stopped the search (the message).
    stopped: Option<String>,
    /// Longer runs cannot change the answer (undefined behaviour found, a hang found).
    settled: bool,
    /// What must stay the same for the answer to be stable (the verdict and final states);
    /// None when nothing completed (such an answer is never stable).
    key: Option<K>,
}

/// An answer of [`Decider::raising`], with the bounds tried and why the bound was not raised
/// further while runs were still cut.
struct Raised<T> {
    answer: T,
    tried: Vec<usize>,
    why: Option<String>,
}
