/* vibes-launch: confine itself, then exec the job.
 *
 * Doing this in a tiny exec'd helper instead of Python's preexec_fn keeps spawning on the
 * fast vfork path and is safe with threads (see docs/sandbox.md). Every step is optional,
 * so the same binary serves the process runner (rlimits only), the Landlock sandbox (all
 * of it) and the seccomp/rlimit layer inside bubblewrap and firejail.
 *
 * usage: vibes-launch [OPTION]... -- PROGRAM [ARG]...
 *   --chdir DIR          change directory before exec
 *   --rlimit NAME=VALUE  cpu (s), fsize/as/stack (bytes), nofile, core, nproc
 *   --cgroup FILE        write our pid into FILE (a cgroup.procs); repeatable
 *   --netns              enter a new, empty network namespace (needs CAP_SYS_ADMIN)
 *   --loopback           with --netns: bring its loopback interface up (local-only network)
 *   --net                allow every socket family and TCP (the default filter allows
 *                        AF_UNIX only, and Landlock denies TCP bind/connect)
 *   --drop-caps          clear every capability set and lock securebits, so root keeps
 *                        its uid but no privilege (cannot raise rlimits, mount, ...)
 *   --own-userns         enter a new user namespace (uid and gid mapped to themselves, no
 *                        capability kept): RLIMIT_NPROC then counts the job's processes
 *                        only, not every process of the user (kernel >= 5.14). rlimits are
 *                        applied after it, so that the namespace's own ceiling stays the
 *                        caller's.
 *   --ro PATH            Landlock: read and execute beneath PATH; repeatable
 *   --rw PATH            Landlock: full access beneath PATH; repeatable
 *   --landlock           apply Landlock (implied by --ro/--rw): only the listed paths,
 *                        no TCP bind/connect (ABI 4), signals and abstract unix sockets
 *                        scoped to the sandbox (ABI 6)
 *   --seccomp            apply the syscall filter (see install_seccomp)
 *   --deny-syscall NR    also kill the process on syscall number NR; repeatable
 *   --pass-errfd N       keep the error pipe open at fd N across exec, for a launcher
 *                        run inside the next wrapper (bwrap, firejail) to report into
 *   --probe              print "landlock_abi=N seccomp=0|1 userns=0|1" and exit
 *
 * Setup errors go to the fd named by $VIBES_LAUNCH_ERRFD (close-on-exec, so the parent
 * sees an empty pipe when exec succeeded and can tell our failures from the job's);
 * without it they go to stderr. Exit codes of its own: 125 setup failure, 127 exec failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__ /* everything but rlimits and chdir; macOS builds the portable part */
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <sched.h>
#include <net/if.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#endif

#define MAX_RULES 64
#define MAX_DENIED 64

static int allow_net;                 /* --net */
static int denied[MAX_DENIED];        /* --deny-syscall */
static int n_denied;

struct rule {
    const char *path;
    int writable;
};

static struct rule rules[MAX_RULES]; /* Landlock paths from --ro/--rw */
static int n_rules;

static int errfd = 2;

#define MAX_RLIMITS 16
static const char *rlimit_specs[MAX_RLIMITS]; /* applied after the namespaces */
static int n_rlimits;

