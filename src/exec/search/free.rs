//! Reads whose sources nothing sees: the search needs one consistent choice of them, not all.
//!
//! A read whose value decides nothing in its trace (a symbolic read: no address, branch or
//! synchronization operand depends on it) may read several writes. When the caller looks at no
//! value (`SearchGoal::values_unobserved`: no observable in the condition or the final states)
//! and the loaded model's findings do not depend on which writes such reads read
//! (`cat::free_reads`, with its guards checked on this structure), two executions that differ
//! only in those sources have the same findings. The search then decides these reads last and,
//! once one choice of them completes consistently, leaves their other choices unvisited: the
//! executions are still all decided (those choices only change which executions exist, never
//! which findings they have), and a kernel whose 32 lanes each read a neighbour's word racily
//! is decided with one execution per synchronization, not 2^32.
//!
//! What is needed of the structure besides the model's guards:
//! - the order of SC fences has one choice when some finding depends on it (the search keeps
//!   the first consistent order it finds, so two choices of the sources could keep different
//!   orders, with different findings);
//! - no ordinary write of an open value stores to an mbarrier object (the validity of objects,
//!   `MBVALID`, would then depend on the value read).

use super::{PrunePlan, SearchError, SearchGoal, StaticEnv};
use crate::cat::{ReadGuard, StaticName, Value};
use crate::exec::structure::EventStructure;

/// For each data read (as `reads`, with its possible sources `sources`): whether it is free.
#[allow(clippy::too_many_arguments)]
pub(super) fn free_reads(
    s: &EventStructure,
    statics: &StaticEnv,
    model: &super::LazyModel,
    plan: &PrunePlan,
    goal: &SearchGoal,
    reads: &[usize],
    sources: &[Vec<usize>],
    sc_fences: usize,
) -> Result<Vec<bool>, SearchError> {
    let none = vec![false; reads.len()];
    let Some(f) = plan.free_reads.as_ref().filter(|_| goal.values_unobserved) else { return Ok(none) };
    if f.on_fence_order && sc_fences > 1 {
        return Ok(none);
    }
    if s.events.iter().any(|e| e.is_write() && e.sym.is_some() && e.physical.is_some_and(|p| s.mbarrier_words[p])) {
        return Ok(none);
    }
    let mut free: Vec<bool> =
        reads.iter().map(|&r| s.symbolic_reads[r] && !goal.first_reads.contains(&r) && !goal.final_reads.contains(&r)).collect();
    if !free.contains(&true) {
        return Ok(free);
    }
    for guard in &f.guards {
        let name = match guard {
            ReadGuard::Pairs(n) | ReadGuard::Targets(n) => n,
        };
        let value = match name {
            StaticName::Env(name) => statics.lookup_static(name),
            StaticName::Def(d) => model.get()?.static_definition(*d),
        };
        // A guard this structure cannot evaluate hides nothing.
        let Some(value) = value else { return Ok(none) };
        for (k, &r) in reads.iter().enumerate() {
            free[k] &= match (&value, guard) {
                (Value::Set(set), _) => !set.contains(r),
                (Value::Rel(rel), ReadGuard::Pairs(_)) => !sources[k].iter().any(|&w| rel.contains(w, r)),
                // An empty value may come as a relation.
                (Value::Rel(rel), ReadGuard::Targets(_)) if rel.is_empty() => true,
                // `[S]` of a relation is no set: the model is not what the analysis expects.
                (Value::Rel(_), ReadGuard::Targets(_)) => return Ok(none),
            };
        }
    }
    Ok(free)
}
