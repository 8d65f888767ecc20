//! Reports: herd7's result block, byte for byte in its layout, and the same facts as JSON.
//!
//! herd7's printer (`herd/top_herd.ml`) fixes the layout: `Test`, `States`, one line per state,
//! `Ok`/`No` (prefixed by `Loop ` when a loop was cut), `Witnesses`, `Positive: p Negative: q`
//! (swapped for `~exists`), `Condition`, `Observation`. Counts are of consistent executions.

use crate::decide::verdict::{LoopReport, Outcome, Verdict};
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
    if !o.undefined.is_empty() {
        // herd7's name for its undefined-behaviour flag (`Flag.Undef`), so that a reader of
        // the log sees the Undefined verdict.
        let _ = writeln!(s, "Flag {UNDEFINED_FLAG}");
    }
    let _ = writeln!(s, "Condition {} ({})", o.quantifier.keyword(), o.log_condition());
    let _ = writeln!(s, "Observation {} {} {} {}", o.test, observation(o), o.positive, o.negative);
    let _ = writeln!(s, "Hash={}", o.hash);
    s
}

/// The `Flag` line of a test with undefined behaviour: herd7 prints its own undefined flag so.
pub const UNDEFINED_FLAG: &str = "*undef*";

/// The verdict of a test, printed before herd7's block so that it leads (herd7's `Test NAME
/// Allowed` line is the test's kind, from its quantifier, not an answer): the verdict, and why
/// it is Inconclusive or Unknown. With the liveness outcome of the same test, a test where no
/// execution completes names a thread that waits forever.
pub fn headline(o: &Outcome, live: Option<&crate::decide::liveness::LivenessOutcome>) -> String {
    let mut s = String::new();
    match o.inconclusive() {
        Some(why) => {
            let short = if o.loop_cut {
                "the unrolling bound cut the runs"
            } else if o.no_consistent_execution {
                "no consistent execution"
            } else {
                "no execution completes"
            };
            let _ = writeln!(s, "Verdict: {} ({short})", o.verdict().name());
            // The verdict line gave the short reason: the next line goes on from it.
            let rest = why.strip_prefix(short).and_then(|r| r.strip_prefix(": ")).unwrap_or(&why);
            let _ = writeln!(s, "Inconclusive: {rest}");
            if !o.loop_cut {
                // The first stuck thread of a hanging execution; the Liveness report lists all.
                if let Some(t) = live.and_then(|l| l.hang.first()) {
                    let _ = writeln!(s, "  for instance {} stuck at line {} `{}`: {}", t.thread, t.line, t.instruction, t.reason);
                }
            }
        }
        None => {
            let _ = writeln!(s, "Verdict: {}", o.verdict().name());
        }
    }
    if o.speedcheck_stopped {
        let _ = writeln!(
            s,
            "Speedcheck: the search stopped at the first execution that settles the condition; the states, counts and findings below are partial"
        );
    }
    if let Some(p) = &o.partial_states {
        let (how, with) = match p.witness {
            true => ("it found an execution reaching the outcome", ", and the witness's"),
            false => ("no execution reaches it (every disjunct of the condition searched)", ""),
        };
        let _ = writeln!(
            s,
            "Partial states: the enumeration of final states stopped at its work budget of {} consistent executions (--all-states lists every state)",
            p.budget
        );
        let _ = writeln!(
            s,
            "  the verdict comes from a search for the outcome itself: {how}; no candidate execution fires a flag of the model or has undefined behaviour (checked on bounds before that search); the states and counts below are those of the executions enumerated by then{with}"
        );
    }
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
    s
}

/// The text report of `run` (the CLI and the playground): the headline, then herd7's block
/// and ptxmm's findings and notes. For an Undefined result, or an Allowed one with races, the
/// findings are the answer and come first, before herd7's block (which stays byte for byte).
pub fn run_text(o: &Outcome, live: Option<&crate::decide::liveness::LivenessOutcome>) -> String {
    let answer_is_findings = o.verdict() == Verdict::Undefined || (o.verdict() == Verdict::Allowed && !o.races.is_empty());
    if answer_is_findings {
        format!("{}{}{}{}", headline(o, live), findings_block(o), herd_block(o), notes_block(o))
    } else {
        format!("{}{}{}", headline(o, live), herd_block(o), verdict_block(o))
    }
}

