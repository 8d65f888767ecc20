//! What every search of one test shares: the [`Budget`] of model evaluations, the deadline and
//! the memory limit, the [`SearchStats`] it records, and the [`SearchError`]s a search ends with.

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
    /// Sources denied to reads by the model's causality check on bounds (`causal.rs`), before
    /// any was tried.
    pub causal_denied: u64,
    /// Choices of reads whose sources no finding sees, left unvisited once another choice had
    /// a consistent execution below it (`free.rs`).
    pub free_left: u64,
}

impl SearchStats {
    pub fn add(&mut self, o: &SearchStats) {
        self.evaluations += o.evaluations;
        self.candidates += o.candidates;
        self.partial += o.partial;
        self.dead_ends += o.dead_ends;
        self.consistent += o.consistent;
        self.causal_denied += o.causal_denied;
        self.free_left += o.free_left;
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
    /// `--max-memory`, in MiB.
    pub max_memory_mib: u64,
    /// `Limits::plain_mbarrier_states`.
    pub plain_mbarrier_states: usize,
    /// Charges since the resident size was last read.
    unread_charges: u32,
    pub stats: SearchStats,
}

/// The resident size is read once in this many charges (reading it costs a system call or
/// three, a model evaluation far more).
const CHARGES_PER_MEMORY_CHECK: u32 = 64;

/// Bytes in a MiB.
const MIB: u64 = 1 << 20;

/// The process's resident size in bytes, where the system tells it (Linux: `/proc/self/statm`).
pub fn resident_bytes() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
        let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
        // The page size of every Linux target ptxmm is built for (x86-64, aarch64 with 4 KiB
        // pages); a larger one only makes the estimate low.
        Some(pages * 4096)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

impl Budget {
    /// A budget of `limits.max_candidates`, ending at `deadline` (or `limits.timeout` from now).
    pub fn new(limits: &crate::config::Limits, deadline: Option<Instant>) -> Self {
        Budget {
            left: limits.max_candidates,
            limit: limits.max_candidates,
            deadline: deadline.or_else(|| limits.timeout.map(|t| Instant::now() + t)),
            timeout_secs: limits.timeout.map(|t| t.as_secs_f64()).unwrap_or(0.0),
            max_memory_mib: limits.max_memory_mib,
            plain_mbarrier_states: limits.plain_mbarrier_states,
            unread_charges: 0,
            stats: SearchStats::default(),
        }
    }

    /// Spend one unit (one model evaluation, one trace combination, one mbarrier state).
    pub fn charge(&mut self) -> Result<(), SearchError> {
        if self.left == 0 {
            return Err(SearchError::Explore(ExploreError::TooManyCandidates { limit: self.limit }));
        }
        self.left -= 1;
        self.tick()
    }

    /// A step of work that charges nothing (a decision with one option): stop at the deadline,
    /// and, now and then, at the memory limit. Instant::now is cheap next to a step.
    pub fn tick(&mut self) -> Result<(), SearchError> {
        self.unread_charges += 1;
        if self.unread_charges >= CHARGES_PER_MEMORY_CHECK {
            self.check_resident()?;
        }
        self.check_deadline()
    }

    /// Stop with the memory limit's error when the process's resident size is over it.
    pub fn check_resident(&mut self) -> Result<(), SearchError> {
        self.unread_charges = 0;
        match resident_bytes() {
            Some(bytes) if bytes > self.max_memory_mib.saturating_mul(MIB) => {
                let what = format!("the process uses {} MiB", bytes / MIB);
                Err(SearchError::Explore(ExploreError::OutOfMemory { what, limit: self.max_memory_mib }))
            }
            _ => Ok(()),
        }
    }

    /// Stop with the memory limit's error, before allocating, when `bytes` (what `what`
    /// needs) would not fit the memory limit next to what the process already uses.
    pub fn check_estimate(&mut self, bytes: u64, what: impl FnOnce() -> String) -> Result<(), SearchError> {
        let used = resident_bytes().unwrap_or(0);
        if bytes.saturating_add(used) > self.max_memory_mib.saturating_mul(MIB) {
            let needs = format!("{} would need about {} MiB", what(), bytes.div_ceil(MIB));
            let what = match used {
                0 => needs,
                _ => format!("the process uses {} MiB, and {needs} more", used / MIB),
            };
            return Err(SearchError::Explore(ExploreError::OutOfMemory { what, limit: self.max_memory_mib }));
        }
        self.check_resident()
    }

    /// Stop with the time limit's error once the deadline has passed.
    pub fn check_deadline(&self) -> Result<(), SearchError> {
        match self.deadline {
            Some(d) if Instant::now() >= d => Err(self.timeout()),
            _ => Ok(()),
        }
    }

    /// The error of a search stopped at the deadline.
    pub fn timeout(&self) -> SearchError {
        SearchError::Explore(ExploreError::Timeout { seconds: self.timeout_secs })
    }

    pub(super) fn evaluation(&mut self) -> Result<(), SearchError> {
        self.charge()?;
        self.stats.evaluations += 1;
        Ok(())
    }
}
