"""A NaN answer never passes a tolerance check written `abs(got - want) > tol -> fail`
(red team: HumanEval-X CPP/20, CPP/62 and Java/32 test that way, and a NaN is never "too
far off"). The wire refuses NaN, so the call fails in the trusted test program; with the
filter on and off, batched and alone. An honest answer within the tolerance passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import vibes_eval
from tests.conftest import SANDBOX

CPP = {
    "task_id": "CPP/0",
    "prompt": "#include<stdio.h>\n#include<math.h>\nusing namespace std;\n"
              "double half(int x){\n",
    "declaration": "#include<stdio.h>\n#include<math.h>\nusing namespace std;\n"
                   "double half(int x){\n",
    "canonical_solution": "    return x / 2.0;\n}\n",
    "test": "#undef NDEBUG\n#include<assert.h>\nint main(){\n"
            "    assert (not(fabs(half(5) - 2.5) > 1e-4));\n}\n",
}  # fmt: skip
JAVA = {
    "task_id": "Java/0",
    "prompt": "import java.util.*;\n\nclass Solution {\n    public double half(int x) {\n",
    "declaration": "import java.util.*;\n\nclass Solution {\n    public double half(int x) {\n",
    "canonical_solution": "        return x / 2.0;\n    }\n}\n",
    "test": "public class Main {\n    public static void main(String[] args) {\n"
            "        Solution s = new Solution();\n"
            "        if (Math.abs(s.half(5) - 2.5) > 1e-4) {\n"
            "            throw new AssertionError();\n        }\n    }\n}\n",
}  # fmt: skip
CASES = {
    "humaneval-cpp": (CPP, "    return NAN;\n}\n", "    return 0.0 / 0.0;\n}\n"),
    "humaneval-java": (JAVA, "        return Double.NaN;\n    }\n}\n",
                       "        return 0.0 / 0.0;\n    }\n}\n"),
}  # fmt: skip


@pytest.mark.parametrize("bench", sorted(CASES))
@pytest.mark.parametrize("policy", [True, False], ids=["filter-on", "filter-off"])
def test_a_nan_answer_fails_a_tolerance_check(tmp_path: Path, bench: str, policy: bool) -> None:
    row, *nans = CASES[bench]
    problems = tmp_path / "p.jsonl"
    problems.write_text(json.dumps(row) + "\n")
    completions = [row["canonical_solution"], *nans]
    samples = [{"task_id": row["task_id"], "completion": c} for c in completions]
    got = {}
    for batch in (True, False):
        config = {"problems": str(problems), "batch": batch, "enforce_policy": policy}
        out = vibes_eval.evaluate(bench, samples, sandbox=SANDBOX, ks=[1], config=config,
                                  use_cache=False)  # fmt: skip
        got[batch] = [out.results[s.key] for s in out.prepared.samples]
    assert [r.passed for r in got[True]] == [True, False, False], [r.detail for r in got[True]]
    assert [(r.passed, r.reason) for r in got[True]] == [(r.passed, r.reason) for r in got[False]]
