//! `ptxmm hw campaign` (build a bundle of harnesses for a GPU machine) and `ptxmm hw judge`
//! (judge what such a machine, or any harness run, recorded), on `ptxmm::hw::campaign` and
//! `ptxmm::hw::judge`.

use crate::cli::ExitCode;
use crate::config::Config;
use crate::decide::suite::RowPaths;
use crate::decide::Decider;
use crate::hw::campaign::{self, Entry};
use crate::hw::judge::{self, Class, Evidence, ModelFacts, Summary, TestJudgement};
use crate::hw::report::{self, HwOutput};
use crate::hw::{codegen, runner, Incantations, LoadedTest};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The test files named: `.csv` files as suites (`ptxmm suite`'s format), folders searched for
/// `*.litmus`, other files as tests.
pub(crate) fn test_files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in inputs {
        if p.is_file() && p.extension().is_some_and(|e| e == "csv") {
            out.extend(csv_paths(p, None, false)?);
        } else {
            out.extend(crate::hw::expand_paths(std::slice::from_ref(p)).map_err(|e| format!("error: {e}"))?);
        }
    }
    Ok(out)
}

/// The test files of a suite CSV (`ptxmm suite`'s format), resolved as `ptxmm suite` does.
pub(crate) fn csv_paths(csv: &Path, root: Option<PathBuf>, allow_outside_root: bool) -> Result<Vec<PathBuf>, String> {
    let text = crate::read_regular(csv).map_err(|e| format!("error: {}: {e}", csv.display()))?;
    let file = crate::diag::SourceFile::new(csv.display().to_string(), text);
    let rows = crate::decide::suite::parse_csv(&file).map_err(|d| d.render(false))?;
    if rows.is_empty() {
        return Err(format!("{}: error: no test rows: a suite of no test checks nothing", csv.display()));
    }
    let root = root.unwrap_or_else(|| crate::decide::suite::default_root(csv, &rows));
    let allowed = if allow_outside_root { RowPaths::Anywhere } else { RowPaths::BelowRoot };
    rows.iter()
        .map(|r| {
            crate::decide::suite::row_file(&root, &r.path, allowed)
                .map_err(|e| format!("error: {}:{}: {}: {e}", csv.display(), r.line, r.path))
        })
        .collect()
}

/// What `hw campaign` was asked.
pub(crate) struct CampaignPlan<'a> {
    pub inputs: &'a [PathBuf],
    pub out: &'a Path,
    pub per_program: usize,
    pub build: bool,
    pub jobs: Option<usize>,
    pub nvcc: Option<&'a Path>,
    pub arch: &'a str,
    pub inc: Incantations,
}

