//! The oracle of the search's per-thread coherence filter (`exec::search::own_order`): whether
//! the loaded model forbids a thread to read against its own program order, answered by the
//! model itself on a one-thread probe program of exactly the accesses of the pattern (decided
//! once per pattern, model and readings; remembered with the model, `CatModel::memo_fact`).
//!
//! A probe holds when every consistent execution of the probe program has the sequential value
//! in the read's register: `st x,1; st x,2; ld r0,x` must read 2 (a stale own write is
//! forbidden), `ld r0,x; st x,1` must read 0 (a later own write is), `st x,1; ld r0,x` must read
//! 1 (the initial value after an own write is). Any probe that does not parse, hits a limit or
//! lets another value through keeps the filter off for that pattern.

use crate::config::Config;
use crate::exec::reduce::F32Subnormals;
use crate::exec::search::{
    search, Access, AccessKind, Budget, Candidate, LazyModel, OwnOrderOracle, OwnPattern, PrunePlan, SearchGoal, StaticEnv, Visit,
};
use crate::exec::structure::{resolve_barriers, EventStructure};
use crate::program::{Observable, Scope, Sem};
use std::sync::Arc;

/// The oracle for `config`'s model and readings.
pub(super) fn oracle(config: &Config) -> OwnOrderOracle {
    let config = config.clone();
    Arc::new(move |p: &OwnPattern| {
        let text = probe_source(p);
        let key = format!("own-order probe under {:?}\n{text}", config.readings.describe());
        config.model.memo_fact(&key, || sequential_only(&config, &text))
    })
}

/// The text of one access of a probe: `dst` the register of a read, `v` the value written.
fn access_text(a: &Access, dst: &str, v: i64) -> String {
    let sem = match a.sem {
        Sem::Weak if a.kind == AccessKind::Atom => "",
        Sem::Weak => ".weak",
        Sem::Relaxed => ".relaxed",
        Sem::Acquire => ".acquire",
        Sem::Release => ".release",
        Sem::AcqRel => ".acq_rel",
        Sem::Sc => ".sc",
    };
    let scope = match a.scope {
        None => "",
        Some(Scope::Cta) => ".cta",
        Some(Scope::Cluster) => ".cluster",
        Some(Scope::Gpu) => ".gpu",
        Some(Scope::Sys) => ".sys",
    };
    match a.kind {
        AccessKind::Load => format!("ld{sem}{scope} {dst}, x"),
        AccessKind::Store => format!("st{sem}{scope} x, {v}"),
        AccessKind::Atom => format!("atom{sem}{scope}.exch.b32 {dst}, x, {v}"),
    }
}

/// The probe program of a pattern: its condition is the value its read must read in every
/// execution.
fn probe_source(p: &OwnPattern) -> String {
    let (lines, expected) = match p {
        OwnPattern::Stale { w, later, r } => (vec![access_text(w, "r8", 1), access_text(later, "r9", 2), access_text(r, "r0", 7)], 2),
        OwnPattern::Future { r, w } => (vec![access_text(r, "r0", 7), access_text(w, "r9", 1)], 0),
        OwnPattern::InitAfterOwn { w, r } => (vec![access_text(w, "r9", 1), access_text(r, "r0", 7)], 1),
    };
    let body: String = lines.iter().map(|l| format!(" {l} ;\n")).collect();
    format!("PTX own-order-probe\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n{body}exists (P0:r0 == {expected})\n")
}

/// Whether every consistent execution of the probe `text` satisfies its condition (the read
/// reads `expected`), searched without the filter itself.
fn sequential_only(config: &Config, text: &str) -> bool {
    let Ok(program) = crate::program::load::parse_program(crate::diag::SourceFile::new("own-order-probe.litmus", text)) else {
        return false;
    };
    let Ok((_, per_thread)) = crate::exec::trace::explore_until(&program, &config.limits, false, F32Subnormals::Keep, None) else {
        return false;
    };
    if per_thread.iter().any(|t| t.cut) {
        return false;
    }
    let observables = crate::program::naming::observables(&program);
    let plan = PrunePlan::for_model(&config.model);
    let mut budget = Budget::new(&config.limits, None);
    let mut sequential = true;
    for trace in &per_thread[0].traces {
        let structure = EventStructure::build(&program, &config.readings, &[trace]);
        for resolution in resolve_barriers(&structure, &config.readings) {
            let statics = StaticEnv::new(&structure, &resolution);
            let model = LazyModel::new(&config.model, &statics);
            let mut visit = Visit(|cand: &Candidate, _: &crate::cat::Evaluation| {
                let ok = register_values(cand, &observables).is_some_and(|state| {
                    program.condition.prop.eval(&|o: &Observable| observables.iter().position(|x| x == o).map_or(i64::MIN, |i| state[i]))
                });
                sequential &= ok;
                ok
            });
            if search(&statics, &model, &plan, &SearchGoal::default(), &mut budget, &mut visit).is_err() {
                return false;
            }
        }
    }
    sequential
}

/// The values of a probe's observables in one execution: registers only (a probe's condition
/// names its read's register); None for anything else.
fn register_values(cand: &Candidate, observables: &[Observable]) -> Option<Vec<i64>> {
    let s = cand.structure();
    observables
        .iter()
        .map(|o| match o {
            Observable::Register(t, r) => match s.symbolic_registers.get(&(*t, *r)) {
                Some(e) => e.eval(&mut |x| Some(cand.value_of(x))),
                None => Some(s.registers[*t][*r]),
            },
            Observable::Location(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relaxed(kind: AccessKind) -> Access {
        Access { kind, sem: Sem::Relaxed, scope: Some(Scope::Gpu) }
    }

    #[test]
    fn the_default_model_forbids_reading_against_program_order() {
        let config = Config::default_model();
        let o = oracle(&config);
        let (st, ld, atom) = (relaxed(AccessKind::Store), relaxed(AccessKind::Load), relaxed(AccessKind::Atom));
        let weak = Access { kind: AccessKind::Load, sem: Sem::Weak, scope: None };
        assert!(o(&OwnPattern::Stale { w: st, later: atom, r: ld }));
        assert!(o(&OwnPattern::Stale { w: atom, later: st, r: weak }));
        assert!(o(&OwnPattern::Future { r: atom, w: st }));
        assert!(o(&OwnPattern::InitAfterOwn { w: st, r: weak }));
    }

    #[test]
    fn a_model_without_coherence_keeps_every_source() {
        let model = crate::cat::CatModel::from_source(crate::diag::SourceFile::new("none.cat", "\"none\"\n"), &[]).unwrap();
        let config = Config { model, ..Config::default_model() };
        let o = oracle(&config);
        let (st, ld) = (relaxed(AccessKind::Store), relaxed(AccessKind::Load));
        assert!(!o(&OwnPattern::Stale { w: st, later: st, r: ld }));
        assert!(!o(&OwnPattern::Future { r: ld, w: st }));
        assert!(!o(&OwnPattern::InitAfterOwn { w: st, r: ld }));
    }
}
