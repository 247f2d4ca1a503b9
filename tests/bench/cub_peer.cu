// tests/bench/cub_peer.cu -- the CUB and cudaMemcpy peers of the benchmark,
// as a shared library that tests/bench/bench_gk.py loads with ctypes and hands
// the device pointers of torch's tensors (the same bytes gk reads).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -shared -Xcompiler -fPIC \
//        -o libcubpeer.so tests/bench/cub_peer.cu
//
// cubp_times(algo, dtype, ins, nins, out, out2, n, nbins, lo, hi, reps, us)
// runs one algorithm reps times on the legacy default stream (the stream torch
// uses unless told otherwise), the i-th call on input ins[i % nins], and
// writes in us[i] the time between two CUDA events around the i-th call, in
// microseconds.  The calls are queued back to back after one synchronize, as
// bench_gk.py times torch's ops and gk's steps: each call's events bracket its
// kernels, not the host's launch gap in front of a kernel on an idle card.
// Temp storage is sized and allocated before the first event (and kept for
// later calls), so only the algorithm's kernels are timed.  Returns 0, or
// -(cudaError_t), or -1000 for an unknown algorithm.  cubp_run(algo, dtype,
// in, out, out2, n, nbins, lo, hi) is one such call: its time in us, or the
// negative error.
//
// algo: 0 copy (cudaMemcpyAsync device to device, n bytes), 1 DeviceReduce::Sum,
// 2 ::Max, 3 ::Min, 4 ::ArgMax (out = value, out2 = int64 index),
// 5 DeviceScan::InclusiveSum, 6 DeviceSelect::If (x > lo; out2 = int64 count),
// 7 DeviceHistogram::HistogramEven (nbins bins over [lo, hi), int32 counts),
// 8 DeviceRadixSort::SortKeys (ascending, out = the sorted keys).
// dtype: 0 f32, 1 f64, 2 i32 (sums and scans of i32 write int64).
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <cstdint>

namespace {

void *g_temp = nullptr;     // never NULL once timed() has sized a call: the timed pass
size_t g_temp_bytes = 0;    // must not be mistaken for CUB's sizing pass (d_temp_storage NULL)
const void *const *g_ins;   // the inputs of cubp_times, taken in turn
int g_nins = 1;
const void *g_in;           // the input of the call being made
int g_reps = 1;             // calls to time, and where their times go
double *g_us;
#define CUBP_REPS_MAX 512

cudaError_t grow(size_t want) {
  if (g_temp && want <= g_temp_bytes) return cudaSuccess;
  if (g_temp) cudaFree(g_temp);
  g_temp = nullptr;
  g_temp_bytes = 0;
  cudaError_t e = cudaMalloc(&g_temp, want ? want : 1);
  if (e == cudaSuccess) g_temp_bytes = want;
  return e;
}

template <typename T> struct Greater {
  T t;
  __host__ __device__ bool operator()(const T &x) const { return x > t; }
};

// Sizes temp storage (call(nullptr, bytes)), then times g_reps calls
// call(temp, bytes), queued, the i-th on g_ins[i % g_nins] (g_in).
template <typename F> double timed(F call) {
  static cudaEvent_t ev[2 * CUBP_REPS_MAX];
  static int nev = 0;
  size_t bytes = 0;
  g_in = g_ins[0];
  cudaError_t e = call(nullptr, bytes);
  if (e != cudaSuccess) return -(double)e;
  if ((e = grow(bytes)) != cudaSuccess) return -(double)e;
  for (; nev < 2 * g_reps; nev++)
    if ((e = cudaEventCreate(&ev[nev])) != cudaSuccess) return -(double)e;
  bytes = g_temp_bytes;
  if ((e = cudaDeviceSynchronize()) != cudaSuccess) return -(double)e;
  for (int i = 0; i < g_reps && e == cudaSuccess; i++) {
    g_in = g_ins[i % g_nins];
    cudaEventRecord(ev[2 * i], 0);
    e = call(g_temp, bytes);
    cudaEventRecord(ev[2 * i + 1], 0);
  }
  if (e != cudaSuccess) return -(double)e;
  if ((e = cudaEventSynchronize(ev[2 * g_reps - 1])) != cudaSuccess) return -(double)e;
  if ((e = cudaGetLastError()) != cudaSuccess) return -(double)e;
  for (int i = 0; i < g_reps; i++) {
    float ms = 0;
    cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]);
    g_us[i] = ms * 1000.0;
  }
  return g_us[0];
}

