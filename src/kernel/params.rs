//! Kernel parameters as the program sees them: a pointer parameter (`.u64`/`.b64`/`.s64`) becomes
//! a fresh global buffer (zero-filled, of a size given or by default) whose address is the
//! parameter's value; any other parameter takes the value `--param NAME=VALUE` gives, and without
//! one is an error naming it. Module-scope `.global` variables keep their declarations.

use super::module::Param;

/// The bytes of a pointer parameter's buffer when `--param` gives none: enough for the small
/// tiles of a check, and few words for the search (each word is a location).
pub const DEFAULT_BUFFER_BYTES: u64 = 64;

/// The most bytes one buffer may have (each 4-byte word is a location of the program).
const MAX_BUFFER_BYTES: u64 = 4096;

/// What a parameter is bound to, for the init block and the report.
#[derive(Clone, Debug)]
pub struct Binding {
    /// The init items (`.global ... buf[16];`, `.param .u64 NAME = &buf;`).
    pub init: Vec<String>,
    /// `param_0: a zero-filled global buffer of 64 bytes (the default; ...)`.
    pub description: String,
}

/// The name of the buffer of a pointer parameter: `param_N` for nvcc's `..._param_N`, else the
/// parameter's name with `_buf`.
pub fn buffer_name(param: &str) -> String {
    match param.rfind("_param_") {
        Some(i) if param[i + 7..].bytes().all(|b| b.is_ascii_digit()) && i + 7 < param.len() => param[i + 1..].to_string(),
        _ => format!("{param}_buf"),
    }
}

/// Bind every parameter; `given` are the `--param NAME=VALUE` pairs (NAME the parameter's name
/// or its buffer name). A given name that is no parameter is an error.
pub fn bind(params: &[Param], given: &[(String, String)]) -> Result<Vec<Binding>, String> {
    for (name, _) in given {
        if !params.iter().any(|p| &p.name == name || buffer_name(&p.name) == *name) {
            let names: Vec<String> = params.iter().map(|p| format!("{} ({})", p.name, buffer_name(&p.name))).collect();
            return Err(format!("--param {name}: the kernel has no such parameter; its parameters: {}", names.join(", ")));
        }
    }
    params
        .iter()
        .map(|p| bind_one(p, given.iter().rev().find(|(n, _)| *n == p.name || *n == buffer_name(&p.name)).map(|(_, v)| v.as_str())))
        .collect()
}

fn bind_one(p: &Param, value: Option<&str>) -> Result<Binding, String> {
    let pointer_sized = matches!(p.ty.as_str(), "u64" | "b64" | "s64");
    if p.count != 1 {
        return Err(format!(
            "parameter {}: an array parameter (`.b8 [{}]`, e.g. a CUtensorMap passed by value) is not supported by ptxmm kernel yet",
            p.name, p.count
        ));
    }
    let buf = buffer_name(&p.name);
    let buffer = |words: Vec<i64>, bytes: u64, how: &str| -> Result<Binding, String> {
        if bytes == 0 || bytes > MAX_BUFFER_BYTES || !bytes.is_multiple_of(4) {
            return Err(format!("--param {}: a buffer has a multiple of 4 bytes, from 4 to {MAX_BUFFER_BYTES}, found {bytes}", p.name));
        }
        let init = if words.is_empty() {
            String::new()
        } else {
            format!(" = {{{}}}", words.iter().map(i64::to_string).collect::<Vec<_>>().join(", "))
        };
        Ok(Binding {
            init: vec![format!(".global .align 128 .b32 {buf}[{}]{init};", bytes / 4), format!(".param .{} {} = &{buf};", p.ty, p.name)],
            description: format!("{} = &{buf}: a fresh global buffer of {bytes} bytes ({how})", p.name),
        })
    };
    match value {
        None if pointer_sized => {
            buffer(Vec::new(), DEFAULT_BUFFER_BYTES, "zero-filled; the default size: --param NAME=buffer:BYTES sets it")
        }
        None => Err(format!("parameter {} (.{}) has no value: give it with --param {}=VALUE", p.name, p.ty, p.name)),
        Some(v) => {
            if let Some(bytes) = v.strip_prefix("buffer:") {
                let bytes =
                    parse_int(bytes).filter(|b| *b > 0).ok_or_else(|| format!("--param {}: expected buffer:BYTES, found `{v}`", p.name))?;
                if !pointer_sized {
                    return Err(format!("--param {}: a buffer's address needs a 64-bit parameter, not .{}", p.name, p.ty));
                }
                return buffer(Vec::new(), bytes as u64, "zero-filled, --param");
            }
            if let Some(list) = v.strip_prefix('{').and_then(|l| l.strip_suffix('}')) {
                let words: Vec<i64> = list
                    .split(',')
                    .map(|w| parse_int(w.trim()))
                    .collect::<Option<_>>()
                    .ok_or_else(|| format!("--param {}: expected a list of 32-bit words `{{1,2,3}}`, found `{v}`", p.name))?;
                if !pointer_sized {
                    return Err(format!("--param {}: a buffer's address needs a 64-bit parameter, not .{}", p.name, p.ty));
                }
                let bytes = 4 * words.len() as u64;
                return buffer(words, bytes, "its words from --param");
            }
            let n =
                parse_int(v).ok_or_else(|| format!("--param {}: expected a number, buffer:BYTES or {{w0,w1,...}}, found `{v}`", p.name))?;
            Ok(Binding { init: vec![format!(".param .{} {} = {n};", p.ty, p.name)], description: format!("{} = {n} (--param)", p.name) })
        }
    }
}

/// A decimal (possibly negative) or `0x` hexadecimal integer.
fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return i64::from_str_radix(h, 16).ok();
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(name: &str, ty: &str) -> Param {
        Param { name: name.into(), ty: ty.into(), count: 1, span: Default::default() }
    }

    #[test]
    fn pointers_become_buffers_and_scalars_need_values() {
        let ps = [param("_Z1kPi_param_0", "u64"), param("_Z1kPi_param_1", "u32")];
        let e = bind(&ps, &[]).unwrap_err();
        assert!(e.contains("_Z1kPi_param_1") && e.contains("--param"), "{e}");
        let b = bind(&ps, &[("param_1".into(), "7".into()), ("param_0".into(), "{1,2}".into())]).unwrap();
        assert_eq!(b[0].init, vec![".global .align 128 .b32 param_0[2] = {1, 2};", ".param .u64 _Z1kPi_param_0 = &param_0;"]);
        assert_eq!(b[1].init, vec![".param .u32 _Z1kPi_param_1 = 7;"]);
    }

    #[test]
    fn an_unknown_parameter_is_named() {
        let e = bind(&[param("p", "u64")], &[("q".into(), "1".into())]).unwrap_err();
        assert!(e.contains("no such parameter") && e.contains("p (p_buf)"), "{e}");
    }
}
