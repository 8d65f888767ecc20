//! The program: a litmus test with meaning attached to every instruction.
//!
//! `lower` turns the syntax tree into this form, rejecting (with a span) anything the model does
//! not cover. Later stages never look at text again: they see locations as indices, registers as
//! per-thread indices, labels as instruction indices, and qualifiers as enums.
//! Kept in one file past 1,200 lines: it is the `Program` type and the instruction set (`Op` and
//! its operands), which every stage matches on; the lowering and the helpers live in submodules.

pub mod bits;
pub mod load;
mod lower;
pub mod matrix;
pub mod mbarrier;
pub mod naming;
pub mod tensor;
pub mod types;
pub mod unknown;

pub use bits::PrmtMode;
pub use lower::lower;
pub use matrix::{MatrixAccess, MatrixShape};
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

impl RmwOp {
    /// The operation a PTX qualifier names (`add`, `exch`, `cas`, ...).
    pub fn from_name(name: &str) -> Option<RmwOp> {
        Some(match name {
            "add" => RmwOp::Add,
            "sub" => RmwOp::Sub,
            "mul" => RmwOp::Mul,
            "div" => RmwOp::Div,
            "and" => RmwOp::And,
            "or" => RmwOp::Or,
            "xor" => RmwOp::Xor,
            "min" => RmwOp::Min,
            "max" => RmwOp::Max,
            "inc" => RmwOp::Inc,
            "dec" => RmwOp::Dec,
            "exch" => RmwOp::Exch,
            "cas" => RmwOp::Cas,
            _ => return None,
        })
    }
}

/// The reduction operations of `cp.reduce.async.bulk{.tensor}` (PTX ISA §9.7.9.25.4.2).
pub const REDUCTION_NAMES: [&str; 8] = ["add", "min", "max", "inc", "dec", "and", "or", "xor"];

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
    /// `mul.wide`: the whole product of two values of the (16- or 32-bit) type, at twice its width.
    MulWide,
    /// `mul.hi`: the high half of the whole product, at the type's width.
    MulHi,
    /// `mad.lo`: `a * b + c` at the type's width (`c` is the third operand).
    Mad,
    /// `mad.wide`: the whole product of `a` and `b` plus `c`, at twice the type's width.
    MadWide,
    /// `selp`: `a` when the predicate `c` is non-zero, else `b`.
    Selp,
    /// `cvt.<type>.<from>`: the value read at `from` (truncated, or zero- or sign-extended),
    /// then written at the instruction's type.
    Cvt(Ty),
    /// `mapa` of an address or rank in a register: the address at the same CTA-relative offset
    /// in the CTA of rank `b` of the thread's cluster (computed by the run, which knows the
    /// program; constant operands are mapped by lowering instead).
    Mapa,
    /// `elect.sync` with a membermask in a register (`a`): the leader is the lowest lane of
    /// `lanes` (the warp's lanes the test occupies) that the membermask selects; the result is
    /// its lane id, or with `is_leader` whether it is `lane` (1 or 0).
    Elect {
        lanes: u32,
        lane: u32,
        is_leader: bool,
    },
    /// `bfe.<type> d, a, b, c` (PTX ISA §9.7.1.19): the bit field of `a` at position `b`, `c`
    /// bits long, zero- or sign-extended (`bits::compute` has the arithmetic of these).
    Bfe,
    /// `bfi.b32|b64 f, a, b, c, d` (§9.7.1.20): `a` inserted into `b`; the third operand holds the
    /// position and length as [`bits::bfi_field`] packs them.
    Bfi,
    /// The field operand of `bfi` from a position `a` and a length `b` in registers.
    BfiField,
    /// `brev.b32|b64` (§9.7.1.18).
    Brev,
    /// `clz.b32|b64` (§9.7.1.15): a `.u32` count.
    Clz,
    /// `popc.b32|b64` (§9.7.1.14): a `.u32` count.
    Popc,
    /// `bfind{.shiftamt}.<type>` (§9.7.1.16): a `.u32` position.
    Bfind {
        shiftamt: bool,
    },
    /// `prmt.b32{.mode} d, a, b, c` (Data Movement and Conversion Instructions: prmt).
    Prmt(PrmtMode),
    /// `lop3.b32 d, a, b, c, immLut` (Logic and Shift Instructions: lop3).
    Lop3(u8),
    /// The predicate of `lop3.or|and.b32 d|p, a, b, c, immLut, q`: `(a != 0) or|and b`, with `a`
    /// the `d` just computed.
    Lop3Pred {
        or: bool,
    },
    /// `shf.l|r.clamp|wrap.b32 d, a, b, c` (Logic and Shift Instructions: shf).
    Shf {
        left: bool,
        clamp: bool,
    },
    /// `bmsk.clamp|wrap.b32 d, a, b` (§9.7.1.22).
    Bmsk {
        clamp: bool,
    },
    /// `szext.clamp|wrap.u32|s32 d, a, b` (§9.7.1.21).
    Szext {
        clamp: bool,
    },
    /// `mul24.lo|hi.u32|s32` (§9.7.1.5).
    Mul24 {
        hi: bool,
    },
    /// `mad24.lo|hi{.sat}.u32|s32` (§9.7.1.6; `.sat` only with `.hi.s32`).
    Mad24 {
        hi: bool,
        sat: bool,
    },
    /// `sad.<type> d, a, b, c` (§9.7.1.7): `c + |a - b|`.
    Sad,
    /// `cnot.b16|b32|b64` (Logic and Shift Instructions: cnot): 1 when `a` is 0, else 0.
    Cnot,
    /// `abs.s16|s32|s64` (§9.7.1.10).
    Abs,
    /// `min.relu.s32` / `max.relu.s32` (§9.7.1.12-13): the result clamped to 0 if negative.
    Relu {
        max: bool,
    },
}

