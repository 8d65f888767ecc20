//! CUDA C++ harness generation: each test thread's column becomes one inline-PTX block, run by
//! lane 0 of its own warp; the host program launches many instances per launch and many
//! launches, and prints the histogram of final states in the machine-readable form that
//! `hw::report` parses (`docs/hardware.md`).

use super::{reject, HwTest, Incantations, Rejection};
use crate::config::Config;
use crate::diag::Span;
use crate::litmus::ast::{Instruction, Operand, Statement};
use crate::program::{Observable, Program, Space, VariableKind};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Padding between two global variables of an instance and between instances (bytes): two
/// variables never share a 128-byte line, as in the GPU-litmus literature's default layout.
const GLOBAL_PAD: i64 = 128;

/// The named barrier the harness synchronises a CTA's test warps with after the test.
const HARNESS_BARRIER: i64 = 15;

/// Opcode heads that have no hardware counterpart here, with the reason.
const UNSUPPORTED_HEADS: &[(&str, &str)] = &[
    ("sust", "a surface store needs a CUDA array, which no generic address can alias"),
    ("suld", "a surface load needs a CUDA array, which no generic address can alias"),
    ("tld", "texture proxy accesses aliasing generic memory are not generated"),
    ("cold", "constant-space aliases of writable memory do not exist on the device"),
    ("wgmma", "wgmma needs a whole warpgroup and matrix descriptors, while the harness runs one thread per warp"),
    ("elect", "elect.sync needs the whole warp, while the harness runs lane 0 only"),
];

/// Which address form an address operand takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum AddrForm {
    /// 64-bit generic address (`.l` operand).
    Generic,
    /// 64-bit global address.
    Global,
    /// 32-bit `.shared::cta` window address.
    SharedCta,
    /// 32-bit `.shared::cluster` window address (`mapa` for another CTA).
    SharedCluster,
}

/// The width a test register is declared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RegKind {
    Pred,
    B32,
    B64,
}

/// Geometry of one test on the device.
struct Layout {
    /// Test CTA ids, sorted; index = dense CTA index.
    ctas: Vec<i64>,
    /// Clusters: for each, the dense CTA indices by rank.
    clusters: Vec<Vec<usize>>,
    cluster_dim: usize,
    /// Per dense CTA: thread indices, one per warp (empty: a keeper warp only).
    warps: Vec<Vec<usize>>,
    /// Per global variable: byte offset in an instance's global block.
    global_off: BTreeMap<usize, i64>,
    global_stride: i64,
    smem_bytes: i64,
}

impl Layout {
    fn dense_cta(&self, cta: i64) -> usize {
        self.ctas.binary_search(&cta).unwrap_or(0)
    }
    fn rank_of(&self, dense: usize) -> usize {
        self.clusters.iter().find_map(|c| c.iter().position(|&d| d == dense)).unwrap_or(0)
    }
    fn max_warps(&self) -> usize {
        self.warps.iter().map(|w| w.len().max(1)).max().unwrap_or(1)
    }
}

fn layout(test: &HwTest) -> Result<Layout, Rejection> {
    let p = test.program;
    let gpus: BTreeSet<i64> = p.threads.iter().map(|t| t.placement.gpu).collect();
    if gpus.len() > 1 {
        let span = p.threads.iter().find(|t| t.placement.gpu != p.threads[0].placement.gpu).map(|t| t.span).unwrap_or_default();
        return Err(reject(
            p,
            span,
            format!("the test places threads on {} GPUs; the harness runs on one GPU (multi-GPU placement is not generated)", gpus.len()),
        ));
    }
    let mut ctas: BTreeSet<i64> = p.threads.iter().map(|t| t.placement.cta).collect();
    for v in &p.variables {
        if let Space::Shared { cta } = v.space {
            ctas.insert(cta);
        }
    }
    let ctas: Vec<i64> = ctas.into_iter().collect();
    let mut by_cluster: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for (d, &c) in ctas.iter().enumerate() {
        by_cluster.entry(p.cluster_of_cta(c)).or_default().push(d);
    }
    let clusters: Vec<Vec<usize>> = by_cluster.into_values().collect();
    let cluster_dim = clusters.iter().map(Vec::len).max().unwrap_or(1);
    if cluster_dim > 8 {
        return Err(reject(p, p.threads[0].span, format!("a cluster of {cluster_dim} CTAs; the portable maximum is 8")));
    }
    let mut warps = vec![Vec::new(); ctas.len()];
    for (i, t) in p.threads.iter().enumerate() {
        warps[ctas.binary_search(&t.placement.cta).unwrap_or(0)].push(i);
    }
    if let Some(w) = warps.iter().find(|w| w.len() > 32) {
        return Err(reject(p, p.threads[w[0]].span, "more than 32 threads in one CTA (one warp per thread)"));
    }
    let mut global_off = BTreeMap::new();
    let mut end = 0i64;
    let mut smem_bytes = 16i64;
    for (i, v) in p.variables.iter().enumerate() {
        match v.space {
            Space::Global => {
                let align = v.align.max(GLOBAL_PAD);
                let start = (end + align - 1) / align * align;
                global_off.insert(i, start);
                // A tensor map's word holds the whole encoded descriptor on the device.
                let size = if super::tensor::is_map_variable(p, i) { super::tensor::TENSOR_MAP_BYTES } else { v.size };
                end = start + size;
            }
            Space::Shared { .. } => {
                let w = p.window_offset(i).unwrap_or(0);
                smem_bytes = smem_bytes.max(w + v.size);
            }
        }
    }
    let global_stride = ((end + GLOBAL_PAD - 1) / GLOBAL_PAD * GLOBAL_PAD).max(GLOBAL_PAD);
    Ok(Layout { ctas, clusters, cluster_dim, warps, global_off, global_stride, smem_bytes: (smem_bytes + 15) / 16 * 16 })
}

/// An instruction's opcode parts that name state spaces, in order.
fn space_tokens(parts: &[String]) -> Vec<AddrForm> {
    parts
        .iter()
        .filter_map(|p| match p.as_str() {
            "global" => Some(AddrForm::Global),
            "shared" | "shared::cta" => Some(AddrForm::SharedCta),
            "shared::cluster" => Some(AddrForm::SharedCluster),
            _ => None,
        })
        .collect()
}

