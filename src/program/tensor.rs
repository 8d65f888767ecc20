//! Tensor maps and the tile-mode tensor copies that use them (`cp.async.bulk.tensor`,
//! `cp.reduce.async.bulk.tensor`, `cp.async.bulk.prefetch.tensor`; PTX ISA §5.5, §9.7.9.25.5).
//!
//! A tensor map (a `CUtensorMap`) is declared in the init block
//! (`tmap @ tensormap { base = g; dims = {8, 4}; box = {4, 2}; }`). Its fields are static. The
//! map lives at an object: its own one-word global variable, named by the copies that use it
//! (`[tmap, {x, y}]`), or the 128 bytes at `at = param_0+128` (a kernel parameter, as
//! `__grid_constant__ const CUtensorMap` and CUTLASS's `Params` pass it, or global memory),
//! found at run time from the address a copy's operand holds (`[%rd19, {x, y}]`). A copy first
//! reads the map (the "reading from the tensormap" step of §9.7.9.25) unless it lives in the
//! read-only parameter space, so that a write to it while a copy is in flight is found
//! (`U2-tensor-map-modified-in-flight`).
//!
//! Elements of 1, 2, 4 or 8 bytes are copied a 4-byte word at a time (ptxmm's locations are
//! words): each row of a box covers whole words, which holds for every box whose corner and
//! in-bounds extent are 4-byte aligned in the tensor (a box that splits a word is a limit of
//! the model, said at the copy). A swizzle (§5.5.6: 16-byte chunks of each 128-byte row
//! exchanged by the row's index) changes where in shared memory each 16-byte chunk lands, not
//! the set of bytes the box occupies.

use super::Value;
use crate::diag::Span;

/// Element types a tensor map may have (`CU_TENSOR_MAP_DATA_TYPE_*`, with PTX spellings and
/// the 8-bit float formats a `UINT8` map carries), with their size in bytes.
pub const ELEMENT_TYPES: &[(&str, i64)] = &[
    ("b8", 1),
    ("u8", 1),
    ("s8", 1),
    ("e4m3", 1),
    ("e5m2", 1),
    ("b16", 2),
    ("u16", 2),
    ("s16", 2),
    ("f16", 2),
    ("bf16", 2),
    ("b32", 4),
    ("u32", 4),
    ("s32", 4),
    ("f32", 4),
    ("f32_ftz", 4),
    ("tf32", 4),
    ("tf32_ftz", 4),
    ("b64", 8),
    ("u64", 8),
    ("s64", 8),
    ("f64", 8),
];

/// The size in bytes of a tensor element type, if it is one.
pub fn element_size(ty: &str) -> Option<i64> {
    ELEMENT_TYPES.iter().find(|(n, _)| *n == ty).map(|&(_, size)| size)
}

/// The element types, for messages.
pub fn element_type_names() -> String {
    ELEMENT_TYPES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// The shared-memory swizzle of a tensor map (`CU_TENSOR_MAP_SWIZZLE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swizzle {
    None,
    B32,
    B64,
    B128,
}

impl Swizzle {
    pub fn parse(word: &str) -> Option<Swizzle> {
        Some(match word {
            "none" => Swizzle::None,
            "32B" | "32b" => Swizzle::B32,
            "64B" | "64b" => Swizzle::B64,
            "128B" | "128b" => Swizzle::B128,
            _ => return None,
        })
    }

    /// The mode whose span is `bytes` (0: none).
    pub fn from_span(bytes: i64) -> Option<Swizzle> {
        [Swizzle::None, Swizzle::B32, Swizzle::B64, Swizzle::B128].into_iter().find(|s| s.span() == bytes)
    }

    /// The name `parse` reads.
    pub fn name(self) -> &'static str {
        match self {
            Swizzle::None => "none",
            Swizzle::B32 => "32B",
            Swizzle::B64 => "64B",
            Swizzle::B128 => "128B",
        }
    }

    /// The span whose 16-byte chunks are exchanged (0 without a swizzle).
    pub fn span(self) -> i64 {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 32,
            Swizzle::B64 => 64,
            Swizzle::B128 => 128,
        }
    }

    /// Where the byte a packed box would put at shared address `addr` lands: the 16-byte chunk
    /// index within its span (address bits 4 and up) is XORed with the index of its 128-byte
    /// row modulo the span's chunk count (bits 7 and up), as CUTLASS's `Swizzle<B, 4, 3>`.
    pub fn apply(self, addr: i64) -> i64 {
        let mask = (self.span() / 16 - 1).max(0);
        addr ^ (((addr >> 7) & mask) << 4)
    }
}

