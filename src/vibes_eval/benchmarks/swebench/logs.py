"""The official log folder of each instance and the run summary.

``<log_dir>/<run_id>/<model>/<instance_id>/{run_instance.log, patch.diff, eval.sh,
test_output.txt, report.json}`` and ``<report_dir>/<model>.<run_id>.json``, so tools that
read the official harness's output read ours. A folder is written whole each time its
instance is evaluated (never reused from an earlier evaluation of the same run id)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def instance_dir(log_dir: str, run_id: str, model: str, iid: str) -> Path:
    return Path(log_dir) / run_id / model / iid


def write_folder(folder: Path, files: Mapping[str, str]) -> None:
    """Replace ``folder`` with ``files``: written beside it, then swapped in, so a crash
    leaves the old folder or the new one, never a mix."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    for name, text in files.items():
        (tmp / name).write_text(text, encoding="utf-8")
    old = folder.with_name(f".{folder.name}.old-{os.getpid()}")
    if folder.exists():
        folder.rename(old)
    tmp.rename(folder)
    shutil.rmtree(old, ignore_errors=True)


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=4) + "\n", encoding="utf-8")
    tmp.replace(path)
