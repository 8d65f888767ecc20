//! Warp columns: `P1@cta 0,gpu 0,warp 1` is one column of code that stands for the lanes of warp
//! 1 of its CTA, each lane a thread of its own (its registers, values and accesses its own).
//!
//! The parser writes one thread header per lane (placed at `tid 32W + lane`, with
//! [`ThreadHeader::lane`] set) and the column's code once per lane, so every later stage sees
//! threads as it always did. A warp has 32 lanes, fewer where the test's launch gives the CTA
//! fewer threads (`block = {40}`: warp 1 has lanes 0-7). `P1.7:r0` names lane 7's register in
//! the init block, `locations` and the condition; `P1:r0 = 5` in the init block sets it in every
//! lane; a condition must name a lane.

use super::ast::{CodeForm, CondValue, InitItem, LitmusTest, Prop, TensorMapValue, ThreadHeader};
use crate::diag::{Diagnostic, Span, Spanned};

/// The lanes of a warp.
pub const WARP_SIZE: usize = 32;

/// The test with each warp column written out as its lanes; an error for a misplaced `warp`, a
/// lane the warp does not have, or a register named without its lane where one is needed.
pub fn expand(mut test: LitmusTest) -> Result<LitmusTest, Diagnostic> {
    let block = launch_threads(&test);
    // For each column: the lanes it stands for (None: it is one thread).
    let mut lanes_of: Vec<Option<usize>> = Vec::new();
    for h in &test.threads {
        let warp = h.placement.iter().find(|(l, _)| l.node == "warp");
        let Some((level, w)) = warp else {
            lanes_of.push(None);
            continue;
        };
        if let Some((tid, _)) = h.placement.iter().find(|(l, _)| l.node == "tid") {
            return Err(Diagnostic::error(tid.span, format!("P{} is a warp column: `tid` and `warp` both place it", h.id.node))
                .with_note(format!("the lanes of warp W are threads 32W..32W+31 of the CTA; write `warp {}` alone", w.node)));
        }
        if h.placement.iter().filter(|(l, _)| l.node == "warp").count() > 1 {
            return Err(Diagnostic::error(level.span, format!("P{} names `warp` twice", h.id.node)));
        }
        let first = w.node.saturating_mul(WARP_SIZE as i64);
        let lanes = match block {
            Some(threads) if first >= threads => {
                return Err(Diagnostic::error(
                    w.span,
                    format!("warp {} starts at thread {first}, past the {threads} threads of the test's launch block", w.node),
                ));
            }
            Some(threads) => ((threads - first) as usize).min(WARP_SIZE),
            None => WARP_SIZE,
        };
        if first + lanes as i64 > 1024 {
            return Err(Diagnostic::error(w.span, format!("warp {} is past the 1024 threads a CTA can have", w.node)));
        }
        lanes_of.push(Some(lanes));
    }
    check_references(&test, &lanes_of)?;
    if lanes_of.iter().all(Option::is_none) {
        return Ok(test);
    }

    let mut threads = Vec::new();
    let mut code = Vec::new();
    for (i, h) in test.threads.iter().enumerate() {
        let column = if test.form == CodeForm::Kernel { Vec::new() } else { test.code.get(i).cloned().unwrap_or_default() };
        match lanes_of[i] {
            None => {
                threads.push(h.clone());
                code.push(column);
            }
            Some(lanes) => {
                let (level, w) = h.placement.iter().find(|(l, _)| l.node == "warp").cloned().expect("a warp column names its warp");
                for lane in 0..lanes {
                    let mut placement: Vec<_> = h.placement.iter().filter(|(l, _)| l.node != "warp").cloned().collect();
                    let tid = w.node * WARP_SIZE as i64 + lane as i64;
                    placement.push((Spanned::new("tid".to_string(), level.span), Spanned::new(tid, w.span)));
                    threads.push(ThreadHeader { id: h.id.clone(), placement, span: h.span, lane: Some(lane) });
                    code.push(column.clone());
                }
            }
        }
    }
    if test.form != CodeForm::Kernel {
        test.code = code;
    }
    test.threads = threads;
    // An init item of a warp column without a lane sets the register of every lane.
    let warp_lanes = |id: usize| test.threads.iter().filter(|h| h.id.node == id && h.lane.is_some()).count();
    let mut init = Vec::new();
    for item in &test.init {
        match &item.node {
            InitItem::Register { thread, lane: None, reg, value } if warp_lanes(thread.node) > 0 => {
                for l in 0..warp_lanes(thread.node) {
                    let node = InitItem::Register { thread: thread.clone(), lane: Some(l), reg: reg.clone(), value: value.clone() };
                    init.push(Spanned::new(node, item.span));
                }
            }
            InitItem::RegisterAddress { thread, lane: None, reg, location } if warp_lanes(thread.node) > 0 => {
                for l in 0..warp_lanes(thread.node) {
                    let node =
                        InitItem::RegisterAddress { thread: thread.clone(), lane: Some(l), reg: reg.clone(), location: location.clone() };
                    init.push(Spanned::new(node, item.span));
                }
            }
            _ => init.push(item.clone()),
        }
    }
    test.init = init;
    Ok(test)
}

