"""The external crates HumanEval-X declarations `use` (rand, regex, md5), built once per
toolchain and cached, then handed to every rustc call with ``--extern``.

Sources: crates.io when it answers, else Debian's crate sources under
/usr/share/cargo/registry. Debian splits a crate's default features into packages of their
own: ``librust-regex-dev`` alone lacks aho-corasick and memchr, which
``librust-regex+default-dev`` brings (``DEBIAN_PACKAGES``).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from vibes_eval.benchmarks.humaneval.rust.toolchain import RustToolchain
from vibes_eval.core.errors import UserError
from vibes_eval.core.filelock import locked
from vibes_eval.paths import cache_dir

CRATES = {"rand": "0.8", "regex": "1", "md5": "0.7"}
DEBIAN_REGISTRY = Path("/usr/share/cargo/registry")
# What scripts/setup-system.sh installs: each crate with its default features (rand's and
# md5's come with the plain package; regex's are a package of their own).
DEBIAN_PACKAGES = ("librust-rand-dev", "librust-regex+default-dev", "librust-md5-dev")
_NO_PACKAGE = re.compile(
    r"no matching package named `?'?([A-Za-z0-9_-]+)'?`? found(?:.*?required by package "
    r"`?'?([A-Za-z0-9_-]+) v[^\s'`]*)?",
    re.S,
)


@dataclass(frozen=True)
class CrateSet:
    root: Path  # everything a sandbox must be able to read
    externs: dict[str, Path]  # crate name -> .rlib
    deps_dir: Path
    source: str  # "crates.io" or the Debian registry path

    def rustc_args(self) -> list[str]:
        args = ["-L", f"dependency={self.deps_dir}"]
        for name, rlib in sorted(self.externs.items()):
            args += ["--extern", f"{name}={rlib}"]
        return args


def _crates_io_reachable() -> bool:
    try:
        with socket.create_connection(("index.crates.io", 443), timeout=2):
            return True
    except OSError:
        return False


_PROJECT = "vibes-crates"


def _manifest() -> str:
    deps = "\n".join(f'{name} = "{ver}"' for name, ver in CRATES.items())
    return (
        f'[package]\nname = "{_PROJECT}"\nversion = "0.0.0"\nedition = "2021"\n\n'
        f'[lib]\npath = "lib.rs"\n\n[dependencies]\n{deps}\n\n'
        "[profile.release]\ndebug = false\n"
    )


def ensure_crates(toolchain: RustToolchain) -> CrateSet:
    """Build (first call) or find (later calls) the crates for this toolchain.

    Raises:
        UserError: no cargo, no source for the crates, or the build failed.
    """
    key = hashlib.sha256((toolchain.fingerprint + _manifest()).encode()).hexdigest()[:16]
    root = cache_dir() / "crates" / key
    root.mkdir(parents=True, exist_ok=True)
    manifest_file = root / "crates.json"
    with locked(root / ".lock"):  # two evaluations starting at once build once
        if manifest_file.exists():
            data = json.loads(manifest_file.read_text())
            crate_set = CrateSet(
                root=root,
                externs={k: Path(v) for k, v in data["externs"].items()},
                deps_dir=Path(data["deps_dir"]),
                source=data["source"],
            )
            if all(p.exists() for p in crate_set.externs.values()):
                return crate_set
        crate_set = _build(toolchain, root)
        manifest_file.write_text(
            json.dumps(
                {
                    "externs": {k: str(v) for k, v in crate_set.externs.items()},
                    "deps_dir": str(crate_set.deps_dir),
                    "source": crate_set.source,
                }
            )
        )
        return crate_set


def _build(toolchain: RustToolchain, root: Path) -> CrateSet:
    if toolchain.cargo is None:
        raise UserError("cargo not found: it is needed once to build the crates rand, regex, md5")
    project = root / "project"
    shutil.rmtree(project, ignore_errors=True)
    (project / ".cargo").mkdir(parents=True)
    (project / "Cargo.toml").write_text(_manifest())
    (project / "lib.rs").write_text("")
    args = [str(toolchain.cargo), "build", "--release", "--message-format=json", "--quiet"]
    if _crates_io_reachable():
        source = "crates.io"
    elif DEBIAN_REGISTRY.is_dir():
        source = str(DEBIAN_REGISTRY)
        (project / ".cargo" / "config.toml").write_text(
            '[source.crates-io]\nreplace-with = "debian"\n\n'
            f'[source.debian]\ndirectory = "{DEBIAN_REGISTRY}"\n'
        )
        args.append("--offline")
    else:
        raise UserError(
            "crates.io is unreachable and Debian's crate sources are missing: "
            f"apt-get install {' '.join(DEBIAN_PACKAGES)}"
        )
    env = {
        "PATH": f"{toolchain.bin_dir}:/usr/bin:/bin",
        "RUSTC": str(toolchain.rustc),
        "CARGO_HOME": str(root / "cargo-home"),
        "HOME": str(root),
    }
    proc = subprocess.run(args, cwd=project, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise UserError(
            f"building the crates {', '.join(CRATES)} from {source} failed: "
            + cargo_failure(proc.stderr)
        )
    externs: dict[str, Path] = {}
    for line in proc.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") != "compiler-artifact":
            continue
        name = msg["target"]["name"]
        if name in CRATES:
            externs[name] = next(Path(f) for f in msg["filenames"] if f.endswith(".rlib"))
    missing = set(CRATES) - set(externs)
    if missing:
        raise UserError(f"building crates: no library produced for {', '.join(sorted(missing))}")
    return CrateSet(root=root, externs=externs, deps_dir=externs["rand"].parent, source=source)


def debian_package(crate: str) -> str:
    """Debian's source package of a crate with its default features."""
    return f"librust-{crate.lower().replace('_', '-')}+default-dev"


def cargo_failure(stderr: str) -> str:
    """The reason in cargo's output, as one line: its `error:` line (cargo ends with a
    reminder about --offline, not the error), naming the Debian package to install when a
    crate is missing from the registry."""
    missing = _NO_PACKAGE.search(stderr)
    if missing:
        crate, parent = missing.group(1), missing.group(2)
        if parent and parent != _PROJECT:  # a crate whose default features are missing
            return (
                f"crate '{crate}', needed by {parent}, is not in {DEBIAN_REGISTRY}; "
                f"apt-get install {debian_package(parent)}"
            )
        return (
            f"crate '{crate}' is not in {DEBIAN_REGISTRY}; apt-get install {debian_package(crate)}"
        )
    for line in stderr.splitlines():
        if line.startswith("error"):
            return line.strip()
    return (stderr.strip().splitlines() or ["(no output)"])[-1]