impl LocalOp {
    /// Whether the operation reads its third operand `c` (the addend of `mad`, the predicate of
    /// `selp`, the third source of the bit operations that have one).
    pub fn ternary(self) -> bool {
        matches!(
            self,
            LocalOp::Mad
                | LocalOp::MadWide
                | LocalOp::Selp
                | LocalOp::Bfe
                | LocalOp::Bfi
                | LocalOp::Prmt(_)
                | LocalOp::Lop3(_)
                | LocalOp::Shf { .. }
                | LocalOp::Mad24 { .. }
                | LocalOp::Sad
        )
    }
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

/// The state-space qualifier an instruction uses for an address (PTX ISA §5.1, §6.4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum AccessSpace {
    /// No qualifier: a generic address (any variable).
    Generic,
    Global,
    /// `.shared` / `.shared::cta`: shared memory of the executing CTA only.
    SharedCta,
    /// `.shared::cluster`: shared memory of any CTA of the executing thread's cluster.
    SharedCluster,
}

/// What a `fence` is restricted to (PTX ISA §9.7.13.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum FenceRestrict {
    /// `fence.mbarrier_init.release.cluster`: orders only prior `mbarrier.init` operations.
    MbarrierInit,
    /// `.sync_restrict::shared::cta` / `::cluster` (the restriction is on the synchronizing
    /// operation; the fence still orders every access of the listed space).
    SharedCta,
    SharedCluster,
}

/// The kinds of async-groups (PTX ISA §9.7.9.25.1.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum GroupKind {
    /// cp.async-groups (`cp.async.commit_group`).
    CpAsync,
    /// bulk async-groups (`cp.async.bulk.commit_group`).
    Bulk,
    /// wgmma-groups (`wgmma.commit_group`).
    Wgmma,
}

