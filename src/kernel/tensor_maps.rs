//! Tensor maps a kernel receives (`__grid_constant__ const CUtensorMap`, a `CUtensorMap` inside
//! CUTLASS's `Params` or ThunderKittens' globals), described as the host described them to
//! `cuTensorMapEncodeTiled`: `--tensor-map NAME[+OFF]=TYPE,DIMS,box=BOX[,stride=S][,swizzle=W]`.
//! Each becomes an init item `m @ tensormap { at = NAME+OFF; ... }` of the kernel's litmus test
//! over a fresh global buffer holding the tensor (or the buffer `base=` names), so that a
//! `cp.async.bulk.tensor` whose map operand holds the parameter's address copies that box.
//! A map no flag describes stays unknown: a copy that uses it stops at its line, naming the flag.

use super::module::Param;
use super::params::buffer_name;
use crate::program::tensor::{self, Swizzle};

/// The most bytes of a tensor's own buffer (as a `--param` buffer's).
const MAX_TENSOR_BYTES: i64 = 4 << 20;

/// The keys of a description after its type and dimensions.
const KEYS: &str = "box, stride, swizzle, elemstride, interleave, oob, l2, base";

/// One described map: its init items and the line of the report that says what it is.
#[derive(Clone, Debug)]
pub struct MapBinding {
    pub init: Vec<String>,
    pub description: String,
}

/// `AxBxC` (or one number): positive integers, innermost first.
fn extents(flag: &str, what: &str, text: &str) -> Result<Vec<i64>, String> {
    text.split('x')
        .map(|p| p.trim().parse::<i64>().ok().filter(|&v| v > 0))
        .collect::<Option<Vec<_>>>()
        .filter(|v| !v.is_empty() && v.len() <= 5)
        .ok_or_else(|| format!("--tensor-map {flag}: expected {what} as 1 to 5 positive numbers `AxBxC`, innermost first, found `{text}`"))
}

/// Bind every `--tensor-map NAME[+OFF]=DESC` of `given`.
pub fn bind(params: &[Param], given: &[(String, String)]) -> Result<Vec<MapBinding>, String> {
    let mut seen: Vec<(usize, u64)> = Vec::new();
    let mut out = Vec::new();
    for (name, desc) in given {
        let (base, offset) = match name.rsplit_once('+') {
            Some((b, o)) => (
                b.trim(),
                o.trim()
                    .parse::<u64>()
                    .map_err(|_| format!("--tensor-map {name}: expected NAME+OFFSET with a byte offset, found `+{o}`"))?,
            ),
            None => (name.trim(), 0),
        };
        let Some(k) = params.iter().position(|p| p.name == base || buffer_name(&p.name) == base) else {
            let names: Vec<String> = params.iter().map(|p| buffer_name(&p.name)).collect();
            return Err(format!("--tensor-map {name}: the kernel has no such parameter; its parameters: {}", names.join(", ")));
        };
        let p = &params[k];
        let short = buffer_name(&p.name);
        let flag = format!("{short}+{offset}");
        let size = p.count * crate::program::Ty::parse(&p.ty).map_or(1, |t| u64::from(t.bits / 8).max(1));
        if p.count <= 1 || offset % 64 != 0 || offset + 128 > size {
            return Err(format!(
                "--tensor-map {flag}: a tensor map is the 128 bytes of a CUtensorMap, 64-byte aligned, inside an aggregate parameter (`.param .align 64 .b8 NAME[128]`), and `{}` is {}",
                p.name,
                if p.count <= 1 { format!("a scalar .{}", p.ty) } else { format!("{size} bytes") }
            ));
        }
        if seen.contains(&(k, offset)) {
            return Err(format!("--tensor-map {flag} is given twice"));
        }
        seen.push((k, offset));
        out.push(bind_one(p, &short, offset, &flag, desc)?);
    }
    Ok(out)
}

