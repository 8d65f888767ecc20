//! Kernel parameters as the program sees them. A pointer parameter (`.u64`/`.b64`/`.s64`)
//! becomes a fresh global buffer (zero-filled, of a size given or by default) whose address is
//! the parameter's value; another scalar takes the value `--param NAME=VALUE` gives; an
//! aggregate parameter (`.param .align 128 .b8 NAME[896]`: a CUTLASS `Params` struct, a CUB
//! functor, a `CUtensorMap`) takes the fields `--param NAME+OFF=VALUE` give. Every byte no
//! `--param` gives is **unknown** (`program::unknown`), never a rejection of the kernel: a check
//! that needs one known stops where it does, naming the bytes and the flag.

use super::module::Param;

/// The bytes of a pointer parameter's buffer when `--param` gives none: enough for the small
/// tiles of a check, and few words for the search (each word is a location).
pub const DEFAULT_BUFFER_BYTES: u64 = 64;

/// The most bytes one buffer may have (each 4-byte word is an entry of the program's tables;
/// only the words a run touches become events).
const MAX_BUFFER_BYTES: u64 = 4 << 20;

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
    match short_name(param) {
        short if short.len() < param.len() => short.to_string(),
        _ => format!("{param}_buf"),
    }
}

/// `param_N` for nvcc's `..._param_N`, else the name itself: the name a flag may give it.
pub fn short_name(param: &str) -> &str {
    match param.rfind("_param_") {
        Some(i) if param[i + 7..].bytes().all(|b| b.is_ascii_digit()) && i + 7 < param.len() => &param[i + 1..],
        _ => param,
    }
}

/// One `--param`: the parameter it names, the byte offset of a field (`NAME+OFF`), the value.
struct Given<'a> {
    param: usize,
    offset: Option<u64>,
    value: &'a str,
}

/// Bind every parameter; `given` are the `--param NAME[+OFF]=VALUE` pairs (NAME the parameter's
/// name or its buffer name). A name that is no parameter, or a parameter or field given twice,
/// is an error.
pub fn bind(params: &[Param], given: &[(String, String)]) -> Result<Vec<Binding>, String> {
    // Indexed once: a kernel may have thousands of parameters and flags.
    let mut by_name: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (k, p) in params.iter().enumerate().rev() {
        by_name.insert(buffer_name(&p.name), k);
    }
    for (k, p) in params.iter().enumerate().rev() {
        by_name.insert(p.name.clone(), k);
    }
    let mut seen: std::collections::HashSet<(usize, Option<u64>)> = std::collections::HashSet::new();
    let mut parsed: Vec<Given> = Vec::new();
    for (name, value) in given {
        let (base, offset) = match name.rsplit_once('+') {
            Some((b, o)) => {
                let off = parse_int(o)
                    .and_then(|o| u64::try_from(o).ok())
                    .ok_or_else(|| format!("--param {name}: expected NAME+OFFSET with a byte offset, found `+{o}`"))?;
                (b.trim(), Some(off))
            }
            None => (name.as_str(), None),
        };
        let Some(&param) = by_name.get(base) else {
            let names: Vec<String> = params.iter().map(|p| format!("{} ({})", p.name, buffer_name(&p.name))).collect();
            return Err(format!("--param {name}: the kernel has no such parameter; its parameters: {}", names.join(", ")));
        };
        if !seen.insert((param, offset)) {
            return Err(format!("--param {name} is given twice"));
        }
        parsed.push(Given { param, offset, value });
    }
    let mut of_param: Vec<Vec<&Given>> = vec![Vec::new(); params.len()];
    for g in &parsed {
        of_param[g.param].push(g);
    }
    params
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let mine = &of_param[k];
            if p.count > 1 || mine.iter().any(|g| g.offset.is_some()) {
                bind_aggregate(p, mine)
            } else {
                bind_scalar(p, mine.first().map(|g| g.value))
            }
        })
        .collect()
}

/// A buffer named `buf` of `bytes` bytes (with `words` as its first words), and its
/// description.
fn buffer(flag: &str, buf: &str, words: &[i64], bytes: u64) -> Result<String, String> {
    if bytes == 0 || bytes > MAX_BUFFER_BYTES || !bytes.is_multiple_of(4) {
        return Err(format!("--param {flag}: a buffer has a multiple of 4 bytes, from 4 to {MAX_BUFFER_BYTES}, found {bytes}"));
    }
    let init = if words.is_empty() {
        String::new()
    } else {
        format!(" = {{{}}}", words.iter().map(i64::to_string).collect::<Vec<_>>().join(", "))
    };
    Ok(format!(".global .align 128 .b32 {buf}[{}]{init};", bytes / 4))
}

fn is_pointer_sized(ty: &str) -> bool {
    matches!(ty, "u64" | "b64" | "s64")
}

