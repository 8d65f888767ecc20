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

use std::cell::RefCell;
use std::fmt;

/// Number of `u64` words needed for `n` bits.
fn words_for(n: usize) -> usize {
    n.div_ceil(64)
}

/// The valid bits of the last word of an `n`-bit row (`n > 0`).
fn tail_mask(n: usize) -> u64 {
    match n % 64 {
        0 => !0,
        r => (1u64 << r) - 1,
    }
}

/// Word-wise `a op= b`.
#[inline]
fn zip_assign(a: &mut [u64], b: &[u64], f: impl Fn(u64, u64) -> u64) {
    for (x, y) in a.iter_mut().zip(b) {
        *x = f(*x, *y);
    }
}

/// Word-wise `a op= b`; whether any bit of the result is set.
#[inline]
fn zip_assign_any(a: &mut [u64], b: &[u64], f: impl Fn(u64, u64) -> u64) -> bool {
    let mut any = 0;
    for (x, y) in a.iter_mut().zip(b) {
        *x = f(*x, *y);
        any |= *x;
    }
    any != 0
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

/// Calls `$body` with `$w` bound to a compile-time constant equal to the row width `$width` when
/// it is 1 to 8 words, and to the runtime value beyond. The kernels are `#[inline(always)]`
/// functions of the width, so each arm is a copy specialised (unrolled, vectorised) for it.
macro_rules! with_width {
    ($width:expr, |$w:ident| $body:expr) => {
        match $width {
            1 => {
                const $w: usize = 1;
                $body
            }
            2 => {
                const $w: usize = 2;
                $body
            }
            3 => {
                const $w: usize = 3;
                $body
            }
            4 => {
                const $w: usize = 4;
                $body
            }
            5 => {
                const $w: usize = 5;
                $body
            }
            6 => {
                const $w: usize = 6;
                $body
            }
            7 => {
                const $w: usize = 7;
                $body
            }
            8 => {
                const $w: usize = 8;
                $body
            }
            #[allow(non_snake_case)]
            $w => $body,
        }
    };
}

/// Row `a ; o` for one row `a` of the left operand: the OR of the rows of `o` its bits select.
/// `acc` has the row width `w`.
#[inline(always)]
fn seq_row(w: usize, row: &[u64], o: &[u64], acc: &mut [u64]) {
    acc.fill(0);
    for (wi, &word) in row[..w].iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            let b = wi * 64 + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            zip_assign(&mut acc[..w], &o[b * w..b * w + w], |x, y| x | y);
        }
    }
}

/// `out = a ; o` over all rows (`out` distinct from both operands); whether the result has
/// any pair.
#[inline(always)]
fn seq_kernel(w: usize, a: &[u64], o: &[u64], out: &mut [u64]) -> bool {
    if w == 0 {
        return false;
    }
    let mut any = 0;
    for (row, dst) in a.chunks_exact(w).zip(out.chunks_exact_mut(w)) {
        seq_row(w, row, o, dst);
        any |= dst.iter().fold(0, |x, y| x | y);
    }
    any != 0
}

/// `a = a ; o`, in place: row `x` of the result depends only on row `x` of `a`. Whether the
/// result has any pair.
#[inline(always)]
fn seq_kernel_in_place(w: usize, a: &mut [u64], o: &[u64]) -> bool {
    if w == 0 {
        return false;
    }
    let mut small = [0u64; 8];
    let mut large = Vec::new();
    let acc: &mut [u64] = if w <= 8 {
        &mut small[..w]
    } else {
        large.resize(w, 0);
        &mut large
    };
    let mut any = 0;
    for row in a.chunks_exact_mut(w) {
        if row.iter().all(|x| *x == 0) {
            continue;
        }
        seq_row(w, row, o, acc);
        row.copy_from_slice(acc);
        any |= acc.iter().fold(0, |x, y| x | y);
    }
    any != 0
}

/// Transitive closure in place by Warshall's algorithm on one-word rows, branch-free: the
/// fastest closure at up to 64 events.
fn warshall1(rows: &mut [u64]) {
    for k in 0..rows.len() {
        let krow = rows[k];
        if krow == 0 {
            continue;
        }
        for row in rows.iter_mut() {
            *row |= krow & 0u64.wrapping_sub((*row >> k) & 1);
        }
    }
}

