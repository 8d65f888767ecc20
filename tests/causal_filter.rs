//! The search's causal filter (issue 24): a read is not offered the writes the model's
//! Causality check (`irreflexive ((rf | fr) ; cause)`) already rules out on the bounds of the
//! partial candidate, so a pipeline's consumer reads its tile with no dead end; and nothing the
//! search finds changes, which is checked here against the same model with the check written
//! in a form the filter does not recognise.

mod common;

use ptxmm::config::Config;
use ptxmm::decide::{Decider, Outcome};
use ptxmm::diag::SourceFile;
use ptxmm::families;
use std::path::Path;

fn decide_with(config: &Config, name: &str, source: &str) -> Outcome {
    let program = ptxmm::parse_program(SourceFile::new(format!("{name}.litmus"), source.to_string())).unwrap();
    Decider::new(config).verdict(&program).unwrap()
}

/// The default model with Causality as `irreflexive (((rf | fr) ; cause) | 0)`: the same check,
/// which the plan does not take for a read composition (so the search tries every source).
fn model_without_filter() -> Config {
    common::default_model_with_check("irreflexive ((rf | fr) ; cause) as Causality", "irreflexive (((rf | fr) ; cause) | 0) as Causality")
}

/// What a decision found, without its statistics and timings.
fn found(o: &Outcome) -> String {
    format!(
        "{} {:?} +{} -{} flags {:?} undefined {:?} races {:?} other {:?} incomplete {:?}",
        o.verdict().name(),
        o.states,
        o.positive,
        o.negative,
        o.flags,
        o.undefined,
        o.races,
        o.flag_findings,
        o.incomplete
    )
}

#[test]
fn the_default_model_has_a_causal_filter_and_the_rewritten_one_not() {
    let recognised = |config: &Config| config.model.checks().iter().any(|c| c.read_composition.is_some());
    assert!(recognised(&Config::default_model()));
    assert!(!recognised(&model_without_filter()));
    let causality = Config::default_model().model.checks().into_iter().find(|c| c.name == "Causality").unwrap();
    let rc = causality.read_composition.unwrap();
    assert!(rc.rf && rc.fr, "rf, and fr through `let fr = rf^-1 ; co`");
    assert_eq!(rc.after_name, "cause");
}

#[test]
fn pipelines_read_their_tiles_with_no_dead_end() {
    let config = Config::default_model();
    let points = [
        families::tma_ring2(2, 2, 2, true),
        families::tma_ring2(4, 2, 3, true),
        families::cluster_ring(2, 1, 2, true),
        families::ring(3, 2, 2, true),
    ];
    for p in points {
        let o = decide_with(&config, &p.name, &p.source);
        assert_eq!(o.verdict().name(), "Forbidden", "{}", p.name);
        assert_eq!(o.stats.consistent, 1, "{}", p.name);
        assert_eq!(o.stats.dead_ends, 0, "{}", p.name);
        assert!(o.stats.causal_denied > 0, "{}: the stale and future copies are denied", p.name);
        // Without the filter, the same answer through a dead end per stale copy.
        let plain = decide_with(&model_without_filter(), &p.name, &p.source);
        assert_eq!(found(&plain), found(&o), "{}", p.name);
        assert!(plain.stats.dead_ends > 0, "{}", p.name);
        assert_eq!(plain.stats.causal_denied, 0, "{}", p.name);
    }
}

#[test]
fn unfenced_pipelines_stay_undefined() {
    // Without fence.proxy.async the copies race with the consumers' generic reads: the filter
    // must not hide the executions with undefined behaviour.
    let config = Config::default_model();
    for p in [families::tma_ring2(2, 2, 2, false), families::cluster_ring(2, 1, 2, false)] {
        let o = decide_with(&config, &p.name, &p.source);
        assert_eq!(o.verdict().name(), "Undefined", "{}", p.name);
        assert_eq!(found(&o), found(&decide_with(&model_without_filter(), &p.name, &p.source)), "{}", p.name);
    }
}

#[test]
fn every_repository_test_finds_the_same_with_and_without_the_filter() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files = Vec::new();
    for dir in ["async", "async_section", "litmus", "ptx", "liveness", "hints"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        files.extend(entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "litmus")));
    }
    files.sort();
    assert!(files.len() > 100, "the repository's tests are found ({})", files.len());
    let with = Config {
        limits: ptxmm::config::Limits { timeout: Some(std::time::Duration::from_secs(20)), ..Default::default() },
        ..Config::default_model()
    };
    let without = Config { limits: with.limits, ..model_without_filter() };
    let (mut same, mut denied) = (0, 0);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let Ok(program) = ptxmm::parse_program(SourceFile::new(f.display().to_string(), text)) else { continue };
        let (Ok(a), Ok(b)) = (Decider::new(&with).verdict(&program), Decider::new(&without).verdict(&program)) else { continue };
        if a.incomplete.is_some() || b.incomplete.is_some() {
            continue;
        }
        assert_eq!(found(&a), found(&b), "{}", f.display());
        assert!(a.stats.evaluations <= b.stats.evaluations, "{}: the filter only saves evaluations", f.display());
        same += 1;
        denied += u64::from(a.stats.causal_denied > 0);
    }
    println!("{same} tests found the same with and without the filter; the filter denied sources in {denied}");
    assert!(same > 100 && denied > 10, "{same} compared, {denied} with sources denied");
}
