"""Requests refused before the app reads them: bodies over their route's limit, and a
``Host`` that is not this server's (ASGI middlewares, outermost in the app).

Every route, the login route before any session included, has a limit: the
JSON routes a small one, the inspector's photo upload its 20 MB. A declared
``Content-Length`` over the route's limit is answered 413 without reading a
byte; a body with no length (chunked) is counted as it arrives and cut off
with 413 once it passes the limit. uvicorn stops reading the socket while the
app has not asked for more, so at most one network buffer is held either way.
A path and query longer than ``MAX_TARGET`` is answered 414 before any route
sees it (uvicorn itself reads a 100 kB query string whole).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any, Final

from sidewalk.core.observability import host_header_ok

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# A JSON body of the API: the largest (a print batch of 500 numbers) is a few kB.
DEFAULT_LIMIT: Final = 64 * 1024
# The longest address a page asks for (a print batch of 40 notice numbers) is about
# 1 kB; nginx's own default buffer for the request line is 8 kB (414 past it).
MAX_TARGET: Final = 8 * 1024
TOO_LONG_TARGET: Final = (
    "This address is longer than the dashboard accepts (8 KB); nothing of it was kept."
)


class _TooLarge(Exception):
    """Raised from ``receive`` once a streamed body passes its limit."""


def _kb(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MB" if limit >= 1024 * 1024 else f"{limit // 1024} KB"


def too_large_words(limit: int) -> str:
    return (
        f"This request is larger than the dashboard accepts here ({_kb(limit)}); "
        "nothing of it was kept."
    )


class BodyLimit:
    """Refuse a body over its route's limit with 413, before or while it is read.

    ``routes``: (path pattern, limit in bytes, words of the refusal) for the
    routes that take more (or less) than ``default``; the first match counts.
    """

    def __init__(
        self,
        app: ASGIApp,
        routes: Sequence[tuple[str, int, str]] = (),
        default: int = DEFAULT_LIMIT,
    ) -> None:
        self.app = app
        self.routes = [(re.compile(pattern), limit, words) for pattern, limit, words in routes]
        self.default = default

    def limit_for(self, path: str) -> tuple[int, str]:
        for pattern, limit, words in self.routes:
            if pattern.fullmatch(path):
                return limit, words
        return self.default, too_large_words(self.default)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        target = len(scope.get("raw_path") or b"") + len(scope.get("query_string", b""))
        if target > MAX_TARGET:
            await _refuse(send, TOO_LONG_TARGET, 414)
            return
        limit, words = self.limit_for(scope.get("path", ""))
        declared = dict(scope.get("headers", ())).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            await _refuse(send, words)
            return
        received = 0
        started = refused = answered = False

        async def counting_receive() -> Message:
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    refused = True
                    raise _TooLarge
            return message

        async def watching_send(message: Message) -> None:
            # Whatever the app makes of the cut-off body (FastAPI: a 400 "error parsing
            # the body"), the client is told it was too large, unless it was answered already.
            nonlocal started, answered
            if refused and not started:
                if not answered:
                    answered = True
                    await _refuse(send, words)
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, watching_send)
        except Exception:
            if not refused:
                raise
        if refused and not started and not answered:
            await _refuse(send, words)


async def _refuse(send: Send, words: str, status: int = 413) -> None:
    body = json.dumps({"detail": words}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                # The rest of the body is never read: the connection cannot be reused.
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class HostCheck:
    """Refuse (400) a request whose ``Host`` is not an IP address, ``localhost`` or one
    of ``names``: a DNS-rebinding page reaches the dashboard under its own domain."""

    def __init__(self, app: ASGIApp, names: Sequence[str] = ()) -> None:
        self.app = app
        self.names = tuple(names)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in {"http", "websocket"}:
            host = dict(scope.get("headers", ())).get(b"host", b"").decode("latin-1")
            if not host_header_ok(host, self.names):
                words = "This address is not one the dashboard is served under."
                body = json.dumps({"detail": words}).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 400,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
