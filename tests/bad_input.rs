//! Malformed litmus files: each must fail with a `file:line:col` diagnostic and a non-zero exit
//! code, never a panic.

use assert_cmd::Command;

/// (file under tests/bad, expected `line:col`, a fragment of the message)
const CASES: &[(&str, &str, &str)] = &[
    ("missing-semicolon.litmus", "4:33", "expected `;` at the end of the row"),
    ("unknown-instruction.litmus", "4:2", "unsupported instruction `stx.weak`"),
    ("undefined-register.litmus", "4:13", "undefined register `r5`"),
    ("bad-scope.litmus", "4:13", "expected a scope (.cta, .cluster, .gpu or .sys), found `.warp`"),
    ("missing-scope.litmus", "4:2", "a .release store requires a scope"),
    // A typo is named as one, not as the scope that then looks misplaced (issue 44).
    ("typo-release.litmus", "4:5", "unknown qualifier `.relase` (did you mean `.release`?)"),
    ("typo-acquire.litmus", "4:27", "unknown qualifier `.aquire` (did you mean `.acquire`?)"),
    ("typo-qualifier.litmus", "4:11", "did you mean `.aligned`?"),
    ("condition-register.litmus", "5:9", "did you mean `P1:r0`?"),
    ("alias-unknown.litmus", "2:28", "refers to unknown location `nowhere`"),
    ("forall-unknown-register.litmus", "5:9", "unknown register `r7` of thread P0"),
    ("unknown-location.litmus", "4:10", "`y+4` is not a word of `y` (4 bytes)"),
    ("unknown-label.litmus", "5:13", "unknown label `LC99`"),
    ("too-many-columns.litmus", "4:2", "expected 2 columns, found 3"),
    ("weak-with-scope.litmus", "4:10", "a weak store takes no scope"),
    ("bad-fence-sem.litmus", "4:8", "unsupported qualifier `.weak` on `fence`"),
    ("unclosed-init.litmus", "3:2", "expected `}` to close the init block"),
    ("bad-condition.litmus", "5:14", "found `)`"),
    ("wrong-operand-count.litmus", "4:2", "expected 3 operand(s)"),
    ("unsupported-tensor.litmus", "4:2", "`tcgen05.ld.sync.aligned` is not supported"),
    ("duplicate-location.litmus", "2:8", "location `x` is declared twice"),
    // Asynchronous operations: declarations.
    ("async-size-not-multiple-of-4.litmus", "2:5", "a size in bytes that is a positive multiple of 4"),
    ("async-word-init-count.litmus", "2:11", "expected 4 word value(s) for the 16 bytes of `g`, found 3"),
    ("async-bad-alignment.litmus", "2:41", "an alignment that is a power of two, found 12"),
    ("async-shared-missing-cta.litmus", "2:14", "expected `cta` (as in `@ shared cta 0`), found `0`"),
    ("async-mbarrier-in-global.litmus", "2:23", "mbarrier objects live in shared memory"),
    ("async-mbarrier-count-range.litmus", "2:29", "mbarrier count 1048576 is outside [1, 2^20-1]"),
    ("async-mbarrier-initial-value.litmus", "2:36", "an mbarrier takes no initial value"),
    // Addresses and conditions naming a word of a variable.
    ("async-word-offset-outside.litmus", "4:16", "`s+16` is not a word of `s` (16 bytes)"),
    ("async-condition-word-outside.litmus", "5:9", "unknown location `s+16`"),
    // Copies.
    ("async-cp-async-cg-size.litmus", "4:38", "a cp-size of [16] bytes for `.cg`"),
    ("async-cp-async-to-cluster.litmus", "4:2", "`cp.async` needs the destination space `.shared{::cta}`"),
    ("async-wait-group-register.litmus", "6:22", "expected a constant group count N, found `r1`"),
    ("async-bulk-bad-direction.litmus", "4:16", "`cp.async.bulk.global.global` is not a direction PTX defines"),
    ("async-bulk-shared-without-mbarrier.litmus", "4:2", "needs the completion mechanism `.mbarrier::complete_tx::bytes`"),
    ("async-multicast-wrong-direction.litmus", "4:73", "`.multicast::cluster` exists only for `cp.async.bulk.shared::cluster.global`"),
    ("async-multicast-without-mask.litmus", "4:2", "expected 5 operand(s)"),
    ("async-reduce-float.litmus", "4:57", "expected an element type of `.add` to `.global`: .u32 .s32 .u64 .f32 .f64 .f16 .bf16"),
    ("async-tensor-copy.litmus", "4:88", "expected a tensor operand `[tensorMap, {c0, ...}]`, found an address `[...]`"),
    ("async-tcgen05.litmus", "4:2", "is not supported by this version of ptxmm"),
    // mbarrier, fences and the cluster barrier.
    ("async-mbarrier-init-cluster-space.litmus", "4:2", "`mbarrier.init` cannot use a `.shared::cluster` address"),
    ("async-expect-tx-without-count.litmus", "4:2", "`.expect_tx` needs a txCount operand"),
    ("async-try-wait-operands.litmus", "7:2", "expected 3 or 4 operands for `mbarrier.try_wait`"),
    ("async-fence-proxy-bad-space.litmus", "5:20", "expected a state space (.global, .shared::cta, .shared::cluster), found `.local`"),
    ("async-mbarrier-init-fence-scope.litmus", "5:8", "the only form is `fence.mbarrier_init.release.cluster`"),
    ("async-cluster-wait-relaxed.litmus", "6:23", "`barrier.cluster.wait` does not take `.relaxed`"),
    // PTX statement syntax in code blocks, PTX declarations and their instances (issue 22).
    ("ptx-block-missing-semicolon.litmus", "6:2", "expected `,` or `;` after an operand, found `ret`"),
    ("ptx-block-unclosed.litmus", "7:2", "expected `}` to close this block, found end of file"),
    ("ptx-special-clock.litmus", "6:15", "`%clock` reads a value that differs from run to run"),
    ("ptx-special-no-component.litmus", "6:15", "`%ctaid` is a vector: read `%ctaid.x`, `%ctaid.y` or `%ctaid.z`"),
    ("ptx-special-written.litmus", "5:10", "`%tid.x` is a special register: read-only"),
    ("ptx-tid-twice.litmus", "3:24", "P0 and P1 are both thread 5 of CTA 0"),
    ("ptx-tid-range.litmus", "3:20", "expected a thread id in [0, 1024)"),
    ("ptx-warp-column.litmus", "3:23", "P0 is a warp column: `tid` and `warp` both place it"),
    (
        "ptx-block-global-declaration.litmus",
        "5:2",
        "expected `.reg`, `.shared` or `.local` (the declarations of a code block), found `.global`",
    ),
    ("ptx-thread-blocks-order.litmus", "4:1", "expected thread `P0` and its block `P0 { ... }`, found `P1`"),
    ("ptx-reg-parameterized-name.litmus", "5:15", "expected the number of registers (`%r<15>` declares %r0 to %r14), found `n`"),
    ("ptx-unterminated-comment.litmus", "5:7", "expected `*/` to close this comment"),
    ("ptx-ret-operand.litmus", "5:6", "expected no operand for `ret`"),
    ("ptx-scoped-register-undefined.litmus", "8:15", "undefined register `P_OUT`"),
    ("ptx-declaration-too-large.litmus", "2:30", "`tile` is 240000 bytes, more than a CTA's shared memory (sm_90: 227 KiB), 232448 bytes"),
    ("ptx-mbarrier-array-misaligned.litmus", "5:24", "`bars` is used as an mbarrier at line 8, but it is 4-byte aligned"),
    ("ptx-param-unknown.litmus", "5:21", "unknown kernel parameter `in`"),
    ("ptx-instance-ambiguous.litmus", "7:9", "`s` does not name one instance of `s`"),
    ("ptx-instance-bad-suffix.litmus", "7:11", "expected an instance (`cta1` for a CTA's, `P0` for a thread's) after `@`, found `gpu1`"),
];

