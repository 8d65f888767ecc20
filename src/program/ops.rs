//! The instruction set: `Op`, what every stage matches on, and its operands (read-modify-write
//! and reduction operations, register arithmetic, fences, asynchronous copies, mbarrier
//! operations, warp exchanges).

use super::*;

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
