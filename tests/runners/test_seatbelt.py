"""The macOS Seatbelt profile, checked as text (no Mac here to run it)."""

from __future__ import annotations

import re

from vibes_eval.runners.seatbelt import SeatbeltRunner, profile, quote


def _rules(text: str, action: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(f"({action} ")]


def _balanced(text: str) -> bool:
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return False
        elif ch == ";" and depth == 0:
            continue
    return depth == 0 and not in_string


def test_denies_by_default_and_blocks_all_network() -> None:
    text = profile("/private/tmp/work", ["/opt/rust"])
    assert text.startswith("(version 1)\n(deny default)\n")
    assert "(deny network*)" in text
    assert not any("network" in rule for rule in _rules(text, "allow"))


def test_writes_only_in_the_work_dir() -> None:
    text = profile("/private/tmp/work", ["/opt/rust"])
    (write,) = [r for r in _rules(text, "allow") if r.startswith("(allow file-write*")]
    subpaths = re.findall(r'\(subpath "([^"]*)"\)', write)
    assert subpaths == ["/private/tmp/work"]
    assert "/opt/rust" not in write


def test_readonly_paths_are_readable_and_executable_not_secrets() -> None:
    text = profile("/private/tmp/work", ["/opt/rust"])
    (read,) = [r for r in _rules(text, "allow") if r.startswith("(allow file-read* ")]
    (exe,) = [r for r in _rules(text, "allow") if r.startswith("(allow process-exec")]
    assert '(subpath "/opt/rust")' in read and '(subpath "/opt/rust")' in exe
    assert '(subpath "/private/tmp/work")' in exe  # test binaries run from the work dir
    readable = re.findall(r'\(subpath "([^"]*)"\)', read)
    for secret in ("/private/etc/master.passwd", "/Users/someone/.ssh/id_rsa"):
        assert not any(secret == p or secret.startswith(p + "/") for p in readable), secret


def test_signals_only_within_the_sandbox() -> None:
    assert "(allow signal (target same-sandbox))" in profile("/w")


def test_paths_are_quoted() -> None:
    assert quote('a"b\\c') == '"a\\"b\\\\c"'
    text = profile('/tmp/we"ird\\dir', ['/opt/a "b"'])
    assert _balanced(text)
    assert '\\"' in text


def test_runner_is_macos_only_here() -> None:
    assert SeatbeltRunner.check_available() == "Seatbelt is macOS only"
