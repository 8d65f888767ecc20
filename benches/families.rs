//! Benchmarks of the generated families (`cargo bench --bench families`): the verdict of a
//! handful of points of src/families.rs (the quick subset) under the default model. The full
//! grid, with memory and candidate counts, is `ptxmm bench` (docs/performance.md).

use divan::Bencher;
use ptxmm::decide::Decider;
use ptxmm::diag::SourceFile;
use ptxmm::families::{self, FamilyPoint};
use ptxmm::Config;

fn main() {
    divan::main();
}

/// Time the verdict of `point` (parsing and lowering are not timed).
fn decide(bencher: Bencher, point: FamilyPoint) {
    let program = ptxmm::parse_program(SourceFile::new(point.name.clone(), point.source.clone())).unwrap();
    let config = families::point_config(&point, &Config::default_model());
    bencher.bench_local(|| {
        let outcome = Decider::new(&config).verdict(&program).unwrap();
        divan::black_box(outcome.verdict())
    });
}

/// TMA ring with S stages, C consumers, L laps.
#[divan::bench(args = [(1, 1, 1), (2, 2, 2), (3, 1, 3)], sample_count = 10)]
fn tma_ring(bencher: Bencher, (s, c, l): (usize, usize, usize)) {
    decide(bencher, families::ring(s, c, l, true));
}

/// cp.async double-buffer loop over k tiles.
#[divan::bench(args = [4])]
fn cp_async_loop(bencher: Bencher, k: usize) {
    decide(bencher, families::cp_async_loop(k));
}

/// SB over n threads, without and with fence.sc.
#[divan::bench(args = [false, true])]
fn sb_4(bencher: Bencher, fence_sc: bool) {
    decide(bencher, families::sb(4, fence_sc));
}

/// IRIW with k readers, without and with fence.sc.
#[divan::bench(args = [false, true])]
fn iriw_3(bencher: Bencher, fence_sc: bool) {
    decide(bencher, families::iriw(3, fence_sc));
}

/// ISA2 over n threads.
#[divan::bench(args = [8], sample_count = 20)]
fn isa2(bencher: Bencher, n: usize) {
    decide(bencher, families::isa2(n));
}

/// One thread with n independent accesses.
#[divan::bench(args = [50])]
fn independent(bencher: Bencher, n: usize) {
    decide(bencher, families::independent(n));
}
