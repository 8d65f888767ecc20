//! `ptxmm serve`: the web playground on localhost.

use crate::cli::ExitCode;

pub(crate) fn cmd_serve(port: u16, dir: Option<&std::path::Path>) -> ExitCode {
    let root = match crate::serve::page_dir(dir) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let listener = match crate::serve::bind(port) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: cannot listen on 127.0.0.1:{port}: {e}");
            return ExitCode::from(2);
        }
    };
    let addr = listener.local_addr().map_or_else(|_| format!("127.0.0.1:{port}"), |a| a.to_string());
    outln!("Serving the ptxmm playground ({}) at http://{addr}/ (Ctrl-C stops)", root.display());
    match crate::serve::serve(listener, root) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
