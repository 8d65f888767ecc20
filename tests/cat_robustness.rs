//! Regression tests for cat files that blew up (issue 25, class 1 and the cat parts of classes
//! 4, 6, 7 and 8): each loads in well under a second and little memory, or stops with a message
//! that names the limit. The inputs are generated here, in the shapes that were found.

use ptxmm::cat::CatModel;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A fresh scratch folder for one test.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ptxmm-cat-robust-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Loads `text` as a model file in its own folder; the result and how long loading took.
fn load(name: &str, text: &str) -> (Result<CatModel, String>, Duration) {
    let dir = scratch_dir(name);
    let path = dir.join(format!("{name}.cat"));
    std::fs::write(&path, text).unwrap();
    timed_load(&path)
}

fn timed_load(path: &Path) -> (Result<CatModel, String>, Duration) {
    let start = Instant::now();
    let result = CatModel::load(path, &[]).map_err(|d| d.to_string());
    (result, start.elapsed())
}

/// Each of these inputs loads in a few seconds in a debug build (docs/robustness.md has the
/// figures); the bound is loose so that a loaded machine does not fail the test, while a
/// blow-up (minutes, gigabytes) still does.
fn assert_fast(d: Duration) {
    assert!(d < Duration::from_secs(30), "took {d:?}");
}

/// 28 (and 4,000) lets each naming the previous one twice: the acyclic-union analysis walked
/// every path (1.1 GB then an abort at 28; 24 GB at 4,000).
#[test]
fn lets_naming_the_previous_one_twice() {
    for n in [28, 4_000] {
        let lets: String = (1..=n).map(|i| format!("let x{i} = x{} | x{}\n", i - 1, i - 1)).collect();
        let (model, took) = load(&format!("lets{n}"), &format!("let x0 = po\n{lets}acyclic x{n}\n"));
        assert_fast(took);
        let checks = model.unwrap().checks();
        assert_eq!(checks[0].acyclic_union.as_deref(), Some(&["po".to_string()][..]));
    }
}

/// `f(f(...f(po)))` 32 deep with `f(x) = x | x`: an argument used twice was copied (4 GB).
#[test]
fn nested_calls_share_their_arguments() {
    let text = format!("let f(x) = x | x\nacyclic {}po{}\n", "f(".repeat(32), ")".repeat(32));
    let (model, took) = load("fnest", &text);
    assert_fast(took);
    let union = model.unwrap().checks()[0].acyclic_union.clone().unwrap();
    assert!(!union.is_empty() && union.iter().all(|n| n == "po"), "{union:?}");
}

/// Functions applying functions, 7 lines (4 GB): each call expands its callee once.
#[test]
fn functions_of_functions_expand_per_call() {
    let text = "let f(x) = x | x\nlet g(x) = f(f(f(f(x))))\nlet h(x) = g(g(g(g(x))))\nlet k(x) = h(h(h(h(x))))\n\
                let m(x) = k(k(k(k(x))))\nlet r = m(po)\nacyclic r\n";
    let (model, took) = load("fapps", text);
    assert_fast(took);
    model.unwrap();
    // Ten more levels would be 4^14 calls: stopped by a budget, named (the expansion's, or
    // that of the dependency sets of the definitions the calls bind their arguments to).
    let mut text = String::from("let f0(x) = x | x\n");
    for i in 1..=14 {
        text += &format!("let f{i}(x) = f{p}(f{p}(f{p}(f{p}(x))))\n", p = i - 1);
    }
    text += "acyclic f14(po)\n";
    let (model, took) = load("fapps14", &text);
    assert_fast(took);
    let Err(err) = model else { panic!("over the budget") };
    let named = err.contains("function calls expand to more than") || err.contains("transitive dependencies exceed");
    assert!(named && err.contains("internal limit"), "{err}");
}

/// 6,000 procedures, each capturing the scope it is defined in (copied: quadratic).
#[test]
fn many_procedures_share_their_scopes() {
    let procs: String = (0..6_000).map(|i| format!("procedure p{i}(x) = acyclic x | a end\nlet b{i} = a\n")).collect();
    let (model, took) = load("procs", &format!("let a = po\n{procs}call p5999(po)\ncall p0(po)\n"));
    assert_fast(took);
    assert_eq!(model.unwrap().checks().len(), 2);
}

