//! What a trace is made of: its events (who performs them, what they do, what they depend
//! on), its asynchronous operations and group waits, and how a run can be stuck.

use super::deps::DepMask;
use super::values::SymExpr;
use crate::program::mbarrier::MbUpdate;
use crate::program::{CopyKind, ExchangeForm, Reg};

/// What a trace event does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceOp {
    Read,
    Write,
    Fence,
    Barrier {
        instance: i64,
        id: Option<i64>,
        count: Option<i64>,
        arrive: bool,
    },
    /// `barrier.cluster.arrive` / `.wait`.
    ClusterBarrier {
        arrive: bool,
    },
    /// `bar.warp.sync` with the value of its membermask.
    WarpBarrier {
        mask: u32,
    },
    /// A point in program order with no memory effect: an async-group wait (the target of its
    /// completion edges), or an instruction whose only effect is undefined behaviour.
    Marker,
}

/// Who performs an event: the thread itself, or the async agent of one of its asynchronous
/// operations (digest §14.1 P2), in one of the agent's roles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Thread,
    /// A read of the copy's source.
    Source,
    /// A write (or reduction) of the copy's destination.
    Destination,
    /// The complete-tx of a bulk copy, or the arrive-on of `cp.async.mbarrier.arrive`.
    Signal,
}

/// The mbarrier operation an event belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MbKind {
    Init,
    Inval,
    Arrive,
    ExpectTx,
    CompleteTx,
    IncPending,
    ArriveOn,
    Wait,
}

impl MbKind {
    pub fn of(u: &MbUpdate) -> MbKind {
        match u {
            MbUpdate::Init { .. } => MbKind::Init,
            MbUpdate::Inval => MbKind::Inval,
            MbUpdate::Arrive { .. } => MbKind::Arrive,
            MbUpdate::ExpectTx { .. } => MbKind::ExpectTx,
            MbUpdate::CompleteTx { .. } => MbKind::CompleteTx,
            MbUpdate::IncPending => MbKind::IncPending,
            MbUpdate::ArriveOn => MbKind::ArriveOn,
            MbUpdate::Wait { .. } => MbKind::Wait,
        }
    }
}

/// What an async agent does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsyncKind {
    Copy(CopyKind),
    /// The arrive-on of `cp.async.mbarrier.arrive`.
    ArriveOn,
}

/// One asynchronous operation of a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct AsyncOp {
    /// The issuing instruction.
    pub instr: usize,
    pub kind: AsyncKind,
    /// Its events (trace indices).
    pub events: Vec<usize>,
    /// For an arrive-on: the cp.async ops it tracks (every prior cp.async of the thread).
    pub tracked: Vec<usize>,
    /// The index of the async-group (of its kind) it was committed in.
    pub group: Option<usize>,
}

/// A completed async-group wait: the marker event and the ops whose completion it observes.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupWait {
    pub marker: usize,
    pub ops: Vec<usize>,
    /// `.read`: only the source reads are complete.
    pub read_only: bool,
}

/// One event of a thread trace.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceEvent {
    pub op: TraceOp,
    /// Index of the instruction in the thread's code.
    pub instr: usize,
    /// Virtual location accessed (memory events only).
    pub location: Option<usize>,
    /// Value read or written.
    pub value: i64,
    /// For the read half of an RMW: index of its write half; for the write half: its read half.
    pub rmw_partner: Option<usize>,
    pub addr_deps: DepMask,
    pub data_deps: DepMask,
    pub ctrl_deps: DepMask,
    /// The async operation (index into `Trace::ops`) whose agent performs this event.
    pub agent: Option<usize>,
    pub role: Role,
    pub mb: Option<MbKind>,
    /// Byte range of the whole access within its variable (complete overlap is equal ranges).
    pub range: (i64, i64),
    /// Undefined behaviour of this event, with the rule.
    pub ub: Option<String>,
    /// For mbarrier waits: whether the wait returned True.
    pub wait_result: Option<bool>,
    /// The mbarrier operation this event is part of (its value is symbolic in the trace).
    pub mb_op: Option<MbUpdate>,
    /// The result the thread observed (the phase an arrive returned, a wait's 0/1), when used.
    pub mb_result: Option<i64>,
    /// A read whose value never decides the thread's control flow or an address: its value is
    /// left open and taken from whichever write it reads from, instead of branching the trace.
    pub symbolic: bool,
    /// For a write whose value is open: the expression, and every value it can take (None:
    /// more than the value-domain limit).
    pub sym: Option<SymExpr>,
    pub possible: Option<Vec<i64>>,
    /// A tensor copy's read of its tensor map (in the tensormap proxy).
    pub tensormap: bool,
}

