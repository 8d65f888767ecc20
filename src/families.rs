//! Benchmark families: litmus tests generated from a few size parameters, so that the cost of a
//! decision can be measured as a test grows (`ptxmm bench`, `benches/families.rs`, the tables of
//! docs/performance.md).
//!
//! Each generator returns a [`FamilyPoint`]: the litmus source text (in the format of
//! docs/litmus-format.md), the `--unroll` bound that covers its loops, and the verdict and
//! liveness it must have under the default model. [`all_points`] is the full grid the scale
//! issue asks for; [`quick_points`] a representative subset that runs in a few seconds.
//! [`point`] rebuilds any point from its family name and parameter string, which is how
//! `ptxmm bench` hands a point to the child process that measures it.

use crate::config::Config;
use crate::decide::Decider;
use std::fmt::Write as _;

/// One generated test of a family.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilyPoint {
    /// The family's name, as `ptxmm bench --family` takes it (e.g. `tma-ring`).
    pub family: &'static str,
    /// The parameters, space separated `NAME=VALUE` words and flags (e.g. `S=3 C=2 L=3`);
    /// [`point`] parses them back.
    pub params: String,
    /// The litmus test's name (its `PTX` header), unique over [`all_points`].
    pub name: String,
    /// The litmus source text.
    pub source: String,
    /// The `--unroll` bound that covers every loop of the test that is not a spin loop.
    pub unroll: usize,
    /// The expected verdict name (`Allowed`, `Forbidden`, `Undefined`) and liveness (`ok`).
    pub expected: (&'static str, &'static str),
}

/// The family names, in the order [`all_points`] lists them.
pub const FAMILIES: [&str; 12] = [
    "tma-ring",
    "cp.async-loop",
    "SB",
    "IRIW",
    "ISA2",
    "independent",
    "loops",
    "long-thread",
    "mp-broadcast",
    "tile-sched",
    "tma-ring2",
    "cluster-ring",
];

/// Lay out one column of instructions per thread in the litmus format: a header row
/// (`P0@cta 0,gpu 0 | ...`) and one row per instruction, shorter columns padded with empty cells.
fn thread_table(heads: &[String], cols: &[Vec<String>]) -> String {
    let height = cols.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> =
        heads.iter().zip(cols).map(|(h, c)| c.iter().map(String::len).chain(std::iter::once(h.len())).max().unwrap_or(0)).collect();
    let row = |cells: &mut dyn Iterator<Item = &str>| {
        let cells: Vec<String> = cells.zip(&widths).map(|(c, w)| format!("{c:w$}")).collect();
        format!(" {} ;\n", cells.join(" | "))
    };
    let mut out = row(&mut heads.iter().map(String::as_str));
    for r in 0..height {
        out += &row(&mut cols.iter().map(|c| c.get(r).map_or("", String::as_str)));
    }
    out
}

/// Thread headers `P<i>@cta <cta(i)>,gpu 0` for `n` threads.
fn heads(n: usize, cta: impl Fn(usize) -> usize) -> Vec<String> {
    (0..n).map(|i| format!("P{i}@cta {},gpu 0", cta(i))).collect()
}

/// Assemble a test: header, init block, thread table, condition.
fn litmus(name: &str, init: &[String], heads: &[String], cols: &[Vec<String>], condition: &str) -> String {
    let mut s = format!("PTX {name}\n{{\n");
    for d in init {
        let _ = writeln!(s, " {d}");
    }
    s += "}\n";
    s += &thread_table(heads, cols);
    let _ = writeln!(s, "{condition}");
    s
}

/// The TMA ring pipeline with `stages` stages, `consumers` consumer threads and `laps` laps
/// around the ring (`S`, `C`, `L`), as in `tests/async/pipeline-ring-2stage-2consumer-2laps.litmus`.
///
/// One producer P0 and the consumers P1..PC, all in CTA 0. Load `i` (`0..S*L`) uses stage
/// `s = i mod S` in lap `l = i div S`: it copies `g<i>` (16 bytes, every word `i+1`) into the
/// shared buffer `s<s>` with `cp.async.bulk`, completing on the full barrier `full<s>` (count 1).
/// Before each load the producer waits on the empty barrier `empty<s>` (count C) with parity
/// `(l+1) mod 2` (a fresh barrier passes parity 1 at once) and, when `fenced`, executes
/// `fence.proxy.async.shared::cta`. Each consumer waits on `full<s>` with parity `l mod 2`,
/// reads the stage into `r<i>` and arrives on `empty<s>`.
///
/// The outcome asks whether some consumer reads a value other than its own load's: Forbidden
/// with the fence, and liveness ok. Without the fence a refill races with the consumers' generic
/// reads across proxies: Undefined.
pub fn ring(stages: usize, consumers: usize, laps: usize, fenced: bool) -> FamilyPoint {
    assert!(stages >= 1 && consumers >= 1 && laps >= 1, "ring: S, C and L are at least 1");
    ring_point("tma-ring", "ring", stages, consumers, laps, fenced, &[RingTile { global: "g", shared: "s", register: "r" }], |i, _| i + 1)
}

/// A point of a TMA ring family: [`ring_of_tiles`] named `<prefix>-<S>s-<C>c-<L>l`.
#[allow(clippy::too_many_arguments)]
fn ring_point(
    family: &'static str,
    prefix: &str,
    stages: usize,
    consumers: usize,
    laps: usize,
    fenced: bool,
    tiles: &[RingTile],
    value: impl Fn(usize, usize) -> usize,
) -> FamilyPoint {
    let (init, cols, cond) = ring_of_tiles(stages, consumers, laps, fenced, tiles, value);
    let name = format!("{prefix}-{stages}s-{consumers}c-{laps}l{}", if fenced { "" } else { "-nofence" });
    let source = litmus(&name, &init, &heads(consumers + 1, |_| 0), &cols, &cond);
    FamilyPoint {
        family,
        params: format!("S={stages} C={consumers} L={laps}{}", if fenced { "" } else { " nofence" }),
        name,
        source,
        unroll: 1,
        expected: (if fenced { "Forbidden" } else { "Undefined" }, "ok"),
    }
}

/// One tile a ring stage loads: the prefixes of its global sources (`<global><load>`), of its
/// shared buffers (`<shared><stage>`) and of the consumers' registers (`<register><load>`).
struct RingTile {
    global: &'static str,
    shared: &'static str,
    register: &'static str,
}

