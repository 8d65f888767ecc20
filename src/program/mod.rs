//! The program: a litmus test with meaning attached to every instruction.
//!
//! `lower` turns the syntax tree into this form, rejecting (with a span) anything the model does
//! not cover. Later stages never look at text again: they see locations as indices, registers as
//! per-thread indices, labels as instruction indices, and qualifiers as enums.
//! The instruction set (`Op` and its operands), which every stage matches on, is `ops`; the
//! lowering and the helpers live in the other submodules.

pub mod bits;
pub mod load;
mod lower;
pub mod matrix;
pub mod mbarrier;
pub mod naming;
mod ops;
pub mod tensor;
pub mod types;
pub mod unknown;

pub use bits::PrmtMode;
pub use lower::lower;
pub use matrix::{MatrixAccess, MatrixShape};
pub use ops::*;
pub use tensor::{BoxWord, MapOperand, Swizzle, TensorCopy, TensorMap};
pub use types::Ty;

use crate::diag::{SourceFile, Span};
use crate::litmus::ast::{CmpOp, Quantifier};

/// A memory proxy (PTX ISA §8.6). Surface, texture and constant are the proxies Dat3M and the
/// mixed-proxy paper model; `Generic` is the default of every ordinary access; `Async` is the
/// proxy of the bulk asynchronous copies (PTX ISA §9.7.9.25.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Proxy {
    Generic,
    Surface,
    Texture,
    Constant,
    Async,
}

impl Proxy {
    /// The cat tag naming this proxy.
    pub fn tag(self) -> &'static str {
        match self {
            Proxy::Generic => "GEN",
            Proxy::Surface => "SUR",
            Proxy::Texture => "TEX",
            Proxy::Constant => "CON",
            Proxy::Async => "ASYNC",
        }
    }
}

/// Memory-operation semantics (PTX ISA §8.4, `.sem`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Sem {
    Weak,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    Sc,
}

/// Scopes (PTX ISA §8.5), narrowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum Scope {
    Cta,
    /// `.cluster` (sm_90): the threads of the CTAs of one cluster.
    Cluster,
    Gpu,
    Sys,
}

impl Scope {
    pub fn tag(self) -> &'static str {
        match self {
            Scope::Cta => "CTA",
            Scope::Cluster => "CLUSTER",
            Scope::Gpu => "GPU",
            Scope::Sys => "SYS",
        }
    }
}

/// Where a thread runs: the ids of its enclosing CTA, cluster and GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Placement {
    pub cta: i64,
    /// The cluster id. A test that names no cluster puts each CTA in its own cluster (PTX ISA
    /// §2.2.2: without cluster dimensions a launch is an implicit 1x1x1 cluster).
    pub cluster: i64,
    pub gpu: i64,
}

impl Placement {
    /// Whether a thread at `other` is inside `scope` as seen from this thread.
    pub fn includes(&self, scope: Scope, other: &Placement) -> bool {
        match scope {
            Scope::Cta => self.gpu == other.gpu && self.cta == other.cta,
            Scope::Cluster => self.gpu == other.gpu && self.cluster == other.cluster,
            Scope::Gpu => self.gpu == other.gpu,
            Scope::Sys => true,
        }
    }
}

/// The state space a variable lives in (PTX ISA §5.1). Addresses are canonical
/// (space, owner CTA, offset) triples (digest AMBIG-15): the `.shared::cta` and `.shared::cluster`
/// windows name the same bytes, and are not aliases of each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Space {
    Global,
    /// Shared memory of the CTA with this id (`.shared::cta` for its own threads, reachable by
    /// the other CTAs of its cluster through `.shared::cluster`).
    Shared {
        cta: i64,
    },
    /// A kernel parameter (`.param` of an entry): read-only for the whole grid (PTX ISA §5.1,
    /// Table 7), so a read of it is its bytes, with no memory event (`Program::param_bytes`).
    Param,
}

