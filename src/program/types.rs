//! PTX's typed values: width and signedness of registers, locations and operations.
//!
//! Canonical representation (docs/litmus-format.md, "Types and values"): a value is an `i64`
//! normalized to its type by [`Ty::norm`]: `.uN`, `.bN` and `.fN`/`.bf16` (bit patterns) below 64
//! bits are the unsigned number in `0..2^N`; `.sN` is sign-extended; 64-bit types are the two's
//! complement bit pattern (a `.u64` at or above 2^63 shows as negative). An instruction without
//! a type (Dat3M's spelling) keeps herd7's unbounded-integer semantics (`Option<Ty>` = `None`).

use crate::litmus::ast::CmpOp;
use crate::program::{LocalOp, RmwOp};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Kind {
    /// `.bN`: untyped bits (arithmetic as unsigned).
    B,
    U,
    S,
    /// `.f16`, `.f32`, `.f64`: IEEE bit patterns.
    F,
    /// `.bf16`.
    Bf,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Ty {
    pub kind: Kind,
    pub bits: u32,
}

impl Ty {
    pub const U32: Ty = Ty { kind: Kind::U, bits: 32 };

    /// The type a qualifier names (`u32`, `s8`, `f64`, `bf16`, ...).
    pub fn parse(q: &str) -> Option<Ty> {
        let (kind, bits) = match q {
            "bf16" => (Kind::Bf, 16),
            _ => {
                let kind = match q.as_bytes().first()? {
                    b'b' => Kind::B,
                    b'u' => Kind::U,
                    b's' => Kind::S,
                    b'f' => Kind::F,
                    _ => return None,
                };
                let bits: u32 = q[1..].parse().ok()?;
                (kind, bits)
            }
        };
        let ok = match kind {
            Kind::F => matches!(bits, 16 | 32 | 64),
            Kind::Bf => true,
            _ => matches!(bits, 8 | 16 | 32 | 64),
        };
        ok.then_some(Ty { kind, bits })
    }

    pub fn name(self) -> String {
        match self.kind {
            Kind::Bf => "bf16".into(),
            Kind::B => format!("b{}", self.bits),
            Kind::U => format!("u{}", self.bits),
            Kind::S => format!("s{}", self.bits),
            Kind::F => format!("f{}", self.bits),
        }
    }

    pub fn signed(self) -> bool {
        self.kind == Kind::S
    }

    pub fn is_float(self) -> bool {
        matches!(self.kind, Kind::F | Kind::Bf)
    }

    /// The same signedness at another width (a word of a 64-bit access is 32 bits).
    pub fn with_bits(self, bits: u32) -> Ty {
        match self.kind {
            Kind::F | Kind::Bf => Ty { kind: Kind::B, bits },
            k => Ty { kind: k, bits },
        }
    }

    /// `v` truncated to the width and extended per signedness: the canonical value of the type.
    pub fn norm(self, v: i64) -> i64 {
        if self.bits >= 64 || super::unknown::is_unknown(v) {
            return v;
        }
        let shift = 64 - self.bits;
        if self.signed() {
            (v << shift) >> shift
        } else {
            ((v as u64) << shift >> shift) as i64
        }
    }

    fn lt(self, x: i64, y: i64) -> Option<bool> {
        Some(match self.kind {
            Kind::S => x < y,
            Kind::U | Kind::B => (x as u64) < (y as u64),
            Kind::F | Kind::Bf => return float(self, x).partial_cmp(&float(self, y)).map(|o| o.is_lt()),
        })
    }

    /// A comparison of two values of this type (`setp`, conditions): signed for `.sN`, unsigned
    /// for `.uN`/`.bN`, IEEE for floats (every comparison with a NaN is false but `ne`).
    pub fn compare(self, cmp: CmpOp, x: i64, y: i64) -> bool {
        let (x, y) = (self.norm(x), self.norm(y));
        if self.is_float() {
            let (a, b) = (float(self, x), float(self, y));
            return match cmp {
                CmpOp::Eq => a == b,
                CmpOp::Ne => a != b,
                CmpOp::Lt => a < b,
                CmpOp::Le => a <= b,
                CmpOp::Gt => a > b,
                CmpOp::Ge => a >= b,
            };
        }
        match cmp {
            CmpOp::Eq => x == y,
            CmpOp::Ne => x != y,
            CmpOp::Lt => self.lt(x, y) == Some(true),
            CmpOp::Le => self.lt(y, x) == Some(false),
            CmpOp::Gt => self.lt(y, x) == Some(true),
            CmpOp::Ge => self.lt(x, y) == Some(false),
        }
    }

    fn min_max(self, x: i64, y: i64, max: bool) -> i64 {
        if self.is_float() {
            let (a, b) = (float(self, x), float(self, y));
            let r = if max { a.max(b) } else { a.min(b) };
            return unfloat(self, r);
        }
        let x_lt_y = self.lt(x, y) == Some(true);
        if x_lt_y == max {
            y
        } else {
            x
        }
    }

    /// The type of the same kind at twice the width (the result of `mul.wide`, `mad.wide`).
    pub fn wide(self) -> Ty {
        Ty { kind: self.kind, bits: (self.bits * 2).min(64) }
    }

    /// The whole product of two values of this type (at most 64 bits wide), as a 128-bit number.
    fn product(self, x: i64, y: i64) -> i128 {
        let (x, y) = (self.norm(x), self.norm(y));
        if self.signed() {
            x as i128 * y as i128
        } else {
            (x as u64 as u128 * y as u64 as u128) as i128
        }
    }

    /// Register arithmetic at this type: operands normalized first, result wrapped at the width.
    pub fn local(self, op: LocalOp, x: i64, y: i64) -> i64 {
        if let Some(u) = super::unknown::first(&[x, y]) {
            return u;
        }
        match op {
            // The source is read at its own type, then written at this one.
            LocalOp::Cvt(from) => return self.norm(from.norm(x)),
            LocalOp::MulWide => return self.wide().norm(self.product(x, y) as i64),
            LocalOp::MulHi => return self.norm((self.product(x, y) >> self.bits) as i64),
            LocalOp::Mad | LocalOp::MadWide | LocalOp::Selp => return self.local3(op, x, y, 0),
            // Not typed: `mapa` is computed by the run, `elect.sync` has no type.
            LocalOp::Mapa => return x,
            LocalOp::Elect { lanes, lane, is_leader } => return elect(lanes, lane, is_leader, x),
            op if super::bits::is_bit_op(op) => return super::bits::compute(self, op, x, y, 0),
            _ => {}
        }
        let (x, y) = (self.norm(x), self.norm(y));
        let bits = self.bits as i64;
        if self.is_float() {
            let (a, b) = (float(self, x), float(self, y));
            let r = match op {
                LocalOp::Mov => return x,
                LocalOp::Add => a + b,
                LocalOp::Sub => a - b,
                LocalOp::Mul => a * b,
                LocalOp::Div => a / b,
                LocalOp::Min => return self.min_max(x, y, false),
                LocalOp::Max => return self.min_max(x, y, true),
                LocalOp::Set(c) => return self.compare(c, x, y) as i64,
                // Bit operations on a float register act on its bits.
                _ => return Ty { kind: Kind::B, bits: self.bits }.local(op, x, y),
            };
            return unfloat(self, r);
        }
        let unsigned = |v: i64| v as u64;
        let r = match op {
            LocalOp::Mov => x,
            LocalOp::Add => x.wrapping_add(y),
            LocalOp::Sub => x.wrapping_sub(y),
            LocalOp::Mul => x.wrapping_mul(y),
            // Division by zero has no defined result in PTX; ptxmm gives 0, as untyped values do.
            LocalOp::Div if y == 0 => 0,
            LocalOp::Rem if y == 0 => 0,
            LocalOp::Div if self.signed() => x.wrapping_div(y),
            LocalOp::Rem if self.signed() => x.wrapping_rem(y),
            LocalOp::Div => (unsigned(x) / unsigned(y)) as i64,
            LocalOp::Rem => (unsigned(x) % unsigned(y)) as i64,
            LocalOp::And => x & y,
            LocalOp::Or => x | y,
            LocalOp::Xor => x ^ y,
            // "Shift amounts greater than the register width N are clamped to N."
            LocalOp::Shl => {
                let n = (y as u32 as i64).min(bits);
                if n >= 64 {
                    0
                } else {
                    x << n
                }
            }
            LocalOp::Shr => {
                let n = (y as u32 as i64).min(bits).min(63);
                if self.signed() {
                    x >> n
                } else if (y as u32 as i64) >= bits {
                    0
                } else {
                    (unsigned(x) >> n) as i64
                }
            }
            LocalOp::Min => self.min_max(x, y, false),
            LocalOp::Max => self.min_max(x, y, true),
            LocalOp::Set(c) => return self.compare(c, x, y) as i64,
            // Returned above.
            LocalOp::MulWide
            | LocalOp::MulHi
            | LocalOp::Mad
            | LocalOp::MadWide
            | LocalOp::Selp
            | LocalOp::Cvt(_)
            | LocalOp::Mapa
            | LocalOp::Elect { .. } => x,
            // The bit operations (`bits::is_bit_op`) returned above too.
            _ => x,
        };
        self.norm(r)
    }

    /// The operations with three operands at this type (`mad`, `selp`; the others ignore `z`):
    /// `mad.lo` wraps `x * y + z` at the width, `mad.wide` adds `z` to the whole product at
    /// twice the width, `selp` is `x` when the predicate `z` is non-zero, else `y`.
    pub fn local3(self, op: LocalOp, x: i64, y: i64, z: i64) -> i64 {
        if let Some(u) = super::unknown::first(&[x, y, z]) {
            return u;
        }
        match op {
            LocalOp::Mad => self.local(LocalOp::Add, self.local(LocalOp::Mul, x, y), z),
            LocalOp::MadWide => self.wide().local(LocalOp::Add, self.local(LocalOp::MulWide, x, y), z),
            LocalOp::Selp => self.norm(if z != 0 { x } else { y }),
            op if super::bits::is_bit_op(op) => super::bits::compute(self, op, x, y, z),
            _ => self.local(op, x, y),
        }
    }

    /// The value an `atom`/`red` of this type writes (PTX ISA §9.7.13.5): `old` and the operands
    /// normalized, the result wrapped at the width; `inc`/`dec` compare unsigned.
    pub fn rmw(self, op: RmwOp, old: i64, ops: &[i64]) -> i64 {
        if let Some(u) = super::unknown::first(&[old]).or_else(|| super::unknown::first(ops)) {
            return u;
        }
        let old = self.norm(old);
        let v = self.norm(ops.first().copied().unwrap_or(0));
        let r = match op {
            RmwOp::Add => self.local(LocalOp::Add, old, v),
            RmwOp::Sub => self.local(LocalOp::Sub, old, v),
            RmwOp::Mul => self.local(LocalOp::Mul, old, v),
            RmwOp::Div if v == 0 => old,
            RmwOp::Div => self.local(LocalOp::Div, old, v),
            RmwOp::And => old & v,
            RmwOp::Or => old | v,
            RmwOp::Xor => old ^ v,
            RmwOp::Min => self.min_max(old, v, false),
            RmwOp::Max => self.min_max(old, v, true),
            // inc: `(old >= b) ? 0 : (old+1)`; dec: `((old == 0) || (old > b)) ? b : (old-1)`.
            RmwOp::Inc => {
                if (old as u64) >= (v as u64) {
                    0
                } else {
                    old + 1
                }
            }
            RmwOp::Dec => {
                if old == 0 || (old as u64) > (v as u64) {
                    v
                } else {
                    old - 1
                }
            }
            RmwOp::Exch => v,
            RmwOp::Cas => {
                let new = self.norm(ops.get(1).copied().unwrap_or(0));
                if old == v {
                    new
                } else {
                    old
                }
            }
        };
        self.norm(r)
    }

    /// A value of this type as PTX writes it: integers in decimal, floats as `0f…`/`0d…` hex
    /// bit patterns.
    pub fn format(self, v: i64) -> String {
        let v = self.norm(v);
        match (self.kind, self.bits) {
            (Kind::F, 32) => format!("0f{:08X}", v as u32),
            (Kind::F, 64) => format!("0d{:016X}", v as u64),
            (Kind::U | Kind::B, 64) => (v as u64).to_string(),
            _ => v.to_string(),
        }
    }
}

impl Ty {
    /// The bit pattern of a decimal float literal (`1.5`, `-0.25`, `1e-3`) in this float type,
    /// rounded to nearest even (f32 and f64 parsed directly at their width; f16 and bf16 through
    /// f64); None when the type is not a float or the text is not a decimal number.
    pub fn decimal_literal(self, text: &str) -> Option<i64> {
        if !self.is_float() || !text.contains(['.', 'e', 'E']) {
            return None;
        }
        match (self.kind, self.bits) {
            (Kind::F, 32) => text.parse::<f32>().ok().map(|x| x.to_bits() as i64),
            (Kind::F, 64) => text.parse::<f64>().ok().map(|x| x.to_bits() as i64),
            _ => text.parse::<f64>().ok().map(|x| unfloat(self, x)),
        }
    }
}

/// `elect.sync`'s result for membermask `mask` (PTX ISA, `elect.sync`): the lowest lane of
/// `lanes` it selects, or with `is_leader` whether that lane is `lane` (1 or 0).
pub fn elect(lanes: u32, lane: u32, is_leader: bool, mask: i64) -> i64 {
    let leader = (mask as u32 & lanes).trailing_zeros();
    if is_leader {
        i64::from(leader == lane)
    } else {
        i64::from(leader)
    }
}

/// The number a float bit pattern stands for (f16 and bf16 widened exactly to f64).
fn float(t: Ty, v: i64) -> f64 {
    match (t.kind, t.bits) {
        (Kind::F, 64) => f64::from_bits(v as u64),
        (Kind::F, 32) => f32::from_bits(v as u32) as f64,
        (Kind::Bf, _) => f32::from_bits((v as u32 & 0xFFFF) << 16) as f64,
        _ => f16_to_f64(v as u16),
    }
}

/// The bit pattern of `x` in the float type `t`, rounded to nearest even.
fn unfloat(t: Ty, x: f64) -> i64 {
    match (t.kind, t.bits) {
        (Kind::F, 64) => x.to_bits() as i64,
        (Kind::F, 32) => (x as f32).to_bits() as i64,
        (Kind::Bf, _) => {
            let b = (x as f32).to_bits();
            if (x as f32).is_nan() {
                return 0x7FC0;
            }
            // Round to nearest even on the 16 dropped bits.
            let rounded = b.wrapping_add(0x7FFF + ((b >> 16) & 1));
            (rounded >> 16) as i64
        }
        _ => f64_to_f16(x) as i64,
    }
}

fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1F) as i32;
    let frac = (h & 0x3FF) as f64;
    sign * match exp {
        0 => frac * 2f64.powi(-24),
        31 if frac == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1.0 + frac / 1024.0) * 2f64.powi(e - 15),
    }
}

