//! The mbarrier object as a value: its state is encoded in the value of its one location, and
//! every mbarrier instruction is a read-modify-write of that value (digest §14.5, principle P5).
//!
//! Encoding the state as a value lets the ordinary machinery do the work: the total order `mo_m`
//! of the updates is the coherence order of the location (the engine keeps it total and makes
//! every update read its immediate predecessor), the phase a wait observes is the value it reads,
//! and synchronization through the object is reads-from plus RMW chains (§8.9.2).
//!
//! PTX ISA §9.7.13.15.1: the object holds the current phase, the pending arrival count, the
//! expected arrival count and the tx-count. A value without [`MAGIC`] is not a valid object (never
//! initialised, invalidated, or overwritten by an ordinary store).
//!
//! The counts range up to 2^20-1 (§9.7.13.15.2): with the phase and the tx-count, more bits than
//! a value has. A state whose counts fit in 16 bits (every litmus test so far) is packed into
//! the value itself; a wider one is *interned*: the value is [`MAGIC`] | [`WIDE`] | a key
//! computed from the state, and a process-wide table maps the key back to the state. The key is
//! a fixed hash (the same in every run unless two states collide in 61 bits), so values stay
//! deterministic.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

/// Marks a value as a valid mbarrier state.
const MAGIC: i64 = 1 << 62;
/// Marks a valid state as interned (its counts do not fit the packed layout).
const WIDE: i64 = 1 << 61;
/// The key bits of an interned state.
const KEY_MASK: i64 = WIDE - 1;
const PHASE_BITS: u32 = 6;
/// Bits of each count in the packed layout.
const COUNT_BITS: u32 = 16;
const TX_BITS: u32 = 21;
/// Largest count the packed layout holds.
const PACKED_COUNT: i64 = (1 << COUNT_BITS) - 1;

/// The phase, pending arrivals, expected arrivals and tx-count of a valid mbarrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MbState {
    pub phase: i64,
    pub pending: i64,
    pub expected: i64,
    pub tx: i64,
}

/// Largest phase number ptxmm tracks (a litmus test never gets close).
pub const MAX_PHASE: i64 = (1 << PHASE_BITS) - 1;
/// Largest tx-count magnitude (the ISA's range, ±(2^20-1), §9.7.13.15.2).
pub const MAX_TX: i64 = (1 << (TX_BITS - 1)) - 1;
/// Largest arrival count, pending or expected (the ISA's, 2^20-1, §9.7.13.15.2).
pub const MAX_COUNT: i64 = (1 << 20) - 1;

