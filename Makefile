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

demo: $(VENV)/.core-installed
	$(BIN)/ragmeter eval examples/demo.jsonl \
		--metrics precision@5,recall@5,hit@5,mrr,map,ndcg@5,r_precision,id_context_precision,id_context_recall,string_context_precision,string_context_recall,exact_match,rouge_l,bleu,chrf \
		--output runs/demo

test: $(VENV)/.dev-installed
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/python -m pytest -q

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

# Full size takes about 15 minutes on 2 cores and only prints. BENCH_ARGS="--write" refreshes
# bench/RESULTS.md; BENCH_ARGS="--queries 2000 --repeats 1" is a quick run.
BENCH_ARGS ?=
bench: $(VENV)/.dev-installed
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python bench/retrieval_bench.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) runs
