//! Typed values (issue 11): each test of `tests/typed` with its verdict and the final state it
//! must show, values written down.

use assert_cmd::Command;

fn run(file: &str) -> String {
    let out = Command::cargo_bin("ptxmm").unwrap().args(["run", &format!("tests/typed/{file}")]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn expect(file: &str, verdict: &str, states: &[&str]) {
    let out = run(file);
    assert!(out.starts_with(&format!("Verdict: {verdict}\n")), "{file}: {out}");
    for s in states {
        assert!(out.lines().any(|l| l == *s), "{file}: no state `{s}` in\n{out}");
    }
}

#[test]
fn add_wraps_at_u32_s32_u64() {
    expect("add-wrap.litmus", "Allowed", &["0:r3=0; 0:r4=-2147483648; 0:r5=0;"]);
}

#[test]
fn atom_add_u32_wraps() {
    expect("atom-add-wrap.litmus", "Allowed", &["0:r0=4294967295; x=0;"]);
}

#[test]
fn atom_inc_dec_u32() {
    expect("atom-inc-dec.litmus", "Allowed", &["0:r2=4294967295; x=0; y=5; z=5; w=2;"]);
}

#[test]
fn min_max_signedness() {
    expect("min-max-sign.litmus", "Allowed", &["0:r1=-1; 0:r2=1; 0:r3=1; 0:r4=4294967295; 0:r5=-1; x=-1; y=1;"]);
}

#[test]
fn setp_signed_and_unsigned() {
    expect("setp-sign.litmus", "Allowed", &["0:r1=1; 0:r2=0; 0:r3=1;"]);
}

#[test]
fn ld_u32_and_s32_of_all_ones() {
    expect("ld-extend.litmus", "Allowed", &["0:r0=4294967295; 0:r1=-1;"]);
}

#[test]
fn st_u64_is_two_words() {
    expect("st64-two-words.litmus", "Allowed", &["0:r0=1; 0:r1=2; 0:r2=8589934593;"]);
}

#[test]
fn st_u64_against_a_32_bit_load_is_a_mixed_size_race() {
    let out = run("st64-mixed-race.litmus");
    assert!(out.starts_with("Verdict: Undefined\n"), "{out}");
    assert!(out.contains("[mixed-size-race]"), "{out}");
    assert!(out.lines().any(|l| l == "1:r0=2;") && out.lines().any(|l| l == "1:r0=0;"), "{out}");
}

#[test]
fn float_literal_is_its_bit_pattern() {
    // 0f40400000 (3.0) = 1077936128.
    expect("float-literal.litmus", "Allowed", &["0:r1=1077936128; x=1077936128;"]);
}

#[test]
fn decimal_float_literals() {
    // 1.5 + 0.25 = 1.75 = 0x3FE00000 as an .f32; 2.5 = 0x4004000000000000 as an .f64.
    expect("float-decimal.litmus", "Allowed", &["0:r1=1071644672; 0:r2=4612811918334230528; x=1071644672;"]);
}

#[test]
fn narrow_atomics_are_rejected_with_their_form() {
    // 64-bit atomics are modelled (tests/isa/atom64-*.litmus); 8- and 16-bit ones are not.
    let src = "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n atom.relaxed.gpu.cas.b16 r0, [x], 0, 1 ;\nexists (x == 1)\n";
    let f = std::env::temp_dir().join(format!("ptxmm-typed-{}.litmus", std::process::id()));
    std::fs::write(&f, src).unwrap();
    let out = Command::cargo_bin("ptxmm").unwrap().args(["run", f.to_str().unwrap()]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("16-bit atomic"), "{err}");
    let src = "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n atom.relaxed.gpu.inc.s32 r0, [x], 1 ;\nexists (x == 1)\n";
    std::fs::write(&f, src).unwrap();
    let out = Command::cargo_bin("ptxmm").unwrap().args(["run", f.to_str().unwrap()]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("only for `.u32`"), "{err}");
    let _ = std::fs::remove_file(&f);
}

#[test]
fn ld_vector_elements_convert_like_scalar_loads() {
    expect("ld-vector-extend.litmus", "Allowed", &["0:r0=4294967295; 0:r1=4294967294; 0:r4=4294967295; 0:r6=-1; 0:r7=-2;"]);
}
