//! `ptxmm gen`: litmus tests from cycles of relaxations, diy7's idea for PTX, with the
//! asynchronous edges no generator covers (docs/for-researchers.md).
//!
//! `edges` is the vocabulary, `cycle` turns a cycle into threads, locations and values, `emit`
//! writes the litmus text; this module enumerates families (every cycle up to a size, each once
//! in its canonical rotation) and decides the tests.

pub mod cycle;
pub mod edges;
pub mod emit;

use crate::config::Config;
use crate::decide::{Decider, Verdict};
use crate::diag::SourceFile;
use cycle::Reject;
use edges::Edge;
use std::collections::BTreeMap;

/// One generated test.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The test's name (edges joined with `+`), also its file name without `.litmus`.
    pub name: String,
    pub edges: Vec<Edge>,
    pub text: String,
}

/// Generate the test of one cycle; the error says why the cycle gives none.
pub fn generate(edges: &[Edge], nprocs: usize, opts: &emit::EmitOptions) -> Result<Generated, Reject> {
    let analysed = cycle::analyse(edges, nprocs)?;
    Ok(Generated { name: emit::test_name(edges), edges: edges.to_vec(), text: emit::emit(&analysed, opts) })
}

/// Bounds of a family.
#[derive(Clone, Copy, Debug)]
pub struct FamilyBounds {
    /// The largest cycle (number of edges).
    pub size: usize,
    /// The most threads.
    pub nprocs: usize,
    /// The most tests the family may have (`--max-tests`).
    pub max_tests: usize,
    /// When the enumeration gives up (`--timeout`: the enumeration is one piece of work, as the
    /// decision of one test is); None for no limit.
    pub deadline: Option<crate::clock::Instant>,
    /// `--timeout` in seconds, for the message.
    pub timeout_seconds: f64,
    /// The most bytes the tests' texts may take together (`--max-memory`).
    pub max_bytes: u64,
}

impl FamilyBounds {
    /// Bounds of size, threads and tests, with no time or memory limit.
    pub fn new(size: usize, nprocs: usize, max_tests: usize) -> FamilyBounds {
        FamilyBounds { size, nprocs, max_tests, deadline: None, timeout_seconds: 0.0, max_bytes: u64::MAX }
    }
}

/// The most candidate cycles (directions chaining) one family enumeration may visit: the size-4
/// generic family visits about 60,000 and size 5 about 1.5 million.
pub const MAX_CYCLES_VISITED: u64 = 20_000_000;

/// A family: the tests, and how many cycles gave none, by reason.
#[derive(Clone, Debug, Default)]
pub struct Family {
    pub tests: Vec<Generated>,
    pub rejected: BTreeMap<String, usize>,
}

/// Every cycle of 2..=`size` edges from `vocabulary` whose directions chain, each once (in its
/// rotation with the smallest sequence of vocabulary indices), that gives a test. More than
/// `max_tests` tests is an error naming `--max-tests`.
pub fn family(vocabulary: &[Edge], bounds: &FamilyBounds, opts: &emit::EmitOptions) -> Result<Family, String> {
    let mut vocab = vocabulary.to_vec();
    vocab.sort();
    vocab.dedup();
    let mut out = Family::default();
    let mut seq: Vec<usize> = Vec::new();
    let mut visited = 0u64;
    let mut bytes = 0u64;
    for len in 2..=bounds.size {
        enumerate(&vocab, len, &mut seq, &mut |seq: &[usize]| {
            visited += 1;
            if visited > MAX_CYCLES_VISITED {
                return Err(format!("the family's enumeration passed {MAX_CYCLES_VISITED} cycles (lower --size, or give fewer --edges)"));
            }
            if visited.is_multiple_of(4096) && bounds.deadline.is_some_and(|d| crate::clock::Instant::now() >= d) {
                return Err(format!(
                    "the family's enumeration took longer than the time limit of {} s, after {visited} cycles and {} tests (raise --timeout, or 0 for no limit; or lower --size, or give fewer --edges)",
                    bounds.timeout_seconds,
                    out.tests.len()
                ));
            }
            if !is_canonical(seq) {
                return Ok(());
            }
            let edges: Vec<Edge> = seq.iter().map(|&i| vocab[i]).collect();
            match generate(&edges, bounds.nprocs, opts) {
                Ok(g) => {
                    if out.tests.len() >= bounds.max_tests {
                        return Err(format!(
                            "the family has more than {} tests (raise --max-tests, or lower --size / --nprocs, or give fewer --edges)",
                            bounds.max_tests
                        ));
                    }
                    // The text and name, and the vectors holding them.
                    bytes += (g.text.len() + g.name.len() + 64) as u64;
                    if bytes > bounds.max_bytes {
                        return Err(format!(
                            "the family's {} tests take more than the memory limit of {} MiB (raise --max-memory, or --max-tests to stop sooner, or lower --size)",
                            out.tests.len(),
                            bounds.max_bytes >> 20
                        ));
                    }
                    out.tests.push(g);
                }
                Err(why) => *out.rejected.entry(reject_class(&why)).or_default() += 1,
            }
            Ok(())
        })?;
    }
    Ok(out)
}

