// tests/bench/cub_peer.cu -- the CUB and cudaMemcpy peers of the benchmark,
// as a shared library that tests/bench/bench_gk.py loads with ctypes and hands
// the device pointers of torch's tensors (the same bytes gk reads).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -shared -Xcompiler -fPIC \
//        -o libcubpeer.so tests/bench/cub_peer.cu
//
// cubp_run(algo, dtype, in, out, out2, n, nbins, lo, hi) runs one algorithm
// once on the legacy default stream (the stream torch uses unless told
// otherwise) and returns the time between two CUDA events around the call, in
// microseconds; temp storage is sized and allocated before the first event
// (and kept for later calls), so only the algorithm's kernels are timed.  A
// negative return is -(cudaError_t), or -1000 for an unknown algorithm.
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
cudaEvent_t g_a, g_b;
bool g_events = false;

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

// Sizes temp storage (call(nullptr, bytes)), then times call(temp, bytes).
template <typename F> double timed(F call) {
  size_t bytes = 0;
  cudaError_t e = call(nullptr, bytes);
  if (e != cudaSuccess) return -(double)e;
  if ((e = grow(bytes)) != cudaSuccess) return -(double)e;
  if (!g_events) {
    if ((e = cudaEventCreate(&g_a)) != cudaSuccess || (e = cudaEventCreate(&g_b)) != cudaSuccess) return -(double)e;
    g_events = true;
  }
  bytes = g_temp_bytes;
  if ((e = cudaDeviceSynchronize()) != cudaSuccess) return -(double)e;
  cudaEventRecord(g_a, 0);
  e = call(g_temp, bytes);
  cudaEventRecord(g_b, 0);
  if (e != cudaSuccess) return -(double)e;
  if ((e = cudaEventSynchronize(g_b)) != cudaSuccess) return -(double)e;
  if ((e = cudaGetLastError()) != cudaSuccess) return -(double)e;
  float ms = 0;
  cudaEventElapsedTime(&ms, g_a, g_b);
  return ms * 1000.0;
}

template <typename T, typename S>
double run_typed(int algo, const void *in_, void *out, void *out2, int64_t n, int nbins, double lo, double hi) {
  const T *in = static_cast<const T *>(in_);
  switch (algo) {
  case 1:
    return timed([&](void *t, size_t &b) { return cub::DeviceReduce::Sum(t, b, in, static_cast<S *>(out), n); });
  case 2:
    return timed([&](void *t, size_t &b) { return cub::DeviceReduce::Max(t, b, in, static_cast<T *>(out), n); });
  case 3:
    return timed([&](void *t, size_t &b) { return cub::DeviceReduce::Min(t, b, in, static_cast<T *>(out), n); });
  case 4:
    return timed([&](void *t, size_t &b) {
      return cub::DeviceReduce::ArgMax(t, b, in, static_cast<T *>(out), static_cast<int64_t *>(out2), n);
    });
  case 5:
    return timed([&](void *t, size_t &b) { return cub::DeviceScan::InclusiveSum(t, b, in, static_cast<S *>(out), n); });
  case 8:
    return timed([&](void *t, size_t &b) { return cub::DeviceRadixSort::SortKeys(t, b, in, static_cast<T *>(out), n); });
  default:
    return -1000;
  }
}

} // namespace

extern "C" double cubp_run(int algo, int dtype, const void *in, void *out, void *out2, long long n, int nbins,
                           double lo, double hi) {
  if (algo == 0)
    return timed([&](void *t, size_t &b) {
      if (!t) { b = 0; return cudaSuccess; }   // sizing pass: a copy needs no temp storage
      return cudaMemcpyAsync(out, in, (size_t)n, cudaMemcpyDeviceToDevice, 0);
    });
  if (algo == 6) {
    if (dtype != 0) return -1000;
    Greater<float> op{(float)lo};
    return timed([&](void *t, size_t &b) {
      return cub::DeviceSelect::If(t, b, static_cast<const float *>(in), static_cast<float *>(out),
                                   static_cast<int64_t *>(out2), (int64_t)n, op);
    });
  }
  if (algo == 7) {
    if (dtype != 0) return -1000;
    return timed([&](void *t, size_t &b) {
      return cub::DeviceHistogram::HistogramEven(t, b, static_cast<const float *>(in), static_cast<int *>(out),
                                                 nbins + 1, (float)lo, (float)hi, (int64_t)n);
    });
  }
  switch (dtype) {
  case 0: return run_typed<float, float>(algo, in, out, out2, n, nbins, lo, hi);
  case 1: return run_typed<double, double>(algo, in, out, out2, n, nbins, lo, hi);
  case 2: return run_typed<int, long long>(algo, in, out, out2, n, nbins, lo, hi);
  default: return -1000;
  }
}
