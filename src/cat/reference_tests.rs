//! The interpreter against a reference: a direct evaluator of the language with nothing but its
//! semantics, compared with the interpreter (static/dynamic split, hoisting, masks, in-place
//! operators, stages) on random executions of the built-in and toy models.

use super::tests::model;
use super::*;

/// A direct evaluator of resolved programs with the semantics of the language and nothing
/// else (no static/dynamic split, no hoisting, no masks, no work in place, every unit
/// evaluated in order): the reference the interpreter is compared with.
mod reference {
    use super::super::ast::{BinOp, CheckKind, FlagKind, UnOp};
    use super::super::resolve::{Bound, IExpr, IKind, Program};
    use super::super::{CatEnv, Value};
    use crate::relation::{EventSet, Relation};

    #[derive(Clone, Debug, PartialEq)]
    enum V {
        Set(EventSet),
        Rel(Relation),
        Empty,
    }

    pub struct Eval<'p> {
        prog: &'p Program,
        n: usize,
        env: Vec<Option<V>>,
        defs: Vec<Option<V>>,
    }

    impl<'p> Eval<'p> {
        /// Evaluates every unit of `prog` over `env`; `Err` when one fails.
        pub fn new(prog: &'p Program, env: &dyn CatEnv) -> Result<Self, String> {
            let n = env.universe();
            let values = prog
                .env
                .iter()
                .map(|e| match env.lookup(&e.name) {
                    Some(Value::Set(s)) => Some(V::Set(s)),
                    Some(Value::Rel(r)) => Some(V::Rel(r)),
                    None if e.name == "_" => Some(V::Set(EventSet::from_fn(n, |_| true))),
                    None => None,
                })
                .collect();
            let mut ev = Eval { prog, n, env: values, defs: vec![None; prog.defs.len()] };
            for unit in &prog.units {
                if !unit.rec {
                    let v = ev.eval(&unit.bodies[0])?;
                    ev.defs[unit.slots[0] as usize] = Some(v);
                    continue;
                }
                for &s in &unit.slots {
                    ev.defs[s as usize] = Some(V::Empty);
                }
                loop {
                    let next = unit.bodies.iter().map(|b| ev.eval(b)).collect::<Result<Vec<_>, _>>()?;
                    let mut changed = false;
                    for (&s, v) in unit.slots.iter().zip(next) {
                        if ev.defs[s as usize].as_ref() != Some(&v) {
                            changed = true;
                            ev.defs[s as usize] = Some(v);
                        }
                    }
                    if !changed {
                        break;
                    }
                }
            }
            Ok(ev)
        }

        fn eval(&self, e: &IExpr) -> Result<V, String> {
            let n = self.n;
            Ok(match &e.kind {
                IKind::Env(s) => self.env[*s as usize].clone().ok_or("missing environment value")?,
                IKind::Def(d) => self.defs[*d as usize].clone().ok_or("definition out of order")?,
                IKind::Zero => V::Empty,
                IKind::Param | IKind::Const(_) => return Err("not an expression of a program".into()),
                IKind::Un(op, a) => match (op, self.eval(a)?) {
                    (UnOp::Complement, V::Set(s)) => V::Set(EventSet::from_fn(n, |i| !s.contains(i))),
                    (UnOp::Complement, V::Rel(r)) => V::Rel(Relation::from_fn(n, |a, b| !r.contains(a, b))),
                    (UnOp::Complement, V::Empty) => V::Rel(Relation::from_fn(n, |_, _| true)),
                    (UnOp::ToId, V::Set(s)) => V::Rel(Relation::from_fn(n, |a, b| a == b && s.contains(a))),
                    (UnOp::ToId, V::Rel(_)) => return Err("expected a set".into()),
                    (UnOp::ToId, V::Empty) => V::Empty,
                    (_, V::Set(_)) => return Err("expected a relation".into()),
                    (UnOp::Plus | UnOp::Inverse | UnOp::Domain | UnOp::Range, V::Empty) => V::Empty,
                    (UnOp::Star | UnOp::Opt, V::Empty) => V::Rel(Relation::identity(n)),
                    (UnOp::Plus, V::Rel(r)) => V::Rel(closure(&r)),
                    (UnOp::Star, V::Rel(r)) => V::Rel(closure(&r).union(&Relation::identity(n))),
                    (UnOp::Opt, V::Rel(r)) => V::Rel(r.union(&Relation::identity(n))),
                    (UnOp::Inverse, V::Rel(r)) => V::Rel(Relation::from_pairs(n, r.pairs().map(|(a, b)| (b, a)))),
                    (UnOp::Domain, V::Rel(r)) => V::Set(EventSet::from_fn(n, |a| (0..n).any(|b| r.contains(a, b)))),
                    (UnOp::Range, V::Rel(r)) => V::Set(EventSet::from_fn(n, |b| (0..n).any(|a| r.contains(a, b)))),
                },
                IKind::Bin(op, a, b) => {
                    let (x, y) = (self.eval(a)?, self.eval(b)?);
                    match op {
                        BinOp::Union | BinOp::Inter | BinOp::Diff => match (x, y) {
                            (V::Empty, y) => {
                                if *op == BinOp::Union {
                                    y
                                } else {
                                    V::Empty
                                }
                            }
                            (x, V::Empty) => {
                                if *op == BinOp::Inter {
                                    V::Empty
                                } else {
                                    x
                                }
                            }
                            (V::Set(a), V::Set(b)) => V::Set(EventSet::from_fn(n, |i| pick(*op, a.contains(i), b.contains(i)))),
                            (V::Rel(a), V::Rel(b)) => V::Rel(Relation::from_fn(n, |i, j| pick(*op, a.contains(i, j), b.contains(i, j)))),
                            _ => return Err("mixed operands".into()),
                        },
                        BinOp::Seq => match (x, y) {
                            (V::Set(_), _) | (_, V::Set(_)) => return Err("expected a relation".into()),
                            (V::Empty, _) | (_, V::Empty) => V::Empty,
                            (V::Rel(a), V::Rel(b)) => {
                                let mut r = Relation::empty(n);
                                for (i, j) in a.pairs() {
                                    for k in 0..n {
                                        if b.contains(j, k) {
                                            r.insert(i, k);
                                        }
                                    }
                                }
                                V::Rel(r)
                            }
                        },
                        BinOp::Product => match (x, y) {
                            (V::Rel(_), _) | (_, V::Rel(_)) => return Err("expected a set".into()),
                            (V::Empty, _) | (_, V::Empty) => V::Empty,
                            (V::Set(a), V::Set(b)) => V::Rel(Relation::from_fn(n, |i, j| a.contains(i) && b.contains(j))),
                        },
                    }
                }
            })
        }

        /// `(holds, relation)` of check `i`, as an [`super::CheckOutcome`] reports them.
        pub fn check(&self, i: usize) -> Result<(bool, Relation), String> {
            let c = &self.prog.checks[i];
            let v = self.eval(&c.expr)?;
            let condition = match (c.kind, &v) {
                (_, V::Empty) => true,
                (CheckKind::Empty, V::Set(s)) => s.is_empty(),
                (CheckKind::Empty, V::Rel(r)) => r.is_empty(),
                (_, V::Set(_)) => return Err("expected a relation".into()),
                (CheckKind::Acyclic, V::Rel(r)) => (0..self.n).all(|a| !closure(r).contains(a, a)),
                (CheckKind::Irreflexive, V::Rel(r)) => (0..self.n).all(|a| !r.contains(a, a)),
            } != c.negated;
            let holds = if c.flag == Some(FlagKind::Flag) { !condition } else { condition };
            Ok((holds, self.value(v).to_relation()))
        }

        fn value(&self, v: V) -> Value {
            match v {
                V::Set(s) => Value::Set(s),
                V::Rel(r) => Value::Rel(r),
                V::Empty => Value::Rel(Relation::empty(self.n)),
            }
        }

        /// The value of a definition or environment name at the end of the model.
        pub fn value_of(&self, name: &str) -> Option<Value> {
            match self.prog.scope.get(name).copied().or_else(|| self.prog.env_slot(name).map(Bound::Env))? {
                Bound::Def(d) => self.defs[d as usize].clone().map(|v| self.value(v)),
                Bound::Env(s) => self.env[s as usize].clone().map(|v| self.value(v)),
                Bound::Fun(_) => None,
            }
        }
    }

    fn pick(op: BinOp, a: bool, b: bool) -> bool {
        match op {
            BinOp::Union => a || b,
            BinOp::Inter => a && b,
            _ => a && !b,
        }
    }

    /// Transitive closure by breadth-first search from every event.
    fn closure(r: &Relation) -> Relation {
        let n = r.universe();
        let mut out = Relation::empty(n);
        for src in 0..n {
            let mut todo: Vec<usize> = (0..n).filter(|&b| r.contains(src, b)).collect();
            while let Some(x) = todo.pop() {
                if out.contains(src, x) {
                    continue;
                }
                out.insert(src, x);
                todo.extend((0..n).filter(|&b| r.contains(x, b) && !out.contains(src, b)));
            }
        }
        out
    }
}

