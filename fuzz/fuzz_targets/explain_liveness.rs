//! `explain` and the hang search with small limits.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(program) = ptxmm::parse_program(ptxmm::diag::SourceFile::new("fuzz.litmus", text)) else { return };
    let opts = common::small_limits();
    if let Ok(e) = ptxmm::explain::explain(&program, common::model(), &opts) {
        let _ = ptxmm::explain::dot::to_dot(&e.graph);
    }
    if let Ok(l) = ptxmm::liveness::check_liveness(&program, common::model(), &opts) {
        let _ = l.report();
    }
});
