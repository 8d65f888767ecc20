//! A launch file (`ptxmm kernel --launch FILE.json`, `docs/ptxmm-launch.schema.json`): the launch
//! a kernel check models, written once (by a script, a test harness, a Triton integration) instead
//! of as flags. It is read here, in the library, so that every front end reads the same structure
//! into the same [`KernelOptions`]; the command line only reads the file and lets its flags win.
//!
//! A bad file is an error at its `FILE:line:col` (serde_json's position of the value), saying what
//! was expected and what was found.

use super::launch::parse_list;
use super::KernelOptions;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;

/// What a launch file sets; every key is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    /// Lets an editor find the schema; not used.
    #[serde(rename = "$schema")]
    #[allow(dead_code)]
    schema: Option<String>,
    entry: Option<String>,
    #[serde(default, deserialize_with = "shape")]
    block: Option<Vec<u64>>,
    #[serde(default, deserialize_with = "shape")]
    grid: Option<Vec<u64>>,
    #[serde(default, deserialize_with = "shape")]
    cluster: Option<Vec<u64>>,
    dynamic_smem: Option<u64>,
    #[serde(default, deserialize_with = "selection")]
    ctas: Option<Selection>,
    #[serde(default, deserialize_with = "selection")]
    warps: Option<Selection>,
    #[serde(default, deserialize_with = "selection")]
    lanes: Option<Selection>,
    #[serde(default, deserialize_with = "params")]
    params: Vec<(String, String)>,
    #[serde(default, deserialize_with = "tensor_maps")]
    tensor_maps: Vec<(String, String)>,
    assert: Option<String>,
}

/// `ctas`, `warps`, `lanes`: every one, or a list.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Selection {
    All,
    List(Vec<u64>),
}

/// A launch file read: the options it gives, as [`KernelOptions`], with what it left unset
/// kept apart so that the command line's flags can override what it sets and only that.
#[derive(Clone, Debug, Default)]
pub struct LaunchFile {
    pub options: KernelOptions,
}

/// Why a launch file cannot be read: where (1-based line and column; 0 where serde_json names
/// no place) and what was expected and found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchFileError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for LaunchFileError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.line {
            0 => write!(f, "{}: {}", self.file, self.message),
            _ => write!(f, "{}:{}:{}: {}", self.file, self.line, self.column, self.message),
        }
    }
}

/// Read a launch file's text; `name` is how errors name the file.
pub fn parse(name: &str, text: &str) -> Result<LaunchFile, LaunchFileError> {
    let raw: Raw = serde_json::from_str(text).map_err(|e| located(name, &e))?;
    let warps = raw.warps;
    let options = KernelOptions {
        entry: raw.entry,
        block: raw.block,
        grid: raw.grid,
        cluster: raw.cluster,
        ctas: match raw.ctas {
            Some(Selection::List(l)) => Some(l),
            Some(Selection::All) | None => None,
        },
        every_warp: warps == Some(Selection::All),
        warps: match warps {
            Some(Selection::List(l)) => Some(l),
            _ => None,
        },
        lanes: match raw.lanes {
            Some(Selection::All) => Some((0..32).collect()),
            Some(Selection::List(l)) => Some(l),
            None => None,
        },
        dynamic_smem: raw.dynamic_smem,
        params: raw.params,
        tensor_maps: raw.tensor_maps,
        assert: raw.assert,
    };
    Ok(LaunchFile { options })
}

impl LaunchFile {
    /// The options of the file with `flags` (the command line's) over them: a setting a flag
    /// gives replaces the file's; a `--param` or `--tensor-map` replaces the file's entry for the
    /// same parameter and offset (`param_0` and `_Z…_param_0` are one), and keeps the others.
    pub fn overridden_by(&self, flags: &KernelOptions) -> KernelOptions {
        let file = &self.options;
        let warps_given = flags.warps.is_some() || flags.every_warp;
        KernelOptions {
            entry: flags.entry.clone().or_else(|| file.entry.clone()),
            block: flags.block.clone().or_else(|| file.block.clone()),
            grid: flags.grid.clone().or_else(|| file.grid.clone()),
            cluster: flags.cluster.clone().or_else(|| file.cluster.clone()),
            ctas: flags.ctas.clone().or_else(|| file.ctas.clone()),
            warps: if warps_given { flags.warps.clone() } else { file.warps.clone() },
            every_warp: if warps_given { flags.every_warp } else { file.every_warp },
            lanes: flags.lanes.clone().or_else(|| file.lanes.clone()),
            dynamic_smem: flags.dynamic_smem.or(file.dynamic_smem),
            params: merged(&file.params, &flags.params),
            tensor_maps: merged(&file.tensor_maps, &flags.tensor_maps),
            assert: flags.assert.clone().or_else(|| file.assert.clone()),
        }
    }
}

