//! The warp exchanges of an event structure (`exec::trace`'s `exchange`): each lane's exchange
//! depends on the exchanges of the lanes whose sources its results take (`data`, so that the
//! model's thin-air check sees a value go round through an exchange), and lanes that meet at
//! their k-th exchange with different forms or membermasks are undefined behaviour.

use super::*;
use crate::exec::trace::{meetings, Meeting};

/// The exchanges that met in this combination of runs; those with different forms or
/// membermasks get their undefined behaviour in `events` (`bases[t]`: thread t's first event).
pub(super) fn undefined(program: &Program, traces: &[&Trace], bases: &[usize], events: &mut [Event]) -> Vec<Meeting> {
    if !traces.iter().any(|t| !t.exchanges.is_empty()) {
        return Vec::new();
    }
    let meets = meetings(program, traces);
    for m in &meets {
        let reader = bases[m.reader.0] + m.reader.1;
        if !m.agree && events[reader].ub.is_none() {
            let (ours, theirs) = (&program.threads[m.reader.0].code[m.instrs.0], &program.threads[m.source.0].code[m.instrs.1]);
            events[reader].ub = Some(format!(
                "warp exchange: P{} (`{}`, line {}) and P{} (`{}`, line {}) meet with different forms or membermasks (CUDA C++ Programming Guide, Warp Shuffle Functions: \"all non-exited threads named in mask must execute the same intrinsic with the same mask, or the result is undefined\")",
                program.threads[m.reader.0].id,
                ours.text,
                ours.line,
                program.threads[m.source.0].id,
                theirs.text,
                theirs.line,
            ));
        }
    }
    meets
}

/// Each exchange depends on those of the lanes whose sources its results take (`data`).
pub(super) fn relate(meets: &[Meeting], bases: &[usize], relations: &mut BTreeMap<&'static str, Relation>) {
    let Some(data) = relations.get_mut("data") else { return };
    for m in meets.iter().filter(|m| m.reads) {
        data.insert(bases[m.source.0] + m.source.1, bases[m.reader.0] + m.reader.1);
    }
}
