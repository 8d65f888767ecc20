
#include <cuda_runtime.h>
#include <cuda.h>          // CUtensorMap and its enums (types only: no -lcuda)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

// ---- harness (shared by every test of this file) ----
struct Options {
  long long iterations = @ITERATIONS@;  // launches
  int instances = @INSTANCES@;          // test instances per launch
  bool start_barrier = @START_BARRIER@; // per-iteration start barrier among an instance's threads
  bool shuffle = @SHUFFLE@;             // random placement of instances on blocks
  int stress_warps = @STRESS@;          // extra warps per block hammering a scratch buffer
  unsigned bound = @BOUND@;             // spin-loop bound (an exhausted bound is a hang)
  unsigned long long seed = @SEED@;
  double timeout_s = 20.0;              // per launch
  std::vector<std::string> tests;
};

static Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) { fprintf(stderr, "missing value after %s\n", a.c_str()); exit(2); }
      return argv[++i];
    };
    if (a == "--iterations") o.iterations = atoll(next());
    else if (a == "--instances") o.instances = atoi(next());
    else if (a == "--no-start-barrier") o.start_barrier = false;
    else if (a == "--start-barrier") o.start_barrier = true;
    else if (a == "--shuffle") o.shuffle = true;
    else if (a == "--no-shuffle") o.shuffle = false;
    else if (a == "--stress") o.stress_warps = atoi(next());
    else if (a == "--bound") o.bound = (unsigned)atoll(next());
    else if (a == "--seed") o.seed = strtoull(next(), nullptr, 10);
    else if (a == "--timeout") o.timeout_s = atof(next());
    else if (a.rfind("--", 0) == 0) { fprintf(stderr, "unknown option %s\n", a.c_str()); exit(2); }
    else o.tests.push_back(a);
  }
  if (o.instances < 1 || o.iterations < 1) { fprintf(stderr, "--instances and --iterations must be positive\n"); exit(2); }
  return o;
}

static bool selected(const Options& o, const char* name) {
  if (o.tests.empty()) return true;
  for (auto& t : o.tests) if (t == name) return true;
  return false;
}

static bool device_banner() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    printf("ptxmm-hw 1\nerror no CUDA device: %s\n", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    return false;
  }
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  printf("ptxmm-hw 1\ndevice %s|sm_%d%d|%d SMs|driver %d|runtime %d\n", p.name, p.major, p.minor, p.multiProcessorCount, driver, runtime);
  return true;
}

struct Launch {
  unsigned char* arena;        // instances * stride bytes of global variables
  unsigned long long* results; // instances * kObs
  unsigned* hang;              // per instance: bit t set when thread t exhausted its spin bound
  unsigned* start;             // per instance: start-barrier counter
  const int* group_map;        // block group -> instance * kClusters + cluster
  unsigned* scratch;           // stress target
  unsigned bound;
  int start_barrier;
  int stress_iters;
};

__device__ __forceinline__ unsigned smem_addr_of(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
#define smem_addr(off) smem_addr_of(smem + (off))
__device__ __forceinline__ unsigned cluster_addr_of(const void* p, unsigned rank) {
  unsigned r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(smem_addr_of(p)), "r"(rank));
  return r;
}
#define cluster_addr(off, rank) cluster_addr_of(smem + (off), (rank))
#define mbar_init(off, count) asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(smem_addr(off)), "r"((unsigned)(count)) : "memory")

template <int ClusterDim> __device__ __forceinline__ void setup_sync() {
  if (ClusterDim > 1) asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
  else __syncthreads();
}

// After the test: every thread of the instance's CTA (cluster) is done before the shared
// observables are read and before any CTA of a cluster exits (its shared memory stays valid).
template <int ClusterDim> __device__ __forceinline__ void end_sync(int test_warps) {
  if (ClusterDim > 1) asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
  else asm volatile("bar.sync 15, %0;" :: "r"(32 * test_warps) : "memory");
}

// Bounded: a start barrier that cannot complete (instances not co-resident) gives up.
__device__ __forceinline__ void start_barrier(unsigned* counter, unsigned threads, unsigned bound) {
  atomicAdd(counter, 1u);
  for (unsigned spins = 0; spins < bound * 16u; spins++)
    if (*(volatile unsigned*)counter >= threads) break;
}

