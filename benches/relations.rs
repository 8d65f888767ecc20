//! Benchmarks of the bit-matrix relation algebra (`cargo bench --bench relations`) on the
//! shapes model evaluation meets: a few program-order chains (transitive within a thread) plus
//! sparse cross-thread edges. Timed here, never in tests.

use ptxmm::relation::Relation;

fn main() {
    divan::main();
}

const SIZES: [usize; 3] = [32, 128, 300];

/// Deterministic xorshift.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 as usize
    }
}

/// `threads` program-order chains over `n` events (event `i` in thread `i % threads`, so
/// chains interleave in index order as events of a trace do), transitive as `po` is.
fn po(n: usize, threads: usize) -> Relation {
    Relation::from_fn(n, |a, b| a < b && a % threads == b % threads)
}

/// Program order plus `n / 4` cross-thread edges that go from a position of one chain to a later
/// position of another (so the whole stays acyclic, as base causality of a consistent execution).
fn chains(n: usize) -> Relation {
    let threads = 4;
    let mut r = po(n, threads);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d ^ n as u64);
    for _ in 0..n / 4 {
        let a = rng.next() % n;
        let b = rng.next() % n;
        let (pa, pb) = (a / threads, b / threads);
        if pa < pb && a % threads != b % threads {
            r.insert(a, b);
        }
    }
    r
}

/// Sparse cross edges only (as `rf` or `observation`): one edge per four events, random.
fn sparse(n: usize) -> Relation {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ n as u64);
    let mut r = Relation::empty(n);
    for _ in 0..n.div_ceil(4) {
        r.insert(rng.next() % n, rng.next() % n);
    }
    r
}

#[divan::bench(args = SIZES)]
fn seq_chains_chains(bencher: divan::Bencher, n: usize) {
    let a = chains(n);
    bencher.bench(|| divan::black_box(&a).seq(divan::black_box(&a)));
}

#[divan::bench(args = SIZES)]
fn seq_sparse_chains(bencher: divan::Bencher, n: usize) {
    let (a, b) = (sparse(n), chains(n));
    bencher.bench(|| divan::black_box(&a).seq(divan::black_box(&b)));
}

#[divan::bench(args = SIZES)]
fn plus_chains(bencher: divan::Bencher, n: usize) {
    let a = chains(n);
    bencher.bench(|| divan::black_box(&a).plus());
}

/// Chains plus random sparse edges in any direction: cyclic.
#[divan::bench(args = SIZES)]
fn plus_cyclic(bencher: divan::Bencher, n: usize) {
    let a = chains(n).union(&sparse(n));
    bencher.bench(|| divan::black_box(&a).plus());
}

#[divan::bench(args = SIZES)]
fn plus_sparse(bencher: divan::Bencher, n: usize) {
    let a = sparse(n);
    bencher.bench(|| divan::black_box(&a).plus());
}

#[divan::bench(args = SIZES)]
fn inverse_chains(bencher: divan::Bencher, n: usize) {
    let a = chains(n).plus();
    bencher.bench(|| divan::black_box(&a).inverse());
}

#[divan::bench(args = SIZES)]
fn inverse_sparse(bencher: divan::Bencher, n: usize) {
    let a = sparse(n);
    bencher.bench(|| divan::black_box(&a).inverse());
}

#[divan::bench(args = SIZES)]
fn is_acyclic_chains(bencher: divan::Bencher, n: usize) {
    let a = chains(n).plus();
    bencher.bench(|| divan::black_box(&a).is_acyclic());
}

#[divan::bench(args = SIZES)]
fn is_acyclic_cyclic(bencher: divan::Bencher, n: usize) {
    let a = chains(n).union(&sparse(n));
    bencher.bench(|| divan::black_box(&a).is_acyclic());
}

/// Model evaluation on one candidate execution of a generated litmus test: the default model,
/// prepared for the test's first event structure that has a consistent candidate. The
/// arguments 0, 1, 2 are ISA2 through 12 threads (36 events), and message passing after 60 and
/// 150 stores (124 and 304 events).
mod model {
    use ptxmm::cat::Evaluation;
    use ptxmm::cat::{CatModel, Prepared};
    use ptxmm::config::models;
    use ptxmm::config::Limits;
    use ptxmm::diag::SourceFile;
    use ptxmm::exec::search::{search, Budget, Candidate, LazyModel, PrunePlan, SearchGoal, StaticEnv, Visit};
    use ptxmm::exec::structure::{resolve_barriers, EventStructure};
    use ptxmm::exec::trace::explore;

    /// ISA2 chained through `k` threads: about `3k` events.
    fn isa2(k: usize) -> String {
        let mut s = format!("PTX ISA2-{k}\n{{ x=0; {} }}\n", (1..k).map(|i| format!("f{i}=0;")).collect::<Vec<_>>().join(" "));
        s += &(0..k).map(|t| format!("P{t}@cta {t},gpu 0")).collect::<Vec<_>>().join(" | ");
        s += " ;\n";
        let first: Vec<String> =
            (0..k).map(|t| if t == 0 { "st.relaxed.gpu x, 1".into() } else { format!("ld.acquire.gpu r0, f{t}") }).collect();
        let second: Vec<String> =
            (0..k).map(|t| if t + 1 < k { format!("st.release.gpu f{}, 1", t + 1) } else { "ld.relaxed.gpu r1, x".into() }).collect();
        s += &first.join(" | ");
        s += " ;\n";
        s += &second.join(" | ");
        s += " ;\n";
        s += &format!("exists ({} /\\ P{}:r1 == 0)\n", (1..k).map(|t| format!("P{t}:r0 == 1")).collect::<Vec<_>>().join(" /\\ "), k - 1);
        s
    }

