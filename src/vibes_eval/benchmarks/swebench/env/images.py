"""Instance images: where an instance's repository sits at its base commit, installed.

Three sources, in order: the image a 5.x row names; the official prebuilt image under
``--image-namespace`` (``swebench``: ``swebench/sweb.eval.x86_64.<id>``, pulled when a
registry is reachable); else built here, offline, in two layers on the project's
evaluation image (so vibes-box is in them): an environment per repository and version
(``vibes-swe-env``: on the Debian suite whose Python is the spec's, or the nearest
(``interpreters``), that Python in a venv at /opt/vibes-env, the spec's packages and the
repository's requirements from PyPI, a ``conda activate`` shim so official eval scripts
run unchanged; every version in the image's labels) and an instance
image (``vibes-swe-inst``: the repository from the mirror at /testbed, checked out at the
base commit, later history removed, installed). Tags hash everything that went in, so an
unchanged recipe is found at once and a changed one is built anew.

Builds run as containers (memory, pids and CPU limits, the network to reach PyPI and the
Debian mirror) that are committed to images; one build per tag at a time across threads
and processes.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shlex
import subprocess
import tarfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from vibes_eval.benchmarks.swebench.env import interpreters, services
from vibes_eval.benchmarks.swebench.env.specs import ENV_NAME, REPO_DIR, Spec, missing_spec
from vibes_eval.benchmarks.swebench.tasks import SweInstance
from vibes_eval.core.errors import RunnerError, UserError
from vibes_eval.core.filelock import locked
from vibes_eval.paths import cache_dir
from vibes_eval.runners.docker.cache import touch
from vibes_eval.runners.docker.image import BOX_LABEL, KIND_LABEL, ensure_image, image_exists

ENV_REPO = "vibes-swe-env"
INSTANCE_REPO = "vibes-swe-inst"
RECIPE = "7"  # bump when the build scripts below change
INSTANCE_RECIPE = "5"  # bump when only the instance script changes (environments are kept)
VENV = "/opt/vibes-env"
HOST_CA = "/etc/ssl/certs/ca-certificates.crt"
# A conda environment's python finds its packages however it is started; a venv's only
# when started as the venv's own bin/python. tox-current-env (sphinx's test command) starts
# it through a symlink of its own, .tox/py39/bin/python, and the tests ran without the
# environment ("No module named pytest"). So the system interpreter adds the venv's
# site-packages too (with its .pth files: the editable install), as conda's would have them.
SYSTEM_SITE_LINK = (
    "site_dir=$(python3 -c 'import site; print(site.getsitepackages()[0])')\n"
    'mkdir -p "$site_dir"\n'
    f"echo \"import site; site.addsitedir('$({VENV}/bin/python -c 'import sysconfig; "
    'print(sysconfig.get_paths()["purelib"])\')\')" > "$site_dir/vibes-env.pth"'
)
# Where this host's pip is told to find its CAs (a proxy that re-signs TLS): the builds'
# pip trusts the same, else the system's bundle.
CA_ENV = ("PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE")
# The packaging tools of every environment, pinned: newer setuptools (70+) and pip (24.1+)
# drop what old repositories' setup.py files need (pkg_resources' old behaviour, legacy
# versions, ``setup.py develop``). The last releases before those changes; recorded in the
# environment image's labels.
BUILD_TOOLS = {"pip": "24.0", "setuptools": "69.5.1", "wheel": "0.43.0"}
TOOL_LABEL = "vibes-eval.swe.tool."
PYTHON_LABEL = "vibes-eval.swe.python"
# A build prints ``vibes-label: KEY=VALUE`` for what only the build knows (the exact
# interpreter version): added to the image's labels.
LOG_LABEL = "vibes-label: "
BUILD_MEMORY = "4g"
BUILD_PIDS = 2048
BUILD_TIMEOUT_S = 3600
APT_PACKAGES = (
    "python3",
    "python3-venv",
    "python3-dev",
    "git",
    "patch",
    "ca-certificates",
    "build-essential",
)

Log = Callable[[str], None]

# `source /opt/miniconda3/bin/activate; conda activate testbed` (the official eval
# scripts) activate the venv instead.
CONDA_SHIM = f"""\
# vibes-eval: stands in for miniconda's activate script in locally built images
conda() {{
  if [ "${{1:-}}" = activate ]; then
    . {VENV}/bin/activate
    export CONDA_DEFAULT_ENV="${{2:-{ENV_NAME}}}"
  fi
}}
"""

# Later history goes, but tags of commits the base commit descends from stay: setuptools_scm
# versions the checkout from them (without, 0.1.devN, and pytest's minversion aborts).
# One transaction: a ref at a time rewrote packed-refs per ref (sympy's 600 tags: minutes).
PRUNE_REFS = """\
git for-each-ref --merged HEAD --format='%(refname)' refs/tags > .git/vibes-keep
echo refs/heads/main >> .git/vibes-keep
git for-each-ref --format='%(refname)' | { grep -vxF -f .git/vibes-keep || true; } \\
  | sed 's/^/delete /' | git update-ref --stdin
