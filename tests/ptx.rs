//! The PTX-syntax suite (tests/ptx, issue 22): kernels written as PTX prints them (a kernel block
//! every thread runs, or one block per thread; `.reg`, scopes, labels, `ret`, comments) with PTX
//! declarations (per-CTA `.shared`, per-thread `.local`, arrays of mbarriers, `.param`), each with
//! its expected verdict and liveness in tests/ptx/expected.csv under the default model.

use assert_cmd::Command;
mod common;

use std::path::Path;

fn dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ptx")
}

#[test]
fn ptx_syntax_suite() {
    let failed = common::run_verdict_suite("ptx", &dir());
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn every_ptx_test_has_an_expectation() {
    common::assert_every_test_listed(&dir());
}

/// Reports (the herd7 log, JSON and explain alike) name instances as mcompare7 reads them
/// (`buf.cta1[1]` for the word `buf@cta1+4`).
#[test]
fn instances_are_named_in_reports_and_logs() {
    let out = Command::cargo_bin("ptxmm").unwrap().args(["run", "tests/ptx/K09-mbarrier-array.litmus"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("buf.cta1[1]=2;") && text.contains("Condition exists (0:r4!=2 \\/ 1:r4!=2 \\/ buf.cta1[1]!=2)"), "{text}");
    let out = Command::cargo_bin("ptxmm").unwrap().args(["run", "--json", "tests/ptx/K11-local-per-thread.litmus"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\"depot.P1[1]\":2") && !text.contains("depot@P1"), "{text}");
    let out = Command::cargo_bin("ptxmm").unwrap().args(["explain", "tests/ptx/K11-local-per-thread.litmus"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("depot.P1[1]") && !text.contains("depot@P1"), "{text}");
}

/// `ptxmm hw gen` writes code blocks and PTX declarations: nested scopes keep their own
/// registers, `ld.param` becomes the bound value or the harness's address of the bound variable,
/// `ret` ends the test thread, per-CTA `.shared` instances are each CTA's own; `.local` memory
/// is rejected with the reason, and so are a parameter read through its address and a
/// warp exchange. (tests/hw/compile_all.sh compiles these with nvcc.)
#[test]
fn hw_gen_writes_blocks_and_declarations() {
    let out_dir = std::env::temp_dir().join(format!("ptxmm-ptx-hw-{}", std::process::id()));
    let out = Command::cargo_bin("ptxmm").unwrap().args(["hw", "gen", "--out", out_dir.to_str().unwrap(), "tests/ptx"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let says = String::from_utf8_lossy(&out.stdout);
    assert!(
        err.contains("K11-local-per-thread.litmus:8:2: cannot generate a hardware harness for K11-local-per-thread: `.local` declarations are not generated"),
        "{err}"
    );
    // A parameter read through its address (an aggregate parameter) is rejected with the reason.
    for k in ["K17-aggregate-param", "K18-unknown-param-loop"] {
        assert!(
            err.contains(&format!("{k}: it takes the address of a kernel parameter (the harness binds parameters as constants)")),
            "{err}"
        );
    }
    // A warp exchange (a collective of a warp's lanes) is rejected with the reason.
    assert!(err.contains("K19-warp-exchanges.litmus:19:2: cannot generate a hardware harness for K19-warp-exchanges: instruction `shfl.sync.up.b32` is not generated: it is a collective of the lanes of one warp"), "{err}");
    let rejected = err.matches("cannot generate a hardware harness").count();
    assert_eq!(rejected, 4, "{err}");
    assert!(says.contains("4 rejected by the harness generator"), "{says}");
    let read = |name: &str| std::fs::read_to_string(out_dir.join(name)).unwrap();
    let scoped = read("K05-scoped-registers.cu");
    assert_eq!(scoped.matches("  .reg .b32 P_OUT;").count(), 3, "{scoped}");
    let param = read("K07-ld-param.cu");
    assert!(param.contains("mov.b64 rd1, %3;") && param.contains("mov.b32 r1, 5;") && !param.contains("ld.param"), "{param}");
    let ret = read("K06-ret-exit.cu");
    assert!(!ret.contains("\"  ret;") && ret.contains("bra HW_END;"), "{ret}");
    let _ = std::fs::remove_dir_all(&out_dir);
}