/// What a variable holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VariableKind {
    /// Data words (each 4-byte word is one location).
    Data,
    /// 8-byte mbarrier objects (PTX ISA §9.7.13.15.1), one per 8-byte slot (an array of
    /// mbarriers, addressed by register arithmetic, holds several): one location per object,
    /// whose value is the encoded [`crate::program::mbarrier::MbState`].
    Mbarrier,
}

/// A declared variable: a named range of bytes in one state space.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variable {
    pub name: String,
    /// Size in bytes (a multiple of 4; of 8 for mbarriers).
    pub size: i64,
    pub space: Space,
    pub align: i64,
    pub kind: VariableKind,
    /// Index of the location of its first word; the others follow consecutively.
    pub first_location: usize,
    /// The address of its byte 0 (see [`ADDRESS_BASE`]): variables occupy consecutive slots of
    /// [`ADDRESS_SLOT`] bytes in declaration order, a large one as many slots as it needs.
    pub base: i64,
    pub span: Span,
}

/// A declared (virtual) location. Several virtual locations may map to one physical location
/// (aliases, PTX ISA §8.2.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The variable this word belongs to, and its byte offset in it.
    pub variable: usize,
    pub offset: i64,
    /// Index of the physical location (into `Program::physical`).
    pub physical: usize,
    /// The generic virtual address this name stands for: equal for a name and its non-generic
    /// (surface/texture/constant) aliases, distinct for `generic aliases` synonyms.
    pub generic: usize,
    pub span: Span,
}

/// A physical memory location and its initial value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhysicalLocation {
    /// The location of its first declaration, whose name reports use ([`physical_name`]).
    pub first: usize,
    pub init: i64,
    /// The word's type (32 bits, the signedness of the first typed access naming it in the
    /// program text), None when no typed access names it. Typed writes store the word's 32-bit
    /// pattern normalized to this type (`.u32` when None); conditions compare it at this type.
    pub ty: Option<Ty>,
}

/// Index of a register inside its thread.
pub type Reg = usize;

/// An operand that yields a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    Const(i64),
    Reg(Reg),
}

/// An address operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Address {
    Location(usize),
    /// Byte `1..=3` of the word at a location: the address of an 8- or 16-bit access inside a
    /// word (`[s+1]`, `[s+2]`).
    Byte(usize, i64),
    /// The address held in a register plus a byte offset (an address dependency).
    Reg(Reg, i64),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instr {
    pub op: Op,
    pub span: Span,
    /// The instruction as written, for reports.
    pub text: String,
    pub line: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thread {
    /// The `N` of `PN`.
    pub id: usize,
    /// The lane, for a thread of a warp column (`P1.7`: lane 7 of column P1).
    pub lane: Option<usize>,
    pub placement: Placement,
    pub code: Vec<Instr>,
    /// Register names; a register's index is its position here.
    pub registers: Vec<String>,
    /// Initial register values (uninitialised registers are 0, as in Dat3M).
    pub reg_init: Vec<i64>,
    /// The special registers the code reads (`%tid.x`), with the values its placement gives them.
    pub specials: std::collections::BTreeMap<String, i64>,
    pub span: Span,
    /// The warp of the thread in its CTA (its linear tid / 32).
    pub warp: i64,
}

impl Thread {
    /// `P1`, or `P1.7` for lane 7 of warp column P1: how reports name the thread.
    pub fn name(&self) -> String {
        crate::litmus::ast::thread_name(self.id, self.lane)
    }

    /// Where the thread's code starts in the source: threads that run one body (a kernel's,
    /// the lanes of a warp column) start at one place; None for a thread without code.
    pub fn body_start(&self) -> Option<usize> {
        self.code.first().map(|i| i.span.start)
    }

    /// A name for generated code: `P1`, or `P1_7` for lane 7 of warp column P1.
    pub fn ident(&self) -> String {
        match self.lane {
            Some(l) => format!("P{}_{l}", self.id),
            None => format!("P{}", self.id),
        }
    }

    /// The thread as herd7's state lists prefix a register: `1`, or `1.7` for a lane.
    pub fn log_id(&self) -> String {
        match self.lane {
            Some(l) => format!("{}.{l}", self.id),
            None => self.id.to_string(),
        }
    }
}

/// A value named by a condition.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Observable {
    /// (thread index, register index)
    Register(usize, Reg),
    /// Final value of a physical location.
    Location(usize),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CondTerm {
    Obs(Observable),
    Const(i64),
}

/// A proposition over the final state, resolved to observables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Prop {
    True,
    False,
    Not(Box<Prop>),
    And(Box<Prop>, Box<Prop>),
    Or(Box<Prop>, Box<Prop>),
    Cmp(CondTerm, CmpOp, CondTerm),
}

