//! Tests of trace enumeration: value domains, open values, loops, dependencies, limits.

use super::*;
use crate::diag::SourceFile;
use crate::program::LocalOp;
use std::sync::Arc;

fn program(src: &str) -> Program {
    let file = SourceFile::new("t.litmus", src);
    let ast = crate::litmus::parse(&file).unwrap();
    crate::program::lower(&ast, &file).unwrap()
}

#[test]
fn reads_branch_over_the_value_domain() {
    // r0 decides a branch: the trace branches once per value x may hold.
    let p = program("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n st.weak x, 1 | ld.weak r0, x ;\n | add r1, r0, 1 ;\n | bne r1, 2, L ;\n | L: ;\nexists (P1:r0 == 1)\n");
    let (domains, traces) = explore(&p, &Limits::default(), false).unwrap();
    assert_eq!(domains[0], BTreeSet::from([0, 1]));
    assert_eq!(traces[1].traces.len(), 2, "one trace per value the read may return");
}

#[test]
fn counters_stop_at_the_number_of_writes() {
    // Two increments: x can only reach 2, even though the fixpoint alone would grow forever.
    let p = program("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n atom.add r0, x, 1 | atom.add r1, x, 1 ;\nexists (x == 2)\n");
    let (domains, _) = explore(&p, &Limits::default(), false).unwrap();
    assert!(domains[0].contains(&2));
    assert!(domains[0].len() <= 4, "{:?}", domains[0]);
}

#[test]
fn spin_loops_are_awaits_and_other_loops_are_cut() {
    let spin = program("PTX t\n{ f=0; }\n P0@cta 0,gpu 0 ;\n LC00: ;\n ld.weak r0, f ;\n beq r0, 0, LC00 ;\nexists (0 == 0)\n");
    let (_, t) = explore(&spin, &Limits::default(), false).unwrap();
    assert!(!t[0].cut);
    assert!(t[0].traces.iter().all(|tr| tr.registers[0] != 0), "only the exiting iteration is kept");
    let (_, t) = explore(&spin, &Limits::default(), true).unwrap();
    assert!(t[0].stuck.iter().any(|tr| matches!(tr.stuck, Some(Stuck::Spin { .. }))));

    let counter = program("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n LC00: ;\n st.weak x, 1 ;\n goto LC00 ;\nexists (0 == 0)\n");
    let (_, t) = explore(&counter, &Limits::default(), false).unwrap();
    assert!(t[0].cut, "a loop with a store is unrolled and cut");
    assert!(t[0].traces.is_empty());
}

#[test]
fn dependencies_are_tracked_through_registers() {
    let p = program("PTX t\n{ x=0; y=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\n add r1, r0, 1 ;\n st.weak y, r1 ;\n bne r0, 0, LC00 ;\n st.weak y, 2 ;\n LC00: ;\nexists (0 == 0)\n");
    let (_, t) = explore(&p, &Limits::default(), false).unwrap();
    let tr = t[0].traces.iter().find(|tr| tr.events[0].value == 0).unwrap();
    assert_eq!(tr.events[1].data_deps, DepMask::single(0), "the store's value comes from the first read");
    assert_eq!(tr.events[2].ctrl_deps, DepMask::single(0), "the store after the branch depends on the read");
}