pub(crate) fn cmd_campaign(plan: &CampaignPlan<'_>, config: &Config) -> ExitCode {
    match campaign(plan, config) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

fn campaign(plan: &CampaignPlan<'_>, config: &Config) -> Result<ExitCode, String> {
    let files = test_files(plan.inputs)?;
    if files.is_empty() {
        return Err("error: no test: a campaign of no test checks nothing".into());
    }
    if plan.out.exists() && std::fs::read_dir(plan.out).map_err(|e| format!("error: {}: {e}", plan.out.display()))?.next().is_some() {
        return Err(format!("error: {} is not empty: a campaign writes a new bundle (choose another folder)", plan.out.display()));
    }
    for sub in ["tests", "src", "bin", "out"] {
        std::fs::create_dir_all(plan.out.join(sub)).map_err(|e| format!("error: {}: {e}", plan.out.join(sub).display()))?;
    }
    // Every file gets an entry: loaded ones are generated, the others say why not.
    let mut loaded: Vec<(usize, LoadedTest)> = Vec::new();
    let mut entries: Vec<Entry> = Vec::new();
    for (index, f) in files.iter().enumerate() {
        let source = f.display().to_string();
        std::fs::copy(f, plan.out.join("tests").join(format!("{index}.litmus"))).map_err(|e| format!("error: {source}: {e}"))?;
        let (name, status) = match crate::hw::load(f, &config.input) {
            Ok(t) => {
                let name = t.program.name.clone();
                loaded.push((index, t));
                (name, "ok".to_string())
            }
            Err(e) => (f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(), format!("rejected by the model: {e}")),
        };
        entries.push(Entry { index, id: name, program: String::new(), status, source });
    }
    let ids = campaign::unique_ids(entries.iter().map(|e| e.id.as_str()));
    for (e, id) in entries.iter_mut().zip(ids) {
        e.id = id;
    }
    let mut tests: Vec<LoadedTest> = Vec::new();
    let mut index_of: Vec<usize> = Vec::new();
    for (index, mut t) in loaded {
        t.program.name = entries[index].id.clone();
        index_of.push(index);
        tests.push(t);
    }
    let per = plan.per_program.max(1);
    let mut builds: Vec<(String, Vec<usize>)> = Vec::new();
    for (p, group) in tests.chunks(per).enumerate() {
        let program = format!("prog_{p}");
        let hw: Vec<crate::hw::HwTest> = group.iter().map(|t| t.hw()).collect();
        let g = codegen::generate(&hw, &plan.inc, plan.arch, &format!("{program}.cu"), config);
        let members: Vec<usize> = (p * per..p * per + group.len()).map(|k| index_of[k]).collect();
        for &m in &members {
            let e = &mut entries[m];
            if let Some(r) = g.rejected.iter().find(|r| r.test == e.id) {
                e.status = format!("rejected by the harness generator: {r}");
            } else {
                e.program = program.clone();
            }
        }
        if g.included.is_empty() {
            continue;
        }
        let src = plan.out.join("src").join(format!("{program}.cu"));
        std::fs::write(&src, &g.source).map_err(|e| format!("error: {}: {e}", src.display()))?;
        builds.push((program, members));
    }
    let lines: Vec<String> = builds
        .iter()
        .map(|(p, _)| format!("\"$NVCC\" -O2 -std=c++17 {} -o bin/{p} src/{p}.cu", runner::gencode(plan.arch).join(" ")))
        .collect();
    write(&plan.out.join("build.sh"), &campaign::build_script(&lines))?;
    write(&plan.out.join("run.sh"), campaign::run_script())?;
    let failed = if plan.build { build_all(plan, &builds, &mut entries)? } else { 0 };
    write(&plan.out.join("manifest.tsv"), &campaign::render_manifest(&entries))?;
    write(&plan.out.join("README.txt"), &campaign::readme(entries.iter().filter(|e| e.runnable()).count(), builds.len()))?;
    let count = |pred: &dyn Fn(&Entry) -> bool| entries.iter().filter(|e| pred(e)).count();
    for e in entries.iter().filter(|e| !e.runnable()) {
        eprintln!("{}: {}", e.source, e.status);
    }
    println!(
        "hw campaign: {} tests: {} ready in {} programs{}, {} rejected by the model, {} rejected by the harness generator{}; bundle {} (run it with `bash {}/run.sh` on the GPU machine, judge with `ptxmm hw judge {}`)",
        entries.len(),
        count(&|e| e.runnable()),
        builds.len(),
        if plan.build { " (built)" } else { " (not built: `bash build.sh` builds them)" },
        count(&|e| e.status.starts_with("rejected by the model")),
        count(&|e| e.status.starts_with("rejected by the harness")),
        if failed > 0 { format!(", {failed} programs failed to build (their tests are marked in the manifest)") } else { String::new() },
        plan.out.display(),
        plan.out.display(),
        plan.out.display()
    );
    Ok(if failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("error: {}: {e}", path.display()))
}

/// Build every program with nvcc, `--jobs` at once; a program that fails marks its tests
/// (`build failed`, the log beside its source). The number that failed.
fn build_all(plan: &CampaignPlan<'_>, builds: &[(String, Vec<usize>)], entries: &mut [Entry]) -> Result<usize, String> {
    let nvcc = runner::find_nvcc(plan.nvcc)
        .map_err(|e| format!("error: {e} (or use --no-build and build on the GPU machine with `bash build.sh`)"))?;
    eprintln!("hw campaign: building {} programs with {}", builds.len(), nvcc.display());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(plan.jobs.unwrap_or(0).min(64))
        .build()
        .map_err(|e| format!("error: cannot start the build threads: {e} (lower --jobs)"))?;
    let results: Vec<Result<(), String>> = pool.install(|| {
        builds
            .par_iter()
            .map(|(p, _)| runner::build(&nvcc, plan.arch, &plan.out.join("src").join(format!("{p}.cu")), &plan.out.join("bin").join(p)))
            .collect()
    });
    let mut failed = 0;
    for ((p, members), r) in builds.iter().zip(results) {
        if let Err(log) = r {
            failed += 1;
            let log_file = plan.out.join("src").join(format!("{p}.log"));
            write(&log_file, &log)?;
            for &m in members {
                if entries[m].runnable() {
                    entries[m].status = format!("build failed: nvcc rejected src/{p}.cu (src/{p}.log)");
                }
            }
        }
    }
    Ok(failed)
}

/// What `hw judge` was asked.
pub(crate) struct JudgePlan<'a> {
    pub inputs: &'a [PathBuf],
    pub tests: &'a [PathBuf],
    pub outputs: Option<&'a Path>,
    pub json: bool,
    pub verbose: bool,
    pub reports: bool,
}