/// Whether every pair `(a, b)` has `a < b` (so index order is a topological order).
#[inline(always)]
fn forward(w: usize, bits: &[u64]) -> bool {
    bits.chunks_exact(w).enumerate().all(|(v, row)| {
        // Columns 0..=v: the words before v's, and the low bits of v's word.
        let (wv, bv) = (v / 64, v % 64);
        row[..wv].iter().all(|x| *x == 0) && row[wv] & (u64::MAX >> (63 - bv)) == 0
    })
}

/// Transitive closure in place of a relation whose pairs all go forward in index order: rows
/// are closed from the last event back, each as its row plus the closed rows of its successors,
/// skipping successors already reached through an earlier one (on program-order chains, one OR
/// per event).
#[inline(always)]
fn forward_closure_kernel(w: usize, bits: &mut [u64]) {
    let mut small = [0u64; 16];
    let mut large = Vec::new();
    let scratch: &mut [u64] = if 2 * w <= small.len() {
        &mut small[..2 * w]
    } else {
        large.resize(2 * w, 0);
        &mut large
    };
    let (acc, covered) = scratch.split_at_mut(w);
    let n = bits.len() / w;
    for v in (0..n).rev() {
        let (head, tail) = bits.split_at_mut((v + 1) * w);
        let row = &mut head[v * w..];
        if row.iter().all(|x| *x == 0) {
            continue;
        }
        acc.copy_from_slice(row);
        covered.fill(0);
        for wi in 0..w {
            let mut pending = row[wi];
            loop {
                let m = pending & !covered[wi];
                if m == 0 {
                    break;
                }
                let t = m.trailing_zeros() as usize;
                pending &= !(1u64 << t);
                // Successors come after v: their rows are closed, in `tail`.
                let x = wi * 64 + t - (v + 1);
                let reach = &tail[x * w..x * w + w];
                zip_assign(acc, reach, |a, b| a | b);
                zip_assign(covered, reach, |a, b| a | b);
            }
        }
        row.copy_from_slice(acc);
    }
}

/// Scratch space of the graph searches: per-vertex numbers and the bit masks of the search.
struct Search {
    /// Tarjan index of each vertex (`u32::MAX`: not visited).
    index: Vec<u32>,
    low: Vec<u32>,
    /// Tarjan's stack of vertices whose component is not yet known.
    stack: Vec<u32>,
    /// The depth-first path: `(vertex, word of its row the successor scan is at)`.
    frames: Vec<(u32, u32)>,
    visited: Vec<u64>,
    on_stack: Vec<u64>,
}

impl Search {
    fn new(n: usize, w: usize) -> Self {
        Search {
            index: vec![u32::MAX; n],
            low: vec![0; n],
            stack: Vec::new(),
            frames: Vec::new(),
            visited: vec![0; w],
            on_stack: vec![0; w],
        }
    }
}

#[inline(always)]
fn set_bit(words: &mut [u64], i: usize) {
    words[i / 64] |= 1 << (i % 64);
}

#[inline(always)]
fn clear_bit(words: &mut [u64], i: usize) {
    words[i / 64] &= !(1 << (i % 64));
}

