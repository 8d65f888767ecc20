//! The whole decision (verdict search) with small limits: a verdict or a limit message.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn model() -> &'static ptxmm::cat::CatModel {
    static MODEL: OnceLock<ptxmm::cat::CatModel> = OnceLock::new();
    MODEL.get_or_init(|| ptxmm::models::builtin(ptxmm::models::DEFAULT_MODEL).expect("the default model loads"))
}

/// Limits small enough that one input is decided (or stopped) in well under a second.
pub fn small_limits() -> ptxmm::check::RunOptions {
    let mut opts = ptxmm::check::RunOptions::default();
    opts.limits.max_candidates = 2_000;
    opts.limits.max_states = 1_000;
    opts.limits.max_traces = 200;
    opts.limits.max_trace_events = 64;
    opts.limits.timeout = Some(std::time::Duration::from_secs(2));
    opts
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(program) = ptxmm::parse_program(ptxmm::diag::SourceFile::new("fuzz.litmus", text)) else { return };
    if let Ok(o) = ptxmm::check::run(&program, model(), &small_limits()) {
        let _ = ptxmm::report::herd_block(&o);
        let _ = ptxmm::report::verdict_block(&o);
    }
});
