//! The `ptxmm` command line. All the work, the argument parsing included, lives in the library
//! (`ptxmm::cli`, which the Python package's `ptxmm` command runs too); this file hands it the
//! arguments and exits with its status.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(ptxmm::cli::main(std::env::args_os().collect()).code())
}
