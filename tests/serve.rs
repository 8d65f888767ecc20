//! `ptxmm serve`: the error when the page is not built, and the files it serves (over a real
//! socket, with a stand-in page; the real page is tested in a browser by web/test.sh).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

fn ptxmm() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ptxmm"))
}

#[test]
fn a_missing_page_names_the_build_command() {
    let out = ptxmm().args(["serve", "--dir", "/nonexistent/web/dist"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bash web/build.sh") && stderr.contains("/nonexistent/web/dist"), "{stderr}");
}

/// One GET over its own connection: the status line, the headers, the body.
fn get(addr: &str, target: &str) -> (String, String, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut reader = BufReader::new(s);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    let mut headers = String::new();
    let mut length = 0;
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).unwrap();
        if h == "\r\n" {
            break;
        }
        if let Some(v) = h.strip_prefix("Content-Length: ") {
            length = v.trim().parse().unwrap();
        }
        headers.push_str(&h);
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    (status.trim().to_string(), headers, body)
}

#[test]
fn serves_the_page_with_its_types_and_nothing_outside_it() {
    let dir = std::env::temp_dir().join(format!("ptxmm-serve-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("index.html"), "<!doctype html><title>t</title>").unwrap();
    std::fs::write(dir.join("ptxmm_web.wasm"), b"\0asm\x01\0\0\0").unwrap();
    std::fs::write(dir.join("app.js"), "export {};").unwrap();
    let mut child = ptxmm().args(["serve", "--port", "0", "--dir"]).arg(&dir).stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let addr = line.split("http://").nth(1).and_then(|r| r.split('/').next()).map(str::to_string);
    let result = std::panic::catch_unwind(|| {
        let addr = addr.expect("serve prints its address");
        assert!(addr.starts_with("127.0.0.1:"), "{line}");
        let (status, headers, body) = get(&addr, "/");
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert!(headers.contains("Content-Type: text/html"), "{headers}");
        assert_eq!(body, b"<!doctype html><title>t</title>");
        let (status, headers, body) = get(&addr, "/ptxmm_web.wasm");
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert!(headers.contains("Content-Type: application/wasm"), "{headers}");
        assert_eq!(body, b"\0asm\x01\0\0\0");
        let (_, headers, _) = get(&addr, "/app.js?v=1#code=x");
        assert!(headers.contains("Content-Type: text/javascript"), "{headers}");
        assert!(get(&addr, "/missing.js").0.starts_with("HTTP/1.1 404"));
        assert!(get(&addr, "/../Cargo.toml").0.starts_with("HTTP/1.1 404"));
        assert!(get(&addr, "/%2e%2e/Cargo.toml").0.starts_with("HTTP/1.1 404"));
    });
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

/// Start `ptxmm serve` on a stand-in page; the child and its address.
fn start_server(name: &str) -> (std::process::Child, String, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("ptxmm-serve-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("index.html"), "<!doctype html><title>t</title>").unwrap();
    std::fs::write(dir.join("ptxmm_web.wasm"), b"\0asm\x01\0\0\0").unwrap();
    let mut child = ptxmm().args(["serve", "--port", "0", "--dir"]).arg(&dir).stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let addr = line.split("http://").nth(1).and_then(|r| r.split('/').next()).expect("serve prints its address").to_string();
    (child, addr, dir)
}

/// Run `f` against a fresh server on a stand-in page, then stop it and remove the page, the
/// failure of `f` (if any) reported after.
fn with_server(name: &str, f: impl FnOnce(&mut std::process::Child, &str, &std::path::Path)) {
    let (mut child, addr, dir) = start_server(name);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut child, &addr, &dir)));
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

/// Send `request` raw and read everything the server sends until it closes the connection.
fn exchange(addr: &str, request: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
    let _ = s.write_all(request);
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

/// Issue 25, class 5: a POST body is not a second request, another `Host` is refused (DNS
/// rebinding), an over-long request line is answered 414, and 300 idle connections neither
/// end the server nor keep it from answering once they close.
#[test]
fn the_server_survives_hostile_clients() {
    with_server("hostile", |child, addr, _| {
        let addr = addr.to_string();
        let post = format!("POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 40\r\n\r\nGET /index.html HTTP/1.1\r\nHost: {addr}\r\n\r\n");
        let answer = exchange(&addr, post.as_bytes());
        assert_eq!(answer.matches("HTTP/1.1 ").count(), 1, "{answer}");
        assert!(answer.starts_with("HTTP/1.1 405"), "{answer}");
        let answer = exchange(&addr, b"GET / HTTP/1.1\r\nHost: evil.example:8000\r\n\r\n");
        assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
        assert!(!answer.contains("doctype"), "{answer}");
        let long = format!("GET /{} HTTP/1.1\r\nHost: {addr}\r\n\r\n", "a".repeat(64 * 1024));
        assert!(exchange(&addr, long.as_bytes()).starts_with("HTTP/1.1 414"));
        let idle: Vec<TcpStream> = (0..300).map(|_| TcpStream::connect(&addr).unwrap()).collect();
        // Beyond the workers and the queue, a connection is told the server is busy.
        let busy = exchange(&addr, format!("GET / HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes());
        assert!(busy.starts_with("HTTP/1.1 503"), "{busy}");
        drop(idle);
        let ok = (0..50).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(100));
            exchange(&addr, format!("GET / HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes()).starts_with("HTTP/1.1 200")
        });
        assert!(ok, "the server answers again once the idle connections close");
        assert!(child.try_wait().unwrap().is_none(), "the server is still running");
    });
}

/// The peak resident memory of a process, in KiB (Linux: `VmHWM` of /proc/PID/status).
fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Issue 43, item 5: clients that send their request a byte at a time hold a worker for the
/// request's time limit at most (5 s for the whole head), not for as long as each byte comes
/// within a read timeout: with every worker held by such a client, a fresh GET is answered
/// within that limit and a second, and the slow clients are cut off.
#[test]
fn slow_clients_hold_a_worker_for_one_request_time_at_most() {
    with_server("slow", |child, addr, _| {
        let addr = addr.to_string();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let slow: Vec<_> = (0..8)
            .map(|_| {
                let (addr, stop) = (addr.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut s = TcpStream::connect(&addr).unwrap();
                    let started = std::time::Instant::now();
                    // One byte of a never-ending header every 200 ms, for at most 12 s.
                    let _ = s.write_all(b"GET / HTTP/1.1\r\nX-Slow: ");
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) && started.elapsed().as_secs() < 12 {
                        if s.write_all(b"a").is_err() {
                            break;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(200));
                    }
                    started.elapsed()
                })
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(500));
        let asked = std::time::Instant::now();
        let answer = exchange(&addr, format!("GET / HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes());
        let waited = asked.elapsed();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(waited.as_secs_f64() < 7.0, "a fresh GET waited {waited:?} behind slow clients");
        for t in slow {
            let held = t.join().unwrap();
            assert!(held.as_secs_f64() < 12.0, "a slow client was served for {held:?}");
        }
        assert!(child.try_wait().unwrap().is_none(), "the server is still running");
    });
}

/// Issue 43, item 4: a large file is streamed, not read whole per request: three clients
/// fetching a 256 MiB file at once keep the server far below its size in memory.
#[test]
fn large_files_are_streamed() {
    with_server("large", |child, addr, dir| {
        let addr = addr.to_string();
        let big = dir.join("big.bin");
        std::fs::File::create(&big).unwrap().set_len(256 << 20).unwrap();
        let clients: Vec<_> = (0..3)
            .map(|_| {
                let addr = addr.clone();
                std::thread::spawn(move || {
                    let (status, _, body) = get(&addr, "/big.bin");
                    (status, body.len())
                })
            })
            .collect();
        for c in clients {
            let (status, len) = c.join().unwrap();
            assert_eq!((status.as_str(), len), ("HTTP/1.1 200 OK", 256 << 20));
        }
        if let Some(peak) = peak_kib(child.id()) {
            assert!(peak < 64 * 1024, "the server peaked at {peak} KiB serving a 256 MiB file three times");
        }
    });
}
