//! How reports name a program's observables and the program itself: as written (`1:%r0`,
//! `s+4`), in the lexicon of herd7's logs that mcompare7 reads (`1:r0`, `s[1]`), and the
//! `Hash=` digest of the test's initial state and code.

use super::{Observable, Program};

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
    observables
        .iter()
        .map(|o| match o {
            Observable::Register(t, r) => {
                let thread = &program.threads[*t];
                format!("{}:{}", thread.id, register_log_name(&thread.registers, &thread.registers[*r]))
            }
            Observable::Location(p) => location_log_name(&program.physical[*p].name),
        })
        .collect()
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
fn location_log_name(name: &str) -> String {
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

/// herd7's `Hash=` value for a test: a 64-bit FNV-1a digest (16 hex digits) of its initial
/// state and code, not of its name or condition (as herd7's, so that renaming a test or
/// changing its condition with `--conds` keeps the hash). It is ptxmm's own digest: herd7 and
/// litmus7 compute another, so mcompare7 needs `-nohash` to compare their logs with ptxmm's.
pub fn test_hash(program: &Program) -> String {
    let mut h = Fnv::new();
    for p in &program.physical {
        h.write(&format!("{}={};", p.name, p.init));
    }
    for t in &program.threads {
        h.write(&format!("P{} {:?} {:?}|", t.id, t.placement, t.reg_init));
        for i in &t.code {
            h.write(&i.text.split_whitespace().collect::<Vec<_>>().join(" "));
            h.write(";");
        }
    }
    format!("{:016x}", h.0)
}

struct Fnv(u64);

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
    fn condition_names_are_replaced_as_tokens() {
        let names = ["s".to_string(), "s+4".to_string(), "1:%r3".to_string()];
        let logs = ["s".to_string(), "s[1]".to_string(), "1:r3".to_string()];
        assert_eq!(log_condition("s!=1 \\/ s+4!=2 /\\ 1:%r3=5", &names, &logs), "s!=1 \\/ s[1]!=2 /\\ 1:r3=5");
        let names = ["s@cta0".to_string(), "s@cta1+4".to_string()];
        let logs = ["s.cta0".to_string(), "s.cta1[1]".to_string()];
        assert_eq!(log_condition("s@cta0=1 /\\ s@cta1+4=2", &names, &logs), "s.cta0=1 /\\ s.cta1[1]=2");
    }
}
