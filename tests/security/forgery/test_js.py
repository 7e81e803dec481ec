"""JavaScript verdict forgery against the split (docs/integrity.md): samples that try to
pass without solving their task, or to change a neighbour's verdict, one per attack class
at least, each named after the attack its test stops. Every one is a wrong solution plus
a trick; where the trick needs something (the test's source, a neighbour's code) it
answers right only when it got it, so a pass would mean the trick worked.

Each runs batched and alone, with the policy filter on and off, through the real engine,
node and sandbox: none passes, none is an infra error, the honest neighbours in the same
units keep their verdicts (the correct pass, the wrong fail for their own reason), and
batched equals alone. With the filter off, the attacks that reach the channel must fail
for the channel's reason, not by luck.

Against the old in-process design (prompt, completion and tests in one node process,
judged by a token on stdin), with the filter off, seven of these passed:
function_constructor_reads_stdin (red team A2), override_globals_in_own_realm,
to_json_and_getters, and the four read_test_* (the tests sat in the sample's own file).

These samples are hostile: they only ever run through the harness's sandboxes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import vibes_eval
from tests.components import need
from tests.conftest import SANDBOX, batch_modes

# -- two tasks in HumanEval-X's format ---------------------------------------------------

CLOSE = {
    "task_id": "JavaScript/0",
    "prompt": "/* Whether two numbers of the list are closer than the threshold. */\n"
              "const closeEnough = (numbers, threshold) => {\n",
    "declaration": "\nconst closeEnough = (numbers, threshold) => {\n",
    "canonical_solution": "  for (let i = 0; i < numbers.length; i++)\n"
                          "    for (let j = i + 1; j < numbers.length; j++)\n"
                          "      if (Math.abs(numbers[i] - numbers[j]) < threshold) return true;\n"
                          "  return false;\n}\n",
    "test": "const testCloseEnough = () => {\n"
            "  console.assert(closeEnough([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) === true)\n"
            "  console.assert(closeEnough([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) === false)\n"
            "  console.assert(closeEnough([1.0, 2.0, 5.9, 4.0, 5.0], 0.95) === true)\n"
            "  console.assert(closeEnough([1.0, 2.0, 5.9, 4.0, 5.0], 0.8) === false)\n"
            "}\n\ntestCloseEnough()\n",
}  # fmt: skip
EVENS = {
    "task_id": "JavaScript/1",
    "prompt": "/* The even numbers of xs, in order. */\nconst evens = (xs) => {\n",
    "declaration": "\nconst evens = (xs) => {\n",
    "canonical_solution": "  return xs.filter((x) => x % 2 === 0);\n}\n",
    "test": "const testEvens = () => {\n"
            "  console.assert(JSON.stringify(evens([1, 2, 3, 4])) === JSON.stringify([2, 4]))\n"
            "  console.assert(JSON.stringify(evens([])) === JSON.stringify([]))\n"
            "  console.assert(JSON.stringify(evens([7, 8, 10])) === JSON.stringify([8, 10]))\n"
            "}\n\ntestEvens()\n",
}  # fmt: skip
CLOSE_ID, EVENS_ID = CLOSE["task_id"], EVENS["task_id"]
WRONG_CLOSE = "  return true;\n}\n"  # the second assertion wants false
WRONG_EVENS = "  return [];\n}\n"

# -- what the forgers share ----------------------------------------------------------------

# Answers read off the test's source, in call order; `true` once they run out (wrong).
# The key is built at run time, so the forger's own file never holds it.
FROM_TEST = r"""
const __fs = require('fs'), __path = require('path');
const __key = 'const testClose' + 'Enough = ';
const __answers = (t) => Array.from(t.matchAll(/closeEnough\((.*)\)\s*===\s*(true|false)/g), (m) => m[2] === 'true');
const __read = (p) => { try { const t = __fs.readFileSync(p, 'utf8'); return t.includes(__key) ? __answers(t) : null; } catch (e) { return null; } };
let __found, __n = 0;
const __answer = () => {
  if (__found === undefined) { try { __found = __search(); } catch (e) { __found = null; } }
  const a = __found ? __found[__n++] : undefined;
  return a === undefined ? true : a;
};
"""
ANSWER_FROM_TEST = "  return __answer();\n}\n" + FROM_TEST

# The right answer only with a neighbour's solution in reach.
FROM_NEIGHBOUR = r"""
const __fs = require('fs'), __path = require('path');
const __key = 'Math.abs(numbers[i] - ' + 'numbers[j])';
const __right = (xs, t) => xs.some((x, i) => xs.some((y, j) => i !== j && Math.abs(x - y) < t));
let __seen;
const __copy = (xs, t) => {
  if (__seen === undefined) { try { __seen = __search(); } catch (e) { __seen = false; } }
  return __seen ? __right(xs, t) : true;
};
"""

# Breadth first from every place a session could lie near, a bounded walk.
WALK = r"""
function __walk(roots, visit) {
  const queue = roots.filter(Boolean).map((p) => [p, 0]);
  const seen = new Set();
  let budget = 4000;
  while (queue.length && budget-- > 0) {
    const [p, depth] = queue.shift();
    let real, st;
    try { real = __fs.realpathSync(p); st = __fs.statSync(real); } catch (e) { continue; }
    if (seen.has(real)) continue;
    seen.add(real);
    if (st.isDirectory()) {
      if (depth > 5 || /^\/(usr|lib|lib64|bin|sbin|sys|etc|boot|snap|opt)(\/|$)/.test(real)) continue;
      try { for (const n of __fs.readdirSync(real)) queue.push([__path.join(real, n), depth + 1]); } catch (e) {}
    } else if (st.isFile() && st.size < (1 << 20) && real !== __path.resolve('main.js')) {
      const r = visit(real);
      if (r) return r;
    }
  }
  return null;
}
const __roots = ['..', '../..', '../../..', '/tmp', '/var/tmp', '/dev/shm', '/run', '/root', '/home',
                 process.env.HOME, process.env.TMPDIR, '/proc/self/cwd/..', '/'];
