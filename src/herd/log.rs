//! herd7 logs: a reader for the logs of herd7, litmus7 (and `ptxmm hw`, which prints litmus7's shape) and ptxmm.
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

use std::collections::BTreeSet;
use std::fmt;

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
}
