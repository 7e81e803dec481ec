"""EvalPlus's judgement of one output, as its evaluator makes it (``evalplus`` 0.3.1,
``evalplus/eval/__init__.py:unsafe_execute`` and ``_special_oracle.py``, Apache-2.0).

Runs in the trusted harness (stdlib only: no numpy, so ``np.allclose`` is written out), on
plain data the wire decoded: the sample's output never brings code of its own here. A
proxy of an object that stayed in the sample (a handle) equals nothing but itself, has no
length and no numbers, so it matches only where EvalPlus's oracle only asks for ``is not
None`` or iterates it.
"""

import math

# Tasks whose output is only checked for being not None (MBPP+).
NOT_NONE = ("check_str", "text_match_three", "text_starta_endb")
# Tasks whose list output is compared as a set (MBPP+).
SET_EQ = ("similar_elements", "find_char_long", "common_in_nested_lists", "extract_singly",
          "larg_nnum", "intersection_array", "find_dissimilar", "Diff")  # fmt: skip
RTOL = 1e-07  # np.testing.assert_allclose's default, which EvalPlus sets explicitly


def _surface_area(base_edge, height):  # the oracle of Mbpp/581
    slant_height = math.sqrt((base_edge / 2) ** 2 + height**2)
    return round(base_edge**2 + 4 * (base_edge * slant_height) / 2)


def _digit_distance_nums(num1, num2):  # the oracle of Mbpp/558
    a, b = str(num1), str(num2)
    width = max(len(a), len(b))
    return sum(abs(int(x) - int(y)) for x, y in zip(a.zfill(width), b.zfill(width)))  # noqa: B905


def _poly(xs, x):  # the oracle of HumanEval/32
    return sum(coeff * math.pow(x, i) for i, coeff in enumerate(xs))


def is_floats(x):
    if isinstance(x, float):
        return True
    if isinstance(x, (list, tuple)) and x:
        return all(isinstance(i, float) for i in x)
    return False


def _numbers(x):
    """``x`` as nested lists of numbers with its shape, as ``np.asarray`` would take it;
    None where numpy would make no numeric array of it (text, None, ragged lists)."""
    if type(x) in (bool, int, float, complex):
        return x, ()
    if not isinstance(x, (list, tuple)):
        return None
    items = [_numbers(v) for v in x]
    if any(i is None for i in items) or len({shape for _, shape in items}) > 1:
        return None
    return [v for v, _ in items], (len(x), *(items[0][1] if items else ()))


def _close(a, b, atol):
    if isinstance(a, list):
        return all(_close(x, y, atol) for x, y in zip(a, b))  # noqa: B905 - same shape
    if a == b:
        return True
    if _infinite(a) or _infinite(b):  # numpy: an infinity is close to itself only
        return False
    return abs(a - b) <= atol + RTOL * abs(b)  # NaN is close to nothing


def _infinite(x):
    return isinstance(x, (float, complex)) and math.isinf(abs(x))


def allclose(out, exp, atol):
    a, b = _numbers(out), _numbers(exp)
    if a is None or b is None or a[1] != b[1]:
        return False
    return _close(a[0], b[0], atol)


def _exact(dataset, entry, args, out, exp, atol):
    """``out == exp``, or a task's special oracle."""
    exact = out == exp
    if dataset != "mbpp":
        return exact
    if entry == "are_equivalent":
        return True
    if entry == "sum_div":
        return exact or out == 0
    if entry == "surface_Area":
        return exact or abs(out - _surface_area(*args)) <= atol
    if entry == "digit_distance_nums":
        return exact or out == _digit_distance_nums(*args)
    if entry in SET_EQ:
        return set(out) == set(exp)
    if entry in NOT_NONE:
        return out == exp if isinstance(out, bool) else exp == (out is not None)
    return exact


def judge(dataset, entry, args, out, exp, atol):
    """(whether ``out`` is right for ``args``, the ``atol`` for the next input): EvalPlus
    raises 0 to 1e-6 once it met a float output, for the rest of the inputs."""
    if dataset == "humaneval" and entry == "find_zero":
        return abs(_poly(*args, out)) <= atol, atol
    exact = _exact(dataset, entry, args, out, exp, atol)
    if atol == 0 and is_floats(exp):
        atol = 1e-6
    if exact or atol == 0:
        return bool(exact), atol
    if type(out) is not type(exp):
        return False, atol
    if isinstance(exp, (list, tuple)) and len(out) != len(exp):
        return False, atol
    return allclose(out, exp, atol), atol


def expected_value(dataset, entry, value):
    """What the canonical solution's output is compared as (MBPP+'s not-None tasks keep
    only whether there was one)."""
    if dataset == "mbpp" and entry in NOT_NONE:
        return value is not None
    return value


def time_limits(ref_times, min_s, factor):
    """EvalPlus's limit per input, and for the whole run of the inputs (its process's
    timeout, within which the code's own load runs too)."""
    limits = [max(min_s, factor * t) for t in ref_times]
    return limits, min(60.0, sum(limits)) + 1.0
