//! Word elision surveyed from the runs: for programs that address memory through registers
//! (kernels), the words every run touches together.
//!
//! [`words`](super::words) elides a word when every instruction touching it touches a kept
//! word the same way, which it can only tell where addresses are static. A kernel computes its
//! addresses (a TMA box at coordinates of the lap, a `wgmma` chunk from its descriptor, a lane's
//! own fragment), so which words go together is a fact of its runs: the enumeration records,
//! for every access, the instruction instance that makes it (a node of the thread's tree of
//! runs), and words touched by exactly the same instances in the same way (the same role, the
//! same footprint relative to the word, the same space) are interchangeable, as a static
//! mirror is. What a survey may elide is what `words` may: a word whose value never matters to
//! a kept word (no thread's load, read-modify-write or mbarrier operation touches it, no final
//! state shows it, no copy feeds it into a word kept for its value), that has no alias, is
//! touched by no reduction, masked copy, strong or sub-word access.
//!
//! Which words are touched together is only known once the runs are: the caller
//! ([`super::explore_until`]) enumerates with a guessed elision, derives the elision from what
//! the enumeration touched, and enumerates again until the elision derived is the one used
//! (each round refines the last: the accesses of every round count). The runs of the last
//! round are the runs of the program: elided words are never read by a thread, so no value a
//! run branches on depends on the elision.

use super::words::WordFate;
use crate::program::{AccessSpace, CopyKind, Op, Program, Sem};
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

/// The accesses of one word, as an order-free summary of their hashes (two sums of independent
/// mixes and the count): words with the same accesses have the same signature, and two words
/// with different ones collide only with probability about 2^-128.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct Signature {
    sum: u64,
    mixed: u64,
    count: u64,
}

impl Signature {
    fn add(&mut self, h: u64) {
        self.sum = self.sum.wrapping_add(h);
        self.mixed = self.mixed.wrapping_add(mix(h ^ 0x5851_F42D_4C95_7F2D));
        self.count += 1;
    }

    fn merge(&mut self, o: &Signature) {
        self.sum = self.sum.wrapping_add(o.sum);
        self.mixed = self.mixed.wrapping_add(o.mixed);
        self.count += o.count;
    }
}

/// SplitMix64's finalizer: the survey hashes millions of accesses, SipHash's care is not needed.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A hasher for the survey's maps of locations and instances.
#[derive(Default)]
struct MixHasher(u64);

impl std::hash::Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix(self.0 ^ u64::from(b));
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = mix(self.0 ^ x);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}

type Fast = BuildHasherDefault<MixHasher>;

/// What one thread's enumeration touched (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct Touched {
    /// Per location: its accesses (instance, role, footprint, space), and the hash of the last
    /// one (an instance touching a word twice the same way counts once).
    accesses: HashMap<usize, (Signature, u64), Fast>,
    /// Locations whose value matters, or whose accesses are not interchangeable.
    kept: HashSet<usize, Fast>,
    /// (source word, destination word) of every word a copy moved: a kept destination needs
    /// its source's value.
    flows: HashSet<(usize, usize), Fast>,
}

impl Touched {
    /// Add what another enumeration (another thread, another round) touched.
    pub fn absorb(&mut self, other: Touched) {
        for (l, (sig, _)) in other.accesses {
            self.accesses.entry(l).or_default().0.merge(&sig);
        }
        self.kept.extend(other.kept);
        self.flows.extend(other.flows);
    }