/// Malformed forms of the instructions real PTX needs (issue 22, D4; tests/isa has their meaning).
const ISA_CASES: &[(&str, &str, &str)] = &[
    ("isa-cvta-const.litmus", "4:7", "`cvta.const` is not supported by this version of ptxmm"),
    ("isa-cvta-no-size.litmus", "4:2", "`cvta` needs the address size `.u32` or `.u64`"),
    ("isa-mul-wide-64.litmus", "4:11", "expected a type of `mul.wide`: .u16 .s16 .u32 .s32, found `.u64`"),
    ("isa-mul-lo-add.litmus", "4:6", "`add` has no `.lo` form"),
    ("isa-mad-no-mode.litmus", "4:2", "integer `mad` needs a mode: `.lo` or `.wide`"),
    ("isa-mad-hi.litmus", "4:6", "`mad.hi` is not supported by this version of ptxmm"),
    ("isa-cvt-float.litmus", "4:6", "with two integer types (.u8 .u16 .u32 .u64 .s8 .s16 .s32 .s64), found `.rn`"),
    ("isa-cvt-one-type.litmus", "4:2", "with two integer types (.u8 .u16 .u32 .u64 .s8 .s16 .s32 .s64), found none"),
    ("isa-mov-8-bit.litmus", "4:6", "`.s8` is not a type of `mov`"),
    ("isa-not-u32.litmus", "4:6", "expected a type of `not`: .pred .b16 .b32 .b64, found `.u32`"),
    ("isa-selp-operands.litmus", "4:2", "expected 4 operand(s) for `selp.b32` (destination, a, b, predicate), found 3"),
    ("isa-selp-untyped.litmus", "4:2", "`selp` needs a type"),
    ("isa-exit-qualifier.litmus", "4:7", "unsupported qualifier `.uni` on `exit`"),
    ("isa-nc-relaxed.litmus", "4:24", "`.nc` is a weak load of the global state space"),
    ("isa-nc-shared.litmus", "4:12", "`.nc` is a weak load of the global state space"),
    ("isa-atom-16-bit.litmus", "4:18", "`atom.global.cas.b16` is a 16-bit atomic, which ptxmm does not model"),
    ("isa-atom64-inc.litmus", "4:18", "`.inc` is defined only for `.u32`, found `.u64`"),
    ("isa-elect-membermask-address.litmus", "4:22", "expected a membermask (a constant or a register), found an address"),
    ("isa-subword-misaligned-offset.litmus", "4:16", "`g+1` is not a 2-byte aligned byte of `g` (8 bytes)"),
    ("isa-subword-misaligned-register.litmus", "5:2", "the address of a 2-byte access is not 2-byte aligned"),
    // Bit instructions, labels in blocks, warp collectives, no-effect instructions (issue 38).
    ("isa-label-same-block.litmus", "7:2", "label `L` is defined twice in this thread"),
    ("isa-label-sibling-block.litmus", "9:6", "unknown label `L` in this thread"),
    ("isa-warp-sync-mask.litmus", "4:16", "membermask 0x2 does not select this thread's lane 0"),
    ("isa-bfe-type.litmus", "4:6", "expected a type of `bfe`: .u32 .u64 .s32 .s64, found `.b32`"),
    ("isa-lop3-lut-register.litmus", "4:25", "expected an immLut constant in 0..255, found `%r2`"),
    ("isa-shf-no-mode.litmus", "4:2", "`shf` needs a direction and a mode"),
    ("isa-setmaxnreg-count.litmus", "4:34", "expected an imm-reg-count constant in 24..256, a multiple of 8"),
    ("isa-prefetch-operand.litmus", "4:21", "expected an address `[a]`, found `%rd1`"),
    ("isa-ldmatrix-shape.litmus", "4:24", "expected a form of `ldmatrix`: .m8n8.b16"),
    ("isa-ldmatrix-count.litmus", "4:43", "expected 2 register(s) for `.m8n8.x2`, found 1"),
    ("isa-warp-exchange.litmus", "5:2", "`vote.ballot.b32` is not modelled: which lanes take part depends on how the warp diverged"),
    ("isa-mad24-sat.litmus", "4:11", "`.sat` exists only in `mad24.hi.sat.s32`"),
    ("async-wgmma-sparse.litmus", "4:18", "sparse `wgmma.mma_async.sp` is not modelled by this version of ptxmm"),
    // Unknown values (program::unknown) through the bit instructions and out of ldmatrix.
    (
        "isa-unknown-bits-address.litmus",
        "14:2",
        "`%r8` is unknown here: its value comes from `shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1` (line 7)",
    ),
    (
        "isa-ldmatrix-unknown-address.litmus",
        "8:2",
        "`%r5` is unknown here: its value comes from `ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r2}, [tile]` (line 4)",
    ),
    (
        "isa-reduce-xor-s32.litmus",
        "4:72",
        "the text's own example `cp.reduce.async.bulk.global.shared::cta.bulk_group.L2::cache_hint.xor.s32` disagrees with the table",
    ),
];

