#!/usr/bin/env bash
# Install and start what vibes-eval's tests and demo need on a Debian machine.
# Idempotent: fast when everything is already there. Needs root for apt (skipped otherwise).
set -euo pipefail

APT_PACKAGES=(
  gcc libc6-dev make            # the sandbox launcher, linking Rust test binaries
  librust-rand-dev librust-regex+default-dev librust-md5-dev  # crates HumanEval-X uses, default features
  bubblewrap firejail           # --sandbox bwrap / firejail
  docker.io debootstrap         # --sandbox docker: the daemon, and the image's base built offline
  git                           # SWE-bench: repositories, patches, the toy instances
  g++ libssl-dev libboost-dev   # HumanEval-X C++ (openssl/md5.h, boost/any.hpp)
  nodejs default-jdk-headless   # HumanEval-X / MultiPL-E JavaScript and Java
  golang-go golang-github-stretchr-testify-dev  # HumanEval-X Go (its tests use testify)
  libtest-deep-perl             # MultiPL-E Perl's tests
  chromium chromium-driver      # tests/web drive the results pages in headless chromium
)

# apt_install PKG...: install as root, fetching apt's lists once per run; a failure ends
# the script (also where the caller tests the result). Not root: says what is missing and
# returns 1.
APT_UPDATED=0
apt_install() {
  if [ "$(id -u)" != 0 ]; then
    echo "setup-system: missing Debian packages (run as root to install): $*" >&2
    return 1
  fi
  echo "setup-system: installing $*"
  apt_update_once
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" \
    >/dev/null || { echo "setup-system: apt-get install $* failed" >&2; exit 1; }
}
apt_update_once() {
  [ "$APT_UPDATED" = 0 ] || return 0
  apt-get update -qq || { echo "setup-system: apt-get update failed" >&2; exit 1; }
  APT_UPDATED=1
}

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}" || true

# Python for the Makefile's venv: the machine's python3 when it can make one (pyenv's
# can), else Debian's, whose venv module needs python3-venv for ensurepip.
if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
  apt_install python3 python3-venv || true
fi

# Docker for --sandbox docker and its tests: start dockerd when nothing answers. Our
# containers use no network, so a machine without iptables/bridge support gets a daemon
# started without them on the second try. Log: /var/log/vibes-dockerd.log.
start_dockerd() {
  command -v dockerd >/dev/null 2>&1 || return 0
  docker info >/dev/null 2>&1 && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "setup-system: dockerd is not running (run as root to start it); docker tests will skip" >&2
    return 0
  fi
  local log=/var/log/vibes-dockerd.log
  for flags in "" "--iptables=false --ip6tables=false --bridge=none"; do
    echo "setup-system: starting dockerd ${flags}(log: $log)"
    # shellcheck disable=SC2086  # flags is a word list
    nohup dockerd $flags >>"$log" 2>&1 &
    local pid=$!
    for _ in $(seq 60); do
      docker info >/dev/null 2>&1 && return 0
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  echo "setup-system: dockerd did not start (see $log)" >&2
}
start_dockerd

# Rust: the machine's rustup toolchain when there is one, else Debian's. Where the release
# has rustc-web (bookworm: 1.85, newer with security updates), that one: bookworm's rustc
# is 1.63, which lacks std::hint::black_box (1.66), so the looping samples of the demo and
# the tests fail to compile instead of looping (and six tests fail).
install_rust() {
  local pkgs=(rustc cargo rustfmt)
  [ "$(id -u)" != 0 ] || apt_update_once
  apt-cache show rustc-web >/dev/null 2>&1 && pkgs=(rustc-web cargo-web rustfmt-web)
  echo "setup-system: rustc not found; Debian's ${pkgs[*]}"
  apt_install "${pkgs[@]}" || echo "setup-system: or install Rust with rustup" >&2
}
if ! command -v rustc >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/rustc" ]; then
  install_rust
fi

# nvcc for the CUDA kernel set's compile-only checks (component nvcc, required by .ci/run):
# where none is on PATH, NVIDIA's CUDA 13.0 compiler from its PyPI wheels (the parts a
# toolkit install has: nvcc, crt, cccl, cudart, nvvm, culibos; Debian's nvidia-cuda-toolkit
# is in non-free and older), under $CUDA_PREFIX, and $NVCC_LINK a wrapper that runs it (nvcc
# finds its toolkit from its own path, which a symlink would hide). Needs the package index.
CUDA_PREFIX="${CUDA_PREFIX:-/opt/vibes-eval/cuda-13.0}"
NVCC_LINK="${NVCC_LINK:-/usr/local/bin/nvcc}"
CUDA_WHEELS=(nvidia-cuda-nvcc==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-cccl==13.0.85
             nvidia-cuda-runtime==13.0.96 nvidia-nvvm==13.0.88 nvidia-cuda-culibos==13.0.85)
