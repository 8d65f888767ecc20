//! Unit tests of the register typing of the asm blocks: the declarations and instruction texts
//! of the shapes ptxas rejected (issue 26: a register used at two widths, float literals of
//! `.f64` instructions) and the rejection of a register that is both a predicate and a value.

use super::generate;
use crate::diag::SourceFile;
use crate::hw::{HwTest, Incantations};
use crate::Config;

/// The asm lines (without quotes and escapes) of the first thread function of a test, or the
/// generator's rejection message.
fn asm(text: &str) -> Result<Vec<String>, String> {
    let file = SourceFile::new("t.litmus", text);
    let ast = crate::litmus::parse(&file).map_err(|d| d.one_line(&file))?;
    let program = crate::program::lower(&ast, &file).map_err(|d| d.one_line(&file))?;
    let g = generate(&[HwTest { ast: &ast, program: &program }], &Incantations::default(), "sm_90a", "t.cu", &Config::default_model());
    if let Some(r) = g.rejected.first() {
        return Err(r.to_string());
    }
    let start = g.source.find("void thread_P0").expect("a thread function");
    Ok(g.source[start..]
        .lines()
        .skip_while(|l| !l.contains("asm volatile"))
        .skip(1)
        .take_while(|l| l.trim_start().starts_with('"') && l.trim() != "\"}\"")
        .map(|l| l.trim().trim_start_matches('"').trim_end_matches("\\n\\t\"").trim().to_string())
        .collect())
}

fn assert_has(lines: &[String], expected: &[&str]) {
    for e in expected {
        assert!(lines.iter().any(|l| l == e), "missing `{e}` in:\n{}", lines.join("\n"));
    }
}

/// Asserts that `expected` occur in this order, one right after the other.
fn assert_sequence(lines: &[String], expected: &[&str]) {
    let found = lines.windows(expected.len()).any(|w| w.iter().zip(expected).all(|(l, e)| l == e));
    assert!(found, "missing the sequence {expected:?} in:\n{}", lines.join("\n"));
}

#[test]
fn a_register_compared_at_32_and_64_bits_is_64_bits_and_truncated_for_the_32_bit_setp() {
    // tests/typed/setp-sign: ptxas rejected `setp.lt.s32 r1, r0, 0` with r0 a .b64.
    let lines = asm("PTX setp-sign\n{ P0:r0=0xFFFFFFFF; }\n P0@cta 0,gpu 0 ;\n setp.lt.s32 r1, r0, 0 ;\n setp.lt.u32 r2, r0, 0 ;\n setp.gt.u64 r3, r0, 0 ;\nexists (P0:r1 == 1)\n").unwrap();
    assert_has(&lines, &[".reg .b64 r0;", ".reg .pred r1;", ".reg .b32 hw_n1;", "mov.b64 r0, 4294967295;"]);
    assert_sequence(&lines, &["cvt.u32.u64 hw_n1, r0;", "setp.lt.s32 r1, hw_n1, 0;"]);
    assert_sequence(&lines, &["cvt.u32.u64 hw_n1, r0;", "setp.lt.u32 r2, hw_n1, 0;"]);
    assert_has(&lines, &["setp.gt.u64 r3, r0, 0;"]);
}

#[test]
fn float_literals_are_encoded_at_the_instruction_type_and_f64_registers_are_64_bits() {
    // tests/typed/float-decimal: `mov.f64 r2, 2.5` read back 0x40200000 (the f32 pattern).
    let lines = asm("PTX float-decimal\n{ x=0; }\n P0@cta 0,gpu 0 ;\n mov.f32 r0, 1.5 ;\n add.f32 r1, r0, 0.25 ;\n st.weak.f32 [x], r1 ;\n mov.f64 r2, 2.5 ;\n mov.f64 r3, 4 ;\nexists (P0:r2 == 0d4004000000000000)\n").unwrap();
    assert_has(
        &lines,
        &[
            ".reg .b32 r0;",
            ".reg .b64 r2;",
            ".reg .b64 r3;",
            "mov.f32 r0, 0f3FC00000;",
            "add.f32 r1, r0, 0f3E800000;",
            "mov.f64 r2, 0d4004000000000000;",
            // An integer literal of a float type is the bit pattern, as the model reads it.
            "mov.f64 r3, 0d0000000000000004;",
            "mov.b64 %0, r2;",
        ],
    );
}

