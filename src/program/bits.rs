//! The arithmetic of PTX's bit instructions on typed values: bit fields (`bfe`, `bfi`, `bmsk`,
//! `szext`), bit counts (`brev`, `clz`, `popc`, `bfind`), byte permutes (`prmt`), three-input
//! logic (`lop3`), funnel shifts (`shf`), 24-bit products (`mul24`, `mad24`), `sad`, `cnot`,
//! integer `abs` and `min`/`max.relu`. Each follows the semantics pseudo-code of its section of
//! the PTX ISA (§9.7.1 Integer Arithmetic Instructions: `mul24` §9.7.1.5, `mad24` §9.7.1.6, `sad`
//! §9.7.1.7, `abs` §9.7.1.10, `min`/`max` §9.7.1.12-13, `popc` §9.7.1.14, `clz` §9.7.1.15,
//! `bfind` §9.7.1.16, `brev` §9.7.1.18, `bfe` §9.7.1.19, `bfi` §9.7.1.20, `szext` §9.7.1.21,
//! `bmsk` §9.7.1.22; Logic and Shift Instructions: `cnot`, `lop3`, `shf`; Data Movement and
//! Conversion Instructions: `prmt`). Operands arrive normalized to the instruction's type
//! (`Ty::norm`); every result is computed on `u64` bit patterns, so no user number overflows.

use super::{unknown, LocalOp, Ty};

/// The byte-selection mode of `prmt.b32{.mode}` (PTX ISA, Data Movement and Conversion
/// Instructions: prmt).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrmtMode {
    /// No mode: four 4-bit selectors in `c[15:0]`, each picking a byte of `{b, a}` (its 3 lsbs)
    /// and whether to replicate that byte's sign (its msb).
    Generic,
    /// `.f4e`, forward 4 extract.
    F4e,
    /// `.b4e`, backward 4 extract.
    B4e,
    /// `.rc8`, replicate 8.
    Rc8,
    /// `.ecl`, edge clamp left.
    Ecl,
    /// `.ecr`, edge clamp right.
    Ecr,
    /// `.rc16`, replicate 16.
    Rc16,
}

impl PrmtMode {
    /// The mode a qualifier names (`f4e`, ...).
    pub fn parse(q: &str) -> Option<PrmtMode> {
        Some(match q {
            "f4e" => PrmtMode::F4e,
            "b4e" => PrmtMode::B4e,
            "rc8" => PrmtMode::Rc8,
            "ecl" => PrmtMode::Ecl,
            "ecr" => PrmtMode::Ecr,
            "rc16" => PrmtMode::Rc16,
            _ => return None,
        })
    }

    /// The qualifier of the mode (None for the generic form).
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            PrmtMode::Generic => return None,
            PrmtMode::F4e => "f4e",
            PrmtMode::B4e => "b4e",
            PrmtMode::Rc8 => "rc8",
            PrmtMode::Ecl => "ecl",
            PrmtMode::Ecr => "ecr",
            PrmtMode::Rc16 => "rc16",
        })
    }
}

/// Whether `op` is one of the operations of this module.
pub fn is_bit_op(op: LocalOp) -> bool {
    matches!(
        op,
        LocalOp::Bfe
            | LocalOp::Bfi
            | LocalOp::BfiField
            | LocalOp::Brev
            | LocalOp::Clz
            | LocalOp::Popc
            | LocalOp::Bfind { .. }
            | LocalOp::Prmt(_)
            | LocalOp::Lop3(_)
            | LocalOp::Lop3Pred { .. }
            | LocalOp::Shf { .. }
            | LocalOp::Bmsk { .. }
            | LocalOp::Szext { .. }
            | LocalOp::Mul24 { .. }
            | LocalOp::Mad24 { .. }
            | LocalOp::Sad
            | LocalOp::Cnot
            | LocalOp::Abs
            | LocalOp::Relu { .. }
    )
}

/// The bit field of `bfi` packed into one operand: `pos | len << 8`, each restricted to 0..255
/// as the instruction restricts them ("Operands c and d are type .u32, but are restricted to the
/// 8-bit value range 0..255").
pub fn bfi_field(pos: i64, len: i64) -> i64 {
    (pos & 0xff) | ((len & 0xff) << 8)
}