#[test]
fn values_that_only_flow_into_data_stay_open() {
    // r0 only reaches a store (through an add): one trace, the store writes r0 + 1.
    let p = program(
        "PTX t
{ x=0; y=0; }
 P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;
 ld.weak r0, x | st.weak x, 5 ;
 add r1, r0, 1 | ;
 st.weak y, r1 | ;
exists (y == 6)
",
    );
    let (domains, t) = explore(&p, &Limits::default(), false).unwrap();
    assert_eq!(t[0].traces.len(), 1, "no branching over the values of x");
    let tr = &t[0].traces[0];
    assert!(tr.events[0].symbolic);
    assert_eq!(tr.events[1].sym, Some(SymExpr::Local(LocalOp::Add, Arc::new(SymExpr::Read(0)), Arc::new(SymExpr::Const(1)))));
    assert_eq!(tr.events[1].possible, Some(vec![1, 6]));
    assert_eq!(domains[1], BTreeSet::from([0, 1, 6]), "y's domain holds every value the open store can write");
    // A register that decides a branch is read with its value known.
    let q = program(
        "PTX t
{ x=0; }
 P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;
 ld.weak r0, x | st.weak x, 5 ;
 beq r0, 0, L | ;
 L: | ;
exists (0 == 0)
",
    );
    let (_, t) = explore(&q, &Limits::default(), false).unwrap();
    assert_eq!(t[0].traces.len(), 2);
    assert!(t[0].traces.iter().all(|tr| !tr.events[0].symbolic));
}

#[test]
fn long_threads_are_not_capped_at_128_events() {
    let body: String = (0..150).map(|i| format!(" st.relaxed.gpu x{i}, 1 ;\n")).collect();
    let init: String = (0..150).map(|i| format!("x{i}=0; ")).collect();
    let p = program(&format!("PTX t\n{{ {init} }}\n P0@cta 0,gpu 0 ;\n{body}exists (x0 == 1)\n"));
    let (_, t) = explore(&p, &Limits { max_trace_events: 1000, ..Limits::default() }, false).unwrap();
    assert_eq!(t[0].traces[0].events.len(), 150);
    let err = explore(&p, &Limits { max_trace_events: 100, ..Limits::default() }, false).unwrap_err();
    assert!(err.to_string().contains("more than 100 memory events"), "{err}");
}

#[test]
fn an_unread_arrive_state_is_not_enumerated() {
    // The state of an arrive goes to a register nothing reads: one run, not one per phase.
    let unread = program("PTX t\n{ bar @ shared cta 0 mbarrier(2); }\n P0@cta 0,gpu 0 ;\n mbarrier.arrive.shared::cta.b64 %rd1, [bar] ;\n mbarrier.arrive.shared::cta.b64 %rd2, [bar] ;\nexists (0 == 0)\n");
    let (_, t) = explore(&unread, &Limits::default(), false).unwrap();
    assert_eq!(t[0].traces.len(), 1);
    // Shown by the condition, it is.
    let shown = program("PTX t\n{ bar @ shared cta 0 mbarrier(2); }\n P0@cta 0,gpu 0 ;\n mbarrier.arrive.shared::cta.b64 %rd1, [bar] ;\n mbarrier.arrive.shared::cta.b64 %rd2, [bar] ;\nexists (P0:%rd1 == 0)\n");
    let (_, t) = explore(&shown, &Limits::default(), false).unwrap();
    assert!(t[0].traces.len() > 1);
}

#[test]
fn a_sub_word_store_is_a_merge_of_its_word() {
    // st.u8 [s+1] reads the word (symbolically) and writes it with byte 1 replaced.
    let p = program("PTX t\n{ s = 0x11223344; }\n P0@cta 0,gpu 0 ;\n st.u8 [s+1], 0xAB ;\nexists (s == 0x1122AB44)\n");
    let (_, t) = explore(&p, &Limits::default(), false).unwrap();
    let tr = &t[0].traces[0];
    assert_eq!(tr.events.len(), 2);
    assert!(tr.events[0].symbolic && tr.events[0].rmw_partner == Some(1));
    assert_eq!(tr.events[0].range, (1, 2));
    let written = tr.events[1].sym.as_ref().unwrap().eval(&mut |_| Some(0x11223344));
    assert_eq!(written, Some(0x1122AB44));
}