fn is_type_part(p: &str) -> bool {
    let (head, bits) = p.split_at(1.min(p.len()));
    matches!(head, "b" | "u" | "s" | "f") && matches!(bits, "8" | "16" | "32" | "64") || p == "bf16" || p == "f16x2"
}

fn has_64bit_type(parts: &[String]) -> bool {
    parts.iter().any(|p| matches!(p.as_str(), "b64" | "u64" | "s64" | "f64"))
}

/// The per-thread emission state.
struct ThreadGen<'a> {
    test: &'a HwTest<'a>,
    layout: &'a Layout,
    thread: usize,
    dense_cta: usize,
    /// `90` for sm_90a: features of later architectures are rejected.
    arch_major: u32,
    regs: BTreeMap<String, RegKind>,
    /// Address operands of the asm block: (variable, form), in operand order after the outputs.
    addr_operands: Vec<(usize, AddrForm)>,
    first_input: usize,
}

impl ThreadGen<'_> {
    fn program(&self) -> &Program {
        self.test.program
    }

    fn variable(&self, name: &str) -> Option<usize> {
        self.program().variables.iter().position(|v| v.name == name)
    }

    /// A register's PTX name: without `%` (it would need escaping in an asm template), other
    /// characters PTX identifiers cannot hold (`cache-policy`) as `_`.
    fn reg_name(name: &str) -> String {
        name.trim_start_matches('%').chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '$' { c } else { '_' }).collect()
    }

    /// The asm operand holding a variable's address in a form; one operand per distinct
    /// address expression.
    fn operand_index(&mut self, var: usize, form: AddrForm) -> usize {
        let expr = address_expr(self.test, self.layout, self.dense_cta, var, form);
        let pos = match self.addr_operands.iter().position(|&(v, f)| address_expr(self.test, self.layout, self.dense_cta, v, f) == expr) {
            Some(i) => i,
            None => {
                self.addr_operands.push((var, form));
                self.addr_operands.len() - 1
            }
        };
        self.first_input + pos
    }

    /// Shared memory is addressable from the CTAs of its own cluster only.
    fn reachable(&self, var: usize, span: Span) -> Result<(), Rejection> {
        let p = self.program();
        if let Space::Shared { cta } = p.variables[var].space {
            let own = self.layout.ctas[self.dense_cta];
            if p.cluster_of_cta(cta) != p.cluster_of_cta(own) {
                return Err(reject(
                    p,
                    span,
                    format!(
                        "`{}` is shared memory of CTA {cta}, outside the cluster of CTA {own}: no address reaches it",
                        p.variables[var].name
                    ),
                ));
            }
        }
        Ok(())
    }

    fn address(&mut self, inner: &Operand, offset: i64, form: AddrForm, span: Span) -> Result<String, Rejection> {
        let base = match inner {
            Operand::Name(n) | Operand::PercentName(n) if self.regs.contains_key(&Self::reg_name(n)) => Self::reg_name(n),
            Operand::Name(n) => match self.variable(n) {
                Some(v) => {
                    self.reachable(v, span)?;
                    format!("%{}", self.operand_index(v, form))
                }
                None => return Err(reject(self.program(), span, format!("`{n}` is neither a register nor a variable"))),
            },
            other => return Err(reject(self.program(), span, format!("address operand {other:?} is not generated"))),
        };
        Ok(match offset {
            0 => format!("[{base}]"),
            o => format!("[{base}+{o}]"),
        })
    }

    fn operand(&mut self, op: &Operand, form: &mut impl FnMut() -> AddrForm, span: Span) -> Result<String, Rejection> {
        Ok(match op {
            Operand::Name(n) | Operand::PercentName(n) => {
                let r = Self::reg_name(n);
                if self.regs.contains_key(&r) {
                    r
                } else if let Some(f) = n.contains('.').then(|| n.parse::<f32>().ok()).flatten() {
                    // A decimal float literal (`createpolicy.fractional … 0.25`): PTX spells
                    // f32 immediates as bit patterns.
                    format!("0f{:08X}", f.to_bits())
                } else if self.variable(n).is_some() {
                    // The Dat3M dialect names a location without brackets.
                    let f = form();
                    self.address(op, 0, f, span)?
                } else {
                    n.clone()
                }
            }
            Operand::Int(i) => i.to_string(),
            Operand::Address(inner, off) => {
                let f = form();
                self.address(&inner.node, *off, f, inner.span)?
            }
            Operand::Sink => "_".into(),
            Operand::Vector(items) => {
                let mut out = Vec::new();
                for it in items {
                    out.push(self.operand(&it.node, form, it.span)?);
                }
                format!("{{{}}}", out.join(", "))
            }
            Operand::AddressOf(n) => match self.variable(n) {
                Some(v) => {
                    self.reachable(v, span)?;
                    format!("%{}", self.operand_index(v, AddrForm::Generic))
                }
                None => return Err(reject(self.program(), span, format!("`&{n}`: no such variable"))),
            },
            // `[tmap, {c0, ...}]`: the generic address of this instance's encoded map.
            Operand::TensorAddress(base, coords) => {
                let Operand::Name(n) = &base.node else {
                    return Err(reject(self.program(), base.span, "a tensor operand's map must be a tensor map's name"));
                };
                let Some(v) = self.variable(n).filter(|&v| self.program().is_tensor_map(v)) else {
                    return Err(reject(self.program(), base.span, format!("`{n}` is not a tensor map")));
                };
                // The map's operand consumes the opcode's state space of its position (the
                // mbarrier after it follows the destination's).
                let _ = form();
                let k = self.operand_index(v, AddrForm::Generic);
                let mut cs = Vec::new();
                for c in coords {
                    cs.push(self.operand(&c.node, form, c.span)?);
                }
                format!("[%{k}, {{{}}}]", cs.join(", "))
            }
        })
    }

    /// The PTX lines of one instruction, and whether it branches backwards to a label.
    fn instruction(&mut self, ins: &Instruction, span: Span) -> Result<Vec<String>, Rejection> {
        let mut parts: Vec<String> = ins.opcode.iter().map(|p| p.node.clone()).collect();
        let head = parts[0].clone();
        let mnemonic = ins.mnemonic();
        if let Some((_, why)) = UNSUPPORTED_HEADS.iter().find(|(h, _)| *h == head) {
            return Err(reject(self.program(), span, format!("instruction `{mnemonic}` is not generated: {why}")));
        }
        if head == "fence" && parts.get(1).map(String::as_str) == Some("proxy") {
            if let Some(kind) = parts.get(2).filter(|k| matches!(k.as_str(), "surface" | "texture" | "constant")) {
                return Err(reject(
                    self.program(),
                    span,
                    format!("instruction `{mnemonic}` is not generated: `.{kind}` is not a PTX proxy kind (Dat3M dialect)"),
                ));
            }
        }
        let guard = match &ins.guard {
            Some((g, neg)) => format!("@{}{} ", if *neg { "!" } else { "" }, Self::reg_name(&g.node)),
            None => String::new(),
        };
        // Dat3M's branch pseudo-instructions.
        if matches!(head.as_str(), "bne" | "beq" | "goto") {
            let ops: Vec<String> = {
                let mut out = Vec::new();
                for o in &ins.operands {
                    out.push(self.operand(&o.node, &mut || AddrForm::Generic, o.span)?);
                }
                out
            };
            if head == "goto" {
                return Ok(vec![format!("{guard}bra {};", ops.join(", "))]);
            }
            let [a, b, label] = ops.as_slice() else {
                return Err(reject(self.program(), span, format!("`{head}` takes three operands")));
            };
            let ty = if self.is_64(&ins.operands[0].node) { "s64" } else { "s32" };
            let cmp = if head == "bne" { "ne" } else { "eq" };
            return Ok(vec![format!("setp.{cmp}.{ty} hw_p, {a}, {b};"), format!("@hw_p bra {label};")]);
        }
        // An untyped operation on a 64-bit destination (an address register) takes its 32-bit
        // register sources zero-extended, as the model's unbounded integers do.
        let mut widen_sources = false;
        if parts.len() == 1 && matches!(head.as_str(), "add" | "sub" | "mov" | "and" | "or" | "xor" | "mul") {
            let wide = ins.operands.first().is_some_and(|o| self.is_64(&o.node));
            widen_sources = wide;
            parts.push(match (head.as_str(), wide) {
                ("add" | "sub" | "mul", false) => "s32".into(),
                ("add" | "sub" | "mul", true) => "s64".into(),
                (_, false) => "b32".into(),
                (_, true) => "b64".into(),
            });
            if head == "mul" {
                parts.insert(1, "lo".into());
            }
        }
        let mut operands: Vec<(Operand, Span)> = ins.operands.iter().map(|o| (o.node.clone(), o.span)).collect();
        // Untyped memory instructions of the Dat3M dialect (unbounded integers in the model;
        // 32-bit words on the device).
        if matches!(head.as_str(), "ld" | "st" | "atom" | "red") && !parts.iter().any(|p| is_type_part(p)) {
            let op = parts.iter().find(|p| crate::program::RmwOp::from_name(p).is_some() || p.as_str() == "sub").cloned();
            let wide = ins.operands.first().is_some_and(|o| self.is_64(&o.node));
            let ty = match op.as_deref() {
                Some("add" | "inc" | "dec" | "sub") => "u",
                Some("min" | "max") => "s",
                _ => "b",
            };
            parts.push(format!("{ty}{}", if wide { 64 } else { 32 }));
        }
        // `red.acq_rel` / `red.acquire` (Dat3M) do not exist in PTX (`red` is .relaxed or
        // .release): the same RMW as an `atom` whose result is discarded.
        if head == "red" && parts.iter().any(|p| p == "acq_rel" || p == "acquire") {
            parts[0] = "atom".into();
            let sink = if has_64bit_type(&parts) { "hw_sink64" } else { "hw_sink32" };
            operands.insert(0, (Operand::Name(sink.into()), span));
        }
        // `atom/red .sub v` (Dat3M) is `.add -v`.
        if matches!(head.as_str(), "atom" | "red") {
            if let Some(i) = parts.iter().position(|p| p == "sub") {
                parts[i] = "add".into();
                match operands.last_mut() {
                    Some((Operand::Int(v), _)) => *v = v.wrapping_neg(),
                    _ => {
                        return Err(reject(
                            self.program(),
                            span,
                            format!("`{mnemonic}` with a register operand is not generated (no PTX atom.sub)"),
                        ))
                    }
                }
            }
        }
        if matches!(head.as_str(), "bar" | "barrier") && !parts.iter().any(|p| p == "cluster" || p == "warp") {
            return self.barrier(&guard, span, &mnemonic);
        }
        if parts.iter().any(|p| p == "cp_mask") && self.arch_major < 100 {
            return Err(reject(
                self.program(),
                span,
                format!(
                    "instruction `{mnemonic}`: `.cp_mask` needs sm_100 or later (ptxas); the harness is generated for a lower architecture"
                ),
            ));
        }
        if parts.iter().any(|p| p == "fractional") {
            if let Some((Operand::Int(i), _)) = operands.last().filter(|_| operands.len() == 2) {
                let f = format!("{i}.0");
                if let Some(last) = operands.last_mut() {
                    last.0 = Operand::Name(f);
                }
            }
        }
        let spaces = space_tokens(&parts);
        let mut k = 0usize;
        let mut next_form = || {
            let f = spaces.get(k).or(spaces.first()).copied().unwrap_or(AddrForm::Generic);
            k += 1;
            f
        };
        // Instructions whose address operand is a value (`mapa d, x+8, r`), not `[...]`.
        let value_form = matches!(head.as_str(), "mapa" | "cvta" | "isspacep" | "mov");
        let mut lines = Vec::new();
        let mut texts = Vec::new();
        for (op, sp) in &operands {
            let var_at = match op {
                Operand::Name(n) if !self.regs.contains_key(&Self::reg_name(n)) => self.variable(n).map(|v| (v, 0)),
                Operand::Address(inner, off) => match &inner.node {
                    Operand::Name(n) if !self.regs.contains_key(&Self::reg_name(n)) => self.variable(n).map(|v| (v, *off)),
                    _ => None,
                },
                _ => None,
            };
            if let (true, Some((var, off))) = (value_form, var_at) {
                self.reachable(var, *sp)?;
                let form = next_form();
                let k = self.operand_index(var, form);
                if off == 0 {
                    texts.push(format!("%{k}"));
                } else {
                    let wide = matches!(form, AddrForm::Generic | AddrForm::Global);
                    let (ty, tmp) = if wide { ("u64", "hw_a64") } else { ("u32", "hw_a32") };
                    lines.push(format!("add.{ty} {tmp}, %{k}, {off};"));
                    texts.push(tmp.to_string());
                }
                continue;
            }
            let text = self.operand(op, &mut next_form, *sp)?;
            let narrow_register = matches!(op, Operand::Name(n) | Operand::PercentName(n)
                if matches!(self.regs.get(&Self::reg_name(n)), Some(RegKind::B32)));
            if widen_sources && !texts.is_empty() && narrow_register {
                let tmp = format!("hw_w{}", texts.len());
                lines.push(format!("cvt.u64.u32 {tmp}, {text};"));
                texts.push(tmp);
            } else {
                texts.push(text);
            }
        }
        let ops = if texts.is_empty() { String::new() } else { format!(" {}", texts.join(", ")) };
        lines.push(format!("{guard}{}{ops};", parts.join(".")));
        Ok(lines)
    }

    /// `bar.sync` / `barrier.sync` / Dat3M's `bar.cta.sync N[, id[, count]]`, from the lowered
    /// operation: every test thread is a warp, so thread counts become warp-sized (a count
    /// in a register is multiplied on the device), an absent count is the test's threads of
    /// this CTA, and the aligned `bar` form is used (each warp runs converged, lane 0 only).
    fn barrier(&mut self, guard: &str, span: Span, mnemonic: &str) -> Result<Vec<String>, Rejection> {
        let p = self.program();
        let op = p.threads[self.thread].code.iter().find(|i| i.span == span).map(|i| i.op.clone());
        let Some(crate::program::Op::Barrier { instance, id, count, arrive }) = op else {
            return Err(reject(p, span, format!("`{mnemonic}` is not generated")));
        };
        let reg = |r: usize| ThreadGen::reg_name(&p.threads[self.thread].registers[r]);
        let mut lines = Vec::new();
        let id = match id {
            Some(crate::program::Value::Reg(r)) => reg(r),
            Some(crate::program::Value::Const(c)) => c.to_string(),
            None => instance.to_string(),
        };
        if id == HARNESS_BARRIER.to_string() {
            return Err(reject(p, span, format!("`{mnemonic}` uses barrier {HARNESS_BARRIER}, which the harness keeps for itself")));
        }
        let count = match count {
            Some(crate::program::Value::Const(n)) => (32 * n).to_string(),
            Some(crate::program::Value::Reg(r)) => {
                lines.push(format!("mul.lo.u32 hw_count, {}, 32;", reg(r)));
                "hw_count".to_string()
            }
            None => (32 * self.layout.warps[self.dense_cta].len()).to_string(),
        };
        lines.push(format!("{guard}bar.{} {id}, {count};", if arrive { "arrive" } else { "sync" }));
        Ok(lines)
    }

    fn is_64(&self, op: &Operand) -> bool {
        match op {
            Operand::Name(n) | Operand::PercentName(n) => self.regs.get(&Self::reg_name(n)) == Some(&RegKind::B64),
            _ => false,
        }
    }
}

