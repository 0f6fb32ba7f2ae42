"""``/metrics``, ``/healthz`` and ``/readyz`` on the dashboard's FastAPI app.

The health routes are open (they say only "ok" or which component is down).
``/metrics`` needs no login from the machine itself and a bearer token
(``SIDEWALK_METRICS_TOKEN``) from anywhere else. A loopback request that
carries a proxy's forwarding header came from outside through a reverse
proxy on this machine, so it needs the token too. Its one collector counts
notices in the case records at scrape time (``docs/observability.md``).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections import Counter
from collections.abc import Iterable
from typing import Final

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector

from sidewalk.core.health import database_reachable, run_checks
from sidewalk.storage.cases import CaseStore

TOKEN_ENV: Final = "SIDEWALK_METRICS_TOKEN"
_FORWARDED: Final = ("forwarded", "x-forwarded-for", "x-real-ip")


class CaseCollector(Collector):
    """Notices in the case records, by kind and by status."""

    def __init__(self, cases: CaseStore) -> None:
        self._cases = cases

    def collect(self) -> Iterable[Metric]:
        # Counted by the database: a scrape never loads the notices' bodies.
        counts = self._cases.notices.counts()
        by_kind: Counter[str] = Counter()
        by_status: Counter[str] = Counter()
        for (kind, status), n in counts.items():
            by_kind[kind] += n
            by_status[status] += n
        issued = CounterMetricFamily("sidewalk_notices", "Notices issued, by kind", labels=["kind"])
        for kind, count in sorted(by_kind.items()):
            issued.add_metric([kind], count)
        yield issued
        status_family = GaugeMetricFamily(
            "sidewalk_notices_by_status", "Notices by current status", labels=["status"]
        )
        for name, count in sorted(by_status.items()):
            status_family.add_metric([name], count)
        yield status_family


def dashboard_collectors(
    cases: CaseStore, registry: CollectorRegistry | None = None
) -> CollectorRegistry:
    """The dashboard's registry: notices from the case records."""
    registry = registry or CollectorRegistry()
    registry.register(CaseCollector(cases))
    return registry


def _loopback(host: str | None) -> bool:
    if host is None:
        return False
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def metrics_allowed(request: Request, token: str | None) -> bool:
    """Loopback without a proxy's forwarding header, or the right bearer token."""
    if _loopback(request.client.host if request.client else None) and not any(
        h in request.headers for h in _FORWARDED
    ):
        return True
    if not token:
        return False
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.encode(), token.encode())


def add_observability_routes(
    app: FastAPI,
    cases: CaseStore,
    *,
    metrics_token: str | None = None,
    registry: CollectorRegistry | None = None,
) -> None:
    """Add the three routes; ``metrics_token`` defaults to ``SIDEWALK_METRICS_TOKEN``."""
    token = metrics_token if metrics_token is not None else os.environ.get(TOKEN_ENV)
    metrics = registry or dashboard_collectors(cases)
    ready = {"database": database_reachable(cases)}

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> JSONResponse:
        # Answering at all is the dashboard's liveness: it has no worker threads.
        return JSONResponse({"status": "ok", "checks": {}}, headers={"Cache-Control": "no-store"})

    @app.get("/readyz", include_in_schema=False)
    def readyz() -> JSONResponse:
        report = run_checks(ready)
        return JSONResponse(
            report.body(), report.status_code, headers={"Cache-Control": "no-store"}
        )

    @app.get("/metrics", include_in_schema=False)
    def prometheus(request: Request) -> Response:
        if not metrics_allowed(request, token):
            return Response(
                "metrics: from this machine, or with Authorization: Bearer <token>\n",
                403,
                media_type="text/plain",
                headers={"WWW-Authenticate": "Bearer"},
            )
        encoder, content_type = choose_encoder(request.headers.get("accept", ""))
        return Response(
            encoder(metrics), headers={"Content-Type": content_type, "Cache-Control": "no-store"}
        )
