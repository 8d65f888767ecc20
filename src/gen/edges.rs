//! The edge vocabulary of `ptxmm gen`: diy7's relaxations adapted to PTX, plus the asynchronous
//! edges (docs/for-researchers.md lists every name with its meaning).
//!
//! An edge goes from one event of the cycle to the next. Its name is diy's:
//! `Rfe`/`Fre`/`Coe` (external communication), `Rfi`/`Fri`/`Coi` (internal), `Pod`/`Pos` (program
//! order to a different / the same location) followed by the two directions (`PodWR`), fences
//! `FenceSc`/`FenceAcqRel` with an optional scope and `d` + directions (`FenceScCtadWR`),
//! dependencies `DpAddrdR`, `DpDatadW`, `DpCtrldW`, and the asynchronous kinds
//! ([`AsyncKind`]) named the same way (`MbarSyncdWR`, `TmaStoreFencedsWR`).

use std::fmt;

/// Direction of an event: a read or a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dir {
    R,
    W,
}

impl Dir {
    fn letter(self) -> char {
        match self {
            Dir::R => 'R',
            Dir::W => 'W',
        }
    }
    fn from_letter(c: char) -> Option<Dir> {
        match c {
            'R' => Some(Dir::R),
            'W' => Some(Dir::W),
            _ => None,
        }
    }
}

/// The memory-order annotation of a generic access (diy's letters after the directions):
/// `P` weak (plain), `X` relaxed at the test's scope, `A` acquire (reads), `L` release (writes),
/// and the atomic writes (diy's accesses annotated as atomic): `E` an `atom.exch` whose read is
/// not an event of the cycle, `D` a `red.add` (both relaxed at the test's scope).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Annot {
    Plain,
    Relaxed,
    Acquire,
    Release,
    Exch,
    Red,
}

impl Annot {
    fn letter(self) -> char {
        match self {
            Annot::Plain => 'P',
            Annot::Relaxed => 'X',
            Annot::Acquire => 'A',
            Annot::Release => 'L',
            Annot::Exch => 'E',
            Annot::Red => 'D',
        }
    }
    fn from_letter(c: char) -> Option<Annot> {
        match c {
            'P' => Some(Annot::Plain),
            'X' => Some(Annot::Relaxed),
            'A' => Some(Annot::Acquire),
            'L' => Some(Annot::Release),
            'E' => Some(Annot::Exch),
            'D' => Some(Annot::Red),
            _ => None,
        }
    }
    /// Whether an access of direction `dir` can carry this annotation.
    fn fits(self, dir: Dir) -> bool {
        !matches!((self, dir), (Annot::Acquire, Dir::W) | (Annot::Release | Annot::Exch | Annot::Red, Dir::R))
    }
}

/// A PTX scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    Cta,
    Gpu,
    Sys,
}

impl Scope {
    pub fn ptx(self) -> &'static str {
        match self {
            Scope::Cta => "cta",
            Scope::Gpu => "gpu",
            Scope::Sys => "sys",
        }
    }
    fn camel(self) -> &'static str {
        match self {
            Scope::Cta => "Cta",
            Scope::Gpu => "Gpu",
            Scope::Sys => "Sys",
        }
    }
    pub fn parse(s: &str) -> Option<Scope> {
        match s {
            "cta" => Some(Scope::Cta),
            "gpu" => Some(Scope::Gpu),
            "sys" => Some(Scope::Sys),
            _ => None,
        }
    }
}

/// How far apart the two threads of an external edge are placed: the same CTA, two CTAs of one
/// cluster, two clusters of one GPU (each CTA is its own cluster), two GPUs. Ordered by distance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Distance {
    Cta,
    Cluster,
    Gpu,
    Sys,
}

/// A communication relation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Comm {
    Rf,
    Fr,
    Co,
}

