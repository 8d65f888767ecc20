//! `ptxmm serve`: the web playground (built into `web/dist` by `bash web/build.sh`) served on
//! 127.0.0.1 for offline use. A small static file server on `std::net`: GET and HEAD of files
//! below the folder, nothing else. Whatever a client sends, the server stays up and bounded: a
//! fixed pool of [`WORKERS`] threads with a queue of [`QUEUE`] connections (more are answered
//! `503` at once), request lines and headers read no further than their limits, one request per
//! connection (`Connection: close`, so a request body is never read as the next request), a
//! `Host` that must name this machine (a page elsewhere cannot reach the server through DNS
//! rebinding), and no file reached through a link out of the folder. Time is bounded per
//! request, not per read: a client has [`HEAD_TIMEOUT`] for its whole request line and headers
//! and [`BODY_TIMEOUT`] to take the whole answer, however slowly it sends or reads (a client
//! sending a byte a second holds a worker for at most that long). Files are streamed, never
//! read whole into memory.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::mpsc::{sync_channel, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The threads that answer requests.
pub const WORKERS: usize = 8;
/// Connections accepted and waiting for a worker; beyond them a connection is answered `503`.
pub const QUEUE: usize = 64;
/// The longest request line, in bytes (its end of line included); longer is answered `414`.
pub const MAX_REQUEST_LINE: usize = 8 * 1024;
/// The most bytes of headers; more is answered `431`.
pub const MAX_HEADER_BYTES: usize = 32 * 1024;
/// How long a connection may take to send its whole request line and headers.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a connection may take to take the whole answer.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);

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

/// Serve `root` on `listener` until the process ends. Err: no worker thread could be started,
/// or the folder cannot be resolved.
pub fn serve(listener: TcpListener, root: PathBuf) -> std::io::Result<()> {
    let root = std::fs::canonicalize(root)?;
    let (queue, waiting) = sync_channel::<TcpStream>(QUEUE);
    let waiting = Arc::new(Mutex::new(waiting));
    let mut workers = 0;
    for i in 0..WORKERS {
        let (waiting, root) = (Arc::clone(&waiting), root.clone());
        let worker = std::thread::Builder::new().name(format!("serve-{i}")).spawn(move || loop {
            // The lock is held only while this worker waits for the next connection.
            let next = match waiting.lock() {
                Ok(w) => w.recv(),
                Err(_) => return,
            };
            let Ok(stream) = next else { return };
            let _ = answer(stream, &root);
        });
        match worker {
            Ok(_) => workers += 1,
            // Fewer workers serve as well, only slower.
            Err(e) if workers == 0 => return Err(std::io::Error::other(format!("cannot start a worker thread: {e}"))),
            Err(_) => break,
        }
    }
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        match queue.try_send(stream) {
            Ok(()) => {}
            Err(TrySendError::Full(stream)) => {
                let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
                let _ = write_response(&stream, "503 Service Unavailable", "text/plain; charset=utf-8", b"busy: try again\n", false);
            }
            Err(TrySendError::Disconnected(_)) => return Err(std::io::Error::other("every worker thread stopped")),
        }
    }
    Ok(())
}

/// The parts of a request the server uses.
#[derive(Debug, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    pub target: String,
    pub host: Option<String>,
}

/// Read one request's line and headers within the limits. Err: the status to answer, or None
/// when the connection closed before a request.
pub fn read_request(reader: &mut impl BufRead) -> Result<Request, Option<&'static str>> {
    let line = match read_line_within(reader, MAX_REQUEST_LINE) {
        Ok(Some(l)) if l.is_empty() => return Err(None),
        Ok(Some(l)) => String::from_utf8_lossy(&l).into_owned(),
        Ok(None) => return Err(Some("414 URI Too Long")),
        Err(_) => return Err(None),
    };
    let mut words = line.split_whitespace();
    let (method, target) = (words.next().unwrap_or("").to_string(), words.next().unwrap_or("").to_string());
    let mut host = None;
    let mut budget = MAX_HEADER_BYTES;
    loop {
        let header = match read_line_within(reader, budget) {
            Ok(Some(h)) => h,
            Ok(None) => return Err(Some("431 Request Header Fields Too Large")),
            Err(_) => return Err(None),
        };
        budget -= header.len();
        let header = String::from_utf8_lossy(&header);
        if header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.trim().eq_ignore_ascii_case("host") {
                host = Some(value.trim().to_string());
            }
        }
    }
    Ok(Request { method, target, host })
}

