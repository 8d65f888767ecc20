//! herd7's command-line conventions that scripts rely on (`docs/herd-options.md`): its
//! single-dash option spellings, name files (`-names`, `-excl`), condition files (`-conds`)
//! and index files (`@FILE`).

use crate::diag::{Diagnostic, SourceFile, Span};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// herd7's single-dash spellings and the long option each stands for. `-o` and `-I` are
/// ptxmm's own short options already.
pub const HERD_SPELLINGS: &[(&str, &str)] = &[
    ("-through", "--through"),
    ("-skipchecks", "--skipchecks"),
    ("-skipcheck", "--skipchecks"),
    ("-speedcheck", "--speedcheck"),
    ("-show", "--show"),
    ("-nshow", "--nshow"),
    ("-names", "--names"),
    ("-excl", "--excl"),
    ("-conds", "--conds"),
    ("-set-libdir", "--set-libdir"),
    ("-cat", "--cat"),
    ("-unroll", "--unroll"),
    ("-timeout", "--timeout"),
];

/// herd7 options ptxmm has no counterpart for, each with what to use instead: refused with
/// that advice rather than read as an unknown short option.
pub const HERD_REFUSED: &[(&str, &str)] = &[
    ("-q", "ptxmm has no quiet mode: reports go to standard output and messages to standard error (add `2>/dev/null`)"),
    ("-v", "ptxmm has no verbose mode: `--timing` adds each test's time, `explain` says why"),
    ("-graph", "draw executions with `ptxmm explain --dot` or `--svg`"),
    ("-dotmode", "draw executions with `ptxmm explain --dot` or `--svg`"),
    ("-showevents", "draw executions with `ptxmm explain --dot` or `--svg`"),
    ("-gv", "draw executions with `ptxmm explain --svg` and open the file"),
    ("-evince", "draw executions with `ptxmm explain --svg` and open the file"),
    ("-variant", "ptxmm's alternatives are `--reading FLAG` (see `ptxmm run --help`)"),
    ("-bell", "ptxmm reads no bell files: scopes come from the litmus test's placements"),
    ("-macros", "ptxmm reads no macro files"),
    ("-candidates", "ptxmm counts candidates in `--json` records (`stats`)"),
    ("-hexa", "ptxmm prints values in decimal"),
];

/// The command line with herd7's single-dash options (`-through all`) rewritten to ptxmm's
/// long ones (`--through all`); `-model X` becomes `--cat X` for a file (`.cat` or a path) and
/// `--model X` for a name. Only whole arguments equal to a herd7 spelling change, and nothing
/// after `--`. A herd7 option ptxmm has no counterpart for is an error that names what to use,
/// unless it is one of `own_short`, the short options of the subcommand the command line names
/// (`ptxmm hw judge B -v`: that command's own `--verbose`), which pass unchanged.
pub fn rewrite_herd_argv(args: impl IntoIterator<Item = OsString>, own_short: &[char]) -> Result<Vec<OsString>, String> {
    let mut out = Vec::new();
    let mut rest = false;
    let mut args = args.into_iter().peekable();
    while let Some(a) = args.next() {
        if rest {
            out.push(a);
            continue;
        }
        if a == "--" {
            rest = true;
            out.push(a);
            continue;
        }
        let Some(s) = a.to_str() else {
            out.push(a);
            continue;
        };
        if s == "-model" {
            let is_file = args.peek().and_then(|v| v.to_str()).is_some_and(|v| v.ends_with(".cat") || v.contains('/'));
            out.push(OsString::from(if is_file { "--cat" } else { "--model" }));
        } else if let Some((_, long)) = HERD_SPELLINGS.iter().find(|(h, _)| *h == s) {
            out.push(OsString::from(*long));
        } else if let Some((h, advice)) = HERD_REFUSED.iter().find(|(h, _)| *h == s && !is_own_short(h, own_short)) {
            return Err(format!("herd7's `{h}` is not a ptxmm option: {advice}"));
        } else {
            out.push(a);
        }
    }
    Ok(out)
}

