//! CUDA C++ harness generation: each test thread's column becomes one inline-PTX block, run by
//! lane 0 of its own warp; the host program launches many instances per launch and many
//! launches, and prints the histogram of final states in the machine-readable form that
//! `hw::report` parses (`docs/hardware.md`).
//!
//! `layout` places the test on the device, `thread` writes a thread's asm block, and `instr`
//! decides each instruction's PTX from its lowered operation; this file writes a test's
//! namespace (tables, initial state, kernel) and the whole program.

mod instr;
mod layout;
mod thread;

use super::{reject, HwTest, Incantations, Rejection};
use crate::config::Config;
use crate::litmus::ast::InitItem;
use crate::program::{Observable, Program, Space, VariableKind};
use layout::{layout, Layout};
use std::fmt::Write;

/// The observables read back: the condition's, the filter's and `locations`', in the order of
/// the model's final states.
pub fn observables(p: &Program) -> Vec<Observable> {
    crate::program::naming::observables(p)
}

/// Rejects what no harness can hold: proxy aliases (the one that cannot exist on the device at
/// all named first), more threads than the hang mask has bits, a placement with no device form
/// (`layout`), tensor maps without a faithful device form, observables the harness cannot read
/// back. Returns the test's layout and observables.
fn check_test(test: &HwTest, config: &Config) -> Result<(Layout, Vec<Observable>), Rejection> {
    let p = test.program;
    let mut aliases: Vec<(usize, &crate::diag::Spanned<InitItem>, String)> = Vec::new();
    for item in &test.ast.init {
        if let InitItem::Alias { name, proxy, target } = &item.node {
            let (rank, why) = match proxy.node.as_str() {
                "surface" => (0, "surface accesses need a CUDA array, which generic loads and stores cannot alias"),
                "constant" => (1, "constant memory cannot be written by the device's generic stores"),
                "texture" => (2, "texture fetches over a variable's memory (a texture object) are not generated"),
                _ => (3, "a second virtual address of the same memory needs the CUDA virtual-memory API (the same allocation mapped twice), which the harness does not use"),
            };
            aliases.push((rank, item, format!("`{} @ {} aliases {}`: {why}", name.node, proxy.node, target.node)));
        }
    }
    aliases.sort_by_key(|a| a.0);
    if let Some((_, item, message)) = aliases.first() {
        return Err(reject(p, item.span, message.clone()));
    }
    if p.threads.len() > 32 {
        return Err(reject(p, p.threads[32].span, "more than 32 threads (the hang mask has one bit per thread)"));
    }
    let layout = layout(test)?;
    super::tensor::check(test, config)?;
    let obs = observables(p);
    for o in &obs {
        if let Observable::Location(ph) = o {
            let l = p.locations.iter().find(|l| l.physical == *ph).map(|l| l.variable).unwrap_or(0);
            if p.variables[l].kind == VariableKind::Mbarrier {
                return Err(reject(p, p.variables[l].span, "an mbarrier object as an observable is not read back"));
            }
            if p.is_tensor_map(l) {
                return Err(reject(
                    p,
                    p.variables[l].span,
                    "a tensor map as an observable is not read back (on the device its word is the encoded descriptor)",
                ));
            }
        }
    }
    Ok((layout, obs))
}