/// The init block, the columns and the condition of a TMA ring whose stages each load `tiles`
/// (16 bytes each, one complete-tx each on the stage's full barrier, announced together by one
/// `mbarrier.arrive.expect_tx`); `value(load, tile)` is the value every word of a source holds.
/// The condition: some consumer reads a value other than its own load's.
fn ring_of_tiles(
    stages: usize,
    consumers: usize,
    laps: usize,
    fenced: bool,
    tiles: &[RingTile],
    value: impl Fn(usize, usize) -> usize,
) -> (Vec<String>, Vec<Vec<String>>, String) {
    let loads = stages * laps;
    let mut init = Vec::new();
    for (t, tile) in tiles.iter().enumerate() {
        init.extend((0..loads).map(|i| format!("{}{i}[16] = {};", tile.global, value(i, t))));
    }
    for tile in tiles {
        init.extend((0..stages).map(|s| format!("{}{s}[16] @ shared cta 0;", tile.shared)));
    }
    init.extend((0..stages).map(|s| format!("full{s} @ shared cta 0 mbarrier(1);")));
    init.extend((0..stages).map(|s| format!("empty{s} @ shared cta 0 mbarrier({consumers});")));
    let mut cols = vec![Vec::new(); consumers + 1];
    for i in 0..loads {
        let (s, lap) = (i % stages, i / stages);
        let p = &mut cols[0];
        p.push(format!("LP{i}:"));
        p.push(format!("mbarrier.try_wait.parity.shared::cta.b64 p, [empty{s}], {}", (lap + 1) % 2));
        p.push(format!("@!p bra LP{i}"));
        if fenced {
            p.push("fence.proxy.async.shared::cta".to_string());
        }
        p.push(format!("mbarrier.arrive.expect_tx.shared::cta.b64 _, [full{s}], {}", 16 * tiles.len()));
        for tile in tiles {
            p.push(format!(
                "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [{}{s}], [{}{i}], 16, [full{s}]",
                tile.shared, tile.global
            ));
        }
        for (c, col) in cols[1..].iter_mut().enumerate() {
            let label = format!("L{}{i}", consumer_letter(c));
            col.push(format!("{label}:"));
            col.push(format!("mbarrier.try_wait.parity.shared::cta.b64 p, [full{s}], {}", lap % 2));
            col.push(format!("@!p bra {label}"));
            for tile in tiles {
                col.push(format!("ld.shared.u32 {}{i}, [{}{s}]", tile.register, tile.shared));
            }
            col.push(format!("mbarrier.arrive.shared::cta.b64 _, [empty{s}]"));
        }
    }
    let mut conj = Vec::new();
    for c in 1..=consumers {
        for i in 0..loads {
            for (t, tile) in tiles.iter().enumerate() {
                conj.push(format!("P{c}:{}{i} == {}", tile.register, value(i, t)));
            }
        }
    }
    (init, cols, format!("exists (~({}))", conj.join(" /\\ ")))
}

/// Consumer `c`'s label letter (`A`, `B`, ...; past `Z`, a number).
fn consumer_letter(c: usize) -> String {
    if c < 26 {
        char::from(b'A' + c as u8).to_string()
    } else {
        format!("C{c}_")
    }
}

/// A `cp.async` double-buffer loop over `tiles` tiles of 16 bytes, written as a loop: one thread
/// copies tile 0 into buffer 0, then in iteration `i` issues the copy of tile `i+1` (if any) into
/// buffer `(i+1) mod 2`, commits a group, waits for all but the newest group
/// (`cp.async.wait_group 1`), reads the first word of buffer `i mod 2` and stores it to
/// `out + 4i`. The loop's back edge is taken `tiles - 1` times; the point's `unroll` is `tiles`.
///
/// The outcome asks whether some `out` word differs from its tile's first word: Forbidden.
pub fn cp_async_loop(tiles: usize) -> FamilyPoint {
    assert!(tiles >= 1, "cp_async_loop: at least one tile");
    let k = tiles;
    let words: Vec<String> = (1..=4 * k).map(|v| v.to_string()).collect();
    let init = vec![
        format!("g[{}] = {{{}}};", 16 * k, words.join(", ")),
        "buf[32] @ shared cta 0;".to_string(),
        format!("out[{}];", 4 * k),
        "P0:r1 = &g;".to_string(),
        "P0:r2 = &buf;".to_string(),
        "P0:r5 = &out;".to_string(),
    ];
    let code: Vec<String> = [
        "cp.async.cg.shared.global [r2], [r1], 16",
        "cp.async.commit_group",
        "mov r3, 0",
        "LOOP:",
        "add r4, r3, 1",
        &format!("bge r4, {k}, SKIP"),
        "mul r6, r4, 16",
        "add r6, r6, r1",
        "rem r7, r4, 2",
        "mul r7, r7, 16",
        "add r7, r7, r2",
        "cp.async.cg.shared.global [r7], [r6], 16",
        "SKIP:",
        "cp.async.commit_group",
        "cp.async.wait_group 1",
        "rem r8, r3, 2",
        "mul r8, r8, 16",
        "add r8, r8, r2",
        "ld.shared.u32 r9, [r8]",
        "mul r10, r3, 4",
        "add r10, r10, r5",
        "st.global.u32 [r10], r9",
        "add r3, r3, 1",
        &format!("blt r3, {k}, LOOP"),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let conj: Vec<String> =
        (0..k).map(|i| format!("{} == {}", if i == 0 { "out".to_string() } else { format!("out+{}", 4 * i) }, 4 * i + 1)).collect();
    let name = format!("cpasync-loop-{k}");
    let source = litmus(&name, &init, &heads(1, |_| 0), &[code], &format!("exists (~({}))", conj.join(" /\\ ")));
    FamilyPoint { family: "cp.async-loop", params: format!("k={k}"), name, source, unroll: k, expected: ("Forbidden", "ok") }
}

/// The loop shapes of the `loops` family, as its flags spell them.
pub const LOOP_SHAPES: [&str; 4] = ["exch", "spin", "tiles", "ktile"];

/// A loop program of the `loops` family, decided at the fixed unrolling bound `bound` (`B`):
///
/// - `exch`: the CADP retry loop of Dat3M's `CADP/2_threads_2_instructions/0_simple.litmus`: P0
///   exchanges 0 into `m` until it reads something other than 1, P1 exchanges 1 until it reads
///   something other than 0. Each attempt writes, and the two can keep undoing each other, so
///   runs are cut at every bound; a complete run needs one iteration back. Allowed (`0 == 0`).
/// - `spin`: CADP `68_simple`'s shape: P0 spins on `m1` then stores `m0`, P1 stores `m1` then
///   spins on `m0` (awaits: never unrolled). The bound changes nothing. Allowed.
/// - `tiles`: a persistent kernel's tile scheduler: two workers take tile indices with `atom.add`
///   on a counter until it passes `B` tiles, and store to each tile they take. Every tile is
///   stored: some tile left unwritten is Forbidden; a worker iterates back at most `B` times.
/// - `ktile`: the cp.async double buffer over `B` k-tiles ([`cp_async_loop`]). Forbidden.
pub fn loop_point(shape: &str, bound: usize) -> FamilyPoint {
    let b = bound.max(1);
    let name = format!("loop-{shape}-b{b}");
    let (source, expected) = match shape {
        "exch" => {
            let col = |v: usize, leave: usize| {
                ["L:", &format!("atom.relaxed.gpu.exch r0, m, {v}"), &format!("bne r0, {leave}, DONE"), "goto L", "DONE:"]
                    .map(String::from)
                    .to_vec()
            };
            (litmus(&name, &["m = 0;".to_string()], &heads(2, |_| 0), &[col(0, 1), col(1, 0)], "exists (0 == 0)"), "Allowed")
        }
        "spin" => {
            let p0 = ["L:", "ld.relaxed.gpu r0, m1", "beq r0, 0, L", "st.relaxed.gpu m0, 1"].map(String::from).to_vec();
            let p1 = ["st.relaxed.gpu m1, 1", "L:", "ld.relaxed.gpu r1, m0", "beq r1, 0, L"].map(String::from).to_vec();
            (litmus(&name, &["m0 = 0;".to_string(), "m1 = 0;".to_string()], &heads(2, |_| 0), &[p0, p1], "exists (0 == 0)"), "Allowed")
        }
        "tiles" => {
            let col = tile_worker(b);
            let init =
                ["counter = 0;".to_string(), format!("tile[{}];", 4 * b), "P0:r5 = &tile;".to_string(), "P1:r5 = &tile;".to_string()];
            let done: Vec<String> = (0..b).map(|i| if i == 0 { "tile == 1".to_string() } else { format!("tile+{} == 1", 4 * i) }).collect();
            (litmus(&name, &init, &heads(2, |_| 0), &[col.clone(), col], &format!("exists (~({}))", done.join(" /\\ "))), "Forbidden")
        }
        "ktile" => {
            let p = cp_async_loop(b);
            (p.source.replace(&format!("PTX {}", p.name), &format!("PTX {name}")), p.expected.0)
        }
        other => panic!("loop_point: unknown shape `{other}` (one of {LOOP_SHAPES:?})"),
    };
    FamilyPoint { family: "loops", params: format!("B={b} {shape}"), name, source, unroll: b, expected: (expected, "ok") }
}

/// The `fence.sc` flag of a parameter string.
fn fence_flag(fence_sc: bool) -> &'static str {
    if fence_sc {
        " fence.sc"
    } else {
        ""
    }
}

