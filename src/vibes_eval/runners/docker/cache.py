"""The image cache: the images vibes-eval built or wrapped here, what each costs on disk,
and pruning the least recently used down to a size.

An image's own bytes are its size less its parent's when the parent is one of ours (a
SWE-bench instance image is a layer on its environment image, which is a layer on the
evaluation image): the sum of own bytes is what the cache takes on disk, where summing
whole sizes counts every shared layer again. Pruning removes children before parents: a
parent with a child left would only lose its tag (nothing freed, and a rebuild later).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vibes_eval.core.filelock import locked
from vibes_eval.paths import cache_dir

KINDS = ("sandbox", "base", "wrap", "swe-env", "swe-instance")
PRUNABLE = ("wrap", "swe-env", "swe-instance")  # rebuilt on demand; the others take longer


def _usage_path() -> Path:
    path = cache_dir() / "docker"
    path.mkdir(parents=True, exist_ok=True)
    return path / "last-used.json"


def touch(tag: str) -> None:
    """Record that ``tag`` was used now (pruning removes the least recently used)."""
    path = _usage_path()
    with locked(path.with_suffix(".lock")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            data = {}
        data[tag] = time.time()
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, path)


def last_used() -> dict[str, float]:
    try:
        return {k: float(v) for k, v in json.loads(_usage_path().read_text()).items()}
    except (OSError, ValueError):
        return {}


def cached_images(client: Any) -> list[dict[str, Any]]:
    """Our images, least recently used first: tag, kind, bytes, own_bytes, parent,
    created, last used."""
    from vibes_eval.runners.docker.image import BASE_REPO, KIND_LABEL

    used = last_used()
    rows = []
    for img in client.images.list():
        kind = (img.labels or {}).get(KIND_LABEL)
        tags = img.tags or []
        if kind is None and any(t.startswith(BASE_REPO + ":") for t in tags):
            kind = "base"
        if kind not in KINDS:
            continue
        created = datetime.fromisoformat(img.attrs["Created"][:19]).replace(tzinfo=UTC).timestamp()
        tag = tags[0] if tags else img.short_id
        rows.append({"tag": tag, "kind": kind, "bytes": int(img.attrs.get("Size", 0)),
                     "created": created, "last_used": used.get(tag, created), "id": img.id,
                     "parent": img.attrs.get("Parent") or ""})  # fmt: skip
    sizes = {r["id"]: r["bytes"] for r in rows}
    for r in rows:
        r["own_bytes"] = max(0, r["bytes"] - sizes.get(r["parent"], 0))
    return sorted(rows, key=lambda r: r["last_used"])


def disk_bytes(rows: Iterable[dict[str, Any]]) -> int:
    return sum(r["own_bytes"] for r in rows)


def _descendants(rows: list[dict[str, Any]], root: dict[str, Any]) -> list[dict[str, Any]]:
    """``root``'s children, grandchildren... (deepest last)."""
    out, frontier = [], {root["id"]}
    while frontier:
        found = [r for r in rows if r["parent"] in frontier and r not in out]
        out += found
        frontier = {r["id"] for r in found}
    return out


def plan_prune(
    rows: list[dict[str, Any]],
    *,
    older_than_s: float | None = None,
    max_bytes: float | None = None,
    now: float = 0.0,
    keep: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """The images to remove, children before parents: those unused for ``older_than_s``,
    then the least recently used (each with its descendants: a parent frees nothing while
    a child stays) until the cache's own bytes are at most ``max_bytes``. ``keep``: tags
    never removed (what a running evaluation is using), nor their ancestors."""
    keep = set(keep)
    doomed = [r for r in rows if older_than_s is not None and now - r["last_used"] > older_than_s]
    doomed = [r for r in doomed if r["tag"] not in keep]
    if max_bytes is not None:
        left = disk_bytes(r for r in rows if r not in doomed)
        for r in rows:  # least recently used first
            if left <= max_bytes:
                break
            group = [g for g in [r, *_descendants(rows, r)] if g not in doomed]
            if not group or any(g["tag"] in keep for g in group):
                continue
            doomed += group
            left -= disk_bytes(group)
    ids = {r["id"] for r in doomed}
    staying = {r["parent"] for r in rows if r["id"] not in ids}
    doomed = [r for r in doomed if r["id"] not in staying]  # else only untagged
    order = {r["id"]: len(_ancestors_in(doomed, r)) for r in doomed}
    return sorted(doomed, key=lambda r: -order[r["id"]])


def _ancestors_in(rows: list[dict[str, Any]], row: dict[str, Any]) -> list[str]:
    by_id = {r["id"]: r for r in rows}
    out, parent = [], row["parent"]
    while parent in by_id and parent not in out:
        out.append(parent)
        parent = by_id[parent]["parent"]
    return out


def remove(client: Any, doomed: list[dict[str, Any]], say: Callable[[str], None]) -> int:
    """Remove ``doomed`` in order; returns the own bytes freed."""
    freed = 0
    for r in doomed:
        try:
            client.images.remove(r["tag"])
        except Exception as exc:  # in use by a container, or gone already
            say(f"kept {r['tag']}: {str(exc).splitlines()[0][:120]}")
            continue
        freed += r["own_bytes"]
        say(f"removed {r['tag']}")
    return freed


def prune_to(client: Any, max_bytes: float, keep: Iterable[str], say: Callable[[str], None]) -> int:
    """Remove the least recently used SWE-bench/wrapper images until the cache's own
    bytes are at most ``max_bytes`` (what a long run calls before each build)."""
    rows = [r for r in cached_images(client) if r["kind"] in PRUNABLE]
    with contextlib.suppress(Exception):
        return remove(client, plan_prune(rows, max_bytes=max_bytes, keep=keep), say)
    return 0
