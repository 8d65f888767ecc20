//! Every sample output in the README and in `docs/` is what ptxmm prints: a fenced block whose
//! first line is `$ ptxmm ARGS` is run (from the repository root) and its other lines compared
//! with the output, line for line; a line `...` stands for any number of lines. A sample that
//! drifts from the tool fails here.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `$ ptxmm …` samples of one Markdown file: (line of the command, arguments, expected lines).
fn samples(path: &Path) -> Vec<(usize, Vec<String>, Vec<String>)> {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let opens = lines[i].starts_with("```");
        i += 1;
        if !opens {
            continue;
        }
        let start = i;
        while i < lines.len() && !lines[i].starts_with("```") {
            i += 1;
        }
        let block = &lines[start..i];
        i += 1;
        if let Some(args) = block.first().and_then(|l| l.strip_prefix("$ ptxmm ")) {
            let args = args.split_whitespace().map(str::to_string).collect();
            out.push((start + 1, args, block[1..].iter().map(|l| l.to_string()).collect()));
        }
    }
    out
}

/// Whether `actual` matches `expected`, where a `...` line of `expected` matches any lines.
fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((e, rest)) if e == "..." => (0..=actual.len()).any(|k| matches(rest, &actual[k..])),
        Some((e, rest)) => actual.first().is_some_and(|a| a == e) && matches(rest, &actual[1..]),
    }
}

#[test]
fn every_sample_output_is_what_ptxmm_prints() {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs")).unwrap().map(|e| e.unwrap().path()).collect();
    docs.sort();
    files.extend(docs.into_iter().filter(|p| p.extension().is_some_and(|e| e == "md")));
    let mut checked = 0;
    for file in &files {
        for (line, args, expected) in samples(file) {
            let out = Command::cargo_bin("ptxmm").unwrap().current_dir(root()).args(&args).output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let mut actual: Vec<&str> = stdout.lines().collect();
            // `run` ends each test's report with a blank line; a sample need not show it.
            while actual.last() == Some(&"") {
                actual.pop();
            }
            assert!(
                matches(&expected, &actual),
                "{}:{line}: `ptxmm {}` printed\n{stdout}\nbut the sample says\n{}",
                file.display(),
                args.join(" "),
                expected.join("\n")
            );
            checked += 1;
        }
    }
    assert!(checked >= 3, "only {checked} samples found");
}

#[test]
fn the_matcher_handles_elisions() {
    let e = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert!(matches(&e(&["a", "...", "d"]), &["a", "b", "c", "d"]));
    assert!(matches(&e(&["a", "...", "d"]), &["a", "d"]));
    assert!(!matches(&e(&["a", "...", "d"]), &["a", "b", "c"]));
    assert!(!matches(&e(&["a", "b"]), &["a", "b", "c"]));
}