/// Transitive closure in place: Tarjan's strongly connected components, with reachability
/// propagated as each component is completed (components complete in reverse topological order,
/// so every component the current one reaches already holds its closure row).
///
/// A component `C` reaches `R(C) = ⋃_{v∈C} row(v) ∪ ⋃ R(D)` over the components `D ≠ C` its
/// rows point into; every member of `C` gets `R(C)` (which contains `C` itself exactly when `C`
/// is a cycle, a self-loop included). Successors are visited in ascending order and skipped when
/// an earlier successor already reaches them, which on program-order chains leaves one OR per
/// event.
#[inline(always)]
fn closure_kernel(w: usize, n: usize, bits: &mut [u64]) {
    let mut s = Search::new(n, w);
    // acc: the component's row; members: the component as a mask; covered: reached through a
    // successor already merged.
    let mut scratch = vec![0u64; 3 * w];
    // Events without successors are finished components already, with an empty row: marking
    // them visited (and never on the stack) keeps sparse relations cheap.
    for (v, row) in bits.chunks_exact(w).enumerate() {
        if row.iter().all(|x| *x == 0) {
            s.index[v] = 0;
            set_bit(&mut s.visited, v);
        }
    }
    let mut counter = 0u32;
    let enter = |s: &mut Search, v: usize, counter: &mut u32| {
        s.index[v] = *counter;
        s.low[v] = *counter;
        *counter += 1;
        set_bit(&mut s.visited, v);
        set_bit(&mut s.on_stack, v);
        s.stack.push(v as u32);
        s.frames.push((v as u32, 0));
    };
    for root in 0..n {
        if s.index[root] != u32::MAX {
            continue;
        }
        enter(&mut s, root, &mut counter);
        while let Some(&(v, wi)) = s.frames.last() {
            let v = v as usize;
            let row = &bits[v * w..v * w + w];
            let mut wi = wi as usize;
            let mut next = None;
            while wi < w {
                let m = row[wi] & !s.visited[wi];
                if m != 0 {
                    next = Some(wi * 64 + m.trailing_zeros() as usize);
                    break;
                }
                wi += 1;
            }
            s.frames.last_mut().expect("frame").1 = wi as u32;
            if let Some(x) = next {
                enter(&mut s, x, &mut counter);
                continue;
            }
            // All successors visited: edges to vertices still on the stack lower the link.
            let mut low = s.low[v];
            for (wi, (&r, &o)) in row.iter().zip(&s.on_stack).enumerate() {
                let mut m = r & o;
                while m != 0 {
                    let x = wi * 64 + m.trailing_zeros() as usize;
                    m &= m - 1;
                    low = low.min(s.index[x]);
                }
            }
            s.low[v] = low;
            s.frames.pop();
            if let Some(&(p, _)) = s.frames.last() {
                let p = p as usize;
                s.low[p] = s.low[p].min(low);
            }
            if low != s.index[v] {
                continue;
            }
            // `v` roots a component: the stack from `v` up.
            let start = s.stack.iter().rposition(|&x| x as usize == v).expect("root on the stack");
            let (acc, rest) = scratch.split_at_mut(w);
            let (members, covered) = rest.split_at_mut(w);
            acc.fill(0);
            members.fill(0);
            covered.fill(0);
            for &x in &s.stack[start..] {
                let x = x as usize;
                clear_bit(&mut s.on_stack, x);
                set_bit(members, x);
                zip_assign(acc, &bits[x * w..x * w + w], |a, b| a | b);
            }
            for wi in 0..w {
                let mut pending = acc[wi] & !members[wi];
                loop {
                    let m = pending & !covered[wi];
                    if m == 0 {
                        break;
                    }
                    let t = m.trailing_zeros() as usize;
                    pending &= !(1u64 << t);
                    let x = wi * 64 + t;
                    let reach = &bits[x * w..x * w + w];
                    zip_assign(acc, reach, |a, b| a | b);
                    zip_assign(covered, reach, |a, b| a | b);
                }
            }
            for &x in &s.stack[start..] {
                let x = x as usize;
                bits[x * w..x * w + w].copy_from_slice(acc);
            }
            s.stack.truncate(start);
        }
    }
}

/// Whether the graph has no cycle: a depth-first search that fails at the first edge back to
/// the current path (checked once per vertex, on entry, against the path as a mask).
#[inline(always)]
fn acyclic_kernel(w: usize, n: usize, bits: &[u64]) -> bool {
    let mut visited = vec![0u64; w];
    let mut path = vec![0u64; w];
    let mut frames: Vec<(u32, u32)> = Vec::new();
    // Events without successors are on no cycle.
    for (v, row) in bits.chunks_exact(w).enumerate() {
        if row.iter().all(|x| *x == 0) {
            set_bit(&mut visited, v);
        }
    }
    for root in 0..n {
        if visited[root / 64] & (1 << (root % 64)) != 0 {
            continue;
        }
        let enter = |v: usize, visited: &mut [u64], path: &mut [u64], frames: &mut Vec<(u32, u32)>| -> bool {
            set_bit(visited, v);
            set_bit(path, v);
            frames.push((v as u32, 0));
            bits[v * w..v * w + w].iter().zip(path.iter()).all(|(r, p)| r & p == 0)
        };
        if !enter(root, &mut visited, &mut path, &mut frames) {
            return false;
        }
        while let Some(&(v, wi)) = frames.last() {
            let v = v as usize;
            let row = &bits[v * w..v * w + w];
            let mut wi = wi as usize;
            let mut next = None;
            while wi < w {
                let m = row[wi] & !visited[wi];
                if m != 0 {
                    next = Some(wi * 64 + m.trailing_zeros() as usize);
                    break;
                }
                wi += 1;
            }
            frames.last_mut().expect("frame").1 = wi as u32;
            match next {
                Some(x) => {
                    if !enter(x, &mut visited, &mut path, &mut frames) {
                        return false;
                    }
                }
                None => {
                    clear_bit(&mut path, v);
                    frames.pop();
                }
            }
        }
    }
    true
}

