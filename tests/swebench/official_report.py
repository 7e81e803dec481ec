"""Run by a Python that has swebench 5.x installed (its own venv: the versions of the
project's extra and 5.x differ): reads JSON cases on stdin, prints swebench's
``get_eval_report`` for each as JSON on stdout.

Each case: {"instance": {instance_id, repo, version, FAIL_TO_PASS, PASS_TO_PASS,
log_parser, eval_type}, "model_patch": str | null, "log": path of test_output.txt}.
"""

import json
import sys

from swebench.harness.grading import get_eval_report
from swebench.types import TestSpec

out = []
for case in json.load(sys.stdin):
    inst = case["instance"]
    spec = TestSpec(
        instance_id=inst["instance_id"],
        image="",
        eval_script_list=[],
        repo=inst["repo"],
        version=inst["version"],
        FAIL_TO_PASS=inst["FAIL_TO_PASS"],
        PASS_TO_PASS=inst["PASS_TO_PASS"],
        log_parser=inst.get("log_parser") or "parse_log_pytest",
        eval_type=inst.get("eval_type") or "pass_and_fail",
    )
    pred = {
        "instance_id": inst["instance_id"],
        "model_name_or_path": "m",
        "model_patch": case["model_patch"],
    }
    out.append(get_eval_report(spec, pred, case["log"], include_tests_status=True))
json.dump(out, sys.stdout)
