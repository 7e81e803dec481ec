"""Build the evaluation image offline and cache it by content hash.

No registry is reachable where this runs, so the base is made here: ``debootstrap`` a
minimal Debian with gcc and libc6-dev from the apt mirror the host already uses, import it
(``vibes-eval-base:<hash>``), then build the shipped Dockerfile on top
(``vibes-eval-sandbox:<hash>``). Both tags hash what went into them, so a change to the
Dockerfile or the in-container helper rebuilds, and an unchanged one is found instantly.

The suite is the host's by default; a caller may ask for another one the mirror serves
(SWE-bench environments take the suite whose ``python3`` is the version a spec names:
bullseye 3.9, bookworm 3.11, trixie 3.13).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

from vibes_eval.core.errors import RunnerBroken, RunnerUnavailable
from vibes_eval.core.filelock import locked
from vibes_eval.paths import cache_dir
from vibes_eval.runners.docker.client import connect

BASE_REPO = "vibes-eval-base"
IMAGE_REPO = "vibes-eval-sandbox"
WRAP_REPO = "vibes-eval-wrap"  # a foreign image with vibes-box and vibes-launch added
KIND_LABEL = "vibes-eval.image"  # what an image of ours is: sandbox, wrap, swe-env, ...
BOX_LABEL = "vibes-eval.box"  # "1": the image has vibes-box and vibes-launch (and user 1000)
BASE_PACKAGES = ("gcc", "libc6-dev")  # cc drives the linker for Rust test binaries
# build context file -> package it ships in
CONTEXT_FILES = {
    "Dockerfile": "vibes_eval.runners.docker",
    "vibes_box.c": "vibes_eval.runners.docker",
    "launcher.c": "vibes_eval.runners",
}
_RECIPE_VERSION = "1"  # bump when the base recipe below changes
_DEFAULT_MIRROR = "http://deb.debian.org/debian"
# Not needed to compile or link: keeps the image ~40% smaller.
_TRIM = ("usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale",
         "var/cache/apt/archives", "var/lib/apt/lists")  # fmt: skip

# Suites a caller may ask for by name: their images are kept by the stale-image pruning.
KNOWN_SUITES = ("bullseye", "bookworm", "trixie")
STALE_AFTER_S = 24 * 3600  # images of other recipes are removed after this long
_lock = threading.Lock()

Log = Callable[[str], None]


def _stderr(msg: str) -> None:
    print(f"vibes: {msg}", file=sys.stderr, flush=True)


def debian_suite() -> str:
    """The host's Debian codename (same glibc as the host's toolchain), else bookworm."""
    env = os.environ.get("VIBES_DEBIAN_SUITE")
    if env:
        return env
    with contextlib.suppress(OSError):
        info = dict(
            line.split("=", 1)
            for line in Path("/etc/os-release").read_text().splitlines()
            if "=" in line
        )
        if info.get("ID") == "debian" and info.get("VERSION_CODENAME"):
            return info["VERSION_CODENAME"].strip('"')
    return "bookworm"


def debian_mirror() -> str:
    """The Debian mirror apt already uses here (the one that is reachable)."""
    env = os.environ.get("VIBES_DEBIAN_MIRROR")
    if env:
        return env
    sources = [Path("/etc/apt/sources.list"), *Path("/etc/apt/sources.list.d").glob("*")]
    for path in sources:
        with contextlib.suppress(OSError):
            for uri in re.findall(r"(https?://\S+)", path.read_text()):
                if re.search(r"/debian/?$", uri):
                    return uri.rstrip("/")
    return _DEFAULT_MIRROR


def _context() -> dict[str, bytes]:
    return {
        name: resources.files(pkg).joinpath(name).read_bytes()
        for name, pkg in CONTEXT_FILES.items()
    }


def base_tag(suite: str | None = None) -> str:
    recipe = f"{_RECIPE_VERSION} {suite or debian_suite()} minbase {' '.join(BASE_PACKAGES)}"
    return f"{BASE_REPO}:{hashlib.sha256(recipe.encode()).hexdigest()[:12]}"


def image_tag(suite: str | None = None) -> str:
    h = hashlib.sha256(base_tag(suite).encode())
    for name, data in sorted(_context().items()):
        h.update(name.encode() + b"\0" + data)
    return f"{IMAGE_REPO}:{h.hexdigest()[:12]}"


def image_exists(client: Any, tag: str) -> bool:
    """Whether the daemon has ``tag``."""
    import docker.errors

    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return True


@contextlib.contextmanager
def _build_lock() -> Any:
    """One build at a time, across threads and processes (parallel test runs)."""
    with _lock, locked(cache_dir() / "docker" / "build.lock"):
        yield


def ensure_image(client: Any = None, log: Log = _stderr, suite: str | None = None) -> str:
    """The tag of the evaluation image (on Debian ``suite``, default the host's), building
    it (about a minute, once) if missing.

    Raises:
        RunnerUnavailable: no daemon, or what the build needs is missing here (no
            debootstrap, not root).
        RunnerBroken: the build was attempted and failed (debootstrap, import or the
            Dockerfile): the message names the step and its log.
    """
    client = client or connect()
    tag = image_tag(suite)
    if image_exists(client, tag):
        return tag
    with _build_lock():
        if image_exists(client, tag):  # another process built it while we waited
            return tag
        base = _ensure_base(client, log, suite or debian_suite())
        log(f"building {tag} from the shipped Dockerfile")
        with tempfile.TemporaryDirectory(prefix="vibes-docker-ctx-") as ctx:
            for name, data in _context().items():
                Path(ctx, name).write_bytes(data)
            try:
                client.images.build(
                    path=ctx,
                    tag=tag,
                    buildargs={"BASE": base},
                    rm=True,
                    forcerm=True,
                    network_mode="none",  # everything it needs is in the base
                    labels={KIND_LABEL: "sandbox", BOX_LABEL: "1"},
                )
            except Exception as exc:  # docker.errors.BuildError, APIError
                raise RunnerBroken(f"building {tag} failed: {_one_line(exc)}") from None
        _prune(client, keep={tag, base, *_suite_tags()})
    return tag


def _suite_tags() -> set[str]:
    """The current recipe's tags for every suite a caller may ask for (never stale)."""
    return {t for s in KNOWN_SUITES for t in (base_tag(s), image_tag(s))}


def _prune(client: Any, keep: set[str]) -> None:
    """Remove images of earlier recipes (a rebuild leaves the old ones behind) once they
    are a day old: another checkout of another version may be using one right now (its
    sessions would fail to start), and the day gives it time to finish."""
    cutoff = time.time() - STALE_AFTER_S
    for repo in (IMAGE_REPO, BASE_REPO):
        for img in client.images.list(name=repo):
            if keep & set(img.tags) or _created(img) > cutoff:
                continue
            with contextlib.suppress(Exception):  # still used by a container: keep it
                client.images.remove(img.id)


def _created(img: Any) -> float:
    """An image's creation time (Unix seconds); now when it cannot be read."""
    text = str(img.attrs.get("Created", ""))
    try:
        return datetime.fromisoformat(text[:26].rstrip("Z") + "+00:00").timestamp()
    except ValueError:
        return time.time()


def _ensure_base(client: Any, log: Log, suite: str | None = None) -> str:
    """The debootstrap base of ``suite`` (the host's by default: scripts/fresh-check.sh
    asks for it so), built if missing."""
    suite = suite or debian_suite()
    tag = base_tag(suite)
    if image_exists(client, tag):
        return tag
    debootstrap = shutil.which("debootstrap") or (
        "/usr/sbin/debootstrap" if os.path.exists("/usr/sbin/debootstrap") else None
    )
    if debootstrap is None:
        raise RunnerUnavailable(
            "building the Docker image needs debootstrap (apt-get install debootstrap)"
        )
    if os.geteuid() != 0:
        raise RunnerUnavailable("building the Docker image (debootstrap) needs root, once")
    mirror = debian_mirror()
    log(f"building {tag}: debootstrap {suite} from {mirror} (once, about a minute)")
    work = cache_dir() / "docker"
    work.mkdir(parents=True, exist_ok=True)  # a fresh machine has no cache yet
    rootfs = Path(tempfile.mkdtemp(prefix="rootfs-", dir=work))
    logfile = work / "debootstrap.log"
    try:
        with open(logfile, "wb") as out:
            proc = subprocess.run(
                [debootstrap, "--variant=minbase", f"--include={','.join(BASE_PACKAGES)}",
                 suite, str(rootfs), mirror],
                stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        if proc.returncode != 0:
            tail = logfile.read_text(errors="replace").strip().splitlines()[-1:]
            raise RunnerBroken(
                f"debootstrap {suite} from {mirror} failed ({' '.join(tail)[:200]}); log: {logfile}"
            )
        for rel in _TRIM:
            shutil.rmtree(rootfs / rel, ignore_errors=True)
        log(f"importing the root file system as {tag}")
        _import(client, rootfs, tag)
    finally:
        shutil.rmtree(rootfs, ignore_errors=True)
    return tag


def _import(client: Any, rootfs: Path, tag: str) -> None:
    """Stream ``tar`` of the root file system into ``docker import``."""
    repo, _, version = tag.partition(":")
    tar = subprocess.Popen(
        ["tar", "--numeric-owner", "-C", str(rootfs), "-c", "."],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert tar.stdout is not None
    try:
        client.api.import_image_from_stream(tar.stdout, repository=repo, tag=version)
    except Exception as exc:  # docker.errors.APIError, requests errors
        raise RunnerBroken(f"docker import of {tag} failed: {_one_line(exc)}") from None
    finally:
        tar.stdout.close()
        tar.wait()
    if not image_exists(client, tag):
        raise RunnerBroken(f"docker import of {tag} produced no image")


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[-1] if text else type(exc).__name__)[:200]


# -- session images: a benchmark's own image (e.g. a repository at its base commit) -------

_STATIC_BOX_VERSION = "2"  # 2: at opt/vibes/bin


def has_box(labels: dict[str, str] | None) -> bool:
    """Whether an image with these labels carries vibes-box and vibes-launch."""
    labels = labels or {}
    return labels.get(BOX_LABEL) == "1" or labels.get(KIND_LABEL) == "sandbox"


def ensure_session_image(client: Any, name: str, log: Log = _stderr) -> str:
    """An image the Docker runner can run sessions in: ``name`` itself when it was built on
    the evaluation image, else ``name`` with static builds of vibes-box and vibes-launch
    added (``vibes-eval-wrap:<hash>``, built once: a copy of a layer, no build steps).

    Raises:
        RunnerUnavailable: ``name`` is not on this machine, or the wrapper cannot be made.
    """
    import docker.errors

    try:
        img = client.images.get(name)
    except docker.errors.ImageNotFound:
        raise RunnerUnavailable(f"image {name} is not on this machine (build or pull it)") from None
    except docker.errors.DockerException as exc:
        raise RunnerUnavailable(f"cannot inspect image {name}: {_one_line(exc)}") from None
    if has_box(img.labels):
        return name
    boxes = static_box(client, log)
    tag = f"{WRAP_REPO}:{hashlib.sha256((img.id + boxes.name).encode()).hexdigest()[:12]}"
    if image_exists(client, tag):
        return tag
    with _build_lock():
        if image_exists(client, tag):
            return tag
        log(f"adding vibes-box to {name} as {tag}")
        try:
            container = client.containers.create(name, entrypoint=["/bin/true"], command=[])
            try:
                container.put_archive("/", boxes.read_bytes())
                container.commit(
                    repository=tag.partition(":")[0],
                    tag=tag.partition(":")[2],
                    changes=[
                        'ENTRYPOINT ["/opt/vibes/bin/vibes-box", "init"]',
                        "CMD []",
                        f"LABEL {KIND_LABEL}=wrap {BOX_LABEL}=1",
                    ],
                )
            finally:
                container.remove(force=True)
        except docker.errors.DockerException as exc:
            raise RunnerUnavailable(f"cannot add vibes-box to {name}: {_one_line(exc)}") from None
    return tag


def static_box(client: Any, log: Log = _stderr) -> Path:
    """A tar of static vibes-box and vibes-launch at ``opt/vibes/bin``, compiled once in the
    evaluation image (static: they must run on whatever libc a foreign image has).

    Raises:
        RunnerUnavailable: the compile failed.
    """
    h = hashlib.sha256(_STATIC_BOX_VERSION.encode())
    for name in ("vibes_box.c", "launcher.c"):
        h.update(_context()[name])
    path = cache_dir() / "docker" / f"static-box-{h.hexdigest()[:12]}.tar"
    if path.exists():
        return path
    sandbox = ensure_image(client, log)
    script = (
        "set -e; mkdir -p /out/opt/vibes/bin; cd /usr/local/src; "
        "gcc -static -O2 -o /out/opt/vibes/bin/vibes-box vibes_box.c; "
        "gcc -static -O2 -o /out/opt/vibes/bin/vibes-launch launcher.c"
    )
    container = client.containers.run(
        sandbox, entrypoint=["/bin/sh", "-c"], command=[script], detach=True, user="0",
        network_mode="none", mem_limit="1g", memswap_limit="1g", pids_limit=64,
    )  # fmt: skip
    try:
        status = container.wait(timeout=300).get("StatusCode")
        if status != 0:
            tail = container.logs().decode(errors="replace").strip()[-200:]
            raise RunnerUnavailable(f"compiling a static vibes-box failed: {tail}")
        stream, _ = container.get_archive("/out/opt")
        data = b"".join(stream)
    finally:
        container.remove(force=True)
    # get_archive names the entries "opt/...": extract them back under "/" as they are.
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    return path
