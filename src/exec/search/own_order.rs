//! Per-thread coherence before any model evaluation: the writes a read cannot read because of
//! its own thread's accesses to the same location (a stale own write, an own write after it,
//! the initial value after an own write).
//!
//! The engine proposes, the cat file decides: nothing here is assumed of the model. Each denial
//! is a [`OwnPattern`] (the kinds of the two or three accesses involved, in program order), and
//! the search denies a source only when the [`OwnOrderOracle`] the plan carries says the
//! loaded model forbids that pattern. `decide` answers by deciding a one-thread probe program
//! of exactly those accesses under the model (once per pattern and model). The assumption,
//! documented in ARCHITECTURE.md: a pattern the model forbids in a thread of its own, it
//! forbids inside any program (more events only add constraints in every model we ship).
//! Only plain accesses of the generic proxy to a word of global memory, through the read's own
//! name, take part (`ld`, `st`, `atom` with a destination); everything else (aliases of the
//! word, async agents, mbarriers, sub-word and vector accesses, `red`, `.nc` loads, other
//! proxies and state spaces) keeps every source.

use crate::exec::structure::EventStructure;
use crate::program::{AccessSpace, Op, Proxy, Scope, Sem};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// The instruction kinds the probes distinguish.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    Load,
    Store,
    Atom,
}

/// One access as a probe writes it: kind, semantics, scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Access {
    pub kind: AccessKind,
    pub sem: Sem,
    pub scope: Option<Scope>,
}

/// A thread's accesses to one location, in program order, and the source denied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OwnPattern {
    /// The write `w`, a later write `later`, then the read `r`: `r` reads `w`.
    Stale { w: Access, later: Access, r: Access },
    /// The read `r`, then the write `w`: `r` reads `w`.
    Future { r: Access, w: Access },
    /// The write `w`, then the read `r`: `r` reads the initial value.
    InitAfterOwn { w: Access, r: Access },
}

/// Whether the loaded model forbids a pattern (in a thread of its own).
pub type OwnOrderOracle = Arc<dyn Fn(&OwnPattern) -> bool + Send + Sync>;

/// The tags an access may carry and still take part.
const PLAIN_TAGS: [&str; 10] = ["RLX", "ACQ", "REL", "WEAK", "GEN", "CTA", "CLUSTER", "GPU", "SYS", "RMW"];

/// The access an event is, when it takes part in the filter.
fn access(s: &EventStructure, e: usize) -> Option<Access> {
    let ev = &s.events[e];
    if ev.agent.is_some() || ev.mb_op.is_some() || ev.tags.iter().any(|t| !PLAIN_TAGS.contains(t)) {
        return None;
    }
    let instr = &s.program.threads[ev.thread?].code[ev.instr?];
    let word = |ty: &Option<crate::program::types::Ty>| ty.as_ref().is_none_or(|t| t.bits == 32);
    let global = |space: &AccessSpace| matches!(space, AccessSpace::Generic | AccessSpace::Global);
    match &instr.op {
        Op::Load { ty, sem, scope, proxy: Proxy::Generic, space, nc: false, .. } if word(ty) && global(space) => {
            Some(Access { kind: AccessKind::Load, sem: *sem, scope: *scope })
        }
        Op::Store { ty, sem, scope, proxy: Proxy::Generic, space, .. } if word(ty) && global(space) => {
            Some(Access { kind: AccessKind::Store, sem: *sem, scope: *scope })
        }
        Op::Rmw { dst: Some(_), ty, sem, scope, proxy: Proxy::Generic, space, .. } if word(ty) && global(space) => {
            Some(Access { kind: AccessKind::Atom, sem: *sem, scope: Some(*scope) })
        }
        _ => None,
    }
}

/// The filter of one event structure: the oracle's answers, remembered per pattern.
pub(super) struct OwnOrder<'o> {
    oracle: &'o OwnOrderOracle,
    known: FxHashMap<OwnPattern, bool>,
    /// Physical locations some sub-word store merges into (left alone).
    merged: Vec<bool>,
    /// How many sources were denied.
    pub(super) denied: u64,
}

impl<'o> OwnOrder<'o> {
    pub(super) fn new(s: &EventStructure, oracle: &'o OwnOrderOracle) -> Self {
        let mut merged = vec![false; s.program.physical.len()];
        for e in s.events.iter().filter(|e| e.has_tag("MERGE")) {
            if let Some(p) = e.physical {
                merged[p] = true;
            }
        }
        OwnOrder { oracle, known: FxHashMap::default(), merged, denied: 0 }
    }

    fn forbids(&mut self, p: OwnPattern) -> bool {
        let oracle = self.oracle;
        *self.known.entry(p).or_insert_with(|| oracle(&p))
    }

    /// Keep of `sources` (some of `writes`, the writes of read `r`'s location, initial first)
    /// those the model does not forbid `r` to read because of `r`'s own thread.
    pub(super) fn filter(&mut self, s: &EventStructure, r: usize, writes: &[usize], sources: &mut Vec<usize>) {
        let ev = &s.events[r];
        let (Some(t), Some(p)) = (ev.thread, ev.physical) else { return };
        if self.merged[p] {
            return;
        }
        let Some(ra) = access(s, r) else { return };
        let po = &s.relations["po"];
        let own = |w: usize| s.events[w].thread == Some(t) && s.events[w].agent.is_none();
        // Through the same name: an alias of the word (`y @ generic aliases x`) is ordered
        // only by an alias fence, which the probes do not have.
        let same_name = |w: usize| s.events[w].location == ev.location;
        // The thread's last write to the word before r (events of a thread are in program
        // order); the filter needs it to take part, through r's name.
        let last = writes.iter().copied().filter(|&w| own(w) && po.contains(w, r)).max();
        let last = last.filter(|&l| same_name(l)).and_then(|l| access(s, l).map(|a| (l, a)));
        let before = sources.len();
        let mut keep = Vec::with_capacity(sources.len());
        for &w in sources.iter() {
            let denied = if s.events[w].thread.is_none() {
                last.is_some_and(|(_, la)| self.forbids(OwnPattern::InitAfterOwn { w: la, r: ra }))
            } else if !own(w) || !same_name(w) {
                false
            } else if po.contains(r, w) {
                access(s, w).is_some_and(|wa| self.forbids(OwnPattern::Future { r: ra, w: wa }))
            } else {
                match (last, access(s, w)) {
                    (Some((l, la)), Some(wa)) if l != w && po.contains(w, r) => self.forbids(OwnPattern::Stale { w: wa, later: la, r: ra }),
                    _ => false,
                }
            };
            if !denied {
                keep.push(w);
            }
        }
        self.denied += (before - keep.len()) as u64;
        *sources = keep;
    }
}