/// A declared tensor map: a tensor of `dims` elements of `elem` bytes in the global variable
/// `base`, copied box by box (tile mode, no interleave, zero fill out of bounds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMap {
    pub name: String,
    /// The variable the map lives in: its own (one global word), or the parameter or global
    /// variable of `at`.
    pub variable: usize,
    /// The map's byte offset in `variable` (0 for its own).
    pub offset: i64,
    /// Whether copies name the map itself (`[tmap, {...}]`) rather than an address of it.
    pub named: bool,
    /// The global variable holding the tensor (its byte 0 is element (0, ..., 0)).
    pub base: usize,
    /// Element type as declared (`b32`, `u32`, `f32`, `b64`, ...).
    pub elem_type: String,
    /// Element size in bytes: 1, 2, 4 or 8.
    pub elem: i64,
    /// Extents in elements, innermost dimension first.
    pub dims: Vec<i64>,
    /// Byte strides of dimensions 1.. (`strides[i]` is the stride of dimension `i + 1`).
    pub strides: Vec<i64>,
    /// Box extents in elements, innermost first.
    pub box_dims: Vec<i64>,
    pub swizzle: Swizzle,
    pub span: Span,
}

/// One 4-byte word of a box: its packed byte offset in the box (before the swizzle) and the
/// byte offset in `base` of the tensor word it copies (None: out of bounds, zeros).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoxWord {
    pub packed: i64,
    pub global: Option<i64>,
}

impl TensorMap {
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// The type a tensor reduction over the map's elements reduces: 32-bit integer elements only
    /// (`u32`, `s32`, `b32`), the ones ptxmm models.
    pub fn reduction_type(&self) -> Option<super::RedType> {
        super::RedType::parse(&self.elem_type).filter(|_| matches!(self.elem_type.as_str(), "u32" | "s32" | "b32"))
    }

    /// Bytes of one box: what a copy writes to shared memory (out-of-bounds elements included)
    /// and the transaction count of its complete-tx.
    pub fn box_bytes(&self) -> i64 {
        self.box_dims.iter().product::<i64>() * self.elem
    }

    /// Byte offset in `base` of the element at `coords`, or None when it is out of bounds.
    pub fn element_offset(&self, coords: &[i64]) -> Option<i64> {
        let mut off = 0;
        for (d, (&c, &extent)) in coords.iter().zip(&self.dims).enumerate() {
            if c < 0 || c >= extent {
                return None;
            }
            off += if d == 0 { c * self.elem } else { c * self.strides[d - 1] };
        }
        Some(off)
    }

    /// The words of the box whose first corner is at `corner`, in packed shared-memory order
    /// (innermost dimension fastest); an error naming the limit when a word of the box would
    /// hold both in-bounds bytes and others, or start off a 4-byte boundary of the tensor.
    pub fn box_words(&self, corner: &[i64]) -> Result<Vec<BoxWord>, String> {
        let row_bytes = self.box_dims[0] * self.elem;
        let rows: i64 = self.box_dims[1..].iter().product();
        let mut out = Vec::with_capacity((rows * row_bytes / 4).max(0) as usize);
        for r in 0..rows {
            let mut rest = r;
            let mut row_off = Some(0i64);
            for (d, &corner_d) in corner.iter().enumerate().take(self.rank()).skip(1) {
                let c = corner_d + rest % self.box_dims[d];
                rest /= self.box_dims[d];
                row_off = match row_off {
                    Some(o) if (0..self.dims[d]).contains(&c) => Some(o + c * self.strides[d - 1]),
                    _ => None,
                };
            }
            for w in 0..row_bytes / 4 {
                let packed = r * row_bytes + 4 * w;
                // The elements of this word: [first, last] of dimension 0.
                let first = corner[0] * self.elem + 4 * w;
                let last = first + 3;
                let inside = |b: i64| (0..self.dims[0] * self.elem).contains(&b);
                let global = match row_off {
                    Some(o) if inside(first) && inside(last) => {
                        if first % 4 != 0 {
                            return Err(format!(
                                "the box's row starts at byte {first} of the tensor's row, not on a 4-byte word (ptxmm copies tensors a word at a time)"
                            ));
                        }
                        Some(o + first)
                    }
                    Some(_) if inside(first) || inside(last) => {
                        return Err(format!(
                            "a 4-byte word of the box holds bytes inside and outside the tensor (bytes {first}..{last} of a row of {} bytes): ptxmm copies tensors a word at a time",
                            self.dims[0] * self.elem
                        ))
                    }
                    _ => None,
                };
                out.push(BoxWord { packed, global });
            }
        }
        Ok(out)
    }

