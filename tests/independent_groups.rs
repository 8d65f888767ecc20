//! Differential test of deciding independent groups of threads apart (`decide::groups`,
//! ARCHITECTURE.md "Independent groups"): where a program's threads fall into groups (whole
//! clusters) that share nothing one of them writes, a question that names no value is decided
//! one group at a time. Every litmus test of the repository with such groups (its condition
//! made `exists (false)` and its `locations` dropped, so that nothing is observed) and kernels
//! of `tests/kernels` on grids of several CTAs are decided that way and as one program
//! (`Limits::groups_apart = false`, `--whole-program`): the verdict, every finding and the
//! liveness answer must be the same. Cases one way cannot decide within the limits are counted
//! as skipped.

use ptxmm::diag::SourceFile;
use std::path::Path;

mod common;

fn group_count(program: &ptxmm::program::Program) -> usize {
    let config = ptxmm::config::Config::default_model();
    ptxmm::decide::independent_groups(program, &config).map_or(1, |g| g.len())
}

fn compare(tally: &mut common::Tally, name: &str, program: &ptxmm::program::Program) {
    let with = |apart: bool| common::answers(program, |l| l.groups_apart = apart);
    match (with(true), with(false)) {
        (Some(apart), Some(whole)) => tally.agree(name, ("groups apart", &apart), ("whole program", &whole)),
        _ => tally.skipped += 1,
    }
}

/// The test `ptxmm kernel` builds of `tests/kernels/FILE` with `options`.
fn kernel(file: &str, options: &ptxmm::kernel::KernelOptions) -> ptxmm::program::Program {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels").join(file);
    let ptx = SourceFile::new(path.display().to_string(), std::fs::read_to_string(&path).unwrap());
    let kernel = ptxmm::kernel::build(&ptx, options, &Default::default()).unwrap_or_else(|e| panic!("{file}: {e:?}"));
    ptxmm::parse_program(SourceFile::new(file.to_string(), kernel.litmus.clone())).unwrap()
}

#[test]
fn groups_decided_apart_give_the_answers_of_the_whole_program() {
    let mut tally = common::Tally::default();
    let mut compared = Vec::new();
    for (name, text) in common::repository_litmus_tests() {
        let Some(program) = common::unobserved(&name, &text) else { continue };
        if group_count(&program) < 2 {
            continue;
        }
        compare(&mut tally, &name, &program);
        compared.push(name);
    }
    let launch = |block: u64, grid: u64, lanes: &[u64], params: &[(&str, &str)]| ptxmm::kernel::KernelOptions {
        block: Some(vec![block]),
        grid: Some(vec![grid]),
        lanes: Some(lanes.to_vec()),
        every_warp: true,
        params: params.iter().map(|(p, v)| (p.to_string(), v.to_string())).collect(),
        ..Default::default()
    };
    // Grids of CTAs that each work on their own tiles (apart), and the kernels of
    // tests/kernels, written for one CTA or cluster, on grids where their CTAs store to the same
    // words (one group: those stores race) or meet at a global semaphore (split-K).
    let buffers: &[(&str, &str)] = &[("param_0", "buffer:4096"), ("param_1", "buffer:4096")];
    let kernels = [
        ("cmd/grid_tiles.ptx", launch(64, 2, &[0], buffers)),
        ("cmd/grid_tiles.ptx", launch(64, 3, &[0], buffers)),
        ("cmd/grid_tiles.ptx", launch(64, 2, &[0, 1], buffers)),
        ("cmd/grid_tiles-bug.ptx", launch(64, 2, &[0], buffers)),
        ("tma_pipeline.ptx", launch(64, 3, &[0], &[])),
        ("tma_pipeline-bug.ptx", launch(64, 2, &[0], &[])),
        ("tma_store.ptx", launch(4, 2, &[0, 1, 2, 3], &[])),
        ("tma_store-bug.ptx", launch(4, 2, &[0, 1, 2, 3], &[])),
        ("cp_async_double.ptx", launch(32, 2, &[0], &[])),
        ("cp_async_double-bug.ptx", launch(32, 2, &[0], &[])),
        ("multicast.ptx", launch(32, 4, &[0], &[])),
        ("multicast-bug.ptx", launch(32, 4, &[0], &[])),
        ("remote_arrive.ptx", launch(32, 4, &[0], &[])),
        ("remote_arrive-bug.ptx", launch(32, 4, &[0], &[])),
        ("splitk.ptx", launch(32, 2, &[0], &[])),
        ("splitk-bug.ptx", launch(32, 2, &[0], &[])),
    ];
    let mut apart = 0;
    for (file, options) in &kernels {
        let program = kernel(file, options);
        apart += usize::from(group_count(&program) > 1);
        compare(&mut tally, file, &program);
        compared.push(format!("{file} (grid {:?})", options.grid.as_deref().unwrap_or_default()));
    }
    println!(
        "independent groups: {} passed, {} failed ({} skipped: not decided within the limits; kernels with groups apart: {}) of {}",
        tally.passed,
        tally.failed.len(),
        tally.skipped,
        apart,
        compared.join(", ")
    );
    assert!(tally.failed.is_empty(), "{}", tally.failed.join("\n\n"));
    assert!(tally.passed > 20, "too few cases compared: {}", tally.passed);
    assert!(apart >= 6, "only {apart} kernels were decided as groups apart");
}

