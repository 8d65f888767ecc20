//! The face of the driver: a [`Decider`] decides a program in each [`Mode`] under one
//! configuration and one deadline.

use super::driver::{drive, RunError};
use super::explain::{ExplainHooks, Explanation};
use super::liveness::{LivenessHooks, LivenessOutcome};
use super::verdict::{Outcome, VerdictHooks};
use crate::clock::Instant;
use crate::config::Config;
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
    /// with what was found by then (see [`Outcome::verdict`]).
    pub fn verdict(&self, program: &Program) -> Result<Outcome, RunError> {
        let mut hooks = VerdictHooks::new(program, self.config);
        let result = drive(program, self.config, self.deadline, &mut hooks);
        hooks.finish(result)
    }

    /// Whether some fair execution hangs.
    pub fn liveness(&self, program: &Program) -> Result<LivenessOutcome, RunError> {
        let mut hooks = LivenessHooks::new(program);
        drive(program, self.config, self.deadline, &mut hooks)?;
        Ok(hooks.finish())
    }

    /// The explanation of the verdict, with the program's verdict decided in the same pass.
    pub fn explain(&self, program: &Program) -> Result<Explanation, RunError> {
        let mut hooks = ExplainHooks::new(program, self.config, self.deadline);
        let result = drive(program, self.config, self.deadline, &mut hooks);
        hooks.finish(result)
    }
}