/// Register kinds of one thread column: predicates (guards, `setp`, mbarrier tests), 64-bit
/// (instructions typed 64-bit, addresses), else 32-bit.
fn register_kinds(test: &HwTest, thread: usize) -> BTreeMap<String, RegKind> {
    let p = test.program;
    let mut kinds: BTreeMap<String, RegKind> = BTreeMap::new();
    let is_var = |n: &str| p.variables.iter().any(|v| v.name == n);
    for r in &p.threads[thread].registers {
        kinds.insert(ThreadGen::reg_name(r), RegKind::B32);
    }
    let mut set = |name: &str, kind: RegKind| {
        if let Some(e) = kinds.get_mut(&ThreadGen::reg_name(name)) {
            if *e != RegKind::Pred && kind != RegKind::B32 {
                *e = kind;
            }
        }
    };
    for item in &test.ast.init {
        if let crate::litmus::ast::InitItem::RegisterAddress { thread: t, reg, .. } = &item.node {
            if t.node == p.threads[thread].id {
                set(&reg.node, RegKind::B64);
            }
        }
    }
    for st in test.ast.code.get(thread).into_iter().flatten() {
        let Statement::Instr(ins) = &st.node else { continue };
        if let Some((g, _)) = &ins.guard {
            set(&g.node, RegKind::Pred);
        }
        let parts: Vec<String> = ins.opcode.iter().map(|o| o.node.clone()).collect();
        let pred_dst = parts[0] == "setp" || parts[0] == "elect" || parts.iter().any(|p| p == "try_wait" || p == "test_wait");
        let wide = has_64bit_type(&parts);
        // The cache-policy operand of `.L2::cache_hint` (always last) is a .b64.
        let cache_hint = parts.iter().any(|p| p == "L2::cache_hint");
        for (i, o) in ins.operands.iter().enumerate() {
            let name = match &o.node {
                Operand::Name(n) | Operand::PercentName(n) if !is_var(n) => n,
                Operand::Address(inner, _) => {
                    // An address register is 64-bit unless it is a shared-window address.
                    let shared = space_tokens(&parts).iter().any(|f| matches!(f, AddrForm::SharedCta | AddrForm::SharedCluster));
                    if let Operand::Name(n) | Operand::PercentName(n) = &inner.node {
                        if !is_var(n) && !shared {
                            set(n, RegKind::B64);
                        }
                    }
                    continue;
                }
                _ => continue,
            };
            if i == 0 && pred_dst {
                set(name, RegKind::Pred);
            } else if (cache_hint && i + 1 == ins.operands.len()) || (wide && !matches!(parts[0].as_str(), "bne" | "beq" | "goto" | "bra"))
            {
                set(name, RegKind::B64);
            }
        }
    }
    kinds
}