/// The groups themselves: CTAs that read the same input and write their own words are apart;
/// CTAs that write one word (a semaphore, an output both store to) are one group; threads of
/// one cluster are one group; and an SC fence in two groups joins them.
#[test]
fn groups_follow_what_is_written_and_the_clusters() {
    let groups = |text: &str| {
        let program = ptxmm::parse_program(SourceFile::new("t.litmus".to_string(), text.to_string())).unwrap();
        ptxmm::decide::independent_groups(&program, &ptxmm::config::Config::default_model()).unwrap()
    };
    let header = "PTX t\n{ x = 1; a = 0; b = 0; }\n";
    let apart = format!(
        "{header} P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n ld.weak.u32 r0, [x] | ld.weak.u32 r0, [x] ;\n st.weak.u32 [a], r0 | st.weak.u32 [b], r0 ;\nexists (0:r0 = 1)\n"
    );
    assert_eq!(groups(&apart), vec![vec![0], vec![1]]);
    let shared_write = format!(
        "{header} P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n ld.weak.u32 r0, [x] | ld.weak.u32 r0, [a] ;\n st.weak.u32 [a], r0 | st.weak.u32 [b], r0 ;\nexists (0:r0 = 1)\n"
    );
    assert_eq!(groups(&shared_write), vec![vec![0, 1]]);
    let one_cluster = format!(
        "{header} P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;\n st.weak.u32 [a], 1 | st.weak.u32 [b], 1 ;\nexists (a = 1)\n"
    );
    assert_eq!(groups(&one_cluster), vec![vec![0, 1]]);
    let sc_fences = format!(
        "{header} P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak.u32 [a], 1 | st.weak.u32 [b], 1 ;\n fence.sc.gpu | fence.sc.gpu ;\nexists (a = 1)\n"
    );
    assert_eq!(groups(&sc_fences), vec![vec![0, 1]]);
    // A user's cat file other than the built-in models' text: never apart.
    let program = ptxmm::parse_program(SourceFile::new("t.litmus".to_string(), apart.clone())).unwrap();
    let model = ptxmm::cat::CatModel::from_source(SourceFile::new("m.cat", "acyclic po as x\n"), &[]).unwrap();
    let config = ptxmm::config::Config::new(model, "m");
    assert_eq!(ptxmm::decide::independent_groups(&program, &config).unwrap(), vec![vec![0, 1]]);
}

