//! Dense bit-matrix relations and bit-set event sets.
//!
//! A relation over `n` events is an `n × n` bit matrix stored row-major in `u64` words (`w =
//! ⌈n/64⌉` words a row). Every operation the cat language needs (union, intersection,
//! difference, sequence, inverse, closures, products) is a word-parallel loop over these rows.
//! Executions range from about ten events to several hundred, so the kernels are written for
//! every row width: the hot loops are instantiated for rows of 1 to 8 words (up to 512 events)
//! with the width known at compile time, and fall back to a generic loop beyond.
//!
//! * `seq` ORs, for every pair `(a, b)` of the left operand, row `b` of the right one into row
//!   `a` of the result.
//! * `plus` (and `star`) compute the strongly connected components with an iterative Tarjan
//!   search whose visited and on-stack sets are bit masks (so a DAG costs `O(n·w)` plus its
//!   tree edges), and propagate reachability through the components in reverse topological
//!   order, skipping successors already reached through an earlier one. Rows of one word use a
//!   branch-free Warshall instead, which is faster at that size.
//! * `is_acyclic` is a depth-first search with the same masks, stopping at the first back edge.
//! * `inverse` transposes 64 × 64 blocks, skipping empty blocks and scattering sparse ones.
//!
//! Most operations have an in-place form (`union_with`, `intersect_with`, `seq_with`,
//! `plus_in_place`, ...) for callers that own an operand, so that evaluation does not allocate
//! a fresh matrix per operator.
//!
//! Invariant: bits at column indices `>= n` are always zero, so word-wise comparisons are exact.
//!
//! Files: `words` (rows of words), `set` ([`EventSet`]), `spare` (reused matrices), `kernels`
//! (the loops of composition, closures, acyclicity and transposition), and this file, the
//! [`Relation`] and its operators.

mod kernels;
mod set;
mod spare;
#[cfg(test)]
mod tests;
mod words;

pub use set::EventSet;

use kernels::{
    acyclic_kernel, closure_kernel, forward, forward_closure_kernel, seq_kernel, seq_kernel_in_place, transpose64, warshall1, with_width,
};
use spare::{copied_words, give_words, take_words, zeroed_words};
use std::fmt;
use words::{tail_mask, words_for, zip_assign, zip_assign_any, BitIter};

/// A binary relation over events `0..n`, as a dense bit matrix.
#[derive(PartialEq, Eq, Hash)]
pub struct Relation {
    n: usize,
    w: usize,
    bits: Vec<u64>,
}

impl Clone for Relation {
    fn clone(&self) -> Self {
        Relation { n: self.n, w: self.w, bits: copied_words(&self.bits) }
    }
}

impl Drop for Relation {
    fn drop(&mut self) {
        give_words(std::mem::take(&mut self.bits));
    }
}

impl Relation {
    /// The bytes a relation on `0..n` takes (its bit matrix), for estimates before allocating.
    pub fn bytes_for(n: usize) -> u64 {
        (n as u64).saturating_mul(words_for(n) as u64).saturating_mul(8)
    }

    pub fn empty(n: usize) -> Self {
        let w = words_for(n);
        Relation { n, w, bits: zeroed_words(n * w) }
    }

    /// The identity relation on `0..n`.
    pub fn identity(n: usize) -> Self {
        let mut r = Self::empty(n);
        r.add_identity();
        r
    }

    /// The identity restricted to a set: `[s]` in cat.
    pub fn of_set(s: &EventSet) -> Self {
        let mut r = Self::empty(s.universe());
        for i in s.iter() {
            r.insert(i, i);
        }
        r
    }

    /// Cartesian product `a * b`.
    pub fn product(a: &EventSet, b: &EventSet) -> Self {
        let mut r = Self::empty(a.universe());
        for i in a.iter() {
            r.row_mut(i).copy_from_slice(b.words());
        }
        r
    }

    pub fn from_pairs(n: usize, pairs: impl IntoIterator<Item = (usize, usize)>) -> Self {
        let mut r = Self::empty(n);
        for (a, b) in pairs {
            r.insert(a, b);
        }
        r
    }

