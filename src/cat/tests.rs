//! Tests of the cat module as a whole: loading, name resolution, evaluation, the
//! static/dynamic split, and the two Dat3M PTX models.

use super::*;
use std::cell::RefCell;

pub(super) fn model(src: &str) -> CatModel {
    CatModel::from_source(SourceFile::new("t.cat", src), &[]).unwrap_or_else(|d| panic!("{}", d.render(false)))
}

fn rel(n: usize, pairs: &[(usize, usize)]) -> Value {
    Value::Rel(Relation::from_pairs(n, pairs.iter().copied()))
}

fn set(n: usize, elems: &[usize]) -> Value {
    Value::Set(EventSet::from_fn(n, |i| elems.contains(&i)))
}

fn as_rel(v: Option<Value>) -> Relation {
    match v {
        Some(Value::Rel(r)) => r,
        other => panic!("expected a relation, got {other:?}"),
    }
}

/// Evaluates `name` in `src` with everything static.
fn value(src: &str, env: &MapEnv, name: &str) -> Option<Value> {
    let m = model(src);
    let p = m.prepare(env, &[]).unwrap_or_else(|e| panic!("{e}"));
    p.value_of(name, env).unwrap_or_else(|e| panic!("{e}"))
}

fn chain_env() -> MapEnv {
    MapEnv::new(4)
        .with("a", rel(4, &[(0, 1)]))
        .with("b", rel(4, &[(1, 2), (0, 3)]))
        .with("c", rel(4, &[(2, 3)]))
        .with("r", rel(4, &[(0, 1), (1, 2), (2, 3)]))
        .with("A", set(4, &[0, 1]))
        .with("B", set(4, &[2]))
}

#[test]
fn evaluation_follows_precedence() {
    let env = chain_env();
    let get = |e: &str| as_rel(value(&format!("let x = {e}"), &env, "x"));
    let (a, b, c) = (as_rel(env.lookup("a")), as_rel(env.lookup("b")), as_rel(env.lookup("c")));
    assert_eq!(get("a | b ; c"), a.union(&b.seq(&c)));
    assert_eq!(get("a & b ; c"), a.intersection(&b).seq(&c));
    assert_eq!(get("a \\ b ; c"), a.difference(&b).seq(&c));
    assert_eq!(get("A * B | B * A"), Relation::from_pairs(4, [(0, 2), (1, 2), (2, 0), (2, 1)]));
    assert_eq!(get("r*"), as_rel(env.lookup("r")).star());
    assert_eq!(get("r^-1"), as_rel(env.lookup("r")).inverse());
    assert_eq!(get("[A] ; r ; [B]"), Relation::from_pairs(4, [(1, 2)]));
    assert_eq!(get("~r").len(), 16 - 3);
    assert_eq!(get("0 | r"), as_rel(env.lookup("r")));
    assert_eq!(get("_ * _").len(), 16);
    assert_eq!(value("let s = ~A | 0", &env, "s"), Some(set(4, &[2, 3])));
    assert_eq!(value("let s = domain(r) \\ range(r)", &env, "s"), Some(set(4, &[0])));
}

#[test]
fn let_rec_is_a_least_fixpoint() {
    let env = chain_env();
    let r = as_rel(env.lookup("r"));
    assert_eq!(as_rel(value("let rec t = r | (t ; r)", &env, "t")), r.plus());
    // Mutual recursion: even/odd-length paths.
    let src = "let rec odd = r | (even ; r) and even = odd ; r";
    let odd = as_rel(value(src, &env, "odd"));
    let even = as_rel(value(src, &env, "even"));
    assert_eq!(odd, Relation::from_pairs(4, [(0, 1), (1, 2), (2, 3), (0, 3)]));
    assert_eq!(even, Relation::from_pairs(4, [(0, 2), (1, 3)]));
    // A recursive *set* definition starts from the polymorphic empty value.
    assert_eq!(value("let rec s = A | range([s] ; r)", &env, "s"), Some(set(4, &[0, 1, 2, 3])));
}

#[test]
fn non_monotone_rec_is_reported_not_looped() {
    let env = chain_env();
    let m = model("let rec t = ~t\nacyclic t");
    let e = m.prepare(&env, &[]).unwrap_err();
    assert!(e.message.contains("fixpoint"), "{e}");
    assert_eq!(e.to_string(), format!("t.cat:1:9: {}", e.message));
}

#[test]
fn shadowing_a_base_name() {
    let env = MapEnv::new(3).with("co", rel(3, &[(0, 1), (1, 2)])).with("rf", rel(3, &[(0, 1)]));
    let src = "let co = co+\nlet fr = rf^-1 ; co\nempty fr as e";
    assert_eq!(as_rel(value(src, &env, "co")), Relation::from_pairs(3, [(0, 1), (1, 2), (0, 2)]));
    assert_eq!(as_rel(value(src, &env, "fr")), Relation::from_pairs(3, [(1, 1), (1, 2)]));
    let m = model(src);
    assert_eq!(m.free_names(), ["co", "rf"].iter().map(|s| s.to_string()).collect());
}

#[test]
fn functions_are_lexically_scoped() {
    let env = chain_env();
    let src = "let g0 = a\n\
               let f(x, y) = (x ; y) | g0\n\
               let g0 = c\n\
               let h(x) = f(x, x)\n\
               let v = h(r)\n";
    let r = as_rel(env.lookup("r"));
    let a = as_rel(env.lookup("a"));
    assert_eq!(as_rel(value(src, &env, "v")), r.seq(&r).union(&a));
    let err = CatModel::from_source(SourceFile::new("t.cat", "let f(x) = x\nacyclic f(a, b)"), &[]).unwrap_err();
    assert_eq!(err.one_line(), "t.cat:2:9: error: `f` takes 1 argument(s) but 2 were given");
    let err = CatModel::from_source(SourceFile::new("t.cat", "acyclic\n  g(po)"), &[]).unwrap_err();
    assert_eq!(err.one_line(), "t.cat:2:3: error: unknown function `g`");
    let err = CatModel::from_source(SourceFile::new("t.cat", "let f(x) = x\nacyclic f"), &[]).unwrap_err();
    assert!(err.one_line().starts_with("t.cat:2:9: error: `f` is a function"), "{}", err.one_line());
}