impl Prop {
    /// Evaluate under a lookup of observables.
    pub fn eval(&self, get: &dyn Fn(&Observable) -> i64) -> bool {
        let term = |t: &CondTerm| match t {
            CondTerm::Obs(o) => get(o),
            CondTerm::Const(c) => *c,
        };
        match self {
            Prop::True => true,
            Prop::False => false,
            Prop::Not(p) => !p.eval(get),
            Prop::And(a, b) => a.eval(get) && b.eval(get),
            Prop::Or(a, b) => a.eval(get) || b.eval(get),
            Prop::Cmp(a, op, b) => {
                let (x, y) = (term(a), term(b));
                match op {
                    CmpOp::Eq => x == y,
                    CmpOp::Ne => x != y,
                    CmpOp::Lt => x < y,
                    CmpOp::Le => x <= y,
                    CmpOp::Gt => x > y,
                    CmpOp::Ge => x >= y,
                }
            }
        }
    }

    /// Whether the proposition can be true, and whether it can be false, when each observable
    /// takes some value of `values` (None: any value). Correlations between observables are
    /// ignored, so both answers over-approximate.
    pub fn may_be(&self, values: &dyn Fn(&Observable) -> Option<Vec<i64>>) -> (bool, bool) {
        let term = |t: &CondTerm| match t {
            CondTerm::Obs(o) => values(o),
            CondTerm::Const(c) => Some(vec![*c]),
        };
        match self {
            Prop::True => (true, false),
            Prop::False => (false, true),
            Prop::Not(p) => {
                let (t, f) = p.may_be(values);
                (f, t)
            }
            Prop::And(a, b) => {
                let (at, af) = a.may_be(values);
                let (bt, bf) = b.may_be(values);
                (at && bt, af || bf)
            }
            Prop::Or(a, b) => {
                let (at, af) = a.may_be(values);
                let (bt, bf) = b.may_be(values);
                (at || bt, af && bf)
            }
            Prop::Cmp(a, op, b) => match (term(a), term(b)) {
                (Some(xs), Some(ys)) => {
                    let holds = |x: i64, y: i64| Prop::Cmp(CondTerm::Const(x), *op, CondTerm::Const(y)).eval(&|_| 0);
                    let t = xs.iter().any(|&x| ys.iter().any(|&y| holds(x, y)));
                    let f = xs.iter().any(|&x| ys.iter().any(|&y| !holds(x, y)));
                    (t, f)
                }
                _ => (true, true),
            },
        }
    }