#[test]
fn a_k_tile_loop_with_64_bit_address_arithmetic_converts_the_counter_at_each_width() {
    // tests/hw/cp-async-ktile-64: k is written by mov.u32 and read by mul.wide.u32 (32 bits),
    // and by shl.b64, add.s64 and setp.lt.u64 (64 bits).
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/hw/cp-async-ktile-64.litmus")).unwrap();
    let lines = asm(&text).unwrap();
    assert_has(
        &lines,
        &[
            ".reg .b64 k;",
            ".reg .b64 off;",
            ".reg .b64 kb;",
            ".reg .b32 so;",
            ".reg .b32 sd;",
            ".reg .b32 hw_n0;",
            ".reg .b32 hw_n1;",
            "add.s64 ga, base, off;",
            "cvt.u32.u64 so, off;",
            "cp.async.cg.shared.global [sd], [ga], 16;",
            "shl.b64 kb, k, 3;",
            "or.b64 wo, kb, 4;",
            "add.s64 k, k, 1;",
            "setp.lt.u64 p, k, 2;",
        ],
    );
    assert_sequence(&lines, &["mov.u32 hw_n0, 0;", "cvt.u64.u32 k, hw_n0;"]);
    assert_sequence(&lines, &["cvt.u32.u64 hw_n1, k;", "mul.wide.u32 off, hw_n1, 16;"]);
}

#[test]
fn a_narrow_signed_write_of_a_64_bit_register_is_sign_extended_and_keeps_its_guard() {
    let lines = asm("PTX w\n{ P0:p=1; }\n P0@cta 0,gpu 0 ;\n @p mov.s32 r0, -1 ;\n @!p add.u32 r0, r0, 1 ;\n add.s64 r1, r0, 1 ;\nexists (P0:r1 == 0)\n").unwrap();
    assert_has(&lines, &[".reg .b64 r0;", ".reg .pred p;", ".reg .b32 hw_n0;"]);
    assert_sequence(&lines, &["@p mov.s32 hw_n0, -1;", "@p cvt.s64.s32 r0, hw_n0;"]);
    assert_sequence(&lines, &["cvt.u32.u64 hw_n1, r0;", "@!p add.u32 hw_n0, hw_n1, 1;", "@!p cvt.u64.u32 r0, hw_n0;"]);
    assert_has(&lines, &["add.s64 r1, r0, 1;"]);
}

#[test]
fn an_untyped_64_bit_operation_zero_extends_its_32_bit_sources_and_a_mixed_compare_widens() {
    // Dat3M's untyped arithmetic on an address register (64 bits) and a 32-bit one.
    let lines = asm("PTX u\n{ x=0; P0:r1=&x; P0:r0=4; }\n P0@cta 0,gpu 0 ;\n add r1, r1, r0 ;\n L: ;\n beq r1, r0, L ;\nexists (x == 0)\n")
        .unwrap();
    assert_has(&lines, &[".reg .b64 r1;", ".reg .b32 r0;"]);
    assert_sequence(&lines, &["cvt.u64.u32 hw_w2, r0;", "add.s64 r1, r1, hw_w2;"]);
    assert_sequence(&lines, &["cvt.u64.u32 hw_w2, r0;", "setp.eq.s64 hw_p, r1, hw_w2;", "@hw_p bra L;"]);
}

#[test]
fn a_register_that_is_a_predicate_and_a_value_is_rejected_naming_both_lines() {
    let err = asm("PTX pv\n{ }\n P0@cta 0,gpu 0 ;\n setp.eq.u32 p, 1, 0 ;\n add.u32 r1, p, 1 ;\nexists (P0:r1 == 0)\n").unwrap_err();
    assert!(err.contains("t.litmus:5:"), "{err}");
    assert!(err.contains("register `p` is a predicate (line 4) and a 32-bit value (line 5)"), "{err}");
}