"""

READ_TEST_FILES = (
    ANSWER_FROM_TEST + WALK + "function __search() { return __walk(__roots, __read); }\n"
)

READ_TEST_BY_REQUIRE = (
    ANSWER_FROM_TEST
    + r"""
function __search() {
  for (const p of ['../test.js', './test.js', '../../test.js', '/proc/self/cwd/test.js',
                   '../vibes_test.js', '../in/test.js']) {
    try { const r = __read(require.resolve(p)); if (r) return r; } catch (e) {}
    try { require(p); } catch (e) {}
  }
  const mods = [require.main, module.parent, ...(module.children || []),
                ...Object.values(require.cache)].filter(Boolean);
  for (const m of mods) { const r = __read(m.filename); if (r) return r; }
  for (const p of module.paths || []) { const r = __read(__path.join(p, '..', 'test.js')); if (r) return r; }
  return null;
}
"""
)

READ_TEST_THROUGH_PROC = (
    ANSWER_FROM_TEST
    + r"""
function __search() {
  let pids = [];
  try { pids = __fs.readdirSync('/proc').filter((n) => /^[0-9]+$/.test(n)); } catch (e) {}
  pids.push('self', '1', String(process.ppid));
  for (const pid of pids) {
    for (const f of ['cwd/test.js', 'cwd/main.js', 'cwd/../test.js', 'root/tmp', 'cmdline', 'environ']) {
      const r = __read('/proc/' + pid + '/' + f);
      if (r) return r;
    }
    let fds = [];
    try { fds = __fs.readdirSync('/proc/' + pid + '/fd'); } catch (e) {}
    for (const fd of fds) {
      if (pid === 'self' || Number(pid) === process.pid) continue; // our own pipes: the channel
      const r = __read('/proc/' + pid + '/fd/' + fd);
      if (r) return r;
    }
  }
  return null;
}
"""
)

READ_TEST_FROM_ENV_AND_ARGV = (
    ANSWER_FROM_TEST
    + r"""
function __search() {
  const text = JSON.stringify([process.env, process.argv, process.execArgv, process.title]);
  if (text.includes(__key)) return __answers(text);
  for (const [k, v] of Object.entries(process.env)) {
    if (k === 'PATH') continue;
    for (const p of String(v).split(':')) {
      let names = [];
      try { names = __fs.readdirSync(p); } catch (e) {}
      for (const n of names) { const r = __read(__path.join(p, n)); if (r) return r; }
    }
  }
  return null;
}
"""
)

# Old design's red-team case A2: code built from a string reads the token on stdin.
A2 = (
    '  return true;\n};\nconst __f = (() => 0)["constructor"];\n'
    "__f(\"const p = process; const t = p.mainModule.require('fs').readFileSync(0, 'utf8'); "
    'p.stdout.write(String.fromCharCode(10) + t); p.exit(0);")();\n'
)

PRINT_DONE_MARKER = (
    WRONG_CLOSE
    + r"""
