"""A pole's endpoints: buffer depth while nothing stores its readings, then drained."""

from __future__ import annotations

import pytest

from sidewalk.edge.metrics import device_observability
from tests.edge_device.poles import fast_dir, pole_settings, running_device, sim_sensor
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import running_ingest, slug
from tests.observability.scrape import eventually, probe, scrape, value

pytestmark = pytest.mark.services

DEPTH = "sidewalk_device_buffer_depth_readings"


def test_buffer_depth_until_ingest_stores_the_readings(broker: MosquittoServer) -> None:
    site, device = slug("site"), slug("pole")
    with fast_dir() as tmp:
        cfg = pole_settings(
            broker.host, broker.port, tmp / "pole", site=site, device=device,
            sensors=[sim_sensor("air", "air_temp_c", base=-4.0)],
        )  # fmt: skip
        # Without ingest the broker drops what it gets; a short resend brings it again.
        options = {"resend_after_s": 0.3, "resend_max_s": 0.6}
        with running_device(cfg, loop=False, publisher_options=options) as pole:
            server = device_observability(pole).serve(port=0)
            try:
                assert eventually(lambda: probe(server.url, "/readyz")[0] == 200)
                assert probe(server.url, "/readyz")[1]["checks"] == {
                    "broker": "ok",
                    "buffer": "ok",
                }
                assert probe(server.url, "/healthz")[0] == 200
                for _ in range(5):
                    pole.sample("air")
                text = scrape(server.url)
                assert value(text, DEPTH, device=device) == 5
                assert value(text, "sidewalk_device_readings_total", device=device) == 5
                assert value(text, "sidewalk_device_connected", device=device) == 1
                assert value(text, "sidewalk_device_stored_watermark_seq", device=device) == 0
                with running_ingest(broker.host, broker.port, tmp / "ts.db", site):
                    assert eventually(
                        lambda: value(scrape(server.url), DEPTH, device=device) == 0, 15
                    )
                text = scrape(server.url)
                assert value(text, "sidewalk_device_stored_watermark_seq", device=device) == 5
                assert value(text, "sidewalk_device_buffer_dropped_readings_total",
                             device=device) == 0  # fmt: skip
                assert pole.publisher is not None
                pole.publisher.stop()  # what a crashed sending thread looks like
                status, body = probe(server.url, "/healthz")
                assert status == 503
                assert f"publisher-{device}" in body["checks"]["publisher"]
            finally:
                server.stop()