#[test]
fn a_register_an_untyped_operation_writes_from_an_address_is_64_bits_from_its_first_write() {
    // The k-tile loop of the `cp.async-loop` family: `r6` is first written by a 32-bit `mul`,
    // then gets `&g` added; the H200 faulted on the truncated address. `r3` gets a global
    // variable's address (a bare name, Dat3M) and `r5` `r3`'s: 64-bit too; `r4` gets the 32-bit
    // window address of the thread's own shared `s`, and stays 32-bit.
    let lines = asm("PTX a\n{ g[8] = {1, 2}; s[8] @ shared cta 0; P0:r1 = &g; P0:r0 = 1; }\n P0@cta 0,gpu 0 ;\n mul r6, r0, 4 ;\n add r6, r6, r1 ;\n ld.global.u32 r2, [r6] ;\n mov r3, g ;\n add r5, r3, 4 ;\n mov r4, s ;\n st.shared.u32 [r4], r2 ;\nexists (P0:r2 == 2)\n")
        .unwrap();
    assert_has(&lines, &[".reg .b64 r6;", ".reg .b64 r3;", ".reg .b64 r5;", ".reg .b32 r4;", ".reg .b32 r0;"]);
    assert_sequence(&lines, &["cvt.u64.u32 hw_w1, r0;", "mul.lo.s64 r6, hw_w1, 4;", "add.s64 r6, r6, r1;"]);
    assert_has(&lines, &["add.s64 r5, r3, 4;"]);
    assert!(lines.iter().any(|l| l.starts_with("mov.b64 r3, %")), "{lines:#?}");
    assert!(lines.iter().any(|l| l.starts_with("mov.b32 r4, %")), "{lines:#?}");
    assert!(!lines.iter().any(|l| l.starts_with("cvt.u32.u64")), "an address is truncated:\n{}", lines.join("\n"));
}

#[test]
fn each_address_operand_of_a_copy_has_the_width_of_its_own_state_space() {
    use super::regs::{operand_widths, RegKind, Width};
    use crate::diag::{Span, Spanned};
    use crate::litmus::ast::Operand;
    let at = |r: &str| Operand::Address(Box::new(Spanned::new(Operand::Name(r.into()), Span { start: 0, end: 0 })), 0);
    let parts: Vec<String> = "cp.async.cg.shared.global".split('.').map(String::from).collect();
    let (dst, src, size) = (at("d"), at("g"), Operand::Int(16));
    // The shared destination fits either width; the global source is a 64-bit address.
    assert_eq!(
        operand_widths(&parts, &[&dst, &src, &size]),
        vec![None, Some(Width::Exact(RegKind::B64)), Some(Width::Exact(RegKind::B32))]
    );
    let parts: Vec<String> = "cp.async.bulk.global.shared::cta.bulk_group".split('.').map(String::from).collect();
    assert_eq!(
        operand_widths(&parts, &[&src, &dst, &size]),
        vec![Some(Width::Exact(RegKind::B64)), None, Some(Width::Exact(RegKind::B32))]
    );
}

#[test]
fn a_thread_that_issues_cp_async_waits_for_its_copies_before_the_shared_observables_are_read() {
    // tests/hints/m3-pending-overflow.fixed: the copy is tracked by a `.noinc` arrive only and
    // nothing waits; the H200 read `s = 0` where the model's final state has the copy landed.
    let text = "PTX m3\n{ g = 1; s @ shared cta 0 = 0; bar @ shared cta 0 mbarrier; }\n P0@cta 0,gpu 0 ;\n mbarrier.init.shared::cta.b64 [bar], 1048575 ;\n cp.async.ca.shared.global [s], [g], 4 ;\n cp.async.mbarrier.arrive.noinc.shared::cta.b64 [bar] ;\nexists (s == 1)\n";
    assert_sequence(&asm(text).unwrap(), &["HW_END:", "cp.async.wait_all;"]);
    // A thread without cp.async has no such wait.
    let lines = asm("PTX w\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.relaxed.gpu.u32 [x], 1 ;\nexists (x == 1)\n").unwrap();
    assert!(!lines.iter().any(|l| l.contains("cp.async")), "{lines:#?}");
}

#[test]
fn an_observed_bulk_copy_destination_whose_mbarrier_no_thread_waits_on_is_rejected() {
    let copy = "PTX c\n{ g[16] = 1; s[16] @ shared cta 0; bar @ shared cta 0 mbarrier(1); }\n P0@cta 0,gpu 0 ;\n mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 16 ;\n cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [s], [g], 16, [bar] ;\n";
    let err = asm(&format!("{copy}exists (s == 0)\n")).unwrap_err();
    assert!(err.contains("t.litmus:5:"), "{err}");
    assert!(
        err.contains("`s` is observed, and this bulk copy into it completes on the mbarrier `bar`, on which no thread of the test waits"),
        "{err}"
    );
    // Waiting on the barrier, the test is generated.
    let waited = copy.to_string() + " L: ;\n mbarrier.try_wait.parity.shared::cta.b64 p, [bar], 0 ;\n @!p bra L ;\nexists (s == 0)\n";
    asm(&waited).unwrap();
}
