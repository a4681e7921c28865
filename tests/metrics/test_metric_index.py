"""The built-in metrics are declared where they are defined (``@builtin_metric``); names are
looked up in an index generated from those declarations, which imports no metric module."""

import json
import subprocess
import sys

import pytest

from ragmeter.metrics import SPECS, UnknownMetricError, get_metric

INDEX_COMMAND = "python -m ragmeter.metrics._indexer --write"


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_index_is_what_the_declarations_say():
    done = subprocess.run(
        [sys.executable, "-m", "ragmeter.metrics._indexer", "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, (
        f"the metric index is stale: run `{INDEX_COMMAND}`\n{done.stdout}{done.stderr}"
    )


def test_every_built_in_metric_reports_the_name_it_is_declared_under():
    for spec in SPECS:
        cutoff = "@5" if spec.cutoff == "required" else ""
        assert spec.example().name == spec.name + cutoff
        assert get_metric(spec.name + cutoff).name == spec.name + cutoff


LAZY_NAMES = ["precision@5", "rouge_l", "chrf++", "ndcg_exp@3", "mrr", "exact_match"]
NEVER = ["ragmeter.metrics.llm", "ragmeter.steps", "ragmeter.metrics.custom"]


def _loaded(code: str, watched: list[str]) -> list[str]:
    """The ``watched`` packages (with their submodules) a fresh interpreter loads."""
    script = (
        f"import json, sys\n{code}\n"
        f"print(json.dumps([w for w in {watched!r} "
        "if any(m == w or m.startswith(w + '.') for m in sys.modules)]))"
    )
    return list(json.loads(_run(script).strip().splitlines()[-1]))


def test_metrics_without_a_judge_load_no_llm_metric_nor_step():
    code = f"from ragmeter.metrics import get_metric\nfor name in {LAZY_NAMES!r}: get_metric(name)"
    assert _loaded(code, NEVER) == []


def test_suggesting_a_name_imports_no_metric_module():
    with pytest.raises(UnknownMetricError, match="did you mean 'faithfulness'"):
        get_metric("faithfulnes")
    code = (
        "from ragmeter.metrics import UnknownMetricError, get_metric\n"
        "try:\n    get_metric('faithfulnes')\nexcept UnknownMetricError:\n    pass\n"
    )
    packages = ["llm", "retrieval", "context", "text", "custom"]
    assert _loaded(code, [f"ragmeter.metrics.{p}" for p in packages]) == []
