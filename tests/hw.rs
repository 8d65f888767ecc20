//! `ptxmm hw`: golden tests of the generated CUDA harness, rejections, the parser of the
//! harness's histogram, the model's judgement of observed states, and the command line on
//! recorded harness outputs (no GPU needed). `tests/hw/compile_all.sh` compiles every harness.

use ptxmm::hw::report::{judge, parse_output, render, Judgement};
use ptxmm::hw::{codegen, load, Incantations};
use std::path::Path;
use std::process::Command;

fn generate(path: &str) -> codegen::Generated {
    let t = load(Path::new(path), &Default::default()).unwrap_or_else(|e| panic!("{e}"));
    codegen::generate(&[t.hw()], &Incantations::default(), "sm_90a", "harness.cu", &ptxmm::Config::default_model())
}

/// The test's own part of the program (the harness prelude is the same in every file).
fn test_part(path: &str) -> String {
    let g = generate(path);
    assert!(g.rejected.is_empty(), "{path}: {:?}", g.rejected);
    let start = g.source.find("// ===== test").expect("a test section");
    g.source[start..].to_string()
}

#[test]
fn golden_mp() {
    insta::assert_snapshot!("hw_mp", test_part("examples/MP.litmus"));
}

#[test]
fn golden_sb() {
    insta::assert_snapshot!("hw_sb_fence_sc", test_part("tests/litmus/SB-fence-sc.litmus"));
}

#[test]
fn golden_tma_store_without_proxy_fence() {
    insta::assert_snapshot!("hw_tma_store_no_fence", test_part("tests/async/S6a-tma-store-no-proxy-fence.litmus"));
}

#[test]
fn golden_tma_store_with_proxy_fence() {
    let part = test_part("tests/async/S6b-tma-store-proxy-fence.litmus");
    assert!(part.contains("fence.proxy.async"), "the fence is emitted as written");
    insta::assert_snapshot!("hw_tma_store_fence", part);
}

#[test]
fn golden_mbarrier_tma_pipeline() {
    insta::assert_snapshot!("hw_tma_pipeline", test_part("tests/hw/TMA-pipeline.litmus"));
}

#[test]
fn golden_cp_async_groups() {
    insta::assert_snapshot!("hw_cp_async_groups", test_part("tests/async/S2-wait-group-fifo.litmus"));
}

#[test]
fn golden_cluster_multicast() {
    let part = test_part("tests/async/M01-multicast-two-ctas.litmus");
    assert!(part.contains("__cluster_dims__(2, 1, 1)"), "two CTAs of one cluster are launched as a cluster");
    insta::assert_snapshot!("hw_multicast", part);
}

#[test]
fn the_whole_program_has_a_build_line_and_a_main() {
    let g = generate("examples/MP.litmus");
    assert!(g.source.contains("// Build: nvcc -O2 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o harness harness.cu"));
    assert!(g.source.contains("int main(int argc, char** argv)"));
    assert!(g.source.contains("if (selected(o, \"MP\")) status |= t0::run(o);"));
}

#[test]
fn spin_loops_are_bounded_and_hang_is_an_outcome() {
    let part = test_part("tests/async/S4-tma-load-consumer.litmus");
    // The label a backward branch targets counts its iterations and leaves to HW_HANG.
    let label = part.find("\"LW1:\\n\\t\"").expect("label kept");
    let after = &part[label..];
    assert!(after.contains("add.u32 hw_spin, hw_spin, 1;"));
    assert!(after.contains("@hw_p bra HW_HANG;"));
    assert!(part.contains("if (hung) atomicOr(hang, 1u << 1);"));
}

#[test]
fn dat3m_spellings_become_ptx() {
    let part = test_part("examples/MP.litmus");
    // Untyped Dat3M accesses get a 32-bit type; bare locations become addresses.
    assert!(part.contains("st.weak.b32 [%"), "{part}");
    assert!(part.contains("ld.acquire.gpu.b32 r0, [%"), "{part}");
}

#[test]
fn an_address_dependency_widens_its_32_bit_source() {
    // `ptxmm gen`'s DpAddr edge: `xor r1, r0, r0; add r3, r2, r1` with r2 = &y (64-bit) and r1
    // from a 32-bit load; ptxas rejects `add.s64` on a `.b32` register.
    let dir = temp_dir("dpaddr");
    let test = dir.join("dep.litmus");
    let gen = ptxmm().args(["gen", "Fre", "Coe", "FenceAcqReldWR", "DpAddrdR", "-o"]).arg(&dir).output().unwrap();
    assert!(gen.status.success(), "{}", String::from_utf8_lossy(&gen.stderr));
    let written = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).find(|p| p.extension().is_some_and(|e| e == "litmus"));
    std::fs::rename(written.expect("ptxmm gen wrote a test"), &test).unwrap();
    let part = test_part(test.to_str().unwrap());
    let cvt = part.find("cvt.u64.u32 hw_w2, r1;").unwrap_or_else(|| panic!("no widening in\n{part}"));
    let add = part.find("add.s64 r3, r2, hw_w2;").unwrap_or_else(|| panic!("no 64-bit add in\n{part}"));
    assert!(cvt < add);
}

fn rejection(path: &str) -> String {
    let g = generate(path);
    assert!(g.included.is_empty(), "{path} should be rejected");
    g.rejected.iter().map(|r| r.to_string()).collect::<Vec<_>>().join("\n")
}

#[test]
fn unsupported_constructs_are_rejected_with_the_instruction_and_position() {
    let r = rejection("tests/async/A17-wgmma-after-acquire.litmus");
    assert!(r.starts_with("tests/async/A17-wgmma-after-acquire.litmus:"), "{r}");
    assert!(r.contains("instruction `wgmma."), "{r}");
    let r = rejection("tests/litmus/Proxy-MP-surface.litmus");
    assert!(r.contains("@ surface aliases"), "{r}");
    let r = rejection("tests/async/U24-reader-lane-no-sync.litmus");
    assert!(r.contains("2 GPUs"), "{r}");
}

