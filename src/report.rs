//! Reports: herd7's result block, byte for byte in its layout, and the same facts as JSON.
//!
//! herd7's printer (`herd/top_herd.ml`) fixes the layout: `Test`, `States`, one line per state,
//! `Ok`/`No` (prefixed by `Loop ` when a loop was cut), `Witnesses`, `Positive: p Negative: q`
//! (swapped for `~exists`), `Condition`, `Observation`. Counts are of consistent executions.

use crate::check::Outcome;
use crate::litmus::ast::Quantifier;
use serde::Serialize;
use std::fmt::Write;

/// herd7's result block.
pub fn herd_block(o: &Outcome) -> String {
    let mut s = String::new();
    let kind = match o.quantifier {
        Quantifier::Exists => "Allowed",
        Quantifier::NotExists => "Forbidden",
        Quantifier::Forall => "Required",
    };
    let _ = writeln!(s, "Test {} {}", o.test, kind);
    let _ = writeln!(s, "States {}", o.states.len());
    for state in o.states.keys() {
        let _ = writeln!(s, "{}", state_line(o, state));
    }
    let _ = writeln!(s, "{}{}", if o.loop_cut { "Loop " } else { "" }, result(o));
    let _ = writeln!(s, "Witnesses");
    let (p, n) = witnesses(o);
    let _ = writeln!(s, "Positive: {p} Negative: {n}");
    for f in &o.flags {
        let _ = writeln!(s, "Flag {f}");
    }
    let _ = writeln!(s, "Condition {} ({})", o.quantifier.keyword(), o.condition);
    let _ = writeln!(s, "Observation {} {} {} {}", o.test, observation(o), o.positive, o.negative);
    s
}

/// What ptxmm adds to the herd block: the three-valued verdict, the undefined behaviour that
/// makes it Undefined, the data races, and the readings of the spec's ambiguities in effect.
pub fn verdict_block(o: &Outcome) -> String {
    const SHOWN: usize = 12;
    let mut s = String::new();
    let _ = writeln!(s, "Verdict: {}", o.verdict().name());
    if let Some(why) = &o.incomplete {
        // Say what the search established before it stopped.
        let reached = if o.positive > 0 { "reached" } else { "not reached so far" };
        let _ = writeln!(s, "Incomplete: {why}");
        let _ = writeln!(
            s,
            "  before it stopped: {} consistent execution(s), {} state(s); the outcome was {reached}{}",
            o.positive + o.negative,
            o.states.len(),
            if o.undefined.is_empty() { "; no undefined behaviour found so far" } else { "" }
        );
    }
    let list = |s: &mut String, title: &str, items: &std::collections::BTreeSet<crate::findings::Finding>| {
        if items.is_empty() {
            return;
        }
        let _ = writeln!(s, "{title} ({}):", items.len());
        for f in items.iter().take(SHOWN) {
            let _ = writeln!(s, "  [{}] {}", f.rule, f.message);
            if let Some(h) = &f.hint {
                let _ = writeln!(s, "    hint: {h}");
            }
        }
        if items.len() > SHOWN {
            let _ = writeln!(s, "  ... and {} more (--json lists them all)", items.len() - SHOWN);
        }
    };
    list(&mut s, "Undefined behaviour", &o.undefined);
    list(&mut s, "Data races", &o.races);
    list(&mut s, "Flagged by the model", &o.flag_findings);
    if o.readings.iter().any(|r| r.contains(" alternative ")) {
        let _ = writeln!(s, "Readings:");
        for r in &o.readings {
            let _ = writeln!(s, "  {r}");
        }
    } else if !o.readings.is_empty() {
        let _ = writeln!(s, "Readings: defaults of every ambiguity (see --reading)");
    }
    s
}

/// herd7's `Ok` / `No`; `Undef` when a limit stopped the search before the answer was
/// established (an execution found settles `exists` and refutes `~exists`/`forall`; the other
/// answers need the whole search).
pub fn result(o: &Outcome) -> &'static str {
    let settled = match o.quantifier {
        Quantifier::Exists | Quantifier::NotExists => o.positive > 0,
        Quantifier::Forall => o.negative > 0,
    };
    match (o.incomplete.is_some() && !settled, o.ok()) {
        (true, _) => "Undef",
        (false, true) => "Ok",
        (false, false) => "No",
    }
}

/// `0:r0=1; 1:r0=0;`
pub fn state_line(o: &Outcome, state: &[i64]) -> String {
    o.observable_names.iter().zip(state).map(|(n, v)| format!("{n}={v};")).collect::<Vec<_>>().join(" ")
}

/// The displayed witness counts: herd7 swaps them for `~exists`.
fn witnesses(o: &Outcome) -> (u64, u64) {
    match o.quantifier {
        Quantifier::NotExists => (o.negative, o.positive),
        _ => (o.positive, o.negative),
    }
}

fn observation(o: &Outcome) -> &'static str {
    if o.positive == 0 {
        "Never"
    } else if o.negative == 0 {
        "Always"
    } else {
        "Sometimes"
    }
}

#[derive(Serialize)]
struct JsonState {
    values: std::collections::BTreeMap<String, i64>,
    satisfies: bool,
}

#[derive(Serialize)]
struct JsonOutcome<'a> {
    test: &'a str,
    file: &'a str,
    model: &'a str,
    kind: &'static str,
    condition: String,
    ok: bool,
    result: &'static str,
    loop_cut: bool,
    states: Vec<JsonState>,
    positive: u64,
    negative: u64,
    witnesses: (u64, u64),
    observation: &'static str,
    flags: &'a [String],
    verdict: &'static str,
    undefined: &'a std::collections::BTreeSet<crate::findings::Finding>,
    races: &'a std::collections::BTreeSet<crate::findings::Finding>,
    readings: &'a [String],
    incomplete: Option<&'a str>,
    hanging_combinations: u64,
    candidates: u64,
    evaluations: u64,
    partial_candidates: u64,
    dead_ends: u64,
    consistent: u64,
    time_seconds: f64,
}

/// The same facts as the herd block, as a JSON object.
pub fn json(o: &Outcome, file: &str, model: &str) -> serde_json::Value {
    let states = o
        .states
        .iter()
        .map(|(st, sat)| JsonState { values: o.observable_names.iter().cloned().zip(st.iter().copied()).collect(), satisfies: *sat })
        .collect();
    let j = JsonOutcome {
        test: &o.test,
        file,
        model,
        kind: match o.quantifier {
            Quantifier::Exists => "Allowed",
            Quantifier::NotExists => "Forbidden",
            Quantifier::Forall => "Required",
        },
        condition: format!("{} ({})", o.quantifier.keyword(), o.condition),
        ok: o.ok(),
        result: result(o),
        loop_cut: o.loop_cut,
        states,
        positive: o.positive,
        negative: o.negative,
        witnesses: witnesses(o),
        observation: observation(o),
        flags: &o.flags,
        verdict: o.verdict().name(),
        undefined: &o.undefined,
        races: &o.races,
        readings: &o.readings,
        incomplete: o.incomplete.as_deref(),
        hanging_combinations: o.blocked_combinations,
        candidates: o.stats.candidates,
        evaluations: o.stats.evaluations,
        partial_candidates: o.stats.partial,
        dead_ends: o.stats.dead_ends,
        consistent: o.stats.consistent,
        time_seconds: o.elapsed.as_secs_f64(),
    };
    serde_json::to_value(j).expect("outcome serialises")
}
