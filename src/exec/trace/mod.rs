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
//!   elided words); `survey`: the words a program's runs touch together;
//! - `state`: a run in progress and the primitives that add events to it; `async_copy` and
//!   `tensor`: the events of asynchronous operations; `sizes`: accesses that are not one whole
//!   word (8- and 16-bit loads and stores, 64-bit atomics);
//! - `thread`: the per-thread interpreter; this file: the value-domain fixpoint over all threads.

mod arith;
mod async_copy;
mod control;
mod counters;
mod deps;
mod error;
mod event;
mod exchange;
mod loops;
mod matrix;
mod sizes;
mod state;
mod survey;
mod sym_walk;
mod tensor;
mod tensormap;
mod thread;
mod values;
mod words;

pub use arith::{compare, join64, local3_result, local_result, rmw_result};
pub use deps::DepMask;
pub use error::ExploreError;
pub use event::{
    AsyncKind, AsyncOp, ExchangeRecord, GroupWait, LoopRuns, MbKind, Role, Source, Stuck, ThreadTraces, Trace, TraceEvent, TraceOp,
};
pub use exchange::{consistent as exchanges_consistent, meetings, Lanes, Meeting};
use thread::thread_traces;
pub use thread::ProgramFacts;
pub use values::{advance, Domains, RegVal, SymExpr};
pub use words::{redundant_words, word_fates, words_are_static, WordFate};

use crate::config::Limits;
use crate::program::Program;
use std::collections::BTreeSet;

/// Compute the value domains by fixpoint, then the traces of every thread under them.
pub fn explore(program: &Program, limits: &Limits, liveness: bool) -> Result<(Domains, Vec<ThreadTraces>), ExploreError> {
    explore_until(program, limits, liveness, Default::default(), None)
}

/// [`explore`], giving up with [`ExploreError::Timeout`] at `deadline`.
pub fn explore_until(
    program: &Program,
    limits: &Limits,
    liveness: bool,
    f32_subnormals: crate::exec::reduce::F32Subnormals,
    deadline: Option<crate::clock::Instant>,
) -> Result<(Domains, Vec<ThreadTraces>), ExploreError> {
    let elided_by = |fates: &[WordFate]| -> Vec<bool> { fates.iter().map(|f| *f != WordFate::Kept).collect() };
    let statics = words::static_fates(program);
    let static_elided = statics.as_deref().map_or_else(|| vec![false; program.locations.len()], elided_by);
    let facts = ProgramFacts { f32_subnormals, ..ProgramFacts::of(program, static_elided) };
    if !limits.word_survey || statics.is_some() {
        return fixpoint(program, &facts, limits, liveness, deadline, None);
    }
    let mut fates = speculative_fates(program);
    // Enumerate with an elision, derive the elision from what was touched (in this and every
    // earlier pass), until the two agree (`survey`): at most this many passes, then none.
    const PASSES: u64 = 4;
    let mut touched = survey::Touched::default();
    for pass in 0..PASSES {
        let surveyed = ProgramFacts { elided: elided_by(&fates), ..facts.clone() };
        let seen = std::cell::RefCell::default();
        let result = fixpoint(program, &surveyed, limits, liveness, deadline, Some((pass, &seen)));
        if let Err(e @ ExploreError::Timeout { .. }) = result {
            return Err(e);
        }
        touched.absorb(seen.into_inner());
        let next = touched.fates(program);
        if next == fates {
            return result;
        }
        fates = next;
    }
    fixpoint(program, &facts, limits, liveness, deadline, None)
}

/// The elision the first survey pass runs with, where the static one ([`words::static_fates`])
/// cannot tell: every word but the first of its variable is taken to mirror that one
/// (mbarriers, words shown and aliased words apart). The pass's runs are what the survey needs,
/// not an answer: every load is still made, every access still noted.
fn speculative_fates(program: &Program) -> Vec<WordFate> {
    let always = words::always_kept(program);
    (0..program.locations.len())
        .map(|l| {
            let first = program.variable_of(l).first_location;
            if always[l] || l == first {
                WordFate::Kept
            } else {
                WordFate::Mirrors(first)
            }
        })
        .collect()
}