#[test]
fn a_64_bit_atomic_is_two_rmw_pairs() {
    // Reads of both words, then their writes; each write the partner of its word's read.
    let p = program("PTX t\n{ c[8]; }\n P0@cta 0,gpu 0 ;\n atom.global.add.u64 %rd0, [c], 0xFFFFFFFF ;\nexists (c == 0)\n");
    let (_, t) = explore(&p, &Limits::default(), false).unwrap();
    let e = &t[0].traces[0].events;
    assert_eq!(e.len(), 4);
    assert_eq!([e[0].rmw_partner, e[1].rmw_partner, e[2].rmw_partner, e[3].rmw_partner], [Some(2), Some(3), Some(0), Some(1)]);
    assert!(e.iter().all(|x| x.range == (0, 8)));
    // Old value 0x00000001_FFFFFFFF: adding 0xFFFFFFFF carries into the high word.
    let old = |i: usize| Some(if i == 0 { 0xFFFF_FFFF } else { 1 });
    assert_eq!(e[2].sym.as_ref().unwrap().eval(&mut |i| old(i)), Some(0xFFFF_FFFE));
    assert_eq!(e[3].sym.as_ref().unwrap().eval(&mut |i| old(i)), Some(2));
}

#[test]
fn deep_open_values_are_walked_without_the_call_stack() {
    // An accumulator of 200 000 steps over two reads, alternating add and xor, walked on a
    // thread with a 256 KiB stack: a call per node would overflow it.
    let walked = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(|| {
            let mut e = SymExpr::Read(0);
            for k in 0..200_000i64 {
                let op = if k % 2 == 0 { LocalOp::Add } else { LocalOp::Xor };
                let operand = if k == 7 { SymExpr::Read(1) } else { SymExpr::Const(3) };
                e = SymExpr::Local(op, Arc::new(e), Arc::new(operand));
            }
            let copy = e.clone();
            let mut reads = Vec::new();
            e.shifted(10).reads(&mut reads);
            let value = e.eval(&mut |r| Some(r as i64 + 5));
            let unknown = e.eval(&mut |r| (r == 0).then_some(5));
            drop(e);
            (reads, value, unknown, copy.eval(&mut |r| Some(r as i64 + 5)))
        })
        .unwrap()
        .join()
        .unwrap();
    let (reads, value, unknown, after_drop) = walked;
    assert_eq!(reads, vec![10, 11], "reads left to right, shifted");
    // Step by step: start 5, +3 / ^3 alternately, with read 1 (6) as the operand of step 7.
    let mut expected = 5i64;
    for k in 0..200_000i64 {
        let operand = if k == 7 { 6 } else { 3 };
        expected = if k % 2 == 0 { expected + operand } else { expected ^ operand };
    }
    assert_eq!(value, Some(expected));
    assert_eq!(unknown, None, "a read not known leaves the value open");
    assert_eq!(after_drop, Some(expected), "a clone shares the nodes a dropped expression leaves");
}

#[test]
fn the_survey_keeps_the_words_a_thread_loads_and_groups_the_rest_of_each_copy() {
    // Two 16-byte cp.async tiles at register addresses; the thread loads each tile's first word.
    let p = program(include_str!("../../../tests/hw/cp-async-ktile-64.litmus"));
    assert!(!words_are_static(&p));
    let copies = |survey: bool| {
        let limits = Limits { word_survey: survey, ..Limits::default() }.with_fixed_unroll(2);
        let (_, t) = explore(&p, &limits, false).unwrap();
        let run = t[0].traces.iter().max_by_key(|tr| tr.events.len()).unwrap().clone();
        let named = |role: Role| -> Vec<String> {
            run.events.iter().filter(|e| e.role == role).map(|e| p.location_name(e.location.unwrap())).collect()
        };
        (named(Role::Source), named(Role::Destination))
    };
    let (sources, destinations) = copies(false);
    assert_eq!((sources.len(), destinations.len()), (8, 8), "every word: {sources:?} {destinations:?}");
    // Each tile: its loaded word (and the source word it comes from), and one word standing for
    // the three others (their source words likewise).
    let (sources, destinations) = copies(true);
    assert_eq!(destinations, ["s", "s+4", "s+16", "s+20"], "{destinations:?}");
    assert_eq!(sources, ["src", "src+4", "src+16", "src+20"], "{sources:?}");
}
