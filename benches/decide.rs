//! Benchmarks of deciding litmus tests (`cargo bench`); numbers go to docs/performance.md.
//! Timed here, never in tests.

use ptxmm::decide::Decider;
use ptxmm::Config;
use std::path::Path;

fn main() {
    divan::main();
}

fn decide(file: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let program = ptxmm::load_program(&path).unwrap();
    let config = Config::default_model();
    let outcome = Decider::new(&config).verdict(&program).unwrap();
    divan::black_box(outcome.verdict());
}

/// The TMA ring pipeline: 1 producer, 2 consumers, 2 stages, 2 laps (the target: < 1 s).
#[divan::bench(sample_count = 5)]
fn tma_ring_pipeline() {
    decide("tests/async/pipeline-ring-2stage-2consumer-2laps.litmus");
}

/// A TMA load consumed by another thread (digest S4).
#[divan::bench]
fn tma_load_consumer() {
    decide("tests/async/S4-tma-load-consumer.litmus");
}

/// Message passing under the default model.
#[divan::bench]
fn message_passing() {
    decide("examples/MP.litmus");
}
