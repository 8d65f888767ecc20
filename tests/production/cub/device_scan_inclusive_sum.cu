// CUB cub::DeviceScan::InclusiveSum (CCCL 3.5) over int32: the single-pass decoupled look-back
// scan. The host call below instantiates the dispatch, which emits the tile-state initialization
// kernel (DeviceScanInitKernel) and the scan kernel proper (DeviceScanKernel: each CTA scans its
// tile, publishes its aggregate/prefix in the tile-status array in global memory with
// release/acquire flags, and looks back over its predecessors' status words).
#include <cub/device/device_scan.cuh>

cudaError_t ptxmm_inclusive_sum(void* d_temp, size_t& temp_bytes, const int* in, int* out, int num_items,
                                cudaStream_t stream) {
  return cub::DeviceScan::InclusiveSum(d_temp, temp_bytes, in, out, num_items, stream);
}

#ifdef PTXMM_HOST_LAYOUT
// Host-only: the sm_90 policy CUB selects (look-back scan) and the two launches its dispatch
// makes (dispatch_scan.cuh, Invoke) for num_items = 4 tiles: DeviceScanInitKernel on
// ceil(num_tiles / 128) blocks of 128 threads, then DeviceScanKernel on num_tiles blocks of
// threads_per_block threads, no dynamic shared memory, both with PDL on sm_90.
#include <iostream>
int main() {
  using Sel = cub::detail::scan::policy_selector_from_types<const int*, int*, int, unsigned, cuda::std::plus<>, false>;
  constexpr auto policy = Sel{}(cuda::compute_capability{9, 0});
  std::cout << policy << "\n";
  const int tile = policy.lookback.threads_per_block * policy.lookback.items_per_thread;
  const int num_tiles = 4, num_items = num_tiles * tile;
  std::cout << "problem num_items=" << num_items << " tile_items=" << tile << " num_tiles=" << num_tiles << "\n";
  std::cout << "init launch block=128,1,1 grid=" << (num_tiles + 127) / 128 << ",1,1 dynamic_smem=0\n";
  std::cout << "scan launch block=" << policy.lookback.threads_per_block << ",1,1 grid=" << num_tiles
            << ",1,1 cluster=1,1,1 dynamic_smem=0\n";
  using TileState = cub::ScanTileState<int, true>;
  std::cout << "sizeof(ScanTileState<int>)=" << sizeof(TileState) << "\n";
  return 0;
}
#endif
