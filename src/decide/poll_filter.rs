//! A necessary condition for a combination of runs to hang, checked on the runs alone, object
//! by object, before any event structure is built (see [`PollFilter`]).

use crate::exec::trace::{Stuck, Trace};
use crate::program::Program;

/// A necessary condition for a combination of runs to hang, checked on the runs alone, object
/// by object. The updates of an mbarrier object form one history (digest §14.4), each placed
/// after its static predecessors (the thread's earlier events, the issue of its async
/// operation); every wait or test of the object in a run reads one state of that history at
/// or after its thread's earlier updates and before its later ones, and must see there the
/// result its run took; and a run that polls the object forever reads, under fairness, the
/// final state and sees its poll fail. These are the constraints the search's state graphs
/// (`exec::mbgraph`) impose, without the rest of the model, so a combination with no such
/// history for some object has no hanging execution. Most combinations of a pipeline fail
/// it (a consumer cannot wait forever for a phase that the producer's run completes; a
/// producer's run cannot pass a wait for a phase its stuck consumers never arrived on), and
/// are dropped before any event structure is built.
pub(super) struct PollFilter<'p> {
    program: &'p Program,
    /// Each run's steps on each mbarrier object (by the run's address): (object, the id of
    /// the step list in `lists`).
    steps_of: rustc_hash::FxHashMap<usize, Vec<(usize, usize)>>,
    /// Distinct step lists of one run on one object (`run` left 0), and their ids: runs that
    /// stop at different points after their last step on an object share one.
    lists: Vec<Vec<Step>>,
    list_ids: rustc_hash::FxHashMap<Vec<Step>, usize>,
    /// Per object and the step lists of the runs touching it (sorted): whether a history exists.
    memo: rustc_hash::FxHashMap<(usize, Vec<usize>), bool>,
    /// Per object, the last thread (in combination order) some run of which touches it.
    last_toucher: rustc_hash::FxHashMap<usize, usize>,
    /// The data words some run's mbarrier operation addresses (physical locations): mbarrier
    /// objects inside a shared storage array, whose ordinary writes are steps too.
    data_objects: rustc_hash::FxHashSet<usize>,
}

/// One step of an object's history, from one run: an update (its operation, None for an
/// ordinary store of `value`, and the result its thread saw), a read that must see `result`,
/// or a poll that reads the final state and fails.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) struct Step {
    pub(super) kind: StepKind,
    pub(super) run: usize,
    pub(super) index: usize,
    pub(super) agent: Option<usize>,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum StepKind {
    Update { op: Option<crate::program::mbarrier::MbUpdate>, value: i64, result: Option<i64> },
    Read { op: crate::program::mbarrier::MbUpdate, result: i64 },
    FinalPoll { op: crate::program::mbarrier::MbUpdate },
}

impl Step {
    /// Whether `self` comes before `b` in their run: an earlier step of the same run, where an
    /// async operation's step follows its thread's earlier steps and its own, not another
    /// operation's.
    pub(super) fn before(&self, b: &Step) -> bool {
        self.run == b.run && self.index < b.index && (self.agent.is_none() || self.agent == b.agent)
    }
}

impl StepKind {
    pub(super) fn is_update(&self) -> bool {
        matches!(self, StepKind::Update { .. })
    }

    /// The object's value after this update at value `v`; None when this is not an update, or
    /// an arrive would return a phase other than the one its run saw.
    pub(super) fn after(&self, v: i64) -> Option<i64> {
        match *self {
            StepKind::Update { op: Some(op), result, .. } => {
                let eff = op.apply(v);
                if let (Some(want), crate::program::mbarrier::MbUpdate::Arrive { .. }) = (result, op) {
                    if want != eff.result {
                        return None;
                    }
                }
                Some(eff.write.unwrap_or(v))
            }
            StepKind::Update { op: None, value, .. } => Some(value),
            StepKind::Read { .. } | StepKind::FinalPoll { .. } => None,
        }
    }

