// Host-only helpers for the *_HOST_LAYOUT programs of tests/production (no GPU, no driver):
// a cuTensorMapEncodeTiled that prints the tensor map it is asked for and writes a tag in its
// first 8 bytes, and a scan of a parameter block that reports where the tags, fake pointers and
// scalars landed. Build with -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL so that CUTLASS/CuTe call
// this function instead of looking the driver up.
#pragma once
#include <cuda.h>
#include <cstdio>
#include <cstdint>
#include <cstring>

static int ptxmm_tmap_count = 0;
static inline void* ptxmm_fake_ptr(unsigned tag) { return (void*)(uintptr_t)(0x7f0000000000ull + ((uint64_t)tag << 24)); }
static const char* ptxmm_dtype(int t) {
  static const char* n[] = {"u8", "u16", "u32", "i32", "u64", "i64", "f16", "f32", "f64", "bf16", "f32ftz", "tf32", "tf32ftz"};
  return (t >= 0 && t < 13) ? n[t] : "other";
}
static const char* ptxmm_swz(int s) {
  static const char* n[] = {"none", "32B", "64B", "128B"};
  return (s >= 0 && s < 4) ? n[s] : "128B-atom";
}
extern "C" CUresult cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType dt, cuuint32_t rank, void* addr,
                                           const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                                           const cuuint32_t* estr, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                                           CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  int id = ptxmm_tmap_count++;
  std::printf("tensormap#%d: %s rank %u addr %p dims", id, ptxmm_dtype((int)dt), rank, addr);
  for (unsigned i = 0; i < rank; ++i) std::printf("%s%llu", i ? "x" : " ", (unsigned long long)dims[i]);
  std::printf(" strides(B)");
  for (unsigned i = 0; i + 1 < rank; ++i) std::printf(" %llu", (unsigned long long)strides[i]);
  std::printf(" box");
  for (unsigned i = 0; i < rank; ++i) std::printf("%s%u", i ? "x" : " ", box[i]);
  std::printf(" elemstr");
  for (unsigned i = 0; i < rank; ++i) std::printf("%s%u", i ? "x" : " ", estr[i]);
  std::printf(" swizzle %s interleave %d l2promo %d oobfill %d\n", ptxmm_swz((int)sw), (int)il, (int)l2, (int)oob);
  std::memset(map, 0, sizeof(*map));
  uint64_t tag = 0x5054584d4d000000ull | (uint64_t)id;  // "PTXMM" + id
  std::memcpy(map, &tag, 8);
  return CUDA_SUCCESS;
}
// Error strings (ThunderKittens prints them on failure): no driver here.
extern "C" CUresult cuGetErrorString(CUresult, const char** s) {
  *s = "ptxmm host layout: no driver";
  return CUDA_SUCCESS;
}
// Report where the tensor-map tags and fake pointers (0x7f....) sit in a parameter block.
static void ptxmm_scan_params(const void* p, size_t n) {
  const unsigned char* b = (const unsigned char*)p;
  for (size_t off = 0; off + 8 <= n; off += 8) {
    uint64_t v;
    std::memcpy(&v, b + off, 8);
    if ((v >> 24) == 0x5054584d4dull) std::printf("param+%zu: CUtensorMap tensormap#%d (128 B)\n", off, (int)(v & 0xff));
    else if ((v >> 32) == 0x7f00 && (v & 0xffffff) == 0) std::printf("param+%zu: pointer %p\n", off, (void*)v);
  }
  // alpha = 1.5f and beta = 0.25f (the values the layout programs pass, to be found here)
  for (size_t off = 0; off + 4 <= n; off += 4) {
    uint32_t w;
    std::memcpy(&w, b + off, 4);
    if (w == 0x3fc00000u) std::printf("param+%zu: f32 1.5 (alpha)\n", off);
    if (w == 0x3e800000u) std::printf("param+%zu: f32 0.25 (beta)\n", off);
  }
}

// Stand-ins for the runtime calls a launch makes, for the layout programs that include a
// library's own launch code: `#define cudaFuncSetAttribute ptxmm_cudaFuncSetAttribute` (and the
// same for cudaLaunchKernelExC) before including it prints what the host would ask for.
static inline cudaError_t ptxmm_cudaFuncSetAttribute(const void*, cudaFuncAttribute attr, int value) {
  if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) std::printf("cudaFuncSetAttribute MaxDynamicSharedMemorySize=%d\n", value);
  return cudaSuccess;
}
template <class F>
static inline cudaError_t ptxmm_cudaFuncSetAttribute(F* f, cudaFuncAttribute attr, int value) {
  return ptxmm_cudaFuncSetAttribute((const void*)f, attr, value);
}
static inline cudaError_t ptxmm_cudaLaunchKernelExC(const cudaLaunchConfig_t* cfg, const void*, void** args) {
  std::printf("launch block=%u,%u,%u grid=%u,%u,%u dynamic_smem=%zu", cfg->blockDim.x, cfg->blockDim.y, cfg->blockDim.z,
              cfg->gridDim.x, cfg->gridDim.y, cfg->gridDim.z, (size_t)cfg->dynamicSmemBytes);
  for (unsigned i = 0; i < cfg->numAttrs; ++i)
    if (cfg->attrs[i].id == cudaLaunchAttributeClusterDimension)
      std::printf(" cluster=%u,%u,%u", cfg->attrs[i].val.clusterDim.x, cfg->attrs[i].val.clusterDim.y, cfg->attrs[i].val.clusterDim.z);
  std::printf("\n");
  (void)args;
  return cudaSuccess;
}