/// What ptxmm adds after herd7's block: the undefined behaviour that makes a test Undefined,
/// the data races, and the readings of the spec's ambiguities in effect.
pub fn verdict_block(o: &Outcome) -> String {
    format!("{}{}", findings_block(o), notes_block(o))
}

/// The findings: undefined behaviour, data races, other flags of the model, each with its hint.
pub fn findings_block(o: &Outcome) -> String {
    const SHOWN: usize = 12;
    let mut s = String::new();
    let list = |s: &mut String, title: &str, items: &std::collections::BTreeSet<crate::decide::findings::Finding>| {
        if items.is_empty() {
            return;
        }
        let _ = writeln!(s, "{title} ({}):", items.len());
        let groups = alike_but_threads(items);
        for (f, others) in groups.iter().take(SHOWN) {
            let _ = writeln!(s, "  [{}] {}", f.rule, f.message);
            if let Some(h) = &f.hint {
                let _ = writeln!(s, "    hint: {h}");
            }
            for r in &f.readings {
                let _ = writeln!(s, "    reading: {}", r.line());
            }
            if !others.is_empty() {
                let threads = |g: &crate::decide::findings::Finding| {
                    let mut names: Vec<&str> = g.sites.iter().map(|x| x.thread.as_str()).collect();
                    names.dedup();
                    names.join(" and ")
                };
                let mut shown: Vec<String> = others.iter().take(SHOWN).map(|g| threads(g)).collect();
                if others.len() > SHOWN {
                    shown.push(format!("{} more", others.len() - SHOWN));
                }
                let _ = writeln!(s, "    the same in other threads ({}): {}", others.len(), shown.join(", "));
            }
        }
        if groups.len() > SHOWN {
            let _ = writeln!(s, "  ... and {} more (--json lists them all)", groups.len() - SHOWN);
        }
    };
    list(&mut s, "Undefined behaviour", &o.undefined);
    list(&mut s, "Data races", &o.races);
    list(&mut s, "Flagged by the model", &o.flag_findings);
    s
}

/// The findings in `items` grouped by what they say but for the threads: the same rule at the
/// same instructions with the same readings (a bug of a kernel in each of its CTAs, or its
/// lanes): the first of each group, with the others, in order.
fn alike_but_threads(
    items: &std::collections::BTreeSet<crate::decide::findings::Finding>,
) -> Vec<(&crate::decide::findings::Finding, Vec<&crate::decide::findings::Finding>)> {
    use crate::decide::findings::Finding;
    let key = |f: &Finding| {
        let sites: Vec<_> = f.sites.iter().map(|x| (x.line, x.instruction.clone(), x.part.clone())).collect();
        (f.rule.clone(), sites, f.readings.iter().map(|r| r.line()).collect::<Vec<_>>())
    };
    let mut groups: Vec<(_, &Finding, Vec<&Finding>)> = Vec::new();
    for f in items {
        let k = key(f);
        match groups.iter_mut().find(|(g, _, _)| *g == k) {
            Some((_, _, others)) => others.push(f),
            None => groups.push((k, f, Vec::new())),
        }
    }
    groups.into_iter().map(|(_, f, others)| (f, others)).collect()
}

/// The float values of the states, the checks skipped, the loops and the readings in effect.
pub fn notes_block(o: &Outcome) -> String {
    let mut s = floats_block(o);
    if !o.skipped_checks.is_empty() {
        let _ = writeln!(s, "Skipped checks (not applied): {}", o.skipped_checks.join(", "));
    }
    s.push_str(&loops_block(o));
    s.push_str(&unchecked_block(o));
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

/// The loops the runs iterated in: the unrolling bound (how it was chosen), and per loop the
/// most iterations a complete run needed, or that its runs were cut.
/// The threads, lines and flag of the unchecked accesses of one kind and one cause.
type UncheckedGroup<'a> = (Vec<String>, std::collections::BTreeSet<usize>, Option<&'a str>);

