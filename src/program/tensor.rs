//! Tensor maps and the tile-mode tensor copies that use them (`cp.async.bulk.tensor`,
//! `cp.reduce.async.bulk.tensor`, `cp.async.bulk.prefetch.tensor`; PTX ISA §5.5, §9.7.9.25.5).
//!
//! A tensor map (a `CUtensorMap`) is declared in the init block
//! (`tmap @ tensormap { base = g; dims = {8, 4}; box = {4, 2}; }`). Its fields are static; the
//! map itself is also a one-word global variable, read by every copy that uses it (the
//! "reading from the tensormap" step of §9.7.9.25), so that a write to it while a copy is in
//! flight is found (`U2-tensor-map-modified-in-flight`).

use super::Value;
use crate::diag::Span;

/// A declared tensor map: a tensor of `dims` elements of `elem` bytes in the global variable
/// `base`, copied box by box (tile mode, no swizzle, no interleave, zero fill out of bounds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMap {
    pub name: String,
    /// The tensor map's own variable (one global word, read by each copy that uses it).
    pub variable: usize,
    /// The global variable holding the tensor (its byte 0 is element (0, ..., 0)).
    pub base: usize,
    /// Element type as declared (`b32`, `u32`, `f32`, `b64`, ...).
    pub elem_type: String,
    /// Element size in bytes: 4 or 8.
    pub elem: i64,
    /// Extents in elements, innermost dimension first.
    pub dims: Vec<i64>,
    /// Byte strides of dimensions 1.. (`strides[i]` is the stride of dimension `i + 1`).
    pub strides: Vec<i64>,
    /// Box extents in elements, innermost first.
    pub box_dims: Vec<i64>,
    pub span: Span,
}

impl TensorMap {
    pub fn rank(&self) -> usize {
        self.dims.len()
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

    /// The elements of the box whose first corner is at `corner`, in shared-memory order (the
    /// box is packed, innermost dimension fastest): each element's byte offset in `base`, or
    /// None for an element out of bounds (filled with zeros, not read).
    pub fn box_elements(&self, corner: &[i64]) -> Vec<Option<i64>> {
        let total: i64 = self.box_dims.iter().product();
        (0..total)
            .map(|k| {
                let mut rest = k;
                let coords: Vec<i64> = self
                    .box_dims
                    .iter()
                    .zip(corner)
                    .map(|(&b, &c)| {
                        let i = rest % b;
                        rest /= b;
                        c + i
                    })
                    .collect();
                self.element_offset(&coords)
            })
            .collect()
    }

    /// The largest byte offset (exclusive) any in-bounds element occupies in `base`.
    pub fn extent_bytes(&self) -> i64 {
        let last: Vec<i64> = self.dims.iter().map(|d| d - 1).collect();
        self.element_offset(&last).map(|o| o + self.elem).unwrap_or(0)
    }
}

/// The tensor part of an asynchronous copy: which tensor map, and the box's coordinates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorCopy {
    /// Index into `Program::tensor_maps`.
    pub map: usize,
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
            base: 1,
            elem_type: "b32".into(),
            elem: 4,
            dims: vec![6, 3],
            strides: vec![32],
            box_dims: vec![4, 2],
            span: Span::default(),
        }
    }

    #[test]
    fn box_elements_are_packed_innermost_first_and_clipped() {
        let m = map();
        assert_eq!(m.box_bytes(), 32);
        assert_eq!(m.extent_bytes(), 2 * 32 + 6 * 4);
        let e = m.box_elements(&[4, 2]);
        assert_eq!(e, vec![Some(64 + 16), Some(64 + 20), None, None, None, None, None, None]);
        assert_eq!(m.box_elements(&[-1, 0])[..2], [None, Some(0)]);
    }
}
