"""Publishes a device's buffered readings and frees them on the server's watermark.

Delivery is end to end: the broker's PUBACK only paces sending; a reading
leaves the disk buffer when ingest's retained ``…/<device>/stored`` watermark
covers it. After every (re)connect the publisher announces itself ``online``
(retained, with its buffer floor); ingest drops duplicates by
``(device, epoch, seq)``.

Re-sending is bounded, so a stalled ingest cannot multiply the broker's queue
(a 6-minute stall once left 62,539 messages for 32,873 readings):

* **Window.** At most ``max_unstored`` readings are out beyond the watermark
  (sent, not yet stored); the rest waits on the pole's disk. So the broker
  never holds more than that per pole for ingest, however long ingest is
  away. ``max_in_flight`` bounds those still without a broker PUBACK.
* **Ack window.** A reading is sent again only when the watermark has not
  moved for ``resend_after_s`` while it is out (doubling, up to
  ``resend_max_s``, while nothing moves; back to ``resend_after_s`` when it
  does). Any progress of the watermark restarts the window: ingest is working
  through the broker's queue, whose copies are still on their way.
* **Probe, then slow start.** When the window expires, one copy goes again,
  the oldest unstored reading. If ingest is stalled it simply waits in the
  queue (one copy per expiry, not the whole window). If the readings were lost
  after the broker took them (a broker restarted from an old snapshot, an
  ingest session gone), the re-sent copy moves the watermark to exactly it,
  and the re-send window doubles (2, 4, 8 … readings) with each such step. As
  soon as the watermark passes what was re-sent, first copies are arriving
  and the re-send stops. No reading gets a second copy while its first is
  within its window, and never more than the re-send window at once.
* **Reconnect.** paho re-sends what the broker had not PUBACKed. If the broker
  lost this pole's session (CONNACK without session present), what it had
  taken may be gone too: the probe starts at once instead of after the window.

Only a watermark of the buffer's own ``epoch`` frees anything: the retained
watermark of this pole's earlier life (a re-imaged disk, seqs from 1 again)
is ignored, so it can never free new readings unsent. ``status`` carries the
epoch too, so ingest applies the buffer floor to the right seq space.

One connection per pole: the same session carries the device's other
messages (``send``: commands' replies, health, JPEG bytes) and its extra
subscriptions (commands), so the broker can bind the client id to the pole's
login (``use_username_as_clientid``, deploy/mosquitto.conf) without the
pole's connections taking each other's session over.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

from sidewalk.core.contract import (
    AnyReading,
    ContractError,
    Status,
    StoredWatermark,
    parse_payload,
    topic_for,
)
from sidewalk.core.mqtt import (
    MqttClient,
    MqttConnectRefused,
    MqttError,
    MqttMessage,
    MqttSettings,
    Will,
)
from sidewalk.edge.buffer import BufferedReading, ReadingBuffer

log = logging.getLogger(__name__)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def registration_hint(device: str, sent: int, waited_s: float) -> str:
    """The one line a pole logs when the server has stored none of its readings."""
    return (
        f"{device}: the server has stored none of the {sent} readings sent in {waited_s:.0f} s;"
        f" if this pole is not registered, register it: on the dashboard's Poles page, or"
        f" `sidewalk registry pole add {device} --by NAME --watches ADDRESS`"
        " (otherwise ingest is not running)"
    )


class Publisher:
    """Drains one device's ``ReadingBuffer`` to the broker at QoS 1.

    ``start()`` returns at once; connecting (and retrying while the broker is
    away) happens on the publisher's own thread, and readings keep buffering
    meanwhile; ``connect_now()`` before it tries once on the caller's thread.
    ``stop()`` announces ``stopped`` and disconnects.

    ``subscriptions`` (topic: QoS) are made on the same session besides the
    watermark, and ``on_message`` sees every message received (watermarks
    too), on paho's thread.
    """

    def __init__(
        self,
        buffer: ReadingBuffer,
        mqtt: MqttSettings,
        *,
        site: str,
        max_in_flight: int = 500,
        max_unstored: int = 2000,
        batch: int = 500,
        retry_connect_s: float = 1.0,
        resend_after_s: float = 30.0,
        resend_max_s: float = 3600.0,
        subscriptions: Mapping[str, int] | None = None,
        on_message: Callable[[MqttMessage], None] | None = None,
    ) -> None:
        if max_unstored < 1 or max_in_flight < 1:
            raise ValueError("max_unstored and max_in_flight must be at least 1")
        self.buffer = buffer
        self.device = buffer.device
        self.site = site
        self._settings = mqtt
        self._max_in_flight = max_in_flight
        self._max_unstored = max_unstored
        self._batch = batch
        self._retry_connect_s = retry_connect_s
        self._resend_after_s = resend_after_s
        self._resend_max_s = resend_max_s
        self._cursor = 0  # highest seq sent (first copies)
        self._announced_dropped = buffer.dropped
        self._stalled_since = time.monotonic()
        self._resend_after = resend_after_s
        self._stored_topic = topic_for(site, self.device, "stored")
        self._status_topic = topic_for(site, self.device, "status")
        self._subscriptions = dict(subscriptions or {})
        self._on_any = on_message
        self._client: MqttClient | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._cond = threading.Condition()
        self._watermark = 0
        self._pending_release: int | None = None
        self._reconnected = False
        self._session_lost = False
        # Re-sending after an expired ack window: copies go out from the
        # watermark up to ``_probe_top``, at most ``_probe_window`` beyond it
        # (1, doubling while only re-sent copies move the watermark). None: not re-sending.
        self._probe_top: int | None = None
        self._probe_window = 1
        # Copies sent again, ever (first copies are not counted).
        self.resent = 0
        self._outstanding: set[int] = set()
        self._acked_early: set[int] = set()
        # mids of ``send``'s messages still without a PUBACK: not readings, so no
        # window counts them, and their acks must not pass for early readings' acks.
        self._foreign: set[int] = set()
        # No watermark of this buffer's epoch yet: the server has stored nothing of ours.
        self._ever_stored = False
        self._told_register = False

    @property
    def watermark(self) -> int:
        """The highest "stored up to" seq the server has announced."""
        with self._cond:
            return self._watermark

    @property
    def connected(self) -> bool:
        """True while the MQTT session is up."""
        return self._client is not None and self._client.is_connected

    @property
    def session_present(self) -> bool:
        """True when the broker resumed the pole's stored session on the last connect."""
        return self._client is not None and self._client.session_present

    def connect_now(self) -> bool:
        """Try to connect once, on this thread, before ``start()``; False when the
        broker is not reachable (the thread keeps trying). Raises
        ``MqttConnectRefused`` when it refuses the pole's credentials."""
        if self._thread is not None:
            raise RuntimeError("publisher already started")
        if self._client is None:
            self._client = self._connect(raise_refused=True)
        return self._client is not None

    def send(self, topic: str, payload: bytes, *, retain: bool = False) -> bool:
        """Publish one of the device's other messages (QoS 1) on the session; False
        while disconnected (nothing queued). ``MqttPacketTooLarge`` for one the
        broker said it will not take."""
        client = self._client
        if client is None or not client.is_connected:
            return False
        mid = client.publish(topic, payload, 1, retain=retain)
        with self._cond:
            if mid in self._acked_early:
                self._acked_early.discard(mid)
            else:
                self._foreign.add(mid)
        return True

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
        if self._on_any is not None:
            self._on_any(msg)
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
        # paho re-sends the messages still without a PUBACK on the new
        # connection, with their mids: ``_outstanding`` stays as it is.
        with self._cond:
            self._reconnected = True
            self._acked_early.clear()
            self._session_lost = self._session_lost or not session_present
            self._cond.notify_all()
        self._wake.set()

    def _on_publish(self, mid: int) -> None:
        with self._cond:
            if mid in self._outstanding:
                self._outstanding.discard(mid)
            elif mid in self._foreign:
                self._foreign.discard(mid)
            else:
                self._acked_early.add(mid)
            self._cond.notify_all()

    # --- the sending thread ---------------------------------------------------

    def _connect(self, *, raise_refused: bool = False) -> MqttClient | None:
        client = MqttClient(
            self._settings,
            on_message=self._on_message,
            on_connect=self._on_connect,
            on_publish=self._on_publish,
            will=Will(self._status_topic, self._status("offline")),
        )
        try:
            client.connect()
        except MqttConnectRefused:
            if raise_refused:
                raise
            log.error("publisher %s: the broker refused the pole's login; retrying", self.device)
            return None
        except MqttError as exc:
            log.warning("publisher %s cannot connect yet: %s", self.device, exc)
            return None
        try:
            client.subscribe(self._stored_topic, 1)
            for topic, qos in self._subscriptions.items():
                client.subscribe(topic, qos)
        except MqttError as exc:
            # Not in place (e.g. the connection dropped at once): start over.
            log.warning("publisher %s: subscribing failed: %s", self.device, exc)
            client.disconnect()
            return None
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
        reconnected, session_lost = self._take_news()
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
        mark = self.watermark
        self._check_ack_window(mark, session_lost)
        resent = self._probe_top is not None and self._resend(client, mark)
        # The window counts from the lowest reading not yet stored: the
        # watermark, or the buffer's floor when the bound dropped readings.
        base = max(mark, self.buffer.floor - 1)
        start = max(self._cursor, mark)
        room = base + self._max_unstored - start
        rows = self.buffer.after(start, min(self._batch, room)) if room > 0 else []
        rows = [r for r in rows if r.seq <= base + self._max_unstored]
        if rows:
            self._send(client, rows)
        elif not resent:
            self._wake.wait(self._idle_wait(mark))

    def _take_news(self) -> tuple[bool, bool]:
        """Apply a watermark that arrived; return (reconnected, session lost) since last time."""
        with self._cond:
            release, self._pending_release = self._pending_release, None
            reconnected, self._reconnected = self._reconnected, False
            session_lost, self._session_lost = self._session_lost, False
        if release is not None:
            self._ever_stored = True
            self.buffer.release_through(release)
            with self._cond:
                if release > self._watermark:
                    self._watermark = release
                    self._progress(release)
                self._cond.notify_all()
        return reconnected, session_lost

    def _progress(self, mark: int) -> None:
        """The watermark moved to ``mark``: the ack window starts again."""
        self._stalled_since = time.monotonic()
        self._resend_after = self._resend_after_s
        if self._probe_top is None:
            return
        if mark > self._probe_top or mark >= self._cursor:
            # First copies moved it (they were only queued), or all is stored.
            self._probe_top = None
        else:
            # Only the copies sent again moved it: the rest were lost too.
            self._probe_window = min(2 * self._probe_window, self._max_unstored)

    def _check_ack_window(self, mark: int, session_lost: bool) -> None:
        """Start re-sending when the watermark sat below what was sent for the ack window."""
        now = time.monotonic()
        if self._cursor <= mark:
            self._stalled_since = now
            self._probe_top = None
            return
        if not session_lost and now - self._stalled_since <= self._resend_after:
            return
        if not self._ever_stored and not self._told_register:
            # Ingest takes readings only from the registry's poles: one that was
            # never registered hears nothing back, ever. Say what fixes it, once.
            self._told_register = True
            log.error("%s", registration_hint(self.device, self._cursor, now - self._stalled_since))
        # Sent but never covered: lost after the broker took it, or ingest is
        # stalled. One copy of the oldest tells which (see the module doc).
        log.warning(
            "%s: watermark at %d below sent %d %s; re-sending from seq %d"
            " (next try in %.0f s if it does not move)",
            self.device,
            mark,
            self._cursor,
            "and the broker lost the session"
            if session_lost
            else f"for {now - self._stalled_since:.0f} s",
            mark + 1,
            self._resend_after,
        )
        self._probe_top, self._probe_window = mark, 1
        self._stalled_since = now
        if not session_lost:
            self._resend_after = min(self._resend_after * 2, self._resend_max_s)

    def _idle_wait(self, mark: int) -> float:
        """How long to sleep with nothing to send: until news, or the ack window's end."""
        if self._cursor <= mark:
            return 1.0
        left = self._stalled_since + self._resend_after - time.monotonic()
        return min(1.0, max(0.01, left))

    def _resend(self, client: MqttClient, mark: int) -> bool:
        """Send again what the re-send window allows; True if anything went."""
        assert self._probe_top is not None
        top = max(self._probe_top, mark)
        limit = min(self._cursor, mark + self._probe_window)
        if top >= limit:
            return False
        rows = [r for r in self.buffer.after(top, min(limit - top, self._batch)) if r.seq <= limit]
        self._send(client, rows, again=True)
        return bool(rows)

    def _send(
        self, client: MqttClient, rows: list[BufferedReading], *, again: bool = False
    ) -> None:
        for row in rows:
            if not self._window_open(client):
                return
            mid = client.publish(topic_for(self.site, self.device, row.stream), row.payload, 1)
            with self._cond:
                if mid in self._acked_early:
                    self._acked_early.discard(mid)
                else:
                    self._outstanding.add(mid)
            if again:
                self._probe_top = row.seq
                self.resent += 1
            else:
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
