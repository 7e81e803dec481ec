// Harness support for the CPU example tasks (vibes-eval `kernels`, backend cpu_make).
//
// Three processes, so that a solution can change nothing but its own output:
// - the harness (`./test`: this code linked with the expert reference, never with the
//   solution) draws the inputs, times every call, checks every output and writes the
//   verdict; it calls no kernel itself;
// - the reference worker (`./test` executed again) calls only the expert reference;
// - the solution worker (`./test_sol`: this code linked with the solution alone) calls
//   only the solution.
// Each worker has an arena of shared memory holding its own copy of the inputs and its own
// output, and nothing else the harness keeps: the reference's buffers, the timings, the
// verdict and the results channel are in other processes. Each worker is stopped
// (SIGSTOP, its whole process group) except while it serves a command, and a call is
// timed by the harness from letting the worker go to its reply: nothing the solution
// leaves behind (threads, an OpenMP setting, a spinning loop, a signal handler) runs while
// the reference is timed, while inputs are staged, or while its output is checked. The
// reference never runs where the solution ran, so its times and its OpenMP state are its
// own. On one CPU the time is the CPU time the kernel accounts to the worker's process
// over that window (time spent waiting for the CPU is not counted, and no process can
// change its own accounting); with more CPUs, the wall time. The window's own cost (a
// few microseconds) is measured on the reference worker and subtracted from both sides
// (never more than half a time).
//
// Per size: fresh inputs before every call, from a seed drawn from the kernel's random
// source (nothing a worker can see predicts the next call's inputs), outputs poisoned;
// the first call also checks the reference against the harness's naive code; then warm-up
// calls and KH_TRIALS timed calls of each side. Per trial, who goes first and which of
// the arena's two slots the buffers sit in are drawn, and both calls run on a stack
// shifted by the same random amount (placement relative to the stack can move a kernel's
// time by tens of percent).
//
// The solution worker also runs under a seccomp filter installed before its first call:
// memory, threads, futexes and its two pipes; no files, no signals to other processes, no
// new processes, no affinity changes (what a solution reaching libc's code through its
// own memory could otherwise do).
//
// Verdicts and timings go to a results file named in the environment (KH_RESULTS, with a
// nonce in KH_NONCE); the harness reads both and wipes them from its environment before
// any worker starts, and every line carries the nonce. Lines on stdout follow the
// CUDAHercules format for people and foreign parsers; the evaluator trusts only the file.
//
// A task's harness.cpp: `KH_ENTRY_POINT(name)` after its includes (each program links one
// of `name` and `name_ref`), then in main a kh::Size per shape with its inputs and output,
// and `run(output, fill, call, naive)`; see any task of this set.
#pragma once

#include <alloca.h>
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/sched.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

// Each program links one of the two entry points: `./test` the reference's, `./test_sol`
// the solution's (task.mk makes the link fail when its entry point is missing).
#define KH_PRAGMA(x) _Pragma(#x)
#define KH_ENTRY_POINT(f) KH_PRAGMA(weak f) KH_PRAGMA(weak f##_ref)

namespace kh {
// Internal linkage for all of it: no other object of a program can define (and so
// replace) a harness function, whatever the checks on the solution's object say.
namespace {

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

inline double now_ms() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

// 64 bits from the kernel's random source: no state a worker could read or rebuild from
// the inputs it saw (a seeded generator could be inverted from one call's inputs).
inline uint64_t random64() {
  uint64_t x = 0;
  if (getrandom(&x, sizeof x, 0) != ssize_t(sizeof x)) x = mix(uint64_t(now_ms() * 1e6) ^ getpid());
  return x;
}

inline uint64_t hash_bytes(const void* p, size_t n) {  // FNV-1a, 8 bytes at a time
  const unsigned char* c = static_cast<const unsigned char*>(p);
  uint64_t h = 0xcbf29ce484222325ull, w = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) memcpy(&w, c + i, 8), h = (h ^ w) * 0x100000001b3ull;
  for (; i < n; ++i) h = (h ^ c[i]) * 0x100000001b3ull;
  return h;
}

struct Stats {
  double min = 1e300, sum = 0;
  int n = 0;
  void add(double ms) { min = std::min(min, ms); sum += ms; ++n; }
  double mean() const { return n ? sum / n : 0; }
};

// The checks of one size, in the harness: the solution's output against the reference's
// on the same inputs, and on the first call the reference against the naive result
// (`want`). judge() returns "" for a match, "reference: ..." for a broken task,
// "cheat:<rule> ..." for outputs that are not wrong by accident, else the first mismatch.
template <class T>
struct Check {
  std::vector<T> prev, want;  // the previous call's reference output; the naive result
  std::vector<uint64_t> seen;  // hashes of the solution's earlier outputs
  bool has_prev = false;
  explicit Check(size_t n) : prev(n), want(n) {}

