#!/usr/bin/env bash
# make fresh-check: does a new Debian machine get from a clean clone of HEAD to a working
# `make demo` and a passing `make test` with nothing but scripts/setup-system.sh?
#
# A machine that already has the packages cannot tell (a package setup-system.sh forgets
# is still there), so this runs the three steps in a clean container made from the same
# debootstrap base as the Docker sandbox image: nothing the project needs is installed
# there, not even python3, make or rustc. See docs/fresh-check.md.
#
# Needs: root, a running Docker daemon, git, and the project's venv (`make setup`), which
# knows how the sandbox base is built. Env: FRESH_CHECK_KEEP=1 keeps the container after
# a failure; FRESH_CHECK_RUST=host|debian picks the Rust it starts with (below);
# FRESH_CHECK_STEP_TIMEOUT (seconds, default 3600) bounds each step; VIBES_SHARED
# overrides where ../shared is found.
#
# A PASS is recorded in .ci/fresh-check.pass with a hash of the set-up's inputs at HEAD
# (commit it). `fresh-check.sh --if-changed` (what .ci/run does) checks only when those
# inputs differ from the recorded ones: the check takes longer than the whole suite.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${FRESH_CHECK_PY:-$ROOT/.venv/bin/python}
LABEL=vibes-eval.fresh-check  # value: host:pid of the run that owns the container
STEP_TIMEOUT=${FRESH_CHECK_STEP_TIMEOUT:-3600}
LOG_DIR=$ROOT/build/fresh-check  # /build/ is gitignored
# The host's safety net: whatever escapes a sandbox in the container (a fork storm once
# exhausted the host's pids) stays bounded. The suite and its daemons fit well within.
PIDS_LIMIT=${FRESH_CHECK_PIDS:-4096}
MEMORY_LIMIT=${FRESH_CHECK_MEMORY:-16g}  # swap included
CLONE=/src/vibes-eval            # ../shared of the clone is /src/shared
CGROUP_PARENT=vibes-fresh-check  # the container's cgroup parent (cpu_flags)
CARGO_BIN=${CARGO_HOME:-$HOME/.cargo}/bin
# Which Rust the container starts with. host: this kind of machine, whose rustup toolchain
# setup-system.sh keeps (mounted read-only: 2.9 GB). debian: none, so setup-system.sh
# installs Debian's. Default: host where this host has rustup's.
RUST=${FRESH_CHECK_RUST:-$([ -x "$CARGO_BIN/rustc" ] && echo host || echo debian)}
DEFAULT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
DEMO_EXPECT=("pass@1" "0.4200" "pass@5" "0.8000")  # README: what `make demo` prints
PASS_FILE=$ROOT/.ci/fresh-check.pass
# What decides whether a new machine gets set up: the scripts, the make targets, the
# dependencies and the CI entry point, as committed at HEAD.
INPUTS=(scripts Makefile pyproject.toml .ci/run)

CONTAINER=""
WORK=""
LOG=""

say() { printf 'fresh-check: %s\n' "$*" | tee -a "${LOG:-/dev/null}" >&2; }
die() { say "error: $*"; exit 2; }

# One line that states the outcome, last in the output and in the log.
finish() {
  local verdict=$1 detail=$2
  say "$verdict: $detail; times: ${TIMES[*]}, total $((SECONDS - T0))s (log: $LOG)"
  [ "$verdict" = PASS ]
}

cleanup() {
  local rc=$?
  if [ -n "$CONTAINER" ]; then
    if [ "$rc" != 0 ] && [ "${FRESH_CHECK_KEEP:-0}" = 1 ]; then
      say "kept container $CONTAINER: docker exec -it $CONTAINER bash; docker rm -fv $CONTAINER"
    else
      # -v: the anonymous volume of the inner /var/lib/docker goes with it
      docker rm -fv "$CONTAINER" >/dev/null 2>&1 || true
    fi
  fi
  [ -z "$WORK" ] || rm -rf "$WORK"
}