    /// Every observable the proposition mentions.
    pub fn observables(&self, out: &mut Vec<Observable>) {
        let mut term = |t: &CondTerm| {
            if let CondTerm::Obs(o) = t {
                if !out.contains(o) {
                    out.push(o.clone());
                }
            }
        };
        match self {
            Prop::True | Prop::False => {}
            Prop::Not(p) => p.observables(out),
            Prop::And(a, b) | Prop::Or(a, b) => {
                a.observables(out);
                b.observables(out);
            }
            Prop::Cmp(a, _, b) => {
                term(a);
                term(b);
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct Condition {
    pub quantifier: Quantifier,
    pub prop: Prop,
    /// The proposition as written, for the report's `Condition` line.
    pub text: String,
}

/// A litmus test ready for execution.
#[derive(Clone, Debug)]
pub struct Program {
    pub name: String,
    pub source: SourceFile,
    pub variables: Vec<Variable>,
    pub locations: Vec<Location>,
    pub physical: Vec<PhysicalLocation>,
    pub threads: Vec<Thread>,
    pub condition: Condition,
    pub filter: Option<Prop>,
    /// Observables listed in `locations [...]`, shown in every state.
    pub extra_observables: Vec<Observable>,
    /// Tensor maps declared in the init block.
    pub tensor_maps: Vec<TensorMap>,
    /// Where the unknown values of the program come from, by origin (`unknown::origin`).
    pub unknowns: Vec<unknown::UnknownOrigin>,
    /// What the lowering accepted but a reader should know (a condition naming a location no
    /// thread accesses), located in the test's source; front ends print them.
    pub warnings: Vec<crate::diag::Diagnostic>,
}

/// Base of the integer encoding of addresses: the first variable's byte 0 has this address,
/// far from the small integers litmus tests use, so registers can hold addresses and do byte
/// arithmetic on them.
pub const ADDRESS_BASE: i64 = 0x1000_0000;

/// What one word (location) of a declared variable costs to model, in bytes, as measured on a
/// test of 64 CTAs of 227 KB of shared memory each (its location, its physical location, and
/// the search's tables indexed by location): the rate `--max-memory` charges declarations at.
pub const BYTES_PER_WORD: u64 = 256;

/// Variables start at multiples of this many bytes past [`ADDRESS_BASE`] (256 KiB: more than a
/// CTA's shared memory, 227 KiB), so an address's low 18 bits are its offset in its variable, as
/// a real address's low bits are its offset in a suitably aligned buffer (a kernel's swizzle
/// XORs bits 4-9 of a shared address); 15,360 slots stay below 2^32, so 32-bit shared addresses
/// (`cvta.to.shared.u32`) keep every bit.
pub const ADDRESS_SLOT: i64 = 1 << 18;

/// The base address of a variable of `size` bytes declared after variables whose bases and sizes
/// end at `previous` (None: the first).
pub fn next_base(previous: Option<(i64, i64)>) -> i64 {
    match previous {
        None => ADDRESS_BASE,
        Some((base, size)) => {
            let slots = size.max(1).saturating_add(ADDRESS_SLOT - 1) / ADDRESS_SLOT;
            base.saturating_add(slots.saturating_mul(ADDRESS_SLOT))
        }
    }
}

/// A location's name: its variable's (`x`, `s`, `s@cta1`), or for the word at byte offset N
/// of a variable `s+N`. Computed, not stored: a variable of 200 KB has 51,200 words.
pub fn location_name(variables: &[Variable], locations: &[Location], l: usize) -> String {
    location_display(variables, locations, l).to_string()
}

/// [`location_name`] as something to format, without a string of its own (a digest writes
/// every word's name).
pub fn location_display<'p>(variables: &'p [Variable], locations: &[Location], l: usize) -> impl std::fmt::Display + 'p {
    struct Name<'a>(&'a str, i64);
    impl std::fmt::Display for Name<'_> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match self.1 {
                0 => f.write_str(self.0),
                off => write!(f, "{}+{off}", self.0),
            }
        }
    }
    let loc = &locations[l];
    Name(&variables[loc.variable].name, loc.offset)
}

/// The word of `var` that the name `NAME+N` gives with `digits` = `N`: a byte offset N > 0
/// written as [`location_name`] writes it (no sign, no leading zero), inside the variable and
/// at one of its words (4 bytes; 8 for an mbarrier array).
pub fn word_of(var: &Variable, digits: &str) -> Option<usize> {
    let offset: i64 = digits.parse().ok().filter(|&o: &i64| o > 0 && o.to_string() == digits)?;
    let stride = if var.kind == VariableKind::Mbarrier { 8 } else { 4 };
    (offset % stride == 0 && offset < var.size).then(|| var.first_location + (offset / stride) as usize)
}