/// The threads per CTA of the test's launch item, read leniently (the lowering checks it).
fn launch_threads(test: &LitmusTest) -> Option<i64> {
    test.init.iter().find_map(|item| match &item.node {
        InitItem::Launch(d) => d.fields.iter().find(|(k, _)| k.node == "block").and_then(|(_, v)| match &v.node {
            TensorMapValue::Int(n) => Some(*n),
            TensorMapValue::List(l) if !l.is_empty() && l.len() <= 3 => l.iter().try_fold(1i64, |a, &b| a.checked_mul(b)),
            _ => None,
        }),
        _ => None,
    })
}

/// Every `P1.7:` names a lane of a warp column that has it, and every register of a warp
/// column that a condition or `locations` names says its lane.
fn check_references(test: &LitmusTest, lanes_of: &[Option<usize>]) -> Result<(), Diagnostic> {
    let column = |id: usize| test.threads.iter().position(|h| h.id.node == id);
    let check = |id: usize, lane: Option<usize>, span: Span, whole_warp: bool| -> Result<(), Diagnostic> {
        let Some(c) = column(id) else { return Ok(()) };
        match (lanes_of[c], lane) {
            (None, Some(l)) => Err(Diagnostic::error(span, format!("P{id} is one thread, not a warp column: `P{id}.{l}` names no lane"))
                .with_note(format!("place P{id} with `warp W` for a column of 32 lanes, or write `P{id}:`"))),
            (Some(n), Some(l)) if l >= n => {
                Err(Diagnostic::error(span, format!("warp column P{id} has {n} lanes (the test's launch block), so it has no lane {l}")))
            }
            (Some(_), None) if !whole_warp => Err(Diagnostic::error(span, format!("P{id} is a warp column: name one of its lanes"))
                .with_note(format!("e.g. `P{id}.0:` for lane 0 (each lane has its own registers)"))),
            _ => Ok(()),
        }
    };
    for item in &test.init {
        match &item.node {
            InitItem::Register { thread, lane, .. } | InitItem::RegisterAddress { thread, lane, .. } => {
                check(thread.node, *lane, thread.span, true)?
            }
            _ => {}
        }
    }
    for v in &test.locations {
        if let CondValue::Register { thread, lane, .. } = &v.node {
            check(*thread, *lane, v.span, false)?;
        }
    }
    fn walk(p: &Spanned<Prop>, f: &mut dyn FnMut(&Spanned<CondValue>) -> Result<(), Diagnostic>) -> Result<(), Diagnostic> {
        match &p.node {
            Prop::True | Prop::False => Ok(()),
            Prop::Not(a) => walk(a, f),
            Prop::And(a, b) | Prop::Or(a, b) => walk(a, f).and_then(|()| walk(b, f)),
            Prop::Cmp(a, _, b) => f(a).and_then(|()| f(b)),
        }
    }
    let mut value = |v: &Spanned<CondValue>| match &v.node {
        CondValue::Register { thread, lane, .. } => check(*thread, *lane, v.span, false),
        _ => Ok(()),
    };
    if let Some(c) = &test.condition {
        walk(&c.prop, &mut value)?;
    }
    if let Some(f) = &test.filter {
        walk(f, &mut value)?;
    }
    Ok(())
}
