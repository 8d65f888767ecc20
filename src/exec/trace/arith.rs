//! The arithmetic of PTX instructions on untyped 64-bit values: comparisons, what an RMW
//! writes, register arithmetic, and the word-level helpers (joining two words, keeping the
//! low bytes).

use super::deps::DepMask;
use crate::program::{unknown, LocalOp, RmwOp};

/// The high 32 bits of a 64-bit value (an unknown value's are itself).
pub fn high_word(v: i64) -> i64 {
    if unknown::is_unknown(v) {
        v
    } else {
        v >> 32
    }
}

pub fn compare(cmp: crate::litmus::ast::CmpOp, x: i64, y: i64) -> bool {
    use crate::litmus::ast::CmpOp::*;
    match cmp {
        Eq => x == y,
        Ne => x != y,
        Lt => x < y,
        Le => x <= y,
        Gt => x > y,
        Ge => x >= y,
    }
}

/// The value an RMW writes, given the old value and its operands (PTX ISA §9.7.13.5).
pub fn rmw_result(op: RmwOp, old: i64, ops: &[(i64, DepMask)]) -> i64 {
    if let Some(u) = unknown::first(&[old]).or_else(|| ops.iter().map(|o| o.0).find(|&v| unknown::is_unknown(v))) {
        return u;
    }
    let v = ops.first().map(|o| o.0).unwrap_or(0);
    match op {
        RmwOp::Add => old.wrapping_add(v),
        RmwOp::Sub => old.wrapping_sub(v),
        RmwOp::Mul => old.wrapping_mul(v),
        // Division by zero has no defined result; keep the old value rather than fault.
        RmwOp::Div => old.checked_div(v).unwrap_or(old),
        RmwOp::And => old & v,
        RmwOp::Or => old | v,
        RmwOp::Xor => old ^ v,
        RmwOp::Min => old.min(v),
        RmwOp::Max => old.max(v),
        // inc/dec wrap within [0, v] and are defined only for .u32 (PTX ISA §9.7.13.5): an
        // untyped one computes as .u32 (comparisons unsigned, no overflow past the width).
        RmwOp::Inc | RmwOp::Dec => crate::program::Ty::U32.rmw(op, old, &[v]),
        RmwOp::Exch => v,
        // cas writes `new` if old == cmp, else writes the old value back (as Dat3M lowers it).
        RmwOp::Cas => {
            let new = ops.get(1).map(|o| o.0).unwrap_or(0);
            if old == v {
                new
            } else {
                old
            }
        }
    }
}

pub fn local_result(op: LocalOp, x: i64, y: i64) -> i64 {
    if let Some(u) = unknown::first(&[x, y]) {
        return u;
    }
    match op {
        LocalOp::Mov => x,
        LocalOp::Add => x.wrapping_add(y),
        LocalOp::Sub => x.wrapping_sub(y),
        LocalOp::Mul => x.wrapping_mul(y),
        LocalOp::Div => x.checked_div(y).unwrap_or(0),
        LocalOp::Rem => x.checked_rem(y).unwrap_or(0),
        LocalOp::And => x & y,
        LocalOp::Or => x | y,
        LocalOp::Xor => x ^ y,
        LocalOp::Shl => x.wrapping_shl(y as u32),
        LocalOp::Shr => x.wrapping_shr(y as u32),
        LocalOp::Min => x.min(y),
        LocalOp::Max => x.max(y),
        LocalOp::Set(c) => compare(c, x, y) as i64,
        // Lowering gives these a type; untyped, they compute on the unbounded integers.
        LocalOp::MulWide | LocalOp::Mad | LocalOp::MadWide => x.wrapping_mul(y),
        LocalOp::MulHi => ((x as i128 * y as i128) >> 64) as i64,
        LocalOp::Selp | LocalOp::Cvt(_) | LocalOp::Mapa => x,
        LocalOp::Elect { lanes, lane, is_leader } => crate::program::types::elect(lanes, lane, is_leader, x),
        // Lowering types the bit operations; untyped, they compute on 64-bit patterns.
        op => UNTYPED_BITS.local(op, x, y),
    }
}

/// The type an untyped bit operation computes at (lowering always gives them one).
const UNTYPED_BITS: crate::program::Ty = crate::program::Ty { kind: crate::program::types::Kind::B, bits: 64 };

/// [`local_result`] with a third operand: the addend of `mad`, the predicate of `selp`.
pub fn local3_result(op: LocalOp, x: i64, y: i64, z: i64) -> i64 {
    if let Some(u) = unknown::first(&[x, y, z]) {
        return u;
    }
    match op {
        LocalOp::Mad | LocalOp::MadWide => x.wrapping_mul(y).wrapping_add(z),
        LocalOp::Selp if z != 0 => x,
        LocalOp::Selp => y,
        op if crate::program::bits::is_bit_op(op) => UNTYPED_BITS.local3(op, x, y, z),
        _ => local_result(op, x, y),
    }
}

/// A 64-bit value from its two words (each taken as its 32-bit pattern), low word first.
pub fn join64(lo: i64, hi: i64) -> i64 {
    if let Some(u) = unknown::first(&[lo, hi]) {
        return u;
    }
    ((lo as u64 & 0xFFFF_FFFF) | ((hi as u64 & 0xFFFF_FFFF) << 32)) as i64
}

/// The low `bytes` bytes of `v` (little-endian words).
pub(super) fn low_bytes(v: i64, bytes: i64) -> i64 {
    if bytes >= 8 || unknown::is_unknown(v) {
        v
    } else if bytes <= 0 {
        0
    } else {
        v & ((1i64 << (8 * bytes)) - 1)
    }
}