#[test]
fn flags_do_not_affect_consistency() {
    let env = chain_env();
    let m = model("flag ~empty a as race\nflag ~empty (a & c) as none\nundefined_unless empty a as ub\nacyclic r as ok");
    let p = m.prepare(&env, &[]).unwrap();
    let e = p.evaluate(&env, false).unwrap();
    assert!(e.consistent());
    let fired: Vec<&str> = e.fired_flags().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(fired, ["race", "ub"]);
    assert_eq!(e.checks[0].flag, Some(FlagKind::Flag));
    assert!(!e.checks[0].holds);
    assert!(e.checks[1].holds);
    assert_eq!(e.checks[0].relation, as_rel(env.lookup("a")));
    let infos = m.checks();
    assert!(infos[0].negated && infos[0].flag == Some(FlagKind::Flag));
    assert_eq!(infos[3].kind, CheckKind::Acyclic);
}

#[test]
fn check_semantics_and_early_stop() {
    let env = MapEnv::new(3).with("p", rel(3, &[(0, 1), (1, 0)])).with("S", set(3, &[1]));
    let m = model("acyclic p\nirreflexive p\nempty S\n~empty S as nonempty\nempty p");
    let infos = m.checks();
    let names: Vec<&str> = infos.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["acyclic#1", "irreflexive#2", "empty#3", "nonempty", "empty#5"]);
    let p = m.prepare(&env, &[]).unwrap();
    let holds: Vec<bool> = p.evaluate(&env, false).unwrap().checks.iter().map(|c| c.holds).collect();
    assert_eq!(holds, [false, true, false, true, false]);
    let e = p.evaluate(&env, true).unwrap();
    assert_eq!(e.checks.len(), 1);
    assert!(!e.consistent());
    // A set checked with `empty` is reported as the identity on it.
    assert_eq!(p.evaluate(&env, false).unwrap().checks[2].relation, Relation::from_pairs(3, [(1, 1)]));
}

#[test]
fn type_errors_carry_positions() {
    let env = MapEnv::new(2).with("po", rel(2, &[(0, 1)])).with("W", set(2, &[0]));
    let cases = [
        ("let a = po\nlet b = a ;\n  W\nacyclic b", "t.cat:3:3: expected a relation, found a set; write [S] for the identity on S"),
        ("acyclic W", "t.cat:1:9: expected a relation, found a set; write [S] for the identity on S"),
        ("let x = W+", "t.cat:1:9: expected a relation, found a set; write [S] for the identity on S"),
        ("let x = po * W", "t.cat:1:9: expected a set, found a relation"),
        ("let x = [po]", "t.cat:1:10: expected a set, found a relation"),
        ("empty (W | po)", "t.cat:1:7: `|` needs two sets or two relations, found a set and a relation"),
        ("let a = po\nacyclic a | foo", "t.cat:2:13: unknown relation `foo` (not defined in the model and not provided by the engine)"),
    ];
    for (src, expected) in cases {
        let m = model(src);
        let e = m.prepare(&env, &[]).unwrap_err();
        assert_eq!(e.to_string(), expected, "for {src:?}");
        assert!(e.to_diagnostic().unwrap().render(false).contains(expected.split(": ").next().unwrap()));
    }
    // The same error in a dynamic definition surfaces per candidate.
    let m = model("let x = rf ; W\nacyclic x");
    let p = m.prepare(&env, &["rf"]).unwrap();
    let dynenv = MapEnv::new(2).with("rf", rel(2, &[]));
    assert_eq!(
        p.evaluate(&dynenv, false).unwrap_err().to_string(),
        "t.cat:1:14: expected a relation, found a set; write [S] for the identity on S"
    );
}

#[test]
fn syntax_errors_are_file_diagnostics() {
    let err = CatModel::from_source(SourceFile::new("m.cat", "PTX\nlet a = po |\n\nacyclic a"), &[]).unwrap_err();
    assert_eq!(err.one_line(), "m.cat:4:1: error: expected an expression, found keyword `acyclic`");
    let err = CatModel::from_source(SourceFile::new("m.cat", "let a = po\nlet b = (a"), &[]).unwrap_err();
    assert!(err.one_line().starts_with("m.cat:2:11: error: expected `)`"), "{}", err.one_line());
    let err = CatModel::load(Path::new("/nonexistent/x.cat"), &[]).unwrap_err();
    assert!(err.one_line().contains("cannot read cat model"));
}

/// An environment that counts lookups, to observe what `prepare` and `evaluate` fetch.
struct Counting {
    inner: MapEnv,
    log: RefCell<Vec<String>>,
}

impl CatEnv for Counting {
    fn universe(&self) -> usize {
        self.inner.universe()
    }
    fn lookup(&self, name: &str) -> Option<Value> {
        self.log.borrow_mut().push(name.to_string());
        self.inner.lookup(name)
    }
}

