//! Writing an analysed cycle as a litmus test in ptxmm's format (Dat3M's PTX dialect, with PTX
//! spellings for the asynchronous instructions).

use super::cycle::{copy_cta_thread, Analysed, EventKind};
use super::edges::{Annot, AsyncKind, Dep, Dir, Edge, EdgeKind, RmwOp, Scope};
use std::fmt::Write as _;

/// Options of the emitted test.
#[derive(Clone, Copy, Debug)]
pub struct EmitOptions {
    /// The scope of relaxed/acquire/release accesses and of fences without their own scope.
    pub scope: Scope,
}

impl Default for EmitOptions {
    fn default() -> Self {
        EmitOptions { scope: Scope::Gpu }
    }
}

/// The test's name: the edges joined with `+` (diy7's convention).
pub fn test_name(edges: &[Edge]) -> String {
    edges.iter().map(Edge::to_string).collect::<Vec<_>>().join("+")
}

/// The classic name of the cycle's shape, when it has one (ignoring annotations, fences and
/// dependencies: MP+FenceScdWW+PodRRAP is an MP).
pub fn shape_name(edges: &[Edge]) -> Option<&'static str> {
    let letters: Vec<String> = edges
        .iter()
        .map(|e| match e.kind {
            EdgeKind::Comm { comm, external: true, .. } => format!("{comm:?}e"),
            EdgeKind::Comm { .. } => "i".to_string(),
            _ if e.same_loc() => "s".to_string(),
            _ => format!("{:?}{:?}", e.src, e.dst),
        })
        .collect();
    let shapes: &[(&str, &[&str])] = &[
        ("MP", &["WW", "Rfe", "RR", "Fre"]),
        ("SB", &["WR", "Fre", "WR", "Fre"]),
        ("LB", &["RW", "Rfe", "RW", "Rfe"]),
        ("S", &["WW", "Rfe", "RW", "Coe"]),
        ("R", &["WW", "Coe", "WR", "Fre"]),
        ("2+2W", &["WW", "Coe", "WW", "Coe"]),
        ("CoRR", &["Rfe", "s", "Fre"]),
        ("WRC", &["Rfe", "RW", "Rfe", "RR", "Fre"]),
        ("ISA2", &["WW", "Rfe", "RW", "Rfe", "RR", "Fre"]),
        ("IRIW", &["Rfe", "RR", "Fre", "Rfe", "RR", "Fre"]),
    ];
    let n = letters.len();
    shapes
        .iter()
        .find_map(|(name, shape)| (shape.len() == n && (0..n).any(|r| (0..n).all(|k| letters[(r + k) % n] == shape[k]))).then_some(*name))
}

/// A thread's code under construction: registers, labels and lines.
struct ThreadCode {
    lines: Vec<String>,
    next_reg: usize,
}

impl ThreadCode {
    fn reg(&mut self) -> String {
        self.next_reg += 1;
        format!("r{}", self.next_reg - 1)
    }
}

/// Everything the test declares, numbered across threads.
#[derive(Default)]
struct Decls {
    init: Vec<String>,
    next_label: usize,
    next_buffer: usize,
    condition: Vec<String>,
}

impl Decls {
    fn label(&mut self, prefix: &str) -> String {
        self.next_label += 1;
        format!("{prefix}{}", self.next_label - 1)
    }
    fn buffer(&mut self, prefix: &str) -> String {
        self.next_buffer += 1;
        format!("{prefix}{}", self.next_buffer - 1)
    }
}

fn loc_name(loc: usize) -> String {
    const NAMES: [&str; 6] = ["x", "y", "z", "a", "b", "c"];
    NAMES.get(loc).map_or_else(|| format!("m{loc}"), |s| s.to_string())
}

fn annot_word(a: Annot, scope: Scope) -> String {
    match a {
        Annot::Plain => "weak".to_string(),
        Annot::Relaxed => format!("relaxed.{}", scope.ptx()),
        Annot::Acquire => format!("acquire.{}", scope.ptx()),
        Annot::Release => format!("release.{}", scope.ptx()),
        Annot::Exch | Annot::Red => format!("relaxed.{}", scope.ptx()),
    }
}

fn wait_loop(code: &mut ThreadCode, decls: &mut Decls, bar: &str, sem: &str, space: &str) {
    let label = decls.label("LW");
    let p = format!("p{}", decls.next_label - 1);
    code.lines.push(format!("{label}:"));
    code.lines.push(format!("mbarrier.try_wait.parity{sem}.shared::{space}.b64 {p}, [{bar}], 0"));
    code.lines.push(format!("@!{p} bra {label}"));
}

