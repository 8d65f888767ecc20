//! Tensor maps on the device (`docs/hardware.md`, "Tensor maps"): each instance's maps are
//! encoded on the host with `cuTensorMapEncodeTiled` (obtained at run time through the CUDA
//! runtime's driver entry point, so no `-lcuda` is needed) into the instance's own global block,
//! at the place of the map's one-word variable, which the harness widens to a 128-byte,
//! 128-aligned `CUtensorMap`. What cannot be generated faithfully is rejected here.

use super::{reject, HwTest, Rejection};
use crate::config::Config;
use crate::litmus::ast::{InitItem, Operand, Statement};
use crate::program::{Address, Op, Program, Space};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Bytes of a `CUtensorMap` (and its alignment in the instance block; the driver needs 64).
pub const TENSOR_MAP_BYTES: i64 = 128;

/// Alignment the tensor unit needs of a box in shared memory (CUDA programming guide, TMA
/// alignment requirements: shared-memory address 128 bytes).
const SHARED_BOX_ALIGN: i64 = 128;

/// The model's rule for a tensor map written while a copy that reads it is in flight.
const IN_FLIGHT_RULE: &str = "U2-tensor-map-modified-in-flight";

/// `CUtensorMapDataType` of a declared element type, or why it is not generated.
fn data_type(elem_type: &str) -> Result<&'static str, &'static str> {
    Ok(match elem_type {
        "b32" | "u32" => "CU_TENSOR_MAP_DATA_TYPE_UINT32",
        "s32" => "CU_TENSOR_MAP_DATA_TYPE_INT32",
        "f32" => "CU_TENSOR_MAP_DATA_TYPE_FLOAT32",
        "b64" | "u64" => "CU_TENSOR_MAP_DATA_TYPE_UINT64",
        "s64" => "CU_TENSOR_MAP_DATA_TYPE_INT64",
        "f64" => "CU_TENSOR_MAP_DATA_TYPE_FLOAT64",
        "tf32" => {
            return Err("the tensor unit's TFLOAT32 format is not known to copy every 32-bit pattern unchanged (the model's \
                        small integer values are tf32 denormals whose low mantissa bits tf32 drops); declare `type = f32` or `b32`")
        }
        "b8" | "u8" | "s8" | "e4m3" | "e5m2" | "b16" | "u16" | "s16" | "f16" | "bf16" => {
            return Err("the harness's tensors are 32-bit words: elements of 1 or 2 bytes are not generated")
        }
        _ => return Err("no CUtensorMapDataType for this element type"),
    })
}

/// Checks that the test's tensor maps and tensor copies have a faithful device form; whether a
/// store to a map can meet a copy in flight is decided under `config`.
pub fn check(test: &HwTest, config: &Config) -> Result<(), Rejection> {
    let p = test.program;
    if p.tensor_maps.is_empty() {
        return Ok(());
    }
    for m in &p.tensor_maps {
        if let Err(why) = data_type(&m.elem_type) {
            return Err(reject(p, m.span, format!("tensor map `{}` of `{}` elements: {why}", m.name, m.elem_type)));
        }
        // The harness's descriptor table encodes unswizzled maps in their own words.
        if m.swizzle != crate::program::Swizzle::None {
            return Err(reject(p, m.span, format!("tensor map `{}` is swizzled: the harness encodes maps without a swizzle", m.name)));
        }
        if !m.named {
            return Err(reject(
                p,
                m.span,
                format!(
                    "tensor map `{}` lives in a parameter or a global variable (`at`): the harness gives each map its own word",
                    m.name
                ),
            ));
        }
    }
    check_shared_boxes(p)?;
    // The map's word is the encoded descriptor on the device: a read of it sees descriptor bits
    // (not the model's value), an address of it escapes the checks below.
    let is_map = |n: &str| p.tensor_maps.iter().find(|m| m.name == n);
    for item in &test.ast.init {
        if let InitItem::RegisterAddress { location, .. } = &item.node {
            if let Some(m) = is_map(&location.node) {
                return Err(reject(
                    p,
                    item.span,
                    format!("a register holding the address of tensor map `{}` is not generated (its accesses cannot be checked)", m.name),
                ));
            }
        }
    }
    let mut stores = Vec::new();
    for (t, code) in test.ast.code.iter().enumerate() {
        for st in code {
            let Statement::Instr(ins) = &st.node else { continue };
            for o in &ins.operands {
                let named = match &o.node {
                    Operand::Name(n) | Operand::AddressOf(n) => n,
                    Operand::Address(inner, _) => match &inner.node {
                        Operand::Name(n) => n,
                        _ => continue,
                    },
                    _ => continue,
                };
                let Some(m) = is_map(named) else { continue };
                if ins.opcode[0].node != "st" {
                    return Err(reject(
                        p,
                        st.span,
                        format!(
                            "instruction `{}` accesses tensor map `{}`'s word: on the device that word is the encoded descriptor, \
                             whose bits are not the model's value (only stores to a map are generated)",
                            ins.mnemonic(),
                            m.name
                        ),
                    ));
                }
                stores.push((t, st.span, m));
            }
        }
    }
    if stores.is_empty() {
        return Ok(());
    }
    // A store to a map corrupts the descriptor: generated only where no use of the map can
    // read it afterwards, i.e. where the model finds no copy in flight (U2) and no prefetch
    // (which the model gives no memory effect, but which reads the descriptor on the device).
    for &(_, span, m) in &stores {
        if let Some(pf) = prefetch_of(test, &m.name) {
            let (line, col) = p.source.line_col(pf.start);
            return Err(reject(
                p,
                span,
                format!(
                    "a store to tensor map `{}` while the prefetch at {line}:{col} may read it: the model gives a prefetch no memory \
                     effect, but on the device it reads the descriptor, and a corrupted descriptor may fault the whole launch",
                    m.name
                ),
            ));
        }
    }
    let outcome = crate::decide::Decider::new(config).verdict(p).map_err(|e| {
        reject(p, stores[0].1, format!("the model cannot decide whether the store to a tensor map is in flight ({e}); not generated"))
    })?;
    if let Some(f) = outcome.undefined.iter().find(|f| f.rule == IN_FLIGHT_RULE) {
        let span = stores.iter().find(|(t, _, _)| f.sites.iter().any(|s| s.thread == p.threads[*t].name())).map(|s| s.1);
        return Err(reject(
            p,
            span.unwrap_or(stores[0].1),
            format!(
                "a store to a tensor map while a copy that reads it is in flight ({IN_FLIGHT_RULE}, undefined): the device \
                 would read a half-written descriptor, which may fault the whole launch"
            ),
        ));
    }
    if let Some(why) = &outcome.incomplete {
        // A limit stopped the search before every execution was seen: a copy in flight may
        // be among those not seen.
        return Err(reject(
            p,
            stores[0].1,
            format!("the model could not decide whether the store to a tensor map is in flight ({why}); not generated"),
        ));
    }
    Ok(())
}

