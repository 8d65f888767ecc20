//! Per-thread traces: every way one thread can run, given the values its reads may return.
//!
//! A read may return any value some write can produce at that location. Those values are not
//! known up front (writes may store values read elsewhere), so [`value_domains`] computes them as
//! a fixpoint: start from the initial values, run every thread with reads returning any value
//! in the current domains, add every value written, and repeat until nothing changes. The
//! domains over-approximate what reads can see; a candidate execution later keeps a read's value
//! only if the write it reads from wrote exactly that value, so no thin-air value survives.
//!
//! Loops: a loop whose body has no side effects (a spin or polling loop) is an *await*: only the
//! iteration that exits is kept, because failed polls write nothing and only add constraints, so
//! dropping them changes no outcome (digest §14.11). Other loops are unrolled: a trace that takes
//! a back edge more than `unroll` times is cut and reported, as herd7 does.

use crate::config::Limits;
use crate::program::mbarrier::MbUpdate;
use crate::program::{
    AccessSpace, Address, AsyncCopy, Completion, CopyKind, GroupKind, Instr, LocalOp, MbOp, Op, Program, Reg, RmwOp, Space, Thread, Ty,
    Value, VariableKind,
};
use std::collections::{BTreeSet, HashMap};

#[path = "trace_tensor.rs"]
mod tensor;

/// Odometer increment; false when every combination was visited.
pub fn advance(idx: &mut [usize], sizes: &[usize]) -> bool {
    for k in (0..idx.len()).rev() {
        idx[k] += 1;
        if idx[k] < sizes[k] {
            return true;
        }
        idx[k] = 0;
    }
    false
}

/// Dependencies of a value on earlier events of the same trace: a set of trace event indices.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DepMask(Vec<u64>);

impl DepMask {
    /// No dependency.
    pub fn none() -> Self {
        DepMask(Vec::new())
    }

    /// A dependency on trace event `i`.
    pub fn single(i: usize) -> Self {
        let mut words = vec![0; i / 64 + 1];
        words[i / 64] |= 1 << (i % 64);
        DepMask(words)
    }

    pub fn union(&self, o: &DepMask) -> DepMask {
        let mut out = self.clone();
        out.union_with(o);
        out
    }

    pub fn union_with(&mut self, o: &DepMask) {
        if self.0.len() < o.0.len() {
            self.0.resize(o.0.len(), 0);
        }
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }

    /// The trace event indices, ascending.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(wi, &w)| (0..64).filter(move |b| w & (1 << b) != 0).map(move |b| wi * 64 + b))
    }
}

/// A value the trace leaves open: it is computed from reads whose values are whatever the
/// writes they read from hold (their registers never decide control flow or an address). A
/// store of such a value writes the expression; the search evaluates it once reads-from is
/// chosen. This is what keeps a thread that copies or accumulates values from branching once per
/// value every read might return.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymExpr {
    Const(i64),
    /// The value read by event `i` (a trace index; an event index once in a structure).
    Read(usize),
    Local(LocalOp, Box<SymExpr>, Box<SymExpr>),
    /// What an RMW writes: its operation on the old value and the operands.
    Rmw(RmwOp, Box<SymExpr>, Vec<SymExpr>),
    /// The low `bytes` bytes of the value (a copy zero-fills the bytes past src-size).
    Low(Box<SymExpr>, i64),
    /// Typed register arithmetic ([`Ty::local`]).
    TLocal(Ty, LocalOp, Box<SymExpr>, Box<SymExpr>),
    /// What a typed RMW computes ([`Ty::rmw`]).
    TRmw(Ty, RmwOp, Box<SymExpr>, Vec<SymExpr>),
    /// The value normalized to a type (a typed load's register, a typed store's word).
    Norm(Ty, Box<SymExpr>),
    /// A 64-bit value from its low and high 32-bit words.
    Join(Box<SymExpr>, Box<SymExpr>),
    /// The high 32 bits of a 64-bit value.
    High(Box<SymExpr>),
    /// Word `word` of what a typed `cp.reduce.async.bulk` element reduction writes, from the old
    /// destination words and the source words of the element (`exec::reduce::reduce_word`).
    Reduce(RmwOp, crate::program::RedType, usize, Vec<SymExpr>, Vec<SymExpr>),
}

impl SymExpr {
    /// The value, given the value each read returns (None: not known yet).
    pub fn eval(&self, read: &mut dyn FnMut(usize) -> Option<i64>) -> Option<i64> {
        Some(match self {
            SymExpr::Const(c) => *c,
            SymExpr::Read(i) => read(*i)?,
            SymExpr::Local(op, a, b) => local_result(*op, a.eval(read)?, b.eval(read)?),
            SymExpr::Rmw(op, old, ops) => {
                let old = old.eval(read)?;
                let ops = ops.iter().map(|o| o.eval(read).map(|v| (v, DepMask::none()))).collect::<Option<Vec<_>>>()?;
                rmw_result(*op, old, &ops)
            }
            SymExpr::Low(a, bytes) => low_bytes(a.eval(read)?, *bytes),
            SymExpr::TLocal(t, op, a, b) => t.local(*op, a.eval(read)?, b.eval(read)?),
            SymExpr::TRmw(t, op, old, ops) => {
                let old = old.eval(read)?;
                let ops = ops.iter().map(|o| o.eval(read)).collect::<Option<Vec<_>>>()?;
                t.rmw(*op, old, &ops)
            }
            SymExpr::Norm(t, a) => t.norm(a.eval(read)?),
            SymExpr::Join(lo, hi) => join64(lo.eval(read)?, hi.eval(read)?),
            SymExpr::High(a) => a.eval(read)? >> 32,
            SymExpr::Reduce(op, ty, word, old, src) => {
                let old = old.iter().map(|e| e.eval(read)).collect::<Option<Vec<_>>>()?;
                let src = src.iter().map(|e| e.eval(read)).collect::<Option<Vec<_>>>()?;
                crate::exec::reduce::reduce_word(*op, *ty, *word, &old, &src)
            }
        })
    }

    /// The same expression with every read index moved by `base` (trace to structure).
    pub fn shifted(&self, base: usize) -> SymExpr {
        match self {
            SymExpr::Const(c) => SymExpr::Const(*c),
            SymExpr::Read(i) => SymExpr::Read(base + i),
            SymExpr::Local(op, a, b) => SymExpr::Local(*op, Box::new(a.shifted(base)), Box::new(b.shifted(base))),
            SymExpr::Rmw(op, old, ops) => SymExpr::Rmw(*op, Box::new(old.shifted(base)), ops.iter().map(|o| o.shifted(base)).collect()),
            SymExpr::Low(a, bytes) => SymExpr::Low(Box::new(a.shifted(base)), *bytes),
            SymExpr::TLocal(t, op, a, b) => SymExpr::TLocal(*t, *op, Box::new(a.shifted(base)), Box::new(b.shifted(base))),
            SymExpr::TRmw(t, op, old, ops) => {
                SymExpr::TRmw(*t, *op, Box::new(old.shifted(base)), ops.iter().map(|o| o.shifted(base)).collect())
            }
            SymExpr::Norm(t, a) => SymExpr::Norm(*t, Box::new(a.shifted(base))),
            SymExpr::Join(lo, hi) => SymExpr::Join(Box::new(lo.shifted(base)), Box::new(hi.shifted(base))),
            SymExpr::High(a) => SymExpr::High(Box::new(a.shifted(base))),
            SymExpr::Reduce(op, ty, word, old, src) => SymExpr::Reduce(
                *op,
                *ty,
                *word,
                old.iter().map(|o| o.shifted(base)).collect(),
                src.iter().map(|o| o.shifted(base)).collect(),
            ),
        }
    }

    /// The reads the value depends on.
    pub fn reads(&self, out: &mut Vec<usize>) {
        match self {
            SymExpr::Const(_) => {}
            SymExpr::Read(i) => out.push(*i),
            SymExpr::Local(_, a, b) | SymExpr::TLocal(_, _, a, b) | SymExpr::Join(a, b) => {
                a.reads(out);
                b.reads(out);
            }
            SymExpr::Rmw(_, old, ops) | SymExpr::TRmw(_, _, old, ops) => {
                old.reads(out);
                ops.iter().for_each(|o| o.reads(out));
            }
            SymExpr::Low(a, _) | SymExpr::Norm(_, a) | SymExpr::High(a) => a.reads(out),
            SymExpr::Reduce(_, _, _, old, src) => old.iter().chain(src).for_each(|o| o.reads(out)),
        }
    }

    /// Every value the expression can take when each read returns a value of `domain(read)`;
    /// None when there are more than `limit`.
    pub fn possible(&self, domain: &dyn Fn(usize) -> Vec<i64>, limit: usize) -> Option<BTreeSet<i64>> {
        let mut reads = Vec::new();
        self.reads(&mut reads);
        reads.sort_unstable();
        reads.dedup();
        let domains: Vec<Vec<i64>> = reads.iter().map(|&r| domain(r)).collect();
        let mut out = BTreeSet::new();
        let mut idx = vec![0usize; reads.len()];
        if domains.iter().any(|d| d.is_empty()) {
            return Some(out);
        }
        let mut combinations = 0usize;
        loop {
            combinations += 1;
            if combinations > limit.saturating_mul(64) {
                return None;
            }
            let value = self.eval(&mut |r| reads.iter().position(|&x| x == r).map(|k| domains[k][idx[k]]));
            out.extend(value);
            if out.len() > limit {
                return None;
            }
            let sizes: Vec<usize> = domains.iter().map(|d| d.len()).collect();
            if !advance(&mut idx, &sizes) {
                return Some(out);
            }
        }
    }
}

/// A register's value in a trace: known, or left open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegVal {
    Known(i64),
    Open(SymExpr),
}

impl RegVal {
    fn expr(&self) -> SymExpr {
        match self {
            RegVal::Known(v) => SymExpr::Const(*v),
            RegVal::Open(e) => e.clone(),
        }
    }
}