/// The semantics of an atomic from its `Rmw` edge's annotations: acquire on the read, release
/// on the write, both `acq_rel`; relaxed otherwise (atomics are never weak).
fn rmw_sem(annots: Option<(Annot, Annot)>, scope: Scope) -> String {
    let sem = match annots {
        Some((Annot::Acquire, Annot::Release)) => "acq_rel",
        Some((Annot::Acquire, _)) => "acquire",
        Some((_, Annot::Release)) => "release",
        _ => "relaxed",
    };
    format!("{sem}.{}", scope.ptx())
}

/// Both sides of a `barrier.cluster` edge arrive and wait (the barrier needs every
/// participating thread's arrival).
fn cluster_barrier(code: &mut ThreadCode, kind: AsyncKind) {
    if kind == AsyncKind::BarClusterRelaxed {
        code.lines.push("barrier.cluster.arrive.relaxed".into());
        code.lines.push("barrier.cluster.wait".into());
    } else {
        code.lines.push("barrier.cluster.arrive.release".into());
        code.lines.push("barrier.cluster.wait.acquire".into());
    }
}

/// The issuer's side of a multicast copy: its CTA's copy of the destination and mbarrier, and
/// the ctaMask.
#[derive(Clone)]
struct Multicast {
    mirror: String,
    bar: String,
    mask: u32,
}

/// Write the test; a comment gives the cycle and the command that regenerates the test.
pub fn emit(a: &Analysed, opts: &EmitOptions) -> String {
    let (shared, bulk) = copied_locations(a);
    let mut codes: Vec<ThreadCode> = a.threads.iter().map(|_| ThreadCode { lines: Vec::new(), next_reg: 0 }).collect();
    let mut emitter = Emitter::new(a, opts.scope);
    for (t, code) in codes.iter_mut().enumerate() {
        emitter.thread(t, code);
    }
    let mut decls = emitter.decls;
    // Locations written twice: the final value shows the coherence order.
    for (loc, &w) in a.writes.iter().enumerate() {
        if w >= 2 {
            decls.condition.push(format!("{} == {w}", loc_name(loc)));
        }
    }
    write_test(a, opts, &shared, &bulk, decls, &codes)
}

/// Per location: the CTA whose shared memory holds it when a copy writes or reads it (`None`:
/// global), and whether a bulk copy does (then it is 16 bytes).
fn copied_locations(a: &Analysed) -> (Vec<Option<usize>>, Vec<bool>) {
    let mut shared: Vec<Option<usize>> = vec![None; a.locations];
    let mut bulk = vec![false; a.locations];
    for (i, e) in a.events.iter().enumerate() {
        if e.kind.is_copy() {
            shared[e.loc] = Some(a.placement[copy_cta_thread(&a.edges, &a.events, i)].cta);
            bulk[e.loc] |= !matches!(e.kind, EventKind::CopyWrite { bulk: false });
        }
    }
    (shared, bulk)
}

/// The completions of one thread's copies that no edge waits for, issued after its last event.
#[derive(Default)]
struct Unwaited {
    /// A `cp.async` of `CpAsyncNoWait`.
    cp_async: bool,
    /// The TMA stores (and reductions).
    bulk_reads: bool,
    /// The mbarrier of a multicast copy's write into the issuer's own CTA.
    own_multicast: Option<String>,
}

/// Where an event accesses, and the value it writes: its location and the cycle's value, unless
/// a dependency on an earlier read computes them.
struct Access {
    address: String,
    value: Option<String>,
}

/// The code of the events, thread by thread, with what the cycle's edges need around them.
struct Emitter<'a> {
    a: &'a Analysed,
    n: usize,
    scope: Scope,
    decls: Decls,
    /// The mbarrier each asynchronous edge uses, in the CTA of the thread that waits on it.
    bars: Vec<Option<String>>,
    /// The issuer's side of each multicast edge.
    multicast: Vec<Option<Multicast>>,
    /// Registers of the reads (for dependencies).
    read_reg: Vec<Option<String>>,
}

