//! Slicing a kernel body to what decides memory and synchronization.
//!
//! Register-only instructions the model does not interpret (floating-point math, `mma` on
//! registers, bit tricks, warp shuffles and votes) are abstracted: they are blanked out of the
//! program text (so every other line keeps its number) and their destination registers become
//! unknown. So do register-only instructions that read an unknown register. An instruction that
//! the model must know (a memory access, a branch, a barrier, a fence, an async copy, or any
//! instruction under a guard that is unknown) and that reads an unknown register is rejected:
//! ptxmm never approximates a value that reaches an address, a branch or memory.

use crate::diag::{Diagnostic, SourceFile, Span};
use crate::litmus::ast::{Instruction, Operand, Statement};
use std::collections::HashMap;

/// An instruction taken out of the program, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Abstracted {
    pub line: usize,
    pub instruction: String,
    pub why: String,
}

/// Instructions that only compute registers: they may be abstracted.
const REGISTER_ONLY: &[&str] = &[
    "add",
    "sub",
    "mul",
    "mad",
    "fma",
    "div",
    "rem",
    "abs",
    "neg",
    "min",
    "max",
    "and",
    "or",
    "xor",
    "not",
    "cnot",
    "shl",
    "shr",
    "shf",
    "setp",
    "set",
    "selp",
    "slct",
    "mov",
    "cvt",
    "cvta",
    "rcp",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "lg2",
    "ex2",
    "tanh",
    "copysign",
    "testp",
    "bfe",
    "bfi",
    "bfind",
    "brev",
    "clz",
    "popc",
    "prmt",
    "lop3",
    "dp4a",
    "dp2a",
    "bmsk",
    "szext",
    "fns",
    "mul24",
    "mad24",
    "sad",
    "mma",
    "shfl",
    "vote",
    "match",
    "redux",
    "activemask",
    "movmatrix",
];

/// Opcodes whose first operand is not a destination (it is read, or a label or an address).
const NO_DESTINATION: &[&str] = &[
    "st",
    "red",
    "bar",
    "barrier",
    "bra",
    "brx",
    "fence",
    "membar",
    "ret",
    "exit",
    "nanosleep",
    "trap",
    "prefetch",
    "prefetchu",
    "stmatrix",
    "sust",
    "sured",
    "call",
];

const FLOAT_TYPES: &[&str] = &["f16", "f16x2", "bf16", "bf16x2", "f32", "f64", "tf32", "e4m3", "e5m2", "e4m3x2", "e5m2x2", "f32x2"];

/// Why a register-only instruction is not interpreted by the model, for the report.
fn kind(i: &Instruction) -> &'static str {
    let op = i.opcode[0].node.as_str();
    match op {
        "mma" => "a matrix multiply-accumulate on registers",
        "shfl" | "vote" | "match" | "redux" | "activemask" => "a warp-level exchange of register values",
        _ if i.opcode.iter().any(|p| FLOAT_TYPES.contains(&p.node.as_str())) => "floating-point arithmetic",
        _ => "register arithmetic the model does not interpret",
    }
}

/// The registers an instruction reads (its guard, its source operands, every register inside an
/// address) with their spans.
fn reads(i: &Instruction) -> Vec<(String, Span)> {
    let mut out = Vec::new();
    if let Some((g, _)) = &i.guard {
        out.push((g.node.clone(), g.span));
    }
    let skip_first = !NO_DESTINATION.contains(&i.opcode[0].node.as_str());
    for (k, o) in i.operands.iter().enumerate() {
        let first_is_written = k == 0 && skip_first;
        collect(&o.node, o.span, first_is_written, &mut out);
    }
    out
}

fn collect(o: &Operand, span: Span, written: bool, out: &mut Vec<(String, Span)>) {
    match o {
        Operand::Name(n) | Operand::PercentName(n) if !written => out.push((n.clone(), span)),
        Operand::Address(inner, _) => collect(&inner.node, inner.span, false, out),
        Operand::Vector(items) => items.iter().for_each(|x| collect(&x.node, x.span, written, out)),
        Operand::TensorAddress(inner, coords) => {
            collect(&inner.node, inner.span, false, out);
            coords.iter().for_each(|x| collect(&x.node, x.span, false, out));
        }
        _ => {}
    }
}