/// The test's constants and placement tables: its shape, the observables' names, the CTA at
/// each (cluster, rank), and each warp's role.
fn shape_tables(s: &mut String, p: &Program, layout: &Layout, obs: &[Observable]) {
    let _ = writeln!(s, "constexpr const char* kName = \"{}\";", p.name.replace('"', "'"));
    let _ = writeln!(s, "constexpr int kThreads = {};", p.threads.len());
    let _ = writeln!(s, "constexpr int kCtas = {};", layout.ctas.len());
    let _ = writeln!(s, "constexpr int kClusters = {};", layout.clusters.len());
    let _ = writeln!(s, "constexpr int kClusterDim = {};", layout.cluster_dim);
    let _ = writeln!(s, "constexpr int kTestWarps = {};", layout.max_warps());
    let _ = writeln!(s, "constexpr int kObs = {};", obs.len());
    let _ = writeln!(s, "constexpr size_t kGlobalStride = {};", layout.global_stride);
    let _ = writeln!(s, "constexpr int kSmemBytes = {};", layout.smem_bytes);
    let names: Vec<String> = obs.iter().map(|o| format!("\"{}\"", p.observable_name(o))).collect();
    let _ = writeln!(s, "static const char* kObsNames[] = {{{}nullptr}};", names.iter().map(|n| format!("{n}, ")).collect::<String>());
    // CTA at (cluster, rank), -1 for an idle rank.
    let mut at = Vec::new();
    for c in &layout.clusters {
        for r in 0..layout.cluster_dim {
            at.push(c.get(r).map(|&d| d as i64).unwrap_or(-1).to_string());
        }
    }
    let _ = writeln!(s, "__device__ const int kCtaAt[] = {{{}}};", at.join(", "));
    let mut roles = Vec::new();
    for w in &layout.warps {
        for i in 0..layout.max_warps() {
            roles.push(w.get(i).map(|&t| t as i64).unwrap_or(if i == 0 { -2 } else { -1 }).to_string());
        }
    }
    let _ = writeln!(s, "// role of warp w of dense CTA c: kRole[c * kTestWarps + w] (thread index; -2 keeper, -1 idle)");
    let _ = writeln!(s, "__device__ const int kRole[] = {{{}}};", roles.join(", "));
    let warps_of: Vec<String> = layout.warps.iter().map(|w| w.len().max(1).to_string()).collect();
    let _ = writeln!(s, "__device__ const int kWarpsOf[] = {{{}}};", warps_of.join(", "));
}

/// An instance's initial state: the image of its global block (words), and the device lines
/// that initialise each CTA's shared variables and mbarriers.
struct InitialState {
    image: Vec<u32>,
    shared_init: Vec<String>,
    mbar_init: Vec<String>,
}

fn initial_state(test: &HwTest, layout: &Layout) -> InitialState {
    let p = test.program;
    let mut image = vec![0u32; (layout.global_stride / 4) as usize];
    let mut shared_init: Vec<String> = Vec::new();
    let mut mbar_init: Vec<String> = Vec::new();
    for (i, v) in p.variables.iter().enumerate() {
        let words: Vec<u32> = (0..v.size / 4)
            .map(|w| p.locations.get(v.first_location + w as usize).map(|l| p.physical[l.physical].init as u32).unwrap_or(0))
            .collect();
        match v.space {
            Space::Global => {
                let base = (layout.global_off[&i] / 4) as usize;
                for (w, val) in words.iter().enumerate() {
                    image[base + w] = *val;
                }
            }
            Space::Shared { cta } => {
                let d = layout.dense_cta(cta);
                let off = p.window_offset(i).unwrap_or(0);
                if v.kind == VariableKind::Mbarrier {
                    let decl = test.ast.init.iter().find_map(|it| match &it.node {
                        InitItem::Variable(d) if d.name.node == v.name => d.mbarrier.as_ref().and_then(|m| m.node),
                        _ => None,
                    });
                    match decl {
                        Some(count) => mbar_init.push(format!("    if (cta == {d}) mbar_init({off}, {count});")),
                        None => shared_init.push(format!(
                            "    if (cta == {d}) {{ *(unsigned long long*)(smem + {off}) = 0; }} // {} (not initialised)",
                            v.name
                        )),
                    }
                } else {
                    for (w, val) in words.iter().enumerate() {
                        shared_init.push(format!("    if (cta == {d}) ((unsigned*)(smem + {off}))[{w}] = {val}u; // {}", v.name));
                    }
                }
            }
        }
    }
    InitialState { image, shared_init, mbar_init }
}

/// Where each location observable is read back: `{slot, byte offset}` in the instance's
/// global block, and (slot, dense CTA, window offset) in shared memory.
fn observable_places(p: &Program, layout: &Layout, obs: &[Observable]) -> (Vec<String>, Vec<(usize, usize, i64)>) {
    let mut global_obs = Vec::new();
    let mut shared_obs = Vec::new();
    for (k, o) in obs.iter().enumerate() {
        if let Observable::Location(ph) = o {
            let Some(l) = p.locations.iter().find(|l| l.physical == *ph) else { continue };
            let v = &p.variables[l.variable];
            match v.space {
                Space::Global => global_obs.push(format!("{{{k}, {}}}", layout.global_off[&l.variable] + l.offset)),
                Space::Shared { cta } => shared_obs.push((k, layout.dense_cta(cta), p.window_offset(l.variable).unwrap_or(0) + l.offset)),
            }
        }
    }
    (global_obs, shared_obs)
}