pub(crate) fn cmd_judge(plan: &JudgePlan<'_>, config: &Config) -> ExitCode {
    let result = match plan.inputs {
        [bundle] if bundle.join("manifest.tsv").is_file() => judge_bundle(bundle, plan, config),
        _ if plan.tests.is_empty() => {
            Err("error: give a campaign bundle (a folder with manifest.tsv), or harness outputs with --tests naming the tests they ran"
                .into())
        }
        _ => judge_outputs(plan, config),
    };
    match result {
        Ok((judged, not_generated, device)) => print_judged(&judged, not_generated, device.as_deref(), plan),
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

type JudgeResult = Result<(Vec<TestJudgement>, usize, Option<String>), String>;

fn read_output(path: &Path) -> Result<HwOutput, String> {
    let text = crate::read_regular(path).map_err(|e| format!("{}: {e}", path.display()))?;
    report::parse_output(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn judge_bundle(bundle: &Path, plan: &JudgePlan<'_>, config: &Config) -> JudgeResult {
    let manifest = bundle.join("manifest.tsv");
    let text = crate::read_regular(&manifest).map_err(|e| format!("error: {}: {e}", manifest.display()))?;
    let entries = campaign::parse_manifest(&text, &manifest.display().to_string()).map_err(|e| format!("error: {e}"))?;
    let outputs = plan.outputs.map(Path::to_path_buf).unwrap_or_else(|| bundle.join("out"));
    let runnable: Vec<&Entry> = entries.iter().filter(|e| e.runnable()).collect();
    let device = std::sync::Mutex::new(None);
    let judged: Vec<TestJudgement> = runnable
        .par_iter()
        .map(|e| {
            let mut test = match crate::hw::load(&e.test_file(bundle), &config.input) {
                Ok(t) => t,
                Err(err) => return error_judgement(&e.id, &e.source, format!("the bundle's copy of the test does not load: {err}")),
            };
            test.program.name = e.id.clone();
            test.path = PathBuf::from(&e.source);
            let file = e.output_file(&outputs);
            if !file.exists() {
                return not_run(&e.id, &e.source);
            }
            let output = match read_output(&file) {
                Ok(o) => o,
                Err(err) => return error_judgement(&e.id, &e.source, err),
            };
            if let (Ok(mut d), Some(found)) = (device.lock(), &output.device) {
                d.get_or_insert_with(|| found.clone());
            }
            let decider = Decider::new(config);
            let facts = ModelFacts::decide(&decider, &test);
            judge::judge_test(&decider, &test, &e.id, &facts, &Evidence::of(&output, &e.id))
        })
        .collect();
    let device = device.into_inner().unwrap_or(None);
    Ok((judged, entries.len() - runnable.len(), device))
}

fn error_judgement(id: &str, path: &str, why: String) -> TestJudgement {
    TestJudgement::unjudged(id, path, judge::Observed::Error(why.clone()), Class::HarnessError, why)
}

fn not_run(id: &str, path: &str) -> TestJudgement {
    TestJudgement::unjudged(id, path, judge::Observed::NotRun, Class::NotRun, "no output for this test")
}

/// Outputs not from a bundle: each file's tests found by name among `--tests` (a process that
/// printed no test line is about the test its file is named after: `NAME.out` or
/// `PROGRAM.NAME.out`). A name several tests have is judged against each of them.
fn judge_outputs(plan: &JudgePlan<'_>, config: &Config) -> JudgeResult {
    let files = test_files(plan.tests)?;
    let mut tests: Vec<LoadedTest> = Vec::new();
    for f in &files {
        match crate::hw::load(f, &config.input) {
            Ok(t) => tests.push(t),
            Err(e) => eprintln!("{e} (not judged)"),
        }
    }
    let mut by_name: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (k, t) in tests.iter().enumerate() {
        by_name.entry(t.program.name.clone()).or_default().push(k);
    }
    let mut outputs: Vec<PathBuf> = Vec::new();
    for p in plan.inputs {
        if p.is_dir() {
            let (found, errors) = crate::files_below(p, &|_| true);
            if let Some(e) = errors.into_iter().next() {
                return Err(format!("error: {e}"));
            }
            outputs.extend(found);
        } else {
            outputs.push(p.clone());
        }
    }
    // (output file, test name) pairs, each judged against the tests of that name.
    let mut work: Vec<(usize, String, Option<usize>)> = Vec::new();
    let mut parsed: Vec<Result<HwOutput, String>> = Vec::new();
    for (k, f) in outputs.iter().enumerate() {
        let out = read_output(f);
        let mut names: Vec<String> = Vec::new();
        if let Ok(o) = &out {
            for n in o.processes.iter().flat_map(|p| p.started.iter()).chain(o.tests.iter().map(|h| &h.test)) {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
        }
        if names.is_empty() {
            names.extend(name_from_file(f, &by_name));
        }
        if names.is_empty() {
            match &out {
                Err(e) => eprintln!("{e} (not judged)"),
                Ok(_) => eprintln!("{}: names no test of --tests (not judged)", f.display()),
            }
        }
        // An old harness ran every test of a repeated name in one process: each block is judged
        // on its own.
        for n in names {
            let blocks = out.as_ref().map_or(0, |o| o.tests.iter().filter(|h| h.test == n).count());
            if blocks > 1 {
                work.extend((0..blocks).map(|b| (k, n.clone(), Some(b))));
            } else {
                work.push((k, n, None));
            }
        }
        parsed.push(out);
    }
    let facts: Vec<ModelFacts> = tests.par_iter().map(|t| ModelFacts::decide(&Decider::new(config), t)).collect();
    let judged: Vec<TestJudgement> = work
        .par_iter()
        .map(|(k, name, block)| {
            let file = outputs[*k].display().to_string();
            let Some(candidates) = by_name.get(name) else {
                return error_judgement(name, &file, format!("{file}: test {name} is not among --tests"));
            };
            let output = match &parsed[*k] {
                Ok(o) => o,
                Err(e) => return error_judgement(name, &file, e.clone()),
            };
            let mut ev = Evidence::of(output, name);
            if let Some(b) = block {
                ev = Evidence { hists: vec![ev.hists[*b]], fault: None, unfinished: None };
            }
            let all: Vec<TestJudgement> =
                candidates.iter().map(|&c| judge::judge_test(&Decider::new(config), &tests[c], name, &facts[c], &ev)).collect();
            merge_candidates(all, &file)
        })
        .collect();
    let device = parsed.iter().flatten().find_map(|o| o.device.clone());
    Ok((judged, 0, device))
}

/// One judgement of a name several tests have: theirs when they agree, else Ambiguous. A test
/// whose observables differ from the output's is not a candidate.
fn merge_candidates(mut all: Vec<TestJudgement>, file: &str) -> TestJudgement {
    if all.iter().any(|j| j.class != Class::HarnessError) {
        all.retain(|j| j.class != Class::HarnessError);
    }
    let n = all.len();
    let same = all.iter().all(|j| j.class == all[0].class);
    let mut first = all.swap_remove(0);
    if n > 1 {
        if same {
            first.why = format!("{} ({n} tests of this name, judged alike)", first.why);
        } else {
            let mut by_class: BTreeMap<Class, Vec<&str>> = BTreeMap::new();
            for j in std::iter::once(&first).chain(&all) {
                by_class.entry(j.class).or_default().push(j.id.as_str());
            }
            let words: Vec<String> = by_class.iter().map(|(c, v)| format!("{} by {}", c.word(), v.len())).collect();
            first.class = Class::Ambiguous;
            first.why = format!("{n} tests have this name and judge {file} differently: {}", words.join(", "));
        }
        first.path = format!("{file} ({n} tests named {})", first.id);
    }
    first
}

fn name_from_file(f: &Path, by_name: &BTreeMap<String, Vec<usize>>) -> Option<String> {
    let stem = f.file_stem()?.to_string_lossy().into_owned();
    let mut rest = stem.as_str();
    loop {
        if by_name.contains_key(rest) {
            return Some(rest.to_string());
        }
        rest = rest.split_once('.')?.1;
    }
}

fn print_judged(judged: &[TestJudgement], not_generated: usize, device: Option<&str>, plan: &JudgePlan<'_>) -> ExitCode {
    let summary = Summary::of(judged, not_generated);
    let mut order: Vec<&TestJudgement> = judged.iter().collect();
    order.sort_by(|a, b| (a.class, &a.path).cmp(&(b.class, &b.path)));
    if plan.json {
        let record = serde_json::json!({
            "device": device,
            "summary": summary,
            "tests": order.iter().map(|t| serde_json::json!({
                "id": t.id,
                "path": t.path,
                "class": t.class,
                "why": t.why,
                "verdict": t.verdict.map(|v| v.name()),
                "liveness": t.liveness,
                "histogram": t.histogram().map(report::json),
            })).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&record).unwrap_or_default());
    } else {
        println!("hw judge: {} tests{}", summary.tests, device.map(|d| format!(", device {d}")).unwrap_or_default());
        for t in &order {
            if plan.reports {
                if let Some(j) = t.histogram() {
                    println!("{}", report::render(j, device));
                }
            }
            if t.class != Class::Consistent || plan.verbose {
                println!("{:<10} {} ({}): {}", t.class.word(), t.id, t.path, t.why);
            }
        }
        print!("{}", summary.render());
    }
    if summary.failures() > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
