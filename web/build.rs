//! Embeds the example menu: every test of tests/async and the MP/SB/IRIW classics, read from
//! the repository at build time (so the menu cannot drift from the tests).
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The classic tests of the menu, relative to the repository root.
const CLASSICS: &[&str] = &[
    "examples/MP.litmus",
    "tests/litmus/SB-fence-sc.litmus",
    "tests/litmus/SB-fence-acq-rel.litmus",
    "tests/litmus/IRIW-acquire.litmus",
    "tests/litmus/IRIW-fence-sc.litmus",
];

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let async_dir = root.join("tests/async");
    let mut tests: Vec<PathBuf> = std::fs::read_dir(&async_dir)
        .expect("tests/async is readable")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "litmus"))
        .collect();
    tests.sort();
    let mut out = String::from(
        "/// (group, path relative to the repository root, text) of every example.\npub const EXAMPLES: &[(&str, &str, &str)] = &[\n",
    );
    let classics = CLASSICS.iter().map(|p| ("classic", root.join(p), p.to_string()));
    let asyncs = tests.iter().map(|p| ("async", p.clone(), format!("tests/async/{}", p.file_name().unwrap().to_string_lossy())));
    for (group, path, rel) in classics.chain(asyncs) {
        let abs = path.canonicalize().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let _ = writeln!(out, "    ({group:?}, {rel:?}, include_str!({:?})),", abs.display().to_string());
    }
    out.push_str("];\n");
    println!("cargo:rerun-if-changed={}", async_dir.display());
    for c in CLASSICS {
        println!("cargo:rerun-if-changed={}", root.join(c).display());
    }
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("examples.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}
