"""DeepEval's side of ``bench/judge_calls_vs_ragas.py``: runs in DeepEval's own virtual
environment (``deepeval==4.3.0``, made by ``judge_calls_vs_ragas.py --install-deepeval``),
never imports ragmeter.

    <deepeval-venv>/bin/python bench/_deepeval_side.py SPEC.json

``SPEC.json`` is the spec the bench writes for every side: the fake server's ``base_url``, the
dataset file (the bench's synthetic samples, each with its unique made-up ``name``) and the jobs
(name, metrics, number of samples, k). For each job this scores the first ``n`` samples with
DeepEval's own ``evaluate()`` and its five RAG metrics (``FaithfulnessMetric``,
``AnswerRelevancyMetric``, ``ContextualPrecisionMetric``, ``ContextualRecallMetric``,
``ContextualRelevancyMetric``), each with its defaults (``include_reason=True``,
``async_mode=True``, threshold 0.5) and one ``OpenAIModel`` (DeepEval's default OpenAI model
name, the fake server's ``base_url``, a dummy key), at ``AsyncConfig(max_concurrent=16)``
(DeepEval's limit is on test cases in flight, not on requests), with no progress bar nor
results table (DeepEval still prints a short summary, which goes to the bench's log), no cache
read or written, and errors recorded instead of raised. It writes, per job: the start and end
(``time.monotonic()``, the same clock as the server's request log), the process CPU time
(``time.process_time()``, user + system of every thread) spent in ``evaluate()``, and per
metric the mean of the scores with the counts of scores and errors. Last, the CPU time of
building one judge client the way DeepEval's ``OpenAIModel`` does for every request (its
``a_generate()`` calls ``load_model()``, a new ``AsyncOpenAI``), averaged over 20.

The caller runs it in a scratch directory with telemetry off (``DEEPEVAL_TELEMETRY_OPT_OUT``),
no dotenv loading, ``DEEPEVAL_HOME`` and ``DEEPEVAL_CACHE_FOLDER`` inside that directory, and
no Confident AI key, so nothing leaves the machine and nothing is written into the repository.
"""

from __future__ import annotations

import json
import math
import os
import resource
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

CONCURRENCY = 16

# DeepEval's metric names (MetricData.name) -> the bench's keys.
NAMES = {
    "Faithfulness": "faithfulness",
    "Answer Relevancy": "answer_relevancy",
    "Contextual Precision": "contextual_precision",
    "Contextual Recall": "contextual_recall",
    "Contextual Relevancy": "contextual_relevancy",
}


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(spec_path: str) -> None:
    for name in ("DEEPEVAL_TELEMETRY_OPT_OUT", "DEEPEVAL_DISABLE_DOTENV"):
        if not os.environ.get(name):
            sys.exit(f"{name} is not set: run this through judge_calls_vs_ragas.py")
    warnings.filterwarnings("ignore")
    import deepeval
    from deepeval import evaluate
    from deepeval.evaluate.configs import AsyncConfig, CacheConfig, DisplayConfig, ErrorConfig
    from deepeval.metrics import (
        AnswerRelevancyMetric,
        ContextualPrecisionMetric,
        ContextualRecallMetric,
        ContextualRelevancyMetric,
        FaithfulnessMetric,
    )
    from deepeval.models import OpenAIModel
    from deepeval.test_case import LLMTestCase

    factories = {
        "faithfulness": FaithfulnessMetric,
        "answer_relevancy": AnswerRelevancyMetric,
        "contextual_precision": ContextualPrecisionMetric,
        "contextual_recall": ContextualRecallMetric,
        "contextual_relevancy": ContextualRelevancyMetric,
    }
    imported_cpu_s = _cpu_s()
    spec = json.loads(Path(spec_path).read_text())
    rows = json.loads(Path(spec["dataset"]).read_text())
    out: list[dict[str, Any]] = []
    for job in spec["jobs"]:
        model = OpenAIModel(base_url=spec["base_url"], api_key="x")
        metrics = [factories[m](model=model) for m in job["metrics"]]
        cases = [
            LLMTestCase(
                input=r["user_input"],
                actual_output=r["response"],
                expected_output=r["reference"],
                retrieval_context=list(r["retrieved_contexts"]),
            )
            for r in rows[: job["n"]]
        ]
        cpu0 = time.process_time()
        start = time.monotonic()
        result = evaluate(
            cases,
            metrics,
            async_config=AsyncConfig(run_async=True, max_concurrent=CONCURRENCY),
            display_config=DisplayConfig(
                show_indicator=False, print_results=False, inspect_after_run=False
            ),
            cache_config=CacheConfig(write_cache=False, use_cache=False),
            error_config=ErrorConfig(ignore_errors=True),
        )
        end = time.monotonic()
        cpu = time.process_time() - cpu0
        values: dict[str, list[float]] = {m: [] for m in job["metrics"]}
        messages: dict[str, int] = {}
        for test in result.test_results:
            for data in test.metrics_data or []:
                key = NAMES.get(data.name, data.name)
                values.setdefault(key, [])
                if data.error or data.score is None or math.isnan(float(data.score)):
                    text = f"{key}: {str(data.error)[:120]}"
                    messages[text] = messages.get(text, 0) + 1
                else:
                    values[key].append(float(data.score))
        scores = {
            key: {
                "mean": statistics.fmean(v) if v else None,
                "n_ok": len(v),
                "n_failed": job["n"] - len(v),  # errors, and test cases with no score
                "n_not_applicable": 0,
            }
            for key, v in values.items()
        }
        out.append(
            {
                **job,
                "start": start,
                "end": end,
                "wall_s": end - start,
                "cpu_s": cpu,
                "scores": scores,
                "warnings": messages,
                "model": model.get_model_name(),
            }
        )
        time.sleep(0.5)  # a clean gap between the jobs' request windows
    # What DeepEval's OpenAIModel spends on each request before sending it: a_generate() calls
    # load_model(), which builds a new AsyncOpenAI client (and its httpx transport and SSL
    # context) every time.
    model = OpenAIModel(base_url=spec["base_url"], api_key="x")
    cpu0 = time.process_time()
    for _ in range(20):
        model.load_model(async_mode=True)
    client_build_ms = (time.process_time() - cpu0) / 20 * 1000
    Path(spec["out"]).write_text(
        json.dumps(
            {
                "jobs": out,
                "client_build_ms": client_build_ms,
                "process_cpu_s": _cpu_s(),
                "import_cpu_s": imported_cpu_s,
                "version": deepeval.__version__,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])