    /// Whether this read sees its result at value `v` (a final poll: fails there).
    pub(super) fn sees(&self, v: i64) -> bool {
        match *self {
            StepKind::Read { op, result } => op.apply(v).result == result,
            StepKind::FinalPoll { op } => op.apply(v).result == 0,
            StepKind::Update { .. } => false,
        }
    }
}

/// Per update of `steps`, an interchangeable update before it, if any: the same operation and
/// result, after the same steps and before the same steps (`preds`, `succs`: masks of steps),
/// such as two copies of one stage completing on one barrier. Swapping two of them in a history
/// gives a history with the same values, so placing them in index order loses nothing.
pub(super) fn twins(steps: &[Step], preds: &[u128], succs: &[u128]) -> Vec<Option<usize>> {
    (0..steps.len())
        .map(|u| {
            (0..u).rev().find(|&v| {
                steps[v].kind == steps[u].kind
                    && steps[u].kind.is_update()
                    && preds[v] == preds[u] & !(1 << v)
                    && succs[v] & !(1 << u) == succs[u] & !(1 << v)
            })
        })
        .collect()
}

impl<'p> PollFilter<'p> {
    pub(super) fn new(program: &'p Program) -> Self {
        PollFilter {
            program,
            steps_of: Default::default(),
            lists: Vec::new(),
            list_ids: Default::default(),
            memo: Default::default(),
            last_toucher: Default::default(),
            data_objects: Default::default(),
        }
    }

    /// The steps of one run on each mbarrier object, in the run's order (`run` left 0).
    fn run_steps(&self, tr: &Trace) -> std::collections::BTreeMap<usize, Vec<Step>> {
        use crate::exec::trace::TraceOp;
        let program = self.program;
        let object_of = |e: &crate::exec::trace::TraceEvent| {
            let l = e.location?;
            let p = program.locations[l].physical;
            let object =
                e.mb.is_some() || program.variable_of(l).kind == crate::program::VariableKind::Mbarrier || self.data_objects.contains(&p);
            object.then_some(p)
        };
        let stuck_reads: &[usize] = match &tr.stuck {
            Some(Stuck::Spin { reads, .. }) => reads,
            _ => &[],
        };
        let mut out: std::collections::BTreeMap<usize, Vec<Step>> = Default::default();
        for (index, e) in tr.events.iter().enumerate() {
            let Some(p) = object_of(e) else { continue };
            let kind = match (&e.op, e.mb_op) {
                (TraceOp::Write, op) => {
                    let result = e.rmw_partner.and_then(|r| tr.events[r].mb_result);
                    StepKind::Update { op, value: e.value, result }
                }
                (TraceOp::Read, Some(op)) if e.rmw_partner.is_none() && stuck_reads.contains(&index) => StepKind::FinalPoll { op },
                (TraceOp::Read, Some(op)) if e.rmw_partner.is_none() => match e.mb_result {
                    Some(result) => StepKind::Read { op, result },
                    None => continue,
                },
                // Ordinary loads of the object, the read halves of updates, markers.
                _ => continue,
            };
            out.entry(p).or_default().push(Step { kind, run: 0, index, agent: e.agent });
        }
        out
    }

    /// Every thread's runs, once explored: which objects each thread's runs touch.
    pub(super) fn explored(&mut self, per_thread: &[crate::exec::trace::ThreadTraces]) {
        self.data_objects = per_thread
            .iter()
            .flat_map(|runs| runs.traces.iter().chain(&runs.stuck))
            .flat_map(|tr| &tr.events)
            .filter(|e| e.mb.is_some())
            .filter_map(|e| e.location)
            .map(|l| self.program.locations[l].physical)
            .collect();
        self.steps_of.clear();
        let mut last = rustc_hash::FxHashMap::default();
        for (t, runs) in per_thread.iter().enumerate() {
            for tr in runs.traces.iter().chain(&runs.stuck) {
                for p in self.run_steps(tr).into_keys() {
                    last.insert(p, t);
                }
            }
        }
        self.last_toucher = last;
    }

