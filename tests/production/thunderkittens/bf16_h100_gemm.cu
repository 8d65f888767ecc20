// ThunderKittens H100 BF16 GEMM (kernels/gemm/bf16_h100/bf16_h100_gemm.cu): C = A @ B, bf16 in,
// f32 accumulate, bf16 out, the prototype "load-compute-finish" (lcf) template with
// matmul_template<2,4,8> as the file's main() runs it: a 128x256 block per CTA (M_BLOCK = 2,
// N_BLOCK = 4 tiles of 64x64), two consumer warp groups (wgmma) plus one producer warp group
// (TMA), 4 input pipeline stages, setmaxnreg 40/232, persistent grid of 132 CTAs.
// We include the file as it is, with its main() turned into an uninstantiated template (so its
// benchmark and reference kernels are not emitted), and instantiate the kernel its inner_run
// launches: prototype::lcf::kernel<matmul_template<2,4,8>>.
#ifdef PTXMM_HOST_LAYOUT
#include "../host_layout.hpp"
#endif
// (`int main()` becomes `int ptxmm_unused = 0; template <class> int ptxmm_file_main()`)
#define main ptxmm_unused = 0; template <class PtxmmUnused> int ptxmm_file_main
#include "kernels/gemm/bf16_h100/bf16_h100_gemm.cu"
#undef main

using ptxmm_mmt = matmul_template<2, 4, 8>;
template __global__ void kittens::prototype::lcf::kernel<ptxmm_mmt>(const __grid_constant__ ptxmm_mmt::layout::globals);

#ifdef PTXMM_HOST_LAYOUT
#include <cstddef>
int main() {
  // M = N = 256, K = (4 stages + 1) * 64: two 128x256 tasks.
  size_t M = 256, N = 256, K = 320;
  using globals = ptxmm_mmt::layout::globals;
  using global_layout = ptxmm_mmt::layout::global_layout;
  global_layout Ag{(bf16*)ptxmm_fake_ptr(0xA), nullptr, nullptr, M, K};
  global_layout Bg{(bf16*)ptxmm_fake_ptr(0xB), nullptr, nullptr, K, N};
  global_layout Cg{(bf16*)ptxmm_fake_ptr(0xC), nullptr, nullptr, M, N};
  globals G{Ag, Bg, Cg};
  std::printf("problem M=%zu N=%zu K=%zu\n", M, N, K);
  std::printf("launch block=%d,1,1 grid=%u,1,1 cluster=1,1,1 dynamic_smem=%d\n",
              kittens::prototype::detail::NUM_THREADS_v<ptxmm_mmt>, ptxmm_mmt::grid(M, N, K).x, MAX_SHARED_MEMORY - 1024);
  std::printf("sizeof(globals)=%zu alignof=%zu; A at %zu, B at %zu, C at %zu (each gl %zu B: raw_ptr +%zu, rows +%zu, cols +%zu, tma_descs +%zu)\n",
              sizeof(globals), alignof(globals), offsetof(globals, A), offsetof(globals, B), offsetof(globals, C),
              sizeof(global_layout), offsetof(global_layout, raw_ptr), offsetof(global_layout, rows_internal),
              offsetof(global_layout, cols_internal), offsetof(global_layout, tma_descs));
  ptxmm_scan_params(&G, sizeof(G));
  return 0;
}
#endif