#[test]
fn static_work_is_done_once_and_dynamic_names_lazily() {
    let n = 3;
    let statics =
        Counting { inner: MapEnv::new(n).with("po", rel(n, &[(0, 1), (1, 2)])).with("W", set(n, &[0, 2])), log: RefCell::new(Vec::new()) };
    let m = model(
        "let ppo = [W] ; po+ ; [W]\n\
         let hb = ppo | rf\n\
         empty ppo \\ ppo as static-check\n\
         acyclic hb as uses-rf\n\
         acyclic co | hb as uses-co\n\
         flag ~empty co as co-flag",
    );
    let infos = m.checks();
    assert_eq!(infos[0].depends_on, ["W", "po"].iter().map(|s| s.to_string()).collect());
    assert_eq!(infos[2].depends_on, ["W", "co", "po", "rf"].iter().map(|s| s.to_string()).collect());
    let p = m.prepare(&statics, &["rf", "co"]).unwrap();
    assert_eq!(*statics.log.borrow(), ["W", "po"]);
    let cand = Counting { inner: MapEnv::new(n).with("rf", rel(n, &[(2, 0)])).with("co", rel(n, &[])), log: RefCell::new(Vec::new()) };
    let e = p.evaluate(&cand, true).unwrap();
    assert_eq!(e.checks.len(), 2, "stops at the failing `uses-rf`");
    assert_eq!(*cand.log.borrow(), ["rf"], "co is not needed before the failure");
    cand.log.borrow_mut().clear();
    let e = p.evaluate(&cand, false).unwrap();
    assert_eq!(e.checks.iter().map(|c| c.holds).collect::<Vec<_>>(), [true, false, false, true]);
    assert_eq!(*cand.log.borrow(), ["rf", "co"], "each dynamic name fetched once per candidate");
    // Pruning: with only rf known, the rf-only check already fails; co is never requested.
    let partial = Counting { inner: MapEnv::new(n).with("rf", rel(n, &[(2, 0)])), log: RefCell::new(Vec::new()) };
    assert!(!p.check_partial(&partial, &["rf"]).unwrap());
    assert!(p.check_partial(&partial, &[]).unwrap());
    assert_eq!(*partial.log.borrow(), ["rf"]);
    // Values of definitions, for explanations.
    assert_eq!(p.value_of("hb", &cand).unwrap(), Some(rel(n, &[(0, 2), (2, 0)])));
    assert_eq!(p.value_of("ppo", &cand).unwrap(), Some(rel(n, &[(0, 2)])));
    assert_eq!(p.value_of("rf", &cand).unwrap(), Some(rel(n, &[(2, 0)])));
    assert_eq!(p.value_of("nope", &cand).unwrap(), None);
    // A missing dynamic value is an error naming it, not a panic.
    let e = p.evaluate(&MapEnv::new(n), false).unwrap_err();
    assert_eq!(e.to_string(), "t.cat:2:16: the engine did not provide `rf` for this candidate");
    // Universe mismatches are caught.
    assert!(p.evaluate(&MapEnv::new(n + 1), false).is_err());
}

#[test]
fn new_relation_declares_an_engine_name() {
    let m = model("let sync_fence = newRelation()\nlet S = newSet()\nacyclic sync_fence ; [S]");
    assert_eq!(m.free_names(), ["S", "sync_fence"].iter().map(|s| s.to_string()).collect());
    let env = MapEnv::new(2).with("sync_fence", rel(2, &[(0, 0)])).with("S", set(2, &[0]));
    assert!(!m.prepare(&env, &[]).unwrap().evaluate(&env, false).unwrap().consistent());
    let err = CatModel::from_source(SourceFile::new("t.cat", "let x = po | newSet()"), &[]).unwrap_err();
    assert!(err.one_line().starts_with("t.cat:1:14: error: `newSet()`"), "{}", err.one_line());
}

#[test]
fn model_and_prepared_are_thread_safe() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<CatModel>();
    assert_send_sync::<Prepared<'static>>();
    assert_send_sync::<Evaluation>();
}

/// A fresh scratch directory for one test.
fn scratch_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ptxmm-cat-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn includes_resolve_relative_then_in_include_dirs() {
    let dir = scratch_dir("inc");
    let libdir = dir.join("lib");
    std::fs::create_dir_all(&libdir).unwrap();
    std::fs::write(dir.join("main.cat"), "Main\ninclude \"local.cat\"\ninclude \"shared.cat\"\nacyclic x | y as ax\n").unwrap();
    std::fs::write(dir.join("local.cat"), "(* local *)\nlet x = po\n").unwrap();
    std::fs::write(libdir.join("shared.cat"), "Shared\nlet y = po^-1 ; po\nlet bad = W ; po\n").unwrap();
    let m = CatModel::load(&dir.join("main.cat"), std::slice::from_ref(&libdir)).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(m.title(), "Main");
    let checks = m.checks();
    assert_eq!(checks[0].name, "ax");
    assert_eq!(checks[0].depends_on, ["po".to_string()].into_iter().collect());
    assert!(checks[0].file.name().ends_with("main.cat"));
    assert_eq!(checks[0].file.line_col(checks[0].span.start), (4, 1));
    // A runtime error inside an included file points into that file.
    let env = MapEnv::new(2).with("po", rel(2, &[(0, 1)])).with("W", set(2, &[0]));
    let e = m.prepare(&env, &[]).unwrap_err();
    assert!(e.file.as_ref().unwrap().name().ends_with("shared.cat"));
    assert!(e.to_string().ends_with("shared.cat:3:11: expected a relation, found a set; write [S] for the identity on S"), "{e}");
    // Without the include dir the second include is not found; the error points at it.
    let err = CatModel::load(&dir.join("main.cat"), &[]).unwrap_err();
    assert!(err.one_line().ends_with("main.cat:3:1: error: cannot find included file \"shared.cat\""), "{}", err.one_line());
    // Include cycles are rejected.
    std::fs::write(dir.join("a.cat"), "include \"b.cat\"\n").unwrap();
    std::fs::write(dir.join("b.cat"), "\ninclude \"a.cat\"\n").unwrap();
    let err = CatModel::load(&dir.join("a.cat"), &[]).unwrap_err();
    assert!(err.one_line().ends_with("b.cat:2:1: error: \"a.cat\" includes itself (include cycle)"), "{}", err.one_line());
    let _ = std::fs::remove_dir_all(&dir);
}

fn names(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn peer_model(file: &str) -> Option<CatModel> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/peers/dat3m/cat").join(file);
    if !path.exists() {
        eprintln!("skipping: {} not found", path.display());
        return None;
    }
    Some(CatModel::load(&path, &[]).unwrap_or_else(|d| panic!("{}", d.render(false))))
}