    pub fn from_fn(n: usize, f: impl Fn(usize, usize) -> bool) -> Self {
        let mut r = Self::empty(n);
        for a in 0..n {
            for b in 0..n {
                if f(a, b) {
                    r.insert(a, b);
                }
            }
        }
        r
    }

    pub fn universe(&self) -> usize {
        self.n
    }

    fn row(&self, i: usize) -> &[u64] {
        &self.bits[i * self.w..(i + 1) * self.w]
    }

    fn row_mut(&mut self, i: usize) -> &mut [u64] {
        &mut self.bits[i * self.w..(i + 1) * self.w]
    }

    pub fn insert(&mut self, a: usize, b: usize) {
        debug_assert!(a < self.n && b < self.n);
        self.bits[a * self.w + b / 64] |= 1 << (b % 64);
    }

    /// Relate `a` to every event of `s`: `self ∪ {a} × s`, one row at a time.
    pub fn insert_row(&mut self, a: usize, s: &EventSet) {
        debug_assert_eq!(s.universe(), self.n);
        for (w, x) in self.row_mut(a).iter_mut().zip(s.words()) {
            *w |= x;
        }
    }

    pub fn remove(&mut self, a: usize, b: usize) {
        self.bits[a * self.w + b / 64] &= !(1 << (b % 64));
    }

