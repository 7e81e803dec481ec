"""Named datasets: a short name resolves to a file found in ``VIBES_DATASET_PATH``, the
cache, or downloaded once when online. Each benchmark keeps its own table of names."""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from vibes_eval.core.errors import UserError
from vibes_eval.paths import data_dir

HF = "https://huggingface.co/datasets"


@dataclass(frozen=True)
class NamedDataset:
    filename: str  # the name it is cached under (and looked for in VIBES_DATASET_PATH)
    url: str


def search_dirs() -> list[Path]:
    """Folders tried before a download: ``VIBES_DATASET_PATH`` (colon-separated), then
    the cache."""
    extra = os.environ.get("VIBES_DATASET_PATH", "")
    return [Path(p) for p in extra.split(os.pathsep) if p] + [data_dir() / "datasets"]


def resolve(
    problems: str | None,
    table: Mapping[str, NamedDataset],
    default: str,
    *,
    elsewhere: Callable[[str], Path | None] = lambda _name: None,
) -> Path:
    """A path for ``--problems``: an existing file, or a name of ``table`` found in the
    search folders, by ``elsewhere`` (e.g. inside an installed package), or downloaded.

    Raises:
        UserError: neither a file nor a known name, or a download that cannot happen.
    """
    name = problems or default
    if name not in table:
        path = Path(name)
        if path.exists() or os.sep in name or name.endswith((".jsonl", ".gz", ".json")):
            if not path.exists():
                raise UserError("no such problem file", path=path)
            return path
        raise UserError(
            f"problems {name!r} is neither a file nor a named dataset ({', '.join(sorted(table))})"
        )
    ds = table[name]
    for folder in search_dirs():
        if (folder / ds.filename).exists():
            return folder / ds.filename
    return elsewhere(name) or download(name, ds)


def download(name: str, ds: NamedDataset) -> Path:
    """Fetch ``ds`` into the cache. Raises: UserError saying what to fetch by hand."""
    target = data_dir() / "datasets" / ds.filename
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".part")
    try:
        with urllib.request.urlopen(ds.url, timeout=30) as resp, open(tmp, "wb") as out:
            out.write(resp.read())
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        tmp.unlink(missing_ok=True)
        raise UserError(
            f"dataset {name!r} is not cached and could not be downloaded ({exc}); "
            f"fetch {ds.url} by hand and give its path as the problems setting (--problems "
            f"PATH; from Python, config={{'problems': PATH}}), or save it as {target}"
        ) from None
    tmp.replace(target)
    return target
