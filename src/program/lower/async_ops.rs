//! Lowering of the asynchronous instructions: `cp.async*`, `cp.reduce.async.bulk`, the async-group
//! instructions, `mbarrier.*` (PTX ISA §9.7.9.25, §9.7.13.15) and `barrier.cluster`.

use super::operands::{describe, space_of, InstrLowerer, Quals};
use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::Operand;
use crate::program::*;

const COPY_ACCEPTED: &str = "cp.async.ca|cg.shared{::cta}.global, cp.async.commit_group, cp.async.wait_group N, cp.async.wait_all, \
cp.async.mbarrier.arrive{.noinc}, cp.async.bulk.<dst>.<src>.mbarrier::complete_tx::bytes|.bulk_group, cp.reduce.async.bulk.<dst>.<src>.<completion>.<op>{.noftz}.<type>, \
cp.async.bulk.prefetch.L2.global, cp.async.bulk.commit_group, cp.async.bulk.wait_group{.read} N";

impl InstrLowerer<'_, '_> {
    pub(super) fn unsupported(&self, span: Span, what: &str) -> Diagnostic {
        Diagnostic::error(span, format!("{what} is not supported by this version of ptxmm"))
            .with_note(format!("supported: {COPY_ACCEPTED}"))
    }

    fn const_operand(&self, op: &Spanned<Operand>, what: &str) -> Result<i64, Diagnostic> {
        match op.node {
            Operand::Int(v) => Ok(v),
            ref other => Err(Diagnostic::expected(op.span, format!("a constant {what}"), describe(other))),
        }
    }

    /// An mbarrier operand: when it names a variable, the variable must be an mbarrier object
    /// (in a kernel, an array of data words may also hold mbarriers: a shared storage struct).
    pub(super) fn mbarrier_address(&mut self, op: &Spanned<Operand>) -> Result<Address, Diagnostic> {
        let a = self.address(op)?;
        if let Address::Location(l) = a {
            let var = &self.l.variables[self.l.locations[l].variable];
            if var.kind != VariableKind::Mbarrier && !self.l.abstracts {
                return Err(Diagnostic::error(op.span, format!("`{}` is not an mbarrier object", var.name)).with_note(format!(
                    "declare it as `{} @ shared cta N mbarrier(count)` (or `mbarrier` to initialise it in the program)",
                    var.name
                )));
            }
        }
        Ok(a)
    }