    pub fn contains(&self, a: usize, b: usize) -> bool {
        a < self.n && b < self.n && self.bits[a * self.w + b / 64] & (1 << (b % 64)) != 0
    }

    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|w| *w == 0)
    }

    pub fn len(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Predecessors of `b`.
    pub fn predecessors(&self, b: usize) -> Vec<usize> {
        (0..self.n).filter(|&a| self.contains(a, b)).collect()
    }

    /// Successors of `a`.
    pub fn successors(&self, a: usize) -> EventSet {
        EventSet { n: self.n, bits: self.row(a).to_vec() }
    }

    pub fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.n).flat_map(move |a| {
            self.row(a).iter().enumerate().flat_map(move |(wi, &w)| BitIter { word: w, base: wi * 64 }.map(move |b| (a, b)))
        })
    }

    pub fn union(&self, o: &Self) -> Self {
        self.zip(o, |a, b| a | b)
    }

    /// `self = self ∪ o`, in place.
    pub fn union_with(&mut self, o: &Self) {
        self.zip_with(o, |a, b| a | b);
    }

    pub fn intersection(&self, o: &Self) -> Self {
        self.zip(o, |a, b| a & b)
    }

    /// `self = self ∩ o`, in place. Returns whether any pair remains (for free: callers that
    /// treat empty relations specially need not scan the result).
    pub fn intersect_with(&mut self, o: &Self) -> bool {
        self.zip_with_any(o, |a, b| a & b)
    }

    pub fn difference(&self, o: &Self) -> Self {
        self.zip(o, |a, b| a & !b)
    }

    /// `self = self \ o`, in place. Returns whether any pair remains.
    pub fn difference_with(&mut self, o: &Self) -> bool {
        self.zip_with_any(o, |a, b| a & !b)
    }

    /// `self = o \ self`, in place (for callers that own the right operand of a difference).
    /// Returns whether any pair remains.
    pub fn subtract_from(&mut self, o: &Self) -> bool {
        self.zip_with_any(o, |a, b| b & !a)
    }

    pub fn is_subset(&self, o: &Self) -> bool {
        self.bits.iter().zip(&o.bits).all(|(a, b)| a & !b == 0)
    }

    /// Complement within `0..n × 0..n`.
    pub fn complement(&self) -> Self {
        let mut r = self.clone();
        r.complement_in_place();
        r
    }

    /// Complement within `0..n × 0..n`, in place.
    pub fn complement_in_place(&mut self) {
        if self.n == 0 {
            return;
        }
        let (w, tail) = (self.w, tail_mask(self.n));
        for row in self.bits.chunks_exact_mut(w) {
            for x in row.iter_mut() {
                *x = !*x;
            }
            row[w - 1] &= tail;
        }
    }

    fn zip(&self, o: &Self, f: impl Fn(u64, u64) -> u64) -> Self {
        assert_eq!(self.n, o.n, "relations over different universes");
        let mut bits = take_words(self.bits.len());
        for ((x, a), b) in bits.iter_mut().zip(&self.bits).zip(&o.bits) {
            *x = f(*a, *b);
        }
        Relation { n: self.n, w: self.w, bits }
    }

    fn zip_with(&mut self, o: &Self, f: impl Fn(u64, u64) -> u64) {
        assert_eq!(self.n, o.n, "relations over different universes");
        zip_assign(&mut self.bits, &o.bits, f);
    }

    /// `self op o` into fresh storage, and whether it has any pair.
    fn zip_any(&self, o: &Self, f: impl Fn(u64, u64) -> u64) -> (Self, bool) {
        assert_eq!(self.n, o.n, "relations over different universes");
        let mut bits = take_words(self.bits.len());
        let mut any = 0;
        for ((x, a), b) in bits.iter_mut().zip(&self.bits).zip(&o.bits) {
            *x = f(*a, *b);
            any |= *x;
        }
        (Relation { n: self.n, w: self.w, bits }, any != 0)
    }

    /// `self ∩ o`, and whether it has any pair.
    pub(crate) fn intersection_checked(&self, o: &Self) -> (Self, bool) {
        self.zip_any(o, |a, b| a & b)
    }

    /// `self \ o`, and whether it has any pair.
    pub(crate) fn difference_checked(&self, o: &Self) -> (Self, bool) {
        self.zip_any(o, |a, b| a & !b)
    }

    fn zip_with_any(&mut self, o: &Self, f: impl Fn(u64, u64) -> u64) -> bool {
        assert_eq!(self.n, o.n, "relations over different universes");
        zip_assign_any(&mut self.bits, &o.bits, f)
    }

    /// Relational composition `self ; o`.
    pub fn seq(&self, o: &Self) -> Self {
        // `seq_into` writes every row.
        let mut r = Relation { n: self.n, w: self.w, bits: take_words(self.bits.len()) };
        self.seq_into(o, &mut r);
        r
    }

    /// `self ; o`, and whether it has any pair.
    pub(crate) fn seq_checked(&self, o: &Self) -> (Self, bool) {
        // `seq_into` writes every row.
        let mut r = Relation { n: self.n, w: self.w, bits: take_words(self.bits.len()) };
        let nonempty = self.seq_into(o, &mut r);
        (r, nonempty)
    }

    /// `self = self \ o^-1`, in place: removes the pairs `(a, b)` with `(b, a)` in `o`. Pair by
    /// pair when `self` is sparse (no transposition); returns whether any pair remains.
    pub fn difference_with_inverse(&mut self, o: &Self) -> bool {
        assert_eq!(self.n, o.n, "relations over different universes");
        let (n, w) = (self.n, self.w);
        if self.len() > 4 * n {
            return self.difference_with(&o.inverse());
        }
        let mut any = 0;
        for a in 0..n {
            let (aw, ab) = (a / 64, 1u64 << (a % 64));
            for wi in 0..w {
                let mut m = self.bits[a * w + wi];
                let mut keep = m;
                while m != 0 {
                    let t = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let b = wi * 64 + t;
                    if o.bits[b * w + aw] & ab != 0 {
                        keep &= !(1u64 << t);
                    }
                }
                self.bits[a * w + wi] = keep;
                any |= keep;
            }
        }
        any != 0
    }

    /// `out = self ; o`, reusing `out`'s storage (whatever it held is overwritten). Returns
    /// whether the result has any pair.
    pub fn seq_into(&self, o: &Self, out: &mut Self) -> bool {
        assert_eq!(self.n, o.n, "relations over different universes");
        if out.n != self.n {
            *out = Self::empty(self.n);
        }
        // Models compose with many relations that are empty in a given test (aliases,
        // restricted fences, ...): skip the work.
        if self.is_empty() || o.is_empty() {
            out.bits.fill(0);
            return false;
        }
        with_width!(self.w, |W| seq_kernel(W, &self.bits, &o.bits, &mut out.bits))
    }

    /// `self = self ; o`, in place. Returns whether the result has any pair.
    pub fn seq_with(&mut self, o: &Self) -> bool {
        assert_eq!(self.n, o.n, "relations over different universes");
        if o.is_empty() {
            self.bits.fill(0);
            return false;
        }
        with_width!(self.w, |W| seq_kernel_in_place(W, &mut self.bits, &o.bits))
    }

    /// The converse relation `self^-1`.
    pub fn inverse(&self) -> Self {
        let (n, w) = (self.n, self.w);
        let mut r = Self::empty(n);
        if n == 0 {
            return r;
        }
        if w == 1 {
            // One block: count its pairs, then scatter them or transpose it.
            let mut block = [0u64; 64];
            block[..n].copy_from_slice(&self.bits);
            if block.iter().map(|x| x.count_ones()).sum::<u32>() >= 192 {
                transpose64(&mut block);
                r.bits.copy_from_slice(&block[..n]);
            } else {
                for (a, &x) in self.bits.iter().enumerate() {
                    let mut m = x;
                    while m != 0 {
                        let b = m.trailing_zeros() as usize;
                        m &= m - 1;
                        r.bits[b] |= 1 << a;
                    }
                }
            }
            return r;
        }
        // Per block of the current strip: pairs seen, or `u32::MAX` once the block is dense.
        let mut small = [0u32; 8];
        let mut large = Vec::new();
        let ones: &mut [u32] = if w <= small.len() {
            &mut small[..w]
        } else {
            large.resize(w, 0);
            &mut large
        };
        let mut block = [0u64; 64];
        // One strip of 64 rows at a time, block (bi, bj) landing at rows 64·bj.., word bi. Pairs
        // are scattered one by one until their block proves dense (a transposition costs about
        // as much as scattering 100-200 pairs); dense blocks are then transposed whole, which
        // overwrites what was scattered of them.
        for (bi, strip) in self.bits.chunks(64 * w).enumerate() {
            ones.fill(0);
            for (k, row) in strip.chunks_exact(w).enumerate() {
                for (bj, (&x, count)) in row.iter().zip(ones.iter_mut()).enumerate() {
                    if x == 0 || *count == u32::MAX {
                        continue;
                    }
                    *count += x.count_ones();
                    if *count >= 128 {
                        *count = u32::MAX;
                        continue;
                    }
                    let mut m = x;
                    while m != 0 {
                        let b = bj * 64 + m.trailing_zeros() as usize;
                        m &= m - 1;
                        r.bits[b * w + bi] |= 1 << k;
                    }
                }
            }
            for (bj, &count) in ones.iter().enumerate() {
                if count != u32::MAX {
                    continue;
                }
                block.fill(0);
                for (x, row) in block.iter_mut().zip(strip.chunks_exact(w)) {
                    *x = row[bj];
                }
                transpose64(&mut block);
                for (k, &x) in block.iter().enumerate().take(n - bj * 64) {
                    r.bits[(bj * 64 + k) * w + bi] = x;
                }
            }
        }
        r
    }

    /// Transitive closure `r+`.
    pub fn plus(&self) -> Self {
        let mut r = self.clone();
        r.plus_in_place();
        r
    }

    /// `self = self+`, in place.
    pub fn plus_in_place(&mut self) {
        let (n, w) = (self.n, self.w);
        if self.is_empty() {
            return;
        }
        with_width!(w, |W| {
            if forward(W, &self.bits) {
                forward_closure_kernel(W, &mut self.bits);
            } else if W == 1 {
                warshall1(&mut self.bits);
            } else {
                closure_kernel(W, n, &mut self.bits);
            }
        });
    }

    /// Reflexive-transitive closure `r*`.
    pub fn star(&self) -> Self {
        let mut r = self.clone();
        r.star_in_place();
        r
    }

    /// `self = self*`, in place.
    pub fn star_in_place(&mut self) {
        self.plus_in_place();
        self.add_identity();
    }

    /// Reflexive closure `r?`.
    pub fn optional(&self) -> Self {
        let mut r = self.clone();
        r.add_identity();
        r
    }

    /// `self = self?` (adds the identity), in place.
    pub fn optional_in_place(&mut self) {
        self.add_identity();
    }

    fn add_identity(&mut self) {
        for i in 0..self.n {
            self.bits[i * self.w + i / 64] |= 1 << (i % 64);
        }
    }

    pub fn is_irreflexive(&self) -> bool {
        (0..self.n).all(|i| self.bits[i * self.w + i / 64] & (1 << (i % 64)) == 0)
    }

    pub fn is_acyclic(&self) -> bool {
        if !self.is_irreflexive() {
            return false;
        }
        if self.is_empty() {
            return true;
        }
        let n = self.n;
        with_width!(self.w, |W| acyclic_kernel(W, n, &self.bits))
    }

    /// Domain: events with at least one successor.
    pub fn domain(&self) -> EventSet {
        EventSet::from_fn(self.n, |a| self.row(a).iter().any(|w| *w != 0))
    }

    /// Range: events with at least one predecessor.
    pub fn range(&self) -> EventSet {
        let mut s = EventSet::empty(self.n);
        if self.w > 0 {
            for row in self.bits.chunks_exact(self.w) {
                zip_assign(&mut s.bits, row, |a, b| a | b);
            }
        }
        s
    }

    /// `[dom] ; self ; [ran]`.
    pub fn restrict(&self, dom: &EventSet, ran: &EventSet) -> Self {
        let mut r = Self::empty(self.n);
        for a in dom.iter() {
            let w = self.w;
            for ((x, y), z) in r.bits[a * w..(a + 1) * w].iter_mut().zip(self.row(a)).zip(ran.words()) {
                *x = y & z;
            }
        }
        r
    }

    /// `self = [s] ; self`, in place: keeps the rows of the events of `s`. Returns whether
    /// any pair remains.
    pub fn restrict_domain(&mut self, s: &EventSet) -> bool {
        assert_eq!(self.n, s.universe(), "relation and set over different universes");
        let w = self.w;
        let mut any = 0;
        for (a, row) in self.bits.chunks_exact_mut(w.max(1)).enumerate().take(self.n) {
            if s.contains(a) {
                any |= row.iter().fold(0, |x, y| x | y);
            } else {
                row.fill(0);
            }
        }
        any != 0
    }

    /// `self = self ; [s]`, in place: keeps the columns of the events of `s`. Returns whether
    /// any pair remains.
    pub fn restrict_range(&mut self, s: &EventSet) -> bool {
        assert_eq!(self.n, s.universe(), "relation and set over different universes");
        if self.w == 0 {
            return false;
        }
        let w = self.w;
        with_width!(w, |W| {
            let mut any = 0;
            for row in self.bits.chunks_exact_mut(W) {
                for (x, y) in row.iter_mut().zip(s.words()) {
                    *x &= *y;
                    any |= *x;
                }
            }
            any != 0
        })
    }

    /// A cycle of this relation, as a list of events `e0 → e1 → … → e0`, if one exists.
    pub fn find_cycle(&self) -> Option<Vec<usize>> {
        // Depth-first search with colours; returns the first back-edge cycle found.
        let n = self.n;
        let mut colour = vec![0u8; n];
        let mut parent = vec![usize::MAX; n];
        for root in 0..n {
            if colour[root] != 0 {
                continue;
            }
            let mut stack = vec![(root, self.successors(root).iter().collect::<Vec<_>>(), 0usize)];
            colour[root] = 1;
            while let Some((node, succ, idx)) = stack.last_mut() {
                if *idx < succ.len() {
                    let next = succ[*idx];
                    *idx += 1;
                    let node = *node;
                    match colour[next] {
                        0 => {
                            colour[next] = 1;
                            parent[next] = node;
                            let s = self.successors(next).iter().collect();
                            stack.push((next, s, 0));
                        }
                        1 => {
                            let mut cyc = vec![next];
                            let mut cur = node;
                            while cur != next {
                                cyc.push(cur);
                                cur = parent[cur];
                            }
                            cyc.reverse();
                            cyc.rotate_right(1);
                            return Some(cyc);
                        }
                        _ => {}
                    }
                } else {
                    colour[*node] = 2;
                    stack.pop();
                }
            }
        }
        None
    }
}

impl fmt::Debug for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.pairs()).finish()
    }
}
