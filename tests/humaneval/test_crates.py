"""Building the HumanEval-X crates from Debian's registry: a registry that lacks a crate
(regex without its default features, as `librust-regex-dev` alone leaves it) gives one
line naming the missing crate and the Debian package that brings it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.components import need
from vibes_eval.benchmarks.humaneval.rust import crates
from vibes_eval.benchmarks.humaneval.rust.toolchain import find_toolchain
from vibes_eval.core.errors import UserError


@pytest.fixture
def _registry() -> None:
    """Debian's crate registry as setup-system.sh installs it (a "toolchains" component)."""
    there = (crates.DEBIAN_REGISTRY / "aho-corasick-0.7.19").is_dir() and shutil.which("cargo")
    why = "Debian's crate registry with regex's default features is not installed"
    need("toolchains", None if there else why)


needs_registry = pytest.mark.usefixtures("_registry")


@needs_registry
def test_a_missing_dependency_names_the_debian_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = tmp_path / "registry"
    registry.mkdir()
    for entry in crates.DEBIAN_REGISTRY.iterdir():
        if not entry.name.startswith("aho-corasick-"):  # as without librust-regex+default-dev
            (registry / entry.name).symlink_to(entry)
    monkeypatch.setattr(crates, "DEBIAN_REGISTRY", registry)
    monkeypatch.setattr(crates, "_crates_io_reachable", lambda: False)
    with pytest.raises(UserError) as err:
        crates._build(find_toolchain(), tmp_path / "build")
    message = str(err.value)
    assert "\n" not in message
    assert "crate 'aho-corasick', needed by regex" in message
    assert message.endswith("apt-get install librust-regex+default-dev")
    assert "As a reminder" not in message


def test_cargo_failure_reads_the_error_not_the_last_line() -> None:
    stderr = (
        'error: failed to select a version for the requirement `md5 = "^0.7"`\n'
        "As a reminder, you're using offline mode (--offline) which can sometimes cause "
        "surprising resolution failures\n"
    )
    assert crates.cargo_failure(stderr).startswith("error: failed to select a version")
    direct = "error: no matching package named `md5` found\nrequired by package `vibes-crates v0.0.0 (/x)`\n"
    assert crates.cargo_failure(direct).endswith("apt-get install librust-md5+default-dev")