/// Store buffering over `threads` threads in as many CTAs: thread `i` stores 1 to `x<i>`
/// (`st.relaxed.gpu`), optionally executes `fence.sc.gpu`, then loads `x<(i+1) mod n>`. The
/// outcome: every load reads 0. Allowed without the fences, Forbidden with them.
pub fn sb(threads: usize, fence_sc: bool) -> FamilyPoint {
    assert!(threads >= 2, "sb: at least 2 threads");
    let n = threads;
    let init = vec![(0..n).map(|i| format!("x{i}=0;")).collect::<Vec<_>>().join(" ")];
    let cols: Vec<Vec<String>> = (0..n)
        .map(|i| {
            let mut c = vec![format!("st.relaxed.gpu x{i}, 1")];
            if fence_sc {
                c.push("fence.sc.gpu".to_string());
            }
            c.push(format!("ld.relaxed.gpu r0, x{}", (i + 1) % n));
            c
        })
        .collect();
    let cond: Vec<String> = (0..n).map(|i| format!("P{i}:r0 == 0")).collect();
    let name = format!("SB-{n}{}", if fence_sc { "-fsc" } else { "" });
    let source = litmus(&name, &init, &heads(n, |i| i), &cols, &format!("exists ({})", cond.join(" /\\ ")));
    FamilyPoint {
        family: "SB",
        params: format!("N={n}{}", fence_flag(fence_sc)),
        name,
        source,
        unroll: 1,
        expected: (if fence_sc { "Forbidden" } else { "Allowed" }, "ok"),
    }
}

/// Independent reads of independent writes with two writers (P0 stores 1 to `x`, P1 to `y`) and
/// `readers` readers (`readers + 2` threads, each in its own CTA): reader `i` reads `x` then `y`
/// (even `i`) or `y` then `x` (odd `i`), optionally with `fence.sc.gpu` between. The outcome:
/// every reader sees its first location 1 and its second 0.
///
/// Allowed without the fences. With them Forbidden from two readers on (two readers that
/// disagree on the order of the writes); with a single reader the outcome needs no
/// disagreement and stays Allowed.
pub fn iriw(readers: usize, fence_sc: bool) -> FamilyPoint {
    assert!(readers >= 1, "iriw: at least one reader");
    let k = readers;
    let init = vec!["x=0; y=0;".to_string()];
    let mut cols = vec![vec!["st.relaxed.gpu x, 1".to_string()], vec!["st.relaxed.gpu y, 1".to_string()]];
    for i in 0..k {
        let (a, b) = if i % 2 == 0 { ("x", "y") } else { ("y", "x") };
        let mut c = vec![format!("ld.relaxed.gpu r0, {a}")];
        if fence_sc {
            c.push("fence.sc.gpu".to_string());
        }
        c.push(format!("ld.relaxed.gpu r1, {b}"));
        cols.push(c);
    }
    let cond: Vec<String> = (2..k + 2).map(|t| format!("P{t}:r0 == 1 /\\ P{t}:r1 == 0")).collect();
    let name = format!("IRIW-{k}{}", if fence_sc { "-fsc" } else { "" });
    let source = litmus(&name, &init, &heads(k + 2, |i| i), &cols, &format!("exists ({})", cond.join(" /\\ ")));
    FamilyPoint {
        family: "IRIW",
        params: format!("K={k}{}", fence_flag(fence_sc)),
        name,
        source,
        unroll: 1,
        expected: (if fence_sc && k >= 2 { "Forbidden" } else { "Allowed" }, "ok"),
    }
}

