// CUTLASS 3.x sm90: warp-specialized TMA GEMM (KernelTmaWarpSpecialized, not persistent), as the
// "Warp-specialized TMA schedule" runner of example 49: bf16 x bf16 -> bf16, f32 accumulate,
// D = alpha*A*B + beta*C, tile 128x128x64, cluster 1x1x1, 4 stages, epilogue without shared
// memory (NoSmemWarpSpecialized). One producer warp group (TMA) and one consumer warp group (wgmma).
#include "cutlass/cutlass.h"
#include "cute/tensor.hpp"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/epilogue/dispatch_policy.hpp"
#include "cutlass/gemm/kernel/tile_scheduler.hpp"
using TileShape = cute::Shape<cute::_128, cute::_128, cute::_64>;
using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;
using StageCount = cute::Int<4>;
using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecialized;
using EpilogueSchedule = cutlass::epilogue::NoSmemWarpSpecialized;
using TileScheduler = void;
#define PTXMM_PRINT_FIELDS \
  std::printf("epilogue (DefaultEpilogue Arguments): thread=%zu (size %zu) ptr_C=%zu dC=%zu ptr_D=%zu dD=%zu\n", \
              offsetof(EP, thread), sizeof(EP::thread), offsetof(EP, ptr_C), offsetof(EP, dC), \
              offsetof(EP, ptr_D), offsetof(EP, dD));
#include "sm90_gemm_common.hpp"