impl Comm {
    fn name(self) -> &'static str {
        match self {
            Comm::Rf => "Rf",
            Comm::Fr => "Fr",
            Comm::Co => "Co",
        }
    }
    fn dirs(self) -> (Dir, Dir) {
        match self {
            Comm::Rf => (Dir::W, Dir::R),
            Comm::Fr => (Dir::R, Dir::W),
            Comm::Co => (Dir::W, Dir::W),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FenceKind {
    Sc,
    AcqRel,
}

impl FenceKind {
    pub fn ptx(self) -> &'static str {
        match self {
            FenceKind::Sc => "sc",
            FenceKind::AcqRel => "acq_rel",
        }
    }
    fn camel(self) -> &'static str {
        match self {
            FenceKind::Sc => "Sc",
            FenceKind::AcqRel => "AcqRel",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dep {
    Addr,
    Data,
    Ctrl,
}

/// The asynchronous edge kinds. Each orders its two events through an asynchronous mechanism;
/// the copy kinds make one end of the edge the copy's own access (`AsyncKind::copy_end`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AsyncKind {
    /// `mbarrier.arrive.release.cta` after the first event, a `try_wait.parity.acquire.cta` loop
    /// before the second, in another thread of the same CTA.
    MbarSync,
    /// The same with `.relaxed` arrive and wait: no synchronisation.
    MbarRelaxed,
    /// A remote arrive (`.release.cluster`, `shared::cluster`) on an mbarrier of the waiter's CTA,
    /// another CTA of the same cluster; the wait is `.acquire.cluster`.
    MbarCluster,
    /// `barrier.cluster.arrive.release` + `wait.acquire` in two CTAs of one cluster.
    BarCluster,
    /// `barrier.cluster.arrive.relaxed` + `wait`: no release, so no ordering.
    BarClusterRelaxed,
    /// The first event is a `cp.async` (4 bytes) write; `commit_group` + `wait_group 0` before
    /// the second event, in the same thread.
    CpAsyncWait,
    /// The same with `commit_group` and no wait: the second event may run before the copy ends.
    CpAsyncNoWait,
    /// The first event is a `cp.async` write whose completion arrives on an mbarrier
    /// (`cp.async.mbarrier.arrive.noinc`); another thread of the CTA waits on it.
    CpAsyncMbar,
    /// The first event is a TMA load (`cp.async.bulk` global → shared, 16 bytes,
    /// `complete_tx` on an mbarrier armed with `expect_tx`); another thread of the CTA waits for
    /// the phase.
    TmaLoadMbar,
    /// The same, waited for by the issuing thread itself.
    TmaLoadWait,
    /// The first event is a multicast TMA load (`.multicast::cluster`, 16 bytes) issued from
    /// another CTA of the cluster into the second event's CTA (and the issuer's own CTA, at the
    /// same CTA-relative offset), `complete_tx` on each CTA's mbarrier; the second event's
    /// thread arms its CTA's mbarrier with `expect_tx` and waits for the phase.
    TmaMulticast,
    /// The second event is the source read of a TMA store (`cp.async.bulk` shared → global),
    /// preceded by `fence.proxy.async.shared::cta`.
    TmaStoreFenced,
    /// The same without the proxy fence.
    TmaStoreNoFence,
    /// The first event is a TMA store's source read; `wait_group.read 0` (completion of the
    /// reads only) before the second event.
    WaitRead,
    /// The second event is the source read of a `cp.reduce.async.bulk .add.u32` into a zeroed
    /// global buffer, preceded by `fence.proxy.async.shared::cta`.
    ReduceFenced,
}

/// Which end of an asynchronous edge is the copy's access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyEnd {
    /// The first event is the copy's destination write.
    SourceIsCopyWrite,
    /// The second event is the copy's source read.
    TargetIsCopyRead,
    /// The first event is the copy's source read.
    SourceIsCopyRead,
}

pub const ASYNC_KINDS: &[AsyncKind] = &[
    AsyncKind::MbarSync,
    AsyncKind::MbarRelaxed,
    AsyncKind::MbarCluster,
    AsyncKind::BarCluster,
    AsyncKind::BarClusterRelaxed,
    AsyncKind::CpAsyncWait,
    AsyncKind::CpAsyncNoWait,
    AsyncKind::CpAsyncMbar,
    AsyncKind::TmaLoadMbar,
    AsyncKind::TmaLoadWait,
    AsyncKind::TmaMulticast,
    AsyncKind::TmaStoreFenced,
    AsyncKind::TmaStoreNoFence,
    AsyncKind::WaitRead,
    AsyncKind::ReduceFenced,
];

impl AsyncKind {
    pub fn name(self) -> &'static str {
        match self {
            AsyncKind::MbarSync => "MbarSync",
            AsyncKind::MbarRelaxed => "MbarRelaxed",
            AsyncKind::MbarCluster => "MbarCluster",
            AsyncKind::BarCluster => "BarCluster",
            AsyncKind::BarClusterRelaxed => "BarClusterRelaxed",
            AsyncKind::CpAsyncWait => "CpAsyncWait",
            AsyncKind::CpAsyncNoWait => "CpAsyncNoWait",
            AsyncKind::CpAsyncMbar => "CpAsyncMbar",
            AsyncKind::TmaLoadMbar => "TmaLoadMbar",
            AsyncKind::TmaLoadWait => "TmaLoadWait",
            AsyncKind::TmaMulticast => "TmaMulticast",
            AsyncKind::TmaStoreFenced => "TmaStoreFenced",
            AsyncKind::TmaStoreNoFence => "TmaStoreNoFence",
            AsyncKind::WaitRead => "WaitRead",
            AsyncKind::ReduceFenced => "ReduceFenced",
        }
    }

    /// Whether the edge crosses to another thread, and how far.
    pub fn distance(self) -> Option<Distance> {
        match self {
            AsyncKind::MbarSync | AsyncKind::MbarRelaxed | AsyncKind::CpAsyncMbar | AsyncKind::TmaLoadMbar => Some(Distance::Cta),
            AsyncKind::MbarCluster | AsyncKind::BarCluster | AsyncKind::BarClusterRelaxed | AsyncKind::TmaMulticast => {
                Some(Distance::Cluster)
            }
            _ => None,
        }
    }

    pub fn copy_end(self) -> Option<CopyEnd> {
        match self {
            AsyncKind::CpAsyncWait
            | AsyncKind::CpAsyncNoWait
            | AsyncKind::CpAsyncMbar
            | AsyncKind::TmaLoadMbar
            | AsyncKind::TmaLoadWait
            | AsyncKind::TmaMulticast => Some(CopyEnd::SourceIsCopyWrite),
            AsyncKind::TmaStoreFenced | AsyncKind::TmaStoreNoFence | AsyncKind::ReduceFenced => Some(CopyEnd::TargetIsCopyRead),
            AsyncKind::WaitRead => Some(CopyEnd::SourceIsCopyRead),
            _ => None,
        }
    }

    /// Whether the copy is a bulk (16-byte) one.
    pub fn bulk(self) -> bool {
        !matches!(self, AsyncKind::CpAsyncWait | AsyncKind::CpAsyncNoWait | AsyncKind::CpAsyncMbar)
    }

    fn from_name(s: &str) -> Option<AsyncKind> {
        ASYNC_KINDS.iter().copied().find(|k| k.name() == s)
    }
}

