//! A campaign bundle (`ptxmm hw campaign`): every test of a set built into harness programs on a
//! machine with nvcc, with a run script for the GPU machine and what the judge needs to judge
//! the outputs anywhere.
//!
//! ```text
//! BUNDLE/manifest.tsv     index, id, program, status, source: one line per test
//! BUNDLE/tests/K.litmus   a copy of test K's source (the judge reads these)
//! BUNDLE/src/prog_P.cu    the generated programs, many tests each
//! BUNDLE/bin/prog_P       the executables
//! BUNDLE/build.sh         the nvcc line of each program (rebuild on the GPU machine)
//! BUNDLE/run.sh           one test per process, N at once, a deadline each, resumable, --shard
//! BUNDLE/out/K.out        what test K's process printed, ended by `exit RC wall_ms MS`
//! ```

use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The first line of a manifest.
pub const MANIFEST_HEADER: &str = "# ptxmm hw campaign 1: index, id, program, status, source (tab-separated)";

/// One test of a campaign.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub index: usize,
    /// The test's name in its program (unique in the campaign).
    pub id: String,
    /// The program (`prog_P`) holding it; empty when it was not generated.
    pub program: String,
    /// `ok`, or why the test has no harness (`rejected: …`, `build failed: …`).
    pub status: String,
    /// The source path as given to `hw campaign`.
    pub source: String,
}

impl Entry {
    pub fn runnable(&self) -> bool {
        self.status == "ok"
    }
    /// The copy of the test's source in the bundle.
    pub fn test_file(&self, bundle: &Path) -> PathBuf {
        bundle.join("tests").join(format!("{}.litmus", self.index))
    }
    /// The output of the test's process.
    pub fn output_file(&self, outputs: &Path) -> PathBuf {
        outputs.join(format!("{}.out", self.index))
    }
}

/// A field of the manifest: no tab, no line break.
fn field(s: &str) -> String {
    s.chars().map(|c| if c == '\t' || c.is_control() { ' ' } else { c }).collect()
}

pub fn render_manifest(entries: &[Entry]) -> String {
    let mut s = format!("{MANIFEST_HEADER}\n");
    for e in entries {
        let _ = writeln!(s, "{}\t{}\t{}\t{}\t{}", e.index, field(&e.id), field(&e.program), field(&e.status), field(&e.source));
    }
    s
}

/// Read a manifest; a malformed line is an error naming it.
pub fn parse_manifest(text: &str, name: &str) -> Result<Vec<Entry>, String> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, l)) if l == MANIFEST_HEADER => {}
        _ => return Err(format!("{name}:1: not a ptxmm hw campaign manifest (expected `{MANIFEST_HEADER}`)")),
    }
    let mut out: Vec<Entry> = Vec::new();
    for (i, line) in lines {
        if line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        let [index, id, program, status, source] = f[..] else {
            return Err(format!("{name}:{}: expected 5 tab-separated fields, found {}", i + 1, f.len()));
        };
        let index: usize = index.parse().map_err(|_| format!("{name}:{}: index `{index}` is not a number", i + 1))?;
        if out.iter().any(|e| e.index == index || (!id.is_empty() && e.id == id && e.runnable())) {
            return Err(format!("{name}:{}: index {index} or id `{id}` repeats an earlier line", i + 1));
        }
        let clean = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || "-_.+~".contains(c));
        if !clean(id) || !clean(program) {
            return Err(format!("{name}:{}: an id or program name with characters other than letters, digits and -_.+~", i + 1));
        }
        out.push(Entry { index, id: id.into(), program: program.into(), status: status.into(), source: source.into() });
    }
    Ok(out)
}

/// Names that tell apart the tests of one program or campaign: each test's name, made of
/// letters, digits and `-_.+` (other characters become `_`), with `~2`, `~3`, … added to the
/// second and later tests of a repeated name (Dat3M's corpus has five `3_simple`).
pub fn unique_ids<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut out = Vec::new();
    for name in names {
        let clean: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.+".contains(c) { c } else { '_' }).collect();
        let clean = if clean.is_empty() { "test".to_string() } else { clean };
        let n = seen.entry(clean.clone()).or_insert(0);
        *n += 1;
        out.push(if *n == 1 { clean } else { format!("{clean}~{n}") });
    }
    // A made-up `~K` may equal a real name: add more until each is unique.
    let mut taken = std::collections::HashSet::new();
    for id in &mut out {
        while !taken.insert(id.clone()) {
            id.push('~');
        }
    }
    out
}

/// The run script of a bundle.
pub fn run_script() -> &'static str {
    include_str!("campaign_run.sh")
}

/// The build script: one nvcc line per program (`NVCC` overrides the compiler).
pub fn build_script(lines: &[String]) -> String {
    let mut s = String::from(
        "#!/usr/bin/env bash\n# Build every program of this ptxmm hw campaign (NVCC=path overrides the nvcc found on PATH).\nset -eu\ncd \"$(dirname \"$0\")\"\nNVCC=${NVCC:-nvcc}\nmkdir -p bin\n",
    );
    for l in lines {
        let _ = writeln!(s, "{l}");
    }
    s
}

/// The README of a bundle.
pub fn readme(tests: usize, programs: usize) -> String {
    format!(
        "ptxmm hw campaign: {tests} tests in {programs} programs.\n\n\
         On the GPU machine (no Rust, no ptxmm needed; nvcc only to rebuild with `bash build.sh`):\n\
         \x20 bash run.sh [--jobs N] [--deadline SECONDS] [--shard I/N] [--out DIR] [-- HARNESS-FLAGS]\n\
         It runs one test per process, N at once, each killed after the deadline, and skips tests\n\
         whose output is complete (run it again to resume). With --shard I/N it runs the tests whose\n\
         index is I modulo N (several machines, one shard each; copy every out/ back together).\n\n\
         Anywhere with ptxmm:\n\
         \x20 ptxmm hw judge BUNDLE [--outputs-dir DIR] [--json] [-v] [--reports]\n"
    )
}