rm .git/vibes-keep"""

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def official_name(namespace: str, iid: str, arch: str = "x86_64") -> str:
    """The official instance image name (Docker Hub forbids ``__``: it becomes ``_1776_``)."""
    key = iid.lower().replace("__", "_1776_")
    return f"{namespace}/sweb.eval.{arch}.{key}:latest"


def _hash(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:12]


def env_recipe(spec: Spec, reqs: str | None = None) -> dict[str, Any]:
    """What the environment image is made of: the interpreter, the parts of a spec that
    install packages, and the repository's requirements (``packages: requirements.txt``,
    read from the mirror at the environment's commit)."""
    pkgs = spec.get("packages", "")
    choice = interpreters.choose(spec.get("python"))
    return {
        "python": choice.used,
        "suite": choice.suite,
        "packages": pkgs if pkgs not in ("requirements.txt", "environment.yml") else "",
        "requirements": reqs if pkgs == "requirements.txt" and reqs else "",
        "pip_packages": list(spec.get("pip_packages", [])),
        "apt_packages": list(spec.get("apt_packages", [])),
        "services": [[s.name, *s.packages] for s in services.services(spec)],
        "pins": services.pins(spec),
    }


def env_notes(spec: Spec, reqs: str | None = None) -> list[str]:
    """What a locally built environment does differently from the spec (per instance in
    the report): another Python, a conda environment or requirements left out."""
    notes = [interpreters.choose(spec.get("python")).note()]
    if spec.get("packages") == "environment.yml":
        notes.append("packages: environment.yml is a conda environment: only pip_packages "
                     "are installed")  # fmt: skip
    if spec.get("packages") == "requirements.txt" and not reqs:
        notes.append("the requirements file at environment_setup_commit is not in the mirror: "
                     "the base commit's requirements.txt, if any, is installed")  # fmt: skip
    notes += services.notes(spec)
    return [n for n in notes if n]


