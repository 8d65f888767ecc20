//! The architecture invariants of ARCHITECTURE.md that the code itself can show: data flows one
//! way through the stages, so no `use` of a module runs back up the pipeline, the tools at the
//! edges do not lean on each other, and no files import each other in a circle.
//!
//! Every reference to another module of the crate in non-test code (`use crate::…`,
//! `use super::…`, and paths written inline such as `crate::program::naming::observables(p)`) is
//! resolved to the file that defines the module, and the file to its stage. Test modules
//! (`#[cfg(test)] mod …`, `tests.rs`) may reach anything and are not read.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The stages, lowest first: a file may import its own stage's files and those of lower stages
/// only. Within `exec/` the order of the pipeline holds too (runs, then structures, then the
/// mbarrier state graphs, then the search). Matched by the longest prefix.
const STAGES: &[(&str, u32, &str)] = &[
    ("src/diag.rs", 0, "foundation"),
    ("src/clock.rs", 0, "foundation"),
    ("src/relation", 0, "foundation"),
    ("src/litmus/", 10, "litmus"),
    ("src/cat/", 10, "cat"),
    ("src/config/", 20, "config"),
    ("src/program/", 30, "program"),
    ("src/exec/reduce.rs", 40, "exec"),
    ("src/exec/trace", 41, "exec"),
    ("src/exec/structure.rs", 42, "exec"),
    ("src/exec/structure/", 42, "exec"),
    ("src/exec/mbgraph.rs", 43, "exec"),
    ("src/exec/search", 44, "exec"),
    ("src/exec/mod.rs", 45, "exec"),
    ("src/decide/", 50, "decide"),
    ("src/herd/", 60, "herd"),
    ("src/gen/", 70, "edge:gen"),
    ("src/hw/", 70, "edge:hw"),
    ("src/kernel/", 70, "edge:kernel"),
    ("src/families.rs", 70, "edge:families"),
    ("src/serve.rs", 70, "edge:serve"),
    ("src/cli/", 80, "command line"),
    ("src/main.rs", 80, "command line"),
    ("src/lib.rs", 90, "crate root"),
];

fn stage(file: &str) -> (u32, &'static str) {
    STAGES
        .iter()
        .filter(|(prefix, _, _)| file.starts_with(prefix))
        .max_by_key(|(prefix, _, _)| prefix.len())
        .map(|&(_, level, name)| (level, name))
        .unwrap_or_else(|| panic!("{file} belongs to no stage: add it to STAGES in tests/architecture.rs (and to ARCHITECTURE.md)"))
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file below `src/` that is not a test module of its own, as `src/...` paths.
fn source_files() -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root().join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                let rel = path.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/");
                let name = path.file_name().unwrap().to_string_lossy();
                if name != "tests.rs" && !name.ends_with("_tests.rs") && !rel.contains("/tests/") {
                    out.push(rel);
                }
            }
        }
    }
    out.sort();
    out
}

