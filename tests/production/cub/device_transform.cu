// CUB cub::DeviceTransform::Transform (CCCL 3.5): out[i] = op(in[i]) over float arrays, with a
// unary functor (y = 2x + 1). The host call below instantiates the dispatch, which emits the
// transform kernel of the algorithm CUB's sm_90 policy selects for this input.
#include <cub/device/device_transform.cuh>
#include <cuda/std/tuple>

struct ptxmm_axpb {
  __host__ __device__ float operator()(float x) const { return 2.0f * x + 1.0f; }
};

cudaError_t ptxmm_transform(const float* in, float* out, int num_items, cudaStream_t stream) {
  return cub::DeviceTransform::Transform(in, out, num_items, ptxmm_axpb{}, stream);
}

#ifdef PTXMM_HOST_LAYOUT
// Host-only: the sm_90 policy CUB selects, and the launch its dispatch computes
// (dispatch_transform.cuh, configure_async_kernel) for num_items = 1024: for so few items
// spread_out_items_per_thread gives min_items_per_thread whatever the occupancy, so
// tile = threads_per_block * min_items_per_thread, grid = ceil(num_items / tile), and
// dynamic smem = bulk_copy_dyn_smem_for_tile_size(tile, alignment 128); sm_90 launches with PDL.
#include <iostream>
int main() {
  using Sel = cub::detail::transform::policy_selector_from_types<false, true, cuda::std::tuple<const float*>, float*>;
  constexpr auto policy = Sel{}(cuda::compute_capability{9, 0});
  std::cout << policy << "\n";
  const long num_items = 1024;
  const int tpb = policy.async_copy.threads_per_block, ipt = policy.async_copy.min_items_per_thread;
  const int tile = tpb * ipt;
  const int align = cub::detail::transform::bulk_copy_alignment(cuda::compute_capability{9, 0});
  cuda::std::array<cub::detail::iterator_info, 1> inputs{cub::detail::make_iterator_info<const float*>()};
  const int smem = cub::detail::transform::bulk_copy_dyn_smem_for_tile_size<1>(inputs, tile, align);
  std::cout << "problem num_items=" << num_items << " items_per_thread=" << ipt << "\n";
  std::cout << "launch block=" << tpb << ",1,1 grid=" << (num_items + tile - 1) / tile << ",1,1 cluster=1,1,1 dynamic_smem="
            << smem << " (programmatic dependent launch)\n";
  return 0;
}
#endif
