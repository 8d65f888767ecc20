//! The final condition, the filter and the `locations` of a test, resolved to observables,
//! and the condition's text as herd7 prints it.

use super::declarations::canonical_location;
use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::{self, CondValue};
use crate::program::*;
use std::collections::HashMap;

pub(super) struct CondResolver<'p> {
    pub(super) reg_types: &'p [HashMap<Reg, Option<Ty>>],
    /// The instances of each PTX `.shared`/`.local` declaration (`s` → `s@cta0`, `s@cta1`).
    pub(super) instances: &'p HashMap<String, Vec<(String, String)>>,
    pub(super) program: &'p Program,
    pub(super) thread_index: &'p HashMap<(usize, Option<usize>), usize>,
    pub(super) source: &'p SourceFile,
}

impl CondResolver<'_> {
    pub(super) fn prop(&self, p: &Spanned<ast::Prop>) -> Result<Prop, Diagnostic> {
        Ok(match &p.node {
            ast::Prop::True => Prop::True,
            ast::Prop::False => Prop::False,
            ast::Prop::Not(q) => Prop::Not(Box::new(self.prop(q)?)),
            ast::Prop::And(a, b) => Prop::And(Box::new(self.prop(a)?), Box::new(self.prop(b)?)),
            ast::Prop::Or(a, b) => Prop::Or(Box::new(self.prop(a)?), Box::new(self.prop(b)?)),
            ast::Prop::Cmp(a, op, b) => {
                let (a, b) = (self.value(a)?, self.value(b)?);
                // A constant compared with a typed value is read at that value's type.
                let typed = |c: &CondTerm, other: &CondTerm| match (c, self.type_of(other)) {
                    (CondTerm::Const(v), Some(t)) => CondTerm::Const(t.norm(*v)),
                    (c, _) => c.clone(),
                };
                Prop::Cmp(typed(&a, &b), *op, typed(&b, &a))
            }
        })
    }

    /// The type a condition compares an observable at.
    fn type_of(&self, t: &CondTerm) -> Option<Ty> {
        match t {
            CondTerm::Const(_) => None,
            CondTerm::Obs(Observable::Location(p)) => self.program.physical[*p].ty,
            CondTerm::Obs(Observable::Register(t, r)) => self.reg_types[*t].get(r).copied().flatten(),
        }
    }

    pub(super) fn value(&self, v: &Spanned<CondValue>) -> Result<CondTerm, Diagnostic> {
        let _ = self.source;
        match &v.node {
            CondValue::Const(c) => Ok(CondTerm::Const(*c)),
            CondValue::Location(name) => {
                let find = |n: &str| self.program.location_by_name(n);
                let Some(loc) = find(name).or_else(|| canonical_location(self.instances, name).and_then(|n| find(&n))) else {
                    let base = name.split(['@', '+']).next().unwrap_or(name);
                    if let Some(instances) = self.instances.get(base) {
                        let names: Vec<String> = instances.iter().map(|(_, n)| format!("`{n}`")).collect();
                        return Err(Diagnostic::error(
                            v.span,
                            format!("`{name}` does not name one instance of `{base}`, which has one per CTA or per thread"),
                        )
                        .with_note(format!("its instances: {}", names.join(", "))));
                    }
                    return Err(Diagnostic::error(v.span, format!("unknown location `{name}` in the condition"))
                        .with_note("declare it in the init block"));
                };
                Ok(CondTerm::Obs(Observable::Location(self.program.locations[loc].physical)))
            }
            CondValue::Register { thread, lane, reg } => {
                let name = ast::thread_name(*thread, *lane);
                let Some(&t) = self.thread_index.get(&(*thread, *lane)) else {
                    return Err(Diagnostic::error(v.span, format!("unknown thread {name} in the condition")));
                };
                let th = &self.program.threads[t];
                let Some(r) = th.registers.iter().position(|n| n == reg) else {
                    return Err(Diagnostic::error(v.span, format!("unknown register `{reg}` of thread {name} in the condition"))
                        .with_note("the register is neither initialised nor written by that thread"));
                };
                Ok(CondTerm::Obs(Observable::Register(t, r)))
            }
        }
    }
}

/// Print a proposition the way herd7 prints conditions: `0:r0=1 /\ 1:r0=0`. A location is
/// printed by the name reports give it (`s@cta0` of a declaration with one instance is `s`).
pub fn format_prop(p: &ast::Prop, instances: &HashMap<String, Vec<(String, String)>>) -> String {
    let val = |v: &CondValue| -> String {
        match v {
            CondValue::Register { thread, lane: None, reg } => format!("{thread}:{reg}"),
            CondValue::Register { thread, lane: Some(l), reg } => format!("{thread}.{l}:{reg}"),
            CondValue::Location(l) => canonical_location(instances, l).unwrap_or_else(|| l.clone()),
            CondValue::Const(c) => c.to_string(),
        }
    };
    go(p, true, &val)
}

/// `p` printed, in parentheses unless `top`.
fn go(p: &ast::Prop, top: bool, val: &dyn Fn(&CondValue) -> String) -> String {
    let s = match p {
        ast::Prop::True => return "true".into(),
        ast::Prop::False => return "false".into(),
        ast::Prop::Not(q) => return format!("~{}", go(&q.node, false, val)),
        // Chains of one connective print flat, as herd7 does: `a /\\ b /\\ c`.
        ast::Prop::And(a, b) => {
            let side = |p: &ast::Prop| go(p, matches!(p, ast::Prop::And(..)), val);
            format!("{} /\\ {}", side(&a.node), side(&b.node))
        }
        ast::Prop::Or(a, b) => {
            let side = |p: &ast::Prop| go(p, matches!(p, ast::Prop::Or(..)), val);
            format!("{} \\/ {}", side(&a.node), side(&b.node))
        }
        ast::Prop::Cmp(a, op, b) => return format!("{}{}{}", val(&a.node), op.symbol(), val(&b.node)),
    };
    if top {
        s
    } else {
        format!("({s})")
    }
}
