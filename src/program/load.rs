//! Reading litmus files: the file's bytes (bounded by [`InputLimits`]), the syntax tree, the
//! program. Every front end loads tests through here, so the input limits hold everywhere.

use crate::config::InputLimits;
use crate::diag::{FileDiagnostic, SourceFile};
use std::path::Path;

/// Why a litmus file could not be turned into a program.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("error: {path}: cannot read: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{0}")]
    Syntax(FileDiagnostic),
    /// The test exceeds an input limit (the message names it and the flag that raises it).
    #[error("{path}: error: the test is too large: {what} (raise {flag})")]
    TooLarge { path: String, what: String, flag: &'static str },
    /// The file is not UTF-8 text: the position of its first byte that is not.
    #[error("{path}:{line}:{column}: error: not UTF-8 text: byte 0x{byte:02x} (at byte offset {offset}) starts no UTF-8 character")]
    NotText { path: String, line: usize, column: usize, offset: usize, byte: u8 },
}

impl LoadError {
    /// The full rendering (with the source excerpt) for terminals.
    pub fn render(&self, color: bool) -> String {
        match self {
            LoadError::Io { .. } | LoadError::TooLarge { .. } | LoadError::NotText { .. } => self.to_string(),
            LoadError::Syntax(d) => d.render(color),
        }
    }
}

/// Read, parse and lower a litmus file under the default [`InputLimits`].
pub fn load_program(path: &Path) -> Result<super::Program, LoadError> {
    load_program_with(path, &InputLimits::default())
}

/// Read, parse and lower a litmus file; the file is read no further than `limits` allow.
pub fn load_program_with(path: &Path, limits: &InputLimits) -> Result<super::Program, LoadError> {
    let name = path.display().to_string();
    let file = open_regular(path).map_err(|source| LoadError::Io { path: name.clone(), source })?;
    let text = read_limited(file, &name, limits)?;
    parse_program_with(SourceFile::new(name, text), limits)
}

/// Open a file to read, refusing anything but a regular file (after links): a FIFO would block
/// the reader forever, a device never ends. Standard input (`-`) is read by its own path.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        let kind = if meta.is_dir() { "a folder" } else { "a FIFO, socket or device" };
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("not a regular file ({kind})")));
    }
    std::fs::File::open(path)
}

/// Read a whole text file through [`open_regular`].
pub fn read_regular(path: &Path) -> std::io::Result<String> {
    std::io::read_to_string(open_regular(path)?)
}

/// Every `*.litmus` file below `dir`, recursively, sorted, as [`files_below`] finds them.
pub fn litmus_files(dir: &Path) -> (Vec<std::path::PathBuf>, Vec<String>) {
    files_below(dir, &|p| p.extension().is_some_and(|x| x == "litmus"))
}

/// Every regular file below `dir` that `keep` accepts, recursively, sorted; a folder that cannot
/// be read is an error of its own (the files found elsewhere are still returned). Links are
/// followed only while they stay inside `dir` (after resolving them), and a folder reached twice
/// (a link loop, or two links to one folder) is walked once: a link to `/` or to a parent never
/// makes the walk leave `dir` or run forever.
pub fn files_below(dir: &Path, keep: &dyn Fn(&Path) -> bool) -> (Vec<std::path::PathBuf>, Vec<String>) {
    let (mut found, mut errors) = (Vec::new(), Vec::new());
    let top = match std::fs::canonicalize(dir) {
        Ok(t) => t,
        Err(e) => return (found, vec![format!("{}: cannot read: {e}", dir.display())]),
    };
    let mut seen = std::collections::HashSet::from([top.clone()]);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) => {
                errors.push(format!("{}: cannot read: {e}", dir.display()));
                continue;
            }
        };
        for e in entries.flatten() {
            let path = e.path();
            let is_link = e.file_type().is_ok_and(|t| t.is_symlink());
            let real = if is_link {
                match std::fs::canonicalize(&path) {
                    Ok(r) if r.starts_with(&top) => r,
                    // A dangling link, or one that leaves the folder: not followed.
                    _ => continue,
                }
            } else {
                path.clone()
            };
            if real.is_dir() {
                let key = if is_link { real } else { std::fs::canonicalize(&path).unwrap_or(real) };
                if seen.insert(key) {
                    stack.push(path);
                }
            } else if real.is_file() && keep(&path) {
                found.push(path);
            }
        }
    }
    found.sort();
    (found, errors)
}

