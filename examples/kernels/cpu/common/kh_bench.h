// Harness support for the CPU example tasks (vibes-eval `kernels`, backend cpu_make).
//
// Each size runs: fresh inputs, the expert reference and the solution (which goes first,
// and which copy of the buffers each gets, drawn per trial), every output checked
// against the reference's on the same inputs; the first trial also checks the
// reference against the harness's own naive code. Inputs are regenerated for every call
// from a seed derived from a per-run nonce, so results cannot be cached across calls or
// precomputed. Outputs are poisoned before each call (an untouched output fails).
//
// Verdicts and timings go to a results file named in the environment (KH_RESULTS, with a
// nonce in KH_NONCE); both are read and removed from the environment before any solution
// code runs in main, and every line carries the nonce. Lines on stdout follow the
// CUDAHercules format for people and for foreign parsers; the evaluator trusts only the
// results file.
#pragma once

#include <alloca.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace kh {

inline uint64_t mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Fresh pseudo-random inputs (xorshift64*): cheap enough to redo before every call.
inline void fill_uniform(float* x, size_t n, uint64_t seed, float lo, float hi) {
  uint64_t s = mix(seed) | 1;
  const float scale = (hi - lo) / 16777216.0f;
  for (size_t i = 0; i < n; ++i) {
    s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
    x[i] = lo + scale * float((s * 0x2545f4914f6cdd1dull) >> 40);
  }
}

inline void fill_int(int32_t* x, size_t n, uint64_t seed, int lo, int hi) {
  uint64_t s = mix(seed) | 1;
  const uint64_t span = uint64_t(hi - lo + 1);
  for (size_t i = 0; i < n; ++i) {
    s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
    x[i] = lo + int32_t(((s * 0x2545f4914f6cdd1dull) >> 32) % span);
  }
}

inline void poison(float* x, size_t n) {
  std::fill(x, x + n, std::numeric_limits<float>::quiet_NaN());
}
inline void poison(int32_t* x, size_t n) { std::fill(x, x + n, int32_t(0x7f7f7f7f)); }

inline std::string fmt(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

inline bool close_enough(float got, float want, double atol, double rtol) {
  return std::fabs(double(got) - want) <= atol + rtol * std::fabs(double(want));  // NaN: no
}
inline bool close_enough(int32_t got, int32_t want, double, double) { return got == want; }
inline bool poisoned(float x) { return std::isnan(x); }
inline bool poisoned(int32_t x) { return x == int32_t(0x7f7f7f7f); }
inline std::string show(float x) { return fmt("%.7g", double(x)); }
inline std::string show(int32_t x) { return fmt("%d", x); }

// The outputs of one size: two slots (each trial draws which slot the reference gets and
// which the solution gets, with their own copies of the inputs, so neither always sits at
// the same place in memory), the previous call's reference output (a solution returning
// it cached its result), and the harness's naive result.
// judge() returns "" when the solution's output matches the reference's; "reference: ..."
// when the reference disagrees with the naive result (a broken task); "cheat:<rule> ..."
// for outputs that are not wrong by accident; else where the first mismatch is.
template <class T>
struct Outputs {
  std::vector<T> slot[2], prev, want;
  bool has_prev = false;
  explicit Outputs(size_t n) : prev(n), want(n) { slot[0].resize(n), slot[1].resize(n); }
  size_t size() const { return want.size(); }
  T* operator[](int s) { return slot[s].data(); }

  void poison_all() {
    kh::poison(slot[0].data(), size());
    kh::poison(slot[1].data(), size());
  }

  std::string judge(bool first, int ref_slot, double atol, double rtol) {
    const std::vector<T>& ref = slot[ref_slot];
    const std::vector<T>& sol = slot[1 - ref_slot];
    const size_t n = size();
    if (first) {
      for (size_t i = 0; i < n; ++i)
        if (!close_enough(ref[i], want[i], 1e-4, 1e-4))
          return fmt("reference: element %zu: %s, naive %s", i, show(ref[i]).c_str(),
                     show(want[i]).c_str());
    }
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; ++i)
      if (!close_enough(sol[i], ref[i], atol, rtol)) bad = i;
    if (bad == n) {
      prev = ref;
      has_prev = true;
      return "";
    }
    if (std::all_of(sol.begin(), sol.end(), [](T x) { return poisoned(x); }))
      return "cheat:no_output the solution never wrote its output";
    if (std::all_of(sol.begin(), sol.end(), [](T x) { return x == T(0); }))
      return "cheat:zero_output the solution returned zeros";
    if (has_prev) {
      bool stale = true;
      for (size_t i = 0; i < n && stale; ++i) stale = close_enough(sol[i], prev[i], atol, rtol);
      if (stale) return "cheat:cached_result the output is the previous call's result";
    }
    return fmt("element %zu: got %s, want %s", bad, show(sol[bad]).c_str(),
               show(ref[bad]).c_str());
  }
};

