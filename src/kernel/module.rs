//! A PTX module as nvcc (`nvcc -ptx`, `-keep`) or `cuobjdump -ptx` writes it, read far enough to
//! take one kernel out of it: the module directives, the module-scope variables, the `.entry`
//! and `.func` definitions (their parameters, performance-tuning attributes and the byte range
//! of their bodies), the `.file` table of `-lineinfo` and the `.section` blocks of debug data
//! (skipped). The bodies themselves are read by the litmus front end, unchanged.

use crate::diag::{Diagnostic, Span};

/// One token of module scope: its text and where it is.
#[derive(Clone, Debug)]
struct Token<'a> {
    text: &'a str,
    span: Span,
}

/// The tokens of `text` at module granularity: words (directives, names, numbers, with their
/// dots, `%`, `$` and `::`), quoted strings, and single punctuation characters; comments skipped.
fn tokens(text: &str) -> Result<Vec<Token<'_>>, Diagnostic> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if text[i..].starts_with("//") {
            i = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
        } else if text[i..].starts_with("/*") {
            let end = text[i + 2..].find("*/").ok_or_else(|| Diagnostic::error(Span::new(i, i + 2), "a `/*` comment that never ends"))?;
            i += end + 4;
        } else if c == b'"' {
            // A PTX string ends on its line.
            let end = text[i + 1..]
                .find(['"', '\n'])
                .filter(|&n| bytes[i + 1 + n] == b'"')
                .ok_or_else(|| Diagnostic::error(Span::new(i, i + 1), "a string that never ends (a `\"` is missing on its line)"))?;
            out.push(Token { text: &text[i..i + end + 2], span: Span::new(i, i + end + 2) });
            i += end + 2;
        } else if c.is_ascii_alphanumeric() || b"._%$:".contains(&c) {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || b"._%$:".contains(&bytes[i])) {
                i += 1;
            }
            out.push(Token { text: &text[start..i], span: Span::new(start, i) });
        } else {
            // Multi-byte characters become one token, so slicing stays on char boundaries.
            let len = text[i..].chars().next().map_or(1, char::len_utf8);
            out.push(Token { text: &text[i..i + len], span: Span::new(i, i + len) });
            i += len;
        }
    }
    Ok(out)
}

/// A kernel parameter (`.param .u64 NAME`, `.param .align 64 .b8 NAME[128]`).
#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    /// The type without its dot (`u64`, `b8`).
    pub ty: String,
    /// The element count of an array parameter (`[128]`), 1 for a scalar.
    pub count: u64,
    /// `.align N`, if written.
    pub align: Option<u64>,
    pub span: Span,
}

/// A `.entry` or `.func` definition or declaration.
#[derive(Clone, Debug)]
pub struct Function {
    pub name: String,
    pub is_entry: bool,
    pub params: Vec<Param>,
    /// `.reqntid X[, Y, Z]`, `.maxntid ...`, `.reqnctapercluster ...` as written.
    pub reqntid: Option<Vec<u64>>,
    pub maxntid: Option<Vec<u64>>,
    pub reqnctapercluster: Option<Vec<u64>>,
    pub explicit_cluster: bool,
    /// The byte range of the body, from its `{` to its `}` inclusive; None for a prototype.
    pub body: Option<Span>,
    pub name_span: Span,
}

/// A module-scope variable (`.global`, `.shared`, `.const`), with its declaration's text.
#[derive(Clone, Debug)]
pub struct ModuleVar {
    pub space: String,
    pub name: String,
    pub external: bool,
    /// The declaration without its linkage words, up to and including its `;`.
    pub text: String,
    pub span: Span,
}

/// What a kernel check needs of a module.
#[derive(Clone, Debug, Default)]
pub struct Module {
    pub functions: Vec<Function>,
    pub vars: Vec<ModuleVar>,
    /// `.file N "path"`: the source files `.loc` lines refer to.
    pub files: Vec<(u64, String)>,
}