impl<'a> Emitter<'a> {
    /// Declares the mbarriers of the asynchronous edges, then the issuer's side of each
    /// multicast copy.
    fn new(a: &'a Analysed, scope: Scope) -> Self {
        let n = a.events.len();
        let mut emitter =
            Emitter { a, n, scope, decls: Decls::default(), bars: vec![None; n], multicast: vec![None; n], read_reg: vec![None; n] };
        emitter.declare_mbarriers();
        emitter.declare_multicasts();
        emitter
    }

    fn declare_mbarriers(&mut self) {
        let (a, n) = (self.a, self.n);
        for (i, e) in a.edges.iter().enumerate() {
            let Some(kind) = e.async_kind() else { continue };
            if matches!(
                kind,
                AsyncKind::MbarSync
                    | AsyncKind::MbarRelaxed
                    | AsyncKind::MbarCluster
                    | AsyncKind::CpAsyncMbar
                    | AsyncKind::TmaLoadMbar
                    | AsyncKind::TmaLoadWait
                    | AsyncKind::TmaMulticast
            ) {
                let waiter = a.events[(i + 1) % n].thread;
                let bar = self.decls.buffer("bar");
                self.decls.init.push(format!("{bar} @ shared cta {} mbarrier(1);", a.placement[waiter].cta));
                self.bars[i] = Some(bar);
            }
        }
    }

    /// A multicast copy also writes the issuer's CTA, at the same CTA-relative offsets: a mirror
    /// of the destination and of the mbarrier there, declared in the same order (the cycle has
    /// no other shared variable, `Reject::MulticastNotAlone`).
    fn declare_multicasts(&mut self) {
        let (a, n) = (self.a, self.n);
        for (i, e) in a.edges.iter().enumerate() {
            if e.async_kind() == Some(AsyncKind::TmaMulticast) {
                let (issuer, waiter) = (a.placement[a.events[i].thread], a.placement[a.events[(i + 1) % n].thread]);
                let mirror = self.decls.buffer("m");
                self.decls.init.push(format!("{mirror}[16] @ shared cta {};", issuer.cta));
                let bar = self.decls.buffer("bar");
                self.decls.init.push(format!("{bar} @ shared cta {} mbarrier(1);", issuer.cta));
                // ctaMask bit i selects the CTA of cluster rank i: the cluster's CTAs ranked by id.
                let mut ctas: Vec<usize> = a.placement.iter().filter(|p| p.cluster == issuer.cluster).map(|p| p.cta).collect();
                ctas.sort_unstable();
                ctas.dedup();
                let rank = |cta: usize| ctas.iter().position(|&c| c == cta).unwrap_or(0);
                let mask = (1u32 << rank(issuer.cta)) | (1u32 << rank(waiter.cta));
                self.multicast[i] = Some(Multicast { mirror, bar, mask });
            }
        }
    }

    /// The code of thread `t`: each event with its in-edge's code before it and its out-edge's
    /// after it, then the completions no edge asked for.
    fn thread(&mut self, t: usize, code: &mut ThreadCode) {
        let a = self.a;
        let n = self.n;
        let mut unwaited = Unwaited::default();
        for &i in &a.threads[t] {
            let e = &a.events[i];
            let in_edge = a.edges[(i + n - 1) % n];
            // What the in-edge puts before the event.
            let mut access = Access {
                address: loc_name(e.loc),
                // A `red.add` adds 1 to its coherence predecessor's value (atomicity) to write the
                // cycle's value.
                value: match e.kind {
                    EventKind::Generic(Annot::Red) => Some("1".to_string()),
                    _ => e.write_value.map(|v| v.to_string()),
                },
            };
            if in_edge.external() {
                if let Some(kind) = in_edge.async_kind() {
                    self.wait_for_external(kind, (i + n - 1) % n, code);
                }
            } else {
                self.after_internal(t, i, code, &mut access);
            }
            self.event(t, i, code, access, &mut unwaited);
            // What the out-edge puts after the event, when it leaves the thread.
            if a.edges[i].external() {
                if let Some(kind) = a.edges[i].async_kind() {
                    self.signal_external(kind, i, code);
                }
            }
        }
        // Completions that no edge asked for come last, so that the final state is defined
        // without ordering anything the cycle is about.
        if unwaited.cp_async {
            code.lines.push("cp.async.wait_all".into());
        }
        if unwaited.bulk_reads {
            code.lines.push("cp.async.bulk.wait_group 0".into());
        }
        if let Some(bar) = unwaited.own_multicast {
            wait_loop(code, &mut self.decls, &bar, "", "cta");
        }
    }

