"""``/metrics`` with pre-rendered per-pole lines is still exactly prometheus_client's
exposition (each family once, samples together, label values escaped), parsed by
prometheus_client's parsers and by VictoriaMetrics' own, and gzipped when asked."""

from __future__ import annotations

import gzip
import json
import random
import sqlite3
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.openmetrics import parser as openmetrics_parser
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

from sidewalk.core.contract import WeatherReading
from sidewalk.core.observability import (
    ObservabilityServer,
    RenderedFamily,
    exposition,
    go_float,
    go_seconds,
    labels_text,
    sample_line,
)
from sidewalk.ingest.metrics import StoreCollector
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from tests.observability.scrape import eventually

T0 = 1_764_460_800_000
# The OpenMetrics parser (Prometheus's own for that format), typed.
openmetrics_families: Callable[[str], Iterable[Metric]] = (
    openmetrics_parser.text_string_to_metric_families
)
# Device ids a pole could not send, written straight into the table: every escape at once.
AWKWARD = ['pole-"quoted"', "pole\\back", "pole\nnewline", "póle-ü"]
# Prometheus 3, vmagent, Prometheus 2, OpenMetrics 0.0.1 only (text), dotted names, none.
ACCEPTS = [
    "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,"
    "text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
    "text/plain;version=0.0.4;q=1,*/*;q=0.1",
    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
    "text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
    "application/openmetrics-text; version=0.0.1",
    "text/plain;version=1.0.0;escaping=dots",
    "",
]


class Mixed(Collector):
    """Plain families around rendered ones (a counter among them), awkward labels."""

    def collect(self) -> Iterable[Metric]:
        yield CounterMetricFamily("t_plain", "before", value=3)
        rows = [(d, float(i) * 1e9 + 0.5) for i, d in enumerate(["a", *AWKWARD])]
        for name, typ, sample in (("t_gauge", "gauge", "t_gauge"), ("t_c", "counter", "t_c_total")):
            yield RenderedFamily(
                name, f'doc "{name}" with \\ and\nnewline', typ,
                lines=b"".join(sample_line(sample, labels_text({"device": d}), v) for d, v in rows),
                label_names=["device"],
                # Ignored: a default argument binds the loop variable in the lambda.
                samples=lambda sample=sample: [Sample(sample, {"device": d}, v) for d, v in rows],  # type: ignore[misc]
            )  # fmt: skip
        yield CounterMetricFamily("t_after", "after", labels=["x"])


def test_quick_value_formatting_is_prometheus_clients() -> None:
    go: Callable[[float], str] = floatToGoString
    rng = random.Random(17)
    ms = [rng.randrange(10**12, 10**13) for _ in range(3000)]
    ms += [10**12, 10**13 - 1, 1_800_000_000_000, 1_796_173_032_770, 999_999_999_999, 10**13]
    assert [go_seconds(m) for m in ms] == [go(m / 1000) for m in ms]
    ints = [rng.randrange(-(10**7), 10**7) for _ in range(3000)] + [0, 999_999, 10**6, -(10**6)]
    assert [go_float(i) for i in ints] == [go(i) for i in ints]
    assert [go_float(x) for x in (0.5, -2.25, float("inf"), 1e21)] == [
        "0.5",
        "-2.25",
        "+Inf",
        "1e+21",
    ]


def reference(registry: CollectorRegistry, accept: str) -> bytes:
    """prometheus_client's own exposition of the same registry (samples, not lines)."""
    encoder, _ = choose_encoder(accept)
    return encoder(registry)