/// ISA2 over `threads` threads in as many CTAs: P0 stores `x` (relaxed) then releases `f1`;
/// P`i` acquires `f<i>` then releases `f<i+1>`; the last thread acquires `f<n-1>` then reads `x`
/// (relaxed). The outcome: every flag seen and `x` = 0. Forbidden; the test has `2^n - 1`
/// consistent executions (each of the `n` reads reads the initial value or the one write, except
/// the outcome's combination).
pub fn isa2(threads: usize) -> FamilyPoint {
    assert!(threads >= 2, "isa2: at least 2 threads");
    let n = threads;
    let mut decl = vec!["x=0;".to_string()];
    decl.extend((1..n).map(|i| format!("f{i}=0;")));
    let init = vec![decl.join(" ")];
    let mut cols = vec![vec!["st.relaxed.gpu x, 1".to_string(), "st.release.gpu f1, 1".to_string()]];
    for i in 1..n - 1 {
        cols.push(vec![format!("ld.acquire.gpu r0, f{i}"), format!("st.release.gpu f{}, 1", i + 1)]);
    }
    cols.push(vec![format!("ld.acquire.gpu r0, f{}", n - 1), "ld.relaxed.gpu r1, x".to_string()]);
    let mut cond: Vec<String> = (1..n).map(|i| format!("P{i}:r0 == 1")).collect();
    cond.push(format!("P{}:r1 == 0", n - 1));
    let name = format!("ISA2-{n}");
    let source = litmus(&name, &init, &heads(n, |i| i), &cols, &format!("exists ({})", cond.join(" /\\ ")));
    FamilyPoint { family: "ISA2", params: format!("N={n}"), name, source, unroll: 1, expected: ("Forbidden", "ok") }
}

/// One thread with `accesses` accesses to as many distinct locations `x0, x1, ...`, alternating
/// store (even index, `st.relaxed.gpu x<i>, 1`) and load (odd index, `ld.relaxed.gpu r<i>, x<i>`).
/// The outcome: every load reads 0. Allowed (one execution).
pub fn independent(accesses: usize) -> FamilyPoint {
    assert!(accesses >= 2, "independent: at least 2 accesses (one load)");
    let n = accesses;
    let init = vec![(0..n).map(|i| format!("x{i}=0;")).collect::<Vec<_>>().join(" ")];
    let code: Vec<String> =
        (0..n).map(|i| if i % 2 == 0 { format!("st.relaxed.gpu x{i}, 1") } else { format!("ld.relaxed.gpu r{i}, x{i}") }).collect();
    let cond: Vec<String> = (1..n).step_by(2).map(|i| format!("P0:r{i} == 0")).collect();
    let name = format!("indep-{n}");
    let source = litmus(&name, &init, &heads(1, |_| 0), &[code], &format!("exists ({})", cond.join(" /\\ ")));
    FamilyPoint { family: "independent", params: format!("n={n}"), name, source, unroll: 1, expected: ("Allowed", "ok") }
}

/// One long thread (issue 24): `n` instructions cycling over the four locations `x0..x3`; the
/// instruction `i` accesses `x<i mod 4>` and is, by `(i div 4) mod 3`, a store
/// (`st.relaxed.gpu`), a load (`ld.relaxed.gpu`, its register never used: a symbolic read) or an
/// exchange (`atom.relaxed.gpu.exch`), storing `i mod 3 + 1`. Many writes store the same value,
/// so without per-thread coherence every read could read many writes. The outcome: the final
/// values of the one sequential execution. Allowed (one consistent execution).
pub fn long_thread(n: usize) -> FamilyPoint {
    assert!(n >= 1, "long_thread: at least one instruction");
    let mut last = [0usize; 4];
    let code: Vec<String> = (0..n)
        .map(|i| {
            let (loc, v) = (i % 4, i % 3 + 1);
            match (i / 4) % 3 {
                0 => {
                    last[loc] = v;
                    format!("st.relaxed.gpu x{loc}, {v}")
                }
                1 => format!("ld.relaxed.gpu r{i}, x{loc}"),
                _ => {
                    last[loc] = v;
                    format!("atom.relaxed.gpu.exch.b32 r{i}, x{loc}, {v}")
                }
            }
        })
        .collect();
    let init = vec!["x0=0; x1=0; x2=0; x3=0;".to_string()];
    let cond: Vec<String> = (0..4).map(|l| format!("x{l} == {}", last[l])).collect();
    let name = format!("long-thread-{n}");
    let source = litmus(&name, &init, &heads(1, |_| 0), &[code], &format!("exists ({})", cond.join(" /\\ ")));
    FamilyPoint { family: "long-thread", params: format!("n={n}"), name, source, unroll: 1, expected: ("Allowed", "ok") }
}

/// Message passing to many readers (issue 24): P0 stores `data` (relaxed) then releases `flag`;
/// each of the `readers` readers (each in its own CTA) acquires `flag` then reads `data`. The
/// outcome: some reader sees the flag and not the data. Forbidden; every reader independently
/// sees (0,0), (0,1) or (1,1), so there are 3^readers consistent executions.
pub fn mp_broadcast(readers: usize) -> FamilyPoint {
    assert!(readers >= 1, "mp_broadcast: at least one reader");
    let mut cols = vec![vec!["st.relaxed.gpu data, 1".to_string(), "st.release.gpu flag, 1".to_string()]];
    cols.extend((0..readers).map(|_| vec!["ld.acquire.gpu r0, flag".to_string(), "ld.relaxed.gpu r1, data".to_string()]));
    let cond: Vec<String> = (1..=readers).map(|t| format!("P{t}:r0 == 1 /\\ P{t}:r1 == 0")).collect();
    let name = format!("MP-broadcast-{readers}");
    let init = vec!["data=0; flag=0;".to_string()];
    let source = litmus(&name, &init, &heads(readers + 1, |i| i), &cols, &format!("exists ({})", cond.join(" \\/ ")));
    FamilyPoint { family: "mp-broadcast", params: format!("N={readers}"), name, source, unroll: 1, expected: ("Forbidden", "ok") }
}

/// One worker of a tile scheduler over `tiles` tiles: take a tile index with `atom.add` on
/// `counter` until it passes `tiles`, and store 1 to each tile taken (`r5` holds `&tile`).
fn tile_worker(tiles: usize) -> Vec<String> {
    [
        "L:",
        "atom.relaxed.gpu.add r0, counter, 1",
        &format!("bge r0, {tiles}, DONE"),
        "mul r1, r0, 4",
        "add r1, r1, r5",
        "st.relaxed.gpu [r1], 1",
        "goto L",
        "DONE:",
    ]
    .map(String::from)
    .to_vec()
}

