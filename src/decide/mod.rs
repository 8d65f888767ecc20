//! Deciding a program under a [`Config`](crate::config::Config): one driver
//! ([`Decider`]) runs every mode ([`Mode`]: verdict, liveness, explain) over the same pipeline;
//! the modes' results, their findings and the reports written from them.
//!
//! - `driver`: the loop (explore, combine runs, build structures, resolve barriers, search);
//!   `groups`: the groups of threads that share nothing written, walked one at a time;
//! - `verdict`: the condition's outcome ([`Outcome`], [`Verdict`]); `directed`: the
//!   outcome-directed verdict search once the enumeration of final states exceeds its budget;
//! - `liveness` (with `poll_filter`): whether a fair execution hangs;
//! - `explain`: a witness or the rejected candidates, and drawings of them;
//! - `findings`: undefined behaviour, races and flags of an execution, with hints;
//! - `report`: herd7's block, the verdict block, JSON; `suite`: expectation CSVs.

mod combos;
mod decider;
pub mod directed;
mod driver;
pub mod explain;
pub mod findings;
mod groups;
pub mod liveness;
mod own_order;
mod poll_filter;
pub mod reading_notes;
pub mod report;
pub mod suite;
mod target;
mod thin_air;
pub mod verdict;

pub use decider::{Decider, Decision, Mode};
pub use driver::independent_groups;
pub use driver::RunError;
pub use explain::Explanation;
pub use liveness::{LivenessOutcome, LivenessStatus, StuckThread};
pub use verdict::{model_mismatch, Outcome, State, Verdict};