    /// The elision these accesses allow: words with the same accesses mirror the first of them.
    pub fn fates(&self, program: &Program) -> Vec<WordFate> {
        let mut keep = super::words::always_kept(program);
        for &l in &self.kept {
            keep[l] = true;
        }
        // A copy that feeds a kept word keeps the word it reads, through chains of copies.
        loop {
            let mut changed = false;
            for &(src, dst) in &self.flows {
                if keep[dst] && !keep[src] {
                    keep[src] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let mut out = vec![WordFate::Untouched; keep.len()];
        let mut first_with: HashMap<Signature, usize, Fast> = HashMap::default();
        for (l, fate) in out.iter_mut().enumerate() {
            if keep[l] {
                *fate = WordFate::Kept;
                continue;
            }
            let Some((sig, _)) = self.accesses.get(&l) else { continue };
            match first_with.get(sig) {
                Some(&first) => *fate = WordFate::Mirrors(first),
                None => {
                    first_with.insert(*sig, l);
                    *fate = WordFate::Kept;
                }
            }
        }
        out
    }
}

/// The survey of one thread's enumeration in progress: the instance being run, and what was
/// touched so far.
pub(super) struct Survey {
    /// Tells this enumeration's instances from those of other rounds and threads.
    salt: u64,
    /// The instance being run (a serial number per step of the enumeration) and its instruction.
    serial: Cell<u64>,
    pc: Cell<usize>,
    touched: RefCell<Touched>,
}

/// How an access takes part in its instruction, when its word may be elided.
#[derive(Clone, Copy)]
enum Role {
    Store,
    MatrixLoad,
    MatrixStore,
    Wgmma,
    CopySource,
    CopyDestination,
}

impl Survey {
    pub(super) fn new(salt: u64) -> Survey {
        Survey { salt, serial: Cell::new(0), pc: Cell::new(0), touched: RefCell::default() }
    }

    /// A new instance of the instruction at `pc` begins.
    pub(super) fn begin(&self, pc: usize) {
        self.serial.set(self.serial.get() + 1);
        self.pc.set(pc);
    }

    pub(super) fn into_touched(self) -> Touched {
        self.touched.into_inner()
    }

    /// A word the current instance touches and whose value matters (or whose access is of a
    /// kind that is never elided).
    pub(super) fn keep(&self, loc: usize) {
        self.touched.borrow_mut().kept.insert(loc);
    }

    /// An access of the current instance (of the instruction `op`) to `loc`, with the
    /// footprint `range` (relative to its variable), in `space`.
    pub(super) fn note(&self, program: &Program, op: &Op, loc: usize, range: (i64, i64), ub: bool, space: AccessSpace) {
        let Some(role) = role(op, space) else { return self.keep(loc) };
        let off = program.locations[loc].offset;
        // The footprint relative to the word: its own four bytes, or the instruction's range.
        let footprint = if range == (off, off + 4) { [u64::MAX; 2] } else { [range.0 as u64, range.1 as u64] };
        let fields = [self.salt, self.serial.get(), role as u64, footprint[0], footprint[1], u64::from(ub), space as u64];
        let h = fields.iter().fold(0, |h, &f| mix(h ^ f));
        let mut t = self.touched.borrow_mut();
        let (sig, last) = t.accesses.entry(loc).or_default();
        if *last != h || sig.count == 0 {
            sig.add(h);
            *last = h;
        }
    }

    /// A copy moves the value of word `src` into word `dst`.
    pub(super) fn flow(&self, src: usize, dst: usize) {
        self.touched.borrow_mut().flows.insert((src, dst));
    }

    /// The instruction of the current instance.
    pub(super) fn pc(&self) -> usize {
        self.pc.get()
    }
}

/// The role of an access of `op` in `space` whose word may be elided; None: the word is kept.
fn role(op: &Op, space: AccessSpace) -> Option<Role> {
    let whole_word = |ty: &Option<crate::program::Ty>| ty.is_none_or(|t| t.bits == 32);
    match op {
        Op::Store { ty, sem: Sem::Weak, .. } if whole_word(ty) => Some(Role::Store),
        Op::StoreVector { sem: Sem::Weak, .. } => Some(Role::Store),
        Op::Matrix(m) => Some(if m.store { Role::MatrixStore } else { Role::MatrixLoad }),
        Op::Wgmma { .. } => Some(Role::Wgmma),
        Op::AsyncCopy(c) if !matches!(c.kind, CopyKind::Reduce(..)) && c.byte_mask.is_none() && c.src_space != c.dst_space => {
            if space == c.src_space {
                Some(Role::CopySource)
            } else if space == c.dst_space {
                Some(Role::CopyDestination)
            } else {
                None
            }
        }
        _ => None,
    }
}
