"""Where an alert goes: a JSON-lines log and a webhook. Delivery never stops the monitor."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

WEBHOOK_TIMEOUT_S = 10.0
WEBHOOK_TRIES = 3


def append_log(path: Path, event: Mapping[str, Any]) -> None:
    """One JSON line per event, flushed to disk at once (``tail -f`` sees it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(event, ensure_ascii=False, sort_keys=True) + "\n")
        handle.flush()


def post_webhook(
    url: str,
    payload: Mapping[str, Any],
    *,
    tries: int = WEBHOOK_TRIES,
    timeout_s: float = WEBHOOK_TIMEOUT_S,
    backoff_s: float = 1.0,
) -> str | None:
    """POST ``payload`` as JSON to ``url``: up to ``tries`` times, waiting ``backoff_s``,
    then twice that, between them. ``None`` when an answer was 2xx, else why not, in one
    line without the URL's credentials (a token in the URL is never shown)."""
    import httpx

    from ragmeter._services import redact_secrets

    problem = "not sent"
    for attempt in range(tries):
        if attempt:
            time.sleep(backoff_s * 2 ** (attempt - 1))
        try:
            response = httpx.post(url, json=dict(payload), timeout=timeout_s)
        except httpx.HTTPError as error:
            problem = f"{type(error).__name__}: {error}"
            continue
        if 200 <= response.status_code < 300:
            return None
        problem = f"HTTP {response.status_code}"
    return redact_secrets(f"{problem} after {tries} tries", url)
