//! Helpers on rows of `u64` words: sizes, the mask of a row's last word, word-wise operators,
//! single bits, and iteration over set bits.

/// Number of `u64` words needed for `n` bits.
pub(super) fn words_for(n: usize) -> usize {
    n.div_ceil(64)
}

/// The valid bits of the last word of an `n`-bit row (`n > 0`).
pub(super) fn tail_mask(n: usize) -> u64 {
    match n % 64 {
        0 => !0,
        r => (1u64 << r) - 1,
    }
}

/// Word-wise `a op= b`.
#[inline]
pub(super) fn zip_assign(a: &mut [u64], b: &[u64], f: impl Fn(u64, u64) -> u64) {
    for (x, y) in a.iter_mut().zip(b) {
        *x = f(*x, *y);
    }
}

/// Word-wise `a op= b`; whether any bit of the result is set.
#[inline]
pub(super) fn zip_assign_any(a: &mut [u64], b: &[u64], f: impl Fn(u64, u64) -> u64) -> bool {
    let mut any = 0;
    for (x, y) in a.iter_mut().zip(b) {
        *x = f(*x, *y);
        any |= *x;
    }
    any != 0
}

pub(super) struct BitIter {
    pub(super) word: u64,
    pub(super) base: usize,
}

impl Iterator for BitIter {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        if self.word == 0 {
            return None;
        }
        let tz = self.word.trailing_zeros() as usize;
        self.word &= self.word - 1;
        Some(self.base + tz)
    }
}

#[inline(always)]
pub(super) fn set_bit(words: &mut [u64], i: usize) {
    words[i / 64] |= 1 << (i % 64);
}

#[inline(always)]
pub(super) fn clear_bit(words: &mut [u64], i: usize) {
    words[i / 64] &= !(1 << (i % 64));
}