  std::string judge(bool first, const T* ref, const T* sol, double atol, double rtol) {
    const size_t n = want.size();
    if (first)
      for (size_t i = 0; i < n; ++i)
        if (!close_enough(ref[i], want[i], 1e-4, 1e-4))
          return fmt("reference: element %zu: %s, naive %s", i, show(ref[i]).c_str(),
                     show(want[i]).c_str());
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; ++i)
      if (!close_enough(sol[i], ref[i], atol, rtol)) bad = i;
    const uint64_t h = hash_bytes(sol, n * sizeof(T));
    if (bad == n) {
      std::copy(ref, ref + n, prev.begin());
      has_prev = true;
      seen.push_back(h);
      return "";
    }
    if (std::all_of(sol, sol + n, [](T x) { return poisoned(x); }))
      return "cheat:no_output the solution never wrote its output";
    if (std::all_of(sol, sol + n, [](T x) { return x == T(0); }))
      return "cheat:zero_output the solution returned zeros";
    if (std::find(seen.begin(), seen.end(), h) != seen.end() || stale(sol, atol, rtol))
      return "cheat:cached_result the output is an earlier call's result";
    return fmt("element %zu: got %s, want %s", bad, show(sol[bad]).c_str(),
               show(ref[bad]).c_str());
  }

 private:
  bool stale(const T* sol, double atol, double rtol) const {
    if (!has_prev) return false;
    for (size_t i = 0; i < prev.size(); ++i)
      if (!close_enough(sol[i], prev[i], atol, rtol)) return false;
    return true;
  }
};

// -- the wire between the harness and a worker -------------------------------------------

enum Op : uint32_t { kMap = 1, kCall, kPing, kNext, kQuit };
struct Cmd {
  uint32_t op, seq, slot, shift;
  uint64_t index, bytes;
};
enum : int { kCmdFd = 3, kReplyFd = 4, kArenaFd = 5 };  // a worker's descriptors
constexpr size_t kPage = 4096;
inline size_t page_round(size_t n) { return (n + kPage - 1) / kPage * kPage; }

inline bool read_all(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n) {
    const ssize_t r = read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r, n -= size_t(r);
  }
  return true;
}

inline bool write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n) {
    const ssize_t r = write(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r, n -= size_t(r);
  }
  return true;
}

// Overwrite a variable's value where the process keeps it, then drop it: a later process
// started from this one never sees it, and this one keeps no stray copy.
inline void wipe_env(const char* name) {
  if (char* v = getenv(name)) memset(v, 0, strlen(v));
  unsetenv(name);
}