/// The low `bits` bits of `v`, as a pattern.
fn low(v: i64, bits: u32) -> u64 {
    if bits >= 64 {
        v as u64
    } else {
        v as u64 & ((1u64 << bits) - 1)
    }
}

fn bit(v: u64, i: u32) -> u64 {
    if i >= 64 {
        0
    } else {
        (v >> i) & 1
    }
}

/// The result of bit operation `op` of type `ty` on `x`, `y`, `z` (the operands a, b, c; those
/// an operation does not have are ignored), normalized to the type of its destination. An
/// unknown operand (`program::unknown`) is the result, the first of them (a bit of an unknown
/// value is not known either).
pub fn compute(ty: Ty, op: LocalOp, x: i64, y: i64, z: i64) -> i64 {
    if let Some(u) = unknown::first(&[x, y, z]) {
        return u;
    }
    let w = ty.bits.clamp(1, 64);
    let msb = w - 1;
    let signed = ty.signed();
    let a = low(x, w);
    let u32_of = |v: i64| Ty::U32.norm(v);
    match op {
        // "d[i] = (i<len && pos+i<=msb) ? a[pos+i] : sbit", sbit the field's msb for signed types.
        LocalOp::Bfe => {
            let (pos, len) = ((y & 0xff) as u32, (z & 0xff) as u32);
            let sbit = if !signed || len == 0 { 0 } else { bit(a, (pos + len - 1).min(msb)) };
            let mut d = 0u64;
            for i in 0..=msb {
                let b = if i < len && pos + i <= msb { bit(a, pos + i) } else { sbit };
                d |= b << i;
            }
            ty.norm(d as i64)
        }
        // "f = b; for (i=0; i<len && pos+i<=msb; i++) f[pos+i] = a[i];" with z = pos | len << 8.
        LocalOp::Bfi => {
            let (pos, len) = ((z & 0xff) as u32, ((z >> 8) & 0xff) as u32);
            let mut f = low(y, w);
            let mut i = 0;
            while i < len && pos + i <= msb {
                f = (f & !(1u64 << (pos + i))) | (bit(a, i) << (pos + i));
                i += 1;
            }
            ty.norm(f as i64)
        }
        LocalOp::BfiField => bfi_field(x, y),
        LocalOp::Brev => {
            let r = if w == 64 { a.reverse_bits() } else { a.reverse_bits() >> (64 - w) };
            ty.norm(r as i64)
        }
        // The destinations of clz, popc and bfind are .u32.
        LocalOp::Clz => i64::from(a.leading_zeros() - (64 - w)),
        LocalOp::Popc => i64::from(a.count_ones()),
        // "For signed integers, bfind returns the bit position of the most significant 0 for
        // negative inputs and the most significant 1 for non-negative inputs"; 0xffffffff when
        // there is none; `.shiftamt`: msb - d.
        LocalOp::Bfind { shiftamt } => {
            let a = if signed && bit(a, msb) == 1 { low(!(a as i64), w) } else { a };
            if a == 0 {
                return 0xFFFF_FFFF;
            }
            let d = 63 - a.leading_zeros();
            i64::from(if shiftamt { msb - d } else { d })
        }
        LocalOp::Prmt(mode) => u32_of(prmt(mode, x, y, z)),
        // "For a logical operation F(a, b, c) the value of immLut can be computed by applying
        // the same operation to three predefined constant values": bit i of the result is bit
        // (a[i]·4 + b[i]·2 + c[i]) of immLut.
        LocalOp::Lop3(lut) => {
            let (b, c) = (low(y, w), low(z, w));
            let mut d = 0u64;
            for i in 0..w {
                let index = (bit(a, i) << 2) | (bit(b, i) << 1) | bit(c, i);
                d |= u64::from((lut >> index) & 1) << i;
            }
            ty.norm(d as i64)
        }
        // "p = (d != 0) BoolOp q".
        LocalOp::Lop3Pred { or } => {
            let (d, q) = (x != 0, y != 0);
            i64::from(if or { d || q } else { d && q })
        }
        LocalOp::Shf { left, clamp } => u32_of(shf(left, clamp, x, y, z)),
        LocalOp::Bmsk { clamp } => u32_of(bmsk(clamp, x, y)),
        LocalOp::Szext { clamp } => ty.norm(szext(clamp, signed, x, y)),
        // "Compute the product of two 24-bit integer values held in 32-bit source registers, and
        // return either the high or low 32-bits of the 48-bit result": t<47..16> or t<31..0>.
        LocalOp::Mul24 { hi } => ty.norm(mul24(signed, hi, x, y)),
        // `mad24`: "add a third, 32-bit value to either the high or low 32-bits of the 48-bit
        // result"; `.sat` (only `.hi.s32`) clamps the sum to MININT..MAXINT.
        LocalOp::Mad24 { hi, sat } => {
            let t = mul24(signed, hi, x, y);
            if sat {
                (ty.norm(t) as i128 + ty.norm(z) as i128).clamp(i32::MIN as i128, i32::MAX as i128) as i64
            } else {
                ty.norm(t.wrapping_add(z))
            }
        }
        // "d = c + ((a<b) ? b-a : a-b)", compared at the type's signedness.
        LocalOp::Sad => {
            let (a, b) = (ty.norm(x), ty.norm(y));
            let lt = if signed { a < b } else { (a as u64) < (b as u64) };
            let diff = if lt { b.wrapping_sub(a) } else { a.wrapping_sub(b) };
            ty.norm(z.wrapping_add(diff))
        }
        // "d = (a==0) ? 1 : 0".
        LocalOp::Cnot => i64::from(a == 0),
        LocalOp::Abs => ty.norm(ty.norm(x).wrapping_abs()),
        // `min.relu`/`max.relu` (.s32): the result clamped to 0 if negative.
        LocalOp::Relu { max } => {
            let (a, b) = (ty.norm(x), ty.norm(y));
            let r = if max { a.max(b) } else { a.min(b) };
            ty.norm(r.max(0))
        }
        _ => ty.norm(x),
    }
}