/// A 64-bit value from its two words (each taken as its 32-bit pattern), low word first.
pub fn join64(lo: i64, hi: i64) -> i64 {
    ((lo as u64 & 0xFFFF_FFFF) | ((hi as u64 & 0xFFFF_FFFF) << 32)) as i64
}

/// A register value normalized to a type (untyped: unchanged).
fn typed(ty: Option<Ty>, v: RegVal) -> RegVal {
    match (ty, v) {
        (None, v) => v,
        (Some(t), RegVal::Known(x)) => RegVal::Known(t.norm(x)),
        (Some(t), RegVal::Open(e)) => RegVal::Open(SymExpr::Norm(t, Box::new(e))),
    }
}

/// The low `bytes` bytes of `v` (little-endian words).
fn low_bytes(v: i64, bytes: i64) -> i64 {
    if bytes >= 8 {
        v
    } else if bytes <= 0 {
        0
    } else {
        v & ((1i64 << (8 * bytes)) - 1)
    }
}

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

/// An error of exploration (a limit was hit, or the program did something meaningless).
#[derive(Clone, Debug, thiserror::Error)]
pub enum ExploreError {
    #[error("thread P{thread}: more than {limit} distinct traces; the test is too large to explore (raise --max-traces)")]
    TooManyTraces { thread: usize, limit: usize },
    #[error("location `{location}` can hold more than {limit} distinct values; values keep growing (is there an unbounded counter?)")]
    DomainTooLarge { location: String, limit: usize },
    #[error("thread P{thread}: a trace has more than {limit} memory events (raise --max-events, lower --unroll, or shorten the test)")]
    TraceTooLong { thread: usize, limit: usize },
    /// Printed after the file name and a colon: `file:line:col: error: ...`.
    #[error("{line}:{col}: error: thread P{thread}: {detail} (addresses must point to a word inside a declared variable)")]
    BadAddress { thread: usize, line: usize, col: usize, detail: String },
    #[error("location `{location}` has {writes} writes in one execution, hence {orders} possible coherence orders, more than the candidate budget (lower --unroll, or raise --max-candidates)")]
    TooManyCoherenceOrders { location: String, writes: usize, orders: u64 },
    #[error(
        "the search exceeded its budget of {limit} model evaluations; the test is too large (raise --max-candidates, or lower --unroll)"
    )]
    TooManyCandidates { limit: u64 },
    #[error("mbarrier `{object}` has more than {limit} reachable states in one execution; the test is too large for ptxmm")]
    TooManyMbarrierStates { object: String, limit: u64 },
    #[error("the test has more than {limit} distinct final states; ptxmm stopped collecting them (raise --max-states)")]
    TooManyStates { limit: usize },
    #[error("the decision took longer than the time limit of {seconds} s (raise --timeout, or 0 for no limit)")]
    Timeout { seconds: f64 },
}

/// What a bad address is, in the program's terms.
fn bad_address(program: &Program, thread: usize, line: usize, value: i64) -> ExploreError {
    let detail = match value.checked_sub(crate::program::ADDRESS_BASE) {
        Some(off) if off >= 0 && ((off / crate::program::ADDRESS_STRIDE) as usize) < program.variables.len() => {
            let v = &program.variables[(off / crate::program::ADDRESS_STRIDE) as usize];
            let byte = off % crate::program::ADDRESS_STRIDE;
            if byte >= v.size {
                format!("the address of byte {byte} of `{}` is past its end ({} bytes)", v.name, v.size)
            } else {
                format!("the address of byte {byte} of `{}` is not 4-byte aligned", v.name)
            }
        }
        _ => format!("the value {value} used as an address is not the address of any variable"),
    };
    // The column of the instruction on that line, for a file:line:col message.
    let col = program
        .threads
        .iter()
        .filter(|t| t.id == thread)
        .flat_map(|t| &t.code)
        .find(|i| i.line == line)
        .map(|i| program.source.line_col(i.span.start).1)
        .unwrap_or(1);
    ExploreError::BadAddress { thread, line, col, detail }
}

/// Per physical location, the values reads may return.
pub type Domains = Vec<BTreeSet<i64>>;

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

/// For each instruction index, whether it is the back edge of a side-effect-free loop.
fn spin_back_edges(code: &[Instr]) -> Vec<bool> {
    code.iter()
        .enumerate()
        .map(|(j, instr)| match instr.op {
            Op::Branch { target, .. } if target <= j => is_spin_body(&code[target..=j]),
            _ => false,
        })
        .collect()
}

/// A loop body is side-effect free when it writes no memory, crosses no barrier, and carries no
/// register value from one iteration to the next (so every iteration computes the same thing
/// from fresh reads).
fn is_spin_body(body: &[Instr]) -> bool {
    let mut written: BTreeSet<Reg> = BTreeSet::new();
    let mut read_before_write: BTreeSet<Reg> = BTreeSet::new();
    let use_value = |v: &Value, written: &BTreeSet<Reg>, rbw: &mut BTreeSet<Reg>| {
        if let Value::Reg(r) = v {
            if !written.contains(r) {
                rbw.insert(*r);
            }
        }
    };
    for instr in body {
        match &instr.op {
            Op::Store { .. }
            | Op::StoreVector { .. }
            | Op::Rmw { .. }
            | Op::Barrier { .. }
            | Op::ClusterBarrier { .. }
            | Op::AsyncCopy(_)
            | Op::Wgmma { .. }
            | Op::CommitGroup(_)
            | Op::WaitGroup { .. }
            | Op::CpAsyncArrive { .. } => return false,
            Op::Mbarrier { op: MbOp::Wait { operand, .. }, bar, dst, .. } => {
                if let Address::Reg(r, _) = bar {
                    use_value(&Value::Reg(*r), &written, &mut read_before_write);
                }
                use_value(operand, &written, &mut read_before_write);
                if let Some(d) = dst {
                    written.insert(*d);
                }
            }
            Op::Mbarrier { .. } => return false,
            Op::Load { dst, addr, .. } => {
                if let Address::Reg(r, _) = addr {
                    use_value(&Value::Reg(*r), &written, &mut read_before_write);
                }
                written.insert(*dst);
            }
            Op::LoadVector { dsts, addr, .. } => {
                if let Address::Reg(r, _) = addr {
                    use_value(&Value::Reg(*r), &written, &mut read_before_write);
                }
                written.extend(dsts.iter().copied());
            }
            Op::Local { dst, a, b, .. } => {
                use_value(a, &written, &mut read_before_write);
                use_value(b, &written, &mut read_before_write);
                written.insert(*dst);
            }
            Op::Branch { cond: Some((_, a, b)), .. } => {
                use_value(a, &written, &mut read_before_write);
                use_value(b, &written, &mut read_before_write);
            }
            Op::Branch { cond: None, .. } | Op::Fence { .. } | Op::ProxyFence { .. } | Op::AliasFence | Op::Prefetch | Op::WgmmaFence => {}
        }
    }
    read_before_write.is_disjoint(&written)
}

#[derive(Clone)]
struct State {
    pc: usize,
    regs: Vec<(RegVal, DepMask)>,
    events: Vec<TraceEvent>,
    ctrl: DepMask,
    back_edges: HashMap<usize, usize>,
    path: Vec<usize>,
    /// Event index at which the current iteration of each spin loop began.
    iteration_start: HashMap<usize, usize>,
    /// Asynchronous operations issued so far.
    ops: Vec<AsyncOp>,
    /// Per group kind (cp.async, bulk): ops issued but not committed yet, and committed groups in order.
    open: [Vec<usize>; 3],
    groups: [Vec<Vec<usize>>; 3],
    waits: Vec<GroupWait>,
}

impl State {
    fn new(regs: Vec<(RegVal, DepMask)>) -> Self {
        State {
            pc: 0,
            regs,
            events: Vec::new(),
            ctrl: DepMask::none(),
            back_edges: HashMap::new(),
            path: Vec::new(),
            iteration_start: HashMap::new(),
            ops: Vec::new(),
            open: [Vec::new(), Vec::new(), Vec::new()],
            groups: [Vec::new(), Vec::new(), Vec::new()],
            waits: Vec::new(),
        }
    }

    fn finish(self, stuck: Option<Stuck>) -> Trace {
        let symbolic_registers = self
            .regs
            .iter()
            .enumerate()
            .filter_map(|(r, (v, _))| if let RegVal::Open(e) = v { Some((r, e.clone())) } else { None })
            .collect();
        Trace {
            events: self.events,
            registers: self.regs.iter().map(|r| if let RegVal::Known(v) = r.0 { v } else { 0 }).collect(),
            path: self.path,
            stuck,
            ops: self.ops,
            waits: self.waits,
            symbolic_registers,
        }
    }

    /// A new event of the issuing thread itself, under the current control dependencies.
    fn event(&self, op: TraceOp, instr: usize) -> TraceEvent {
        TraceEvent {
            op,
            instr,
            location: None,
            value: 0,
            rmw_partner: None,
            addr_deps: DepMask::none(),
            data_deps: DepMask::none(),
            ctrl_deps: self.ctrl.clone(),
            agent: None,
            role: Role::Thread,
            mb: None,
            range: (0, 0),
            ub: None,
            wait_result: None,
            mb_op: None,
            mb_result: None,
            symbolic: false,
            sym: None,
            possible: None,
        }
    }

    /// Close the open group of this kind (§9.7.9.25.3.2: an empty group is still a group).
    fn commit(&mut self, kind: GroupKind) {
        let k = State::group_index(kind);
        let group = std::mem::take(&mut self.open[k]);
        for &op in &group {
            self.ops[op].group = Some(self.groups[k].len());
        }
        self.groups[k].push(group);
    }

    /// A memory event of the instruction at `pc` on `acc`, performed by `role` (of `agent`).
    fn access_event(&self, op: TraceOp, pc: usize, acc: &Access, role: Role, agent: Option<usize>) -> TraceEvent {
        let mut e = self.event(op, pc);
        e.location = Some(acc.loc);
        e.addr_deps = acc.deps.clone();
        e.range = acc.range;
        e.ub = acc.ub.map(str::to_string);
        e.role = role;
        e.agent = agent;
        e
    }