impl TraceEvent {
    /// The values a write may write: its value, every value an open value can take, or None
    /// (any value) when there are more than the domain limit.
    pub fn written_values(&self) -> Vec<Option<i64>> {
        match (&self.sym, &self.possible) {
            (None, _) => vec![Some(self.value)],
            (Some(_), Some(vs)) => vs.iter().map(|&v| Some(v)).collect(),
            (Some(_), None) => vec![None],
        }
    }
}

/// One complete (or cut) run of a thread.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    pub events: Vec<TraceEvent>,
    /// Final register values (those left open are in `symbolic_registers`; here 0).
    pub registers: Vec<i64>,
    /// Indices of the instructions executed, in order (used for diagnostics and liveness).
    pub path: Vec<usize>,
    /// For a run that never finishes (liveness only): where and how it is stuck.
    pub stuck: Option<Stuck>,
    pub ops: Vec<AsyncOp>,
    pub waits: Vec<GroupWait>,
    /// Registers whose final value is left open: the expression over the trace's reads.
    pub symbolic_registers: Vec<(Reg, SymExpr)>,
    /// The values the thread's read-modify-writes of counters read (physical location, value):
    /// on a counter every value is written once, and two read-modify-writes cannot both read
    /// the same write (atomicity), so no two runs of one execution share a pair.
    pub counter_claims: Vec<(usize, i64)>,
    /// The branches on unknown values the run took (instruction indices, in run order): a
    /// finding of an execution with this run holds only if the unknown values let the branches
    /// go the way the run went.
    pub assumed: Vec<usize>,
    /// The run's warp exchanges, in order (`exchange`): the k-th meets the other lanes' k-th.
    pub exchanges: Vec<ExchangeRecord>,
}

impl Trace {
    /// The run of a thread that is not part of the question: no events, the initial
    /// `registers`. A decision over a group of threads gives every thread outside it this run
    /// (`decide::groups`), so that thread indices, names and placements stay the program's.
    pub fn absent(registers: Vec<i64>) -> Trace {
        Trace {
            events: Vec::new(),
            registers,
            path: Vec::new(),
            stuck: None,
            ops: Vec::new(),
            waits: Vec::new(),
            symbolic_registers: Vec::new(),
            counter_claims: Vec::new(),
            assumed: Vec::new(),
            exchanges: Vec::new(),
        }
    }
}

/// How a thread can be stuck forever.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stuck {
    /// Spinning in a side-effect-free loop: the run ends with one failed iteration, whose reads
    /// (trace event indices) a fair execution must see returning the final values.
    Spin { back_edge: usize, header: usize, reads: Vec<usize> },
    /// Waiting at the barrier that is the run's last event.
    Barrier { event: usize },
}

/// The result of enumerating one thread.
#[derive(Clone, Debug, Default)]
pub struct ThreadTraces {
    pub traces: Vec<Trace>,
    /// Runs that stop forever (only collected for liveness).
    pub stuck: Vec<Trace>,
    /// Some run took a non-spin back edge more than the unroll bound allows.
    pub cut: bool,
    /// What the runs dropped before their end (the failed poll of an await loop, a loop cut at
    /// the unrolling bound) wrote: (location, value) pairs, None for an open value with more
    /// values than the domain limit. No trace keeps those runs, but their prefixes happen in
    /// executions where the thread goes on, so another thread may read what they wrote: the
    /// value domains must hold it.
    pub dropped_writes: std::collections::BTreeSet<(usize, Option<i64>)>,
    /// The most writes one dropped run made (for the number of fixpoint rounds).
    pub dropped_max_writes: usize,
    /// Per back edge (instruction index) of a loop that is not an await: what the runs did there.
    pub loops: std::collections::BTreeMap<usize, LoopRuns>,
    /// The runs cut at the unrolling bound, until [`ThreadTraces::resolve_cuts`] keeps those
    /// some execution can have (and sets `cut`).
    pub(super) cut_runs: Vec<CutRun>,
    /// Per location (virtual), the most one run, kept or dropped, added to it with the thread's
    /// own read-modify-writes (the written minus the read values, where both are known): a
    /// counter's value in an execution is at most its initial value plus every thread's most.
    pub(super) increments: std::collections::BTreeMap<usize, i64>,
    /// Some run was left out because it read a counter below what the thread saw there.
    pub counter_pruned: bool,
    /// The branches on unknown values (instruction index → the origin of the value), each
    /// explored both ways.
    pub unknown_branches: std::collections::BTreeMap<usize, u32>,
    /// The instructions some run did not check because the global address of an access
    /// depends on an unknown value (instruction index → the origin of the value): a weak
    /// global load or store, the global source of a `cp.async`/bulk copy, the global side of
    /// a tensor copy whose coordinates are unknown (see `Cx::unknown_global_address`).
    pub unchecked: std::collections::BTreeMap<usize, u32>,
    /// Per k: what the k-th warp exchange of any run, kept or not, gave (instruction, source);
    /// the other lanes' results at their k-th come from these (`exchange::domains`).
    pub exchange_sources: std::collections::BTreeMap<usize, std::collections::BTreeSet<(usize, Source)>>,
    /// How many exchanges the runs kept (complete or stuck) made in all: a lane whose run ends
    /// after k of them has exited for the others' later ones.
    pub exchange_ends: std::collections::BTreeSet<usize>,
}