static void fail(int code, const char *what, const char *detail) {
    dprintf(errfd, "vibes-launch: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    _exit(code);
}

static void die(const char *what) { fail(125, what, strerror(errno)); }

/* ---- rlimits ------------------------------------------------------------------------ */

static int rlimit_resource(const char *name) {
    if (!strcmp(name, "cpu")) return RLIMIT_CPU;
    if (!strcmp(name, "fsize")) return RLIMIT_FSIZE;
    if (!strcmp(name, "nofile")) return RLIMIT_NOFILE;
    if (!strcmp(name, "core")) return RLIMIT_CORE;
    if (!strcmp(name, "as")) return RLIMIT_AS;
    if (!strcmp(name, "stack")) return RLIMIT_STACK;
    if (!strcmp(name, "nproc")) return RLIMIT_NPROC;
    return -1;
}

static void set_rlimit(const char *spec) {
    char name[32];
    const char *eq = strchr(spec, '=');
    if (!eq || (size_t)(eq - spec) >= sizeof name) fail(125, "bad --rlimit", spec);
    memcpy(name, spec, (size_t)(eq - spec));
    name[eq - spec] = 0;
    int res = rlimit_resource(name);
    if (res < 0) fail(125, "unknown rlimit", spec);
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = strtoull(eq + 1, NULL, 10);
    /* CPU: at a hard limit equal to the soft one the kernel sends SIGKILL, not SIGXCPU,
     * and the end reads as a crash; one second more lets SIGXCPU say what happened. */
    if (res == RLIMIT_CPU) rl.rlim_max = rl.rlim_cur + 1;
    if (setrlimit(res, &rl)) die(spec);
}

#ifdef __linux__
/* ---- cgroup, network namespace, capabilities ---------------------------------------- */

static void join_cgroup(const char *procs_file) {
    int fd = open(procs_file, O_WRONLY | O_CLOEXEC);
    if (fd < 0) die(procs_file);
    char pid[24];
    int len = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    if (write(fd, pid, (size_t)len) != len) die(procs_file);
    close(fd);
}

static void loopback_up(void) {
    /* A new network namespace starts with lo down: local-only jobs need it up. */
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket");
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
    if (ioctl(fd, SIOCGIFFLAGS, &ifr)) die("SIOCGIFFLAGS lo");
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(fd, SIOCSIFFLAGS, &ifr)) die("SIOCSIFFLAGS lo");
    close(fd);
}

static void write_proc(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) die(path);
    ssize_t len = (ssize_t)strlen(text);
    if (write(fd, text, (size_t)len) != len) die(path);
    close(fd);
}

static void own_userns(void) {
    /* A user namespace of the job's own: the kernel counts RLIMIT_NPROC per namespace, so
     * a fork storm in one job cannot use up the user's processes for the next one. */
    char map[64];
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (unshare(CLONE_NEWUSER)) die("unshare(CLONE_NEWUSER)");
    write_proc("/proc/self/setgroups", "deny");
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    write_proc("/proc/self/uid_map", map);
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    write_proc("/proc/self/gid_map", map);
}

static int userns_supported(void) {
    pid_t pid = fork();
    if (pid < 0) return 0;
    if (pid == 0) _exit(unshare(CLONE_NEWUSER) ? 1 : 0);
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return 0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* With --own-userns the job also gets a pid namespace, under a minimal init of ours:
 * without a cgroup nothing else reaches a `setsid` grandchild, but the kernel kills every
 * process of a pid namespace when its init exits. The job is not that init itself: pid 1
 * ignores signals it has no handler for (a panic's SIGABRT, SIGXCPU), which would change
 * how the job ends. The launcher stays outside, as the process its caller waits for, and
 * ends as the job ended. */
static void relay(int status) {
    if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_UNBLOCK, &all, NULL);
    signal(sig, SIG_DFL);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    raise(sig);
    _exit(128 + sig);
}

static void be_init(pid_t job, int report) {
    /* Reap everything (orphans are ours now) until the job itself ends; then its status
     * goes to the launcher, and our exit takes the rest of the namespace with it. */
    int status = 0;
    for (;;) {
        pid_t got = waitpid(-1, &status, 0);
        if (got == job) break;
        if (got < 0 && errno != EINTR) { status = SIGKILL; break; }
    }
    if (write(report, &status, sizeof status) != (ssize_t)sizeof status) _exit(125);
    _exit(0);
}

static int launcher_gone(int life) {
    /* The launcher holds the only write end of `life`: a hang-up means it has died. */
    struct pollfd p = {.fd = life, .events = POLLIN};
    return poll(&p, 1, 0) != 0;
}

static void own_pidns(void) {
    int report[2], life[2];
    if (pipe2(report, O_CLOEXEC) || pipe2(life, O_CLOEXEC)) die("pipe2");
    if (unshare(CLONE_NEWPID)) die("unshare(CLONE_NEWPID)");
    pid_t init = fork();
    if (init < 0) die("fork (pid namespace init)");
    if (init == 0) {
        /* Dies with the launcher (killpg from outside reaches us too, but a plain kill
         * of the launcher alone must not leave the namespace running). */
        close(life[1]);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) || launcher_gone(life[0])) _exit(125);
        close(life[0]);
        close(report[0]);
        pid_t job = fork();
        if (job < 0) die("fork (job)");
        if (job == 0) { close(report[1]); return; } /* pid 2: on to the rest of the setup */
        if (errfd != 2) close(errfd); /* exec of the job alone closes the caller's pipe */
        be_init(job, report[1]);
    }
    if (errfd != 2) close(errfd);
    close(report[1]);
    close(life[0]); /* life[1] stays open until we exit */
    int status = 0, st = 0;
    while (waitpid(init, &st, 0) < 0 && errno == EINTR) {}
    ssize_t n;
    while ((n = read(report[0], &status, sizeof status)) < 0 && errno == EINTR) {}
    relay(n == (ssize_t)sizeof status ? status : st);
}