/// A physical location's name in reports: that of the location that declared it first.
pub fn physical_name(variables: &[Variable], locations: &[Location], physical: &[PhysicalLocation], p: usize) -> String {
    location_name(variables, locations, physical[p].first)
}

impl Program {
    /// [`location_name`] of a location of this program.
    pub fn location_name(&self, l: usize) -> String {
        location_name(&self.variables, &self.locations, l)
    }

    /// The location [`location_name`] names `n`: a variable's first word (`s`), or the word at
    /// byte offset N of a variable (`s+N`, N > 0 written as `location_name` writes it).
    pub fn location_by_name(&self, n: &str) -> Option<usize> {
        let by_var = |name: &str| self.variables.iter().position(|v| v.name == name);
        if let Some(v) = by_var(n) {
            return Some(self.variables[v].first_location);
        }
        let (base, digits) = n.rsplit_once('+')?;
        word_of(&self.variables[by_var(base)?], digits)
    }

    /// [`physical_name`] of a physical location of this program.
    pub fn physical_name(&self, p: usize) -> String {
        physical_name(&self.variables, &self.locations, &self.physical, p)
    }

    /// The address of byte `offset` of variable `variable`.
    pub fn address(&self, variable: usize, offset: i64) -> i64 {
        self.variables[variable].base + offset
    }

    /// The (variable, byte offset) an address points into, if it is inside a variable.
    pub fn decode_address(&self, value: i64) -> Option<(usize, i64)> {
        decode_address(&self.variables, value)
    }

    /// The location (word) whose address is `value`, if any.
    pub fn location_at(&self, value: i64) -> Option<usize> {
        let (v, o) = self.decode_address(value)?;
        let var = &self.variables[v];
        if var.kind == VariableKind::Mbarrier {
            // One object per 8-byte slot (an array of mbarriers).
            return (o % 8 == 0).then_some(var.first_location + (o / 8) as usize);
        }
        (o % 4 == 0).then_some(var.first_location + (o / 4) as usize)
    }

    pub fn address_of(&self, loc: usize) -> i64 {
        self.address(self.locations[loc].variable, self.locations[loc].offset)
    }

    /// The cluster of a CTA: that of its threads, or its own implicit cluster when no thread of
    /// the test runs in it.
    pub fn cluster_of_cta(&self, cta: i64) -> i64 {
        self.threads.iter().find(|t| t.placement.cta == cta).map(|t| t.placement.cluster).unwrap_or(-1 - cta)
    }

    /// Byte offset of a shared variable in its CTA's shared-memory window: the variables of one
    /// CTA are laid out in declaration order, each at its alignment. CTAs that declare the same
    /// variables in the same order therefore have the same layout, as one kernel's CTAs do.
    pub fn window_offset(&self, var: usize) -> Option<i64> {
        let Space::Shared { cta } = self.variables[var].space else { return None };
        let mut end = 0i64;
        for (i, v) in self.variables.iter().enumerate() {
            if v.space != (Space::Shared { cta }) {
                continue;
            }
            let start = (end + v.align - 1) / v.align * v.align;
            if i == var {
                return Some(start);
            }
            end = start + v.size;
        }
        None
    }

    /// The address at the same CTA-relative offset as `addr`, in the shared memory of `cta`
    /// (what `mapa` computes, and where a multicast copy writes).
    pub fn same_offset_in_cta(&self, addr: i64, cta: i64) -> Option<i64> {
        let (var, off) = self.decode_address(addr)?;
        let window = self.window_offset(var)? + off;
        (0..self.variables.len()).find_map(|v| {
            let w = self.window_offset(v)?;
            (self.variables[v].space == (Space::Shared { cta }) && w <= window && window < w + self.variables[v].size)
                .then(|| self.address(v, window - w))
        })
    }

