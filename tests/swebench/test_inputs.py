"""Loading instances and predictions, eval scripts, log parsing and the grading rules:
no Docker needed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.references import need_module
from tests.swebench.conftest import LITE_ROWS, maker, needs_lite
from vibes_eval.benchmarks.swebench import scoring
from vibes_eval.benchmarks.swebench.env import specs
from vibes_eval.benchmarks.swebench.run import split_script
from vibes_eval.benchmarks.swebench.samples import load_predictions, patch_is_none
from vibes_eval.benchmarks.swebench.tasks import load as load_instances
from vibes_eval.core.errors import UserError


@needs_lite
def test_real_rows_load_and_filter() -> None:
    rows = load_instances(str(LITE_ROWS))
    assert len(rows) == 5
    inst = rows["pytest-dev__pytest-11143"]
    assert inst.repo == "pytest-dev/pytest" and len(inst.PASS_TO_PASS) == 114
    assert inst.FAIL_TO_PASS == [
        "testing/test_assertrewrite.py::TestIssue11140::test_constant_not_picked_as_module_docstring"
    ]
    assert list(load_instances(str(LITE_ROWS), instance_filter="^django")) == [
        "django__django-16255", "django__django-15781"]  # fmt: skip
    assert list(load_instances(str(LITE_ROWS), instance_ids=["sympy__sympy-13031"])) == [
        "sympy__sympy-13031"
    ]
    with pytest.raises(UserError, match="not in"):
        load_instances(str(LITE_ROWS), instance_ids=["nope__nope-1"])


def test_test_lists_as_json_strings_or_lists(tmp_path: Path) -> None:
    row = {"instance_id": "a__b-1", "repo": "a/b", "base_commit": "0" * 40, "test_patch": "x",
           "FAIL_TO_PASS": '["t1"]', "PASS_TO_PASS": ["t2"], "version": 0.21}  # fmt: skip
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(row) + "\n")
    inst = load_instances(str(path))["a__b-1"]
    assert inst.FAIL_TO_PASS == ["t1"] and inst.PASS_TO_PASS == ["t2"] and inst.version == "0.21"
    for bad, field in (
        ({**row, "FAIL_TO_PASS": "[t1"}, "FAIL_TO_PASS"),
        ({**row, "repo": ""}, "repo"),
    ):
        path.write_text(json.dumps(bad) + "\n")
        with pytest.raises(UserError, match=rf"d.jsonl:1 field '{field}'"):
            load_instances(str(path))


def test_named_dataset_offline_says_what_to_fetch(monkeypatch: pytest.MonkeyPatch) -> None:
    need_module("datasets", "datasets (the swebench extra)")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # Both libraries read the variables when first imported; an earlier test may have
    # imported them, and then the loader waits ~25 s on retries to an unreachable Hub.
    import datasets.config
    import huggingface_hub.constants

    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True, raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(UserError, match=r"SWE-bench/SWE-bench_Lite.*to_json") as err:
        load_instances("lite")
    assert "\n" not in str(err.value)


def test_predictions_in_every_official_shape(tmp_path: Path, toy: dict[str, Path]) -> None:
    tasks = load_instances(str(toy["instances"]))
    rows = [json.loads(line) for line in toy["gold"].read_text().splitlines()]
    shapes = {
        "p.jsonl": "".join(json.dumps(r) + "\n" for r in rows),
        "p.json": json.dumps(rows),
        "k.json": json.dumps({r["instance_id"]: {k: v for k, v in r.items() if k != "instance_id"}
                              for r in rows}),
    }  # fmt: skip
    for name, text in shapes.items():
        (tmp_path / name).write_text(text)
        samples = load_predictions(tmp_path / name, tasks, tasks)
        assert [s.task_id for s in samples] == list(tasks)
        assert samples[0].completion == rows[0]["model_patch"]
    empty = load_predictions(toy["empty"], tasks, tasks)
    assert [(s.completion, patch_is_none(s)) for s in empty] == [("", False), ("", True)]


def test_bad_predictions_are_one_line_errors(tmp_path: Path, toy: dict[str, Path]) -> None:
    tasks = load_instances(str(toy["instances"]))
    path = tmp_path / "p.jsonl"
    cases = {
        '{"instance_id": "x__y-9", "model_patch": ""}': "unknown instance id",
        '{"instance_id": "vibes-toy__calc-1"}': "field 'model_patch': missing",
        '{"instance_id": "vibes-toy__calc-1", "model_patch": 3}': "expected a string or null",
        "[1]": "expected a JSON object",
    }
    for line, message in cases.items():
        path.write_text('{"instance_id": "vibes-toy__calc-2", "model_patch": ""}\n' + line + "\n")
        with pytest.raises(UserError, match=message) as err:
            load_predictions(path, tasks, tasks)
        assert "p.jsonl:2" in str(err.value)


def test_toy_repository_is_reproducible(tmp_path: Path, toy: dict[str, Path]) -> None:
    again = maker.make(tmp_path / "again")
    assert again["instances"].read_text() == toy["instances"].read_text()
    assert again["gold"].read_text() == toy["gold"].read_text()


def test_toy_instances_cover_the_cases(toy: dict[str, Path]) -> None:
    rows = {r.task_id: r for r in load_instances(str(toy["instances"])).values()}
    one, two = rows["vibes-toy__calc-1"], rows["vibes-toy__calc-2"]
    assert "tests/test_text.py::test_blank_only[]" in one.FAIL_TO_PASS  # an empty parameter id
    assert "tests/test_text.py::test_idempotent[]" in one.PASS_TO_PASS
    assert "tests/test_text.py::test_normalize_spaces[" in one.FAIL_TO_PASS  # cut at a blank
    assert "new file mode" in two.test_patch and specs.modified_files(two.test_patch) == []
    assert two.FAIL_TO_PASS == ["tests/test_stats.py::test_mean_empty",
                                "tests/test_stats.py::test_median_even"]  # fmt: skip


# -- eval scripts ----------------------------------------------------------------------------


@needs_lite
def test_eval_scripts_of_real_rows() -> None:
    rows = load_instances(str(LITE_ROWS))
    django = rows["django__django-16255"]
    spec = {"install": "python -m pip install -e .",
            "test_cmd": "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1"}  # fmt: skip
    script = specs.eval_script(django, spec)
    assert (
        "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 "
        "sitemaps_tests.test_http sitemaps_tests.urls.http" in script
    )
    assert (
        f"git checkout {django.base_commit} tests/sitemaps_tests/test_http.py "
        "tests/sitemaps_tests/urls/http.py" in script
    )
    steps = split_script(script)
    assert steps.split and "runtests.py" in steps.test and "git apply" in steps.pre
    assert "git apply" not in steps.test and specs.END in steps.post


@needs_lite
def test_eval_scripts_match_the_official_generator() -> None:
    """swebench 4.1's ``make_eval_script_list`` (when the extra is installed) gives the same
    script for every real row."""
    need_module("swebench.harness.test_spec.python", "swebench 4.1.0 (the swebench extra)")
    from swebench.harness.constants import MAP_REPO_VERSION_TO_SPECS
    from swebench.harness.test_spec.python import make_eval_script_list_py as make

    for inst in load_instances(str(LITE_ROWS)).values():
        spec = MAP_REPO_VERSION_TO_SPECS[inst.repo][inst.version]
        row = inst.model_dump() | {"repo": inst.repo, "version": inst.version}
        theirs = make(row, spec, "testbed", "/testbed", inst.base_commit, inst.test_patch)
        assert specs.eval_script_lines(inst, spec) == theirs, inst.task_id


# -- parsing and grading ------------------------------------------------------------------------

LOG = """\
PASSED tests/t.py::test_a
PASSED tests/t.py::test_p[ x-1]
FAILED tests/t.py::test_b - AssertionError: 1 != 2
XFAIL tests/t.py::test_x - reason
SKIPPED [1] tests/t.py:9: no network
SKIPPED tests/t.py::test_s
ERROR tests/t.py::test_e - fixture
"""


def test_pytest_parser_reads_as_the_official_one() -> None:
    assert specs.parse_pytest(LOG) == {
        "tests/t.py::test_a": "PASSED", "tests/t.py::test_p[": "PASSED",
        "tests/t.py::test_b": "FAILED", "tests/t.py::test_x": "XFAIL",
        "tests/t.py::test_s": "SKIPPED", "tests/t.py::test_e": "ERROR",
    }  # fmt: skip


def test_grading_rules() -> None:
    sm = specs.parse_pytest(LOG)
    report = scoring.tests_report(
        sm,
        ["tests/t.py::test_a", "tests/t.py::test_x", "tests/t.py::test_p[", "tests/t.py::test_s"],
        ["tests/t.py::test_s", "tests/t.py::test_missing"],
        None,
    )
    # XFAIL passes; a skipped FAIL_TO_PASS fails; a skipped PASS_TO_PASS is kept; missing fails
    assert report["FAIL_TO_PASS"]["failure"] == ["tests/t.py::test_s"]
    assert report["PASS_TO_PASS"] == {"success": ["tests/t.py::test_s"],
                                      "failure": ["tests/t.py::test_missing"]}  # fmt: skip
    assert scoring.resolution(report) == scoring.NO
    ok = scoring.tests_report(
        sm, ["tests/t.py::test_a", "tests/t.py::test_b"], ["tests/t.py::test_x"], None
    )
    assert scoring.resolution(ok) == scoring.PARTIAL
    assert scoring.resolve_id("tests/t.py::test_p[ x", {"tests/t.py::test_p[ x-1]": "PASSED"})


@needs_lite
def test_real_test_ids_grade_against_a_made_up_log() -> None:
    inst = load_instances(str(LITE_ROWS))["pytest-dev__pytest-11143"]
    log = "".join(f"PASSED {t}\n" for t in inst.PASS_TO_PASS + inst.FAIL_TO_PASS)
    report = scoring.tests_report(
        specs.parse_pytest(log), inst.FAIL_TO_PASS, inst.PASS_TO_PASS, None
    )
    assert scoring.resolution(report) == scoring.FULL
    # ids cut at a blank ("test_get_assertion_exprs[assert") match the full ones
    assert len(report["PASS_TO_PASS"]["success"]) == 114


def test_specs_file_errors(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("a/b: [1]\n")
    with pytest.raises(UserError, match="expected"):
        specs.read_specs(str(path))
    with pytest.raises(UserError, match="cannot read"):
        specs.read_specs(str(tmp_path / "none.yaml"))


def test_bundle_mirror_is_found(tmp_path: Path, toy: dict[str, Path]) -> None:
    from vibes_eval.benchmarks.swebench.env.images import mirror_source

    src = toy["repos"] / maker.MIRROR_NAME
    assert mirror_source(str(toy["repos"]), maker.REPO) == src
    if shutil.which("git"):
        subprocess.run(["git", "-C", str(src), "bundle", "create", "-q",
                        str(tmp_path / f"{maker.MIRROR_NAME}.bundle"), "--all"], check=True)  # fmt: skip
        assert mirror_source(str(tmp_path), maker.REPO).suffix == ".bundle"


def test_malformed_spec_is_a_user_error_at_load(tmp_path: Path) -> None:
    """A spec field of the wrong shape is refused when the file is read, naming file, line
    and field, instead of a TypeError when the eval script is made."""
    path = tmp_path / "s.yaml"
    path.write_text(
        "vibes-toy/calc:\n  '0.1':\n    install: pip install -e .\n    test_cmd: [pytest, -rA]\n"
    )
    with pytest.raises(UserError, match=r"s\.yaml:4 field 'vibes-toy/calc\.0\.1\.test_cmd'") as err:
        specs.read_specs(str(path))
    assert "expected a string, got list" in str(err.value) and "\n" not in str(err.value)
    path.write_text("a/b:\n  '1':\n    test_cmd: pytest\n    eval_commands: export X=1\n")
    with pytest.raises(UserError, match=r"eval_commands.*a list of strings"):
        specs.read_specs(str(path))
    path.write_text("a/b:\n  '1':\n    install: pip install .\n")
    with pytest.raises(UserError, match="test_cmd': missing"):
        specs.read_specs(str(path))
    path.write_text("a/b:\n  '1':\n    test_cmd: pytest\n    vibes_services: [httpbn]\n")
    with pytest.raises(UserError, match=r"vibes_services.*unknown service 'httpbn'"):
        specs.read_specs(str(path))


def test_requests_rows_get_a_local_httpbin_and_say_so() -> None:
    """Older psf/requests tests call httpbin.org (HTTPBIN_URL); the test session has loopback
    only, so the environment carries a pinned httpbin, started on loopback in the test step
    and named in each instance's notes. A user's spec may turn it off (``[]``)."""
    from vibes_eval.benchmarks.swebench.env import images, services
    from vibes_eval.benchmarks.swebench.tasks import SweInstance

    def inst(repo: str) -> SweInstance:
        return SweInstance(task_id="x", prompt="", repo=repo, version="2.3", base_commit="0" * 40,
                           test_patch="", FAIL_TO_PASS=[], PASS_TO_PASS=[])  # fmt: skip

    user = {"psf/requests": {"2.3": {"python": "3.9", "test_cmd": "pytest -rA"}},
            "o/r": {"2.3": {"python": "3.9", "test_cmd": "pytest -rA"}}}  # fmt: skip
    spec = specs.spec_for(inst("psf/requests"), user)
    assert spec is not None and services.services(spec) == [services.HTTPBIN]
    assert "/opt/vibes-services/httpbin" in images.env_script(spec)
    assert images.env_recipe(spec)["services"][0][0] == "httpbin"  # in the image's hash
    assert services.service_env(spec) == {"HTTPBIN_URL": "http://127.0.0.1:8765/"}
    assert any("httpbin runs on loopback" in n for n in images.env_notes(spec))
    other = specs.spec_for(inst("o/r"), user)
    assert other is not None and not services.services(other)
    assert not images.env_recipe(other)["services"]
    off = {"psf/requests": {"2.3": {"test_cmd": "pytest", "vibes_services": []}}}
    assert not services.services(specs.spec_for(inst("psf/requests"), off))


def test_sphinx_environments_keep_the_docutils_of_the_official_images() -> None:
    """docutils 0.22 dropped docutils.utils.roman, which Sphinx < 7 imports: sphinx specs get
    a constraint every pip install of the image obeys (/etc/pip.conf), in the image hash
    and the notes; a spec's ``vibes_pins`` replaces it."""
    from vibes_eval.benchmarks.swebench.env import images, services
    from vibes_eval.benchmarks.swebench.tasks import SweInstance

    inst = SweInstance(task_id="x", prompt="", repo="sphinx-doc/sphinx", version="3.5",
                       base_commit="0" * 40, test_patch="", FAIL_TO_PASS=[],
                       PASS_TO_PASS=[])  # fmt: skip
    user = {"sphinx-doc/sphinx": {"3.5": {"python": "3.9", "test_cmd": "tox"}}}
    spec = specs.spec_for(inst, user)
    assert spec is not None and services.pins(spec) == ["docutils<0.22"]
    script = images.env_script(spec)
    assert "constraint = /etc/vibes/pins.txt" in script and "docutils<0.22" in script
    assert images.env_recipe(spec)["pins"] == ["docutils<0.22"]
    assert any("docutils<0.22" in n for n in images.env_notes(spec))
    mine = {"sphinx-doc/sphinx": {"3.5": {"test_cmd": "tox", "vibes_pins": ["docutils<0.21"]}}}
    assert services.pins(specs.spec_for(inst, mine)) == ["docutils<0.21"]


