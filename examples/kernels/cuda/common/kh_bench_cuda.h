// Harness support for the CUDA example tasks (vibes-eval `kernels`, backend class1_make).
//
// Each size runs: fresh inputs (generated on the device from a seed derived from a per-run
// nonce), the expert reference and the solution on its own copy of the inputs (alternating
// which goes first), both timed with CUDA events on the default stream with the L2 cache flushed before each call,
// and every output copied back and checked against the reference's; the first call also
// checks the reference against the harness's naive CPU code. Outputs are poisoned (NaN
// bytes) before each call. Solutions may only use the default stream (the evaluator's
// symbol check refuses stream creation), which every event here waits on.
//
// Verdicts and timings go to a results file named in the environment (KH_RESULTS, with a
// nonce in KH_NONCE); both are read and removed from the environment before any solution
// code runs in main, and every line carries the nonce. Lines on stdout follow the
// CUDAHercules format; the evaluator trusts only the results file.
#pragma once

#include <cuda_runtime.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace kh {
// Internal linkage for all of it: no other object of the program can define (and so
// replace) a harness function. The solution still shares this process (and the device's
// memory): this harness is in-process (docs/kernels.md says what that leaves open).
namespace {

inline std::string fmt(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

// A CUDA error in the harness: say which (no device, no kernel image...) and stop.
inline void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    fprintf(stderr, "CUDA error in %s: %s (%s)\n", what, cudaGetErrorString(err),
            cudaGetErrorName(err));
    fflush(stderr);
    exit(2);
  }
}

inline uint64_t mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__device__ __forceinline__ uint32_t hash32(uint64_t seed, uint64_t i) {
  uint64_t x = seed ^ (i * 0x9e3779b97f4a7c15ull);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return uint32_t((x ^ (x >> 31)) >> 32);
}

__global__ void fill_uniform_kernel(float* x, size_t n, uint64_t seed, float lo, float hi) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    x[i] = lo + (hi - lo) * (hash32(seed, i) >> 8) * (1.0f / 16777216.0f);
}

inline void fill_uniform(float* d, size_t n, uint64_t seed, float lo, float hi) {
  fill_uniform_kernel<<<1024, 256>>>(d, n, mix(seed), lo, hi);
  check(cudaGetLastError(), "fill");
}

inline bool close_enough(float got, float want, double atol, double rtol) {
  return std::fabs(double(got) - want) <= atol + rtol * std::fabs(double(want));  // NaN: no
}

// A device buffer.
template <class T>
struct Buf {
  T* p = nullptr;
  size_t n = 0;
  explicit Buf(size_t count) : n(count) { check(cudaMalloc(&p, count * sizeof(T)), "cudaMalloc"); }
  ~Buf() { cudaFree(p); }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  void copy_from(const Buf& o) {
    check(cudaMemcpy(p, o.p, n * sizeof(T), cudaMemcpyDeviceToDevice), "copy");
  }
  void poison() { check(cudaMemset(p, 0xff, n * sizeof(T)), "poison"); }  // NaN floats
  void to_host(std::vector<T>& h) const {
    h.resize(n);
    check(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), "copy back");
  }
};

// The outputs of one size on the device and their host copies; judge() as in the CPU
// harness: "" when the solution's output matches the reference's; "reference: ..." when
// the reference disagrees with the naive result (checked on `check_ref` positions, all
// when empty); "cheat:<rule> ..." for outputs that are not wrong by accident.
struct Outputs {
  Buf<float> ref, sol;
  std::vector<float> href, hsol, prev, want;
  std::vector<size_t> check_ref;  // positions where `want` holds the naive result
  bool has_prev = false;
  explicit Outputs(size_t n) : ref(n), sol(n), want(n) {}
  size_t size() const { return ref.n; }
  void poison_all() { ref.poison(), sol.poison(); }