    /// Before the target of an external asynchronous edge `edge` of kind `kind`: the wait for it.
    fn wait_for_external(&mut self, kind: AsyncKind, edge: usize, code: &mut ThreadCode) {
        let bar = self.bars[edge].clone();
        let decls = &mut self.decls;
        match kind {
            AsyncKind::MbarSync | AsyncKind::CpAsyncMbar | AsyncKind::TmaLoadMbar => {
                wait_loop(code, decls, &bar.expect("mbarrier"), if kind == AsyncKind::MbarSync { ".acquire.cta" } else { "" }, "cta")
            }
            AsyncKind::MbarRelaxed => wait_loop(code, decls, &bar.expect("mbarrier"), ".relaxed.cta", "cta"),
            AsyncKind::MbarCluster => wait_loop(code, decls, &bar.expect("mbarrier"), ".acquire.cluster", "cta"),
            AsyncKind::BarCluster | AsyncKind::BarClusterRelaxed => cluster_barrier(code, kind),
            AsyncKind::TmaMulticast => {
                // The reader's CTA announces the bytes on its own mbarrier (the
                // complete-tx may come before: the tx-count goes below zero and back).
                let bar = bar.expect("mbarrier");
                code.lines.push(format!("mbarrier.arrive.expect_tx.shared::cta.b64 _, [{bar}], 16"));
                wait_loop(code, decls, &bar, "", "cta");
            }
            _ => {}
        }
    }

    /// Before event `i` of thread `t`, the target of an internal edge: the edge's fence,
    /// dependency (which may change the event's `access`) or wait.
    fn after_internal(&mut self, t: usize, i: usize, code: &mut ThreadCode, access: &mut Access) {
        let src = (i + self.n - 1) % self.n;
        let x = loc_name(self.a.events[i].loc);
        let decls = &mut self.decls;
        match self.a.edges[src].kind {
            EdgeKind::Fence { kind, scope: s } => code.lines.push(format!("fence.{}.{}", kind.ptx(), s.unwrap_or(self.scope).ptx())),
            EdgeKind::Dep(dep) => {
                let r = self.read_reg[src].clone().expect("a dependency starts at a generic read");
                match dep {
                    Dep::Addr => {
                        let (zero, base, addr) = (code.reg(), code.reg(), code.reg());
                        decls.init.push(format!("P{t}:{base}=&{x};"));
                        code.lines.push(format!("xor {zero}, {r}, {r}"));
                        code.lines.push(format!("add {addr}, {base}, {zero}"));
                        access.address = format!("[{addr}]");
                    }
                    Dep::Data => {
                        let v = code.reg();
                        code.lines.push(format!("xor {v}, {r}, {r}"));
                        code.lines.push(format!("add {v}, {v}, {}", access.value.clone().unwrap_or_default()));
                        access.value = Some(v);
                    }
                    Dep::Ctrl => {
                        let label = decls.label("LC");
                        code.lines.push(format!("beq {r}, 9999, {label}"));
                        code.lines.push(format!("{label}:"));
                    }
                }
            }
            EdgeKind::Async { kind, .. } => match kind {
                AsyncKind::CpAsyncWait => {
                    code.lines.push("cp.async.commit_group".into());
                    code.lines.push("cp.async.wait_group 0".into());
                }
                AsyncKind::CpAsyncNoWait => code.lines.push("cp.async.commit_group".into()),
                AsyncKind::TmaLoadWait => {
                    let bar = self.bars[src].clone().expect("mbarrier");
                    wait_loop(code, decls, &bar, "", "cta");
                }
                AsyncKind::TmaStoreFenced | AsyncKind::ReduceFenced => code.lines.push("fence.proxy.async.shared::cta".into()),
                AsyncKind::WaitRead => code.lines.push("cp.async.bulk.wait_group.read 0".into()),
                _ => {}
            },
            _ => {}
        }
    }

    /// Event `i` of thread `t`.
    fn event(&mut self, t: usize, i: usize, code: &mut ThreadCode, access: Access, unwaited: &mut Unwaited) {
        match self.a.events[i].kind {
            EventKind::Generic(annot) => self.generic(t, i, annot, code, access),
            EventKind::RmwRead { op, annots } => self.rmw(t, i, op, annots, code, &access.address),
            EventKind::RmwWrite => {}
            EventKind::CopyWrite { .. } | EventKind::CopyRead { .. } => self.copy(i, code, unwaited),
        }
    }