/// `prmt.b32{.mode} d, a, b, c`: "tmp64 = (b<<32) | a"; each byte of d is `ReadByte(mode,
/// ctl[k], tmp64)`. The modes select by `c[1:0]` from fixed selector tables (each entry the four
/// selectors of d.b3..d.b0, no sign replication), which the generic form then applies.
pub fn prmt(mode: PrmtMode, a: i64, b: i64, c: i64) -> i64 {
    const TABLES: [[u16; 4]; 6] = [
        [0x3210, 0x4321, 0x5432, 0x6543], // .f4e
        [0x5670, 0x6701, 0x7012, 0x0123], // .b4e
        [0x0000, 0x1111, 0x2222, 0x3333], // .rc8
        [0x3210, 0x3211, 0x3222, 0x3333], // .ecl
        [0x0000, 0x1110, 0x2210, 0x3210], // .ecr
        [0x1010, 0x3232, 0x1010, 0x3232], // .rc16
    ];
    let table = |k: usize| i64::from(TABLES[k][(c & 3) as usize]);
    let selectors = match mode {
        PrmtMode::Generic => c & 0xFFFF,
        PrmtMode::F4e => table(0),
        PrmtMode::B4e => table(1),
        PrmtMode::Rc8 => table(2),
        PrmtMode::Ecl => table(3),
        PrmtMode::Ecr => table(4),
        PrmtMode::Rc16 => table(5),
    };
    let tmp64 = (low(b, 32) << 32) | low(a, 32);
    let mut d = 0u64;
    for k in 0..4 {
        let ctl = (selectors >> (4 * k)) & 0xF;
        let byte = (tmp64 >> (8 * (ctl & 7))) & 0xFF;
        // "msb=1 means replicate the sign" of the byte (the generic form only: the tables never
        // set it).
        let byte = if ctl & 8 != 0 {
            if byte & 0x80 != 0 {
                0xFF
            } else {
                0
            }
        } else {
            byte
        };
        d |= byte << (8 * k);
    }
    d as i64
}