/// The file's `NAME[+OFF]=VALUE` entries that no flag names, then the flags'.
fn merged(file: &[(String, String)], flags: &[(String, String)]) -> Vec<(String, String)> {
    let key = |name: &str| {
        let (base, off) = name.rsplit_once('+').map_or((name.trim(), None), |(b, o)| (b.trim(), Some(o.trim().to_string())));
        (super::params::short_name(base).to_string(), off)
    };
    let named: std::collections::HashSet<_> = flags.iter().map(|(n, _)| key(n)).collect();
    file.iter().filter(|(n, _)| !named.contains(&key(n))).chain(flags).cloned().collect()
}

/// `FILE:line:col: expected ..., found ...` from serde_json's error.
fn located(name: &str, e: &serde_json::Error) -> LaunchFileError {
    let text = e.to_string();
    // serde_json appends ` at line L column C`; the position leads instead.
    let message = text.rsplit_once(" at line ").map_or(text.as_str(), |(m, _)| m);
    let message = match message.split_once(", expected ") {
        Some((found, expected)) => {
            let found = found.trim_start_matches("invalid type: ").trim_start_matches("invalid value: ");
            let found = found.strip_prefix("unknown field ").map_or(found.to_string(), |f| format!("the key {f}"));
            format!("expected {expected}, found {found}")
        }
        None => message.to_string(),
    };
    LaunchFileError { file: name.to_string(), line: e.line(), column: e.column(), message }
}

const SHAPE: &str = "a shape: a positive integer, an array of 1 to 3 positive integers, or a string \"X,Y,Z\"";

fn shape<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u64>>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Vec<u64>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(SHAPE)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Vec<u64>, E> {
            checked(vec![v])
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Vec<u64>, E> {
            let parts: Option<Vec<u64>> = v.split([',', 'x']).map(|p| p.trim().parse().ok()).collect();
            parts.ok_or_else(|| E::invalid_value(de::Unexpected::Str(v), &self)).and_then(checked)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u64>, A::Error> {
            let mut out = Vec::new();
            while let Some(n) = seq.next_element::<u64>()? {
                out.push(n);
            }
            checked(out)
        }
    }
    fn checked<E: de::Error>(dims: Vec<u64>) -> Result<Vec<u64>, E> {
        if dims.is_empty() || dims.len() > 3 || dims.contains(&0) {
            let shown = dims.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
            return Err(E::invalid_value(de::Unexpected::Other(&format!("the shape `{shown}`")), &SHAPE));
        }
        Ok(dims)
    }
    d.deserialize_any(V).map(Some)
}

const SELECTION: &str = "\"all\", an array of indices, or a string list such as \"0,2-3\"";

fn selection<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Selection>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Selection;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(SELECTION)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Selection, E> {
            Ok(Selection::List(vec![v]))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Selection, E> {
            if v.trim() == "all" {
                return Ok(Selection::All);
            }
            parse_list("", v).map(Selection::List).map_err(|_| E::invalid_value(de::Unexpected::Str(v), &self))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Selection, A::Error> {
            let mut out = Vec::new();
            while let Some(n) = seq.next_element::<u64>()? {
                out.push(n);
            }
            if out.is_empty() {
                return Err(de::Error::invalid_length(0, &self));
            }
            Ok(Selection::List(out))
        }
    }
    d.deserialize_any(V).map(Some)
}

const PARAM_VALUE: &str =
    "a parameter value: a number, a string as --param takes it (\"buffer:256\", \"u64:5\", \"{1,2}\"), an array of 32-bit words, or an object of fields by byte offset";

/// One parameter's value, as the text `--param` takes; an object gives fields by offset.
enum ParamValue {
    One(String),
    Fields(Vec<(u64, String)>),
}

