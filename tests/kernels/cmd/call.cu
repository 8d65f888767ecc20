// A call to a __noinline__ function (rejected by ptxmm kernel) and a second kernel: tests/kernel_cmd.rs.
// Compiled to call.ptx with nvcc -arch=sm_90a -ptx -O3 -lineinfo call.cu.
__device__ __noinline__ int helper(int* p) { return atomicAdd(p, 1); }
__global__ void k1(int* p) { if (threadIdx.x == 0) p[1] = helper(p); }
__global__ void __launch_bounds__(64) k2(int* p, int n) { if (threadIdx.x < n) p[threadIdx.x] = 1; }