/// Read a whole test from `input`, stopping with an error past `limits.max_file_bytes`.
pub fn read_limited(input: impl std::io::Read, name: &str, limits: &InputLimits) -> Result<String, LoadError> {
    read_text(input, name, limits.max_file_bytes, "--max-file-size")
}

/// Read a whole text file of at most `max_bytes` (the limit `flag` sets), as UTF-8: past the
/// limit, or at the first byte that is not UTF-8 (with its line and column), an error.
pub fn read_text(input: impl std::io::Read, name: &str, max_bytes: u64, flag: &'static str) -> Result<String, LoadError> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(input, max_bytes.saturating_add(1)), &mut bytes)
        .map_err(|source| LoadError::Io { path: name.to_string(), source })?;
    if bytes.len() as u64 > max_bytes {
        return Err(LoadError::TooLarge { path: name.to_string(), what: format!("more than {max_bytes} bytes"), flag });
    }
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let offset = e.utf8_error().valid_up_to();
        let before = &bytes[..offset];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        // The column in characters, as diagnostics count them (the prefix is valid UTF-8).
        let column = std::str::from_utf8(&before[line_start..]).map_or(offset - line_start, |s| s.chars().count()) + 1;
        LoadError::NotText { path: name.to_string(), line, column, offset, byte: bytes[offset] }
    })
}

/// How many times `max_instructions` the statements of a kernel block, counted once per thread
/// that runs it, may total.
const KERNEL_FACTOR: usize = 100;

/// Parse and lower litmus source text under the default [`InputLimits`].
pub fn parse_program(file: SourceFile) -> Result<super::Program, LoadError> {
    parse_program_with(file, &InputLimits::default())
}

/// Parse and lower litmus source text; threads and instructions are counted before lowering.
pub fn parse_program_with(file: SourceFile, limits: &InputLimits) -> Result<super::Program, LoadError> {
    if file.text().len() as u64 > limits.max_file_bytes {
        return Err(LoadError::TooLarge {
            path: file.name().to_string(),
            what: format!("more than {} bytes", limits.max_file_bytes),
            flag: "--max-file-size",
        });
    }
    let ast = crate::litmus::parse(&file).map_err(|d| LoadError::Syntax(FileDiagnostic::new(&file, d)))?;
    if ast.threads.len() > limits.max_threads {
        return Err(LoadError::TooLarge {
            path: file.name().to_string(),
            what: format!("{} threads, more than {}", ast.threads.len(), limits.max_threads),
            flag: "--max-threads",
        });
    }
    if let Some((t, column)) = ast.code.iter().enumerate().find(|(_, c)| c.len() > limits.max_instructions) {
        return Err(LoadError::TooLarge {
            path: file.name().to_string(),
            what: format!(
                "thread P{} has {} instructions, more than {}",
                ast.threads.get(t).map_or(t, |h| h.id.node),
                column.len(),
                limits.max_instructions
            ),
            flag: "--max-instructions",
        });
    }
    // A kernel block is written once and lowered once per thread: bound the whole, as the file
    // size bounds the cells of a table.
    let total = ast.code.first().map_or(0, Vec::len).saturating_mul(ast.threads.len());
    let bound = limits.max_instructions.saturating_mul(KERNEL_FACTOR);
    if ast.form == crate::litmus::ast::CodeForm::Kernel && total > bound {
        return Err(LoadError::TooLarge {
            path: file.name().to_string(),
            what: format!(
                "a kernel block of {} statements run by {} threads ({total} in all), more than {KERNEL_FACTOR} x {}",
                ast.code[0].len(),
                ast.threads.len(),
                limits.max_instructions
            ),
            flag: "--max-instructions",
        });
    }
    super::lower::lower_within(&ast, &file, limits.max_memory_mib).map_err(|d| LoadError::Syntax(FileDiagnostic::new(&file, d)))
}
