#![allow(dead_code)] // each target uses part of it
//! What the fuzz targets share: the default model, loaded once, and limits small enough that
//! one input is decided (or stopped by a limit) in well under a second.

use std::sync::OnceLock;

pub fn model() -> &'static ptxmm::cat::CatModel {
    static MODEL: OnceLock<ptxmm::cat::CatModel> = OnceLock::new();
    MODEL.get_or_init(|| ptxmm::models::builtin(ptxmm::models::DEFAULT_MODEL).expect("the default model loads"))
}

pub fn small_limits() -> ptxmm::check::RunOptions {
    let mut opts = ptxmm::check::RunOptions::default();
    opts.limits.max_candidates = 2_000;
    opts.limits.max_states = 1_000;
    opts.limits.max_traces = 200;
    opts.limits.max_trace_events = 64;
    opts.limits.timeout = Some(std::time::Duration::from_secs(2));
    opts
}
