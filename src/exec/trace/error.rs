//! Why exploration stops: a limit was hit, or the program did something meaningless.

use crate::program::Program;

/// An error of exploration (a limit was hit, or the program did something meaningless).
#[derive(Clone, Debug, thiserror::Error)]
pub enum ExploreError {
    #[error("thread {thread}: more than {limit} distinct traces; the test is too large to explore (raise --max-traces)")]
    TooManyTraces { thread: String, limit: usize },
    #[error("location `{location}` can hold more than {limit} distinct values; values keep growing (is there an unbounded counter? raise --max-values)")]
    DomainTooLarge { location: String, limit: usize },
    /// `at`: where the run passed the limit, `line N (`instruction`), which adds K events`.
    #[error(
        "thread {thread}: a trace has more than {limit} memory events, at {at} (raise --max-events, lower --unroll, or shorten the test)"
    )]
    TraceTooLong { thread: String, limit: usize, at: String },
    /// Printed after the file name and a colon: `file:line:col: error: ...`.
    #[error("{line}:{col}: error: thread {thread}: {detail} (addresses must point to a word inside a declared variable)")]
    BadAddress { thread: String, line: usize, col: usize, detail: String },
    /// An unknown value (`program::unknown`) where the run must know it; printed after the file
    /// name and a colon, as [`ExploreError::BadAddress`].
    #[error("{line}:{col}: error: thread {thread}: {detail}")]
    Unknown { thread: String, line: usize, col: usize, detail: String },
    #[error("location `{location}` has {writes} writes in one execution, hence {orders} possible coherence orders, more than the candidate budget (lower --unroll, or raise --max-candidates)")]
    TooManyCoherenceOrders { location: String, writes: usize, orders: u64 },
    #[error(
        "the search exceeded its budget of {limit} model evaluations; the test is too large (raise --max-candidates, or lower --unroll)"
    )]
    TooManyCandidates { limit: u64 },
    #[error("mbarrier `{object}` has more than {limit} reachable states in one execution; the test is too large for ptxmm")]
    TooManyMbarrierStates { object: String, limit: u64 },
    #[error("the test has more than {limit} distinct final states; ptxmm stopped collecting them (raise --max-states)")]
    TooManyStates { limit: usize },
    /// `what` says what needs the memory: "the event structure of N events would need about
    /// X MiB", "the process uses X MiB".
    #[error("{what}, over the memory limit of {limit} MiB (raise --max-memory)")]
    OutOfMemory { what: String, limit: u64 },
    #[error("the decision took longer than the time limit of {} s (raise --timeout, or 0 for no limit)", seconds_text(*seconds))]
    Timeout { seconds: f64 },
}

/// Seconds as a person reads them: `10` for the 9.994 s a check gets of a 10 s `--timeout` after
/// its grouping, one decimal from a second on (`2.5`), three significant digits below (`0.005`).
pub fn seconds_text(seconds: f64) -> String {
    if seconds <= 0.0 || !seconds.is_finite() {
        return format!("{seconds}");
    }
    let text = if seconds >= 1.0 {
        format!("{seconds:.1}")
    } else {
        format!("{:.*}", (2 - seconds.log10().floor() as i64).clamp(0, 12) as usize, seconds)
    };
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

impl ExploreError {
    /// Whether the message starts with the `line:col` of the instruction it is about (to be
    /// printed after the file name and a colon).
    pub fn is_located(&self) -> bool {
        matches!(self, ExploreError::BadAddress { .. } | ExploreError::Unknown { .. })
    }
}

/// The column of the instruction of `thread` on `line`, for a `file:line:col` message.
fn column(program: &Program, thread: &crate::program::Thread, line: usize) -> usize {
    thread.code.iter().find(|i| i.line == line).map(|i| program.source.line_col(i.span.start).1).unwrap_or(1)
}

/// An instruction that needs the value of `register` known, which holds the unknown value `value`.
pub(super) fn unknown_value(
    program: &Program,
    thread: &crate::program::Thread,
    instr: &crate::program::Instr,
    register: &str,
    value: i64,
) -> ExploreError {
    let origin = crate::program::unknown::origin(value).and_then(|o| program.unknowns.get(o as usize));
    let from = origin.map_or_else(|| "an unknown value".to_string(), |o| o.describe());
    let how = match origin.and_then(|o| o.parameter_flag()) {
        Some(flag) => {
            format!("give the bytes their value: `ptxmm kernel {flag}` (a number, `u64:N`, or `buffer:BYTES` for a pointer)")
        }
        None => "ptxmm does not approximate a value that decides an address, a size or a synchronization".to_string(),
    };
    let detail = format!(
        "`{register}` is unknown here: its value comes from {from}; `{}` needs it known ({how})",
        instr.text.split_whitespace().next().unwrap_or("")
    );
    ExploreError::Unknown { thread: thread.name(), line: instr.line, col: program.source.line_col(instr.span.start).1, detail }
}

/// What a bad address is, in the program's terms.
pub(super) fn bad_address(program: &Program, thread: &crate::program::Thread, line: usize, value: i64) -> ExploreError {
    let detail = match crate::program::slot_of(&program.variables, value) {
        Some((v, byte)) => {
            let v = &program.variables[v];
            if byte >= v.size {
                format!("the address of byte {byte} of `{}` is past its end ({} bytes)", v.name, v.size)
            } else {
                format!("the address of byte {byte} of `{}` is not 4-byte aligned", v.name)
            }
        }
        _ => format!("the value {value} used as an address is not the address of any variable"),
    };
    ExploreError::BadAddress { thread: thread.name(), line, col: column(program, thread, line), detail }
}

#[cfg(test)]
mod tests {
    use super::seconds_text;

    #[test]
    fn seconds_read_as_a_person_wrote_them() {
        assert_eq!(seconds_text(10.0), "10");
        assert_eq!(seconds_text(9.994174091), "10");
        assert_eq!(seconds_text(2.5), "2.5");
        assert_eq!(seconds_text(0.5), "0.5");
        assert_eq!(seconds_text(0.000001), "0.000001");
        assert_eq!(seconds_text(0.0123456), "0.0123");
        assert_eq!(seconds_text(0.0), "0");
    }
}