static void drop_caps(void) {
    /* Lock root out of capabilities for good: no gain on exec, no fix-ups on setuid. */
    if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
              SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
              SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) &&
        errno != EPERM)
        die("securebits");
    for (int cap = 0; cap < 64; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL && errno != EPERM)
            die("capbset");
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &hdr, data)) die("capset");
}

/* ---- Landlock (raw syscalls: libc headers lag behind the kernel ABI) ----------------- */

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_ALL_V1 ((1ULL << 13) - 1) /* execute .. make_sym */
#define LL_FS_REFER (1ULL << 13)        /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)     /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)    /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0)     /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)
#define LL_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | \
                        LL_FS_IOCTL_DEV)

struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct ll_path_beneath {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

static int landlock_abi(void) {
    long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, 1U /* VERSION */);
    return abi < 0 ? 0 : (int)abi;
}

static void install_landlock(void) {
    int abi = landlock_abi();
    if (abi < 1) fail(125, "landlock", "not supported by this kernel");
    struct ll_ruleset_attr attr = {0, 0, 0};
    size_t attr_size = sizeof attr.handled_access_fs;
    uint64_t fs = LL_FS_ALL_V1;
    if (abi >= 2) fs |= LL_FS_REFER;
    if (abi >= 3) fs |= LL_FS_TRUNCATE;
    if (abi >= 5) fs |= LL_FS_IOCTL_DEV;
    attr.handled_access_fs = fs;
    if (abi >= 4 && !allow_net) {
        /* Handled with no rule: every TCP bind and connect is denied. */
        attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
        attr_size = offsetof(struct ll_ruleset_attr, scoped);
    }
    if (abi >= 6) {
        attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
        attr_size = sizeof attr;
    }
    int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, attr_size, 0);
    if (ruleset < 0) die("landlock_create_ruleset");
    for (int i = 0; i < n_rules; i++) {
        int fd = open(rules[i].path, O_PATH | O_CLOEXEC);
        if (fd < 0) {
            if (errno == ENOENT) continue; /* e.g. /lib64 on some systems */
            die(rules[i].path);
        }
        struct stat st;
        if (fstat(fd, &st)) die(rules[i].path);
        uint64_t allow = rules[i].writable
                             ? fs
                             : (LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR);
        if (!S_ISDIR(st.st_mode)) allow &= LL_FILE_RIGHTS; /* dir rights on a file: EINVAL */
        struct ll_path_beneath pb = {allow & fs, fd};
        if (syscall(__NR_landlock_add_rule, ruleset, 1 /* PATH_BENEATH */, &pb, 0))
            die(rules[i].path);
        close(fd);
    }
    if (syscall(__NR_landlock_restrict_self, ruleset, 0)) die("landlock_restrict_self");
    close(ruleset);
}

/* ---- seccomp --------------------------------------------------------------------------- */

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#endif

#define NS_FLAGS (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | \
                  CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | 0x00000080 /* NEWTIME */)

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG0_LOW offsetof(struct seccomp_data, args[0])
#else
#define ARG0_LOW (offsetof(struct seccomp_data, args[0]) + 4)
#endif

static struct sock_filter prog[512]; /* the fixed filter plus MAX_DENIED extra syscalls */
static unsigned short n_prog;

static void emit(struct sock_filter ins) { prog[n_prog++] = ins; }

static void kill_on(int nr) {
    emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1));
    emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
}

/* Syscalls a test program never needs and a hostile one would use to leave the sandbox or
 * attack the kernel: namespaces, mounts, tracing other processes, bpf, io_uring, keys,
 * kernel modules and the like. A hit kills the process with SIGSYS, which the runner
 * reports as blocked_syscall. */