#[test]
fn golden_tensor_load_2d() {
    let part = test_part("tests/tensor/T01-load-2d-mbarrier.litmus");
    // The map is encoded on the host into the instance block, at the map variable's offset,
    // for the tensor `g` of the same instance; the copy names the map's generic address.
    assert!(part.contains("{128, 0, CU_TENSOR_MAP_DATA_TYPE_UINT32, 2, {8, 4}, {32}, {4, 2}}, // tmap"), "{part}");
    assert!(part.contains("[%4, {4, 1}], [%2];"), "{part}");
    assert!(part.contains("\"l\"((gbase + 128))"), "{part}");
    assert!(part.contains("tensormap_acquire(gbase + 128);"), "{part}");
    assert!(part.contains("kTensorMaps, sizeof(kTensorMaps) / sizeof(kTensorMaps[0])"), "{part}");
    insta::assert_snapshot!("hw_tensor_load_2d", part);
}

#[test]
fn tensor_stores_reductions_and_coordinates_in_registers_are_generated() {
    let part = test_part("tests/tensor/T07-store-2d.litmus");
    assert!(part.contains("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%"), "{part}");
    let part = test_part("tests/tensor/T08-reduce-add.litmus");
    assert!(part.contains("CU_TENSOR_MAP_DATA_TYPE_INT32, 1, {8}"), "{part}");
    let part = test_part("tests/tensor/T05-load-1d.litmus");
    assert!(part.contains(", {c}], [%"), "{part}");
    // A store to the map after the copy completed (no U2) is generated: it writes the descriptor.
    let part = test_part("tests/tensor/T03-tensor-map-modified-after-completion.litmus");
    assert!(part.contains("st.global.u32 [%"), "{part}");
}

#[test]
fn a_tensor_prefetch_takes_a_64_bit_cache_policy() {
    let part = test_part("tests/hw/tensor-prefetch-cache-hint.litmus");
    assert!(part.contains(".reg .b64 pol;"), "{part}");
    assert!(part.contains("cp.async.bulk.prefetch.tensor.1d.L2.global.L2::cache_hint [%2, {4}], pol;"), "{part}");
}

#[test]
fn tensor_map_writes_that_a_use_may_read_are_rejected() {
    let r = rejection("tests/tensor/T02-tensor-map-modified-in-flight.litmus");
    assert!(r.starts_with("tests/tensor/T02-tensor-map-modified-in-flight.litmus:11:157:"), "{r}");
    assert!(r.contains("U2-tensor-map-modified-in-flight"), "{r}");
    let r = rejection("tests/tensor/T09-prefetch.litmus");
    assert!(r.starts_with("tests/tensor/T09-prefetch.litmus:10:76:"), "{r}");
    assert!(r.contains("prefetch at 10:2"), "{r}");
}

#[test]
fn tensor_maps_without_a_faithful_device_form_are_rejected() {
    let dir = temp_dir("tensor-reject");
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let tf32 = write(
        "tf32.litmus",
        "PTX tf32\n{\n  g[32];\n  tmap @ tensormap { base = g; type = tf32; dims = {8}; box = {4}; };\n  s[16] @ shared cta 0;\n}\n P0@cta 0,gpu 0 ;\n cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [tmap, {0}], [s] ;\nexists (g == 0)\n",
    );
    let r = rejection(&tf32);
    assert!(r.contains(":4:3:") && r.contains("TFLOAT32"), "{r}");
    let unaligned = write(
        "unaligned.litmus",
        "PTX unaligned\n{\n  g[32];\n  tmap @ tensormap { base = g; type = u32; dims = {8}; box = {4}; };\n  x @ shared cta 0;\n  s[16] @ shared cta 0;\n}\n P0@cta 0,gpu 0 ;\n cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [tmap, {0}], [s] ;\nexists (g == 0)\n",
    );
    let r = rejection(&unaligned);
    assert!(r.contains(":9:2:") && r.contains("128-byte alignment"), "{r}");
}

#[test]
fn every_tensor_test_is_generated_or_rejected_with_its_reason() {
    let mut generated = Vec::new();
    let mut rejected = Vec::new();
    let mut model_rejected = 0;
    let mut paths: Vec<_> = std::fs::read_dir("tests/tensor").unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    for path in paths {
        let Ok(t) = load(&path, &Default::default()) else {
            // The model rejects the `bad-*` tests on purpose (tests/tensor.rs checks why).
            assert!(path.file_name().unwrap().to_str().unwrap().starts_with("bad-"), "{}", path.display());
            model_rejected += 1;
            continue;
        };
        let g = codegen::generate(&[t.hw()], &Incantations::default(), "sm_90a", "harness.cu", &ptxmm::Config::default_model());
        generated.extend(g.included);
        rejected.extend(g.rejected.into_iter().map(|r| r.test));
    }
    assert_eq!(model_rejected, 7);
    assert_eq!(
        rejected,
        [
            "T02-tensor-map-modified-in-flight",
            "T09-prefetch",
            "T12-load-bf16-swizzle-128B",
            "T13-map-in-a-parameter",
            "T15-tensor-map-replaced-without-proxy-fence",
            "T16-tensor-map-replaced-with-proxy-fences",
            "T17-tensor-map-copied-with-cp-fenceproxy",
            "T18-tensor-map-copied-without-acquire"
        ]
    );
    assert_eq!(generated.len(), 10, "{generated:?}");
}

const MP_OUTPUT: &str = "ptxmm-hw 1
device NVIDIA H100 80GB HBM3|sm_90|132 SMs|driver 12040|runtime 13000
test MP
threads 2
observables 1:r0 1:r1
state 700 0 0 0
state 200 0 1 1
state 50 0 0 1
state 3 0 1 0
state 47 2 0 0
done MP instances 10 iterations 100 time_ms 12
";

