//! herd7 logs: the names ptxmm's result block uses so that mcompare7 reads it, and a reader
//! for the logs of herd7, litmus7 (and `ptxmm hw`, which prints litmus7's shape) and ptxmm.
//!
//! The grammar is mcompare7's log lexer (herdtools7 `tools/lexLog_tools.mll`), restated here:
//!
//! - a test starts at a line `Test NAME [KIND]`;
//! - lines are skipped up to `States N` (herd7) or `Histogram (N states)` (litmus7); a
//!   `Fatal...` line before it drops the test;
//! - then one line per final state: an optional count `N :>` or `N *>` (litmus7; `*>` marks a
//!   state that satisfies the condition), then bindings `LOC=VALUE;` where LOC is `N:REG`,
//!   `NAME`, `[NAME]` or `NAME[N]` and NAME is `(letter|_|.|$)(letter|digit|_|.)*` — so
//!   `1:%r3` and `s+4` are *errors*, which make mcompare7 drop the whole file;
//! - the state list ends at a validation line: optional `Loop `, then `Ok`, `No`, `Undef`,
//!   `Succeeded`, `Failed` or `??`, and anything after it;
//! - then, optionally, `Witnesses` and `Positive: P[,] Negative: Q`; `Flag ...` lines;
//!   `Condition ...`; and keyed lines: `Hash=HEX`, `Time NAME T`, `Observation NAME ...`.
//!
//! ptxmm's own `Verdict: ...` line, printed before `Test`, is read too (other tools ignore it).

use crate::program::{Observable, Program};
use std::collections::BTreeSet;
use std::fmt;

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

/// `s+8` → `s[2]` (the words of a location are 4 bytes; `lower` names word `w` `s+4w`).
fn location_log_name(name: &str) -> String {
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
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || "_.%$:".contains(c);
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

/// One test of a log.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LogTest {
    pub name: String,
    /// The word after the name (`Allowed`, `Forbidden`, `Required`), if any.
    pub kind: Option<String>,
    /// ptxmm's `Verdict:` word printed before the test, if any.
    pub verdict: Option<String>,
    pub states: Vec<LogState>,
    /// `Ok`, `No`, `Undef`, ... as written (`Succeeded`/`Failed` are litmus7's older words).
    pub result: String,
    pub loop_cut: bool,
    /// `Positive: P Negative: Q`.
    pub witnesses: Option<(u64, u64)>,
    pub flags: Vec<String>,
    /// The condition as written after `Condition `.
    pub condition: Option<String>,
    /// `Never`, `Sometimes` or `Always` from the `Observation` line.
    pub observation: Option<String>,
    pub hash: Option<String>,
    /// The 1-based line of the `Test` line.
    pub line: usize,
}

/// One final state of a log: its bindings, sorted by location, with values as written in
/// decimal (hexadecimal integers are converted).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct LogState {
    pub bindings: Vec<(String, String)>,
    /// litmus7's count (`N :>`); 1 where none is written.
    pub count: u64,
    /// litmus7's `*>`: the state satisfies the condition.
    pub witness_mark: bool,
}

impl LogState {
    /// `1:r0=1; x=2;`
    pub fn text(&self) -> String {
        self.bindings.iter().map(|(l, v)| format!("{l}={v};")).collect::<Vec<_>>().join(" ")
    }
}

impl LogTest {
    /// `Ok` for `Ok`/`Succeeded`, `No` for `No`/`Failed`, the word otherwise.
    pub fn answer(&self) -> &str {
        match self.result.as_str() {
            "Succeeded" => "Ok",
            "Failed" => "No",
            r => r,
        }
    }

    /// The distinct states, counts aside.
    pub fn state_set(&self) -> BTreeSet<String> {
        self.states.iter().map(LogState::text).collect()
    }
}

/// A line of a log that mcompare7's lexer rejects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for LogError {}

const VALIDATIONS: [&str; 6] = ["Undef", "Succeeded", "Failed", "Ok", "No", "??"];

