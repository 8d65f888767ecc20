//! From a program to candidate executions: per-thread traces, event structures, and the search
//! over reads-from, fence-SC order and coherence.
pub mod mbgraph;
pub mod reduce;
pub mod search;
pub mod structure;
pub mod trace;