#[test]
fn harness_output_is_parsed() {
    let out = parse_output(MP_OUTPUT).unwrap();
    assert_eq!(out.device.as_deref(), Some("NVIDIA H100 80GB HBM3|sm_90|132 SMs|driver 12040|runtime 13000"));
    assert_eq!(out.tests.len(), 1);
    let h = &out.tests[0];
    assert_eq!((h.instances, h.iterations, h.timeout), (10, 100, false));
    assert_eq!(h.observables, ["1:r0", "1:r1"]);
    assert_eq!(h.states.len(), 5);
    assert_eq!((h.states[3].count, h.states[3].hang, h.states[3].values.clone()), (3, 0, vec![1, 0]));
}

#[test]
fn malformed_harness_output_is_an_error_naming_the_line() {
    let e = parse_output("ptxmm-hw 1\ntest MP\nobservables 1:r0\nstate 1 0 x\n").unwrap_err();
    assert!(e.contains("line 4"), "{e}");
    let e = parse_output("ptxmm-hw 1\ntest MP\nobservables 1:r0\nstate 1 0 1 2\n").unwrap_err();
    assert!(e.contains("expected 3 values"), "{e}");
    assert!(parse_output("hello\n").is_err());
    // A harness cut off mid-test: what it printed, marked as timed out.
    let out = parse_output("ptxmm-hw 1\ntest MP\nobservables 1:r0 1:r1\nstate 5 0 1 1\n").unwrap();
    assert!(out.tests[0].timeout);
}

fn model_outcome(path: &str) -> (ptxmm::hw::LoadedTest, ptxmm::decide::Outcome) {
    let t = load(Path::new(path), &Default::default()).unwrap();
    let o = ptxmm::decide::Decider::new(&ptxmm::Config::default_model()).verdict(&t.program).unwrap();
    (t, o)
}

#[test]
fn a_state_the_model_forbids_is_a_mismatch_and_comes_first() {
    let (t, o) = model_outcome("examples/MP.litmus");
    let out = parse_output(MP_OUTPUT).unwrap();
    let j = judge(&t.program, &o, &out.tests[0]).unwrap();
    assert_eq!(j.mismatches(), 1);
    assert_eq!(j.states[0].judgement, Judgement::Forbidden);
    assert_eq!(j.states[0].state.values, [1, 0]);
    assert!(j.states[0].satisfies);
    let hang = j.states.iter().find(|s| s.state.hang != 0).unwrap();
    assert_eq!(hang.judgement, Judgement::Hang);
    assert_eq!(j.states.iter().filter(|s| s.judgement == Judgement::Allowed).count(), 3);
    let text = render(&j, out.device.as_deref());
    assert!(text.starts_with("MISMATCH MP: 1 observed state(s) the model forbids\nTest MP Allowed\nHistogram (5 states)\n"), "{text}");
    assert!(text.contains("3       *>1:r0=1; 1:r1=0;    # model: FORBIDDEN"), "{text}");
    assert!(text.contains(":>1:r0=0; 1:r1=0;    # model: allowed"), "{text}");
    assert!(text.contains("hang=P1;"), "{text}");
    assert!(text.contains("\nOk\n"), "{text}");
    assert!(text.contains("Positive: 3, Negative: 950"), "{text}");
    assert!(text.contains("Condition exists (1:r0=1 /\\ 1:r1=0) is validated"), "{text}");
    assert!(text.contains("Observation MP Sometimes 3 950"), "{text}");
}

#[test]
fn a_state_missing_from_a_partial_enumeration_is_unknown_not_forbidden() {
    // With a budget of one consistent execution the enumeration of an MP broadcast's final
    // states stops early and the outcome-directed search decides the condition (no execution
    // reaches it): an observed state that satisfies the condition is still forbidden, the
    // states the enumeration did not reach are unknown. (An H200 showed every reader of a
    // 16-reader broadcast seeing the flag and the data, a state a partial enumeration had not
    // listed, which was judged forbidden.)
    let dir = temp_dir("partial");
    let path = dir.join("MP-broadcast-2.litmus");
    std::fs::write(&path, ptxmm::families::mp_broadcast(2).source).unwrap();
    let t = load(&path, &Default::default()).unwrap();
    let config = ptxmm::Config { enumeration_budget: Some(1), ..ptxmm::Config::default_model() };
    let o = ptxmm::decide::Decider::new(&config).verdict(&t.program).unwrap();
    assert!(o.enumeration_cut && o.partial_states.as_ref().is_some_and(|p| !p.witness), "the enumeration is cut: {:?}", o.partial_states);
    assert_eq!(o.states.len(), 1);
    let observed = [[1, 1, 1, 1], [0, 0, 1, 1], [1, 1, 0, 0], [0, 0, 0, 0], [1, 0, 1, 1]];
    let mut text = String::from("ptxmm-hw 1\ntest MP-broadcast-2\nthreads 3\nobservables 1:r0 1:r1 2:r0 2:r1\n");
    for v in observed {
        text.push_str(&format!("state 10 0 {} {} {} {}\n", v[0], v[1], v[2], v[3]));
    }
    text.push_str("done MP-broadcast-2 instances 10 iterations 5 time_ms 1\n");
    let out = parse_output(&text).unwrap();
    let j = judge(&t.program, &o, &out.tests[0]).unwrap();
    let of = |values: [u64; 4]| j.states.iter().find(|s| s.state.values == values).unwrap().judgement;
    assert_eq!(of([1, 0, 1, 1]), Judgement::Forbidden);
    assert_eq!(j.mismatches(), 1);
    let listed = |values: [u64; 4]| o.states.keys().any(|st| st.iter().map(|&v| v as u64).eq(values));
    for values in &observed[..4] {
        assert_eq!(of(*values), if listed(*values) { Judgement::Allowed } else { Judgement::Unknown }, "{values:?}");
    }
    assert_eq!(j.states.iter().filter(|s| s.judgement == Judgement::Unknown).count(), 3);
}

