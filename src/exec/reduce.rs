//! The element arithmetic of `cp.reduce.async.bulk` (PTX ISA §9.7.9.25.4.2) on bit patterns:
//! integers wrap at their width and compare with their signedness, `.inc`/`.dec` are unsigned,
//! float `.add` rounds to nearest even (`.f32` keeps subnormals, as an H200 does, or under the
//! reading `f32-reduce-flushes` flushes subnormal inputs and results to a sign-preserving zero as
//! the text says; `.f16`/`.bf16` are `.noftz` and keep them), float `.min`/`.max` return
//! the non-NaN operand and order -0 below +0. Half-precision values are converted by hand
//! (`to_small` / `from_small`): f16 and bf16 sums are computed exactly enough in f64 (53 bits ≥
//! 2p + 2 for p = 11 and p = 8, so rounding to f64 then to the element is rounding once).

use crate::program::{RedType, RmwOp};

/// What an `.f32` reduction does with subnormal inputs and results (`Readings::f32_reduce_flushes`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum F32Subnormals {
    /// IEEE 754 arithmetic: subnormals are kept (what an H200 did in every run).
    #[default]
    Keep,
    /// Flushed to a sign-preserving zero (§9.7.9.25.4.2: "The current implementation of
    /// cp.reduce.async.bulk.add.f32 flushes subnormal inputs and results to sign-preserving zero").
    Flush,
}

impl RedType {
    /// Bytes per element.
    pub fn bytes(self) -> i64 {
        match self {
            RedType::F16 | RedType::Bf16 => 2,
            RedType::B32 | RedType::U32 | RedType::S32 | RedType::F32 => 4,
            RedType::B64 | RedType::U64 | RedType::S64 | RedType::F64 => 8,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            RedType::B32 => "b32",
            RedType::U32 => "u32",
            RedType::S32 => "s32",
            RedType::B64 => "b64",
            RedType::U64 => "u64",
            RedType::S64 => "s64",
            RedType::F16 => "f16",
            RedType::Bf16 => "bf16",
            RedType::F32 => "f32",
            RedType::F64 => "f64",
        }
    }
}

/// The word `word` of the element(s) a reduction writes, given the old destination words and the
/// source words of the element (one word for 2- and 4-byte elements, two little-endian words for
/// 8-byte ones). A word is returned as its 32-bit pattern, zero-extended, except `.s32`, which is
/// sign-extended.
pub fn reduce_word(op: RmwOp, ty: RedType, f32s: F32Subnormals, word: usize, old: &[i64], src: &[i64]) -> i64 {
    if let Some(u) = crate::program::unknown::first(old).or_else(|| crate::program::unknown::first(src)) {
        return u;
    }
    let w = |v: &[i64], k: usize| v.get(k).copied().unwrap_or(0) as u64 & 0xFFFF_FFFF;
    match ty.bytes() {
        2 => {
            let (o, s) = (w(old, 0), w(src, 0));
            let lo = element(op, ty, f32s, o & 0xFFFF, s & 0xFFFF) & 0xFFFF;
            let hi = element(op, ty, f32s, o >> 16, s >> 16) & 0xFFFF;
            (lo | hi << 16) as i64
        }
        4 => {
            let r = element(op, ty, f32s, w(old, 0), w(src, 0)) & 0xFFFF_FFFF;
            if ty == RedType::S32 {
                r as u32 as i32 as i64
            } else {
                r as i64
            }
        }
        _ => {
            let r = element(op, ty, f32s, w(old, 0) | w(old, 1) << 32, w(src, 0) | w(src, 1) << 32);
            ((r >> (32 * word.min(1))) & 0xFFFF_FFFF) as i64
        }
    }
}