/// Groups without a complete execution: a CTA whose consumer waits for a flag nobody sets
/// hangs in every execution, so the program has no complete execution (beside a CTA that
/// completes, or one that hangs too), and its hang is that CTA's. Decided both ways.
#[test]
fn groups_that_always_hang_decide_as_the_whole_program() {
    let spin = |cta: usize, flag: &str, label: &str| {
        (format!("P{}@cta {cta},gpu 0", 2 * cta), format!("P{}@cta {cta},gpu 0", 2 * cta + 1), flag.to_string(), label.to_string())
    };
    let program = |name: &str, ctas: &[(usize, bool)]| {
        let mut init = Vec::new();
        let mut header = Vec::new();
        let mut rows = vec![Vec::new(); 4];
        for &(cta, set) in ctas {
            let (p, q, flag, label) = spin(cta, &format!("f{cta}"), &format!("L{cta}"));
            init.push(format!("{flag} = 0; d{cta} = 0;"));
            header.extend([p, q]);
            let store = if set { format!("st.release.gpu {flag}, 1") } else { format!("st.weak d{cta}, 2") };
            let cells = [
                (format!("st.weak d{cta}, 1"), format!("{label}:")),
                (store, format!("ld.acquire.gpu r0, {flag}")),
                (String::new(), format!("bne r0, 1, {label}")),
                (String::new(), format!("ld.weak r1, d{cta}")),
            ];
            for (row, (a, b)) in rows.iter_mut().zip(cells) {
                row.extend([a, b]);
            }
        }
        let mut text = format!("PTX {name}\n{{ {} }}\n {} ;\n", init.join(" "), header.join(" | "));
        for row in rows {
            text.push_str(&format!(" {} ;\n", row.join(" | ")));
        }
        text.push_str("exists (false)\n");
        ptxmm::parse_program(SourceFile::new(format!("{name}.litmus"), text.clone())).unwrap_or_else(|e| panic!("{text}\n{e:?}"))
    };
    let mut tally = common::Tally::default();
    let cases = [
        ("one-hangs", program("one-hangs", &[(0, true), (1, false)])),
        ("both-hang", program("both-hang", &[(0, false), (1, false)])),
        ("none-hangs", program("none-hangs", &[(0, true), (1, true)])),
        ("first-hangs", program("first-hangs", &[(0, false), (1, true)])),
    ];
    for (name, program) in &cases {
        assert_eq!(group_count(program), 2, "{name}");
        compare(&mut tally, name, program);
        let config = ptxmm::config::Config::default_model();
        let live = ptxmm::decide::Decider::new(&config).liveness(program).unwrap();
        let hangs = *name != "none-hangs";
        assert_eq!(live.status == ptxmm::decide::LivenessStatus::MayHang, hangs, "{name}: {}", live.report());
        if *name == "both-hang" {
            // The hanging execution has both CTAs' consumers stuck.
            let stuck: Vec<&str> = live.hang.iter().map(|t| t.thread.as_str()).collect();
            assert_eq!(stuck, ["P1", "P3"], "{}", live.report());
        }
    }
    println!("independent groups that hang: {} passed, {} failed", tally.passed, tally.failed.len());
    assert!(tally.failed.is_empty(), "{}", tally.failed.join("\n\n"));
}

/// `--whole-program` decides the grid as one program: three CTAs of `grid_tiles-bug` (each
/// reads its stage before the load completes) fit in 20,000 model evaluations apart (each
/// CTA's findings, the hang), not as one program (the runs of the three CTAs multiply).
#[test]
fn whole_program_decides_the_grid_as_one() {
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ptxmm"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["kernel", "tests/kernels/cmd/grid_tiles-bug.ptx", "--block", "64", "--grid", "3"])
            .args(["--param", "param_0=buffer:4096", "--param", "param_1=buffer:4096", "--max-candidates", "20000"])
            .args(["--color", "never"])
            .args(extra)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).to_string(), String::from_utf8_lossy(&out.stderr).to_string())
    };
    let (code, out, err) = run(&[]);
    assert_eq!(code, Some(3), "{out}{err}");
    assert!(out.ends_with("Summary: 6 undefined behaviour, 3 data race(s), a hang\n"), "{out}");
    assert!(
        out.contains("Decided apart: 3 groups of CTAs that share nothing one of them writes, one at a time (CTA 0; CTA 1; CTA 2)"),
        "{out}"
    );
    // Each CTA's finding is printed once, with the other CTAs' threads.
    assert!(out.contains("    the same in other threads (2): P2.0 and P3.0, P4.0 and P5.0\n"), "{out}");
    let (_, out, err) = run(&["--whole-program"]);
    assert!(out.contains("not decided") && !out.contains("3 data race(s)") && !out.contains("Decided apart"), "{out}{err}");
}