#[test]
fn malformed_files_report_file_line_col() {
    let mut failures = Vec::new();
    for (file, line_col, fragment) in CASES.iter().chain(ISA_CASES) {
        let path = format!("tests/bad/{file}");
        let out = Command::cargo_bin("ptxmm").unwrap().args(["run", &path]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let located = format!("{path}:{line_col}:");
        if out.status.code() != Some(1) || !stderr.contains(&located) || !stderr.contains(fragment) || stderr.contains("panicked") {
            failures.push(format!("{file}: exit {:?}, stderr:\n{stderr}", out.status.code()));
        }
    }
    println!("{} passed, {} failed", CASES.len() + ISA_CASES.len() - failures.len(), failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_bad_file_is_covered() {
    let listed: std::collections::BTreeSet<&str> = CASES.iter().chain(ISA_CASES).map(|c| c.0).collect();
    for entry in std::fs::read_dir("tests/bad").unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(listed.contains(name.as_str()), "tests/bad/{name} has no expectation in CASES");
    }
}

/// A condition naming a location no thread accesses keeps herd7's meaning (a fresh word that
/// keeps its 0), with a warning at its place that says so.
#[test]
fn a_condition_location_no_thread_accesses_is_warned_about() {
    let out = Command::cargo_bin("ptxmm").unwrap().args(["run", "tests/async_section/undeclared-location.litmus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: tests/async_section/undeclared-location.litmus:9:37: the condition names `w`, which no thread accesses and the init block does not declare"),
        "{stderr}"
    );
}

#[test]
fn unknown_model_and_missing_file_are_errors() {
    let out = Command::cargo_bin("ptxmm").unwrap().args(["run", "--model", "ptx-9.9", "examples/MP.litmus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown model `ptx-9.9`"));
    let out = Command::cargo_bin("ptxmm").unwrap().args(["run", "tests/bad/does-not-exist.litmus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: tests/bad/does-not-exist.litmus: cannot read"));
    // A PTX module given to `run` points to `ptxmm kernel`.
    let out = Command::cargo_bin("ptxmm").unwrap().args(["run", "tests/kernels/splitk.ptx"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("this is a PTX module: check one of its kernels with `ptxmm kernel FILE`"));
}