/// A run cut at the unrolling bound: the loop, and the values its reads can only get from a
/// write of another thread (or of an async agent): reads of a location after the thread's own
/// write of another value to it. Coherence puts such a write after the thread's own; when no
/// other writer can write the value, the run cannot happen, and its cut hides nothing.
#[derive(Clone, Debug)]
pub(super) struct CutRun {
    pub(super) back_edge: usize,
    /// (physical location, value) pairs.
    pub(super) needs: Vec<(usize, i64)>,
}

/// What the runs of one thread did at one loop (identified by its back edge).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoopRuns {
    /// The most times one instance of the loop took its back edge in a complete run.
    pub iterations: usize,
    /// Some run took the back edge more often than the unrolling bound allows, and was cut.
    pub cut: bool,
}

impl ThreadTraces {
    /// Record what one run added to each location with the thread's own read-modify-writes (see
    /// [`ThreadTraces::increments`]).
    pub(super) fn record_increments(&mut self, events: &[TraceEvent]) {
        let mut sums: std::collections::BTreeMap<usize, i64> = Default::default();
        for e in events.iter().filter(|e| e.op == TraceOp::Write && e.agent.is_none()) {
            let Some(read) = e.rmw_partner.map(|r| &events[r]) else { continue };
            let known = read.op == TraceOp::Read && !read.symbolic && read.sym.is_none() && e.sym.is_none();
            // An open increment adds its constant; any other open update, anything.
            let added =
                if known { e.value.saturating_sub(read.value) } else { e.sym.as_ref().and_then(SymExpr::increment).unwrap_or(i64::MAX) };
            let sum = sums.entry(e.location.expect("writes have a location")).or_default();
            *sum = sum.saturating_add(added);
        }
        for (l, s) in sums {
            let most = self.increments.entry(l).or_insert(s);
            *most = (*most).max(s);
        }
    }

    /// Keep the cut runs whose reads some other writer can satisfy (`may_write(location, value)`):
    /// they set `cut`, for the thread and for their loop.
    pub(super) fn resolve_cuts(&mut self, may_write: &dyn Fn(usize, i64) -> bool) {
        for run in std::mem::take(&mut self.cut_runs) {
            if run.needs.iter().all(|&(p, v)| may_write(p, v)) {
                self.cut = true;
                self.loops.entry(run.back_edge).or_default().cut = true;
            }
        }
    }

    /// Record what a run dropped before its end wrote (see [`ThreadTraces::dropped_writes`]).
    /// Whether some run was cut at the unrolling bound (before or after
    /// [`ThreadTraces::resolve_cuts`]): the runs kept do not show all the thread can do.
    pub fn has_cut_runs(&self) -> bool {
        self.cut || !self.cut_runs.is_empty()
    }

    pub(super) fn record_dropped(&mut self, events: &[TraceEvent]) {
        self.record_increments(events);
        let mut writes = 0;
        for e in events.iter().filter(|e| e.op == TraceOp::Write && e.mb_op.is_none()) {
            writes += 1;
            let loc = e.location.expect("writes have a location");
            self.dropped_writes.extend(e.written_values().into_iter().map(|v| (loc, v)));
        }
        self.dropped_max_writes = self.dropped_max_writes.max(writes);
    }
}

/// What one lane gives an exchange: the form and membermask it executed, its `a` (for `vote`,
/// the predicate after its `!`), and `shfl`'s `b` and `c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Source {
    pub form: ExchangeForm,
    pub mask: u32,
    pub a: i64,
    pub b: i64,
    pub c: i64,
}

/// One exchange of a run: the k-th is `Trace::exchanges[k]`.
#[derive(Clone, Debug, PartialEq)]
pub struct ExchangeRecord {
    /// The run's marker events of the exchange: the one that gives (its data dependencies are
    /// the source operands') and the one that takes (the results depend on it).
    pub give: usize,
    pub event: usize,
    pub instr: usize,
    pub source: Source,
    /// The results the run took (0 for a destination that is `_` or absent).
    pub d: i64,
    pub p: i64,
    /// What the source operands depend on.
    pub deps: DepMask,
}
