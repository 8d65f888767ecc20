//! cat text → model → prepare → evaluate, on a fixed message-passing test: a user's model is
//! either rejected with a diagnostic or runs, never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use std::sync::OnceLock;

const MP: &str = "PTX MP\n{ x = 0; flag = 0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | ld.acquire.gpu r0, flag ;\n st.release.gpu flag, 1 | ld.weak r1, x ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n";

fn program() -> &'static ptxmm::program::Program {
    static P: OnceLock<ptxmm::program::Program> = OnceLock::new();
    P.get_or_init(|| ptxmm::parse_program(ptxmm::diag::SourceFile::new("MP.litmus", MP)).expect("MP parses"))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let dirs = [std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../models")];
    let Ok(model) = ptxmm::cat::CatModel::from_source(ptxmm::diag::SourceFile::new("fuzz.cat", text), &dirs) else { return };
    let config = common::small_limits(ptxmm::Config::new(model, "fuzz.cat"));
    let _ = ptxmm::decide::Decider::new(&config).verdict(program());
});