const __fs = require('fs');
for (const fd of [1, 2]) __fs.writeSync(fd, '\nvibes-tests: done\n');
console.log('vibes-tests: done');
console.error('vibes-tests: done');
process.exit(0);
"""
)

FAKE_FRAMES = (
    WRONG_CLOSE
    + r"""
let __s = '';
for (let i = 0; i < 64; i++) __s += '\n\x02V ret true\n\x02V ret {"$t":"undef"}\n';
require('fs').writeSync(1, __s + '\nvibes-tests: done\n');
require('fs').writeSync(2, '\nvibes-tests: done\n');
process.exit(0);
"""
)

EXIT_ON_FIRST_CALL = "  process.exit(0);\n}\n"

EXIT_HOOKS = r"""  throw new Error('x\nvibes-tests: done\n');
}
const __fs = require('fs');
process.on('exit', () => {
  __fs.writeSync(1, '\n\x02V ret false\n');
  __fs.writeSync(2, '\nvibes-tests: done\n');
  process.exitCode = 0;
});
process.on('uncaughtException', () => process.exit(0));
process.on('unhandledRejection', () => process.exit(0));
"""

OVERRIDE_GLOBALS = (
    WRONG_EVENS
    + r"""
Object.prototype.toJSON = function () { return [2, 4]; };
Array.prototype.toJSON = function () { return [2, 4]; };
Object.defineProperty(Object.prototype, '$t', { get() { return 'undef'; }, configurable: true });
Array.isArray = () => false;
JSON.stringify = () => '[2,4]';
JSON.parse = () => [[]];
console.assert = () => {};
globalThis.console = { log() {}, error() {}, assert() {} };
"""
)

# Frames of the sample's own, one per call, then it waits: what the test decodes.
RAW_FRAMES = r"""
{
  const __fs = require('fs');
  const __frames = [%s];
  __fs.writeSync(1, '\n' + __frames.map((f) => '\x02V ' + f + '\n').join(''));
  const __b = Buffer.alloc(1 << 16);
  for (;;) { try { if (__fs.readSync(0, __b, 0, __b.length, null) === 0) break; } catch (e) { break; } }
  process.exit(0);
}
"""


def raw(*frames: str) -> str:
    return WRONG_EVENS + RAW_FRAMES % ", ".join(json.dumps(f) for f in frames)


HUGE_ANSWER = "  return 'x'.repeat(70 * 1024 * 1024);\n}\n"
ENDLESS_LINE = (
    WRONG_EVENS
    + r"""
{
  const __fs = require('fs');
  const __junk = Buffer.alloc(1 << 20, 0x41);
  for (let i = 0; i < 80; i++) __fs.writeSync(1, __junk);
}
"""
)
DEEP = 200000
DEEP_NESTING = raw("ret " + "[" * DEEP + "]" * DEEP, "ret [2,4]", "ret []")
PROTO_KEYS = raw(
    'ret {"$t":"obj","v":[["__proto__",[2,4]],["length",2],["0",2],["1",4]]}',
    'ret {"$t":"obj","v":[["__proto__",{"$t":"obj","v":[["toJSON",[]]]}],["toJSON","[]"]]}',
    'ret {"$t":"obj","v":[["constructor",{"$t":"obj","v":[["prototype",[]]]}]]}',
)
MALFORMED_FRAMES = raw(
    'ret {"$t":"nope","v":1}',
    "ret [2, 4",
    'ret {"$t":"obj","v":[[1,2]]}',
)
UNKNOWN_FRAMES = raw("done []", "ret2 [8,10]", 'raise {"not": "a string"}')
TO_JSON_AND_GETTERS = r"""  return { toJSON() { return xs.filter((x) => x % 2 === 0); }, get 0() { return 2; } };
}
"""
CYCLIC = "  const a = [2, 4];\n  a.push(a);\n  return a;\n}\n"
PROXY = r"""  return new Proxy([], {
    get: (t, k) => (k === 'length' ? 2 : k === 'toJSON' ? () => [2, 4] : 2),
    ownKeys: () => ['0', '1', 'length'],
    getOwnPropertyDescriptor: (t, k) => (k === 'length' ? Reflect.getOwnPropertyDescriptor(t, k)
      : { value: 2, enumerable: true, configurable: true }),
  });
}
"""
DEEP_VALUE = "  let a = [];\n  for (let i = 0; i < 100000; i++) a = [a];\n  return a;\n}\n"

COPY_A_NEIGHBOUR = (
    "  return __copy(numbers, threshold);\n}\n"
    + FROM_NEIGHBOUR
    + WALK
    + r"""
