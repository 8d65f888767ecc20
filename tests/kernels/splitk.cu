// A split-K semaphore: each CTA writes its partial result, makes it visible at GPU scope with
// __threadfence, and counts itself in with atomicAdd on a semaphore; the CTA that arrives last
// (the add returned gridDim.x - 1) fences again and sums the partials.
// -DBUG: no __threadfence on either side: the last CTA may read a partial before it is written.
#include <cstdint>

__global__ void splitk(int* __restrict__ partial, unsigned* __restrict__ sem, int* __restrict__ out) {
  if (threadIdx.x != 0) return;
  partial[blockIdx.x] = blockIdx.x + 1;
#ifndef BUG
  __threadfence();
#endif
  const unsigned arrived = atomicAdd(sem, 1u);
  if (arrived == gridDim.x - 1) {
#ifndef BUG
    __threadfence();
#endif
    int sum = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) sum += ((volatile int*)partial)[b];
    *out = sum;
  }
}
