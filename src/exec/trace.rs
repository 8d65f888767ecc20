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

use crate::program::{Address, Instr, LocalOp, Op, Program, Reg, RmwOp, Thread, Value};
use std::collections::{BTreeSet, HashMap};

/// Limits that keep exploration finite and report, rather than hang, when exceeded.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// How often a non-spin loop's back edge may be taken.
    pub unroll: usize,
    /// Maximum distinct values per location in the value domain.
    pub max_domain: usize,
    /// Maximum traces per thread.
    pub max_traces: usize,
    /// Maximum memory events in one trace.
    pub max_trace_events: usize,
    /// Maximum candidate executions examined for one test.
    pub max_candidates: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { unroll: 1, max_domain: 64, max_traces: 20_000, max_trace_events: 120, max_candidates: 2_000_000 }
    }
}

/// Dependencies of a value on earlier reads of the same trace, as a bit mask of trace event indices.
pub type DepMask = u128;

/// What a trace event does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceOp {
    Read,
    Write,
    Fence,
    Barrier { instance: i64, id: Option<i64>, count: Option<i64>, arrive: bool },
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
}

/// One complete (or cut) run of a thread.
#[derive(Clone, Debug)]
pub struct Trace {
    pub events: Vec<TraceEvent>,
    /// Final register values.
    pub registers: Vec<i64>,
    /// Indices of the instructions executed, in order (used for diagnostics and liveness).
    pub path: Vec<usize>,
    /// For a run that never finishes (liveness only): where and how it is stuck.
    pub stuck: Option<Stuck>,
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
    #[error("thread P{thread}: a trace has more than {limit} memory events (raise --unroll less, or shorten the test)")]
    TraceTooLong { thread: usize, limit: usize },
    #[error("thread P{thread}, line {line}: register value {value} used as an address is not the address of any location")]
    BadAddress { thread: usize, line: usize, value: i64 },
    #[error("location `{location}` has {writes} writes in one execution, hence {orders} possible coherence orders, more than the candidate budget (lower --unroll, or raise --max-candidates)")]
    TooManyCoherenceOrders { location: String, writes: usize, orders: u64 },
    #[error(
        "the search exceeded its budget of {limit} model evaluations; the test is too large (raise --max-candidates, or lower --unroll)"
    )]
    TooManyCandidates { limit: u64 },
}

/// Per physical location, the values reads may return.
pub type Domains = Vec<BTreeSet<i64>>;

