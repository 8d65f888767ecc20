//! Per-thread traces: every way one thread can run, given the values its reads may return.
//!
//! A read may return any value some write can produce at that location. Those values are not
//! known up front (writes may store values read elsewhere), so [`explore_until`] computes them as
//! a fixpoint: start from the initial values, run every thread with reads returning any value
//! in the current domains, add every value written, and repeat until nothing changes. The
//! domains over-approximate what reads can see; a candidate execution later keeps a read's value
//! only if the write it reads from wrote exactly that value, so no thin-air value survives.
//!
//! Loops: a loop whose body has no side effects (a spin or polling loop) is an *await*: only the
//! iteration that exits is kept, because failed polls write nothing and only add constraints, so
//! dropping them changes no outcome (digest §14.11). Other loops are unrolled: a trace that takes
//! a back edge more than `unroll` times is cut and reported, as herd7 does.
//!
//! Layout, lowest level first (each file imports only from those above it):
//! - `deps`: dependency masks; `arith`: PTX arithmetic on untyped values;
//! - `values`: symbolic expressions, register values and value domains;
//! - `event`: what a trace is made of; `error`: why exploration stops;
//! - `loops`, `control`, `words`: static facts about the code (spin loops, control registers,
//!   elided words);
//! - `state`: a run in progress and the primitives that add events to it; `async_copy` and
//!   `tensor`: the events of asynchronous operations;
//! - `thread`: the per-thread interpreter; this file: the value-domain fixpoint over all threads.

mod arith;
mod async_copy;
mod control;
mod deps;
mod error;
mod event;
mod loops;
mod state;
mod tensor;
mod thread;
mod values;
mod words;

pub use arith::{compare, join64, local_result, rmw_result};
pub use deps::DepMask;
pub use error::ExploreError;
pub use event::{AsyncKind, AsyncOp, GroupWait, MbKind, Role, Stuck, ThreadTraces, Trace, TraceEvent, TraceOp};
pub use thread::{thread_traces, ProgramFacts};
pub use values::{advance, Domains, RegVal, SymExpr};
pub use words::redundant_words;

use crate::config::Limits;
use crate::program::Program;
use std::collections::BTreeSet;

/// Compute the value domains by fixpoint, then the traces of every thread under them.
pub fn explore(program: &Program, limits: &Limits, liveness: bool) -> Result<(Domains, Vec<ThreadTraces>), ExploreError> {
    explore_until(program, limits, liveness, None)
}

/// [`explore`], giving up with [`ExploreError::Timeout`] at `deadline`.
pub fn explore_until(
    program: &Program,
    limits: &Limits,
    liveness: bool,
    deadline: Option<crate::clock::Instant>,
) -> Result<(Domains, Vec<ThreadTraces>), ExploreError> {
    let timeout = || ExploreError::Timeout { seconds: limits.timeout.map(|t| t.as_secs_f64()).unwrap_or(0.0) };
    let mut domains: Domains = program.physical.iter().map(|p| BTreeSet::from([p.init])).collect();
    let facts = ProgramFacts::of(program);
    let mut round = 0usize;
    loop {
        let mut all = Vec::new();
        let mut changed = false;
        round += 1;
        for (t, thread) in program.threads.iter().enumerate() {
            if deadline.is_some_and(|d| crate::clock::Instant::now() >= d) {
                return Err(timeout());
            }
            let traces = thread_traces(program, &facts, t, thread, &domains, limits, liveness)?;
            all.push(traces);
        }
        for tt in &all {
            for tr in tt.traces.iter().chain(&tt.stuck) {
                for e in &tr.events {
                    if e.op == TraceOp::Write && e.mb_op.is_none() {
                        let p = program.locations[e.location.expect("writes have a location")].physical;
                        let too_many =
                            || ExploreError::DomainTooLarge { location: program.physical[p].name.clone(), limit: limits.max_domain };
                        // An open value adds every value it can take.
                        let values = match (&e.sym, &e.possible) {
                            (None, _) => vec![e.value],
                            (Some(_), Some(vs)) => vs.clone(),
                            (Some(_), None) => return Err(too_many()),
                        };
                        for v in values {
                            if domains[p].insert(v) {
                                changed = true;
                                if domains[p].len() > limits.max_domain {
                                    return Err(too_many());
                                }
                            }
                        }
                    }
                }
            }
        }
        // Every value of an execution is justified by a chain of reads-from and dependency steps
        // that visits each write at most once (No-Thin-Air makes the chain acyclic), and each
        // round extends chains by one step. So as many rounds as an execution has writes reach
        // every value; more rounds would only feed counters values no execution can produce.
        let writes_per_execution: usize = all
            .iter()
            .map(|tt: &ThreadTraces| {
                tt.traces.iter().chain(&tt.stuck).map(|tr| tr.events.iter().filter(|e| e.op == TraceOp::Write).count()).max().unwrap_or(0)
            })
            .sum();
        if !changed || round > writes_per_execution {
            if changed {
                // The domains grew in the last round: recompute the traces so reads may return
                // the newest values too.
                let all = program
                    .threads
                    .iter()
                    .enumerate()
                    .map(|(t, th)| thread_traces(program, &facts, t, th, &domains, limits, liveness))
                    .collect::<Result<Vec<_>, _>>()?;
                return Ok((domains, all));
            }
            return Ok((domains, all));
        }
    }
}

#[cfg(test)]
mod tests;