    fn group_index(kind: GroupKind) -> usize {
        match kind {
            GroupKind::CpAsync => 0,
            GroupKind::Bulk => 1,
            GroupKind::Wgmma => 2,
        }
    }
}

/// A memory access an instruction is about to make: where, and with which footprint.
#[derive(Clone)]
struct Access {
    loc: usize,
    range: (i64, i64),
    deps: DepMask,
    ub: Option<&'static str>,
}

/// What every thread's enumeration needs to know about the whole program, computed once.
pub struct ProgramFacts {
    /// Words whose events would mirror those of a kept word (see [`redundant_words`]).
    pub elided: Vec<bool>,
    /// The largest phase an arrive can return.
    pub max_phase: i64,
}

impl ProgramFacts {
    pub fn of(program: &Program) -> Self {
        ProgramFacts { elided: redundant_words(program), max_phase: max_phase(program) }
    }
}

/// Enumerate the traces of one thread under fixed value domains.
pub fn thread_traces(
    program: &Program,
    facts: &ProgramFacts,
    t: usize,
    thread: &Thread,
    domains: &Domains,
    limits: &Limits,
    liveness: bool,
) -> Result<ThreadTraces, ExploreError> {
    let spin = spin_back_edges(&thread.code);
    // Loop headers of spin loops: where each iteration's reads start.
    let spin_headers: BTreeSet<usize> = thread
        .code
        .iter()
        .enumerate()
        .filter_map(|(j, i)| match i.op {
            Op::Branch { target, .. } if spin[j] => Some(target),
            _ => None,
        })
        .collect();
    let mut out = ThreadTraces::default();
    let init = State::new(thread.reg_init.iter().map(|v| (RegVal::Known(*v), DepMask::none())).collect());
    let cx = Cx {
        program,
        thread,
        domains,
        control: control_registers(&thread.code),
        elided: &facts.elided,
        max_phase: facts.max_phase,
        limits,
    };
    let mut stack = vec![init];
    while let Some(mut st) = stack.pop() {
        loop {
            if st.pc >= thread.code.len() {
                out.traces.push(st.finish(None));
                if out.traces.len() > limits.max_traces {
                    return Err(ExploreError::TooManyTraces { thread: thread.id, limit: limits.max_traces });
                }
                break;
            }
            if st.events.len() + 2 > limits.max_trace_events {
                return Err(ExploreError::TraceTooLong { thread: thread.id, limit: limits.max_trace_events });
            }
            let pc = st.pc;
            let instr = &thread.code[pc];
            st.path.push(pc);
            if spin_headers.contains(&pc) {
                st.iteration_start.insert(pc, st.events.len());
            }
            let _ = t;
            match &instr.op {
                Op::Load { dst, ty: Some(ty), addr, space, .. } if ty.bits == 64 => {
                    // One 8-byte access: two words, the low one at the lower address.
                    let mut states = vec![(st, Vec::new())];
                    for k in 0..2 {
                        let mut next = Vec::new();
                        for (mut s, mut parts) in states {
                            let acc = cx.access_word(&s, addr, k, 8, *space, instr.line)?;
                            if !cx.control.contains(dst) {
                                let idx = s.events.len();
                                let mut e = s.access_event(TraceOp::Read, pc, &acc, Role::Thread, None);
                                e.symbolic = true;
                                s.events.push(e);
                                parts.push((RegVal::Open(SymExpr::Read(idx)), idx));
                                next.push((s, parts));
                                continue;
                            }
                            for (s2, v) in cx.branch_read(s, acc, pc, Role::Thread, None) {
                                let idx = s2.events.len() - 1;
                                let mut p2 = parts.clone();
                                p2.push((RegVal::Known(v), idx));
                                next.push((s2, p2));
                            }
                        }
                        states = next;
                    }
                    for (mut s, parts) in states {
                        let deps = DepMask::single(parts[0].1).union(&DepMask::single(parts[1].1));
                        let value = match (&parts[0].0, &parts[1].0) {
                            (RegVal::Known(lo), RegVal::Known(hi)) => RegVal::Known(join64(*lo, *hi)),
                            (lo, hi) => RegVal::Open(SymExpr::Join(Box::new(lo.expr()), Box::new(hi.expr()))),
                        };
                        s.regs[*dst] = (value, deps);
                        s.pc += 1;
                        stack.push(s);
                    }
                    break;
                }
                Op::Load { dst, ty, addr, space, .. } => {
                    let acc = cx.access(&st, addr, 0, 4, *space, instr.line)?;
                    let mb = program.variable_of(acc.loc).kind == VariableKind::Mbarrier;
                    // An ordinary load of an mbarrier object reads whatever state the object's
                    // history leaves (the search gives it every state as an option, and M2 when
                    // the state is valid): open, whether or not its register decides anything.
                    if mb || !cx.control.contains(dst) {
                        cx.symbolic_read(&mut st, acc, pc, *dst);
                        // An mbarrier object's state is not a typed word: its encoding stays whole.
                        let (v, d) = st.regs[*dst].clone();
                        st.regs[*dst] = (typed(if mb { None } else { *ty }, v), d);
                        st.pc += 1;
                        continue;
                    }
                    for (s, v) in cx.branch_read(st, acc, pc, Role::Thread, None) {
                        let mut s = s;
                        let idx = s.events.len() - 1;
                        s.regs[*dst] = (typed(*ty, RegVal::Known(v)), DepMask::single(idx));
                        s.pc += 1;
                        stack.push(s);
                    }
                    break;
                }
                Op::LoadVector { dsts, addr, space, .. } => {
                    let mut states = vec![st];
                    for (k, dst) in dsts.iter().enumerate() {
                        let mut next = Vec::new();
                        for mut s in states {
                            let acc = cx.access(&s, addr, 4 * k as i64, 4, *space, instr.line)?;
                            if cx.elided[acc.loc] {
                                next.push(s);
                                continue;
                            }
                            if !cx.control.contains(dst) {
                                cx.symbolic_read(&mut s, acc, pc, *dst);
                                next.push(s);
                                continue;
                            }
                            for (mut s, v) in cx.branch_read(s, acc, pc, Role::Thread, None) {
                                let idx = s.events.len() - 1;
                                s.regs[*dst] = (RegVal::Known(v), DepMask::single(idx));
                                next.push(s);
                            }
                        }
                        states = next;
                    }
                    for mut s in states {
                        s.pc += 1;
                        stack.push(s);
                    }
                    break;
                }
                Op::Store { ty: Some(ty), addr, value, space, .. } => {
                    // Typed: each word holds its 32-bit pattern at the word's type; a 64-bit
                    // store is one 8-byte access of two words, the low one at the lower address.
                    let (v, d) = data_val(&st, &value.clone());
                    let words = if ty.bits == 64 { 2 } else { 1 };
                    for k in 0..words {
                        let acc = cx.access_word(&st, addr, k, 4 * words, *space, instr.line)?;
                        let wty = program.physical[program.locations[acc.loc].physical].ty.unwrap_or(Ty::U32);
                        let part = match (&v, k) {
                            (RegVal::Known(x), 0) => RegVal::Known(*x),
                            (RegVal::Known(x), _) => RegVal::Known(x >> 32),
                            (RegVal::Open(e), 0) => RegVal::Open(e.clone()),
                            (RegVal::Open(e), _) => RegVal::Open(SymExpr::High(Box::new(e.clone()))),
                        };
                        cx.push_write(&mut st, acc, typed(Some(wty), part), d.clone(), pc, Role::Thread, None);
                    }
                }
                Op::Store { addr, value, space, .. } => {
                    let acc = cx.access(&st, addr, 0, 4, *space, instr.line)?;
                    let (v, d) = data_val(&st, value);
                    cx.push_write(&mut st, acc, v, d, pc, Role::Thread, None);
                }
                Op::StoreVector { addr, values, space, .. } => {
                    for (k, value) in values.iter().enumerate() {
                        let acc = cx.access(&st, addr, 4 * k as i64, 4, *space, instr.line)?;
                        if cx.elided[acc.loc] {
                            continue;
                        }
                        let (v, d) = data_val(&st, value);
                        cx.push_write(&mut st, acc, v, d, pc, Role::Thread, None);
                    }
                }
                Op::Rmw { dst, ty, addr, op, operands, space, .. } => {
                    let acc = cx.access(&st, addr, 0, 4, *space, instr.line)?;
                    // A typed RMW computes at its type and stores at the word's type.
                    let wty = ty.map(|_| program.physical[program.locations[acc.loc].physical].ty.unwrap_or(Ty::U32));
                    let ops: Vec<(RegVal, DepMask)> = operands.iter().map(|o| data_val(&st, o)).collect();
                    let data: DepMask = ops.iter().fold(DepMask::none(), |m, (_, d)| m.union(d));
                    let known: Option<Vec<(i64, DepMask)>> =
                        ops.iter().map(|(v, d)| if let RegVal::Known(x) = v { Some((*x, d.clone())) } else { None }).collect();
                    // The old value decides nothing (no register, or one that only flows into
                    // data): leave it open, and the written value with it.
                    if dst.is_none_or(|d| !cx.control.contains(&d)) {
                        let idx = st.events.len();
                        let mut e = st.access_event(TraceOp::Read, pc, &acc, Role::Thread, None);
                        e.symbolic = true;
                        e.rmw_partner = Some(idx + 1);
                        st.events.push(e);
                        let old = Box::new(SymExpr::Read(idx));
                        let args = ops.iter().map(|(v, _)| v.expr()).collect();
                        let new = match ty {
                            None => SymExpr::Rmw(*op, old, args),
                            Some(t) => SymExpr::TRmw(*t, *op, old, args),
                        };
                        cx.push_write(
                            &mut st,
                            acc,
                            typed(wty, RegVal::Open(new)),
                            data.union(&DepMask::single(idx)),
                            pc,
                            Role::Thread,
                            None,
                        );
                        st.events[idx + 1].rmw_partner = Some(idx);
                        if let Some(d) = dst {
                            st.regs[*d] = (typed(*ty, RegVal::Open(SymExpr::Read(idx))), DepMask::single(idx));
                        }
                        st.pc += 1;
                        continue;
                    }
                    let known = known.expect("the operands of an RMW whose old value decides control flow are known");
                    for (mut s, old) in cx.branch_read(st, acc.clone(), pc, Role::Thread, None) {
                        let idx = s.events.len() - 1;
                        s.events[idx].rmw_partner = Some(idx + 1);
                        let new = match ty {
                            None => rmw_result(*op, old, &known),
                            Some(t) => t.rmw(*op, old, &known.iter().map(|k| k.0).collect::<Vec<_>>()),
                        };
                        cx.push_write(&mut s, acc.clone(), typed(wty, RegVal::Known(new)), data.clone(), pc, Role::Thread, None);
                        s.events[idx + 1].rmw_partner = Some(idx);
                        if let Some(d) = dst {
                            s.regs[*d] = (typed(*ty, RegVal::Known(old)), DepMask::single(idx));
                        }
                        s.pc += 1;
                        stack.push(s);
                    }
                    break;
                }
                Op::Fence { .. } | Op::ProxyFence { .. } | Op::AliasFence | Op::WgmmaFence => {
                    let e = st.event(TraceOp::Fence, pc);
                    st.events.push(e);
                }
                Op::Prefetch => {}
                Op::ClusterBarrier { arrive, .. } => {
                    let e = st.event(TraceOp::ClusterBarrier { arrive: *arrive }, pc);
                    st.events.push(e);
                    if liveness && !*arrive {
                        let event = st.events.len() - 1;
                        out.stuck.push(st.clone().finish(Some(Stuck::Barrier { event })));
                    }
                }
                Op::Barrier { instance, id, count, arrive } => {
                    let id = id.map(|v| val(&st, &v).0);
                    let count = count.map(|v| val(&st, &v).0);
                    let e = st.event(TraceOp::Barrier { instance: *instance, id, count, arrive: *arrive }, pc);
                    st.events.push(e);
                    if liveness {
                        // The run may also stop here forever, if this barrier never completes.
                        let event = st.events.len() - 1;
                        out.stuck.push(st.clone().finish(Some(Stuck::Barrier { event })));
                    }
                }
                Op::CommitGroup(kind) => st.commit(*kind),
                Op::WaitGroup { kind, n, read, all } => {
                    let k = State::group_index(*kind);
                    if *all {
                        st.commit(*kind);
                    }
                    // wait_group N: all but the N most recent committed groups are complete
                    // (§9.7.9.25.3.3; groups complete in commit order).
                    let committed = st.groups[k].len();
                    let covered: Vec<usize> = st.groups[k][..committed.saturating_sub(*n as usize)].iter().flatten().copied().collect();
                    let e = st.event(TraceOp::Marker, pc);
                    st.events.push(e);
                    let marker = st.events.len() - 1;
                    st.waits.push(GroupWait { marker, ops: covered, read_only: *read });
                }
                Op::Wgmma { a, b } => {
                    for mut s in cx.wgmma(st, a, b, pc, instr.line)? {
                        s.pc += 1;
                        stack.push(s);
                    }
                    break;
                }
                Op::AsyncCopy(copy) => {
                    for mut s in cx.async_copy(st, copy, pc, instr.line)? {
                        s.pc += 1;
                        stack.push(s);
                    }
                    break;
                }
                Op::CpAsyncArrive { bar, space, noinc } => {
                    let acc = cx.access(&st, bar, 0, 8, *space, instr.line)?;
                    let mut states = vec![st];
                    if !*noinc {
                        states = states
                            .into_iter()
                            .flat_map(|s| cx.mb_update(s, acc.clone(), MbUpdate::IncPending, pc, Role::Thread, None, false))
                            .map(|(s, _)| s)
                            .collect();
                    }
                    for mut s in states {
                        // The arrive-on is an operation of its own async agent, triggered when
                        // every prior cp.async of the thread completes (§9.7.9.25.3.4).
                        let tracked: Vec<usize> =
                            (0..s.ops.len()).filter(|&o| s.ops[o].kind == AsyncKind::Copy(CopyKind::CpAsync)).collect();
                        let agent = s.ops.len();
                        s.ops.push(AsyncOp { instr: pc, kind: AsyncKind::ArriveOn, events: Vec::new(), tracked, group: None });
                        for (mut s2, _) in cx.mb_update(s, acc.clone(), MbUpdate::ArriveOn, pc, Role::Signal, Some(agent), false) {
                            let n = s2.events.len();
                            s2.ops[agent].events.extend([n - 2, n - 1]);
                            s2.pc += 1;
                            stack.push(s2);
                        }
                    }
                    break;
                }
                Op::Mbarrier { op, bar, space, dst, .. } => {
                    let acc = cx.access(&st, bar, 0, 8, *space, instr.line)?;
                    let v = |st: &State, x: &Value| val(st, x).0;
                    let update = match op {
                        MbOp::Init { count } => MbUpdate::Init { count: v(&st, count) },
                        MbOp::Inval => MbUpdate::Inval,
                        MbOp::Arrive { count, expect_tx, no_complete, drop } => MbUpdate::Arrive {
                            count: v(&st, count),
                            expect_tx: expect_tx.as_ref().map(|x| v(&st, x)).unwrap_or(0),
                            no_complete: *no_complete,
                            drop: *drop,
                        },
                        MbOp::ExpectTx { bytes } => MbUpdate::ExpectTx { bytes: v(&st, bytes) },
                        MbOp::CompleteTx { bytes } => MbUpdate::CompleteTx { bytes: v(&st, bytes) },
                        MbOp::Wait { parity, operand } => MbUpdate::Wait { parity: *parity, operand: v(&st, operand) },
                    };
                    for (mut s, result) in cx.mb_update(st, acc, update, pc, Role::Thread, None, dst.is_some()) {
                        if let Some(d) = dst {
                            // The result depends on the value read (the read half of the update).
                            let read = s.events.iter().rposition(|e| e.op == TraceOp::Read).expect("an mbarrier op reads");
                            s.regs[*d] = (RegVal::Known(result), DepMask::single(read));
                        }
                        s.pc += 1;
                        stack.push(s);
                    }
                    break;
                }
                Op::Local { dst, op, ty, a, b } => {
                    let (x, dx) = data_val(&st, a);
                    let (y, dy) = data_val(&st, b);
                    let value = match (x, y, ty) {
                        (RegVal::Known(x), RegVal::Known(y), None) => RegVal::Known(local_result(*op, x, y)),
                        (RegVal::Known(x), RegVal::Known(y), Some(t)) => RegVal::Known(t.local(*op, x, y)),
                        (x, y, None) => RegVal::Open(SymExpr::Local(*op, Box::new(x.expr()), Box::new(y.expr()))),
                        (x, y, Some(t)) => RegVal::Open(SymExpr::TLocal(*t, *op, Box::new(x.expr()), Box::new(y.expr()))),
                    };
                    st.regs[*dst] = (value, dx.union(&dy));
                }
                Op::Branch { cond, target } => {
                    let taken = match cond {
                        None => true,
                        Some((cmp, a, b)) => {
                            let (x, dx) = val(&st, a);
                            let (y, dy) = val(&st, b);
                            // Every event after a conditional branch depends on the values it tested.
                            st.ctrl.union_with(&dx.union(&dy));
                            compare(*cmp, x, y)
                        }
                    };
                    if taken {
                        if *target <= pc {
                            if spin[pc] {
                                // A failed poll of an await loop: the exiting iteration is covered
                                // by the sibling paths, so this path adds nothing to safety. For
                                // liveness it is the run that polls forever.
                                if liveness {
                                    let from = st.iteration_start.get(target).copied().unwrap_or(0);
                                    let reads = (from..st.events.len()).filter(|&i| st.events[i].op == TraceOp::Read).collect();
                                    let stuck = Stuck::Spin { back_edge: pc, header: *target, reads };
                                    out.stuck.push(st.finish(Some(stuck)));
                                }
                                break;
                            }
                            let n = st.back_edges.entry(pc).or_insert(0);
                            *n += 1;
                            if *n > limits.unroll {
                                out.cut = true;
                                break;
                            }
                        }
                        st.pc = *target;
                        continue;
                    }
                }
            }
            st.pc += 1;
        }
    }
    Ok(out)
}