/// Compute the value domains by fixpoint, then the traces of every thread under them.
pub fn explore(program: &Program, limits: &Limits, liveness: bool) -> Result<(Domains, Vec<ThreadTraces>), ExploreError> {
    let mut domains: Domains = program.physical.iter().map(|p| BTreeSet::from([p.init])).collect();
    let mut round = 0usize;
    loop {
        let mut all = Vec::new();
        let mut changed = false;
        round += 1;
        for (t, thread) in program.threads.iter().enumerate() {
            let traces = thread_traces(program, t, thread, &domains, limits, liveness)?;
            all.push(traces);
        }
        for tt in &all {
            for tr in tt.traces.iter().chain(&tt.stuck) {
                for e in &tr.events {
                    if e.op == TraceOp::Write {
                        let p = program.locations[e.location.expect("writes have a location")].physical;
                        if domains[p].insert(e.value) {
                            changed = true;
                            if domains[p].len() > limits.max_domain {
                                return Err(ExploreError::DomainTooLarge {
                                    location: program.physical[p].name.clone(),
                                    limit: limits.max_domain,
                                });
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
                    .map(|(t, th)| thread_traces(program, t, th, &domains, limits, liveness))
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
            Op::Store { .. } | Op::Rmw { .. } | Op::Barrier { .. } => return false,
            Op::Load { dst, addr, .. } => {
                if let Address::Reg(r) = addr {
                    use_value(&Value::Reg(*r), &written, &mut read_before_write);
                }
                written.insert(*dst);
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
            Op::Branch { cond: None, .. } | Op::Fence { .. } | Op::ProxyFence { .. } | Op::AliasFence => {}
        }
    }
    read_before_write.is_disjoint(&written)
}

#[derive(Clone)]
struct State {
    pc: usize,
    regs: Vec<(i64, DepMask)>,
    events: Vec<TraceEvent>,
    ctrl: DepMask,
    back_edges: HashMap<usize, usize>,
    path: Vec<usize>,
    /// Event index at which the current iteration of each spin loop began.
    iteration_start: HashMap<usize, usize>,
}

/// Enumerate the traces of one thread under fixed value domains.
pub fn thread_traces(
    program: &Program,
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
    let init = State {
        pc: 0,
        regs: thread.reg_init.iter().map(|v| (*v, 0)).collect(),
        events: Vec::new(),
        ctrl: 0,
        back_edges: HashMap::new(),
        path: Vec::new(),
        iteration_start: HashMap::new(),
    };
    let mut stack = vec![init];
    while let Some(mut st) = stack.pop() {
        loop {
            if st.pc >= thread.code.len() {
                out.traces.push(Trace { events: st.events, registers: st.regs.iter().map(|r| r.0).collect(), path: st.path, stuck: None });
                if out.traces.len() > limits.max_traces {
                    return Err(ExploreError::TooManyTraces { thread: thread.id, limit: limits.max_traces });
                }
                break;
            }
            if st.events.len() + 2 > limits.max_trace_events.min(127) {
                return Err(ExploreError::TraceTooLong { thread: thread.id, limit: limits.max_trace_events.min(127) });
            }
            let pc = st.pc;
            let instr = &thread.code[pc];
            st.path.push(pc);
            if spin_headers.contains(&pc) {
                st.iteration_start.insert(pc, st.events.len());
            }
            let val = |st: &State, v: &Value| -> (i64, DepMask) {
                match v {
                    Value::Const(c) => (*c, 0),
                    Value::Reg(r) => st.regs[*r],
                }
            };
            let resolve = |st: &State, a: &Address| -> Result<(usize, DepMask), ExploreError> {
                match a {
                    Address::Location(l) => Ok((*l, 0)),
                    Address::Reg(r) => {
                        let (v, d) = st.regs[*r];
                        program.location_at(v).map(|l| (l, d)).ok_or(ExploreError::BadAddress {
                            thread: thread.id,
                            line: instr.line,
                            value: v,
                        })
                    }
                }
            };
            let _ = t;
            match &instr.op {
                Op::Load { dst, addr, .. } => {
                    let (loc, adeps) = resolve(&st, addr)?;
                    let idx = st.events.len();
                    let values: Vec<i64> = domains[program.locations[loc].physical].iter().copied().collect();
                    // Branch on every value the read may return; the last one continues in place.
                    for (k, v) in values.iter().enumerate() {
                        let mut s = if k + 1 == values.len() { std::mem::replace(&mut st, placeholder()) } else { st.clone() };
                        s.events.push(TraceEvent {
                            op: TraceOp::Read,
                            instr: pc,
                            location: Some(loc),
                            value: *v,
                            rmw_partner: None,
                            addr_deps: adeps,
                            data_deps: 0,
                            ctrl_deps: s.ctrl,
                        });
                        s.regs[*dst] = (*v, 1u128 << idx);
                        s.pc += 1;
                        if k + 1 == values.len() {
                            st = s;
                        } else {
                            stack.push(s);
                        }
                    }
                    continue;
                }
                Op::Store { addr, value, .. } => {
                    let (loc, adeps) = resolve(&st, addr)?;
                    let (v, d) = val(&st, value);
                    let ctrl = st.ctrl;
                    st.events.push(TraceEvent {
                        op: TraceOp::Write,
                        instr: pc,
                        location: Some(loc),
                        value: v,
                        rmw_partner: None,
                        addr_deps: adeps,
                        data_deps: d,
                        ctrl_deps: ctrl,
                    });
                }
                Op::Rmw { dst, addr, op, operands, .. } => {
                    let (loc, adeps) = resolve(&st, addr)?;
                    let ops: Vec<(i64, DepMask)> = operands.iter().map(|o| val(&st, o)).collect();
                    let data: DepMask = ops.iter().fold(0, |m, (_, d)| m | d);
                    let idx = st.events.len();
                    let values: Vec<i64> = domains[program.locations[loc].physical].iter().copied().collect();
                    for (k, old) in values.iter().enumerate() {
                        let mut s = if k + 1 == values.len() { std::mem::replace(&mut st, placeholder()) } else { st.clone() };
                        let new = rmw_result(*op, *old, &ops);
                        s.events.push(TraceEvent {
                            op: TraceOp::Read,
                            instr: pc,
                            location: Some(loc),
                            value: *old,
                            rmw_partner: Some(idx + 1),
                            addr_deps: adeps,
                            data_deps: 0,
                            ctrl_deps: s.ctrl,
                        });
                        s.events.push(TraceEvent {
                            op: TraceOp::Write,
                            instr: pc,
                            location: Some(loc),
                            value: new,
                            rmw_partner: Some(idx),
                            addr_deps: adeps,
                            data_deps: data,
                            ctrl_deps: s.ctrl,
                        });
                        if let Some(d) = dst {
                            s.regs[*d] = (*old, 1u128 << idx);
                        }
                        s.pc += 1;
                        if k + 1 == values.len() {
                            st = s;
                        } else {
                            stack.push(s);
                        }
                    }
                    continue;
                }
                Op::Fence { .. } | Op::ProxyFence { .. } | Op::AliasFence => {
                    let ctrl = st.ctrl;
                    st.events.push(TraceEvent {
                        op: TraceOp::Fence,
                        instr: pc,
                        location: None,
                        value: 0,
                        rmw_partner: None,
                        addr_deps: 0,
                        data_deps: 0,
                        ctrl_deps: ctrl,
                    });
                }
                Op::Barrier { instance, id, count, arrive } => {
                    let id = id.map(|v| val(&st, &v).0);
                    let count = count.map(|v| val(&st, &v).0);
                    let ctrl = st.ctrl;
                    st.events.push(TraceEvent {
                        op: TraceOp::Barrier { instance: *instance, id, count, arrive: *arrive },
                        instr: pc,
                        location: None,
                        value: 0,
                        rmw_partner: None,
                        addr_deps: 0,
                        data_deps: 0,
                        ctrl_deps: ctrl,
                    });
                    if liveness {
                        // The run may also stop here forever, if this barrier never completes.
                        let event = st.events.len() - 1;
                        let registers = st.regs.iter().map(|r| r.0).collect();
                        out.stuck.push(Trace {
                            events: st.events.clone(),
                            registers,
                            path: st.path.clone(),
                            stuck: Some(Stuck::Barrier { event }),
                        });
                    }
                }
                Op::Local { dst, op, a, b } => {
                    let (x, dx) = val(&st, a);
                    let (y, dy) = val(&st, b);
                    st.regs[*dst] = (local_result(*op, x, y), dx | dy);
                }
                Op::Branch { cond, target } => {
                    let taken = match cond {
                        None => true,
                        Some((cmp, a, b)) => {
                            let (x, dx) = val(&st, a);
                            let (y, dy) = val(&st, b);
                            // Every event after a conditional branch depends on the values it tested.
                            st.ctrl |= dx | dy;
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
                                    let registers = st.regs.iter().map(|r| r.0).collect();
                                    out.stuck.push(Trace { events: st.events, registers, path: st.path, stuck: Some(stuck) });
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

fn placeholder() -> State {
    State {
        pc: 0,
        regs: Vec::new(),
        events: Vec::new(),
        ctrl: 0,
        back_edges: HashMap::new(),
        path: Vec::new(),
        iteration_start: HashMap::new(),
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
        // inc/dec wrap within [0, v] (PTX ISA §9.7.13.5).
        RmwOp::Inc => {
            if old >= v {
                0
            } else {
                old + 1
            }
        }
        RmwOp::Dec => {
            if old == 0 || old > v {
                v
            } else {
                old - 1
            }
        }
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
        let p = program("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n st.weak x, 1 | ld.weak r0, x ;\nexists (P1:r0 == 1)\n");
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
        assert_eq!(tr.events[1].data_deps, 1, "the store's value comes from the first read");
        assert_eq!(tr.events[2].ctrl_deps, 1, "the store after the branch depends on the read");
    }
}
