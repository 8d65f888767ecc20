// Two kernels whose lanes meet each other (issue 39), for `ptxmm kernel --lanes` (the default
// models lane 0, which meets no other lane):
// - neighbour: each lane stores its word of a shared array, then reads its neighbour's (lane
//   + 1). Correct: `__syncwarp()` (bar.warp.sync) orders the stores before the reads. -DBUG:
//   without it, lane i's read races with lane i + 1's store.
// - divergent: the lanes store, meet at `__syncthreads()` (bar.sync 0, `.aligned`), and read
//   their neighbour's word. -DBUG: only lanes 0-15 reach the barrier: an aligned barrier reached
//   by part of a warp is undefined (PTX ISA 9.7.13.1).
// Built as tests/kernels/build.sh builds its kernels (tests/kernel_cmd.rs checks the PTX):
//   nvcc -arch=sm_90a -ptx -std=c++17 -O3 -lineinfo [-DBUG] lanes.cu -o lanes{,-bug}.ptx
//   (then the `.file` path made relative)

__global__ void neighbour(int* out) {
  __shared__ int word[32];
  const unsigned lane = threadIdx.x % 32;
  word[lane] = lane + 1;
#ifndef BUG
  __syncwarp();
#endif
  out[lane] = word[(lane + 1) % 32];
}

__global__ void divergent(int* out) {
  __shared__ int word[32];
  const unsigned lane = threadIdx.x % 32;
  word[lane] = lane + 1;
#ifdef BUG
  if (lane < 16)
#endif
    __syncthreads();
  out[lane] = word[(lane + 1) % 32];
}