/// Words whose events would only mirror those of another word, and are therefore not generated.
///
/// A 16-byte bulk copy touches four words, but when every instruction that touches one of them
/// touches the others the same way, their events are interchangeable: the same reads-from and
/// coherence choices, the same races, the same undefined behaviour (findings name instructions,
/// not words). Such a word is elided when its value never matters (no thread reads it, no final
/// state shows it, and it is not the source of a copy into a word whose value matters), it has
/// no alias, no reduction touches it, and a kept word has the same set of accessing instructions. Words no instruction touches are elided too. Programs that address
/// memory through registers get no elision (the words an instruction touches are not static).
pub fn redundant_words(program: &Program) -> Vec<bool> {
    let n = program.locations.len();
    // A 64-bit access reads or writes two words as one: keep every word.
    let wide = |op: &Op| matches!(op, Op::Load { ty: Some(t), .. } | Op::Store { ty: Some(t), .. } if t.bits == 64);
    if program.threads.iter().any(|t| t.code.iter().any(|i| wide(&i.op))) {
        return vec![false; n];
    }
    let mut sig: Vec<BTreeSet<(usize, usize, u8)>> = vec![BTreeSet::new(); n];
    let mut keep = vec![false; n];
    // (source word, destination word) of every copy: a kept destination needs its source's value.
    let mut flows: Vec<(usize, usize)> = Vec::new();
    let words = |a: &Address, from: i64, bytes: i64| -> Option<Vec<usize>> {
        let Address::Location(l) = a else { return None };
        let var = program.variable_of(*l);
        let start = program.locations[*l].offset + from;
        Some(
            (0..(bytes.max(4) + 3) / 4)
                .map(|k| start + 4 * k)
                .filter(|o| *o >= 0 && *o < var.size)
                .map(|o| var.first_location + (o / 4) as usize)
                .filter(|&l| l < n && program.locations[l].variable == program.locations[var.first_location].variable)
                .collect(),
        )
    };
    for (t, th) in program.threads.iter().enumerate() {
        for (i, ins) in th.code.iter().enumerate() {
            let mut touch = |ws: Option<Vec<usize>>, role: u8, read: bool| -> bool {
                let Some(ws) = ws else { return false };
                for w in ws {
                    sig[w].insert((t, i, role));
                    keep[w] |= read;
                }
                true
            };
            let ok = match &ins.op {
                Op::Load { addr, .. } | Op::Rmw { addr, .. } => touch(words(addr, 0, 4), 0, true),
                Op::LoadVector { addr, dsts, .. } => touch(words(addr, 0, 4 * dsts.len() as i64), 0, true),
                Op::Store { addr, .. } => touch(words(addr, 0, 4), 1, false),
                Op::StoreVector { addr, values, .. } => touch(words(addr, 0, 4 * values.len() as i64), 1, false),
                Op::AsyncCopy(c) => {
                    // A tensor copy's words are a box of its tensor map: no elision.
                    let (Value::Const(size), None) = (c.size, &c.tensor) else { return vec![false; n] };
                    let reduce = matches!(c.kind, CopyKind::Reduce(..));
                    let mut dsts = vec![words(&c.dst, 0, size)];
                    if let Some(mask) = &c.multicast {
                        let (Value::Const(mask), Address::Location(d)) = (mask, &c.dst) else { return vec![false; n] };
                        dsts.clear();
                        for rank in (0..16).filter(|r| mask & (1 << r) != 0) {
                            let mapped = program
                                .cta_of_rank(th.placement.cluster, rank)
                                .and_then(|cta| program.same_offset_in_cta(program.address_of(*d), cta))
                                .and_then(|a| program.location_at(a));
                            dsts.push(mapped.map(|l| words(&Address::Location(l), 0, size)).unwrap_or(Some(Vec::new())));
                        }
                    }
                    // The k-th source word feeds the k-th word of each destination.
                    if let Some(sw) = words(&c.src, 0, size) {
                        for d in dsts.iter().flatten() {
                            flows.extend(sw.iter().copied().zip(d.iter().copied()));
                        }
                    }
                    dsts.into_iter().all(|d| touch(d, 2, reduce)) && touch(words(&c.src, 0, size), 3, reduce)
                }
                Op::Mbarrier { bar, .. } | Op::CpAsyncArrive { bar, .. } => touch(words(bar, 0, 4), 4, true),
                Op::Wgmma { a, b } => {
                    let rest = |x: &Address| -> Option<Vec<usize>> {
                        let Address::Location(l) = x else { return None };
                        let v = program.variable_of(*l);
                        words(x, 0, v.size - program.locations[*l].offset)
                    };
                    touch(rest(a), 3, false) && touch(rest(b), 5, false)
                }
                _ => true,
            };
            if !ok {
                return vec![false; n];
            }
        }
    }
    for o in crate::program::naming::observables(program) {
        if let crate::program::Observable::Location(p) = o {
            for (l, loc) in program.locations.iter().enumerate() {
                keep[l] |= loc.physical == p;
            }
        }
    }
    for (l, k) in keep.iter_mut().enumerate() {
        let p = program.locations[l].physical;
        *k |= program.variable_of(l).kind == VariableKind::Mbarrier || program.locations.iter().filter(|x| x.physical == p).count() > 1;
    }
    // A word whose value matters (read by a thread, shown, fed into such a word) is kept, and so
    // is every source word that feeds it, transitively through chains of copies.
    loop {
        let mut changed = false;
        for &(src, dst) in &flows {
            if keep[dst] && !keep[src] {
                keep[src] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut represented: BTreeSet<&BTreeSet<(usize, usize, u8)>> = BTreeSet::new();
    let mut out = vec![false; n];
    for l in 0..n {
        if keep[l] {
            continue;
        }
        out[l] = sig[l].is_empty() || !represented.insert(&sig[l]);
    }
    out
}

/// Registers whose values decide something: an address, a branch condition, an operand of an
/// mbarrier, barrier, wgmma or async-copy instruction, and, transitively, the operands of an
/// arithmetic instruction or RMW that writes such a register. Every other register only carries
/// data (into stores, other data registers, the final state), so reads into it stay open
/// instead of branching the trace over every value they might return.
fn control_registers(code: &[Instr]) -> BTreeSet<Reg> {
    let mut regs: Vec<Value> = Vec::new();
    let addr = |a: &Address, regs: &mut Vec<Value>| {
        if let Address::Reg(r, _) = a {
            regs.push(Value::Reg(*r));
        }
    };
    for i in code {
        match &i.op {
            Op::Load { addr: a, .. } | Op::LoadVector { addr: a, .. } | Op::Store { addr: a, .. } | Op::StoreVector { addr: a, .. } => {
                addr(a, &mut regs)
            }
            Op::Rmw { addr: a, .. } => addr(a, &mut regs),
            Op::AsyncCopy(c) => {
                addr(&c.dst, &mut regs);
                addr(&c.src, &mut regs);
                regs.push(c.size);
                regs.extend(c.src_size.iter().chain(c.ignore_src.iter()).chain(c.multicast.iter()).copied());
                regs.extend(c.tensor.iter().flat_map(|t| t.coords.iter()).copied());
                if let Completion::Mbarrier(b) = &c.completion {
                    addr(b, &mut regs);
                }
            }
            Op::CpAsyncArrive { bar, .. } => addr(bar, &mut regs),
            Op::Wgmma { a, b } => {
                addr(a, &mut regs);
                addr(b, &mut regs);
            }
            Op::Mbarrier { op, bar, .. } => {
                addr(bar, &mut regs);
                match op {
                    MbOp::Init { count } => regs.push(*count),
                    MbOp::Arrive { count, expect_tx, .. } => {
                        regs.push(*count);
                        regs.extend(expect_tx.iter().copied());
                    }
                    MbOp::ExpectTx { bytes } | MbOp::CompleteTx { bytes } => regs.push(*bytes),
                    MbOp::Wait { operand, .. } => regs.push(*operand),
                    MbOp::Inval => {}
                }
            }
            Op::Barrier { id, count, .. } => regs.extend(id.iter().chain(count.iter()).copied()),
            Op::Branch { cond: Some((_, a, b)), .. } => regs.extend([*a, *b]),
            Op::Local { .. }
            | Op::Branch { cond: None, .. }
            | Op::Fence { .. }
            | Op::ProxyFence { .. }
            | Op::AliasFence
            | Op::Prefetch
            | Op::CommitGroup(_)
            | Op::WaitGroup { .. }
            | Op::WgmmaFence
            | Op::ClusterBarrier { .. } => {}
        }
    }
    let mut out: BTreeSet<Reg> = regs.iter().filter_map(|v| if let Value::Reg(r) = v { Some(*r) } else { None }).collect();
    // An instruction that writes a control register needs its operands known.
    loop {
        let before = out.len();
        for i in code {
            let (dst, operands): (Option<Reg>, Vec<Value>) = match &i.op {
                Op::Local { dst, a, b, .. } => (Some(*dst), vec![*a, *b]),
                Op::Rmw { dst, operands, .. } => (*dst, operands.clone()),
                _ => continue,
            };
            if dst.is_some_and(|d| out.contains(&d)) {
                out.extend(operands.iter().filter_map(|v| if let Value::Reg(r) = v { Some(*r) } else { None }));
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

/// Phases an arrive may return: at most one completion per mbarrier-updating instruction.
fn max_phase(program: &Program) -> i64 {
    let updates = program
        .threads
        .iter()
        .flat_map(|t| &t.code)
        .filter(|i| matches!(i.op, Op::Mbarrier { .. } | Op::CpAsyncArrive { .. } | Op::AsyncCopy(_)))
        .count() as i64;
    updates.min(crate::program::mbarrier::MAX_PHASE)
}

/// The value of an operand that decides something (an address, a branch, a size, an mbarrier
/// operand): always known, because every register such a use reads (transitively) holds known
/// values (`control_registers`).
fn val(st: &State, v: &Value) -> (i64, DepMask) {
    match v {
        Value::Const(c) => (*c, DepMask::none()),
        Value::Reg(r) => match &st.regs[*r] {
            (RegVal::Known(x), d) => (*x, d.clone()),
            // Unreachable by construction; 0 keeps the enumeration going rather than panic.
            (RegVal::Open(_), d) => (0, d.clone()),
        },
    }
}

/// The value of an operand that only flows into data (a stored value, an arithmetic operand):
/// known or open.
fn data_val(st: &State, v: &Value) -> (RegVal, DepMask) {
    match v {
        Value::Const(c) => (RegVal::Known(*c), DepMask::none()),
        Value::Reg(r) => st.regs[*r].clone(),
    }
}

/// What every step of one thread's enumeration needs to see.
struct Cx<'a> {
    program: &'a Program,
    thread: &'a Thread,
    domains: &'a Domains,
    /// Registers whose values decide control flow, addresses or operands (see
    /// [`control_registers`]): the reads into them branch over their values.
    control: BTreeSet<Reg>,
    /// Words whose events would mirror those of a kept word (see [`redundant_words`]).
    elided: &'a [bool],
    /// The largest phase an arrive can return: one phase per mbarrier update instruction.
    max_phase: i64,
    limits: &'a Limits,
}

impl Cx<'_> {
    /// The word at byte `extra` of an address operand, checked against the state space the
    /// instruction names (PTX ISA §6.4.1: an address outside the window of its state space is
    /// undefined).
    fn access(&self, st: &State, addr: &Address, extra: i64, width: i64, space: AccessSpace, line: usize) -> Result<Access, ExploreError> {
        // The footprint of this element: a vector access is one access per element (§8.2.4).
        let (value, deps) = self.address_value(st, addr);
        self.access_at(value + extra, value + extra, width, deps, space, line)
    }

    /// Word `k` of an access of `size` bytes at `addr` (a 64-bit access: both words carry the
    /// whole 8-byte range, so a 4-byte access to either overlaps it only partly).
    fn access_word(&self, st: &State, addr: &Address, k: i64, size: i64, space: AccessSpace, line: usize) -> Result<Access, ExploreError> {
        let (value, deps) = self.address_value(st, addr);
        self.access_at(value + 4 * k, value, size, deps, space, line)
    }

    fn space_violation(&self, var: usize, space: AccessSpace) -> Option<&'static str> {
        let here = self.thread.placement;
        match (space, self.program.variables[var].space) {
            (AccessSpace::Global, Space::Shared { .. }) => Some("U13: a .global access to a shared-memory variable (PTX ISA §6.4.1)"),
            (AccessSpace::SharedCta | AccessSpace::SharedCluster, Space::Global) => {
                Some("U13: a .shared access to a global variable (PTX ISA §6.4.1)")
            }
            (AccessSpace::SharedCta, Space::Shared { cta }) if cta != here.cta => {
                Some("U13: a .shared::cta address of another CTA's shared memory (PTX ISA §5.1.7: only the executing CTA's window)")
            }
            (AccessSpace::SharedCluster, Space::Shared { cta }) if self.program.cluster_of_cta(cta) != here.cluster => {
                Some("U13: a .shared::cluster address of a CTA outside the executing cluster (PTX ISA §5.1.7)")
            }
            (AccessSpace::Generic, Space::Shared { cta }) if self.program.cluster_of_cta(cta) != here.cluster => {
                Some("U13: a generic address of the shared memory of a CTA outside the executing cluster (PTX ISA §5.1.7: shared memory is reachable only from the CTA and its cluster)")
            }
            _ => None,
        }
    }

    /// A read whose register no instruction uses: one event, value left to reads-from.
    fn symbolic_read(&self, st: &mut State, acc: Access, pc: usize, dst: Reg) {
        let mut e = st.access_event(TraceOp::Read, pc, &acc, Role::Thread, None);
        e.symbolic = true;
        let idx = st.events.len();
        st.events.push(e);
        st.regs[dst] = (RegVal::Open(SymExpr::Read(idx)), DepMask::single(idx));
    }

    /// Push one read per value the location may hold; each result is a state with the read as
    /// its last event, paired with the value read.
    fn branch_read(&self, st: State, acc: Access, pc: usize, role: Role, agent: Option<usize>) -> Vec<(State, i64)> {
        let values: Vec<i64> = self.domains[self.program.locations[acc.loc].physical].iter().copied().collect();
        let mut out = Vec::with_capacity(values.len());
        for v in &values {
            let mut s = st.clone();
            let mut e = s.access_event(TraceOp::Read, pc, &acc, role, agent);
            e.value = *v;
            s.events.push(e);
            out.push((s, *v));
        }
        out
    }

    /// A write of `value`; an open value also records every value it can take (from the
    /// value domains of the reads it depends on).
    #[allow(clippy::too_many_arguments)]
    fn push_write(&self, st: &mut State, acc: Access, value: RegVal, data: DepMask, pc: usize, role: Role, agent: Option<usize>) {
        let mut e = st.access_event(TraceOp::Write, pc, &acc, role, agent);
        match value {
            RegVal::Known(v) => e.value = v,
            RegVal::Open(expr) => {
                let events = &st.events;
                let domain = |r: usize| -> Vec<i64> {
                    events[r]
                        .location
                        .map(|l| self.domains[self.program.locations[l].physical].iter().copied().collect())
                        .unwrap_or_default()
                };
                // Beyond the domain limit the value set is not needed: the fixpoint reports it.
                e.possible = expr.possible(&domain, self.limits.max_domain).map(|v| v.into_iter().collect());
                e.sym = Some(expr);
            }
        }
        e.data_deps = data;
        st.events.push(e);
    }

    /// An mbarrier operation: a read of the object's state, and for updates the write of the new
    /// state (an RMW pair). The values are left symbolic: an mbarrier's updates are totally
    /// ordered and each reads its predecessor, so the values follow from that order, which the
    /// search builds per execution (`exec::mbgraph`) and replays. The trace only branches on
    /// what the thread itself sees: the phase an arrive returns and whether a wait returns True
    /// (when the instruction has a destination), recorded as the required result.
    #[allow(clippy::too_many_arguments)]
    fn mb_update(
        &self,
        st: State,
        acc: Access,
        update: MbUpdate,
        pc: usize,
        role: Role,
        agent: Option<usize>,
        result_used: bool,
    ) -> Vec<(State, i64)> {
        let kind = MbKind::of(&update);
        let mut st = st;
        let mut e = st.access_event(TraceOp::Read, pc, &acc, role, agent);
        e.mb = Some(kind);
        e.mb_op = Some(update);
        let idx = st.events.len();
        st.events.push(e);
        if !matches!(update, MbUpdate::Wait { .. }) {
            st.events[idx].rmw_partner = Some(idx + 1);
            self.push_write(&mut st, acc, RegVal::Known(0), DepMask::single(idx), pc, role, agent);
            st.events[idx + 1].rmw_partner = Some(idx);
            st.events[idx + 1].mb = Some(kind);
            st.events[idx + 1].mb_op = Some(update);
            st.events[idx + 1].ub = None;
        }
        let results: Vec<i64> = match update {
            _ if !result_used => return vec![(st, 0)],
            MbUpdate::Wait { .. } => vec![1, 0],
            MbUpdate::Arrive { .. } => (0..=self.max_phase).collect(),
            _ => return vec![(st, 0)],
        };
        results
            .into_iter()
            .map(|r| {
                let mut s = st.clone();
                s.events[idx].mb_result = Some(r);
                if matches!(update, MbUpdate::Wait { .. }) {
                    s.events[idx].wait_result = Some(r != 0);
                }
                (s, r)
            })
            .collect()
    }

    /// An asynchronous copy: its source reads and destination writes (or reductions) belong to a
    /// new async agent, followed by the complete-tx on the mbarrier when it has one.
    fn async_copy(&self, st: State, copy: &AsyncCopy, pc: usize, line: usize) -> Result<Vec<State>, ExploreError> {
        if let Some(t) = &copy.tensor {
            return self.tensor_copy(st, copy, t, pc, line);
        }
        let size = val(&st, &copy.size).0;
        let (dst_addr, dst_deps) = self.address_value(&st, &copy.dst);
        let (src_addr, src_deps) = self.address_value(&st, &copy.src);
        let bulk = copy.kind != CopyKind::CpAsync;
        // Static and value checks of §9.7.9.25: sizes, alignment, ranges (digest §13.1 U4-U7).
        let mut ub: Option<String> = None;
        let check_range = |addr: i64, what: &str| -> Result<Option<String>, ExploreError> {
            let Some((var, off)) = self.program.decode_address(addr) else {
                return Err(bad_address(self.program, self.thread.id, line, addr));
            };
            let v = &self.program.variables[var];
            let align = if bulk { 16 } else { size };
            if v.kind == VariableKind::Mbarrier {
                return Ok(Some(format!("the {what} of the copy is the mbarrier object `{}`", v.name)));
            }
            if off + size > v.size {
                return Ok(Some(format!(
                    "U6: the {what} range [{off}, {}) runs past the end of `{}` ({} bytes)",
                    off + size,
                    v.name,
                    v.size
                )));
            }
            if off % align != 0 || v.align < align {
                return Ok(Some(format!("U5/U6: the {what} `{}+{off}` is not {align}-byte aligned (PTX ISA §9.7.9.25)", v.name)));
            }
            Ok(None)
        };
        if bulk && (size <= 0 || size % 16 != 0) {
            ub = Some(format!("U6: bulk copy size {size} is not a positive multiple of 16 (PTX ISA §9.7.9.25.4.1)"));
        }
        // Destinations (with their mbarrier): one, or for .multicast::cluster the same
        // CTA-relative offsets in each CTA whose cluster rank is set in ctaMask (§9.7.9.25.4.1).
        let bar_addr = match &copy.completion {
            Completion::Mbarrier(b) => Some(self.address_value(&st, b).0),
            Completion::Group(_) => None,
        };
        let mut dests: Vec<(i64, Option<i64>)> = vec![(dst_addr, bar_addr)];
        if let Some(mask) = &copy.multicast {
            let mask = val(&st, mask).0;
            dests.clear();
            for rank in 0..16 {
                if mask & (1 << rank) == 0 {
                    continue;
                }
                let here = self.thread.placement.cluster;
                let mapped = self.program.cta_of_rank(here, rank).and_then(|cta| {
                    let d = self.program.same_offset_in_cta(dst_addr, cta)?;
                    // A copy completing on an mbarrier needs one in every destination CTA.
                    let b = match bar_addr {
                        Some(b) => Some(self.program.same_offset_in_cta(b, cta)?),
                        None => None,
                    };
                    Some((d, b))
                });
                match mapped {
                    Some(d) => dests.push(d),
                    None => {
                        ub = Some(format!(
                            "multicast ctaMask {mask:#x} selects cluster rank {rank}, which has no shared variable at the destination's (or mbarrier's) CTA-relative offset"
                        ))
                    }
                }
            }
            if dests.is_empty() && ub.is_none() {
                ub = Some("multicast ctaMask selects no CTA".to_string());
            }
        }
        for &(d, _) in &dests {
            if ub.is_none() {
                ub = check_range(d, "destination")?;
            }
        }
        if ub.is_none() {
            ub = check_range(src_addr, "source")?;
        }
        let src_size = copy.src_size.as_ref().map(|v| val(&st, v).0).unwrap_or(size);
        let ignore = copy.ignore_src.as_ref().map(|v| val(&st, v).0 != 0).unwrap_or(false);
        if ub.is_none() && src_size > size {
            ub = Some(format!("U4: src-size {src_size} is larger than cp-size {size} (PTX ISA §9.7.9.25.3.1)"));
        }
        if ub.is_none() && src_size < 0 {
            ub = Some(format!("U4: src-size {src_size} is negative (PTX ISA §9.7.9.25.3.1: src-size is a number of bytes)"));
        }
        if let Some(reason) = ub {
            // The copy is undefined as a whole: keep one marker event carrying the reason.
            let mut s = st;
            let mut e = s.event(TraceOp::Marker, pc);
            e.ub = Some(reason);
            s.events.push(e);
            return Ok(vec![s]);
        }
        let read_bytes = if ignore { 0 } else { src_size.max(0) };
        let agent = st.ops.len();
        let mut st = st;
        st.ops.push(AsyncOp { instr: pc, kind: AsyncKind::Copy(copy.kind), events: Vec::new(), tracked: Vec::new(), group: None });
        let words = (size / 4) as usize;
        let mut s = st;
        let mut pending: Vec<(RegVal, DepMask)> = Vec::new();
        for w in 0..words {
            let byte = 4 * w as i64;
            let src = self.access_at(src_addr + byte, src_addr, size, src_deps.clone(), copy.src_space, line)?;
            // Bytes past src-size are zero-filled, not read (§9.7.9.25.3.1). An elided source
            // word feeds only an elided or unobservable destination word: its value is moot. The
            // value read is left open: it only flows into the destination.
            let (value, dep) = if byte < read_bytes && !self.elided[src.loc] {
                let i = s.events.len();
                let mut e = s.access_event(TraceOp::Read, pc, &src, Role::Source, Some(agent));
                e.symbolic = true;
                s.events.push(e);
                // Bytes of this word past src-size are zero-filled (little-endian words).
                let kept = (read_bytes - byte).clamp(0, 4);
                let read = SymExpr::Read(i);
                (RegVal::Open(if kept < 4 { SymExpr::Low(Box::new(read), kept) } else { read }), DepMask::single(i))
            } else {
                (RegVal::Known(0), DepMask::none())
            };
            // An 8-byte reduction element spans two words: its reduction is made at its second word.
            let pair = matches!(copy.kind, CopyKind::Reduce(_, t) if t.bytes() == 8);
            pending.push((value, dep));
            if pair && w % 2 == 0 && w + 1 < words {
                continue;
            }
            let first = w + 1 - pending.len();
            let element = std::mem::take(&mut pending);
            for &(d_addr, _) in &dests {
                match copy.kind {
                    CopyKind::Reduce(op, ty) => {
                        // Each element is an atomic read-modify-write in the async proxy
                        // (§9.7.9.25.4.2): one RMW per word (digest §14.3); an 8-byte element is
                        // one RMW per word whose written value is computed from both old words
                        // and both source words (docs/async-model.md §2.2).
                        let mut accs = Vec::new();
                        for k in 0..element.len() {
                            let b = 4 * (first + k) as i64;
                            let dst = self.access_at(d_addr + b, d_addr, size, dst_deps.clone(), copy.dst_space, line)?;
                            accs.push(Access { range: (dst.range.0 + b, dst.range.0 + b + 4), ..dst });
                        }
                        let idx = s.events.len();
                        for acc in &accs {
                            let mut e = s.access_event(TraceOp::Read, pc, acc, Role::Destination, Some(agent));
                            e.symbolic = true;
                            e.rmw_partner = Some(s.events.len() + accs.len());
                            s.events.push(e);
                        }
                        let olds: Vec<SymExpr> = (0..accs.len()).map(|k| SymExpr::Read(idx + k)).collect();
                        let srcs: Vec<SymExpr> = element.iter().map(|(v, _)| v.expr()).collect();
                        let mut deps = element.iter().fold(DepMask::none(), |d, (_, e)| d.union(e));
                        for k in 0..accs.len() {
                            deps = deps.union(&DepMask::single(idx + k));
                        }
                        for (k, acc) in accs.into_iter().enumerate() {
                            let new = SymExpr::Reduce(op, ty, k, olds.clone(), srcs.clone());
                            self.push_write(&mut s, acc, RegVal::Open(new), deps.clone(), pc, Role::Destination, Some(agent));
                            let wi = s.events.len() - 1;
                            s.events[wi].rmw_partner = Some(wi - element.len());
                        }
                    }
                    _ => {
                        let dst = self.access_at(d_addr + byte, d_addr, size, dst_deps.clone(), copy.dst_space, line)?;
                        if self.elided[dst.loc] {
                            continue;
                        }
                        let (value, dep) = &element[0];
                        // `.cp_mask`: the bytes of this word that byteMask selects (bit i: byte i of
                        // each 16-byte chunk). A word it splits keeps its other bytes: the copy
                        // reads it and writes the merge, atomically (an RMW pair), which is what
                        // leaving those bytes untouched looks like at word granularity.
                        let selected = copy.byte_mask.as_ref().map(|m| (val(&s, m).0 >> (byte % 16)) & 0xF).unwrap_or(0xF);
                        if selected == 0 {
                            continue;
                        }
                        if selected == 0xF {
                            self.push_write(&mut s, dst, value.clone(), dep.clone(), pc, Role::Destination, Some(agent));
                            continue;
                        }
                        let bytes: i64 = (0..4).filter(|b| selected & (1 << b) != 0).map(|b| 0xFF << (8 * b)).sum();
                        let idx = s.events.len();
                        let mut e = s.access_event(TraceOp::Read, pc, &dst, Role::Destination, Some(agent));
                        e.symbolic = true;
                        e.rmw_partner = Some(idx + 1);
                        s.events.push(e);
                        let keep =
                            SymExpr::Local(LocalOp::And, Box::new(SymExpr::Read(idx)), Box::new(SymExpr::Const(0xFFFF_FFFF ^ bytes)));
                        let put = SymExpr::Local(LocalOp::And, Box::new(value.expr()), Box::new(SymExpr::Const(bytes)));
                        let new = SymExpr::Local(LocalOp::Or, Box::new(keep), Box::new(put));
                        self.push_write(
                            &mut s,
                            dst,
                            RegVal::Open(new),
                            dep.union(&DepMask::single(idx)),
                            pc,
                            Role::Destination,
                            Some(agent),
                        );
                        s.events[idx + 1].rmw_partner = Some(idx);
                    }
                }
            }
        }
        self.finish_copy(s, copy, agent, &dests, size, pc, line)
    }

    /// A copy's destination write of `value`, or for a reduction an atomic read-modify-write in
    /// the async proxy (§9.7.9.25.4.2): a symbolic read of the destination and the write of
    /// the operation on it.
    #[allow(clippy::too_many_arguments)]
    fn push_copy_write(&self, s: &mut State, kind: CopyKind, dst: Access, value: RegVal, dep: DepMask, pc: usize, agent: usize) {
        let CopyKind::Reduce(op, ty) = kind else {
            return self.push_write(s, dst, value, dep, pc, Role::Destination, Some(agent));
        };
        let idx = s.events.len();
        let mut e = s.access_event(TraceOp::Read, pc, &dst, Role::Destination, Some(agent));
        e.symbolic = true;
        e.rmw_partner = Some(idx + 1);
        s.events.push(e);
        // A 4-byte element (tensor reductions are on 32-bit integer elements only).
        let new = SymExpr::Reduce(op, ty, 0, vec![SymExpr::Read(idx)], vec![value.expr()]);
        self.push_write(s, dst, RegVal::Open(new), dep.union(&DepMask::single(idx)), pc, Role::Destination, Some(agent));
        s.events[idx + 1].rmw_partner = Some(idx);
    }

    /// The end of an asynchronous copy whose data events are in `s`: the op's event list, then
    /// its completion (the open async-group, or a complete-tx of `size` bytes on the mbarrier of
    /// each destination).
    #[allow(clippy::too_many_arguments)]
    fn finish_copy(
        &self,
        s: State,
        copy: &AsyncCopy,
        agent: usize,
        dests: &[(i64, Option<i64>)],
        size: i64,
        pc: usize,
        line: usize,
    ) -> Result<Vec<State>, ExploreError> {
        let mut out = Vec::new();
        {
            let mut s = s;
            let first = s.events.iter().position(|e| e.agent == Some(agent)).unwrap_or(s.events.len());
            s.ops[agent].events = (first..s.events.len()).collect();
            match copy.completion {
                Completion::Group(kind) => {
                    s.open[State::group_index(kind)].push(agent);
                    out.push(s);
                }
                Completion::Mbarrier(_) => {
                    // The complete-tx: an update of the mbarrier by the op's agent (§9.7.9.25.4.1),
                    // on the mbarrier of each destination's CTA (digest AMBIG-21).
                    let mut partial = vec![s];
                    for &(d_addr, b_addr) in dests {
                        let b_addr = b_addr.expect("an mbarrier completion has an mbarrier");
                        let bad = || bad_address(self.program, self.thread.id, line, b_addr);
                        let loc = self.program.location_at(b_addr).ok_or_else(bad)?;
                        let mut acc = Access { loc, range: (0, 8), deps: DepMask::none(), ub: None };
                        let dst_var = self.program.decode_address(d_addr).map(|(v, _)| self.program.variables[v].space);
                        if Some(self.program.variable_of(loc).space) != dst_var {
                            acc.ub = Some("the mbarrier of a bulk copy must be in the same CTA as the destination (PTX ISA §9.7.9.25.4.1)");
                        }
                        let mut after = Vec::new();
                        for s in partial {
                            for (mut s2, _) in
                                self.mb_update(s, acc.clone(), MbUpdate::CompleteTx { bytes: size }, pc, Role::Signal, Some(agent), false)
                            {
                                let n = s2.events.len();
                                s2.ops[agent].events.extend([n - 2, n - 1]);
                                after.push(s2);
                            }
                        }
                        partial = after;
                    }
                    out.extend(partial);
                }
            }
        }
        Ok(out)
    }

    /// `wgmma.mma_async`: an async agent reads each matrix (from the descriptor's address to the
    /// end of its variable) in the async proxy; the op joins the open wgmma-group.
    fn wgmma(&self, st: State, a: &Address, b: &Address, pc: usize, line: usize) -> Result<Vec<State>, ExploreError> {
        let agent = st.ops.len();
        let mut st = st;
        st.ops.push(AsyncOp { instr: pc, kind: AsyncKind::Copy(CopyKind::Wgmma), events: Vec::new(), tracked: Vec::new(), group: None });
        let mut states = vec![st];
        for m in [a, b] {
            let (addr, deps) = self.address_value(&states[0], m);
            let bad = || bad_address(self.program, self.thread.id, line, addr);
            let (var, off) = self.program.decode_address(addr).ok_or_else(bad)?;
            let size = self.program.variables[var].size - off;
            for byte in (0..size).step_by(4) {
                let src = self.access_at(addr + byte, addr, size, deps.clone(), AccessSpace::SharedCta, line)?;
                if self.elided[src.loc] {
                    continue;
                }
                let mut next = Vec::new();
                for s in states {
                    // The values read reach registers ptxmm does not model: one symbolic read.
                    let mut s = s;
                    let mut e = s.access_event(TraceOp::Read, pc, &src, Role::Source, Some(agent));
                    e.symbolic = true;
                    s.events.push(e);
                    next.push(s);
                }
                states = next;
            }
        }
        for s in &mut states {
            let first = s.events.iter().position(|e| e.agent == Some(agent)).unwrap_or(s.events.len());
            s.ops[agent].events = (first..s.events.len()).collect();
            s.open[State::group_index(GroupKind::Wgmma)].push(agent);
        }
        Ok(states)
    }

    fn address_value(&self, st: &State, a: &Address) -> (i64, DepMask) {
        match a {
            Address::Location(l) => (self.program.address_of(*l), DepMask::none()),
            Address::Reg(r, off) => {
                let (v, d) = val(st, &Value::Reg(*r));
                (v + off, d)
            }
        }
    }

    /// The word at absolute address `addr` of an access starting at `base` of `size` bytes.
    fn access_at(&self, addr: i64, base: i64, size: i64, deps: DepMask, space: AccessSpace, line: usize) -> Result<Access, ExploreError> {
        let bad = || bad_address(self.program, self.thread.id, line, addr);
        let (var, _) = self.program.decode_address(addr).ok_or_else(bad)?;
        let loc = self.program.location_at(addr).ok_or_else(bad)?;
        let (_, off) = self.program.decode_address(base).ok_or_else(bad)?;
        Ok(Access { loc, range: (off, off + size), deps, ub: self.space_violation(var, space) })
    }
}

pub fn compare(cmp: crate::litmus::ast::CmpOp, x: i64, y: i64) -> bool {
    use crate::litmus::ast::CmpOp::*;
    match cmp {
        Eq => x == y,
        Ne => x != y,
        Lt => x < y,
        Le => x <= y,
        Gt => x > y,
        Ge => x >= y,
    }
}

/// The value an RMW writes, given the old value and its operands (PTX ISA §9.7.13.5).
pub fn rmw_result(op: RmwOp, old: i64, ops: &[(i64, DepMask)]) -> i64 {
    let v = ops.first().map(|o| o.0).unwrap_or(0);
    match op {
        RmwOp::Add => old.wrapping_add(v),
        RmwOp::Sub => old.wrapping_sub(v),
        RmwOp::Mul => old.wrapping_mul(v),
        // Division by zero has no defined result; keep the old value rather than fault.
        RmwOp::Div => old.checked_div(v).unwrap_or(old),
        RmwOp::And => old & v,
        RmwOp::Or => old | v,
        RmwOp::Xor => old ^ v,
        RmwOp::Min => old.min(v),
        RmwOp::Max => old.max(v),
        // inc/dec wrap within [0, v] and are defined only for .u32 (PTX ISA §9.7.13.5): an
        // untyped one computes as .u32 (comparisons unsigned, no overflow past the width).
        RmwOp::Inc | RmwOp::Dec => crate::program::Ty::U32.rmw(op, old, &[v]),
        RmwOp::Exch => v,
        // cas writes `new` if old == cmp, else writes the old value back (as Dat3M lowers it).
        RmwOp::Cas => {
            let new = ops.get(1).map(|o| o.0).unwrap_or(0);
            if old == v {
                new
            } else {
                old
            }
        }
    }
}

pub fn local_result(op: LocalOp, x: i64, y: i64) -> i64 {
    match op {
        LocalOp::Mov => x,
        LocalOp::Add => x.wrapping_add(y),
        LocalOp::Sub => x.wrapping_sub(y),
        LocalOp::Mul => x.wrapping_mul(y),
        LocalOp::Div => x.checked_div(y).unwrap_or(0),
        LocalOp::Rem => x.checked_rem(y).unwrap_or(0),
        LocalOp::And => x & y,
        LocalOp::Or => x | y,
        LocalOp::Xor => x ^ y,
        LocalOp::Shl => x.wrapping_shl(y as u32),
        LocalOp::Shr => x.wrapping_shr(y as u32),
        LocalOp::Min => x.min(y),
        LocalOp::Max => x.max(y),
        LocalOp::Set(c) => compare(c, x, y) as i64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::SourceFile;

    fn program(src: &str) -> Program {
        let file = SourceFile::new("t.litmus", src);
        let ast = crate::litmus::parse(&file).unwrap();
        crate::program::lower(&ast, &file).unwrap()
    }

    #[test]
    fn reads_branch_over_the_value_domain() {
        // r0 decides a branch: the trace branches once per value x may hold.
        let p = program("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n st.weak x, 1 | ld.weak r0, x ;\n | add r1, r0, 1 ;\n | bne r1, 2, L ;\n | L: ;\nexists (P1:r0 == 1)\n");
        let (domains, traces) = explore(&p, &Limits::default(), false).unwrap();
        assert_eq!(domains[0], BTreeSet::from([0, 1]));
        assert_eq!(traces[1].traces.len(), 2, "one trace per value the read may return");
    }

    #[test]
    fn counters_stop_at_the_number_of_writes() {
        // Two increments: x can only reach 2, even though the fixpoint alone would grow forever.
        let p = program("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n atom.add r0, x, 1 | atom.add r1, x, 1 ;\nexists (x == 2)\n");
        let (domains, _) = explore(&p, &Limits::default(), false).unwrap();
        assert!(domains[0].contains(&2));
        assert!(domains[0].len() <= 4, "{:?}", domains[0]);
    }

    #[test]
    fn spin_loops_are_awaits_and_other_loops_are_cut() {
        let spin = program("PTX t\n{ f=0; }\n P0@cta 0,gpu 0 ;\n LC00: ;\n ld.weak r0, f ;\n beq r0, 0, LC00 ;\nexists (0 == 0)\n");
        let (_, t) = explore(&spin, &Limits::default(), false).unwrap();
        assert!(!t[0].cut);
        assert!(t[0].traces.iter().all(|tr| tr.registers[0] != 0), "only the exiting iteration is kept");
        let (_, t) = explore(&spin, &Limits::default(), true).unwrap();
        assert!(t[0].stuck.iter().any(|tr| matches!(tr.stuck, Some(Stuck::Spin { .. }))));

        let counter = program("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n LC00: ;\n st.weak x, 1 ;\n goto LC00 ;\nexists (0 == 0)\n");
        let (_, t) = explore(&counter, &Limits::default(), false).unwrap();
        assert!(t[0].cut, "a loop with a store is unrolled and cut");
        assert!(t[0].traces.is_empty());
    }

    #[test]
    fn dependencies_are_tracked_through_registers() {
        let p = program("PTX t\n{ x=0; y=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\n add r1, r0, 1 ;\n st.weak y, r1 ;\n bne r0, 0, LC00 ;\n st.weak y, 2 ;\n LC00: ;\nexists (0 == 0)\n");
        let (_, t) = explore(&p, &Limits::default(), false).unwrap();
        let tr = t[0].traces.iter().find(|tr| tr.events[0].value == 0).unwrap();
        assert_eq!(tr.events[1].data_deps, DepMask::single(0), "the store's value comes from the first read");
        assert_eq!(tr.events[2].ctrl_deps, DepMask::single(0), "the store after the branch depends on the read");
    }

    #[test]
    fn values_that_only_flow_into_data_stay_open() {
        // r0 only reaches a store (through an add): one trace, the store writes r0 + 1.
        let p = program(
            "PTX t
{ x=0; y=0; }
 P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;
 ld.weak r0, x | st.weak x, 5 ;
 add r1, r0, 1 | ;
 st.weak y, r1 | ;
exists (y == 6)
",
        );
        let (domains, t) = explore(&p, &Limits::default(), false).unwrap();
        assert_eq!(t[0].traces.len(), 1, "no branching over the values of x");
        let tr = &t[0].traces[0];
        assert!(tr.events[0].symbolic);
        assert_eq!(tr.events[1].sym, Some(SymExpr::Local(LocalOp::Add, Box::new(SymExpr::Read(0)), Box::new(SymExpr::Const(1)))));
        assert_eq!(tr.events[1].possible, Some(vec![1, 6]));
        assert_eq!(domains[1], BTreeSet::from([0, 1, 6]), "y's domain holds every value the open store can write");
        // A register that decides a branch is read with its value known.
        let q = program(
            "PTX t
{ x=0; }
 P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;
 ld.weak r0, x | st.weak x, 5 ;
 beq r0, 0, L | ;
 L: | ;
exists (0 == 0)
",
        );
        let (_, t) = explore(&q, &Limits::default(), false).unwrap();
        assert_eq!(t[0].traces.len(), 2);
        assert!(t[0].traces.iter().all(|tr| !tr.events[0].symbolic));
    }

    #[test]
    fn long_threads_are_not_capped_at_128_events() {
        let body: String = (0..150).map(|i| format!(" st.relaxed.gpu x{i}, 1 ;\n")).collect();
        let init: String = (0..150).map(|i| format!("x{i}=0; ")).collect();
        let p = program(&format!("PTX t\n{{ {init} }}\n P0@cta 0,gpu 0 ;\n{body}exists (x0 == 1)\n"));
        let (_, t) = explore(&p, &Limits { max_trace_events: 1000, ..Limits::default() }, false).unwrap();
        assert_eq!(t[0].traces[0].events.len(), 150);
        let err = explore(&p, &Limits { max_trace_events: 100, ..Limits::default() }, false).unwrap_err();
        assert!(err.to_string().contains("more than 100 memory events"), "{err}");
    }
}
