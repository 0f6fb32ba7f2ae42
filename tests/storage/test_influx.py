"""The InfluxDB write path: pure mapping, Flux escaping, and a real VictoriaMetrics."""

from __future__ import annotations

import http.server
import json
import threading
import time
import urllib.parse
import urllib.request
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from influxdb_client.rest import ApiException

from sidewalk.core.contract import FrameRef, Reading, SnowMeasurement, WeatherReading
from sidewalk.storage.influx import (
    InfluxForwarder,
    InfluxWriteError,
    InfluxWriter,
    flux_range_query,
    flux_string,
    reading_to_point,
)
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from tests.harness.postgres import free_port

TS = 1_796_126_400_123
START = datetime(2026, 12, 1, tzinfo=UTC)
STOP = START + timedelta(days=1)


# ---------------------------------------------------------------- reading → point (pure)


def line_of(reading: Reading, site: str | None = None) -> str:
    # influxdb-client leaves Point unannotated.
    line: str = reading_to_point(reading, site).to_line_protocol()  # type: ignore[no-untyped-call]
    return line


def test_weather_reading_maps_to_line_protocol() -> None:
    # JSON delivers 12 for a float field; it must still be written as a float.
    reading = WeatherReading.model_validate(
        {"device": "pole-1", "seq": 7, "ts": TS, "snow_depth_mm": 12, "ground_temp_c": -1.5,
         "ground_probe_depth_mm": 300}
    )  # fmt: skip
    line = line_of(reading, site="clyman")
    assert line == (
        "weather,device=pole-1,site=clyman "
        f"ground_probe_depth_mm=300i,ground_temp_c=-1.5,seq=7i,snow_depth_mm=12 {TS}"
    )


def test_snow_and_frame_readings_tag_the_frontage() -> None:
    snow = SnowMeasurement(
        device="pole-1", seq=8, ts=TS, frontage="main-101", snow_cover_fraction=0.25,
        cleared_width_mm=1219.2, ice_suspected=True,
    )  # fmt: skip
    assert line_of(snow) == (
        "snow,device=pole-1,frontage=main-101 "
        f"cleared_width_mm=1219.2,ice_suspected=true,seq=8i,snow_cover_fraction=0.25 {TS}"
    )
    frame = FrameRef(device="pole-1", seq=9, ts=TS, sha256="b" * 64, bytes_len=1000)
    assert line_of(frame) == (
        f'frame,device=pole-1 bytes_len=1000i,seq=9i,sha256="{"b" * 64}" {TS}'
    )


# ---------------------------------------------------------------- Flux


def lex_flux(query: str) -> tuple[str, list[str]]:
    """Split Flux into code outside strings and the decoded string literals."""
    code: list[str] = []
    literals: list[str] = []
    escapes = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "$": "$"}
    i = 0
    while i < len(query):
        ch = query[i]
        if ch != '"':
            code.append(ch)
            i += 1
            continue
        value: list[str] = []
        i += 1
        while query[i] != '"':
            if query[i] == "\\":
                value.append(escapes[query[i + 1]])
                i += 2
            elif query.startswith("${", i):
                raise AssertionError(f"unescaped interpolation at {i}: {query!r}")
            else:
                value.append(query[i])
                i += 1
        literals.append("".join(value))
        i += 1
    return "".join(code), literals


INJECTIONS = [
    'a") |> drop()',
    'a\\") |> drop()',
    'a\\\\") |> drop() //',
    "${drop()}",
    '"\n|> drop()\n"',
    "ends with a backslash \\",
]


@pytest.mark.parametrize("evil", INJECTIONS)
def test_flux_query_escapes_every_string(evil: str) -> None:
    query = flux_range_query(evil, evil, evil, START, STOP, fields=[evil])
    code, literals = lex_flux(query)
    assert "drop" not in code
    assert literals == [evil] * 4


def test_flux_query_shape() -> None:
    query = flux_range_query("sidewalk", "snow", "pole-1", START, STOP, fields=["cleared_width_mm"])
    assert query == (
        'from(bucket: "sidewalk")\n'
        "  |> range(start: 2026-12-01T00:00:00.000000Z, stop: 2026-12-02T00:00:00.000000Z)\n"
        '  |> filter(fn: (r) => r._measurement == "snow")\n'
        '  |> filter(fn: (r) => r.device == "pole-1")\n'
        '  |> filter(fn: (r) => r._field == "cleared_width_mm")'
    )
    assert flux_string('say "hi"') == '"say \\"hi\\""'


