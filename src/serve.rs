//! `ptxmm serve`: the web playground (built into `web/dist` by `bash web/build.sh`) served on
//! 127.0.0.1 for offline use. A small static file server on `std::net`: GET and HEAD of files
//! below the folder, nothing else; one thread per connection.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};

/// The command that builds the page, named when it is missing.
pub const BUILD_COMMAND: &str = "bash web/build.sh";

/// The folder to serve: `dir` if given, else `web/dist` under the current folder, else the one
/// of the checkout this binary was built from. Err: why none has the page.
pub fn page_dir(dir: Option<&Path>) -> Result<PathBuf, String> {
    let candidates: Vec<PathBuf> = match dir {
        Some(d) => vec![d.to_path_buf()],
        None => vec![PathBuf::from("web/dist"), Path::new(env!("CARGO_MANIFEST_DIR")).join("web/dist")],
    };
    candidates.iter().find(|d| d.join("index.html").is_file() && d.join("ptxmm_web.wasm").is_file()).cloned().ok_or_else(|| {
        let looked: Vec<String> = candidates.iter().map(|d| d.display().to_string()).collect();
        format!(
            "the web playground is not built (no index.html and ptxmm_web.wasm in {}): run `{BUILD_COMMAND}` in the ptxmm repository, or name the folder with --dir",
            looked.join(" nor ")
        )
    })
}

/// The Content-Type of a file, by its extension.
pub fn mime_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "wasm" => "application/wasm",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "txt" | "litmus" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// The file below `root` that a request target names (`/` is `index.html`); None for a path
/// that leaves `root` or is not plain.
pub fn resolve(root: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next().unwrap_or("");
    let decoded = percent_decode(path)?;
    let relative = Path::new(decoded.trim_start_matches('/'));
    if !relative.components().all(|c| matches!(c, Component::Normal(_))) {
        return None;
    }
    let file = root.join(relative);
    Some(if decoded.ends_with('/') || decoded.is_empty() { file.join("index.html") } else { file })
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Bind 127.0.0.1:`port` (0: any free port).
pub fn bind(port: u16) -> std::io::Result<TcpListener> {
    TcpListener::bind(("127.0.0.1", port))
}

/// Serve `root` on `listener` until the process ends.
pub fn serve(listener: TcpListener, root: PathBuf) -> std::io::Result<()> {
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let root = root.clone();
        std::thread::spawn(move || {
            let _ = answer(stream, &root);
        });
    }
    Ok(())
}

/// Answer the requests of one connection (keep-alive), each with a file or an error status.
fn answer(stream: TcpStream, root: &Path) -> std::io::Result<()> {
    stream.set_read_timeout(Some(std::time::Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut out = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line)? == 0 {
            return Ok(());
        }
        // The headers are not needed; read up to the blank line that ends them.
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header)? == 0 || header == "\r\n" || header == "\n" {
                break;
            }
        }
        let mut words = request_line.split_whitespace();
        let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
        let (status, kind, body) = if method != "GET" && method != "HEAD" {
            ("405 Method Not Allowed", "text/plain; charset=utf-8", b"only GET and HEAD\n".to_vec())
        } else {
            match resolve(root, target).and_then(|f| std::fs::read(&f).ok().map(|b| (f, b))) {
                Some((file, bytes)) => ("200 OK", mime_type(&file), bytes),
                None => ("404 Not Found", "text/plain; charset=utf-8", format!("not found: {target}\n").into_bytes()),
            }
        };
        write!(out, "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-cache\r\n\r\n", body.len())?;
        if method != "HEAD" {
            out.write_all(&body)?;
        }
        out.flush()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_below_the_root_and_get_their_type() {
        let root = Path::new("/srv");
        assert_eq!(resolve(root, "/"), Some(PathBuf::from("/srv/index.html")));
        assert_eq!(resolve(root, "/app.js?x=1#code=abc"), Some(PathBuf::from("/srv/app.js")));
        assert_eq!(resolve(root, "/a%20b.css"), Some(PathBuf::from("/srv/a b.css")));
        assert_eq!(resolve(root, "/../etc/passwd"), None);
        assert_eq!(resolve(root, "/%2e%2e/etc/passwd"), None);
        assert_eq!(resolve(root, "/%zz"), None);
        assert_eq!(mime_type(Path::new("x/ptxmm_web.wasm")), "application/wasm");
        assert_eq!(mime_type(Path::new("app.js")), "text/javascript; charset=utf-8");
    }

    #[test]
    fn a_missing_page_names_the_build_command() {
        let e = page_dir(Some(Path::new("/nonexistent/dist"))).unwrap_err();
        assert!(e.contains(BUILD_COMMAND) && e.contains("/nonexistent/dist"), "{e}");
    }
}