/// One line (its end included) of at most `limit` bytes: Some(empty) at the end of the input,
/// None when the line is longer (it is not read further).
fn read_line_within(reader: &mut impl BufRead, limit: usize) -> std::io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    reader.take(limit as u64).read_until(b'\n', &mut bytes)?;
    if bytes.len() == limit && !bytes.ends_with(b"\n") {
        return Ok(None);
    }
    Ok(Some(bytes))
}

/// Whether a `Host` header names this machine: `localhost`, `127.0.0.1` or `[::1]`, with any
/// port. Any other name may be an attacker's domain resolving to 127.0.0.1 (DNS rebinding).
pub fn is_local_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((inner, port)) if port.is_empty() || port.starts_with(':') => return inner == "::1",
            _ => return false,
        }
    } else {
        host.split_once(':').map_or(host, |(name, _)| name)
    };
    name.eq_ignore_ascii_case("localhost") || name == "127.0.0.1"
}

/// An answer's body: a short text, or a file streamed from disk.
enum Body {
    Text(Vec<u8>),
    File(std::fs::File, u64),
}

impl Body {
    fn len(&self) -> u64 {
        match self {
            Body::Text(t) => t.len() as u64,
            Body::File(_, n) => *n,
        }
    }
}

/// The answer to one request: status, content type and body.
fn respond(request: &Request, root: &Path) -> (&'static str, &'static str, Body) {
    const TEXT: &str = "text/plain; charset=utf-8";
    if !request.host.as_deref().is_some_and(is_local_host) {
        return ("403 Forbidden", TEXT, Body::Text(b"the Host header must name localhost or 127.0.0.1\n".to_vec()));
    }
    if request.method != "GET" && request.method != "HEAD" {
        return ("405 Method Not Allowed", TEXT, Body::Text(b"only GET and HEAD\n".to_vec()));
    }
    let open = |f: PathBuf| {
        let file = std::fs::File::open(&f).ok()?;
        let len = file.metadata().ok()?.len();
        Some((f, file, len))
    };
    match resolve(root, &request.target).and_then(|f| confined(root, &f)).and_then(open) {
        Some((path, file, len)) => ("200 OK", mime_type(&path), Body::File(file, len)),
        // The target is not echoed: it is the client's text, not ours.
        None => ("404 Not Found", TEXT, Body::Text(b"not found\n".to_vec())),
    }
}

/// A socket read or written against one deadline for the whole exchange: each call gets what
/// is left of it as its timeout, and none once it has passed.
struct Deadline<'s> {
    stream: &'s TcpStream,
    until: std::time::Instant,
}

impl Deadline<'_> {
    fn left(&self) -> std::io::Result<Duration> {
        let left = self.until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "the request's time is up"));
        }
        Ok(left)
    }
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.stream.set_read_timeout(Some(self.left()?))?;
        let mut s = self.stream;
        s.read(buf)
    }
}

impl Write for Deadline<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.stream.set_write_timeout(Some(self.left()?))?;
        let mut s = self.stream;
        s.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let mut s = self.stream;
        s.flush()
    }
}

/// `file` when it is a regular file whose real path (links followed) is below `root` (itself
/// a real path).
pub fn confined(root: &Path, file: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(file).ok()?;
    (real.starts_with(root) && real.is_file()).then_some(real)
}

