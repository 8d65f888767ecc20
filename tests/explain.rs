//! Snapshot tests of `ptxmm explain`: the text a kernel engineer reads for MP, SB, IRIW, a proxy
//! test and a barrier test. Review changes with `cargo insta review` (or accept by renaming the
//! `.snap.new` files) when an explanation intentionally changes.

use assert_cmd::Command;

fn explain(args: &[&str]) -> String {
    let out = Command::cargo_bin("ptxmm").unwrap().arg("explain").args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn mp_forbidden() {
    insta::assert_snapshot!("mp", explain(&["examples/MP.litmus"]));
}

#[test]
fn mp_relaxed_allowed_with_race() {
    insta::assert_snapshot!("mp_relaxed", explain(&["tests/litmus/MP-relaxed.litmus"]));
}

#[test]
fn sb_fence_sc() {
    insta::assert_snapshot!("sb_fence_sc", explain(&["tests/litmus/SB-fence-sc.litmus"]));
}

#[test]
fn iriw() {
    insta::assert_snapshot!("iriw_acquire", explain(&["tests/litmus/IRIW-acquire.litmus"]));
    insta::assert_snapshot!("iriw_fence_sc", explain(&["tests/litmus/IRIW-fence-sc.litmus"]));
}

#[test]
fn proxy() {
    insta::assert_snapshot!("proxy_surface", explain(&["tests/litmus/Proxy-MP-surface.litmus"]));
    insta::assert_snapshot!("proxy_surface_fenced", explain(&["tests/litmus/Proxy-MP-surface-fenced.litmus"]));
}

#[test]
fn barrier() {
    insta::assert_snapshot!("barrier_mp", explain(&["tests/litmus/Barrier-MP.litmus"]));
}

#[test]
fn json_carries_the_explanation() {
    let v: serde_json::Value = serde_json::from_str(&explain(&["--json", "examples/MP.litmus"])).unwrap();
    assert_eq!(v["verdict"], "Forbidden");
    assert_eq!(v["rejections"][0]["axiom"], "Causality");
    assert_eq!(v["rejections"][0]["shape"], serde_json::json!(["fr", "po", "sync", "po"]));
    assert!(v["graph"]["edges"].as_array().unwrap().iter().any(|e| e["highlighted"] == true));
}
