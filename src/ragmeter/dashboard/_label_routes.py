"""Labelling in the dashboard: the ``/label`` page and its JSON API under ``/api/labels``
(docs/dashboard.md, "Labelling").

The queue of a run's metric comes from :func:`ragmeter.align.next_to_label`, or from an
uploaded queue (``ragmeter labels queue``) or labelling (``ragmeter mine``) JSONL file lined
up with the run's verdicts; labels are kept with :meth:`ragmeter.store.Store.add_labels` and
measured with :func:`ragmeter.align.agreement_on_labels`. The security checks (token, Host,
Origin of every POST) are :mod:`._app`'s middleware, in front of every route here.
"""

from __future__ import annotations

import datetime as dt
import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response

from ragmeter.align import (
    Judged,
    QueueItem,
    Validation,
    agreement_on_labels,
    judged_items,
    label_from_record,
    next_to_label,
    preference_pairs,
    read_labels,
)
from ragmeter.align import validations as align_validations
from ragmeter.dashboard import _i18n as i18n
from ragmeter.dashboard._label_page import validation_text
from ragmeter.dataset import DatasetError, parse_json_line
from ragmeter.results import EvaluationResult
from ragmeter.store import LEVELS, Label, LabelError, RunInfo, Store, sample_key

Opened = Callable[[str], tuple[RunInfo, EvaluationResult]]
#: The labelling page of a run's metric (request, run, metric, the run's metrics, the run
#: its answers are paired with, if any).
Page = Callable[[Request, RunInfo, str, list[str], str | None], HTMLResponse]

#: The most items a queue holds, and the most bytes an uploaded file may have.
MAX_QUEUE = 500
MAX_UPLOAD = 20 * 1024 * 1024


class LabelRequestError(ValueError):
    """A labels request that cannot be served as asked: answered 422 ``{"error": ...}``."""


def validations(store: Store, result: EvaluationResult) -> list[Validation]:
    """Per judged metric of the run, how far it was checked against the stored labels."""
    judged = result.judged_metrics()
    labels = [k for k in store.labels() if k.metric in judged] if judged else []
    return list(align_validations(result, labels, judged).values())


def chosen_metric(result: EvaluationResult, metric: str | None) -> str:
    """``metric``, checked against the run; without one, the run's first judged metric."""
    names = [m.name for m in result.metrics]
    if metric:
        if metric not in names:
            raise LabelRequestError(
                f"metric: the run has no metric {metric!r} (it has {', '.join(names) or 'none'})"
            )
        return metric
    judged = result.judged_metrics() or names
    if not judged:
        raise LabelRequestError("metric: the run has no metric to label")
    return judged[0]


def queue_json(
    judged: Mapping[tuple[str, str, str | int | None], Judged],
    metric: str,
    items: Sequence[QueueItem],
    **more: Any,
) -> dict[str, Any]:
    """The queue as the page reads it: each item's record (:meth:`QueueItem.to_dict`) with
    ``verdicts``, the judge's verdicts (``judged``, from :func:`judged_items`) on every claim
    and context of its sample."""
    verdicts: dict[str, list[dict[str, Any]]] = {}
    for (key, level, item), found in judged.items():
        if level != "sample":
            verdicts.setdefault(key, []).append(
                {
                    "level": level,
                    "item": item,
                    "verdict": found.result.details.get("label"),
                    "probability": found.result.score,
                    "reason": found.result.reason,
                }
            )
    records = [{**i.to_dict(), "verdicts": verdicts.get(i.sample_key, [])} for i in items]
    return {"metric": metric, "n": len(items), "items": records, **more}


def _file_targets(text: str) -> list[tuple[str, str, str | int | None]]:
    """(sample_key, level, item) of every record of an uploaded JSONL file: a queue or
    labels file's records name theirs; a ``ragmeter mine`` row is a sample (its key
    computed from its texts)."""
    targets = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        value, message, fix = parse_json_line(line)
        if message is not None or not isinstance(value, dict):
            said = message or "a record is a JSON object"
            raise LabelRequestError(f"line {number}: {said}. Fix: {fix or 'one {...} a line'}")
        if "level" in value or "sample_key" in value:
            level, key = value.get("level"), value.get("sample_key")
            if level not in LEVELS or not isinstance(key, str) or not key:
                raise LabelRequestError(
                    f"line {number}: field 'level' or 'sample_key' is not valid "
                    f"(level {level!r}, sample_key {key!r}). Fix: upload a file written by "
                    "ragmeter labels queue or ragmeter mine"
                )
            targets.append((key, level, value.get("item")))
        else:
            targets.append((sample_key(value), "sample", None))
    return targets


def queue_from_file(result: EvaluationResult, metric: str, text: str) -> dict[str, Any]:
    """The items of an uploaded queue or labelling file that the run judged, in the file's
    order, with the run's verdicts; how many it judged not."""
    judged, _ = judged_items(result, metric)
    items: list[QueueItem] = []
    missing = 0
    for target in dict.fromkeys(_file_targets(text)):
        found = judged.get(target)
        if found is None:
            missing += 1
        else:
            items.append(QueueItem(metric, target[0], found, ""))
    return queue_json(judged, metric, items[:MAX_QUEUE], not_in_run=missing)


