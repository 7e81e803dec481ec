/* vibes-launch: apply limits to itself, then exec the job.
 *
 * Doing this in a tiny exec'd helper instead of Python's preexec_fn keeps spawning on the
 * fast vfork path and is safe with threads (see docs/sandbox.md).
 *
 * usage: vibes-launch [--chdir DIR] [--rlimit NAME=VALUE]... -- PROGRAM [ARG]...
 * NAME: cpu (s), fsize (bytes), nofile, core, as (bytes), stack (bytes), nproc.
 * Exit codes of its own: 125 bad usage or setup failure, 127 exec failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static void die(const char *what) {
    fprintf(stderr, "vibes-launch: %s: %s\n", what, strerror(errno));
    _exit(125);
}

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
    if (!eq || (size_t)(eq - spec) >= sizeof name) { errno = EINVAL; die(spec); }
    memcpy(name, spec, (size_t)(eq - spec));
    name[eq - spec] = 0;
    int res = rlimit_resource(name);
    if (res < 0) { errno = EINVAL; die(spec); }
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = strtoull(eq + 1, NULL, 10);
    if (setrlimit(res, &rl)) die(spec);
}

int main(int argc, char **argv) {
    int i = 1;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--")) { i++; break; }
        if (i + 1 >= argc) { errno = EINVAL; die(argv[i]); }
        if (!strcmp(argv[i], "--chdir")) { if (chdir(argv[++i])) die("chdir"); }
        else if (!strcmp(argv[i], "--rlimit")) set_rlimit(argv[++i]);
        else { errno = EINVAL; die(argv[i]); }
    }
    if (i >= argc) { errno = EINVAL; die("no program given"); }
    execvp(argv[i], argv + i);
    fprintf(stderr, "vibes-launch: exec %s: %s\n", argv[i], strerror(errno));
    return 127;
}