/// A persistent kernel's tile scheduler written as a loop (issue 24): `workers` workers (one CTA)
/// take tile indices with `atom.add` on `counter` until it passes `tiles`, and store 1 to each
/// tile they take. The outcome: some tile left unwritten. Forbidden; a worker iterates back at
/// most `tiles` times (the point's `unroll`).
pub fn tile_scheduler(workers: usize, tiles: usize) -> FamilyPoint {
    assert!(workers >= 1 && tiles >= 1, "tile_scheduler: W and T are at least 1");
    let col = tile_worker(tiles);
    let mut init = vec!["counter = 0;".to_string(), format!("tile[{}];", 4 * tiles)];
    init.extend((0..workers).map(|w| format!("P{w}:r5 = &tile;")));
    let done: Vec<String> = (0..tiles).map(|i| if i == 0 { "tile == 1".to_string() } else { format!("tile+{} == 1", 4 * i) }).collect();
    let name = format!("tile-sched-{workers}w-{tiles}t");
    let cols = vec![col; workers];
    let source = litmus(&name, &init, &heads(workers, |_| 0), &cols, &format!("exists (~({}))", done.join(" /\\ ")));
    FamilyPoint {
        family: "tile-sched",
        params: format!("W={workers} T={tiles}"),
        name,
        source,
        unroll: tiles,
        expected: ("Forbidden", "ok"),
    }
}

/// The shapes issue 24 asks to decide within 10 s and 2 GB each (see docs/performance.md,
/// "Kernel-scale verdict search"): one thread of 1,500 instructions, the tile scheduler with 4
/// workers and 4 tiles, MP broadcast with 16 threads, IRIW with 12 threads without and with
/// `fence.sc`, SB-16 with `fence.sc`.
pub fn issue24_targets() -> Vec<FamilyPoint> {
    vec![long_thread(1500), tile_scheduler(4, 4), mp_broadcast(15), iriw(10, false), iriw(10, true), sb(16, true)]
}

/// The TMA ring with two copies per stage (CUTLASS `PipelineTmaAsync` loading an A and a B tile
/// on one full barrier), `stages` stages, `consumers` consumers, `laps` laps (`S`, `C`, `L`).
///
/// As [`ring`], except that load `i` copies two 16-byte tiles, `ga<i>` (every word `2i+1`) into
/// `a<s>` and `gb<i>` (every word `2i+2`) into `b<s>`, both completing on `full<s>`, which the
/// producer announces with one `mbarrier.arrive.expect_tx … 32`; each consumer reads both tiles
/// (`ra<i>`, `rb<i>`) before it arrives on `empty<s>`. Two complete-tx per phase are what made
/// the mbarrier histories grow with every subset of completions across laps (issue 24).
///
/// Forbidden with the fence, and liveness ok; without it: Undefined.
pub fn tma_ring2(stages: usize, consumers: usize, laps: usize, fenced: bool) -> FamilyPoint {
    assert!(stages >= 1 && consumers >= 1 && laps >= 1, "tma_ring2: S, C and L are at least 1");
    let tiles = [RingTile { global: "ga", shared: "a", register: "ra" }, RingTile { global: "gb", shared: "b", register: "rb" }];
    ring_point("tma-ring2", "ring2", stages, consumers, laps, fenced, &tiles, |i, t| 2 * i + 1 + t)
}

/// A TMA ring over a 2-CTA cluster with multicast (`S` stages, `C` consumers in each CTA, `L`
/// laps). CTA 0 runs the producer P0 and consumers P1..PC, CTA 1 consumers P(C+1)..P(2C). Both
/// CTAs declare their shared variables in one order (`s<s>`/`t<s>`, `full<s>`/`fullb<s>`,
/// `empty<s>`/`emptyb<s>`), so they sit at the same CTA-relative offsets.
///
/// Load `i` (stage `s = i mod S`, lap `l = i div S`): the producer waits on `empty<s>` (count
/// 2C) with `.acquire.cluster`, fences the proxies when `fenced`, announces 16 bytes on its own
/// `full<s>` (`mbarrier.arrive.expect_tx`) and on CTA 1's (`mapa` of `full<s>` to rank 1, then
/// `mbarrier.expect_tx` and a release arrive through `.shared::cluster`: ptxmm takes
/// `arrive.expect_tx` on the own CTA only), and multicasts `g<i>` (every word `i+1`) to both CTAs
/// (`.multicast::cluster`, ctaMask 0b11), completing on the full barrier at the same offset in
/// each. Each consumer waits on its CTA's full barrier (parity `l mod 2`) and reads the stage;
/// CTA 0's consumers arrive on `empty<s>`, CTA 1's release CTA 0's `empty<s>` remotely (`mapa`
/// of `emptyb<s>` to rank 0, `mbarrier.arrive.release.cluster.shared::cluster`).
///
/// Forbidden with the fence, and liveness ok; without it: Undefined.
pub fn cluster_ring(stages: usize, consumers: usize, laps: usize, fenced: bool) -> FamilyPoint {
    assert!(stages >= 1 && consumers >= 1 && laps >= 1, "cluster_ring: S, C and L are at least 1");
    let loads = stages * laps;
    let mut init = Vec::new();
    init.extend((0..loads).map(|i| format!("g{i}[16] = {};", i + 1)));
    for (cta, (tile, full, empty)) in [("s", "full", "empty"), ("t", "fullb", "emptyb")].into_iter().enumerate() {
        init.extend((0..stages).map(|s| format!("{tile}{s}[16] @ shared cta {cta};")));
        init.extend((0..stages).map(|s| format!("{full}{s} @ shared cta {cta} mbarrier(1);")));
        init.extend((0..stages).map(|s| format!("{empty}{s} @ shared cta {cta} mbarrier({});", 2 * consumers)));
    }
    let threads = 2 * consumers + 1;
    let mut cols = vec![Vec::new(); threads];
    cols[0].extend((0..stages).map(|s| format!("mapa.shared::cluster.u32 f{s}, full{s}, 1")));
    for col in &mut cols[consumers + 1..] {
        col.extend((0..stages).map(|s| format!("mapa.shared::cluster.u32 e{s}, emptyb{s}, 0")));
    }
    for i in 0..loads {
        let (s, lap) = (i % stages, i / stages);
        let p = &mut cols[0];
        p.push(format!("LP{i}:"));
        p.push(format!("mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [empty{s}], {}", (lap + 1) % 2));
        p.push(format!("@!p bra LP{i}"));
        if fenced {
            p.push("fence.proxy.async.shared::cluster".to_string());
        }
        p.push(format!("mbarrier.arrive.expect_tx.shared::cta.b64 _, [full{s}], 16"));
        p.push(format!("mbarrier.expect_tx.relaxed.cluster.shared::cluster.b64 [f{s}], 16"));
        p.push(format!("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [f{s}]"));
        p.push(format!(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [s{s}], [g{i}], 16, [full{s}], 3"
        ));
        for (t, col) in cols.iter_mut().enumerate().skip(1) {
            let remote = t > consumers;
            let (tile, full) = if remote { ("t", "fullb") } else { ("s", "full") };
            let label = format!("L{t}_{i}");
            col.push(format!("{label}:"));
            col.push(format!("mbarrier.try_wait.parity.shared::cta.b64 p, [{full}{s}], {}", lap % 2));
            col.push(format!("@!p bra {label}"));
            col.push(format!("ld.shared.u32 r{i}, [{tile}{s}]"));
            col.push(if remote {
                format!("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [e{s}]")
            } else {
                format!("mbarrier.arrive.shared::cta.b64 _, [empty{s}]")
            });
        }
    }
    let conj: Vec<String> = (1..threads).flat_map(|t| (0..loads).map(move |i| format!("P{t}:r{i} == {}", i + 1))).collect();
    let name = format!("cluster-ring-{stages}s-{consumers}c-{laps}l{}", if fenced { "" } else { "-nofence" });
    let heads: Vec<String> = (0..threads).map(|t| format!("P{t}@cta {},cluster 0,gpu 0", usize::from(t > consumers))).collect();
    let source = litmus(&name, &init, &heads, &cols, &format!("exists (~({}))", conj.join(" /\\ ")));
    FamilyPoint {
        family: "cluster-ring",
        params: format!("S={stages} C={consumers} L={laps}{}", if fenced { "" } else { " nofence" }),
        name,
        source,
        unroll: 1,
        expected: (if fenced { "Forbidden" } else { "Undefined" }, "ok"),
    }
}