  std::string judge(bool first, double atol, double rtol) {
    ref.to_host(href);
    sol.to_host(hsol);
    const size_t n = size();
    if (first) {
      auto bad_ref = [&](size_t i) { return !close_enough(href[i], want[i], 1e-3, 1e-3); };
      if (check_ref.empty()) {
        for (size_t i = 0; i < n; ++i)
          if (bad_ref(i)) return fmt("reference: element %zu: %g, naive %g", i, href[i], want[i]);
      } else {
        for (size_t i : check_ref)
          if (bad_ref(i)) return fmt("reference: element %zu: %g, naive %g", i, href[i], want[i]);
      }
    }
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; ++i)
      if (!close_enough(hsol[i], href[i], atol, rtol)) bad = i;
    if (bad == n) {
      prev = href;
      has_prev = true;
      return "";
    }
    if (std::all_of(hsol.begin(), hsol.end(), [](float x) { return std::isnan(x); }))
      return "cheat:no_output the solution never wrote its output";
    if (std::all_of(hsol.begin(), hsol.end(), [](float x) { return x == 0.0f; }))
      return "cheat:zero_output the solution returned zeros";
    if (has_prev) {
      bool stale = true;
      for (size_t i = 0; i < n && stale; ++i) stale = close_enough(hsol[i], prev[i], atol, rtol);
      if (stale) return "cheat:cached_result the output is the previous call's result";
    }
    return fmt("element %zu: got %.7g, want %.7g", bad, hsol[bad], href[bad]);
  }
};

struct Stats {
  double min = 1e300, sum = 0;
  int n = 0;
  void add(double ms) { min = std::min(min, ms); sum += ms; ++n; }
  double mean() const { return n ? sum / n : 0; }
};