    /// `cp.*` after the `cp` part.
    pub(super) fn async_copy(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let words: Vec<&str> = rest.iter().map(|p| p.node.as_str()).collect();
        let span = self.instr.opcode_span();
        match words.as_slice() {
            ["async", "commit_group"] => {
                self.operands(0, "no operands")?;
                Ok(Op::CommitGroup(GroupKind::CpAsync))
            }
            ["async", "bulk", "commit_group"] => {
                self.operands(0, "no operands")?;
                Ok(Op::CommitGroup(GroupKind::Bulk))
            }
            ["async", "wait_all"] => {
                self.operands(0, "no operands")?;
                Ok(Op::WaitGroup { kind: GroupKind::CpAsync, n: 0, read: false, all: true })
            }
            ["async", "wait_group"] | ["async", "bulk", "wait_group"] | ["async", "bulk", "wait_group", "read"] => {
                let ops = self.operands(1, "the number N of most recent groups that may stay pending")?;
                let n = self.const_operand(&ops[0], "group count N")?;
                if n < 0 {
                    return Err(Diagnostic::expected(ops[0].span, "a non-negative group count", n));
                }
                let kind = if words[1] == "bulk" { GroupKind::Bulk } else { GroupKind::CpAsync };
                Ok(Op::WaitGroup { kind, n, read: words.last() == Some(&"read"), all: false })
            }
            ["async", "mbarrier", "arrive", ..] => {
                let mut q = Quals::new(&rest[3..]);
                let noinc = q.take(&["noinc"]).is_some();
                let space = space_of(&mut q);
                if space == AccessSpace::SharedCluster {
                    return Err(Diagnostic::error(self.instr.opcode_span(), "`cp.async.mbarrier.arrive` takes a `.shared{::cta}` mbarrier only (PTX ISA §9.7.13.15.8: remote mbarriers are not supported by it)"));
                }
                q.take_all(&["b64"]);
                q.finish("cp.async.mbarrier.arrive", ".noinc, .shared{::cta}, .b64")?;
                let ops = self.operands(1, "[mbarrier]")?;
                let bar = self.mbarrier_address(&ops[0])?;
                Ok(Op::CpAsyncArrive { bar, space, noinc })
            }
            ["async", "bulk", "prefetch", ..] => {
                if words.get(3) == Some(&"tensor") {
                    return self.tensor_prefetch(&rest[4..]);
                }
                let mut q = Quals::new(&rest[3..]);
                if q.take(&["L2"]).is_none() || q.take(&["global"]).is_none() {
                    return Err(Diagnostic::error(span, "the form is `cp.async.bulk.prefetch.L2.global [src], size`"));
                }
                let cache_hint = q.take(&["L2::cache_hint"]).is_some();
                q.finish("cp.async.bulk.prefetch", ".L2, .global, .L2::cache_hint")?;
                let ops =
                    self.operands(2 + usize::from(cache_hint), if cache_hint { "[src], size, cache-policy" } else { "[src], size" })?;
                let src = self.address(&ops[0])?;
                let size = self.value(&ops[1])?;
                Ok(Op::Prefetch { bulk: Some((src, size)) })
            }
            ["async", "bulk", "tensor", ..] => self.tensor_copy(&rest[3..], false),
            ["reduce", "async", "bulk", "tensor", ..] => self.tensor_copy(&rest[4..], true),
            ["async", "bulk", ..] => self.bulk_copy(&rest[2..], None),
            ["reduce", "async", "bulk", ..] => self.bulk_copy(&rest[3..], Some(())),
            ["async", "ca" | "cg", ..] => self.cp_async(&rest[1..]),
            _ => Err(Diagnostic::error(span, format!("unsupported instruction `{}`", self.mnemonic()))
                .with_note(format!("supported: {COPY_ACCEPTED}"))),
        }
    }

    /// `cp.async.ca|cg.shared{::cta}.global [dst], [src], cp-size{, src-size | ignore-src}`.
    fn cp_async(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let mut q = Quals::new(rest);
        let (level, lspan) = q.take(&["ca", "cg"]).expect("matched by the caller");
        let dst_space = match q.take(&["shared", "shared::cta"]) {
            Some(_) => AccessSpace::SharedCta,
            None => return Err(Diagnostic::error(self.instr.opcode_span(), "`cp.async` needs the destination space `.shared{::cta}`")),
        };
        if q.take(&["global"]).is_none() {
            return Err(Diagnostic::error(self.instr.opcode_span(), "`cp.async` needs the source space `.global`"));
        }
        q.take_all(&["L2::64B", "L2::128B", "L2::256B"]);
        let cache_hint = q.take(&["L2::cache_hint"]).is_some();
        q.finish("cp.async", ".ca|.cg, .shared{::cta}, .global, .L2::<size>B, .L2::cache_hint")?;
        let all: &[Spanned<Operand>] = &self.instr.operands;
        // With .L2::cache_hint the last operand is the cache policy, a hint with no memory effect.
        let extra = usize::from(cache_hint);
        if all.len() < 3 + extra || all.len() > 4 + extra {
            let shape = if cache_hint {
                "4 or 5 operands for `cp.async...L2::cache_hint` ([dst], [src], cp-size{, src-size | ignore-src}, cache-policy)"
            } else {
                "3 or 4 operands for `cp.async` ([dst], [src], cp-size{, src-size | ignore-src})"
            };
            return Err(Diagnostic::expected(if all.len() > 4 + extra { all[4 + extra].span } else { self.span }, shape, all.len()));
        }
        let ops = &all[..all.len() - extra];
        let dst = self.address(&ops[0])?;
        let src = self.address(&ops[1])?;
        let size = self.const_operand(&ops[2], "cp-size")?;
        let allowed: &[i64] = if level == "cg" { &[16] } else { &[4, 8, 16] };
        if !allowed.contains(&size) {
            return Err(Diagnostic::expected(
                ops[2].span,
                format!("a cp-size of {allowed:?} bytes for `.{level}` (PTX ISA §9.7.9.25.3.1)"),
                size,
            )
            .with_note(format!("the cache level `.{level}` is at line {}", self.l.source.line_col(lspan.start).0)));
        }
        let (src_size, ignore_src) = match ops.get(3) {
            None => (None, None),
            // A predicate operand is ignore-src: when true, nothing is read and the destination
            // is zero-filled (PTX ISA §9.7.9.25.3.1).
            Some(o) if is_predicate_name(&o.node) => (None, Some(self.value(o)?)),
            Some(o) => (Some(self.value(o)?), None),
        };
        Ok(Op::AsyncCopy(AsyncCopy {
            kind: CopyKind::CpAsync,
            dst,
            dst_space,
            src,
            src_space: AccessSpace::Global,
            size: Value::Const(size),
            src_size,
            ignore_src,
            multicast: None,
            byte_mask: None,
            completion: Completion::Group(GroupKind::CpAsync),
            tensor: None,
        }))
    }