// The solution worker's system calls. Anything else fails with EPERM; what the harness
// and an honest kernel need (memory, OpenMP's threads and futexes, the two pipes) passes.
inline bool confine_solution() {
#if defined(__x86_64__)
  std::vector<sock_filter> f;
  auto stmt = [&](uint16_t code, uint32_t k) { f.push_back(BPF_STMT(code, k)); };
  auto jump = [&](uint16_t code, uint32_t k, uint8_t t, uint8_t e) {
    f.push_back(BPF_JUMP(code, k, t, e));
  };
  const uint32_t allow = SECCOMP_RET_ALLOW, deny = SECCOMP_RET_ERRNO | EPERM;
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch));
  jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
  stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr));
  const int plain[] = {
      SYS_close, SYS_mmap, SYS_munmap, SYS_mremap, SYS_mprotect, SYS_brk, SYS_madvise,
      SYS_futex, SYS_set_robust_list, SYS_get_robust_list, SYS_rt_sigprocmask,
      SYS_rt_sigreturn, SYS_sigaltstack, SYS_sched_yield, SYS_sched_getaffinity,
      SYS_getpid, SYS_gettid, SYS_getcpu, SYS_exit, SYS_exit_group, SYS_clock_gettime,
      SYS_clock_getres, SYS_gettimeofday, SYS_nanosleep, SYS_clock_nanosleep,
      SYS_getrandom, SYS_membarrier, SYS_rseq, SYS_prlimit64, SYS_fstat, SYS_newfstatat,
      SYS_lseek,
  };
  for (int nr : plain) {
    jump(BPF_JMP | BPF_JEQ | BPF_K, uint32_t(nr), 0, 1);
    stmt(BPF_RET | BPF_K, allow);
  }
  // read: the command pipe only; write: the reply pipe and stderr (libc's own messages).
  const std::pair<int, std::vector<int>> fds[] = {{SYS_read, {kCmdFd}},
                                                  {SYS_write, {kReplyFd, 2}}};
  for (const auto& [nr, ok] : fds) {
    jump(BPF_JMP | BPF_JEQ | BPF_K, uint32_t(nr), 0, uint8_t(2 + 2 * ok.size()));
    stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0]));
    for (int fd : ok) {
      jump(BPF_JMP | BPF_JEQ | BPF_K, uint32_t(fd), 0, 1);
      stmt(BPF_RET | BPF_K, allow);
    }
    stmt(BPF_RET | BPF_K, deny);
  }
  // Threads (OpenMP) but no processes: clone needs CLONE_THREAD; clone3 hides its flags
  // in memory, so it answers ENOSYS and libc falls back to clone.
  jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1);
  stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
  jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4);
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0]));
  jump(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1);
  stmt(BPF_RET | BPF_K, allow);
  stmt(BPF_RET | BPF_K, deny);
  // Signals to itself only (abort, a thread's cancellation).
  const uint32_t self = uint32_t(getpid());
  for (int nr : {SYS_tgkill, SYS_kill}) {
    jump(BPF_JMP | BPF_JEQ | BPF_K, uint32_t(nr), 0, 4);
    stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0]));
    jump(BPF_JMP | BPF_JEQ | BPF_K, self, 0, 1);
    stmt(BPF_RET | BPF_K, allow);
    stmt(BPF_RET | BPF_K, deny);
  }
  stmt(BPF_RET | BPF_K, deny);
  sock_fprog prog{uint16_t(f.size()), f.data()};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return false;
  return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0;
#else
  return false;
#endif
}

class Bench;

// A buffer of one size, as a handle: `a()` is where it is in this process right now (the
// harness's own copy of the inputs; in a worker, its arena's current slot).
template <class T>
struct Buf {
  const class Size* size;
  size_t offset, count;
  T* operator()() const;
};

// One shape of a task: its inputs and its one output (declared last), laid out
// page-aligned in a slot; a worker's arena holds two slots.
class Size {
 public:
  Size(Bench& bench, std::string label) : bench_(bench), label_(std::move(label)) {}
  Size(const Size&) = delete;
  ~Size() { free(own_); }

  template <class T>
  Buf<T> input(size_t n) {
    if (has_output_) abort();  // inputs come first: they are copied to workers as one block
    return add<T>(n);
  }
  template <class T>
  Buf<T> output(size_t n) {
    if (has_output_) abort();
    has_output_ = true;
    inputs_ = bytes_;
    return add<T>(n);
  }

  // fill(seed): fresh inputs through the handles; call(reference): one call on them;
  // naive(want): the harness's own result. False when the size failed.
  template <class T, class Fill, class Call, class Naive>
  bool run(const Buf<T>& out, Fill fill, Call call, Naive naive);

  char* base() const { return base_; }
  const std::string& label() const { return label_; }
  size_t slot_bytes() const { return bytes_; }
  size_t inputs_bytes() const { return inputs_; }

 private:
  friend class Bench;
  template <class T>
  Buf<T> add(size_t n) {
    Buf<T> b{this, bytes_, n};
    bytes_ += page_round(std::max<size_t>(1, n * sizeof(T)));
    return b;
  }

