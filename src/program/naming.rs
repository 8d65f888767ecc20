//! How reports name a program's observables and the program itself: in the lexicon of herd7's
//! logs that mcompare7 reads (`1:r0` for `%r0` of P1, `s[1]` for the word `s+4`), the one naming
//! of `run`, `explain`, their JSON and the playground (instructions stay quoted as written); the
//! `Hash=` digest of the test's initial state and code; and how reports show a value whose type
//! says float (`1077936128 (3.0f32)`: the bits, as the state lists give them, then the float).

use super::types::{Kind, Ty};
use super::{Address, CopyKind, LocalOp, Observable, Op, Program, RedType, Value};

/// Every observable a final state shows: those of the condition, the filter and `locations`,
/// in a stable order.
pub fn observables(program: &Program) -> Vec<Observable> {
    let mut obs = Vec::new();
    program.condition.prop.observables(&mut obs);
    if let Some(f) = &program.filter {
        f.observables(&mut obs);
    }
    for o in &program.extra_observables {
        if !obs.contains(o) {
            obs.push(o.clone());
        }
    }
    obs.sort();
    obs
}

/// The observables of `program` as herd7's log lexer reads them, in `observables` order:
/// `1:r3` for the PTX register `%r3` (the lexer's register names have no `%`; when the thread
/// also has a register `r3`, `_` is prefixed until the name is free), and `s[k]` for the word
/// `s+4k` of a location (the lexer takes `NAME[N]`, herd7's spelling of element `N` of an
/// array of 32-bit words, but not `s+4`).
pub fn log_names(program: &Program, observables: &[Observable]) -> Vec<String> {
    observables.iter().map(|o| observable_log_name(program, o)).collect()
}

/// One observable as the state lists name it (`1:r3`, `s[1]`): the one name every report of
/// `run` and `explain` (text, JSON, the playground) gives it.
pub fn observable_log_name(program: &Program, o: &Observable) -> String {
    match o {
        Observable::Register(t, r) => {
            let thread = &program.threads[*t];
            format!("{}:{}", thread.log_id(), register_log_name(&thread.registers, &thread.registers[*r]))
        }
        Observable::Location(p) => location_log_name(&program.physical_name(*p)),
    }
}

/// The condition as the state lists spell it (`exists`'s proposition with `1:r3`, `s[1]`).
pub fn condition_log_text(program: &Program) -> String {
    let observables = observables(program);
    let names: Vec<String> = observables.iter().map(|o| program.observable_name(o)).collect();
    log_condition(&program.condition.text, &names, &log_names(program, &observables))
}

/// `%r3` → `r3` (or `_r3`, ... when `r3` is another register of the same thread).
fn register_log_name(registers: &[String], name: &str) -> String {
    let Some(bare) = name.strip_prefix('%') else { return name.to_string() };
    let mut candidate = bare.replace('%', "_");
    while registers.contains(&candidate) {
        candidate.insert(0, '_');
    }
    candidate
}

/// `s+8` → `s[2]` (the words of a location are 4 bytes; `lower` names word `w` `s+4w`); an
/// instance `s@cta1` → `s.cta1` (the lexer's names take `.`, never `@`, and no PTX identifier
/// has a `.`, so the name stays unique).
pub fn location_log_name(name: &str) -> String {
    let dotted;
    let name = if name.contains('@') {
        dotted = name.replace('@', ".");
        dotted.as_str()
    } else {
        name
    };
    match name.rsplit_once('+') {
        Some((base, off)) if !base.is_empty() => match off.parse::<u64>() {
            Ok(bytes) if bytes % 4 == 0 => format!("{base}[{}]", bytes / 4),
            _ => name.to_string(),
        },
        _ => name.to_string(),
    }
}