    /// `cp.async.bulk.<dst>.<src>.<completion> [dst], [src], size{, [mbar]}` and
    /// `cp.reduce.async.bulk.<dst>.<src>.<completion>.<op>.<type> ...` (`reduce` is Some).
    fn bulk_copy(&mut self, rest: &[Spanned<String>], reduce: Option<()>) -> Result<Op, Diagnostic> {
        let mnemonic = if reduce.is_some() { "cp.reduce.async.bulk" } else { "cp.async.bulk" };
        if rest.len() < 2 {
            return Err(Diagnostic::error(self.instr.opcode_span(), format!("`{mnemonic}` needs a destination and a source state space"))
                .with_note("e.g. `cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes`"));
        }
        let space = |p: &Spanned<String>| -> Result<AccessSpace, Diagnostic> {
            match p.node.as_str() {
                "global" => Ok(AccessSpace::Global),
                "shared::cta" | "shared" => Ok(AccessSpace::SharedCta),
                "shared::cluster" => Ok(AccessSpace::SharedCluster),
                other => {
                    Err(Diagnostic::expected(p.span, "a state space (.global, .shared::cta, .shared::cluster)", format!("`.{other}`")))
                }
            }
        };
        let dst_space = space(&rest[0])?;
        let src_space = space(&rest[1])?;
        let direction_ok = matches!(
            (dst_space, src_space),
            (AccessSpace::SharedCluster | AccessSpace::SharedCta, AccessSpace::Global)
                | (AccessSpace::SharedCluster, AccessSpace::SharedCta)
                | (AccessSpace::Global, AccessSpace::SharedCta)
        );
        if !direction_ok || (reduce.is_some() && src_space != AccessSpace::SharedCta) {
            return Err(Diagnostic::error(
                rest[0].span.to(rest[1].span),
                format!("`{mnemonic}.{}.{}` is not a direction PTX defines", rest[0].node, rest[1].node),
            )
            .with_note("directions: .shared::cta|.shared::cluster ← .global, .shared::cluster ← .shared::cta, .global ← .shared::cta (reductions read .shared::cta)"));
        }
        let mut q = Quals::new(&rest[2..]);
        let mbar = q.take(&["mbarrier::complete_tx::bytes"]).is_some();
        let group = q.take(&["bulk_group"]).is_some();
        let multicast = q.take(&["multicast::cluster"]);
        if let Some((_, mspan)) = multicast {
            if !(dst_space == AccessSpace::SharedCluster && src_space == AccessSpace::Global && reduce.is_none()) {
                return Err(Diagnostic::error(mspan, "`.multicast::cluster` exists only for `cp.async.bulk.shared::cluster.global`"));
            }
        }
        let cache_hint = q.take(&["L2::cache_hint"]).is_some();
        let cp_mask = q.take(&["cp_mask"]);
        if let Some((_, span)) = cp_mask {
            if !(dst_space == AccessSpace::Global && src_space == AccessSpace::SharedCta && reduce.is_none()) {
                return Err(Diagnostic::error(span, "`.cp_mask` exists only for `cp.async.bulk.global.shared::cta.bulk_group`"));
            }
        }
        let op = if reduce.is_some() { Some(self.reduce_op_type(&mut q, dst_space)?) } else { None };
        q.finish(mnemonic, ".mbarrier::complete_tx::bytes or .bulk_group, .L2::cache_hint, .cp_mask, and for reductions .<op>.<type>")?;
        let completion_ok = matches!(
            (dst_space, mbar, group),
            (AccessSpace::Global, false, true) | (AccessSpace::SharedCluster | AccessSpace::SharedCta, true, false)
        );
        if !completion_ok {
            return Err(Diagnostic::error(
                self.instr.opcode_span(),
                format!(
                    "`{mnemonic}` to .{} needs the completion mechanism {}",
                    rest[0].node,
                    if dst_space == AccessSpace::Global { "`.bulk_group`" } else { "`.mbarrier::complete_tx::bytes`" }
                ),
            ));
        }
        let n_ops = if multicast.is_some() {
            5
        } else if mbar {
            4
        } else {
            3
        };
        let shape = match (n_ops, cache_hint) {
            (5, false) => "[dstMem], [srcMem], size, [mbar], ctaMask",
            (5, true) => "[dstMem], [srcMem], size, [mbar], ctaMask, cache-policy",
            (4, false) => "[dst], [src], size, [mbar]",
            (4, true) => "[dst], [src], size, [mbar], cache-policy",
            (_, false) => "[dst], [src], size",
            (_, true) => "[dst], [src], size, cache-policy",
        };
        let masked;
        let shape = if cp_mask.is_some() {
            masked = format!("{shape}, byteMask");
            masked.as_str()
        } else {
            shape
        };
        // With .L2::cache_hint the operand after size (and [mbar]) is the cache policy (a hint,
        // no memory effect); with .cp_mask byteMask comes last.
        let all = self.operands(n_ops + usize::from(cache_hint) + usize::from(cp_mask.is_some()), shape)?;
        let ops = &all[..n_ops];
        let byte_mask = if cp_mask.is_some() { Some(self.value(&all[all.len() - 1])?) } else { None };
        let mask = if multicast.is_some() { Some(self.value(&ops[4])?) } else { None };
        let dst = self.address(&ops[0])?;
        let src = self.address(&ops[1])?;
        let size = self.value(&ops[2])?;
        let completion = if mbar { Completion::Mbarrier(self.mbarrier_address(&ops[3])?) } else { Completion::Group(GroupKind::Bulk) };
        let kind = match op {
            Some((r, t)) => CopyKind::Reduce(r, t),
            None => CopyKind::Bulk,
        };
        Ok(Op::AsyncCopy(AsyncCopy {
            kind,
            dst,
            dst_space,
            src,
            src_space,
            size,
            src_size: None,
            ignore_src: None,
            multicast: mask,
            byte_mask,
            completion,
            tensor: None,
        }))
    }

