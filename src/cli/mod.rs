//! The command line's commands, one module each; `main.rs` parses the arguments and dispatches.

pub(crate) mod bench;
pub(crate) mod compare;
pub(crate) mod decide;
pub(crate) mod gen;
pub(crate) mod hw;
pub(crate) mod hw_campaign;
pub(crate) mod inputs;
pub(crate) mod kernel;
pub(crate) mod kernel_out;
pub(crate) mod options;
pub(crate) mod serve;
