#!/usr/bin/env bash
# Install and start what vibes-eval's tests and demo need on a Debian machine.
# Idempotent: fast when everything is already there. Needs root for apt (skipped otherwise).
set -euo pipefail

APT_PACKAGES=(
  gcc libc6-dev make            # the sandbox launcher, linking Rust test binaries
  librust-rand-dev librust-regex+default-dev librust-md5-dev  # crates HumanEval-X uses, default features
  bubblewrap firejail           # --sandbox bwrap / firejail
  docker.io debootstrap         # --sandbox docker: the daemon, and the image's base built offline
  g++ libssl-dev libboost-dev   # HumanEval-X C++ (openssl/md5.h, boost/any.hpp)
  nodejs default-jdk-headless   # HumanEval-X / MultiPL-E JavaScript and Java
  golang-go golang-github-stretchr-testify-dev  # HumanEval-X Go (its tests use testify)
  libtest-deep-perl             # MultiPL-E Perl's tests
  chromium chromium-driver      # tests/web drive the results pages in headless chromium
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "setup-system: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup-system: missing Debian packages (run as root to install): ${missing[*]}" >&2
  fi
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
  echo "setup-system: dockerd did not start (see $log); docker tests will skip" >&2
}
start_dockerd

# Rust: the machine's rustup toolchain when there is one, else Debian's.
if ! command -v rustc >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/rustc" ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "setup-system: rustc not found; installing Debian's rustc, cargo and rustfmt"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends rustc cargo rustfmt >/dev/null
  else
    echo "setup-system: rustc not found; install Rust (rustup or Debian's rustc)" >&2
  fi
fi

# PostgreSQL for the result store's tests: Debian's server, a running cluster, and a test
# role/database matching tests/store's default VIBES_TEST_POSTGRES_URL
# (postgresql://vibes:vibes@127.0.0.1:5432/vibes_test).
setup_postgres() {
  if ! dpkg-query -W -f='${Status}' postgresql 2>/dev/null | grep -q "install ok installed"; then
    if [ "$(id -u)" != 0 ]; then
      echo "setup-system: postgresql missing (run as root to install); its tests will skip" >&2
      return 0
    fi
    echo "setup-system: installing postgresql"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends postgresql >/dev/null
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