impl Module {
    pub fn entries(&self) -> impl Iterator<Item = &Function> {
        self.functions.iter().filter(|f| f.is_entry && f.body.is_some())
    }
}

/// Module-scope directives that carry nothing a kernel check needs; each ends at its line's end
/// or at the next directive on its line (`.version 8.0 .target sm_90 .address_size 64`).
const SKIPPED_DIRECTIVES: &[&str] = &[".version", ".target", ".address_size", ".pragma"];

/// Read a PTX module.
pub fn parse(text: &str) -> Result<Module, Diagnostic> {
    let toks = tokens(text)?;
    let mut module = Module::default();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        match t.text {
            d if SKIPPED_DIRECTIVES.contains(&d) => {
                let line_end = text[t.span.end..].find('\n').map_or(text.len(), |n| t.span.end + n);
                let directive = |s: &str| s.len() > 1 && s.starts_with('.') && s.as_bytes()[1].is_ascii_alphabetic();
                i += 1;
                while i < toks.len() && toks[i].span.start < line_end && !directive(toks[i].text) {
                    i += 1;
                }
            }
            ".file" => {
                let number = toks.get(i + 1).and_then(|n| n.text.parse::<u64>().ok());
                let path = toks.get(i + 2).filter(|p| p.text.starts_with('"'));
                let (Some(number), Some(path)) = (number, path) else {
                    return Err(Diagnostic::expected(t.span, "`.file N \"path\"`", "a malformed `.file` directive"));
                };
                module.files.push((number, path.text.trim_matches('"').to_string()));
                i += 3;
                // `.file 1 "x.cu", 1700000000, 1234`: a timestamp and a size may follow.
                while toks.get(i).is_some_and(|c| c.text == ",") {
                    i += 2;
                }
            }
            ".section" => {
                let open = (i..toks.len())
                    .find(|&j| toks[j].text == "{")
                    .ok_or_else(|| Diagnostic::error(t.span, "a `.section` without its `{ ... }`"))?;
                i = matching_close(&toks, open)? + 1;
            }
            _ => i = item(text, &toks, i, &mut module)?,
        }
    }
    Ok(module)
}

/// The index of the `}` that closes the `{` at `open`.
fn matching_close(toks: &[Token<'_>], open: usize) -> Result<usize, Diagnostic> {
    let mut depth = 0usize;
    for (j, t) in toks.iter().enumerate().skip(open) {
        match t.text {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if depth == 0 {
                    return Ok(j);
                }
            }
            _ => {}
        }
    }
    Err(Diagnostic::error(toks[open].span, "this `{` is never closed"))
}