inline double now_ms() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

struct Stats {
  double min = 1e300, sum = 0;
  int n = 0;
  void add(double ms) { min = std::min(min, ms); sum += ms; ++n; }
  double mean() const { return n ? sum / n : 0; }
};

class Bench {
 public:
  // `channel_env`: the variable naming the results file (KH_RESULTS).
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
    flush_.resize(size_t(std::max(0, env_int("KH_FLUSH_KB", 8192))) * 256);
    emit("begin");
  }

  double atol() const { return atol_; }
  double rtol() const { return rtol_; }
  uint64_t seed(uint64_t size_index, uint64_t trial) const {
    return mix(seed_ ^ mix(size_index * 1000003ull + trial));
  }

  // One size. fill(seed): fresh inputs in both slots, outputs poisoned; call(reference,
  // slot): one call of the reference (true) or the solution on a slot's buffers; naive():
  // the harness's own result into out.want, from slot 0's inputs.
  template <class Fill, class Call, class Naive, class T>
  bool size(const std::string& label, Fill fill, Call call, Naive naive, Outputs<T>& out) {
    printf("=== %s ===\n", label.c_str());
    const int index = sizes_++;
    fill(seed(index, 0));
    call(true, 0);
    call(false, 1);
    naive();
    std::string err = out.judge(true, 0, atol_, rtol_);
    for (int w = 0; err.empty() && w < warmup_; ++w) {
      fill(seed(index, 1 + w));
      call(true, w & 1);
      call(false, 1 - (w & 1));
      err = out.judge(false, w & 1, atol_, rtol_);
    }
    Stats r, s;
    for (int t = 0; err.empty() && t < trials_; ++t) {
      const uint64_t draw = seed(index, 100 + t);
      fill(draw);
      const int ref_slot = int(draw & 1);  // where each side's buffers are, and who goes
      const bool ref_first = (draw >> 1) & 1;  // first, drawn per trial
      auto ref = [&] { call(true, ref_slot); };
      auto sol = [&] { call(false, 1 - ref_slot); };
      if (ref_first) {
        r.add(timed(ref));
        s.add(timed(sol));
      } else {
        s.add(timed(sol));
        r.add(timed(ref));
      }
      err = out.judge(false, ref_slot, atol_, rtol_);
      if (!err.empty() && err.rfind("cheat:", 0) != 0) err = fmt("trial %d: ", t) + err;
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

  // The reference disagrees with the naive result: the task is broken, not the solution.
  void reference_broken(const std::string& why) {
    broken_ = true;
    emit("reference_broken why=" + why);
  }

 private:
  bool report(const std::string& label, const std::string& err, const Stats& r,
              const Stats& s) {
    if (!err.empty()) {
      if (err.rfind("reference:", 0) == 0) {
        reference_broken(err);
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
    std::replace(out.begin(), out.end(), '\n', ' ');  // one record per line
    out += "\n";
    if (write(fd_, out.data(), out.size()) < 0) broken_ = true;
  }

  // One timed call, on a stack shifted by a random amount: where the stack sits relative
  // to the data (4K aliasing) can change a kernel's speed by tens of percent, and the
  // environment's size alone moves it. Each trial lands elsewhere; the minimum over trials
  // is then no contestant's luck.
  template <class Fn>
  double timed(Fn fn) {
    flush();
    stack_shift_ = mix(stack_shift_);
    volatile char* pad = static_cast<char*>(alloca(64 + (stack_shift_ & 4095)));
    pad[0] = 0;
    const double t0 = now_ms();
    fn();
    const double t1 = now_ms();
    pad[0] = 1;
    return t1 - t0;
  }

  void flush() {  // evict the caches the last call warmed (both contestants pay the same)
    for (size_t i = 0; i < flush_.size(); i += 16) flush_[i] += 1.0f;
    sink_ += flush_.empty() ? 0 : flush_[flush_.size() / 2];
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
  uint64_t seed_ = 0x6b68, stack_shift_ = 0x5eed;
  int warmup_ = 3, trials_ = 20, sizes_ = 0;
  double atol_ = 1e-5, rtol_ = 1e-5;
  bool failed_ = false, broken_ = false;
  std::vector<float> flush_;
  volatile float sink_ = 0;
};

}  // namespace kh