/// A C++ string literal line of an asm template.
fn asm_line(s: &str) -> String {
    let escaped = s.replace('\\', "\\\\").replace('"', "\\\"");
    format!("      \"{escaped}\\n\\t\"\n")
}

/// The C++ expression of a variable's address as seen from a thread of `dense_cta`.
fn address_expr(test: &HwTest, layout: &Layout, dense_cta: usize, var: usize, form: AddrForm) -> (String, &'static str) {
    let v = &test.program.variables[var];
    match v.space {
        Space::Global => (format!("(gbase + {})", layout.global_off[&var]), "l"),
        Space::Shared { cta } => {
            let owner = layout.dense_cta(cta);
            let off = test.program.window_offset(var).unwrap_or(0);
            let rank = layout.rank_of(owner);
            let local = owner == dense_cta;
            match (form, local) {
                (AddrForm::SharedCta | AddrForm::SharedCluster, true) => (format!("smem_addr({off})"), "r"),
                (AddrForm::SharedCta | AddrForm::SharedCluster, false) => (format!("cluster_addr({off}, {rank})"), "r"),
                (_, true) => (format!("(smem + {off})"), "l"),
                (_, false) => (format!("__cluster_map_shared_rank(smem + {off}, {rank})"), "l"),
            }
        }
    }
}

