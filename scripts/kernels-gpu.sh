#!/usr/bin/env bash
# Evaluate the CUDA example set (examples/kernels/cuda) on a GPU machine through the
# `kernels` harness: expert references resubmitted, naive, wrong, non-compiling and
# cheating solutions. Everything worth keeping goes to $OUT, in at most 8 files:
#   summary.txt  the short summary printed at the end
#   metrics.txt  metric tables per kind of solution (and for all together)
#   timings.tsv  per task, kind and size: reference and solution times, speedup
#   results.jsonl  every verdict (reason, detail, measurements, details)
#   env.txt      GPU, driver, toolchain, Python, sandbox used, the sandbox probe
#   log.txt      what the evaluation printed
#   store.sqlite the result store (`vibes eval results --store $OUT/store.sqlite`)
#
# Run from the repository root, with the wheels below in .whl/ carried along:
#   OUT=/some/dir bash scripts/kernels-gpu.sh
# Knobs: KINDS (default "expert naive wrong broken cheats"), REPEATS (3), LIMIT_S (480).
#
# The machine has python3 (3.12) with numpy and pyyaml (the evaluation goes through the
# Python API: typer and rich are not needed), nvcc, make, g++, nvidia-smi; the rest of what
# vibes_eval imports comes as cp312 manylinux x86_64 wheels in .whl/, made with
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#     -d .whl NAME==VERSION
# for: pydantic==2.14.4 pydantic_core==2.50.5 annotated-types==0.8.0
#      typing-inspection==0.4.5 typing_extensions==4.16.0 SQLAlchemy==2.1.9
#      platformdirs==4.14.8 pyseccomp==0.1.2
set -uo pipefail

OUT=${OUT:?set OUT to the directory for the results}
KINDS=${KINDS:-expert naive wrong broken cheats}
REPEATS=${REPEATS:-3}
LIMIT_S=${LIMIT_S:-480}
ROOT=$(pwd)
DEADLINE=$((SECONDS + LIMIT_S))
WORK=$(mktemp -d /tmp/kernels-gpu.XXXXXX)
mkdir -p "$OUT"
LOG="$OUT/log.txt"
: >"$LOG"

left() { echo $((DEADLINE - SECONDS)); }
say() { echo "[kernels-gpu $(date +%H:%M:%S)] $*" | tee -a "$LOG"; }
# A step under the overall deadline, keeping `reserve` seconds for what follows.
step() {
  local reserve=$1
  shift
  local budget=$(($(left) - reserve))
  if ((budget < 5)); then
    say "skipped (no time left): $*"
    return 124
  fi
  timeout -k 10 "$budget" "$@"
}

[ -f src/vibes_eval/__init__.py ] || { echo "run from the repository root" >&2; exit 2; }