def test_symlinked_mirror_entry_is_sent_as_the_repository(
    tmp_path: Path, toy: dict[str, Path]
) -> None:
    """A ``--repos`` entry that is a symlink: the build gets the repository, not the link
    (which left the build without a repository: an infra_error)."""
    import io
    import tarfile

    from vibes_eval.benchmarks.swebench.env.images import ImageBuilder

    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(toy["repos"] / maker.MIRROR_NAME),
                    str(bare)], check=True)  # fmt: skip
    bundle = tmp_path / "calc.bundle"
    subprocess.run(["git", "-C", str(bare), "bundle", "create", "-q", str(bundle), "--all"],
                   check=True)  # fmt: skip
    inst = load_instances(str(toy["instances"]))["vibes-toy__calc-1"]
    for target, name in ((bare, maker.MIRROR_NAME), (bundle, f"{maker.MIRROR_NAME}.bundle")):
        links = tmp_path / f"links-{target.suffix[1:]}"
        links.mkdir()
        (links / name).symlink_to(target)
        files, source = ImageBuilder(str(links), None, print)._repo_files(inst)
        with tarfile.open(fileobj=io.BytesIO(files)) as tar:
            top = tar.getmember(source.lstrip("/"))
            assert not top.issym(), target
            assert top.isdir() if target == bare else top.isfile()


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout  # fmt: skip