    /// The CTA of cluster rank `rank` in `cluster`: the CTAs of a cluster (those with threads or
    /// shared variables in the test) ranked by id (`%cluster_ctarank`, digest AMBIG-22).
    pub fn cta_of_rank(&self, cluster: i64, rank: i64) -> Option<i64> {
        let placements: Vec<Placement> = self.threads.iter().map(|t| t.placement).collect();
        let ctas = cluster_ctas(&placements, &self.variables, cluster);
        usize::try_from(rank).ok().and_then(|r| ctas.get(r).copied())
    }

    /// The `bytes` bytes (1 to 8) at `addr` inside a kernel parameter (see [`param_bytes`]).
    pub fn param_bytes(&self, addr: i64, bytes: i64) -> Option<i64> {
        param_bytes(&self.variables, &self.locations, &self.physical, addr, bytes)
    }

    /// Whether a variable is a tensor map's own word.
    pub fn is_tensor_map(&self, var: usize) -> bool {
        self.tensor_maps.iter().any(|m| m.variable == var)
    }

    /// The variable of a location.
    pub fn variable_of(&self, loc: usize) -> &Variable {
        &self.variables[self.locations[loc].variable]
    }

    /// How an observable is printed in states (`1:r0`, `x`).
    pub fn observable_name(&self, o: &Observable) -> String {
        match o {
            Observable::Register(t, r) => format!("{}:{}", self.threads[*t].log_id(), self.threads[*t].registers[*r]),
            Observable::Location(p) => self.physical_name(*p),
        }
    }
}

/// The `bytes` bytes (1 to 8) at `addr` inside a kernel parameter, little-endian; an unknown
/// value where a word they touch is unknown; None where `addr` is not inside a parameter or the
/// bytes run past its end.
pub fn param_bytes(variables: &[Variable], locations: &[Location], physical: &[PhysicalLocation], addr: i64, bytes: i64) -> Option<i64> {
    let (v, off) = decode_address(variables, addr)?;
    let var = &variables[v];
    if var.space != Space::Param || !(1..=8).contains(&bytes) || off + bytes > var.size {
        return None;
    }
    let mut value: u64 = 0;
    for k in 0..bytes {
        let o = off + k;
        let word = physical[locations[var.first_location + (o / 4) as usize].physical].init;
        if unknown::is_unknown(word) {
            return Some(word);
        }
        value |= ((word as u64 >> (8 * (o % 4))) & 0xFF) << (8 * k);
    }
    Some(value as i64)
}

/// The (variable, byte offset) of an address among `variables` (in base order), if it is inside
/// one.
pub fn decode_address(variables: &[Variable], value: i64) -> Option<(usize, i64)> {
    let v = variables.partition_point(|v| v.base <= value).checked_sub(1)?;
    let o = value - variables[v].base;
    (o < variables[v].size).then_some((v, o))
}

/// The variable and byte of an address past the end of a variable or misaligned in it, for a
/// message: the variable whose slot holds it.
pub fn slot_of(variables: &[Variable], value: i64) -> Option<(usize, i64)> {
    let v = variables.partition_point(|v| v.base <= value).checked_sub(1)?;
    let o = value - variables[v].base;
    (o < (next_base(Some((variables[v].base, variables[v].size))) - variables[v].base)).then_some((v, o))
}

/// The CTAs of a cluster in rank order (`%cluster_ctarank`, `mapa`): the CTAs of its threads and of
/// its shared variables, by CTA id. A CTA no thread runs in is its own cluster.
pub fn cluster_ctas(placements: &[Placement], variables: &[Variable], cluster: i64) -> Vec<i64> {
    let cluster_of = |cta: i64| placements.iter().find(|p| p.cta == cta).map_or(-1 - cta, |p| p.cluster);
    let mut ctas: Vec<i64> = placements.iter().filter(|p| p.cluster == cluster).map(|p| p.cta).collect();
    for v in variables {
        if let Space::Shared { cta } = v.space {
            if cluster_of(cta) == cluster {
                ctas.push(cta);
            }
        }
    }
    ctas.sort_unstable();
    ctas.dedup();
    ctas
}