/// Whether a herd7 spelling is one of a subcommand's own short options (`-v`).
fn is_own_short(spelling: &str, own_short: &[char]) -> bool {
    let mut letters = spelling.strip_prefix('-').unwrap_or("").chars();
    matches!((letters.next(), letters.next()), (Some(c), None) if own_short.contains(&c))
}

/// The lines of a herd7 list file that carry something: comments (`#` or `%` to the end of
/// the line) and blank lines dropped, with their 1-based line numbers.
fn content_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let l = l.split(['#', '%']).next().unwrap_or("").trim();
        (!l.is_empty()).then_some((i + 1, l))
    })
}

fn read(path: &Path, what: &str) -> Result<String, String> {
    crate::read_regular(path).map_err(|e| format!("{what} {}: cannot read: {e}", path.display()))
}

/// A names file (herd7's `-names`, `-excl`): the first word of each line is a test name.
pub fn read_names(path: &Path) -> Result<Vec<String>, String> {
    let text = read(path, "names file")?;
    Ok(content_lines(&text).filter_map(|(_, l)| l.split_whitespace().next().map(str::to_string)).collect())
}

/// An index file (herd7's `@FILE` argument): one litmus file per line, relative to the
/// index's folder; an `@OTHER` line reads another index.
pub fn read_index(path: &Path) -> Result<Vec<PathBuf>, String> {
    read_index_depth(path, 0)
}

fn read_index_depth(path: &Path, depth: usize) -> Result<Vec<PathBuf>, String> {
    const MAX_DEPTH: usize = 16;
    if depth > MAX_DEPTH {
        return Err(format!("index file {}: index files nested more than {MAX_DEPTH} deep (a cycle?)", path.display()));
    }
    let text = read(path, "index file")?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut out = Vec::new();
    for (_, l) in content_lines(&text) {
        let word = l.split_whitespace().next().unwrap_or(l);
        match word.strip_prefix('@') {
            Some(inner) => out.extend(read_index_depth(&dir.join(inner), depth + 1)?),
            None => out.push(dir.join(word)),
        }
    }
    Ok(out)
}

/// A condition override from a `-conds` file: the condition and where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CondOverride {
    pub condition: String,
    pub file: String,
    pub line: usize,
}

/// A conditions file (herd7's `-conds`, its rename-map format): lines `NAME "CONDITION"` (or
/// `NAME CONDITION` without blanks); `#` and `%` start comments. A later line for the same
/// test wins, as in herd7.
pub fn read_conds(path: &Path) -> Result<BTreeMap<String, CondOverride>, String> {
    let text = read(path, "conditions file")?;
    let mut out = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with(['#', '%']) {
            continue;
        }
        let (name, rest) =
            l.split_once([' ', '\t']).ok_or_else(|| format!("{}:{line}: expected `NAME \"CONDITION\"`, found `{l}`", path.display()))?;
        let rest = rest.trim();
        let condition = match rest.strip_prefix('"') {
            Some(q) => match q.find('"') {
                Some(end) => q[..end].to_string(),
                None => return Err(format!("{}:{line}: the condition of `{name}` has no closing `\"`", path.display())),
            },
            None => rest.split(['#', '%']).next().unwrap_or("").trim().to_string(),
        };
        if condition.is_empty() {
            return Err(format!("{}:{line}: no condition for `{name}`", path.display()));
        }
        out.insert(name.to_string(), CondOverride { condition, file: path.display().to_string(), line });
    }
    Ok(out)
}