/// The kernel: shared-memory initialisation, the setup barrier, stress and keeper warps, each
/// test warp's thread function, and the read-back of shared observables.
fn kernel(
    s: &mut String,
    p: &Program,
    layout: &Layout,
    init: &InitialState,
    tensor_acquire: &[String],
    shared_obs: &[(usize, usize, i64)],
) {
    let cluster_attr = if layout.cluster_dim > 1 { format!(" __cluster_dims__({}, 1, 1)", layout.cluster_dim) } else { String::new() };
    let _ = writeln!(s, "__global__ void{cluster_attr} __launch_bounds__(1024) kernel(Launch L) {{");
    let _ = writeln!(s, "  __shared__ __align__(128) unsigned char smem[kSmemBytes];");
    let _ = writeln!(s, "  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;");
    let _ = writeln!(s, "  const int group = L.group_map[blockIdx.x / kClusterDim];");
    let _ =
        writeln!(s, "  const int inst = group / kClusters, cta = kCtaAt[(group % kClusters) * kClusterDim + blockIdx.x % kClusterDim];");
    let _ = writeln!(s, "  if (threadIdx.x == 0 && cta >= 0) {{");
    for l in &init.shared_init {
        let _ = writeln!(s, "{l}");
    }
    for l in &init.mbar_init {
        let _ = writeln!(s, "{l}");
    }
    let _ = writeln!(s, "    asm volatile(\"fence.mbarrier_init.release.cluster;\\n\\tfence.proxy.async.shared::cta;\" ::: \"memory\");");
    let _ = writeln!(s, "  }}");
    let _ = writeln!(s, "  setup_sync<kClusterDim>();");
    let _ = writeln!(s, "  const bool tester = cta >= 0 && warp < kWarpsOf[cta] && lane == 0;");
    let _ = writeln!(s, "  if (!tester) {{");
    let _ = writeln!(s, "    if (cta >= 0 && warp >= kTestWarps) stress(L, inst);");
    let _ = writeln!(s, "    return;");
    let _ = writeln!(s, "  }}");
    let _ = writeln!(s, "  const int role = kRole[cta * kTestWarps + warp];");
    let _ = writeln!(s, "  unsigned char* gbase = L.arena + (size_t)inst * kGlobalStride;");
    let _ = writeln!(s, "  unsigned long long* res = L.results + (size_t)inst * kObs;");
    let _ = writeln!(s, "  if (role >= 0) {{");
    for l in tensor_acquire {
        let _ = writeln!(s, "{l}");
    }
    let _ = writeln!(s, "    if (L.start_barrier) start_barrier(L.start + inst, kThreads, L.bound);");
    let _ = writeln!(s, "    switch (role) {{");
    for (t, th) in p.threads.iter().enumerate() {
        let _ = writeln!(s, "      case {t}: thread_P{}(gbase, smem, res, L.hang + inst, L.bound); break;", th.id);
    }
    let _ = writeln!(s, "    }}");
    let _ = writeln!(s, "  }}");
    let _ = writeln!(s, "  end_sync<kClusterDim>(kWarpsOf[cta]);");
    if !shared_obs.is_empty() {
        let _ = writeln!(s, "  if (warp == 0) {{");
        for (k, d, off) in shared_obs {
            let _ = writeln!(s, "    if (cta == {d}) res[{k}] = *(volatile unsigned*)(smem + {off});");
        }
        let _ = writeln!(s, "  }}");
        // No CTA of a cluster exits while a peer may still read its shared memory.
        let _ = writeln!(s, "  end_sync<kClusterDim>(kWarpsOf[cta]);");
    }
    let _ = writeln!(s, "}}");
}

