//! Lowering of tensor maps (`tmap @ tensormap { ... }` in the init block) and of the tile-mode
//! tensor copies: `cp.async.bulk.tensor`, `cp.reduce.async.bulk.tensor`,
//! `cp.async.bulk.prefetch.tensor` (PTX ISA §9.7.9.25.5). See `program::tensor`.

use super::operands::{describe, InstrLowerer, Quals};
use super::state::Lowerer;
use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::{InitItem, Operand};
use crate::litmus::ast::{TensorMapDecl, TensorMapValue};
use crate::program::*;
use std::collections::HashMap;

const TENSOR_FIELDS: &str = "base, at, type, elem, dims, strides, box, oob, swizzle, interleave";
const TENSOR_ACCEPTED: &str = "cp.async.bulk.tensor.<1d-5d>.shared::cluster|shared::cta.global{.tile}.mbarrier::complete_tx::bytes [dst], [tmap, {c0, ...}], [mbar]; \
cp.async.bulk.tensor.<1d-5d>.global.shared::cta{.tile}.bulk_group [tmap, {c0, ...}], [src]; \
cp.reduce.async.bulk.tensor.<1d-5d>.global.shared::cta.<op>{.tile}.bulk_group [tmap, {c0, ...}], [src]; \
cp.async.bulk.prefetch.tensor.<1d-5d>.L2.global{.tile} [tmap, {c0, ...}] (each with an optional .L2::cache_hint and its cache-policy operand, last)";