/// The accesses not checked, grouped by what they do and why: `Not checked: global loads at
/// P0 lines 440, 452 ...: their addresses depend on ...; give --param param_0+32=VALUE`.
pub fn unchecked_block(o: &Outcome) -> String {
    let mut s = String::new();
    if o.unchecked.is_empty() {
        return s;
    }
    let mut groups: std::collections::BTreeMap<(&str, &str), UncheckedGroup> = Default::default();
    for u in &o.unchecked {
        let g = groups.entry((u.access, &u.because)).or_insert_with(|| (Vec::new(), Default::default(), u.fix.as_deref()));
        if !g.0.contains(&u.thread) {
            g.0.push(u.thread.clone());
        }
        g.1.insert(u.line);
    }
    let _ = writeln!(
        s,
        "Not checked ({} instruction(s)): their global addresses depend on unknown values, so their global accesses have no events: what they read is unknown, and their races and the bytes they touch are not checked:",
        o.unchecked.iter().map(|u| (u.line, u.access)).collect::<std::collections::BTreeSet<_>>().len()
    );
    for ((access, because), (threads, lines, fix)) in groups {
        let lines: Vec<String> = lines.iter().map(usize::to_string).collect();
        let shown = if lines.len() > 12 { format!("{}, ... ({} lines)", lines[..12].join(", "), lines.len()) } else { lines.join(", ") };
        let threads =
            if threads.len() > 6 { format!("{} and {} more", threads[..6].join(", "), threads.len() - 6) } else { threads.join(", ") };
        let fix = fix.map(|f| format!("; give {f}")).unwrap_or_default();
        let _ = writeln!(s, "  {access} at line(s) {shown} ({threads}): the address depends on {because}{fix}");
    }
    s
}

