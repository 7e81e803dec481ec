"""The JavaScript wire (``languages/wire/js/vibes_wire.js``) and the trusted test runtime,
run by real node: values survive the trip with what JSON lacks (undefined, holes, NaN,
-0, BigInt, Map, Set, Date, a `__proto__` key), hostile data never decodes, frames are
bounded; and through the engine, what the test program itself guarantees (a caught
assertion still fails, prints on either side never reach the channel) and the reasons and
details of each way a sample fails."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import vibes_eval
from tests.conftest import SANDBOX
from tests.multilang import langs as L
from vibes_eval.benchmarks.multilang.languages import policy, split_js

pytestmark = pytest.mark.needs_tool("node")
WIRE = str(split_js.WIRE_DIR / "vibes_wire.js")


def node(script: str, stdin: bytes = b"") -> str:
    proc = subprocess.run(
        ["node", "-e", f"const wire = require({json.dumps(WIRE)});\n{script}"],
        input=stdin, capture_output=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode()


ROUND_TRIP = r"""
const util = require('util');
const same = (a, b) => (typeof b === 'object' && b !== null ? util.isDeepStrictEqual(a, b)
  && JSON.stringify(Object.keys(a)) === JSON.stringify(Object.keys(b)) : Object.is(a, b));
const protoKey = JSON.parse('{"__proto__": [1], "constructor": 2}');
// [value, what arrives]: own enumerable data of other objects, a boxed number's number
const pairs = [
  undefined, null, true, 0, -0, 1.5, NaN, Infinity, -Infinity, 2n ** 70n, '', 'a\n"b"\u2028\ud800',
  [1, , 3], [undefined, null], { b: 1, a: [2, { c: undefined }], 1: 'one' }, protoKey,
  new Map([[1, 'a'], ['1', new Set([1, '1'])]]), new Date(0),
].map((v) => [v, v]);
pairs.push([Object.assign(Object.create({ inherited: 1 }), { own: 2 }), { own: 2 }], [new Number(3), 3]);
const trip = (v) => wire.decode(wire.parse(JSON.stringify(wire.encode(v))));
const back = trip(protoKey);
console.log(JSON.stringify({ out: pairs.map(([v, want]) => same(trip(v), want)),
  plainProto: Object.getPrototypeOf(back) === Object.prototype,
  ownProto: Object.keys(back).includes('__proto__'), hole: !(1 in wire.decode([1, { $t: 'hole' }, 3])) }));
