"""Write sample files for a kernel task set: the naive solutions shipped with the tasks,
the expert references resubmitted as solutions, wrong ones (`wrong/<task>.h`), ones that
do not compile, and the cheats (`cheats/*.h`, each naming its task and the rule expected
to catch it). Every line carries `kind` (and `expect` for cheats).

    python examples/kernels/make_samples.py examples/kernels/cpu OUT_DIR
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml


def tasks(set_dir: Path) -> dict[str, Path]:
    out = {}
    for path in sorted(set_dir.glob("tasks/**/task.yaml")):
        out[yaml.safe_load(path.read_text())["task_id"]] = path.parent
    return out


def header(text: str, key: str) -> str:
    m = re.search(rf"^//\s*{key}:\s*(.+)$", text, re.M)
    return m.group(1).strip() if m else ""


def main(set_dir: Path, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    found = tasks(set_dir)
    kinds: dict[str, list[dict[str, str]]] = {
        k: [] for k in ("naive", "expert", "wrong", "broken", "cheats")
    }
    for task_id, folder in found.items():
        naive = (folder / "solution.h").read_text()
        kinds["naive"].append({"task_id": task_id, "kind": "naive", "solution": naive})
        expert = folder / "reference.h"
        if expert.exists():
            kinds["expert"].append(
                {"task_id": task_id, "kind": "expert", "solution": expert.read_text()}
            )
        wrong = set_dir / "wrong" / f"{folder.name}.h"
        if wrong.exists():
            kinds["wrong"].append(
                {"task_id": task_id, "kind": "wrong", "solution": wrong.read_text()}
            )
        # Does not compile: a declaration the compiler has never heard of.
        broken = naive.replace("{", "{ undeclared_helper_function(0);", 1)
        kinds["broken"].append({"task_id": task_id, "kind": "broken", "solution": broken})
    for cheat in sorted((set_dir / "cheats").glob("*")):
        text = cheat.read_text()
        task_id = header(text, "task")
        if task_id in found:
            kinds["cheats"].append(
                {
                    "task_id": task_id,
                    "kind": "cheat",
                    "name": cheat.stem,
                    "expect": header(text, "expect"),
                    "solution": text,
                }
            )
    everything = []
    for kind, rows in kinds.items():
        everything += rows
        with open(out_dir / f"{kind}.jsonl", "w") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows)
    with open(out_dir / "all.jsonl", "w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in everything)
    print(f"{len(everything)} samples for {len(found)} tasks in {out_dir}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]))
