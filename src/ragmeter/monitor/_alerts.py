"""Where an alert goes: a JSON-lines log and a webhook. Delivery never stops the monitor."""

from __future__ import annotations

import json
import threading
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


def check_webhook(url: str | None) -> str | None:
    """``url`` if it is an http(s) URL with a host, else a one-line ``ValueError`` that
    does not repeat it (it may hold a token)."""
    if url is None:
        return None
    import httpx

    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as error:
        raise ValueError(
            f"--webhook is not a valid URL ({error}): give http(s)://host[:port]/path"
        ) from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ValueError("--webhook must be an http:// or https:// URL with a host")
    return url


def post_webhook(
    url: str,
    payload: Mapping[str, Any],
    *,
    tries: int = WEBHOOK_TRIES,
    timeout_s: float = WEBHOOK_TIMEOUT_S,
    backoff_s: float = 1.0,
    stop: threading.Event | None = None,
) -> str | None:
    """POST ``payload`` as JSON to ``url``: up to ``tries`` times, waiting ``backoff_s``,
    then twice that, between them. ``timeout_s`` bounds each try in total (a receiver that
    trickles its answer is cut off), and ``stop`` (set on SIGTERM) ends the wait at once.
    ``None`` when an answer was 2xx, else why not, in one line without the URL's
    credentials (a token in the URL is never shown)."""
    from ragmeter._services import redact_secrets

    stop = stop or threading.Event()
    problem = "not sent"
    for attempt in range(tries):  # ``attempt`` tries made so far
        if stop.is_set() or (attempt and stop.wait(backoff_s * 2 ** (attempt - 1))):
            return redact_secrets(f"stopped after {attempt} of {tries} tries ({problem})", url)
        status, problem = _post_once(url, payload, timeout_s, stop)
        if status is not None and 200 <= status < 300:
            return None
    return redact_secrets(f"{problem} after {tries} tries", url)


def _post_once(
    url: str, payload: Mapping[str, Any], timeout_s: float, stop: threading.Event
) -> tuple[int | None, str]:
    """One POST, given up after ``timeout_s`` in all or when ``stop`` is set: the status
    (``None`` when none came) and the problem in words."""
    import httpx

    client = httpx.Client(timeout=timeout_s)
    done = threading.Event()
    outcome: dict[str, Any] = {}

    def send() -> None:
        try:
            outcome["status"] = client.post(url, json=dict(payload)).status_code
        except (httpx.HTTPError, httpx.InvalidURL, OSError, RuntimeError) as error:
            # RuntimeError: the client was closed under the request (timed out, stopped)
            outcome["error"] = f"{type(error).__name__}: {error}"
        finally:
            done.set()

    worker = threading.Thread(target=send, name="ragmeter-webhook", daemon=True)
    worker.start()
    deadline = time.monotonic() + timeout_s
    while not done.wait(min(0.1, max(deadline - time.monotonic(), 0.0))):
        if stop.is_set() or time.monotonic() >= deadline:
            break
    if not done.is_set():
        client.close()  # the request's connection closes: the worker ends
        if stop.is_set():
            return None, "no answer yet when stopped"
        return None, f"no whole answer within {timeout_s:g} s"
    client.close()
    if "status" in outcome:
        status = int(outcome["status"])
        return status, f"HTTP {status}"
    return None, str(outcome.get("error", "not sent"))