impl Lowerer<'_> {
    /// Every `tmap @ tensormap { ... }` of the init block: checks the fields and declares the map's
    /// own one-word global variable.
    pub(super) fn declare_tensor_maps(&mut self, init: &[Spanned<InitItem>]) -> Result<(), Diagnostic> {
        for item in init {
            if let InitItem::TensorMap(d) = &item.node {
                let map = self.tensor_map(d, item.span)?;
                self.tensor_maps.push(map);
            }
        }
        Ok(())
    }

    fn tensor_map(&mut self, d: &TensorMapDecl, span: Span) -> Result<TensorMap, Diagnostic> {
        let mut seen: HashMap<&str, &Spanned<TensorMapValue>> = HashMap::new();
        for (key, value) in &d.fields {
            if !TENSOR_FIELDS.split(", ").any(|f| f == key.node) {
                return Err(Diagnostic::expected(key.span, format!("a tensor-map field ({TENSOR_FIELDS})"), format!("`{}`", key.node)));
            }
            if seen.insert(key.node.as_str(), value).is_some() {
                return Err(Diagnostic::error(key.span, format!("tensor-map field `{}` is given twice", key.node)));
            }
        }
        let word = |key: &str| -> Result<Option<(&str, Span)>, Diagnostic> {
            match seen.get(key) {
                None => Ok(None),
                Some(Spanned { node: TensorMapValue::Word(w), span }) => Ok(Some((w.as_str(), *span))),
                Some(v) => Err(Diagnostic::expected(v.span, format!("a word for `{key}`"), "a number or a list")),
            }
        };
        let list = |key: &str| -> Result<Option<(Vec<i64>, Span)>, Diagnostic> {
            match seen.get(key) {
                None => Ok(None),
                Some(Spanned { node: TensorMapValue::List(l), span }) => Ok(Some((l.clone(), *span))),
                Some(Spanned { node: TensorMapValue::Int(v), span }) => Ok(Some((vec![*v], *span))),
                Some(v) => Err(Diagnostic::expected(v.span, format!("a list `{{n0, n1, ...}}` for `{key}`"), "a word")),
            }
        };
        // Modes ptxmm does not model: reject them by name.
        let swizzle = match word("swizzle")? {
            None => Swizzle::None,
            Some((w, wspan)) => Swizzle::parse(w).ok_or_else(|| {
                Diagnostic::expected(wspan, "a swizzle: none, 32B, 64B or 128B", format!("`{w}`"))
                    .with_note("the 128B swizzles with 32- or 64-byte atoms (Blackwell) are not modelled by this version of ptxmm")
            })?,
        };
        for (key, default, what) in [("interleave", "none", "interleaved layouts"), ("oob", "zero", "out-of-bounds fills other than zeros")]
        {
            if let Some((w, wspan)) = word(key)? {
                if w != default {
                    return Err(Diagnostic::error(wspan, format!("`{key} = {w}` is not supported by this version of ptxmm"))
                        .with_note(format!("ptxmm models tile mode with `{key} = {default}` only ({what} are not modelled)")));
                }
            }
        }
        let Some((base_name, base_span)) = word("base")? else {
            return Err(Diagnostic::error(d.name.span, format!("tensor map `{}` needs `base = <global variable>`", d.name.node)));
        };
        let Some(base_loc) = self.lookup(base_name) else {
            return Err(Diagnostic::error(base_span, format!("unknown location `{base_name}`"))
                .with_note("declare the tensor's global variable in the init block, e.g. `g[64];`"));
        };
        let base = self.locations[base_loc].variable;
        let bvar = &self.variables[base];
        if bvar.space != Space::Global || bvar.kind != VariableKind::Data || self.locations[base_loc].offset != 0 {
            return Err(Diagnostic::error(
                base_span,
                format!("the base of a tensor map must be a global data variable, and `{base_name}` is not"),
            ));
        }
        let (elem_type, elem) = match (word("type")?, seen.get("elem")) {
            (Some(_), Some(e)) => return Err(Diagnostic::error(e.span, "give `type` or `elem`, not both")),
            (Some((t, tspan)), None) => match tensor::element_size(t) {
                Some(size) => (t.to_string(), size),
                None => {
                    return Err(Diagnostic::error(tspan, format!("element type `{t}` is not supported by this version of ptxmm"))
                        .with_note(format!("tensor elements are {}", tensor::element_type_names())))
                }
            },
            (None, Some(Spanned { node: TensorMapValue::Int(n @ (1 | 2 | 4 | 8)), .. })) => (format!("b{}", 8 * n), *n),
            (None, Some(e)) => return Err(Diagnostic::expected(e.span, "`elem = 1`, `2`, `4` or `8` (bytes)", "another value")),
            (None, None) => ("b32".to_string(), 4),
        };
        let Some((dims, dspan)) = list("dims")? else {
            return Err(Diagnostic::error(d.name.span, format!("tensor map `{}` needs `dims = {{d0, ...}}`", d.name.node)));
        };
        if dims.is_empty() || dims.len() > 5 || dims.iter().any(|&x| x <= 0) {
            return Err(Diagnostic::expected(dspan, "1 to 5 positive dimensions, innermost first", format!("{dims:?}")));
        }
        let rank = dims.len();
        let strides = match list("strides")? {
            Some((s, sspan)) => {
                if s.len() != rank - 1 {
                    return Err(Diagnostic::expected(
                        sspan,
                        format!("{} byte stride(s), one per dimension after the first", rank - 1),
                        s.len(),
                    ));
                }
                let mut extent = byte_extent(dims[0], elem, dspan)?;
                for (i, &st) in s.iter().enumerate() {
                    if st <= 0 || st % 16 != 0 || st < extent {
                        return Err(Diagnostic::error(
                            sspan,
                            format!("the stride of dimension {} is {st} bytes: it must be a multiple of 16 and at least {extent} (the extent of the dimensions inside it)", i + 1),
                        ));
                    }
                    extent = byte_extent(dims[i + 1], st, sspan)?;
                }
                s
            }
            None => {
                let mut s = Vec::new();
                let mut extent = byte_extent(dims[0], elem, dspan)?;
                for &d in &dims[1..] {
                    if extent % 16 != 0 {
                        return Err(Diagnostic::error(
                            dspan,
                            format!("packed rows of {extent} bytes are not a multiple of 16: give `strides = {{...}}`"),
                        ));
                    }
                    s.push(extent);
                    extent = byte_extent(extent, d, dspan)?;
                }
                s
            }
        };
        let Some((box_dims, bspan)) = list("box")? else {
            return Err(Diagnostic::error(d.name.span, format!("tensor map `{}` needs `box = {{b0, ...}}`", d.name.node)));
        };
        if box_dims.len() != rank || box_dims.iter().any(|&b| !(1..=256).contains(&b)) {
            return Err(Diagnostic::expected(
                bspan,
                format!("{rank} box extent(s) in [1, 256], one per dimension"),
                format!("{box_dims:?}"),
            ));
        }
        if box_dims[0] * elem % 16 != 0 {
            return Err(Diagnostic::error(
                bspan,
                format!("the box's inner extent is {} bytes: it must be a multiple of 16", box_dims[0] * elem),
            ));
        }
        // cuTensorMapEncodeTiled: "the inner dimension of the box ... must be less than or equal
        // to the swizzle size".
        if swizzle != Swizzle::None && box_dims[0] * elem > swizzle.span() {
            return Err(Diagnostic::error(
                bspan,
                format!(
                    "the box's inner extent is {} bytes, more than the {}-byte span of its swizzle",
                    box_dims[0] * elem,
                    swizzle.span()
                ),
            ));
        }
        let mut map = TensorMap {
            name: d.name.node.clone(),
            variable: 0,
            offset: 0,
            named: true,
            base,
            elem_type,
            elem,
            dims,
            strides,
            box_dims,
            swizzle,
            span,
        };
        if map.extent_bytes() > bvar.size {
            return Err(Diagnostic::error(
                dspan,
                format!("the tensor spans {} bytes but `{base_name}` has {}", map.extent_bytes(), bvar.size),
            )
            .with_note(format!("declare it larger, e.g. `{base_name}[{}];`", map.extent_bytes())));
        }
        if let Some((at, at_span)) = word("at")? {
            // The map is the 128 bytes of a `CUtensorMap` in a parameter or in global memory.
            let (name, offset) = match at.split_once('+') {
                Some((n, o)) => (n, o.parse::<i64>().ok()),
                None => (at, Some(0)),
            };
            let Some(offset) = offset else {
                return Err(Diagnostic::expected(at_span, "`at = NAME` or `at = NAME+OFFSET` (bytes)", format!("`{at}`")));
            };
            let Some(loc) = self.lookup(name) else {
                return Err(Diagnostic::error(at_span, format!("unknown location `{name}`"))
                    .with_note("`at` names a parameter or global variable declared in the init block"));
            };
            let var = self.locations[loc].variable;
            let v = &self.variables[var];
            if !matches!(v.space, Space::Param | Space::Global) || v.kind != VariableKind::Data {
                return Err(Diagnostic::error(
                    at_span,
                    format!("a tensor map lives in a parameter or global variable, and `{name}` is not"),
                ));
            }
            let offset = self.locations[loc].offset + offset;
            if offset % 64 != 0 || offset + 128 > v.size {
                return Err(Diagnostic::error(
                    at_span,
                    format!(
                        "a tensor map is 128 bytes aligned to 64 (a `CUtensorMap`): `{name}+{offset}` is {} of `{name}` ({} bytes)",
                        if offset % 64 != 0 { "not 64-byte aligned in a variable" } else { "past the end" },
                        v.size
                    ),
                ));
            }
            if let Some(other) = self.tensor_maps.iter().find(|m| m.variable == var && m.offset == offset) {
                return Err(Diagnostic::error(at_span, format!("tensor map `{}` is already at `{name}+{offset}`", other.name)));
            }
            map.variable = var;
            map.offset = offset;
            map.named = false;
            return Ok(map);
        }
        // The map's own word: read by each copy that uses it.
        let p = self.new_physical(0);
        let loc = self.new_location(&d.name, p, None)?;
        map.variable = self.locations[loc].variable;
        Ok(map)
    }
}