function __search() {
  const hit = (p) => { try { return __fs.readFileSync(p, 'utf8').includes(__key) || null; } catch (e) { return null; } };
  if (__walk(__roots, hit)) return true;
  let pids = [];
  try { pids = __fs.readdirSync('/proc').filter((n) => /^[0-9]+$/.test(n)); } catch (e) {}
  return pids.some((p) => hit('/proc/' + p + '/cwd/main.js') || hit('/proc/' + p + '/cwd/in/main.js'));
}
"""
)

# Plants code where a later test program or neighbour might load it, then answers wrong.
PLANT_FOR_NEIGHBOURS = (
    WRONG_CLOSE
    + r"""
{
  const __fs = require('fs'), __path = require('path');
  const evil = "module.exports = new Proxy(function () {}, { get: () => () => true, apply: () => true });\n"
    + "try { require('fs').writeSync(2, '\\nvibes-tests: done\\n'); } catch (e) {}\n";
  const dirs = ['.', '..', '../..', '/tmp', '/var/tmp', '/dev/shm', process.env.HOME, process.env.TMPDIR];
  for (const d of dirs.filter(Boolean)) {
    for (const name of ['vibes_wire.js', 'vibes_test.js', 'vibes_server.js', 'test.js', 'main.js',
                        'node_modules/assert/index.js', 'node_modules/js-md5/index.js',
                        'in/vibes_wire.js', 'in/test.js']) {
      try {
        const p = __path.join(d, name);
        __fs.mkdirSync(__path.dirname(p), { recursive: true });
        __fs.writeFileSync(p, evil);
      } catch (e) {}
    }
  }
}
"""
)

# name -> (task, completion); with the filter off, the reason it must fail for (None: any)
FORGERS: dict[str, tuple[str, str, str | None]] = {
    # planted first: the neighbours after it in the unit must not notice
    "plant_code_for_neighbours": (CLOSE_ID, PLANT_FOR_NEIGHBOURS, "failed"),
    # -- reading the test or its expected values
    "read_test_files": (CLOSE_ID, READ_TEST_FILES, "failed"),
    "read_test_by_require_and_module_cache": (CLOSE_ID, READ_TEST_BY_REQUIRE, "failed"),
    "read_test_through_proc": (CLOSE_ID, READ_TEST_THROUGH_PROC, "failed"),
    "read_test_from_env_and_argv": (CLOSE_ID, READ_TEST_FROM_ENV_AND_ARGV, "failed"),
    "function_constructor_reads_stdin": (CLOSE_ID, A2, None),
    # -- forging the result
    "print_done_marker_and_exit": (CLOSE_ID, PRINT_DONE_MARKER, "failed"),
    "fake_frames_then_exit": (CLOSE_ID, FAKE_FRAMES, "failed"),
    "exit_on_first_call": (CLOSE_ID, EXIT_ON_FIRST_CALL, "failed"),
    "exit_and_exception_hooks": (CLOSE_ID, EXIT_HOOKS, "failed"),
    "override_globals_in_own_realm": (EVENS_ID, OVERRIDE_GLOBALS, "failed"),
    # -- answers crafted to break the decoder
    "huge_answer": (EVENS_ID, HUGE_ANSWER, None),  # its own encoding may take its time
    "endless_line": (EVENS_ID, ENDLESS_LINE, "failed"),
    "deep_nesting_frame": (EVENS_ID, DEEP_NESTING, "failed"),
    "deep_nesting_value": (EVENS_ID, DEEP_VALUE, "failed"),
    "proto_and_constructor_keys": (EVENS_ID, PROTO_KEYS, "failed"),
    "malformed_frames": (EVENS_ID, MALFORMED_FRAMES, "failed"),
    "unknown_frames": (EVENS_ID, UNKNOWN_FRAMES, "failed"),
    "to_json_and_getters": (EVENS_ID, TO_JSON_AND_GETTERS, "failed"),
    "cyclic_value": (EVENS_ID, CYCLIC, "failed"),
    "proxy_value": (EVENS_ID, PROXY, "failed"),
    # -- reaching a neighbour
    "copy_a_neighbours_solution": (CLOSE_ID, COPY_A_NEIGHBOUR, "failed"),
}
# Whether 70 MB cross the pipe within the time limit depends on the machine's load: a
# timeout or the oversized frame, never a pass.
RACES = {"huge_answer"}
# With the filter off, the test's own words for why (the channel's reason, not luck).
CHANNEL = "the candidate's answer could not be read"
DETAIL_OFF = {
    "print_done_marker_and_exit": CHANNEL,
    "fake_frames_then_exit": "assertion failed",
    "exit_on_first_call": CHANNEL,
    "endless_line": CHANNEL,
    "deep_nesting_frame": CHANNEL,
    "malformed_frames": CHANNEL,
    "unknown_frames": CHANNEL,
    "deep_nesting_value": "the candidate raised",
    "cyclic_value": "the candidate raised: WireError: a cyclic value",
}
NEIGHBOURS = [
    ("correct_close", CLOSE_ID, CLOSE["canonical_solution"], True),
    ("wrong_close", CLOSE_ID, WRONG_CLOSE, False),
    ("correct_evens", EVENS_ID, EVENS["canonical_solution"], True),
    ("wrong_evens", EVENS_ID, WRONG_EVENS, False),
]


def evaluate(tmp: Path, names: list[str], samples: list[dict], *, batch: bool, policy: bool):
    problems = tmp / "problems.jsonl"
    problems.write_text("".join(json.dumps(r) + "\n" for r in (CLOSE, EVENS)))
    config = {"problems": str(problems), "batch": batch, "enforce_policy": policy,
              "limits": {"timeout_s": 5.0}}  # fmt: skip
    out = vibes_eval.evaluate(
        "humaneval-js", samples, sandbox=SANDBOX, ks=[1], config=config, workers=1,
        use_cache=False,
    )  # fmt: skip
    return dict(zip(names, (out.results[s.key] for s in out.prepared.samples), strict=True))


@pytest.mark.slow
@pytest.mark.parametrize("policy", [True, False], ids=["policy", "no-policy"])
def test_no_javascript_forgery_passes(tmp_path: Path, policy: bool) -> None:
    need("toolchains", None if shutil.which("node") else "node is not installed")
    rows = [(name, tid, code) for name, (tid, code, _) in FORGERS.items()]
    rows += [(name, tid, code) for name, tid, code, _ in NEIGHBOURS]
    names = [name for name, _, _ in rows]
    samples = [{"task_id": tid, "completion": code} for _, tid, code in rows]
    verdicts = {}
    for batch in batch_modes(policy):
        results = evaluate(tmp_path, names, samples, batch=batch, policy=policy)
        mode = "batch" if batch else "alone"
        got = {
            n: (r.passed, r.reason, r.detail, (r.details or {}).get("trust"))
            for n, r in results.items()
        }
        for name in FORGERS:
            assert not got[name][0], f"{mode}: {name} passed"
            assert got[name][1] != "infra_error", f"{mode}: {name}: {got[name]}"
            assert got[name][3] == "split" or got[name][1] == "blocked_policy", (name, got[name])
        for name, _, _, right in NEIGHBOURS:
            want = "passed" if right else "failed"
            assert got[name][:2] == (right, want), f"{mode}: {name}: {got[name]}"
        if not policy:
            for name, (_, _, reason) in FORGERS.items():
                assert reason is None or got[name][1] == reason, f"{mode}: {name}: {got[name]}"
            for name, words in DETAIL_OFF.items():
                assert words in got[name][2], f"{mode}: {name}: {got[name]}"
        verdicts[mode] = got
    alone = verdicts.get("alone", verdicts["batch"])  # batched only: filter on, default tier
    differ = {n: (v, alone[n]) for n, v in verdicts["batch"].items()
              if v != alone[n] and n not in RACES}  # fmt: skip
    assert not differ, differ