fn bind_one(p: &Param, short: &str, offset: u64, flag: &str, desc: &str) -> Result<MapBinding, String> {
    let mut parts = desc.split(',').map(str::trim);
    let ty = parts
        .next()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| format!("--tensor-map {flag}: expected TYPE,DIMS,box=BOX,..., found `{desc}`"))?;
    let elem = tensor::element_size(ty)
        .ok_or_else(|| format!("--tensor-map {flag}: expected an element type ({}), found `{ty}`", tensor::element_type_names()))?;
    let dims_text =
        parts.next().ok_or_else(|| format!("--tensor-map {flag}: expected the tensor's dimensions after the type (`{ty},64x512,...`)"))?;
    let dims = extents(flag, "the dimensions", dims_text)?;
    let rank = dims.len();
    let (mut box_dims, mut strides, mut swizzle, mut base) = (None, None, Swizzle::None, None);
    for part in parts {
        let Some((key, value)) = part.split_once('=') else {
            return Err(format!("--tensor-map {flag}: expected KEY=VALUE ({KEYS}), found `{part}`"));
        };
        let value = value.trim();
        match key.trim() {
            "box" => box_dims = Some(extents(flag, "the box", value)?),
            "stride" | "strides" => strides = Some(extents(flag, "the byte strides", value)?),
            "swizzle" => {
                // `swizzle=128B`, or its span alone (`128`, `0`).
                swizzle = Swizzle::parse(value).or_else(|| value.parse().ok().and_then(Swizzle::from_span)).ok_or_else(|| {
                    format!(
                        "--tensor-map {flag}: expected swizzle=none|32B|64B|128B, found `{value}` (the 128B swizzles with 32- or 64-byte atoms are not modelled)"
                    )
                })?
            }
            "elemstride" | "elementstrides" => {
                if extents(flag, "the element strides", value)?.iter().any(|&s| s != 1) {
                    return Err(format!("--tensor-map {flag}: element strides other than 1 are not modelled by this version of ptxmm"));
                }
            }
            "interleave" if value == "none" => {}
            "interleave" => {
                return Err(format!(
                    "--tensor-map {flag}: interleaved layouts (`interleave={value}`) are not modelled by this version of ptxmm"
                ))
            }
            "oob" if matches!(value, "zero" | "none") => {}
            "oob" => {
                return Err(format!(
                    "--tensor-map {flag}: out-of-bounds fills other than zeros (`oob={value}`) are not modelled by this version of ptxmm"
                ))
            }
            // L2 promotion is a cache hint.
            "l2" => {}
            "base" => base = Some(value.to_string()),
            other => return Err(format!("--tensor-map {flag}: unknown key `{other}` (the keys: {KEYS})")),
        }
    }
    let box_dims = box_dims.ok_or_else(|| format!("--tensor-map {flag}: give the box (`box=64x128`): the boxDim the host passed"))?;
    if box_dims.len() != rank {
        return Err(format!("--tensor-map {flag}: the box has {} extent(s), the tensor {rank} dimension(s)", box_dims.len()));
    }
    // Packed strides unless given: each dimension's rows follow the one inside it.
    let strides = match strides {
        Some(s) if s.len() + 1 != rank => {
            return Err(format!(
                "--tensor-map {flag}: give {} byte stride(s), one per dimension after the first; found {}",
                rank - 1,
                s.len()
            ))
        }
        Some(s) => s,
        None => {
            let mut s = Vec::new();
            let mut extent = dims[0] * elem;
            for &d in &dims[1..] {
                s.push(extent);
                extent = extent.saturating_mul(d);
            }
            s
        }
    };
    let extent = dims.iter().zip(std::iter::once(&elem).chain(&strides)).map(|(&d, &st)| (d - 1).saturating_mul(st)).sum::<i64>() + elem;
    let list = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
    let map_name = format!("tmap_{short}_{offset}");
    let mut init = Vec::new();
    let base = match base {
        Some(b) => b,
        None => {
            if extent > MAX_TENSOR_BYTES {
                return Err(format!(
                    "--tensor-map {flag}: the tensor spans {extent} bytes, more than the {MAX_TENSOR_BYTES} bytes of a buffer; check smaller dimensions (the same kernel on a smaller problem)"
                ));
            }
            let buf = format!("tensor_{short}_{offset}");
            init.push(format!(".global .align 128 .b32 {buf}[{}];", (extent + 3) / 4));
            buf
        }
    };
    // A 1-D tensor has no strides.
    let strides_field = if strides.is_empty() { String::new() } else { format!(" strides = {{{}}};", list(&strides)) };
    init.push(format!(
        "{map_name} @ tensormap {{ at = {}+{offset}; base = {base}; type = {ty}; dims = {{{}}};{strides_field} box = {{{}}}; swizzle = {}; }};",
        p.name,
        list(&dims),
        list(&box_dims),
        swizzle.name()
    ));
    let dims_x = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join("x");
    Ok(MapBinding {
        init,
        description: format!(
            "{flag}: a tensor map of {ty} {} (byte strides {}), box {}, swizzle {}, over `{base}` (--tensor-map)",
            dims_x(&dims),
            if strides.is_empty() { "none".to_string() } else { dims_x(&strides) },
            dims_x(&box_dims),
            swizzle.name()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Vec<Param> {
        vec![
            Param { name: "k_param_0".into(), ty: "b8".into(), count: 512, align: Some(128), span: Default::default() },
            Param { name: "k_param_1".into(), ty: "u32".into(), count: 1, align: None, span: Default::default() },
        ]
    }

    #[test]
    fn a_description_becomes_a_map_at_the_parameter_over_its_own_tensor() {
        let b = bind(&params(), &[("param_0+128".into(), "bf16,320x256,box=64x128,swizzle=128B".into())]).unwrap();
        assert_eq!(
            b[0].init,
            vec![
                ".global .align 128 .b32 tensor_param_0_128[40960];".to_string(),
                "tmap_param_0_128 @ tensormap { at = k_param_0+128; base = tensor_param_0_128; type = bf16; dims = {320, 256}; strides = {640}; box = {64, 128}; swizzle = 128B; };".to_string(),
            ]
        );
        assert!(b[0].description.contains("bf16 320x256"), "{}", b[0].description);
        let one = bind(&params(), &[("param_0+256".into(), "f32,768,box=64".into())]).unwrap();
        assert!(one[0].init[1].contains("dims = {768}; box = {64};"), "{}", one[0].init[1]);
    }

    #[test]
    fn bad_descriptions_say_what_is_expected() {
        let e = |name: &str, d: &str| bind(&params(), &[(name.into(), d.into())]).unwrap_err();
        assert!(e("param_0+64", "f16,8x8").contains("give the box"));
        assert!(e("param_0+32", "f16,8x8,box=8x8").contains("64-byte aligned"));
        assert!(e("param_1", "f16,8x8,box=8x8").contains("a scalar .u32"));
        assert!(e("param_0", "f17,8x8,box=8x8").contains("expected an element type"));
        assert!(e("param_0", "f16,8x8,box=8").contains("the box has 1 extent(s)"));
        assert!(e("param_0", "f16,8x8,box=8x8,swizzle=128B_atom_32B").contains("not modelled"));
        assert!(e("param_0", "f16,8x8,box=8x8,color=red").contains("unknown key `color`"));
        assert!(e("param_0", "f16,4096x4096,box=64x64").contains("more than the"));
        assert!(e("param_9", "f16,8,box=8").contains("no such parameter"));
        let twice = bind(&params(), &[("param_0".into(), "f16,8,box=8".into()), ("param_0+0".into(), "f16,8,box=8".into())]);
        assert!(twice.unwrap_err().contains("given twice"));
    }
}