__device__ void stress(const Launch& L, int inst) {
  unsigned* line = L.scratch + ((inst * 37 + threadIdx.x) % 1024) * 32;
  for (int i = 0; i < L.stress_iters; i++) {
    unsigned v = *(volatile unsigned*)line;
    *(volatile unsigned*)(line + (i & 7)) = v + 1;
  }
}

static void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    printf("error %s: %s\n", what, cudaGetErrorString(e));
    fflush(stdout);
    exit(3);
  }
}

// ---- tensor maps (tests with `tmap @ tensormap {...}`) ----
// One CUtensorMap per map and instance, encoded on the host into the instance's global block
// (the pristine copy every launch starts from), where the test's `tmap` variable lives.
struct TensorMapDesc {
  long long map_off, tensor_off;  // byte offsets in an instance's global block
  CUtensorMapDataType type;
  unsigned rank;
  unsigned long long dims[5];     // elements, innermost first
  unsigned long long strides[4];  // bytes, of dimensions 1..rank-1
  unsigned box[5];                // elements, innermost first
};

// cuTensorMapEncodeTiled through the runtime's driver entry point: no link against libcuda.
static PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  if (fn) return fn;
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q;
#if CUDART_VERSION >= 12050
  check(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q), "cudaGetDriverEntryPointByVersion");
#else
  check(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &p, cudaEnableDefault, &q), "cudaGetDriverEntryPoint");
#endif
  if (q != cudaDriverEntryPointSuccess || !p) {
    printf("error cuTensorMapEncodeTiled: not found in the driver (query result %d)\n", (int)q);
    fflush(stdout);
    exit(3);
  }
  fn = (PFN_cuTensorMapEncodeTiled_v12000)p;
  return fn;
}

