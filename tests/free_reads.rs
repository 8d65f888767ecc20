//! Differential test of the search's free reads (`exec::search`'s `free.rs`): where no value is
//! observed, a read whose value decides nothing and whose sources no finding of the model sees
//! gets one consistent source instead of every one. Every litmus test of the repository, with
//! its condition made `exists (false)` and its `locations` dropped (so that nothing is
//! observed), and the kernels of `tests/kernels/cmd` with every lane, are decided both ways
//! (`Config::every_source`): the verdict and every finding must be the same. Cases that one way
//! cannot decide within the limits are counted as skipped, not compared.

use ptxmm::config::Config;
use ptxmm::decide::verdict::Outcome;
use ptxmm::decide::Decider;
use ptxmm::diag::SourceFile;
use ptxmm::litmus::ast::{Condition, Prop, Quantifier};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The test's program with nothing observed.
fn unobserved(name: &str, text: &str) -> Option<ptxmm::program::Program> {
    let file = SourceFile::new(name.to_string(), text.to_string());
    let mut ast = ptxmm::litmus::parse(&file).ok()?;
    let span = ast.name.span;
    use ptxmm::diag::Spanned;
    ast.condition = Some(Condition { quantifier: Spanned { node: Quantifier::Exists, span }, prop: Spanned { node: Prop::False, span } });
    ast.locations.clear();
    ast.filter = None;
    ptxmm::program::lower(&ast, &file).ok()
}

/// What must agree: the verdict and the findings (undefined behaviour, races, flags).
fn answers(o: &Outcome) -> String {
    let list = |set: &std::collections::BTreeSet<ptxmm::decide::findings::Finding>| {
        set.iter().map(|f| format!("{f:?}")).collect::<Vec<_>>().join("\n")
    };
    format!("verdict {:?}\nundefined:\n{}\nraces:\n{}\nflags:\n{}", o.verdict(), list(&o.undefined), list(&o.races), list(&o.flag_findings))
}

fn decide(program: &ptxmm::program::Program, every_source: bool) -> Option<Outcome> {
    let mut config = Config::default_model().with_timeout(Some(Duration::from_secs(10)));
    config.every_source = every_source;
    let o = Decider::new(&config).verdict(program).ok()?;
    o.incomplete.is_none().then_some(o)
}

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: Vec<String>,
    skipped: usize,
    /// Cases where the free reads left choices unvisited (the shortcut applied).
    shortened: usize,
}

impl Tally {
    fn compare(&mut self, name: &str, program: &ptxmm::program::Program) {
        let Some(every) = decide(program, true) else {
            self.skipped += 1;
            return;
        };
        let Some(free) = decide(program, false) else {
            self.failed.push(format!("{name}: decided with every source, not with free reads"));
            return;
        };
        if free.stats.free_left > 0 {
            self.shortened += 1;
        }
        let (a, b) = (answers(&every), answers(&free));
        if a == b {
            self.passed += 1;
        } else {
            self.failed.push(format!("{name}:\n--- every source\n{a}\n--- free reads\n{b}"));
        }
    }
}

#[test]
fn free_reads_give_the_findings_of_every_source() {
    let mut tally = Tally::default();
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in ["tests", "examples"] {
        let (found, _) = ptxmm::files_below(&root().join(dir), &|p| p.extension().is_some_and(|e| e == "litmus"));
        files.extend(found);
    }
    files.sort();
    for path in files.iter().filter(|p| !p.components().any(|c| c.as_os_str() == "bad")) {
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        let name = path.strip_prefix(root()).unwrap_or(path).display().to_string();
        if let Some(program) = unobserved(&name, &text) {
            tally.compare(&name, &program);
        }
    }
    // Kernels whose lanes meet, with every lane (the racy neighbour read is the case the free
    // reads are for: 32 racy reads).
    for file in ["lanes.ptx", "lanes-bug.ptx"] {
        let path = root().join("tests/kernels/cmd").join(file);
        let ptx = SourceFile::new(path.display().to_string(), std::fs::read_to_string(&path).unwrap());
        for (entry, block) in [("_Z9neighbourPi", 32), ("_Z9divergentPi", 32), ("_Z5namedPi", 64)] {
            let options = ptxmm::kernel::KernelOptions {
                entry: Some(entry.to_string()),
                block: Some(vec![block]),
                lanes: Some((0..32).collect()),
                every_warp: true,
                params: vec![("param_0".to_string(), "buffer:128".to_string())],
                ..Default::default()
            };
            let kernel = ptxmm::kernel::build(&ptx, &options, &Default::default()).unwrap();
            let program = ptxmm::parse_program(SourceFile::new(format!("{file} {entry}"), kernel.litmus.clone())).unwrap();
            tally.compare(&format!("{file} {entry}"), &program);
        }
    }
    println!(
        "free reads: {} passed, {} failed ({} skipped: not decided within the limits with every source; the shortcut applied in {})",
        tally.passed,
        tally.failed.len(),
        tally.skipped,
        tally.shortened
    );
    assert!(tally.failed.is_empty(), "{}", tally.failed.join("\n\n"));
    assert!(tally.shortened >= 10, "the shortcut applied in only {} cases: the test compares too little", tally.shortened);
}
