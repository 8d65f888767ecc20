//! The command line: `app` parses the arguments and dispatches to the commands, one module each.
//! It is part of the library (not of `main.rs`) so that the Python package's `ptxmm` command runs
//! the same code in process; `main.rs` only hands it the arguments.

/// `println!` that ends the program quietly when stdout is closed (e.g. piped into `head`).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

/// `print!` with the same behaviour as [`outln!`].
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if write!(std::io::stdout(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

mod app;
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

pub use app::main;

/// Whether diagnostics on stderr are coloured, decided once from `--color` and `NO_COLOR`.
pub(crate) static COLOR: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

pub(crate) fn color() -> bool {
    *COLOR.get().unwrap_or(&false)
}

/// The status a command ends with: `std::process::ExitCode`'s constructors, with the number
/// readable, which the Python package returns from its `main`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExitCode(u8);

impl ExitCode {
    pub const SUCCESS: ExitCode = ExitCode(0);
    pub const FAILURE: ExitCode = ExitCode(1);

    /// The exit status.
    pub fn code(self) -> u8 {
        self.0
    }
}

impl From<u8> for ExitCode {
    fn from(code: u8) -> ExitCode {
        ExitCode(code)
    }
}