preflight() {
  [ "$(id -u)" = 0 ] || die "needs root (a privileged container, and building the base image)"
  command -v git >/dev/null || die "git not found"
  docker info >/dev/null 2>&1 || die "no Docker daemon answers (run: bash scripts/setup-system.sh)"
  [ -x "$PY" ] || die "$PY not found (run: make setup)"
}

# Containers of earlier runs on this host whose process is gone (killed before its trap ran).
remove_leftovers() {
  local id owner
  docker ps -a --filter "label=$LABEL" --format "{{.ID}} {{.Label \"$LABEL\"}}" |
    while read -r id owner; do
      [ "${owner%%:*}" = "$(hostname)" ] || continue
      kill -0 "${owner##*:}" 2>/dev/null && continue
      say "removing leftover container $id of $owner"
      docker rm -fv "$id" >/dev/null || true
    done
}

# ../shared of this checkout, else of the main checkout (a worktree sits elsewhere).
find_shared() {
  local common
  if [ -n "${VIBES_SHARED:-}" ]; then echo "$VIBES_SHARED"; return; fi
  common=$(cd "$ROOT" && cd "$(git rev-parse --git-common-dir)" && pwd)
  for d in "$ROOT/../shared" "$common/../../shared"; do
    [ -d "$d" ] && { (cd "$d" && pwd -P); return; }
  done
}

# The committed HEAD, cloned: what CI and a new user get, not this working tree.
clone_head() {
  local sha=$1 dest=$2
  if [ -n "$(git -C "$ROOT" status --porcelain)" ]; then
    say "note: uncommitted changes are not checked, only HEAD ($sha)"
  fi
  git clone -q --no-checkout "$ROOT" "$dest"
  git -C "$dest" fetch -q origin "$sha"  # HEAD may be on no branch
  git -C "$dest" checkout -q --detach "$sha"
}

# The sandbox image's debootstrap base, built here if missing (about a minute). Only the
# base: ensure_image() would also build the sandbox image and prune other checkouts' tags.
base_image() {
  "$PY" -c '
import sys
from vibes_eval.runners.docker.client import connect
from vibes_eval.runners.docker.image import _ensure_base
print(_ensure_base(connect(), lambda m: print(f"fresh-check: {m}", file=sys.stderr)))'
}

# Docker flags for what --privileged gives (cgroups, namespaces and Landlock for the
# sandboxes, docker-in-docker), less the capabilities this host's own bounding set lacks:
# --privileged asks for all of them and fails on this kind of machine, which has no
# CAP_SYS_RESOURCE ("unable to apply caps: operation not permitted").
privilege_flags() {
  local bnd all missing names
  bnd=$(awk '/^CapBnd/ {print $2}' /proc/self/status)
  all=$(( (1 << ($(cat /proc/sys/kernel/cap_last_cap) + 1)) - 1 ))
  missing=$(( all & ~16#$bnd ))
  printf '%s\n' --cap-add=ALL --device-cgroup-rule='a *:* rwm' \
    --security-opt=seccomp=unconfined --security-opt=apparmor=unconfined \
    --security-opt=systempaths=unconfined
  [ "$missing" = 0 ] && return
  command -v capsh >/dev/null || die "this host lacks capabilities $(printf '%#x' "$missing"); capsh (libcap2-bin) names them"
  names=$(capsh --decode="$(printf '%x' "$missing")") || die "capsh --decode failed"
  tr ',' '\n' <<<"${names#*=}" | sed 's/^cap_/--cap-drop=/'
}

# CPU weight (cgroup v1, Docker's cgroupfs driver): every container sits below /docker,
# which weighs as much as one process of the host's, so on a busy machine the suite in
# here got far less CPU than `make test` run on the host, and the hostile tests' memory
# attack hit its 8 s timeout first. Below a parent of our own, weighted like one busy
# process per core, it gets what `make test` on the host gets.
cpu_flags() {
  local dir=/sys/fs/cgroup/cpu/$CGROUP_PARENT
  [ -f /sys/fs/cgroup/cpu/cpu.shares ] || return 0
  [ "$(docker info --format '{{.CgroupDriver}}')" = cgroupfs ] || return 0
  mkdir -p "$dir"
  echo $((1024 * $(nproc))) >"$dir/cpu.shares"
  echo "--cgroup-parent=/$CGROUP_PARENT"
}

rust_flags() {
  case $RUST in
    debian) ;;
    host)
      [ -x "$CARGO_BIN/rustc" ] || die "FRESH_CHECK_RUST=host: no $CARGO_BIN/rustc here"
      printf '%s\n' -v "${RUSTUP_HOME:-$HOME/.rustup}:/root/.rustup:ro" \
        -v "$CARGO_BIN:/root/.cargo/bin:ro" -e "PATH=/root/.cargo/bin:$DEFAULT_PATH" ;;
    *) die "FRESH_CHECK_RUST=$RUST: use host or debian" ;;
  esac
}