/// Deterministic xorshift for the randomized tests.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A relation with about `edges` random pairs.
    fn relation(&mut self, n: usize, edges: usize) -> Relation {
        let mut r = Relation::empty(n);
        for _ in 0..edges {
            r.insert(self.below(n), self.below(n));
        }
        r
    }

    /// A set with each event in it with probability `1 / (1 + sparsity)`; empty a quarter of
    /// the time (most sets of a real execution are).
    fn set(&mut self, n: usize, sparsity: u64) -> EventSet {
        if self.next().is_multiple_of(4) {
            return EventSet::empty(n);
        }
        EventSet::from_fn(n, |_| false).union(&{
            let mut s = EventSet::empty(n);
            for i in 0..n {
                if self.next().is_multiple_of(sparsity + 1) {
                    s.insert(i);
                }
            }
            s
        })
    }
}

/// The names a candidate provides in the randomized tests; every other free name is static.
const CANDIDATE_NAMES: [&str; 3] = ["rf", "sync_fence", "co"];

/// A random static environment for `m`: sets for names that start with a capital letter,
/// relations (program-order-like `po`, sparse or empty others) for the rest.
fn random_statics(m: &CatModel, n: usize, rng: &mut Rng) -> MapEnv {
    let mut env = MapEnv::new(n);
    let threads = 1 + n / 8;
    for name in m.free_names() {
        if name == "_" || CANDIDATE_NAMES.contains(&name.as_str()) {
            continue;
        }
        let v = if name.starts_with(|c: char| c.is_ascii_uppercase()) {
            Value::Set(rng.set(n, 1))
        } else if name == "po" {
            Value::Rel(Relation::from_fn(n, |a, b| a < b && a % threads == b % threads))
        } else if name == "id" {
            Value::Rel(Relation::identity(n))
        } else if rng.next().is_multiple_of(3) {
            Value::Rel(Relation::empty(n))
        } else {
            let edges = 1 + rng.below(3 * n);
            Value::Rel(rng.relation(n, edges))
        };
        env.insert(name, v);
    }
    env
}