const ALLOWED_FREE: &[&str] = &[
    "po",
    "rf",
    "co",
    "rmw",
    "loc",
    "vloc",
    "addr",
    "data",
    "ctrl",
    "id",
    "int",
    "ext",
    "sr",
    "scta",
    "syncbar",
    "sync_fence",
    "po-loc",
    "W",
    "R",
    "M",
    "F",
    "RLX",
    "ACQ",
    "REL",
    "ACQ_REL",
    "SC",
    "GEN",
    "SUR",
    "TEX",
    "CON",
    "ALIAS",
    "CTA",
    "GPU",
    "SYS",
    "_",
    "IW",
];

#[test]
fn dat3m_ptx_models_load() {
    for (file, axioms) in [
        (
            "ptx-v6.0.cat",
            &[
                "axiom-Coherence",
                "axiom-Coherence2",
                "axiom-FenceSC",
                "axiom-Atomicity",
                "axiom-NoThinAir",
                "axiom-ScPerLocation",
                "axiom-Causality",
            ][..],
        ),
        (
            "ptx-v7.5.cat",
            &["axiom-Coherence", "axiom-Coherence2", "axiom-FenceSC", "axiom-Atomicity", "axiom-NoThinAir", "axiom-Causality"][..],
        ),
    ] {
        let Some(m) = peer_model(file) else { continue };
        assert_eq!(m.title(), "PTX");
        let got: Vec<String> = m.checks().into_iter().map(|c| c.name).collect();
        assert_eq!(got, axioms, "{file}");
        let free = m.free_names();
        assert!(free.is_subset(&names(ALLOWED_FREE)), "{file}: {free:?}");
        assert!(m.checks().iter().all(|c| c.flag.is_none() && !c.negated));
    }
}

/// Message passing on PTX v6.0: `st.relaxed x; st.release flag || ld.acquire flag; ld.relaxed x`
/// plus initial writes. Reading the stale `x` after synchronising violates causality.
#[test]
fn ptx_v6_forbids_message_passing_violation() {
    let Some(m) = peer_model("ptx-v6.0.cat") else {
        return;
    };
    // e0: W x RLX (T0)   e1: W flag REL (T0)   e2: R flag ACQ (T1)   e3: R x RLX (T1)
    // e4: init W x       e5: init W flag
    let n = 6;
    let xs = [0, 3, 4];
    let loc = Relation::from_fn(n, |a, b| xs.contains(&a) == xs.contains(&b));
    let po = Relation::from_pairs(n, [(0, 1), (2, 3)]);
    let empty = Value::Rel(Relation::empty(n));
    let statics = MapEnv::new(n)
        .with("po", Value::Rel(po.clone()))
        .with("loc", Value::Rel(loc.clone()))
        .with("po-loc", Value::Rel(po.intersection(&loc)))
        .with("id", Value::Rel(Relation::identity(n)))
        .with("sr", Value::Rel(Relation::from_fn(n, |_, _| true)))
        .with("scta", Value::Rel(Relation::from_fn(n, |_, _| true)))
        .with("W", set(n, &[0, 1, 4, 5]))
        .with("R", set(n, &[2, 3]))
        .with("M", set(n, &[0, 1, 2, 3, 4, 5]))
        .with("F", set(n, &[]))
        .with("RLX", set(n, &[0, 3]))
        .with("REL", set(n, &[1]))
        .with("ACQ", set(n, &[2]))
        .with("ACQ_REL", set(n, &[]))
        .with("SC", set(n, &[]))
        .with("syncbar", empty.clone())
        .with("sync_fence", empty.clone())
        .with("rmw", empty.clone())
        .with("addr", empty.clone())
        .with("data", empty.clone())
        .with("ctrl", empty.clone());
    let p = m.prepare(&statics, &["rf", "co"]).unwrap_or_else(|e| panic!("{e}"));
    let co = rel(n, &[(4, 0), (5, 1)]);
    let weak = MapEnv::new(n).with("rf", rel(n, &[(1, 2), (4, 3)])).with("co", co.clone());
    let e = p.evaluate(&weak, false).unwrap();
    let failed: Vec<&str> = e.failed().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(failed, ["axiom-Causality"]);
    let cause = as_rel(p.value_of("cause", &weak).unwrap());
    assert!(cause.contains(0, 3));
    let ok = MapEnv::new(n).with("rf", rel(n, &[(1, 2), (0, 3)])).with("co", co);
    assert!(p.evaluate(&ok, false).unwrap().consistent());
}

#[test]
fn static_subexpressions_are_hoisted_out_of_candidates() {
    let n = 4;
    let statics = MapEnv::new(n).with("po", rel(n, &[(0, 1), (1, 2), (2, 3)])).with("W", set(n, &[0, 2, 3]));
    // `[W]`, `po+` and `([W] ; po ; [W])` are static, `rf` is not.
    let m = model(
        "let x = rf ; ([W] ; po ; [W])\n\
         let y = [W] ; rf ; po+\n\
         acyclic x | y | (rf & (W * W)) as ax",
    );
    let p = m.prepare(&statics, &["rf"]).unwrap();
    // `[W];po;[W]`, `po+` and `W * W`: three constants. `[W] ; rf` keeps the rows of `rf` of
    // the events of `W`, read from the static layer: no constant.
    assert_eq!(p.hoisted_constants(), 3);
    // [W];po;[W] = {(2,3)};  [W];rf = {(3,0)};  po+ from 0 = {1,2,3};  rf & (W*W) = {(3,0)}.
    let cand = MapEnv::new(n).with("rf", rel(n, &[(1, 2), (3, 0)]));
    assert_eq!(p.value_of("x", &cand).unwrap(), Some(rel(n, &[(1, 3)])));
    assert_eq!(p.value_of("y", &cand).unwrap(), Some(rel(n, &[(3, 1), (3, 2), (3, 3)])));
    let e = p.evaluate(&cand, false).unwrap();
    assert!(!e.consistent());
    assert_eq!(e.checks[0].relation, Relation::from_pairs(n, [(1, 3), (3, 1), (3, 2), (3, 3), (3, 0)]));
}