/// The read-modify-write an `Rmw` edge makes of its two events (diy7's `Rmw`/`Amo` edges):
/// the read and the write of one PTX atomic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RmwOp {
    /// `atom.exch`: writes the cycle's value whatever it reads (diy's plain `Rmw`, `Amo.Swp`).
    Exch,
    /// `atom.add … 1`: the cycle's values are 1, 2 in coherence order, so the atomic that reads
    /// `v` writes `v + 1`, the value the cycle gives its write.
    Add,
    /// `atom.cas … v, v + 1`: succeeds exactly when it reads the value the cycle gives its read.
    Cas,
    /// `red.add … 1`: the write-only RMW (diy's `Amo.StAdd`); its read value has no register, so
    /// the condition sees it only through the value it writes.
    Red,
}

pub const RMW_OPS: &[RmwOp] = &[RmwOp::Exch, RmwOp::Add, RmwOp::Cas, RmwOp::Red];

impl RmwOp {
    /// The edge name's suffix after `Rmw`.
    fn suffix(self) -> &'static str {
        match self {
            RmwOp::Exch => "",
            RmwOp::Add => "Add",
            RmwOp::Cas => "Cas",
            RmwOp::Red => "Red",
        }
    }
}

/// What an edge is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EdgeKind {
    /// Communication; `external` edges go to another thread placed at `distance`.
    Comm { comm: Comm, external: bool, distance: Distance },
    /// Program order, to the same location or another one.
    Po { same_loc: bool },
    /// Program order through a fence (always to another location).
    Fence { kind: FenceKind, scope: Option<Scope> },
    /// A dependency from a read (to another location).
    Dep(Dep),
    /// An asynchronous edge; `same_loc` as for `Po`.
    Async { kind: AsyncKind, same_loc: bool },
    /// The read and the write of one atomic (same thread, same location, always `R` to `W`);
    /// the annotations are its semantics: `A` on the read acquire, `L` on the write release.
    Rmw(RmwOp),
}

