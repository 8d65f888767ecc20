//! Running litmus tests on NVIDIA GPUs (`ptxmm hw`): a CUDA harness generated from the test
//! (`codegen`), nvcc discovery and the build/run of the harness (`runner`), and the comparison
//! of the histogram the harness prints with the model's final states (`report`).
//! `docs/hardware.md` describes the method and the incantations.

pub mod campaign;
pub mod codegen;
pub mod judge;
pub mod report;
pub mod runner;
pub mod tensor;

use crate::config::InputLimits;
use crate::diag::SourceFile;
use crate::litmus::ast::LitmusTest;
use crate::program::Program;
use std::path::{Path, PathBuf};

/// The incantations of litmus7 and the GPU-litmus literature, as harness defaults (the
/// generated program takes the same flags to override them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Incantations {
    /// Launches (each one iteration of every instance, variables reset before each).
    pub iterations: u64,
    /// Test instances per launch.
    pub instances: u32,
    /// Per-iteration start barrier among an instance's threads.
    pub start_barrier: bool,
    /// Random placement of instances on blocks (a new permutation each launch).
    pub shuffle: bool,
    /// Extra warps per block hammering a scratch buffer (memory stress).
    pub stress_warps: u32,
    /// Iterations of a spin loop before the thread records a hang.
    pub spin_bound: u32,
    pub seed: u64,
}

impl Default for Incantations {
    fn default() -> Self {
        Incantations { iterations: 1000, instances: 512, start_barrier: true, shuffle: true, stress_warps: 0, spin_bound: 100_000, seed: 1 }
    }
}

impl Incantations {
    /// The harness's command-line flags that set these values.
    pub fn harness_args(&self) -> Vec<String> {
        let mut a = vec![
            "--iterations".into(),
            self.iterations.to_string(),
            "--instances".into(),
            self.instances.to_string(),
            "--stress".into(),
            self.stress_warps.to_string(),
            "--bound".into(),
            self.spin_bound.to_string(),
            "--seed".into(),
            self.seed.to_string(),
        ];
        a.push(if self.start_barrier { "--start-barrier" } else { "--no-start-barrier" }.into());
        a.push(if self.shuffle { "--shuffle" } else { "--no-shuffle" }.into());
        a
    }
}

/// A test that cannot be turned into a harness, with the reason (naming the instruction).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    pub test: String,
    /// `file:line:col`.
    pub location: String,
    pub message: String,
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: cannot generate a hardware harness for {}: {}", self.location, self.test, self.message)
    }
}

/// One test ready for generation: its syntax tree (the text of each instruction) and its
/// lowered program (variables, placement, observables).
pub struct HwTest<'a> {
    pub ast: &'a LitmusTest,
    pub program: &'a Program,
}

/// The rejection of `program` at `span` (its `file:line:col`).
pub(crate) fn reject(program: &Program, span: crate::diag::Span, message: impl Into<String>) -> Rejection {
    let (line, col) = program.source.line_col(span.start);
    Rejection { test: program.name.clone(), location: format!("{}:{line}:{col}", program.source.name()), message: message.into() }
}

/// A parsed and lowered test, with its syntax tree kept for the instruction texts.
pub struct LoadedTest {
    pub path: PathBuf,
    pub ast: LitmusTest,
    pub program: Program,
}

impl LoadedTest {
    pub fn hw(&self) -> HwTest<'_> {
        HwTest { ast: &self.ast, program: &self.program }
    }
}

/// Read, parse and lower one litmus file within `limits` (a test the model rejects is rejected
/// here too).
pub fn load(path: &Path, limits: &InputLimits) -> Result<LoadedTest, String> {
    let name = path.display().to_string();
    let input = crate::open_regular(path).map_err(|e| format!("{name}: cannot read: {e}"))?;
    let text = crate::read_limited(input, &name, limits).map_err(|e| e.to_string())?;
    let file = SourceFile::new(name, text);
    let ast = crate::litmus::parse(&file).map_err(|d| d.one_line(&file))?;
    let program = crate::program::lower(&ast, &file).map_err(|d| d.one_line(&file))?;
    Ok(LoadedTest { path: path.to_path_buf(), ast, program })
}

/// The `.litmus` files named: files as given, directories searched recursively (sorted).
pub fn expand_paths(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let (found, errors) = crate::litmus_files(p);
            if let Some(e) = errors.into_iter().next() {
                return Err(e);
            }
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}
