/* vibes-box: the two small jobs done inside the evaluation container.
 *
 *   vibes-box init
 *       pid 1: reaps orphans and waits for the container to be killed. It runs as root
 *       without capabilities, so the job's user can neither signal nor ptrace it.
 *
 *   vibes-box run [--cap BYTES] [--timeout-ms MS] [--rlimit NAME=VALUE]... -- PROGRAM...
 *       runs one command for `docker exec` (as the unprivileged job user): applies the
 *       rlimits, forwards at most BYTES of stdout and of stderr (more kills the job here,
 *       so a 5 GB flood never crosses the Docker API), stops it after MS, and when it
 *       ends kills every other process of its user (a `setsid` grandchild included).
 *       Last, it appends one status line to stderr, which the runner strips and parses:
 *       "\n" MARK " status=<wait status> output_limited=<0..3> timed_out=<0|1>
 *       oom_kills=<n> pids_max=<n> cpu_us=<n> launch_error=<text>\n", the counters being
 *       output_limited a bit mask (1 stdout, 2 stderr passed the cap), the counters
 *       increases of the container's cgroup counters (read before the container is
 *       touched, so a fork storm is still reported as one), launch_error why the program
 *       could not be started (empty: it was).
 *
 * Exit code: 0 when the status line was written, 125 on a setup failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MARK "\x1evibes-box"
#define DRAIN_MS 50 /* after the command exits, how long leftovers may still write */

static void die(const char *what) {
    fprintf(stderr, "vibes-box: %s: %s\n", what, strerror(errno));
    exit(125);
}

static int __attribute__((noreturn)) init_main(void) {
    /* SIGTERM/SIGINT would be ignored by pid 1 anyway; the container ends by SIGKILL. */
    for (;;) {
        if (wait(NULL) < 0 && errno == ECHILD) pause();
    }
}

/* A counter from a flat-keyed cgroup file ("key value" lines); 0 when absent. */
static long long counter(const char *path, const char *key) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char name[64];
    long long value, found = 0;
    while (fscanf(f, "%63s %lld", name, &value) == 2)
        if (!strcmp(name, key)) found = value;
    fclose(f);
    return found;
}

/* v1 keeps each controller in its own directory, v2 all in one. */
static long long oom_kills(void) {
    return counter("/sys/fs/cgroup/memory/memory.oom_control", "oom_kill") +
           counter("/sys/fs/cgroup/memory.events", "oom_kill");
}

static long long pids_max(void) {
    return counter("/sys/fs/cgroup/pids/pids.events", "max") +
           counter("/sys/fs/cgroup/pids.events", "max");
}

static int rlimit_resource(const char *name) {
    if (!strcmp(name, "cpu")) return RLIMIT_CPU;
    if (!strcmp(name, "fsize")) return RLIMIT_FSIZE;
    if (!strcmp(name, "nofile")) return RLIMIT_NOFILE;
    if (!strcmp(name, "core")) return RLIMIT_CORE;
    if (!strcmp(name, "as")) return RLIMIT_AS;
    return -1;
}

static void set_rlimit(const char *spec) {
    const char *eq = strchr(spec, '=');
    char name[16];
    if (!eq || (size_t)(eq - spec) >= sizeof name) { errno = EINVAL; die(spec); }
    memcpy(name, spec, (size_t)(eq - spec));
    name[eq - spec] = 0;
    int res = rlimit_resource(name);
    if (res < 0) { errno = EINVAL; die(spec); }
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = strtoull(eq + 1, NULL, 10);
    /* CPU: SIGXCPU at the limit (a hard limit equal to it would send SIGKILL instead). */
    if (res == RLIMIT_CPU) rl.rlim_max = rl.rlim_cur + 1;
    if (setrlimit(res, &rl)) die(spec);
}

static int chld_pipe[2]; /* SIGCHLD wakes poll() through this pipe: no polling delay */

static void on_chld(int sig) {
    (void)sig;
    int saved = errno;
    if (write(chld_pipe[1], "c", 1) < 0) {} /* full pipe: a wake-up is pending anyway */
    errno = saved;
}

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Forward what fits under the cap; report whether the cap was passed. */
static int forward(int from, int to, long long *left) {
    char buf[65536];
    ssize_t n = read(from, buf, sizeof buf);
    if (n <= 0) return n == 0 ? -1 : 0; /* -1: EOF */
    ssize_t keep = n < *left ? n : (ssize_t)*left;
    for (ssize_t off = 0; off < keep;) {
        ssize_t w = write(to, buf + off, (size_t)(keep - off));
        if (w <= 0) break;
        off += w;
    }
    *left -= n;
    return *left < 0 ? 1 : 0;
}