/// One edge of a cycle: its kind, the directions of its two events, and optional annotations
/// of the two events (diy's `PodWWPL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Edge {
    pub kind: EdgeKind,
    pub src: Dir,
    pub dst: Dir,
    pub annots: Option<(Annot, Annot)>,
}

impl Edge {
    /// Whether the edge goes to another thread.
    pub fn external(&self) -> bool {
        self.distance().is_some()
    }

    /// The placement of the next thread relative to this one, for edges that leave the thread.
    pub fn distance(&self) -> Option<Distance> {
        match self.kind {
            EdgeKind::Comm { external: true, distance, .. } => Some(distance),
            EdgeKind::Async { kind, .. } => kind.distance(),
            _ => None,
        }
    }

    /// Whether the two events access the same location.
    pub fn same_loc(&self) -> bool {
        match self.kind {
            EdgeKind::Comm { .. } | EdgeKind::Rmw(_) => true,
            EdgeKind::Po { same_loc } | EdgeKind::Async { same_loc, .. } => same_loc,
            EdgeKind::Fence { .. } | EdgeKind::Dep(_) => false,
        }
    }

    pub fn comm(&self) -> Option<Comm> {
        match self.kind {
            EdgeKind::Comm { comm, .. } => Some(comm),
            _ => None,
        }
    }

    pub fn async_kind(&self) -> Option<AsyncKind> {
        match self.kind {
            EdgeKind::Async { kind, .. } => Some(kind),
            _ => None,
        }
    }
}

