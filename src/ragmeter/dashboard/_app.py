"""The dashboard web app (FastAPI): runs list, run report, every sample, comparisons.

It reads the run store and renders pages on the server with the report's own markup, so a
run looks the same in the dashboard and in ``ragmeter report``. It listens on 127.0.0.1 by
default; anywhere else needs a token (checked in constant time; given once as ``?token=``,
then kept in a cookie, or sent as ``Authorization: Bearer``).
"""

from __future__ import annotations

import hmac
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from ragmeter.dashboard import _pages as pages
from ragmeter.diagnosis import diagnose
from ragmeter.report import render_html
from ragmeter.results import EvaluationResult
from ragmeter.store import RunInfo, RunNotFoundError, Store

COOKIE = "ragmeter_token"
#: Runs kept loaded between requests (a run's samples are read once, not per page).
CACHED_RUNS = 8


class _Loaded:
    """A small cache of loaded runs: stored runs never change, so a load can be reused."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._runs: OrderedDict[str, EvaluationResult] = OrderedDict()

    def __call__(self, info: RunInfo) -> EvaluationResult:
        result = self._runs.pop(info.id, None) or self.store.load(info.id)
        self._runs[info.id] = result
        while len(self._runs) > CACHED_RUNS:
            self._runs.popitem(last=False)
        return result


def create_app(store: Store, *, token: str | None = None) -> FastAPI:
    """The dashboard as an ASGI app over ``store``; with ``token``, every request needs it."""
    app = FastAPI(title="ragmeter", docs_url=None, redoc_url=None, openapi_url=None)
    load = _Loaded(store)

    @app.middleware("http")
    async def require_token(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        if token is None:
            return await call_next(request)
        given = (
            request.query_params.get("token")
            or request.cookies.get(COOKIE)
            or request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        )
        if not given or not hmac.compare_digest(given.encode(), token.encode()):
            return HTMLResponse(
                pages.message_page("Token needed", "Open the address with ?token=YOUR_TOKEN."),
                status_code=401,
            )
        response = await call_next(request)
        if request.query_params.get("token"):
            response.set_cookie(COOKIE, token, httponly=True, samesite="strict")
        return response

    def run_or_404(ref: str) -> RunInfo | HTMLResponse:
        try:
            return store.get(ref)
        except RunNotFoundError as error:
            return HTMLResponse(pages.message_page("No such run", str(error)), status_code=404)

    @app.get("/health")
    def health() -> JSONResponse:
        return JSONResponse({"ok": True, "runs": len(store.list(limit=None))})

    @app.get("/", response_class=HTMLResponse)
    def runs(name: str | None = None, tag: str | None = None) -> HTMLResponse:
        found = store.list(name=name or None, tag=tag or None, limit=200)
        return HTMLResponse(pages.runs_page(found, name, tag))

    @app.get("/runs/{ref}", response_class=HTMLResponse)
    def run(ref: str) -> HTMLResponse:
        info = run_or_404(ref)
        if isinstance(info, HTMLResponse):
            return info
        result = load(info)
        report = render_html(result, findings=diagnose(result), title=info.name)
        crumbs = [("All samples", f"/runs/{info.id}/samples")]
        return HTMLResponse(pages.with_topbar(report, crumbs, pages.run_record(info)))

    @app.get("/runs/{ref}/samples", response_class=HTMLResponse)
    def samples(ref: str, page: int = 1) -> HTMLResponse:
        info = run_or_404(ref)
        if isinstance(info, HTMLResponse):
            return info
        return HTMLResponse(pages.samples_page(info, load(info), page))

    @app.get("/runs/{ref}/samples/{index}", response_class=HTMLResponse)
    def sample(ref: str, index: int) -> HTMLResponse:
        info = run_or_404(ref)
        if isinstance(info, HTMLResponse):
            return info
        result = load(info)
        if not 0 <= index < len(result):
            message = f"run {info.name} has samples 0 to {len(result) - 1}"
            return HTMLResponse(pages.message_page("No such sample", message), status_code=404)
        return HTMLResponse(pages.sample_page(info, result, index))

    @app.get("/compare", response_class=HTMLResponse, response_model=None)
    def compare(
        request: Request, base: str | None = None, candidate: str | None = None
    ) -> HTMLResponse | RedirectResponse:
        ticked = request.query_params.getlist("run")
        if base is None and candidate is None and len(ticked) == 2:
            infos = [run_or_404(ref) for ref in ticked]
            for info in infos:
                if isinstance(info, HTMLResponse):
                    return info
            found = [info for info in infos if not isinstance(info, HTMLResponse)]
            older, newer = sorted(found, key=lambda i: i.created_at)
            return RedirectResponse(f"/compare?base={older.id}&candidate={newer.id}", 303)
        if base is None or candidate is None:
            message = f"Tick exactly two runs to compare ({len(ticked)} ticked)."
            return HTMLResponse(pages.message_page("Compare two runs", message), status_code=400)
        before, after = run_or_404(base), run_or_404(candidate)
        for info in (before, after):
            if isinstance(info, HTMLResponse):
                return info
        assert isinstance(before, RunInfo) and isinstance(after, RunInfo)
        old, new = load(before), load(after)
        report = render_html(
            new,
            compare=old,
            findings=diagnose(new),
            compare_findings=diagnose(old),
            title=f"{after.name} vs {before.name}",
        )
        crumbs = [(before.name, f"/runs/{before.id}"), (after.name, f"/runs/{after.id}")]
        return HTMLResponse(pages.with_topbar(report, crumbs, pages.compare_record(before, after)))

    return app