def test_flux_query_refuses_naive_times_and_empty_ranges() -> None:
    with pytest.raises(ValueError, match="naive"):
        flux_range_query("b", "m", "d", datetime(2026, 1, 1), STOP)  # noqa: DTZ001
    with pytest.raises(ValueError, match="after"):
        flux_range_query("b", "m", "d", STOP, START)


# ---------------------------------------------------------------- real VictoriaMetrics


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as resp:
        body: bytes = resp.read()
        return body


def export_series(victoria: str, selector: str) -> dict[str, dict[str, Any]]:
    """Series matching ``selector`` from VictoriaMetrics' own export API, by name."""
    _get(f"{victoria}/internal/force_flush")
    query = urllib.parse.urlencode({"match[]": selector})
    lines = _get(f"{victoria}/api/v1/export?{query}").decode().splitlines()
    series = [json.loads(line) for line in lines if line.strip()]
    return {s["metric"]["__name__"]: s for s in series}


@pytest.mark.services
def test_readings_written_arrive_in_victoria_metrics(victoria: str) -> None:
    # Recent timestamps: VictoriaMetrics refuses samples far outside its retention window.
    base = int(time.time() * 1000) - 3_600_000
    weather = [
        WeatherReading(
            device="pole-vm", seq=i, ts=base + i * 1000, snow_depth_mm=i * 0.5, air_temp_c=-2.0
        )
        for i in range(250)
    ]
    snow = SnowMeasurement(
        device="pole-vm", seq=250, ts=base + 300_000, frontage="main-101",
        snow_cover_fraction=0.75, cleared_width_mm=1100.0, ice_suspected=False,
    )  # fmt: skip
    writer = InfluxWriter(
        victoria, token="unused", org="clyman", bucket="sidewalk", batch_size=100, site="clyman"
    )
    try:
        writer.write(weather)
        writer.write([snow], site="clyman-north")
        writer.flush()
    finally:
        writer.close()

    series = export_series(victoria, '{device="pole-vm"}')
    depth = series["weather_snow_depth_mm"]
    assert depth["metric"] == {
        "__name__": "weather_snow_depth_mm",
        "device": "pole-vm",
        "site": "clyman",
    }
    assert depth["timestamps"] == [r.ts for r in weather]
    assert depth["values"] == [r.snow_depth_mm for r in weather]
    assert series["weather_seq"]["values"] == list(range(250))
    width = series["snow_cleared_width_mm"]
    assert width["metric"]["frontage"] == "main-101"
    assert width["metric"]["site"] == "clyman-north"
    assert (width["timestamps"], width["values"]) == ([snow.ts], [1100.0])
    assert series["snow_ice_suspected"]["values"] == [0]


def test_failed_batches_surface_on_flush() -> None:
    # Nothing listens on this port: every attempt is refused, then retries run out.
    writer = InfluxWriter(
        f"http://127.0.0.1:{free_port()}", token="t", org="o", bucket="b",
        max_retries=2, retry_interval_ms=20, max_retry_delay_ms=50, timeout_ms=1000,
    )  # fmt: skip
    writer.write([WeatherReading(device="pole-1", seq=1, ts=TS, air_temp_c=1.0)])
    started = time.monotonic()
    with pytest.raises(InfluxWriteError) as info:
        writer.flush()
    assert len(info.value.failures) == 1
    assert time.monotonic() - started < 15
    writer.close()  # nothing left queued: closes cleanly


# ---------------------------------------------------------------- forwarder: export log + cursor


def _weather(device: str, seq: int, ts: int) -> WeatherReading:
    return WeatherReading(device=device, seq=seq, ts=ts, air_temp_c=-1.0 + seq % 5)


def test_export_log_follows_commits_and_cursor_prunes(tmp_path: Path) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    try:
        assert store.register_export("view") == 0
        store.write_batch([_weather("p", s, TS + s) for s in (1, 2, 4)], sites={"p": "north"})
        # A duplicate is not exported again; a late fill is.
        store.write_batch([_weather("p", 2, TS + 2), _weather("p", 3, TS + 3)])
        batch = store.export_after("view", limit=3)
        assert [(r.seq, site) for r, site in batch.readings] == [
            (1, "north"), (2, "north"), (4, "north")
        ]  # fmt: skip
        assert store.export_backlog("view") == 4
        store.advance_export("view", batch.last_id)
        assert [r.seq for r, _ in store.export_after("view").readings] == [3]
        store.advance_export("view", store.export_after("view").last_id)
        assert store.export_backlog("view") == 0
        assert store.export_after("view").readings == []
        # The log is pruned to empty; the next reading must still land above the cursor.
        cursor = store.export_cursor("view")
        store.write_batch([_weather("p", 5, TS + 5)])
        nxt = store.export_after("view")
        assert [r.seq for r, _ in nxt.readings] == [5]
        assert nxt.last_id > cursor
        # A cursor never moves back.
        store.advance_export("view", 1)
        assert store.export_cursor("view") == cursor
    finally:
        store.close()


