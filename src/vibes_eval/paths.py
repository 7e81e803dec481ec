"""Where vibes-eval keeps its caches and data, overridable for tests and CI."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def cache_dir() -> Path:
    """Build products (crates, launcher, Docker context): safe to delete."""
    env = os.environ.get("VIBES_CACHE_DIR")
    return Path(env) if env else Path(platformdirs.user_cache_dir("vibes-eval"))


def data_dir() -> Path:
    """The default result store and downloaded datasets."""
    env = os.environ.get("VIBES_DATA_DIR")
    return Path(env) if env else Path(platformdirs.user_data_dir("vibes-eval"))