    /// The `.redOp.type` (or `.add.noftz.type`) of `cp.reduce.async.bulk`, checked against the
    /// table of valid combinations of PTX ISA §9.7.9.25.4.2 for the destination space.
    fn reduce_op_type(&self, q: &mut Quals, dst: AccessSpace) -> Result<(RmwOp, RedType), Diagnostic> {
        const OPS: &[&str] = &REDUCTION_NAMES;
        const TYPES: &[&str] = &["b32", "u32", "s32", "b64", "u64", "s64", "f16", "bf16", "f32", "f64"];
        let stray = |q: &Quals, skip: &[&str]| {
            q.parts.iter().enumerate().find(|(i, p)| !q.used[*i] && !skip.contains(&p.node.as_str())).map(|(_, p)| p.clone())
        };
        let Some((opname, opspan)) = q.take(OPS) else {
            let (span, found) = match stray(q, TYPES) {
                Some(p) => (p.span, format!("`.{}`", p.node)),
                None => (self.instr.opcode_span(), "none".to_string()),
            };
            return Err(Diagnostic::expected(span, "a reduction operation (.add .min .max .inc .dec .and .or .xor)", found));
        };
        let noftz = q.take(&["noftz"]);
        let Some((tname, tspan)) = q.take(TYPES) else {
            let (span, found) = match stray(q, &[]) {
                Some(p) => (p.span, format!("`.{}`", p.node)),
                None => (self.instr.opcode_span(), "none".to_string()),
            };
            return Err(Diagnostic::expected(span, "an element type (.b32 .u32 .s32 .b64 .u64 .s64 .f16 .bf16 .f32 .f64)", found));
        };
        // `tname` and `opname` are among the qualifiers taken above.
        let ty = RedType::parse(tname).unwrap_or(RedType::F64);
        let op = RmwOp::from_name(opname).unwrap_or(RmwOp::Xor);
        let global = dst == AccessSpace::Global;
        // The table "valid combinations of .redOp and element type" (§9.7.9.25.4.2).
        let valid: &[&str] = match (global, opname) {
            (false, "add") => &["u32", "s32", "u64"],
            (false, "min" | "max") => &["u32", "s32"],
            (_, "inc" | "dec") => &["u32"],
            (false, _) => &["b32"],
            (true, "add") => &["u32", "s32", "u64", "f32", "f64", "f16", "bf16"],
            (true, "min" | "max") => &["u32", "s32", "u64", "s64", "f16", "bf16"],
            (true, _) => &["b32", "b64"],
        };
        let list = valid.iter().map(|t| format!(".{t}")).collect::<Vec<_>>().join(" ");
        let dst_name = if global { ".global" } else { ".shared::cluster" };
        if !valid.contains(&tname) {
            let mut d = Diagnostic::expected(
                tspan,
                format!("an element type of `.{opname}` to `{dst_name}`: {list} (PTX ISA §9.7.9.25.4.2, valid combinations of .redOp and element type)"),
                format!("`.{tname}`"),
            );
            if matches!(opname, "and" | "or" | "xor") && matches!(tname, "u32" | "s32" | "u64" | "s64") {
                // The section's own example is `cp.reduce.async.bulk.global.shared::cta.bulk_group.L2::cache_hint.xor.s32`:
                // the table is the rule (ptxas rejects the example too), and the bits are the same.
                d = d.with_note(format!(
                    "the text's own example `cp.reduce.async.bulk.global.shared::cta.bulk_group.L2::cache_hint.xor.s32` disagrees with the table; ptxmm follows the table (as ptxas does): write `.{opname}.b{}`, the same bit operation",
                    &tname[1..]
                ));
            }
            return Err(d);
        }
        let half = matches!(ty, RedType::F16 | RedType::Bf16);
        match (noftz, op == RmwOp::Add && half) {
            (None, true) => {
                return Err(Diagnostic::error(opspan, format!("`.add.{tname}` needs `.noftz`: write `.add.noftz.{tname}`")).with_note(
                    "PTX ISA §9.7.9.25.4.2: \"The cp.reduce.async.bulk.add.f16 and cp.reduce.async.bulk.add.bf16 operations require .noftz qualifier\"",
                ))
            }
            (Some((_, span)), false) => {
                return Err(Diagnostic::error(span, "`.noftz` exists only as `.add.noftz.f16` and `.add.noftz.bf16`"));
            }
            _ => {}
        }
        Ok((op, ty))
    }

