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