/// Read a log. An error (a state line the lexer rejects) fails the whole log, as it makes
/// mcompare7 drop the whole file.
pub fn parse_log(text: &str) -> Result<Vec<LogTest>, LogError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut tests = Vec::new();
    let mut verdict = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(v) = line.strip_prefix("Verdict: ") {
            verdict = v.split_whitespace().next().map(str::to_string);
            i += 1;
            continue;
        }
        let Some(rest) = line.strip_prefix("Test").filter(|r| r.starts_with([' ', '\t'])) else {
            i += 1;
            continue;
        };
        let mut words = rest.split_whitespace();
        let Some(name) = words.next().filter(|n| n.chars().all(is_testname_char)) else {
            i += 1;
            continue;
        };
        let kind = words.next().map(str::to_string);
        let start = i;
        i += 1;
        // Up to `States` / `Histogram`; `Fatal` drops the test.
        let mut fatal = false;
        while i < lines.len() && !is_states_line(lines[i]) {
            if lines[i].starts_with("Fatal:") || lines[i].starts_with("Fatal ") {
                fatal = true;
                break;
            }
            if lines[i].starts_with("Test ") {
                break;
            }
            i += 1;
        }
        if fatal || i >= lines.len() || lines[i].starts_with("Test ") {
            verdict = None;
            continue;
        }
        i += 1;
        let mut test = LogTest {
            name: name.to_string(),
            kind,
            verdict: verdict.take(),
            states: Vec::new(),
            result: String::new(),
            loop_cut: false,
            witnesses: None,
            flags: Vec::new(),
            condition: None,
            observation: None,
            hash: None,
            line: start + 1,
        };
        // State lines up to the validation line.
        loop {
            let Some(&l) = lines.get(i) else {
                return Err(LogError { line: i + 1, column: 1, message: format!("test {name}: the log ends before its Ok/No line") });
            };
            let body = l.strip_prefix("Loop").filter(|r| r.starts_with([' ', '\t'])).map(str::trim_start);
            let word = body.unwrap_or(l);
            if VALIDATIONS.iter().any(|v| word.starts_with(v)) {
                test.loop_cut = body.is_some();
                test.result = VALIDATIONS.iter().find(|v| word.starts_with(**v)).expect("matched").to_string();
                i += 1;
                break;
            }
            if l.trim().is_empty() {
                if test.states.is_empty() {
                    test.states.push(LogState { bindings: Vec::new(), count: 1, witness_mark: false });
                }
                i += 1;
                continue;
            }
            test.states.push(parse_state_line(l).map_err(|(column, message)| LogError { line: i + 1, column, message })?);
            i += 1;
        }
        skip_blank(&lines, &mut i);
        if lines.get(i).is_some_and(|l| l.trim_end() == "Witnesses") {
            if let Some(w) = lines.get(i + 1).and_then(|l| parse_witnesses(l)) {
                test.witnesses = Some(w);
                i += 2;
            }
        }
        // Flags and the condition.
        while let Some(&l) = lines.get(i) {
            if l.trim().is_empty() || l.starts_with("Bad executions") {
                i += 1;
            } else if let Some(f) = l.strip_prefix("Flag ") {
                test.flags.push(f.trim().to_string());
                i += 1;
            } else {
                break;
            }
        }
        if let Some(c) = lines.get(i).and_then(|l| l.strip_prefix("Condition")).filter(|c| c.starts_with([' ', '\t'])) {
            let c = c.trim();
            test.condition = Some(c.split(" is validated").next().unwrap_or(c).split(" is NOT validated").next().unwrap_or(c).to_string());
            i += 1;
        }
        skip_blank(&lines, &mut i);
        // Keyed lines: `Hash=`, `Observation NAME ...`, `Time NAME ...`, others.
        while let Some(&l) = lines.get(i) {
            let key: String = l.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
            if key.is_empty() || key == "Test" {
                break;
            }
            let after = l[key.len()..].trim_start();
            if let Some(v) = after.strip_prefix('=') {
                if key.eq_ignore_ascii_case("hash") {
                    test.hash = Some(v.trim().to_string());
                }
            } else if l[key.len()..].starts_with([' ', '\t']) && after.split_whitespace().count() >= 2 {
                if key == "Observation" {
                    test.observation = after.split_whitespace().nth(1).map(str::to_string);
                }
            } else {
                break;
            }
            i += 1;
        }
        tests.push(test);
    }
    Ok(tests)
}

