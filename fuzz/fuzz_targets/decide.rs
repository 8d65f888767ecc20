//! The whole decision (verdict search) with small limits: a verdict or a limit message.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(program) = ptxmm::parse_program(ptxmm::diag::SourceFile::new("fuzz.litmus", text)) else { return };
    if let Ok(o) = ptxmm::decide::Decider::new(common::config()).verdict(&program) {
        let _ = ptxmm::decide::report::herd_block(&o);
        let _ = ptxmm::decide::report::verdict_block(&o);
    }
});