/// `count` × `size` bytes, the extent of some dimensions of a tensor: an error at `span` when
/// it does not fit a 64-bit byte offset (it would wrap into nonsense such as negative rows).
fn byte_extent(count: i64, size: i64, span: Span) -> Result<i64, Diagnostic> {
    count
        .checked_mul(size)
        .ok_or_else(|| Diagnostic::error(span, format!("the tensor's extent, {count} × {size} bytes, does not fit a 64-bit byte offset")))
}

impl InstrLowerer<'_, '_> {
    /// The tensor operand `[tmap, {c0, ...}]` of a copy of `rank` dimensions: a map named, or
    /// the address of one (a register, a parameter's or variable's name).
    fn tensor_operand(&mut self, op: &Spanned<Operand>, rank: usize) -> Result<TensorCopy, Diagnostic> {
        let Operand::TensorAddress(base, coords) = &op.node else {
            return Err(Diagnostic::expected(op.span, "a tensor operand `[tensorMap, {c0, ...}]`", describe(&op.node)));
        };
        if coords.len() != rank {
            return Err(Diagnostic::error(op.span, format!("a {rank}d tensor copy needs {rank} coordinate(s); found {}", coords.len())));
        }
        let named = match &base.node {
            Operand::Name(n) => self.l.tensor_maps.iter().position(|m| m.named && &m.name == n),
            _ => None,
        };
        let map = match named {
            Some(map) => {
                let m = &self.l.tensor_maps[map];
                if m.rank() != rank {
                    return Err(Diagnostic::error(
                        op.span,
                        format!(
                            "a {rank}d tensor copy needs a {rank}-dimensional tensor map; `{}` has {} dimension(s)",
                            m.name,
                            m.rank()
                        ),
                    ));
                }
                MapOperand::Named(map)
            }
            None => MapOperand::At(self.value(base).map_err(|e| {
                e.with_note(
                    "the tensor map is a tensor map's name (`tmap @ tensormap { ... }`), a register holding its address, or the name of the parameter it is in",
                )
            })?),
        };
        let coords = coords.iter().map(|c| self.value(c)).collect::<Result<Vec<_>, _>>()?;
        Ok(TensorCopy { map, rank, coords })
    }