impl fmt::Display for Edge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dirs = |f: &mut fmt::Formatter<'_>| write!(f, "{}{}", self.src.letter(), self.dst.letter());
        match self.kind {
            EdgeKind::Comm { comm, external, distance } => {
                write!(f, "{}{}", comm.name(), if external { 'e' } else { 'i' })?;
                match distance {
                    Distance::Gpu => {}
                    Distance::Cta => f.write_str("Cta")?,
                    Distance::Cluster => f.write_str("Cluster")?,
                    Distance::Sys => f.write_str("Sys")?,
                }
                return Ok(());
            }
            EdgeKind::Po { same_loc } => {
                write!(f, "Po{}", if same_loc { 's' } else { 'd' })?;
                dirs(f)?;
            }
            EdgeKind::Fence { kind, scope } => {
                write!(f, "Fence{}{}d", kind.camel(), scope.map_or("", Scope::camel))?;
                dirs(f)?;
            }
            EdgeKind::Dep(dep) => {
                let name = match dep {
                    Dep::Addr => "DpAddr",
                    Dep::Data => "DpData",
                    Dep::Ctrl => "DpCtrl",
                };
                write!(f, "{name}d{}", self.dst.letter())?;
            }
            EdgeKind::Async { kind, same_loc } => {
                write!(f, "{}{}", kind.name(), if same_loc { 's' } else { 'd' })?;
                dirs(f)?;
            }
            EdgeKind::Rmw(op) => write!(f, "Rmw{}", op.suffix())?,
        }
        if let Some((a, b)) = self.annots {
            write!(f, "{}{}", a.letter(), b.letter())?;
        }
        Ok(())
    }
}

/// Parse an edge name; the error lists the forms accepted.
pub fn parse_edge(name: &str) -> Result<Edge, String> {
    parse_edge_inner(name).ok_or_else(|| format!("unknown edge `{name}`; {}", vocabulary_help()))
}

/// The accepted edge forms, for error messages and `--help`.
pub fn vocabulary_help() -> String {
    let kinds: Vec<&str> = ASYNC_KINDS.iter().map(|k| k.name()).collect();
    format!(
        "valid edges: Rfe Fre Coe Rfi Fri Coi (external ones may end in Cta, Cluster or Sys: RfeCta), \
         Pod/Pos + two directions (PodWR, PosRR), FenceSc/FenceAcqRel [+ Cta|Gpu|Sys] + d + two directions \
         (FenceScdWR, FenceAcqRelCtadWW), DpAddrdR DpAddrdW DpDatadW DpCtrldR DpCtrldW, and the asynchronous \
         kinds {} + s|d + two directions (MbarSyncdWR, TmaStoreFencedsWR), the read-modify-writes Rmw (atom.exch) \
         RmwAdd RmwCas RmwRed (red.add) with optional semantics XX, AX (acquire), XL (release), AL (acq_rel; \
         RmwRed: XX or XL only); po, fence, dependency and \
         asynchronous-sync edges may end in two annotations from P (weak), X (relaxed), A (acquire), L (release), \
         and for writes E (atom.exch) and D (red.add): PodWWPL, PodWREX",
        kinds.join(" ")
    )
}

fn parse_dirs(s: &str) -> Option<(Dir, Dir, &str)> {
    let mut c = s.chars();
    let a = Dir::from_letter(c.next()?)?;
    let b = Dir::from_letter(c.next()?)?;
    Some((a, b, &s[2..]))
}

fn parse_annots(s: &str, src: Dir, dst: Dir) -> Option<Option<(Annot, Annot)>> {
    if s.is_empty() {
        return Some(None);
    }
    let mut c = s.chars();
    let a = Annot::from_letter(c.next()?)?;
    let b = Annot::from_letter(c.next()?)?;
    (c.next().is_none() && a.fits(src) && b.fits(dst)).then_some(Some((a, b)))
}

