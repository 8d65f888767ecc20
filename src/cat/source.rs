//! Reading cat files from disk within bounds: only regular files (a FIFO would block the
//! reader forever), at most [`MAX_CAT_FILE_BYTES`] each, and includes confined to the folders
//! the user named (the model's own folder and the `-I` / `--set-libdir` folders).
//!
//! Error messages name paths and limits, never the contents of the file.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest cat file read (the root model or one included file).
pub(crate) const MAX_CAT_FILE_BYTES: u64 = 1 << 20;

/// Reads the cat file at `path`, refusing anything but a regular file of at most
/// [`MAX_CAT_FILE_BYTES`].
pub(crate) fn read_cat_file(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file (a cat model must be a file, not a folder, FIFO or device)".to_string());
    }
    let too_large = || format!("larger than the limit of {} bytes for a cat file (internal limit)", MAX_CAT_FILE_BYTES);
    if meta.len() > MAX_CAT_FILE_BYTES {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path).and_then(|f| f.take(MAX_CAT_FILE_BYTES + 1).read_to_end(&mut bytes)).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_CAT_FILE_BYTES {
        return Err(too_large());
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text (a cat model is text)".to_string())
}

/// The canonical forms of the folders includes may come from.
pub(crate) fn include_roots(root_dir: Option<&Path>, include_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let root = match root_dir {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::iter::once(&root).chain(include_dirs).filter_map(|d| d.canonicalize().ok()).collect()
}
