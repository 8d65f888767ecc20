//! `ldmatrix` and `stmatrix` (PTX ISA, Warp Level Matrix Multiply-Accumulate Instructions:
//! "Warp-level matrix load instruction: ldmatrix" and "Warp-level matrix store instruction:
//! stmatrix"), one lane at a time.
//!
//! A warp loads (stores) one, two or four matrices together. "The eight addresses required for
//! each matrix are provided by eight threads, depending upon the value of .num ... Each address
//! corresponds to the start of a matrix row": lane L supplies row L mod R of matrix L / R (R the
//! rows per matrix), for the lanes below R × num; the other lanes' addresses are not used. Every
//! shape's row is 16 bytes: 8 `.b16` elements (`.m8n8`), 16 `.b8` elements (`.m16n16`, whose
//! `.trans` makes its columns the 16 rows in memory), 16 6- or 4-bit elements with their padding
//! (`.m8n16`), the 16-byte columns of a `.trans` `.m16n8`. So in a model where each thread is one
//! lane, a lane's memory effect is a read (a write) of the 16 bytes at its own row address, "a
//! weak memory operation in the Memory Consistency Model" of the shared state space. Its
//! registers exchange fragments with the other lanes' rows ("each thread in a warp loads
//! fragments of a row"), which a model of some lanes does not compute: what `ldmatrix` puts in
//! the registers, and what `stmatrix` writes to the lane's row (fragments of other lanes'
//! registers), are unknown values (`program::unknown`) of the instruction's origin
//! ([`MatrixAccess::origin`]).

use super::{AccessSpace, Address, Reg, Value};

/// Bytes of one matrix row in shared memory, for every shape.
pub const ROW_BYTES: i64 = 16;

/// `.shape` of `ldmatrix` / `stmatrix`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatrixShape {
    /// `.m8n8` with `.b16` elements.
    M8n8,
    /// `.m16n16` (`ldmatrix`, `.b8`, `.trans` mandatory).
    M16n16,
    /// `.m8n16` (`ldmatrix`, `.b8x16` from `.b6x16_p32` or `.b4x16_p64`).
    M8n16,
    /// `.m16n8` (`stmatrix`, `.b8`, `.trans` mandatory).
    M16n8,
}

impl MatrixShape {
    pub fn name(self) -> &'static str {
        match self {
            MatrixShape::M8n8 => "m8n8",
            MatrixShape::M16n16 => "m16n16",
            MatrixShape::M8n16 => "m8n16",
            MatrixShape::M16n8 => "m16n8",
        }
    }

    /// The 16-byte rows in memory of one matrix: the threads that supply its addresses.
    pub fn rows(self) -> u32 {
        match self {
            MatrixShape::M16n16 => 16,
            MatrixShape::M8n8 | MatrixShape::M8n16 | MatrixShape::M16n8 => 8,
        }
    }

    /// The 32-bit registers of the vector operand per matrix (`.m16n16`: two, four 8-bit
    /// elements each; every other shape one).
    pub fn registers_per_matrix(self) -> usize {
        match self {
            MatrixShape::M16n16 => 2,
            _ => 1,
        }
    }
}

/// One lane's `ldmatrix` (`store` false) or `stmatrix`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixAccess {
    pub store: bool,
    pub shape: MatrixShape,
    /// `.x1`, `.x2`, `.x4`.
    pub num: u32,
    pub trans: bool,
    /// The address of this lane's row; None when this lane supplies none for `.num` (it then
    /// accesses no memory of its own).
    pub row: Option<Address>,
    pub space: AccessSpace,
    /// `ldmatrix`: the destination registers, in order.
    pub dsts: Vec<Reg>,
    /// `stmatrix`: the source registers, in order.
    pub srcs: Vec<Value>,
    /// The origin (`Program::unknowns`) of the unknown values the access gives: the fragments
    /// `ldmatrix` puts in `dsts`, the words `stmatrix` writes to the row.
    pub origin: u32,
}