#[test]
fn an_undefined_program_has_no_mismatch() {
    let (t, o) = model_outcome("tests/async/S6a-tma-store-no-proxy-fence.litmus");
    let text = "ptxmm-hw 1\ntest S6a-tma-store-no-proxy-fence\nobservables 0:r0\nstate 10 0 0\nstate 990 0 42\ndone S6a-tma-store-no-proxy-fence instances 10 iterations 100 time_ms 1\n";
    let out = parse_output(text).unwrap();
    let j = judge(&t.program, &o, &out.tests[0]).unwrap();
    assert_eq!(j.mismatches(), 0);
    assert!(j.states.iter().all(|s| s.judgement == Judgement::Undefined));
    assert_eq!(j.verdict, "Undefined");
}

fn ptxmm() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ptxmm"))
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ptxmm-hw-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn hw_run_on_a_recorded_output_exits_non_zero_on_a_mismatch() {
    let dir = temp_dir("run");
    let rec = dir.join("mp.out");
    std::fs::write(&rec, MP_OUTPUT).unwrap();
    let out = ptxmm().args(["hw", "run", "examples/MP.litmus", "--harness-output"]).arg(&rec).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.starts_with("MISMATCH MP"), "{stdout}");
    // Without the forbidden state (its runs counted in another, so the counts still sum to
    // instances × iterations): exit 0.
    std::fs::write(&rec, MP_OUTPUT.replace("state 3 0 1 0\n", "").replace("state 700 0 0 0", "state 703 0 0 0")).unwrap();
    let out = ptxmm().args(["hw", "run", "examples/MP.litmus", "--harness-output"]).arg(&rec).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn hw_run_judges_with_the_model_chosen() {
    let dir = temp_dir("model");
    let rec = dir.join("mp.out");
    std::fs::write(&rec, MP_OUTPUT).unwrap();
    let judge_with = |extra: &[&str]| {
        let mut cmd = ptxmm();
        cmd.args(["hw", "run", "examples/MP.litmus", "--harness-output"]).arg(&rec).args(extra);
        cmd.output().unwrap()
    };
    // ptx-7.5 forbids the stale read as the default model does.
    assert_eq!(judge_with(&["--model", "ptx-7.5"]).status.code(), Some(1));
    // A model without axioms allows every state: no mismatch.
    let none = dir.join("none.cat");
    std::fs::write(&none, "\"no axioms\"\n").unwrap();
    let out = judge_with(&["--cat", none.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("FORBIDDEN"));
    let out = judge_with(&["--model", "nosuch"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown model `nosuch`"));
}

#[test]
fn hw_run_without_nvcc_says_so() {
    let dir = temp_dir("nonvcc");
    let out = ptxmm()
        .args(["hw", "run", "examples/MP.litmus"])
        .env("PATH", "")
        .env("HOME", &dir)
        .env_remove("CUDA_HOME")
        .env_remove("CUDA_PATH")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("error: nvcc not found"), "{stderr}");
}

#[test]
fn hw_run_reports_a_harness_without_a_gpu() {
    let dir = temp_dir("nogpu");
    let rec = dir.join("nogpu.out");
    std::fs::write(&rec, "ptxmm-hw 1\nerror no CUDA device: CUDA driver version is insufficient for CUDA runtime version\n").unwrap();
    let out = ptxmm().args(["hw", "run", "examples/MP.litmus", "--harness-output"]).arg(&rec).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("the harness stopped: no CUDA device"), "{stderr}");
}

#[test]
fn hw_gen_writes_one_program_per_test_and_counts_rejections() {
    let dir = temp_dir("gen");
    let out =
        ptxmm().args(["hw", "gen", "examples/MP.litmus", "tests/async/A17-wgmma-after-acquire.litmus", "-o"]).arg(&dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "a rejection fails without --keep-going");
    assert!(stdout.contains("2 tests: 1 generated into 1 file(s)"), "{stdout}");
    assert!(stdout.contains("1 rejected by the harness generator"), "{stdout}");
    assert!(dir.join("MP.cu").is_file());
    let out = ptxmm().args(["hw", "gen", "tests/async", "--chunks", "2", "--keep-going", "-o"]).arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(dir.join("chunk_0.cu").is_file() && dir.join("chunk_1.cu").is_file());
}

#[test]
fn hw_suite_json_on_a_recorded_output() {
    let dir = temp_dir("suite");
    let csv = dir.join("suite.csv");
    std::fs::write(&csv, format!("{}/examples/MP.litmus,1\n", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let rec = dir.join("mp.out");
    std::fs::write(&rec, MP_OUTPUT).unwrap();
    let out = ptxmm().args(["hw", "suite"]).arg(&csv).args(["--root", "/", "--json", "--harness-output"]).arg(&rec).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["mismatches"], 1);
    assert_eq!(v["tests"][0]["test"], "MP");
    assert_eq!(v["tests"][0]["states"][0]["judgement"], "Forbidden");
}

#[test]
fn states_failing_the_filter_are_not_counted() {
    let (t, o) = model_outcome("tests/explain/filter.litmus");
    let text = "ptxmm-hw 1\ntest filter\nobservables 1:r0 1:r1\nstate 7 0 0 0\nstate 5 0 0 1\nstate 3 0 1 1\ndone filter instances 5 iterations 3 time_ms 1\n";
    let out = parse_output(text).unwrap();
    let j = judge(&t.program, &o, &out.tests[0]).unwrap();
    let filtered: Vec<_> = j.states.iter().filter(|s| s.judgement == Judgement::Filtered).collect();
    assert_eq!(filtered.len(), 1);
    assert_eq!(filtered[0].state.values, [0, 0]);
    assert_eq!(j.mismatches(), 0);
    assert_eq!(j.positive_negative(), (5, 3));
}

/// The whole `hw run` path (find nvcc, build, run once per test, parse, judge) with a fake nvcc
/// whose "binary" prints a recorded histogram for the test named on its command line.
#[cfg(unix)]
#[test]
fn hw_run_builds_and_runs_through_nvcc_and_the_harness() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("fake");
    std::fs::write(dir.join("mp.out"), MP_OUTPUT).unwrap();
    let fake = dir.join("nvcc");
    let script = format!(
        "#!/bin/sh\n# fake nvcc: the program it writes checks its arguments and prints the recorded output\nwhile [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then out=$2; fi; shift; done\nprintf '#!/bin/sh\\ncase \"$*\" in *\"--iterations 7\"*MP) cat {} ;; *) echo bad arguments \"$*\" >&2; exit 9 ;; esac\\n' > \"$out\"\nchmod +x \"$out\"\n",
        dir.join("mp.out").display()
    );
    std::fs::write(&fake, script).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let keep = dir.join("keep");
    let out = ptxmm()
        .args(["hw", "run", "examples/MP.litmus", "--iterations", "7", "--nvcc"])
        .arg(&fake)
        .arg("--keep")
        .arg(&keep)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.starts_with("MISMATCH MP"), "{stdout}");
    assert!(stdout.contains("Device NVIDIA H100"), "{stdout}");
    assert!(keep.join("ptxmm_hw.cu").is_file(), "--keep keeps the source");
}