    /// `mbarrier.<op>...` after the `mbarrier` part.
    pub(super) fn mbarrier(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let Some(first) = rest.first() else {
            return Err(Diagnostic::error(self.instr.opcode_span(), "`mbarrier` needs an operation")
                .with_note("init, inval, arrive, arrive_drop, expect_tx, complete_tx, test_wait, try_wait"));
        };
        let what = first.node.as_str();
        let mut q = Quals::new(&rest[1..]);
        let expect_tx = what.starts_with("arrive") && q.take(&["expect_tx"]).is_some();
        let no_complete = what.starts_with("arrive") && q.take(&["noComplete"]).is_some();
        let parity = what.ends_with("wait") && q.take(&["parity"]).is_some();
        let sem_word = q.take(&["release", "relaxed", "acquire"]);
        let scope_word = q.take(&["cta", "cluster"]);
        let space = space_of(&mut q);
        q.take_all(&["b64"]);
        q.finish(
            &format!("mbarrier.{what}"),
            ".expect_tx, .noComplete, .parity, .release|.relaxed, .acquire|.relaxed, .cta|.cluster, .shared{::cta}|.shared::cluster, .b64",
        )?;
        let (default_sem, allowed): (Sem, &[&str]) = match what {
            "arrive" | "arrive_drop" => (Sem::Release, &["release", "relaxed"]),
            "test_wait" | "try_wait" => (Sem::Acquire, &["acquire", "relaxed"]),
            "expect_tx" | "complete_tx" => (Sem::Relaxed, &["relaxed"]),
            _ => (Sem::Weak, &[]),
        };
        let sem = match sem_word {
            None => default_sem,
            Some((w, span)) if allowed.contains(&w) => {
                let _ = span;
                match w {
                    "release" => Sem::Release,
                    "acquire" => Sem::Acquire,
                    _ => Sem::Relaxed,
                }
            }
            Some((w, span)) => return Err(Diagnostic::error(span, format!("`mbarrier.{what}` does not take `.{w}`"))),
        };
        if let (Some((w, wspan)), "init" | "inval") = (scope_word, what) {
            return Err(Diagnostic::error(wspan, format!("`mbarrier.{what}` takes no scope, found `.{w}`")));
        }
        let scope = match scope_word {
            Some(("cluster", _)) => Scope::Cluster,
            _ => Scope::Cta,
        };
        if space == AccessSpace::SharedCluster && !matches!(what, "arrive" | "arrive_drop" | "expect_tx" | "complete_tx") {
            return Err(Diagnostic::error(
                self.instr.opcode_span(),
                format!("`mbarrier.{what}` cannot use a `.shared::cluster` address (PTX ISA §9.7.13.15.8, M8)"),
            ));
        }
        let (op, dst, bar) = match what {
            "init" => {
                let ops = self.operands(2, "[mbar], count")?;
                let count = self.value(&ops[1])?;
                (MbOp::Init { count }, None, self.mbarrier_address(&ops[0])?)
            }
            "inval" => {
                let ops = self.operands(1, "[mbar]")?;
                (MbOp::Inval, None, self.mbarrier_address(&ops[0])?)
            }
            "expect_tx" | "complete_tx" => {
                let ops = self.operands(2, "[mbar], txCount")?;
                let bytes = self.value(&ops[1])?;
                let op = if what == "expect_tx" { MbOp::ExpectTx { bytes } } else { MbOp::CompleteTx { bytes } };
                (op, None, self.mbarrier_address(&ops[0])?)
            }
            "arrive" | "arrive_drop" => {
                let ops: &[Spanned<Operand>] = &self.instr.operands;
                // state, [mbar]{, count | txCount}
                if ops.len() < 2 || ops.len() > 3 {
                    return Err(Diagnostic::expected(
                        self.span,
                        format!("2 or 3 operands for `mbarrier.{what}` (state, [mbar]{{, count}})"),
                        ops.len(),
                    ));
                }
                let dst = match &ops[0].node {
                    Operand::Sink => None,
                    _ if space == AccessSpace::SharedCluster => {
                        return Err(Diagnostic::expected(
                            ops[0].span,
                            "`_` as the state of an arrive on a `.shared::cluster` mbarrier (PTX ISA §9.7.13.15.13)",
                            describe(&ops[0].node),
                        ));
                    }
                    _ => Some(self.dest_reg(&ops[0])?),
                };
                let bar = self.mbarrier_address(&ops[1])?;
                // The third operand is a count, or with .expect_tx a byte count.
                let third = ops.get(2).map(|o| self.value(o)).transpose()?;
                let (count, tx) = match (expect_tx, no_complete, third) {
                    (true, _, Some(t)) => (Value::Const(1), Some(t)),
                    (true, _, None) => return Err(Diagnostic::error(self.span, "`.expect_tx` needs a txCount operand")),
                    (false, true, None) => return Err(Diagnostic::error(self.span, "`.noComplete` needs a count operand")),
                    (false, _, Some(c)) => (c, None),
                    (false, false, None) => (Value::Const(1), None),
                };
                (MbOp::Arrive { count, expect_tx: tx, no_complete, drop: what == "arrive_drop" }, dst, bar)
            }
            "test_wait" | "try_wait" => {
                let ops: &[Spanned<Operand>] = &self.instr.operands;
                if ops.len() < 3 || ops.len() > 4 {
                    return Err(Diagnostic::expected(
                        self.span,
                        format!("3 or 4 operands for `mbarrier.{what}` (p, [mbar], state|parity{{, hint}})"),
                        ops.len(),
                    ));
                }
                let dst = match &ops[0].node {
                    Operand::Sink => None,
                    _ => Some(self.dest_reg(&ops[0])?),
                };
                let bar = self.mbarrier_address(&ops[1])?;
                let operand = self.value(&ops[2])?;
                if let Some(h) = ops.get(3) {
                    self.value(h)?;
                }
                (MbOp::Wait { parity, operand }, dst, bar)
            }
            "pending_count" | "arrive.noComplete" => {
                return Err(Diagnostic::error(first.span, format!("`mbarrier.{what}` is not supported by this version of ptxmm")))
            }
            other => {
                return Err(Diagnostic::expected(
                    first.span,
                    "an mbarrier operation (init, inval, arrive, arrive_drop, expect_tx, complete_tx, test_wait, try_wait)",
                    format!("`{other}`"),
                ))
            }
        };
        Ok(Op::Mbarrier { op, bar, space, sem, scope, dst })
    }

