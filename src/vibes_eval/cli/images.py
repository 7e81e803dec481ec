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
from vibes_eval.runners.docker.cache import PRUNABLE, cached_images, disk_bytes, plan_prune, remove

images_app = typer.Typer(
    no_args_is_help=True, help="List and prune the image cache.", rich_markup_mode=None
)


def register(eval_app: typer.Typer) -> None:
    eval_app.add_typer(images_app, name="images")


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
    for r in rows:
        print(f"{r['tag']:40} {r['kind']:12} {r['own_bytes'] / 1e9:7.2f} GB  created "
              f"{_when(r['created'])}  used {_when(r['last_used'])}")  # fmt: skip
    print(f"{len(rows)} images, {disk_bytes(rows) / 1e9:.2f} GB on disk (each image's own "
          "layers: an instance's size is what it adds to its environment)")  # fmt: skip


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
    doomed = plan_prune(
        rows,
        older_than_s=None if older_than is None else older_than * 86400,
        max_bytes=None if max_size is None else max_size * 1e9,
        now=time.time(),
    )
    if dry_run:
        for r in doomed:
            print(f"would remove {r['tag']}")
        freed = sum(r["own_bytes"] for r in doomed)
    else:
        freed = remove(client, doomed, print)
    with contextlib.suppress(Exception):
        client.close()
    print(f"{'would free' if dry_run else 'freed'} {freed / 1e9:.2f} GB")