/// Which asynchronous copy instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum CopyKind {
    /// `cp.async` (non-bulk): generic proxy.
    CpAsync,
    /// `cp.async.bulk`: async proxy.
    Bulk,
    /// `cp.reduce.async.bulk.<op>.<type>`: async proxy, one atomic reduction per element.
    Reduce(RmwOp, RedType),
    /// `wgmma.mma_async`: reads its shared-memory matrices in the async proxy (§9.7.15.4).
    Wgmma,
}

/// The element type of `cp.reduce.async.bulk` (PTX ISA §9.7.9.25.4.2); `exec::reduce` has the
/// arithmetic. `.f16`/`.bf16` `.add` is the `.add.noftz` form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum RedType {
    B32,
    U32,
    S32,
    B64,
    U64,
    S64,
    F16,
    Bf16,
    F32,
    F64,
}

impl RedType {
    /// The element type a PTX qualifier names (`b32`, `u64`, `bf16`, ...).
    pub fn parse(name: &str) -> Option<RedType> {
        Some(match name {
            "b32" => RedType::B32,
            "u32" => RedType::U32,
            "s32" => RedType::S32,
            "b64" => RedType::B64,
            "u64" => RedType::U64,
            "s64" => RedType::S64,
            "f16" => RedType::F16,
            "bf16" => RedType::Bf16,
            "f32" => RedType::F32,
            "f64" => RedType::F64,
            _ => return None,
        })
    }
}

/// How the completion of an asynchronous copy is observed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Completion {
    /// Through async-groups of this kind.
    Group(GroupKind),
    /// Through the complete-tx operation on this mbarrier.
    Mbarrier(Address),
}

/// An asynchronous copy (PTX ISA §9.7.9.25).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsyncCopy {
    pub kind: CopyKind,
    pub dst: Address,
    pub dst_space: AccessSpace,
    pub src: Address,
    pub src_space: AccessSpace,
    /// Bytes copied (cp-size for `cp.async`).
    pub size: Value,
    /// `cp.async` src-size: bytes read from the source, the rest is zero-filled.
    pub src_size: Option<Value>,
    /// `cp.async` ignore-src predicate: when non-zero nothing is read and the destination is zero-filled.
    pub ignore_src: Option<Value>,
    /// `.multicast::cluster` ctaMask: bit i selects the CTA of cluster rank i.
    pub multicast: Option<Value>,
    /// `.cp_mask` byteMask: bit i selects byte i of each 16-byte chunk (PTX ISA §9.7.9.25.4.1).
    pub byte_mask: Option<Value>,
    pub completion: Completion,
    /// A tile-mode tensor copy (`cp.async.bulk.tensor`, `cp.reduce.async.bulk.tensor`): the
    /// global side is a box of the tensor map instead of `size` contiguous bytes.
    pub tensor: Option<Box<TensorCopy>>,
}

/// mbarrier operations (PTX ISA §9.7.13.15).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MbOp {
    Init {
        count: Value,
    },
    Inval,
    /// `arrive`, `arrive_drop`, `arrive.expect_tx`, `arrive.noComplete`.
    Arrive {
        count: Value,
        expect_tx: Option<Value>,
        no_complete: bool,
        drop: bool,
    },
    ExpectTx {
        bytes: Value,
    },
    CompleteTx {
        bytes: Value,
    },
    /// `test_wait` / `try_wait`: `parity` selects the `.parity` form (operand = phase parity);
    /// otherwise the operand is a state returned by an arrive.
    Wait {
        parity: bool,
        operand: Value,
    },
}

/// What a warp exchange computes (PTX ISA: Data Movement and Conversion Instructions:
/// `shfl.sync`; Parallel Synchronization and Communication Instructions: `vote.sync`,
/// `match.sync`, `redux.sync`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ExchangeForm {
    Shfl(ShflMode),
    Vote(VoteMode),
    /// `match.any.sync`, `match.all.sync` (`wide`: `.b64`).
    MatchAny {
        wide: bool,
    },
    MatchAll {
        wide: bool,
    },
    Redux(ReduxOp),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

