#!/usr/bin/env bash
# Install and start what vibes-eval's tests and demo need on a Debian machine.
# Idempotent: fast when everything is already there. Needs root for apt (skipped otherwise).
set -euo pipefail

APT_PACKAGES=(
  gcc libc6-dev make            # the sandbox launcher, linking Rust test binaries
  librust-rand-dev librust-regex-dev librust-md5-dev  # crate sources HumanEval-X needs
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

if ! command -v rustc >/dev/null 2>&1; then
  echo "setup-system: rustc not found; install Rust (rustup or Debian's rustc)" >&2
fi