/// `shf.l|r.clamp|wrap.b32 d, a, b, c`: "n = (.mode == .clamp) ? min(c, 32) : c & 0x1f"; the
/// 64-bit `[b, a]` shifted by n; `.l` keeps its 32 msbs, `.r` its 32 lsbs.
pub fn shf(left: bool, clamp: bool, a: i64, b: i64, c: i64) -> i64 {
    let c = low(c, 32);
    let n = if clamp { c.min(32) } else { c & 0x1f } as u32;
    let v = (low(b, 32) << 32) | low(a, 32);
    let r = if left { (v << n) >> 32 } else { (v >> n) & 0xFFFF_FFFF };
    r as i64
}

/// `bmsk.clamp|wrap.b32 d, a, b`: a mask of b bits from bit a, following the ISA's pseudo-code
/// (`.clamp`: a position or width of 32 or more is not wrapped; the mask is 0 when the field
/// overflows the register, or its width is 0).
pub fn bmsk(clamp: bool, a: i64, b: i64) -> i64 {
    let (a, b) = (low(a, 32), low(b, 32));
    let a1 = a & 0x1f;
    let b1 = b & 0x1f;
    let mut mask0: u64 = 0xFFFF_FFFF << a1;
    let sum = a1 + b1;
    let mut mask1: u64 = if sum >= 32 { 0 } else { 0xFFFF_FFFF << sum };
    let (mut position_overflow, mut width_overflow) = (false, false);
    if clamp {
        if a >= 32 {
            position_overflow = true;
            mask0 = 0;
        }
        width_overflow = b >= 32;
    }
    if sum >= 32 || position_overflow || width_overflow {
        mask1 = 0;
    } else if b1 == 0 {
        mask1 = !0;
    }
    (mask0 & !mask1 & 0xFFFF_FFFF) as i64
}

/// `szext.clamp|wrap.u32|s32 d, a, b`: the low b bits of a, zero- or sign-extended to 32 bits
/// (the ISA's pseudo-code: `b1 = b & 0x1f`, a width of 32 or more keeps a under `.clamp`).
pub fn szext(clamp: bool, signed: bool, a: i64, b: i64) -> i64 {
    let (a, b) = (low(a, 32), low(b, 32));
    let b1 = b & 0x1f;
    let too_large = b >= 32 && clamp;
    let mask: u64 = if too_large { 0 } else { (0xFFFF_FFFFu64 << b1) & 0xFFFF_FFFF };
    let sign_pos = (b1.wrapping_sub(1)) & 0x1f;
    let sign = b1 != 0 && !too_large && signed && (a >> sign_pos) & 1 == 1;
    ((a & !mask & 0xFFFF_FFFF) | if sign { mask } else { 0 }) as i64
}