    /// The largest byte offset (exclusive) any in-bounds element occupies in `base`.
    pub fn extent_bytes(&self) -> i64 {
        let last: Vec<i64> = self.dims.iter().map(|d| d - 1).collect();
        self.element_offset(&last).map(|o| o + self.elem).unwrap_or(0)
    }
}

/// The tensor map operand of a copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapOperand {
    /// A map named in the operand: an index into `Program::tensor_maps`.
    Named(usize),
    /// The address of a map (a register or a variable's address), resolved when the copy runs.
    At(Value),
}

/// The tensor part of an asynchronous copy: which tensor map, and the box's coordinates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorCopy {
    pub map: MapOperand,
    /// The copy's rank (`.1d` to `.5d`), which a map resolved at run time must have.
    pub rank: usize,
    /// One coordinate per dimension, innermost first (signed, in elements).
    pub coords: Vec<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map() -> TensorMap {
        TensorMap {
            name: "t".into(),
            variable: 0,
            offset: 0,
            named: true,
            base: 1,
            elem_type: "b32".into(),
            elem: 4,
            dims: vec![6, 3],
            strides: vec![32],
            box_dims: vec![4, 2],
            swizzle: Swizzle::None,
            span: Span::default(),
        }
    }

    #[test]
    fn box_words_follow_the_elements_and_reject_split_words() {
        let mut m = map();
        let words: Vec<_> = m.box_words(&[4, 2]).unwrap();
        assert_eq!(words.len(), 8);
        assert_eq!(words[0], BoxWord { packed: 0, global: Some(64 + 16) });
        assert_eq!(words[2], BoxWord { packed: 8, global: None });
        // Two-byte elements: a word holds two of them.
        m.elem = 2;
        m.box_dims = vec![8, 1];
        let w = m.box_words(&[0, 1]).unwrap();
        assert_eq!(w.iter().map(|b| b.global).collect::<Vec<_>>(), vec![Some(32), Some(36), Some(40), None]);
        assert!(m.box_words(&[1, 0]).is_err(), "a corner off a word");
        m.dims = vec![5, 3];
        assert!(m.box_words(&[0, 0]).is_err(), "a word split by the tensor's end");
    }

    #[test]
    fn swizzle_exchanges_chunks_within_a_row() {
        assert_eq!(Swizzle::None.apply(0x90), 0x90);
        // Row 1 (bytes 128..255) under 128B: chunk c goes to c ^ 1.
        assert_eq!(Swizzle::B128.apply(128), 128 + 16);
        assert_eq!(Swizzle::B128.apply(128 + 16 + 4), 128 + 4);
        assert_eq!(Swizzle::B128.apply(7 * 128), 7 * 128 + 7 * 16);
        assert_eq!(Swizzle::B64.apply(7 * 128), 7 * 128 + 3 * 16);
        assert_eq!(Swizzle::B32.apply(128 + 16), 128);
        // Row 8 repeats row 0.
        assert_eq!(Swizzle::B128.apply(1024 + 32), 1024 + 32);
    }

    #[test]
    fn box_elements_are_packed_innermost_first_and_clipped() {
        let m = map();
        assert_eq!(m.box_bytes(), 32);
        assert_eq!(m.extent_bytes(), 2 * 32 + 6 * 4);
        let globals = |corner: &[i64]| m.box_words(corner).unwrap().into_iter().map(|w| w.global).collect::<Vec<_>>();
        let e = globals(&[4, 2]);
        assert_eq!(e, vec![Some(64 + 16), Some(64 + 20), None, None, None, None, None, None]);
        assert_eq!(globals(&[-1, 0])[..2], [None, Some(0)]);
    }
}