#[test]
fn deep_expressions_are_rejected_not_overflowing() {
    // Every nesting shape, driven to the deepest input the parser accepts, must load, evaluate
    // and drop within a 2 MiB stack (the default for spawned threads), even in debug builds.
    // Deeper input must be a diagnostic, never a stack overflow (which would abort).
    let shapes: [(&str, &str, &str); 7] = [
        ("(", "a", ")"),
        ("(a | ", "a", ")"),
        ("~", "a", ""),
        ("[range(", "a", ")]"),
        ("domain([", "A", "])"),
        ("f(", "a", ")"),
        ("a | ", "a", ""),
    ];
    let worker = std::thread::Builder::new().stack_size(2 << 20);
    let handle = worker
        .spawn(move || {
            let env = MapEnv::new(2).with("a", rel(2, &[(0, 1)])).with("A", set(2, &[0]));
            for (open, atom, close) in shapes {
                let src = |d: usize| format!("let f(x) = x\nlet y = {}{atom}{}\nempty y", open.repeat(d), close.repeat(d));
                let load = |d: usize| CatModel::from_source(SourceFile::new("t.cat", src(d)), &[]);
                let deepest = (1..2000).take_while(|&d| load(d).is_ok()).last().unwrap();
                assert!(deepest >= 60, "{open}: only {deepest} levels accepted");
                let m = load(deepest).unwrap();
                let p = m.prepare(&env, &[]).unwrap();
                p.evaluate(&env, false).unwrap();
                let err = load(deepest + 1).unwrap_err();
                assert!(err.one_line().contains("nested too deeply"), "{}", err.one_line());
            }
            let err = load_str(&format!("let x = {}a", "(".repeat(100_000)));
            assert!(err.contains("nested too deeply"), "{err}");
        })
        .unwrap();
    handle.join().unwrap();
}

fn load_str(src: &str) -> String {
    match CatModel::from_source(SourceFile::new("t.cat", src), &[]) {
        Ok(_) => "ok".into(),
        Err(e) => e.one_line(),
    }
}

/// The polarity in `a` (and in `b`) of the expression of the last check of `src`.
fn polarity_of(src: &str, name: &str) -> Polarity {
    let m = model(src);
    m.expression_polarity(m.checks().len() - 1, name)
}

#[test]
fn polarity_of_each_operator() {
    use Polarity::*;
    // `a`, `b` relations and `A`, `B` sets, all read from the environment.
    let cases: &[(&str, Polarity, Polarity)] = &[
        ("a", Increasing, Independent),
        ("b", Independent, Increasing),
        ("0", Independent, Independent),
        ("_ * _", Independent, Independent),
        ("a | b", Increasing, Increasing),
        ("a & b", Increasing, Increasing),
        ("a ; b", Increasing, Increasing),
        ("domain(a) * B", Increasing, Independent),
        ("A * range(a)", Increasing, Independent),
        ("a+", Increasing, Independent),
        ("a*", Increasing, Independent),
        ("a?", Increasing, Independent),
        ("a^-1", Increasing, Independent),
        ("[domain(a)]", Increasing, Independent),
        ("a \\ b", Increasing, Decreasing),
        ("b \\ a", Decreasing, Increasing),
        ("~a", Decreasing, Independent),
        ("~(b \\ a)", Increasing, Decreasing),
        ("(b \\ a) ; (b \\ a)^-1", Decreasing, Increasing),
        ("(b \\ a)+ & (A * B)", Decreasing, Increasing),
        ("a | ~a", Mixed, Independent),
        // Syntactic: constant in fact, but both occurrences are seen.
        ("a \\ a", Mixed, Independent),
        ("(a \\ b) | (b \\ a)", Mixed, Mixed),
        ("(a | ~a) ; 0", Mixed, Independent),
    ];
    for &(e, in_a, in_b) in cases {
        let src = format!("empty {e}");
        assert_eq!(polarity_of(&src, "a"), in_a, "{e} in a");
        assert_eq!(polarity_of(&src, "b"), in_b, "{e} in b");
        assert_eq!(polarity_of(&src, "nowhere"), Independent, "{e}");
    }
}

#[test]
fn polarity_follows_definitions_recursion_and_calls() {
    use Polarity::*;
    // Definitions, transitively.
    let defs = "let x = b \\ a\nlet y = x ; b\nempty y";
    assert_eq!(polarity_of(defs, "a"), Decreasing);
    assert_eq!(polarity_of(defs, "b"), Increasing);
    // `let rec`: the fixpoint of the abstraction.
    assert_eq!(polarity_of("let rec t = a | (t ; b)\nacyclic t", "a"), Increasing);
    assert_eq!(polarity_of("let rec t = a | (t ; b)\nacyclic t", "b"), Increasing);
    assert_eq!(polarity_of("let rec t = (b \\ a) | (t ; t)\nacyclic t", "a"), Decreasing);
    assert_eq!(polarity_of("let rec t = b | (t ; t)\nacyclic t", "a"), Independent);
    // Mutual recursion: `even` sees `odd` (increasing) through `b \ a` (decreasing).
    let mutual = "let rec odd = a | (even ; b) and even = odd ; (b \\ a)\nacyclic odd";
    assert_eq!(polarity_of(mutual, "a"), Mixed);
    assert_eq!(polarity_of(mutual, "b"), Increasing);
    // Calls are their inlined bodies; arguments take the parameters' places.
    let call = "let f(x, y) = x \\ y\nempty f(b, a)";
    assert_eq!(polarity_of(call, "a"), Decreasing);
    assert_eq!(polarity_of(call, "b"), Increasing);
    assert_eq!(polarity_of("let f(x) = ~x\nlet g(x) = f(f(x))\nempty g(a)", "a"), Increasing);
}