def test_forwarder_keeps_the_cursor_while_the_server_is_down(tmp_path: Path) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    forwarder = InfluxForwarder(
        store, f"http://127.0.0.1:{free_port()}", token="t", org="o", bucket="b",
        backoff_min_s=0.05, backoff_max_s=0.2, timeout_ms=1000,
    )  # fmt: skip
    try:
        forwarder.start()
        store.write_batch([_weather("p", s, TS + s) for s in range(1, 11)])
        forwarder.write([])
        assert not forwarder.flush(timeout_s=1.5)
        assert forwarder.down
        assert forwarder.failures >= 2
        assert forwarder.backlog() == 10
        assert store.export_cursor("influx") == 0
    finally:
        forwarder.close()
        store.close()


@pytest.mark.services
def test_forwarder_writes_what_the_store_holds(victoria: str, tmp_path: Path) -> None:
    base = int(time.time() * 1000) - 7_200_000
    device = f"pole-fw-{uuid.uuid4().hex[:8]}"
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    forwarder = InfluxForwarder(
        store, victoria, token="unused", org="clyman", bucket="sidewalk", batch_size=70
    )
    try:
        forwarder.start()
        readings = [_weather(device, s, base + s * 1000) for s in range(1, 301)]
        for i in range(0, 300, 100):
            store.write_batch(readings[i : i + 100], sites={device: "clyman"})
            forwarder.write(readings[i : i + 100])
        assert forwarder.flush(timeout_s=20)
        assert forwarder.written == 300
        assert forwarder.rejected == 0
    finally:
        forwarder.close()
        store.close()
    series = export_series(victoria, f'{{device="{device}"}}')
    seq = series["weather_seq"]
    assert seq["metric"]["site"] == "clyman"
    assert sorted(zip(seq["timestamps"], seq["values"], strict=True)) == [
        (r.ts, r.seq) for r in readings
    ]


@pytest.mark.parametrize(
    ("status", "skipped"),
    [(400, True), (422, True)] + [(s, False) for s in (401, 403, 404, 429, 503)],
)
def test_forwarder_skips_only_refused_points_never_an_outage(
    tmp_path: Path, status: int, skipped: bool
) -> None:
    """A wrong token or a missing bucket must stall the view, not empty it."""

    class Answer(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = json.dumps({"code": "x", "message": f"status {status}"}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    forwarder = InfluxForwarder(
        store, f"http://127.0.0.1:{server.server_address[1]}", token="t", org="o", bucket="b"
    )
    try:
        store.write_batch([_weather("p", s, TS + s) for s in range(1, 4)])
        if skipped:
            assert forwarder.forward_once() == 3
            assert forwarder.rejected == 3
            assert store.export_backlog("influx") == 0
        else:
            with pytest.raises(ApiException, match=f"status {status}|{status}"):
                forwarder.forward_once()
            assert store.export_backlog("influx") == 3
    finally:
        forwarder.close()
        store.close()
        server.shutdown()


def test_no_export_rows_without_a_sink_and_a_first_sink_gets_the_history(tmp_path: Path) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    try:
        store.write_batch([_weather("p", s, TS + s) for s in (1, 2, 3)], sites={"p": "north"})
        store.write_batch([_weather("q", 1, TS + 1)])

        def logged() -> int:
            with store._lock:
                return int(store._db.execute("SELECT COUNT(*) FROM export_log").fetchone()[0])

        assert logged() == 0  # a store with no view carries no export rows
        store.register_export("view")
        batch = store.export_after("view")
        assert sorted((r.device, r.seq) for r, _ in batch.readings) == [
            ("p", 1), ("p", 2), ("p", 3), ("q", 1)
        ]  # fmt: skip
        # Registering again (a restart) must not log the history twice.
        store.register_export("view")
        assert store.export_backlog("view") == 4
        store.write_batch([_weather("p", 4, TS + 4)])
        assert store.export_backlog("view") == 5
    finally:
        store.close()