"""


def test_values_survive_the_wire() -> None:
    got = json.loads(node(ROUND_TRIP))
    assert got["out"] == [True] * len(got["out"]), got["out"]
    assert got["plainProto"] and got["ownProto"] and got["hole"]


HOSTILE = [
    '{"$t": "nope", "v": 1}',
    '{"$t": "undef", "extra": 1}',
    '{"$t": "num", "v": "1e999"}',
    '{"$t": "num"}',
    '{"$t": "big", "v": "1n"}',
    '{"$t": "obj", "v": [["a", 1], ["a", 2]]}',
    '{"$t": "obj", "v": [[1, 2]]}',
    '{"$t": "obj", "v": [["a"]]}',
    '{"$t": "map", "v": {"a": 1}}',
    '{"$t": "set", "v": 1}',
    '{"$t": "date", "v": "now"}',
    '{"$t": "hole"}',
    '{"a": 1}',
    '{"$t": {"$t": "undef"}, "v": 1}',
    "[" * 1002 + "]" * 1002,
]


def test_hostile_data_never_decodes() -> None:
    script = (
        f"const cases = {json.dumps(HOSTILE)};\n"
        "console.log(JSON.stringify(cases.map((c) => { try { wire.decode(JSON.parse(c)); "
        "return 'decoded'; } catch (e) { return e instanceof wire.WireError ? 'refused' "
        ": 'threw ' + e; } })));\nconsole.log(JSON.stringify(({}).polluted === undefined));"
    )
    first, second = node(script).splitlines()
    assert json.loads(first) == ["refused"] * len(HOSTILE)
    assert json.loads(second) is True


FRAMES = r"""
const c = new wire.Channel(0, 1);
const got = [];
for (;;) {
  try { got.push(c.receive()); } catch (e) { got.push(e.message); break; }
}
console.log(JSON.stringify(got));
"""


def test_frames_skip_stray_lines_and_end_with_the_input() -> None:
    stdin = b'stray \x02V ret 9\n\n\x02V ret [1]\nabc\x02V raise "x"\n\x02V raise "boom"\npartial'
    got = json.loads(node(FRAMES, stdin).splitlines()[-1])
    assert got == [["ret", "[1]"], ["raise", '"boom"'], "the input ended"]


def test_a_frame_over_the_bound_is_refused() -> None:
    stdin = b"\x02V ret " + b"1" * (64 * 1024 * 1024) + b"\n"
    got = json.loads(node(FRAMES, stdin).splitlines()[-1])
    assert got == ["a frame over 67108864 bytes"]


# -- what the test program guarantees, through the engine -------------------------------

CAUGHT = dict(L.JS, test="try { console.assert(add(1, 2) === 4) } catch (e) {}\n")
NOISY = dict(
    L.JS,
    task_id="JavaScript/1",
    test="console.log('\\u0002V call [1, 2]'); process.stdout.write('half a line');\n"
    "console.assert(add(1, 2) === 3)\n",
)
CHATTY_ADD = (
    "  process.stdout.write('no newline'); console.log('\\u0002V ret 7');\n  return a + b;\n}\n"
)


def evaluate(tmp: Path, rows: list[dict], samples: list[dict], **config):
    path = tmp / "problems.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = vibes_eval.evaluate(
        "humaneval-js", samples, sandbox=SANDBOX, ks=[1], use_cache=False,
        config={"problems": str(path), **config},
    )  # fmt: skip
    return [out.results[s.key] for s in out.prepared.samples]


def test_a_caught_assertion_still_fails_and_prints_never_reach_the_channel(tmp_path: Path) -> None:
    good = L.JS["canonical_solution"]
    samples = [
        {"task_id": "JavaScript/0", "completion": good},
        {"task_id": "JavaScript/1", "completion": good},
        {"task_id": "JavaScript/1", "completion": CHATTY_ADD},
    ]
    res = evaluate(tmp_path, [CAUGHT, NOISY], samples, enforce_policy=False)
    assert (res[0].passed, res[0].reason) == (False, "failed"), res[0].detail
    assert (
        "assertion failed" in res[0].detail and "console.assert(add(1, 2) === 4)" in res[0].detail
    )
    assert [r.passed for r in res[1:]] == [True, True], [r.detail for r in res[1:]]
    assert all(r.details == {"trust": "split"} for r in res)


REASONS = {
    "  return a +;\n}\n": ("compile_error", "SyntaxError: Unexpected token ';'"),
    "  throw new TypeError('nope');\n}\n": ("failed", "the candidate raised: TypeError: nope"),
    "  const f = (n) => f(n + 1) + 1;\n  return f(0);\n}\n": ("crash", "killed by signal"),
    "  for (;;) {}\n}\n": ("timeout", "timed out"),
    "  return a - b;\n}\n": ("failed", "assertion failed: console.assert(add(1, 2) === 3)"),
}


def test_verdicts_keep_their_reasons_and_details(tmp_path: Path) -> None:
    """What each end says: node --check's error, what the candidate raised, its crash, its
    time, the test's failing statement; for node:assert, actual and expected."""
    samples = [{"task_id": L.JS["task_id"], "completion": c} for c in REASONS]
    res = evaluate(tmp_path, [L.JS], samples, limits={"timeout_s": 2})
    for (reason, words), r in zip(REASONS.values(), res, strict=True):
        assert (r.reason, words in r.detail) == (reason, True), (reason, r.detail)
    row, _, bad = L.MULTIPLE["js"]
    (res,) = evaluate(tmp_path, [row], [{"name": row["name"], "completion": bad}])
    assert res.reason == "failed" and res.details == {"trust": "split"}
    assert (
        res.detail == "assertion failed: assert.deepEqual(candidate(0, 1),1) (got -1, expected 1)"
    )


def test_the_filter_allows_js_md5_and_nothing_with_it() -> None:
    assert policy.check("js", "  var md5 = require('js-md5')\n  return md5(text)\n}\n") is None
    assert policy.check("js", '  return require ( "js-md5" )(text)\n}\n') is None
    for code in ("require('js-md5'); require('fs')", "require('js-md5x')",
                 "require('js-md5').constructor", "require(`js-md5`)"):  # fmt: skip
        assert policy.check("js", code) is not None, code
