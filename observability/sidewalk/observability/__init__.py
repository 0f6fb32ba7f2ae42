"""Metrics, health and readiness for the long-running processes.

``metrics``: Prometheus collectors that read existing state at scrape time
(ingest's counters and queue, the time-series store, the clock engine, the
case records, a pole's buffer), so no hot path carries metric calls.
``health``: liveness and readiness checks. ``server``: the small loopback
HTTP server with ``/metrics``, ``/healthz`` and ``/readyz``. ``process``:
what each process (ingest, analytics, pole) registers. See
``docs/observability.md``.
"""
