//! Warp exchanges (`shfl.sync`, `vote.sync`, `match.sync`, `redux.sync`) between the lanes a
//! test has: what each lane gives, what it gets, and which lanes it gets it from.
//!
//! A lane's run takes its result from a value domain, as a read does, and the domains come from
//! the fixpoint of `explore_until`: round after round, each lane's k-th exchange gets every
//! result that the sources the other lanes' runs gave at their k-th exchange can make
//! ([`domains`]). The combinations of runs then keep only those where every lane got exactly
//! what the chosen runs of the others gave ([`consistent`]), and the event structure relates
//! each source lane's exchange to the lanes that read it (`data`), so that a value cannot come
//! round through an exchange out of thin air. A lane's exchange is two events in program order:
//! one that gives (what its source operands depend on point to it) and one that takes (the
//! results depend on it); the `data` edges go from the givers to the takers, so that lanes
//! reading each other (a vote) make no cycle.
//!
//! Matching: the k-th exchange a lane executes meets the k-th exchange of each other lane that
//! takes part (the PTX ISA: each "wait[s] until all non-exited threads corresponding to
//! membermask have executed [it] with the same qualifiers and same membermask value"). The lanes
//! that take part are those of the membermask the launch has; one whose run ends before its k-th
//! exchange has exited and gives nothing. A lane of the launch that the test does not model gives
//! an unknown value (`WarpExchange::unmodelled`).

use super::error::ExploreError;
use super::event::{Source, ThreadTraces, Trace};
use crate::program::{unknown, ExchangeForm, Op, Program, ReduxOp, ShflMode, VoteMode, WarpExchange};
use std::collections::{BTreeMap, BTreeSet};

/// Per (thread, k): every result (`d`, `p`) its k-th exchange can get.
pub type ExchangeDomains = BTreeMap<(usize, usize), BTreeSet<(i64, i64)>>;

/// What another lane gives an exchange.
#[derive(Clone, Copy, Debug)]
pub enum Input<'a> {
    Gives(&'a Source),
    /// It does not take part: it has exited (or never executes an exchange).
    Absent,
    /// The launch has it but the test does not model it.
    Unmodelled,
}

/// A lane of the warp: the thread that models it, or why none does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    Thread(usize),
    Absent,
    Unmodelled,
}

/// The threads of the test's warps that execute exchanges, by (gpu, CTA, warp) and lane.
#[derive(Clone, Debug, Default)]
pub struct Lanes {
    warps: BTreeMap<(i64, i64, i64), BTreeMap<u32, usize>>,
    key: Vec<Option<(i64, i64, i64)>>,
}

impl Lanes {
    pub fn of(program: &Program) -> Lanes {
        let mut out = Lanes { warps: BTreeMap::new(), key: vec![None; program.threads.len()] };
        for (t, th) in program.threads.iter().enumerate() {
            if let Some(x) = th.code.iter().find_map(|i| exchange_of(&i.op)) {
                let key = (th.placement.gpu, th.placement.cta, x.warp);
                out.warps.entry(key).or_default().insert(x.lane, t);
                out.key[t] = Some(key);
            }
        }
        out
    }

    /// Lane `j` of the warp of thread `t`, as exchange `x` of `t` sees it.
    pub fn lane(&self, t: usize, x: &WarpExchange, j: u32) -> Lane {
        if x.lanes & (1 << j) == 0 {
            return Lane::Unmodelled;
        }
        match self.key[t].and_then(|k| self.warps[&k].get(&j)) {
            Some(&u) => Lane::Thread(u),
            // A lane the test has whose code never exchanges.
            None => Lane::Absent,
        }
    }

    /// Whether any thread exchanges.
    pub fn any(&self) -> bool {
        !self.warps.is_empty()
    }
}

/// The exchange an operation is, if it is one.
pub fn exchange_of(op: &Op) -> Option<&WarpExchange> {
    match op {
        Op::Exchange(x) => Some(x),
        _ => None,
    }
}

/// The lanes that take part with the executing one: those of its membermask the launch has, and
/// its own.
pub fn participants(x: &WarpExchange, own: &Source) -> u32 {
    (own.mask & x.launched) | (1 << x.lane)
}

/// `shfl.sync`'s source lane and predicate (PTX ISA, shfl.sync: "maxLane = (lane & segmask) |
/// (cval & ~segmask); minLane = (lane & segmask)"; `.up`: j = lane - bval, pval = (j >=
/// maxLane); `.down`: j = lane + bval; `.bfly`: j = lane ^ bval; `.idx`: j = minLane | (bval[4:0]
/// & ~segmask), pval = (j <= maxLane); "if (!pval) j = lane").
pub fn shfl_source(mode: ShflMode, lane: u32, b: i64, c: i64) -> (u32, bool) {
    let lane = i64::from(lane);
    let (bval, cval, segmask) = (b & 0x1f, c & 0x1f, (c >> 8) & 0x1f);
    let max_lane = (lane & segmask) | (cval & !segmask);
    let min_lane = lane & segmask;
    let (j, pval) = match mode {
        ShflMode::Up => (lane - bval, lane - bval >= max_lane),
        ShflMode::Down => (lane + bval, lane + bval <= max_lane),
        ShflMode::Bfly => (lane ^ bval, (lane ^ bval) <= max_lane),
        ShflMode::Idx => (min_lane | (bval & !segmask), (min_lane | (bval & !segmask)) <= max_lane),
    };
    ((if pval { j } else { lane }) as u32, pval)
}