fn bind_scalar(p: &Param, value: Option<&str>) -> Result<Binding, String> {
    let pointer_sized = is_pointer_sized(&p.ty);
    let buf = buffer_name(&p.name);
    let pointer = |words: Vec<i64>, bytes: u64, how: &str| -> Result<Binding, String> {
        if !pointer_sized {
            return Err(format!("--param {}: a buffer's address needs a 64-bit parameter, not .{}", p.name, p.ty));
        }
        Ok(Binding {
            init: vec![buffer(&p.name, &buf, &words, bytes)?, format!(".param .{} {} = &{buf};", p.ty, p.name)],
            description: format!("{} = &{buf}: a fresh global buffer of {bytes} bytes ({how})", p.name),
        })
    };
    match value {
        None if pointer_sized => {
            pointer(Vec::new(), DEFAULT_BUFFER_BYTES, "zero-filled; the default size: --param NAME=buffer:BYTES sets it")
        }
        None => Ok(Binding {
            init: vec![format!(".param .{} {};", p.ty, p.name)],
            description: format!("{} (.{}): unknown (no --param {}=VALUE gives it)", p.name, p.ty, buffer_name(&p.name)),
        }),
        Some(v) => {
            if let Some(bytes) = v.strip_prefix("buffer:") {
                let bytes =
                    parse_int(bytes).filter(|b| *b > 0).ok_or_else(|| format!("--param {}: expected buffer:BYTES, found `{v}`", p.name))?;
                return pointer(Vec::new(), bytes as u64, "zero-filled, --param");
            }
            if let Some(list) = v.strip_prefix('{').and_then(|l| l.strip_suffix('}')) {
                let words = words(&p.name, v, list)?;
                let bytes = 4 * words.len() as u64;
                return pointer(words, bytes, "its words from --param");
            }
            let n = scalar_value(&p.ty, v).ok_or_else(|| {
                format!("--param {}: expected a number (a float for .f32/.f64), buffer:BYTES or {{w0,w1,...}}, found `{v}`", p.name)
            })?;
            Ok(Binding { init: vec![format!(".param .{} {} = {n};", p.ty, p.name)], description: format!("{} = {v} (--param)", p.name) })
        }
    }
}

/// An aggregate parameter (or a scalar given by fields): its bytes unknown but for the fields.
fn bind_aggregate(p: &Param, given: &[&Given]) -> Result<Binding, String> {
    let size = p.count * element_bytes(&p.ty);
    let align = p.align.unwrap_or(element_bytes(&p.ty));
    let short = buffer_name(&p.name);
    let mut init = vec![format!(".param .align {align} .b8 {}[{size}];", p.name)];
    let mut fields = Vec::new();
    for g in given {
        let flag = match g.offset {
            Some(o) => format!("{short}+{o}"),
            None => short.clone(),
        };
        let Some(off) = g.offset else {
            return Err(format!(
                "--param {flag}: `{}` is an aggregate parameter of {size} bytes: give its fields by byte offset, --param {short}+OFFSET=VALUE",
                p.name
            ));
        };
        let v = g.value;
        let field = |ty: &str, width: u64, value: String| -> Result<String, String> {
            if off + width > size {
                return Err(format!("--param {flag}: a {width}-byte field at byte {off} is outside the {size} bytes of the parameter"));
            }
            Ok(format!(".param .{ty} {}+{off} = {value};", p.name))
        };
        if let Some(bytes) = v.strip_prefix("buffer:") {
            let bytes = parse_int(bytes).filter(|b| *b > 0).ok_or_else(|| format!("--param {flag}: expected buffer:BYTES, found `{v}`"))?;
            let buf = format!("{short}_{off}");
            init.push(buffer(&flag, &buf, &[], bytes as u64)?);
            init.push(field("u64", 8, format!("&{buf}"))?);
            fields.push(format!("+{off} = &{buf} (a fresh global buffer of {bytes} bytes)"));
        } else if let Some(list) = v.strip_prefix('{').and_then(|l| l.strip_suffix('}')) {
            let words = words(&flag, v, list)?;
            for (k, w) in words.iter().enumerate() {
                let at = off + 4 * k as u64;
                if at + 4 > size {
                    return Err(format!(
                        "--param {flag}: {} words from byte {off} run past the {size} bytes of the parameter",
                        words.len()
                    ));
                }
                init.push(format!(".param .u32 {}+{at} = {w};", p.name));
            }
            fields.push(format!("+{off} = {v}"));
        } else {
            let (ty, text) = match v.split_once(':') {
                Some((t, n)) => (t, n),
                None => ("u32", v),
            };
            let width = match ty {
                "u8" | "s8" | "b8" => 1,
                "u16" | "s16" | "b16" | "f16" => 2,
                "u32" | "s32" | "b32" | "f32" => 4,
                "u64" | "s64" | "b64" | "f64" => 8,
                _ => {
                    return Err(format!(
                        "--param {flag}: expected a field type (u8, u16, u32, u64, s32, s64, f32, f64) before `:`, found `{ty}`"
                    ))
                }
            };
            let n = scalar_value(ty, text).ok_or_else(|| format!("--param {flag}: expected a {ty} value, found `{text}`"))?;
            init.push(field(ty, width, n.to_string())?);
            fields.push(format!("+{off} = {v}"));
        }
    }
    let known =
        if fields.is_empty() { "every byte unknown".to_string() } else { format!("{}; every other byte unknown", fields.join(", ")) };
    Ok(Binding {
        init,
        description: format!("{short}: {size} bytes (.align {align}): {known} (--param {short}+OFFSET=VALUE gives a field)"),
    })
}