    /// The `.<n>d` qualifier and the load mode: `.tile` (the default) only.
    fn tensor_shape(&self, q: &mut Quals, mnemonic: &str) -> Result<usize, Diagnostic> {
        for p in q.parts.iter() {
            let w = p.node.as_str();
            if w.starts_with("im2col") || w.starts_with("tile::") {
                return Err(self
                    .unsupported(p.span, &format!("the `.{w}` mode of `{mnemonic}`"))
                    .with_note("ptxmm models tile mode (`.tile`) only"));
            }
            if w == "multicast::cluster" && mnemonic != "cp.async.bulk.tensor" {
                return Err(Diagnostic::error(p.span, format!("`.multicast::cluster` does not apply to `{mnemonic}`"))
                    .with_note("only loads into shared::cluster (`cp.async.bulk.tensor.<n>d.shared::cluster.global`) multicast"));
            }
            if w.starts_with("cta_group") {
                return Err(self.unsupported(p.span, &format!("`.{w}` on `{mnemonic}`")));
            }
        }
        let Some((d, _)) = q.take(&["1d", "2d", "3d", "4d", "5d"]) else {
            return Err(Diagnostic::error(self.instr.opcode_span(), format!("`{mnemonic}` needs a dimension (.1d to .5d)")));
        };
        q.take(&["tile"]);
        Ok(usize::from(d.as_bytes()[0] - b'0'))
    }

