"""Reference completions for MultiPL-E's C++ rows, which ship none: HumanEval-X C++'s
canonical solution of the same problem, behind an adapter that converts MultiPL-E's
argument types to HumanEval-X's (`long` to `int`, tuples to vectors...) and the result
back. Where the two datasets disagree on a result's meaning (HumanEval-X's sentinel
`-1` or `""` for MultiPL-E's `std::nullopt`) the adapter maps the sentinel (``NONE``);
where they disagree beyond that (``DIFFERENT``), the reference is wrong by construction.

MultiPL-E's tests start by closing the function, so the completion leaves one open:
    <ret> f(<params>) {                      <- MultiPL-E's prompt
        <ret> vibes_x_adapter(<params>);     <- the completion
        return vibes_x_adapter(<names>);
    }
    <HumanEval-X's declarations, the converters, HumanEval-X's function renamed and its
     canonical body, the adapter>
    void vibes_x_tail() {
    }                                        <- MultiPL-E's test
"""

from __future__ import annotations

import gzip
import json
import re

from tests.conftest import SHARED
from vibes_eval.benchmarks.multilang.languages.cpp import open_function
from vibes_eval.benchmarks.multilang.languages.split_cpp import params_of, parse_header

HUMANEVAL_X_CPP = SHARED / "datasets" / "humaneval-x" / "humaneval_cpp.jsonl.gz"
MULTIPLE_CPP = SHARED / "datasets" / "multipl-e" / "humaneval-cpp.jsonl"

# HumanEval-X's value where MultiPL-E returns std::nullopt (per problem number)
NONE = {12: '""', 90: "-1", 128: "-32768", 136: "0", 162: '"None"'}
# Problems whose HumanEval-X answer means something else in MultiPL-E: why
DIFFERENT = {
    103: 'HumanEval-X answers "11" and "-1" (strings); MultiPL-E wants "0b11" and -1 (a long)',
    125: 'HumanEval-X answers the count as a string ({"3"}); MultiPL-E wants the number',
    137: "MultiPL-E's prompt does not compile (a union member of type std::nullopt)",
    71: "HumanEval-X's area is not rounded (its test allows 0.01); MultiPL-E's test wants "
    "the area rounded to 2 decimals, compared with ==",
    92: "MultiPL-E's test asks any_int(3.0f, 4.0f, 7.0f) to be true and false (Python's "
    "3.0 vs 3 is lost in C++): no C++ answer passes it",
}

CONVERTERS = """\
template <class T> struct vx_tag {};
template <class To, class From> To vx_conv(const From &f);
template <class To, class From> To vx_c(vx_tag<To>, const From &f) { return static_cast<To>(f); }
template <class T, class From> std::vector<T> vx_c(vx_tag<std::vector<T>>, const From &f) {
    std::vector<T> out;
    for (const auto &x : f) out.push_back(vx_conv<T>(x));
    return out;
}
template <class A, class B, class T>
std::tuple<A, B> vx_c(vx_tag<std::tuple<A, B>>, const std::vector<T> &f) {
    return std::make_tuple(vx_conv<A>(f.at(0)), vx_conv<B>(f.at(1)));
}
template <class A, class B> std::vector<A> vx_c(vx_tag<std::vector<A>>, const std::tuple<B, B> &f) {
    return {vx_conv<A>(std::get<0>(f)), vx_conv<A>(std::get<1>(f))};
}
template <class K, class V, class From> std::map<K, V> vx_c(vx_tag<std::map<K, V>>, const From &f) {
    std::map<K, V> out;
    for (const auto &kv : f) out[vx_conv<K>(kv.first)] = vx_conv<V>(kv.second);
    return out;
}
inline std::string vx_c(vx_tag<std::string>, char c) { return std::string(1, c); }
inline bool vx_c(vx_tag<bool>, const std::string &s) { return s == "True"; }
template <class To, class From> To vx_conv(const From &f) { return vx_c(vx_tag<To>{}, f); }
"""
OPTIONAL = """\
template <class T, class From> std::optional<T> vx_c(vx_tag<std::optional<T>>, const From &f) {
    if (f == VX_NONE) return std::nullopt;
    return vx_conv<T>(f);
}
"""
ANY = """\
inline list_any vx_c(vx_tag<list_any>, const std::vector<std::any> &f) {
    list_any out;
    for (const auto &x : f) {
        if (x.type() == typeid(int)) out.push_back(std::any_cast<int>(x));
        else if (x.type() == typeid(long)) out.push_back(std::any_cast<long>(x));
        else if (x.type() == typeid(float)) out.push_back(std::any_cast<float>(x));
        else if (x.type() == typeid(double)) out.push_back(std::any_cast<double>(x));
        else if (x.type() == typeid(std::string)) out.push_back(std::any_cast<std::string>(x));
        else if (x.type() == typeid(const char *)) out.push_back(std::string(std::any_cast<const char *>(x)));
        else out.push_back(boost::any());
    }
    return out;
}
"""


def _param_types(params: str) -> list[str]:
    """HumanEval-X's parameter types, qualified: MultiPL-E names a parameter `string`."""
    kinds = [kind for kind, _ in params_of(params) or []]
    return [re.sub(r"(?<!::)\b(string|vector|map|set|tuple|pair)\b", r"std::\1", k) for k in kinds]


def reference(m_row: dict, x_row: dict) -> str:
    """The completion of MultiPL-E's ``m_row`` that runs HumanEval-X's canonical solution."""
    m = parse_header(open_function(m_row["prompt"])[1])
    x_before, x_header = open_function(x_row["declaration"])
    x = parse_header(x_header)
    assert m is not None and x is not None
    number = int(m_row["name"].split("_")[1])
    helpers = OPTIONAL.replace("VX_NONE", NONE[number]) if number in NONE else ""
    helpers += ANY if "boost/any" in x_before else ""
    args = ", ".join(
        f"vx_conv<{kind}>({name})"
        for kind, name in zip(_param_types(x.params), m.names, strict=True)
    )
    return (
        f"    {m.ret} vibes_x_adapter({m.params});\n"
        f"    return vibes_x_adapter({', '.join(m.names)});\n}}\n"
        f"{x_before}\nusing namespace std;\n{CONVERTERS}{helpers}"
        f"{x.ret} vibes_x_entry({x.params}) {{\n{x_row['canonical_solution']}\n"
        f"{m.ret} vibes_x_adapter({m.params}) {{\n"
        f"    return vx_conv<{m.ret}>(vibes_x_entry({args}));\n}}\n"
        "void vibes_x_tail() {\n"
    )


def samples() -> list[dict]:
    """A reference and a wrong answer (`return {};`) for every MultiPL-E C++ row."""
    with gzip.open(HUMANEVAL_X_CPP, "rt") as fh:
        x_rows = {int(r["task_id"].split("/")[1]): r for r in map(json.loads, fh)}
    out = []
    for line in MULTIPLE_CPP.read_text().splitlines():
        row = json.loads(line)
        x_row = x_rows[int(row["name"].split("_")[1])]
        out.append({"task_id": row["name"], "completion": reference(row, x_row)})
        out.append({"task_id": row["name"], "completion": "    return {};\n"})
    return out