/// The full grid of the scale issue, grouped by family in [`FAMILIES`] order: the TMA ring with
/// S = 1..4, C = 1..3, L = 1..3 (fenced, 36 points); the cp.async loop with k = 1..8; SB with
/// n = 2..8 and 16 threads and IRIW with k = 1..6, 8 and 10 readers (up to 12 threads), each
/// without and with `fence.sc` (the largest decided by the outcome-directed search, issue 24); ISA2 with n = 2..16 threads; n independent accesses for n in
/// {10, 25, 50, 100, 150, 200}.
pub fn all_points() -> Vec<FamilyPoint> {
    let mut v = Vec::new();
    for s in 1..=4 {
        for c in 1..=3 {
            for l in 1..=3 {
                v.push(ring(s, c, l, true));
            }
        }
    }
    v.extend((1..=8).map(cp_async_loop));
    for fence in [false, true] {
        v.extend((2..=8).chain([16]).map(|n| sb(n, fence)));
    }
    for fence in [false, true] {
        v.extend((1..=6).chain([8, 10]).map(|k| iriw(k, fence)));
    }
    v.extend((2..=16).map(isa2));
    v.extend([10, 25, 50, 100, 150, 200].into_iter().map(independent));
    for shape in LOOP_SHAPES {
        v.extend([1, 2, 4, 8, 16].into_iter().map(|b| loop_point(shape, b)));
    }
    v.extend([50, 100, 200, 400].into_iter().map(long_thread));
    v.extend([2, 4, 6, 8, 12, 16].into_iter().map(mp_broadcast));
    v.extend([(2, 1), (2, 2), (3, 2), (4, 1), (4, 4)].into_iter().map(|(w, t)| tile_scheduler(w, t)));
    v.extend((1..=8).map(|l| tma_ring2(4, 2, l, true)));
    v.extend([4, 8].into_iter().map(|l| tma_ring2(8, 4, l, true)));
    v.extend((1..=8).map(|l| cluster_ring(4, 2, l, true)));
    v
}

/// A representative subset of [`all_points`] that decides in a few seconds: ring 1-1-1, 2-2-2 and
/// 3-1-3, the cp.async loop with 4 tiles, SB-4 and IRIW-3 without and with `fence.sc`, ISA2-8
/// and 50 independent accesses.
pub fn quick_points() -> Vec<FamilyPoint> {
    vec![
        ring(1, 1, 1, true),
        ring(2, 2, 2, true),
        ring(3, 1, 3, true),
        cp_async_loop(4),
        sb(4, false),
        sb(4, true),
        iriw(3, false),
        iriw(3, true),
        isa2(8),
        independent(50),
        loop_point("exch", 4),
        loop_point("tiles", 4),
    ]
}

/// The family name as [`FAMILIES`] spells it, matched case-insensitively (`ring` and `cp.async`
/// are accepted too).
pub fn family_name(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    let alias = match lower.as_str() {
        "ring" => "tma-ring",
        "cp.async" | "cpasync" | "cp-async-loop" | "cpasync-loop" => "cp.async-loop",
        "indep" => "independent",
        "ring2" => "tma-ring2",
        other => other,
    };
    FAMILIES.iter().copied().find(|f| f.eq_ignore_ascii_case(alias))
}

/// Rebuild a point from its family name and parameter string (as in [`FamilyPoint::params`]:
/// `NAME=VALUE` words, plus the flags `fence.sc` for SB and IRIW and `nofence` for the ring).
/// Any size is accepted, not only the grid's.
pub fn point(family: &str, params: &str) -> Result<FamilyPoint, String> {
    let family = family_name(family).ok_or_else(|| format!("unknown family `{family}` (one of: {})", FAMILIES.join(", ")))?;
    let mut values: Vec<(String, usize)> = Vec::new();
    let mut flags: Vec<String> = Vec::new();
    for word in params.split_whitespace() {
        match word.split_once('=') {
            Some((k, v)) => {
                let v: usize = v.parse().map_err(|_| format!("`{word}`: the value is not a number"))?;
                values.push((k.to_string(), v));
            }
            None => flags.push(word.to_string()),
        }
    }
    let take = |key: &str, values: &mut Vec<(String, usize)>| -> Result<usize, String> {
        let i =
            values.iter().position(|(k, _)| k.eq_ignore_ascii_case(key)).ok_or_else(|| format!("{family}: missing parameter `{key}=N`"))?;
        Ok(values.remove(i).1)
    };
    let mut flag = |name: &str| -> bool {
        let before = flags.len();
        flags.retain(|f| !f.eq_ignore_ascii_case(name));
        flags.len() != before
    };
    let (p, min) = match family {
        "tma-ring" => {
            let (s, c, l) = (take("S", &mut values)?, take("C", &mut values)?, take("L", &mut values)?);
            let nofence = flag("nofence");
            ((s.min(c).min(l) >= 1).then(|| ring(s, c, l, !nofence)), "S, C and L at least 1")
        }
        "cp.async-loop" => {
            let k = take("k", &mut values)?;
            ((k >= 1).then(|| cp_async_loop(k)), "k at least 1")
        }
        "SB" => {
            let n = take("N", &mut values)?;
            let f = flag("fence.sc");
            ((n >= 2).then(|| sb(n, f)), "N at least 2")
        }
        "IRIW" => {
            let k = take("K", &mut values)?;
            let f = flag("fence.sc");
            ((k >= 1).then(|| iriw(k, f)), "K at least 1")
        }
        "ISA2" => {
            let n = take("N", &mut values)?;
            ((n >= 2).then(|| isa2(n)), "N at least 2")
        }
        "independent" => {
            let n = take("n", &mut values)?;
            ((n >= 2).then(|| independent(n)), "n at least 2")
        }
        "loops" => {
            let b = take("B", &mut values)?;
            let shape = LOOP_SHAPES.iter().copied().find(|s| flag(s));
            let Some(shape) = shape else { return Err(format!("loops: one shape flag is needed ({})", LOOP_SHAPES.join(", "))) };
            ((b >= 1).then(|| loop_point(shape, b)), "B at least 1")
        }
        "long-thread" => {
            let n = take("n", &mut values)?;
            ((n >= 1).then(|| long_thread(n)), "n at least 1")
        }
        "mp-broadcast" => {
            let n = take("N", &mut values)?;
            ((n >= 1).then(|| mp_broadcast(n)), "N at least 1")
        }
        "tile-sched" => {
            let (w, t) = (take("W", &mut values)?, take("T", &mut values)?);
            ((w.min(t) >= 1).then(|| tile_scheduler(w, t)), "W and T at least 1")
        }
        "tma-ring2" | "cluster-ring" => {
            let (s, c, l) = (take("S", &mut values)?, take("C", &mut values)?, take("L", &mut values)?);
            let fenced = !flag("nofence");
            let make = if family == "tma-ring2" { tma_ring2 } else { cluster_ring };
            ((s.min(c).min(l) >= 1).then(|| make(s, c, l, fenced)), "S, C and L at least 1")
        }
        _ => unreachable!("family_name returns one of FAMILIES"),
    };
    if let Some((k, _)) = values.first() {
        return Err(format!("{family}: unknown parameter `{k}`"));
    }
    if let Some(f) = flags.first() {
        return Err(format!("{family}: unknown flag `{f}`"));
    }
    p.ok_or_else(|| format!("{family}: {min}"))
}