/// The 48-bit product of the 24-bit `a` and `b` (their low 24 bits, sign-extended for `.s32`):
/// its bits 47..16 (`.hi`) or 31..0 (`.lo`).
fn mul24(signed: bool, hi: bool, a: i64, b: i64) -> i64 {
    let ext = |v: i64| {
        let v = low(v, 24) as i64;
        if signed {
            (v << 40) >> 40
        } else {
            v
        }
    };
    let t = ext(a) * ext(b);
    if hi {
        t >> 16
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Ty {
        Ty::parse(s).unwrap()
    }

    fn op3(ty: &str, op: LocalOp, x: i64, y: i64, z: i64) -> i64 {
        t(ty).local3(op, x, y, z)
    }

    #[test]
    fn bfe_extracts_and_sign_extends() {
        // bfe.u32 d, 0xABCD1234, 8, 4: bits 8..11 of ...1234 are 0x2.
        assert_eq!(op3("u32", LocalOp::Bfe, 0xABCD_1234, 8, 4), 0x2);
        // The ISA's sbit: a[min(pos+len-1, msb)]; 0xF0 from bit 4, 4 bits: 0xF, negative for .s32.
        assert_eq!(op3("s32", LocalOp::Bfe, 0xF0, 4, 4), -1);
        assert_eq!(op3("u32", LocalOp::Bfe, 0xF0, 4, 4), 0xF);
        assert_eq!(op3("s32", LocalOp::Bfe, 0x70, 4, 4), 7);
        // A field running past the msb: the sign bit is the msb, replicated.
        assert_eq!(op3("s32", LocalOp::Bfe, 0x8000_0000u32 as i64, 28, 8), -8);
        assert_eq!(op3("u32", LocalOp::Bfe, 0x8000_0000u32 as i64, 28, 8), 8);
        // A start beyond the msb: filled with the sign bit (the msb of the input for .s32).
        assert_eq!(op3("s32", LocalOp::Bfe, 0x8000_0000u32 as i64, 40, 4), -1);
        assert_eq!(op3("u32", LocalOp::Bfe, 0x8000_0000u32 as i64, 40, 4), 0);
        // A length of zero is zero, and pos/len take their low 8 bits (0x108 is 8).
        assert_eq!(op3("s32", LocalOp::Bfe, -1, 3, 0), 0);
        assert_eq!(op3("u32", LocalOp::Bfe, 0xABCD_1234, 0x108, 0x104), 0x2);
        // 64-bit.
        assert_eq!(op3("u64", LocalOp::Bfe, 0x0123_4567_89AB_CDEF, 32, 16), 0x4567);
        assert_eq!(op3("s64", LocalOp::Bfe, 0x0123_4567_89AB_CDEF, 12, 8), -68);
        // 0xBC sign-extended
    }

    #[test]
    fn bfi_inserts() {
        // bfi.b32 f, 0xFF, 0, 8, 4: four ones at bit 8.
        assert_eq!(op3("b32", LocalOp::Bfi, 0xFF, 0, bfi_field(8, 4)), 0xF00);
        assert_eq!(op3("b32", LocalOp::Bfi, 0x5, 0xFFFF_FFFF, bfi_field(4, 4)), 0xFFFF_FF5F);
        // Length 0 or a start beyond the msb: b.
        assert_eq!(op3("b32", LocalOp::Bfi, 0xFF, 0x1234, bfi_field(4, 0)), 0x1234);
        assert_eq!(op3("b32", LocalOp::Bfi, 0xFF, 0x1234, bfi_field(32, 4)), 0x1234);
        // Clipped at the msb.
        assert_eq!(op3("b32", LocalOp::Bfi, 0xFF, 0, bfi_field(30, 8)), 0xC000_0000);
        assert_eq!(op3("b64", LocalOp::Bfi, 0xFF, 0, bfi_field(60, 8)), 0xF000_0000_0000_0000u64 as i64);
        assert_eq!(bfi_field(0x1FF, 0x203), 0x3FF);
    }

    #[test]
    fn counts_and_reversal() {
        assert_eq!(t("b32").local(LocalOp::Brev, 1, 0), 0x8000_0000);
        assert_eq!(t("b32").local(LocalOp::Brev, 0x0000_00F0, 0), 0x0F00_0000);
        assert_eq!(t("b64").local(LocalOp::Brev, 1, 0), i64::MIN);
        assert_eq!(t("b32").local(LocalOp::Clz, 0, 0), 32);
        assert_eq!(t("b32").local(LocalOp::Clz, 1, 0), 31);
        assert_eq!(t("b32").local(LocalOp::Clz, -1, 0), 0);
        assert_eq!(t("b64").local(LocalOp::Clz, 0, 0), 64);
        assert_eq!(t("b64").local(LocalOp::Clz, 0xFFFF_FFFF, 0), 32);
        assert_eq!(t("b32").local(LocalOp::Popc, 0xF0F0, 0), 8);
        assert_eq!(t("b32").local(LocalOp::Popc, -1, 0), 32);
        assert_eq!(t("b64").local(LocalOp::Popc, -1, 0), 64);
    }

    #[test]
    fn bfind_and_shiftamt() {
        let f = |ty: &str, shiftamt: bool, a: i64| t(ty).local(LocalOp::Bfind { shiftamt }, a, 0);
        assert_eq!(f("u32", false, 0x10), 4);
        assert_eq!(f("u32", true, 0x10), 27);
        assert_eq!(f("u32", false, 0), 0xFFFF_FFFF);
        assert_eq!(f("u32", true, 0), 0xFFFF_FFFF);
        // Signed: the most significant 0 of a negative input.
        assert_eq!(f("s32", false, -1), 0xFFFF_FFFF);
        assert_eq!(f("s32", false, -2), 0);
        assert_eq!(f("s32", false, 0xFFFF_FF00u32 as i64), 7);
        assert_eq!(f("s32", true, 0xFFFF_FF00u32 as i64), 24);
        assert_eq!(f("s32", false, 0x7FFF_FFFF), 30);
        assert_eq!(f("u32", false, 0x8000_0000u32 as i64), 31);
        assert_eq!(f("u64", false, i64::MIN), 63);
        assert_eq!(f("u64", true, 1), 63);
        assert_eq!(f("s64", false, i64::MIN), 62);
    }

    #[test]
    fn prmt_modes() {
        let (a, b) = (0x3322_1100, 0x7766_5544);
        // The ISA's generic form: selectors 0x3210 are a, 0x7654 are b, 0x0123 reverse a.
        assert_eq!(prmt(PrmtMode::Generic, a, b, 0x3210), 0x3322_1100);
        assert_eq!(prmt(PrmtMode::Generic, a, b, 0x7654), 0x7766_5544);
        assert_eq!(prmt(PrmtMode::Generic, a, b, 0x0123), 0x0011_2233);
        assert_eq!(prmt(PrmtMode::Generic, a, b, 0x5140), 0x5511_4400);
        // Sign replication: selector 0x8 copies the sign of byte 0 (0x80 -> 0xFF).
        assert_eq!(prmt(PrmtMode::Generic, 0x0000_0080, 0, 0x8880), 0xFFFF_FF80u32 as i64);
        assert_eq!(prmt(PrmtMode::Generic, 0x0000_007F, 0, 0x8880), 0x0000_007F);
        // Bits above c[15:0] are not selectors.
        assert_eq!(prmt(PrmtMode::Generic, a, b, 0x1_3210), 0x3322_1100);
        // The modes, by c[1:0].
        assert_eq!(prmt(PrmtMode::F4e, a, b, 1), 0x4433_2211);
        assert_eq!(prmt(PrmtMode::F4e, a, b, 3), 0x6655_4433);
        assert_eq!(prmt(PrmtMode::F4e, a, b, 7), 0x6655_4433);
        assert_eq!(prmt(PrmtMode::B4e, a, b, 0), 0x5566_7700);
        assert_eq!(prmt(PrmtMode::B4e, a, b, 3), 0x0011_2233);
        assert_eq!(prmt(PrmtMode::Rc8, a, b, 2), 0x2222_2222);
        assert_eq!(prmt(PrmtMode::Ecl, a, b, 1), 0x3322_1111);
        assert_eq!(prmt(PrmtMode::Ecr, a, b, 2), 0x2222_1100);
        assert_eq!(prmt(PrmtMode::Rc16, a, b, 1), 0x3322_3322);
        assert_eq!(prmt(PrmtMode::Rc16, a, b, 2), 0x1100_1100);
    }

    #[test]
    fn lop3_tables() {
        // The ISA's examples: a & b & c is 0x80, a | b | c 0xFE, a & b & ~c 0x40, (a & b | c) ^ a 0x1A.
        let (a, b, c) = (0xF0F0_F0F0u32 as i64, 0xCCCC_CCCCu32 as i64, 0xAAAA_AAAAu32 as i64);
        let l = |lut: u8, x: i64, y: i64, z: i64| t("b32").local3(LocalOp::Lop3(lut), x, y, z);
        assert_eq!(l(0x80, a, b, c), a & b & c);
        assert_eq!(l(0xFE, a, b, c), a | b | c);
        assert_eq!(l(0x40, a, b, c), a & b & !c & 0xFFFF_FFFF);
        assert_eq!(l(0x1A, a, b, c), ((a & b) | c) ^ a);
        // F(ta, tb, tc) = immLut itself.
        assert_eq!(l(0x96, 0xF0, 0xCC, 0xAA), 0x96);
        assert_eq!(l(0xFF, 0, 0, 0), 0xFFFF_FFFF);
        assert_eq!(Ty::U32.local(LocalOp::Lop3Pred { or: true }, 0, 1), 1);
        assert_eq!(Ty::U32.local(LocalOp::Lop3Pred { or: false }, 5, 0), 0);
        assert_eq!(Ty::U32.local(LocalOp::Lop3Pred { or: false }, 5, 1), 1);
    }

    #[test]
    fn funnel_shifts() {
        let (a, b) = (0x89AB_CDEFu32 as i64, 0x0123_4567);
        assert_eq!(shf(true, false, a, b, 8), 0x2345_6789);
        assert_eq!(shf(false, false, a, b, 8), 0x6789_ABCD);
        // .wrap: the amount mod 32; .clamp: at most 32 (shf.l then gives a, shf.r gives b).
        assert_eq!(shf(true, false, a, b, 40), 0x2345_6789);
        assert_eq!(shf(true, true, a, b, 40), 0x89AB_CDEFu32 as i64);
        assert_eq!(shf(true, true, a, b, 32), 0x89AB_CDEFu32 as i64);
        assert_eq!(shf(false, true, a, b, 33), 0x0123_4567);
        assert_eq!(shf(true, false, a, b, 0), 0x0123_4567);
        assert_eq!(shf(false, false, a, b, 0), 0x89AB_CDEFu32 as i64);
        // A rotate: shf.l with a == b.
        assert_eq!(shf(true, false, 0x8000_0001u32 as i64, 0x8000_0001u32 as i64, 1), 3);
        assert_eq!(shf(true, true, a, b, -1), 0x89AB_CDEFu32 as i64);
    }

    #[test]
    fn masks_and_extensions() {
        // The ISA's example: bmsk.wrap.b32 rd, 1, 2 creates 0x00000006.
        assert_eq!(bmsk(false, 1, 2), 6);
        assert_eq!(bmsk(true, 1, 2), 6);
        assert_eq!(bmsk(false, 0, 0), 0);
        assert_eq!(bmsk(false, 28, 8), 0xF000_0000u32 as i64);
        assert_eq!(bmsk(false, 33, 2), 6); // wrap: 33 is 1
        assert_eq!(bmsk(true, 33, 2), 0);
        assert_eq!(bmsk(true, 4, 40), 0xFFFF_FFF0u32 as i64);
        assert_eq!(bmsk(false, 4, 32), 0);
        // szext: the ISA's example `szext.wrap.u32 rd, 0xffffffff, 0` is 0.
        assert_eq!(szext(false, false, 0xFFFF_FFFF, 0), 0);
        assert_eq!(szext(false, true, 0xF, 4), 0xFFFF_FFFF);
        assert_eq!(szext(false, false, 0xFF, 4), 0xF);
        assert_eq!(szext(false, true, 0x7, 4), 7);
        assert_eq!(szext(true, true, 0x8000_0000u32 as i64, 40), 0x8000_0000u32 as i64);
        assert_eq!(szext(false, true, 0x8000_0001u32 as i64, 33), 0xFFFF_FFFF);
        assert_eq!(t("s32").local(LocalOp::Szext { clamp: false }, 0xF, 4), -1);
        assert_eq!(t("u32").local(LocalOp::Szext { clamp: false }, 0xF, 4), 0xF);
    }

    #[test]
    fn products_of_24_bits() {
        // Only the low 24 bits take part: 0x01000002 * 3 = 6.
        assert_eq!(t("u32").local(LocalOp::Mul24 { hi: false }, 0x0100_0002, 3), 6);
        // 0xFFFFFF * 0xFFFFFF = 0xFFFFFE000001: lo 0xFE000001, hi (bits 47..16) 0xFFFFFE00.
        assert_eq!(t("u32").local(LocalOp::Mul24 { hi: false }, 0xFF_FFFF, 0xFF_FFFF), 0xFE00_0001);
        assert_eq!(t("u32").local(LocalOp::Mul24 { hi: true }, 0xFF_FFFF, 0xFF_FFFF), 0xFFFF_FE00);
        // Signed: 0xFFFFFF is -1 in 24 bits.
        assert_eq!(t("s32").local(LocalOp::Mul24 { hi: false }, 0xFF_FFFF, 5), -5);
        assert_eq!(t("s32").local(LocalOp::Mul24 { hi: true }, 0xFF_FFFF, 5), -1);
        assert_eq!(t("u32").local3(LocalOp::Mad24 { hi: false, sat: false }, 0xFF_FFFF, 0xFF_FFFF, 0x1FF_FFFF), 0x0000_0000);
        assert_eq!(t("s32").local3(LocalOp::Mad24 { hi: true, sat: true }, 0x7F_FFFF, 0x7F_FFFF, 0x7FFF_FFFF), 0x7FFF_FFFF);
        assert_eq!(t("s32").local3(LocalOp::Mad24 { hi: true, sat: false }, 0x7F_FFFF, 0x7F_FFFF, 0x7FFF_FFFF), -0x4000_0101);
    }

    #[test]
    fn sad_cnot_abs_relu() {
        assert_eq!(t("u32").local3(LocalOp::Sad, 3, 10, 100), 107);
        assert_eq!(t("u32").local3(LocalOp::Sad, 10, 3, 100), 107);
        // Unsigned: 0xFFFFFFFF is large, the difference 0xFFFFFFFE.
        assert_eq!(t("u32").local3(LocalOp::Sad, -1, 1, 0), 0xFFFF_FFFE);
        assert_eq!(t("s32").local3(LocalOp::Sad, -1, 1, 0), 2);
        assert_eq!(t("b32").local(LocalOp::Cnot, 0, 0), 1);
        assert_eq!(t("b32").local(LocalOp::Cnot, 0x1_0000_0000, 0), 1);
        assert_eq!(t("b16").local(LocalOp::Cnot, 7, 0), 0);
        assert_eq!(t("s32").local(LocalOp::Abs, -5, 0), 5);
        assert_eq!(t("s32").local(LocalOp::Abs, 0x8000_0000u32 as i64, 0), i32::MIN as i64);
        assert_eq!(t("s64").local(LocalOp::Abs, i64::MIN, 0), i64::MIN);
        assert_eq!(t("s16").local(LocalOp::Abs, 0xFFFF, 0), 1);
        assert_eq!(t("s32").local(LocalOp::Relu { max: false }, -3, 5), 0);
        assert_eq!(t("s32").local(LocalOp::Relu { max: true }, -3, -5), 0);
        assert_eq!(t("s32").local(LocalOp::Relu { max: true }, -3, 5), 5);
    }

    /// Every bit operation gives back its first unknown operand, whichever operand it is (even
    /// one the operation ignores, as `Ty::local3` does) and whatever the type: no bit of an
    /// unknown value becomes a known number.
    #[test]
    fn unknown_operands_are_absorbed() {
        let (u, v) = (unknown::encode(3), unknown::encode(9));
        let ops = [
            LocalOp::Bfe,
            LocalOp::Bfi,
            LocalOp::BfiField,
            LocalOp::Brev,
            LocalOp::Clz,
            LocalOp::Popc,
            LocalOp::Bfind { shiftamt: true },
            LocalOp::Prmt(PrmtMode::Generic),
            LocalOp::Prmt(PrmtMode::Rc16),
            LocalOp::Lop3(0x96),
            LocalOp::Lop3Pred { or: true },
            LocalOp::Shf { left: true, clamp: false },
            LocalOp::Bmsk { clamp: true },
            LocalOp::Szext { clamp: false },
            LocalOp::Mul24 { hi: true },
            LocalOp::Mad24 { hi: true, sat: true },
            LocalOp::Sad,
            LocalOp::Cnot,
            LocalOp::Abs,
            LocalOp::Relu { max: true },
        ];
        for op in ops {
            assert!(is_bit_op(op));
            for ty in ["b32", "u32", "s32", "b64", "s64", "u16"] {
                let ty = t(ty);
                assert_eq!(compute(ty, op, u, 1, 2), u, "{op:?} {ty:?}");
                assert_eq!(compute(ty, op, 1, u, v), u, "{op:?} {ty:?}");
                assert_eq!(compute(ty, op, 0, 0, v), v, "{op:?} {ty:?}");
                assert_eq!(ty.local3(op, 5, v, u), v, "{op:?} {ty:?}");
                assert_eq!(ty.local(op, u, 7), u, "{op:?} {ty:?}");
            }
        }
    }
}
