"""Local stand-ins for the internet services some repositories' tests call.

The official harness runs the tests with network, so older psf/requests rows reach
httpbin.org; here the test session has loopback only. A service is installed in the
environment image (its own root-owned venv, pinned, next to the repository's) and started
in the test step, on loopback, before the test command; its variables point the tests at
it. Which services a spec gets: its ``vibes_services`` list (a spec given with ``--specs``
may set it), else ``BY_REPO``. Each instance's report says so (``env_notes``).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ROOT = "/opt/vibes-services"


@dataclass(frozen=True)
class Service:
    name: str
    packages: tuple[str, ...]  # pinned: the image hash covers them
    module: str  # run as ``python -m module --host 127.0.0.1 --port PORT``
    port: int
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def python(self) -> str:
        return f"{ROOT}/{self.name}/bin/python"

    def install(self) -> list[str]:
        """Build-time lines (the environment's Debian python3, its own venv)."""
        pkgs = " ".join(shlex.quote(p) for p in self.packages)
        return [
            f"python3 -m venv {ROOT}/{self.name}",
            f"{self.python} -m pip install -q {pkgs}",
        ]

    def start(self) -> str:
        """Test-step lines: start it in the background, wait until it accepts (30 s). An
        image built elsewhere (``--image-namespace``) has no such venv: nothing starts."""
        probe = f"import socket; socket.create_connection(('127.0.0.1', {self.port}), 1)"
        serve = f"-m {self.module} --host 127.0.0.1 --port {self.port}"
        return (
            f"if [ -x {self.python} ]; then\n"
            f"  {self.python} {serve} >/dev/null 2>&1 &\n"
            f"  for _ in $(seq 300); do {self.python} -c {shlex.quote(probe)} 2>/dev/null "
            "&& break; sleep 0.1; done\n"
            "fi\n"
        )


HTTPBIN = Service(
    name="httpbin",
    packages=(
        "httpbin==0.10.4",
        "flask==3.0.3",
        "werkzeug==3.0.6",
        "greenlet==2.0.2",
        "brotlicffi==1.1.0.0",
        "decorator==5.1.1",
        "six==1.16.0",
    ),
    module="httpbin.core",
    port=8765,
    env={"HTTPBIN_URL": "http://127.0.0.1:8765/"},
)
SERVICES = {s.name: s for s in (HTTPBIN,)}
BY_REPO: dict[str, tuple[str, ...]] = {"psf/requests": ("httpbin",)}

# Upper bounds the official images (built in 2024) had by their date, where a later release
# breaks the repository's own tests: docutils 0.22 (2025) dropped docutils.utils.roman, and
# Sphinx before 7.x imports it (or a `roman` module the environment lacks): 11 of Lite's 16
# Sphinx gold patches failed on it. Every pip install of the environment, the instance and
# the eval step obeys them (/etc/pip.conf's constraint); a spec's ``vibes_pins`` replaces them.
PINS_BY_REPO: dict[str, tuple[str, ...]] = {"sphinx-doc/sphinx": ("docutils<0.22",)}
PINS_FILE = "/etc/vibes/pins.txt"


def pins(spec: Mapping[str, Any] | None) -> list[str]:
    return list((spec or {}).get("vibes_pins") or ())


def pin_lines(spec: Mapping[str, Any] | None) -> list[str]:
    """Build-time lines: the constraints file and the pip configuration that applies it."""
    wanted = pins(spec)
    if not wanted:
        return []
    body = "\n".join(wanted)
    return [
        f"mkdir -p /etc/vibes && printf '%s\\n' {shlex.quote(body)} > {PINS_FILE}",
        f"printf '[global]\\nconstraint = {PINS_FILE}\\n' > /etc/pip.conf",
    ]


def services(spec: Mapping[str, Any] | None) -> list[Service]:
    """The services of a spec (``with_services`` has put the repository's default in)."""
    names = (spec or {}).get("vibes_services") or ()
    return [SERVICES[n] for n in names if n in SERVICES]


def with_services(repo: str, spec: dict[str, Any]) -> dict[str, Any]:
    """The spec with its services named: the user's list if it has one, else the repo's."""
    if "vibes_services" not in spec and repo in BY_REPO:
        spec["vibes_services"] = list(BY_REPO[repo])
    if "vibes_pins" not in spec and repo in PINS_BY_REPO:
        spec["vibes_pins"] = list(PINS_BY_REPO[repo])
    return spec


def start_script(spec: Mapping[str, Any] | None) -> str:
    return "".join(s.start() for s in services(spec))


def service_env(spec: Mapping[str, Any] | None) -> dict[str, str]:
    return {k: v for s in services(spec) for k, v in s.env.items()}


def notes(spec: Mapping[str, Any] | None) -> list[str]:
    out = [
        f"{s.name} runs on loopback in the test step ({_assignments(s.env)}) where the "
        "official run reaches the internet"
        for s in services(spec)
    ]
    if pins(spec):
        out.append(f"pip installs are constrained to {', '.join(pins(spec))}, as the official "
                   "images had by their build date")  # fmt: skip
    return out


def _assignments(env: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in env.items())
