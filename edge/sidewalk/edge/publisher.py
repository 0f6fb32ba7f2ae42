"""Publishes a device's buffered readings and frees them on the server's watermark.

Delivery is end to end: the broker's PUBACK only paces sending; a reading
leaves the disk buffer when ingest's retained ``…/<device>/stored`` watermark
covers it. After every (re)connect the publisher announces itself ``online``
(retained, with its buffer floor) and re-sends everything the watermark does
not cover; ingest drops the duplicates by ``(device, epoch, seq)``. It
re-sends the same way when the watermark stops short of what was sent for
``resend_after_s`` (doubling up to ``resend_max_s``), which covers a message
the broker accepted and then lost without the publisher ever disconnecting.

Only a watermark of the buffer's own ``epoch`` frees anything: the retained
watermark of this pole's earlier life (a re-imaged disk, seqs from 1 again)
is ignored, so it can never free new readings unsent. ``status`` carries the
epoch too, so ingest applies the buffer floor to the right seq space.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Any, Literal

from sidewalk.core.contract import (
    AnyReading,
    ContractError,
    Status,
    StoredWatermark,
    parse_payload,
    topic_for,
)
from sidewalk.core.mqtt import MqttClient, MqttError, MqttMessage, MqttSettings, Will
from sidewalk.edge.buffer import BufferedReading, ReadingBuffer

log = logging.getLogger(__name__)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class Publisher:
    """Drains one device's ``ReadingBuffer`` to the broker at QoS 1.

    ``start()`` returns at once; connecting (and retrying while the broker is
    away) happens on the publisher's own thread, and readings keep buffering
    meanwhile. ``stop()`` announces ``stopped`` and disconnects.
    """

    def __init__(
        self,
        buffer: ReadingBuffer,
        mqtt: MqttSettings,
        *,
        site: str,
        max_in_flight: int = 500,
        batch: int = 500,
        retry_connect_s: float = 1.0,
        resend_after_s: float = 30.0,
        resend_max_s: float = 3600.0,
    ) -> None:
        self.buffer = buffer
        self.device = buffer.device
        self.site = site
        self._settings = mqtt
        self._max_in_flight = max_in_flight
        self._batch = batch
        self._retry_connect_s = retry_connect_s
        self._resend_after_s = resend_after_s
        self._resend_max_s = resend_max_s
        self._cursor = 0  # highest seq sent on this pass
        self._announced_dropped = buffer.dropped
        self._stalled_since = time.monotonic()
        self._resend_after = resend_after_s
        self._stored_topic = topic_for(site, self.device, "stored")
        self._status_topic = topic_for(site, self.device, "status")
        self._client: MqttClient | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._cond = threading.Condition()
        self._watermark = 0
        self._pending_release: int | None = None
        self._reconnected = False
        self._outstanding: set[int] = set()
        self._acked_early: set[int] = set()

    @property
    def watermark(self) -> int:
        """The highest "stored up to" seq the server has announced."""
        with self._cond:
            return self._watermark

    @property
    def connected(self) -> bool:
        """True while the MQTT session is up."""
        return self._client is not None and self._client.is_connected

    def record(self, stream: str, ts_ms: int, values: Mapping[str, Any]) -> AnyReading:
        """Buffer a reading durably (assigning its seq) and wake the sender."""
        reading = self.buffer.append(stream, ts_ms, values)
        self._wake.set()
        return reading

    def start(self) -> None:
        """Start the sending thread; it connects and keeps reconnecting."""
        if self._thread is not None:
            raise RuntimeError("publisher already started")
        self._thread = threading.Thread(
            target=self._run, name=f"publisher-{self.device}", daemon=True
        )
        self._thread.start()

    def stop(self, timeout_s: float = 10.0) -> None:
        """Announce ``stopped`` (retained), disconnect and join the thread."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None

    def wait_stored(self, seq: int | None = None, timeout_s: float = 10.0) -> bool:
        """Wait until the watermark reaches ``seq`` (default: the last buffered)."""
        target = self.buffer.next_seq - 1 if seq is None else seq
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while self._watermark < target:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def _status(self, state: Literal["online", "offline", "stopped"]) -> bytes:
        return Status(
            device=self.device,
            state=state,
            ts=_now_ms(),
            buffer_floor_seq=self.buffer.floor,
            epoch=self.buffer.epoch,
        ).to_json()

    # --- paho thread callbacks: record and wake, nothing slow ---------------

    def _on_message(self, msg: MqttMessage) -> None:
        if msg.topic != self._stored_topic:
            return
        try:
            mark = parse_payload(msg.topic, msg.payload)
        except ContractError as exc:
            log.warning("ignoring bad watermark on %s: %s", msg.topic, exc)
            return
        if isinstance(mark, StoredWatermark):
            if mark.epoch != self.buffer.epoch:
                # Another life of this pole (a re-imaged disk, old seqs): its
                # watermark says nothing about these readings and frees none.
                log.info(
                    "%s: ignoring the watermark of epoch %s (ours is %s)",
                    self.device,
                    mark.epoch,
                    self.buffer.epoch,
                )
                return
            with self._cond:
                self._pending_release = max(self._pending_release or 0, mark.seq)
            self._wake.set()

    def _on_connect(self, session_present: bool) -> None:
        with self._cond:
            self._reconnected = True
            self._outstanding.clear()
            self._acked_early.clear()
            self._cond.notify_all()
        self._wake.set()

    def _on_publish(self, mid: int) -> None:
        with self._cond:
            if mid in self._outstanding:
                self._outstanding.discard(mid)
            else:
                self._acked_early.add(mid)
            self._cond.notify_all()

    # --- the sending thread ---------------------------------------------------

    def _connect(self) -> MqttClient | None:
        client = MqttClient(
            self._settings,
            on_message=self._on_message,
            on_connect=self._on_connect,
            on_publish=self._on_publish,
            will=Will(self._status_topic, self._status("offline")),
        )
        try:
            client.connect()
        except MqttError as exc:
            log.warning("publisher %s cannot connect yet: %s", self.device, exc)
            return None
        client.subscribe(self._stored_topic, 1)
        return client

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._step()
            except Exception:
                # e.g. a clock not yet set (ts before 2000) or a full disk:
                # keep buffering and try again rather than die silently.
                log.exception("publisher %s: step failed; retrying", self.device)
                self._stop.wait(self._retry_connect_s)
        self._shutdown()

    def _step(self) -> None:
        """One pass: connect if needed, apply watermarks, send what is due."""
        if self._client is None:
            self._client = self._connect()
            if self._client is None:
                self._stop.wait(self._retry_connect_s)
                return
        client = self._client
        self._wake.clear()
        reconnected = self._take_news()
        if not client.is_connected:
            self._wake.wait(0.5)
            return
        dropped = self.buffer.dropped
        if dropped != self._announced_dropped:
            log.warning(
                "%s: buffer full, %d oldest readings dropped unsent (floor now %d)",
                self.device,
                dropped - self._announced_dropped,
                self.buffer.floor,
            )
        if reconnected or dropped != self._announced_dropped:
            # The floor goes first so ingest can close gaps before the re-send.
            client.publish(self._status_topic, self._status("online"), qos=1, retain=True)
            self._announced_dropped = dropped
        self._rewind_if_needed(reconnected)
        rows = self.buffer.after(max(self._cursor, self.watermark), self._batch)
        if not rows:
            self._wake.wait(1.0)
            return
        self._send(client, rows)

    def _take_news(self) -> bool:
        """Apply a watermark that arrived; return whether we reconnected since."""
        with self._cond:
            release, self._pending_release = self._pending_release, None
            reconnected, self._reconnected = self._reconnected, False
        if release is not None:
            self.buffer.release_through(release)
            with self._cond:
                if release > self._watermark:
                    self._watermark = release
                    self._stalled_since = time.monotonic()
                    self._resend_after = self._resend_after_s
                self._cond.notify_all()
        return reconnected

    def _rewind_if_needed(self, reconnected: bool) -> None:
        """Point the cursor back at the watermark after a reconnect or a stall."""
        watermark = self.watermark
        now = time.monotonic()
        if reconnected:
            self._cursor = watermark
        elif self._cursor <= watermark:
            self._stalled_since = now
        elif now - self._stalled_since > self._resend_after:
            # Sent but never covered: lost after the broker took it (e.g. it
            # restarted before ingest re-subscribed). Send again, backing off
            # so a long ingest outage does not multiply the broker's queue.
            log.warning(
                "%s: watermark stuck at %d below sent %d; re-sending",
                self.device,
                watermark,
                self._cursor,
            )
            self._cursor = watermark
            self._stalled_since = now
            self._resend_after = min(self._resend_after * 2, self._resend_max_s)

    def _send(self, client: MqttClient, rows: list[BufferedReading]) -> None:
        for row in rows:
            if not self._window_open(client):
                return
            mid = client.publish(topic_for(self.site, self.device, row.stream), row.payload, 1)
            with self._cond:
                if mid in self._acked_early:
                    self._acked_early.discard(mid)
                else:
                    self._outstanding.add(mid)
            self._cursor = row.seq

    def _window_open(self, client: MqttClient) -> bool:
        """Wait for room among un-PUBACKed messages; False to re-check state."""
        with self._cond:
            while len(self._outstanding) >= self._max_in_flight:
                if self._stop.is_set() or not client.is_connected or self._reconnected:
                    return False
                self._cond.wait(0.2)
            return not self._reconnected

    def _shutdown(self) -> None:
        client, self._client = self._client, None
        if client is None:
            return
        try:
            if client.is_connected:
                client.publish_and_wait(self._status_topic, self._status("stopped"), 1, retain=True)
        finally:
            client.disconnect()