/// `statics` plus the candidate names.
fn full_env(statics: &MapEnv, cand: &MapEnv) -> MapEnv {
    let mut env = statics.clone();
    for name in CANDIDATE_NAMES {
        if let Some(v) = cand.lookup(name) {
            env.insert(name, v);
        }
    }
    env
}

/// Checks every query of `p` on candidate `cand` against the reference evaluation of the whole
/// environment, with and without each of `stages`.
fn assert_matches_reference(m: &CatModel, p: &Prepared<'_>, statics: &MapEnv, cand: &MapEnv, stages: &[(&[&str], &Stage)], ctx: &str) {
    let env = full_env(statics, cand);
    let reference = reference::Eval::new(&m.prog, &env).unwrap_or_else(|e| panic!("{ctx}: reference: {e}"));
    let infos = m.checks();
    let expected: Vec<(bool, Relation)> = (0..infos.len()).map(|i| reference.check(i).unwrap()).collect();
    let e = p.evaluate(cand, false).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    let got: Vec<(bool, Relation)> = e.checks.iter().map(|c| (c.holds, c.relation.clone())).collect();
    for (i, (g, x)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g, x, "{ctx}: check {}", infos[i].name);
    }
    for name in m.definitions() {
        assert_eq!(p.value_of(name, cand).unwrap(), reference.value_of(name), "{ctx}: value of {name}");
    }
    let all: Vec<usize> = (0..infos.len()).collect();
    let first_failure = (0..infos.len()).find(|&i| infos[i].flag.is_none() && !expected[i].0);
    assert_eq!(p.check_subset(cand, &all).unwrap(), first_failure.is_none(), "{ctx}: check_subset");
    let stopped = p.evaluate(cand, true).unwrap();
    assert_eq!(stopped.checks.len(), first_failure.map_or(infos.len(), |i| i + 1), "{ctx}: stop at first failure");
    let partial_expected = |avail: &[&str]| {
        (0..infos.len()).all(|i| {
            infos[i].flag.is_some()
                || expected[i].0
                || infos[i].depends_on.iter().any(|d| CANDIDATE_NAMES.contains(&d.as_str()) && !avail.contains(&d.as_str()))
        })
    };
    for avail in [&[][..], &["rf"], &["rf", "sync_fence"], &CANDIDATE_NAMES] {
        assert_eq!(p.check_partial(cand, avail).unwrap(), partial_expected(avail), "{ctx}: check_partial {avail:?}");
    }
    for (names, stage) in stages {
        let ctx = format!("{ctx}, stage {names:?}");
        assert_eq!(p.evaluate_on(stage, cand, false).unwrap(), e, "{ctx}: evaluate_on");
        assert_eq!(p.evaluate_on(stage, cand, true).unwrap(), stopped, "{ctx}: evaluate_on, stopping");
        assert_eq!(p.check_subset_on(stage, cand, &all).unwrap(), first_failure.is_none(), "{ctx}: check_subset_on");
        for i in 0..infos.len() {
            assert_eq!(p.check_subset_on(stage, cand, &[i]).unwrap(), p.check_subset(cand, &[i]).unwrap(), "{ctx}: check {i}");
        }
        let failure = p.first_failure_on(stage, cand, &all).unwrap();
        assert_eq!(failure.as_ref().map(|o| o.index), first_failure, "{ctx}: first_failure_on");
        if let Some(o) = failure {
            assert_eq!(o, e.checks[o.index], "{ctx}: first failure outcome");
        }
        for avail in [&[][..], &["rf"], &["rf", "sync_fence"], &CANDIDATE_NAMES] {
            assert_eq!(p.check_partial_on(stage, cand, avail).unwrap(), partial_expected(avail), "{ctx}: check_partial_on {avail:?}");
        }
    }
}

