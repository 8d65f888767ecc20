//! Conformance: Dat3M's expectation CSVs under our models and under Dat3M's own cat files, with
//! Dat3M's meaning of barriers (`--reading dat3m-barriers`, which its expectations assume).
//! Skips (with a visible message) when ../shared is absent.

mod common;

use ptxmm::config::models;
use ptxmm::decide::suite::SuiteKind;

fn suite(csv: &str, model: ptxmm::cat::CatModel, label: &str) {
    let Some(root) = common::dat3m() else { return };
    let failures =
        common::run_csv_with(label, &root.join("expected").join(csv), &root, &model, SuiteKind::Condition, common::DAT3M_READINGS);
    assert!(failures.is_empty(), "{label}: {} mismatches", failures.len());
}

#[test]
fn dat3m_v6_0_csv_under_our_ptx_6_0() {
    suite("PTXv6_0-expected.csv", models::builtin("ptx-6.0").unwrap(), "PTXv6_0 / models/ptx-6.0.cat");
}

#[test]
fn dat3m_v7_5_csv_under_our_ptx_7_5() {
    suite("PTXv7_5-expected.csv", models::builtin("ptx-7.5").unwrap(), "PTXv7_5 / models/ptx-7.5.cat");
}

/// The async model is a conservative extension: the default model (models/ptx.cat) gives the
/// reference verdict on every test of the v7.5 CSV (and of the v6.0 CSV).
#[test]
fn dat3m_v7_5_csv_under_the_default_model() {
    suite("PTXv7_5-expected.csv", models::builtin(models::DEFAULT_MODEL).unwrap(), "PTXv7_5 / models/ptx.cat (default)");
}

#[test]
fn dat3m_v6_0_csv_under_the_default_model() {
    suite("PTXv6_0-expected.csv", models::builtin(models::DEFAULT_MODEL).unwrap(), "PTXv6_0 / models/ptx.cat (default)");
}

#[test]
fn dat3m_v6_0_csv_under_dat3m_cat() {
    let Some(root) = common::dat3m() else { return };
    let model = models::from_file(&root.join("cat/ptx-v6.0.cat")).unwrap();
    suite("PTXv6_0-expected.csv", model, "PTXv6_0 / Dat3M ptx-v6.0.cat");
}

#[test]
fn dat3m_v7_5_csv_under_dat3m_cat() {
    let Some(root) = common::dat3m() else { return };
    let model = models::from_file(&root.join("cat/ptx-v7.5.cat")).unwrap();
    suite("PTXv7_5-expected.csv", model, "PTXv7_5 / Dat3M ptx-v7.5.cat");
}

/// Every litmus file of the corpus parses and lowers (most CADP files have no expectation).
#[test]
fn all_dat3m_litmus_files_load() {
    let Some(root) = common::dat3m() else { return };
    let mut files = Vec::new();
    let mut stack = vec![root.join("litmus")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "litmus") {
                files.push(p);
            }
        }
    }
    let failures: Vec<String> = files.iter().filter_map(|f| ptxmm::load_program(f).err().map(|e| e.to_string())).collect();
    println!("corpus load: {} passed, {} failed", files.len() - failures.len(), failures.len());
    assert_eq!(files.len(), 597, "the corpus should hold 597 litmus files");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