# Without --privileged, /sys and the container's cgroup v1 hierarchies are mounted
# read-only; the inner dockerd and the sandboxes' cgroups need them writable.
writable_sys() {
  docker exec "$CONTAINER" sh -ec '
    mount -o remount,rw /sys
    for d in /sys/fs/cgroup/*/; do mount -o remount,rw,bind "$d"; done'
}

# /var/lib/docker is a volume: overlay2 cannot sit on the container's own overlay.
# The default bridge network: apt and pip reach their mirrors through the host, and the
# container's 127.0.0.1:5432 and docker0 are its own, not the host's.
# A cgroup namespace of its own: on cgroup v1 the host's (Docker's default there) shows
# /proc/self/cgroup paths of the host's hierarchy over mounts of the container's subtree,
# so vibes finds no cgroups, and its pids limit falls back to RLIMIT_NPROC, which the
# kernel does not apply to root: the hostile tests' fork bomb then filled the host's pid
# table. A real machine's paths agree with its mounts, as they do in a namespace.
# The pids and memory limits (PIDS_LIMIT) keep any such escape inside the container.
start_container() {
  local image=$1 shared=$2 name flags
  name="vibes-fresh-check-$$"
  flags=$(privilege_flags; cpu_flags; rust_flags)
  local args=(-d --name "$name" --label "$LABEL=$(hostname):$$" --init -v /var/lib/docker
              --cgroupns=private --pids-limit="$PIDS_LIMIT" --memory="$MEMORY_LIMIT"
              --memory-swap="$MEMORY_LIMIT")
  mapfile -t -O ${#args[@]} args <<<"$flags"
  [ -z "$shared" ] || args+=(-v "$shared:/src/shared:ro")
  # This kind of machine reaches PyPI through an egress proxy that re-signs TLS, trusted
  # through the bundle PIP_CERT names. pip alone gets it: as the system's bundle it
  # would hide a missing ca-certificates package.
  if [ -n "${PIP_CERT:-}" ] && [ -f "$PIP_CERT" ]; then
    args+=(-v "$PIP_CERT:/etc/fresh-check/pip-ca.crt:ro" -e PIP_CERT=/etc/fresh-check/pip-ca.crt)
  fi
  CONTAINER=$name  # set first: a failed start can leave a created container behind
  docker run "${args[@]}" "$image" sleep infinity >/dev/null
  writable_sys
}

# step NAME CMD...: CMD in the clone inside the container, streamed and logged.
step() {
  local name=$1; shift
  local t0=$SECONDS rc=0
  say "== $name: $* =="
  timeout "$STEP_TIMEOUT" docker exec -w "$CLONE" "$CONTAINER" "$@" 2>&1 |
    tee -a "$LOG" "$WORK/$name.out" || rc=$?
  TIMES+=("$name $((SECONDS - t0))s")
  [ "$rc" = 124 ] && say "$name timed out after ${STEP_TIMEOUT}s"
  return "$rc"
}

# The demo's pass@k lines, as the README promises them.
check_demo() {
  local out=$WORK/demo.out i
  for ((i = 0; i < ${#DEMO_EXPECT[@]}; i += 2)); do
    grep -Eq "${DEMO_EXPECT[i]}[^0-9]+${DEMO_EXPECT[i+1]}([^0-9]|\$)" "$out" || {
      say "demo: expected ${DEMO_EXPECT[i]} ${DEMO_EXPECT[i+1]}; got: $(grep -o 'pass@[0-9][^0-9]*[0-9.]*' "$out" | tr -s ' │|' ' ' | paste -sd, -)"
      return 1
    }
  done
}

# pytest's last line: "N passed, M skipped in T" (-q drops the ===).
test_counts() {
  grep -E '(passed|failed|error).* in [0-9.]+s' "$WORK/test.out" | tail -n1 | tr -d '=' |
    sed 's/^ *//; s/ *$//'
}

