//! `.aligned` barriers reached by part of a warp. PTX ISA §9.7.13.1: "The optional `.aligned`
//! modifier indicates that all threads in CTA will execute the same barrier instruction. In
//! conditionally executed code, an aligned barrier instruction should only be used if it is known
//! that all threads in CTA evaluate the condition identically, otherwise behavior is undefined"
//! (every `bar` is `barrier.*.aligned`). A producer arriving with `bar.arrive` where consumers
//! wait with `bar.sync` is the ISA's own pattern, so the instruction is compared per warp, where
//! the hardware executes it (compute-sanitizer's synccheck: "divergent thread(s) in warp"): the
//! lanes of one warp that run one body (a kernel's threads) meet at their k-th aligned barrier at
//! the same instruction, and a lane that finishes without reaching it leaves the warp divergent.
//! Threads with code of their own (a litmus test's columns) have no instruction in common.

use super::*;

/// Mark, in `events` (`bases[t]`: thread t's first event), the aligned barrier events of this
/// combination of runs that part of a warp reaches at another instruction, or not at all.
pub(super) fn undefined(program: &Program, traces: &[&Trace], bases: &[usize], events: &mut [Event]) {
    let aligned = |t: usize, e: &TraceEvent| {
        matches!(e.op, TraceOp::Barrier { .. }) && matches!(program.threads[t].code[e.instr].op, Op::Barrier { aligned: true, .. })
    };
    // The threads of each warp that run one body: the same CTA, warp and first instruction.
    let mut warps: BTreeMap<(i64, i64, i64, usize), Vec<usize>> = BTreeMap::new();
    for (t, th) in program.threads.iter().enumerate() {
        let Some(body) = th.body_start() else { continue };
        warps.entry((th.placement.gpu, th.placement.cta, th.warp, body)).or_default().push(t);
    }
    for lanes in warps.values().filter(|l| l.len() > 1) {
        // Each lane's aligned barriers, in program order: (trace event index, instruction).
        let seq: Vec<Vec<(usize, usize)>> = lanes
            .iter()
            .map(|&t| traces[t].events.iter().enumerate().filter(|(_, e)| aligned(t, e)).map(|(k, e)| (k, e.instr)).collect())
            .collect();
        let generations = seq.iter().map(Vec::len).max().unwrap_or(0);
        for k in 0..generations {
            let Some(first) = (0..lanes.len()).find(|&l| seq[l].len() > k) else { continue };
            let (t0, (k0, i0)) = (lanes[first], seq[first][k]);
            let at = |t: usize, i: usize| {
                let ins = &program.threads[t].code[i];
                format!("{} at line {} `{}`", program.threads[t].name(), ins.line, ins.text)
            };
            for (l, &t) in lanes.iter().enumerate() {
                let why = match seq[l].get(k) {
                    Some(&(kt, it)) if program.threads[t].code[it].span != program.threads[t0].code[i0].span => Some((
                        bases[t] + kt,
                        format!(
                            "{} reaches barrier {} of warp {} at another instruction than {}",
                            at(t, it),
                            k + 1,
                            program.threads[t].warp,
                            at(t0, i0)
                        ),
                    )),
                    // A lane still running (stuck before it) may reach it yet.
                    None if traces[t].stuck.is_none() => Some((
                        bases[t0] + k0,
                        format!(
                            "{} reaches barrier {} of warp {}, and {} of the same warp finishes without reaching it",
                            at(t0, i0),
                            k + 1,
                            program.threads[t0].warp,
                            program.threads[t].name()
                        ),
                    )),
                    _ => None,
                };
                let Some((e, why)) = why else { continue };
                if events[e].ub.is_none() {
                    events[e].ub = Some(format!(
                        "divergent aligned barrier: {why} (PTX ISA 9.7.13.1: an `.aligned` barrier, as every `bar`, is executed by all threads at the same instruction, otherwise behavior is undefined; `barrier.sync` without `.aligned` may be reached from different branches)"
                    ));
                }
            }
        }
    }
}