template <typename T, typename S>
double run_typed(int algo, void *out, void *out2, int64_t n) {
  auto in = [] { return static_cast<const T *>(g_in); };
  switch (algo) {
  case 1:
    return timed([&](void *t, size_t &b) { return cub::DeviceReduce::Sum(t, b, in(), static_cast<S *>(out), n); });
  case 2:
    return timed([&](void *t, size_t &b) { return cub::DeviceReduce::Max(t, b, in(), static_cast<T *>(out), n); });
  case 3:
    return timed([&](void *t, size_t &b) { return cub::DeviceReduce::Min(t, b, in(), static_cast<T *>(out), n); });
  case 4:
    return timed([&](void *t, size_t &b) {
      return cub::DeviceReduce::ArgMax(t, b, in(), static_cast<T *>(out), static_cast<int64_t *>(out2), n);
    });
  case 5:
    return timed([&](void *t, size_t &b) { return cub::DeviceScan::InclusiveSum(t, b, in(), static_cast<S *>(out), n); });
  case 8:
    return timed([&](void *t, size_t &b) { return cub::DeviceRadixSort::SortKeys(t, b, in(), static_cast<T *>(out), n); });
  default:
    return -1000;
  }
}

double run(int algo, int dtype, void *out, void *out2, long long n, int nbins, double lo, double hi) {
  if (algo == 0)
    return timed([&](void *t, size_t &b) {
      if (!t) { b = 0; return cudaSuccess; }   // sizing pass: a copy needs no temp storage
      return cudaMemcpyAsync(out, g_in, (size_t)n, cudaMemcpyDeviceToDevice, 0);
    });
  if (algo == 6) {
    if (dtype != 0) return -1000;
    Greater<float> op{(float)lo};
    return timed([&](void *t, size_t &b) {
      return cub::DeviceSelect::If(t, b, static_cast<const float *>(g_in), static_cast<float *>(out),
                                   static_cast<int64_t *>(out2), (int64_t)n, op);
    });
  }
  if (algo == 7) {
    if (dtype != 0) return -1000;
    return timed([&](void *t, size_t &b) {
      return cub::DeviceHistogram::HistogramEven(t, b, static_cast<const float *>(g_in), static_cast<int *>(out),
                                                 nbins + 1, (float)lo, (float)hi, (int64_t)n);
    });
  }
  switch (dtype) {
  case 0: return run_typed<float, float>(algo, out, out2, n);
  case 1: return run_typed<double, double>(algo, out, out2, n);
  case 2: return run_typed<int, long long>(algo, out, out2, n);
  default: return -1000;
  }
}

} // namespace

extern "C" int cubp_times(int algo, int dtype, const void *const *ins, int nins, void *out, void *out2, long long n,
                          int nbins, double lo, double hi, int reps, double *us) {
  if (nins < 1 || reps < 1 || reps > CUBP_REPS_MAX) return -1000;
  g_ins = ins; g_nins = nins; g_reps = reps; g_us = us;
  double r = run(algo, dtype, out, out2, n, nbins, lo, hi);
  return r < 0 ? (int)r : 0;
}

extern "C" double cubp_run(int algo, int dtype, const void *in, void *out, void *out2, long long n, int nbins,
                           double lo, double hi) {
  double us = 0;
  int rc = cubp_times(algo, dtype, &in, 1, out, out2, n, nbins, lo, hi, 1, &us);
  return rc ? rc : us;
}
