"""Credentials kept out of every message: URLs redacted, a URL's secrets found in a text.
Apart from the HTTP client so that reading the run store does not load it."""

from __future__ import annotations

import re
from urllib.parse import unquote_plus


def redact_url(url: str) -> str:
    """``url`` without credentials: the ``user:password@`` part is dropped, the value of
    every secret-looking query parameter (``key``, ``api-key``, ``token``, ``password``,
    ``sig``, ``X-Amz-Signature``...) becomes ``***`` and so does the whole fragment (it is
    never sent to a server, and a key put there has no parameter name to be known by:
    ``#sk-...``, ``#key:...``); the rest is kept as written (``?api-version=...``
    included), so a URL without credentials comes back as is.

    >>> redact_url("postgresql+psycopg://u:p@h:5432/db?sslmode=require&password=x")
    'postgresql+psycopg://h:5432/db?sslmode=require&password=***'
    >>> redact_url("https://gw.example/v1?api-key=abc&api-version=2024-06-01#sk-abc")
    'https://gw.example/v1?api-key=***&api-version=2024-06-01#***'
    """
    scheme, has_scheme, rest = url.partition("://")
    if not has_scheme or not _SCHEME.fullmatch(scheme):
        scheme, has_scheme, rest = "", "", url
    rest = rest[_userinfo_end(rest, has_scheme=bool(has_scheme)) :]
    rest, hash_mark, fragment = rest.partition("#")
    rest, question_mark, query = rest.partition("?")
    cleaned = f"{scheme}://{rest}" if has_scheme else rest
    if question_mark:
        cleaned += "?" + _redact_params(query)
    if hash_mark:
        cleaned += "#***" if fragment else "#"
    return cleaned


def url_secrets(url: str) -> list[str]:
    """The credentials in ``url`` as they may show up in a message: the user info (and its
    password) and the values of secret-looking parameters, as written and percent-decoded.
    Strings shorter than 4 characters are left out (replacing them would garble messages)."""
    scheme, has_scheme, rest = url.partition("://")
    if not has_scheme or not _SCHEME.fullmatch(scheme):
        has_scheme, rest = "", url
    end = _userinfo_end(rest, has_scheme=bool(has_scheme))
    found = []
    if end:
        userinfo = rest[: end - 1]
        found += [userinfo, userinfo.partition(":")[2]]
        rest = rest[end:]
    rest, _, fragment = rest.partition("#")
    for part in re.split(r"[?&]", rest)[1:]:
        name, eq, value = part.partition("=")
        if eq and _is_secret_param(name):
            found.append(value)
    if fragment:  # redact_url hides all of it: the fragment, its values and bare items
        items = [item.partition("=") for item in fragment.split("&")]
        found += [fragment, *(value if eq else name for name, eq, value in items)]
    decoded = [unquote_plus(secret) for secret in found]
    unique = dict.fromkeys(s for s in [*found, *decoded] if len(s) >= 4)
    return sorted(unique, key=len, reverse=True)  # longest first: no partial replacement


def redact_secrets(text: str, *urls: str) -> str:
    """``text`` with the credentials of ``urls`` replaced by ``***`` wherever they appear,
    and every URL in it redacted (:func:`redact_url`): for error messages that may quote
    a URL, or what an endpoint said about one."""
    for url in urls:
        for secret in url_secrets(url):
            text = text.replace(secret, "***")
    return _URL_IN_TEXT.sub(lambda match: redact_url(match.group(0)), text)


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s\"'<>`]+")
#: Query parameters whose value is a secret: these names, or names containing these words.
_SECRET_PARAMS = frozenset({"sig", "pass", "pw", "code", "auth"})
_SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "pwd", "signature", "credential")


def _is_secret_param(name: str) -> bool:
    name = unquote_plus(name).strip().lower().replace("-", "_")
    return name in _SECRET_PARAMS or any(word in name for word in _SECRET_WORDS)


def _redact_params(query: str) -> str:
    """``a=1&key=s`` -> ``a=1&key=***``; anything else kept exactly as written."""
    items = []
    for item in query.split("&"):
        name, eq, value = item.partition("=")
        items.append(f"{name}=***" if eq and value and _is_secret_param(name) else item)
    return "&".join(items)


def _userinfo_end(rest: str, *, has_scheme: bool = True) -> int:
    """Where the host starts in ``rest`` (a URL after its ``scheme://``, or a string that
    has none): just after the ``user:password@`` part, 0 when there is none. Generous on
    purpose: a password with an unescaped ``@``, ``/``, ``?`` or ``#`` in it (SQLAlchemy
    takes them) is still cut off, and so is everything up to an ``@`` in a malformed URL."""
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    first_at = rest.find("@")
    if first_at < 0:
        return 0
    port = authority.partition(":")[2]
    looks_like_password = not authority.startswith("[") and ":" in authority and not port.isdigit()
    if has_scheme and "@" not in authority and not looks_like_password:
        return 0
    query = rest.find("?", first_at)
    return rest.rfind("@", 0, query if query >= 0 else len(rest)) + 1
