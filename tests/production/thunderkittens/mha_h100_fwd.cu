// ThunderKittens H100 attention forward (kernels/attention/mha_h100/mha_h100.cu,
// fwd_attend_ker<64, false>): non-causal MHA forward, bf16 Q/K/V/O, f32 softmax, head dim 64,
// one producer warp group (TMA loads of K/V through a 4-stage ring of semaphores = mbarriers,
// setmaxnreg 24) and three consumer warp groups (wgmma, setmaxnreg 240), each consumer owning a
// 64-row Q tile; the log-sum-exp L is written for the backward pass.
// We include the file as it is (standalone mode: it then includes its harness.impl), with the
// harness's main() turned into an uninstantiated template, and instantiate the kernel the
// harness launches for ATTN_D = 64, causal = false.
#ifdef PTXMM_HOST_LAYOUT
#include "../host_layout.hpp"
#endif
// (`int main(...)` becomes `int ptxmm_unused = 0; template <class> int ptxmm_file_main(...)`)
#define main ptxmm_unused = 0; template <class PtxmmUnused> int ptxmm_file_main
#include "kernels/attention/mha_h100/mha_h100.cu"
#undef main

template __global__ void fwd_attend_ker<64, false>(const __grid_constant__ fwd_globals<64>);

#ifdef PTXMM_HOST_LAYOUT
#include <cstddef>
int main() {
  // B = 1, H = 1, N = 768 (4 CTAs of 3 x 64 query rows; the K/V loop runs N / 128 = 6 >= stages + 1
  // times), D = 64; the harness's launch: grid (N / (CONSUMER_WARPGROUPS * 16 * 4), H, B),
  // block 32 * NUM_WORKERS, dynamic smem MAX_SHARED_MEMORY - 1024.
  const int B = 1, H = 1, N = 768, D = 64;
  using G = fwd_globals<D>;
  G::q_gl qg{(bf16*)ptxmm_fake_ptr(0xA), B, H, N, D};
  G::k_gl kg{(bf16*)ptxmm_fake_ptr(0xB), B, H, N, D};
  G::v_gl vg{(bf16*)ptxmm_fake_ptr(0xC), B, H, N, D};
  G::l_gl lg{(float*)ptxmm_fake_ptr(0xE), B, H, 1, N};
  G::o_gl og{(bf16*)ptxmm_fake_ptr(0xD), B, H, N, D};
  G g{qg, kg, vg, lg, og, N, 1};
  std::printf("problem B=%d H=%d N=%d D=%d\n", B, H, N, D);
  std::printf("launch block=%d,1,1 grid=%d,%d,%d cluster=1,1,1 dynamic_smem=%d\n", 32 * NUM_WORKERS,
              N / (CONSUMER_WARPGROUPS * kittens::TILE_ROW_DIM<bf16> * 4), H, B, kittens::MAX_SHARED_MEMORY - 1024);
  std::printf("sizeof(fwd_globals<64>)=%zu alignof=%zu; q at %zu, k at %zu, v at %zu, l at %zu, o at %zu, N at %zu, hr at %zu\n",
              sizeof(G), alignof(G), offsetof(G, q), offsetof(G, k), offsetof(G, v), offsetof(G, l), offsetof(G, o),
              offsetof(G, N), offsetof(G, hr));
  ptxmm_scan_params(&g, sizeof(g));
  return 0;
}
#endif
