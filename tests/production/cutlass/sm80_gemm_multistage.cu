// CUTLASS 2.x sm80: multistage tensor-core GEMM, cutlass::gemm::device::Gemm with arch::Sm80 as
// CUTLASS's ampere examples and profiler build it: f16 x f16 -> f16, f32 accumulate, A row-major,
// B column-major, C row-major, threadblock tile 128x128x32, warp tile 64x64x32 (4 warps),
// mma.sync 16x8x16, 3 stages of cp.async (MmaMultistage), epilogue LinearCombination
// (D = alpha*A*B + beta*C). The kernel is cutlass::Kernel<GemmKernel> (the one
// device::Gemm::run launches), with `extern __shared__` SharedStorage.
#include "cutlass/cutlass.h"
#include "cutlass/gemm/device/gemm.h"
#include "cutlass/epilogue/thread/linear_combination.h"
#include "cutlass/device_kernel.h"
#ifdef PTXMM_HOST_LAYOUT
#include <cstdio>
#include <cstddef>
#include "../host_layout.hpp"
#endif

using ElementA = cutlass::half_t;
using ElementB = cutlass::half_t;
using ElementC = cutlass::half_t;
using ElementAccumulator = float;
using Gemm = cutlass::gemm::device::Gemm<
    ElementA, cutlass::layout::RowMajor,
    ElementB, cutlass::layout::ColumnMajor,
    ElementC, cutlass::layout::RowMajor,
    ElementAccumulator,
    cutlass::arch::OpClassTensorOp,
    cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<128, 128, 32>,
    cutlass::gemm::GemmShape<64, 64, 32>,
    cutlass::gemm::GemmShape<16, 8, 16>,
    cutlass::epilogue::thread::LinearCombination<ElementC, 128 / cutlass::sizeof_bits<ElementC>::value,
                                                 ElementAccumulator, ElementAccumulator>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>,
    3>;
using GemmKernel = Gemm::GemmKernel;

template __global__ void cutlass::Kernel<GemmKernel>(GemmKernel::Params);

#ifdef PTXMM_HOST_LAYOUT
int main() {
  using P = GemmKernel::Params;
  int const Stages = GemmKernel::Mma::kStages;
  int const M = 256, N = 256, K = (Stages + 1) * GemmKernel::Mma::Shape::kK;
  std::printf("problem M=%d N=%d K=%d\n", M, N, K);
  std::printf("sizeof_Params=%zu alignof_Params=%zu\n", sizeof(P), alignof(P));
  std::printf("sizeof(SharedStorage)=%zu (dynamic shared memory)\n", sizeof(GemmKernel::SharedStorage));
  std::printf("kThreadCount=%d Stages=%d\n", (int)GemmKernel::kThreadCount, Stages);
  std::printf("off problem_size=%zu grid_tiled_shape=%zu swizzle_log_tile=%zu params_A=%zu (%zu B) ref_A=%zu (%zu B) "
              "params_B=%zu ref_B=%zu params_C=%zu (%zu B) ref_C=%zu params_D=%zu ref_D=%zu output_op=%zu (%zu B) "
              "semaphore=%zu gemm_k_size=%zu gather_A=%zu gather_B=%zu scatter_D=%zu\n",
              offsetof(P, problem_size), offsetof(P, grid_tiled_shape), offsetof(P, swizzle_log_tile),
              offsetof(P, params_A), sizeof(P::params_A), offsetof(P, ref_A), sizeof(P::ref_A),
              offsetof(P, params_B), offsetof(P, ref_B), offsetof(P, params_C), sizeof(P::params_C),
              offsetof(P, ref_C), offsetof(P, params_D), offsetof(P, ref_D), offsetof(P, output_op),
              sizeof(P::output_op), offsetof(P, semaphore), offsetof(P, gemm_k_size),
              offsetof(P, gather_A_indices), offsetof(P, gather_B_indices), offsetof(P, scatter_D_indices));
  cutlass::gemm::GemmCoord problem{M, N, K};
  Gemm::Arguments args{problem,
                       {(ElementA*)ptxmm_fake_ptr(0xA), K},
                       {(ElementB*)ptxmm_fake_ptr(0xB), K},
                       {(ElementC*)ptxmm_fake_ptr(0xC), N},
                       {(ElementC*)ptxmm_fake_ptr(0xD), N},
                       {1.5f, 0.25f}};
  Gemm::ThreadblockSwizzle swizzle;
  cutlass::gemm::GemmCoord grid_shape = swizzle.get_tiled_shape(
      problem, {Gemm::ThreadblockShape::kM, Gemm::ThreadblockShape::kN, Gemm::ThreadblockShape::kK}, 1);
  P params{problem, grid_shape, args.ref_A.non_const_ref(), args.ref_B.non_const_ref(),
           args.ref_C.non_const_ref(), args.ref_D, args.epilogue, nullptr};
  dim3 grid = swizzle.get_grid_shape(params.grid_tiled_shape);
  std::printf("launch block=%d,1,1 grid=%u,%u,%u cluster=1,1,1 dynamic_smem=%zu\n", (int)GemmKernel::kThreadCount,
              grid.x, grid.y, grid.z, sizeof(GemmKernel::SharedStorage));
  std::printf("gemm_k_size=%d swizzle_log_tile=%d\n", params.gemm_k_size, params.swizzle_log_tile);
  std::printf("scan of Params (alpha=1.5, beta=0.25 are passed so that they can be found):\n");
  ptxmm_scan_params(&params, sizeof(params));
  return 0;
}
#endif
