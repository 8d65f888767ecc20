//! Dense bit-matrix relations and bit-set event sets.
//!
//! Litmus executions have tens of events, so a relation over `n` events is an `n × n` bit matrix
//! stored row-major in `u64` words. Every operation the cat language needs (union, intersection,
//! difference, sequence, inverse, closures, products) is a word-parallel loop over these rows.
//!
//! Invariant: bits at column indices `>= n` are always zero, so word-wise comparisons are exact.

use std::fmt;

/// Number of `u64` words needed for `n` bits.
fn words_for(n: usize) -> usize {
    n.div_ceil(64)
}

/// A set of events, as a bit vector over event indices `0..n`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct EventSet {
    n: usize,
    bits: Vec<u64>,
}

impl EventSet {
    pub fn empty(n: usize) -> Self {
        EventSet { n, bits: vec![0; words_for(n)] }
    }

    pub fn full(n: usize) -> Self {
        let mut s = Self::empty(n);
        for i in 0..n {
            s.insert(i);
        }
        s
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

    /// Complement within the universe `0..n`.
    pub fn complement(&self) -> Self {
        Self::full(self.n).difference(self)
    }

    pub fn is_subset(&self, o: &Self) -> bool {
        self.bits.iter().zip(&o.bits).all(|(a, b)| a & !b == 0)
    }

    fn zip(&self, o: &Self, f: impl Fn(u64, u64) -> u64) -> Self {
        assert_eq!(self.n, o.n, "event sets over different universes");
        EventSet { n: self.n, bits: self.bits.iter().zip(&o.bits).map(|(a, b)| f(*a, *b)).collect() }
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

struct BitIter {
    word: u64,
    base: usize,
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

/// A binary relation over events `0..n`, as a dense bit matrix.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Relation {
    n: usize,
    w: usize,
    bits: Vec<u64>,
}

impl Relation {
    pub fn empty(n: usize) -> Self {
        let w = words_for(n);
        Relation { n, w, bits: vec![0; n * w] }
    }

    /// The identity relation on `0..n`.
    pub fn identity(n: usize) -> Self {
        let mut r = Self::empty(n);
        for i in 0..n {
            r.insert(i, i);
        }
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

    pub fn union_with(&mut self, o: &Self) {
        for (a, b) in self.bits.iter_mut().zip(&o.bits) {
            *a |= *b;
        }
    }

    pub fn intersection(&self, o: &Self) -> Self {
        self.zip(o, |a, b| a & b)
    }

    pub fn difference(&self, o: &Self) -> Self {
        self.zip(o, |a, b| a & !b)
    }

    pub fn is_subset(&self, o: &Self) -> bool {
        self.bits.iter().zip(&o.bits).all(|(a, b)| a & !b == 0)
    }

    /// Complement within `0..n × 0..n`.
    pub fn complement(&self) -> Self {
        let full = Self::product(&EventSet::full(self.n), &EventSet::full(self.n));
        full.difference(self)
    }

    fn zip(&self, o: &Self, f: impl Fn(u64, u64) -> u64) -> Self {
        assert_eq!(self.n, o.n, "relations over different universes");
        Relation { n: self.n, w: self.w, bits: self.bits.iter().zip(&o.bits).map(|(a, b)| f(*a, *b)).collect() }
    }

    /// Relational composition `self ; o`.
    pub fn seq(&self, o: &Self) -> Self {
        let mut r = Self::empty(self.n);
        // Models compose with many sets that are empty in a given test (aliases, restricted
        // fences, ...): skip the work.
        if self.is_empty() || o.is_empty() {
            return r;
        }
        let w = self.w;
        if w <= 2 {
            // Litmus tests have at most 128 events: rows fit in two words, so work on u128s
            // without slicing (the hot path of every model evaluation).
            let row = |rel: &Self, i: usize| -> u128 {
                let lo = rel.bits[i * w] as u128;
                let hi = if w == 2 { rel.bits[i * w + 1] as u128 } else { 0 };
                lo | (hi << 64)
            };
            let orows: Vec<u128> = (0..self.n).map(|b| row(o, b)).collect();
            for a in 0..self.n {
                let mut bits = row(self, a);
                let mut acc = 0u128;
                while bits != 0 {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    acc |= orows[b];
                }
                r.bits[a * w] = acc as u64;
                if w == 2 {
                    r.bits[a * w + 1] = (acc >> 64) as u64;
                }
            }
            return r;
        }
        for a in 0..self.n {
            let out = &mut r.bits[a * w..(a + 1) * w];
            for (wi, &word) in self.bits[a * w..(a + 1) * w].iter().enumerate() {
                for b in (BitIter { word, base: wi * 64 }) {
                    for (x, y) in out.iter_mut().zip(&o.bits[b * w..(b + 1) * w]) {
                        *x |= *y;
                    }
                }
            }
        }
        r
    }

    pub fn inverse(&self) -> Self {
        let mut r = Self::empty(self.n);
        for (a, b) in self.pairs() {
            r.insert(b, a);
        }
        r
    }

    /// Transitive closure `r+` (Warshall).
    pub fn plus(&self) -> Self {
        let w = self.w;
        if w <= 2 {
            let mut rows: Vec<u128> = (0..self.n)
                .map(|i| {
                    let lo = self.bits[i * w] as u128;
                    let hi = if w == 2 { self.bits[i * w + 1] as u128 } else { 0 };
                    lo | (hi << 64)
                })
                .collect();
            for k in 0..self.n {
                let krow = rows[k];
                if krow == 0 {
                    continue;
                }
                let kb = 1u128 << k;
                for row in rows.iter_mut() {
                    if *row & kb != 0 {
                        *row |= krow;
                    }
                }
            }
            let mut r = Self::empty(self.n);
            for (i, row) in rows.iter().enumerate() {
                r.bits[i * w] = *row as u64;
                if w == 2 {
                    r.bits[i * w + 1] = (*row >> 64) as u64;
                }
            }
            return r;
        }
        let mut r = self.clone();
        let mut krow = vec![0u64; w];
        for k in 0..self.n {
            krow.copy_from_slice(&r.bits[k * w..(k + 1) * w]);
            if krow.iter().all(|x| *x == 0) {
                continue;
            }
            let (kw, kb) = (k / 64, 1u64 << (k % 64));
            for i in 0..self.n {
                let row = &mut r.bits[i * w..(i + 1) * w];
                if row[kw] & kb != 0 {
                    for (x, y) in row.iter_mut().zip(&krow) {
                        *x |= *y;
                    }
                }
            }
        }
        r
    }

    /// Reflexive-transitive closure `r*`.
    pub fn star(&self) -> Self {
        self.plus().union(&Self::identity(self.n))
    }

    /// Reflexive closure `r?`.
    pub fn optional(&self) -> Self {
        self.union(&Self::identity(self.n))
    }

    pub fn is_irreflexive(&self) -> bool {
        (0..self.n).all(|i| !self.contains(i, i))
    }

    pub fn is_acyclic(&self) -> bool {
        self.plus().is_irreflexive()
    }

    /// Domain: events with at least one successor.
    pub fn domain(&self) -> EventSet {
        EventSet::from_fn(self.n, |a| self.row(a).iter().any(|w| *w != 0))
    }

    /// Range: events with at least one predecessor.
    pub fn range(&self) -> EventSet {
        let mut s = EventSet::empty(self.n);
        for a in 0..self.n {
            for (x, y) in s.bits.iter_mut().zip(self.row(a)) {
                *x |= *y;
            }
        }
        s
    }

    /// `[dom] ; self ; [ran]`.
    pub fn restrict(&self, dom: &EventSet, ran: &EventSet) -> Self {
        let mut r = Self::empty(self.n);
        for a in dom.iter() {
            let row: Vec<u64> = self.row(a).iter().zip(ran.words()).map(|(x, y)| x & y).collect();
            r.row_mut(a).copy_from_slice(&row);
        }
        r
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The two-word fast paths of `seq` and `plus` agree with the definitions, on relations of
    /// every size class (one word, two words, more).
    #[test]
    fn seq_and_plus_match_their_definitions() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for n in [1, 5, 63, 64, 65, 100, 128, 129, 150] {
            let mut a = Relation::empty(n);
            let mut b = Relation::empty(n);
            for _ in 0..(2 * n) {
                a.insert((next() % n as u64) as usize, (next() % n as u64) as usize);
                b.insert((next() % n as u64) as usize, (next() % n as u64) as usize);
            }
            let seq = a.seq(&b);
            for x in 0..n {
                for z in 0..n {
                    let expected = (0..n).any(|y| a.contains(x, y) && b.contains(y, z));
                    assert_eq!(seq.contains(x, z), expected, "seq n={n} ({x},{z})");
                }
            }
            // Transitive closure: the least fixpoint of r ∪ r;r+.
            let mut closure = a.clone();
            loop {
                let next_closure = closure.union(&closure.seq(&a));
                if next_closure == closure {
                    break;
                }
                closure = next_closure;
            }
            assert_eq!(a.plus(), closure, "plus n={n}");
        }
    }

    #[test]
    fn closure_and_cycles() {
        let r = Relation::from_pairs(70, [(0, 1), (1, 65), (65, 2)]);
        let p = r.plus();
        assert!(p.contains(0, 2));
        assert!(p.contains(1, 2));
        assert!(!p.contains(2, 0));
        assert!(r.is_acyclic());
        let c = r.union(&Relation::from_pairs(70, [(2, 0)]));
        assert!(!c.is_acyclic());
        let cyc = c.find_cycle().unwrap();
        assert_eq!(cyc.len(), 4);
        for i in 0..cyc.len() {
            assert!(c.contains(cyc[i], cyc[(i + 1) % cyc.len()]));
        }
    }

    #[test]
    fn seq_inverse_product() {
        let a = Relation::from_pairs(4, [(0, 1), (2, 3)]);
        let b = Relation::from_pairs(4, [(1, 2), (3, 0)]);
        assert_eq!(a.seq(&b), Relation::from_pairs(4, [(0, 2), (2, 0)]));
        assert_eq!(a.inverse(), Relation::from_pairs(4, [(1, 0), (3, 2)]));
        let s = EventSet::from_fn(4, |i| i < 2);
        let t = EventSet::from_fn(4, |i| i == 3);
        assert_eq!(Relation::product(&s, &t), Relation::from_pairs(4, [(0, 3), (1, 3)]));
        assert_eq!(Relation::identity(4).complement().len(), 12);
        assert_eq!(a.domain().iter().collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!(a.range().iter().collect::<Vec<_>>(), vec![1, 3]);
    }
}
