//! Findings of a consistent execution: undefined behaviour and data races, in words.
//!
//! The model decides *whether* an execution is undefined (`undefined_unless` checks) or racy
//! (`flag` checks); this module says *what* happened, naming the instructions, their lines and,
//! for races, the ordering that is missing. An event that carries its own undefined-behaviour
//! reason (an mbarrier misuse, a bad copy size, found while building the trace) is reported with
//! that reason.

use crate::cat::{CheckOutcome, FlagKind};
use crate::exec::search::Candidate;
use crate::exec::structure::{Event, EventStructure};
use crate::exec::trace::Role;
use crate::program::Program;

/// One finding, ready to print.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Finding {
    /// The model's name for the rule (`U1-read-before-completion`, `data-race`, …).
    pub rule: String,
    pub message: String,
}

/// The findings of one consistent execution, from the flags that fired on it.
pub fn of_execution(cand: &Candidate, fired: &[&CheckOutcome]) -> (Vec<Finding>, Vec<Finding>) {
    let s = cand.structure();
    let mut undefined = Vec::new();
    let mut races = Vec::new();
    for c in fired {
        let pairs: Vec<(usize, usize)> = c.relation.pairs().collect();
        match c.flag {
            Some(FlagKind::UndefinedUnless) => {
                for (a, b) in pairs {
                    if a > b && c.relation.contains(b, a) {
                        continue;
                    }
                    let message = if a == b {
                        match &cand.ub_reasons[a] {
                            Some(reason) => format!("{reason}, at {}", describe(s, a)),
                            None => format!("{} at {}", c.name, describe(s, a)),
                        }
                    } else if c.name.starts_with("M2") {
                        // Which update wrote the object last depends on the order of updates that
                        // ptxmm does not enumerate (only the states the reads see): name the store.
                        let obj = s.events[b].location.map(|l| s.program.locations[l].name.clone()).unwrap_or_default();
                        let valid = crate::exec::mbarrier::MbState::describe(cand.values[a]);
                        format!("{} overwrites the valid mbarrier object `{obj}` (in state {valid})", describe(s, b))
                    } else if c.name.contains("race") {
                        format!("{} and {}: {}", describe(s, a), describe(s, b), missing_order(s, a, b))
                    } else {
                        format!("{} and {}", describe(s, a), describe(s, b))
                    };
                    undefined.push(Finding { rule: c.name.clone(), message });
                }
            }
            Some(FlagKind::Flag) => {
                for (a, b) in pairs {
                    // Report each unordered pair once, first event first.
                    if a > b && c.relation.contains(b, a) {
                        continue;
                    }
                    if a == b {
                        races.push(Finding { rule: c.name.clone(), message: describe(s, a) });
                        continue;
                    }
                    let message = format!("{} and {}: {}", describe(s, a), describe(s, b), missing_order(s, a, b));
                    races.push(Finding { rule: c.name.clone(), message });
                }
            }
            None => {}
        }
    }
    (undefined, races)
}

/// `st.shared.u32 [x], 1` (P0 line 4), or for an async agent's event, the part of the operation:
/// `the destination write of cp.async.bulk… (P0 line 6)`.
pub fn describe(s: &EventStructure, e: usize) -> String {
    let ev = &s.events[e];
    let program: &Program = s.program;
    let (Some(t), Some(i)) = (ev.thread, ev.instr) else {
        let name = ev.physical.map(|p| program.physical[p].name.clone()).unwrap_or_default();
        return format!("the initial state of `{name}`");
    };
    let instr = &program.threads[t].code[i];
    // One finding per instruction, not per word of a bulk access.
    let part = match ev.role {
        Role::Thread => String::new(),
        Role::Source => "the source read of ".to_string(),
        Role::Destination if ev.has_tag("RED") => "the destination reduction of ".to_string(),
        Role::Destination => "the destination write of ".to_string(),
        Role::Signal if ev.has_tag("AA") => "the arrive-on of ".to_string(),
        Role::Signal => "the complete-tx of ".to_string(),
    };
    format!("{part}`{}` (P{} line {})", instr.text, program.threads[t].id, instr.line)
}

/// What would have ordered two racing events, from their proxies, performers, strength and
/// scopes (PTX ISA §8.7: morally strong needs strong operations of one proxy with mutual
/// scopes; §8.9.5: causality across proxies needs a proxy fence).
pub fn missing_order(s: &EventStructure, a: usize, b: usize) -> String {
    let (ea, eb) = (&s.events[a], &s.events[b]);
    let line = |e: &Event| e.instr.and_then(|i| e.thread.map(|t| s.program.threads[t].code[i].line)).unwrap_or(0);
    let text = |e: &Event| {
        e.instr
            .and_then(|i| e.thread.map(|t| s.program.threads[t].code[i].text.split_whitespace().next().unwrap_or("").to_string()))
            .unwrap_or_default()
    };
    let is_async = |e: &Event| e.has_tag("ASYNC");
    if is_async(ea) != is_async(eb) {
        let (first, second) = if line(ea) <= line(eb) { (ea, eb) } else { (eb, ea) };
        let same_thread = ea.thread == eb.thread;
        return if same_thread {
            format!(
                "they are in different proxies (generic and async): no `fence.proxy.async` between `{}` at line {} and `{}` at line {}",
                text(first),
                line(first),
                text(second),
                line(second)
            )
        } else {
            format!(
                "they are in different proxies (generic and async) and no `fence.proxy.async` orders them: synchronize the threads and put a `fence.proxy.async` on the path between `{}` at line {} and `{}` at line {}, executed in the CTA of the async access (a barrier alone does not order accesses of different proxies)",
                text(first),
                line(first),
                text(second),
                line(second)
            )
        };
    }
    if let Some(agent) = [ea, eb].into_iter().find(|e| e.agent.is_some()) {
        let other = if std::ptr::eq(agent, ea) { eb } else { ea };
        return format!(
            "`{}` at line {} is asynchronous and not ordered with `{}` at line {}: wait for its completion (cp.async.wait_group / cp.async.bulk.wait_group / its mbarrier phase) before the access",
            text(agent),
            line(agent),
            text(other),
            line(other)
        );
    }
    let proxy = |e: &Event| ["GEN", "SUR", "TEX", "CON"].into_iter().find(|p| e.has_tag(p)).unwrap_or("GEN");
    let proxy_name = |p: &str| match p {
        "SUR" => "surface",
        "TEX" => "texture",
        "CON" => "constant",
        _ => "generic",
    };
    let (pa, pb) = (proxy(ea), proxy(eb));
    if pa != pb {
        let other = if pa == "GEN" { pb } else { pa };
        return format!(
            "they use different proxies ({} and {}); order them with synchronization and a `fence.proxy.{}` on the path",
            proxy_name(pa),
            proxy_name(pb),
            proxy_name(other)
        );
    }
    if ea.has_tag("WEAK") || eb.has_tag("WEAK") {
        return "a weak access is never morally strong with another thread's access; order the two with a release/acquire pair, a fence, or a barrier, or make both accesses strong (.relaxed/.acquire/.release with a common scope)".to_string();
    }
    match (ea.scope, eb.scope) {
        (Some(sa), Some(sb)) => format!(
            "their scopes (.{} and .{}) do not both include the other thread; widen the scopes (e.g. .gpu) or add synchronization",
            format!("{sa:?}").to_lowercase(),
            format!("{sb:?}").to_lowercase()
        ),
        _ => "order them with a release/acquire pair, a fence, or a barrier".to_string(),
    }
}
