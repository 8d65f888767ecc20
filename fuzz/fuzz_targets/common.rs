#![allow(dead_code)] // each target uses part of it
//! What the fuzz targets share: the default model with limits small enough that one input is
//! decided (or stopped by a limit) in well under a second, loaded once.

use std::sync::OnceLock;

pub fn config() -> &'static ptxmm::Config {
    static CONFIG: OnceLock<ptxmm::Config> = OnceLock::new();
    CONFIG.get_or_init(|| small_limits(ptxmm::Config::default_model()))
}

pub fn small_limits(mut config: ptxmm::Config) -> ptxmm::Config {
    config.limits.max_candidates = 2_000;
    config.limits.max_states = 1_000;
    config.limits.max_traces = 200;
    config.limits.max_trace_events = 64;
    config.limits.timeout = Some(std::time::Duration::from_secs(2));
    config
}