def test_instance_build_keeps_tags_older_than_the_base(
    tmp_path: Path, toy: dict[str, Path]
) -> None:
    """setuptools_scm versions a checkout from its tags: those at or before the base commit
    stay, later ones and every other ref go."""
    from vibes_eval.benchmarks.swebench.env.images import PRUNE_REFS

    first = load_instances(str(toy["instances"]))["vibes-toy__calc-1"].base_commit
    second = load_instances(str(toy["instances"]))["vibes-toy__calc-2"].base_commit
    mirror = tmp_path / "mirror"
    _git(tmp_path, "clone", "-q", "--mirror", str(toy["repos"] / maker.MIRROR_NAME), str(mirror))
    # the toy's own tags: v0.1 at the first base, v0.2 at the second; and an annotated one
    _git(mirror, "-c", "user.name=t", "-c", "user.email=t@t", "tag", "-a", "-m", "0.1",
         "v0.1-notes", first)  # fmt: skip
    _git(mirror, "-c", "user.name=t", "-c", "user.email=t@t", "tag", "-a", "-m", "0.2",
         "v0.2-notes", second)  # fmt: skip
    _git(mirror, "branch", "later", second)
    work = tmp_path / "work"
    _git(tmp_path, "clone", "-q", "--no-checkout", str(mirror), str(work))
    _git(work, "checkout", "-q", "-B", "main", first)
    _git(work, "remote", "remove", "origin")
    subprocess.run(["bash", "-euo", "pipefail", "-c", PRUNE_REFS], cwd=work, check=True)
    refs = _git(work, "for-each-ref", "--format=%(refname)").split()
    assert refs == ["refs/heads/main", "refs/tags/v0.1", "refs/tags/v0.1-notes"]