/// Transposes a 64 × 64 bit block in place (bit `j` of word `i` ↔ bit `i` of word `j`), by
/// swapping ever smaller off-diagonal sub-blocks.
fn transpose64(a: &mut [u64; 64]) {
    let mut j = 32;
    let mut m: u64 = 0x0000_0000_ffff_ffff;
    while j != 0 {
        let mut k = 0;
        while k < 64 {
            let t = ((a[k] >> j) ^ a[k + j]) & m;
            a[k + j] ^= t;
            a[k] ^= t << j;
            k = (k + j + 1) & !j;
        }
        j >>= 1;
        m ^= m << j;
    }
}

/// Matrices of dropped relations, kept per thread for the next ones: evaluating a model
/// creates and drops many matrices of one size, and handing them back to the allocator makes it
/// return the memory to the system and fault it in again for the next candidate (at a few
/// hundred events, that was half of the evaluation time).
struct Spare {
    buffers: Vec<Vec<u64>>,
    /// Words held in `buffers`.
    words: usize,
}

/// At most this many matrices, and this many words (4 MiB), are kept per thread.
const SPARE_BUFFERS: usize = 256;
const SPARE_WORDS: usize = 1 << 19;

thread_local! {
    static SPARE: RefCell<Spare> = const { RefCell::new(Spare { buffers: Vec::new(), words: 0 }) };
}

/// A buffer of `len` words whose contents are unspecified (the caller overwrites them all).
fn take_words(len: usize) -> Vec<u64> {
    if len == 0 {
        return Vec::new();
    }
    let spare = SPARE.try_with(|s| {
        let mut s = s.borrow_mut();
        let b = s.buffers.pop()?;
        s.words -= b.capacity();
        Some(b)
    });
    match spare {
        Ok(Some(mut b)) if b.capacity() >= len => {
            if b.len() >= len {
                b.truncate(len);
            } else {
                b.resize(len, 0);
            }
            b
        }
        _ => vec![0; len],
    }
}

/// A buffer of `len` zero words.
fn zeroed_words(len: usize) -> Vec<u64> {
    let mut b = take_words(len);
    b.fill(0);
    b
}

/// Keeps a dropped matrix for reuse, within the limits.
fn give_words(b: Vec<u64>) {
    if b.capacity() == 0 {
        return;
    }
    let _ = SPARE.try_with(|s| {
        let mut s = s.borrow_mut();
        if s.buffers.len() < SPARE_BUFFERS && s.words + b.capacity() <= SPARE_WORDS {
            s.words += b.capacity();
            s.buffers.push(b);
        }
    });
}

/// A binary relation over events `0..n`, as a dense bit matrix.
#[derive(PartialEq, Eq, Hash)]
pub struct Relation {
    n: usize,
    w: usize,
    bits: Vec<u64>,
}

impl Clone for Relation {
    fn clone(&self) -> Self {
        let mut bits = take_words(self.bits.len());
        bits.copy_from_slice(&self.bits);
        Relation { n: self.n, w: self.w, bits }
    }
}

impl Drop for Relation {
    fn drop(&mut self) {
        give_words(std::mem::take(&mut self.bits));
    }
}

