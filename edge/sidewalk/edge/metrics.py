"""What a pole exposes: its disk buffer, counters and broker session; its checks.

The collector reads the device's state at scrape time; the server is core's
(``sidewalk.core.observability``), so the pole needs nothing beyond edge and
core. ``docs/observability.md`` lists every metric.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from sidewalk.core.health import Check, flag, sqlite_writable, threads_alive
from sidewalk.core.observability import Observability
from sidewalk.edge.device import Device

# The documented default port (docs/observability.md); off unless configured.
EDGE_PORT: Final = 9466


class DeviceCollector(Collector):
    """A pole's disk buffer, its counters and its broker session."""

    def __init__(self, device: Device) -> None:
        self._device = device

    def collect(self) -> Iterable[Metric]:
        d = self._device
        labels = [d.device]
        buffer, publisher = d.buffer, d.publisher

        def gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
            g = GaugeMetricFamily(name, doc, labels=["device"])
            g.add_metric(labels, value)
            return g

        def counter(name: str, doc: str, value: float) -> CounterMetricFamily:
            c = CounterMetricFamily(name, doc, labels=["device"])
            c.add_metric(labels, value)
            return c

        if buffer is not None:
            yield gauge(
                "sidewalk_device_buffer_depth_readings",
                "Readings held in the pole's disk buffer (not yet confirmed stored)",
                len(buffer),
            )
            yield counter(
                "sidewalk_device_buffer_dropped_readings",
                "Readings the buffer's bound discarded unsent",
                buffer.dropped,
            )
        if publisher is not None:
            yield gauge(
                "sidewalk_device_connected", "1 while the MQTT session is up", publisher.connected
            )
            yield gauge(
                "sidewalk_device_stored_watermark_seq",
                "The server's latest stored-up-to seq for this pole",
                publisher.watermark,
            )
        yield counter("sidewalk_device_readings", "Readings recorded", d.stats.readings)
        flagged = CounterMetricFamily(
            "sidewalk_device_flagged_values",
            "Sensor values withheld as not good, by sensor/quantity/quality",
            labels=["device", "key"],
        )
        for key, count in sorted(d.stats.flagged.items()):
            flagged.add_metric([d.device, key], count)
        yield flagged


def device_observability(
    device: Device, registry: CollectorRegistry | None = None
) -> Observability:
    """A pole (after ``start()``): buffer depth and session; publisher alive; broker and buffer."""
    registry = registry or CollectorRegistry()
    registry.register(DeviceCollector(device))
    ready: dict[str, Check] = {
        "broker": flag(
            lambda: device.publisher is not None and device.publisher.connected,
            "not connected to the broker (readings keep buffering)",
        ),
    }
    if device.buffer is not None:
        ready["buffer"] = sqlite_writable(device.buffer.path)
    return Observability(
        registry, live={"publisher": threads_alive([f"publisher-{device.device}"])}, ready=ready
    )