/// The registers an instruction writes (its first operand, scalar or vector).
fn writes(i: &Instruction) -> Vec<String> {
    if NO_DESTINATION.contains(&i.opcode[0].node.as_str()) {
        return Vec::new();
    }
    let mut out = Vec::new();
    match i.operands.first().map(|o| &o.node) {
        Some(Operand::Name(n) | Operand::PercentName(n)) => out.push(n.clone()),
        Some(Operand::Vector(items)) => {
            for x in items {
                if let Operand::Name(n) | Operand::PercentName(n) = &x.node {
                    out.push(n.clone());
                }
            }
        }
        _ => {}
    }
    out
}

/// The statement span of the instruction at `offset`, with its `;`.
fn blank(text: &mut String, span: Span) {
    let mut end = span.end;
    let rest = &text[end..];
    let trimmed = rest.trim_start_matches([' ', '\t']);
    if trimmed.starts_with(';') {
        end += rest.len() - trimmed.len() + 1;
    }
    let blanked: String = text[span.start..end].chars().map(|c| if c == '\n' { '\n' } else { ' ' }).collect();
    text.replace_range(span.start..end, &blanked);
}

/// Slice `text` (a litmus test of one kernel block, named `name`): abstract what the model does
/// not interpret and nothing observes, reject what it does not interpret and something observes.
/// Returns the instructions abstracted, in line order; `text` is the program that remains.
pub fn slice(name: &str, text: &mut String, limits: &crate::config::InputLimits) -> Result<Vec<Abstracted>, Diagnostic> {
    // Unknown registers, each with the line of the instruction that made it unknown.
    let mut unknown: HashMap<String, usize> = HashMap::new();
    let mut abstracted = Vec::new();
    loop {
        let file = SourceFile::new(name, text.clone());
        let ast = crate::litmus::parse(&file)?;
        let code = ast.column(0);
        let mut changed = false;
        for s in code {
            let Statement::Instr(i) = &s.node else { continue };
            let op = i.opcode[0].node.as_str();
            let Some((reg, span)) = reads(i).into_iter().find(|(r, _)| unknown.contains_key(r)) else { continue };
            let line = file.line_col(s.span.start).0;
            if !REGISTER_ONLY.contains(&op) {
                return Err(Diagnostic::error(span, format!("`{reg}` is unknown here: its value comes from an instruction ptxmm abstracted (line {})", unknown[&reg]))
                    .with_note(format!("`{}` needs it (a memory access, a branch or a synchronization), and ptxmm does not approximate such values", i.mnemonic()))
                    .with_note("see the instructions `ptxmm kernel` lists as abstracted; the model interprets integer arithmetic, not floating-point math, mma or warp exchanges"));
            }
            for w in writes(i) {
                unknown.entry(w).or_insert(line);
            }
            abstracted.push(Abstracted {
                line,
                instruction: one_line(file.slice(s.span)),
                why: format!("reads `{reg}`, which is abstracted (line {})", unknown[&reg]),
            });
            blank(text, s.span);
            changed = true;
        }
        if changed {
            continue;
        }
        // What the model rejects, among register-only instructions, is abstracted.
        let err = match crate::program::load::parse_program_with(file.clone(), limits) {
            Ok(_) => break,
            Err(crate::LoadError::Syntax(d)) => d.diagnostic,
            Err(e) => return Err(Diagnostic::error(Span::default(), e.to_string())),
        };
        let at = err.span.start;
        let culprit = code.iter().find(|s| s.span.start <= at && at < s.span.end.max(s.span.start + 1));
        let Some((s, i)) = culprit.and_then(|s| if let Statement::Instr(i) = &s.node { Some((s, i)) } else { None }) else {
            return Err(err);
        };
        let op = i.opcode[0].node.as_str();
        if !REGISTER_ONLY.contains(&op) {
            return Err(err);
        }
        let line = file.line_col(s.span.start).0;
        for w in writes(i) {
            unknown.entry(w).or_insert(line);
        }
        abstracted.push(Abstracted { line, instruction: one_line(file.slice(s.span)), why: format!("{}: {}", kind(i), err.message) });
        blank(text, s.span);
    }
    abstracted.sort_by_key(|a| a.line);
    Ok(abstracted)
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
