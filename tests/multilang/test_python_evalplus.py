"""EvalPlus's judgement as the harness makes it (``vibes_plus``), MBPP+'s input types
(``python/evalplus.py``) and the wire's fast path for flat lists: units, no sandbox."""

from __future__ import annotations

import math

import pytest

from vibes_eval.benchmarks.multilang.python import evalplus
from vibes_eval.benchmarks.multilang.python.sandbox import vibes_plus as plus
from vibes_eval.benchmarks.multilang.python.sandbox import vibes_wire as wire
from vibes_eval.benchmarks.multilang.tasks import CodeTask


@pytest.mark.parametrize(
    "dataset,entry,args,out,exp,atol,ok",
    [
        ("humaneval", "f", [], [1, 2], [1, 2], 0, True),
        ("humaneval", "f", [], (1, 2), [1, 2], 0, False),  # == as EvalPlus: types count
        ("humaneval", "f", [], True, 1, 0, True),  # ... where Python's == says equal
        ("humaneval", "f", [], 0.1 + 0.2, 0.3, 0, True),  # a float: atol 1e-6
        ("humaneval", "f", [], [1.0, 2.0000001], [1.0, 2.0], 0, True),
        ("humaneval", "f", [], [1.0, 2.1], [1.0, 2.0], 0, False),
        ("humaneval", "f", [], 1, 1.0000001, 0, False),  # int vs float: types differ
        ("humaneval", "f", [], math.inf, math.inf, 0, True),
        ("humaneval", "f", [], 1e308, math.inf, 1e-6, False),  # numpy: inf is close to inf only
        ("humaneval", "f", [], math.nan, math.nan, 0, False),
        ("humaneval", "f", [], "a", "a ", 1e-4, False),
        ("humaneval", "find_zero", [[1, 2]], -0.5, 99.0, 1e-4, True),  # the oracle, not ==
        ("humaneval", "find_zero", [[1, 2]], 0.5, -0.5, 1e-4, False),
        ("mbpp", "similar_elements", [], (5, 4), (4, 5), 0, True),  # set equality
        ("mbpp", "check_str", [], "match", True, 0, True),  # not None
        ("mbpp", "check_str", [], None, True, 0, False),
        ("mbpp", "sum_div", [], 0, 7, 0, True),
        ("mbpp", "are_equivalent", [], 3, 4, 0, True),
    ],
)
def test_judge_as_evalplus(dataset, entry, args, out, exp, atol, ok) -> None:
    assert plus.judge(dataset, entry, args, out, exp, atol)[0] is ok


def test_atol_becomes_1e6_after_a_float_for_the_rest_of_the_inputs() -> None:
    assert plus.judge("humaneval", "f", [], [1, 2], [1, 2.0000001], 0)[0] is False
    _, atol = plus.judge("humaneval", "f", [], 1.0, 1.0, 0)
    assert atol == 1e-6  # a mixed list is then close enough, as in EvalPlus's loop
    assert plus.judge("humaneval", "f", [], [1, 2], [1, 2.0000001], atol)[0] is True


def test_time_limits_as_evalplus() -> None:
    limits, run = plus.time_limits([0.01, 0.5, 30.0], 1.0, 4.0)
    assert limits == [1.0, 2.0, 120.0] and run == 61.0


def _task(tid: str) -> CodeTask:
    return CodeTask(task_id=tid, source="x", language="python", format="evalplus")


def test_mbpp_plus_inputs_get_evalplus_types() -> None:
    assert evalplus.inputs(_task("Mbpp/2"), [[[3, 4], [5]]]) == [[(3, 4), (5,)]]
    assert evalplus.inputs(_task("Mbpp/124"), [["0", "1j"]]) == [(0.0, 1j)]
    assert evalplus.inputs(_task("Mbpp/115"), [[[[1], []]]]) == [[[{1}, {}]]]
    assert evalplus.inputs(_task("Mbpp/580"), [[[1, [2]]]]) == [((1, (2,)),)]
    assert evalplus.inputs(_task("Mbpp/3"), [[[1]]]) == [[[1]]]
    assert evalplus.inputs(_task("HumanEval/2"), [[[1]]]) == [[[1]]]


@pytest.mark.parametrize(
    "value",
    [[1, 2.5, "x", None, True], (1, 2), [1, math.nan], [10**30], [[1], [2]], [1.0, math.inf]],
)
def test_wire_round_trips_flat_and_tagged_lists(value) -> None:
    back = wire.decode(wire.encode(value))
    assert type(back) is type(value)
    assert repr(back) == repr(value)