def test_environment_tools_are_pinned_and_labelled(toy: dict[str, Path]) -> None:
    """``pip install -U pip setuptools wheel`` took releases without what old repositories
    need (pkg_resources): pinned instead, each version in the image's labels."""
    from vibes_eval.benchmarks.swebench.env import images

    inst = load_instances(str(toy["instances"]))["vibes-toy__calc-1"]
    script = images.env_script(specs.read_specs(str(toy["specs"]))[inst.repo][inst.version])
    assert "-U pip" not in script
    assert "pip==24.0 setuptools==69.5.1 wheel==0.43.0" in script
    labels = images.env_labels(inst)
    assert {k: v for k, v in labels.items() if k.startswith(images.TOOL_LABEL)} == {
        "vibes-eval.swe.tool.pip": "24.0",
        "vibes-eval.swe.tool.setuptools": "69.5.1",
        "vibes-eval.swe.tool.wheel": "0.43.0",
    }


def test_post_test_reset_runs_in_testbed(toy: dict[str, Path]) -> None:
    """The reset after the tests (``git checkout <base> <test files>``) ran outside the
    repository: every step now starts with the script's environment lines, ``cd`` included."""
    inst = load_instances(str(toy["instances"]))["vibes-toy__calc-1"]
    spec = specs.read_specs(str(toy["specs"]))[inst.repo][inst.version]
    steps = split_script(specs.eval_script(inst, spec))
    for part in (steps.pre, steps.test, steps.post):
        lines = part.splitlines()
        cd = lines.index(f"cd {specs.REPO_DIR}")
        assert all(i > cd for i, line in enumerate(lines) if line.startswith("git "))
    assert "git checkout" in steps.post