#[test]
fn check_monotonicity_from_polarity() {
    use Monotonicity::*;
    let m = model(
        "acyclic a as acy\n\
         irreflexive a ; b as irr\n\
         empty a as emp\n\
         empty (b \\ a) as emp-diff\n\
         ~empty a as nonempty\n\
         ~empty (b \\ a) as nonempty-diff\n\
         acyclic (a | ~a) as mixed\n\
         empty b as other\n\
         flag ~empty (a & b) as race",
    );
    let got: Vec<(String, Monotonicity)> = m.checks().into_iter().map(|c| (c.name.clone(), c.monotonicity("a"))).collect();
    let want = [
        ("acy", Antitone),
        ("irr", Antitone),
        ("emp", Antitone),
        ("emp-diff", Monotone),
        ("nonempty", Monotone),
        ("nonempty-diff", Antitone),
        ("mixed", Unknown),
        ("other", Independent),
        // Flags are described by their condition, not by whether they fire.
        ("race", Monotone),
    ];
    assert_eq!(got, want.map(|(n, m)| (n.to_string(), m)));
    let infos = m.checks();
    assert_eq!(infos[3].polarity, [("a".to_string(), Polarity::Decreasing), ("b".to_string(), Polarity::Increasing)].into());
    assert_eq!(infos[7].polarity, [("b".to_string(), Polarity::Increasing)].into());
    assert_eq!(infos[0].monotonicity("not-a-name"), Independent);
}

#[test]
fn polarity_of_a_shadowed_base_name() {
    use Monotonicity::*;
    // The environment name "co" is the engine's; later uses of `co` are the definition.
    let m = model(
        "let co = co+\n\
         let fr = rf^-1 ; co\n\
         empty (([W] ; X ; [W]) \\ co) as coherence\n\
         irreflexive (rf^-1 ; co ; X) as causality\n\
         acyclic fr as fr-acyclic",
    );
    let infos = m.checks();
    assert_eq!(m.expression_polarity(0, "co"), Polarity::Decreasing);
    assert_eq!(infos[0].monotonicity("co"), Monotone);
    assert_eq!(m.expression_polarity(1, "co"), Polarity::Increasing);
    assert_eq!(infos[1].monotonicity("co"), Antitone);
    assert_eq!(infos[1].monotonicity("rf"), Antitone);
    assert_eq!(infos[2].monotonicity("co"), Antitone);
    assert_eq!(infos[0].monotonicity("rf"), Independent);
    // A shadowing definition that reverses the direction is followed too.
    let m = model("let co = ~co\nacyclic co as flipped\nacyclic co & po as flipped-again");
    assert_eq!(m.checks()[0].monotonicity("co"), Monotone);
    assert_eq!(m.checks()[1].monotonicity("co"), Monotone);
    assert_eq!(m.checks()[1].monotonicity("po"), Antitone);
    // A definition shadowing a name the environment never provides depends on nothing.
    let m = model("let co = po\nacyclic co");
    assert_eq!(m.expression_polarity(0, "co"), Polarity::Independent);
    assert_eq!(m.checks()[0].monotonicity("po"), Antitone);
}

/// Asserts the monotonicity in `co` of every check of `m`, by name.
fn assert_co_monotonicity(m: &CatModel, file: &str, want: &[(&str, Monotonicity)]) {
    let got: Vec<(String, Monotonicity)> = m.checks().into_iter().map(|c| (c.name.clone(), c.monotonicity("co"))).collect();
    let want: Vec<(String, Monotonicity)> = want.iter().map(|&(n, m)| (n.to_string(), m)).collect();
    assert_eq!(got, want, "{file}");
    for (i, c) in m.checks().iter().enumerate() {
        assert_eq!(Monotonicity::of_check(m.expression_polarity(i, "co"), c.negated), c.monotonicity("co"), "{file}: {}", c.name);
    }
}

#[test]
fn ptx_models_co_monotonicity() {
    use Monotonicity::*;
    if let Some(m) = peer_model("ptx-v6.0.cat") {
        let want = [
            ("axiom-Coherence", Monotone),
            ("axiom-Coherence2", Monotone),
            ("axiom-FenceSC", Independent),
            ("axiom-Atomicity", Antitone),
            ("axiom-NoThinAir", Independent),
            ("axiom-ScPerLocation", Antitone),
            ("axiom-Causality", Antitone),
        ];
        assert_co_monotonicity(&m, "dat3m ptx-v6.0.cat", &want);
    }
    if let Some(m) = peer_model("ptx-v7.5.cat") {
        let want = [
            ("axiom-Coherence", Monotone),
            ("axiom-Coherence2", Monotone),
            ("axiom-FenceSC", Independent),
            ("axiom-Atomicity", Antitone),
            ("axiom-NoThinAir", Independent),
            ("axiom-Causality", Antitone),
        ];
        assert_co_monotonicity(&m, "dat3m ptx-v7.5.cat", &want);
    }
    let ours = |file: &str| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("models").join(file);
        if !path.exists() {
            eprintln!("skipping: {} not found", path.display());
            return None;
        }
        Some(CatModel::load(&path, &[]).unwrap_or_else(|d| panic!("{}", d.render(false))))
    };
    if let Some(m) = ours("ptx-6.0.cat") {
        let want = [
            ("Coherence", Monotone),
            ("Coherence-MoralStrength", Monotone),
            ("FenceSC", Independent),
            ("Atomicity", Antitone),
            ("NoThinAir", Independent),
            ("SC-per-Location", Antitone),
            ("Causality", Antitone),
        ];
        assert_co_monotonicity(&m, "models/ptx-6.0.cat", &want);
    }
    if let Some(m) = ours("ptx-7.5.cat") {
        let want = [
            ("Coherence", Monotone),
            ("Coherence-MoralStrength", Monotone),
            ("FenceSC", Independent),
            ("Atomicity", Antitone),
            ("NoThinAir", Independent),
            ("Causality", Antitone),
        ];
        assert_co_monotonicity(&m, "models/ptx-7.5.cat", &want);
    }
}