/// One element: `old op src` on bit patterns of the element's width.
pub fn element(op: RmwOp, ty: RedType, f32s: F32Subnormals, old: u64, src: u64) -> u64 {
    match ty {
        RedType::F16 | RedType::Bf16 => {
            let (e, m) = if ty == RedType::F16 { (5, 10) } else { (8, 7) };
            let (a, b) = (from_small(old as u32, e, m), from_small(src as u32, e, m));
            match op {
                RmwOp::Add => to_small(a + b, e, m) as u64,
                _ => match float_minmax(op, a, b) {
                    Some(r) => to_small(r, e, m) as u64,
                    None => nan_small(e, m) as u64,
                },
            }
        }
        RedType::F32 => {
            let ftz = |x: f32| if x.is_subnormal() && f32s == F32Subnormals::Flush { 0.0f32.copysign(x) } else { x };
            let r = ftz(ftz(f32::from_bits(old as u32)) + ftz(f32::from_bits(src as u32)));
            if r.is_nan() {
                0x7FFF_FFFF
            } else {
                r.to_bits() as u64
            }
        }
        RedType::F64 => {
            let r = f64::from_bits(old) + f64::from_bits(src);
            if r.is_nan() {
                0x7FFF_FFFF_FFFF_FFFF
            } else {
                r.to_bits()
            }
        }
        _ => {
            let bits = 8 * ty.bytes() as u32;
            let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
            let (o, s) = (old & mask, src & mask);
            // Sign-extended views for the signed comparisons.
            let signed = |v: u64| ((v << (64 - bits)) as i64) >> (64 - bits);
            let is_signed = matches!(ty, RedType::S32 | RedType::S64);
            let r = match op {
                RmwOp::Add => o.wrapping_add(s),
                RmwOp::And => o & s,
                RmwOp::Or => o | s,
                RmwOp::Xor => o ^ s,
                RmwOp::Min if is_signed => signed(o).min(signed(s)) as u64,
                RmwOp::Max if is_signed => signed(o).max(signed(s)) as u64,
                RmwOp::Min => o.min(s),
                RmwOp::Max => o.max(s),
                // `.inc`/`.dec` return a result in [0..x], x the source value (unsigned).
                RmwOp::Inc => {
                    if o >= s {
                        0
                    } else {
                        o + 1
                    }
                }
                RmwOp::Dec => {
                    if o == 0 || o > s {
                        s
                    } else {
                        o - 1
                    }
                }
                _ => o,
            };
            r & mask
        }
    }
}

/// IEEE minNum/maxNum with -0 < +0; None when both are NaN.
fn float_minmax(op: RmwOp, a: f64, b: f64) -> Option<f64> {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => None,
        (true, false) => Some(b),
        (false, true) => Some(a),
        _ => {
            let less = a < b || (a == b && a.is_sign_negative() && !b.is_sign_negative());
            Some(if (op == RmwOp::Min) == less { a } else { b })
        }
    }
}

fn nan_small(exp_bits: u32, man_bits: u32) -> u32 {
    // All exponent and mantissa bits set, sign clear.
    (1 << (exp_bits + man_bits)) - 1
}

/// The value of a binary float of `exp_bits` exponent and `man_bits` mantissa bits.
pub fn from_small(bits: u32, exp_bits: u32, man_bits: u32) -> f64 {
    let bias = (1i32 << (exp_bits - 1)) - 1;
    let sign = if bits >> (exp_bits + man_bits) & 1 == 1 { -1.0 } else { 1.0 };
    let e = ((bits >> man_bits) & ((1 << exp_bits) - 1)) as i32;
    let m = (bits & ((1 << man_bits) - 1)) as f64;
    let scale = |k: i32| 2f64.powi(k);
    if e == (1 << exp_bits) - 1 {
        return if m == 0.0 { sign * f64::INFINITY } else { f64::NAN };
    }
    if e == 0 {
        sign * m * scale(1 - bias - man_bits as i32)
    } else {
        sign * (m + scale(man_bits as i32)) * scale(e - bias - man_bits as i32)
    }
}