/// Toy models that exercise what the built-in ones do not: masks by dynamic sets, recursion
/// through dynamic names, sets built from relations, complements and products of both kinds.
const TOY_MODELS: &[&str] = &[
    "let fr = rf^-1 ; co\n\
     let hb = (po | rf | [domain(rf)] ; co ; [range(co)])+\n\
     let rec t = rf | (t ; po ; [W]) | ([R] ; t ; t)\n\
     let s = domain(t) \\ range(co) | (W & ~R)\n\
     let k = [s] ; hb ; [~s] | ([W] ; (co \\ rf^-1) ; [s])\n\
     acyclic hb | fr as a\n\
     irreflexive (fr ; hb) | (t ; [s]) as b\n\
     empty k & ~(s * (W | R)) as c\n\
     ~empty (rf ; 0) | (co & sync_fence) as d\n\
     flag ~empty (co \\ (po | po^-1)) as e\n\
     undefined_unless acyclic t | sync_fence as f\n\
     empty ([W] ; [R]) | ([~W] ; 0 ; [W]) | (0 ; [W]) as g\n\
     irreflexive ([W] ; ([R] ; sync_fence)?) ; [W] as h",
    // The polymorphic `0` next to empty relations, which the interpreter may keep without a
    // matrix: `e ; [0]` is `0` (a set next to `W`), `e ; [R]` an empty relation.
    "let e = rf & ~rf\n\
     let z1 = (e ; [0]) | W\n\
     let z2 = ([0] ; e) | R\n\
     let z3 = (e ; 0) | (0 ; e) | (e & 0) | (0 \\ e) | W\n\
     let z4 = ([W] ; e ; [R]) | (e ; [R]) | ([W] ; e) | (po ; [0]) | (co ; [R & ~R])\n\
     let z5 = e+ | (e* \\ id) | (e? \\ id) | e^-1 | ~~e | (domain(e) * range(e)) | (e \\ co)\n\
     empty z1 & ~W as a1\n\
     empty z2 \\ R as a2\n\
     empty z3 \\ W as a3\n\
     empty z4 as a4\n\
     acyclic z5 | [domain(e)] as a5\n\
     irreflexive (co & e) | (e \\ co) | (co \\ e) as a6",
    // Differences from unions with converses (removed pair by pair), next to `0` and empty
    // relations, and a converse alone.
    "let k1 = aa \\ (rf | rf^-1 | co)\n\
     let k2 = (po | co) \\ co^-1\n\
     let k3 = po \\ (0 | rf^-1 | 0^-1)\n\
     let k4 = (W * R) \\ ((rf ; po)^-1 | (co & po^-1) | rf)\n\
     let k5 = (bb \\ (rf & ~rf)^-1) | (0 \\ (rf | co^-1)) | ((rf & ~rf) \\ (co | co^-1))\n\
     let k6 = (W \\ (R | 0)) | (R \\ (0 | W))\n\
     empty k1 & k2 as p\n\
     acyclic k3 | k4 as q\n\
     irreflexive k5 as r\n\
     empty [k6] ; (aa \\ (bb | aa^-1)) as s",
    "let rec a = [W] ; rf ; [R] | (a ; co) and b = a^-1 | (b ; b)\n\
     let c = (a | b)* \\ (sync_fence+ & ~po)\n\
     acyclic c \\ id as x\n\
     empty [R] ; c ; [R] \\ (R * R) as y\n\
     irreflexive ((W * R) & c) ; (co | 0)^-1 as z",
];