/// The value-domain fixpoint with the elision `facts` gives; with a survey (its pass, and what
/// it collects), every access is noted too.
fn fixpoint(
    program: &Program,
    facts: &ProgramFacts,
    limits: &Limits,
    liveness: bool,
    deadline: Option<crate::clock::Instant>,
    survey: Option<(u64, &std::cell::RefCell<survey::Touched>)>,
) -> Result<(Domains, Vec<ThreadTraces>), ExploreError> {
    let timeout = || ExploreError::Timeout { seconds: limits.timeout.map(|t| t.as_secs_f64()).unwrap_or(0.0) };
    let mut domains: Domains = program.physical.iter().map(|p| BTreeSet::from([p.init])).collect();
    // One thread's runs, surveyed when a pass is given (each round and thread salts its own).
    let mut enumerations = 0u64;
    let mut run_thread = |t: usize, thread: &crate::program::Thread, domains: &Domains, exchange_domains: &exchange::ExchangeDomains| {
        enumerations += 1;
        let taken = survey.map(|(pass, _)| survey::Survey::new((pass << 40) ^ enumerations));
        let out = thread_traces(program, facts, t, thread, domains, exchange_domains, limits, liveness, deadline, taken.as_ref());
        if let (Some(taken), Some((_, touched))) = (taken, survey) {
            touched.borrow_mut().absorb(taken.into_touched());
        }
        out
    };
    let mut exchange_domains = exchange::ExchangeDomains::new();
    let mut round = 0usize;
    loop {
        let mut all = Vec::new();
        let mut changed = false;
        round += 1;
        for (t, thread) in program.threads.iter().enumerate() {
            if deadline.is_some_and(|d| crate::clock::Instant::now() >= d) {
                return Err(timeout());
            }
            let traces = run_thread(t, thread, &domains, &exchange_domains)?;
            all.push(traces);
        }
        // A counter never holds more than its initial value plus what every thread's runs add
        // to it: larger values no read can return are left out (they would only grow, round
        // after round, from reads of ever larger values).
        let caps = counter_caps(program, &facts.counters, &all);
        for tt in &all {
            let kept = tt.traces.iter().chain(&tt.stuck).flat_map(|tr| &tr.events).filter(|e| e.op == TraceOp::Write && e.mb_op.is_none());
            // An open value adds every value it can take.
            let written = kept
                .flat_map(|e| {
                    let loc = e.location.expect("writes have a location");
                    e.written_values().into_iter().map(move |v| (loc, v))
                })
                .chain(tt.dropped_writes.iter().copied());
            for (loc, value) in written {
                let p = program.locations[loc].physical;
                let too_many = || ExploreError::DomainTooLarge { location: program.physical_name(p), limit: limits.max_domain };
                let Some(v) = value else { return Err(too_many()) };
                if caps[p].is_some_and(|cap| v > cap) {
                    continue;
                }
                if domains[p].insert(v) {
                    changed = true;
                    if domains[p].len() > limits.max_domain {
                        return Err(too_many());
                    }
                }
            }
        }
        // Every value of an execution is justified by a chain of reads-from and dependency steps
        // that visits each write at most once (No-Thin-Air makes the chain acyclic), and each
        // round extends chains by one step. So as many rounds as an execution has writes reach
        // every value; more rounds would only feed counters values no execution can produce.
        // A lane's k-th exchange gets what the others' k-th gave this round: one more round per
        // exchange of a run.
        if facts.lanes.any() {
            let next = exchange::domains(program, &facts.lanes, &all, limits.max_domain)?;
            if next != exchange_domains {
                exchange_domains = next;
                changed = true;
            }
        }
        let exchanges_per_execution: usize = all.iter().map(|tt| tt.exchange_sources.keys().next_back().map_or(0, |k| k + 1)).sum();
        let writes_per_execution: usize = all
            .iter()
            .map(|tt: &ThreadTraces| {
                let kept = tt.traces.iter().chain(&tt.stuck).map(|tr| tr.events.iter().filter(|e| e.op == TraceOp::Write).count());
                kept.max().unwrap_or(0).max(tt.dropped_max_writes)
            })
            .sum();
        if !changed || round > writes_per_execution + exchanges_per_execution {
            if changed {
                // The domains grew in the last round: recompute the traces so reads may return
                // the newest values too.
                all = program
                    .threads
                    .iter()
                    .enumerate()
                    .map(|(t, th)| run_thread(t, th, &domains, &exchange_domains))
                    .collect::<Result<Vec<_>, _>>()?;
            }
            resolve_cuts(program, &mut all);
            return Ok((domains, all));
        }
    }
}

/// Per physical location, for counters, the largest value an execution can give it: its
/// initial value plus the most each thread's runs add to it.
fn counter_caps(program: &Program, counters: &[bool], all: &[ThreadTraces]) -> Vec<Option<i64>> {
    let mut caps: Vec<Option<i64>> = program.physical.iter().zip(counters).map(|(p, &counter)| counter.then_some(p.init)).collect();
    for tt in all {
        for (&l, &added) in &tt.increments {
            if let Some(cap) = caps[program.locations[l].physical].as_mut() {
                *cap = cap.saturating_add(added.max(0));
            }
        }
    }
    caps
}

/// Keep the runs cut at the unrolling bound that some execution can have: a cut run whose read
/// needs a value that no other thread (nor an async agent) ever writes at that location cannot
/// happen (see [`event::CutRun`]).
fn resolve_cuts(program: &Program, all: &mut [ThreadTraces]) {
    // Per thread: what its own plain writes (not its async agents') write, and what everything
    // writes; None for an open value with more values than the domain limit (any value).
    let writes = |tt: &ThreadTraces, plain: bool| -> BTreeSet<(usize, Option<i64>)> {
        let kept = tt.traces.iter().chain(&tt.stuck).flat_map(|tr| &tr.events);
        let mut out: BTreeSet<(usize, Option<i64>)> = kept
            .filter(|e| e.op == TraceOp::Write && e.mb_op.is_none() && (e.agent.is_none()) == plain)
            .flat_map(|e| {
                let p = program.locations[e.location.expect("writes have a location")].physical;
                e.written_values().into_iter().map(move |v| (p, v))
            })
            .collect();
        if plain {
            out.extend(tt.dropped_writes.iter().map(|&(l, v)| (program.locations[l].physical, v)));
        }
        out
    };
    let plain: Vec<_> = all.iter().map(|tt| writes(tt, true)).collect();
    let agents: Vec<_> = all.iter().map(|tt| writes(tt, false)).collect();
    for (t, tt) in all.iter_mut().enumerate() {
        let may_write = |p: usize, v: i64| {
            let has = |set: &BTreeSet<(usize, Option<i64>)>| set.contains(&(p, Some(v))) || set.contains(&(p, None));
            has(&agents[t]) || (0..plain.len()).any(|u| (u != t && has(&plain[u])) || has(&agents[u]))
        };
        tt.resolve_cuts(&may_write);
    }
}

#[cfg(test)]
mod tests;
