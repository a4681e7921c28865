"""Samples and judge answers for runner tests: scripted-judge answers served by the fake
OpenAI-compatible server, and samples whose every prompt is unique (no cache sharing)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from tests.metrics.llm import scripts


def samples(n: int, *, tag: str = "case") -> list[dict[str, Any]]:
    """``n`` copies of the seeds' sample, each made unique by a marker in every text."""
    out = []
    for i in range(n):
        marker = f"[{tag}-{i:05d}]"
        out.append(
            {
                "id": f"{tag}-{i}",
                "user_input": f"{scripts.QUESTION} {marker}",
                "response": f"{scripts.RESPONSE} {marker}",
                "reference": f"{scripts.REFERENCE} {marker}",
                "retrieved_contexts": [f"{c} {marker}" for c in scripts.CONTEXTS],
                "metadata": {"question_type": "multi_hop" if i % 3 == 0 else "single_hop"},
            }
        )
    return out


def server_responder(body: dict[str, Any]) -> str:
    """The scripted answers for a chat request to the fake server."""
    schema = body["response_format"]["json_schema"]
    shim = SimpleNamespace(__name__=schema["name"], model_fields=schema["schema"]["properties"])
    messages = [SimpleNamespace(content=m["content"]) for m in body["messages"]]
    return json.dumps(scripts.answer(messages, shim), ensure_ascii=False)


def marker_of(body: dict[str, Any]) -> str | None:
    """The sample marker a request carries, e.g. ``[case-00003]``."""
    text = json.dumps(body, ensure_ascii=False)
    start = text.find("[case-")
    return None if start < 0 else text[start : start + 12]