def test_a_run_that_died_before_any_test_is_ungradable_not_tampering() -> None:
    """Exit 1 and a log with no test status but junk the parser read (sphinx-7686: pytest
    could not import its plugin) is ``test_error``; exit 1 with passes and no failure in
    the log is a forged log."""
    from vibes_eval.benchmarks.swebench.judge import Official, cross_check
    from vibes_eval.benchmarks.swebench.run import SweRun
    from vibes_eval.benchmarks.swebench.tasks import SweInstance
    from vibes_eval.core.types import ExecutionResult

    inst = SweInstance(task_id="x", prompt="", repo="o/r", base_commit="0" * 40, test_patch="",
                       FAIL_TO_PASS=["t1"], PASS_TO_PASS=[])  # fmt: skip
    run = SweRun(test=ExecutionResult(exit_code=1))
    assert cross_check(inst, run, Official(valid=False, statuses={"Could": "ERROR:"})) == []
    forged = cross_check(inst, run, Official(valid=False, statuses={"t1": "PASSED"}))
    assert forged == ["the test command exited 1 but its log reports no failure"]


def test_split_script_ignores_heredoc_lines_that_look_like_commands() -> None:
    """pytest-9359's test patch has a line ``source = \"\"\"\\``: read as a ``source``
    command, it was copied into the post-test step, which then failed to parse (exit 2)."""
    script = (
        "#!/bin/bash\nset -uxo pipefail\nsource /opt/miniconda3/bin/activate\ncd /testbed\n"
        'git apply -v - <<\'EOF_1\'\n+    source = """\\\n+cd elsewhere\nEOF_1\n'
        ": '>>>>> Start Test Output'\npytest -rA t.py\n: '>>>>> End Test Output'\n"
        "git checkout abc t.py\n"
    )
    steps = split_script(script)
    for part in (steps.test, steps.post):
        assert "source = " not in part and "elsewhere" not in part
        assert "source /opt/miniconda3/bin/activate" in part and "cd /testbed" in part
