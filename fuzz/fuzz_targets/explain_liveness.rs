//! `explain` and the hang search with small limits.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(program) = ptxmm::parse_program(ptxmm::diag::SourceFile::new("fuzz.litmus", text)) else { return };
    let decider = ptxmm::decide::Decider::new(common::config());
    if let Ok(e) = decider.explain(&program) {
        let _ = ptxmm::decide::explain::dot::to_dot(&e.graph);
    }
    if let Ok(l) = decider.liveness(&program) {
        let _ = l.report();
    }
});