  Bench& bench_;
  std::string label_;
  size_t bytes_ = 0, inputs_ = 0;
  bool has_output_ = false;
  char* base_ = nullptr;
  char* own_ = nullptr;  // the harness's copy (inputs drawn here, read by naive())
};

template <class T>
T* Buf<T>::operator()() const {
  return reinterpret_cast<T*>(size->base() + offset);
}

// A worker as the harness sees it.
struct Worker {
  const char* role = "";
  pid_t pid = -1;
  int cmd = -1, reply = -1, mem = -1;
  char* arena = nullptr;
  size_t bytes = 0;
  uint32_t seq = 0;
  clockid_t clock = clockid_t(-1);  // its process's CPU-time clock
  bool alive = false, broke = false;  // broke: it answered out of turn
  int status = 0;  // waitpid's, once it ended
};

class Bench {
 public:
  // The harness, or (argv[1] == "--kh-worker") a worker that serves it.
  Bench(int argc, char** argv, const char* channel_env = "KH_RESULTS") {
    if (argc >= 3 && strcmp(argv[1], "--kh-worker") == 0) {
      worker_start(argv[2]);
      return;
    }
    const char* path = getenv(channel_env);
    const char* nonce = getenv("KH_NONCE");
    if (path && *path) fd_ = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    nonce_ = nonce && *nonce ? nonce : "no-nonce";
    wipe_env(channel_env);
    wipe_env("KH_NONCE");
    prctl(PR_SET_DUMPABLE, 0);  // no process of this user opens /proc/<this>/mem
    signal(SIGPIPE, SIG_IGN);  // a dead worker's pipe is an error to report, not a death
    draws_ = mix(random64() ^ hash_bytes(nonce_.data(), nonce_.size()));
    warmup_ = env_int("KH_WARMUP", 3);
    trials_ = std::max(1, env_int("KH_TRIALS", env_int("KH_BENCHMARK", 20)));
    atol_ = env_double("KH_ATOL", 1e-5);
    rtol_ = env_double("KH_RTOL", 1e-5);
    flush_.resize(size_t(std::max(0, env_int("KH_FLUSH_KB", 8192))) * 256);
    cpu_set_t mine;
    one_cpu_ = sched_getaffinity(0, sizeof mine, &mine) == 0 && CPU_COUNT(&mine) == 1;
    emit(fmt("begin isolation=processes clock=%s", one_cpu_ ? "cpu" : "wall"));
    const std::string self = program(argv[0]);
    spawn(ref_, self, "reference");
    spawn(sol_, self + "_sol", "solution");
  }

  bool worker() const { return role_ != 0; }
  double atol() const { return atol_; }
  double rtol() const { return rtol_; }

  int finish() {
    if (worker()) serve_until_quit();
    for (Worker* w : {&ref_, &sol_}) quit(*w);
    if (died_.empty()) emit(fmt("end passed=%d sizes=%d", failed_ || broken_ ? 0 : 1, sizes_));
    if (fd_ >= 0) close(fd_);
    printf("%s\n", failed_ || broken_ ? "Incorrect" : "Passed");
    fflush(stdout);
    if (!died_.empty()) end_like_the_solution();
    return broken_ ? 3 : failed_ ? 1 : 0;
  }

  // The reference disagrees with the naive result, or its worker failed: the task is
  // broken, not the solution.
  void reference_broken(const std::string& why) {
    broken_ = true;
    emit("reference_broken why=" + why);
  }

  template <class T, class Fill, class Call, class Naive>
  bool conduct(Size& s, const Buf<T>& out, Fill& fill, Call& call, Naive& naive) {
    if (worker()) {
      serve(s, [&](bool reference) { call(reference); });
      return true;
    }
    printf("=== %s ===\n", s.label().c_str());
    if (!open_size(s)) return false;
    Check<T> check(out.count);
    Stats ref_ms, sol_ms;
    std::string err = first_call(s, out, fill, naive, check);
    for (int w = 0; err.empty() && w < warmup_; ++w)
      err = trial(s, out, fill, check, nullptr, nullptr);
    for (int t = 0; err.empty() && t < trials_; ++t) {
      err = trial(s, out, fill, check, &ref_ms, &sol_ms);
      const bool plain = err.rfind("cheat:", 0) != 0 && err.rfind("reference:", 0) != 0;
      if (!err.empty() && plain && died_.empty()) err = fmt("trial %d: ", t) + err;
    }
    const double rtt = err.empty() ? round_trip() : 0;
    close_size(s);
    return report(s.label(), err, ref_ms, sol_ms, rtt);
  }

