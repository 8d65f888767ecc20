//! The program: a litmus test with meaning attached to every instruction.
//!
//! `lower` turns the syntax tree into this form, rejecting (with a span) anything the model does
//! not cover. Later stages never look at text again: they see locations as indices, registers as
//! per-thread indices, labels as instruction indices, and qualifiers as enums.

mod lower;

pub use lower::lower;

use crate::diag::{SourceFile, Span};
use crate::litmus::ast::{CmpOp, Quantifier};

/// A memory proxy (PTX ISA §8.6). Surface, texture and constant are the proxies Dat3M and the
/// mixed-proxy paper model; `Generic` is the default of every ordinary access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Proxy {
    Generic,
    Surface,
    Texture,
    Constant,
}

impl Proxy {
    /// The cat tag naming this proxy.
    pub fn tag(self) -> &'static str {
        match self {
            Proxy::Generic => "GEN",
            Proxy::Surface => "SUR",
            Proxy::Texture => "TEX",
            Proxy::Constant => "CON",
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

/// A declared (virtual) location. Several virtual locations may map to one physical location
/// (aliases, PTX ISA §8.2.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub name: String,
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
    /// Name of the first declaration, used in reports.
    pub name: String,
    pub init: i64,
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
    /// The address held in a register (an address dependency).
    Reg(Reg),
}

/// Read-modify-write operations of `atom` and `red`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum RmwOp {
    Add,
    Sub,
    Mul,
    Div,
    And,
    Or,
    Xor,
    Min,
    Max,
    Inc,
    Dec,
    Exch,
    Cas,
}

/// Register-only arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalOp {
    Mov,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Min,
    Max,
    /// `setp.<cmp>`: 1 if the comparison holds, else 0.
    Set(CmpOp),
}

/// Thread fences (PTX ISA §9.7.13.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum FenceKind {
    /// `fence.sc` and `membar`.
    Sc,
    /// `fence.acq_rel` (also `fence` without `.sem`).
    AcqRel,
    /// `fence.acquire` (PTX 8.6).
    Acquire,
    /// `fence.release` (PTX 8.6).
    Release,
}

/// Semantics of one instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    Load {
        dst: Reg,
        addr: Address,
        sem: Sem,
        scope: Option<Scope>,
        proxy: Proxy,
    },
    Store {
        addr: Address,
        value: Value,
        sem: Sem,
        scope: Option<Scope>,
        proxy: Proxy,
    },
    /// `atom` (with a destination) or `red` (without). `operands` is `[v]`, or `[cmp, new]` for cas.
    Rmw {
        dst: Option<Reg>,
        addr: Address,
        op: RmwOp,
        operands: Vec<Value>,
        sem: Sem,
        scope: Scope,
        proxy: Proxy,
    },
    Fence {
        kind: FenceKind,
        scope: Scope,
    },
    /// `fence.proxy.<proxy>`: orders accesses of this thread's CTA through `proxy` with generic ones.
    ProxyFence {
        proxy: Proxy,
    },
    /// `fence.proxy.alias`.
    AliasFence,
    /// `bar.cta.sync|arrive N[, id[, count]]` in Dat3M's meaning: `instance` is the static
    /// instance id matching barrier executions; `id`/`count` are the PTX barrier resource and
    /// thread count when given.
    Barrier {
        instance: i64,
        id: Option<Value>,
        count: Option<Value>,
        arrive: bool,
    },
    Local {
        dst: Reg,
        op: LocalOp,
        a: Value,
        b: Value,
    },
    /// Conditional or unconditional jump to an instruction index (`code.len()` = thread exit).
    Branch {
        cond: Option<(CmpOp, Value, Value)>,
        target: usize,
    },
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
    pub placement: Placement,
    pub code: Vec<Instr>,
    /// Register names; a register's index is its position here.
    pub registers: Vec<String>,
    /// Initial register values (uninitialised registers are 0, as in Dat3M).
    pub reg_init: Vec<i64>,
    pub span: Span,
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
    pub locations: Vec<Location>,
    pub physical: Vec<PhysicalLocation>,
    pub threads: Vec<Thread>,
    pub condition: Condition,
    pub filter: Option<Prop>,
    /// Observables listed in `locations [...]`, shown in every state.
    pub extra_observables: Vec<Observable>,
}

/// Base of the integer encoding of addresses: the address of location `i` is
/// `ADDRESS_BASE + i * ADDRESS_STRIDE`, far from the small integers litmus tests use.
pub const ADDRESS_BASE: i64 = 0x1000_0000;
pub const ADDRESS_STRIDE: i64 = 0x100;

impl Program {
    /// The location whose address is `value`, if any.
    pub fn location_at(&self, value: i64) -> Option<usize> {
        let off = value.checked_sub(ADDRESS_BASE)?;
        if off < 0 || off % ADDRESS_STRIDE != 0 {
            return None;
        }
        let idx = (off / ADDRESS_STRIDE) as usize;
        (idx < self.locations.len()).then_some(idx)
    }

    pub fn address_of(loc: usize) -> i64 {
        ADDRESS_BASE + loc as i64 * ADDRESS_STRIDE
    }

    /// How an observable is printed in states (`1:r0`, `x`).
    pub fn observable_name(&self, o: &Observable) -> String {
        match o {
            Observable::Register(t, r) => format!("{}:{}", self.threads[*t].id, self.threads[*t].registers[*r]),
            Observable::Location(p) => self.physical[*p].name.clone(),
        }
    }
}
