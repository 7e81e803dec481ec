from math import comb

import pytest

from vibes_eval.core.metrics import estimate_pass_at_k, parse_ks, pass_at_k


def exact(n: int, c: int, k: int) -> float:
    return 1.0 - comb(n - c, k) / comb(n, k)


@pytest.mark.parametrize(
    "n,c,k",
    [
        (5, 0, 1),
        (5, 1, 1),
        (5, 2, 5),
        (10, 3, 1),
        (10, 3, 5),
        (200, 17, 10),
        (200, 17, 100),
        (20, 20, 10),
        (3, 1, 3),
    ],
)
def test_pass_at_k_matches_the_combinatorial_formula(n: int, c: int, k: int) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(exact(n, c, k), rel=1e-12, abs=1e-12)


def test_known_values() -> None:
    assert pass_at_k(5, 1, 1) == pytest.approx(0.2)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)
    assert pass_at_k(10, 0, 10) == 0.0
    assert pass_at_k(10, 1, 10) == 1.0


def test_k_larger_than_n_is_omitted_with_a_note() -> None:
    result, notes = estimate_pass_at_k({"a": (3, 1), "b": (5, 0)}, [1, 5])
    assert result == {"pass@1": pytest.approx((1 / 3 + 0) / 2)}
    assert notes and "pass@5" in notes[0]


def test_k_equal_one_alone() -> None:
    result, notes = estimate_pass_at_k({"a": (1, 1), "b": (1, 0)}, [1])
    assert result == {"pass@1": 0.5} and notes == []


@pytest.mark.parametrize(
    "text,expected", [("1", [1]), ("1,10,100", [1, 10, 100]), ("10, 1", [1, 10]), ("5,5", [5])]
)
def test_parse_ks(text: str, expected: list[int]) -> None:
    assert parse_ks(text) == expected


@pytest.mark.parametrize("text", ["", "a", "0", "-1", "1,,x", "1.5"])
def test_parse_ks_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_ks(text)
