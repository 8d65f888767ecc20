//! Sets of events, as bit vectors.

use super::words::{tail_mask, words_for, zip_assign, BitIter};
use std::fmt;

/// A set of events, as a bit vector over event indices `0..n`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct EventSet {
    pub(super) n: usize,
    pub(super) bits: Vec<u64>,
}

impl EventSet {
    pub fn empty(n: usize) -> Self {
        EventSet { n, bits: vec![0; words_for(n)] }
    }

    pub fn full(n: usize) -> Self {
        let mut bits = vec![!0u64; words_for(n)];
        if let Some(last) = bits.last_mut() {
            *last = tail_mask(n);
        }
        EventSet { n, bits }
    }

    pub fn from_fn(n: usize, f: impl Fn(usize) -> bool) -> Self {
        let mut s = Self::empty(n);
        for i in 0..n {
            if f(i) {
                s.insert(i);
            }
        }
        s
    }

    /// The set of the given elements of `0..n`.
    pub fn from_iter_in(n: usize, elements: impl IntoIterator<Item = usize>) -> Self {
        let mut s = Self::empty(n);
        for i in elements {
            s.insert(i);
        }
        s
    }

    /// Size of the universe this set ranges over.
    pub fn universe(&self) -> usize {
        self.n
    }

    pub fn insert(&mut self, i: usize) {
        debug_assert!(i < self.n);
        self.bits[i / 64] |= 1 << (i % 64);
    }

    pub fn remove(&mut self, i: usize) {
        self.bits[i / 64] &= !(1 << (i % 64));
    }

    pub fn contains(&self, i: usize) -> bool {
        i < self.n && self.bits[i / 64] & (1 << (i % 64)) != 0
    }

    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|w| *w == 0)
    }

    pub fn len(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set has more than `k` elements (counting stops there).
    pub fn len_exceeds(&self, k: usize) -> bool {
        let mut seen = 0;
        for w in &self.bits {
            seen += w.count_ones() as usize;
            if seen > k {
                return true;
            }
        }
        false
    }

    /// The least element at or after `i`, skipping empty words.
    pub fn next_from(&self, i: usize) -> Option<usize> {
        let mut wi = i / 64;
        let mut word = *self.bits.get(wi)? & (!0u64 << (i % 64));
        loop {
            if word != 0 {
                return Some(wi * 64 + word.trailing_zeros() as usize);
            }
            wi += 1;
            word = *self.bits.get(wi)?;
        }
    }

    /// The greatest element at or before `i`, skipping empty words.
    pub fn prev_from(&self, i: usize) -> Option<usize> {
        let i = i.min(self.n.checked_sub(1)?);
        let mut wi = i / 64;
        let mut word = self.bits[wi] & (!0u64 >> (63 - i % 64));
        loop {
            if word != 0 {
                return Some(wi * 64 + 63 - word.leading_zeros() as usize);
            }
            wi = wi.checked_sub(1)?;
            word = self.bits[wi];
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.bits.iter().enumerate().flat_map(|(wi, &w)| BitIter { word: w, base: wi * 64 })
    }

    pub fn union(&self, o: &Self) -> Self {
        self.zip(o, |a, b| a | b)
    }

    pub fn intersection(&self, o: &Self) -> Self {
        self.zip(o, |a, b| a & b)
    }

    pub fn difference(&self, o: &Self) -> Self {
        self.zip(o, |a, b| a & !b)
    }

    /// `self = self ∪ o`, in place.
    pub fn union_with(&mut self, o: &Self) {
        self.zip_with(o, |a, b| a | b);
    }

    /// `self = self ∩ o`, in place.
    pub fn intersect_with(&mut self, o: &Self) {
        self.zip_with(o, |a, b| a & b);
    }

    /// `self = self \ o`, in place.
    pub fn difference_with(&mut self, o: &Self) {
        self.zip_with(o, |a, b| a & !b);
    }

    /// `self = o \ self`, in place (for callers that own the right operand of a difference).
    pub fn subtract_from(&mut self, o: &Self) {
        self.zip_with(o, |a, b| b & !a);
    }

    /// Complement within the universe `0..n`.
    pub fn complement(&self) -> Self {
        let mut s = self.clone();
        s.complement_in_place();
        s
    }

    /// Complement within the universe `0..n`, in place.
    pub fn complement_in_place(&mut self) {
        for x in &mut self.bits {
            *x = !*x;
        }
        if let Some(last) = self.bits.last_mut() {
            *last &= tail_mask(self.n);
        }
    }

    /// Whether the two sets have no element in common.
    pub fn is_disjoint(&self, o: &Self) -> bool {
        self.bits.iter().zip(&o.bits).all(|(a, b)| a & b == 0)
    }

    pub fn is_subset(&self, o: &Self) -> bool {
        self.bits.iter().zip(&o.bits).all(|(a, b)| a & !b == 0)
    }

    fn zip(&self, o: &Self, f: impl Fn(u64, u64) -> u64) -> Self {
        assert_eq!(self.n, o.n, "event sets over different universes");
        EventSet { n: self.n, bits: self.bits.iter().zip(&o.bits).map(|(a, b)| f(*a, *b)).collect() }
    }

    fn zip_with(&mut self, o: &Self, f: impl Fn(u64, u64) -> u64) {
        assert_eq!(self.n, o.n, "event sets over different universes");
        zip_assign(&mut self.bits, &o.bits, f);
    }

    pub(crate) fn words(&self) -> &[u64] {
        &self.bits
    }
}

impl fmt::Debug for EventSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}