fn skip_blank(lines: &[&str], i: &mut usize) {
    while lines.get(*i).is_some_and(|l| l.trim().is_empty()) {
        *i += 1;
    }
}

fn is_testname_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_/.-+[]:".contains(c)
}

fn is_states_line(l: &str) -> bool {
    let l = l.trim_end();
    if let Some(n) = l.strip_prefix("States") {
        return n.is_empty() || (n.starts_with([' ', '\t']) && n.trim().chars().all(|c| c.is_ascii_digit()));
    }
    l.starts_with("Histogram")
}

fn parse_witnesses(l: &str) -> Option<(u64, u64)> {
    let rest = l.strip_prefix("Positive:")?.trim_start();
    let (p, rest) = rest.split_at(rest.find(|c: char| !c.is_ascii_digit())?);
    let rest = rest.strip_prefix(',').unwrap_or(rest).trim_start().strip_prefix("Negative:")?.trim();
    Some((p.parse().ok()?, rest.parse().ok()?))
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '.' || c == '$'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

/// One state line: `[N :>|N *>] LOC=VALUE; ...`; errors give the 1-based column.
fn parse_state_line(l: &str) -> Result<LogState, (usize, String)> {
    let mut s = Scanner { text: l, pos: 0 };
    let mut state = LogState { bindings: Vec::new(), count: 1, witness_mark: false };
    // litmus7's count prefix.
    let save = s.pos;
    s.blanks();
    let digits = s.take_while(|c| c.is_ascii_digit());
    if !digits.is_empty() {
        s.blanks();
        if s.eat(":>") || s.eat("*>") {
            state.witness_mark = s.text[..s.pos].ends_with("*>");
            state.count = digits.parse().map_err(|_| (save + 1, format!("count `{digits}` is too large")))?;
        } else {
            s.pos = save;
        }
    } else {
        s.pos = save;
    }
    loop {
        s.blanks();
        if s.rest().is_empty() || s.rest().starts_with('#') {
            break;
        }
        let loc = match s.location() {
            Ok(l) => l,
            Err(m) => return Err((s.pos + 1, m)),
        };
        s.blanks();
        if !s.eat("=") {
            return Err((s.pos + 1, format!("expected `=` after `{loc}`, found {}", s.found())));
        }
        s.blanks();
        let value = match s.value() {
            Ok(v) => v,
            Err(m) => return Err((s.pos + 1, m)),
        };
        s.blanks();
        if !s.eat(";") {
            return Err((s.pos + 1, format!("expected `;` after `{loc}={value}`, found {}", s.found())));
        }
        state.bindings.push((loc, value));
    }
    state.bindings.sort();
    Ok(state)
}

struct Scanner<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Scanner<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn found(&self) -> String {
        match self.peek() {
            Some(c) => format!("`{c}`"),
            None => "the end of the line".to_string(),
        }
    }

    fn eat(&mut self, s: &str) -> bool {
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn blanks(&mut self) {
        self.take_while(|c| c == ' ' || c == '\t' || c == '\r');
    }

    fn take_while(&mut self, f: impl Fn(char) -> bool) -> &'a str {
        let start = self.pos;
        while let Some(c) = self.peek().filter(|&c| f(c)) {
            self.pos += c.len_utf8();
        }
        &self.text[start..self.pos]
    }

    /// `(letter|_|.|$)(letter|digit|_|.)*`, or `$` followed by letters or digits.
    fn name(&mut self) -> Option<&'a str> {
        let start = self.pos;
        match self.peek() {
            Some(c) if is_name_start(c) => {
                self.pos += 1;
                self.take_while(is_name_char);
                Some(&self.text[start..self.pos])
            }
            _ => None,
        }
    }

    /// `N:REG`, `NAME`, `[NAME]`, `NAME[N]`; the normal form drops the brackets of `[NAME]`.
    fn location(&mut self) -> Result<String, String> {
        let start = self.pos;
        let digits = self.take_while(|c| c.is_ascii_digit());
        if !digits.is_empty() {
            if !self.eat(":") {
                return Err(format!("expected `:` and a register after thread `{digits}`, found {}", self.found()));
            }
            return match self.name() {
                Some(r) => Ok(format!("{digits}:{r}")),
                None => Err(format!(
                    "expected a register name (a letter, `_`, `.` or `$`, then letters, digits, `_` or `.`) after `{digits}:`, found {}",
                    self.found()
                )),
            };
        }
        let bracket = self.eat("[");
        let Some(name) = self.name() else {
            return Err(format!("expected a location (`x`, `1:r0`, `x[1]`), found {}", self.found()));
        };
        if bracket {
            if !self.eat("]") {
                return Err(format!("expected `]` after `[{name}`, found {}", self.found()));
            }
            return Ok(name.to_string());
        }
        let save = self.pos;
        if self.eat("[") {
            let idx = self.take_while(|c| c.is_ascii_digit());
            if !idx.is_empty() && self.eat("]") {
                return Ok(self.text[start..self.pos].to_string());
            }
            self.pos = save;
        }
        Ok(name.to_string())
    }

    /// An integer (decimal or `0x` hexadecimal, converted to decimal), a name, `NAME+N`, or a
    /// set `{...}`.
    fn value(&mut self) -> Result<String, String> {
        let start = self.pos;
        if self.eat("{") {
            self.take_while(|c| c != '}' && c != ';');
            if !self.eat("}") {
                return Err("expected `}` closing the set".to_string());
            }
            return Ok(self.text[start..self.pos].to_string());
        }
        let neg = self.eat("-");
        if self.eat("0x") || self.eat("0X") {
            let hex = self.take_while(|c| c.is_ascii_hexdigit());
            let v = i128::from_str_radix(hex, 16).map_err(|_| format!("bad hexadecimal number `{}`", &self.text[start..self.pos]))?;
            return Ok((if neg { -v } else { v }).to_string());
        }
        let digits = self.take_while(|c| c.is_ascii_digit());
        if !digits.is_empty() {
            let v: i128 = digits.parse().map_err(|_| format!("number `{digits}` is too large"))?;
            return Ok((if neg { -v } else { v }).to_string());
        }
        if neg {
            return Err(format!("expected digits after `-`, found {}", self.found()));
        }
        match self.name() {
            Some(_) => {
                // `x:tag`, `x+4` / `x-4` (a location plus an offset, as a value).
                let save = self.pos;
                if self.eat(":") && self.name().is_none() {
                    self.pos = save;
                }
                let save = self.pos;
                if (self.eat("+") || self.eat("-")) && self.take_while(|c| c.is_ascii_hexdigit() || c == 'x').is_empty() {
                    self.pos = save;
                }
                Ok(self.text[start..self.pos].to_string())
            }
            None => Err(format!("expected a value (an integer or a name), found {}", self.found())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_lines_follow_the_lexer() {
        let s = parse_state_line("1:r0=1; x=0x10; [y]=-2; s[1]=3;").unwrap();
        assert_eq!(s.text(), "1:r0=1; s[1]=3; x=16; y=-2;");
        let s = parse_state_line("12 *> 0:r0=1;").unwrap();
        assert_eq!((s.count, s.witness_mark), (12, true));
        let s = parse_state_line("3 :> 0:r0=0;").unwrap();
        assert_eq!((s.count, s.witness_mark), (3, false));
        let e = parse_state_line("1:%r3=5;").unwrap_err();
        assert_eq!(e.0, 3, "{}", e.1);
        let e = parse_state_line("s+4=2;").unwrap_err();
        assert_eq!(e.0, 2, "{}", e.1);
        assert!(parse_state_line("x=1").is_err());
    }

    #[test]
    fn log_names_of_words_and_percent_registers() {
        assert_eq!(location_log_name("s+4"), "s[1]");
        assert_eq!(location_log_name("s+12"), "s[3]");
        assert_eq!(location_log_name("x"), "x");
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
    }
}