    /// Whether the runs of the first threads (`traces`) leave some history for every object
    /// no later thread touches in any run: if not, no combination starting with them hangs.
    pub(super) fn allows_start(&mut self, traces: &[&Trace]) -> bool {
        let done = traces.len();
        let settled = |p: usize, last: &rustc_hash::FxHashMap<usize, usize>| last.get(&p).is_some_and(|&t| t < done);
        let last = std::mem::take(&mut self.last_toucher);
        let ok = self.allows_objects(traces, &|p| settled(p, &last));
        self.last_toucher = last;
        ok
    }

    /// The objects a run touches, with the id of its step list on each ([`PollFilter::list`]).
    pub(super) fn object_steps(&mut self, tr: &Trace) -> &[(usize, usize)] {
        let key = tr as *const Trace as usize;
        if !self.steps_of.contains_key(&key) {
            let ids = self
                .run_steps(tr)
                .into_iter()
                .map(|(p, list)| {
                    let next = self.lists.len();
                    let id = *self.list_ids.entry(list.clone()).or_insert(next);
                    if id == next {
                        self.lists.push(list);
                    }
                    (p, id)
                })
                .collect();
            self.steps_of.insert(key, ids);
        }
        &self.steps_of[&key]
    }

    /// A run's steps on one object, `run` left 0.
    pub(super) fn list(&self, id: usize) -> &[Step] {
        &self.lists[id]
    }

    pub(super) fn allows(&mut self, traces: &[&Trace]) -> bool {
        self.allows_objects(traces, &|_| true)
    }

    /// Whether every object `which` selects has a history with the steps of `traces`.
    fn allows_objects(&mut self, traces: &[&Trace], which: &dyn Fn(usize) -> bool) -> bool {
        let mut touching: std::collections::BTreeMap<usize, Vec<(usize, usize)>> = Default::default();
        for (run, tr) in traces.iter().enumerate() {
            for &(p, id) in self.object_steps(tr) {
                if which(p) {
                    touching.entry(p).or_default().push((run, id));
                }
            }
        }
        // An object no run polls forever can still rule the combination out: a run may have
        // passed a wait on it that the other runs' updates never complete.
        // Which run takes which steps does not change whether a history exists: the question
        // is asked once per multiset of step lists.
        for (p, lists) in touching {
            let mut ids: Vec<usize> = lists.into_iter().map(|(_, id)| id).collect();
            ids.sort_unstable();
            let key = (p, ids);
            let ok = match self.memo.get(&key) {
                Some(&ok) => ok,
                None => {
                    let steps: Vec<Step> = key
                        .1
                        .iter()
                        .enumerate()
                        .flat_map(|(run, &id)| self.lists[id].iter().map(move |s| Step { run, ..s.clone() }))
                        .collect();
                    let ok = history_exists(&steps, self.program.physical[p].init).unwrap_or(true);
                    self.memo.insert(key, ok);
                    ok
                }
            };
            if !ok {
                return false;
            }
        }
        true
    }
}

/// Whether some history of one object places all `steps` (each after its predecessors in its
/// run: the thread's own earlier steps, and for an async operation's update every earlier
/// event of its thread; a final poll after every update), starting from `init`, with every
/// read seeing its result and every final poll failing. None when there are too many states
/// to tell (then nothing is concluded).
///
/// Reads are placed as soon as they can be: a read changes no value, so placing it at the
/// first state that gives its result only enables its run's later steps earlier, and any
/// history that places it later still works with it placed there. Only the order of the
/// updates is searched.
fn history_exists(steps: &[Step], init: i64) -> Option<bool> {
    search_histories(steps, init, true)
}