/// The asm lines of a generated test part: each instruction of the inline-PTX blocks, without
/// the template's quoting (labels, which are not indented, and declarations are left out).
fn asm_instructions(part: &str) -> Vec<String> {
    part.lines()
        .filter_map(|l| l.trim_start().strip_prefix("\"  ")?.strip_suffix("\\n\\t\""))
        .filter(|l| !l.starts_with('.') && *l != "{" && *l != "}")
        .map(str::to_string)
        .collect()
}

#[test]
fn dat3m_compare_and_branch_becomes_setp_and_a_predicated_bra() {
    // (file, comparison, operands): each reader spins with one of Dat3M's six branches.
    let cases = [
        ("beq", "eq", "r0, 0"),
        ("bne", "ne", "r0, 1"),
        ("blt", "lt", "r0, 1"),
        ("bgt", "gt", "1, r0"),
        ("ble", "le", "r0, 0"),
        ("bge", "ge", "0, r0"),
    ];
    for (branch, cmp, operands) in cases {
        let part = test_part(&format!("tests/hw/MP-spin-{branch}.litmus"));
        let lines = asm_instructions(&part);
        let setp = format!("setp.{cmp}.s32 hw_p, {operands};");
        let at = lines.iter().position(|l| *l == setp).unwrap_or_else(|| panic!("{branch}: no `{setp}` in\n{part}"));
        assert_eq!(lines[at + 1], "@hw_p bra LC00;", "{branch}: the branch follows its comparison");
        assert!(!lines.iter().any(|l| l.starts_with(branch)), "{branch} is not PTX:\n{part}");
        // The loop back to LC00 is a spin loop: bounded, and a hang is an outcome.
        let label = part.find("\"LC00:\\n\\t\"").expect("label kept");
        assert!(part[label..].contains("add.u32 hw_spin, hw_spin, 1;"), "{branch}: the spin loop is bounded\n{part}");
    }
}

fn generate_text(name: &str, text: &str) -> codegen::Generated {
    let dir = temp_dir(name);
    let path = dir.join(format!("{name}.litmus"));
    std::fs::write(&path, text).unwrap();
    generate(path.to_str().unwrap())
}

#[test]
fn a_comparison_of_a_64_bit_register_is_s64() {
    let g = generate_text(
        "cmp64",
        "PTX cmp64\n{ x[8]; P0:r0=0; }\n P0@cta 0,gpu 0 ;\n ld.relaxed.gpu.u64 r0, [x] ;\n bge r0, 1, L ;\n st.relaxed.gpu.u32 [x], 1 ;\n L: ;\nexists (P0:r0 == 0)\n",
    );
    assert!(g.rejected.is_empty(), "{:?}", g.rejected);
    let lines = asm_instructions(&g.source);
    assert!(lines.contains(&"setp.ge.s64 hw_p, r0, 1;".to_string()), "{lines:#?}");
    assert!(lines.contains(&"@hw_p bra L;".to_string()), "{lines:#?}");
}

#[test]
fn untyped_register_operations_get_a_ptx_type() {
    let g = generate_text(
        "untyped",
        "PTX untyped\n{ x=5; P0:r0=0; P0:r1=0; P0:r2=0; P0:r3=0; P0:r4=0; P0:r5=0; }\n P0@cta 0,gpu 0 ;\n ld.relaxed.gpu r0, x ;\n div r1, r0, 2 ;\n rem r2, r0, 3 ;\n shl r3, r0, 1 ;\n max r4, r0, r1 ;\n setp.lt r5, r0, 9 ;\n ld r1, 7 ;\nexists (P0:r1 == 7)\n",
    );
    assert!(g.rejected.is_empty(), "{:?}", g.rejected);
    let lines = asm_instructions(&g.source);
    for expected in [
        "div.s32 r1, r0, 2;",
        "rem.s32 r2, r0, 3;",
        "shl.b32 r3, r0, 1;",
        "max.s32 r4, r0, r1;",
        "setp.lt.s32 r5, r0, 9;",
        "mov.b32 r1, 7;",
    ] {
        assert!(lines.contains(&expected.to_string()), "no `{expected}` in {lines:#?}");
    }
    assert!(g.source.contains(".reg .pred r5;"), "a setp destination is a predicate");
}