/// What `ptxmm bench` measures of one point (one row of its table, one object of its JSON).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Measurement {
    pub name: String,
    pub family: String,
    pub params: String,
    pub unroll: usize,
    /// The verdict's name (`Unknown` when a limit stopped the search); None when the decision
    /// failed or the child process measuring the point crashed.
    pub verdict: Option<String>,
    pub expected_verdict: String,
    /// `ok` or `may_hang`; None when the liveness check did not finish.
    pub liveness: Option<String>,
    pub expected_liveness: String,
    /// Whether what was decided (verdict, liveness) is what the point expects: false as soon as
    /// one decided answer differs, None when nothing differs but something was not decided.
    pub matches_expected: Option<bool>,
    /// Seconds of the verdict and the liveness check together.
    pub run_s: f64,
    pub verdict_s: f64,
    pub liveness_s: f64,
    /// Seconds of the explanation; None when it was not run (`--no-explain`).
    pub explain_s: Option<f64>,
    /// Peak resident memory of the measuring process (`VmHWM`), in MiB; None where unavailable.
    pub peak_mb: Option<f64>,
    /// The verdict search's statistics (`check::Outcome::stats`): every model evaluation
    /// (partial candidates included), complete candidates evaluated, consistent executions.
    pub evaluations: u64,
    /// Partial candidates built (`SearchStats::partial`) and those with nothing consistent
    /// below them (`SearchStats::dead_ends`).
    pub partial: u64,
    pub dead_ends: u64,
    pub candidates: u64,
    pub consistent: u64,
    /// `candidates`, `dead_ends` and `evaluations` per consistent execution; None when nothing
    /// is consistent.
    pub candidates_per_consistent: Option<f64>,
    pub dead_ends_per_consistent: Option<f64>,
    pub evaluations_per_consistent: Option<f64>,
    /// What went wrong (a limit, an error, a crash), or None.
    pub error: Option<String>,
}

impl Measurement {
    /// A row for `point` with nothing measured and `error` as the reason.
    pub fn failed(point: &FamilyPoint, error: String) -> Measurement {
        Measurement {
            name: point.name.clone(),
            family: point.family.to_string(),
            params: point.params.clone(),
            unroll: point.unroll,
            verdict: None,
            expected_verdict: point.expected.0.to_string(),
            liveness: None,
            expected_liveness: point.expected.1.to_string(),
            matches_expected: None,
            run_s: 0.0,
            verdict_s: 0.0,
            liveness_s: 0.0,
            explain_s: None,
            peak_mb: None,
            evaluations: 0,
            partial: 0,
            dead_ends: 0,
            candidates: 0,
            consistent: 0,
            candidates_per_consistent: None,
            dead_ends_per_consistent: None,
            evaluations_per_consistent: None,
            error: Some(error),
        }
    }

    /// A decided verdict or liveness differs from the expected one (a bug, not a slow point).
    pub fn mismatch(&self) -> bool {
        self.matches_expected == Some(false)
    }
}

/// The configuration `ptxmm bench` measures a point with: `config` with the point's unrolling
/// bound. Each of the verdict, the liveness check and the explanation gets the whole timeout
/// (no shared deadline).
pub fn point_config(point: &FamilyPoint, config: &Config) -> Config {
    let mut c = config.clone();
    c.limits = c.limits.with_fixed_unroll(point.unroll);
    c
}

/// Measure `point` under `config` in this process: time the verdict, the liveness check and,
/// when `explain`, the explanation, each with [`point_config`] and a deadline of its own; then
/// read this process's peak memory (so run it in a process of its own, as `ptxmm bench` does,
/// for the peak to be the point's).
pub fn measure(point: &FamilyPoint, config: &Config, explain: bool) -> Measurement {
    use crate::clock::Instant;
    let mut m = Measurement::failed(point, String::new());
    let mut errors: Vec<String> = Vec::new();
    let program = match crate::parse_program(crate::diag::SourceFile::new(format!("{}.litmus", point.name), point.source.clone())) {
        Ok(p) => p,
        Err(e) => {
            m.error = Some(e.render(false));
            return m;
        }
    };
    let config = point_config(point, config);
    let start = Instant::now();
    match Decider::new(&config).verdict(&program) {
        Ok(outcome) => {
            m.verdict = Some(outcome.verdict().name().to_string());
            if let Some(why) = &outcome.incomplete {
                errors.push(format!("verdict not decided: {why}"));
            }
            m.evaluations = outcome.stats.evaluations;
            m.partial = outcome.stats.partial;
            m.dead_ends = outcome.stats.dead_ends;
            m.candidates = outcome.stats.candidates;
            m.consistent = outcome.stats.consistent;
        }
        Err(e) => errors.push(format!("verdict: {e}")),
    }
    m.verdict_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    match Decider::new(&config).liveness(&program) {
        Ok(l) => m.liveness = Some(liveness_name(&l.status).to_string()),
        Err(e) => errors.push(format!("liveness: {e}")),
    }
    m.liveness_s = start.elapsed().as_secs_f64();
    m.run_s = m.verdict_s + m.liveness_s;
    if explain {
        let start = Instant::now();
        if let Err(e) = Decider::new(&config).explain(&program) {
            errors.push(format!("explain: {e}"));
        }
        m.explain_s = Some(start.elapsed().as_secs_f64());
    }
    let ratio = |x: u64| (m.consistent > 0).then(|| x as f64 / m.consistent as f64);
    m.candidates_per_consistent = ratio(m.candidates);
    m.dead_ends_per_consistent = ratio(m.dead_ends);
    m.evaluations_per_consistent = ratio(m.evaluations);
    let decided_verdict = m.verdict.as_deref().filter(|v| *v != "Unknown");
    let verdict_ok = decided_verdict.map(|v| v == point.expected.0);
    let liveness_ok = m.liveness.as_deref().map(|l| l == point.expected.1);
    m.matches_expected = match (verdict_ok, liveness_ok) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    };
    m.error = (!errors.is_empty()).then(|| errors.join("; "));
    m.peak_mb = peak_memory_mb();
    m
}