/// A field of a tensor-map object that `tensormap.replace` writes (PTX ISA, `tensormap.replace`:
/// `.field1 = { .global_address, .rank }`, `.field2 = { .box_dim, .global_dim, .global_stride,
/// .element_stride }` with an ordinal, `.field3 = { .elemtype, .interleave_layout, .swizzle_mode,
/// .swizzle_atomicity, .fill_mode }`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MapField {
    GlobalAddress,
    Rank,
    BoxDim,
    GlobalDim,
    GlobalStride,
    ElementStride,
    ElemType,
    InterleaveLayout,
    SwizzleMode,
    SwizzleAtomicity,
    FillMode,
}

impl MapField {
    /// Every field with its name in the instruction (`.global_address`, ...).
    pub const NAMES: [(&'static str, MapField); 11] = [
        ("global_address", MapField::GlobalAddress),
        ("rank", MapField::Rank),
        ("box_dim", MapField::BoxDim),
        ("global_dim", MapField::GlobalDim),
        ("global_stride", MapField::GlobalStride),
        ("element_stride", MapField::ElementStride),
        ("elemtype", MapField::ElemType),
        ("interleave_layout", MapField::InterleaveLayout),
        ("swizzle_mode", MapField::SwizzleMode),
        ("swizzle_atomicity", MapField::SwizzleAtomicity),
        ("fill_mode", MapField::FillMode),
    ];

    pub fn parse(name: &str) -> Option<MapField> {
        Self::NAMES.iter().find(|(n, _)| *n == name).map(|&(_, f)| f)
    }

    /// The field's name in the instruction.
    pub fn name(self) -> &'static str {
        Self::NAMES.iter().find(|(_, f)| *f == self).map_or("", |(n, _)| n)
    }

    /// Whether the field takes an ordinal (a dimension) before the new value.
    pub fn has_ordinal(self) -> bool {
        matches!(self, MapField::BoxDim | MapField::GlobalDim | MapField::GlobalStride | MapField::ElementStride)
    }

    /// The value's width: 64 bits for the address and the strides, else 32.
    pub fn bits(self) -> u32 {
        if matches!(self, MapField::GlobalAddress | MapField::GlobalStride) {
            64
        } else {
            32
        }
    }

    /// The ordinals the field has: dimensions 0-4, strides of dimensions 1-4 (ordinals 0-3).
    pub fn ordinals(self) -> i64 {
        match self {
            MapField::GlobalStride => 4,
            f if f.has_ordinal() => 5,
            _ => 1,
        }
    }
}

/// The element type of `tensormap.replace.elemtype`'s encoding (PTX ISA, `tensormap.replace`,
/// the tensor-map element types): its name and size in bytes.
pub fn elemtype_of_code(code: i64) -> Option<(&'static str, i64)> {
    Some(match code {
        0 => ("u8", 1),
        1 => ("u16", 2),
        2 => ("u32", 4),
        3 => ("s32", 4),
        4 => ("u64", 8),
        5 => ("s64", 8),
        6 => ("f16", 2),
        7 => ("f32", 4),
        8 => ("f64", 8),
        9 => ("bf16", 2),
        10 => ("f32", 4),
        11 => ("tf32", 4),
        12 => ("tf32", 4),
        _ => return None,
    })
}

/// The swizzle of `tensormap.replace.swizzle_mode`'s encoding: 0 none, 1 32B, 2 64B, 3 128B.
pub fn swizzle_of_code(code: i64) -> Option<Swizzle> {
    Swizzle::parse(match code {
        0 => "none",
        1 => "32B",
        2 => "64B",
        3 => "128B",
        _ => return None,
    })
}
