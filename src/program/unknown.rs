//! Unknown values: what a kernel computes that the model does not interpret (floating-point
//! math, `mma` on registers, warp exchanges of lanes not modelled), the bytes of kernel
//! parameters a user does not give, and registers a kernel reads before writing them.
//!
//! An unknown value is a number like any other as it flows through registers and memory, so
//! that every candidate stays value-consistent (a read of it reads a write that wrote exactly
//! it), but it is marked: its top 20 bits are [`TAG`] and its low 32 bits name its *origin*, the
//! instruction or parameter byte that made it ([`Program::unknowns`]). Arithmetic on an unknown
//! value gives that value back (the first unknown operand: every arithmetic function of
//! `program::types` and `exec::trace` absorbs it), so an unknown never turns into a number that
//! looks known. The runs never decide anything with one: a branch on an unknown value goes both
//! ways (and the report says so), and an instruction that needs it known (an address, an mbarrier
//! count, a copy size) stops the check at its line, naming the origin. Constants of a test in
//! the tagged range are rejected when lowered, so no known value is ever read as unknown.

use crate::diag::Span;

/// The top 20 bits of an unknown value.
pub const TAG: i64 = 0x7FF5_A000_0000_0000;
const TAG_MASK: i64 = 0xFFFF_F000_0000_0000_u64 as i64;

/// The unknown value of origin `origin`.
pub fn encode(origin: u32) -> i64 {
    TAG | i64::from(origin)
}

/// Whether `v` is an unknown value.
pub fn is_unknown(v: i64) -> bool {
    v & TAG_MASK == TAG
}

/// The origin of an unknown value.
pub fn origin(v: i64) -> Option<u32> {
    is_unknown(v).then_some(v as u32)
}

/// The first unknown value among `values`, if any: what arithmetic on them gives.
pub fn first(values: &[i64]) -> Option<i64> {
    values.iter().copied().find(|&v| is_unknown(v))
}

/// Where an unknown value comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownOrigin {
    /// The line of the instruction or declaration that made it (of the test's file).
    pub line: usize,
    pub span: Span,
    /// The instruction as written, or the parameter bytes (`param_0+16`).
    pub what: String,
    /// Why it is unknown: `floating-point arithmetic the model does not interpret`, `a
    /// parameter byte no --param gives`.
    pub why: String,
    /// What it is: an abstracted instruction, or bytes of a kernel parameter.
    pub kind: UnknownKind,
}

/// What made a value unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnknownKind {
    /// A register-only instruction the model does not interpret (taken out of the program; its
    /// destinations are unknown).
    Abstracted,
    /// Bytes of a kernel parameter the test does not bind.
    Parameter,
    /// A register of a kernel read before any instruction writes it: PTX gives a register no
    /// initial value (nvcc's inline asm reads one as the default of a guarded load).
    Uninitialized,
    /// A value the PTX ISA leaves undefined (a shuffle from a lane that does not take part).
    Undefined,
}

impl UnknownOrigin {
    /// `\`fma.rn.f32 %f3, %f1, %f2, %f0\` (line 27: floating-point arithmetic ...)`.
    pub fn describe(&self) -> String {
        match self.kind {
            UnknownKind::Abstracted => format!("`{}` (line {}), which ptxmm abstracted: {}", self.what, self.line, self.why),
            UnknownKind::Undefined => format!("`{}` (line {}): {}", self.what, self.line, self.why),
            UnknownKind::Uninitialized => format!("the register `{}` (first read at line {}): {}", self.what, self.line, self.why),
            UnknownKind::Parameter => {
                let (name, offset) = self.what.rsplit_once('+').unwrap_or((&self.what, "0"));
                format!(
                    "bytes {offset}.. of the kernel parameter `{}` (`{}+{offset}`): {}",
                    short_parameter(name),
                    short_parameter(name),
                    self.why
                )
            }
        }
    }
}

impl UnknownOrigin {
    /// The flag that gives a parameter byte its value (`--param param_0+32=VALUE`), for an
    /// origin that is one.
    pub fn parameter_flag(&self) -> Option<String> {
        (self.kind == UnknownKind::Parameter).then(|| {
            let (name, offset) = self.what.rsplit_once('+').unwrap_or((&self.what, "0"));
            format!("--param {}+{offset}=VALUE", short_parameter(name))
        })
    }
}

/// `param_N` for nvcc's `..._param_N` (a mangled name can be a thousand characters), else the
/// name.
pub fn short_parameter(name: &str) -> &str {
    match name.rfind("_param_") {
        Some(i) if i + 7 < name.len() && name[i + 7..].bytes().all(|b| b.is_ascii_digit()) => &name[i + 1..],
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_values_carry_their_origin_and_no_small_number_is_one() {
        let u = encode(7);
        assert!(is_unknown(u) && origin(u) == Some(7));
        assert!(is_unknown(encode(u32::MAX)));
        for v in [0, 1, -1, i64::MAX, i64::MIN, 0x1000_0000, u32::MAX as i64, crate::program::ADDRESS_BASE] {
            assert!(!is_unknown(v), "{v:#x}");
        }
        assert_eq!(first(&[1, u, encode(3)]), Some(u));
        assert_eq!(first(&[1, 2]), None);
    }
}