/// The text of a file without comments, string literals and `#[cfg(test)]` modules.
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if text[i..].starts_with("//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if text[i..].starts_with("/*") {
            i += text[i..].find("*/").map_or(b.len() - i, |k| k + 2);
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if text[i..].starts_with("r#\"") {
            i += text[i + 3..].find("\"#").map_or(b.len() - i, |k| k + 5);
            out.push_str("\"\"");
        } else if text[i..].starts_with("#[cfg(test)]") {
            // Skip the attribute and the item after it: to its `;` or its balanced block.
            i += "#[cfg(test)]".len();
            while i < b.len() && b[i] != b'{' && b[i] != b';' {
                i += 1;
            }
            if i < b.len() && b[i] == b'{' {
                let mut depth = 0;
                while i < b.len() {
                    match b[i] {
                        b'{' => depth += 1,
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            i += 1;
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The module path of a file (`src/exec/search/mod.rs` → `["exec", "search"]`).
fn module_of(file: &str) -> Vec<String> {
    let rel = file.trim_start_matches("src/").trim_end_matches(".rs");
    let mut parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// Every path of a `use` tree, flattened (`a::{b, c::d}` → `a::b`, `a::c::d`).
fn expand_use(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    fn go(prefix: &str, tree: &str, out: &mut Vec<String>) {
        match tree.find('{') {
            None => out.push(format!("{prefix}{tree}")),
            Some(open) => {
                let head = &tree[..open];
                let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
                let mut depth = 0;
                let mut start = 0;
                for (k, c) in inner.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            go(&format!("{prefix}{head}"), &inner[start..k], out);
                            start = k + 1;
                        }
                        _ => {}
                    }
                }
                if start < inner.len() {
                    go(&format!("{prefix}{head}"), &inner[start..], out);
                }
            }
        }
    }
    let mut out = Vec::new();
    go("", &tree, &mut out);
    out
}

/// The paths to other modules of the crate that `code` mentions, as written.
fn referenced_paths(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(k) = rest.find("use ") {
        let before = rest[..k].chars().next_back();
        let after = &rest[k + 4..];
        rest = after;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let Some(end) = after.find(';') else { break };
        let tree = &after[..end];
        if tree.trim_start().starts_with("crate::") || tree.trim_start().starts_with("super::") || tree.trim_start().starts_with("self::") {
            paths.extend(expand_use(tree));
        }
    }
    // Inline paths: `crate::a::b(…)`, `super::c::D`.
    let bytes = code.as_bytes();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(k) = code[from..].find(start) {
            let at = from + k;
            from = at + start.len();
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_' || bytes[at - 1] == b':') {
                continue;
            }
            let len = code[at..].find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(code.len() - at);
            paths.push(code[at..at + len].trim_end_matches(':').to_string());
        }
    }
    paths
}

/// The file of the module a path names (the longest prefix of the path that is a module).
fn resolve(from: &str, path: &str, files: &BTreeSet<String>) -> Option<String> {
    let mut segments: Vec<String> = path.split("::").filter(|s| !s.is_empty()).map(str::to_string).collect();
    let mut module: Vec<String> = match segments.first().map(String::as_str) {
        Some("crate") => {
            segments.remove(0);
            Vec::new()
        }
        Some("super" | "self") => {
            // `super` is the parent of the file's module; `self` the module itself.
            let mut m = module_of(from);
            while let Some(s) = segments.first().cloned() {
                match s.as_str() {
                    "super" => {
                        m.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                segments.remove(0);
            }
            m
        }
        _ => return None,
    };
    let file_of = |m: &[String]| -> Option<String> {
        if m.is_empty() {
            return Some("src/lib.rs".to_string());
        }
        let base = format!("src/{}", m.join("/"));
        [format!("{base}.rs"), format!("{base}/mod.rs")].into_iter().find(|f| files.contains(f))
    };
    let mut best = file_of(&module);
    for s in segments {
        module.push(s);
        match file_of(&module) {
            Some(f) => best = Some(f),
            None => break,
        }
    }
    best
}

/// Every import edge of the crate's non-test code: (from file, to file, the path written).
fn edges() -> Vec<(String, String, String)> {
    let files: BTreeSet<String> = source_files().into_iter().collect();
    let mut out = Vec::new();
    for f in &files {
        let code = code_of(&std::fs::read_to_string(root().join(f)).unwrap());
        for path in referenced_paths(&code) {
            if let Some(to) = resolve(f, &path, &files) {
                if &to != f {
                    out.push((f.clone(), to, path));
                }
            }
        }
    }
    out.sort();
    out.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    out
}

#[test]
fn no_import_runs_back_up_the_pipeline() {
    let all = edges();
    let mut up = Vec::new();
    for (from, to, path) in &all {
        let ((lf, sf), (lt, st)) = (stage(from), stage(to));
        // The crate root declares the modules (and re-exports a few); everything may name it.
        if to == "src/lib.rs" && path.starts_with("crate::") && from != "src/lib.rs" {
            let bare = path.trim_start_matches("crate::");
            assert!(!bare.is_empty(), "{from} names the crate root");
            continue;
        }
        let same_edge_tool = sf == st;
        let edges_lean_on_each_other = sf.starts_with("edge:") && st.starts_with("edge:") && !same_edge_tool;
        if (lt > lf && !same_edge_tool) || edges_lean_on_each_other {
            up.push(format!("{from} ({sf}) -> {to} ({st}) via `{path}`"));
        }
    }
    println!("architecture: {} import edges between files, {} run back up or across the edge tools", all.len(), up.len());
    assert!(up.is_empty(), "imports that run back up the pipeline:\n{}", up.join("\n"));
}

/// Files that import each other in a circle (a folder's `mod.rs` is its face: its children may
/// use what it defines, so it takes no part in circles).
#[test]
fn no_files_import_each_other_in_a_circle() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to, _) in edges() {
        if !from.ends_with("mod.rs") && !to.ends_with("mod.rs") && !from.ends_with("lib.rs") && !to.ends_with("lib.rs") {
            graph.entry(from).or_default().insert(to);
        }
    }
    // Tarjan's strongly connected components.
    struct Tarjan<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        circles: Vec<Vec<String>>,
    }
    impl<'g> Tarjan<'g> {
        fn visit(&mut self, v: &'g str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if self.on_stack.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.circles.push(component);
                }
            }
        }
    }
    let mut t = Tarjan {
        graph: &graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        circles: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    println!("architecture: {} files import each other in {} circle(s)", t.circles.iter().map(Vec::len).sum::<usize>(), t.circles.len());
    assert!(t.circles.is_empty(), "files that import each other in a circle: {:#?}", t.circles);
}

/// The parser of the test itself: it must see the imports it is meant to judge.
#[test]
fn the_edge_reader_sees_use_trees_inline_paths_and_super() {
    let code = code_of(
        "use crate::exec::{search::{Budget, Candidate}, trace::Trace};\nuse super::verdict::Outcome;\n// crate::cli::x in a comment\nfn f() { let s = \"crate::hw\"; crate::program::naming::observables(p); }\n#[cfg(test)]\nmod tests { use crate::hw::codegen; }\n",
    );
    let paths = referenced_paths(&code);
    for want in
        ["crate::exec::search::Budget", "crate::exec::trace::Trace", "super::verdict::Outcome", "crate::program::naming::observables"]
    {
        assert!(paths.iter().any(|p| p == want), "{want} not in {paths:?}");
    }
    assert!(!paths.iter().any(|p| p.contains("hw") || p.contains("cli")), "{paths:?}");
    let files: BTreeSet<String> = source_files().into_iter().collect();
    assert_eq!(resolve("src/decide/liveness.rs", "super::verdict::Outcome", &files).as_deref(), Some("src/decide/verdict.rs"));
    assert_eq!(resolve("src/decide/mod.rs", "self::driver::RunError", &files).as_deref(), Some("src/decide/driver.rs"));
    assert_eq!(resolve("src/cli/options.rs", "crate::config::Limits", &files).as_deref(), Some("src/config/mod.rs"));
    assert!(Path::new(&root().join("src/program/naming.rs")).is_file());
}