/// The condition text with every observable spelt as in the state lines (`log_names`), so
/// that a tool evaluating the condition on the states finds the same names. Names are
/// replaced where they stand as whole tokens, longest first.
pub fn log_condition(condition: &str, names: &[String], log_names: &[String]) -> String {
    let mut pairs: Vec<(&str, &str)> = names.iter().zip(log_names).filter(|(n, l)| n != l).map(|(n, l)| (n.as_str(), l.as_str())).collect();
    if pairs.is_empty() {
        return condition.to_string();
    }
    pairs.sort_by_key(|(n, _)| std::cmp::Reverse(n.len()));
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || "_.%$:@".contains(c);
    let mut out = String::with_capacity(condition.len());
    let mut i = 0;
    'scan: while i < condition.len() {
        let at_boundary = i == 0 || !is_name_char(condition[..i].chars().next_back().unwrap_or(' '));
        if at_boundary {
            for (n, l) in &pairs {
                if condition[i..].starts_with(n) {
                    let after = condition[i + n.len()..].chars().next();
                    if after.is_none_or(|c| !is_name_char(c) && c != '+') {
                        out.push_str(l);
                        i += n.len();
                        continue 'scan;
                    }
                }
            }
        }
        let c = condition[i..].chars().next().expect("i is a char boundary below len");
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// The float type (`.f32` or `.f64`) of the values an instruction's memory words carry: a
/// scalar or vector `ld`/`st`/`atom`/`red` of `.f32`, a `cp.reduce.async.bulk` of `.f32` (a
/// 64-bit access spreads an `.f64` over two words, neither of which is a float alone).
pub fn word_float_type(op: &Op) -> Option<Ty> {
    const F32: Ty = Ty { kind: Kind::F, bits: 32 };
    match op {
        Op::Load { ty: Some(t), .. } | Op::Store { ty: Some(t), .. } | Op::Rmw { ty: Some(t), .. } | Op::LoadVector { ty: Some(t), .. }
            if *t == F32 =>
        {
            Some(F32)
        }
        Op::AsyncCopy(c) if matches!(c.kind, CopyKind::Reduce(_, RedType::F32)) => Some(F32),
        _ => None,
    }
}

/// The float type of an observable, when its type says float: a register whose last writer in
/// the program text is an `.f32`/`.f64` instruction (the type a condition compares it at), a
/// word declared float or named by an `.f32` access (or reduced by an `.f32` bulk reduction).
pub fn observable_float_type(program: &Program, o: &Observable) -> Option<Ty> {
    let float = |t: Ty| (t.kind == Kind::F && matches!(t.bits, 32 | 64)).then_some(t);
    match o {
        Observable::Register(t, r) => {
            let writer = program.threads[*t].code.iter().rev().find_map(|i| match &i.op {
                // `setp.f32` writes a predicate: its type is the comparison's, not the result's.
                Op::Local { dst, op: LocalOp::Set(_), .. } if dst == r => Some(None),
                Op::Local { dst, ty, .. } | Op::Load { dst, ty, .. } if dst == r => Some(*ty),
                Op::Rmw { dst: Some(dst), ty, .. } if dst == r => Some(*ty),
                Op::LoadVector { dsts, ty, .. } if dsts.contains(r) => Some(*ty),
                Op::Mbarrier { dst: Some(dst), .. } if dst == r => Some(None),
                _ => None,
            });
            writer.flatten().and_then(float)
        }
        Observable::Location(p) => {
            if let Some(t) = program.physical[*p].ty.and_then(float) {
                return (t.bits == 32).then_some(t);
            }
            let names = |addr: &Address, words: i64| match addr {
                Address::Location(l) => (0..words.max(1) as usize).any(|k| {
                    program.locations.get(l + k).is_some_and(|w| w.physical == *p && w.variable == program.locations[*l].variable)
                }),
                _ => false,
            };
            program.threads.iter().flat_map(|t| &t.code).find_map(|i| {
                let ty = word_float_type(&i.op)?;
                let hit = match &i.op {
                    Op::LoadVector { dsts, addr, .. } => names(addr, dsts.len() as i64),
                    Op::AsyncCopy(c) => match c.size {
                        Value::Const(size) => names(&c.dst, size / 4),
                        Value::Reg(_) => false,
                    },
                    Op::Load { addr, .. } | Op::Store { addr, .. } | Op::Rmw { addr, .. } => names(addr, 1),
                    _ => false,
                };
                hit.then_some(ty)
            })
        }
    }
}

/// `3.0f32`: the value `bits` of a float type as a float (`NaN f32`, `inf f64` when not finite).
pub fn float_text(ty: Ty, bits: i64) -> String {
    let (x, suffix) = match ty.bits {
        64 => (f64::from_bits(bits as u64), "f64"),
        // The word's 32 bits, however the value was normalised (`.b32`, `.s32`).
        _ => (f64::from(f32::from_bits(bits as u32)), "f32"),
    };
    if !x.is_finite() {
        return format!("{x:?} {suffix}");
    }
    match ty.bits {
        64 => format!("{x:?}{suffix}"),
        _ => format!("{:?}{suffix}", x as f32),
    }
}

/// A value as reports show it: the bits (as the state lists give them), then the float when
/// the type says float: `1077936128 (3.0f32)`.
pub fn typed_value(ty: Option<Ty>, value: i64) -> String {
    match ty {
        Some(t) => format!("{value} ({})", float_text(t, value)),
        None => value.to_string(),
    }
}

/// herd7's `Hash=` value for a test: a 64-bit FNV-1a digest (16 hex digits) of its initial
/// state and code, not of its name or condition (as herd7's, so that renaming a test or
/// changing its condition with `--conds` keeps the hash). It is ptxmm's own digest: herd7 and
/// litmus7 compute another, so mcompare7 needs `-nohash` to compare their logs with ptxmm's.
pub fn test_hash(program: &Program) -> String {
    use std::fmt::Write;
    // Formatted into the digest, not into strings: a test of 200 KB of shared memory per CTA
    // has hundreds of thousands of words.
    let mut h = Fnv::new();
    for p in &program.physical {
        let _ = write!(h, "{}={};", super::location_display(&program.variables, &program.locations, p.first), p.init);
    }
    for t in &program.threads {
        let _ = write!(h, "P{} {:?} {:?}|", t.id, t.placement, t.reg_init);
        for i in &t.code {
            h.write(&i.text.split_whitespace().collect::<Vec<_>>().join(" "));
            h.write(";");
        }
    }
    format!("{:016x}", h.0)
}

struct Fnv(u64);

impl std::fmt::Write for Fnv {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.write(s);
        Ok(())
    }
}

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, s: &str) {
        for b in s.bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// Whether thread `b` is the lane after thread `a` in one warp column (`P1.6`, `P1.7`): reports
/// write the lanes of a column that say the same thing as one range (`P1.0-P1.31`).
pub fn next_lane(a: &str, b: &str) -> bool {
    match (a.split_once('.'), b.split_once('.')) {
        (Some((ca, la)), Some((cb, lb))) => ca == cb && matches!((la.parse::<u32>(), lb.parse::<u32>()), (Ok(x), Ok(y)) if y == x + 1),
        _ => false,
    }
}

/// `P1.6-P1.9` for the lanes 6 to 9 of column P1 (`first`, `last`), `P2` for one thread.
pub fn lane_range(first: &str, last: &str) -> String {
    if first == last {
        first.to_string()
    } else {
        format!("{first}-{last}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_names_of_words_and_percent_registers() {
        assert_eq!(location_log_name("s+4"), "s[1]");
        assert_eq!(location_log_name("s+12"), "s[3]");
        assert_eq!(location_log_name("x"), "x");
        assert_eq!(location_log_name("s@cta1"), "s.cta1");
        assert_eq!(location_log_name("s@cta1+4"), "s.cta1[1]");
        assert_eq!(location_log_name("buf@P0+8"), "buf.P0[2]");
        let regs = vec!["%r3".to_string(), "r3".to_string()];
        assert_eq!(register_log_name(&regs, "%r3"), "_r3");
        assert_eq!(register_log_name(&regs, "r3"), "r3");
        assert_eq!(register_log_name(&["%p".to_string()], "%p"), "p");
    }

    #[test]
    fn floats_are_shown_next_to_their_bits() {
        let f32 = Ty { kind: Kind::F, bits: 32 };
        let f64 = Ty { kind: Kind::F, bits: 64 };
        assert_eq!(typed_value(Some(f32), 1065353216), "1065353216 (1.0f32)");
        assert_eq!(typed_value(Some(f32), 0x80000001), "2147483649 (-1e-45f32)");
        assert_eq!(typed_value(Some(f32), 0x7fc00000), "2143289344 (NaN f32)");
        assert_eq!(typed_value(Some(f64), 0x4004000000000000), "4612811918334230528 (2.5f64)");
        assert_eq!(typed_value(None, 7), "7");
    }

    #[test]
    fn condition_names_are_replaced_as_tokens() {
        let names = ["s".to_string(), "s+4".to_string(), "1:%r3".to_string()];
        let logs = ["s".to_string(), "s[1]".to_string(), "1:r3".to_string()];
        assert_eq!(log_condition("s!=1 \\/ s+4!=2 /\\ 1:%r3=5", &names, &logs), "s!=1 \\/ s[1]!=2 /\\ 1:r3=5");
        let names = ["s@cta0".to_string(), "s@cta1+4".to_string()];
        let logs = ["s.cta0".to_string(), "s.cta1[1]".to_string()];
        assert_eq!(log_condition("s@cta0=1 /\\ s@cta1+4=2", &names, &logs), "s.cta0=1 /\\ s.cta1[1]=2");
    }
}