#[test]
fn forms_without_a_device_spelling_are_rejected_with_the_instruction() {
    let one = |name: &str, text: &str| {
        let g = generate_text(name, text);
        assert!(g.included.is_empty(), "{name} should be rejected");
        g.rejected[0].to_string()
    };
    let r = one("guarded-blt", "PTX guarded-blt\n{ x=0; P0:r0=0; P0:p=1; }\n P0@cta 0,gpu 0 ;\n ld.relaxed.gpu r0, x ;\n @p blt r0, 1, L ;\n st.relaxed.gpu x, 1 ;\n L: ;\nexists (x == 0)\n");
    assert!(r.contains("guarded-blt.litmus:5:2:") && r.contains("a guarded `blt` is not generated"), "{r}");
    let r = one("atom-mul", "PTX atom-mul\n{ x=2; P0:r0=0; }\n P0@cta 0,gpu 0 ;\n atom.relaxed.gpu.mul r0, x, 3 ;\nexists (x == 6)\n");
    assert!(r.contains("atom-mul.litmus:4:2:") && r.contains("PTX has no atom or red of `.mul`"), "{r}");
    let r = one(
        "fence-generic",
        "PTX fence-generic\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.relaxed.gpu x, 1 ;\n fence.proxy.generic ;\nexists (x == 1)\n",
    );
    assert!(r.contains("fence-generic.litmus:5:2:") && r.contains("`.generic` is not a PTX proxy kind"), "{r}");
}

/// Every litmus file of the repository (and of Dat3M's PTX suite, where present) that the model
/// accepts is generated or rejected with a reason at a position; what is generated holds PTX
/// instructions only, each typed where PTX needs a type, never a Dat3M spelling copied as it
/// stands. The repository's tests lower to every kind of operation (`program::Op`).
#[test]
fn every_instruction_of_every_test_is_generated_or_rejected_with_a_reason() {
    const PTX: &[&str] = &[
        "ld",
        "st",
        "atom",
        "red",
        "add",
        "sub",
        "mul",
        "div",
        "rem",
        "and",
        "or",
        "xor",
        "shl",
        "shr",
        "min",
        "max",
        "mov",
        "setp",
        "selp",
        "cvt",
        "cvta",
        "mad",
        "not",
        "neg",
        "bra",
        "bar",
        "barrier",
        "fence",
        "membar",
        "mbarrier",
        "cp",
        "mapa",
        "createpolicy",
        // The bit instructions and those without effect (issue 38).
        "bfe",
        "bfi",
        "brev",
        "clz",
        "popc",
        "bfind",
        "prmt",
        "lop3",
        "shf",
        "bmsk",
        "szext",
        "mul24",
        "mad24",
        "sad",
        "cnot",
        "abs",
        "nanosleep",
        "griddepcontrol",
        "prefetch",
        "prefetchu",
        "pmevent",
    ];
    const TYPED: &[&str] =
        &["ld", "st", "atom", "red", "add", "sub", "mul", "div", "rem", "and", "or", "xor", "shl", "shr", "min", "max", "mov", "setp"];
    let is_type = |p: &str| {
        let (k, bits) = p.split_at(1.min(p.len()));
        matches!(k, "b" | "u" | "s" | "f") && matches!(bits, "8" | "16" | "32" | "64") || p == "bf16" || p == "pred"
    };
    let mut files = Vec::new();
    for dir in ["tests", "examples", "../shared/peers/dat3m/litmus/PTX"] {
        files.extend(ptxmm::litmus_files(Path::new(dir)).0);
    }
    let (mut generated, mut rejected) = (0, 0);
    let mut variants = std::collections::BTreeSet::new();
    for path in &files {
        let Ok(t) = load(path, &Default::default()) else { continue };
        if !path.starts_with("../") {
            for th in &t.program.threads {
                variants.extend(th.code.iter().map(|i| format!("{:?}", i.op).split([' ', '(']).next().unwrap().to_string()));
            }
        }
        let g = codegen::generate(&[t.hw()], &Incantations::default(), "sm_90a", "harness.cu", &ptxmm::Config::default_model());
        for r in &g.rejected {
            let at = r.location.rsplitn(3, ':').collect::<Vec<_>>();
            assert!(at.len() == 3 && at[0].parse::<usize>().is_ok() && at[1].parse::<usize>().is_ok(), "{r}");
            assert!(!r.message.trim().is_empty(), "{}: a rejection without a reason", path.display());
            rejected += 1;
        }
        if g.included.is_empty() {
            continue;
        }
        generated += 1;
        for line in asm_instructions(&g.source) {
            let ins = if line.starts_with('@') { line.split_once(' ').unwrap().1 } else { line.as_str() };
            let opcode = ins.split([' ', ';']).next().unwrap();
            let parts: Vec<&str> = opcode.split('.').collect();
            assert!(PTX.contains(&parts[0]), "{}: `{line}` is not a PTX instruction", path.display());
            if TYPED.contains(&parts[0]) {
                assert!(parts.iter().any(|p| is_type(p)), "{}: `{line}` has no type", path.display());
            }
        }
    }
    assert!(generated > 100 && rejected > 10, "{generated} generated, {rejected} rejected");
    let every_op = [
        "AliasFence",
        "AsyncCopy",
        "Barrier",
        "Branch",
        "ClusterBarrier",
        "CommitGroup",
        "CpAsyncArrive",
        "Exchange",
        "Fence",
        "Load",
        "LoadVector",
        "Local",
        "Matrix",
        "Mbarrier",
        "NoEffect",
        "Opaque",
        "ParamLoad",
        "Prefetch",
        "ProxyFence",
        "Rmw",
        "Store",
        "StoreVector",
        "TensormapCopy",
        "TensormapFence",
        "TensormapReplace",
        "Trap",
        "WaitGroup",
        "WarpBarrier",
        "Wgmma",
        "WgmmaFence",
    ];
    assert_eq!(variants.iter().map(String::as_str).collect::<Vec<_>>(), every_op, "the repository's tests lower to every operation");
}