/// 42 files each including the next one twice: only the depth was capped.
#[test]
fn include_fan_out_is_bounded() {
    let dir = scratch_dir("fanout");
    for i in 0..42 {
        let inc = if i < 41 { format!("include \"f{n}.cat\"\ninclude \"f{n}.cat\"\n", n = i + 1) } else { String::new() };
        std::fs::write(dir.join(format!("f{i}.cat")), format!("{inc}let y{i} = po\n")).unwrap();
    }
    std::fs::write(dir.join("root.cat"), "include \"f0.cat\"\nacyclic po\n").unwrap();
    let (model, took) = timed_load(&dir.join("root.cat"));
    assert_fast(took);
    let Err(err) = model else { panic!("over the budget") };
    assert!(err.contains("more than 1000 includes"), "{err}");
}

/// Includes only from the model's folder and the include folders, and never an echo of what
/// a file outside holds.
#[test]
fn includes_are_confined() {
    let outside = scratch_dir("outside");
    std::fs::write(outside.join("secret.cat"), "SECRET CONTENTS\n").unwrap();
    for include in [outside.join("secret.cat").display().to_string(), "../outside/secret.cat".into()] {
        let dir = scratch_dir("confined");
        let dir_name = dir.file_name().unwrap().to_str().unwrap().to_string();
        let include = include.replace("../outside", &format!("../{}", dir_name.replace("confined", "outside")));
        let (model, _) = load("confined", &format!("include \"{include}\"\nacyclic po\n"));
        let Err(err) = model else { panic!("refused") };
        assert!(err.contains("outside the model's folder") && err.contains("-I DIR"), "{err}");
        assert!(!err.contains("SECRET"), "{err}");
    }
    // Named with -I, the folder is allowed.
    let dir = scratch_dir("allowed");
    std::fs::write(outside.join("lib.cat"), "let lib = po\n").unwrap();
    std::fs::write(dir.join("m.cat"), "include \"lib.cat\"\nacyclic lib\n").unwrap();
    CatModel::load(&dir.join("m.cat"), std::slice::from_ref(&outside)).unwrap();
}

/// A FIFO would block the reader forever; a file over 1 MiB is refused before it is read.
#[test]
fn only_regular_files_of_bounded_size() {
    let dir = scratch_dir("files");
    let big = dir.join("big.cat");
    std::fs::write(&big, format!("(* {} *)\nacyclic po\n", "x".repeat(1 << 20))).unwrap();
    let Err(err) = CatModel::load(&big, &[]).map_err(|d| d.to_string()) else { panic!("too large") };
    assert!(err.contains("larger than the limit of 1048576 bytes"), "{err}");
    #[cfg(unix)]
    {
        let fifo = dir.join("fifo.cat");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().map(|s| s.success()).unwrap_or(false);
        if made {
            let (model, took) = timed_load(&fifo);
            assert_fast(took);
            let Err(err) = model else { panic!("not a file") };
            assert!(err.contains("not a regular file"), "{err}");
        }
    }
}

/// A chain of 25 000 definitions (each naming the previous one), loaded and applied to a test:
/// preparing the model on a structure made a table as long as the model for every definition
/// (quadratic); now one table serves them all.
#[test]
fn a_long_chain_of_definitions_prepares_in_linear_time() {
    let n = 25_000;
    let lets: String = (1..=n).map(|i| format!("let a{i} = a{} | po\n", i - 1)).collect();
    let dir = scratch_dir("chain");
    let path = dir.join("chain.cat");
    std::fs::write(&path, format!("let a0 = po\n{lets}acyclic a{n} as chain\n")).unwrap();
    let test = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/litmus/Atomicity-cta.litmus");
    let start = Instant::now();
    let out = assert_cmd::Command::cargo_bin("ptxmm").unwrap().args(["run", "--cat"]).arg(&path).arg(&test).output().unwrap();
    assert_fast(start.elapsed());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("Verdict: "), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
}

/// The same kind of chain, about 1 MB, included sixteen times: every definition keeps the set
/// of those it depends on, a square in the chain's length (9.7 GB and 13 s before). The sets
/// are charged to a budget: the model is refused at once, with the limit named.
#[test]
fn dependency_sets_are_bounded() {
    let dir = scratch_dir("depsets");
    let lets: String = (1..=40_000).map(|i| format!("let a{i} = a{} | po\n", i - 1)).collect();
    std::fs::write(dir.join("chain.cat"), format!("let a0 = po\n{lets}")).unwrap();
    let includes: String = (0..16).map(|_| "include \"chain.cat\"\n").collect();
    std::fs::write(dir.join("root.cat"), format!("{includes}acyclic a40000\n")).unwrap();
    let (model, took) = timed_load(&dir.join("root.cat"));
    assert_fast(took);
    let Err(err) = model else { panic!("over the budget") };
    assert!(err.contains("transitive dependencies exceed 256 MiB"), "{err}");
}