/// The bytes of one element of a parameter's type (`b8`: 1).
fn element_bytes(ty: &str) -> u64 {
    crate::program::Ty::parse(ty).map_or(1, |t| u64::from(t.bits / 8).max(1))
}

/// `{1,2,3}`: 32-bit words.
fn words(flag: &str, v: &str, list: &str) -> Result<Vec<i64>, String> {
    list.split(',')
        .map(|w| parse_int(w.trim()))
        .collect::<Option<_>>()
        .ok_or_else(|| format!("--param {flag}: expected a list of 32-bit words `{{1,2,3}}`, found `{v}`"))
}

/// A value of a parameter or field type: an integer, or for a float type a decimal float (its
/// bits).
fn scalar_value(ty: &str, v: &str) -> Option<i64> {
    if let Some(n) = parse_int(v) {
        return Some(n);
    }
    let f: f64 = v.trim().parse().ok()?;
    match ty {
        "f32" => Some(i64::from((f as f32).to_bits())),
        "f64" => Some(f.to_bits() as i64),
        _ => None,
    }
}

/// A decimal (possibly negative) or `0x` hexadecimal integer.
fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok().map(|v| v as i64);
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(name: &str, ty: &str) -> Param {
        Param { name: name.into(), ty: ty.into(), count: 1, align: None, span: Default::default() }
    }

    #[test]
    fn pointers_become_buffers_scalars_take_values_or_are_unknown() {
        let ps = [param("_Z1kPi_param_0", "u64"), param("_Z1kPi_param_1", "u32"), param("_Z1kPi_param_2", "f32")];
        let b = bind(&ps, &[]).unwrap();
        assert_eq!(b[1].init, vec![".param .u32 _Z1kPi_param_1;"]);
        assert!(b[1].description.contains("unknown"), "{}", b[1].description);
        let b =
            bind(&ps, &[("param_1".into(), "7".into()), ("param_0".into(), "{1,2}".into()), ("param_2".into(), "0.125".into())]).unwrap();
        assert_eq!(b[0].init, vec![".global .align 128 .b32 param_0[2] = {1, 2};", ".param .u64 _Z1kPi_param_0 = &param_0;"]);
        assert_eq!(b[1].init, vec![".param .u32 _Z1kPi_param_1 = 7;"]);
        assert_eq!(b[2].init, vec![format!(".param .f32 _Z1kPi_param_2 = {};", 0.125f32.to_bits())]);
    }

    #[test]
    fn aggregates_take_fields_by_offset() {
        let agg = Param { name: "k_param_0".into(), ty: "b8".into(), count: 64, align: Some(8), span: Default::default() };
        let given = [
            ("param_0+0".to_string(), "128".to_string()),
            ("param_0+8".to_string(), "buffer:256".to_string()),
            ("param_0+16".to_string(), "f32:1.5".to_string()),
            ("param_0+24".to_string(), "u64:0x100000000".to_string()),
        ];
        let b = bind(std::slice::from_ref(&agg), &given).unwrap();
        assert_eq!(
            b[0].init,
            vec![
                ".param .align 8 .b8 k_param_0[64];",
                ".param .u32 k_param_0+0 = 128;",
                ".global .align 128 .b32 param_0_8[64];",
                ".param .u64 k_param_0+8 = &param_0_8;",
                &format!(".param .f32 k_param_0+16 = {};", 1.5f32.to_bits()),
                ".param .u64 k_param_0+24 = 4294967296;",
            ]
        );
        assert!(b[0].description.contains("every other byte unknown"), "{}", b[0].description);
        let e = bind(std::slice::from_ref(&agg), &[("param_0".into(), "1".into())]).unwrap_err();
        assert!(e.contains("give its fields by byte offset"), "{e}");
        let e = bind(std::slice::from_ref(&agg), &[("param_0+62".into(), "1".into())]).unwrap_err();
        assert!(e.contains("outside the 64 bytes"), "{e}");
        let e = bind(std::slice::from_ref(&agg), &[("param_0+0".into(), "1".into()), ("param_0+0".into(), "2".into())]).unwrap_err();
        assert!(e.contains("given twice"), "{e}");
    }

    #[test]
    fn an_unknown_parameter_is_named() {
        let e = bind(&[param("p", "u64")], &[("q".into(), "1".into())]).unwrap_err();
        assert!(e.contains("no such parameter") && e.contains("p (p_buf)"), "{e}");
    }
}