/// `x` rounded to nearest even into a binary float of `exp_bits`/`man_bits` (subnormals kept,
/// overflow to infinity, NaN to the canonical NaN).
pub fn to_small(x: f64, exp_bits: u32, man_bits: u32) -> u32 {
    let sign = if x.is_sign_negative() && !x.is_nan() { 1u32 << (exp_bits + man_bits) } else { 0 };
    let inf = ((1u32 << exp_bits) - 1) << man_bits;
    if x.is_nan() {
        return nan_small(exp_bits, man_bits);
    }
    let a = x.abs();
    if a.is_infinite() {
        return sign | inf;
    }
    if a == 0.0 {
        return sign;
    }
    let bits = a.to_bits();
    let (e64, frac) = ((bits >> 52) as i32, bits & ((1u64 << 52) - 1));
    let (m, e) = if e64 == 0 { (frac, -1074) } else { (frac | 1 << 52, e64 - 1075) };
    let bias = (1i32 << (exp_bits - 1)) - 1;
    let emin = 1 - bias;
    let top = 63 - m.leading_zeros() as i32 + e; // floor(log2 a)
    if top > bias + 1 {
        return sign | inf;
    }
    let mut q = top.max(emin) - man_bits as i32; // exponent of the last mantissa bit
    let shift = q - e;
    let mut n = if shift <= 0 {
        m << (-shift)
    } else if shift > 60 {
        0
    } else {
        let (kept, rest) = (m >> shift, m & ((1u64 << shift) - 1));
        let half = 1u64 << (shift - 1);
        if rest > half || (rest == half && kept & 1 == 1) {
            kept + 1
        } else {
            kept
        }
    };
    if n >= 1u64 << (man_bits + 1) {
        n >>= 1;
        q += 1;
    }
    if n < 1u64 << man_bits {
        return sign | n as u32; // subnormal (or zero)
    }
    let biased = q + man_bits as i32 + bias;
    if biased >= (1 << exp_bits) - 1 {
        return sign | inf;
    }
    sign | (biased as u32) << man_bits | (n as u32 & ((1 << man_bits) - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_conversions_round_to_nearest_even() {
        // f16: 1.0 = 0x3C00, 65504 = 0x7BFF (max), smallest subnormal 2^-24 = 0x0001.
        assert_eq!(to_small(1.0, 5, 10), 0x3C00);
        assert_eq!(to_small(65504.0, 5, 10), 0x7BFF);
        assert_eq!(to_small(65520.0, 5, 10), 0x7C00); // ties to even overflows to inf
        assert_eq!(to_small(2f64.powi(-24), 5, 10), 0x0001);
        assert_eq!(to_small(2f64.powi(-25), 5, 10), 0x0000); // tie to even: 0
        assert_eq!(to_small(1.0 + 2f64.powi(-11), 5, 10), 0x3C00); // tie: even
        assert_eq!(to_small(1.0 + 3.0 * 2f64.powi(-11), 5, 10), 0x3C02);
        assert_eq!(from_small(0x0001, 5, 10), 2f64.powi(-24));
        assert_eq!(from_small(0xC000, 5, 10), -2.0);
        // bf16: 1.0 = 0x3F80.
        assert_eq!(to_small(1.0, 8, 7), 0x3F80);
        assert_eq!(to_small(1.0 + 2f64.powi(-8), 8, 7), 0x3F80);
        assert_eq!(to_small(1.0 + 3.0 * 2f64.powi(-8), 8, 7), 0x3F82);
        for b in 0..0x7C00u32 {
            assert_eq!(to_small(from_small(b, 5, 10), 5, 10), b, "f16 {b:#x}");
        }
    }

    #[test]
    fn f32_add_flushes_subnormals() {
        let sub = f32::from_bits(1);
        assert_eq!(element(RmwOp::Add, RedType::F32, F32Subnormals::Flush, sub.to_bits() as u64, 0), 0);
        assert_eq!(element(RmwOp::Add, RedType::F32, F32Subnormals::Flush, 0x3F80_0000, 0x3F80_0000), 0x4000_0000);
        // f16 keeps subnormals: 2^-24 + 2^-24 = 2^-23.
        assert_eq!(element(RmwOp::Add, RedType::F16, F32Subnormals::Keep, 1, 1), 2);
    }

    #[test]
    fn f32_add_keeps_subnormals_by_default() {
        // The H200's figures (docs/divergences.md): 2^-149 + 2^-149 = 2^-148, -2^-149 + -0 = -2^-149.
        assert_eq!(element(RmwOp::Add, RedType::F32, F32Subnormals::Keep, 1, 1), 2);
        assert_eq!(element(RmwOp::Add, RedType::F32, F32Subnormals::Keep, 0x8000_0001, 0x8000_0000), 0x8000_0001);
        assert_eq!(element(RmwOp::Add, RedType::F32, F32Subnormals::Flush, 0x8000_0001, 0x8000_0000), 0x8000_0000);
    }
}