#[test]
fn check_subset_evaluates_only_the_listed_checks() {
    let n = 3;
    let statics = MapEnv::new(n).with("po", rel(n, &[(0, 1), (1, 0)]));
    let m = model(
        "acyclic co as co-ok\n\
         empty ghost as needs-ghost\n\
         acyclic po as static-fails\n\
         flag ~empty co as co-flag\n\
         irreflexive co ; co^-1 as co-fails",
    );
    let p = m.prepare(&statics, &["co", "ghost"]).unwrap();
    // The candidate cannot supply `ghost`: only checks that need it may ask for it.
    let cand = || Counting { inner: MapEnv::new(n).with("co", rel(n, &[(0, 1)])), log: RefCell::new(Vec::new()) };
    let c = cand();
    assert!(p.check_subset(&c, &[0]).unwrap());
    assert_eq!(*c.log.borrow(), ["co"]);
    // A static check is decided at preparation: nothing is looked up.
    let c = cand();
    assert!(!p.check_subset(&c, &[2]).unwrap());
    assert!(p.check_subset(&c, &[]).unwrap());
    assert!(c.log.borrow().is_empty());
    // The flag fires (co is not empty) but does not take part in consistency.
    assert!(p.check_subset(&c, &[3]).unwrap());
    assert!(!p.check_subset(&c, &[0, 3, 4]).unwrap());
    assert_eq!(*c.log.borrow(), ["co"], "fetched once per call, only for the checks evaluated");
    // Asking for the ghost check looks `ghost` up, and reports it missing.
    let c = cand();
    let e = p.check_subset(&c, &[0, 1]).unwrap_err();
    assert!(e.message.contains("did not provide `ghost`"), "{e}");
    assert_eq!(*c.log.borrow(), ["co", "ghost"]);
    // Stops at the first failure: the ghost check after it is never reached.
    let c = cand();
    assert!(!p.check_subset(&c, &[4, 1]).unwrap());
    assert_eq!(*c.log.borrow(), ["co"]);
    // Indices are validated before anything is evaluated.
    let c = cand();
    let e = p.check_subset(&c, &[0, 5]).unwrap_err();
    assert_eq!(e.message, "no check with index 5: the model has 5 checks");
    assert!(c.log.borrow().is_empty());
    // Agrees with `evaluate` on the checks it evaluates.
    let full = MapEnv::new(n).with("co", rel(n, &[(0, 1), (1, 0)])).with("ghost", rel(n, &[]));
    let e = p.evaluate(&full, false).unwrap();
    for i in 0..5 {
        assert_eq!(p.check_subset(&full, &[i]).unwrap(), e.checks[i].flag.is_some() || e.checks[i].holds, "check {i}");
    }
}

#[test]
fn a_stage_evaluates_its_units_once_and_fetches_its_names_once() {
    let n = 4;
    let statics = MapEnv::new(n).with("po", rel(n, &[(0, 1), (2, 3)])).with("W", set(n, &[0, 3]));
    let m = model(
        "let hb = (po | rf)+\n\
         let cause = hb ; [W]\n\
         acyclic hb as uses-rf\n\
         irreflexive cause ; co as uses-co\n\
         empty co & cause^-1 as also-co",
    );
    let p = m.prepare(&statics, &["rf", "co"]).unwrap();
    let rf = rel(n, &[(1, 2)]);
    let stage = p.stage(&MapEnv::new(n).with("rf", rf.clone()), &["rf"]).unwrap();
    assert_eq!(stage.staged_units(), 2, "hb and cause");
    assert_eq!(p.stage(&MapEnv::new(n), &[]).unwrap().staged_units(), 0);
    assert_eq!(p.stage(&MapEnv::new(n), &["co", "nonsense"]).unwrap().staged_units(), 0);
    let counting = |co: Value| Counting { inner: MapEnv::new(n).with("rf", rf.clone()).with("co", co), log: RefCell::new(Vec::new()) };
    let first = counting(rel(n, &[(3, 0)]));
    let e = p.evaluate_on(&stage, &first, false).unwrap();
    assert_eq!(e, p.evaluate(&first, false).unwrap());
    // hb = po | rf closed: 0 → 1 → 2 → 3; cause = its pairs into W = {(0,3), (1,3), (2,3)}.
    assert_eq!(e.checks.iter().map(|c| c.holds).collect::<Vec<_>>(), [true, false, false]);
    first.log.borrow_mut().clear();
    p.evaluate_on(&stage, &first, false).unwrap();
    assert_eq!(*first.log.borrow(), ["co"], "rf comes from the stage");
    // Another coherence choice: only co is fetched, and the staged cause is reused.
    let second = counting(rel(n, &[(0, 3)]));
    assert!(p.check_subset_on(&stage, &second, &[0, 1, 2]).unwrap());
    assert_eq!(*second.log.borrow(), ["co"]);
    assert_eq!(p.first_failure_on(&stage, &second, &[1]).unwrap(), None);
    let failure = p.first_failure_on(&stage, &first, &[0, 1, 2]).unwrap().unwrap();
    assert_eq!((failure.index, failure.name.as_str(), failure.holds), (1, "uses-co", false));
    assert_eq!(failure.relation, Relation::from_pairs(n, [(0, 0), (1, 0), (2, 0)]));
    // A stage belongs to its preparation.
    let other = m.prepare(&statics, &["rf", "co"]).unwrap();
    let e = other.evaluate_on(&stage, &first, false).unwrap_err();
    assert!(e.message.contains("another preparation"), "{e}");
    // Indices are validated before anything is evaluated; universes are checked.
    assert!(p.first_failure_on(&stage, &first, &[3]).unwrap_err().message.contains("no check with index 3"));
    assert!(p.stage(&MapEnv::new(n + 1), &["rf"]).is_err());
    assert!(p.check_subset_on(&stage, &MapEnv::new(n + 1), &[0]).is_err());
}

#[test]
fn stage_is_thread_safe() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Stage>();
}