    /// `cp.async.bulk.tensor...` (`reduce`: `cp.reduce.async.bulk.tensor...`), after `tensor`.
    pub(super) fn tensor_copy(&mut self, rest: &[Spanned<String>], reduce: bool) -> Result<Op, Diagnostic> {
        let mnemonic = if reduce { "cp.reduce.async.bulk.tensor" } else { "cp.async.bulk.tensor" };
        let mut q = Quals::new(rest);
        let rank = self.tensor_shape(&mut q, mnemonic)?;
        let (to_global, dst_space) = match q.take(&["global", "shared::cluster", "shared::cta", "shared"]) {
            Some(("global", _)) => (true, AccessSpace::Global),
            Some(("shared::cluster", _)) => (false, AccessSpace::SharedCluster),
            Some(_) => (false, AccessSpace::SharedCta),
            None => {
                return Err(Diagnostic::error(
                    self.instr.opcode_span(),
                    format!("`{mnemonic}` needs a destination and a source state space"),
                )
                .with_note(format!("accepted: {TENSOR_ACCEPTED}")))
            }
        };
        let src_ok = if to_global { q.take(&["shared::cta", "shared"]).is_some() } else { q.take(&["global"]).is_some() };
        if !src_ok || (reduce && !to_global) {
            return Err(Diagnostic::error(
                self.instr.opcode_span(),
                format!(
                    "`{mnemonic}` copies .global → .shared::cluster|.shared::cta (loads) or .shared::cta → .global (stores, reductions)"
                ),
            )
            .with_note(format!("accepted: {TENSOR_ACCEPTED}")));
        }
        let op = if reduce {
            let Some((name, _)) = q.take(&REDUCTION_NAMES) else {
                return Err(Diagnostic::error(
                    self.instr.opcode_span(),
                    "`cp.reduce.async.bulk.tensor` needs a reduction operation (.add .min .max .inc .dec .and .or .xor)",
                ));
            };
            RmwOp::from_name(name)
        } else {
            None
        };
        let completion_word = if to_global { "bulk_group" } else { "mbarrier::complete_tx::bytes" };
        if q.take(&[completion_word]).is_none() {
            return Err(Diagnostic::error(
                self.instr.opcode_span(),
                format!(
                    "`{mnemonic}` to .{} needs the completion mechanism `.{completion_word}`",
                    if to_global { "global" } else { "shared" }
                ),
            ));
        }
        let multicast = q.take(&["multicast::cluster"]);
        if let (Some((_, mspan)), AccessSpace::SharedCta | AccessSpace::Global) = (multicast, dst_space) {
            return Err(Diagnostic::error(mspan, "`.multicast::cluster` needs the destination `.shared::cluster`"));
        }
        let cache_hint = q.take(&["L2::cache_hint"]).is_some();
        q.finish(
            mnemonic,
            ".1d-.5d, the state spaces, .tile, the completion mechanism, .multicast::cluster, .L2::cache_hint, and for reductions .<op>",
        )?;
        let n = if to_global { 2 } else { 3 } + usize::from(multicast.is_some());
        let shape = match (to_global, multicast.is_some()) {
            (true, _) => "[tensorMap, {c0, ...}], [srcMem]",
            (false, false) => "[dstMem], [tensorMap, {c0, ...}], [mbar]",
            (false, true) => "[dstMem], [tensorMap, {c0, ...}], [mbar], ctaMask",
        };
        let all = self.operands(n + usize::from(cache_hint), shape)?;
        let (tensor_op, shared_op) = if to_global { (&all[0], &all[1]) } else { (&all[1], &all[0]) };
        let tensor = self.tensor_operand(tensor_op, rank)?;
        let (size, global, red_type) = match &tensor.map {
            MapOperand::Named(i) => {
                let m = &self.l.tensor_maps[*i];
                if reduce && m.reduction_type().is_none() {
                    return Err(Diagnostic::error(
                        tensor_op.span,
                        format!("`{mnemonic}` on `{}` elements ({}) is not supported by this version of ptxmm", m.elem_type, m.name),
                    )
                    .with_note("tensor reductions are modelled on 32-bit integer elements (u32, s32, b32)"));
                }
                (Value::Const(m.box_bytes()), Address::Location(self.l.variables[m.base].first_location), m.reduction_type())
            }
            // The map, its box and its tensor are known when the copy runs (`exec::trace`); the
            // register holding the map's address is what the copy's global side depends on.
            MapOperand::At(v) => {
                let global = match (v, &tensor_op.node) {
                    (Value::Reg(r), _) => Address::Reg(*r, 0),
                    (_, Operand::TensorAddress(b, _)) => match &b.node {
                        Operand::Name(n) | Operand::AddressOf(n) if self.l.lookup(n).is_some() => {
                            Address::Location(self.l.lookup(n).expect("looked up"))
                        }
                        _ => return Err(Diagnostic::expected(b.span, "a tensor map, a register or a parameter", describe(&b.node))),
                    },
                    _ => unreachable!("tensor_operand checked the operand's shape"),
                };
                (Value::Const(0), global, None)
            }
        };
        let shared = self.address(shared_op)?;
        let (dst, src, src_space) =
            if to_global { (global, shared, AccessSpace::SharedCta) } else { (shared, global, AccessSpace::Global) };
        let completion = if to_global { Completion::Group(GroupKind::Bulk) } else { Completion::Mbarrier(self.mbarrier_address(&all[2])?) };
        let mask = if multicast.is_some() { Some(self.value(&all[3])?) } else { None };
        Ok(Op::AsyncCopy(AsyncCopy {
            kind: op
                // A map resolved at run time has its element type checked there (`exec::trace`).
                .map(|op| CopyKind::Reduce(op, red_type.unwrap_or(RedType::B32)))
                .unwrap_or(CopyKind::Bulk),
            dst,
            dst_space,
            src,
            src_space,
            size,
            src_size: None,
            ignore_src: None,
            multicast: mask,
            byte_mask: None,
            completion,
            tensor: Some(Box::new(tensor)),
        }))
    }

    /// `cp.async.bulk.prefetch.tensor.<n>d.L2.global{.tile} [tmap, {c0, ...}]{, cache-policy}`:
    /// checked, with no memory effect.
    pub(super) fn tensor_prefetch(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let mnemonic = "cp.async.bulk.prefetch.tensor";
        let mut q = Quals::new(rest);
        let rank = self.tensor_shape(&mut q, mnemonic)?;
        if q.take(&["L2"]).is_none() || q.take(&["global"]).is_none() {
            return Err(Diagnostic::error(
                self.instr.opcode_span(),
                format!("the form is `{mnemonic}.<n>d.L2.global{{.tile}} [tensorMap, {{c0, ...}}]`"),
            ));
        }
        let cache_hint = q.take(&["L2::cache_hint"]).is_some();
        q.finish(mnemonic, ".1d-.5d, .L2, .global, .tile, .L2::cache_hint")?;
        let ops = self.operands(1 + usize::from(cache_hint), "[tensorMap, {c0, ...}]")?;
        self.tensor_operand(&ops[0], rank)?;
        Ok(Op::Prefetch { bulk: None })
    }
}
