//! ptxmm's own litmus tests (tests/litmus), with per-model expectations. Needs nothing outside
//! the repository.

mod common;

use ptxmm::config::models;
use std::path::Path;

fn own(model: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let csv = dir.join(format!("expected-{model}.csv"));
    let failures = common::run_csv(&format!("own tests / {model}"), &csv, &dir, &models::builtin(model).unwrap());
    assert!(failures.is_empty());
}

#[test]
fn own_tests_under_ptx_6_0() {
    own("ptx-6.0");
}

#[test]
fn own_tests_under_ptx_7_5() {
    own("ptx-7.5");
}