/// The integer reductions of `redux.sync` (`Min`/`Max` with `signed` for `.s32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReduxOp {
    Add,
    Min { signed: bool },
    Max { signed: bool },
    And,
    Or,
    Xor,
}

/// One lane's part of a warp exchange. The lanes that take part are those of `mask` (a
/// membermask) that the launch has (`launched`) and that have not exited; each gives its `a`
/// (for `vote`, the predicate, negated when `negate`), and each one's `d`/`p` are computed from
/// the others' (`exec::trace::exchange`). A lane of the launch the test does not model (not in
/// `lanes`) gives an unknown value (`unmodelled`); a source lane that does not take part gives
/// the unknown value of `absent` ("the value is undefined").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarpExchange {
    pub form: ExchangeForm,
    pub d: Option<Reg>,
    pub p: Option<Reg>,
    pub a: Value,
    pub negate: bool,
    /// `shfl`'s lane or offset `b` and clamp/segment mask `c` (0 for the other forms).
    pub b: Value,
    pub c: Value,
    pub mask: Value,
    /// The thread's warp in its CTA (tid / 32), its lane, the lanes of its warp the test
    /// occupies and those the launch has.
    pub warp: i64,
    pub lane: u32,
    pub lanes: u32,
    pub launched: u32,
    pub unmodelled: u32,
    pub absent: u32,
}

