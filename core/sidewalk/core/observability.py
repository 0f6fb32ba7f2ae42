"""``/metrics``, ``/healthz`` and ``/readyz`` on a small HTTP server for one process.

It binds loopback by default: the endpoints carry no owner data, but nothing
outside the machine needs them unless a Prometheus elsewhere is meant to
scrape (then bind the address it reaches, behind the firewall). Bound to
anything but loopback, ``/metrics`` is never served unauthenticated: a client
off the machine needs ``Authorization: Bearer <SIDEWALK_METRICS_TOKEN>``, and
without a token configured it gets 403 (``/healthz``, ``/readyz`` stay open:
they say only "ok" or which component is down).

Generic: each role registers its own collectors and checks (``sidewalk.ingest.metrics``,
``sidewalk.analytics.metrics``, ``sidewalk.edge.metrics``; the dashboard serves the
same three routes on its FastAPI app, ``sidewalk.dashboard.metrics``). In core
because the pole runs it too; prometheus-client is small and pure Python.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Final

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from sidewalk.core.health import Check, run_checks

log = logging.getLogger(__name__)

DEFAULT_HOST: Final = "127.0.0.1"
TOKEN_ENV: Final = "SIDEWALK_METRICS_TOKEN"


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` is a loopback address (``localhost`` counts; names otherwise do not)."""
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bearer_ok(header: str | None, token: str | None) -> bool:
    """``Authorization: Bearer <token>`` with the right token (compared in constant time)."""
    if not token or not header:
        return False
    scheme, _, given = header.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.encode(), token.encode())


@dataclass
class Observability:
    """One process's metrics registry and its two sets of checks."""

    registry: CollectorRegistry
    live: dict[str, Check] = field(default_factory=dict)
    ready: dict[str, Check] = field(default_factory=dict)

    def serve(
        self, host: str = DEFAULT_HOST, port: int = 0, *, metrics_token: str | None = None
    ) -> ObservabilityServer:
        """Start ``/metrics``, ``/healthz`` and ``/readyz`` on ``host:port`` (0 = any free)."""
        server = ObservabilityServer(
            self.registry, live=self.live, ready=self.ready, host=host, port=port,
            metrics_token=metrics_token,
        )  # fmt: skip
        server.start()
        return server


class ObservabilityServer:
    """Serves one registry and two sets of checks until ``stop()``.

    ``port=0`` takes a free port (read it back from ``port``). Off loopback,
    ``/metrics`` needs ``metrics_token`` (default: ``SIDEWALK_METRICS_TOKEN``)
    from every client that is not on this machine.
    """

    def __init__(
        self,
        registry: CollectorRegistry,
        *,
        live: Mapping[str, Check],
        ready: Mapping[str, Check],
        host: str = DEFAULT_HOST,
        port: int = 0,
        metrics_token: str | None = None,
    ) -> None:
        self.registry = registry
        self.metrics_token = metrics_token or os.environ.get(TOKEN_ENV) or None
        self.open_metrics = is_loopback(host)
        if not self.open_metrics and self.metrics_token is None:
            log.warning(
                "observability on %s: /metrics answers only this machine until %s is set",
                host, TOKEN_ENV,
            )  # fmt: skip
        self.live = dict(live)
        self.ready = dict(ready)
        handler = _handler(self)
        self._httpd = ThreadingHTTPServer((host, port), handler)
        self._httpd.daemon_threads = True
        self.host = host
        self.port = int(self._httpd.server_address[1])
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> None:
        """Serve on a daemon thread (returns at once)."""
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="observability-http", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(5)
            self._thread = None
        self._httpd.server_close()


def _handler(server: ObservabilityServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                if not self._may_scrape():
                    body = (
                        f"metrics: from this machine, or with Authorization: Bearer <{TOKEN_ENV}>\n"
                    ).encode()
                    self._send(403, "text/plain; charset=utf-8", body)
                    return
                encoder, content_type = choose_encoder(self.headers.get("Accept", ""))
                try:
                    body = encoder(server.registry)
                except Exception as exc:
                    # Say why rather than drop the connection; Prometheus marks the target down.
                    log.exception("metrics collection failed")
                    body = f"collection failed: {type(exc).__name__}: {exc}\n".encode()
                    self._send(500, "text/plain; charset=utf-8", body)
                    return
                self._send(200, content_type, body)
            elif path in {"/healthz", "/readyz"}:
                report = run_checks(server.live if path == "/healthz" else server.ready)
                body = json.dumps(report.body()).encode()
                self._send(report.status_code, "application/json", body)
            else:
                self._send(404, "text/plain; charset=utf-8", b"not found\n")

        def _may_scrape(self) -> bool:
            # Bound to loopback only this machine can connect; otherwise a
            # client off the machine needs the token.
            if server.open_metrics or is_loopback(self.client_address[0]):
                return True
            return bearer_ok(self.headers.get("Authorization"), server.metrics_token)

        def _send(self, code: int, content_type: str, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            # Scrapes every few seconds would drown the process's own log.
            log.debug("%s " + format, self.client_address[0], *args)

    return Handler