 private:
  // -- the harness's side --------------------------------------------------------------

  static std::string program(const char* argv0) {
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, size_t(n)) : std::string(argv0);
  }

  // Start a worker: its own process group (stopped as one), descriptors 3-5 only, and
  // an environment without the channel's name or nonce.
  void spawn(Worker& w, const std::string& exe, const char* role) {
    int cmd[2], reply[2];
    w.role = role;
    if (pipe2(cmd, O_CLOEXEC) || pipe2(reply, O_CLOEXEC)) return;
    w.mem = memfd_create(role, MFD_CLOEXEC);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
      setpgid(0, 0);
      const int from[] = {cmd[0], reply[1], w.mem};
      int high[3];
      for (int i = 0; i < 3; ++i) high[i] = fcntl(from[i], F_DUPFD_CLOEXEC, 100);
      for (int i = 0; i < 3; ++i) dup2(high[i], kCmdFd + i);
      closefrom(kArenaFd + 1);
      execl(exe.c_str(), exe.c_str(), "--kh-worker", role, static_cast<char*>(nullptr));
      _exit(127);
    }
    close(cmd[0]), close(reply[1]);
    if (pid < 0) return;
    setpgid(pid, pid);
    w.pid = pid, w.cmd = cmd[1], w.reply = reply[0], w.alive = true;
    if (clock_getcpuclockid(pid, &w.clock) != 0) w.clock = clockid_t(-1);
  }

  bool open_size(Size& s) {
    const int index = sizes_++;
    s.own_ = static_cast<char*>(aligned_alloc(kPage, s.slot_bytes()));
    s.base_ = s.own_;
    if (!s.own_) return fail_infra(s.label(), "out of memory for the inputs");
    memset(s.own_, 0, s.slot_bytes());
    for (Worker* w : {&ref_, &sol_}) {
      w->bytes = 2 * s.slot_bytes();
      if (!w->alive || ftruncate(w->mem, off_t(w->bytes)) != 0)
        return fail_infra(s.label(), fmt("cannot start the %s's program", w->role));
      void* p = mmap(nullptr, w->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, w->mem, 0);
      if (p == MAP_FAILED) return fail_infra(s.label(), "cannot map a worker's arena");
      w->arena = static_cast<char*>(p);
      if (!exchange(*w, Cmd{kMap, 0, 0, 0, uint64_t(index), w->bytes}))
        return lost(*w, s.label());
    }
    return true;
  }

  void close_size(Size& s) {
    for (Worker* w : {&ref_, &sol_}) {
      if (w->alive) exchange(*w, Cmd{kNext, 0, 0, 0, 0, 0});
      if (w->arena) munmap(w->arena, w->bytes);
      w->arena = nullptr;
      if (w->mem >= 0 && ftruncate(w->mem, 0)) {}  // give the pages back
    }
    s.base_ = s.own_;
  }

  // Fresh inputs in the harness's copy, copied into both arenas at `slot`; both outputs
  // poisoned there.
  template <class T, class Fill>
  void stage(Size& s, const Buf<T>& out, Fill& fill, uint32_t slot) {
    fill(random64());
    for (Worker* w : {&ref_, &sol_}) {
      char* at = w->arena + slot * s.slot_bytes();
      memcpy(at, s.own_, s.inputs_bytes());
      poison(reinterpret_cast<T*>(at + out.offset), out.count);
    }
  }

  template <class T>
  const T* output(const Worker& w, const Size& s, const Buf<T>& out, uint32_t slot) const {
    return reinterpret_cast<const T*>(w.arena + slot * s.slot_bytes() + out.offset);
  }

  template <class T, class Fill, class Naive>
  std::string first_call(Size& s, const Buf<T>& out, Fill& fill, Naive& naive, Check<T>& check) {
    stage(s, out, fill, 0);
    if (timed(ref_, 0, 0) < 0) return lost_reason(ref_);
    if (timed(sol_, 0, 0) < 0) return lost_reason(sol_);
    naive(check.want.data());
    return check.judge(true, output(ref_, s, out, 0), output(sol_, s, out, 0), atol_, rtol_);
  }

  // One call of each side on fresh inputs, checked; timed into r and q when given.
  template <class T, class Fill>
  std::string trial(Size& s, const Buf<T>& out, Fill& fill, Check<T>& check, Stats* r,
                    Stats* q) {
    draws_ = mix(draws_);
    const uint32_t slot = uint32_t(draws_ & 1), shift = uint32_t((draws_ >> 8) & 4095);
    const bool ref_first = (draws_ >> 1) & 1;
    stage(s, out, fill, slot);
    double times[2];
    for (int k = 0; k < 2; ++k) {
      Worker& w = (k == 0) == ref_first ? ref_ : sol_;
      const double t = timed(w, slot, shift);
      if (t < 0) return lost_reason(w);
      times[&w == &sol_] = t;
    }
    if (r) r->add(times[0]), q->add(times[1]);
    return check.judge(false, output(ref_, s, out, slot), output(sol_, s, out, slot), atol_,
                       rtol_);
  }

  // One call, timed from here. The worker was stopped while its inputs were staged and
  // the caches flushed; the clock runs from letting it go (SIGCONT) to its reply, and it
  // is stopped again before anything reads its output. Nothing of its process (a thread,
  // a signal handler) runs outside that window: work done early would have to be done
  // before its inputs existed. The time is the CPU time the kernel accounted to the
  // worker's process over the window when the run has one CPU (waiting for the CPU, which
  // on a loaded machine is most of the noise, is not the kernel's time, and nothing a
  // process does changes its own accounting), else the wall time. -1: it is gone.
  double timed(Worker& w, uint32_t slot, uint32_t shift) {
    if (!w.alive) return -1;
    flush();
    const double c0 = cpu_ms(w), t0 = now_ms();
    resume(w);
    const bool ok = roundtrip(w, Cmd{kCall, 0, slot, shift, 0, 0});
    const double t1 = now_ms();
    hold(w);
    const double c1 = cpu_ms(w);
    if (!ok || !w.alive) return -1;
    return one_cpu_ ? c1 - c0 : t1 - t0;
  }

  // The same window around a call that does nothing, on the reference worker (never the
  // solution's: it could make its own slow): the least of 16, taken off both sides' times.
  double round_trip() {
    double best = 1e300;
    for (int i = 0; i < 16 && ref_.alive; ++i) {
      flush();
      const double c0 = cpu_ms(ref_), t0 = now_ms();
      resume(ref_);
      roundtrip(ref_, Cmd{kPing, 0, 0, 0, 0, 0});
      const double t1 = now_ms();
      hold(ref_);
      best = std::min(best, one_cpu_ ? cpu_ms(ref_) - c0 : t1 - t0);
    }
    return best < 1e300 ? best : 0;
  }

  static double cpu_ms(const Worker& w) {  // the CPU time of all of its threads
    timespec ts{};
    if (w.clock == clockid_t(-1) || clock_gettime(w.clock, &ts) != 0) return 0;
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
  }

  bool exchange(Worker& w, const Cmd& c) {
    resume(w);
    const bool ok = roundtrip(w, c);
    hold(w);
    return ok && w.alive;
  }

  bool roundtrip(Worker& w, Cmd c) {
    c.seq = ++w.seq;
    uint32_t got = 0;
    if (!write_all(w.cmd, &c, sizeof c) || !read_all(w.reply, &got, sizeof got)) {
      reap(w);
      return false;
    }
    if (got != c.seq) {  // an answer nobody asked for: not the harness's code talking
      w.broke = true;
      reap(w);
      return false;
    }
    return true;
  }

  void resume(Worker& w) {
    if (w.alive) kill(-w.pid, SIGCONT);
  }

  void hold(Worker& w) {  // stopped, all of its process group, before we go on
    if (!w.alive) return;
    kill(-w.pid, SIGSTOP);
    int st = 0;
    while (waitpid(w.pid, &st, WUNTRACED) < 0 && errno == EINTR) {
    }
    if (!WIFSTOPPED(st)) w.alive = false, w.status = st;
  }

  // A worker that is gone, or must be: its process group killed (a worker that closed its
  // pipe but lives on cannot hold the harness up), then its status read. A process that
  // had already ended keeps the status it ended with.
  void reap(Worker& w) {
    if (!w.alive) return;
    kill(-w.pid, SIGKILL);
    int st = 0;
    while (waitpid(w.pid, &st, 0) < 0 && errno == EINTR) {
    }
    w.alive = false, w.status = st;
  }

  void quit(Worker& w) {  // nothing of a worker's needs an orderly end
    reap(w);
    if (w.cmd >= 0) close(w.cmd), close(w.reply), w.cmd = w.reply = -1;
  }

  std::string how_it_ended(const Worker& w) const {
    if (w.broke) return "answered out of turn";
    if (WIFSIGNALED(w.status)) return fmt("killed by signal %d (%s)", WTERMSIG(w.status),
                                          strsignal(WTERMSIG(w.status)));
    if (WIFEXITED(w.status)) return fmt("exited with code %d", WEXITSTATUS(w.status));
    return "ended";
  }

  // Why a size stopped because a worker is gone; for the solution, the death is recorded
  // and the harness later ends the way it did (finish()).
  std::string lost_reason(Worker& w) {
    if (&w == &ref_) return "reference: the reference's process " + how_it_ended(w);
    if (w.broke) return "cheat:protocol the solution's process " + how_it_ended(w);
    died_ = how_it_ended(w);
    return "the solution's process " + died_ + " during its call";
  }

  bool lost(Worker& w, const std::string& label) {
    return report(label, lost_reason(w), Stats(), Stats(), 0);
  }

  bool fail_infra(const std::string& label, const std::string& why) {
    return report(label, "reference: " + why, Stats(), Stats(), 0);
  }

  // The solution's process died: the harness ends the same way (the same signal, or
  // without its `end` line), so the run reads as the solution's crash.
  [[noreturn]] void end_like_the_solution() {
    const int st = sol_.status;
    if (WIFSIGNALED(st)) {
      signal(WTERMSIG(st), SIG_DFL);
      kill(getpid(), WTERMSIG(st));
    }
    _exit(WIFEXITED(st) && WEXITSTATUS(st) ? WEXITSTATUS(st) : 1);
  }

  bool report(const std::string& label, const std::string& err, const Stats& r,
              const Stats& s, double rtt) {
    if (!err.empty()) {
      if (err.rfind("reference:", 0) == 0) {
        reference_broken(err);
      } else if (err.rfind("cheat:", 0) == 0) {
        failed_ = true;
        const size_t space = err.find(' ');
        emit("cheat rule=" + err.substr(6, space - 6) + " label=" + label +
             " why=" + err.substr(space + 1));
      } else if (!died_.empty()) {
        failed_ = true;
        emit("died role=solution label=" + label + " why=" + err);
      } else {
        failed_ = true;
        emit("size label=" + label + " ok=0 why=" + err);
      }
      printf("Incorrect: %s\n", err.c_str());
      return false;
    }
    // The round trip both sides paid, taken off both (at most half of either time).
    auto net = [rtt](double ms) { return std::max(ms - rtt, 0.5 * ms); };
    printf("Ref time: %.4f ms (avg over %d trials, min: %.4f ms)\n", net(r.mean()), r.n,
           net(r.min));
    printf("Kernel time: %.4f ms (avg over %d trials, min: %.4f ms)\n", net(s.mean()), s.n,
           net(s.min));
    printf("Speedup: %.2fx\n", net(s.min) > 0 ? net(r.min) / net(s.min) : 0.0);
    emit(fmt("size label=%s ok=1 trials=%d ref_min=%.6f ref_mean=%.6f sol_min=%.6f "
             "sol_mean=%.6f rtt=%.6f ref_raw_min=%.6f sol_raw_min=%.6f",
             label.c_str(), r.n, net(r.min), net(r.mean()), net(s.min), net(s.mean()), rtt,
             r.min, s.min));
    return true;
  }

  void emit(const std::string& line) {
    if (fd_ < 0) return;
    std::string out = nonce_ + " " + line;
    std::replace(out.begin(), out.end(), '\n', ' ');  // one record per line
    out += "\n";
    if (write(fd_, out.data(), out.size()) < 0) broken_ = true;
  }

  void flush() {  // evict the caches the last call warmed (both contestants pay the same)
    for (size_t i = 0; i < flush_.size(); i += 16) flush_[i] += 1.0f;
    sink_ += flush_.empty() ? 0 : flush_[flush_.size() / 2];
  }

  // -- a worker's side -------------------------------------------------------------------

  void worker_start(const char* role) {
    role_ = strcmp(role, "reference") == 0 ? 1 : 2;
    if (role_ == 1) prctl(PR_SET_DUMPABLE, 0);
    // The solution's program runs confined from here on: main's own code before its first
    // call is the harness's (no initializers of the solution's run, the checks see to it).
    if (role_ == 2 && !confine_solution()) fprintf(stderr, "kh: no seccomp filter\n");
  }

  // Serve one size: map the arena, then calls until the harness moves on.
  void serve(Size& s, const std::function<void(bool)>& call) {
    const uint64_t index = uint64_t(sizes_++);
    char* arena = nullptr;
    size_t bytes = 0;
    for (;;) {
      Cmd c{};
      if (!read_all(kCmdFd, &c, sizeof c)) _exit(0);  // the harness is gone
      if (c.op == kQuit) _exit(0);
      if (c.op == kMap) {
        if (c.index != index || c.bytes != 2 * s.slot_bytes()) _exit(3);  // out of step
        void* p = mmap(nullptr, c.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, kArenaFd, 0);
        if (p == MAP_FAILED) _exit(4);
        arena = static_cast<char*>(p), bytes = c.bytes;
        for (size_t i = 0; i < bytes; i += kPage) {  // fault every page in now, untimed
          volatile char* v = arena + i;
          *v = *v;
        }
      } else if (c.op == kCall) {
        s.base_ = arena + (c.slot & 1) * s.slot_bytes();
        shifted(c.shift, [&] { call(role_ == 1); });
      } else if (c.op == kNext) {
        munmap(arena, bytes);
        answer(c.seq);
        return;
      }
      answer(c.seq);
    }
  }

  void serve_until_quit() {
    for (;;) {
      Cmd c{};
      if (!read_all(kCmdFd, &c, sizeof c) || c.op == kQuit) _exit(0);
      answer(c.seq);
    }
  }

  static void answer(uint32_t seq) {
    if (!write_all(kReplyFd, &seq, sizeof seq)) _exit(0);
  }

  // A call on a stack shifted by `shift` bytes: where the stack sits relative to the data
  // (4K aliasing) can change a kernel's speed by tens of percent; both sides of a trial
  // get the same shift, and each trial another.
  template <class Fn>
  static void shifted(uint32_t shift, Fn fn) {
    volatile char* pad = static_cast<char*>(alloca(64 + (shift & 4095)));
    pad[0] = 0;
    fn();
    pad[0] = 1;
  }

  static int env_int(const char* name, int dflt) {
    const char* v = getenv(name);
    return v && *v ? atoi(v) : dflt;
  }
  static double env_double(const char* name, double dflt) {
    const char* v = getenv(name);
    return v && *v ? atof(v) : dflt;
  }

  int role_ = 0;  // 0 the harness, 1 the reference worker, 2 the solution worker
  int fd_ = -1;
  std::string nonce_, died_;
  uint64_t draws_ = 0x6b68;
  int warmup_ = 3, trials_ = 20, sizes_ = 0;
  double atol_ = 1e-5, rtol_ = 1e-5;
  bool failed_ = false, broken_ = false, one_cpu_ = false;
  Worker ref_, sol_;
  std::vector<float> flush_;
  volatile float sink_ = 0;
};

template <class T, class Fill, class Call, class Naive>
bool Size::run(const Buf<T>& out, Fill fill, Call call, Naive naive) {
  return bench_.conduct(*this, out, fill, call, naive);
}

}  // namespace
}  // namespace kh
