//! Litmus text → syntax tree → program: any input gives a program or a diagnostic, never a
//! panic, and rendering the diagnostic never panics either.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Err(e) = ptxmm::parse_program(ptxmm::diag::SourceFile::new("fuzz.litmus", text)) {
        let _ = e.render(false);
        let _ = e.to_string();
    }
});