    /// Message passing after `m` stores to distinct locations, spread over writer threads of
    /// at most 100 stores (the first one then releases the flag): about `2m` events.
    fn wide_mp(m: usize) -> String {
        let writers = m.div_ceil(100);
        let per = m.div_ceil(writers);
        let threads = writers + 1;
        let mut rows: Vec<Vec<String>> = Vec::new();
        for i in 0..m {
            let (t, row) = (i / per, i % per);
            if rows.len() <= row {
                rows.push(vec![String::new(); threads]);
            }
            rows[row][t] = format!("st.relaxed.gpu x{i}, 1");
        }
        rows.push(vec![String::new(); threads]);
        let last = rows.len() - 1;
        rows[last][0] = "st.release.gpu f, 1".into();
        rows[0][writers] = "ld.acquire.gpu r0, f".into();
        rows[1][writers] = "ld.relaxed.gpu r1, x0".into();
        let mut s = format!("PTX WideMP-{m}\n{{ f=0; {} }}\n", (0..m).map(|i| format!("x{i}=0;")).collect::<String>());
        s += &(0..threads).map(|t| format!("P{t}@cta {t},gpu 0")).collect::<Vec<_>>().join(" | ");
        s += " ;\n";
        for row in rows {
            s += &row.join(" | ");
            s += " ;\n";
        }
        s += &format!("exists (P{writers}:r0 == 1 /\\ P{writers}:r1 == 0)\n");
        s
    }

    /// Runs `f` on the first consistent candidate of the test `src` under the default model
    /// (event structures tried in trace order).
    fn with_candidate(src: &str, f: &mut dyn FnMut(&Prepared<'_>, &Candidate<'_>)) {
        let program = ptxmm::parse_program(SourceFile::new("bench.litmus", src)).unwrap_or_else(|e| panic!("{}", e.render(false)));
        let limits = Limits { max_trace_events: 1000, ..Limits::default() };
        let (_, per_thread) = explore(&program, &limits, false).unwrap();
        let model: CatModel = models::builtin(models::DEFAULT_MODEL).unwrap();
        let mut choice = vec![0usize; per_thread.len()];
        loop {
            let traces: Vec<_> = per_thread.iter().zip(&choice).map(|(t, &c)| &t.traces[c]).collect();
            let structure = EventStructure::build(&program, &Default::default(), &traces);
            for barrier in resolve_barriers(&structure, &Default::default()) {
                let statics = StaticEnv::new(&structure, &barrier);
                let lazy = LazyModel::new(&model, &statics);
                let prepared = lazy.get().unwrap();
                let mut found = false;
                let mut budget = Budget::new(&limits, None);
                let plan = PrunePlan::for_model(&model);
                let mut visit = Visit(|cand: &Candidate, eval: &Evaluation| {
                    if eval.consistent() {
                        f(prepared, cand);
                        found = true;
                    }
                    !found
                });
                search(&statics, &lazy, &plan, &SearchGoal::default(), &mut budget, &mut visit).unwrap();
                if found {
                    return;
                }
            }
            // Next combination of traces, odometer-style.
            let mut t = 0;
            loop {
                assert!(t < choice.len(), "no consistent candidate");
                choice[t] += 1;
                if choice[t] < per_thread[t].traces.len() {
                    break;
                }
                choice[t] = 0;
                t += 1;
            }
        }
    }

    fn tests() -> [(&'static str, String); 3] {
        [("isa2-12", isa2(12)), ("wide-mp-60", wide_mp(60)), ("wide-mp-150", wide_mp(150))]
    }

    /// One full evaluation (every check, as for a candidate that reaches the end).
    #[divan::bench(args = [0, 1, 2])]
    fn evaluate(bencher: divan::Bencher, which: usize) {
        let (_, src) = &tests()[which];
        let mut bencher = Some(bencher);
        with_candidate(src, &mut |prepared, cand| {
            let bencher = bencher.take().expect("one candidate");
            bencher.bench_local(|| prepared.evaluate(cand, true).unwrap());
        });
    }

    /// The non-flag checks, as the search decides a complete candidate.
    #[divan::bench(args = [0, 1, 2])]
    fn check_subset(bencher: divan::Bencher, which: usize) {
        let (_, src) = &tests()[which];
        let mut bencher = Some(bencher);
        with_candidate(src, &mut |prepared, cand| {
            let all: Vec<usize> = (0..64).collect();
            let checks: Vec<usize> = all.into_iter().take_while(|&i| prepared.check_subset(cand, &[i]).is_ok()).collect();
            let bencher = bencher.take().expect("one candidate");
            bencher.bench_local(|| prepared.check_subset(cand, &checks).unwrap());
        });
    }

    /// The same with rf and the fence-SC order staged: the per-coherence-choice cost.
    #[divan::bench(args = [0, 1, 2])]
    fn check_subset_staged(bencher: divan::Bencher, which: usize) {
        let (_, src) = &tests()[which];
        let mut bencher = Some(bencher);
        with_candidate(src, &mut |prepared, cand| {
            let all: Vec<usize> = (0..64).collect();
            let checks: Vec<usize> = all.into_iter().take_while(|&i| prepared.check_subset(cand, &[i]).is_ok()).collect();
            let stage = prepared.stage(cand, &["rf", "rfe", "rfi", "sync_fence"]).unwrap();
            let bencher = bencher.take().expect("one candidate");
            bencher.bench_local(|| prepared.check_subset_on(&stage, cand, &checks).unwrap());
        });
    }
}