// Encode every map of every instance into the host image `pristine` (instance i's block at
// stride * i), for the tensor at its device address in `arena`. Tile mode as the model: no
// interleave, no swizzle, no L2 promotion, out-of-bound elements filled with zeros (FILL_NONE).
static void encode_tensor_maps(unsigned char* pristine, unsigned char* arena, size_t stride, int instances, const TensorMapDesc* maps,
                               int n_maps) {
  if (n_maps == 0) return;
  PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  for (int i = 0; i < instances; i++)
    for (int m = 0; m < n_maps; m++) {
      const TensorMapDesc& d = maps[m];
      alignas(64) CUtensorMap map;
      const cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
      CUresult r = encode(&map, d.type, d.rank, arena + stride * i + d.tensor_off, (const cuuint64_t*)d.dims,
                          (const cuuint64_t*)d.strides, (const cuuint32_t*)d.box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                          CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
      if (r != CUDA_SUCCESS) {
        printf("error cuTensorMapEncodeTiled: map %d of instance %d: CUresult %d\n", m, i, (int)r);
        fflush(stdout);
        exit(3);
      }
      memcpy(pristine + stride * i + d.map_off, &map, sizeof(map));
    }
}

// The maps were written by a copy before the launch: the tensormap proxy's view is acquired
// before the first use (CUDA programming guide: a tensor map copied to global memory with
// cudaMemcpy needs fence.proxy.tensormap::generic.acquire at .sys scope).
__device__ __forceinline__ void tensormap_acquire(const unsigned char* map) {
  asm volatile("fence.proxy.tensormap::generic.acquire.sys [%0], 128;" :: "l"(map) : "memory");
}

static int run_test(const Options& o, const char* name, int threads, int ctas, int clusters, int cluster_dim, int block_threads, int n_obs,
                    const char** obs_names, size_t stride, const unsigned* image, const int (*global_obs)[2], int n_global_obs,
                    const void* kernel, const TensorMapDesc* tensor_maps = nullptr, int n_tensor_maps = 0) {
  (void)ctas;
  printf("start %s\n", name);  // a fault or a kill during this test still names it
  fflush(stdout);
  const int I = o.instances, groups = I * clusters, grid = groups * cluster_dim;
  std::vector<unsigned char> pristine(stride * I);
  for (int i = 0; i < I; i++) memcpy(pristine.data() + stride * i, image, stride);
  Launch L{};
  unsigned char* d_pristine;
  int* d_map;
  check(cudaMalloc(&L.arena, stride * I), "cudaMalloc");
  check(cudaMalloc(&d_pristine, stride * I), "cudaMalloc");
  check(cudaMalloc(&L.results, sizeof(unsigned long long) * n_obs * I), "cudaMalloc");
  check(cudaMalloc(&L.hang, sizeof(unsigned) * I), "cudaMalloc");
  check(cudaMalloc(&L.start, sizeof(unsigned) * I), "cudaMalloc");
  check(cudaMalloc(&d_map, sizeof(int) * groups), "cudaMalloc");
  check(cudaMalloc(&L.scratch, sizeof(unsigned) * 32 * 1024), "cudaMalloc");
  encode_tensor_maps(pristine.data(), L.arena, stride, I, tensor_maps, n_tensor_maps);
  check(cudaMemcpy(d_pristine, pristine.data(), stride * I, cudaMemcpyHostToDevice), "cudaMemcpy");
  L.group_map = d_map;
  L.bound = o.bound;
  L.start_barrier = o.start_barrier;
  L.stress_iters = 256;
  std::vector<int> map(groups);
  for (int g = 0; g < groups; g++) map[g] = g;
  check(cudaMemcpy(d_map, map.data(), sizeof(int) * groups, cudaMemcpyHostToDevice), "cudaMemcpy");
  std::mt19937_64 rng(o.seed);
  std::vector<unsigned long long> res(n_obs * I);
  std::vector<unsigned> hang(I);
  std::vector<unsigned char> arena(stride * I);
  std::map<std::vector<unsigned long long>, unsigned long long> histogram;
  auto t0 = std::chrono::steady_clock::now();
  bool timed_out = false;
  long long it = 0;
  for (; it < o.iterations && !timed_out; it++) {
    check(cudaMemcpy(L.arena, d_pristine, stride * I, cudaMemcpyDeviceToDevice), "reset");
    check(cudaMemset(L.results, 0, sizeof(unsigned long long) * n_obs * I), "reset");
    check(cudaMemset(L.hang, 0, sizeof(unsigned) * I), "reset");
    check(cudaMemset(L.start, 0, sizeof(unsigned) * I), "reset");
    if (o.shuffle) {
      std::shuffle(map.begin(), map.end(), rng);
      check(cudaMemcpy(d_map, map.data(), sizeof(int) * groups, cudaMemcpyHostToDevice), "cudaMemcpy");
    }
    void* args[] = {&L};
    check(cudaLaunchKernel(kernel, dim3(grid), dim3(block_threads), args, 0, 0), "launch");
    auto launched = std::chrono::steady_clock::now();
    cudaError_t q;
    while ((q = cudaStreamQuery(0)) == cudaErrorNotReady) {
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - launched).count() > o.timeout_s) { timed_out = true; break; }
    }
    if (timed_out) break;
    check(q, "kernel");
    check(cudaMemcpy(res.data(), L.results, sizeof(unsigned long long) * n_obs * I, cudaMemcpyDeviceToHost), "readback");
    check(cudaMemcpy(hang.data(), L.hang, sizeof(unsigned) * I, cudaMemcpyDeviceToHost), "readback");
    if (n_global_obs > 0 && global_obs[0][0] >= 0)
      check(cudaMemcpy(arena.data(), L.arena, stride * I, cudaMemcpyDeviceToHost), "readback");
    for (int i = 0; i < I; i++) {
      std::vector<unsigned long long> key(n_obs + 1);
      key[0] = hang[i];
      for (int k = 0; k < n_obs; k++) key[k + 1] = res[(size_t)i * n_obs + k];
      for (int g = 0; g < n_global_obs; g++)
        if (global_obs[g][0] >= 0) {
          unsigned v;
          memcpy(&v, arena.data() + stride * i + global_obs[g][1], 4);
          key[global_obs[g][0] + 1] = v;
        }
      histogram[key]++;
    }
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  printf("test %s\nthreads %d\nobservables", name, threads);
  for (int k = 0; k < n_obs; k++) printf(" %s", obs_names[k]);
  printf("\n");
  for (auto& kv : histogram) {
    printf("state %llu", kv.second);
    for (auto v : kv.first) printf(" %llu", v);
    printf("\n");
  }
  printf("done %s instances %d iterations %lld time_ms %.0f%s\n", name, I, it, ms, timed_out ? " timeout" : "");
  fflush(stdout);
  if (timed_out) exit(4);  // a kernel that does not finish cannot be recovered in-process
  cudaFree(L.arena); cudaFree(d_pristine); cudaFree(L.results); cudaFree(L.hang); cudaFree(L.start); cudaFree(d_map); cudaFree(L.scratch);
  return 0;
}