impl Relation {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic xorshift, so that failures reproduce.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// The shapes the kernels are exercised on: sparse (cyclic or not, at random), dense (about
    /// a quarter of all pairs), program-order chains with forward cross edges (acyclic), the
    /// same with a few backward edges (cyclic), and random forward edges (acyclic).
    fn shapes(n: usize, rng: &mut Rng) -> Vec<(&'static str, Relation)> {
        let mut sparse = Relation::empty(n);
        for _ in 0..(2 * n) {
            sparse.insert(rng.below(n), rng.below(n));
        }
        let mut dense = Relation::empty(n);
        for a in 0..n {
            for b in 0..n {
                if rng.next().is_multiple_of(4) {
                    dense.insert(a, b);
                }
            }
        }
        let threads = 1 + n / 40;
        let mut chains = Relation::from_fn(n, |a, b| a < b && a % threads == b % threads);
        for _ in 0..(n / 3) {
            let (a, b) = (rng.below(n), rng.below(n));
            if a / threads < b / threads {
                chains.insert(a, b);
            }
        }
        let mut cyclic = chains.clone();
        for _ in 0..3 {
            let (a, b) = (rng.below(n), rng.below(n));
            cyclic.insert(a.max(b), a.min(b));
        }
        let mut forward = Relation::empty(n);
        for _ in 0..(3 * n) {
            let (a, b) = (rng.below(n), rng.below(n));
            if a < b {
                forward.insert(a, b);
            }
        }
        vec![("sparse", sparse), ("dense", dense), ("chains", chains), ("cyclic", cyclic), ("forward", forward)]
    }

    /// About two thirds of the events, at random.
    fn random_set(n: usize, rng: &mut Rng) -> EventSet {
        let mut s = EventSet::empty(n);
        for i in 0..n {
            if !rng.next().is_multiple_of(3) {
                s.insert(i);
            }
        }
        s
    }

    /// Reference composition, from the pairs of the left operand.
    fn ref_seq(a: &Relation, b: &Relation) -> Relation {
        let n = a.universe();
        let mut r = Relation::empty(n);
        for (x, y) in a.pairs() {
            for z in 0..n {
                if b.contains(y, z) {
                    r.insert(x, z);
                }
            }
        }
        r
    }

    /// Reference transitive closure: a breadth-first search from every event.
    fn ref_plus(a: &Relation) -> Relation {
        let n = a.universe();
        let mut succ = vec![Vec::new(); n];
        for (x, y) in a.pairs() {
            succ[x].push(y);
        }
        let mut r = Relation::empty(n);
        for src in 0..n {
            let mut seen = vec![false; n];
            let mut queue: Vec<usize> = succ[src].clone();
            while let Some(x) = queue.pop() {
                if seen[x] {
                    continue;
                }
                seen[x] = true;
                r.insert(src, x);
                queue.extend(succ[x].iter().copied().filter(|&y| !seen[y]));
            }
        }
        r
    }

    fn ref_inverse(a: &Relation) -> Relation {
        Relation::from_pairs(a.universe(), a.pairs().map(|(x, y)| (y, x)))
    }

