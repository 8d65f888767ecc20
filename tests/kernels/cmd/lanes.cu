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

// named (added after the two above, which keep their lines): a named barrier with a thread
// count across two warps (CUTLASS's NamedBarrier). The 32 lanes of warp 0 store their words and
// arrive (`bar.arrive 1, 64`); the 32 lanes of warp 1 wait (`bar.sync 1, 64`) and read them.
// -DBUG: the barrier counts 96 threads, which never come: warp 1 waits forever.
#ifdef BUG
#define NAMED_THREADS "96"
#else
#define NAMED_THREADS "64"
#endif

__global__ void named(int* out) {
  __shared__ int word[32];
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp == 0) {
    word[lane] = lane + 1;
    asm volatile("bar.arrive 1, " NAMED_THREADS ";" ::: "memory");
  } else {
    asm volatile("bar.sync 1, " NAMED_THREADS ";" ::: "memory");
    out[lane] = word[lane];
  }
}
