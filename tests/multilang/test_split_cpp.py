"""C++ on the split, piece by piece: which signatures the wire carries (the datasets' and
hostile ones), and the wire's codecs compiled with the real g++ (values round-trip
exactly; the receiver refuses what its declared type does not allow)."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.components import need
from tests.multilang.multiple_cpp import HUMANEVAL_X_CPP, MULTIPLE_CPP
from vibes_eval.benchmarks.multilang.languages import cpp, split_cpp
from vibes_eval.benchmarks.multilang.tasks import CodeTask, load_tasks


def _task(prompt: str) -> CodeTask:
    return CodeTask(task_id="CPP/1", language="cpp", format="humaneval-x", prompt=prompt)


@pytest.mark.parametrize(
    ("header", "carried"),
    [
        ("vector<int> f(vector<int> xs, int k)", True),
        ("boost::any compare_one(boost::any a,boost::any b)", True),
        ("vector<int> filter_integers(list_any values)", True),
        ("std::tuple<std::optional<long>, std::optional<long>> f(std::vector<long> lst)", True),
        ("map<char,int> histogram(string test)", True),
        ("long long f(const vector<long long>& xs, unsigned n)", True),
        ("void f(int n)", True),
        ("int f(vector<int>& xs)", False),  # the candidate could write through it
        ("int f(const char *s)", False),
        ("int f(int)", False),  # no name to forward
        ("int f(int n = 3)", False),
        ("int f(int xs[])", False),
        ("Union_std_string_long f(long n)", False),
        ("std::array<int, 3> f(int n)", False),
        ("int f(std::function<int(int)> g)", False),
    ],
)
def test_the_signatures_the_wire_carries(header: str, carried: bool) -> None:
    prompt = "typedef std::list<boost::any> list_any;\n" + header + "{\n"
    assert (split_cpp.entry_of(_task(prompt)) is not None) == carried


def test_every_dataset_task_is_on_the_split_but_multiple_unions(shared_datasets: Path) -> None:
    off = []
    for path in (HUMANEVAL_X_CPP, MULTIPLE_CPP):
        off += [t for t, p in load_tasks(path, "cpp").items() if split_cpp.entry_of(p) is None]
    assert sorted(off) == [
        "HumanEval_103_rounded_avg", "HumanEval_125_split_words", "HumanEval_137_compare_one",
    ]  # fmt: skip


def test_the_stub_has_the_prompts_signature() -> None:
    prompt = "#include<vector>\nusing namespace std;\nint h(int x){ return x; }\n"
    task = _task(prompt + "vector<int> f(vector<int>l, int k){\n")
    entry = split_cpp.entry_of(task)
    assert entry is not None and entry.names == ("l", "k")
    source = split_cpp.test_source(task.model_copy(update={"test": "int main(){}\n"}), entry)
    assert "int h(int x){ return x; }" in source  # the prompt's helper, as written
    assert "typedef vector<int> vibes_entry_t(vector<int>l, int k);" in source
    assert "return ::vibes::call<vibes_entry_t>(l, k);" in source
    assert "int vibes_test_main()" in source and "int main()" not in source


# -- the codecs, through g++ ------------------------------------------------------------

DRIVER = r"""
#include <any>
#include <optional>
#include <list>
#include <iostream>
template <class T> void round_trip(const T &v) {
    std::string a, b;
    vibes::put<T>(a, v);
    vibes::put<T>(b, vibes::decode_result<T>(a));
    std::cout << (a == b ? "same " : "DIFFERENT ") << a << "\n";
}
template <class T> void decode(const char *text) {
    try {
        std::string out;
        vibes::put<T>(out, vibes::decode_result<T>(text));
        std::cout << "took " << out << "\n";
    } catch (const vibes::Malformed &e) {
        std::cout << "refused " << e.what() << "\n";
    }
}
int main() {
    round_trip<std::vector<float>>({1.1f, -0.0f, -INFINITY, 3.4028235e38f, 1e-45f});
    round_trip<double>(0.1 + 0.2);
    round_trip<long double>(1.0L / 3);
    round_trip<std::string>(std::string("a\0\xff\"\\\n", 6));
    round_trip<std::map<char, int>>({{'a', 1}, {'\xe9', -2}});
    round_trip<std::tuple<std::optional<long>, std::optional<long>, bool>>({std::nullopt, 7, true});
    round_trip<std::vector<std::any>>({4, 2.5f, std::string("s"), "c", std::vector<long>{1}, std::any()});
    round_trip<std::list<std::set<std::pair<int, std::string>>>>({{{1, "x"}, {0, ""}}});
    round_trip<long long>(-9223372036854775807LL - 1);
    round_trip<unsigned long long>(18446744073709551615ULL);
    decode<int>("4294967298");
    decode<int>("-2147483649");
    decode<int>("2.0");
    decode<int>("2e0");
    decode<int>("\"NaN\"");
    decode<unsigned>("-1");
    decode<char>("200");
    decode<bool>("1");
    decode<std::vector<int>>("[1,2");
    decode<std::vector<int>>("[1,2] x");
    decode<std::vector<int>>("[[[[[[[[[[1]]]]]]]]]]");
    decode<std::string>("\"\\u0100\"");
    decode<std::string>("\"a\nb\"");
    decode<std::any>("{\"$t\":\"vector<char>\",\"v\":[]}");
    decode<double>("[\"NaN\"]");
    decode<std::vector<double>>("[\"NaN\"]");
    std::string nan;
    vibes::put<double>(nan, NAN);
    std::cout << "sent " << nan << "\n";
    decode<std::optional<int>>("null");
    decode<float>("\"Infinity\"");
}
"""
REFUSED = [
    "an integer out of range", "an integer out of range", "expected an integer",
    "expected an integer", "expected a number", "an integer out of range",
    "an integer out of range", "expected a bool", "expected ']'",
    "trailing bytes after the value", "expected a number", "a \\u escape beyond a byte",
    "a control byte in a string", "an unknown type tag", "expected a number",
    "NaN is not an answer a tolerance check can judge",
]  # fmt: skip


@pytest.mark.needs_tool("g++")
def test_the_wire_round_trips_and_refuses(tmp_path: Path) -> None:
    need("toolchains", None if shutil.which("g++") else "g++ is not installed")
    parts = split_cpp.wire_parts()
    (tmp_path / "driver.cpp").write_text(DRIVER)
    argv = split_cpp.compile_argv(cpp.find_toolchain().gxx, parts, "driver.cpp",
                                  [parts.io_object], "driver", [])  # fmt: skip
    subprocess.run(argv, cwd=tmp_path, check=True, capture_output=True, timeout=300)
    out = subprocess.run(["./driver"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    lines = out.stdout.splitlines()
    trips = [x for x in lines if x.startswith(("same", "DIFFERENT"))]
    assert len(trips) == 10 and all(x.startswith("same") for x in trips), trips
    assert lines[10:-3] == [f"refused {why}" for why in REFUSED]
    assert lines[-3:] == ['sent "NaN"', "took null", 'took "Infinity"']
    assert '"-Infinity"' in trips[0] and "-0" in trips[0]


def test_humaneval_x_prompts_give_their_own_helpers_to_the_test(shared_datasets: Path) -> None:
    with gzip.open(HUMANEVAL_X_CPP, "rt") as fh:
        rows = {r["task_id"]: r for r in map(json.loads, fh)}
    task = load_tasks(HUMANEVAL_X_CPP, "cpp")["CPP/38"]
    entry = split_cpp.entry_of(task)
    assert entry is not None
    source = split_cpp.test_source(task, entry)
    assert (
        "string encode_cyclic(string s){" in source
        and rows["CPP/38"]["test"].split("main")[0] in source
    )
