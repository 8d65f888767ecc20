//! Benchmarks of the bit-matrix relation algebra (`cargo bench --bench relations`) on the
//! shapes model evaluation meets: a few program-order chains (transitive within a thread) plus
//! sparse cross-thread edges. Timed here, never in tests.

use ptxmm::relation::Relation;

fn main() {
    divan::main();
}

const SIZES: [usize; 3] = [32, 128, 300];

/// Deterministic xorshift.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 as usize
    }
}

/// `threads` program-order chains over `n` events (event `i` in thread `i % threads`, so
/// chains interleave in index order as events of a trace do), transitive as `po` is.
fn po(n: usize, threads: usize) -> Relation {
    Relation::from_fn(n, |a, b| a < b && a % threads == b % threads)
}

/// Program order plus `n / 4` cross-thread edges that go from a position of one chain to a later
/// position of another (so the whole stays acyclic, as base causality of a consistent execution).
fn chains(n: usize) -> Relation {
    let threads = 4;
    let mut r = po(n, threads);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d ^ n as u64);
    for _ in 0..n / 4 {
        let a = rng.next() % n;
        let b = rng.next() % n;
        let (pa, pb) = (a / threads, b / threads);
        if pa < pb && a % threads != b % threads {
            r.insert(a, b);
        }
    }
    r
}

/// Sparse cross edges only (as `rf` or `observation`): one edge per four events, random.
fn sparse(n: usize) -> Relation {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ n as u64);
    let mut r = Relation::empty(n);
    for _ in 0..n.div_ceil(4) {
        r.insert(rng.next() % n, rng.next() % n);
    }
    r
}

#[divan::bench(args = SIZES)]
fn seq_chains_chains(bencher: divan::Bencher, n: usize) {
    let a = chains(n);
    bencher.bench(|| divan::black_box(&a).seq(divan::black_box(&a)));
}

#[divan::bench(args = SIZES)]
fn seq_sparse_chains(bencher: divan::Bencher, n: usize) {
    let (a, b) = (sparse(n), chains(n));
    bencher.bench(|| divan::black_box(&a).seq(divan::black_box(&b)));
}

#[divan::bench(args = SIZES)]
fn plus_chains(bencher: divan::Bencher, n: usize) {
    let a = chains(n);
    bencher.bench(|| divan::black_box(&a).plus());
}

/// Chains plus random sparse edges in any direction: cyclic.
#[divan::bench(args = SIZES)]
fn plus_cyclic(bencher: divan::Bencher, n: usize) {
    let a = chains(n).union(&sparse(n));
    bencher.bench(|| divan::black_box(&a).plus());
}

#[divan::bench(args = SIZES)]
fn plus_sparse(bencher: divan::Bencher, n: usize) {
    let a = sparse(n);
    bencher.bench(|| divan::black_box(&a).plus());
}

#[divan::bench(args = SIZES)]
fn inverse_chains(bencher: divan::Bencher, n: usize) {
    let a = chains(n).plus();
    bencher.bench(|| divan::black_box(&a).inverse());
}

#[divan::bench(args = SIZES)]
fn inverse_sparse(bencher: divan::Bencher, n: usize) {
    let a = sparse(n);
    bencher.bench(|| divan::black_box(&a).inverse());
}

#[divan::bench(args = SIZES)]
fn is_acyclic_chains(bencher: divan::Bencher, n: usize) {
    let a = chains(n).plus();
    bencher.bench(|| divan::black_box(&a).is_acyclic());
}

#[divan::bench(args = SIZES)]
fn is_acyclic_cyclic(bencher: divan::Bencher, n: usize) {
    let a = chains(n).union(&sparse(n));
    bencher.bench(|| divan::black_box(&a).is_acyclic());
}