def parse_body(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as error:
        raise LabelRequestError(
            f"the body is not JSON ({error}). Fix: send one label record as a JSON object, "
            "or a list of them"
        ) from None


def labels_from_body(body: Any, now: dt.datetime) -> list[Label]:
    """The labels of a POST body: one label record or a list of them, each checked; the
    first one that is wrong is named by its position, field and fix."""
    records = body if isinstance(body, list) else [body]
    found = []
    for position, record in enumerate(records, start=1):
        if not isinstance(record, Mapping):
            raise LabelRequestError(
                f"label {position}: a label is a JSON object, got {type(record).__name__}"
            )
        try:
            found.append(label_from_record(record, now=now))
        except LabelError as error:
            raise LabelRequestError(f"label {position}: {error}") from None
    return found


def import_text(text: str, metric: str | None, labeller: str | None) -> list[Label]:
    """The labels of an uploaded labels, queue or ``ragmeter mine`` JSONL file, read by
    :func:`ragmeter.align.read_labels` (every problem named by line, field and fix)."""
    with tempfile.TemporaryDirectory(prefix="ragmeter-labels-") as folder:
        path = Path(folder) / "upload.jsonl"
        path.write_text(text, encoding="utf-8")
        try:
            return read_labels(path, metric=metric or None, labeller=labeller or None)
        except DatasetError as error:
            raise LabelRequestError(str(error).replace(str(path), "the uploaded file")) from None


async def body_text(request: Request) -> str:
    raw = await request.body()
    if len(raw) > MAX_UPLOAD:
        raise LabelRequestError(f"the file is larger than {MAX_UPLOAD // 1024 // 1024} MiB")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise LabelRequestError(f"the file is not UTF-8 text ({error.reason})") from None


def add_label_routes(app: FastAPI, store: Store, opened: Opened, label_page: Page) -> None:
    """``/label`` and ``/api/labels/...`` on ``app``."""

    @app.get("/label", response_class=HTMLResponse)
    def label(
        request: Request, run: str, metric: str | None = None, versus: str | None = None
    ) -> HTMLResponse:
        info, result = opened(run)
        chosen = chosen_metric(result, metric)
        other = opened(versus)[0].id if versus else None
        return label_page(request, info, chosen, [m.name for m in result.metrics], other)

    @app.get("/api/labels/queue")
    def api_queue(
        run: str,
        metric: str | None = None,
        strategy: str = "uncertain",
        by: str | None = None,
        level: str | None = None,
        n: int = 20,
        seed: int = 0,
        versus: str | None = None,
    ) -> dict[str, Any]:
        info, result = opened(run)
        chosen = chosen_metric(result, metric)
        if n > MAX_QUEUE:
            raise LabelRequestError(f"n: at most {MAX_QUEUE} items a queue, got {n}")
        if versus:  # the two runs' answers to one question, as preference items
            other_info, other = opened(versus)
            try:
                pairs = preference_pairs(
                    result, other, chosen, labels=store.labels(metric=chosen), n=n, seed=seed
                )
            except ValueError as error:  # the other run lacks the metric, or n
                raise LabelRequestError(f"versus: {error}") from None
            found = {"metric": chosen, "n": len(pairs), "items": pairs}
            return {"run": info.id, "versus": other_info.id, **found}
        try:
            items = next_to_label(
                result,
                chosen,
                labels=store.labels(metric=chosen),
                n=n,
                strategy=strategy,
                by=by or None,
                level=level or None,
                seed=seed,
            )
        except ValueError as error:  # the strategy, level or n, named by next_to_label
            raise LabelRequestError(str(error)) from None
        judged, _ = judged_items(result, chosen)
        return {"run": info.id, **queue_json(judged, chosen, items)}

    @app.post("/api/labels/queue")
    async def api_queue_from_file(
        request: Request, run: str, metric: str | None = None
    ) -> dict[str, Any]:
        info, result = opened(run)
        chosen = chosen_metric(result, metric)
        return {"run": info.id, **queue_from_file(result, chosen, await body_text(request))}

    @app.get("/api/labels")
    def api_labels(
        metric: str | None = None, level: str | None = None, labeller: str | None = None
    ) -> dict[str, Any]:
        found = store.labels(metric=metric or None, level=level or None, labeller=labeller or None)
        return {"n_labels": len(found), "labels": [k.to_dict() for k in found]}

    @app.post("/api/labels")
    async def api_add_labels(request: Request) -> dict[str, Any]:
        now = dt.datetime.now(dt.timezone.utc)
        found = labels_from_body(parse_body(await request.body()), now)
        added = store.add_labels(found)
        return {"added": added, "labels": [k.to_dict() for k in found]}

    @app.get("/api/labels/export")
    def api_export(
        metric: str | None = None, level: str | None = None, labeller: str | None = None
    ) -> Response:
        found = store.labels(metric=metric or None, level=level or None, labeller=labeller or None)
        text = "".join(json.dumps(k.to_dict(), ensure_ascii=False) + "\n" for k in found)
        return Response(
            text,
            media_type="application/x-ndjson",
            headers={"Content-Disposition": 'attachment; filename="labels.jsonl"'},
        )

    @app.post("/api/labels/import")
    async def api_import(
        request: Request, metric: str | None = None, labeller: str | None = None
    ) -> dict[str, Any]:
        found = import_text(await body_text(request), metric, labeller)
        added = store.add_labels(found)
        return {"added": added, "read": len(found)}

    @app.get("/api/labels/agreement")
    def api_agreement(
        run: str, metric: str | None = None, lang: str | None = None, versus: str | None = None
    ) -> dict[str, Any]:
        info, result = opened(run)
        chosen = chosen_metric(result, metric)
        other = opened(versus)[1] if versus else None
        try:
            agreement = agreement_on_labels(
                result, store.labels(metric=chosen), chosen, versus=other
            )
        except ValueError as error:  # the other run lacks the metric
            raise LabelRequestError(f"versus: {error}") from None
        found = agreement.to_dict()
        t = i18n.Translator(i18n.pick_language(lang, None, None))
        found["validation"]["shown"] = validation_text(t, agreement.validation)
        return {"run": info.id, **found}
