//! The memory models shipped with ptxmm, and loading of user-supplied cat files.
//!
//! Built-in models are compiled into the binary (so `ptxmm` works from any directory) and are the
//! same text as the files under `models/`.

use crate::cat::CatModel;
use crate::diag::{Diagnostic, FileDiagnostic, SourceFile, Span};
use std::path::{Path, PathBuf};

/// (name, file name, text) of every built-in model.
pub const BUILTIN: &[(&str, &str, &str)] = &[
    ("ptx", "models/ptx.cat", include_str!("../../models/ptx.cat")),
    ("ptx-6.0", "models/ptx-6.0.cat", include_str!("../../models/ptx-6.0.cat")),
    ("ptx-7.5", "models/ptx-7.5.cat", include_str!("../../models/ptx-7.5.cat")),
];

/// The model used when none is named.
/// The default: PTX 7.5 plus the asynchronous operations.
pub const DEFAULT_MODEL: &str = "ptx";

/// Whether `model` is one whose consistency and findings on a program whose threads fall into
/// independent groups (whole clusters; no location one group writes is accessed by another;
/// SC fences in one group at most) are those of each group decided alone: its checks relate
/// events of two such groups only through relations that no check sees outside an
/// intersection with a per-location, per-thread or per-cluster relation (ARCHITECTURE.md,
/// "Independent groups", gives the argument for the built-in models' text). Read off the text
/// of the built-in models, so a user's cat file gets it only when it is one of them.
pub fn groups_decide_apart(model: &CatModel) -> bool {
    BUILTIN.iter().any(|(_, _, text)| model.has_text(text))
}

/// Load a built-in model by name.
pub fn builtin(name: &str) -> Result<CatModel, FileDiagnostic> {
    let Some((_, file, text)) = BUILTIN.iter().find(|(n, _, _)| *n == name) else {
        let known: Vec<&str> = BUILTIN.iter().map(|b| b.0).collect();
        let file = SourceFile::new("<command line>", name);
        return Err(FileDiagnostic::new(
            &file,
            Diagnostic::error(Span::new(0, name.len()), format!("unknown model `{name}`"))
                .with_note(format!("built-in models: {}; or pass a cat file with --cat FILE", known.join(", "))),
        ));
    };
    CatModel::from_source(SourceFile::new(*file, *text), &[])
}

/// Load a cat file from disk; includes resolve next to it, then in `models/`.
pub fn from_file(path: &Path) -> Result<CatModel, FileDiagnostic> {
    from_file_with(path, &[])
}

/// [`from_file`] with more folders to search for includes, before `models/` (herd7's `-I`
/// and `-set-libdir`, in that order).
pub fn from_file_with(path: &Path, search: &[PathBuf]) -> Result<CatModel, FileDiagnostic> {
    let mut dirs: Vec<PathBuf> = search.to_vec();
    dirs.push(PathBuf::from("models"));
    CatModel::load(path, &dirs)
}