/// The reason's class, for the family's summary (without the per-cycle details).
fn reject_class(r: &Reject) -> String {
    match r {
        Reject::Directions(_) => "directions".to_string(),
        Reject::TooManyThreads(_) => "more threads than --nprocs".to_string(),
        other => other.to_string(),
    }
}

/// Depth-first over sequences of `len` indices whose directions chain (the closing pair is
/// checked by the analysis), the first index the smallest (a canonical rotation starts with
/// its least edge).
fn enumerate(
    vocab: &[Edge],
    len: usize,
    seq: &mut Vec<usize>,
    visit: &mut dyn FnMut(&[usize]) -> Result<(), String>,
) -> Result<(), String> {
    if seq.len() == len {
        return if vocab[seq[len - 1]].dst == vocab[seq[0]].src { visit(seq) } else { Ok(()) };
    }
    for i in 0..vocab.len() {
        if let (Some(&first), Some(&last)) = (seq.first(), seq.last()) {
            if i < first || vocab[last].dst != vocab[i].src {
                continue;
            }
        }
        seq.push(i);
        enumerate(vocab, len, seq, visit)?;
        seq.pop();
    }
    Ok(())
}

/// Whether `seq` is the least of its rotations.
fn is_canonical(seq: &[usize]) -> bool {
    let n = seq.len();
    (1..n).all(|r| {
        let rotated = seq[r..].iter().chain(&seq[..r]);
        seq.iter().le(rotated)
    })
}

/// Decide a generated test under `config`: its verdict and herd7's `Ok` (the condition holds in
/// some execution), or the error message.
pub fn decide(test: &Generated, config: &Config) -> Result<(Verdict, bool), String> {
    let file = SourceFile::new(format!("{}.litmus", test.name), test.text.clone());
    let program = crate::parse_program_with(file, &config.input).map_err(|e| e.render(false))?;
    let outcome = Decider::new(config).verdict(&program).map_err(|e| e.to_string())?;
    Ok((outcome.verdict(), outcome.ok()))
}

/// Write each test as `DIR/NAME.litmus` and, when a configuration is given, `DIR/index.csv`: one
/// `NAME.litmus,Verdict` row per test with the verdict the model gives (the suite format of
/// `ptxmm suite`, so the index is a regression suite for the family); a test the model leaves
/// Unknown or cannot decide gets a `//` comment row with the reason. Returns the verdict counts.
pub fn write_family(dir: &std::path::Path, tests: &[Generated], decide_with: Option<&Config>) -> std::io::Result<BTreeMap<String, usize>> {
    use rayon::prelude::*;
    std::fs::create_dir_all(dir)?;
    for t in tests {
        std::fs::write(dir.join(format!("{}.litmus", t.name)), &t.text)?;
    }
    let mut counts = BTreeMap::new();
    let Some(config) = decide_with else { return Ok(counts) };
    let results: Vec<Result<(Verdict, bool), String>> = tests.par_iter().map(|t| decide(t, config)).collect();
    let mut index = format!("// ptxmm gen family: {} tests; verdicts under {}\n", tests.len(), config.model.title());
    for (t, r) in tests.iter().zip(results) {
        let word = match r {
            Ok((v, _)) if crate::decide::suite::VERDICT_WORDS.contains(&v.name()) => {
                index.push_str(&format!("{}.litmus,{}\n", t.name, v.name()));
                v.name().to_string()
            }
            Ok((v, _)) => {
                index.push_str(&format!("// {}.litmus: {} (a limit stopped the search)\n", t.name, v.name()));
                v.name().to_string()
            }
            Err(e) => {
                let first = e.lines().next().unwrap_or_default().to_string();
                index.push_str(&format!("// {}.litmus: error: {first}\n", t.name));
                "error".to_string()
            }
        };
        *counts.entry(word).or_default() += 1;
    }
    std::fs::write(dir.join("index.csv"), index)?;
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_rotation_is_unique() {
        assert!(is_canonical(&[0, 1, 0, 2]));
        assert!(!is_canonical(&[0, 2, 0, 1]));
        assert!(is_canonical(&[1, 1]));
    }

    #[test]
    fn the_family_budget_is_named() {
        let vocab = edges::parse_edges(edges::GENERIC_EDGES).unwrap();
        let err = family(&vocab, &FamilyBounds::new(4, 4, 3), &Default::default()).unwrap_err();
        assert!(err.contains("--max-tests"), "{err}");
    }
}
