//! Test inputs of `run` and `explain`: files, folders, `@INDEX` lists and standard input.

use crate::cli::color;
use crate::diag::SourceFile;
use std::path::PathBuf;

/// One test named on the command line: a file, or standard input (`-`).
pub(crate) enum Input {
    File(PathBuf),
    Stdin,
}

impl Input {
    /// The name reports use: the path, or `<stdin>`.
    pub(crate) fn name(&self) -> String {
        match self {
            Input::File(p) => p.display().to_string(),
            Input::Stdin => "<stdin>".to_string(),
        }
    }

    pub(crate) fn load(&self, limits: &crate::config::InputLimits) -> Result<crate::program::Program, crate::LoadError> {
        match self {
            Input::File(p) => crate::load_program_with(p, limits),
            Input::Stdin => {
                let text = crate::read_limited(std::io::stdin(), &self.name(), limits)?;
                crate::parse_program_with(SourceFile::new(self.name(), text), limits)
            }
        }
    }
}

/// The tests named by `paths`: files as given, `-` as standard input, and for a folder every
/// `*.litmus` file below it, sorted. A folder with no test is an error (the message).
pub(crate) fn expand_inputs(paths: &[PathBuf]) -> Vec<Result<Input, String>> {
    let mut inputs = Vec::new();
    for p in paths {
        if let Some(index) = p.to_str().and_then(|s| s.strip_prefix('@')).filter(|_| !p.exists()) {
            // herd7's index file: a list of tests (`docs/herd-options.md`).
            match crate::herd::options::read_index(std::path::Path::new(index)) {
                Ok(listed) => inputs.extend(expand_inputs(&listed)),
                Err(e) => inputs.push(Err(e)),
            }
        } else if p.as_os_str() == "-" {
            inputs.push(Ok(Input::Stdin));
        } else if p.is_dir() {
            let (found, errors) = crate::litmus_files(p);
            inputs.extend(errors.into_iter().map(Err));
            if found.is_empty() {
                inputs.push(Err(format!("{}: no `*.litmus` file in this folder", p.display())));
            }
            inputs.extend(found.into_iter().map(|f| Ok(Input::File(f))));
        } else {
            inputs.push(Ok(Input::File(p.clone())));
        }
    }
    inputs
}

/// Report a test that has no result: the diagnostic on stderr and, in JSON mode, its record.
pub(crate) fn report_failure(
    json: bool,
    file: &str,
    test: Option<&str>,
    model: Option<&str>,
    rendered: &str,
    error: crate::decide::report::JsonError,
) {
    eprintln!("{rendered}");
    if json {
        outln!("{}", crate::decide::report::json_error(file, test, model, error));
    }
}

/// Load one test named on the command line; a failure is reported (stderr, and its JSON
/// record in JSON mode) and gives None.
pub(crate) fn load_input(
    input: Result<Input, String>,
    limits: &crate::config::InputLimits,
    json: bool,
    model: Option<&str>,
) -> Option<(String, crate::program::Program)> {
    use crate::decide::report::JsonError;
    let input = match input {
        Ok(i) => i,
        Err(why) => {
            report_failure(json, &why, None, model, &why, JsonError::plain(why.clone()));
            return None;
        }
    };
    let file = input.name();
    match input.load(limits) {
        Ok(p) => Some((file, p)),
        Err(e) => {
            report_failure(json, &file, None, model, &e.render(color()), JsonError::of_load(&e));
            None
        }
    }
}