/// The interpreter (static/dynamic split, hoisting, masks, in-place operators, stages) agrees
/// with the reference evaluator on random executions, for the built-in models and toy models,
/// at sizes on both sides of the word boundaries.
#[test]
fn evaluation_matches_the_reference_on_random_executions() {
    let mut models: Vec<(String, CatModel)> = crate::config::models::BUILTIN
        .iter()
        .map(|(name, _, _)| (name.to_string(), crate::config::models::builtin(name).unwrap_or_else(|d| panic!("{}", d.render(false)))))
        .collect();
    models.extend(TOY_MODELS.iter().enumerate().map(|(i, src)| (format!("toy{i}"), model(src))));
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for (name, m) in &models {
        for n in [1, 6, 40, 70, 130] {
            for round in 0..2 {
                let statics = random_statics(m, n, &mut rng);
                let p = m.prepare(&statics, &CANDIDATE_NAMES).unwrap_or_else(|e| panic!("{name} n={n}: {e}"));
                let rf = rng.relation(n, n / 2 + 1);
                let sync_fence = if rng.next().is_multiple_of(2) { Relation::empty(n) } else { rng.relation(n, 2) };
                let partial = MapEnv::new(n).with("rf", Value::Rel(rf.clone())).with("sync_fence", Value::Rel(sync_fence.clone()));
                let stage_names: [&[&str]; 4] = [&[], &["rf"], &["rf", "sync_fence"], &CANDIDATE_NAMES];
                // One stage per set of names, shared by the coherence choices below.
                let stages: Vec<Stage> = stage_names[..3].iter().map(|names| p.stage(&partial, names).unwrap()).collect();
                for choice in 0..3 {
                    let co = if choice == 0 { Relation::empty(n) } else { rng.relation(n, n) };
                    let cand = partial.clone().with("co", Value::Rel(co));
                    // A stage for every name is only valid for this one candidate.
                    let last = p.stage(&cand, stage_names[3]).unwrap();
                    let with: Vec<(&[&str], &Stage)> = stage_names.iter().copied().zip(stages.iter().chain([&last])).collect();
                    assert_matches_reference(m, &p, &statics, &cand, &with, &format!("{name} n={n} round {round} co {choice}"));
                }
            }
        }
    }
}