/// The other lanes whose inputs decide the executing lane's results.
pub fn needed(x: &WarpExchange, own: &Source) -> Vec<u32> {
    let part = participants(x, own);
    match own.form {
        ExchangeForm::Shfl(mode) => {
            let (j, _) = shfl_source(mode, x.lane, own.b, own.c);
            if j != x.lane && part & (1 << j) != 0 {
                vec![j]
            } else {
                Vec::new()
            }
        }
        _ => (0..32).filter(|&j| j != x.lane && part & (1 << j) != 0).collect(),
    }
}

/// The results (`d`, `p`) of the executing lane's exchange, given what each other lane gives
/// (`input`); a destination the instruction does not have is 0. An unknown input that decides
/// a result makes it unknown, keeping that origin.
pub fn evaluate<'a>(x: &WarpExchange, own: &Source, input: &dyn Fn(u32) -> Input<'a>) -> (i64, i64) {
    let (d, p) = raw(x, own, input);
    (if x.d.is_some() { d } else { 0 }, if x.p.is_some() { p } else { 0 })
}

fn raw<'a>(x: &WarpExchange, own: &Source, input: &dyn Fn(u32) -> Input<'a>) -> (i64, i64) {
    let part = participants(x, own);
    if let ExchangeForm::Shfl(mode) = own.form {
        let (j, pval) = shfl_source(mode, x.lane, own.b, own.c);
        let d = if j == x.lane {
            own.a
        } else if part & (1 << j) == 0 {
            unknown::encode(x.absent)
        } else {
            match input(j) {
                Input::Gives(s) => s.a,
                Input::Absent => unknown::encode(x.absent),
                Input::Unmodelled => unknown::encode(x.unmodelled),
            }
        };
        return (d, i64::from(pval));
    }
    // The non-exited lanes that take part, and what each gives.
    let mut values = vec![(x.lane, own.a)];
    for j in (0..32).filter(|&j| j != x.lane && part & (1 << j) != 0) {
        match input(j) {
            Input::Gives(s) => values.push((j, s.a)),
            Input::Absent => {}
            Input::Unmodelled => return (unknown::encode(x.unmodelled), unknown::encode(x.unmodelled)),
        }
    }
    if let Some(&(_, u)) = values.iter().find(|(_, v)| unknown::is_unknown(*v)) {
        return (u, u);
    }
    let lanes = |keep: &dyn Fn(i64) -> bool| values.iter().filter(|(_, v)| keep(*v)).fold(0i64, |m, (j, _)| m | 1 << j);
    let all_equal = values.iter().all(|(_, v)| *v == own.a);
    match own.form {
        ExchangeForm::Vote(VoteMode::All) => (i64::from(values.iter().all(|(_, v)| *v != 0)), 0),
        ExchangeForm::Vote(VoteMode::Any) => (i64::from(values.iter().any(|(_, v)| *v != 0)), 0),
        ExchangeForm::Vote(VoteMode::Uni) => (i64::from(all_equal), 0),
        ExchangeForm::Vote(VoteMode::Ballot) => (lanes(&|v| v != 0), 0),
        ExchangeForm::MatchAny { .. } => (lanes(&|v| v == own.a), 0),
        ExchangeForm::MatchAll { .. } if all_equal => (lanes(&|_| true), 1),
        ExchangeForm::MatchAll { .. } => (0, 0),
        ExchangeForm::Redux(op) => {
            let words = values.iter().map(|(_, v)| *v as u32);
            let r = match op {
                ReduxOp::Add => words.fold(0u32, u32::wrapping_add) as i64,
                ReduxOp::And => words.fold(u32::MAX, |a, b| a & b) as i64,
                ReduxOp::Or => words.fold(0, |a, b| a | b) as i64,
                ReduxOp::Xor => words.fold(0, |a, b| a ^ b) as i64,
                ReduxOp::Min { signed: true } => i64::from(words.map(|w| w as i32).min().unwrap_or(0)),
                ReduxOp::Max { signed: true } => i64::from(words.map(|w| w as i32).max().unwrap_or(0)),
                ReduxOp::Min { signed: false } => words.min().map_or(0, i64::from),
                ReduxOp::Max { signed: false } => words.max().map_or(0, i64::from),
            };
            (r, 0)
        }
        ExchangeForm::Shfl(_) => unreachable!("shuffles return above"),
    }
}