install_nvcc() {
  command -v nvcc >/dev/null 2>&1 && return 0
  if [ "$(id -u)" != 0 ] && [ ! -w "$(dirname "$NVCC_LINK")" ]; then
    echo "setup-system: nvcc not found (run as root to install CUDA's compiler)" >&2
    return 0
  fi
  echo "setup-system: nvcc not found; CUDA 13.0's compiler from PyPI into $CUDA_PREFIX"
  local tmp
  tmp=$(mktemp -d)
  rm -rf "$CUDA_PREFIX"
  if python3 -m venv "$tmp/pip" && "$tmp/pip/bin/pip" install -q --no-deps \
      --target "$CUDA_PREFIX" "${CUDA_WHEELS[@]}"; then
    # nvcc.profile links from lib64; the wheels ship lib
    ln -sfn lib "$CUDA_PREFIX/nvidia/cu13/lib64"
    printf '#!/bin/sh\nexec %s/nvidia/cu13/bin/nvcc "$@"\n' "$CUDA_PREFIX" >"$NVCC_LINK"
    chmod 755 "$NVCC_LINK"
  else
    echo "setup-system: installing nvcc failed; the nvcc tests will skip" >&2
  fi
  rm -rf "$tmp"
}
install_nvcc

# PostgreSQL for the result store's tests: Debian's server, a running cluster, and a test
# role/database matching tests/store's default VIBES_TEST_POSTGRES_URL
# (postgresql://vibes:vibes@127.0.0.1:5432/vibes_test).
setup_postgres() {
  if ! dpkg-query -W -f='${Status}' postgresql 2>/dev/null | grep -q "install ok installed"; then
    apt_install postgresql || { echo "setup-system: PostgreSQL tests will skip" >&2; return 0; }
  fi
  [ "$(id -u)" = 0 ] || return 0
  local version
  version=$(ls /usr/lib/postgresql | sort -V | tail -n1)
  # Debian creates the `main` cluster on install; a container image may have dropped it.
  if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$version main"; then
    pg_createcluster "$version" main >/dev/null
  fi
  if ! pg_lsclusters -h | awk -v v="$version" '$1==v && $2=="main" {print $4}' | grep -q online; then
    pg_ctlcluster "$version" main start
  fi
  local psql=(runuser -u postgres -- psql -v ON_ERROR_STOP=1 -qtAX)
  for _ in $(seq 30); do "${psql[@]}" -c 'select 1' >/dev/null 2>&1 && break; sleep 0.5; done
  if [ "$("${psql[@]}" -c "select 1 from pg_roles where rolname='vibes'")" != 1 ]; then
    "${psql[@]}" -c "create role vibes login password 'vibes'"
  fi
  if [ "$("${psql[@]}" -c "select 1 from pg_database where datname='vibes_test'")" != 1 ]; then
    "${psql[@]}" -c "create database vibes_test owner vibes"
  fi
}
setup_postgres

# What the tests require (VIBES_TEST_REQUIRE, exported by .ci/run) must answer now: a
# service that did not start fails here, by name, instead of turning into skipped tests.
required() { [[ ",${VIBES_TEST_REQUIRE:-}," == *",$1,"* ]]; }
failed=()
if required docker && ! docker info >/dev/null 2>&1; then
  failed+=("docker: no Docker daemon answers (log: /var/log/vibes-dockerd.log)")
fi
if required postgres && ! PGPASSWORD=vibes PGCONNECT_TIMEOUT=5 psql -h 127.0.0.1 -U vibes \
    -d vibes_test -qtAXc 'select 1' >/dev/null 2>&1; then
  failed+=("postgres: no PostgreSQL server accepts vibes@127.0.0.1:5432/vibes_test")
fi
if required nvcc && ! nvcc --version >/dev/null 2>&1; then
  failed+=("nvcc: not installed or does not run (see above)")
fi
for f in "${failed[@]}"; do echo "setup-system: required service did not start: $f" >&2; done
[ ${#failed[@]} -eq 0 ]