fn thread_function(test: &HwTest, layout: &Layout, thread: usize, obs: &[Observable], arch_major: u32) -> Result<String, Rejection> {
    let p = test.program;
    let th = &p.threads[thread];
    let dense_cta = layout.dense_cta(th.placement.cta);
    let regs = register_kinds(test, thread);
    let outputs: Vec<(usize, usize)> = obs
        .iter()
        .enumerate()
        .filter_map(|(k, o)| matches!(o, Observable::Register(t, _) if *t == thread).then_some(k))
        .map(|k| (k, k))
        .collect();
    let mut gen =
        ThreadGen { test, layout, thread, dense_cta, arch_major, regs, addr_operands: Vec::new(), first_input: outputs.len() + 3 };
    let code = test.ast.code.get(thread).cloned().unwrap_or_default();
    // Labels that a later instruction branches back to: spin loops, bounded.
    let mut seen = BTreeSet::new();
    let mut backward = BTreeSet::new();
    for st in &code {
        match &st.node {
            Statement::Label(l) => {
                seen.insert(l.clone());
            }
            Statement::Instr(ins) => {
                for o in &ins.operands {
                    if let Operand::Name(n) = &o.node {
                        if seen.contains(n) && matches!(ins.opcode[0].node.as_str(), "bra" | "goto" | "bne" | "beq") {
                            backward.insert(n.clone());
                        }
                    }
                }
            }
        }
    }
    let mut body = Vec::new();
    for (r, kind) in &gen.regs {
        body.push(match kind {
            RegKind::Pred => format!(".reg .pred {r};"),
            RegKind::B32 => format!(".reg .b32 {r};"),
            RegKind::B64 => format!(".reg .b64 {r};"),
        });
    }
    body.push(".reg .pred hw_p;".into());
    body.push(".reg .b32 hw_spin;".into());
    body.push(".reg .b32 hw_count;".into());
    body.push(".reg .b32 hw_sink32;".into());
    body.push(".reg .b64 hw_sink64;".into());
    body.push(".reg .b32 hw_a32;".into());
    body.push(".reg .b64 hw_a64;".into());
    body.push(".reg .b64 hw_w1, hw_w2;".into());
    body.push("mov.b32 hw_spin, 0;".into());
    body.push("mov.b32 %1, 0;".into());
    for (i, r) in th.registers.iter().enumerate() {
        let name = ThreadGen::reg_name(r);
        match gen.regs.get(&name) {
            Some(RegKind::Pred) => body.push(format!("setp.ne.u32 {name}, {}, 0;", th.reg_init[i] as u32)),
            Some(RegKind::B64) => body.push(format!("mov.b64 {name}, {};", th.reg_init[i])),
            _ => body.push(format!("mov.b32 {name}, {};", th.reg_init[i] as u32)),
        }
    }
    // Registers initialised with an address (`P0:r1 = &x;`).
    for item in &test.ast.init {
        if let crate::litmus::ast::InitItem::RegisterAddress { thread: t, reg, location } = &item.node {
            if t.node == th.id {
                let Some(v) = gen.variable(&location.node) else { continue };
                let k = gen.operand_index(v, AddrForm::Generic);
                body.push(format!("mov.b64 {}, %{k};", ThreadGen::reg_name(&reg.node)));
            }
        }
    }
    for st in &code {
        match &st.node {
            Statement::Label(l) => {
                body.push(format!("{l}:"));
                if backward.contains(l) {
                    body.push("add.u32 hw_spin, hw_spin, 1;".into());
                    body.push("setp.gt.u32 hw_p, hw_spin, %2;".into());
                    body.push("@hw_p bra HW_HANG;".into());
                }
            }
            Statement::Instr(ins) => body.extend(gen.instruction(ins, st.span)?),
        }
    }
    body.push("bra.uni HW_END;".into());
    body.push("HW_HANG:".into());
    body.push("mov.b32 %1, 1;".into());
    body.push("HW_END:".into());
    for (slot, k) in &outputs {
        let Observable::Register(_, r) = obs[*k] else { continue };
        let name = ThreadGen::reg_name(&th.registers[r]);
        let idx = outputs.iter().position(|(s, _)| s == slot).unwrap_or(0) + 3;
        body.push(match gen.regs.get(&name) {
            Some(RegKind::Pred) => format!("selp.u64 %{idx}, 1, 0, {name};"),
            Some(RegKind::B64) => format!("mov.b64 %{idx}, {name};"),
            _ => format!("cvt.u64.u32 %{idx}, {name};"),
        });
    }
    let mut out = String::new();
    let _ = writeln!(out, "// P{} @ cta {}, cluster {}, gpu {}", th.id, th.placement.cta, th.placement.cluster, th.placement.gpu);
    let _ = writeln!(out, "__device__ __noinline__ void thread_P{}(unsigned char* gbase, unsigned char* smem, unsigned long long* res, unsigned* hang, unsigned bound) {{", th.id);
    for (k, _) in &outputs {
        let _ = writeln!(out, "  unsigned long long out{k};");
    }
    let _ = writeln!(out, "  unsigned hung;");
    let _ = writeln!(out, "  asm volatile(\"{{\\n\\t\"");
    // Renumber: the template was written with %1 = hang, %2 = bound, %(k+2)... for outputs, and
    // inputs from first_input; the real order is outputs, hang, bound, addresses.
    let n_out = outputs.len();
    let text = body.join("\n");
    let text = renumber(&text, n_out, gen.first_input);
    for line in text.lines() {
        let indent = if line.ends_with(':') { "" } else { "  " };
        out.push_str(&asm_line(&format!("{indent}{line}")));
    }
    out.push_str("      \"}\"\n");
    let mut outs: Vec<String> = outputs.iter().map(|(k, _)| format!("\"=l\"(out{k})")).collect();
    outs.push("\"=r\"(hung)".into());
    let mut ins = vec!["\"r\"(bound)".to_string()];
    for &(v, form) in &gen.addr_operands {
        let (expr, c) = address_expr(test, layout, dense_cta, v, form);
        ins.push(format!("\"{c}\"({expr})"));
    }
    let _ = writeln!(out, "      : {}", outs.join(", "));
    let _ = writeln!(out, "      : {}", ins.join(", "));
    let _ = writeln!(out, "      : \"memory\");");
    for (k, _) in &outputs {
        let _ = writeln!(out, "  res[{k}] = out{k};");
    }
    let _ = writeln!(out, "  if (hung) atomicOr(hang, 1u << {thread});");
    let _ = writeln!(out, "}}");
    Ok(out)
}

