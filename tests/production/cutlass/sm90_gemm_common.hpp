// Shared by the CUTLASS 3.x sm90 instantiations of this folder (ptxmm production kernel set).
// Each .cu defines SCHEDULE_* macros and includes this file; the file builds the GEMM with the
// CollectiveBuilder as CUTLASS's examples 48/49 do and explicitly instantiates
// cutlass::device_kernel<GemmKernel>, the __global__ that GemmUniversalAdapter launches.
// Compiled with -DPTXMM_HOST_LAYOUT (host only, no GPU) it is instead a program that prints the
// launch facts the manifest records: sizeof(SharedStorage), block size, cluster shape, stages,
// and the byte offsets of the Params fields.
#pragma once
#include "cutlass/cutlass.h"
#include "cute/tensor.hpp"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/device_kernel.h"
#ifdef PTXMM_HOST_LAYOUT
#include <cstdio>
#include <cstddef>
#endif

using namespace cute;

using ElementA = cutlass::bfloat16_t;
using ElementB = cutlass::bfloat16_t;
using ElementC = cutlass::bfloat16_t;
using ElementD = cutlass::bfloat16_t;
using ElementAccumulator = float;
using ElementCompute = float;
using LayoutA = cutlass::layout::RowMajor;     // A: M x K, K contiguous
using LayoutB = cutlass::layout::ColumnMajor;  // B: K x N, K contiguous
using LayoutC = cutlass::layout::ColumnMajor;
using LayoutD = cutlass::layout::ColumnMajor;
constexpr int AlignmentA = 16 / sizeof(ElementA);
constexpr int AlignmentB = 16 / sizeof(ElementB);
constexpr int AlignmentC = 16 / sizeof(ElementC);
constexpr int AlignmentD = 16 / sizeof(ElementD);

using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto,
    ElementAccumulator, ElementCompute,
    ElementC, LayoutC, AlignmentC,
    ElementD, LayoutD, AlignmentD,
    EpilogueSchedule,
    cutlass::epilogue::fusion::LinearCombination<ElementD, ElementCompute, ElementC, ElementCompute>
  >::CollectiveOp;

using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    ElementA, LayoutA, AlignmentA,
    ElementB, LayoutB, AlignmentB,
    ElementAccumulator,
    TileShape, ClusterShape,
    StageCount,
    MainloopSchedule
  >::CollectiveOp;

using GemmKernel = cutlass::gemm::kernel::GemmUniversal<
    Shape<int,int,int,int>,   // M, N, K, L
    CollectiveMainloop,
    CollectiveEpilogue,
    TileScheduler>;

// The kernel GemmUniversalAdapter<GemmKernel> launches.
template __global__ void cutlass::device_kernel<GemmKernel>(CUTLASS_GRID_CONSTANT GemmKernel::Params const);

#ifdef PTXMM_HOST_LAYOUT
#include "cutlass/util/packed_stride.hpp"
#include "../host_layout.hpp"

int main(int argc, char** argv) {
  using P = GemmKernel::Params;
  using MP = CollectiveMainloop::Params;
  using EP = CollectiveEpilogue::Params;
  // The problem the manifest launches: M = N = 256, K = (Stages + 1) * tileK, L = 1.
  int const Stages = CollectiveMainloop::DispatchPolicy::Stages;
  int const M = 256, N = 256, K = (Stages + 1) * int(size<2>(TileShape{})), L = 1;
  std::printf("problem M=%d N=%d K=%d L=%d\n", M, N, K, L);
  std::printf("sizeof_Params=%zu alignof_Params=%zu\n", sizeof(P), alignof(P));
  std::printf("SharedStorageSize=%zu (dynamic shared memory)\n", (size_t)GemmKernel::SharedStorageSize);
  std::printf("MaxThreadsPerBlock=%d MinBlocksPerMultiprocessor=%d\n",
              (int)GemmKernel::MaxThreadsPerBlock, (int)GemmKernel::MinBlocksPerMultiprocessor);
  std::printf("Stages=%d TileShape=%d,%d,%d ClusterShape=%d,%d,%d\n", Stages,
              (int)size<0>(TileShape{}), (int)size<1>(TileShape{}), (int)size<2>(TileShape{}),
              (int)size<0>(ClusterShape{}), (int)size<1>(ClusterShape{}), (int)size<2>(ClusterShape{}));
  std::printf("off problem_shape=%zu mainloop=%zu epilogue=%zu (sizes %zu %zu %zu)\n",
              offsetof(P, problem_shape), offsetof(P, mainloop), offsetof(P, epilogue),
              sizeof(P::problem_shape), sizeof(MP), sizeof(EP));
  std::printf("mainloop+: tma_load_a=%zu (%zu B) tma_load_b=%zu (%zu B) tma_transaction_bytes=%zu\n",
              offsetof(MP, tma_load_a), sizeof(MP::tma_load_a), offsetof(MP, tma_load_b),
              sizeof(MP::tma_load_b), offsetof(MP, tma_transaction_bytes));
  PTXMM_PRINT_FIELDS

  // Build the Params the host would pass, with fake (aligned) device pointers: the
  // cuTensorMapEncodeTiled of host_layout.hpp prints each tensor map and tags it, so the
  // offsets of the maps inside Params are found by scanning.
  using StrideA = typename GemmKernel::StrideA;
  using StrideB = typename GemmKernel::StrideB;
  using StrideC = typename GemmKernel::StrideC;
  using StrideD = typename GemmKernel::StrideD;
  auto dA = cutlass::make_cute_packed_stride(StrideA{}, cute::make_shape(M, K, L));
  auto dB = cutlass::make_cute_packed_stride(StrideB{}, cute::make_shape(N, K, L));
  auto dC = cutlass::make_cute_packed_stride(StrideC{}, cute::make_shape(M, N, L));
  auto dD = cutlass::make_cute_packed_stride(StrideD{}, cute::make_shape(M, N, L));
  typename GemmKernel::Arguments args{};
  args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
  args.problem_shape = {M, N, K, L};
  args.mainloop = {(ElementA const*)ptxmm_fake_ptr(0xA), dA, (ElementB const*)ptxmm_fake_ptr(0xB), dB};
  args.epilogue = {{1.5f, 0.25f}, (ElementC const*)ptxmm_fake_ptr(0xC), dC, (ElementD*)ptxmm_fake_ptr(0xD), dD};
  args.hw_info.device_id = 0;
  args.hw_info.sm_count = 132;  // H100/H200 SXM
  P params = GemmKernel::to_underlying_arguments(args, nullptr);
  dim3 grid = GemmKernel::get_grid_shape(params);
  dim3 block = GemmKernel::get_block_shape();
  std::printf("launch block=%u,%u,%u grid=%u,%u,%u cluster=%d,%d,%d dynamic_smem=%zu\n", block.x, block.y, block.z,
              grid.x, grid.y, grid.z, (int)size<0>(ClusterShape{}), (int)size<1>(ClusterShape{}),
              (int)size<2>(ClusterShape{}), (size_t)GemmKernel::SharedStorageSize);
  std::printf("scan of Params (alpha=1.5, beta=0.25 are passed so that they can be found):\n");
  ptxmm_scan_params(&params, sizeof(params));
  return 0;
}
#endif