fn parse_edge_inner(name: &str) -> Option<Edge> {
    for comm in [Comm::Rf, Comm::Fr, Comm::Co] {
        let Some(rest) = name.strip_prefix(comm.name()) else { continue };
        let (src, dst) = comm.dirs();
        let (external, rest) = match rest.chars().next()? {
            'e' => (true, &rest[1..]),
            'i' => (false, &rest[1..]),
            _ => return None,
        };
        let distance = match rest {
            "" => Distance::Gpu,
            "Cta" if external => Distance::Cta,
            "Cluster" if external => Distance::Cluster,
            "Sys" if external => Distance::Sys,
            _ => return None,
        };
        return Some(Edge { kind: EdgeKind::Comm { comm, external, distance }, src, dst, annots: None });
    }
    let with_dirs = |kind: EdgeKind, rest: &str| -> Option<Edge> {
        let (src, dst, rest) = parse_dirs(rest)?;
        let annots = parse_annots(rest, src, dst)?;
        Some(Edge { kind, src, dst, annots })
    };
    if let Some(rest) = name.strip_prefix("Rmw") {
        let op = RMW_OPS.iter().copied().filter(|o| !o.suffix().is_empty()).find(|o| rest.starts_with(o.suffix())).unwrap_or(RmwOp::Exch);
        let annots = parse_annots(&rest[op.suffix().len()..], Dir::R, Dir::W)?;
        // An atomic is never weak; `red` has no read to acquire with (PTX: `red{.sem}`, .sem =
        // .relaxed or .release).
        let fits = match annots {
            None => true,
            Some((Annot::Plain, _) | (_, Annot::Plain | Annot::Exch | Annot::Red)) => false,
            Some((Annot::Acquire, _)) => op != RmwOp::Red,
            Some(_) => true,
        };
        return fits.then_some(Edge { kind: EdgeKind::Rmw(op), src: Dir::R, dst: Dir::W, annots });
    }
    if let Some(rest) = name.strip_prefix("Pod") {
        return with_dirs(EdgeKind::Po { same_loc: false }, rest);
    }
    if let Some(rest) = name.strip_prefix("Pos") {
        return with_dirs(EdgeKind::Po { same_loc: true }, rest);
    }
    if let Some(rest) = name.strip_prefix("Fence") {
        let (kind, rest) =
            if let Some(r) = rest.strip_prefix("AcqRel") { (FenceKind::AcqRel, r) } else { (FenceKind::Sc, rest.strip_prefix("Sc")?) };
        let (scope, rest) = match [Scope::Cta, Scope::Gpu, Scope::Sys].into_iter().find(|s| rest.starts_with(s.camel())) {
            Some(s) => (Some(s), &rest[s.camel().len()..]),
            None => (None, rest),
        };
        return with_dirs(EdgeKind::Fence { kind, scope }, rest.strip_prefix('d')?);
    }
    if let Some(rest) = name.strip_prefix("Dp") {
        let (dep, rest) = [("Addr", Dep::Addr), ("Data", Dep::Data), ("Ctrl", Dep::Ctrl)]
            .into_iter()
            .find_map(|(n, d)| rest.strip_prefix(n).map(|r| (d, r)))?;
        let rest = rest.strip_prefix('d')?;
        let dst = Dir::from_letter(rest.chars().next()?)?;
        if dep == Dep::Data && dst == Dir::R {
            return None;
        }
        let annots = parse_annots(&rest[1..], Dir::R, dst)?;
        return Some(Edge { kind: EdgeKind::Dep(dep), src: Dir::R, dst, annots });
    }
    // Asynchronous kinds: the longest kind name that prefixes `name` (MbarSync vs MbarSyncX).
    let kind = ASYNC_KINDS.iter().copied().filter(|k| name.starts_with(k.name())).max_by_key(|k| k.name().len())?;
    let rest = &name[kind.name().len()..];
    let same_loc = match rest.chars().next()? {
        's' => true,
        'd' => false,
        _ => return None,
    };
    let edge = with_dirs(EdgeKind::Async { kind, same_loc }, &rest[1..])?;
    // The copy's own end has a fixed direction.
    let fits = match kind.copy_end() {
        Some(CopyEnd::SourceIsCopyWrite) => edge.src == Dir::W,
        Some(CopyEnd::TargetIsCopyRead) => edge.dst == Dir::R,
        Some(CopyEnd::SourceIsCopyRead) => edge.src == Dir::R,
        None => true,
    };
    debug_assert!(AsyncKind::from_name(kind.name()).is_some());
    (fits && (edge.annots.is_none() || kind.copy_end().is_none())).then_some(edge)
}

