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

/// The font size of a text element: its own `font-size`, or its nearest ancestor's.
fn font_size(n: roxmltree::Node) -> Option<f64> {
    n.ancestors().find_map(|a| a.attribute("font-size")).and_then(|v| v.parse().ok())
}

/// `explain --svg` of the 3-thread, 2-lap TMA ring and of a 4-thread TMA store: drawn at its own
/// size (the page's default zoom, one view-box unit a pixel) every text is at least 11 px; the racing
/// pairs are highlighted, and the initial writes and the events of other variables folded;
/// `--all-events` draws them all.
#[test]
fn svg_is_readable_at_its_own_size_with_the_race_highlighted_and_the_rest_folded() {
    for test in ["tests/async/pipeline-ring-no-proxy-fence.litmus", "tests/kernels/tma_store-bug.litmus"] {
        let svg = explain(&["--svg", test]);
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let root = doc.root_element();
        let view_box: Vec<f64> = root.attribute("viewBox").unwrap().split(' ').map(|v| v.parse().unwrap()).collect();
        assert_eq!(root.attribute("width").unwrap().parse::<f64>().unwrap(), view_box[2], "{test}: one unit a pixel");
        assert_eq!(root.attribute("height").unwrap().parse::<f64>().unwrap(), view_box[3], "{test}");
        let texts: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("text") || n.has_tag_name("tspan")).collect();
        assert!(texts.len() > 10, "{test}");
        for t in &texts {
            let size = font_size(*t).unwrap_or(0.0);
            assert!(size >= 11.0, "{test}: {:?} at {size} px", t.text());
        }
        let class_count =
            |tag: &str, class: &str| doc.descendants().filter(|n| n.has_tag_name(tag) && n.attribute("class") == Some(class)).count();
        assert!(class_count("path", "edge highlighted race") >= 1, "{test}: the racing pair is highlighted");
        assert!(class_count("rect", "event focus") >= 2, "{test}: the racing events are marked");
        assert!(class_count("rect", "event folded") >= 1, "{test}: something is folded");
        assert!(svg.contains("initial writes folded"), "{test}");
        let folded: usize = root.attribute("data-folded").unwrap().parse().unwrap();
        assert!(folded > 0, "{test}");
        // Every event, on request.
        let all = explain(&["--svg", "--all-events", test]);
        let doc_all = roxmltree::Document::parse(&all).unwrap();
        let events = |d: &roxmltree::Document, class: &str| {
            d.descendants().filter(|n| n.has_tag_name("rect") && n.attribute("class") == Some(class)).count()
        };
        assert_eq!(events(&doc_all, "event folded"), 0, "{test}");
        assert_eq!(doc_all.root_element().attribute("data-folded"), Some("0"));
        let shown = events(&doc, "event") + events(&doc, "event focus");
        let shown_all = events(&doc_all, "event") + events(&doc_all, "event focus");
        assert_eq!(shown + folded, shown_all, "{test}: every event is drawn or counted as folded");
    }
    // The ring's picture, once a 5748-pixel-wide thumbnail, fits a screen's width at its own size.
    let svg = explain(&["--svg", "tests/async/pipeline-ring-no-proxy-fence.litmus"]);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert!(doc.root_element().attribute("width").unwrap().parse::<f64>().unwrap() < 1600.0);
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
        let svg = ptxmm::decide::explain::svg::to_svg_all(&x.graph);
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