/// A special register becomes the constant the model gave it: the harness's own thread and CTA
/// numbers are not the test's placement.
#[test]
fn special_registers_are_generated_as_their_placement_values() {
    let g = generate_text(
        "special",
        "PTX special\n{ x = 0; y = 0; }\n P0@cta 0,gpu 0,tid 5 | P1@cta 1,gpu 0 ;\n mov.u32 r0, %tid.x | mov.u32 r0, %ctaid.x ;\n st.relaxed.gpu.u32 [x], r0 | st.relaxed.gpu.u32 [y], r0 ;\nexists (x == 5 /\\ y == 1)\n",
    );
    assert!(g.rejected.is_empty(), "{:?}", g.rejected);
    assert!(g.source.contains("mov.u32 r0, 5;") && g.source.contains("mov.u32 r0, 1;"), "{}", g.source);
    assert!(!g.source.contains("%tid") && !g.source.contains("%ctaid"), "{}", g.source);
}

/// The instruction forms real PTX needs (issue 22, D4; tests/isa): each is generated as written,
/// its registers declared at the width its operands have (ptxas checks them:
/// tests/hw/compile_all.sh), or rejected with the reason.
#[test]
fn isa_forms_are_generated_with_the_widths_of_their_operands() {
    let cases: &[(&str, &[&str])] = &[
        (
            "cvta",
            &[
                "cvta.to.global.u64 rd1, rp;",
                "cvta.global.u64 rd2, rd1;",
                "cvta.shared.u64 rd3, rd5;",
                "cvta.to.shared.u64 rd6, rd3;",
                "cvta.to.shared::cta.u64 rd4, rd3;",
                ".reg .b64 rd5;",
                ".reg .b32 r2;",
            ],
        ),
        (
            "mul-wide",
            &[
                "mul.wide.u32 rd1, a, 7;",
                "mul.wide.s16 r2, rs2, 3;",
                "mul.hi.u64 rd3, -1, 2;",
                ".reg .b64 rd1;",
                ".reg .b32 a;",
                ".reg .b16 rs1;",
            ],
        ),
        (
            "mad",
            &["mad.lo.s32 r1, 7, 7, 1;", "mad.lo.u64 rd2, -9223372036854775808, 2, 1;", "mad.wide.u32 rd3, a, 2, 5;", ".reg .b64 rd3;"],
        ),
        ("mad-address", &["mad.lo.s64 rd2, rd1, 4, base;", "mul.wide.s32 rd3, r2, 4;", "cvt.u64.u32 rd1, r1;"]),
        ("cvt", &["cvt.s64.s32 rd1, a;", "cvt.u32.u64 r1, b;", "cvt.s8.u32 rs2, a;", ".reg .b16 rs2;", ".reg .b16 c;"]),
        ("not-neg", &["not.b32 r1, 7;", "not.b16 rs1, 0;", "not.b64 rd1, 0;", "not.pred p2, p1;", "neg.s32 r2, 7;", ".reg .pred p2;"]),
        ("selp", &["selp.b32 r1, 10, 20, p1;", "selp.s64 rd1, -1, 5, p1;", "selp.u16 rs1, 70000, 1, p1;", ".reg .b16 rs1;"]),
        // `ret`/`exit` end the test's code: the harness still records and joins after HW_END.
        ("ret-exit", &["@p1 bra HW_END;", "  bra HW_END;"]),
        ("bra-uni", &["bra.uni L1;"]),
        ("ld-nc-read-only", &["ld.global.nc.u32 r0, [", "ld.global.nc.L1::evict_last.u32 r1, ["]),
        ("ld-nc-vector", &["ld.global.nc.v2.u32 {r0, r1}, ["]),
        ("ld-volatile-mp", &["st.volatile.global.u32 [", "ld.volatile.global.u32 r0, ["]),
        (
            "mbarrier-old-spelling",
            &[
                "mbarrier.init.shared.b64 [r2], r3;",
                "mbarrier.try_wait.parity.shared::cta.b64 p1, [r6], r7;",
                ".reg .b32 r3;",
                ".reg .b32 r7;",
                ".reg .b64 rd1;",
            ],
        ),
        ("mapa-register", &["mapa.shared::cluster.u32 r1, r28, r29;", "mapa.u64 rd9, rd8, r30;", ".reg .b32 r28;", ".reg .b32 r30;"]),
        (
            "tma-register-operands",
            &["mbarrier.arrive.expect_tx.shared::cta.b64 rd6, [r10], r13;", "], r13, [r10], rs1;", ".reg .b16 rs1;", ".reg .b32 r13;"],
        ),
        ("arrive-state-unused", &["mbarrier.arrive.release.cta.shared::cta.b64 rd8, ["]),
        // A floating-point immediate is a bit pattern, as the model reads it.
        (
            "atom64-ops",
            &[
                "atom.global.cas.b64 rd2, [",
                "atom.global.min.s64 rd4, [",
                "], 0d3FF8000000000000;",
                "red.relaxed.gpu.global.add.u64 [",
                ".reg .b64 big;",
            ],
        ),
        (
            "mov-16-bit",
            &[
                "mov.u16 rs1, 3;",
                "mov.s16 rs3, 65480;",
                "add.u16 rs5, rs4, 2;",
                ".reg .b16 rs5;",
                "cvt.s64.s16 %2, rs3;",
                "cvt.u64.u16 %3, rs5;",
            ],
        ),
        ("subword-values", &["ld.u8 rs0, [", "ld.s16 rs6, [", "st.u16 [", ".reg .b16 rs6;"]),
    ];
    for (name, fragments) in cases {
        let part = test_part(&format!("tests/isa/{name}.litmus"));
        for f in *fragments {
            assert!(part.contains(f), "{name}: no `{f}` in\n{part}");
        }
    }
    let g = generate("tests/isa/elect-register-mask.litmus");
    assert!(g.included.is_empty(), "elect.sync is not generated");
    let r = g.rejected[0].to_string();
    assert!(r.contains("elect-register-mask.litmus:9:2:") && r.contains("elect.sync needs the whole warp"), "{r}");
}