/// Parse a list of edge names separated by spaces or commas.
pub fn parse_edges(list: &str) -> Result<Vec<Edge>, String> {
    list.split(|c: char| c == ',' || c.is_whitespace()).filter(|s| !s.is_empty()).map(parse_edge).collect()
}

/// The default edges of a generic family (`ptxmm gen --family`): diy's communication and
/// program-order relaxations (external ones between CTAs, and within one CTA), the two PTX
/// fences at the test's scope and `fence.sc.cta`, release/acquire and weak annotations, and
/// the dependencies.
pub const GENERIC_EDGES: &str = "Rfe Fre Coe Rfi Fri Coi RfeCta FreCta CoeCta \
     PodWW PodWR PodRW PodRR PosWW PosWR PosRW PosRR \
     FenceScdWW FenceScdWR FenceScdRW FenceScdRR FenceAcqReldWW FenceAcqReldWR FenceAcqReldRW FenceAcqReldRR \
     FenceScCtadWR FenceScCtadWW FenceScCtadRR \
     PodWWPL PodRRAP PodWRLA PodRWAL PodWWPP PodRRPP \
     DpAddrdR DpAddrdW DpDatadW DpCtrldR DpCtrldW";

/// The edges of the read-modify-write family (`ptxmm gen --family --rmw`): every `Rmw` form
/// and semantics with the communication and program-order edges that make diy's RMW shapes
/// (an `Rfe`/`Rmw` chain, 2+2W and S with an atomic, CoRR through an atomic), `fence.sc`, and
/// release/acquire plain accesses to meet the atomics' semantics.
pub const RMW_EDGES: &str = "Rfe Fre Coe Rfi Coi PodWW PodWR PodRW PodRR PosWR PosRW \
     FenceScdWR PodWWPL PodRRAP \
     Rmw RmwAdd RmwCas RmwRed RmwAX RmwXL RmwAL RmwRedXL \
     PodWWEE PodWRDX PodWREX FenceScdWREX";

/// The default edges of an asynchronous family (`ptxmm gen --family --async`): each
/// asynchronous kind in its natural shape, with the communication edges inside one CTA.
pub const ASYNC_EDGES: &str = "RfeCta FreCta CoeCta Rfi Fri PodWR PodRW \
     MbarSyncdWR MbarRelaxeddWR MbarClusterdWR BarClusterdWR BarClusterRelaxeddWR \
     CpAsyncWaitsWR CpAsyncNoWaitsWR CpAsyncMbarsWR TmaLoadMbarsWR TmaLoadWaitsWR TmaMulticastsWR FreCluster \
     TmaStoreFencedsWR TmaStoreNoFencesWR WaitReadsRW ReduceFencedsWR";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for list in [
            GENERIC_EDGES,
            ASYNC_EDGES,
            RMW_EDGES,
            "RmwCasAL RmwAddXX RmwRedXX PodWWDE FenceAcqReldRWPD",
            "FenceScCtadWR RfeSys RfeCluster PosWW Coi FenceAcqRelSysdRWAX DpCtrldR",
        ] {
            for e in parse_edges(list).unwrap() {
                assert_eq!(parse_edge(&e.to_string()).unwrap(), e, "{e}");
            }
        }
    }

    #[test]
    fn bad_names_are_rejected_with_the_vocabulary() {
        for bad in [
            "Rfx",
            "PodWX",
            "PodWWAL",
            "RmwRedAL",
            "RmwPL",
            "RmwXE",
            "PodRWEX",
            "PodRRXD",
            "RmwLA",
            "RmwSub",
            "RmwAddX",
            "DpDatadR",
            "TmaStoreFencedsRW",
            "RfiCta",
            "Fence",
            "MbarSyncdWRPA2",
        ] {
            let e = parse_edge(bad).unwrap_err();
            assert!(e.contains("valid edges") && e.contains(bad), "{e}");
        }
    }
}