    /// `wgmma.fence`, `wgmma.commit_group`, `wgmma.wait_group N` and `wgmma.mma_async` (PTX ISA
    /// §9.7.15). Only what touches memory is modelled: the asynchronous reads of the A and B
    /// matrices in shared memory; registers and the arithmetic are not.
    pub(super) fn wgmma(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let Some(first) = rest.first() else {
            return Err(Diagnostic::error(
                self.instr.opcode_span(),
                "`wgmma` needs an operation (fence, mma_async, commit_group, wait_group)",
            ));
        };
        let mut q = Quals::new(&rest[1..]);
        q.take_all(&["sync", "aligned"]);
        match first.node.as_str() {
            "fence" => {
                q.finish("wgmma.fence", ".sync.aligned")?;
                self.operands(0, "no operands")?;
                Ok(Op::WgmmaFence)
            }
            "commit_group" => {
                q.finish("wgmma.commit_group", ".sync.aligned")?;
                self.operands(0, "no operands")?;
                Ok(Op::CommitGroup(GroupKind::Wgmma))
            }
            "wait_group" => {
                q.finish("wgmma.wait_group", ".sync.aligned")?;
                let ops = self.operands(1, "the number N of most recent wgmma-groups that may stay pending")?;
                let n = self.const_operand(&ops[0], "group count N")?;
                Ok(Op::WaitGroup { kind: GroupKind::Wgmma, n, read: false, all: false })
            }
            "mma_async" => {
                // Shape and dense types (.m64n8k16.f32.f16.f16, ...) do not change the accesses:
                // every dense shape reads 32 bytes of K. The sparse form reads B with twice that
                // and metadata selecting A's elements, which this model does not lay out.
                if let Some(sp) = rest.iter().find(|p| p.node == "sp") {
                    return Err(Diagnostic::error(
                        sp.span,
                        "sparse `wgmma.mma_async.sp` is not modelled by this version of ptxmm (its B matrix and metadata layout are not laid out); only the dense forms are",
                    ));
                }
                let ops: &[Spanned<Operand>] = &self.instr.operands;
                if ops.len() < 3 {
                    return Err(Diagnostic::expected(
                        self.span,
                        "at least 3 operands for `wgmma.mma_async` (d, a-desc, b-desc, ...)",
                        ops.len(),
                    ));
                }
                let desc = |this: &mut Self, o: &Spanned<Operand>| -> Result<Address, Diagnostic> {
                    match &o.node {
                        Operand::Name(_) | Operand::PercentName(_) | Operand::Address(..) => this.address(o),
                        Operand::Vector(_) => Err(Diagnostic::expected(o.span, "a matrix descriptor for B", "a vector of registers")),
                        other => Err(Diagnostic::expected(
                            o.span,
                            "a matrix descriptor (a register holding a shared variable's address, or `[sA]`)",
                            describe(other),
                        )),
                    }
                };
                // A in registers (`{a0, a1, a2, a3}`): only B is read from memory.
                let a = match &ops[1].node {
                    Operand::Vector(_) => None,
                    _ => Some(desc(self, &ops[1])?),
                };
                let b = desc(self, &ops[2])?;
                let n = rest
                    .iter()
                    .find_map(|p| {
                        let shape = p.node.strip_prefix("m64n")?;
                        shape.split('k').next()?.parse::<i64>().ok()
                    })
                    .ok_or_else(|| Diagnostic::error(self.instr.opcode_span(), "`wgmma.mma_async` needs its shape `.m64nNkK`"))?;
                // `imm-trans-a`, `imm-trans-b` (only the .f16/.bf16 forms have them): after d, a, b,
                // scale-d, imm-scale-a and imm-scale-b; with A in registers only `imm-trans-b`.
                let trans_at = |k: usize| -> Result<bool, Diagnostic> {
                    match ops.get(k).map(|o| &o.node) {
                        None | Some(Operand::Int(0)) => Ok(false),
                        Some(Operand::Int(1)) => Ok(true),
                        Some(other) => Err(Diagnostic::expected(ops[k].span, "an immediate transpose flag, 0 or 1", describe(other))),
                    }
                };
                let trans = match (a.is_some(), ops.len()) {
                    (true, 8) => [trans_at(6)?, trans_at(7)?],
                    (false, 7) => [false, trans_at(6)?],
                    _ => [false, false],
                };
                Ok(Op::Wgmma { a, b, n, trans })
            }
            other => Err(Diagnostic::expected(
                first.span,
                "a wgmma operation (fence, mma_async, commit_group, wait_group)",
                format!("`{other}`"),
            )),
        }
    }