    /// An ordinary access: `ld`, `st`, `atom.exch` or `red.add`.
    fn generic(&mut self, t: usize, i: usize, annot: Annot, code: &mut ThreadCode, access: Access) {
        let e = &self.a.events[i];
        let Access { address, value } = access;
        let word = annot_word(annot, self.scope);
        match e.dir {
            Dir::R => {
                let r = code.reg();
                code.lines.push(format!("ld.{word} {r}, {address}"));
                if let Some(v) = e.read_value {
                    self.decls.condition.push(format!("P{t}:{r} == {v}"));
                }
                self.read_reg[i] = Some(r);
            }
            Dir::W => {
                let value = value.unwrap_or_default();
                match annot {
                    Annot::Exch => {
                        let r = code.reg();
                        code.lines.push(format!("atom.{word}.exch {r}, {address}, {value}"));
                    }
                    Annot::Red => code.lines.push(format!("red.{word}.add {address}, {value}")),
                    _ => code.lines.push(format!("st.{word} {address}, {value}")),
                }
            }
        }
    }

    /// The read of an atomic read-modify-write (its write is the next event, and has no code).
    fn rmw(&mut self, t: usize, i: usize, op: RmwOp, annots: Option<(Annot, Annot)>, code: &mut ThreadCode, address: &str) {
        let (a, n) = (self.a, self.n);
        // The write is the next event; its value is the cycle's, and the read's is
        // the one before it (atomicity), so `add 1` and `cas v, v+1` write it too.
        let written = a.events[(i + 1) % n].write_value.unwrap_or(1);
        let sem = rmw_sem(annots, self.scope);
        if op == RmwOp::Red {
            code.lines.push(format!("red.{sem}.add {address}, 1"));
        } else {
            let r = code.reg();
            let operation = match op {
                RmwOp::Exch => format!("exch {r}, {address}, {written}"),
                RmwOp::Add => format!("add {r}, {address}, 1"),
                _ => format!("cas {r}, {address}, {}, {written}", written - 1),
            };
            code.lines.push(format!("atom.{sem}.{operation}"));
            if let Some(v) = a.events[i].read_value {
                self.decls.condition.push(format!("P{t}:{r} == {v}"));
            }
            self.read_reg[i] = Some(r);
        }
    }

    /// The write or read of an asynchronous copy: `cp.async`, a TMA load (multicast or not), or
    /// a TMA store or reduction.
    fn copy(&mut self, i: usize, code: &mut ThreadCode, unwaited: &mut Unwaited) {
        let e = &self.a.events[i];
        let out_edge = self.a.edges[i];
        let x = loc_name(e.loc);
        let decls = &mut self.decls;
        match e.kind {
            EventKind::CopyWrite { bulk: false } => {
                let src = decls.buffer("c");
                decls.init.push(format!("{src} = {};", e.write_value.unwrap_or(0)));
                // The edge that starts here (CpAsyncWait, CpAsyncNoWait or CpAsyncMbar)
                // completes the copy, except CpAsyncNoWait.
                code.lines.push(format!("cp.async.ca.shared.global [{x}], [{src}], 4"));
                unwaited.cp_async |= out_edge.async_kind() == Some(AsyncKind::CpAsyncNoWait);
            }
            EventKind::CopyWrite { bulk: true } if self.multicast[i].is_some() => {
                let src = decls.buffer("c");
                decls.init.push(format!("{src}[16] = {};", e.write_value.unwrap_or(0)));
                let Multicast { mirror, bar, mask } = self.multicast[i].clone().expect("checked");
                code.lines.push(format!("mbarrier.arrive.expect_tx.shared::cta.b64 _, [{bar}], 16"));
                code.lines.push(format!(
                    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [{mirror}], [{src}], 16, [{bar}], {mask}"
                ));
                unwaited.own_multicast = Some(bar);
            }
            EventKind::CopyWrite { bulk: true } => {
                let src = decls.buffer("c");
                decls.init.push(format!("{src}[16] = {};", e.write_value.unwrap_or(0)));
                // The edge that starts here (TmaLoadMbar or TmaLoadWait) waits for the load.
                let bar = self.bars[i].clone().expect("a TMA load's edge has its mbarrier");
                code.lines.push(format!("mbarrier.arrive.expect_tx.shared::cta.b64 _, [{bar}], 16"));
                code.lines.push(format!("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [{x}], [{src}], 16, [{bar}]"));
            }
            EventKind::CopyRead { reduce } => {
                let out = decls.buffer("o");
                decls.init.push(format!("{out}[16];"));
                let op = if reduce {
                    "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32"
                } else {
                    "cp.async.bulk.global.shared::cta.bulk_group"
                };
                code.lines.push(format!("{op} [{out}], [{x}], 16"));
                code.lines.push("cp.async.bulk.commit_group".into());
                if let Some(v) = e.read_value {
                    decls.condition.push(format!("{out} == {v}"));
                }
                unwaited.bulk_reads = true;
            }
            _ => unreachable!("a copy event"),
        }
    }