inputs_hash() {
  git -C "$ROOT" ls-tree -r HEAD -- "${INPUTS[@]}" | sha256sum | cut -c1-16
}

# --if-changed: nothing to do when the last recorded PASS saw these very inputs.
unchanged_since_pass() {
  local recorded
  [ -f "$PASS_FILE" ] || return 1
  recorded=$(sed -n 's/^inputs=\([0-9a-f]*\).*/\1/p' "$PASS_FILE" | head -n1)
  [ "$recorded" = "$(inputs_hash)" ] || return 1
  say "skipped: the set-up's inputs (${INPUTS[*]}) are those of the PASS in .ci/fresh-check.pass: $(head -n1 "$PASS_FILE" | cut -d' ' -f2-3); FRESH_CHECK=1 runs it anyway"
}

record_pass() {
  printf 'inputs=%s commit=%s date=%s total=%ss\n%s\n' "$(inputs_hash)" "${1:0:12}" \
    "$(date -u +%Y-%m-%dT%H:%MZ)" "$((SECONDS - T0))" "$2" >"$PASS_FILE"
  say "recorded in .ci/fresh-check.pass (commit it: CI then skips the check until the set-up changes)"
}

main() {
  if [ "${1:-}" = --if-changed ] && unchanged_since_pass; then return 0; fi
  preflight
  mkdir -p "$LOG_DIR"
  LOG=$LOG_DIR/fresh-check-$(date +%Y%m%d-%H%M%S).log
  ln -sfn "$(basename "$LOG")" "$LOG_DIR/latest.log"
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  WORK=$(mktemp -d /tmp/vibes-fresh-check.XXXXXX)
  TIMES=()
  T0=$SECONDS

  local sha shared image rustc
  sha=$(git -C "$ROOT" rev-parse HEAD)
  shared=$(find_shared)
  [ -n "$shared" ] || say "note: no ../shared found; tests that need its datasets will skip"
  remove_leftovers
  clone_head "$sha" "$WORK/vibes-eval"
  image=$(base_image) || die "cannot build the sandbox base image (see above)"
  TIMES+=("base $((SECONDS - T0))s")
  say "checking $sha in a clean $image container (rust: $RUST, shared: ${shared:-none})"
  start_container "$image" "$shared"
  docker exec "$CONTAINER" mkdir -p "$(dirname "$CLONE")"
  docker cp "$WORK/vibes-eval" "$CONTAINER:$CLONE" >/dev/null

  step setup bash scripts/setup-system.sh || { finish FAIL "step setup failed"; return 1; }
  rustc=$(docker exec "$CONTAINER" rustc -V 2>&1) || { finish FAIL "step setup left no rustc"; return 1; }
  say "rust ($RUST): $rustc"
  step demo make demo || { finish FAIL "step demo failed"; return 1; }
  check_demo || { finish FAIL "step demo printed the wrong pass@k"; return 1; }
  step test make test || { finish FAIL "step test failed: $(test_counts)"; return 1; }
  local detail="setup, demo (pass@1 0.4200, pass@5 0.8000), test ($(test_counts)) on a clean clone of ${sha:0:12}, ${rustc%% (*} ($RUST)"
  record_pass "$sha" "$detail; times: ${TIMES[*]}"
  finish PASS "$detail"
}

main "$@"