/// Whether lane `lane` supplies a row address of a `.num` access of `shape` (lanes 0-7 for
/// `.m8n8.x1`, 0-15 for `.x2`, 0-31 for `.x4`; twice as many rows per matrix for `.m16n16`).
pub fn supplies_row(shape: MatrixShape, num: u32, lane: u32) -> bool {
    lane < shape.rows() * num
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_that_supply_rows() {
        assert!(supplies_row(MatrixShape::M8n8, 1, 7));
        assert!(!supplies_row(MatrixShape::M8n8, 1, 8));
        assert!(supplies_row(MatrixShape::M8n8, 2, 15));
        assert!(!supplies_row(MatrixShape::M8n8, 2, 16));
        assert!(supplies_row(MatrixShape::M8n8, 4, 31));
        assert!(supplies_row(MatrixShape::M16n16, 1, 15));
        assert!(!supplies_row(MatrixShape::M16n16, 1, 16));
        assert!(supplies_row(MatrixShape::M16n16, 2, 31));
        assert!(!supplies_row(MatrixShape::M8n16, 1, 8));
        assert!(supplies_row(MatrixShape::M16n8, 4, 31));
    }
}

/// The 16-byte chunks a `wgmma.mma_async` matrix descriptor (PTX ISA §9.7.15.5.1.2, "Shared
/// Memory Matrix Layout" and "Matrix Descriptor Format") makes one instruction read, as byte
/// offsets of the 18-bit shared-memory address space: `rows` rows (64 for A, N for B) of 32 bytes
/// of K (every dense shape's K is 32 bytes: k16 of 16-bit, k32 of 8-bit, k8 of 32-bit types).
/// Bits 0-13 are the start address, 16-29 the leading-dimension (LBO) and 32-45 the
/// stride-dimension (SBO) byte offsets (each >> 4), 49-51 the base offset, 62-63 the swizzle (0
/// none, 1 128B, 2 64B, 3 32B). The swizzle exchanges 16-byte chunks by address bits 4-6 against
/// 7-9 (`tensor::Swizzle::apply`, the ISA's `Swizzle<B,4,3>`). With the ISA's canonical layouts
/// in 16-byte units (`S` = the swizzle's span / 16, 1 without one):
/// - K-major (`imm-trans` 0): row `r` of each group of 8 is `r` spans after the group's start,
///   groups SBO apart; without a swizzle a row's two 16-byte core-matrix columns are LBO apart,
///   its rows 16 bytes apart.
/// - MN-major (`imm-trans` 1, only the 16-bit types, so K is 16 rows of `rows * 2` bytes of MN):
///   swizzled, `((T,S,m),(8,k)):((1,T,LBO),(S*T,SBO))`: MN chunk `s` of each span is 16 bytes
///   after the last, spans of MN LBO apart, K row `r` of 8 one span after the last, groups of 8
///   K rows SBO apart; interleaved, `((T,1,m),(8,k)):((1,T,SBO),(T,LBO))`: MN chunks SBO apart,
///   K rows 16 bytes apart, groups of 8 K rows LBO apart.
///
/// A base offset (a swizzle pattern that does not start at its span's 8-row boundary) is a limit.
pub fn descriptor_chunks(desc: i64, rows: i64, mn_major: bool) -> Result<Vec<i64>, String> {
    let field = |shift: u32| ((desc >> shift) & 0x3FFF) << 4;
    let (start, lbo, sbo) = (field(0), field(16), field(32));
    if (desc >> 49) & 7 != 0 {
        return Err(format!("the wgmma matrix descriptor {desc:#x} has a base offset: not modelled by this version of ptxmm"));
    }
    let swizzle = match (desc >> 62) & 3 {
        0 => crate::program::Swizzle::None,
        1 => crate::program::Swizzle::B128,
        2 => crate::program::Swizzle::B64,
        _ => crate::program::Swizzle::B32,
    };
    let rows = rows.max(0);
    let mut out = Vec::with_capacity(2 * rows as usize);
    if mn_major {
        let span_chunks = (swizzle.span() / 16).max(1);
        for chunk in 0..rows / 8 {
            let (s, m) = (chunk % span_chunks, chunk / span_chunks);
            for k in 0..16 {
                let (r, group) = (k % 8, k / 8);
                let natural = match swizzle {
                    crate::program::Swizzle::None => start + m * sbo + r * 16 + group * lbo,
                    sw => start + s * 16 + m * lbo + r * sw.span() + group * sbo,
                };
                out.push(swizzle.apply(natural));
            }
        }
        return Ok(out);
    }
    for r in 0..rows {
        let group = (r / 8) * sbo;
        for c in 0..2 {
            let natural = match swizzle {
                crate::program::Swizzle::None => start + group + c * lbo + (r % 8) * 16,
                s => start + group + (r % 8) * s.span() + 16 * c,
            };
            out.push(swizzle.apply(natural));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod descriptor_tests {
    use super::descriptor_chunks;

    #[test]
    fn descriptors_name_their_rows() {
        // 128B swizzle, start 1024, SBO 1024: row 1's first chunk is at 1024 + 128, exchanged with chunk 1.
        let d = (1i64 << 62) | ((1024 >> 4) << 32) | (1024 >> 4);
        let c = descriptor_chunks(d, 64, false).unwrap();
        assert_eq!(c.len(), 128);
        assert_eq!(&c[..4], &[1024, 1024 + 16, 1024 + 128 + 16, 1024 + 128]);
        assert_eq!(c[16], 2048);
        // No swizzle: LBO between the two core-matrix columns.
        let d = ((256i64 >> 4) << 32) | ((128 >> 4) << 16);
        let c = descriptor_chunks(d, 16, false).unwrap();
        assert_eq!(&c[..4], &[0, 128, 16, 144]);
        assert_eq!(c[16], 256);
        assert!(descriptor_chunks(d | (1 << 49), 16, false).is_err());
    }

    /// The ISA's MN-major examples (§9.7.15.5.1.2.1.3, bf16, m = k = 2): every byte of the
    /// exact layout, as the chunks of 8 elements it starts at.
    #[test]
    fn mn_major_descriptors_follow_the_canonical_layouts() {
        use std::collections::BTreeSet;
        let desc = |swizzle: i64, lbo: i64, sbo: i64| (swizzle << 62) | ((sbo >> 4) << 32) | ((lbo >> 4) << 16);
        // The exact layout's element offsets ((8,S,2),(8,2)):((1,8,a),(b,c)) as 16-byte chunks.
        let exact = |s: i64, a: i64, b: i64, c: i64| -> BTreeSet<i64> {
            let mut set = BTreeSet::new();
            for si in 0..s {
                for m in 0..2 {
                    for r in 0..8 {
                        for k in 0..2 {
                            set.insert((8 * si + a * m + b * r + c * k) * 2);
                        }
                    }
                }
            }
            set
        };
        // Interleaved: ((8,1,2),(8,2)):((1,8,64),(8,128)), LBO 256 bytes, SBO 128 bytes.
        let c = descriptor_chunks(desc(0, 256, 128), 16, true).unwrap();
        assert_eq!(c.len(), 32);
        assert_eq!(c.iter().copied().collect::<BTreeSet<_>>(), exact(1, 64, 8, 128));
        // 32B: ((8,2,2),(8,2)):((1,8,128),(16,256)), LBO 256, SBO 512 bytes; 32 MN elements.
        let c = descriptor_chunks(desc(3, 256, 512), 32, true).unwrap();
        let unswizzled = exact(2, 128, 16, 256);
        let swizzled: BTreeSet<i64> = unswizzled.iter().map(|&a| crate::program::Swizzle::B32.apply(a)).collect();
        assert_eq!(c.iter().copied().collect::<BTreeSet<_>>(), swizzled);
        // 64B: ((8,4,2),(8,2)):((1,8,256),(32,512)), LBO 512, SBO 1024 bytes; 64 MN elements.
        let c = descriptor_chunks(desc(2, 512, 1024), 64, true).unwrap();
        let swizzled: BTreeSet<i64> = exact(4, 256, 32, 512).iter().map(|&a| crate::program::Swizzle::B64.apply(a)).collect();
        assert_eq!(c.iter().copied().collect::<BTreeSet<_>>(), swizzled);
        assert_eq!(c.len(), 128, "no chunk twice");
        // 128B, one span of MN (64 elements) over 16 K rows: 2048 contiguous bytes, whatever the order.
        let c = descriptor_chunks(desc(1, 0, 1024), 64, true).unwrap();
        assert_eq!(c.iter().copied().collect::<BTreeSet<_>>(), (0..128).map(|i| i * 16).collect::<BTreeSet<_>>());
    }
}