/// Map template operand numbers (1 = hang, 2 = bound, 3.. = outputs, first_input.. = addresses)
/// to asm order (outputs, hang, bound, addresses).
fn renumber(text: &str, n_out: usize, first_input: usize) -> String {
    let mut out = String::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let digits: String = text[i + 1..].chars().take_while(char::is_ascii_digit).collect();
        if digits.is_empty() {
            out.push_str("%%");
            continue;
        }
        for _ in 0..digits.len() {
            chars.next();
        }
        let n: usize = digits.parse().unwrap_or(0);
        let mapped = match n {
            1 => n_out,
            2 => n_out + 1,
            n if n < first_input => n - 3,
            n => n_out + 2 + (n - first_input),
        };
        let _ = write!(out, "%{mapped}");
    }
    out
}

/// The observables read back: the condition's, the filter's and `locations`', in the order of
/// the model's final states.
pub fn observables(p: &Program) -> Vec<Observable> {
    crate::program::naming::observables(p)
}

/// Generate one test's namespace (device code, tables, and its `run_NAME` host function).
fn test_unit(test: &HwTest, index: usize, inc: &Incantations, arch: &str, config: &Config) -> Result<String, Rejection> {
    let p = test.program;
    // Proxy aliases: the one that cannot exist on the device at all is named first.
    let mut aliases: Vec<(usize, &crate::diag::Spanned<crate::litmus::ast::InitItem>, String)> = Vec::new();
    for item in &test.ast.init {
        if let crate::litmus::ast::InitItem::Alias { name, proxy, target } = &item.node {
            let (rank, why) = match proxy.node.as_str() {
                "surface" => (0, "surface accesses need a CUDA array, which generic loads and stores cannot alias"),
                "constant" => (1, "constant memory cannot be written by the device's generic stores"),
                "texture" => (2, "texture fetches over a variable's memory (a texture object) are not generated"),
                _ => (3, "a second virtual address of the same memory needs the CUDA virtual-memory API (the same allocation mapped twice), which the harness does not use"),
            };
            aliases.push((rank, item, format!("`{} @ {} aliases {}`: {why}", name.node, proxy.node, target.node)));
        }
    }
    aliases.sort_by_key(|a| a.0);
    if let Some((_, item, message)) = aliases.first() {
        return Err(reject(p, item.span, message.clone()));
    }
    if p.threads.len() > 32 {
        return Err(reject(p, p.threads[32].span, "more than 32 threads (the hang mask has one bit per thread)"));
    }
    let layout = layout(test)?;
    super::tensor::check(test, config)?;
    let obs = observables(p);
    for o in &obs {
        if let Observable::Location(ph) = o {
            let l = p.locations.iter().find(|l| l.physical == *ph).map(|l| l.variable).unwrap_or(0);
            if p.variables[l].kind == VariableKind::Mbarrier {
                return Err(reject(p, p.variables[l].span, "an mbarrier object as an observable is not read back"));
            }
            if p.is_tensor_map(l) {
                return Err(reject(
                    p,
                    p.variables[l].span,
                    "a tensor map as an observable is not read back (on the device its word is the encoded descriptor)",
                ));
            }
        }
    }
    let mut s = String::new();
    let _ = writeln!(s, "// ===== test {} ({}) =====", p.name, p.source.name());
    let _ = writeln!(s, "namespace t{index} {{");
    let _ = writeln!(s, "constexpr const char* kName = \"{}\";", p.name.replace('"', "'"));
    let _ = writeln!(s, "constexpr int kThreads = {};", p.threads.len());
    let _ = writeln!(s, "constexpr int kCtas = {};", layout.ctas.len());
    let _ = writeln!(s, "constexpr int kClusters = {};", layout.clusters.len());
    let _ = writeln!(s, "constexpr int kClusterDim = {};", layout.cluster_dim);
    let _ = writeln!(s, "constexpr int kTestWarps = {};", layout.max_warps());
    let _ = writeln!(s, "constexpr int kObs = {};", obs.len());
    let _ = writeln!(s, "constexpr size_t kGlobalStride = {};", layout.global_stride);
    let _ = writeln!(s, "constexpr int kSmemBytes = {};", layout.smem_bytes);
    let names: Vec<String> = obs.iter().map(|o| format!("\"{}\"", p.observable_name(o))).collect();
    let _ = writeln!(s, "static const char* kObsNames[] = {{{}nullptr}};", names.iter().map(|n| format!("{n}, ")).collect::<String>());
    // CTA at (cluster, rank), -1 for an idle rank.
    let mut at = Vec::new();
    for c in &layout.clusters {
        for r in 0..layout.cluster_dim {
            at.push(c.get(r).map(|&d| d as i64).unwrap_or(-1).to_string());
        }
    }
    let _ = writeln!(s, "__device__ const int kCtaAt[] = {{{}}};", at.join(", "));
    let mut roles = Vec::new();
    for w in &layout.warps {
        for i in 0..layout.max_warps() {
            roles.push(w.get(i).map(|&t| t as i64).unwrap_or(if i == 0 { -2 } else { -1 }).to_string());
        }
    }
    let _ = writeln!(s, "// role of warp w of dense CTA c: kRole[c * kTestWarps + w] (thread index; -2 keeper, -1 idle)");
    let _ = writeln!(s, "__device__ const int kRole[] = {{{}}};", roles.join(", "));
    let warps_of: Vec<String> = layout.warps.iter().map(|w| w.len().max(1).to_string()).collect();
    let _ = writeln!(s, "__device__ const int kWarpsOf[] = {{{}}};", warps_of.join(", "));
    // Initial image of an instance's global block (words).
    let mut image = vec![0u32; (layout.global_stride / 4) as usize];
    let mut shared_init: Vec<String> = Vec::new();
    let mut mbar_init: Vec<String> = Vec::new();
    for (i, v) in p.variables.iter().enumerate() {
        let words: Vec<u32> = (0..v.size / 4)
            .map(|w| p.locations.get(v.first_location + w as usize).map(|l| p.physical[l.physical].init as u32).unwrap_or(0))
            .collect();
        match v.space {
            Space::Global => {
                let base = (layout.global_off[&i] / 4) as usize;
                for (w, val) in words.iter().enumerate() {
                    image[base + w] = *val;
                }
            }
            Space::Shared { cta } => {
                let d = layout.dense_cta(cta);
                let off = p.window_offset(i).unwrap_or(0);
                if v.kind == VariableKind::Mbarrier {
                    let decl = test.ast.init.iter().find_map(|it| match &it.node {
                        crate::litmus::ast::InitItem::Variable(d) if d.name.node == v.name => d.mbarrier.as_ref().and_then(|m| m.node),
                        _ => None,
                    });
                    match decl {
                        Some(count) => mbar_init.push(format!("    if (cta == {d}) mbar_init({off}, {count});")),
                        None => shared_init.push(format!(
                            "    if (cta == {d}) {{ *(unsigned long long*)(smem + {off}) = 0; }} // {} (not initialised)",
                            v.name
                        )),
                    }
                } else {
                    for (w, val) in words.iter().enumerate() {
                        shared_init.push(format!("    if (cta == {d}) ((unsigned*)(smem + {off}))[{w}] = {val}u; // {}", v.name));
                    }
                }
            }
        }
    }
    let img: Vec<String> = image.iter().map(|w| format!("{w}u")).collect();
    let _ = writeln!(s, "static const unsigned kGlobalImage[] = {{{}}};", img.join(", "));
    // Shared-location observables: (obs slot, dense CTA, window offset).
    let mut shared_obs = Vec::new();
    let mut global_obs = Vec::new();
    for (k, o) in obs.iter().enumerate() {
        if let Observable::Location(ph) = o {
            let Some(l) = p.locations.iter().find(|l| l.physical == *ph) else { continue };
            let v = &p.variables[l.variable];
            match v.space {
                Space::Global => global_obs.push(format!("{{{k}, {}}}", layout.global_off[&l.variable] + l.offset)),
                Space::Shared { cta } => shared_obs.push((k, layout.dense_cta(cta), p.window_offset(l.variable).unwrap_or(0) + l.offset)),
            }
        }
    }
    let _ = writeln!(s, "// global-location observables: {{slot, byte offset in the instance block}}");
    let _ = writeln!(
        s,
        "static const int kGlobalObs[][2] = {{{}}};",
        if global_obs.is_empty() { "{-1, 0}".to_string() } else { global_obs.join(", ") }
    );
    let (tensor_table, tensor_acquire) = super::tensor::host_table(p, &layout.global_off);
    s.push_str(&tensor_table);
    for t in 0..p.threads.len() {
        s.push_str(&thread_function(test, &layout, t, &obs, arch_major(arch))?);
    }
    let cluster_attr = if layout.cluster_dim > 1 { format!(" __cluster_dims__({}, 1, 1)", layout.cluster_dim) } else { String::new() };
    let _ = writeln!(s, "__global__ void{cluster_attr} __launch_bounds__(1024) kernel(Launch L) {{");
    let _ = writeln!(s, "  __shared__ __align__(128) unsigned char smem[kSmemBytes];");
    let _ = writeln!(s, "  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;");
    let _ = writeln!(s, "  const int group = L.group_map[blockIdx.x / kClusterDim];");
    let _ =
        writeln!(s, "  const int inst = group / kClusters, cta = kCtaAt[(group % kClusters) * kClusterDim + blockIdx.x % kClusterDim];");
    let _ = writeln!(s, "  if (threadIdx.x == 0 && cta >= 0) {{");
    for l in &shared_init {
        let _ = writeln!(s, "{l}");
    }
    for l in &mbar_init {
        let _ = writeln!(s, "{l}");
    }
    let _ = writeln!(s, "    asm volatile(\"fence.mbarrier_init.release.cluster;\\n\\tfence.proxy.async.shared::cta;\" ::: \"memory\");");
    let _ = writeln!(s, "  }}");
    let _ = writeln!(s, "  setup_sync<kClusterDim>();");
    let _ = writeln!(s, "  const bool tester = cta >= 0 && warp < kWarpsOf[cta] && lane == 0;");
    let _ = writeln!(s, "  if (!tester) {{");
    let _ = writeln!(s, "    if (cta >= 0 && warp >= kTestWarps) stress(L, inst);");
    let _ = writeln!(s, "    return;");
    let _ = writeln!(s, "  }}");
    let _ = writeln!(s, "  const int role = kRole[cta * kTestWarps + warp];");
    let _ = writeln!(s, "  unsigned char* gbase = L.arena + (size_t)inst * kGlobalStride;");
    let _ = writeln!(s, "  unsigned long long* res = L.results + (size_t)inst * kObs;");
    let _ = writeln!(s, "  if (role >= 0) {{");
    for l in &tensor_acquire {
        let _ = writeln!(s, "{l}");
    }
    let _ = writeln!(s, "    if (L.start_barrier) start_barrier(L.start + inst, kThreads, L.bound);");
    let _ = writeln!(s, "    switch (role) {{");
    for (t, th) in p.threads.iter().enumerate() {
        let _ = writeln!(s, "      case {t}: thread_P{}(gbase, smem, res, L.hang + inst, L.bound); break;", th.id);
    }
    let _ = writeln!(s, "    }}");
    let _ = writeln!(s, "  }}");
    let _ = writeln!(s, "  end_sync<kClusterDim>(kWarpsOf[cta]);");
    if !shared_obs.is_empty() {
        let _ = writeln!(s, "  if (warp == 0) {{");
        for (k, d, off) in &shared_obs {
            let _ = writeln!(s, "    if (cta == {d}) res[{k}] = *(volatile unsigned*)(smem + {off});");
        }
        let _ = writeln!(s, "  }}");
        // No CTA of a cluster exits while a peer may still read its shared memory.
        let _ = writeln!(s, "  end_sync<kClusterDim>(kWarpsOf[cta]);");
    }
    let _ = writeln!(s, "}}");
    let _ = writeln!(s, "static int run(const Options& o) {{");
    let _ = writeln!(
        s,
        "  return run_test(o, kName, kThreads, kCtas, kClusters, kClusterDim, 32 * (kTestWarps + o.stress_warps), kObs, kObsNames, kGlobalStride, kGlobalImage, kGlobalObs, sizeof(kGlobalObs) / sizeof(kGlobalObs[0]), (const void*)kernel{});",
        if p.tensor_maps.is_empty() { String::new() } else { ", kTensorMaps, sizeof(kTensorMaps) / sizeof(kTensorMaps[0])".to_string() }
    );
    let _ = writeln!(s, "}}");
    let _ = writeln!(s, "}} // namespace t{index}");
    let _ = inc;
    Ok(s)
}

