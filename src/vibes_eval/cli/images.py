"""`vibes eval images list|prune`: the Docker images vibes-eval built or wrapped here
(evaluation image, SWE-bench environments and instances, foreign images with vibes-box)."""

from __future__ import annotations

import contextlib
import time
from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from vibes_eval.cli import options as opt
from vibes_eval.cli.options import OutputFormat
from vibes_eval.core.errors import UserError

images_app = typer.Typer(
    no_args_is_help=True, help="List and prune the image cache.", rich_markup_mode=None
)
KINDS = ("sandbox", "base", "wrap", "swe-env", "swe-instance")
PRUNABLE = ("wrap", "swe-env", "swe-instance")  # rebuilt on demand; the others take longer


def register(eval_app: typer.Typer) -> None:
    eval_app.add_typer(images_app, name="images")


def cached_images(client: Any) -> list[dict[str, Any]]:
    """Our images, least recently used first: tag, kind, bytes, created, last used."""
    from vibes_eval.benchmarks.swebench.env.images import last_used
    from vibes_eval.runners.docker.image import BASE_REPO, KIND_LABEL

    used = last_used()
    rows = []
    for img in client.images.list():
        kind = (img.labels or {}).get(KIND_LABEL)
        tags = img.tags or []
        if kind is None and any(t.startswith(BASE_REPO + ":") for t in tags):
            kind = "base"
        if kind not in KINDS or kind == "build":
            continue
        created = datetime.fromisoformat(img.attrs["Created"][:19]).replace(tzinfo=UTC).timestamp()
        tag = tags[0] if tags else img.short_id
        size = int(img.attrs.get("Size", 0))
        rows.append({"tag": tag, "kind": kind, "bytes": size, "created": created,
                     "last_used": used.get(tag, created), "id": img.id})  # fmt: skip
    return sorted(rows, key=lambda r: r["last_used"])


def _client() -> Any:
    from vibes_eval.runners.docker.client import connect

    return connect()


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M")


@images_app.command("list")
def list_command(fmt: opt.Format = OutputFormat.table) -> None:
    """Every cached image: tag, kind, size, created, last used (least recent first)."""
    rows = cached_images(_client())
    if fmt is OutputFormat.json:
        import json

        print(json.dumps(rows, indent=2))
        return
    total = sum(r["bytes"] for r in rows)
    for r in rows:
        print(f"{r['tag']:40} {r['kind']:12} {r['bytes'] / 1e9:7.2f} GB  created "
              f"{_when(r['created'])}  used {_when(r['last_used'])}")  # fmt: skip
    print(f"{len(rows)} images, {total / 1e9:.2f} GB (layers shared between them count once "
          "on disk)")  # fmt: skip


@images_app.command("prune")
def prune_command(
    older_than: Annotated[
        float | None, typer.Option("--older-than", help="Remove images unused for DAYS days.")
    ] = None,
    max_size: Annotated[
        float | None,
        typer.Option("--max-size", help="Remove the least recently used until at most GB remain."),
    ] = None,
    all_kinds: Annotated[
        bool,
        typer.Option(
            "--all-kinds", help="Also the evaluation image and its base (rebuilt on use)."
        ),
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only say what would go.")] = False,
) -> None:
    """Remove cached images by age of last use and/or down to a total size."""
    if older_than is None and max_size is None:
        raise UserError("say what to prune: --older-than DAYS and/or --max-size GB")
    client = _client()
    rows = [r for r in cached_images(client) if all_kinds or r["kind"] in PRUNABLE]
    now = time.time()
    doomed = [
        r for r in rows if older_than is not None and now - r["last_used"] > older_than * 86400
    ]
    if max_size is not None:
        left = sum(r["bytes"] for r in rows if r not in doomed)
        for r in rows:  # least recently used first
            if left <= max_size * 1e9:
                break
            if r not in doomed:
                doomed.append(r)
                left -= r["bytes"]
    freed = 0
    for r in doomed:
        if not dry_run:
            try:
                client.images.remove(r["tag"])
            except Exception as exc:  # in use by a container, or gone already
                print(f"kept {r['tag']}: {str(exc).splitlines()[0][:120]}")
                continue
        freed += r["bytes"]
        print(("would remove " if dry_run else "removed ") + r["tag"])
    with contextlib.suppress(Exception):
        client.close()
    print(f"{'would free' if dry_run else 'freed'} up to {freed / 1e9:.2f} GB")