/// ptxas refuses a constant bulk size that is not a multiple of 16 (undefined in the model): the
/// generator rejects it with that reason instead of writing a program that does not build.
#[test]
fn a_bulk_size_ptxas_refuses_is_rejected_with_the_reason() {
    let g = generate("tests/async/U23-prefetch-size-not-16.litmus");
    assert!(g.included.is_empty(), "{:?}", g.included);
    let r = g.rejected[0].to_string();
    assert!(r.contains("U23-prefetch-size-not-16.litmus:5:2:") && r.contains("ptxas refuses a bulk prefetch size of 8 bytes"), "{r}");
}

/// nvcc as `hw run` finds it (`--nvcc` aside: PATH, `$CUDA_HOME`, the PyPI copy that
/// tests/hw/compile_all.sh installs), or None.
fn nvcc() -> Option<std::path::PathBuf> {
    ptxmm::hw::runner::find_nvcc(None).ok()
}

/// The Dat3M k-tile loops (`cp.async-loop` k = 2, `loops` B = 4 ktile) compute their addresses in
/// untyped registers whose first write is a 32-bit `mul`: `r6 = 16·i + &g` (a global address) and
/// `r7`, `r8 = … + &buf`. Each must be 64-bit throughout: the H200 faulted ("illegal memory
/// access") on `cvt.u32.u64 hw_n2, r1; add.s32 r6, r6, hw_n2`, which truncated `&g`, and on the
/// `cp.async` that then read from the truncated address. Where nvcc is found, ptxas must accept
/// the 64-bit forms.
#[test]
fn address_arithmetic_in_untyped_registers_is_64_bits() {
    let dir = temp_dir("ktile-addresses");
    let points = [ptxmm::families::cp_async_loop(2), ptxmm::families::loop_point("ktile", 4)];
    let tests: Vec<_> = points
        .iter()
        .map(|p| {
            let path = dir.join(format!("{}.litmus", p.name));
            std::fs::write(&path, &p.source).unwrap();
            load(&path, &Default::default()).unwrap_or_else(|e| panic!("{e}"))
        })
        .collect();
    let hw: Vec<_> = tests.iter().map(|t| t.hw()).collect();
    let g = codegen::generate(&hw, &Incantations::default(), "sm_90a", "harness.cu", &ptxmm::Config::default_model());
    assert!(g.rejected.is_empty(), "{:?}", g.rejected);
    for p in &points {
        let start = g.source.find(&format!("// ===== test {} ", p.name)).unwrap_or_else(|| panic!("no section of {}", p.name));
        let end = g.source[start + 1..].find("// ===== test").map_or(g.source.len(), |e| start + 1 + e);
        let part = &g.source[start..end];
        for r in ["r1", "r2", "r5", "r6", "r7", "r8", "r10"] {
            assert!(part.contains(&format!(" .reg .b64 {r};")), "{}: the address register {r} is not 64-bit:\n{part}", p.name);
        }
        let lines = asm_instructions(part);
        let narrowed: Vec<&String> = lines.iter().filter(|l| l.starts_with("cvt.u32.u64")).collect();
        assert!(narrowed.is_empty(), "{}: an address is truncated: {narrowed:?}", p.name);
        for expected in
            ["mul.lo.s64 r6, hw_w1, 16;", "add.s64 r6, r6, r1;", "rem.s64 r7, hw_w1, 2;", "add.s64 r7, r7, r2;", "add.s64 r8, r8, r2;"]
        {
            assert!(lines.iter().any(|l| l == expected), "{}: no `{expected}` in {lines:#?}", p.name);
        }
        // The 32-bit loop counter is widened (zero-extended) where it enters the address.
        let widen = lines.iter().position(|l| l == "cvt.u64.u32 hw_w1, r4;").expect("r4 widened");
        assert_eq!(lines[widen + 1], "mul.lo.s64 r6, hw_w1, 16;", "{}", p.name);
    }
    let Some(nvcc) = nvcc() else {
        eprintln!("skipped: the ptxas check (no nvcc: install it with bash tests/hw/compile_all.sh, or put it on PATH)");
        return;
    };
    let source = dir.join("harness.cu");
    std::fs::write(&source, &g.source).unwrap();
    let out = Command::new(&nvcc)
        .args(["-O2", "-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a", "-c", "-o"])
        .arg(dir.join("harness.o"))
        .arg(&source)
        .output()
        .unwrap();
    assert!(out.status.success(), "nvcc {}:\n{}", nvcc.display(), String::from_utf8_lossy(&out.stderr));
}

/// The H200 read `s = 0` in tests/hints copy-mbarrier.fixed and arrive-underflow.fixed, whose
/// bulk copies into the observed `s` complete on an mbarrier that no thread waits on: the
/// generator rejects them with the reason (docs/hardware.md).
#[test]
fn a_bulk_copy_nothing_waits_for_into_an_observed_location_is_rejected() {
    for t in ["copy-mbarrier.fixed", "arrive-underflow.fixed"] {
        let g = generate(&format!("tests/hints/{t}.litmus"));
        assert!(g.included.is_empty(), "{t}: {:?}", g.included);
        let r = g.rejected[0].to_string();
        assert!(r.contains(&format!("{t}.litmus:6:2:")) && r.contains("on which no thread of the test waits"), "{r}");
    }
}