/// The numeric part of `sm_90a` (90); 0 when there is none.
fn arch_major(arch: &str) -> u32 {
    arch.trim_start_matches("sm_")
        .trim_start_matches("compute_")
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or(0)
}

/// Outcome of generating one compilation unit.
pub struct Generated {
    pub source: String,
    /// Tests included, by name.
    pub included: Vec<String>,
    pub rejected: Vec<Rejection>,
}

/// Generate one self-contained CUDA program holding every test that can be generated (tests
/// that cannot are listed in `rejected`). `config` decides what only the model can tell (a
/// store to a tensor map while a copy reading it is in flight).
pub fn generate(tests: &[HwTest], inc: &Incantations, arch: &str, file_name: &str, config: &Config) -> Generated {
    let mut units = Vec::new();
    let mut included = Vec::new();
    let mut rejected = Vec::new();
    for t in tests {
        match test_unit(t, units.len(), inc, arch, config) {
            Ok(u) => {
                units.push(u);
                included.push(t.program.name.clone());
            }
            Err(r) => rejected.push(r),
        }
    }
    let mut s = String::new();
    let _ = writeln!(s, "// Generated by ptxmm hw gen: a hardware litmus harness (docs/hardware.md).");
    let _ = writeln!(s, "// Tests: {}", included.join(", "));
    let _ = writeln!(
        s,
        "// Build: nvcc -O2 -std=c++17 {} -o {} {file_name}",
        super::runner::gencode(arch).join(" "),
        file_name.trim_end_matches(".cu")
    );
    let _ = writeln!(
        s,
        "// Run:   ./{} [--iterations N] [--instances N] [--no-start-barrier] [--shuffle] [--stress N] [--seed S] [--bound N] [TEST...]",
        file_name.trim_end_matches(".cu")
    );
    let _ = writeln!(s, "// Each test thread runs as lane 0 of its own warp, its column as one inline-PTX block;");
    let _ = writeln!(s, "// the output is the histogram of final states read by `ptxmm hw run`.");
    s.push_str(&prelude(inc));
    for u in &units {
        s.push_str(u);
    }
    let _ = writeln!(s, "int main(int argc, char** argv) {{");
    let _ = writeln!(s, "  Options o = parse_options(argc, argv);");
    let _ = writeln!(s, "  if (!device_banner()) return 3;");
    let _ = writeln!(s, "  int status = 0;");
    for (i, name) in included.iter().enumerate() {
        let _ = writeln!(s, "  if (selected(o, \"{}\")) status |= t{i}::run(o);", name.replace('"', "'"));
    }
    let _ = writeln!(s, "  return status;");
    let _ = writeln!(s, "}}");
    Generated { source: s, included, rejected }
}

fn prelude(inc: &Incantations) -> String {
    include_str!("prelude.cuh")
        .replace("@ITERATIONS@", &inc.iterations.to_string())
        .replace("@INSTANCES@", &inc.instances.to_string())
        .replace("@START_BARRIER@", if inc.start_barrier { "true" } else { "false" })
        .replace("@SHUFFLE@", if inc.shuffle { "true" } else { "false" })
        .replace("@STRESS@", &inc.stress_warps.to_string())
        .replace("@BOUND@", &inc.spin_bound.to_string())
        .replace("@SEED@", &inc.seed.to_string())
}