/// The interned states (see the module's comment), by key. Only states with a count above
/// 65535 come here; each is an mbarrier state some search built, so the table is bounded by
/// the mbarrier states the process explores (`MAX_MBARRIER_STATES` per object and test).
static INTERNED: LazyLock<Mutex<HashMap<i64, MbState>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// The key of an interned state: a fixed mix of its fields (FNV-1a over their bytes), then the
/// next free key on a collision.
fn intern(state: MbState) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for field in [state.phase, state.pending, state.expected, state.tx] {
        for byte in field.to_le_bytes() {
            h = (h ^ byte as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    let mut key = (h as i64) & KEY_MASK;
    let mut table = INTERNED.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        match table.get(&key) {
            Some(s) if *s == state => return key,
            Some(_) => key = (key + 1) & KEY_MASK,
            None => {
                table.insert(key, state);
                return key;
            }
        }
    }
}

impl MbState {
    /// The value of an object right after `mbarrier.init [bar], count`.
    pub fn initialised(count: i64) -> i64 {
        MbState { phase: 0, pending: count, expected: count, tx: 0 }.encode()
    }

    pub fn encode(&self) -> i64 {
        // A tx-count or a count out of range is undefined behaviour (reported by `apply`); the
        // value kept is clamped to the range so that the encoding never overflows.
        let tx = self.tx.clamp(-MAX_TX - 1, MAX_TX);
        let (pending, expected) = (self.pending.clamp(0, MAX_COUNT), self.expected.clamp(0, MAX_COUNT));
        if pending > PACKED_COUNT || expected > PACKED_COUNT {
            let phase = self.phase & MAX_PHASE;
            return MAGIC | WIDE | intern(MbState { phase, pending, expected, tx });
        }
        MAGIC
            | (self.phase & MAX_PHASE)
            | (pending << PHASE_BITS)
            | (expected << (PHASE_BITS + COUNT_BITS))
            | (((tx + MAX_TX + 1) & ((1 << TX_BITS) - 1)) << (PHASE_BITS + 2 * COUNT_BITS))
    }

    /// The state a value encodes; None for a value that is not a valid object.
    pub fn decode(v: i64) -> Option<MbState> {
        if v & MAGIC == 0 || v < 0 {
            return None;
        }
        if v & WIDE != 0 {
            return INTERNED.lock().unwrap_or_else(|e| e.into_inner()).get(&(v & KEY_MASK)).copied();
        }
        let c = PACKED_COUNT;
        Some(MbState {
            phase: v & MAX_PHASE,
            pending: (v >> PHASE_BITS) & c,
            expected: (v >> (PHASE_BITS + COUNT_BITS)) & c,
            tx: ((v >> (PHASE_BITS + 2 * COUNT_BITS)) & ((1 << TX_BITS) - 1)) - MAX_TX - 1,
        })
    }

    /// "Maybe complete" (§9.7.13.15.4-.7): with no pending arrival and no pending transaction, the
    /// phase completes and the next one starts with the expected count.
    fn settle(mut self) -> (MbState, bool) {
        if self.pending == 0 && self.tx == 0 {
            self.phase += 1;
            self.pending = self.expected;
            (self, true)
        } else {
            (self, false)
        }
    }

    /// How the value prints in reports: `phase 1, pending 2/2, tx 0`.
    pub fn describe(v: i64) -> String {
        match MbState::decode(v) {
            Some(s) => format!("phase {}, pending {}/{}, tx {}", s.phase, s.pending, s.expected, s.tx),
            None => format!("not a valid mbarrier ({v})"),
        }
    }
}

/// One mbarrier operation with its operand values resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MbUpdate {
    Init {
        count: i64,
    },
    Inval,
    Arrive {
        count: i64,
        expect_tx: i64,
        no_complete: bool,
        drop: bool,
    },
    ExpectTx {
        bytes: i64,
    },
    CompleteTx {
        bytes: i64,
    },
    /// `cp.async.mbarrier.arrive` without `.noinc`: pending count + 1 (§9.7.9.25.3.4).
    IncPending,
    /// The asynchronous arrive-on of `cp.async.mbarrier.arrive`.
    ArriveOn,
    /// `test_wait`/`try_wait` (read only).
    Wait {
        parity: bool,
        operand: i64,
    },
}

/// The effect of an operation on one old value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MbEffect {
    /// The value written (None for waits, which only read).
    pub write: Option<i64>,
    /// The register result: the state (phase before the arrive) or the wait predicate (0/1).
    pub result: i64,
    /// Undefined behaviour (the rule of digest §13.2 and what happened).
    pub ub: Option<String>,
}