/// The exchange domains the runs of one round make: for each thread's k-th exchange, every
/// result the other lanes' k-th sources (or their exit before it) can give. More than `limit`
/// results for one exchange, or more than `limit` × 64 choices of the other lanes' sources, is
/// an error naming the instruction.
pub fn domains(program: &Program, lanes: &Lanes, all: &[ThreadTraces], limit: usize) -> Result<ExchangeDomains, ExploreError> {
    let mut out = ExchangeDomains::new();
    for (t, tt) in all.iter().enumerate() {
        let code = &program.threads[t].code;
        for (&k, sources) in &tt.exchange_sources {
            for &(instr, own) in sources {
                let Some(x) = exchange_of(&code[instr].op) else { continue };
                let too_many = || ExploreError::DomainTooLarge {
                    location: format!("the result of `{}` (line {}) in {}", code[instr].text, code[instr].line, program.threads[t].name()),
                    limit,
                };
                // Per needed lane: what it can give at its k-th exchange.
                let mut options: Vec<(u32, Vec<Input>)> = Vec::new();
                for j in needed(x, &own) {
                    let choices: Vec<Input> = match lanes.lane(t, x, j) {
                        Lane::Unmodelled => vec![Input::Unmodelled],
                        Lane::Absent => vec![Input::Absent],
                        Lane::Thread(u) => {
                            let mut c: Vec<Input> =
                                all[u].exchange_sources.get(&k).into_iter().flatten().map(|(_, s)| Input::Gives(s)).collect();
                            if all[u].exchange_ends.range(..=k).next().is_some() {
                                c.push(Input::Absent);
                            }
                            c
                        }
                    };
                    options.push((j, choices));
                }
                let choices =
                    options.iter().try_fold(1usize, |n, (_, c)| n.checked_mul(c.len()).filter(|&m| m <= limit.saturating_mul(64)));
                let Some(choices) = choices else { return Err(too_many()) };
                let results = out.entry((t, k)).or_default();
                for mut index in 0..choices {
                    let mut pick: BTreeMap<u32, Input> = BTreeMap::new();
                    for (j, c) in &options {
                        pick.insert(*j, c[index % c.len()]);
                        index /= c.len();
                    }
                    results.insert(evaluate(x, &own, &|j| pick.get(&j).copied().unwrap_or(Input::Absent)));
                    if results.len() > limit {
                        return Err(too_many());
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Whether the exchanges of the runs chosen so far (`chosen[t]` for thread t) agree: every
/// exchange whose needed lanes are all chosen got what they gave.
pub fn consistent(program: &Program, lanes: &Lanes, chosen: &[&Trace]) -> bool {
    chosen.iter().enumerate().all(|(t, tr)| {
        tr.exchanges.iter().enumerate().all(|(k, r)| {
            let Some(x) = exchange_of(&program.threads[t].code[r.instr].op) else { return true };
            let needed = needed(x, &r.source);
            let mut inputs: BTreeMap<u32, Input> = BTreeMap::new();
            for j in needed {
                let input = match lanes.lane(t, x, j) {
                    Lane::Unmodelled => Input::Unmodelled,
                    Lane::Absent => Input::Absent,
                    Lane::Thread(u) if u < chosen.len() => chosen[u].exchanges.get(k).map_or(Input::Absent, |o| Input::Gives(&o.source)),
                    // Not chosen yet: decided later.
                    Lane::Thread(_) => return true,
                };
                inputs.insert(j, input);
            }
            evaluate(x, &r.source, &|j| inputs.get(&j).copied().unwrap_or(Input::Absent)) == (r.d, r.p)
        })
    })
}

/// The exchanges of a combination of runs (`traces[t]` for thread t) as pairs of (thread, k)
/// that met: each lane's k-th exchange with the k-th of every other lane that takes part.
pub fn meetings(program: &Program, traces: &[&Trace]) -> Vec<Meeting> {
    let lanes = Lanes::of(program);
    let mut out = Vec::new();
    for (t, tr) in traces.iter().enumerate() {
        for (k, r) in tr.exchanges.iter().enumerate() {
            let Some(x) = exchange_of(&program.threads[t].code[r.instr].op) else { continue };
            for j in (0..32).filter(|&j| j != x.lane && participants(x, &r.source) & (1 << j) != 0) {
                let Lane::Thread(u) = lanes.lane(t, x, j) else { continue };
                let Some(o) = traces[u].exchanges.get(k) else { continue };
                let reads = needed(x, &r.source).contains(&j);
                let agree = o.source.form == r.source.form && o.source.mask == r.source.mask;
                out.push(Meeting { reader: (t, r.event), source: (u, o.give), reads, agree, instrs: (r.instr, o.instr) });
            }
        }
    }
    out
}

/// Two lanes' k-th exchanges: the reader's (its event that takes the results) and another
/// taking part (its event that gives the source), as trace event indices.
#[derive(Clone, Copy, Debug)]
pub struct Meeting {
    pub reader: (usize, usize),
    pub source: (usize, usize),
    /// The reader's results come from the source's `a`.
    pub reads: bool,
    /// Both executed the same form with the same membermask.
    pub agree: bool,
    pub instrs: (usize, usize),
}
