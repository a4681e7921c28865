# The two commands a newcomer runs: `make demo` and `make test`.
# Each bootstraps its own .venv from scratch when it is missing or stale.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.core-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

# The test suite runs the embedded offline judge too: [local] compiles llama-cpp-python from
# source the first time (about 9 minutes on 2 cores; pip keeps the built wheel afterwards).
$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	@echo "Installing ragmeter[dev,local]; the first time, llama-cpp-python compiles from source (about 9 minutes on 2 cores)."
	$(BIN)/python -m pip install --quiet -e '.[dev,local]'
	touch $@ $(VENV)/.core-installed

# The demo runs the embedded offline judge and embeddings: [local] compiles llama-cpp-python
# the first time (about 9 minutes on 2 cores), then the run itself takes about 6.5 minutes.
$(VENV)/.demo-installed: pyproject.toml | $(BIN)/python
	@echo "Installing ragmeter[local,embed,zh]; the first time, llama-cpp-python compiles from source (about 9 minutes on 2 cores)."
	$(BIN)/python -m pip install --quiet -e '.[local,embed,zh]'
	touch $@ $(VENV)/.core-installed

DEMO_METRICS := faithfulness,answer_relevancy,context_precision,context_recall,answer_correctness,precision@3,recall@3,mrr,ndcg@3

demo: $(VENV)/.demo-installed
	rm -rf runs/demo
	$(BIN)/ragmeter eval examples/demo.jsonl --metrics $(DEMO_METRICS) \
		--output runs/demo --report runs/demo/report.html

test: lint
	$(BIN)/python -m pytest -q

# Style, formatting, the package layers (import-linter contracts in pyproject.toml) and types
# (mypy, strict, over src/ragmeter: settings in pyproject.toml).
lint: $(VENV)/.dev-installed
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/lint-imports
	$(BIN)/mypy

# Full size takes about 15 minutes on 2 cores and only prints. BENCH_ARGS="--write" refreshes
# bench/RESULTS.md; BENCH_ARGS="--queries 2000 --repeats 1" is a quick run.
BENCH_ARGS ?=
bench: $(VENV)/.dev-installed
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python bench/retrieval_bench.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) runs