/// Semantics of one instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `ld.v2|v4`: one 4-byte read per element (PTX ISA §8.2.4: vector accesses are sets of
    /// scalar accesses).
    LoadVector {
        dsts: Vec<Reg>,
        /// The element type when it is a 32-bit one: each element converts as a scalar load of
        /// that type does; None keeps the word (no type, or another width).
        ty: Option<Ty>,
        addr: Address,
        sem: Sem,
        scope: Option<Scope>,
        space: AccessSpace,
        /// `ld.global.nc` (see [`Op::Load`]).
        nc: bool,
    },
    /// `st.v2|v4`: one 4-byte write per element.
    StoreVector {
        addr: Address,
        values: Vec<Value>,
        sem: Sem,
        scope: Option<Scope>,
        space: AccessSpace,
    },
    /// `cp.async`, `cp.async.bulk`, `cp.reduce.async.bulk`.
    AsyncCopy(AsyncCopy),
    /// `tensormap.replace.tile.FIELD{.global|.shared::cta}.b1024.TYPE [addr], {ord,} new_val`
    /// (PTX ISA, `tensormap.replace`): "performs a weak memory operation" on the tensor-map
    /// object: a weak generic write of the object (its first word stands for it); the run also
    /// keeps the field, so that a tensor copy of the thread can use the map it built.
    TensormapReplace {
        addr: Address,
        space: AccessSpace,
        field: tensor::MapField,
        ord: i64,
        value: Value,
    },
    /// `tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.SCOPE.sync.aligned
    /// [dst], [src], 128` (PTX ISA, `tensormap.cp_fenceproxy`): a generic copy of the 128-byte
    /// object from shared to global memory, then a uni-directional generic→tensormap release
    /// proxy fence.
    TensormapCopy {
        dst: Address,
        src: Address,
        scope: Scope,
    },
    /// `fence.proxy.tensormap::generic.release.SCOPE` and `....acquire.SCOPE [addr], 128`
    /// (PTX ISA §9.7.13.4): the two halves of the uni-directional generic→tensormap proxy fence;
    /// the acquire names the 128-byte object it covers.
    TensormapFence {
        acquire: Option<Address>,
        scope: Scope,
    },
    /// `cp.async.bulk.prefetch{.tensor}`: no memory effect the model can observe. `bulk`: the
    /// non-tensor form's source and size, checked as a bulk copy's are (§9.7.9.25.4.3: a
    /// size that is not a multiple of 16, or a source not aligned to 16 bytes, is undefined).
    Prefetch {
        bulk: Option<(Address, Value)>,
    },
    /// `cp.async.commit_group` / `cp.async.bulk.commit_group`.
    CommitGroup(GroupKind),
    /// `cp.async.wait_group N` / `cp.async.wait_all` (`all`: commit first, then wait for 0) /
    /// `cp.async.bulk.wait_group{.read} N`.
    WaitGroup {
        kind: GroupKind,
        n: i64,
        read: bool,
        all: bool,
    },
    /// `cp.async.mbarrier.arrive{.noinc}`.
    CpAsyncArrive {
        bar: Address,
        space: AccessSpace,
        noinc: bool,
    },
    Mbarrier {
        op: MbOp,
        bar: Address,
        space: AccessSpace,
        sem: Sem,
        scope: Scope,
        /// The state (arrive) or predicate (waits) destination.
        dst: Option<Reg>,
    },
    /// `wgmma.mma_async`: an async read of the shared-memory matrices named by the A and B
    /// descriptor operands (ptxmm reads a descriptor as the address of the variable holding the
    /// matrix, and the matrix as the rest of that variable).
    Wgmma {
        /// None: A in registers (`{a0, a1, a2, a3}`), which reads no memory.
        a: Option<Address>,
        b: Address,
        /// The shape's N and whether A and B are MN-major (`imm-trans-a`, `imm-trans-b`): what
        /// a real matrix descriptor's footprint needs (`matrix::descriptor_chunks`).
        n: i64,
        trans: [bool; 2],
    },
    /// `wgmma.fence`: orders the warpgroup's prior accesses before later `wgmma.mma_async`.
    WgmmaFence,
    /// `barrier.cluster.arrive{.release|.relaxed}` (`arrive`) or `barrier.cluster.wait{.acquire}`.
    ClusterBarrier {
        arrive: bool,
        sem: Sem,
    },
    /// `ld.param` (also `.v2`/`.v4`) of kernel parameter bytes at an address (a parameter's name
    /// or a register holding the address of one, `mov.b64 %rd, NAME`): each destination gets
    /// the `ty`-sized bytes at its offset, known or unknown; no memory event (parameters are
    /// read-only for the grid).
    ParamLoad {
        dsts: Vec<Reg>,
        ty: Ty,
        addr: Address,
    },
    /// `ld`: `ty` is the instruction's type (None: untyped, Dat3M's spelling). A 64-bit type
    /// reads two words (low word at the lower address) as one 8-byte access; an 8- or 16-bit
    /// type reads its bytes of one word.
    Load {
        dst: Reg,
        ty: Option<Ty>,
        addr: Address,
        sem: Sem,
        scope: Option<Scope>,
        proxy: Proxy,
        space: AccessSpace,
        /// `ld.global.nc`: a weak load through the non-coherent read-only cache; the location must
        /// stay unwritten while the kernel runs (a write in the same execution is undefined).
        nc: bool,
    },
    /// `st`: the value truncated to `ty`; a 64-bit type writes two words as one 8-byte access;
    /// an 8- or 16-bit type writes its bytes of one word (the word's other bytes unchanged).
    Store {
        ty: Option<Ty>,
        addr: Address,
        value: Value,
        sem: Sem,
        scope: Option<Scope>,
        proxy: Proxy,
        space: AccessSpace,
    },
    /// `atom` (with a destination) or `red` (without). `operands` is `[v]`, or `[cmp, new]` for cas.
    Rmw {
        dst: Option<Reg>,
        /// The operation's type (None: untyped); a 64-bit type is one 8-byte access of two
        /// words, as for `ld`/`st`.
        ty: Option<Ty>,
        addr: Address,
        op: RmwOp,
        operands: Vec<Value>,
        sem: Sem,
        scope: Scope,
        proxy: Proxy,
        space: AccessSpace,
    },
    Fence {
        kind: FenceKind,
        scope: Scope,
        restrict: Option<FenceRestrict>,
    },
    /// `fence.proxy.<proxy>`: orders accesses of this thread's CTA through `proxy` with generic
    /// ones; `fence.proxy.async.<space>` only for locations of that state space.
    ProxyFence {
        proxy: Proxy,
        space: Option<AccessSpace>,
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
        /// `.aligned` (every `bar`): the lanes of a warp execute the same barrier instruction.
        aligned: bool,
    },
    Local {
        dst: Reg,
        op: LocalOp,
        /// The instruction's type (None: untyped, herd7's unbounded integers).
        ty: Option<Ty>,
        a: Value,
        b: Value,
        /// The third operand of `mad` (the addend) and `selp` (the predicate).
        c: Option<Value>,
    },
    /// `ldmatrix` / `stmatrix`: this lane's part of a warp's matrix access ([`MatrixAccess`]).
    Matrix(Box<MatrixAccess>),
    /// A warp exchange (`shfl.sync`, `vote.sync`, `match.sync`, `redux.sync`): its results are
    /// computed from the operands of the lanes that take part ([`WarpExchange`]).
    Exchange(Box<WarpExchange>),
    /// `bar.warp.sync membermask` (PTX ISA §9.7.13.2): "cause executing thread to wait until all
    /// threads corresponding to membermask have executed a bar.warp.sync with the same
    /// membermask value", and it "also guarantee[s] memory ordering among threads participating
    /// in barrier". The participants are the lanes of the thread's warp (`warp`: its tid / 32 in
    /// its CTA) that `mask` selects and a thread of the test occupies (`lanes`); `lane` is the
    /// thread's own lane.
    WarpBarrier {
        mask: Value,
        warp: i64,
        lane: u32,
        lanes: u32,
    },
    /// An instruction with no effect on memory or registers that the model can observe.
    NoEffect(NoEffect),
    /// `trap` (PTX ISA, Miscellaneous Instructions: trap): "Abort execution and generate an
    /// interrupt to the host CPU". The launch fails: a run that reaches it is undefined
    /// (`undefined-operation`, it has no final state) and the thread goes no further.
    Trap,
    /// A register-only instruction the model does not interpret, in a kernel (the kernel form
    /// of a test, `CodeForm::Kernel`): floating-point math, `mma` on registers, warp exchanges.
    /// Its destinations become unknown (`unknown::encode(origin)`, `Program::unknowns`), with a
    /// data dependency on its sources.
    Opaque {
        dsts: Vec<Reg>,
        srcs: Vec<Value>,
        origin: u32,
    },
    /// Conditional or unconditional jump to an instruction index (`code.len()` = thread exit).
    Branch {
        cond: Option<(CmpOp, Value, Value)>,
        target: usize,
    },
}

/// The instructions that have no effect the model can observe (each is checked, then runs as
/// nothing; `docs/litmus-format.md` says why for each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoEffect {
    /// `nanosleep.u32 t` (PTX ISA, Miscellaneous Instructions: nanosleep): "Suspends the thread
    /// for a sleep duration approximately close to the delay t"; `t` is read.
    Sleep(Value),
    /// `setmaxnreg.inc|dec.sync.aligned.u32 N` (Miscellaneous Instructions: setmaxnreg): a hint
    /// on the warp's register count.
    SetMaxNReg { inc: bool, count: i64 },
    /// `griddepcontrol.launch_dependents` / `.wait` (§9.7.13.13): dependent and prerequisite grids
    /// of the runtime; a litmus test is one grid with none.
    GridDepControl { wait: bool },
    /// `prefetch{.space}.level [a]`, `prefetchu.L1 [a]`, `prefetch{.const|.param}.tensormap [a]`
    /// (Data Movement and Conversion Instructions: prefetch, prefetchu): a cache hint; `addr` is
    /// read when it is a register.
    Prefetch { addr: Option<Address> },
    /// `pmevent{.mask} a` (Miscellaneous Instructions: pmevent): a performance-monitor event.
    PmEvent,
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