/// A function or a variable of module scope, starting with its linkage words; returns the
/// index after it.
fn item(text: &str, toks: &[Token<'_>], mut i: usize, module: &mut Module) -> Result<usize, Diagnostic> {
    let mut external = false;
    while let Some(t) = toks.get(i).filter(|t| matches!(t.text, ".visible" | ".extern" | ".weak" | ".common")) {
        external |= t.text == ".extern";
        i += 1;
    }
    let Some(t) = toks.get(i) else {
        return Err(Diagnostic::error(toks[i - 1].span, "a linkage directive with nothing after it"));
    };
    match t.text {
        ".entry" | ".func" => function(toks, i, module),
        ".global" | ".shared" | ".const" => {
            let end = (i..toks.len()).find(|&j| toks[j].text == ";").ok_or_else(|| Diagnostic::error(t.span, "a declaration without its `;`"))?;
            // The name: the last word before `[`, `=` or `;`.
            let stop = (i..end).find(|&j| matches!(toks[j].text, "[" | "=")).unwrap_or(end);
            let name = toks[i + 1..stop].iter().rev().find(|w| !w.text.starts_with('.')).map(|w| w.text.to_string());
            let Some(name) = name else {
                return Err(Diagnostic::expected(t.span, "a variable name in this declaration", "none"));
            };
            let span = t.span.to(toks[end].span);
            module.vars.push(ModuleVar { space: t.text.to_string(), name, external, text: text[span.range()].to_string(), span });
            Ok(end + 1)
        }
        _ => Err(Diagnostic::expected(
            t.span,
            "a module-scope directive (`.version`, `.target`, `.address_size`, `.file`, `.global`, `.shared`, `.const`, `.entry`, `.func`, `.section`)",
            format!("`{}`", t.text),
        )),
    }
}

/// `.entry NAME (params) attributes { body }` or `.func (ret) NAME (params) { body }` (or `;`).
fn function(toks: &[Token<'_>], mut i: usize, module: &mut Module) -> Result<usize, Diagnostic> {
    let is_entry = toks[i].text == ".entry";
    i += 1;
    if !is_entry && toks.get(i).is_some_and(|t| t.text == "(") {
        // The return parameters of a `.func`.
        i = close_paren(toks, i)? + 1;
    }
    let name_tok = toks.get(i).ok_or_else(|| Diagnostic::error(toks[i - 1].span, "a function without a name"))?;
    let mut f = Function {
        name: name_tok.text.to_string(),
        is_entry,
        params: Vec::new(),
        reqntid: None,
        maxntid: None,
        reqnctapercluster: None,
        explicit_cluster: false,
        body: None,
        name_span: name_tok.span,
    };
    i += 1;
    if toks.get(i).is_some_and(|t| t.text == "(") {
        let close = close_paren(toks, i)?;
        f.params = params(&toks[i + 1..close])?;
        i = close + 1;
    }
    loop {
        let Some(t) = toks.get(i) else {
            return Err(Diagnostic::error(f.name_span, "this function has neither a body nor a `;`"));
        };
        match t.text {
            ";" => return Ok(push(module, f, i + 1)),
            "{" => {
                let close = matching_close(toks, i)?;
                f.body = Some(t.span.to(toks[close].span));
                return Ok(push(module, f, close + 1));
            }
            ".explicitcluster" | ".noreturn" | ".blocksareclusters" => {
                f.explicit_cluster |= t.text == ".explicitcluster";
                i += 1;
            }
            ".reqntid" | ".maxntid" | ".reqnctapercluster" | ".maxnctapersm" | ".minnctapersm" | ".maxclusterrank" | ".maxnreg"
            | ".pragma" => {
                let mut values = Vec::new();
                let mut j = i + 1;
                while let Some(v) = toks.get(j).and_then(|v| v.text.parse::<u64>().ok()) {
                    values.push(v);
                    j += if toks.get(j + 1).is_some_and(|c| c.text == ",") { 2 } else { 1 };
                }
                match t.text {
                    ".reqntid" => f.reqntid = Some(values),
                    ".maxntid" => f.maxntid = Some(values),
                    ".reqnctapercluster" => f.reqnctapercluster = Some(values),
                    ".pragma" => j += 2, // `.pragma "nounroll";`
                    _ => {}
                }
                i = j;
            }
            _ => {
                return Err(Diagnostic::expected(
                    t.span,
                    "a kernel attribute (`.reqntid`, `.maxntid`, `.reqnctapercluster`, ...) or the body's `{`",
                    format!("`{}`", t.text),
                ))
            }
        }
    }
}

fn push(module: &mut Module, f: Function, next: usize) -> usize {
    module.functions.push(f);
    next
}

fn close_paren(toks: &[Token<'_>], open: usize) -> Result<usize, Diagnostic> {
    (open..toks.len()).find(|&j| toks[j].text == ")").ok_or_else(|| Diagnostic::error(toks[open].span, "this `(` is never closed"))
}

/// The parameters between the parentheses, separated by commas.
fn params(toks: &[Token<'_>]) -> Result<Vec<Param>, Diagnostic> {
    let mut out = Vec::new();
    for group in toks.split(|t| t.text == ",") {
        let Some(first) = group.first() else { continue };
        let ty = group.iter().find(|t| {
            t.text.starts_with('.') && !matches!(t.text, ".param" | ".align" | ".ptr" | ".global" | ".shared" | ".const" | ".local")
        });
        let bracket = group.iter().position(|t| t.text == "[");
        let name =
            group[..bracket.unwrap_or(group.len())].iter().rev().find(|t| !t.text.starts_with('.') && t.text.parse::<u64>().is_err());
        let (Some(ty), Some(name)) = (ty, name) else {
            return Err(Diagnostic::expected(first.span, "a parameter `.param .TYPE NAME`", "something else"));
        };
        let count = bracket.and_then(|b| group.get(b + 1)).and_then(|n| n.text.parse::<u64>().ok()).unwrap_or(1);
        let align = group.iter().position(|t| t.text == ".align").and_then(|a| group.get(a + 1)).and_then(|n| n.text.parse::<u64>().ok());
        out.push(Param {
            name: name.text.to_string(),
            ty: ty.text[1..].to_string(),
            count,
            align,
            span: first.span.to(group[group.len() - 1].span),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = r#"//
// Generated by NVIDIA NVVM Compiler
.version 9.5
.target sm_90a
.address_size 64
.global .align 4 .b8 counter[16];
.extern .func (.param .b32 func_retval0) helper
(
	.param .b64 helper_param_0
)
;
.visible .entry k(
	.param .u64 k_param_0,
	.param .u32 k_param_1,
	.param .align 64 .b8 k_param_2[128]
)
.reqntid 64, 1, 1
.explicitcluster
.reqnctapercluster 2, 1, 1
{
	{ .reg .pred P; }
	ret;
}
	.file	1 "/src/k.cu"
	.section	.debug_str
	{
$L__info_string0:
.b8 95,0
	}
"#;

    #[test]
    fn reads_entries_attributes_params_files_and_skips_sections() {
        let m = parse(MODULE).unwrap();
        let entries: Vec<_> = m.entries().collect();
        assert_eq!(entries.len(), 1);
        let k = entries[0];
        assert_eq!(k.name, "k");
        assert_eq!(
            k.params.iter().map(|p| (p.name.as_str(), p.ty.as_str(), p.count)).collect::<Vec<_>>(),
            vec![("k_param_0", "u64", 1), ("k_param_1", "u32", 1), ("k_param_2", "b8", 128)]
        );
        assert_eq!(k.reqntid, Some(vec![64, 1, 1]));
        assert_eq!(k.reqnctapercluster, Some(vec![2, 1, 1]));
        assert!(k.explicit_cluster);
        let body = &MODULE[k.body.unwrap().range()];
        assert!(body.starts_with('{') && body.ends_with('}') && body.contains("ret;"));
        assert_eq!(m.files, vec![(1, "/src/k.cu".to_string())]);
        assert_eq!(m.vars.len(), 1);
        assert_eq!(m.vars[0].name, "counter");
        assert!(m.functions.iter().any(|f| f.name == "helper" && !f.is_entry && f.body.is_none()));
    }

    #[test]
    fn reads_pointer_qualifiers_initialised_globals_and_more_attributes() {
        let m = parse(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .global .align 4 .u32 g = 5;\n\
             .visible .entry k(\n\t.param .u64 .ptr .global .align 16 k_param_0\n)\n.maxnreg 128\n.minnctapersm 1\n{\n\tret;\n}\n",
        )
        .unwrap();
        let k = m.entries().next().unwrap();
        assert_eq!((k.params[0].name.as_str(), k.params[0].ty.as_str()), ("k_param_0", "u64"));
        assert_eq!(m.vars[0].text, ".global .align 4 .u32 g = 5;");
    }

    #[test]
    fn an_unknown_directive_is_an_error_at_its_place() {
        let e = parse(".version 9.5\n.bogus x;\n").unwrap_err();
        assert!(e.message.contains("module-scope directive"), "{}", e.message);
    }
}
