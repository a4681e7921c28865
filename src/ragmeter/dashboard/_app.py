"""The dashboard web app (FastAPI): runs list, trends, run report, every sample,
comparisons, and a JSON API behind every page (``/api/...``, see docs/dashboard.md).

It reads the run store and renders pages on the server with the report's own markup, so a
run looks the same in the dashboard and in ``ragmeter report``. It listens on 127.0.0.1 by
default; anywhere else needs a token (checked in constant time; given once as ``?token=``,
then kept in a cookie, or sent as ``Authorization: Bearer``).

Against DNS rebinding (a page on ``attacker.example`` whose name is made to resolve to
127.0.0.1, so that the browser sends it the run data), a request's ``Host`` must name the
address the dashboard listens on, with its port or none, else it gets ``421``: for a
loopback address, ``localhost``, ``127.0.0.1`` and ``[::1]`` (and the address itself);
for a wildcard address (``0.0.0.0``, ``::``) the loopback names, or any name when a token
protects it; plus the names given as ``allowed_hosts`` (``--allowed-host``). A request that
can change state (any method but GET, HEAD and OPTIONS) that carries an ``Origin``, or a
``Referer`` when it has no Origin, must come from the dashboard itself (that address, or
one the Host rules allow), else it gets ``403``: a page elsewhere cannot post to it.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from urllib.parse import urlsplit

from fastapi import FastAPI, Request
from fastapi.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    Response,
)

from ragmeter.dashboard import _i18n as i18n
from ragmeter.dashboard import _pages as pages
from ragmeter.dashboard._routes import add_routes
from ragmeter.gate import GateRules
from ragmeter.results import EvaluationResult
from ragmeter.store import RunInfo, Store

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


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
WILDCARD_ADDRESSES = frozenset({"", "0.0.0.0", "::", "[::]"})
#: Methods that cannot change state; every other one has its Origin checked.
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_PORT = re.compile(r"[0-9]{1,5}")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _host_name(host: str) -> str:
    """``host`` as it appears in a Host header: lower case, IPv6 in brackets, no final dot."""
    name = host.strip().lower().rstrip(".")
    return f"[{name}]" if ":" in name and not name.startswith("[") else name


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (any case, brackets or a final
    dot allowed).

    >>> is_loopback("127.0.0.1"), is_loopback("LocalHost."), is_loopback("[::1]")
    (True, True, True)
    >>> is_loopback("0.0.0.0"), is_loopback("example.org")
    (False, False)
    """
    name = host.strip().lower().strip("[]").rstrip(".")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def split_authority(authority: str) -> tuple[str, int | None] | None:
    """``(name, port)`` of a Host header (or a URL's authority), the name as
    :func:`_host_name` writes it; None when it is not a plain ``name[:port]``.

    >>> split_authority("LocalHost:8321"), split_authority("[::1]"), split_authority("a@b:1")
    (('localhost', 8321), ('[::1]', None), None)
    """
    text = authority.strip().lower()
    if not text or re.search(r"[\s/\\@?#]", text):
        return None
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            return None
        name, rest = text[: end + 1], text[end + 1 :]
    else:
        name, colon, port = text.partition(":")
        rest = colon + port
    port_number: int | None = None
    if rest:
        if not rest.startswith(":") or not _PORT.fullmatch(rest[1:]):
            return None
        port_number = int(rest[1:])
    name = name.rstrip(".")
    return (name, port_number) if name and name != "[]" else None


