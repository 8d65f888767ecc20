//! Real kernels pasted as compiled (tests/kernels, issue 22): six small CUDA kernels (a TMA load
//! pipeline, a TMA store epilogue, a cp.async double buffer, a cluster multicast, a split-K
//! semaphore, a cluster remote arrive), each in a correct and a buggy version (`-DBUG`), compiled
//! by tests/kernels/build.sh with `nvcc -arch=sm_90a -ptx`. Each NAME.litmus pastes the kernel
//! body of NAME.ptx unchanged (only its name, init block, placement line and condition are
//! written by hand) and has its expected verdict and liveness in tests/kernels/expected.csv.

mod common;

use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels")
}

/// The kernel body of PTX text: from the line `{` that opens the entry's body to the last line
/// `}` (nvcc closes inline-asm scopes with a `}` in column 0 too, so the last one is the body's).
fn body(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| *l == "{")?;
    let end = lines.iter().rposition(|l| *l == "}")?;
    (start < end).then(|| lines[start..=end].join("\n"))
}

#[test]
fn kernels_decide_as_a_kernel_engineer_expects() {
    let failed = common::run_verdict_suite("kernels", &dir());
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn every_kernel_test_has_an_expectation() {
    common::assert_every_test_listed(&dir());
}

/// Each test pastes its PTX file's kernel body unchanged, and each kernel has its CUDA source and
/// both versions of its PTX.
#[test]
fn litmus_tests_paste_the_compiled_body_unchanged() {
    let mut kernels = 0;
    for (file, _, _) in common::verdict_rows(&dir()) {
        let stem = file.trim_end_matches(".litmus");
        let ptx = std::fs::read_to_string(dir().join(format!("{stem}.ptx"))).unwrap_or_else(|e| panic!("{stem}.ptx: {e}"));
        let litmus = std::fs::read_to_string(dir().join(&file)).unwrap();
        let compiled = body(&ptx).unwrap_or_else(|| panic!("{stem}.ptx has no kernel body"));
        assert!(litmus.contains(&compiled), "{file} does not contain the kernel body of {stem}.ptx unchanged");
        if !stem.ends_with("-bug") {
            assert!(dir().join(format!("{stem}.cu")).is_file(), "{stem}.cu (the CUDA source) is missing");
            kernels += 1;
        }
    }
    assert!(kernels >= 6, "expected at least six kernels, found {kernels}");
}
