//! `explain` and the hang search with small limits.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn model() -> &'static ptxmm::cat::CatModel {
    static MODEL: OnceLock<ptxmm::cat::CatModel> = OnceLock::new();
    MODEL.get_or_init(|| ptxmm::models::builtin(ptxmm::models::DEFAULT_MODEL).expect("the default model loads"))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(program) = ptxmm::parse_program(ptxmm::diag::SourceFile::new("fuzz.litmus", text)) else { return };
    let mut opts = ptxmm::check::RunOptions::default();
    opts.limits.max_candidates = 2_000;
    opts.limits.max_states = 1_000;
    opts.limits.max_traces = 200;
    opts.limits.max_trace_events = 64;
    opts.limits.timeout = Some(std::time::Duration::from_secs(2));
    if let Ok(e) = ptxmm::explain::explain(&program, model(), &opts) {
        let _ = ptxmm::explain::dot::to_dot(&e.graph);
    }
    if let Ok(l) = ptxmm::liveness::check_liveness(&program, model(), &opts) {
        let _ = l.report();
    }
});
