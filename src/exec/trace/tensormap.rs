//! The tensormap proxy's instructions in a run: `tensormap.replace` (a weak generic write of a
//! field of a tensor-map object), `tensormap.cp_fenceproxy` (a generic copy of the object from
//! shared to global memory, then a release proxy fence) and `fence.proxy.tensormap::generic`.
//!
//! A run also keeps the fields it replaced, per object address, and carries them along its
//! copies: a tensor copy of the same thread whose map operand is such an object uses the map
//! those fields describe (Triton's and FlashAttention's device-side descriptors are built and
//! used by one elected thread). Whether memory still holds them when the copy reads the map is
//! the model's question: the copy's read of the map is an event in the tensormap proxy, and a
//! generic write it is not ordered after by the proxy fences is a finding.

use super::deps::DepMask;
use super::error::ExploreError;
use super::event::{Role, TraceOp};
use super::state::{data_val, Cx, State};
use super::values::{RegVal, SymExpr};
use crate::program::tensor::{elemtype_of_code, swizzle_of_code, MapField, Swizzle, TensorMap};
use crate::program::{unknown, AccessSpace, Address, Value};

/// The size of a tensor-map object (PTX ISA: `.b1024`).
const OBJECT_WORDS: i64 = 32;

impl Cx<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tensormap_replace(
        &self,
        st: &mut State,
        addr: &Address,
        space: AccessSpace,
        field: MapField,
        ord: i64,
        value: &Value,
        pc: usize,
        line: usize,
    ) -> Result<(), ExploreError> {
        let object = self.address_value(st, addr).0;
        let (v, deps) = data_val(st, value);
        // "A weak memory operation on the entire 1024-bit opaque tensor-map object": one write
        // of the object's first word, which stands for the object (the copy's read of a map is
        // a read of that word too). NVIDIA's layout of the fields is opaque, so the word's value
        // is the field's low 32 bits, and the run keeps the fields themselves below.
        let acc = self.access(st, addr, 0, 4, space, line)?;
        if !self.elided[acc.loc] {
            let low = match &v {
                RegVal::Known(x) if !unknown::is_unknown(*x) => RegVal::Known(x & 0xFFFF_FFFF),
                other => other.clone(),
            };
            self.push_write(st, acc, low, deps, pc, Role::Thread, None);
        }
        let known = match v {
            RegVal::Known(x) if !unknown::is_unknown(x) => Some(x),
            _ => None,
        };
        let map = st.built_maps.entry(object).or_default();
        map.fields.insert((field, ord), known);
        map.line = line;
        Ok(())
    }

    /// The copy's 32 word reads and writes (the writes write what the reads read), then the
    /// release proxy fence.
    pub(super) fn tensormap_copy(&self, st: &mut State, dst: &Address, src: &Address, pc: usize, line: usize) -> Result<(), ExploreError> {
        let to = self.address_value(st, dst).0;
        let from = self.address_value(st, src).0;
        for w in 0..OBJECT_WORDS {
            let s = self.access(st, src, 4 * w, 4, AccessSpace::SharedCta, line)?;
            let d = self.access(st, dst, 4 * w, 4, AccessSpace::Global, line)?;
            if self.elided[d.loc] {
                continue;
            }
            let i = st.events.len();
            let mut e = st.access_event(TraceOp::Read, pc, &s, Role::Thread, None);
            e.symbolic = true;
            st.events.push(e);
            self.push_write(st, d, RegVal::Open(SymExpr::Read(i)), DepMask::single(i), pc, Role::Thread, None);
        }
        let f = st.event(TraceOp::Fence, pc);
        st.events.push(f);
        match st.built_maps.get(&from).cloned() {
            Some(m) => st.built_maps.insert(to, m),
            None => st.built_maps.remove(&to),
        };
        Ok(())
    }

    /// A fence event; the acquire half keeps the object's address as its value (`fence-space`).
    pub(super) fn tensormap_fence(&self, st: &mut State, acquire: Option<&Address>, pc: usize) {
        let mut f = st.event(TraceOp::Fence, pc);
        if let Some(a) = acquire {
            f.value = self.address_value(st, a).0;
        }
        st.events.push(f);
    }

    /// The map the run built at `addr` (see the module doc), or None where it built none there.
    pub(super) fn built_map(&self, st: &State, addr: i64, pc: usize, line: usize) -> Result<Option<TensorMap>, ExploreError> {
        let Some(b) = st.built_maps.get(&addr) else { return Ok(None) };
        let Some((variable, offset)) = self.program.decode_address(addr) else { return Ok(None) };
        let at = format!("`{}+{offset}`", crate::program::unknown::short_parameter(&self.program.variables[variable].name));
        let limit = |why: String| {
            self.limit_at(
                pc,
                line,
                format!("the tensor copy's map at {at}, built by this thread (tensormap.replace, line {}): {why}", b.line),
            )
        };
        let get = |f: MapField, ord: i64| -> Result<Option<i64>, ExploreError> {
            match b.fields.get(&(f, ord)) {
                None => Ok(None),
                Some(Some(v)) => Ok(Some(*v)),
                Some(None) => Err(limit(format!("its `{}` is an unknown value", field_name(f, ord)))),
            }
        };
        let need = |f: MapField, ord: i64| -> Result<i64, ExploreError> {
            get(f, ord)?.ok_or_else(|| {
                limit(format!("its `{}` was never replaced (ptxmm builds the map from the fields the thread replaced)", field_name(f, ord)))
            })
        };
        let rank = need(MapField::Rank, 0)? + 1;
        if !(1..=5).contains(&rank) {
            return Err(limit(format!("its rank field {} is no rank 1-5 (the field holds the rank minus one)", rank - 1)));
        }
        let (elem_type, elem) = elemtype_of_code(need(MapField::ElemType, 0)?)
            .ok_or_else(|| limit("its element type code names no type of the PTX ISA's table".into()))?;
        let swizzle = match get(MapField::SwizzleMode, 0)? {
            None => Swizzle::None,
            Some(c) => {
                swizzle_of_code(c).ok_or_else(|| limit(format!("its swizzle mode {c} is not modelled (0-3: none, 32B, 64B, 128B)")))?
            }
        };
        if get(MapField::InterleaveLayout, 0)?.is_some_and(|v| v != 0) {
            return Err(limit("an interleaved layout is not modelled".into()));
        }
        let global = need(MapField::GlobalAddress, 0)?;
        let base = match self.program.decode_address(global) {
            Some((v, 0)) => v,
            Some((v, off)) => {
                return Err(limit(format!(
                    "its global address is byte {off} of `{}`: ptxmm models maps whose global address is the start of a variable",
                    self.program.variables[v].name
                )))
            }
            None => return Err(limit(format!("its global address {global:#x} is the address of no variable"))),
        };
        let mut dims = Vec::new();
        let mut box_dims = Vec::new();
        let mut strides = Vec::new();
        for d in 0..rank {
            dims.push(need(MapField::GlobalDim, d)?);
            box_dims.push(need(MapField::BoxDim, d)?);
            if get(MapField::ElementStride, d)?.is_some_and(|s| s != 1) {
                return Err(limit("element strides other than 1 are not modelled".into()));
            }
            if d + 1 < rank {
                strides.push(need(MapField::GlobalStride, d)?);
            }
        }
        Ok(Some(TensorMap {
            name: format!("{at} (built at line {})", b.line).replace('`', ""),
            variable,
            offset,
            named: false,
            base,
            elem_type: elem_type.to_string(),
            elem,
            dims,
            strides,
            box_dims,
            swizzle,
            span: self.thread.code[pc].span,
        }))
    }
}

/// `.box_dim` ordinal 1, as the instruction writes it.
fn field_name(f: MapField, ord: i64) -> String {
    if f.has_ordinal() {
        format!(".{}` ordinal `{ord}", f.name())
    } else {
        format!(".{}", f.name())
    }
}
