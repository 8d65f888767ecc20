//! What a trace is made of: its events (who performs them, what they do, what they depend
//! on), its asynchronous operations and group waits, and how a run can be stuck.

use super::deps::DepMask;
use super::values::SymExpr;
use crate::program::mbarrier::MbUpdate;
use crate::program::{CopyKind, Reg};

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
#[derive(Clone, Debug)]
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
#[derive(Clone, Debug)]
pub struct GroupWait {
    pub marker: usize,
    pub ops: Vec<usize>,
    /// `.read`: only the source reads are complete.
    pub read_only: bool,
}

/// One event of a thread trace.
#[derive(Clone, Debug)]
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
}

/// One complete (or cut) run of a thread.
#[derive(Clone, Debug)]
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
}
