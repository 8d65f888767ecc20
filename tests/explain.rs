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

/// Every test of one Dat3M folder renders to well-formed SVG that names every event.
#[test]
fn svg_for_a_whole_dat3m_folder() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/peers/dat3m/litmus/PTX/Barrier");
    if !dir.is_dir() {
        eprintln!("SKIPPED: {} is absent", dir.display());
        return;
    }
    let config = ptxmm::Config::builtin("ptx-7.5").unwrap();
    let mut files: Vec<_> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "litmus")).collect();
    files.sort();
    let mut failures = Vec::new();
    for f in &files {
        let program = ptxmm::load_program(f).unwrap();
        let x = ptxmm::decide::Decider::new(&config).explain(&program).unwrap();
        let svg = ptxmm::decide::explain::svg::to_svg(&x.graph);
        match roxmltree::Document::parse(&svg) {
            Ok(doc) if doc.root_element().tag_name().name() == "svg" => {
                let missing: Vec<_> = x
                    .graph
                    .threads
                    .iter()
                    .flat_map(|t| &t.nodes)
                    .filter(|n| !svg.contains(&n.label.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")))
                    .collect();
                if !missing.is_empty() {
                    failures.push(format!(
                        "{}: labels missing from the SVG: {:?}",
                        f.display(),
                        missing.iter().map(|n| &n.label).collect::<Vec<_>>()
                    ));
                }
            }
            Ok(_) => failures.push(format!("{}: root element is not <svg>", f.display())),
            Err(e) => failures.push(format!("{}: not well-formed XML: {e}", f.display())),
        }
    }
    println!("svg rendering: {} passed, {} failed", files.len() - failures.len(), failures.len());
    assert!(!files.is_empty());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// When Graphviz is installed, `--dot` output must render with it.
#[test]
fn dot_renders_with_graphviz_when_installed() {
    let Ok(status) = std::process::Command::new("dot").arg("-V").output() else {
        eprintln!("SKIPPED: Graphviz `dot` is not installed");
        return;
    };
    assert!(status.status.success());
    for test in ["examples/MP.litmus", "tests/litmus/SB-fence-sc.litmus", "tests/litmus/Proxy-MP-surface.litmus"] {
        let dot = explain(&["--dot", test]);
        let mut child = std::process::Command::new("dot")
            .arg("-Tsvg")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(dot.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{test}: dot failed: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// A `filter` may name observables the condition does not; explanations evaluate it too.
#[test]
fn filter_observables_are_known_to_explain() {
    let text = explain(&["tests/explain/filter.litmus"]);
    assert!(text.starts_with("Test filter: the outcome 1:r0=0 is allowed."), "{text}");
    assert!(text.contains("final state 1:r0=0 1:r1=1"), "{text}");
}

/// The TMA store without `fence.proxy.async`: the witness, the undefined behaviour (a mixed-size
/// race across proxies) and the race, each naming the missing fence; and the fixed version.
#[test]
fn tma_store_missing_proxy_fence() {
    insta::assert_snapshot!("tma_store_no_fence", explain(&["tests/async/S6a-tma-store-no-proxy-fence.litmus"]));
    insta::assert_snapshot!("tma_store_fenced", explain(&["tests/async/S6b-tma-store-proxy-fence.litmus"]));
}

/// Each fix is given once (issue 27): the races of the execution shown point back to the
/// findings that already carry their hint, instead of repeating it (and its reading) under
/// every race.
#[test]
fn each_hint_is_given_once() {
    let out = explain(&["tests/async/pipeline-ring-no-proxy-fence.litmus"]);
    let hints: Vec<&str> = out.lines().filter_map(|l| l.trim_start().strip_prefix("hint: ")).collect();
    assert!(!hints.is_empty(), "{out}");
    for h in &hints {
        assert_eq!(out.matches(h).count(), 1, "given more than once: {h}\n{out}");
    }
    assert!(out.contains("see the hint of the same pair above"), "{out}");
}