fn f64_to_f16(x: f64) -> u16 {
    if x.is_nan() {
        return 0x7E00;
    }
    let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    if a >= 65520.0 {
        return sign | 0x7C00;
    }
    // Scale to units of the smallest subnormal (2^-24), round to nearest even, then re-encode.
    if a < 2f64.powi(-14) {
        return sign | (a * 2f64.powi(24)).round_ties_even() as u16;
    }
    let e = a.log2().floor() as i32;
    let e = if 2f64.powi(e) > a { e - 1 } else { e };
    let m = (a / 2f64.powi(e) - 1.0) * 1024.0;
    let mut m = m.round_ties_even() as u32;
    let mut e = e + 15;
    if m == 1024 {
        m = 0;
        e += 1;
    }
    if e >= 31 {
        return sign | 0x7C00;
    }
    sign | ((e as u16) << 10) | m as u16
}

/// The bit pattern of a decimal float literal (`1.5`, `2.0e-3`) in the type `t` (`.f64` when
/// no type says otherwise).
pub fn decimal_float_bits(x: f64, t: Option<Ty>) -> i64 {
    match t {
        Some(t) if t.is_float() => unfloat(t, x),
        _ => x.to_bits() as i64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Ty {
        Ty::parse(s).unwrap()
    }

    #[test]
    fn add_wraps_at_the_width() {
        assert_eq!(t("u32").local(LocalOp::Add, 0xFFFF_FFFF, 1), 0);
        assert_eq!(t("s32").local(LocalOp::Add, 0x7FFF_FFFF, 1), -0x8000_0000);
        assert_eq!(t("u64").local(LocalOp::Add, -1, 1), 0);
        assert_eq!(t("u16").local(LocalOp::Add, 0xFFFF, 2), 1);
        assert_eq!(t("s8").local(LocalOp::Sub, -128, 1), 127);
        assert_eq!(t("u32").rmw(RmwOp::Add, 0xFFFF_FFFF, &[1]), 0);
        // Untyped operands are normalized first: -1 is 0xFFFFFFFF as a .u32.
        assert_eq!(t("u32").norm(-1), 0xFFFF_FFFF);
        assert_eq!(t("s32").norm(0xFFFF_FFFF), -1);
    }

    #[test]
    fn inc_dec_compare_unsigned() {
        let u = t("u32");
        assert_eq!(u.rmw(RmwOp::Inc, 5, &[5]), 0);
        assert_eq!(u.rmw(RmwOp::Inc, 4, &[5]), 5);
        assert_eq!(u.rmw(RmwOp::Dec, 0, &[5]), 5);
        assert_eq!(u.rmw(RmwOp::Dec, 9, &[5]), 5);
        assert_eq!(u.rmw(RmwOp::Dec, 3, &[5]), 2);
        // i64::MIN is 0 as a .u32: dec gives b.
        assert_eq!(u.rmw(RmwOp::Dec, i64::MIN, &[5]), 5);
        // 0xFFFFFFFF > 5 unsigned (it would be -1 < 5 signed).
        assert_eq!(u.rmw(RmwOp::Dec, 0xFFFF_FFFF, &[5]), 5);
        assert_eq!(u.rmw(RmwOp::Inc, 0xFFFF_FFFF, &[5]), 0);
    }

    #[test]
    fn min_max_setp_and_shifts_follow_signedness() {
        assert_eq!(t("s32").rmw(RmwOp::Min, 0xFFFF_FFFF, &[1]), -1);
        assert_eq!(t("u32").rmw(RmwOp::Min, 0xFFFF_FFFF, &[1]), 1);
        assert_eq!(t("s32").local(LocalOp::Max, -1, 1), 1);
        assert_eq!(t("u32").local(LocalOp::Max, -1, 1), 0xFFFF_FFFF);
        assert!(t("s32").compare(CmpOp::Lt, 0xFFFF_FFFF, 0));
        assert!(!t("u32").compare(CmpOp::Lt, 0xFFFF_FFFF, 0));
        assert!(t("u64").compare(CmpOp::Gt, -1, 1));
        assert!(t("s64").compare(CmpOp::Le, -1, 1));
        assert_eq!(t("s32").local(LocalOp::Shr, -8, 1), -4);
        assert_eq!(t("u32").local(LocalOp::Shr, -8, 1), 0x7FFF_FFFC);
        assert_eq!(t("u32").local(LocalOp::Shl, 1, 40), 0);
        assert_eq!(t("s32").local(LocalOp::Shr, -1, 40), -1);
        assert_eq!(t("b32").local(LocalOp::Shl, 0x8000_0001, 1), 2);
        assert_eq!(t("u32").local(LocalOp::Div, -2, 2), 0x7FFF_FFFF);
        assert_eq!(t("s32").local(LocalOp::Div, -2, 2), -1);
    }

    #[test]
    fn wide_products_mad_cvt_and_selp() {
        // mul.wide: the whole product at twice the width, by the signedness of the sources.
        assert_eq!(t("u32").local(LocalOp::MulWide, 0xFFFF_FFFF, 0xFFFF_FFFF), -0x1_FFFF_FFFF); // 0xFFFFFFFE_00000001
        assert_eq!(t("s32").local(LocalOp::MulWide, 0xFFFF_FFFF, 7), -7);
        assert_eq!(t("u16").local(LocalOp::MulWide, 0xFFFF, 0xFFFF), 0xFFFE_0001);
        assert_eq!(t("s16").local(LocalOp::MulWide, -2, 3), -6);
        // mul.hi: the high half.
        assert_eq!(t("u32").local(LocalOp::MulHi, 0xFFFF_FFFF, 0xFFFF_FFFF), 0xFFFF_FFFE);
        assert_eq!(t("s32").local(LocalOp::MulHi, -1, 7), -1);
        assert_eq!(t("u64").local(LocalOp::MulHi, -1, 2), 1);
        assert_eq!(t("s64").local(LocalOp::MulHi, -1, 2), -1);
        // mad.lo wraps at the width; mad.wide adds at twice the width.
        assert_eq!(t("u32").local3(LocalOp::Mad, 0xFFFF_FFFF, 2, 5), 3);
        assert_eq!(t("u32").local3(LocalOp::MadWide, 0xFFFF_FFFF, 2, 5), 0x2_0000_0003);
        assert_eq!(t("s32").local3(LocalOp::MadWide, -1, 7, 100), 93);
        // cvt: the source at its type, then the destination's.
        assert_eq!(t("s64").local(LocalOp::Cvt(t("s32")), 0xFFFF_FFFF, 0), -1);
        assert_eq!(t("u64").local(LocalOp::Cvt(t("u32")), -1, 0), 0xFFFF_FFFF);
        assert_eq!(t("u64").local(LocalOp::Cvt(t("s32")), 0xFFFF_FFFF, 0), -1);
        assert_eq!(t("u32").local(LocalOp::Cvt(t("u64")), 0x12_3456_7890, 0), 0x3456_7890);
        assert_eq!(t("s32").local(LocalOp::Cvt(t("s8")), 0x80, 0), -128);
        assert_eq!(t("s8").local(LocalOp::Cvt(t("u32")), 0xFFFF_FFFF, 0), -1);
        // selp: by the predicate.
        assert_eq!(t("b32").local3(LocalOp::Selp, 10, 20, 1), 10);
        assert_eq!(t("b32").local3(LocalOp::Selp, 10, 20, 0), 20);
        assert_eq!(t("u16").local3(LocalOp::Selp, 70000, 1, 1), 4464);
        // elect.sync: the lowest selected lane of the occupied ones.
        assert_eq!(elect(0b111, 1, false, 0b110), 1);
        assert_eq!(elect(0b111, 1, true, 0b110), 1);
        assert_eq!(elect(0b111, 2, true, 0b110), 0);
    }

    #[test]
    fn floats_are_bit_patterns() {
        let f = t("f32");
        assert_eq!(decimal_float_bits(1.5, Some(f)), 0x3FC0_0000);
        assert_eq!(f.local(LocalOp::Add, 0x3FC0_0000, 0x3FC0_0000), 0x4040_0000); // 1.5 + 1.5 = 3.0
        assert_eq!(f.format(0x4040_0000), "0f40400000");
        assert!(f.compare(CmpOp::Lt, 0xBF80_0000, 0x3F80_0000)); // -1.0 < 1.0
        assert_eq!(t("f16").local(LocalOp::Add, 0x3C00, 0x3C00), 0x4000); // 1 + 1 = 2
        assert_eq!(t("bf16").local(LocalOp::Add, 0x3F80, 0x3F80), 0x4000);
        assert_eq!(t("u64").format(-1), "18446744073709551615");
    }
}