/// The first `cp.async.bulk.prefetch.tensor` of the test on map `name`.
fn prefetch_of(test: &HwTest, name: &str) -> Option<crate::diag::Span> {
    test.ast.code.iter().flatten().find_map(|st| match &st.node {
        Statement::Instr(ins)
            if ins.mnemonic().starts_with("cp.async.bulk.prefetch.tensor")
                && ins
                    .operands
                    .iter()
                    .any(|o| matches!(&o.node, Operand::TensorAddress(b, _) if matches!(&b.node, Operand::Name(n) if n == name))) =>
        {
            Some(st.span)
        }
        _ => None,
    })
}

/// Every tensor copy's shared-memory box is 128-byte aligned in the harness's layout (the
/// shared window is 128-aligned and holds the model's offsets).
fn check_shared_boxes(p: &Program) -> Result<(), Rejection> {
    for th in &p.threads {
        for ins in &th.code {
            let Op::AsyncCopy(c) = &ins.op else { continue };
            if c.tensor.is_none() {
                continue;
            }
            let shared = match (&c.dst, &c.src) {
                (d, _) if !matches!(c.dst_space, crate::program::AccessSpace::Global) => d,
                (_, s) => s,
            };
            let Address::Location(l) = shared else {
                return Err(reject(
                    p,
                    ins.span,
                    "a tensor copy whose shared-memory box is addressed by a register: its 128-byte alignment cannot be checked",
                ));
            };
            let loc = &p.locations[*l];
            let off = p.window_offset(loc.variable).unwrap_or(0) + loc.offset;
            if off % SHARED_BOX_ALIGN != 0 {
                return Err(reject(
                    p,
                    ins.span,
                    format!(
                        "the tensor copy's shared-memory box `{}` is at byte {off} of the CTA's shared window; the tensor unit needs \
                         {SHARED_BOX_ALIGN}-byte alignment (declare the box first, or with `align {SHARED_BOX_ALIGN}`)",
                        p.location_name(*l)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The host table of the test's tensor maps (`TensorMapDesc` of the prelude), and the device
/// lines that acquire them before the test (`fence.proxy.tensormap::generic.acquire.sys`: the
/// host wrote the descriptors with cudaMemcpy before the launch; CUDA programming guide).
pub fn host_table(p: &Program, global_off: &BTreeMap<usize, i64>) -> (String, Vec<String>) {
    let mut s = String::new();
    let mut acquire = Vec::new();
    if p.tensor_maps.is_empty() {
        return (s, acquire);
    }
    let _ = writeln!(s, "// tensor maps: {{map offset, tensor offset (in the instance block), data type, rank, dims, byte strides, box}}");
    let mut rows = Vec::new();
    for m in &p.tensor_maps {
        let list = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
        let map_off = global_off[&m.variable];
        rows.push(format!(
            "  {{{map_off}, {}, {}, {}, {{{}}}, {{{}}}, {{{}}}}}, // {}",
            global_off[&m.base],
            data_type(&m.elem_type).unwrap_or("CU_TENSOR_MAP_DATA_TYPE_UINT32"),
            m.rank(),
            list(&m.dims),
            if m.strides.is_empty() { "0".to_string() } else { list(&m.strides) },
            list(&m.box_dims),
            m.name
        ));
        acquire.push(format!("    tensormap_acquire(gbase + {map_off}); // {}", m.name));
    }
    let _ = writeln!(s, "static const TensorMapDesc kTensorMaps[] = {{\n{}\n}};", rows.join("\n"));
    (s, acquire)
}

/// Whether a global variable is a tensor map's (the harness gives it a whole `CUtensorMap`).
pub fn is_map_variable(p: &Program, var: usize) -> bool {
    p.variables[var].space == Space::Global && p.is_tensor_map(var)
}