    /// After the source of an external asynchronous edge `edge` of kind `kind`: the arrival or
    /// barrier that its target waits for.
    fn signal_external(&self, kind: AsyncKind, edge: usize, code: &mut ThreadCode) {
        let bar = self.bars[edge].clone();
        match kind {
            AsyncKind::MbarSync => code.lines.push(format!("mbarrier.arrive.release.cta.shared::cta.b64 _, [{}]", bar.expect("mbarrier"))),
            AsyncKind::MbarRelaxed => {
                code.lines.push(format!("mbarrier.arrive.relaxed.cta.shared::cta.b64 _, [{}]", bar.expect("mbarrier")))
            }
            AsyncKind::MbarCluster => {
                code.lines.push(format!("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [{}]", bar.expect("mbarrier")))
            }
            AsyncKind::CpAsyncMbar => {
                code.lines.push(format!("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [{}]", bar.expect("mbarrier")));
            }
            AsyncKind::BarCluster | AsyncKind::BarClusterRelaxed => cluster_barrier(code, kind),
            _ => {}
        }
    }
}

/// The text of the test: name, comments, init block, the threads' code in columns, condition.
fn write_test(a: &Analysed, opts: &EmitOptions, shared: &[Option<usize>], bulk: &[bool], decls: Decls, codes: &[ThreadCode]) -> String {
    let mut text = String::new();
    let name = test_name(&a.edges);
    let _ = writeln!(text, "PTX {name}");
    let cycle: Vec<String> = a.edges.iter().map(Edge::to_string).collect();
    let shape = shape_name(&a.edges).map(|s| format!(" (shape {s})")).unwrap_or_default();
    let _ = writeln!(text, "\"Cycle: {}{shape}\"", cycle.join(" "));
    let _ = writeln!(
        text,
        "\"Generated by `ptxmm gen {} --scope {}`; the condition holds exactly when the cycle is observed.\"",
        cycle.join(" "),
        opts.scope.ptx()
    );
    let mut init: Vec<String> = (0..a.locations)
        .map(|l| match (shared[l], bulk[l]) {
            (Some(cta), true) => format!("{}[16] @ shared cta {cta};", loc_name(l)),
            (Some(cta), false) => format!("{} @ shared cta {cta} = 0;", loc_name(l)),
            (None, _) => format!("{}=0;", loc_name(l)),
        })
        .collect();
    init.extend(decls.init);
    let _ = writeln!(text, "{{ {} }}", init.join(" "));
    let headers: Vec<String> =
        a.placement.iter().enumerate().map(|(t, p)| format!("P{t}@cta {},cluster {},gpu {}", p.cta, p.cluster, p.gpu)).collect();
    let rows = codes.iter().map(|c| c.lines.len()).max().unwrap_or(0);
    let width: Vec<usize> =
        codes.iter().zip(&headers).map(|(c, h)| c.lines.iter().map(String::len).chain([h.len()]).max().unwrap_or(0)).collect();
    let row = |cells: Vec<&str>| -> String {
        let padded: Vec<String> = cells.iter().zip(&width).map(|(c, w)| format!("{c:<w$}")).collect();
        format!(" {} ;", padded.join(" | "))
    };
    let _ = writeln!(text, "{}", row(headers.iter().map(String::as_str).collect()));
    for k in 0..rows {
        let _ = writeln!(text, "{}", row(codes.iter().map(|c| c.lines.get(k).map_or("", String::as_str)).collect()));
    }
    let condition = if decls.condition.is_empty() { "true".to_string() } else { decls.condition.join(" /\\ ") };
    let _ = writeln!(text, "exists ({condition})");
    text
}
