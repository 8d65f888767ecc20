//! What every search of one test shares: the [`Budget`] of model evaluations and the deadline,
//! the [`SearchStats`] it records, and the [`SearchError`]s a search ends with.

use crate::clock::Instant;
use crate::exec::trace::ExploreError;

/// Statistics of a search, for reports and benchmarks.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct SearchStats {
    /// Model evaluations of every kind: on partial candidates (pruning, forcing) and complete ones.
    pub evaluations: u64,
    /// Complete candidate executions evaluated.
    pub candidates: u64,
    /// Partial candidates built: each choice of a write to read from or of an mbarrier state
    /// to read, on top of the choices above it.
    pub partial: u64,
    /// Of those, the ones with no consistent execution below them: work the model threw away.
    pub dead_ends: u64,
    /// Consistent executions found.
    pub consistent: u64,
}

impl SearchStats {
    pub fn add(&mut self, o: &SearchStats) {
        self.evaluations += o.evaluations;
        self.candidates += o.candidates;
        self.partial += o.partial;
        self.dead_ends += o.dead_ends;
        self.consistent += o.consistent;
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The visitor asked to stop (internal; `search` returns Ok).
    #[error("search stopped")]
    Stopped,
    #[error("{0}")]
    Model(crate::cat::CatError),
    #[error("{0}")]
    Explore(ExploreError),
}

/// What every search of one test shares: the budget of model evaluations, the deadline, the
/// statistics.
#[derive(Debug)]
pub struct Budget {
    /// Evaluations left.
    pub left: u64,
    /// The configured limit (for messages).
    pub limit: u64,
    /// Give up at this instant (`--timeout`).
    pub deadline: Option<Instant>,
    /// The configured timeout in seconds (for messages).
    pub timeout_secs: f64,
    pub stats: SearchStats,
}

impl Budget {
    /// A budget of `limits.max_candidates`, ending at `deadline` (or `limits.timeout` from now).
    pub fn new(limits: &crate::config::Limits, deadline: Option<Instant>) -> Self {
        Budget {
            left: limits.max_candidates,
            limit: limits.max_candidates,
            deadline: deadline.or_else(|| limits.timeout.map(|t| Instant::now() + t)),
            timeout_secs: limits.timeout.map(|t| t.as_secs_f64()).unwrap_or(0.0),
            stats: SearchStats::default(),
        }
    }

    /// Spend one unit (one model evaluation, one trace combination, one mbarrier state).
    pub fn charge(&mut self) -> Result<(), SearchError> {
        if self.left == 0 {
            return Err(SearchError::Explore(ExploreError::TooManyCandidates { limit: self.limit }));
        }
        self.left -= 1;
        if let Some(d) = self.deadline {
            // Instant::now is cheap next to a model evaluation.
            if Instant::now() >= d {
                return Err(SearchError::Explore(ExploreError::Timeout { seconds: self.timeout_secs }));
            }
        }
        Ok(())
    }

    pub(super) fn evaluation(&mut self) -> Result<(), SearchError> {
        self.charge()?;
        self.stats.evaluations += 1;
        Ok(())
    }
}