class HostPolicy:
    """Which ``Host`` names a dashboard listening on ``host``:``port`` answers to, and which
    origins may send it requests that change state (see the module docstring).

    >>> policy = HostPolicy("127.0.0.1", 8321)
    >>> policy.allows_host("localhost:8321"), policy.allows_host("attacker.example:8321")
    (True, False)
    >>> policy.allows_origin("http://[::1]:8321", "127.0.0.1:8321")
    True
    >>> policy.allows_origin("http://attacker.example", "127.0.0.1:8321")
    False
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int | None = None,
        *,
        token: str | None = None,
        allowed_hosts: Iterable[str] = (),
    ) -> None:
        #: The port listened on; None (or 0, a port chosen when it starts): any port.
        self.port = port or None
        extra: list[tuple[str, int | None]] = []
        for given in allowed_hosts:
            bare_ipv6 = given.count(":") > 1 and not given.startswith("[")
            parsed = split_authority(f"[{given}]" if bare_ipv6 else given)
            if parsed is None:
                raise ValueError(f"not a host name (with an optional port): {given!r}")
            extra.append(parsed)
        bound = _host_name(host)
        names: set[str] = set()
        if bound in WILDCARD_ADDRESSES:
            names.update(LOOPBACK_NAMES)
        elif is_loopback(host):
            names.update((*LOOPBACK_NAMES, bound))
        else:
            names.add(bound)
        self.entries: set[tuple[str, int | None]] = {(n, None) for n in names} | set(extra)
        #: A wildcard address behind a token, no names given: the token is the protection.
        self.any_host = bound in WILDCARD_ADDRESSES and bool(token) and not extra

    def _allows(self, name: str, port: int | None) -> bool:
        for allowed, allowed_port in self.entries:
            if allowed != name:
                continue
            if allowed_port is not None:
                if port == allowed_port:
                    return True
            elif port is None or self.port is None or port == self.port:
                return True
        return False

    def allows_host(self, host_header: str | None) -> bool:
        """Whether a request with this ``Host`` is for this dashboard."""
        parsed = split_authority(host_header or "")
        if parsed is None:
            return False
        return self.any_host or self._allows(*parsed)

    def allows_origin(self, url: str, host_header: str | None) -> bool:
        """Whether ``url`` (an Origin or a Referer) is this dashboard: the request's own host
        and port, or another name the Host rules allow, over http or https."""
        try:
            parts = urlsplit(url.strip())
        except ValueError:
            return False
        if parts.scheme not in _DEFAULT_PORTS:
            return False  # "null" (a sandboxed page, a file), or another scheme
        parsed = split_authority(parts.netloc)
        if parsed is None:
            return False
        name, port = parsed
        port = port if port is not None else _DEFAULT_PORTS[parts.scheme]
        own = split_authority(host_header or "")
        if own is not None and own[0] == name and own[1] in (None, port):
            return True
        return not self.any_host and self._allows(name, port)


def create_app(
    store: Store,
    *,
    token: str | None = None,
    host: str = "127.0.0.1",
    port: int | None = None,
    allowed_hosts: Iterable[str] = (),
    gate: GateRules | None = None,
    gate_source: str | None = None,
) -> FastAPI:
    """The dashboard as an ASGI app over ``store``; with ``token``, every request needs it.

    ``host`` and ``port``: where it listens (``port`` None: any); requests must name it in
    their ``Host`` (or one of ``allowed_hosts``), see the module docstring. ``gate``: the
    rules whose thresholds the trend charts draw (read from the file ``gate_source``).
    """
    app = FastAPI(title="ragmeter", docs_url=None, redoc_url=None, openapi_url=None)
    policy = HostPolicy(host, port, token=token, allowed_hosts=allowed_hosts)

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
            if request.url.path.startswith("/api/"):
                return JSONResponse({"error": "token needed"}, status_code=401)
            t = i18n.Translator(
                i18n.pick_language(
                    request.query_params.get("lang"),
                    request.cookies.get(i18n.COOKIE),
                    request.headers.get("accept-language"),
                )
            )
            return HTMLResponse(
                pages.message_page(pages.Ui(t), t("token_needed"), t("token_hint")),
                status_code=401,
            )
        response = await call_next(request)
        if request.query_params.get("token"):
            response.set_cookie(COOKIE, token, httponly=True, samesite="strict")
        return response

    # Added last, so it runs first: a request for another host is refused before anything.
    @app.middleware("http")
    async def check_host_and_origin(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        host_header = request.headers.get("host")
        if not policy.allows_host(host_header):
            return PlainTextResponse(
                "Misdirected request: the Host is not this dashboard's address (open it by the "
                "address it listens on, or start it with --allowed-host NAME).\n",
                status_code=421,
            )
        if request.method not in SAFE_METHODS:
            source = request.headers.get("origin") or request.headers.get("referer")
            if source is not None and not policy.allows_origin(source, host_header):
                return PlainTextResponse(
                    "Cross-origin request refused: it does not come from the dashboard.\n",
                    status_code=403,
                )
        return await call_next(request)

    add_routes(app, store, _Loaded(store), gate, gate_source)
    return app