def env_script(spec: Spec, reqs: str | None = None) -> str:
    recipe = env_recipe(spec, reqs)
    apt = " ".join([*APT_PACKAGES, *recipe["apt_packages"]])
    pip = [*recipe["packages"].split(), *recipe["pip_packages"]]
    tools = " ".join(f"{name}=={version}" for name, version in BUILD_TOOLS.items())
    lines = [
        "set -euxo pipefail",
        "export DEBIAN_FRONTEND=noninteractive PIP_CERT=/etc/vibes/host-ca.crt "
        "PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore",
        "apt-get update -q",
        f"apt-get install -y -q --no-install-recommends {apt}",
        "rm -rf /var/lib/apt/lists/*",
        *services.pin_lines(spec),
        f"python3 -m venv {VENV}",
        f"{VENV}/bin/python -m pip install -q {tools}",
        f'echo "{LOG_LABEL}{PYTHON_LABEL}=$({VENV}/bin/python -c '
        "'import platform; print(platform.python_version())')\"",
    ]
    if recipe["requirements"]:  # before pip_packages, as the official setup
        lines += [
            f"cat > /root/requirements.txt <<'EOF_VIBES_REQS'\n{recipe['requirements']}\n"
            "EOF_VIBES_REQS",
            f"{VENV}/bin/python -m pip install -q -r /root/requirements.txt",
            "rm /root/requirements.txt",
        ]
    if pip:
        lines.append(f"{VENV}/bin/python -m pip install -q {' '.join(shlex.quote(p) for p in pip)}")
    lines.append(SYSTEM_SITE_LINK)
    for service in services.services(spec):
        lines += service.install()
    lines += [
        "mkdir -p /opt/miniconda3/bin",
        f"cat > /opt/miniconda3/bin/activate <<'EOF_VIBES'\n{CONDA_SHIM}EOF_VIBES",
        f"mkdir -p {REPO_DIR}",
    ]
    return "\n".join(lines) + "\n"


def env_labels(inst: SweInstance, spec: Spec | None = None) -> dict[str, str]:
    """The environment image's labels: what it is for, the Python asked for and the suite
    that gave it (the exact version is added from the build's log), and each packaging
    tool's version."""
    choice = interpreters.choose((spec or {}).get("python"))
    return {
        KIND_LABEL: "swe-env",
        BOX_LABEL: "1",
        "vibes-eval.swe.repo": inst.repo,
        "vibes-eval.swe.version": inst.version,
        f"{PYTHON_LABEL}.requested": choice.requested,
        f"{PYTHON_LABEL}.debian": choice.suite,
        **{TOOL_LABEL + name: version for name, version in BUILD_TOOLS.items()},
    }


def instance_script(inst: SweInstance, spec: Spec, source: str, reqs: str | None = None) -> str:
    """Clone ``source`` (a path inside the build container) at the base commit, drop later
    history, install, then commit the installed state as the official images do."""
    base = inst.base_commit
    lines = [
        "set -euxo pipefail",
        "export PIP_CERT=/etc/vibes/host-ca.crt PIP_DISABLE_PIP_VERSION_CHECK=1 "
        "PIP_ROOT_USER_ACTION=ignore GIT_CONFIG_GLOBAL=/root/.gitconfig "
        "GIT_SSL_CAINFO=/etc/vibes/host-ca.crt",
        "git config --global user.email setup@swebench.config",
        "git config --global user.name SWE-bench",
        "git config --global --add safe.directory '*'",
        f"rm -rf {REPO_DIR}",
        f"git clone -q --no-checkout {shlex.quote(source)} {REPO_DIR}",
        f"cd {REPO_DIR}",
        f"git checkout -q -B main {base}",
        "git remote remove origin",
        PRUNE_REFS,
        "git reflog expire --expire=now --all",
        "git gc -q --prune=now",
        f"source /opt/miniconda3/bin/activate && conda activate {ENV_NAME}",
    ]
    if spec.get("packages") == "requirements.txt" and not reqs:  # not read from the mirror
        lines.append(
            "if [ -f requirements.txt ]; then python -m pip install -q -r requirements.txt; fi"
        )
    lines += list(spec.get("pre_install", []))
    if "install" in spec:
        lines.append(spec["install"])
    lines += ["git commit -q --allow-empty -am SWE-bench", f"chown -R 1000:1000 {REPO_DIR}"]
    return "\n".join(lines) + "\n"


# -- the mirror -------------------------------------------------------------------------------