static int run_main(int argc, char **argv) {
    long long cap = 1 << 20, timeout_ms = 0;
    int i = 2;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--")) { i++; break; }
        if (i + 1 >= argc) { errno = EINVAL; die(argv[i]); }
        if (!strcmp(argv[i], "--cap")) cap = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--timeout-ms")) timeout_ms = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--rlimit")) set_rlimit(argv[++i]);
        else { errno = EINVAL; die(argv[i]); }
    }
    if (i >= argc) { errno = EINVAL; die("no program given"); }
    /* kill(-1) below reaches every process we may signal: as root that is the whole
     * machine (or container). Only ever run as the unprivileged job user. */
    if (getuid() == 0 || geteuid() == 0) {
        fprintf(stderr, "vibes-box: run refuses to run as root\n");
        return 125;
    }
    long long oom0 = oom_kills(), pids0 = pids_max();
    long long deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;

    /* errp: why the program could not be started, from us or from vibes-launch (which
     * finds the fd in $VIBES_LAUNCH_ERRFD); close-on-exec, so the job cannot write it. */
    int out[2], err[2], errp[2];
    if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(errp, O_CLOEXEC))
        die("pipe");
    if (pipe2(chld_pipe, O_CLOEXEC | O_NONBLOCK)) die("pipe");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_chld;
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, NULL);
    pid_t child = fork();
    if (child < 0) die("fork");
    if (child == 0) {
        dup2(out[1], 1);
        dup2(err[1], 2);
        char fd[16];
        snprintf(fd, sizeof fd, "%d", errp[1]);
        fcntl(errp[1], F_SETFD, 0); /* vibes-launch sets close-on-exec again itself */
        setenv("VIBES_LAUNCH_ERRFD", fd, 1);
        execvp(argv[i], argv + i);
        dprintf(errp[1], "exec %s: %s", argv[i], strerror(errno));
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    close(errp[1]);
    signal(SIGPIPE, SIG_IGN);

    struct pollfd fds[4] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0},
                            {chld_pipe[0], POLLIN, 0}, {errp[0], POLLIN, 0}};
    char launch_error[512] = "";
    size_t launch_len = 0;
    long long left[2] = {cap, cap};
    int open_fds = 2, status = 0, exited = 0, limited = 0, timed_out = 0;
    long long exit_at = 0;
    for (;;) {
        if (!exited && waitpid(child, &status, WNOHANG) == child) {
            exited = 1;
            exit_at = now_ms();
        }
        long long now = now_ms(), wait = -1;
        /* After the exit, leftovers holding the pipes get DRAIN_MS, then go. */
        if (exited && (open_fds == 0 || now - exit_at >= DRAIN_MS)) break;
        if (exited) wait = DRAIN_MS - (now - exit_at);
        if (deadline) {
            if (now >= deadline) { timed_out = 1; break; }
            if (wait < 0 || deadline - now < wait) wait = deadline - now;
        }
        if (poll(fds, 4, (int)wait) < 0 && errno != EINTR) die("poll");
        if (fds[2].revents & POLLIN) {
            char buf[64];
            while (read(chld_pipe[0], buf, sizeof buf) > 0) {}
        }
        if (fds[3].fd >= 0 && fds[3].revents) {
            ssize_t n = read(errp[0], launch_error + launch_len, sizeof launch_error - 1 - launch_len);
            if (n > 0) launch_len += (size_t)n;
            else { close(errp[0]); fds[3].fd = -1; }
        }
        for (int k = 0; k < 2; k++) {
            if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            int r = forward(fds[k].fd, k == 0 ? 1 : 2, &left[k]);
            if (r < 0) { close(fds[k].fd); fds[k].fd = -1; open_fds--; }
            else if (r > 0) limited |= k == 0 ? 1 : 2;
        }
        if (limited) break;
    }
    /* Everything of this user but us goes: the command's tree if we are stopping it, and
     * anything it left or detached. A process with SIGKILL pending cannot fork, so a fork
     * storm is over after one sweep; the second is for good measure. */
    if (limited || timed_out) kill(-1, SIGKILL);
    if (!exited) waitpid(child, &status, 0); /* it may close its pipes before it exits */
    kill(-1, SIGKILL);
    kill(-1, SIGKILL);
    while (waitpid(-1, NULL, WNOHANG) > 0) {}
    if (fds[3].fd >= 0) {
        ssize_t n = read(errp[0], launch_error + launch_len, sizeof launch_error - 1 - launch_len);
        if (n > 0) launch_len += (size_t)n;
    }
    launch_error[launch_len] = 0;
    for (char *c = launch_error; *c; c++)
        if (*c == '\n') *c = ' ';
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    long long cpu_us = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL +
                       ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
    fprintf(stderr,
            "\n" MARK " status=%d output_limited=%d timed_out=%d oom_kills=%lld pids_max=%lld"
            " cpu_us=%lld launch_error=%s\n",
            status, limited, timed_out, oom_kills() - oom0, pids_max() - pids0, cpu_us,
            launch_error);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "init")) return init_main();
    if (argc >= 2 && !strcmp(argv[1], "run")) return run_main(argc, argv);
    fprintf(stderr, "usage: vibes-box init | vibes-box run [--cap N] [--rlimit K=V]... -- CMD\n");
    return 125;
}
