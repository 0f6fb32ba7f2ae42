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

A collector with thousands of series that seldom change (ingest's per-pole
families) yields ``RenderedFamily``: its sample lines rendered once when a
figure changed and kept as bytes, which ``exposition`` writes as they are
after prometheus_client's own HELP/TYPE lines (formatting is most of a large
scrape: ~35,000 instructions a sample). The body is gzipped when the scraper
accepts it (Prometheus and vmagent do): 0.9 MB of text is ~75 ms on a
100 Mbit/s link, its 44 KB gzip ~4 ms.
"""

from __future__ import annotations

import gzip
import hmac
import ipaddress
import json
import logging
import os
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Final

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder, gzip_accepted
from prometheus_client.metrics_core import Metric
from prometheus_client.openmetrics.exposition import (
    UNDERSCORES,
    escape_label_name,
    escape_metric_name,
)
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

from sidewalk.core.health import Check, run_checks

log = logging.getLogger(__name__)

DEFAULT_HOST: Final = "127.0.0.1"
TOKEN_ENV: Final = "SIDEWALK_METRICS_TOKEN"
_EOF: Final = b"# EOF\n"
# Level 1: ingest's 0.9 MB at 5,000 poles becomes 44 KB in ~3 ms; level 9
# (prometheus_client's) takes ~40 ms for 6 % less.
GZIP_LEVEL: Final = 1
# prometheus_client's float formatting (Go's), typed.
_go_float: Callable[[float], str] = floatToGoString


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


def host_header_ok(header: str | None, names: Collection[str] = ()) -> bool:
    """Whether a request's ``Host`` names this machine as a client on it would: an IP
    literal, ``localhost`` or one of ``names``. A DNS-rebinding page reaches a loopback
    port under its own domain name, which is none of these. No header (HTTP/1.0): yes."""
    if not header:
        return True
    host = header.strip().lower()
    if host.startswith("["):  # [::1]:9464
        host = host[1 : host.find("]")] if "]" in host else host
    elif host.count(":") == 1:
        host = host.partition(":")[0]
    if host == "localhost" or host in {n.lower() for n in names}:
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def bearer_ok(header: str | None, token: str | None) -> bool:
    """``Authorization: Bearer <token>`` with the right token (compared in constant time)."""
    if not token or not header:
        return False
    scheme, _, given = header.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.encode(), token.encode())


def label_value(value: str) -> str:
    """A label value escaped for both text formats (backslash, newline, double quote)."""
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def labels_text(labels: Mapping[str, str]) -> str:
    """``{name="value",...}`` as prometheus_client writes it (names sorted; "" for none)."""
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{label_value(v)}"' for k, v in sorted(labels.items())) + "}"


def go_float(value: float) -> str:
    """A sample value as prometheus_client writes it (Go's style: ``1.7644608e+09``);
    an integer under a million, most per-pole figures, without the general path."""
    if type(value) is int and -1_000_000 < value < 1_000_000:
        return f"{value}.0"
    return _go_float(value)


def go_seconds(ms: int) -> str:
    """Unix milliseconds as seconds, the same text as ``go_float(ms / 1000)``, quicker.

    From 2001 to 2286 (10-digit seconds) the exact decimal ms/1000 has 13 digits,
    fewer than a double holds, so ``repr`` gives it trailing zeros stripped, and Go's
    style moves the point after the first digit: 1796173032770 -> 1.79617303277e+09.
    """
    if type(ms) is int and 1_000_000_000_000 <= ms < 10_000_000_000_000:
        digits = str(ms).rstrip("0")
        return f"{digits[0]}.{digits[1:]}e+09" if len(digits) > 1 else f"{digits}e+09"
    return go_float(ms / 1000)


def sample_line(name: str, labels: str, value: float) -> bytes:
    """One exposition line, ``labels`` from ``labels_text``: the same bytes in the
    Prometheus text format and in OpenMetrics (no timestamp, no exemplar)."""
    return f"{name}{labels} {go_float(value)}\n".encode()


class RenderedFamily(Metric):
    """A metric family whose sample lines its collector rendered ahead of the scrape.

    ``lines`` is every sample, each from ``sample_line``: a counter's sample
    names end in ``_total``; no ``_created`` samples. ``exposition`` writes them
    as they are after the family's HELP/TYPE lines. ``samples`` builds ordinary
    samples only when something asks for them: ``generate_latest`` on the same
    registry, a scraper asking for an escaping that changes the names, a test.
    """

    def __init__(
        self,
        name: str,
        documentation: str,
        typ: str,
        *,
        lines: bytes,
        label_names: Sequence[str],
        samples: Callable[[], list[Sample]],
    ) -> None:
        self._build = samples
        self._built: list[Sample] | None = None
        super().__init__(name, documentation, typ)
        self._built = None  # Metric.__init__ assigned [] through the setter
        self.lines = lines
        self.label_names = tuple(label_names)

    @property
    def samples(self) -> list[Sample]:
        if self._built is None:
            self._built = self._build()
        return self._built

    @samples.setter
    def samples(self, value: list[Sample]) -> None:
        self._built = value

    def as_is(self, escaping: str) -> bool:
        """Whether the rendered lines are right for this escaping (names it leaves alone)."""
        sample_name = self.name + "_total" if self.type == "counter" else self.name
        return escape_metric_name(sample_name, escaping) == sample_name and all(
            escape_label_name(label, escaping) == label for label in self.label_names
        )


class _Families(Collector):
    """A list of families handed to prometheus_client's encoder as a collector."""

    def __init__(self, families: list[Metric]) -> None:
        self._families = families

    def collect(self) -> Iterable[Metric]:
        return self._families


def exposition(registry: Collector, accept: str = "") -> tuple[bytes, str]:
    """The ``/metrics`` body and content type for a scraper's ``Accept`` header.

    prometheus_client's encoder for that header (``choose_encoder``: the
    Prometheus text format or OpenMetrics), except that a ``RenderedFamily``'s
    lines are written as rendered after its HELP/TYPE: each family once, its
    samples together, "# EOF" once at the end for OpenMetrics.
    """
    encoder, content_type = choose_encoder(accept)
    keywords = getattr(encoder, "keywords", {})
    escaping = str(keywords.get("escaping", UNDERSCORES))
    eof = _EOF if content_type.startswith("application/openmetrics-text") else b""
    parts: list[bytes] = []
    pending: list[Metric] = []

    def flush() -> None:
        if pending:
            body = encoder(_Families(pending))
            parts.append(body[: len(body) - len(eof)] if eof else body)
            pending.clear()

    for family in registry.collect():
        if isinstance(family, RenderedFamily) and family.as_is(escaping):
            # The header from prometheus_client (an empty family), then the lines.
            pending.append(Metric(family.name, family.documentation, family.type, family.unit))
            flush()
            parts.append(family.lines)
        else:
            pending.append(family)
    flush()
    parts.append(eof)
    return b"".join(parts), content_type


class PortInUse(OSError):
    """The port the endpoints are to listen on cannot be bound (another program has it)."""

    def __init__(self, host: str, port: int, reason: str) -> None:
        super().__init__(f"port {port} on {host} is in use ({reason})")
        self.host, self.port, self.reason = host, port, reason


def port_problem(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on (as the endpoints bind it), or None.

    Checked before a service starts, so a port in use is one line at once rather than
    a traceback after the broker and the database are connected."""
    import socket

    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


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
        try:
            self._httpd = ThreadingHTTPServer((host, port), handler)
        except OSError as exc:
            raise PortInUse(host, port, exc.strerror or str(exc)) from exc
        self._httpd.daemon_threads = True
        self.host = host
        # The listen address, when a name, is a name this machine is reached by.
        self.host_names = frozenset({host.lower()})
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
                        "metrics: from this machine (by its address or localhost), or with"
                        f" Authorization: Bearer <{TOKEN_ENV}>\n"
                    ).encode()
                    self._send(403, "text/plain; charset=utf-8", body)
                    return
                try:
                    body, content_type = exposition(server.registry, self.headers.get("Accept", ""))
                except Exception as exc:
                    # Say why rather than drop the connection; Prometheus marks the target down.
                    log.exception("metrics collection failed")
                    body = f"collection failed: {type(exc).__name__}: {exc}\n".encode()
                    self._send(500, "text/plain; charset=utf-8", body)
                    return
                headers = {"Vary": "Accept-Encoding"}
                if gzip_accepted(self.headers.get("Accept-Encoding", "")):
                    body = gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0)
                    headers["Content-Encoding"] = "gzip"
                self._send(200, content_type, body, headers)
            elif path in {"/healthz", "/readyz"}:
                report = run_checks(server.live if path == "/healthz" else server.ready)
                body = json.dumps(report.body()).encode()
                self._send(report.status_code, "application/json", body)
            else:
                self._send(404, "text/plain; charset=utf-8", b"not found\n")

        def _may_scrape(self) -> bool:
            # Bound to loopback only this machine can connect; otherwise a
            # client off the machine needs the token. Without the token, the Host
            # must name this machine: a DNS-rebinding page in a browser here
            # connects from loopback but under its own domain name.
            if bearer_ok(self.headers.get("Authorization"), server.metrics_token):
                return True
            if not host_header_ok(self.headers.get("Host"), server.host_names):
                return False
            return server.open_metrics or is_loopback(self.client_address[0])

        def _send(
            self,
            code: int,
            content_type: str,
            body: bytes,
            headers: Mapping[str, str] | None = None,
        ) -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            # Scrapes every few seconds would drown the process's own log.
            log.debug("%s " + format, self.client_address[0], *args)

    return Handler
