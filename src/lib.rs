//! ptxmm: an executable model of the NVIDIA PTX memory consistency model.
//!
//! Data flows one way through the stages of this crate, each a folder that imports only the
//! stages before it (`tests/architecture.rs` holds the code to this):
//!
//! ```text
//! litmus text ─litmus─▶ syntax tree ─program─▶ Program (instruction semantics)
//!   ─exec::trace─▶ per-thread runs ─exec::structure─▶ event structures
//!   ─exec::search─▶ candidate executions ─cat (the model, as data)─▶ consistent or not
//!   ─decide (one driver: verdict, liveness, explain)─▶ outcomes ─decide::report / herd─▶ text, JSON, logs
//! ```
//!
//! `config` is the one configuration every front end hands to `decide::Decider`; `gen`, `hw`,
//! `families` and `serve` are tools at the edges. See `ARCHITECTURE.md` at the repository root
//! for the map and the invariants between stages.

pub mod cat;
/// The command line (not in the web playground's wasm32 build, which has no clap).
#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
pub mod clock;
pub mod config;
pub mod decide;
pub mod diag;
pub mod exec;
pub mod families;
pub mod gen;
pub mod herd;
pub mod hw;
pub mod kernel;
pub mod litmus;
pub mod program;
pub mod relation;
pub mod serve;

pub use config::{Config, InputLimits, Limits};
pub use program::load::{
    files_below, litmus_files, load_program, load_program_with, open_regular, parse_program, parse_program_with, read_limited,
    read_regular, read_text, LoadError,
};