/// Generate one test's namespace (device code, tables, and its `run_NAME` host function).
fn test_unit(test: &HwTest, index: usize, arch: &str, config: &Config) -> Result<String, Rejection> {
    let p = test.program;
    let (layout, obs) = check_test(test, config)?;
    let mut s = String::new();
    let _ = writeln!(s, "// ===== test {} ({}) =====", p.name, p.source.name());
    let _ = writeln!(s, "namespace t{index} {{");
    shape_tables(&mut s, p, &layout, &obs);
    let init = initial_state(test, &layout);
    let img: Vec<String> = init.image.iter().map(|w| format!("{w}u")).collect();
    let _ = writeln!(s, "static const unsigned kGlobalImage[] = {{{}}};", img.join(", "));
    let (global_obs, shared_obs) = observable_places(p, &layout, &obs);
    let _ = writeln!(s, "// global-location observables: {{slot, byte offset in the instance block}}");
    let _ = writeln!(
        s,
        "static const int kGlobalObs[][2] = {{{}}};",
        if global_obs.is_empty() { "{-1, 0}".to_string() } else { global_obs.join(", ") }
    );
    let (tensor_table, tensor_acquire) = super::tensor::host_table(p, &layout.global_off);
    s.push_str(&tensor_table);
    for t in 0..p.threads.len() {
        s.push_str(&thread::thread_function(test, &layout, t, &obs, arch_major(arch))?);
    }
    kernel(&mut s, p, &layout, &init, &tensor_acquire, &shared_obs);
    let _ = writeln!(s, "static int run(const Options& o) {{");
    let _ = writeln!(
        s,
        "  return run_test(o, kName, kThreads, kCtas, kClusters, kClusterDim, 32 * (kTestWarps + o.stress_warps), kObs, kObsNames, kGlobalStride, kGlobalImage, kGlobalObs, sizeof(kGlobalObs) / sizeof(kGlobalObs[0]), (const void*)kernel{});",
        if p.tensor_maps.is_empty() { String::new() } else { ", kTensorMaps, sizeof(kTensorMaps) / sizeof(kTensorMaps[0])".to_string() }
    );
    let _ = writeln!(s, "}}");
    let _ = writeln!(s, "}} // namespace t{index}");
    Ok(s)
}

/// The numeric part of `sm_90a` (90); 0 when there is none.
fn arch_major(arch: &str) -> u32 {
    arch.trim_start_matches("sm_")
        .trim_start_matches("compute_")
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or(0)
}

/// Outcome of generating one compilation unit.
pub struct Generated {
    pub source: String,
    /// Tests included, by name.
    pub included: Vec<String>,
    pub rejected: Vec<Rejection>,
}

/// Generate one self-contained CUDA program holding every test that can be generated (tests
/// that cannot are listed in `rejected`). `config` decides what only the model can tell (a
/// store to a tensor map while a copy reading it is in flight).
pub fn generate(tests: &[HwTest], inc: &Incantations, arch: &str, file_name: &str, config: &Config) -> Generated {
    let mut units = Vec::new();
    let mut included = Vec::new();
    let mut rejected = Vec::new();
    for t in tests {
        match test_unit(t, units.len(), arch, config) {
            Ok(u) => {
                units.push(u);
                included.push(t.program.name.clone());
            }
            Err(r) => rejected.push(r),
        }
    }
    let mut s = String::new();
    let _ = writeln!(s, "// Generated by ptxmm hw gen: a hardware litmus harness (docs/hardware.md).");
    let _ = writeln!(s, "// Tests: {}", included.join(", "));
    let _ = writeln!(
        s,
        "// Build: nvcc -O2 -std=c++17 {} -o {} {file_name}",
        super::runner::gencode(arch).join(" "),
        file_name.trim_end_matches(".cu")
    );
    let _ = writeln!(
        s,
        "// Run:   ./{} [--iterations N] [--instances N] [--no-start-barrier] [--shuffle] [--stress N] [--seed S] [--bound N] [TEST...]",
        file_name.trim_end_matches(".cu")
    );
    let _ = writeln!(s, "// Each test thread runs as lane 0 of its own warp, its column as one inline-PTX block;");
    let _ = writeln!(s, "// the output is the histogram of final states read by `ptxmm hw run`.");
    s.push_str(&prelude(inc));
    for u in &units {
        s.push_str(u);
    }
    let _ = writeln!(s, "int main(int argc, char** argv) {{");
    let _ = writeln!(s, "  Options o = parse_options(argc, argv);");
    let _ = writeln!(s, "  if (!device_banner()) return 3;");
    let _ = writeln!(s, "  int status = 0;");
    for (i, name) in included.iter().enumerate() {
        let _ = writeln!(s, "  if (selected(o, \"{}\")) status |= t{i}::run(o);", name.replace('"', "'"));
    }
    let _ = writeln!(s, "  return status;");
    let _ = writeln!(s, "}}");
    Generated { source: s, included, rejected }
}

fn prelude(inc: &Incantations) -> String {
    include_str!("prelude.cuh")
        .replace("@ITERATIONS@", &inc.iterations.to_string())
        .replace("@INSTANCES@", &inc.instances.to_string())
        .replace("@START_BARRIER@", if inc.start_barrier { "true" } else { "false" })
        .replace("@SHUFFLE@", if inc.shuffle { "true" } else { "false" })
        .replace("@STRESS@", &inc.stress_warps.to_string())
        .replace("@BOUND@", &inc.spin_bound.to_string())
        .replace("@SEED@", &inc.seed.to_string())
}
