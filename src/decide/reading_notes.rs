//! Which findings depend on a reading of the spec's ambiguities (`config::readings`), so that a
//! report can say so next to the finding: the reading in effect, the other one and its flag, and
//! why the text leaves the question open.
//!
//! A finding depends on a reading when the model, evaluated on the execution that shows it with
//! that reading's `ALT-…` set flipped (full for a default, empty for a selected alternative), no
//! longer reports it there: the check does not fire on the same events, or the execution is not
//! consistent under the other reading. A finding seen in several executions keeps a reading only
//! if every one of them depends on it (`findings::insert`). Each finding is tested once per
//! reading when first seen, then only against the readings it still depends on, so the cost is a
//! few model evaluations per distinct finding. Readings of how events are built (`signal-by-issuer`)
//! and of the values the runs compute (`f32-reduce-flushes`) have no `ALT-…` set and are not
//! tested here: flipping them changes the executions themselves.

use super::findings::{ExecutionFindings, FindingSite};
use crate::cat::{CatEnv, Evaluation, Prepared, Value};
use crate::config::readings::{ReadingDependence, AMBIGUITIES};
use crate::exec::search::Candidate;
use crate::relation::EventSet;

/// A candidate with one `ALT-…` set replaced.
struct Flipped<'c, 'a> {
    cand: &'c Candidate<'a>,
    set: &'static str,
    full: bool,
}

impl CatEnv for Flipped<'_, '_> {
    fn universe(&self) -> usize {
        self.cand.universe()
    }
    fn lookup(&self, name: &str) -> Option<Value> {
        if name == self.set {
            let n = self.cand.universe();
            return Some(Value::Set(if self.full { EventSet::full(n) } else { EventSet::empty(n) }));
        }
        self.cand.lookup(name)
    }
}

/// The model evaluated on `cand` with the set `set` full (`full`) or empty (None: the
/// evaluation failed, so nothing is claimed).
fn flipped(cand: &Candidate, model: &Prepared, set: &'static str, full: bool) -> Option<Evaluation> {
    let env = Flipped { cand, set, full };
    model.prepare_all_static(&env).ok()?.evaluate(&env, false).ok()
}

/// Whether the flipped evaluation still reports the check `rule` on events `(x, y)`.
fn still_reported(eval: Option<&Evaluation>, rule: &str, x: usize, y: usize) -> Option<bool> {
    let eval = eval?;
    if !eval.consistent() {
        return Some(false);
    }
    Some(eval.fired_flags().iter().any(|c| c.name == rule && (c.relation.contains(x, y) || c.relation.contains(y, x))))
}

/// The flipped evaluations of one execution, each computed once for all of its findings (an
/// execution of every lane has tens of them, and each evaluation is one of the whole model).
type Flips = std::collections::HashMap<(&'static str, bool), Option<Evaluation>>;

/// For a finding's rule and sites, the ids of the readings still worth testing (`None`: every
/// reading the model reads, for a finding not seen before).
pub type ReadingsToTest<'f> = &'f dyn Fn(&str, &[FindingSite]) -> Option<Vec<&'static str>>;

/// Add to each finding of `found` the readings it depends on in this execution. `to_test`
/// gives, for a finding's rule and sites, the ids of the readings still worth testing (`None`:
/// every reading the model reads).
pub fn annotate(cand: &Candidate, model: &Prepared, found: &mut ExecutionFindings, to_test: ReadingsToTest) {
    let events = std::mem::take(&mut found.events);
    let mut flips = Flips::new();
    let all = found.undefined.iter_mut().chain(found.races.iter_mut()).chain(found.flags.iter_mut());
    for f in all {
        let Some((rule, _, x, y)) = events.iter().find(|(rule, sites, _, _)| *rule == f.rule && *sites == f.sites) else {
            continue;
        };
        f.readings = dependences(cand, model, &mut flips, rule, *x, *y, to_test(&f.rule, &f.sites));
    }
    found.events = events;
}

fn dependences(
    cand: &Candidate,
    model: &Prepared,
    flips: &mut Flips,
    rule: &str,
    x: usize,
    y: usize,
    ids: Option<Vec<&'static str>>,
) -> Vec<ReadingDependence> {
    let mut out = Vec::new();
    for a in AMBIGUITIES {
        let Some(set) = a.cat_set else { continue };
        if !model.reads(set) || ids.as_ref().is_some_and(|ids| !ids.contains(&a.id)) {
            continue;
        }
        let selected = cand.structure().sets.get(set).is_some_and(|s| !s.is_empty());
        let eval = flips.entry((set, !selected)).or_insert_with(|| flipped(cand, model, set, !selected));
        if still_reported(eval.as_ref(), rule, x, y) == Some(false) {
            out.push(ReadingDependence::of(a, selected));
        }
    }
    out
}