    /// `barrier.cluster.arrive{.release|.relaxed}{.aligned}` / `barrier.cluster.wait{.acquire}{.aligned}`.
    pub(super) fn cluster_barrier(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        self.operands(0, "no operands")?;
        let mut q = Quals::new(rest);
        let Some((kind, _)) = q.take(&["arrive", "wait"]) else {
            return Err(Diagnostic::error(self.instr.opcode_span(), "`barrier.cluster` needs .arrive or .wait"));
        };
        let arrive = kind == "arrive";
        let sem = match q.take(&["release", "relaxed", "acquire"]) {
            None => {
                if arrive {
                    Sem::Release
                } else {
                    Sem::Acquire
                }
            }
            Some(("release", _)) if arrive => Sem::Release,
            Some(("relaxed", _)) if arrive => Sem::Relaxed,
            Some(("acquire", _)) if !arrive => Sem::Acquire,
            Some((w, span)) => return Err(Diagnostic::error(span, format!("`barrier.cluster.{kind}` does not take `.{w}`"))),
        };
        q.take(&["aligned"]);
        q.finish("barrier.cluster", ".arrive{.release|.relaxed} or .wait{.acquire}, .aligned")?;
        Ok(Op::ClusterBarrier { arrive, sem })
    }
}

/// `p`, `p1`, `%p`, `%p1`: the predicate register spellings (an ignore-src operand).
fn is_predicate_name(op: &Operand) -> bool {
    let name = match op {
        Operand::Name(n) => n.as_str(),
        Operand::PercentName(n) => n.trim_start_matches('%'),
        _ => return false,
    };
    name.starts_with('p') && name[1..].chars().all(|c| c.is_ascii_digit())
}