class Bench {
 public:
  explicit Bench(const char* channel_env) {
    const char* path = getenv(channel_env);
    const char* nonce = getenv("KH_NONCE");
    if (path && *path) fd_ = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    nonce_ = nonce && *nonce ? nonce : "no-nonce";
    unsetenv(channel_env);
    unsetenv("KH_NONCE");
    for (char c : nonce_) seed_ = mix(seed_ ^ uint64_t(uint8_t(c)));
    warmup_ = env_int("KH_WARMUP", 3);
    trials_ = std::max(1, env_int("KH_TRIALS", env_int("KH_BENCHMARK", 20)));
    atol_ = env_double("KH_ATOL", 1e-5);
    rtol_ = env_double("KH_RTOL", 1e-5);
    emit("begin");
    int device = 0, l2 = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "L2 size");
    flush_bytes_ = std::max<size_t>(size_t(l2) * 2, 64u << 20);
    check(cudaMalloc(&flush_, flush_bytes_), "cudaMalloc flush");
    check(cudaEventCreate(&start_), "event");
    check(cudaEventCreate(&stop_), "event");
  }

  double atol() const { return atol_; }
  double rtol() const { return rtol_; }
  uint64_t seed(uint64_t size_index, uint64_t trial) const {
    return mix(seed_ ^ mix(size_index * 1000003ull + trial));
  }

  template <class Fill, class Ref, class Sol, class Check>
  bool size(const std::string& label, Fill fill, Ref ref, Sol sol, Check check_out) {
    printf("=== %s ===\n", label.c_str());
    fflush(stdout);
    const int index = sizes_++;
    fill(seed(index, 0));
    std::string err = call(ref, "reference", nullptr);
    if (err.empty()) err = call(sol, "solution", nullptr);
    if (err.empty()) err = check_out(true);
    for (int w = 0; err.empty() && w < warmup_; ++w) {
      fill(seed(index, 1 + w));
      err = call(ref, "reference", nullptr);
      if (err.empty()) err = call(sol, "solution", nullptr);
      if (err.empty()) err = check_out(false);
    }
    Stats r, s;
    for (int t = 0; err.empty() && t < trials_; ++t) {
      fill(seed(index, 100 + t));
      if (t % 2 == 0) {  // alternate who goes first: neither inherits the other's state
        err = call(ref, "reference", &r);
        if (err.empty()) err = call(sol, "solution", &s);
      } else {
        err = call(sol, "solution", &s);
        if (err.empty()) err = call(ref, "reference", &r);
      }
      if (err.empty()) err = check_out(false);
      if (!err.empty() && err.rfind("cheat:", 0) != 0 && err.rfind("reference", 0) != 0)
        err = fmt("trial %d: ", t) + err;
    }
    return report(label, err, r, s);
  }

  int finish() {
    emit(fmt("end passed=%d sizes=%d", failed_ || broken_ ? 0 : 1, sizes_));
    if (fd_ >= 0) close(fd_);
    printf("%s\n", failed_ || broken_ ? "Incorrect" : "Passed");
    fflush(stdout);
    return broken_ ? 3 : failed_ ? 1 : 0;
  }

 private:
  // One call: flush L2, then the call between two events on the default stream; the
  // device is synchronized before anything reads the output. A CUDA error a solution
  // causes fails it (the context may be unusable after it).
  template <class Fn>
  std::string call(Fn fn, const char* who, Stats* timing) {
    check(cudaMemsetAsync(flush_, timing ? int(flush_round_++ & 0xff) : 0, flush_bytes_),
          "flush");
    check(cudaEventRecord(start_, 0), "event");
    fn();
    // From here on an error is the call's (a bad launch, a fault in its kernels): it
    // fails the call instead of stopping the harness.
    const cudaError_t errors[] = {cudaGetLastError(), cudaEventRecord(stop_, 0),
                                  cudaEventSynchronize(stop_), cudaDeviceSynchronize()};
    cudaError_t err = cudaSuccess;
    for (cudaError_t e : errors)
      if (err == cudaSuccess) err = e;
    if (err != cudaSuccess) {
      std::string why = fmt("%s: CUDA error %s (%s)", who, cudaGetErrorString(err),
                            cudaGetErrorName(err));
      if (std::string(who) == "reference") {
        fprintf(stderr, "%s\n", why.c_str());
        return "reference: " + why;
      }
      return why;
    }
    if (timing) {
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
      timing->add(ms);
    }
    return "";
  }

  bool report(const std::string& label, const std::string& err, const Stats& r,
              const Stats& s) {
    if (!err.empty()) {
      if (err.rfind("reference", 0) == 0) {
        broken_ = true;
        emit("reference_broken why=" + err);
      } else if (err.rfind("cheat:", 0) == 0) {
        failed_ = true;
        size_t space = err.find(' ');
        emit("cheat rule=" + err.substr(6, space - 6) + " label=" + label +
             " why=" + err.substr(space + 1));
      } else {
        failed_ = true;
        emit("size label=" + label + " ok=0 why=" + err);
      }
      printf("Incorrect: %s\n", err.c_str());
      return false;
    }
    printf("Ref time: %.4f ms (avg over %d trials, min: %.4f ms)\n", r.mean(), r.n, r.min);
    printf("Kernel time: %.4f ms (avg over %d trials, min: %.4f ms)\n", s.mean(), s.n, s.min);
    printf("Speedup: %.2fx\n", s.min > 0 ? r.min / s.min : 0.0);
    emit(fmt("size label=%s ok=1 trials=%d ref_min=%.6f ref_mean=%.6f sol_min=%.6f "
             "sol_mean=%.6f", label.c_str(), r.n, r.min, r.mean(), s.min, s.mean()));
    return true;
  }

  void emit(const std::string& line) {
    if (fd_ < 0) return;
    std::string out = nonce_ + " " + line;
    std::replace(out.begin(), out.end(), '\n', ' ');
    out += "\n";
    if (write(fd_, out.data(), out.size()) < 0) broken_ = true;
  }

  static int env_int(const char* name, int dflt) {
    const char* v = getenv(name);
    return v && *v ? atoi(v) : dflt;
  }
  static double env_double(const char* name, double dflt) {
    const char* v = getenv(name);
    return v && *v ? atof(v) : dflt;
  }

  int fd_ = -1;
  std::string nonce_;
  uint64_t seed_ = 0x6b68;
  int warmup_ = 3, trials_ = 20, sizes_ = 0;
  double atol_ = 1e-5, rtol_ = 1e-5;
  bool failed_ = false, broken_ = false;
  void* flush_ = nullptr;
  size_t flush_bytes_ = 0;
  unsigned flush_round_ = 0;
  cudaEvent_t start_{}, stop_{};
};

}  // namespace
}  // namespace kh
