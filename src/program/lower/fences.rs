//! Lowering of the ordering instructions: `fence` (with its proxy and restricted forms),
//! `membar`, and the CTA barriers `bar` and `barrier`.

use super::operands::{describe, InstrLowerer, Quals};
use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::Operand;
use crate::program::*;

impl<'l> InstrLowerer<'l, '_> {
    pub(super) fn fence(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        if rest.len() >= 2 && rest[0].node == "proxy" && rest[1].node == "tensormap::generic" {
            return self.tensormap_fence(&rest[2..]);
        }
        self.operands(0, "no operands")?;
        if let Some(first) = rest.first() {
            if first.node == "proxy" {
                let Some(kind) = rest.get(1) else {
                    return Err(Diagnostic::error(first.span, "`fence.proxy` needs a proxy kind")
                        .with_note("one of .generic .surface .texture .constant .alias"));
                };
                if kind.node.starts_with("async::") || kind.node.starts_with("tensormap") {
                    // (`tensormap::generic` is read above.)
                    return Err(Diagnostic::error(kind.span, format!("`fence.proxy.{}` is not supported by this version of ptxmm", kind.node))
                        .with_note("the uni-directional proxy fences and the tensormap proxy are not modelled; use the bi-directional `fence.proxy.async{.space}`"));
                }
                if kind.node == "async" {
                    // fence.proxy.async{.global|.shared::cta|.shared::cluster} (PTX ISA §9.7.13.4).
                    let space = match rest.get(2).map(|p| p.node.as_str()) {
                        None => None,
                        Some("global") => Some(AccessSpace::Global),
                        Some("shared::cta") | Some("shared") => Some(AccessSpace::SharedCta),
                        Some("shared::cluster") => Some(AccessSpace::SharedCluster),
                        Some(other) => {
                            return Err(Diagnostic::expected(
                                rest[2].span,
                                "a state space (.global, .shared::cta, .shared::cluster)",
                                format!("`.{other}`"),
                            ))
                        }
                    };
                    if let Some(extra) = rest.get(3) {
                        return Err(Diagnostic::error(
                            extra.span,
                            format!("unsupported qualifier `.{}` on `fence.proxy.async`", extra.node),
                        ));
                    }
                    return Ok(Op::ProxyFence { proxy: Proxy::Async, space });
                }
                if let Some(extra) = rest.get(2) {
                    return Err(Diagnostic::error(
                        extra.span,
                        format!("unsupported qualifier `.{}` on `fence.proxy.{}`", extra.node, kind.node),
                    ));
                }
                return match kind.node.as_str() {
                    "alias" => Ok(Op::AliasFence),
                    "generic" => Ok(Op::ProxyFence { proxy: Proxy::Generic, space: None }),
                    "surface" => Ok(Op::ProxyFence { proxy: Proxy::Surface, space: None }),
                    "texture" => Ok(Op::ProxyFence { proxy: Proxy::Texture, space: None }),
                    "constant" => Ok(Op::ProxyFence { proxy: Proxy::Constant, space: None }),
                    "tensormap" | "async::generic" | "async::global" | "async::shared::cta" | "async::shared::cluster" => {
                        Err(Diagnostic::error(kind.span, format!("`fence.proxy.{}` is not supported by this version of ptxmm", kind.node))
                            .with_note("use the bi-directional `fence.proxy.async{.space}`"))
                    }
                    other => Err(Diagnostic::expected(
                        kind.span,
                        "a proxy kind (generic, surface, texture, constant, alias)",
                        format!("`{other}`"),
                    )),
                };
            }
        }
        let mut q = Quals::new(rest);
        let mbarrier_init = q.take(&["mbarrier_init"]);
        let mut restrict = mbarrier_init.map(|_| FenceRestrict::MbarrierInit);
        match q.take(&["sync_restrict::shared::cta", "sync_restrict::shared::cluster"]) {
            Some(("sync_restrict::shared::cta", _)) => restrict = Some(FenceRestrict::SharedCta),
            Some(_) => restrict = Some(FenceRestrict::SharedCluster),
            None => {}
        }
        if let Some((w, span)) = q.take(&["op_restrict"]) {
            return Err(Diagnostic::error(span, format!("`fence.{w}` is not supported by this version of ptxmm")));
        }
        let kind = match q.take(&["sc", "acq_rel", "acquire", "release"]) {
            None => FenceKind::AcqRel,
            Some(("sc", _)) => FenceKind::Sc,
            Some(("acq_rel", _)) => FenceKind::AcqRel,
            Some(("acquire", _)) => FenceKind::Acquire,
            Some(_) => FenceKind::Release,
        };
        let scope = self.scope(&mut q, true, "a fence")?.unwrap_or(Scope::Sys);
        q.finish(
            "fence",
            ".sc/.acq_rel/.acquire/.release, .mbarrier_init, .sync_restrict::shared::cta|cluster, and a scope (.cta, .cluster, .gpu, .sys)",
        )?;
        if let Some((_, span)) = mbarrier_init {
            if kind != FenceKind::Release || scope != Scope::Cluster {
                return Err(Diagnostic::error(span, "the only form is `fence.mbarrier_init.release.cluster` (PTX ISA §9.7.13.4)"));
            }
        }
        Ok(Op::Fence { kind, scope, restrict })
    }

    pub(super) fn membar(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        self.operands(0, "no operands")?;
        if let Some(first) = rest.first() {
            if first.node == "proxy" {
                return Err(Diagnostic::error(first.span, "`membar.proxy` is not supported; use `fence.proxy.<kind>`"));
            }
        }
        let mut q = Quals::new(rest);
        // membar.{cta,gl,sys} is fence.sc.{cta,gpu,sys} on sm_70+ (PTX ISA §9.7.13.4).
        let scope = self.scope(&mut q, true, "membar")?.unwrap_or(Scope::Sys);
        q.finish("membar", ".cta, .gl or .sys")?;
        Ok(Op::Fence { kind: FenceKind::Sc, scope, restrict: None })
    }

    pub(super) fn barrier(&mut self, head: &str, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        if head == "barrier" && rest.first().is_some_and(|p| p.node == "cluster") {
            return self.cluster_barrier(&rest[1..]);
        }
        let mut q = Quals::new(rest);
        let dat3m_spelling = head == "bar" && q.take(&["cta"]).is_some();
        if !dat3m_spelling {
            q.take(&["cta"]);
        }
        let Some((kind, _)) = q.take(&["sync", "arrive", "red"]) else {
            return Err(Diagnostic::error(self.instr.opcode_span(), format!("`{}` needs .sync or .arrive", self.mnemonic())));
        };
        if kind == "red" {
            return Err(Diagnostic::error(self.instr.opcode_span(), "`bar.red` is not supported by this version of ptxmm"));
        }
        // `bar{.cta}.*` means `barrier{.cta}.*.aligned` (PTX ISA §9.7.13.1).
        let aligned = q.take(&["aligned"]).is_some() || head == "bar";
        q.finish(head, ".cta, .sync/.arrive, .aligned")?;
        let ops: &'l [Spanned<Operand>] = &self.instr.operands;
        if ops.is_empty() || ops.len() > 3 {
            return Err(Diagnostic::expected(
                if ops.len() > 3 { ops[3].span } else { self.span },
                "1 to 3 operands (barrier, [id, [count]])",
                ops.len(),
            ));
        }
        let arrive = kind == "arrive";
        if dat3m_spelling {
            // Dat3M: `bar.cta.sync N[, id[, count]]`, N a static instance id.
            let Operand::Int(instance) = ops[0].node else {
                return Err(Diagnostic::expected(ops[0].span, "a constant barrier instance id", describe(&ops[0].node)));
            };
            let id = ops.get(1).map(|o| self.value(o)).transpose()?;
            let count = ops.get(2).map(|o| self.value(o)).transpose()?;
            Ok(Op::Barrier { instance, id, count, arrive, aligned })
        } else {
            // PTX: `bar.sync a{, b}`, a the barrier resource, b the thread count.
            let a = self.value(&ops[0])?;
            if ops.len() > 2 {
                return Err(Diagnostic::expected(ops[2].span, "at most 2 operands for `bar.sync a{, b}`", ops.len()));
            }
            let count = ops.get(1).map(|o| self.value(o)).transpose()?;
            if arrive && count.is_none() {
                return Err(Diagnostic::error(self.span, "`bar.arrive` requires a thread count (PTX ISA §9.7.13.1)"));
            }
            let instance = match a {
                Value::Const(c) => c,
                Value::Reg(_) => -1,
            };
            Ok(Op::Barrier { instance, id: Some(a), count, arrive, aligned })
        }
    }
}