pub fn loops_block(o: &Outcome) -> String {
    let mut s = String::new();
    if o.loops.is_empty() {
        return s;
    }
    let how = if o.bounds_tried.is_empty() {
        "--unroll".to_string()
    } else {
        let tried = o.bounds_tried.iter().map(usize::to_string).collect::<Vec<_>>().join(", ");
        format!("raised automatically: {tried}")
    };
    let cut = if o.loop_cut { "runs cut" } else { "no run cut" };
    let _ = writeln!(s, "Loops: unrolling bound {} ({how}; {cut})", o.unroll);
    for (l, last) in LoopReport::lanes_alike(&o.loops) {
        if l.cut {
            let complete = match l.iterations {
                0 => "no complete run iterates back".to_string(),
                n => format!("complete runs iterate back up to {n} time(s)"),
            };
            let why = o.unroll_stop.as_deref().map(|w| format!("; not raised further: {w}")).unwrap_or_default();
            let _ = writeln!(
                s,
                "  {}: runs cut at {} iterations back ({complete}): the answer covers runs up to that bound{why}",
                l.place_to(last),
                o.unroll
            );
        } else {
            let _ = writeln!(s, "  {}: every complete run iterates back at most {} time(s)", l.place_to(last), l.iterations);
        }
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

/// `0:r0=1; 1:r0=0;`, with the names of [`Outcome::log_names`] (herd7's log grammar).
pub fn state_line(o: &Outcome, state: &[i64]) -> String {
    o.log_names.iter().zip(state).map(|(n, v)| format!("{n}={v};")).collect::<Vec<_>>().join(" ")
}

/// The values of a state's float-typed observables as floats: (`x`, `3.0f32`).
fn floats_of(o: &Outcome, state: &[i64]) -> Vec<(String, String)> {
    o.log_names
        .iter()
        .zip(&o.float_types)
        .zip(state)
        .filter_map(|((n, t), v)| Some((n.clone(), crate::program::naming::float_text((*t)?, *v))))
        .collect()
}

/// The values of the float-typed observables in the states above, as floats: the herd7 block
/// keeps the bits (tools compare its state lines), so the floats come after it.
fn floats_block(o: &Outcome) -> String {
    const SHOWN: usize = 12;
    // Each (observable, value) once, in the order of the state lines' names.
    let mut pairs: std::collections::BTreeSet<(usize, i64)> = Default::default();
    for state in o.states.keys() {
        pairs.extend(o.float_types.iter().enumerate().filter(|(_, t)| t.is_some()).map(|(i, _)| (i, state[i])));
    }
    let seen: Vec<String> = pairs
        .into_iter()
        .filter_map(|(i, v)| Some(format!("{}={v} ({})", o.log_names[i], crate::program::naming::float_text(o.float_types[i]?, v))))
        .collect();
    match seen.len() {
        0 => String::new(),
        k if k > SHOWN => format!("Floats: {}, ... and {} more (--json lists them all)\n", seen[..SHOWN].join(", "), k - SHOWN),
        _ => format!("Floats: {}\n", seen.join(", ")),
    }
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

/// The version of every JSON record ptxmm prints (`run`, `explain`, `bench`; `docs/json.md`).
/// Raised when a field changes meaning or disappears; new fields may appear without a change.
pub const SCHEMA_VERSION: u32 = 1;

/// What the JSON form of an outcome includes beyond the facts.
#[derive(Clone, Copy, Debug, Default)]
pub struct JsonOptions {
    /// Include `time_seconds` (otherwise the record is the same run to run).
    pub timing: bool,
}

/// One final state. The fields are in the order a JSON object's keys print (sorted), so a
/// state streamed on its own prints as it does inside the record.
#[derive(Serialize)]
struct JsonState {
    /// The values of the observables whose type says float, as floats (`3.0f32`).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    floats: std::collections::BTreeMap<String, String>,
    satisfies: bool,
    values: std::collections::BTreeMap<String, i64>,
}

impl JsonState {
    fn of(o: &Outcome, st: &[i64], sat: bool) -> Self {
        JsonState {
            values: o.log_names.iter().cloned().zip(st.iter().copied()).collect(),
            floats: floats_of(o, st).into_iter().collect(),
            satisfies: sat,
        }
    }
}

/// The states of a record: all of them, or a slot that [`write_json`] fills as it prints.
#[derive(Serialize)]
#[serde(untagged)]
enum JsonStates {
    All(Vec<JsonState>),
    Slot(&'static str),
}

/// Stands for the states in a record that [`write_json`] prints (a control character keeps it
/// from equalling any string of a test).
const STATES_SLOT: &str = "\u{1}ptxmm:states\u{1}";

#[derive(Serialize)]
struct JsonOutcome<'a> {
    schema_version: u32,
    test: &'a str,
    file: &'a str,
    model: &'a str,
    kind: &'static str,
    condition: String,
    ok: bool,
    result: &'static str,
    loop_cut: bool,
    unroll: usize,
    bounds_tried: &'a [usize],
    unroll_stop: Option<&'a str>,
    loops: &'a [crate::decide::verdict::LoopReport],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    unchecked: &'a [crate::decide::verdict::UncheckedAccess],
    states: JsonStates,
    positive: u64,
    negative: u64,
    witnesses: (u64, u64),
    observation: &'static str,
    flags: &'a [String],
    verdict: &'static str,
    undefined: &'a std::collections::BTreeSet<crate::decide::findings::Finding>,
    races: &'a std::collections::BTreeSet<crate::decide::findings::Finding>,
    flag_findings: &'a std::collections::BTreeSet<crate::decide::findings::Finding>,
    readings: Vec<crate::config::readings::ReadingEntry>,
    incomplete: Option<&'a str>,
    inconclusive: Option<String>,
    hanging_combinations: u64,
    candidates: u64,
    evaluations: u64,
    partial_candidates: u64,
    dead_ends: u64,
    consistent: u64,
    hash: &'a str,
    speedcheck_stopped: bool,
    /// Present (false) only when the enumeration of final states stopped at its work budget
    /// (the outcome-directed search then decided the verdict): the states are partial.
    #[serde(skip_serializing_if = "Option::is_none")]
    states_complete: Option<bool>,
    skipped_checks: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    time_seconds: Option<f64>,
}

/// The same facts as the herd block, as a JSON object (`docs/json.md`, `docs/ptxmm-run.schema.json`).
pub fn json(o: &Outcome, file: &str, model: &str, options: JsonOptions) -> serde_json::Value {
    let states = JsonStates::All(o.states.iter().map(|(st, sat)| JsonState::of(o, st, *sat)).collect());
    record(o, file, model, options, states)
}

/// The record of [`json`] without its states, for [`write_json`] to print them one at a time:
/// the caller may add fields (`liveness`) before printing.
pub fn json_streamed(o: &Outcome, file: &str, model: &str, options: JsonOptions) -> serde_json::Value {
    record(o, file, model, options, JsonStates::Slot(STATES_SLOT))
}

/// Print `record` (from [`json_streamed`], or any other record) compactly, its states taken from
/// `o` as it goes: the bytes are those of the whole record printed at once, but no state is held
/// as a JSON value (a record of 65,536 states took 5.7 times the memory of the search).
pub fn write_json(o: &Outcome, record: &serde_json::Value, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let text = record.to_string();
    let slot = serde_json::Value::from(STATES_SLOT).to_string();
    let Some((before, after)) = text.split_once(&slot) else {
        return out.write_all(text.as_bytes());
    };
    out.write_all(before.as_bytes())?;
    out.write_all(b"[")?;
    for (k, (st, sat)) in o.states.iter().enumerate() {
        if k > 0 {
            out.write_all(b",")?;
        }
        serde_json::to_writer(&mut *out, &JsonState::of(o, st, *sat)).map_err(std::io::Error::other)?;
    }
    out.write_all(b"]")?;
    out.write_all(after.as_bytes())
}

fn record(o: &Outcome, file: &str, model: &str, options: JsonOptions, states: JsonStates) -> serde_json::Value {
    let j = JsonOutcome {
        schema_version: SCHEMA_VERSION,
        test: &o.test,
        file,
        model,
        kind: match o.quantifier {
            Quantifier::Exists => "Allowed",
            Quantifier::NotExists => "Forbidden",
            Quantifier::Forall => "Required",
        },
        condition: format!("{} ({})", o.quantifier.keyword(), o.log_condition()),
        ok: o.ok(),
        result: result(o),
        loop_cut: o.loop_cut,
        unroll: o.unroll,
        bounds_tried: &o.bounds_tried,
        unroll_stop: o.unroll_stop.as_deref(),
        loops: &o.loops,
        unchecked: &o.unchecked,
        states,
        positive: o.positive,
        negative: o.negative,
        witnesses: witnesses(o),
        observation: observation(o),
        flags: &o.flags,
        verdict: o.verdict().name(),
        undefined: &o.undefined,
        races: &o.races,
        flag_findings: &o.flag_findings,
        readings: crate::config::readings::entries_of(&o.readings),
        incomplete: o.incomplete.as_deref(),
        inconclusive: o.inconclusive(),
        hanging_combinations: o.blocked_combinations,
        candidates: o.stats.candidates,
        evaluations: o.stats.evaluations,
        partial_candidates: o.stats.partial,
        dead_ends: o.stats.dead_ends,
        consistent: o.stats.consistent,
        hash: &o.hash,
        speedcheck_stopped: o.speedcheck_stopped,
        states_complete: (o.partial_states.is_some() || o.enumeration_cut).then_some(false),
        skipped_checks: &o.skipped_checks,
        time_seconds: options.timing.then_some(o.elapsed.as_secs_f64()),
    };
    serde_json::to_value(j).expect("outcome serialises")
}

/// Where a test failed to load or to run, for its JSON record: 1-based line and column when the
/// error points into the source.
#[derive(Clone, Debug, Serialize)]
pub struct JsonError {
    pub message: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// The full diagnostic as printed on stderr (source excerpt and notes, no colour).
    pub rendered: String,
}

impl JsonError {
    /// An error with no position in the source.
    pub fn plain(message: impl Into<String>) -> JsonError {
        let message = message.into();
        JsonError { rendered: message.clone(), message, line: None, column: None }
    }

    /// The error of a test that could not be read, parsed or lowered.
    pub fn of_load(e: &crate::LoadError) -> JsonError {
        match e {
            crate::LoadError::Io { .. } | crate::LoadError::TooLarge { .. } => JsonError::plain(e.to_string()),
            crate::LoadError::NotText { line, column, .. } => {
                JsonError { message: e.to_string(), line: Some(*line), column: Some(*column), rendered: e.to_string() }
            }
            crate::LoadError::Syntax(d) => JsonError::of_diagnostic(d),
        }
    }

    /// A diagnostic at its place in a file.
    pub fn of_diagnostic(d: &crate::diag::FileDiagnostic) -> JsonError {
        let (line, column) = d.file.line_col(d.diagnostic.span.start);
        JsonError { message: d.diagnostic.message.clone(), line: Some(line), column: Some(column), rendered: d.render(false) }
    }
}

/// The record of a test with no result: `test` is null when it could not be parsed.
pub fn json_error(file: &str, test: Option<&str>, model: Option<&str>, error: JsonError) -> serde_json::Value {
    let mut v = serde_json::json!({ "schema_version": SCHEMA_VERSION, "file": file, "test": test, "error": error });
    if let Some(m) = model {
        v["model"] = m.into();
    }
    v
}