/// Known-empty expressions are decided from types found at preparation assuming that dynamic
/// names are relations; a candidate that gives a set instead gets the error full evaluation
/// gives, with or without a stage.
#[test]
fn known_empty_expressions_follow_the_candidate_types() {
    let n = 3;
    let statics = MapEnv::new(n).with("none", rel(n, &[])).with("W", set(n, &[0]));
    let m = model("let x = none ; d\nlet y = (d ; [W]) & none\nempty x as a\nempty y | (none \\ d) as b");
    let p = m.prepare(&statics, &["d"]).unwrap();
    let as_rel = MapEnv::new(n).with("d", rel(n, &[(0, 1)]));
    assert!(p.evaluate(&as_rel, false).unwrap().consistent());
    let as_set = MapEnv::new(n).with("d", set(n, &[1]));
    let expected = "t.cat:1:16: expected a relation, found a set; write [S] for the identity on S";
    assert_eq!(p.evaluate(&as_set, false).unwrap_err().to_string(), expected);
    assert_eq!(
        p.check_subset(&as_set, &[1]).unwrap_err().to_string(),
        "t.cat:2:10: expected a relation, found a set; write [S] for the identity on S"
    );
    let stage = p.stage(&as_set, &["d"]).unwrap();
    assert_eq!(p.evaluate_on(&stage, &as_set, false).unwrap_err().to_string(), expected);
    // `none \ d` with a set `d` is a type error of its own.
    let m = model("empty none \\ d as c");
    let p = m.prepare(&statics, &["d"]).unwrap();
    assert!(p.evaluate(&as_rel, false).unwrap().consistent());
    assert_eq!(
        p.evaluate(&as_set, false).unwrap_err().to_string(),
        "t.cat:1:7: `\\` needs two sets or two relations, found a relation and a set"
    );
}

/// `a \\ (t1 | … | c^-1 | …)` removes converses pair by pair, with the errors of evaluating the
/// union and then the difference, in order.
#[test]
fn differences_from_converses_keep_their_errors() {
    let n = 3;
    let env = MapEnv::new(n).with("r", rel(n, &[(0, 1), (1, 0)])).with("p", rel(n, &[(1, 0)])).with("S", set(n, &[1]));
    let cases = [
        ("empty r \\ (p | S^-1)", "t.cat:1:16: expected a relation, found a set; write [S] for the identity on S"),
        ("empty r \\ (p | S | p^-1)", "t.cat:1:12: `|` needs two sets or two relations, found a relation and a set"),
        ("empty r \\ (0 | S | p^-1)", "t.cat:1:11: `|` needs two sets or two relations, found a set and a relation"),
        ("empty S \\ p^-1", "t.cat:1:7: `\\` needs two sets or two relations, found a set and a relation"),
        ("empty S \\ (S | p^-1)", "t.cat:1:11: `|` needs two sets or two relations, found a set and a relation"),
    ];
    for (src, expected) in cases {
        let m = model(src);
        // Static, and dynamic (every name given per candidate).
        assert_eq!(m.prepare(&env, &[]).unwrap_err().to_string(), expected, "static {src}");
        let p = m.prepare(&MapEnv::new(n), &["r", "p", "S"]).unwrap();
        assert_eq!(p.evaluate(&env, false).unwrap_err().to_string(), expected, "dynamic {src}");
    }
    // Without errors: `r \\ (p | p^-1)` removes both directions.
    let m = model("let d = r \\ (0 | p^-1)\nlet e = r \\ (p | p^-1)");
    let p = m.prepare(&MapEnv::new(n).with("S", set(n, &[1])), &["r", "p"]).unwrap();
    assert_eq!(p.value_of("d", &env).unwrap(), Some(rel(n, &[(1, 0)])));
    assert_eq!(p.value_of("e", &env).unwrap(), Some(rel(n, &[])));
}

/// An environment name that only static definitions read (`po` here) is not kept by the
/// preparation: its value is asked of the candidate's environment when an explanation wants it.
#[test]
fn environment_names_read_only_by_static_definitions_are_asked_again() {
    let n = 3;
    let po = rel(n, &[(0, 1), (1, 2), (0, 2)]);
    let w = set(n, &[1]);
    let m = model("let ppo = po ; [W]\nacyclic ppo | rf as order\n");
    let statics = MapEnv::new(n).with("po", po.clone()).with("W", w.clone());
    let p = m.prepare(&statics, &["rf"]).unwrap();
    let cand = MapEnv::new(n).with("rf", rel(n, &[(1, 0)])).with("po", po.clone()).with("W", w);
    assert!(!p.evaluate(&cand, false).unwrap().consistent(), "0 po 1 rf 0 is a cycle");
    assert_eq!(p.value_of("ppo", &cand).unwrap(), Some(rel(n, &[(0, 1)])));
    assert_eq!(p.value_of("po", &cand).unwrap(), Some(po));
    assert_eq!(p.value_of("W", &cand).unwrap(), Some(set(n, &[1])));
}

#[test]
fn read_compositions_are_found_in_either_order_and_through_definitions() {
    let m = model(
        "\"t\"\nlet fr = rf^-1 ; co\nlet cause = po | rf\nlet after = po\n\
         irreflexive ((rf | fr) ; cause) as A\n\
         irreflexive (after ; rf) as B\n\
         irreflexive (rf ; po) as C\n\
         irreflexive (co ; after) as D\n\
         irreflexive ((fr | rf) ; (cause | po)) as E\n",
    );
    let checks = m.checks();
    let rc = |name: &str| checks.iter().find(|c| c.name == name).unwrap().read_composition.clone();
    let a = rc("A").expect("(rf | fr) ; cause");
    assert!(a.rf && a.fr);
    assert_eq!(a.after_name, "cause");
    assert_eq!(a.after_polarity.get("rf"), Some(&Polarity::Increasing));
    let b = rc("B").expect("after ; rf is the cycle rf ; after");
    assert!(b.rf && !b.fr);
    assert_eq!(b.after_name, "after");
    assert!(rc("C").is_none(), "po is no definition");
    assert!(rc("D").is_none(), "neither rf nor from-read");
    assert!(rc("E").is_none(), "a union is no definition");
}