/// [`history_exists`], placing interchangeable updates in one order only when `one_order`.
fn search_histories(steps: &[Step], init: i64, one_order: bool) -> Option<bool> {
    const MAX_STATES: usize = 100_000;
    let k = steps.len();
    if k > 128 {
        return None;
    }
    debug_assert!(steps.windows(2).all(|w| (w[0].run, w[0].index) < (w[1].run, w[1].index)), "steps in run order");
    let is_update = |s: &Step| s.kind.is_update();
    let before = |a: &Step, b: &Step| (matches!(b.kind, StepKind::FinalPoll { .. }) && is_update(a)) || a.before(b);
    let preds: Vec<u128> = (0..k).map(|u| (0..k).filter(|&v| before(&steps[v], &steps[u])).fold(0u128, |m, v| m | (1 << v))).collect();
    // Interchangeable updates are placed in index order (see [`twins`]).
    let succs: Vec<u128> = (0..k).map(|u| (0..k).filter(|&v| preds[v] & (1 << u) != 0).fold(0u128, |m, v| m | (1 << v))).collect();
    let mut preds = preds;
    if one_order {
        for (u, twin) in twins(steps, &preds.clone(), &succs).into_iter().enumerate() {
            if let Some(twin) = twin {
                preds[u] |= 1 << twin;
            }
        }
    }
    let all: u128 = if k == 128 { u128::MAX } else { (1u128 << k) - 1 };
    let reads: Vec<usize> = (0..k).filter(|&u| !is_update(&steps[u])).collect();
    let updates: Vec<usize> = (0..k).filter(|&u| is_update(&steps[u])).collect();
    // Place every enabled read that sees its result at `v`. Steps come in run order, and a
    // read waits only for earlier steps of its run (a final poll for every update, all placed
    // by then), so one pass in order places a run's consecutive reads.
    let close = |mut placed: u128, v: i64| {
        for &u in &reads {
            if placed & (1 << u) != 0 || preds[u] & !placed != 0 {
                continue;
            }
            if steps[u].kind.sees(v) {
                placed |= 1 << u;
            }
        }
        placed
    };
    let mut seen: rustc_hash::FxHashSet<(u128, i64)> = Default::default();
    let mut stack = vec![(close(0, init), init)];
    while let Some((placed, v)) = stack.pop() {
        if placed == all {
            return Some(true);
        }
        if !seen.insert((placed, v)) {
            continue;
        }
        if seen.len() > MAX_STATES {
            return None;
        }
        // Pushed last-first, so the earliest step (in run order) is tried first: a pipeline that
        // hands phases over in order is placed without backtracking.
        for &u in updates.iter().rev() {
            if placed & (1 << u) != 0 || preds[u] & !placed != 0 {
                continue;
            }
            let Some(next) = steps[u].kind.after(v) else { continue };
            let placed = placed | (1 << u);
            stack.push((close(placed, next), next));
        }
    }
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::{history_exists, search_histories, Step, StepKind};
    use crate::program::mbarrier::{MbState, MbUpdate};

    const ARRIVE: MbUpdate = MbUpdate::Arrive { count: 1, expect_tx: 0, no_complete: false, drop: false };
    const WAIT_PHASE_0: MbUpdate = MbUpdate::Wait { parity: true, operand: 0 };

    fn step(run: usize, index: usize, kind: StepKind) -> Step {
        Step { kind, run, index, agent: None }
    }

    fn update(op: MbUpdate) -> StepKind {
        StepKind::Update { op: Some(op), value: 0, result: None }
    }

    #[test]
    fn a_poll_cannot_fail_forever_on_a_phase_the_runs_complete() {
        let init = MbState::initialised(1);
        let steps = [step(0, 0, update(ARRIVE)), step(1, 0, StepKind::FinalPoll { op: WAIT_PHASE_0 })];
        assert_eq!(history_exists(&steps, init), Some(false));
        // Without the arrival, the poll fails in the final state: a hang is possible.
        assert_eq!(history_exists(&steps[1..], init), Some(true));
    }

    #[test]
    fn a_run_cannot_pass_a_wait_for_arrivals_that_never_come() {
        // Two arrivals expected; run 1 passed the wait for the phase, run 0 arrived once.
        let init = MbState::initialised(2);
        let steps = [step(0, 0, update(ARRIVE)), step(1, 0, StepKind::Read { op: WAIT_PHASE_0, result: 1 })];
        assert_eq!(history_exists(&steps, init), Some(false));
        let both = [step(0, 0, update(ARRIVE)), steps[1].clone(), step(2, 0, update(ARRIVE))];
        assert_eq!(history_exists(&both, init), Some(true));
    }

    /// A producer's laps on one full barrier of a two-copy stage (announce 32 bytes, then two
    /// 16-byte completions, each by its own async operation), and a consumer's waits.
    fn two_copy_laps(laps: usize, consumer: &[StepKind]) -> Vec<Step> {
        let announce = update(MbUpdate::Arrive { count: 1, expect_tx: 32, no_complete: false, drop: false });
        let complete = update(MbUpdate::CompleteTx { bytes: 16 });
        let mut steps = Vec::new();
        for lap in 0..laps {
            steps.push(step(0, 3 * lap, announce));
            steps.push(Step { agent: Some(2 * lap), ..step(0, 3 * lap + 1, complete) });
            steps.push(Step { agent: Some(2 * lap + 1), ..step(0, 3 * lap + 2, complete) });
        }
        steps.extend(consumer.iter().enumerate().map(|(i, k)| step(1, i, *k)));
        steps
    }

    #[test]
    fn a_pipeline_of_many_laps_is_placed_lap_by_lap() {
        // Twelve laps: the completions of a lap may be placed after later laps' announcements
        // (each such history has an arrival underflow, which only the rest of the program rules
        // out), so the histories are many; the first one tried hands the phases over in order.
        let init = MbState::initialised(1);
        let waits: Vec<StepKind> =
            (0..12).map(|lap| StepKind::Read { op: MbUpdate::Wait { parity: true, operand: lap % 2 }, result: 1 }).collect();
        assert_eq!(history_exists(&two_copy_laps(12, &waits), init), Some(true));
    }

    #[test]
    fn placing_interchangeable_completions_in_one_order_changes_no_answer() {
        // The two completions of each lap are interchangeable: placed in one order, the search
        // has 3 states per lap instead of 4, and must answer as the search of every order.
        let init = MbState::initialised(1);
        let wait = |lap: i64, result: i64| StepKind::Read { op: MbUpdate::Wait { parity: true, operand: lap % 2 }, result };
        let poll = |lap: i64| StepKind::FinalPoll { op: MbUpdate::Wait { parity: true, operand: lap % 2 } };
        let consumers: Vec<Vec<StepKind>> = vec![
            vec![],
            vec![wait(0, 1)],
            vec![wait(0, 0), wait(0, 1)],
            vec![wait(0, 1), wait(1, 1), poll(2)],
            vec![wait(0, 1), poll(1)],
            vec![poll(0)],
            vec![wait(0, 1), wait(1, 0), wait(1, 1), wait(2, 1)],
        ];
        let (mut yes, mut no) = (0, 0);
        for laps in 1..=4 {
            for c in &consumers {
                let steps = two_copy_laps(laps, c);
                let answer = search_histories(&steps, init, true);
                assert_eq!(answer, search_histories(&steps, init, false), "{laps} laps, consumer {}", c.len());
                yes += usize::from(answer == Some(true));
                no += usize::from(answer == Some(false));
            }
        }
        assert!(yes > 0 && no > 0, "both answers are exercised ({yes} yes, {no} no)");
    }

    #[test]
    fn a_read_sees_a_state_between_its_own_runs_updates() {
        // Run 0 arrives, then waits for the phase it just completed: the wait cannot read the
        // state before its own arrival, so it cannot return False there.
        let init = MbState::initialised(1);
        let steps = [step(0, 0, update(ARRIVE)), step(0, 1, StepKind::Read { op: WAIT_PHASE_0, result: 0 })];
        assert_eq!(history_exists(&steps, init), Some(false));
        let steps = [step(0, 0, StepKind::Read { op: WAIT_PHASE_0, result: 0 }), step(0, 1, update(ARRIVE))];
        assert_eq!(history_exists(&steps, init), Some(true));
    }
}
