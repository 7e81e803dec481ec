"""MultiPL-E Go ships no solutions. This ports HumanEval-X Go's canonical solutions to it,
so its rows can be checked end to end (docs/multilang.md, "Go: a trusted test program
calls the candidate"):

    python bench/go_multiple_port.py OUT_DIR     # OUT_DIR/problems.jsonl, samples.jsonl
    vibes eval run multipl-e --problems OUT_DIR/problems.jsonl --samples OUT_DIR/samples.jsonl

Each completion calls the HumanEval-X solution (renamed ``ref<Name>``) through a
reflect-based converter between the two signatures (MultiPL-E passes tuples as
``[]interface{}``, maps with string keys...); each row's prompt gets the imports the
ported solution needs (MultiPL-E's prompts import only testing and fmt). Two samples per
task: the port, and the port with one operator or constant of the solution changed.
Needs ../shared (or VIBES_SHARED_DIR).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import sys
from pathlib import Path

from vibes_eval.benchmarks.multilang.languages import split_go as S
from vibes_eval.benchmarks.multilang.languages.policy import strip_c_like

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("VIBES_SHARED_DIR") or ROOT.parent / "shared") / "datasets"
PACKAGES = ("strings", "math", "sort", "strconv", "fmt", "crypto/md5", "math/rand", "time",
            "bytes", "regexp", "unicode")  # fmt: skip
SWAPS = [("<=", "<"), ("<", "<="), ("+ 1", "- 1"), ("==", "!="), ("true", "false"),
         (" + ", " - "), ("[0]", "[1]"), ("1", "2")]  # fmt: skip
CONVERT = (Path(__file__).parent / "go_multiple_convert.go.txt").read_text()


def mutated(code: str, seed: int) -> str:
    """One operator or constant changed (deterministic per seed)."""
    for n in range(len(SWAPS)):
        a, b = SWAPS[(seed + n) % len(SWAPS)]
        spots = [m.start() for m in re.finditer(re.escape(a), code)]
        if spots:
            i = spots[seed % len(spots)]
            return code[:i] + b + code[i + len(a) :]
    return code


def port(row: dict, hx: dict, seed: int) -> tuple[dict, list[str]]:
    """The row with the imports the port needs, and its two completions."""
    prompt = row["prompt"]
    bare = strip_c_like(prompt, backtick=True)
    head = list(S._FUNC.finditer(bare))[-1]
    close = S._closing(bare, head.end() - 1, "(", ")")
    names = [re.match(r"\w+", p).group(0) for p in S._split_top(bare[head.end() : close])]
    result = bare[close + 1 : len(bare.rstrip()) - 1].strip()
    sig, _ = S.signature(hx["declaration"])
    imports, hprompt = S.split_header(hx["prompt"])
    _, start = S.signature(hprompt)
    ref = "ref" + sig.name
    rename = lambda text: re.sub(rf"\b{sig.name}\(", ref + "(", text)  # noqa: E731
    call = "".join(f", {n}" for n in names)
    head_code = (
        f"    var refOut {result}\n    refCall({ref}, &refOut{call})\n    return refOut\n}}\n"
    )
    out = []
    for solution in (hx["canonical_solution"], mutated(hx["canonical_solution"], seed)):
        tail = rename(hprompt[:start]) + "\n" + rename(hprompt[start:].strip() + "\n" + solution)
        out.append(head_code + "\n" + tail + "\n" + CONVERT)
    code = strip_c_like(out[0], backtick=True)
    used = [p for p in [i.path for i in imports] + list(PACKAGES)
            if re.search(rf"(?<![\w.]){p.rsplit('/', 1)[-1]}\s*\.", code)]  # fmt: skip
    have = re.findall(r'"([^"]+)"', re.search(r"import \((.*?)\)", prompt, re.S).group(1))
    extra = [p for p in dict.fromkeys([*used, "reflect"]) if p not in have]
    lines = "".join(f'    "{p}"\n' for p in extra)
    return dict(row, prompt=prompt.replace("import (\n", "import (\n" + lines, 1)), out


def main(out_dir: Path) -> None:
    with gzip.open(SHARED / "humaneval-x" / "humaneval_go.jsonl.gz", "rt") as fh:
        hx = {r["task_id"]: r for r in map(json.loads, fh)}
    rows = [json.loads(x) for x in (SHARED / "multipl-e" / "humaneval-go.jsonl").open()]
    problems, samples = [], []
    for n, row in enumerate(rows):
        task = hx[f"Go/{int(row['name'].split('_')[1])}"]
        problem, completions = port(row, task, n)
        problems.append(problem)
        samples += [{"name": row["name"], "completion": c} for c in completions]
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "problems.jsonl").write_text("".join(json.dumps(p) + "\n" for p in problems))
    (out_dir / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    print(f"{len(problems)} problems, {len(samples)} samples in {out_dir}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