/// Answer the one request of a connection, then close it.
fn answer(stream: TcpStream, root: &Path) -> std::io::Result<()> {
    let mut reader = BufReader::new(Deadline { stream: &stream, until: std::time::Instant::now() + HEAD_TIMEOUT });
    let (status, kind, body, head) = match read_request(&mut reader) {
        Ok(request) => {
            let (status, kind, body) = respond(&request, root);
            (status, kind, body, request.method == "HEAD")
        }
        Err(Some(status)) => (status, "text/plain; charset=utf-8", Body::Text(format!("{status}\n").into_bytes()), false),
        Err(None) => return Ok(()),
    };
    let mut out = Deadline { stream: &stream, until: std::time::Instant::now() + BODY_TIMEOUT };
    write_head(&mut out, status, kind, body.len())?;
    if !head {
        match body {
            Body::Text(t) => out.write_all(&t)?,
            Body::File(f, len) => {
                std::io::copy(&mut f.take(len), &mut out)?;
            }
        }
    }
    out.flush()
}

fn write_head(out: &mut impl Write, status: &str, kind: &str, len: u64) -> std::io::Result<()> {
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {len}\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n"
    )
}

fn write_response(mut out: &TcpStream, status: &str, kind: &str, body: &[u8], head: bool) -> std::io::Result<()> {
    write_head(&mut out, status, kind, body.len() as u64)?;
    if !head {
        out.write_all(body)?;
    }
    out.flush()
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
    fn requests_are_read_within_their_limits() {
        let read = |text: &[u8]| read_request(&mut BufReader::new(text));
        let r = read(b"GET /a HTTP/1.1\r\nhOsT: localhost:8000\r\n\r\nbody").unwrap();
        assert_eq!((r.method.as_str(), r.target.as_str(), r.host.as_deref()), ("GET", "/a", Some("localhost:8000")));
        assert_eq!(read(b""), Err(None));
        let long = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(MAX_REQUEST_LINE));
        assert_eq!(read(long.as_bytes()), Err(Some("414 URI Too Long")));
        let headers = format!("GET / HTTP/1.1\r\n{}\r\n", "X-A: b\r\n".repeat(MAX_HEADER_BYTES / 8 + 1));
        assert_eq!(read(headers.as_bytes()), Err(Some("431 Request Header Fields Too Large")));
        // Invalid UTF-8 grows when replaced: the budget counts the bytes received.
        let mut odd = b"GET / HTTP/1.1\r\nX: ".to_vec();
        odd.extend(std::iter::repeat_n(0xff, MAX_HEADER_BYTES - 10));
        odd.extend(b"\r\n\r\n");
        assert!(read(&odd).is_ok());
    }

    #[test]
    fn only_this_machine_is_a_host() {
        for ok in ["localhost", "LOCALHOST:8000", "127.0.0.1", "127.0.0.1:1", "[::1]", "[::1]:80"] {
            assert!(is_local_host(ok), "{ok}");
        }
        for bad in ["evil.example", "evil.example:8000", "localhost.evil.example", "127.0.0.1.nip.io", "[::2]", "[::1]x", ""] {
            assert!(!is_local_host(bad), "{bad}");
        }
    }

    #[test]
    #[cfg(unix)]
    fn links_out_of_the_folder_are_not_served() {
        let dir = std::env::temp_dir().join(format!("ptxmm-serve-links-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("page")).unwrap();
        std::fs::write(dir.join("secret.txt"), "secret").unwrap();
        std::fs::write(dir.join("page/app.js"), "x").unwrap();
        std::os::unix::fs::symlink(dir.join("secret.txt"), dir.join("page/out.txt")).unwrap();
        std::os::unix::fs::symlink("app.js", dir.join("page/in.js")).unwrap();
        let root = std::fs::canonicalize(dir.join("page")).unwrap();
        assert!(confined(&root, &root.join("out.txt")).is_none());
        assert_eq!(confined(&root, &root.join("in.js")), Some(root.join("app.js")));
        assert!(confined(&root, &root).is_none(), "a folder is not a file");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_missing_page_names_the_build_command() {
        let e = page_dir(Some(Path::new("/nonexistent/dist"))).unwrap_err();
        assert!(e.contains(BUILD_COMMAND) && e.contains("/nonexistent/dist"), "{e}");
    }
}
