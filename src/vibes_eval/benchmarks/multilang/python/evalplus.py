"""EvalPlus rows (HumanEval+, MBPP+) as its own evaluator reads them (``evalplus`` 0.3.1,
Apache-2.0): which dataset a task belongs to (its special oracles and MBPP+'s input
types depend on it), and MBPP+'s inputs turned back into the tuples, sets and complex
numbers its JSON cannot hold (``evalplus/data/mbpp.py:mbpp_deserialize_inputs``).
"""

from __future__ import annotations

from typing import Any

from vibes_eval.benchmarks.multilang.tasks import CodeTask

# EvalPlus's per-input limit: max(MIN_TIME_S, TIME_FACTOR x the canonical solution's time);
# a run of inputs gets at most 61 s (its EVALPLUS_TIMEOUT_PER_TASK + 1) and the time its
# answers take to move between processes: RUN_MAX_S bounds both, for the host's backstop.
MIN_TIME_S = 1.0
TIME_FACTOR = 4.0
RUN_MAX_S = 120.0
SETUP_S = 120.0  # a unit's harness computes each EvalPlus task's expected outputs once


def dataset(problem: CodeTask) -> str:
    return "mbpp" if problem.task_id.startswith("Mbpp/") else "humaneval"


def _tuples(x: Any) -> Any:
    return tuple(_tuples(v) for v in x) if isinstance(x, list) else x


def _each_tuple(inp: list) -> list:
    return [tuple(v) for v in inp]


def _nested_tuples(inp: list) -> list:
    return [[tuple(v) for v in group] for group in inp]


def _sets_or_dict(inp: list) -> list:  # Mbpp/115: an empty list becomes {} (a dict), as there
    return [[set(v) if isinstance(v, list) and v else {} for v in inp[0]]]


_BY_TASK = {
    **dict.fromkeys((2, 116, 132, 143, 222, 261, 273, 394, 399, 421, 424, 429, 470, 560, 579,
                     596, 616, 630, 726, 740, 744, 809), _each_tuple),
    **dict.fromkeys((63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780),
                    _nested_tuples),
    **dict.fromkeys((75, 413, 444, 753), lambda i: [_each_tuple(i[0]), i[1]]),
    **dict.fromkeys((106, 750), lambda i: [i[0], tuple(i[1])]),
    115: _sets_or_dict,
    124: lambda i: (float(i[0]), complex(i[1])),
    **dict.fromkeys((250, 405, 446, 617, 720, 763, 808), lambda i: [tuple(i[0]), *i[1:2]]),
    **dict.fromkeys((259, 401, 445), lambda i: _each_tuple(_nested_tuples(i))),
    278: lambda i: _each_tuple([[tuple(v) if isinstance(v, list) else v for v in i[0]]]),
    307: lambda i: [tuple(i[0]), i[1], i[2]],
    722: lambda i: [{k: tuple(v) for k, v in i[0].items()}, *i[1:]],
    252: lambda i: [complex(i[0])],
    **dict.fromkeys((580, 615, 791), _tuples),
}  # fmt: skip


def inputs(problem: CodeTask, rows: list[Any]) -> list[Any]:
    """``rows`` (argument lists of the problem file) with the types EvalPlus gives them."""
    if dataset(problem) != "mbpp":
        return rows
    convert = _BY_TASK.get(int(problem.task_id.split("/")[-1]))
    return [convert(r) for r in rows] if convert else rows