    /// Every operation agrees with its definition (or with its out-of-place form), on relations
    /// of every size class around the word boundaries and of every shape.
    #[test]
    fn seq_and_plus_match_their_definitions() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for n in [1, 5, 63, 64, 65, 100, 128, 129, 150, 200, 257, 400] {
            let shapes = shapes(n, &mut rng);
            let set = random_set(n, &mut rng);
            let other = random_set(n, &mut rng);
            let id = Relation::identity(n);
            for (i, (name, a)) in shapes.iter().enumerate() {
                let (_, b) = &shapes[(i + 1) % shapes.len()];
                let ctx = format!("n={n} {name}");
                // Composition, in all three forms.
                let seq = ref_seq(a, b);
                assert_eq!(a.seq(b), seq, "seq {ctx}");
                let mut out = Relation::identity(n);
                assert_eq!(a.seq_into(b, &mut out), !seq.is_empty(), "seq_into's emptiness {ctx}");
                assert_eq!(out, seq, "seq_into {ctx}");
                let mut in_place = a.clone();
                assert_eq!(in_place.seq_with(b), !seq.is_empty(), "seq_with's emptiness {ctx}");
                assert_eq!(in_place, seq, "seq_with {ctx}");
                assert_eq!(a.seq_checked(b), (seq.clone(), !seq.is_empty()), "seq_checked {ctx}");
                assert_eq!(a.seq(&Relation::empty(n)), Relation::empty(n), "seq empty {ctx}");
                // Closures.
                let plus = ref_plus(a);
                assert_eq!(a.plus(), plus, "plus {ctx}");
                let mut p = a.clone();
                p.plus_in_place();
                assert_eq!(p, plus, "plus_in_place {ctx}");
                assert_eq!(a.star(), plus.union(&id), "star {ctx}");
                let mut s = a.clone();
                s.star_in_place();
                assert_eq!(s, plus.union(&id), "star_in_place {ctx}");
                assert_eq!(a.optional(), a.union(&id), "optional {ctx}");
                let mut o = a.clone();
                o.optional_in_place();
                assert_eq!(o, a.union(&id), "optional_in_place {ctx}");
                // Acyclicity and reflexivity.
                let acyclic = (0..n).all(|x| !plus.contains(x, x));
                assert_eq!(a.is_acyclic(), acyclic, "is_acyclic {ctx}");
                assert_eq!(a.is_irreflexive(), (0..n).all(|x| !a.contains(x, x)), "is_irreflexive {ctx}");
                assert_eq!(plus.is_acyclic(), acyclic, "is_acyclic of the closure {ctx}");
                // Inverse, on the relation and on its (denser) closure.
                assert_eq!(a.inverse(), ref_inverse(a), "inverse {ctx}");
                assert_eq!(plus.inverse(), ref_inverse(&plus), "inverse of the closure {ctx}");
                // Complement.
                let complement = Relation::from_fn(n, |x, y| !a.contains(x, y));
                assert_eq!(a.complement(), complement, "complement {ctx}");
                let mut c = a.clone();
                c.complement_in_place();
                assert_eq!(c, complement, "complement_in_place {ctx}");
                assert_eq!(complement.len() + a.len(), n * n, "complement keeps bits beyond n clear {ctx}");
                // Boolean operations in place.
                let mut u = a.clone();
                u.union_with(b);
                assert_eq!(u, Relation::from_fn(n, |x, y| a.contains(x, y) || b.contains(x, y)), "union_with {ctx}");
                let mut it = a.clone();
                let inter = Relation::from_fn(n, |x, y| a.contains(x, y) && b.contains(x, y));
                assert_eq!(it.intersect_with(b), !inter.is_empty(), "intersect_with's emptiness {ctx}");
                assert_eq!(it, inter, "intersect_with {ctx}");
                assert_eq!(a.intersection_checked(b), (inter.clone(), !inter.is_empty()), "intersection_checked {ctx}");
                let diff = Relation::from_fn(n, |x, y| a.contains(x, y) && !b.contains(x, y));
                let mut d = a.clone();
                assert_eq!(d.difference_with(b), !diff.is_empty(), "difference_with's emptiness {ctx}");
                assert_eq!(d, diff, "difference_with {ctx}");
                assert_eq!(a.difference_checked(b), (diff.clone(), !diff.is_empty()), "difference_checked {ctx}");
                let mut d = b.clone();
                assert_eq!(d.subtract_from(a), !diff.is_empty(), "subtract_from's emptiness {ctx}");
                assert_eq!(d, diff, "subtract_from {ctx}");
                let mut d = a.clone();
                assert!(!d.difference_with(a), "a \\ a {ctx}");
                let minus_converse = a.difference(&ref_inverse(b));
                let mut d = a.clone();
                assert_eq!(d.difference_with_inverse(b), !minus_converse.is_empty(), "difference_with_inverse's emptiness {ctx}");
                assert_eq!(d, minus_converse, "difference_with_inverse {ctx}");
                let mut d = minus_converse.clone();
                d.difference_with_inverse(b);
                assert_eq!(d, minus_converse, "difference_with_inverse, sparse {ctx}");
                // Restrictions and products.
                let restricted = Relation::from_fn(n, |x, y| set.contains(x) && a.contains(x, y) && other.contains(y));
                assert_eq!(a.restrict(&set, &other), restricted, "restrict {ctx}");
                let mut r = a.clone();
                let rows = Relation::from_fn(n, |x, y| set.contains(x) && a.contains(x, y));
                assert_eq!(r.restrict_domain(&set), !rows.is_empty(), "restrict_domain's emptiness {ctx}");
                assert_eq!(r, rows, "restrict_domain {ctx}");
                assert_eq!(r.restrict_range(&other), !restricted.is_empty(), "restrict_range's emptiness {ctx}");
                assert_eq!(r, restricted, "restrict_domain/range {ctx}");
                let mut r = a.clone();
                assert!(!r.restrict_range(&EventSet::empty(n)), "restrict_range to nothing {ctx}");
                assert!(!r.restrict_domain(&EventSet::empty(n)) && r.is_empty(), "restrict_domain to nothing {ctx}");
                assert_eq!(Relation::of_set(&set).seq(a).seq(&Relation::of_set(&other)), restricted, "[S];r;[T] {ctx}");
                let product = Relation::product(&set, &other);
                assert_eq!(product, Relation::from_fn(n, |x, y| set.contains(x) && other.contains(y)), "product {ctx}");
                assert_eq!(a.domain(), EventSet::from_fn(n, |x| (0..n).any(|y| a.contains(x, y))), "domain {ctx}");
                assert_eq!(a.range(), EventSet::from_fn(n, |y| (0..n).any(|x| a.contains(x, y))), "range {ctx}");
            }
            // Sets.
            assert_eq!(EventSet::full(n), EventSet::from_fn(n, |_| true), "full n={n}");
            assert_eq!(set.complement(), EventSet::from_fn(n, |i| !set.contains(i)), "set complement n={n}");
            let mut s = set.clone();
            s.union_with(&other);
            assert_eq!(s, set.union(&other), "set union_with n={n}");
            let mut s = set.clone();
            s.intersect_with(&other);
            assert_eq!(s, set.intersection(&other), "set intersect_with n={n}");
            let mut s = set.clone();
            s.difference_with(&other);
            assert_eq!(s, set.difference(&other), "set difference_with n={n}");
            let mut s = other.clone();
            s.subtract_from(&set);
            assert_eq!(s, set.difference(&other), "set subtract_from n={n}");
            let mut s = set.clone();
            s.complement_in_place();
            assert_eq!(s, set.complement(), "set complement_in_place n={n}");
        }
    }

    /// Closures of cyclic relations: strongly connected components of every size, self-loops,
    /// and components that reach one another.
    #[test]
    fn closures_of_cycles() {
        for n in [3, 64, 65, 130, 300] {
            // A ring through every event: everything reaches everything.
            let ring = Relation::from_fn(n, |a, b| b == (a + 1) % n);
            assert_eq!(ring.plus(), Relation::from_fn(n, |_, _| true), "ring n={n}");
            assert!(!ring.is_acyclic());
            // Two-event cycles chained forward, and one self-loop.
            let mut r = Relation::from_fn(n, |a, b| (a / 2 == b / 2 && a != b) || b == a + 2);
            r.insert(n - 1, n - 1);
            let plus = Relation::from_fn(n, |a, b| {
                let has_partner = (a ^ 1) < n;
                b / 2 > a / 2 || (b / 2 == a / 2 && (a != b || has_partner || a == n - 1))
            });
            assert_eq!(ref_plus(&r), plus, "reference, pairs n={n}");
            assert_eq!(r.plus(), plus, "pairs n={n}");
            assert!(!r.is_acyclic());
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

    /// Matrices reuse the storage of dropped ones (of any size): fresh ones are still empty,
    /// and copies and results still exact.
    #[test]
    fn reused_storage_is_reset() {
        for (first, second) in [(100, 64), (64, 100), (200, 130), (130, 200), (5, 5), (400, 1)] {
            let full = Relation::from_fn(first, |_, _| true);
            let copies: Vec<Relation> = (0..4).map(|_| full.clone()).collect();
            drop(copies);
            drop(full);
            for _ in 0..4 {
                assert!(Relation::empty(second).is_empty(), "{first} -> {second}");
                assert_eq!(Relation::identity(second).len(), second);
                let id = Relation::identity(second);
                assert_eq!(id.clone(), id);
                assert_eq!(id.seq(&id), id);
                assert_eq!(id.union(&Relation::empty(second)), id);
                assert_eq!(id.inverse(), id);
                assert_eq!(id.complement().len(), second * second - second);
            }
        }
    }

    #[test]
    fn empty_universe() {
        let r = Relation::empty(0);
        assert_eq!(r.plus(), r);
        assert_eq!(r.star(), r);
        assert_eq!(r.inverse(), r);
        assert_eq!(r.complement(), r);
        assert_eq!(r.seq(&r), r);
        assert!(r.is_acyclic());
        assert!(EventSet::full(0).is_empty());
    }
}