impl MbUpdate {
    /// The operation's name in messages.
    pub fn name(&self) -> &'static str {
        match self {
            MbUpdate::Init { .. } => "mbarrier.init",
            MbUpdate::Inval => "mbarrier.inval",
            MbUpdate::Arrive { drop: true, .. } => "mbarrier.arrive_drop",
            MbUpdate::Arrive { .. } => "mbarrier.arrive",
            MbUpdate::ExpectTx { .. } => "mbarrier.expect_tx",
            MbUpdate::CompleteTx { .. } => "complete-tx",
            MbUpdate::IncPending => "cp.async.mbarrier.arrive (pending-count increment)",
            MbUpdate::ArriveOn => "arrive-on of cp.async.mbarrier.arrive",
            MbUpdate::Wait { .. } => "mbarrier.test_wait/try_wait",
        }
    }

    /// Apply to the old value of the object.
    pub fn apply(&self, old: i64) -> MbEffect {
        let state = MbState::decode(old);
        if let MbUpdate::Init { count } = *self {
            let ub = if state.is_some() {
                Some("M2: mbarrier.init on an mbarrier object that is already valid (PTX ISA §9.7.13.15.9)".to_string())
            } else if !(1..(1 << 20)).contains(&count) {
                Some(format!("M3: mbarrier.init count {count} is outside [1, 2^20-1] (PTX ISA §9.7.13.15.9)"))
            } else {
                None
            };
            return MbEffect { write: Some(MbState::initialised(count.clamp(1, MAX_COUNT))), result: 0, ub };
        }
        let Some(s) = state else {
            return MbEffect {
                write: if matches!(self, MbUpdate::Wait { .. }) { None } else { Some(old) },
                result: 0,
                ub: Some(format!(
                    "M1: {} on an mbarrier object that is not initialised (PTX ISA §9.7.13.15: \"Performing any mbarrier operation except mbarrier.init on an uninitialized mbarrier object results in undefined behavior\")",
                    self.name()
                )),
            };
        };
        let mut ub = None;
        let (new, result) = match *self {
            MbUpdate::Init { .. } => unreachable!("handled above"),
            MbUpdate::Inval => return MbEffect { write: Some(0), result: 0, ub: None },
            MbUpdate::Arrive { count, expect_tx, no_complete, drop } => {
                if !(1..(1 << 20)).contains(&count) {
                    ub = Some(format!("M3: arrive count {count} is outside [1, 2^20-1] (PTX ISA §9.7.13.15.13)"));
                }
                let mut n = s;
                n.tx = n.tx.saturating_add(expect_tx);
                if drop {
                    n.expected = n.expected.saturating_sub(count);
                }
                n.pending = n.pending.saturating_sub(count);
                if n.pending < 0 {
                    ub = Some(format!(
                        "arrival-count underflow: {} with count {count} when only {} arrival(s) are pending (PTX ISA §9.7.13.15.2: the pending count is in [0, 2^20-1])",
                        self.name(),
                        s.pending
                    ));
                    n.pending = 0;
                }
                if n.expected < 0 {
                    n.expected = 0;
                }
                let (n, completed) = n.settle();
                if no_complete && completed {
                    ub = Some(
                        "M4: mbarrier.arrive.noComplete completed the current phase (PTX ISA §9.7.13.15.13: \"the behavior is undefined\")"
                            .to_string(),
                    );
                }
                (n, s.phase)
            }
            MbUpdate::ExpectTx { bytes } => (MbState { tx: s.tx.saturating_add(bytes), ..s }, 0),
            MbUpdate::CompleteTx { bytes } => (MbState { tx: s.tx.saturating_sub(bytes), ..s }.settle().0, 0),
            MbUpdate::IncPending => {
                if s.pending >= MAX_COUNT {
                    ub = Some(format!(
                        "M3: the pending count overflows after cp.async.mbarrier.arrive: {} + 1 is above 2^20-1 (PTX ISA §9.7.9.25.3.4)",
                        s.pending
                    ));
                }
                (MbState { pending: (s.pending + 1).min(MAX_COUNT), ..s }, 0)
            }
            MbUpdate::ArriveOn => {
                let mut n = s;
                n.pending -= 1;
                if n.pending < 0 {
                    ub = Some("arrival-count underflow: the arrive-on of cp.async.mbarrier.arrive found no pending arrival".to_string());
                    n.pending = 0;
                }
                (n.settle().0, 0)
            }
            MbUpdate::Wait { parity: true, operand } => {
                if operand != 0 && operand != 1 {
                    ub = Some(format!("M6: phase parity operand {operand} is neither 0 nor 1 (PTX ISA §9.7.13.15.16)"));
                }
                // The phase of parity P is complete when the current phase has the other parity:
                // it is then the immediately preceding phase (phase -1 counts as complete).
                return MbEffect { write: None, result: (s.phase % 2 != operand.rem_euclid(2)) as i64, ub };
            }
            MbUpdate::Wait { parity: false, operand } => {
                if operand != s.phase && operand != s.phase - 1 {
                    ub = Some(format!(
                        "M6: test_wait/try_wait on the state of phase {operand}, which is neither the current phase {} nor the immediately preceding one (PTX ISA §9.7.13.15.16)",
                        s.phase
                    ));
                }
                return MbEffect { write: None, result: (operand < s.phase) as i64, ub };
            }
        };
        if new.tx.unsigned_abs() > MAX_TX as u64 {
            ub = Some(format!("M10: the tx-count {} is outside the range ±(2^20-1) (PTX ISA §9.7.13.15.2)", new.tx));
        }
        if new.phase > MAX_PHASE {
            ub = Some(format!("the test completes more than {MAX_PHASE} phases of one mbarrier, more than ptxmm tracks"));
        }
        MbEffect { write: Some(new.encode()), result, ub }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Operands at the ends of i64 never overflow (debug builds would panic): the misuse is
    /// reported as undefined behaviour and the value stays a valid encoding.
    #[test]
    fn extreme_operands_are_undefined_not_overflows() {
        let v = MbState::initialised(1);
        for big in [i64::MAX, i64::MIN, i64::MAX - 1] {
            let e = MbUpdate::Arrive { count: 1, expect_tx: big, no_complete: false, drop: false }.apply(v);
            assert!(e.ub.as_deref().is_some_and(|u| u.starts_with("M10")), "{big}: {:?}", e.ub);
            assert!(MbState::decode(e.write.unwrap()).is_some());
            assert!(MbUpdate::ExpectTx { bytes: big }.apply(v).ub.is_some());
            assert!(MbUpdate::CompleteTx { bytes: big }.apply(v).ub.is_some());
        }
        assert!(MbUpdate::Arrive { count: i64::MAX, expect_tx: 0, no_complete: false, drop: false }.apply(v).ub.is_some());
    }

    #[test]
    fn encoding_round_trips() {
        for s in [
            MbState { phase: 0, pending: 2, expected: 2, tx: 0 },
            MbState { phase: 3, pending: 0, expected: 5, tx: -16 },
            MbState { phase: 63, pending: MAX_COUNT, expected: 1, tx: MAX_TX },
        ] {
            assert_eq!(MbState::decode(s.encode()), Some(s));
        }
        assert_eq!(MbState::decode(0), None);
        assert_eq!(MbState::decode(5), None, "ordinary data is not a valid object");
    }

    /// Counts up to the ISA's 2^20-1 round-trip (interned above 65535); the packed layout of
    /// smaller ones is what it always was (values in reports and conditions unchanged).
    #[test]
    fn counts_up_to_two_to_the_20_minus_1_are_kept() {
        assert_eq!(MbState::initialised(1), MAGIC | (1 << 6) | (1 << 22) | ((MAX_TX + 1) << 38));
        for s in [
            MbState { phase: 0, pending: PACKED_COUNT + 1, expected: PACKED_COUNT, tx: 0 },
            MbState { phase: 5, pending: 0, expected: MAX_COUNT, tx: -MAX_TX },
            MbState { phase: MAX_PHASE, pending: MAX_COUNT, expected: MAX_COUNT, tx: MAX_TX },
        ] {
            let v = s.encode();
            assert!(v & WIDE != 0 && v > 0, "{s:?}");
            assert_eq!(MbState::decode(v), Some(s));
            assert_eq!(s.encode(), v, "the same state, the same value");
        }
        assert_ne!(MbState::initialised(MAX_COUNT), MbState::initialised(MAX_COUNT - 1));
        assert_eq!(MbState::decode(MAGIC | WIDE | 12345), None, "a key no state has is not a valid object");
    }

    /// Where the ISA puts the bounds (§9.7.13.15.2, .9, .13; §9.7.9.25.3.4): init and arrive
    /// counts in [1, 2^20-1], the pending count after cp.async.mbarrier.arrive at most 2^20-1.
    #[test]
    fn count_overflow_is_undefined_exactly_at_the_isa_bounds() {
        let m3 = |e: MbEffect| e.ub.is_some_and(|u| u.starts_with("M3"));
        assert!(!m3(MbUpdate::Init { count: MAX_COUNT }.apply(0)));
        assert!(m3(MbUpdate::Init { count: MAX_COUNT + 1 }.apply(0)));
        let full = MbState::initialised(MAX_COUNT);
        let arrive = |count| MbUpdate::Arrive { count, expect_tx: 0, no_complete: false, drop: false };
        let done = arrive(MAX_COUNT).apply(full);
        assert_eq!(done.ub, None);
        assert_eq!(MbState::decode(done.write.unwrap()), Some(MbState { phase: 1, pending: MAX_COUNT, expected: MAX_COUNT, tx: 0 }));
        // A count of 2^20 is out of range (M3) and more than any pending count (the underflow
        // is what is reported).
        assert!(arrive(MAX_COUNT + 1).apply(full).ub.is_some_and(|u| u.contains("underflow")));
        let one_below = MbState { phase: 0, pending: MAX_COUNT - 1, expected: 1, tx: 0 }.encode();
        let raised = MbUpdate::IncPending.apply(one_below);
        assert_eq!(raised.ub, None);
        assert_eq!(MbState::decode(raised.write.unwrap()).unwrap().pending, MAX_COUNT);
        let over = MbUpdate::IncPending.apply(raised.write.unwrap());
        assert_eq!(
            over.ub.as_deref(),
            Some("M3: the pending count overflows after cp.async.mbarrier.arrive: 1048575 + 1 is above 2^20-1 (PTX ISA §9.7.9.25.3.4)")
        );
        assert_eq!(MbState::decode(over.write.unwrap()).unwrap().pending, MAX_COUNT, "kept in range");
        // The case of the issue: 65535, raised by one, is no overflow.
        assert_eq!(MbUpdate::IncPending.apply(MbState::initialised(PACKED_COUNT)).ub, None);
    }

    #[test]
    fn a_phase_completes_when_arrivals_and_transactions_are_done() {
        let v = MbState::initialised(1);
        let a = MbUpdate::Arrive { count: 1, expect_tx: 16, no_complete: false, drop: false }.apply(v);
        let s = MbState::decode(a.write.unwrap()).unwrap();
        assert_eq!((s.phase, s.pending, s.tx), (0, 0, 16), "the expected bytes hold the phase open");
        let c = MbUpdate::CompleteTx { bytes: 16 }.apply(a.write.unwrap());
        let s = MbState::decode(c.write.unwrap()).unwrap();
        assert_eq!((s.phase, s.pending, s.tx), (1, 1, 0));
        let w = MbUpdate::Wait { parity: true, operand: 0 }.apply(c.write.unwrap());
        assert_eq!(w.result, 1);
        let w = MbUpdate::Wait { parity: true, operand: 0 }.apply(v);
        assert_eq!(w.result, 0);
        let w = MbUpdate::Wait { parity: true, operand: 1 }.apply(v);
        assert_eq!(w.result, 1, "the phase before phase 0 counts as complete");
    }

    #[test]
    fn misuse_is_undefined() {
        assert!(MbUpdate::Arrive { count: 1, expect_tx: 0, no_complete: false, drop: false }.apply(0).ub.unwrap().starts_with("M1"));
        assert!(MbUpdate::Init { count: 1 }.apply(MbState::initialised(1)).ub.unwrap().starts_with("M2"));
        let v = MbState::initialised(1);
        assert!(MbUpdate::Arrive { count: 1, expect_tx: 0, no_complete: true, drop: false }.apply(v).ub.unwrap().starts_with("M4"));
        assert!(MbUpdate::Arrive { count: 2, expect_tx: 0, no_complete: false, drop: false }.apply(v).ub.unwrap().contains("underflow"));
        let later = MbState { phase: 3, pending: 1, expected: 1, tx: 0 }.encode();
        assert!(MbUpdate::Wait { parity: false, operand: 1 }.apply(later).ub.unwrap().starts_with("M6"));
        assert!(MbUpdate::Wait { parity: false, operand: 2 }.apply(later).ub.is_none());
    }
}