def mirror_source(repos: str | None, repo: str) -> Path | None:
    """The mirror's copy of ``repo`` (``owner__name``: a git directory, or a ``.bundle``),
    symlinks resolved (a tar of a link holds the link, not the repository)."""
    if not repos:
        return None
    root = Path(repos).expanduser()
    name = repo.replace("/", "__")
    for candidate in (root / name, root / f"{name}.git", root / f"{name}.bundle"):
        if candidate.exists():
            return candidate.resolve()
    return None


def kept_tags(mirror: Path | None, base: str) -> list[str]:
    """The tags the instance image keeps (``PRUNE_REFS``), as ``ref commit`` lines, so that
    a tag added to the mirror makes a new image. Empty for bundles and GitHub."""
    if mirror is None or not mirror.is_dir():
        return []
    proc = subprocess.run(
        ["git", "-C", str(mirror), "for-each-ref", f"--merged={base}",
         "--format=%(refname) %(objectname)", "refs/tags"],
        capture_output=True, text=True,
    )  # fmt: skip
    return sorted(proc.stdout.splitlines()) if proc.returncode == 0 else []


def _tar_of(path: Path, arcname: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(str(path), arcname=arcname)
        if (ca := host_ca()) is not None:
            tar.add(str(ca), arcname="etc/vibes/host-ca.crt")
    return buf.getvalue()


def host_ca() -> Path | None:
    """The CA bundle the image builds' pip trusts: the one this host's pip is given."""
    named = [os.environ.get(name) for name in CA_ENV]
    for path in [*(Path(p) for p in named if p), Path(HOST_CA)]:
        if path.is_file():
            return path
    return None


def _ca_only() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        if (ca := host_ca()) is not None:
            tar.add(str(ca), arcname="etc/vibes/host-ca.crt")
    return buf.getvalue()


# -- building -----------------------------------------------------------------------------


@contextlib.contextmanager
def _tag_lock(tag: str) -> Iterator[None]:
    with _locks_guard:
        lock = _locks.setdefault(tag, threading.Lock())
    path = cache_dir() / "docker" / "locks" / (tag.replace("/", "_").replace(":", "_") + ".lock")
    with lock, locked(path):
        yield


def build_log_dir() -> Path:
    path = cache_dir() / "docker" / "build-logs"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _build(
    client: Any,
    parent: str,
    tag: str,
    script: str,
    files: bytes,
    labels: Mapping[str, str],
    log: Log,
) -> None:
    """Run ``script`` as root in a container of ``parent`` (with the network), commit it.

    Raises:
        RunnerError: the build failed or timed out (the message names its log).
    """
    import docker.errors

    logfile = build_log_dir() / (tag.replace("/", "_").replace(":", "_") + ".log")
    log(f"building {tag} (log: {logfile})")
    start = time.monotonic()
    container = None
    try:
        container = client.containers.create(
            parent,
            entrypoint=["/bin/bash", "-c"],
            command=[script],
            user="0",
            network_mode="bridge",
            mem_limit=BUILD_MEMORY,
            memswap_limit=BUILD_MEMORY,
            pids_limit=BUILD_PIDS,
            nano_cpus=int(2e9),
            security_opt=["no-new-privileges"],
            labels={KIND_LABEL: "build"},
        )
        if files:
            container.put_archive("/", files)
        container.start()
        try:
            status = container.wait(timeout=BUILD_TIMEOUT_S).get("StatusCode")
        except Exception:  # requests' ReadTimeout: the build ran past its time
            status = None
        logfile.write_bytes(container.logs())
        if status != 0:
            tail = logfile.read_text(errors="replace").strip().splitlines()[-1:] or [""]
            what = "timed out" if status is None else f"failed (exit {status})"
            raise RunnerError(f"building {tag} {what}: {tail[0][:200]}; log: {logfile}")
        labels = {**labels, **_log_labels(logfile.read_text(errors="replace"))}
        changes = [
            'ENTRYPOINT ["/opt/vibes/bin/vibes-box", "init"]',
            "CMD []",
            "WORKDIR /",
            "LABEL " + " ".join(f"{k}={json.dumps(v)}" for k, v in labels.items()),
        ]
        repo, _, version = tag.partition(":")
        container.commit(repository=repo, tag=version, changes=changes)
    except docker.errors.DockerException as exc:
        raise RunnerError(f"building {tag}: {str(exc).splitlines()[0][:200]}") from exc
    finally:
        if container is not None:
            with contextlib.suppress(Exception):
                container.remove(force=True)
    log(f"built {tag} in {time.monotonic() - start:.0f} s")


def _log_labels(text: str) -> dict[str, str]:
    """The ``vibes-label: KEY=VALUE`` lines a build printed (``set -x`` echoes of the
    command itself start with ``+`` and are not read)."""
    out = {}
    for line in text.splitlines():
        if line.startswith(LOG_LABEL) and "=" in line:
            key, _, value = line[len(LOG_LABEL) :].partition("=")
            out[key.strip()] = value.strip()
    return out


class ImageBuilder:
    """Finds or builds the image of each instance. Thread-safe."""

    def __init__(
        self, repos: str | None, namespace: str | None, log: Log, budget_gb: float | None = None
    ) -> None:
        self.repos = repos
        self.namespace = namespace
        self.log = log
        self.budget_gb = budget_gb
        self._recent: list[str] = []  # tags handed out lately: never pruned under a worker
        self._client: Any = None
        self._bases: dict[str, str] = {}
        self._guard = threading.Lock()

    @property
    def client(self) -> Any:
        with self._guard:
            if self._client is None:
                from vibes_eval.runners.docker.client import connect

                self._client = connect()
            return self._client

    def base(self, suite: str | None = None) -> str:
        """The evaluation image on Debian ``suite`` (built once, about a minute)."""
        suite = suite or interpreters.DEFAULT_SUITE
        with self._guard:
            if suite not in self._bases:
                from vibes_eval.runners.docker.client import connect

                self._client = self._client or connect()
                self._bases[suite] = ensure_image(self._client, self.log, suite=suite)
            return self._bases[suite]

    def requirements(self, inst: SweInstance, spec: Spec) -> str | None:
        """The repository's requirements at the environment's commit (``requirements.txt``
        specs), from the mirror."""
        if spec.get("packages") != "requirements.txt":
            return None
        commit = inst.environment_setup_commit or inst.base_commit
        return interpreters.requirements(mirror_source(self.repos, inst.repo), inst.repo, commit)

    def env_tag(self, spec: Spec, inst: SweInstance | None = None) -> str:
        reqs = self.requirements(inst, spec) if inst is not None else None
        recipe = env_recipe(spec, reqs)
        return f"{ENV_REPO}:{_hash(RECIPE, self.base(recipe['suite']), recipe, BUILD_TOOLS)}"

    def instance_tag(self, inst: SweInstance, spec: Spec) -> str:
        recipe = {k: spec.get(k) for k in ("pre_install", "install", "packages")}
        tags = kept_tags(mirror_source(self.repos, inst.repo), inst.base_commit)
        env = self.env_tag(spec, inst)
        digest = _hash(INSTANCE_RECIPE, env, inst.repo, inst.base_commit, recipe, tags)
        return f"{INSTANCE_REPO}:{digest}"

    def notes(self, inst: SweInstance, spec: Spec | None) -> dict[str, Any]:
        """The interpreter an instance runs with and how its environment differs from the
        spec, for its report (official and rows' own images: as the spec says)."""
        if spec is None or inst.image or self.namespace:
            return {"python": str((spec or {}).get("python", "")), "notes": []}
        reqs = self.requirements(inst, spec)
        choice = interpreters.choose(spec.get("python"))
        return {
            "python": choice.used,
            "python_requested": choice.requested,
            "debian": choice.suite,
            "notes": env_notes(spec, reqs),
        }

    def image_for(self, inst: SweInstance, spec: Spec | None) -> str:
        """The image to evaluate ``inst`` in, built or pulled if needed.

        Raises:
            UserError: nothing to build from (no spec, no mirror copy of the repository).
            RunnerError: a build or pull failed (infrastructure: retried on resume).
        """
        if inst.image:
            return self._pulled(inst.image)
        if self.namespace:
            return self._pulled(official_name(self.namespace, inst.task_id))
        if spec is None:
            raise UserError(missing_spec(inst))
        reqs = self.requirements(inst, spec)
        env = self.env_tag(spec, inst)
        tag = self.instance_tag(inst, spec)
        if image_exists(self.client, tag):
            touch(tag)
            return tag
        self._make_room({env, tag})
        with _tag_lock(env):
            if not image_exists(self.client, env):
                suite = env_recipe(spec)["suite"]
                _build(
                    self.client,
                    self.base(suite),
                    env,
                    env_script(spec, reqs),
                    _ca_only(),
                    env_labels(inst, spec),
                    self.log,
                )
        with _tag_lock(tag):
            if not image_exists(self.client, tag):
                files, source = self._repo_files(inst)
                _build(
                    self.client,
                    env,
                    tag,
                    instance_script(inst, spec, source, reqs),
                    files,
                    {
                        KIND_LABEL: "swe-instance",
                        BOX_LABEL: "1",
                        "vibes-eval.swe.instance": inst.task_id,
                    },
                    self.log,
                )
        touch(env)
        touch(tag)
        self._handed_out(tag, env)
        return tag

    def _handed_out(self, *tags: str) -> None:
        with self._guard:
            self._recent = [*tags, *(t for t in self._recent if t not in tags)][:16]

    def _make_room(self, keep: set[str]) -> None:
        """Prune down to the budget before a build (images in use by a container, and
        those handed out lately, stay)."""
        if self.budget_gb is None:
            return
        from vibes_eval.runners.docker.cache import prune_to

        with self._guard:
            keep = keep | set(self._recent)
        prune_to(self.client, self.budget_gb * 1e9, keep, self.log)

    def _repo_files(self, inst: SweInstance) -> tuple[bytes, str]:
        """The repository for the build container: the mirror's copy, else GitHub."""
        mirror = mirror_source(self.repos, inst.repo)
        if mirror is None:
            if self.repos:
                raise UserError(
                    f"--repos {self.repos} has no {inst.repo.replace('/', '__')} "
                    f"(a git directory or .bundle) for {inst.task_id}"
                )
            return _ca_only(), f"https://github.com/{inst.repo}"
        if mirror.is_dir():
            check = subprocess.run(
                ["git", "-C", str(mirror), "cat-file", "-e", f"{inst.base_commit}^{{commit}}"],
                capture_output=True,
            )
            if check.returncode != 0:
                raise UserError(f"{mirror} has no commit {inst.base_commit} ({inst.task_id})")
            git_dir = (mirror / ".git").resolve() if (mirror / ".git").is_dir() else mirror
            return _tar_of(git_dir, "tmp/vibes-repo"), "/tmp/vibes-repo"
        return _tar_of(mirror, "tmp/vibes-repo.bundle"), "/tmp/vibes-repo.bundle"

    def _pulled(self, name: str) -> str:
        import docker.errors

        if image_exists(self.client, name):
            touch(name)
            return name
        with _tag_lock(name):
            if not image_exists(self.client, name):
                self.log(f"pulling {name}")
                try:
                    self.client.images.pull(name)
                except docker.errors.DockerException as exc:
                    raise RunnerError(
                        f"cannot pull {name} ({str(exc).splitlines()[0][:160]}); offline, "
                        "build images here instead (leave out --image-namespace)"
                    ) from exc
        touch(name)
        return name


# -- the cache: last use, listing, pruning -------------------------------------------------------
