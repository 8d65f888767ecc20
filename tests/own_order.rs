//! The per-thread coherence filter of the search (issue 24): a read is not offered the writes
//! its own thread rules out, where the model forbids them, so one thread decides with no dead
//! end and one candidate; verdicts stay those of the full search.

use ptxmm::config::Config;
use ptxmm::decide::Decider;
use ptxmm::diag::SourceFile;
use ptxmm::families;

fn decide(name: &str, source: &str) -> ptxmm::decide::Outcome {
    let program = ptxmm::parse_program(SourceFile::new(format!("{name}.litmus"), source.to_string())).unwrap();
    Decider::new(&Config::default_model()).verdict(&program).unwrap()
}

#[test]
fn one_long_thread_has_no_dead_end() {
    for n in [12, 60, 200] {
        let p = families::long_thread(n);
        let o = decide(&p.name, &p.source);
        assert_eq!(o.verdict().name(), "Allowed", "{}", p.name);
        assert_eq!(o.stats.consistent, 1, "{}", p.name);
        assert_eq!(o.stats.candidates, 1, "{}", p.name);
        assert_eq!(o.stats.dead_ends, 0, "{}", p.name);
    }
}

#[test]
fn reads_against_program_order_stay_forbidden() {
    // CoRR, CoWR and a read of a later own write in one thread: each outcome needs a source
    // the filter removes, and each stays Forbidden with the sequential state only.
    let cases = [
        ("st.relaxed.gpu x, 1 ;\n st.relaxed.gpu x, 2 ;\n ld.relaxed.gpu r0, x", "P0:r0 == 1"),
        ("st.relaxed.gpu x, 1 ;\n ld.weak r0, x", "P0:r0 == 0"),
        ("ld.acquire.gpu r0, x ;\n atom.relaxed.gpu.exch.b32 r1, x, 1", "P0:r0 == 1"),
    ];
    for (code, cond) in cases {
        let src = format!("PTX own\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n {code} ;\nexists ({cond})\n");
        let o = decide("own", &src);
        assert_eq!(o.verdict().name(), "Forbidden", "{src}");
        assert_eq!(o.states.len(), 1, "{src}");
        assert_eq!(o.stats.dead_ends, 0, "{src}");
    }
}

#[test]
fn other_threads_writes_are_still_read() {
    // The filter only removes own writes: a read after its thread's write may still read
    // another thread's (later in coherence) write.
    let src = "PTX mixed\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.relaxed.gpu x, 1 | st.relaxed.gpu x, 2 ;\n ld.relaxed.gpu r0, x | ;\nexists (P0:r0 == 2)\n";
    let o = decide("mixed", src);
    assert_eq!(o.verdict().name(), "Allowed");
    assert_eq!(o.states.len(), 2);
}

#[test]
fn a_read_through_an_alias_keeps_the_initial_value() {
    // An alias of the word is ordered with the store only by an alias fence (PTX ISA 8.9.5):
    // the filter, whose probes use one name, leaves such reads alone.
    let src = "PTX alias\n{ x=0; y @ generic aliases x; }\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\n ld.weak r1, y ;\nexists (P0:r1 == 0)\n";
    let o = decide("alias", src);
    assert_eq!(o.verdict().name(), "Allowed");
    assert_eq!(o.states.len(), 2);
}