# -- Python environment: the machine's packages plus the wheels we brought ------------
SITE="$WORK/site"
if ls .whl/*.whl >/dev/null 2>&1; then
  if ! step 400 python3 -m pip install -q --no-index --no-deps --target "$SITE" .whl/*.whl \
    >>"$LOG" 2>&1; then
    say "pip install of .whl failed (log.txt): unpacking the wheels instead"
    for wheel in .whl/*.whl; do python3 -m zipfile -e "$wheel" "$SITE" >>"$LOG" 2>&1; done
  fi
else
  say "no .whl/ folder: relying on the installed packages"
fi
export PYTHONPATH="$SITE:$ROOT/src${PYTHONPATH:+:$PYTHONPATH}"
export VIBES_CACHE_DIR="$WORK/cache" VIBES_DATA_DIR="$WORK/data" VIBES_WORK_DIR="$WORK/sessions"
export OUT KINDS REPEATS WORK
python3 -c "import vibes_eval.api" >>"$LOG" 2>&1 || { say "vibes_eval does not import (log.txt)"; exit 3; }

# -- Facts about the machine ------------------------------------------------------------
{
  echo "## date"; date -u
  echo "## nvidia-smi"; timeout 30 nvidia-smi \
    --query-gpu=index,name,compute_cap,driver_version,memory.total --format=csv 2>&1 ||
    echo "nvidia-smi failed"
  echo "## nvcc"; timeout 30 nvcc --version 2>&1 | tail -2
  echo "## gcc"; g++ --version 2>&1 | head -1
  echo "## python"; python3 --version
  echo "## cpu"; grep -m1 "model name" /proc/cpuinfo; nproc
  echo "## git"; git rev-parse HEAD 2>/dev/null || echo "no git"
} >"$OUT/env.txt" 2>&1

# -- Samples: the task set's own solutions, wrong and broken ones, the cheats ---------------
python3 examples/kernels/make_samples.py examples/kernels/cuda "$WORK/samples" >>"$LOG" 2>&1 ||
  { say "making samples failed"; exit 3; }
: >"$WORK/chosen.jsonl"
for kind in $KINDS; do cat "$WORK/samples/$kind.jsonl" >>"$WORK/chosen.jsonl"; done
say "$(wc -l <"$WORK/chosen.jsonl") samples ($KINDS), repeats=$REPEATS, ${LIMIT_S}s in all"

# -- Which sandbox: auto, unless it cannot run a CUDA program (then process) ------------------
SANDBOX=auto
step 300 python3 - >>"$OUT/env.txt" 2>&1 <<'PY'
import json, os, sys
from vibes_eval.core.errors import RunnerUnavailable
from vibes_eval.runners.select import resolve_runner

work = os.environ["WORK"]
try:
    runner = resolve_runner("auto")
    print(f"## sandbox auto -> {runner.name}: {runner.capabilities.notes or 'full'}")
except RunnerUnavailable as exc:
    print(f"## sandbox auto unavailable: {exc}")
    open(f"{work}/sandbox", "w").write("process")
    sys.exit(0)
# Probe: the expert vector add under this sandbox must pass (or find no GPU).
import vibes_eval
probe = [json.loads(l) for l in open(f"{work}/samples/expert.jsonl") if "vector_add" in l][:1]
out = vibes_eval.evaluate("kernels", probe, config={"problems": "examples/kernels/cuda",
                          "repeats": 1}, sandbox="auto", workers=1, ks=[1])  # fmt: skip
r = out.ordered[0]
print(f"## probe under {runner.name}: {r.reason} {r.detail[:300]}")
if r.reason not in ("passed", "no_device"):
    print("## probe stderr:\n" + r.stderr[-1500:] + "\n## probe stdout:\n" + r.stdout[-800:])
    open(f"{work}/sandbox", "w").write("process")
PY
[ -f "$WORK/sandbox" ] && SANDBOX=$(cat "$WORK/sandbox")
say "sandbox: $SANDBOX (env.txt says why)"
echo "## sandbox used: $SANDBOX" >>"$OUT/env.txt"

# -- The evaluation -------------------------------------------------------------------------
say "evaluating"
export SANDBOX
step 45 python3 - >>"$LOG" 2>&1 <<'PY'
import json, os, time

import vibes_eval

work, start = os.environ["WORK"], time.monotonic()
rows = [json.loads(line) for line in open(f"{work}/chosen.jsonl")]


def progress(r):  # one line per verdict: the log shows how far a cut-off run got
    speed = r.measurements.get("speedup", "")
    print(f"{time.monotonic() - start:6.0f}s {r.task_id} #{r.index} {r.reason} {speed} "
          f"{r.detail[:120]}", flush=True)  # fmt: skip


out = vibes_eval.evaluate(
    "kernels", rows, config={"problems": "examples/kernels/cuda",
                             "repeats": int(os.environ["REPEATS"])},
    sandbox=os.environ["SANDBOX"], store=f"{work}/store.sqlite", run_id="gpu-cuda",
    labels={"machine": "gpu"}, ks=[1], use_cache=False, on_result=progress,
)  # fmt: skip
print(f"evaluated {len(out.results)} samples in {out.elapsed_s:.0f}s; notes: {out.notes}")
PY
status=$?
((status == 124)) && say "the evaluation hit the time limit: results so far are reported"
say "evaluation exit status $status"

# -- Report: per kind, from the store (partial runs included) ---------------------------------
step 0 python3 - 2>>"$LOG" <<'PY'
import json, os, sqlite3
from collections import defaultdict

import vibes_eval
from vibes_eval.benchmarks.kernels.scoring import (
    cheat_check, kernel_metrics, kind_table, sample_lines, timings_tsv,
)
from vibes_eval.core.metrics import score

out_dir, work = os.environ["OUT"], os.environ["WORK"]
if os.path.exists(f"{out_dir}/store.sqlite"):
    os.remove(f"{out_dir}/store.sqlite")
with sqlite3.connect(f"{work}/store.sqlite") as db:  # one file, whatever the journal mode
    db.execute("VACUUM INTO ?", (f"{out_dir}/store.sqlite",))
with vibes_eval.open_store(f"{out_dir}/store.sqlite") as store:
    results = store.results("gpu-cuda")  # in sample order, as export's rows
    rows = store.export("gpu-cuda")
groups = defaultdict(list)
for row, result in zip(rows, results):
    groups[row.get("kind", "?")].append(result)
table = kind_table(groups)
with open(f"{out_dir}/metrics.txt", "w") as fh:
    fh.write(table + "\n\nevery metric, all samples together:\n")
    for name, value in score(kernel_metrics([1]), results).values.items():
        fh.write(f"  {name:24} {value:.4f}\n")
with open(f"{out_dir}/results.jsonl", "w") as fh:
    fh.writelines(json.dumps(row) + "\n" for row in rows)
with open(f"{out_dir}/timings.tsv", "w") as fh:
    fh.write(timings_tsv(rows))
caught, cheats, other = cheat_check(rows)
text = "\n".join([table, "", *sample_lines(rows), "",
                  f"cheats caught with the expected rule: {caught} of {cheats}", *other])
open(f"{out_dir}/summary.txt", "w").write(text + "\n")
print(text)
PY
[ -f "$OUT/summary.txt" ] || say "no summary: the report step failed (log.txt)"
rm -rf "$WORK"
say "done in ${SECONDS}s; files in $OUT: $(ls "$OUT" | tr '\n' ' ')"
