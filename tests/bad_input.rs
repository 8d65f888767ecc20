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
    ("alias-unknown.litmus", "2:28", "refers to unknown location `nowhere`"),
    ("forall-unknown-register.litmus", "5:9", "unknown register `r7` of thread P0"),
    ("unknown-location.litmus", "4:10", "unknown location `y`"),
    ("unknown-label.litmus", "5:13", "unknown label `LC99`"),
    ("too-many-columns.litmus", "4:2", "expected 2 columns, found 3"),
    ("weak-with-scope.litmus", "4:10", "a weak store takes no scope"),
    ("bad-fence-sem.litmus", "4:8", "unsupported qualifier `.weak` on `fence`"),
    ("unclosed-init.litmus", "3:2", "expected `}` to close the init block"),
    ("bad-condition.litmus", "5:14", "found `)`"),
    ("wrong-operand-count.litmus", "4:2", "expected 3 operand(s)"),
    ("unsupported-tensor.litmus", "4:2", "`wgmma.mma_async.sync.aligned` is not supported"),
    ("duplicate-location.litmus", "2:8", "location `x` is declared twice"),
];

#[test]
fn malformed_files_report_file_line_col() {
    let mut failures = Vec::new();
    for (file, line_col, fragment) in CASES {
        let path = format!("tests/bad/{file}");
        let out = Command::cargo_bin("ptxmm").unwrap().args(["run", &path]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let located = format!("{path}:{line_col}:");
        if out.status.code() != Some(1) || !stderr.contains(&located) || !stderr.contains(fragment) || stderr.contains("panicked") {
            failures.push(format!("{file}: exit {:?}, stderr:\n{stderr}", out.status.code()));
        }
    }
    println!("{} passed, {} failed", CASES.len() - failures.len(), failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_bad_file_is_covered() {
    let listed: std::collections::BTreeSet<&str> = CASES.iter().map(|c| c.0).collect();
    for entry in std::fs::read_dir("tests/bad").unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(listed.contains(name.as_str()), "tests/bad/{name} has no expectation in CASES");
    }
}

#[test]
fn unknown_model_and_missing_file_are_errors() {
    let out = Command::cargo_bin("ptxmm").unwrap().args(["run", "--model", "ptx-9.9", "examples/MP.litmus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown model `ptx-9.9`"));
    let out = Command::cargo_bin("ptxmm").unwrap().args(["run", "tests/bad/does-not-exist.litmus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));
}