static const int killed[] = {
    SYS_unshare, SYS_setns, SYS_mount, SYS_umount2, SYS_pivot_root, SYS_chroot,
#ifdef SYS_open_tree
    SYS_open_tree, SYS_move_mount, SYS_fsopen, SYS_fsconfig, SYS_fsmount, SYS_fspick,
#endif
#ifdef SYS_mount_setattr
    SYS_mount_setattr,
#endif
    SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev, SYS_kcmp,
#ifdef SYS_pidfd_getfd
    SYS_pidfd_getfd,
#endif
#ifdef SYS_process_madvise
    SYS_process_madvise,
#endif
    SYS_bpf, SYS_perf_event_open, SYS_userfaultfd,
#ifdef SYS_io_uring_setup
    SYS_io_uring_setup, SYS_io_uring_enter, SYS_io_uring_register,
#endif
    SYS_keyctl, SYS_add_key, SYS_request_key,
    SYS_init_module, SYS_finit_module, SYS_delete_module, SYS_kexec_load,
#ifdef SYS_kexec_file_load
    SYS_kexec_file_load,
#endif
    SYS_reboot, SYS_swapon, SYS_swapoff, SYS_acct, SYS_quotactl, SYS_syslog,
    SYS_open_by_handle_at, SYS_name_to_handle_at, SYS_sethostname, SYS_setdomainname,
#ifdef SYS_iopl
    SYS_iopl, SYS_ioperm,
#endif
};

static void install_seccomp(void) {
#ifndef NATIVE_ARCH
    fail(125, "seccomp", "this architecture is not supported by the filter");
#else
    /* Other ABIs (i386, x32) on the same kernel have other numbers: kill them outright. */
    emit((struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
    emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0));
    emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
    emit((struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
#ifdef __x86_64__
    emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000 /* x32 */, 0, 1));
    emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
#endif
    for (size_t i = 0; i < sizeof killed / sizeof killed[0]; i++) kill_on(killed[i]);
    for (int i = 0; i < n_denied; i++) kill_on(denied[i]);
#ifdef SYS_clone3
    /* clone3 passes its flags in memory the filter cannot read: answer ENOSYS so libc
     * falls back to clone, whose flags we can check. */
    emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1));
    emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS));
#endif
    /* clone with any namespace flag: kill; plain fork/thread clone: allow. */
    emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4));
    emit((struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LOW));
    emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, NS_FLAGS, 0, 1));
    emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
    emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    /* Landlock only covers TCP: every socket family but AF_UNIX goes here (UDP, raw,
     * netlink, packet, vsock, ...). */
    const int sock_calls[] = {SYS_socket, SYS_socketpair};
    for (int i = 0; i < 2 && !allow_net; i++) {
        emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, sock_calls[i], 0, 4));
        emit((struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LOW));
        emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1));
        emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
        emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
    }
    emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    struct sock_fprog fprog = {n_prog, prog};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog)) die("seccomp");
#endif
}

static int seccomp_supported(void) {
#ifdef NATIVE_ARCH
    /* SECCOMP_GET_ACTION_AVAIL answers without installing anything. */
    uint32_t action = SECCOMP_RET_KILL_PROCESS;
    return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
#else
    return 0;
#endif
}

#else
static void own_userns(void) { fail(125, "--own-userns needs Linux", NULL); }
static int userns_supported(void) { return 0; }
static void own_pidns(void) { fail(125, "--own-userns needs Linux", NULL); }
static void join_cgroup(const char *f) { fail(125, "cgroups need Linux", f); }
static void loopback_up(void) { fail(125, "--loopback needs Linux", NULL); }
static void drop_caps(void) { fail(125, "--drop-caps needs Linux", NULL); }
static int landlock_abi(void) { return 0; }
static void install_landlock(void) { fail(125, "Landlock needs Linux", NULL); }
static void install_seccomp(void) { fail(125, "seccomp needs Linux", NULL); }
static int seccomp_supported(void) { return 0; }
#endif

/* ---- main ------------------------------------------------------------------------------ */