struct ValueVisitor {
    /// Inside an object of fields: a field is one value, not another object.
    field: bool,
}

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = ParamValue;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.field {
            f.write_str("a field value: a number, a string as --param takes it, or an array of 32-bit words")
        } else {
            f.write_str(PARAM_VALUE)
        }
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<ParamValue, E> {
        Ok(ParamValue::One(v.to_string()))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<ParamValue, E> {
        Ok(ParamValue::One(v.to_string()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<ParamValue, E> {
        // `0.125`: the bits of an .f32/.f64 parameter, as `--param NAME=0.125` gives them.
        Ok(ParamValue::One(format!("{v:?}")))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<ParamValue, E> {
        Ok(ParamValue::One(v.to_string()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ParamValue, A::Error> {
        let mut words = Vec::new();
        while let Some(w) = seq.next_element::<i64>()? {
            words.push(w.to_string());
        }
        if words.is_empty() {
            return Err(de::Error::invalid_length(0, &"an array of at least one 32-bit word"));
        }
        Ok(ParamValue::One(format!("{{{}}}", words.join(","))))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ParamValue, A::Error> {
        if self.field {
            return Err(de::Error::invalid_type(de::Unexpected::Map, &self));
        }
        let mut fields = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let offset = key
                .trim()
                .parse::<u64>()
                .map_err(|_| de::Error::invalid_value(de::Unexpected::Str(&key), &"a field's byte offset (a key such as \"8\")"))?;
            match map.next_value_seed(Seed { field: true })? {
                ParamValue::One(v) => fields.push((offset, v)),
                ParamValue::Fields(_) => unreachable!("a field is one value"),
            }
        }
        Ok(ParamValue::Fields(fields))
    }
}

struct Seed {
    field: bool,
}

impl<'de> de::DeserializeSeed<'de> for Seed {
    type Value = ParamValue;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<ParamValue, D::Error> {
        d.deserialize_any(ValueVisitor { field: self.field })
    }
}

/// An object read in the file's order (so that an error of `bind` names the first bad entry):
/// parameters, whose values may be objects of fields, or tensor maps, whose values are strings.
struct Pairs {
    expecting: &'static str,
    fields: bool,
}

impl<'de> Visitor<'de> for Pairs {
    type Value = Vec<(String, String)>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(name) = map.next_key::<String>()? {
            if !self.fields {
                out.push((name, map.next_value::<String>()?));
                continue;
            }
            match map.next_value_seed(Seed { field: false })? {
                ParamValue::One(v) => out.push((name, v)),
                ParamValue::Fields(fs) => out.extend(fs.into_iter().map(|(off, v)| (format!("{name}+{off}"), v))),
            }
        }
        Ok(out)
    }
}

fn params<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
    d.deserialize_map(Pairs {
        expecting: "an object of parameters: {\"NAME\": VALUE, \"NAME+OFF\": VALUE, \"NAME\": {\"OFF\": VALUE}}",
        fields: true,
    })
}

fn tensor_maps<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
    d.deserialize_map(Pairs {
        expecting: "an object of tensor maps: {\"NAME[+OFF]\": \"TYPE,DIMS,box=BOX[,stride=S][,swizzle=W][,base=BUFFER]\"}",
        fields: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_becomes_its_option() {
        let f = parse(
            "l.json",
            r#"{"entry": "k", "block": [32, 2], "grid": "1,2", "cluster": 2, "dynamic_smem": 64, "ctas": "0-1",
                "warps": "all", "lanes": [0, 31],
                "params": {"param_0": {"0": "buffer:64", "8": 5}, "param_1": 0.5, "param_2": [1, 2], "param_3+4": "u8:1"},
                "tensor_maps": {"param_4+128": "bf16,64x64,box=64x64"}, "assert": "param_0 = 1"}"#,
        )
        .unwrap();
        let o = f.options;
        assert_eq!((o.block, o.grid, o.cluster), (Some(vec![32, 2]), Some(vec![1, 2]), Some(vec![2])));
        assert_eq!((o.ctas, o.warps, o.every_warp, o.lanes), (Some(vec![0, 1]), None, true, Some(vec![0, 31])));
        let p: Vec<(&str, &str)> = o.params.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(p, [("param_0+0", "buffer:64"), ("param_0+8", "5"), ("param_1", "0.5"), ("param_2", "{1,2}"), ("param_3+4", "u8:1")]);
        assert_eq!(o.tensor_maps, vec![("param_4+128".to_string(), "bf16,64x64,box=64x64".to_string())]);
    }

    #[test]
    fn flags_override_what_the_file_sets_and_only_that() {
        let f = parse("l.json", r#"{"block": 64, "warps": [0], "params": {"_Z1kPi_param_0": "buffer:128", "param_1": 3}}"#).unwrap();
        let flags = KernelOptions {
            grid: Some(vec![2]),
            every_warp: true,
            params: vec![("param_0".into(), "buffer:256".into())],
            ..Default::default()
        };
        let o = f.overridden_by(&flags);
        assert_eq!((o.block, o.grid, o.warps, o.every_warp), (Some(vec![64]), Some(vec![2]), None, true));
        assert_eq!(o.params, vec![("param_1".to_string(), "3".to_string()), ("param_0".to_string(), "buffer:256".to_string())]);
    }

    #[test]
    fn errors_are_located_and_say_what_was_expected() {
        let e = parse("l.json", "{\n  \"block\": \"x\"\n}").unwrap_err().to_string();
        assert!(e.starts_with("l.json:2:14: expected a shape"), "{e}");
        assert!(e.contains("found string \"x\""), "{e}");
        let e = parse("l.json", "{\"block\": 32, \"blok\": 1}").unwrap_err().to_string();
        assert!(e.starts_with("l.json:1:20: expected one of `$schema`, `entry`"), "{e}");
        assert!(e.contains("found the key `blok`"), "{e}");
        let e = parse("l.json", "{\"block\": [32, 0]}").unwrap_err().to_string();
        assert!(e.contains("found the shape `32,0`"), "{e}");
        let e = parse("l.json", "{\"params\": {\"p\": {\"x\": 1}}}").unwrap_err().to_string();
        assert!(e.contains("expected a field's byte offset"), "{e}");
        let e = parse("l.json", "{\"block\": 32,").unwrap_err().to_string();
        assert!(e.starts_with("l.json:1:13: EOF while parsing"), "{e}");
    }
}