/// The test `file` with its final condition replaced by `condition` (the quantified
/// proposition, e.g. `exists (1:r0=1)`); `locations` and `filter` stay. The new text is named
/// `FILE (condition from CONDS:LINE)` so that an error in the condition says where it came from.
pub fn with_condition(file: &SourceFile, cond: &CondOverride) -> Result<SourceFile, Diagnostic> {
    let ast = crate::litmus::parse(file)?;
    let start = match &ast.condition {
        Some(c) => c.quantifier.span.start,
        None => return Err(Diagnostic::error(Span::new(0, 0), "the test has no final condition to replace")),
    };
    let text = format!("{}{}\n", &file.text()[..start], cond.condition);
    Ok(SourceFile::new(format!("{} (condition from {}:{})", file.name(), cond.file, cond.line), text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn herd_spellings_become_long_options() {
        let argv: Vec<OsString> = ["ptxmm", "run", "-through", "all", "-skipcheck", "a", "-o", "d", "x.litmus", "--", "-names"]
            .iter()
            .map(OsString::from)
            .collect();
        let out: Vec<String> = rewrite_herd_argv(argv, &[]).unwrap().into_iter().map(|a| a.into_string().unwrap()).collect();
        assert_eq!(out, ["ptxmm", "run", "--through", "all", "--skipchecks", "a", "-o", "d", "x.litmus", "--", "-names"]);
    }

    fn rewritten(args: &[&str]) -> Result<Vec<String>, String> {
        Ok(rewrite_herd_argv(args.iter().map(OsString::from), &[])?.into_iter().map(|a| a.into_string().unwrap()).collect())
    }

    #[test]
    fn a_refused_herd_spelling_that_the_subcommand_defines_is_its_own() {
        let argv = |args: &[&str]| args.iter().map(OsString::from).collect::<Vec<_>>();
        let own = rewrite_herd_argv(argv(&["ptxmm", "hw", "judge", "b", "-v"]), &['v', 'h']).unwrap();
        assert_eq!(own, argv(&["ptxmm", "hw", "judge", "b", "-v"]));
        let err = rewrite_herd_argv(argv(&["ptxmm", "hw", "judge", "b", "-q"]), &['v', 'h']).unwrap_err();
        assert!(err.contains("herd7's `-q` is not a ptxmm option"), "{err}");
        // A multi-letter herd7 spelling is never a short option.
        let err = rewrite_herd_argv(argv(&["ptxmm", "run", "-graph", "t"]), &['g']).unwrap_err();
        assert!(err.contains("herd7's `-graph`"), "{err}");
    }

    #[test]
    fn herd_model_is_a_file_or_a_name() {
        assert_eq!(rewritten(&["ptxmm", "run", "-model", "ptx-v7.5.cat", "t"]).unwrap(), ["ptxmm", "run", "--cat", "ptx-v7.5.cat", "t"]);
        assert_eq!(rewritten(&["ptxmm", "run", "-model", "../m/x", "t"]).unwrap(), ["ptxmm", "run", "--cat", "../m/x", "t"]);
        assert_eq!(rewritten(&["ptxmm", "run", "-model", "ptx-7.5", "t"]).unwrap(), ["ptxmm", "run", "--model", "ptx-7.5", "t"]);
        assert_eq!(rewritten(&["ptxmm", "run", "-timeout", "3", "t"]).unwrap(), ["ptxmm", "run", "--timeout", "3", "t"]);
    }

    #[test]
    fn herd_options_without_counterpart_are_refused_with_advice() {
        let e = rewritten(&["ptxmm", "run", "-q", "t"]).unwrap_err();
        assert!(e.contains("`-q`") && e.contains("2>/dev/null"), "{e}");
        let e = rewritten(&["ptxmm", "run", "-graph", "cluster", "t"]).unwrap_err();
        assert!(e.contains("--svg"), "{e}");
        // After `--`, nothing is an option.
        assert!(rewritten(&["ptxmm", "run", "--", "-q"]).is_ok());
    }

    #[test]
    fn conds_lines() {
        let dir = std::env::temp_dir().join(format!("ptxmm-conds-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("c.txt");
        std::fs::write(&p, "# comment\nMP \"exists (1:r0=1 /\\ 1:r1=1)\"\nSB ~exists(0:r0=0)\nbad \"open\n").unwrap();
        let e = read_conds(&p).unwrap_err();
        assert!(e.contains(":4:"), "{e}");
        std::fs::write(&p, "MP \"exists (1:r0=1 /\\ 1:r1=1)\" # why\nSB ~exists(0:r0=0)\n").unwrap();
        let c = read_conds(&p).unwrap();
        assert_eq!(c["MP"].condition, "exists (1:r0=1 /\\ 1:r1=1)");
        assert_eq!(c["SB"].condition, "~exists(0:r0=0)");
        assert_eq!(c["SB"].line, 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