int main(int argc, char **argv) {
    const char *env_fd = getenv("VIBES_LAUNCH_ERRFD");
    if (env_fd) {
        errfd = atoi(env_fd);
        fcntl(errfd, F_SETFD, FD_CLOEXEC);
        unsetenv("VIBES_LAUNCH_ERRFD"); /* not the job's business */
    }
    int pass_errfd = -1;
    const char *chdir_to = NULL, *cgroups[8];
    int n_cgroups = 0, netns = 0, loopback = 0, caps = 0, landlock = 0, seccomp = 0, i = 1;
    int userns = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) { i++; break; }
        if (!strcmp(a, "--probe")) {
            printf("landlock_abi=%d seccomp=%d userns=%d\n", landlock_abi(),
                   seccomp_supported(), userns_supported());
            return 0;
        }
        if (!strcmp(a, "--own-userns")) { userns = 1; continue; }
        if (!strcmp(a, "--netns")) { netns = 1; continue; }
        if (!strcmp(a, "--loopback")) { loopback = 1; continue; }
        if (!strcmp(a, "--net")) { allow_net = 1; continue; }
        if (!strcmp(a, "--drop-caps")) { caps = 1; continue; }
        if (!strcmp(a, "--landlock")) { landlock = 1; continue; }
        if (!strcmp(a, "--seccomp")) { seccomp = 1; continue; }
        if (i + 1 >= argc) fail(125, "missing value for", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--chdir")) chdir_to = v;
        else if (!strcmp(a, "--rlimit")) {
            if (n_rlimits == MAX_RLIMITS) fail(125, "too many", a);
            rlimit_specs[n_rlimits++] = v;
        }
        else if (!strcmp(a, "--pass-errfd")) pass_errfd = atoi(v);
        else if (!strcmp(a, "--deny-syscall")) {
            if (n_denied == MAX_DENIED) fail(125, "too many", a);
            denied[n_denied++] = atoi(v);
        }
        else if (!strcmp(a, "--cgroup")) {
            if (n_cgroups == 8) fail(125, "too many", a);
            cgroups[n_cgroups++] = v;
        } else if (!strcmp(a, "--ro") || !strcmp(a, "--rw")) {
            if (n_rules == MAX_RULES) fail(125, "too many", a);
            rules[n_rules++] = (struct rule){v, a[3] == 'w'};
            landlock = 1;
        } else fail(125, "unknown option", a);
    }
    if (i >= argc) fail(125, "no program given", NULL);

    /* Order matters: joining cgroups and creating the netns need privileges that
     * --drop-caps removes; the user namespace comes before the rlimits (RLIMIT_NPROC is
     * then counted in it); Landlock and seccomp come last so setup is not filtered. */
    for (int c = 0; c < n_cgroups; c++) join_cgroup(cgroups[c]);
#ifdef __linux__
    if (netns && unshare(CLONE_NEWNET)) die("unshare(CLONE_NEWNET)");
    if (netns && loopback) loopback_up();
#else
    if (netns) fail(125, "--netns needs Linux", NULL);
#endif
    if (userns) own_userns();
    if (userns) own_pidns(); /* the launcher and the init wait from here on */
    for (int r = 0; r < n_rlimits; r++) set_rlimit(rlimit_specs[r]);
    if (chdir_to && chdir(chdir_to)) die(chdir_to);
    if (caps || userns) drop_caps(); /* in a new user namespace: its full set, dropped */
#ifdef __linux__
    if ((landlock || seccomp) && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) die("no_new_privs");
#endif
    if (landlock) install_landlock();
    if (seccomp) install_seccomp();

    if (pass_errfd >= 0 && env_fd) {
        /* The next wrapper hands this fd on to the launcher it runs; that one marks it
         * close-on-exec before the job starts. */
        if (dup2(errfd, pass_errfd) < 0) die("dup2");
        char fd[16];
        snprintf(fd, sizeof fd, "%d", pass_errfd);
        setenv("VIBES_LAUNCH_ERRFD", fd, 1);
        if (errfd != pass_errfd) close(errfd);
        errfd = pass_errfd; /* dup2 leaves it inheritable, as the wrapper needs */
    }
    execvp(argv[i], argv + i);
    dprintf(errfd, "vibes-launch: exec %s: %s\n", argv[i], strerror(errno));
    return 127;
}