/// The liveness status as the JSON report spells it.
fn liveness_name(s: &crate::decide::liveness::LivenessStatus) -> &'static str {
    match s {
        crate::decide::liveness::LivenessStatus::Ok => "ok",
        crate::decide::liveness::LivenessStatus::MayHang => "may_hang",
    }
}

/// This process's peak resident memory in MiB (`VmHWM` of `/proc/self/status`), where the
/// system has it.
pub fn peak_memory_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.trim_start_matches("VmHWM:").trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kb / 1024.0)
}

/// The markdown table of `rows`, one row per measurement in the given order, with the
/// columns: family, parameters, verdict (✓ when expected, else what was expected), liveness,
/// run s (verdict + liveness), explain s, peak MB, evaluations, partial candidates, dead ends,
/// candidates, consistent, candidates/consistent, dead ends/consistent,
/// evaluations/consistent, notes (errors and limits).
pub fn markdown_table(rows: &[Measurement]) -> String {
    let head = [
        "family",
        "parameters",
        "verdict",
        "liveness",
        "run s",
        "explain s",
        "peak MB",
        "evaluations",
        "partial",
        "dead ends",
        "candidates",
        "consistent",
        "candidates/consistent",
        "dead ends/consistent",
        "evaluations/consistent",
        "notes",
    ];
    let judged = |got: &Option<String>, expected: &str| match got.as_deref() {
        None => format!("error (expected {expected})"),
        Some(g) if g == expected => format!("{g} ✓"),
        Some("Unknown") => format!("Unknown (expected {expected})"),
        Some(g) => format!("{g} ✗ (expected {expected})"),
    };
    let ratio = |r: Option<f64>| r.map_or_else(|| "n/a".to_string(), |r| format!("{r:.2}"));
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|m| {
            let crashed = m.verdict.is_none() && m.liveness.is_none();
            let num = |x: String| if crashed { "-".to_string() } else { x };
            vec![
                m.family.clone(),
                m.params.clone(),
                judged(&m.verdict, &m.expected_verdict),
                judged(&m.liveness, &m.expected_liveness),
                num(format!("{:.3}", m.run_s)),
                m.explain_s.map_or_else(|| "-".to_string(), |s| format!("{s:.3}")),
                m.peak_mb.map_or_else(|| "n/a".to_string(), |p| format!("{p:.1}")),
                num(m.evaluations.to_string()),
                num(m.partial.to_string()),
                num(m.dead_ends.to_string()),
                num(m.candidates.to_string()),
                num(m.consistent.to_string()),
                ratio(m.candidates_per_consistent),
                ratio(m.dead_ends_per_consistent),
                ratio(m.evaluations_per_consistent),
                m.error.as_deref().unwrap_or("").replace('|', "\\|").replace('\n', " "),
            ]
        })
        .collect();
    let widths: Vec<usize> =
        (0..head.len()).map(|c| cells.iter().map(|r| r[c].chars().count()).chain([head[c].len()]).max().unwrap_or(0)).collect();
    // Numbers right-aligned, text left-aligned.
    let right = |c: usize| (4..15).contains(&c);
    let line = |cells: &mut dyn Iterator<Item = String>| {
        let padded: Vec<String> = cells
            .enumerate()
            .map(|(c, s)| {
                let pad = " ".repeat(widths[c] - s.chars().count());
                if right(c) {
                    format!("{pad}{s}")
                } else {
                    format!("{s}{pad}")
                }
            })
            .collect();
        format!("| {} |\n", padded.join(" | "))
    };
    let mut out = line(&mut head.iter().map(|h| h.to_string()));
    out += &line(&mut widths.iter().enumerate().map(|(c, w)| if right(c) { format!("{}:", "-".repeat(w - 1)) } else { "-".repeat(*w) }));
    for r in cells {
        out += &line(&mut r.into_iter());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_round_trip_through_their_parameters() {
        for p in all_points().into_iter().chain([ring(2, 1, 1, false), tma_ring2(2, 1, 1, false), cluster_ring(1, 1, 1, false)]) {
            assert_eq!(point(p.family, &p.params).as_ref(), Ok(&p), "{} {}", p.family, p.params);
        }
    }

    #[test]
    fn bad_parameters_are_errors() {
        assert!(point("nope", "N=2").is_err());
        assert!(point("SB", "N=1").is_err());
        assert!(point("SB", "N=x").is_err());
        assert!(point("SB", "N=2 K=3").is_err());
        assert!(point("SB", "N=2 nofence").is_err());
        assert!(point("tma-ring", "S=1 C=1").is_err());
        assert_eq!(point("ring", "s=1 c=1 l=1").map(|p| p.name), Ok("ring-1s-1c-1l".to_string()));
    }

    #[test]
    fn loop_points_come_back_from_their_parameters() {
        for shape in LOOP_SHAPES {
            let p = loop_point(shape, 4);
            assert_eq!(point("loops", &p.params).map(|q| q.name), Ok(p.name.clone()));
        }
        assert!(point("loops", "B=2").unwrap_err().contains("shape"));
        assert!(point("loops", "B=0 exch").is_err());
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<String> = all_points().into_iter().map(|p| p.name).collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n);
        assert_eq!(n, 36 + 8 + 16 + 16 + 15 + 6 + 4 * 5 + 4 + 6 + 5 + 10 + 8);
    }
}
