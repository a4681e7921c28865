"""The dashboard's pages and its JSON API: each page has an ``/api/...`` twin that returns
the data it shows (docs/dashboard.md). The security checks live in :mod:`._app`'s
middleware, in front of every route here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from ragmeter.dashboard import _data as data
from ragmeter.dashboard import _i18n as i18n
from ragmeter.dashboard import _pages as pages
from ragmeter.dashboard._label_page import label_page, validation_block
from ragmeter.dashboard._label_routes import LabelRequestError, add_label_routes, validations
from ragmeter.dashboard._views import compare_page, trends_page
from ragmeter.diagnosis import diagnose
from ragmeter.gate import GateRules
from ragmeter.report import join, render_html
from ragmeter.results import ConversationResult, EvaluationResult
from ragmeter.store import RunInfo, RunNotFoundError, Store

#: The most runs the runs list shows and a trend chart draws (the newest ones).
RUNS_SHOWN = 200
TREND_RUNS = 50
#: How long the language cookie lasts (a year).
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600

Order = Literal["asc", "desc"]


class _NotFound(LookupError):
    """No such run or sample: ``message`` in English (the API's), or the UI string
    ``message_key`` formatted with ``values`` when there is one (the pages')."""

    def __init__(
        self, title_key: str, message: str, message_key: str | None = None, **values: object
    ) -> None:
        super().__init__(message)
        self.title_key = title_key
        self.message = message
        self.message_key = message_key
        self.values = values

    def text(self, t: i18n.Translator) -> str:
        return self.message if self.message_key is None else t(self.message_key, **self.values)


def ui_for(request: Request) -> pages.Ui:
    """The request's language and address, for the page and its language switch."""
    language = i18n.pick_language(
        request.query_params.get("lang"),
        request.cookies.get(i18n.COOKIE),
        request.headers.get("accept-language"),
    )
    return pages.Ui(
        i18n.Translator(language), request.url.path, list(request.query_params.multi_items())
    )


def html(request: Request, body: str, status_code: int = 200) -> HTMLResponse:
    """A page; a language chosen with ``?lang=`` is remembered in a cookie."""
    response = HTMLResponse(body, status_code=status_code)
    chosen = request.query_params.get("lang")
    if chosen in i18n.LANGUAGES:
        response.set_cookie(
            i18n.COOKIE, chosen, max_age=LANGUAGE_COOKIE_AGE, samesite="strict", httponly=True
        )
    return response


@dataclass(frozen=True)
class RunFilter:
    """Which runs a list or a trend covers: by name, tag and creation time."""

    name: str | None = None
    tag: str | None = None
    since: str | None = None
    until: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return {"name": self.name, "tag": self.tag, "since": self.since, "until": self.until}


def sample_query(
    metric: str | None = None,
    status: str | None = None,
    tag: str | None = None,
    q: str | None = None,
    sort: str | None = None,
    order: str = "asc",
    page: int = 1,
    per_page: int = 100,
) -> data.SampleQuery:
    """The samples query of a page or API request (a FastAPI dependency)."""
    if order not in ("asc", "desc"):
        raise data.QueryError(f"order: expected asc or desc, got {order!r}")
    chosen: Order = "desc" if order == "desc" else "asc"
    return data.SampleQuery(
        metric=metric or None,
        status=status or None,
        tag=tag or None,
        q=q or None,
        sort=sort or None,
        order=chosen,
        page=page,
        per_page=per_page,
    )


Runs = Annotated[RunFilter, Depends(RunFilter)]
Samples = Annotated[data.SampleQuery, Depends(sample_query)]


@dataclass
class _Site:
    """What the routes read: the run store, the loader of a run's results, the gate whose
    rules the trends draw (and where it came from), the cost estimates."""

    store: Store
    load: data.Loader
    gate: GateRules | None
    gate_source: str | None
    estimates: data.Estimates

    def get_run(self, ref: str) -> RunInfo:
        try:
            return self.store.get(ref)
        except RunNotFoundError as error:
            raise _NotFound("no_such_run", str(error)) from None

    def opened(self, ref: str) -> tuple[RunInfo, EvaluationResult]:
        """The run ``ref`` and its results."""
        info = self.get_run(ref)
        return info, self.load(info)

    def get_index(self, info: RunInfo, index: int) -> int:
        size = len(self.load(info))
        if not 0 <= index < size:
            values = {"name": info.name, "last": size - 1}
            message = i18n.EN["sample_range"].format(**values)
            raise _NotFound("no_such_sample", message, "sample_range", **values)
        return index

    def listed(self, runs: RunFilter) -> list[RunInfo]:
        found = self.store.list(name=runs.name or None, tag=runs.tag or None, limit=None)
        return data.within(found, runs.since, runs.until)

    def get_conversation(self, info: RunInfo, conversation_id: str) -> ConversationResult:
        found = data.find_conversation(self.load(info), conversation_id)
        if found is None:
            values = {"name": info.name, "id": conversation_id}
            message = i18n.EN["conversation_missing"].format(**values)
            raise _NotFound("no_such_conversation", message, "conversation_missing", **values)
        return found

    def trend_data(self, metric: str | None, runs: RunFilter) -> tuple[dict[str, Any], list[str]]:
        found = self.listed(runs)[:TREND_RUNS]
        known = data.metric_names(found)
        if metric and metric not in known:
            raise data.QueryError(f"metric: no run shown has {metric!r}; they have {known}")
        trends = data.trends_json(found, self.estimates, self.gate, [metric] if metric else None)
        return trends, known

    def pair(self, base: str, candidate: str) -> tuple[RunInfo, RunInfo]:
        return self.get_run(base), self.get_run(candidate)


def _has_conversations(result: EvaluationResult) -> bool:
    try:
        return bool(result.conversations())
    except ValueError:  # a turn without a number: the report's section says which
        return False


def add_routes(
    app: FastAPI,
    store: Store,
    load: data.Loader,
    gate: GateRules | None,
    gate_source: str | None,
) -> None:
    """Every page and API endpoint of the dashboard, on ``app``."""
    site = _Site(store, load, gate, gate_source, data.Estimates(load))
    _add_error_pages(app)
    _add_run_routes(app, site)
    _add_sample_routes(app, site)
    _add_conversation_routes(app, site)
    _add_trend_routes(app, site)
    _add_compare_routes(app, site)

    def labelling(
        request: Request, info: RunInfo, metric: str, metrics: list[str], versus: str | None
    ) -> HTMLResponse:
        return html(request, label_page(ui_for(request), info, metric, metrics, versus))

    add_label_routes(app, store, site.opened, labelling)


#: What a parameter must be, by the kind of validation error FastAPI reports.
_EXPECTED = {
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_parsing": "a number",
    "bool_parsing": "true or false",
    "string_type": "text",
}


def validation_message(errors: Any) -> str:
    """FastAPI's validation ``errors`` in one line that names each parameter and the fix.

    >>> validation_message([{"type": "missing", "loc": ("query", "b"), "msg": "Field required"},
    ...     {"type": "int_parsing", "loc": ("query", "page"), "msg": "...", "input": "two"}])
    "b: required query parameter missing: add b=...; page: expected a whole number, got 'two'"
    """
    said = []
    for error in errors:
        where, *names = [str(part) for part in error.get("loc", ())] or ["request"]
        name = ".".join(names) or where
        kind = error.get("type", "")
        if kind == "missing":
            said.append(f"{name}: required {where} parameter missing: add {name}=...")
            continue
        expected = _EXPECTED.get(kind)
        if expected is None:  # e.g. "input should be greater than or equal to 1"
            message = str(error.get("msg", "not valid"))
            rule = message[:1].lower() + message[1:]
        else:
            rule = f"expected {expected}"
        said.append(f"{name}: {rule}, got {error.get('input')!r}")
    return "; ".join(said) or "the request's parameters are not valid"


def _add_error_pages(app: FastAPI) -> None:
    """The not-found, bad-query and invalid-parameter answers: JSON ``{"error": ...}`` under
    /api/, a page elsewhere."""

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> Response:
        message = validation_message(error.errors())
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": message}, status_code=422)
        ui = ui_for(request)
        return html(request, pages.message_page(ui, ui.t("bad_query"), message), 422)

    @app.exception_handler(_NotFound)
    async def not_found(request: Request, error: _NotFound) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": error.message}, status_code=404)
        ui = ui_for(request)
        page = pages.message_page(ui, ui.t(error.title_key), error.text(ui.t))
        return html(request, page, 404)

    @app.exception_handler(LabelRequestError)
    async def refused(request: Request, error: LabelRequestError) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": str(error)}, status_code=422)
        ui = ui_for(request)
        return html(request, pages.message_page(ui, ui.t("bad_query"), str(error)), 422)

    @app.exception_handler(data.QueryError)
    async def bad_query(request: Request, error: data.QueryError) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": str(error)}, status_code=400)
        ui = ui_for(request)
        return html(request, pages.message_page(ui, ui.t("bad_query"), str(error)), 400)


def _add_run_routes(app: FastAPI, site: _Site) -> None:
    """/health, the run list and one run, as pages and under /api/."""

    @app.get("/health")
    def health() -> JSONResponse:
        return JSONResponse({"ok": True, "runs": len(site.store.list(limit=None))})

    # -- runs ------------------------------------------------------------------------------
    @app.get("/", response_class=HTMLResponse)
    def runs(request: Request, runs: Runs) -> HTMLResponse:
        found = site.listed(runs)[:RUNS_SHOWN]
        return html(request, pages.runs_page(ui_for(request), found, runs.as_dict()))

    @app.get("/api/runs")
    def api_runs(runs: Runs, limit: int = RUNS_SHOWN) -> dict[str, Any]:
        found = site.listed(runs)
        return {"total": len(found), "runs": [data.run_summary(i) for i in found[:limit]]}

    @app.get("/runs/{ref}", response_class=HTMLResponse)
    def run(request: Request, ref: str) -> HTMLResponse:
        info, result = site.opened(ref)
        ui = ui_for(request)
        report = render_html(result, findings=diagnose(result), title=info.name)
        crumbs = [
            (ui.t("all_samples"), f"/runs/{info.id}/samples"),
            (ui.t("trends_of", name=info.name), f"/trends?{urlencode({'name': info.name})}"),
        ]
        if _has_conversations(result):
            crumbs.insert(1, (ui.t("conversations"), f"/runs/{info.id}/conversations"))
        earlier = [
            i for i in site.store.list(name=info.name, limit=None) if i.created_at < info.created_at
        ]
        if earlier:
            previous = earlier[0]
            href = f"/compare?base={previous.id}&candidate={info.id}"
            crumbs.append((ui.t("compare_previous"), href))
        record = join(
            [
                pages.run_record(ui, info),
                validation_block(ui, info, validations(site.store, result)),
            ]
        )
        return html(request, pages.with_topbar(ui, report, crumbs, record))

    @app.get("/api/runs/{ref}")
    def api_run(ref: str) -> dict[str, Any]:
        info = site.get_run(ref)
        return data.run_detail(info, site.estimates(info))


def _add_sample_routes(app: FastAPI, site: _Site) -> None:
    """A run's samples and one sample, as pages and under /api/."""

    @app.get("/runs/{ref}/samples", response_class=HTMLResponse)
    def samples(request: Request, ref: str, query: Samples) -> HTMLResponse:
        info, result = site.opened(ref)
        chosen = data.select_samples(result, query)
        ui = ui_for(request)
        return html(request, pages.samples_page(ui, info, result, query, chosen))

    @app.get("/api/runs/{ref}/samples")
    def api_samples(ref: str, query: Samples) -> dict[str, Any]:
        return data.samples_json(*site.opened(ref), query)

    @app.get("/runs/{ref}/samples/{index}", response_class=HTMLResponse)
    def sample(request: Request, ref: str, index: int) -> HTMLResponse:
        info, result = site.opened(ref)
        index = site.get_index(info, index)
        return html(request, pages.sample_page(ui_for(request), info, result, index))

    @app.get("/api/runs/{ref}/samples/{index}")
    def api_sample(ref: str, index: int) -> dict[str, Any]:
        info, result = site.opened(ref)
        one = result.samples[site.get_index(info, index)]
        out = one.to_dict()
        out["scores"] = data.sample_json(one, [m.name for m in result.metrics])["scores"]
        return {"run": info.id, **out}


def _add_conversation_routes(app: FastAPI, site: _Site) -> None:
    """A run's conversations and one conversation, as pages and under /api/."""

    @app.get("/runs/{ref}/conversations", response_class=HTMLResponse)
    def conversations(request: Request, ref: str) -> HTMLResponse:
        info, result = site.opened(ref)
        ranked = data.ranked_conversations(result)
        levels = data.conversation_levels(result, ranked)
        return html(
            request, pages.conversations_page(ui_for(request), info, result, ranked, levels)
        )

    @app.get("/api/runs/{ref}/conversations")
    def api_conversations(ref: str) -> dict[str, Any]:
        return data.conversations_json(*site.opened(ref))

    @app.get("/runs/{ref}/conversations/{conversation:path}", response_class=HTMLResponse)
    def conversation(request: Request, ref: str, conversation: str) -> HTMLResponse:
        info, result = site.opened(ref)
        found = site.get_conversation(info, conversation)
        return html(request, pages.conversation_page(ui_for(request), info, result, found))

    @app.get("/api/runs/{ref}/conversations/{conversation:path}")
    def api_conversation(ref: str, conversation: str) -> dict[str, Any]:
        info, result = site.opened(ref)
        return data.conversation_json(info, result, site.get_conversation(info, conversation))


def _add_trend_routes(app: FastAPI, site: _Site) -> None:
    """The metrics' trends over the runs shown, as a page and under /api/."""

    @app.get("/trends", response_class=HTMLResponse)
    def trends(request: Request, runs: Runs, metric: str | None = None) -> HTMLResponse:
        found, known = site.trend_data(metric, runs)
        filters = {"metric": metric, **runs.as_dict()}
        body = trends_page(ui_for(request), found, filters, known, site.gate_source)
        return html(request, body)

    @app.get("/api/trends")
    def api_trends(runs: Runs, metric: str | None = None) -> dict[str, Any]:
        found, _ = site.trend_data(metric, runs)
        return {"gate": site.gate_source, **found}


def _add_compare_routes(app: FastAPI, site: _Site) -> None:
    """Two runs compared: the dashboard's page, the report's own comparison and /api/."""

    @app.get("/compare", response_class=HTMLResponse, response_model=None)
    def compare(
        request: Request,
        base: str | None = None,
        candidate: str | None = None,
        a: str | None = None,
        b: str | None = None,
    ) -> HTMLResponse | RedirectResponse:
        base, candidate = base or a, candidate or b
        ticked = request.query_params.getlist("run")
        ui = ui_for(request)
        if base is None and candidate is None and len(ticked) == 2:
            older, newer = sorted((site.get_run(r) for r in ticked), key=lambda i: i.created_at)
            return RedirectResponse(f"/compare?base={older.id}&candidate={newer.id}", 303)
        if base is None or candidate is None:
            message = ui.t("tick_two", n=len(ticked))
            return html(request, pages.message_page(ui, ui.t("compare_two"), message), 400)
        before, after = site.pair(base, candidate)
        paired = data.compare_json(before, after, site.load(before), site.load(after))
        return html(request, compare_page(ui, before, after, paired))

    @app.get("/compare/report", response_class=HTMLResponse)
    def compare_report(request: Request, base: str, candidate: str) -> HTMLResponse:
        """The report's own comparison (as ``ragmeter report --compare`` writes it)."""
        before, after = site.pair(base, candidate)
        old, new = site.load(before), site.load(after)
        ui = ui_for(request)
        report = render_html(
            new,
            compare=old,
            findings=diagnose(new),
            compare_findings=diagnose(old),
            title=ui.t("compare_title", candidate=after.name, baseline=before.name),
        )
        crumbs = [(before.name, f"/runs/{before.id}"), (after.name, f"/runs/{after.id}")]
        record = pages.compare_record(ui, before, after)
        return html(request, pages.with_topbar(ui, report, crumbs, record))

    @app.get("/api/compare")
    def api_compare(a: str, b: str) -> dict[str, Any]:
        before, after = site.pair(a, b)
        return data.compare_json(before, after, site.load(before), site.load(after))