@pytest.mark.parametrize("accept", ACCEPTS)
def test_rendered_lines_give_prometheus_clients_exposition_byte_for_byte(accept: str) -> None:
    registry = CollectorRegistry()
    registry.register(Mixed())
    Histogram("t_hist_seconds", "a histogram", registry=registry).observe(0.2)
    body, content_type = exposition(registry, accept)
    assert content_type == choose_encoder(accept)[1]
    assert body == reference(registry, accept)
    types = [line for line in body.splitlines() if line.startswith(b"# TYPE ")]
    assert len(types) == len(set(types)) >= 5  # each family once
    if content_type.startswith("application/openmetrics-text"):
        assert body.endswith(b"\n# EOF\n")
        assert body.count(b"# EOF") == 1
        families = {f.name: f for f in openmetrics_families(body.decode())}
        assert {s.labels["device"] for s in families["t_c"].samples} == {"a", *AWKWARD}
    else:
        families = {f.name: f for f in text_string_to_metric_families(body.decode())}
    if "dots" not in accept:
        values = [s.value for s in families["t_gauge"].samples]
        assert values == [i * 1e9 + 0.5 for i in range(5)]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteTimeSeriesStore]:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    store.write_batch(
        [WeatherReading(device=f"pole-{i}", seq=i, ts=T0, air_temp_c=-3.0) for i in (1, 2, 3)]
    )
    db = sqlite3.connect(store.path)
    with db:  # the awkward ids, one never heard from (no last-seen sample)
        db.executemany(
            "INSERT INTO devices (device, max_seq, status, last_seen_at) VALUES (?, 7, ?, ?)",
            [(d, "online", None if i == 0 else T0 + i) for i, d in enumerate(AWKWARD)],
        )
    db.close()
    yield store
    store.close()


def test_the_store_collectors_scrape_is_its_samples_exposition_before_and_after_a_change(
    store: SqliteTimeSeriesStore,
) -> None:
    collector = StoreCollector(store.path)
    registry = CollectorRegistry()
    registry.register(collector)
    try:
        for _ in range(2):  # rendered, then as kept
            for accept in ACCEPTS:
                assert exposition(registry, accept)[0] == reference(registry, accept)
        store.write_batch([WeatherReading(device="pole-2", seq=9, ts=T0 + 1, air_temp_c=-3.0)])
        body = exposition(registry, ACCEPTS[0])[0]
        assert body == reference(registry, ACCEPTS[0])
        families = {f.name: f for f in openmetrics_families(body.decode())}
        top = {s.labels["device"]: s.value for s in families["sidewalk_device_max_seq"].samples}
        assert top == {"pole-1": 1, "pole-2": 9, "pole-3": 3} | dict.fromkeys(AWKWARD, 7)
        seen = families["sidewalk_device_last_seen_timestamp_seconds"].samples
        assert AWKWARD[0] not in {s.labels["device"] for s in seen}
    finally:
        collector.close()


def test_metrics_are_gzipped_when_the_scraper_asks(store: SqliteTimeSeriesStore) -> None:
    registry = CollectorRegistry()
    collector = StoreCollector(store.path)
    registry.register(collector)
    server = ObservabilityServer(registry, live={}, ready={}, port=0)
    server.start()
    try:
        bodies = {}
        for encoding in ("gzip", "identity"):
            request = urllib.request.Request(
                f"{server.url}/metrics", headers={"Accept-Encoding": encoding}
            )
            with urllib.request.urlopen(request, timeout=5) as response:
                assert response.headers["Vary"] == "Accept-Encoding"
                bodies[response.headers["Content-Encoding"]] = response.read()
    finally:
        server.stop()
        collector.close()
    assert set(bodies) == {"gzip", None}
    assert gzip.decompress(bodies["gzip"]) == bodies[None] == generate_latest(registry)


@pytest.mark.services
def test_victoria_metrics_reads_the_scrape(victoria: str, store: SqliteTimeSeriesStore) -> None:
    # /api/v1/import/prometheus runs the parser VictoriaMetrics scrapes with.
    collector = StoreCollector(store.path)
    registry = CollectorRegistry()
    registry.register(collector)
    try:
        body = exposition(registry, ACCEPTS[0])[0]
    finally:
        collector.close()
    job = f"expo{time.time_ns()}"
    request = urllib.request.Request(
        f"{victoria}/api/v1/import/prometheus?extra_label=job={job}",
        data=gzip.compress(body),
        headers={"Content-Encoding": "gzip"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 204
    query = urllib.parse.urlencode({"match[]": f'sidewalk_device_max_seq{{job="{job}"}}'})
    top: dict[str, float] = {}

    def exported() -> bool:
        # New series become searchable a moment after the import returns.
        urllib.request.urlopen(f"{victoria}/internal/force_flush", timeout=10).close()
        with urllib.request.urlopen(f"{victoria}/api/v1/export?{query}", timeout=10) as response:
            lines = response.read().decode().splitlines()
        top.clear()
        top.update((s["metric"]["device"], s["values"][-1]) for s in map(json.loads, lines))
        return len(top) == 7

    assert eventually(exported)
    assert top == {"pole-1": 1, "pole-2": 2, "pole-3": 3} | dict.fromkeys(AWKWARD, 7)
