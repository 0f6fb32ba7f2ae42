"""The one adapter that owns paho-mqtt.

Everything else in Sidewalk Watch receives ``MqttMessage`` values and calls
``MqttClient`` methods; no other module imports paho. paho is in the edge and
server extras only, so it is imported here and nowhere in ``core``'s own
dependencies.

Connecting negotiates: MQTT v5 first (a Receive Maximum sized to the ack batch
and a session that outlives the connection), then MQTT 3.1.1 when the broker
does not answer a v5 CONNECT in time (the embedded amqtt broker stays silent)
or says the version is unsupported. A refused connection raises; the client
never reports itself connected without a CONNACK that says so.

No handler can silence it: an exception raised by a callback is caught, logged
with the topic (at most once a minute, with a count of the rest) and counted
(``handler_errors``), and the network thread goes on receiving; a network
thread that ends anyway (a fault in the receive path itself) makes
``is_connected`` false and ``problem`` say so. A broker that hands our session
to another client with the same client id (MQTT 5 DISCONNECT 0x8E "Session
taken over"), or whose persistent session is gone when we reconnect (what a
takeover with a clean session leaves: Mosquitto 2.0 closes the old connection
before that DISCONNECT reaches it), is counted (``session_takeovers``) and
``problem`` reports it for ``MqttSettings.takeover_hold_s``; paho reconnects by
itself and the subscriptions are restored.

The receive fast path and the batched acknowledgements use paho's private
attributes; they are on only for the paho minor version they were written and
tested against (``FAST_PATH_PAHO``) and when those attributes exist, and
otherwise everything goes through paho's public API (``fast_paths_supported``).
"""

from __future__ import annotations

import functools
import logging
import ssl
import struct
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

import paho.mqtt as paho_package
import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

log = logging.getLogger(__name__)

MqttProtocol = Literal["5", "3.1.1"]

# MQTT v5 CONNACK 0x84: the broker does not speak this protocol version.
_UNSUPPORTED_PROTOCOL_VERSION = 132
# PUBACK fixed header, remaining length 2, packet id.
_PUBACK_HEADER = 0x40
_PUBACK_WORD = _PUBACK_HEADER << 24 | 2 << 16


# MQTT v5 DISCONNECT 0x8E: another client connected with our client id.
SESSION_TAKEN_OVER = 142

# The paho minor version the fast path below was written and tested against:
# it reads and overrides paho's private ``_sock_recv``, ``_packet_read``,
# ``_handle_publish``, ``_in_packet`` and ``_packet_queue``. Any other version
# takes paho's public path (same messages, more syscalls).
FAST_PATH_PAHO = (2, 2)
_PRIVATE_ATTRIBUTES = (
    "_sock_recv",
    "_packet_read",
    "_handle_publish",
    "_packet_queue",
    "_msgtime_mutex",
    "_last_bytes_received",
    "_in_packet",
    "_manual_ack",
    "_protocol",
    "_sock",
)


def fast_paths_supported(version: str | None = None) -> bool:
    """True when paho (``version``, by default the installed one) is the tested minor
    version and has the private attributes the fast path uses."""
    version = paho_package.__version__ if version is None else version
    try:
        major, minor = (int(part) for part in version.split(".")[:2])
    except ValueError:
        return False
    if (major, minor) != FAST_PATH_PAHO:
        return False
    probe = paho.Client(callback_api_version=CallbackAPIVersion.VERSION2)
    return all(hasattr(probe, name) for name in _PRIVATE_ATTRIBUTES)


FAST_PATHS = fast_paths_supported()

# A handler failing on every message is logged at most once per this many
# seconds (``MqttClient.handler_failed``); every failure is still counted.
HANDLER_LOG_EVERY_S = 60.0


# One recv() per this many bytes instead of paho's three recv()s per packet.
_READ_CHUNK = 256 * 1024


def _varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """(value, position after it) of the MQTT variable byte integer at ``pos``;
    (0, -1) when it runs to ``end`` or past four bytes."""
    value = shift = 0
    while pos < end and shift <= 21:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
    return 0, -1


class _TrackedClient(paho.Client):
    """paho that says whether its network thread is running (public API only).

    ``loop_start`` runs ``loop_forever`` in paho's thread; when that returns
    or raises, the thread is over and nothing more is received.
    """

    network_running: bool = False
    network_error: BaseException | None = None

    def loop_forever(
        self,
        timeout: float = 1.0,
        retry_first_connection: bool = False,
    ) -> MQTTErrorCode:
        self.network_running = True
        try:
            return super().loop_forever(timeout, retry_first_connection=retry_first_connection)
        except BaseException as exc:
            self.network_error = exc
            log.critical(
                "MQTT network thread of %s stopped: %s: %s; nothing more is received",
                self._client_id.decode(errors="replace"),
                type(exc).__name__,
                exc,
                exc_info=exc,
            )
            raise
        finally:
            self.network_running = False


class _BufferedClient(_TrackedClient):
    """paho with a read buffer: the receive path's syscalls were its main cost.

    paho reads each packet with one ``recv`` for the command byte, one per
    length byte and one for the body, and goes back to ``select`` after every
    packet. Here ``_sock_recv`` fills a buffer with one large ``recv`` and
    serves paho's small reads from it; ``loop_read`` keeps parsing while the
    buffer holds bytes (``select`` cannot see them). Parsing, state and acks
    stay paho's own.
    """

    _rbuf: bytes
    _rpos: int
    _rsock: object

    def _sock_recv(self, bufsize: int) -> bytes:
        if getattr(self, "_rsock", None) is not self._sock:
            # A new connection: bytes of the old one must never leak into it.
            self._rbuf, self._rpos, self._rsock = b"", 0, self._sock
        pos = self._rpos
        if pos >= len(self._rbuf):
            data = super()._sock_recv(max(bufsize, _READ_CHUNK))
            if len(data) <= bufsize:
                return data
            self._rbuf, pos = data, 0
        end = min(pos + bufsize, len(self._rbuf))
        self._rpos = end
        return self._rbuf[pos:end]

    # Set by MqttClient: takes the QoS 1 PUBLISHes read in one go, as messages
    # of connection ``fast_connection``.
    fast_publish: Callable[[list[MqttMessage]], None] | None = None
    fast_connection: int = 0

    def _packet_read(self) -> MQTTErrorCode:
        # The fast lane: every QoS 1 PUBLISH lying whole in the buffer while
        # paho holds no partial packet is framed and parsed right here, in one
        # loop, and handed over as one list, without paho's per-packet reads,
        # state dict and MQTTMessage. Anything else (other packets, partial or
        # odd ones) goes through paho's own reader.
        fast = self.fast_publish
        if (
            fast is None
            or not self._manual_ack
            or self._in_packet["command"] != 0
            or getattr(self, "_rsock", None) is not self._sock
        ):
            return super()._packet_read()
        messages = self._take_publishes()
        if not messages:
            return super()._packet_read()  # paho reads it (and reports a malformed one)
        with self._msgtime_mutex:
            self._last_bytes_received = paho.time_func()
        fast(messages)
        return MQTTErrorCode.MQTT_ERR_SUCCESS

    def _take_publishes(self) -> list[MqttMessage]:  # noqa: PLR0912 (one loop per message, inlined)
        """The whole, well-formed QoS 1 PUBLISHes at the buffer's position, consumed.

        Stops at the first packet that is anything else, incomplete or does
        not parse, and leaves it for paho's reader.
        """
        buf, pos = self._rbuf, self._rpos
        end = len(buf)
        v5 = self._protocol == paho.MQTTv5
        new, conn = tuple.__new__, self.fast_connection
        out: list[MqttMessage] = []
        while end - pos >= 2:
            header = buf[pos]
            if header & 0xF6 != 0x32:  # PUBLISH, QoS 1 (dup ignored)
                break
            # The remaining length: one byte up to 127, two up to 16,383 (a reading).
            length = buf[pos + 1]
            if length < 0x80:
                i = pos + 2
            elif pos + 2 < end and buf[pos + 2] < 0x80:
                length = (length & 0x7F) | buf[pos + 2] << 7
                i = pos + 3
            else:
                length, i = _varint(buf, pos + 1, end)
            stop = i + length
            if i < 0 or stop > end or length < 5:
                break
            topic_end = i + 2 + (buf[i] << 8 | buf[i + 1])
            p = topic_end + 2
            if p > stop or topic_end == i + 2:
                break  # a topic past the packet's end, or empty (a topic alias)
            try:
                topic = buf[i + 2 : topic_end].decode()
            except UnicodeDecodeError:
                break
            if v5:
                # Skip the properties (usually none); we offer no topic aliases,
                # so none matter.
                if p >= stop:
                    break
                if buf[p]:
                    plen, p = _varint(buf, p, stop)
                    p += plen
                    if p < plen or p > stop:  # p < plen: _varint said (0, -1)
                        break
                else:
                    p += 1
            out.append(
                new(
                    MqttMessage,
                    (
                        topic,
                        buf[p:stop],
                        1,
                        header & 1 == 1,
                        buf[topic_end] << 8 | buf[topic_end + 1],
                        conn,
                    ),
                )
            )
            pos = stop
        self._rpos = pos
        return out

    def _parse_publish(self, body: bytes | bytearray) -> tuple[str, int, bytes] | None:
        """(topic, packet id, payload) of a QoS 1 PUBLISH body; None if it does not parse."""
        try:
            pos = 2 + int.from_bytes(body[0:2], "big")
            topic = body[2:pos].decode()
            mid = int.from_bytes(body[pos : pos + 2], "big")
            pos += 2
            shift = 0
            if self._protocol == paho.MQTTv5:
                length = 0
                while True:
                    byte = body[pos]
                    pos += 1
                    length |= (byte & 0x7F) << shift
                    shift += 7
                    if not byte & 0x80:
                        break
                pos += length
        except (IndexError, ValueError):
            return None
        if not topic or pos > len(body) or shift > 28:
            return None
        return topic, mid, bytes(body[pos:])

    def _handle_publish(self) -> MQTTErrorCode:
        # The same for a QoS 1 PUBLISH that paho's reader assembled (it came
        # in pieces): skip MQTTMessage, the v5 Properties object, the debug
        # formatting and the topic matcher.
        header = self._in_packet["command"]
        fast = self.fast_publish
        if fast is None or (header & 0x06) != 0x02 or not self._manual_ack:
            return super()._handle_publish()
        parsed = self._parse_publish(self._in_packet["packet"])
        if parsed is None:
            return super()._handle_publish()  # paho reports the malformed packet
        topic, mid, payload = parsed
        fast([MqttMessage(topic, payload, 1, bool(header & 0x01), mid, self.fast_connection)])
        return MQTTErrorCode.MQTT_ERR_SUCCESS

    def loop_read(self, max_packets: int = 1) -> MQTTErrorCode:
        rc = super().loop_read(max_packets)
        while (
            rc == MQTTErrorCode.MQTT_ERR_SUCCESS
            and self._sock is not None
            and getattr(self, "_rsock", None) is self._sock
            and self._rpos < len(self._rbuf)
        ):
            rc = super().loop_read(1)
        return rc


class MqttError(RuntimeError):
    """Base class for broker failures the caller must handle."""


class MqttConnectRefused(MqttError):
    """The broker answered CONNECT with a failure (bad credentials, banned id, …)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"broker refused the connection: {reason}")
        self.reason = reason


class MqttUnreachable(MqttError):
    """No broker answered: the socket failed or no CONNACK came in time."""


class MqttPacketTooLarge(MqttError):
    """A PUBLISH larger than the broker's Maximum Packet Size (MQTT 5 CONNACK).

    Refused here, before sending: Mosquitto 2 disconnects a client that sends
    a larger packet ("Packet too large", 0x95), and paho re-sends the message
    after reconnecting, so the connection would fail again and again while
    the publisher heard nothing it could act on.
    """

    def __init__(self, topic: str, size: int, limit: int) -> None:
        super().__init__(
            f"publish to {topic!r}: a {size}-byte packet is over the broker's maximum of {limit}"
        )
        self.topic, self.size, self.limit = topic, size, limit


# PUBLISH overhead beyond topic and payload: fixed header (<= 5), topic length (2),
# packet id (2) and the MQTT 5 properties' length (<= 4).
_PUBLISH_OVERHEAD = 13


class MqttMessage(NamedTuple):
    """One received message, detached from paho (immutable).

    ``connection`` counts the client's connections; an ack for a message from
    an earlier connection is skipped because the broker re-sends it anyway.
    A named tuple, not a frozen dataclass: one is made per message received,
    and the receive lane builds it with a single ``tuple.__new__`` call (a
    frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``).
    """

    topic: str
    payload: bytes
    qos: int
    retain: bool
    mid: int
    connection: int = 0


@dataclass(frozen=True, slots=True)
class TlsSettings:
    """Server verification and, optionally, a client certificate."""

    ca_certs: str | None = None
    certfile: str | None = None
    keyfile: str | None = None


@dataclass(frozen=True, slots=True)
class Will:
    """The message the broker publishes when the client vanishes."""

    topic: str
    payload: bytes
    qos: int = 1
    retain: bool = True


@dataclass(frozen=True, slots=True)
class MqttSettings:
    """How to reach the broker and what kind of session to hold there."""

    host: str
    port: int
    client_id: str
    clean_start: bool = False
    username: str | None = None
    # Kept out of repr: a settings object in a log line must not carry the secret.
    password: str | None = field(default=None, repr=False)
    tls: TlsSettings | None = None
    keepalive_s: int = 30
    # v5 only: how many unacknowledged QoS 1 messages the broker may send us.
    # Must exceed the ack batch or a batching consumer stalls.
    receive_maximum: int = 1000
    # v5 only: a session must outlive the connection or queued messages vanish
    # on disconnect (v5's default expiry is 0). Devices buffer beyond this.
    session_expiry_s: int = 7 * 24 * 3600
    protocol: Literal["auto", "5", "3.1.1"] = "auto"
    # Short, because amqtt answers a v5 CONNECT with silence.
    connect_timeout_s: float = 3.0
    reconnect_min_s: int = 1
    reconnect_max_s: int = 10
    # How long ``problem`` reports a session taken over by another client.
    takeover_hold_s: float = 60.0


class MqttClient:
    """A connected MQTT session with manual acknowledgement and reconnect.

    Callbacks run on paho's network thread; keep them short (hand work to a
    queue). ``on_connect(session_present)`` runs on every (re)connect after
    remembered subscriptions are restored. ``on_messages`` instead of
    ``on_message`` takes the messages received together as one list (every
    QoS 1 PUBLISH that one socket read brought in whole): one call and one
    hand-over per read instead of per message.
    """

    def __init__(
        self,
        settings: MqttSettings,
        *,
        on_message: Callable[[MqttMessage], None] | None = None,
        on_messages: Callable[[list[MqttMessage]], None] | None = None,
        on_connect: Callable[[bool], None] | None = None,
        on_disconnect: Callable[[], None] | None = None,
        on_publish: Callable[[int], None] | None = None,
        manual_ack: bool = False,
        will: Will | None = None,
        fast_paths: bool | None = None,
    ) -> None:
        """``fast_paths``: paho's private fast path on or off; None (the default)
        takes it when ``fast_paths_supported()``."""
        if not 1 <= settings.receive_maximum <= 65535:
            raise ValueError("receive_maximum must be 1..65535")
        if on_message is not None and on_messages is not None:
            raise ValueError("give on_message or on_messages, not both")
        self.settings = settings
        self._on_message = on_message
        self._on_messages = on_messages
        self._on_connect = on_connect
        self._on_disconnect = on_disconnect
        self._on_publish = on_publish
        self._manual_ack = manual_ack
        self._will = will
        self._client: paho.Client | None = None
        self._protocol: MqttProtocol | None = None
        self._subscriptions: dict[str, int] = {}
        self._lock = threading.Lock()
        self._connected = threading.Event()
        self._connack = threading.Event()
        self._refusal: str | None = None
        self._connection = 0
        self._subacks: dict[int, threading.Event] = {}
        self._session_present = False
        self._sub_failed: set[int] = set()
        # The broker's Maximum Packet Size from its MQTT 5 CONNACK (None: no limit said).
        self.max_packet_size: int | None = None
        self.fast_paths = FAST_PATHS if fast_paths is None else fast_paths
        # Exceptions raised by our callbacks (caught, logged, the thread goes on),
        # and sessions taken over by another client with our id.
        self.handler_errors = 0
        self.session_takeovers = 0
        # The rate limit of the handler-failure log: when one was last logged
        # (monotonic) and how many failed since without a line.
        self._handler_logged_at: float | None = None
        self._handler_unlogged = 0
        self._taken_over_at: float | None = None

    @property
    def protocol(self) -> MqttProtocol | None:
        """The protocol negotiated by ``connect()``; None before it."""
        return self._protocol

    @property
    def is_connected(self) -> bool:
        """True only while a CONNACK accepted the current connection and the
        network thread that receives on it is running."""
        return self._connected.is_set() and self.network_alive

    @property
    def network_alive(self) -> bool:
        """False once the network thread has ended (``disconnect()``, or a fault)."""
        client = self._client
        return isinstance(client, _TrackedClient) and client.network_running

    @property
    def problem(self) -> str | None:
        """Why this client cannot do its work right now, in a few words (None: it can)."""
        client = self._client
        if isinstance(client, _TrackedClient) and client.network_error is not None:
            exc = client.network_error
            return f"MQTT network thread stopped ({type(exc).__name__}); nothing is received"
        taken = self._taken_over_at
        if taken is not None:
            ago = time.monotonic() - taken
            if ago < self.settings.takeover_hold_s:
                return (
                    f"session taken over or lost {ago:.0f} s ago (another client using "
                    f"client id {self.settings.client_id!r}?)"
                )
        if not self.is_connected:
            return "not connected to the broker"
        return None

    def _taken_over(self, what: str) -> None:
        self.session_takeovers += 1
        self._taken_over_at = time.monotonic()
        log.error(
            "the broker %s; another client may be using client id %r (bind client ids "
            "to logins: deploy/mosquitto.conf); reconnecting",
            what,
            self.settings.client_id,
        )

    def _guarded(self, what: str, topic: str, call: Callable[[], object]) -> None:
        """``call()`` on paho's thread; an exception is logged with the topic and counted,
        never left to end the thread (which would leave us connected and deaf)."""
        try:
            call()
        except Exception as exc:
            self.handler_failed(
                what,
                topic,
                exc,
                "the message is not acknowledged; the broker sends it again after a reconnect",
            )

    def handler_failed(self, what: str, topic: str, exc: BaseException, outcome: str) -> None:
        """Count a handler's failure on ``topic`` and log it, saying ``outcome`` (what became
        of the message). A handler failing on every message is logged once per
        ``HANDLER_LOG_EVERY_S`` (with its traceback), with how many failures went unlogged
        in between; ``handler_errors`` counts every one. Callers that catch a handler's
        exception themselves (ingest keeps the message as a dead letter) report it here."""
        self.handler_errors += 1
        now = time.monotonic()
        last = self._handler_logged_at
        if last is not None and now - last < HANDLER_LOG_EVERY_S:
            self._handler_unlogged += 1
            return
        unlogged, self._handler_unlogged, self._handler_logged_at = self._handler_unlogged, 0, now
        log.error(
            "MQTT %s handler failed on %s: %s: %s (%s)%s",
            what,
            topic,
            type(exc).__name__,
            exc,
            outcome,
            f"; {unlogged} more handler failures since the last report" if unlogged else "",
            exc_info=exc,
            extra={"topic": topic},
        )

    def connect(self) -> None:
        """Connect, negotiating v5 then 3.1.1, and start the network thread.

        Raises ``MqttConnectRefused`` when the broker says no and
        ``MqttUnreachable`` when nothing answers. After a successful call the
        client reconnects by itself and restores its subscriptions.
        """
        order: tuple[MqttProtocol, ...] = (
            ("5", "3.1.1") if self.settings.protocol == "auto" else (self.settings.protocol,)
        )
        last: MqttError | None = None
        for proto in order:
            try:
                self._try_connect(proto)
                return
            except MqttConnectRefused as exc:
                if proto == "5" and exc.reason == "unsupported_protocol_version":
                    last = exc
                    continue
                raise
            except MqttUnreachable as exc:
                # A dead socket is the same for every protocol; only silence
                # after CONNECT is worth another try with 3.1.1.
                if not isinstance(exc.__cause__, OSError):
                    last = exc
                    continue
                raise
        assert last is not None
        raise last

    def _try_connect(self, proto: MqttProtocol) -> None:
        s = self.settings
        kind = _BufferedClient if self.fast_paths else _TrackedClient
        client = kind(
            callback_api_version=CallbackAPIVersion.VERSION2,
            client_id=s.client_id,
            clean_session=None if proto == "5" else s.clean_start,
            protocol=paho.MQTTv5 if proto == "5" else paho.MQTTv311,
            manual_ack=self._manual_ack,
        )
        client.reconnect_delay_set(s.reconnect_min_s, s.reconnect_max_s)
        # paho's own outgoing window; the broker's Receive Maximum still applies.
        client.max_inflight_messages_set(1000)
        if s.username is not None:
            client.username_pw_set(s.username, s.password)
        if s.tls is not None:
            client.tls_set(
                ca_certs=s.tls.ca_certs,
                certfile=s.tls.certfile,
                keyfile=s.tls.keyfile,
                cert_reqs=ssl.CERT_REQUIRED,
            )
        if self._will is not None:
            client.will_set(self._will.topic, self._will.payload, self._will.qos, self._will.retain)
        if (
            isinstance(client, _BufferedClient)
            and self._manual_ack
            and (self._on_message is not None or self._on_messages is not None)
        ):
            client.fast_publish = self._handle_fast_publish
        client.on_connect = self._handle_connect
        client.on_disconnect = self._handle_disconnect
        client.on_message = self._handle_message
        client.on_publish = self._handle_publish
        client.on_subscribe = self._handle_subscribe
        self._connack.clear()
        self._refusal = None
        self._protocol = proto
        try:
            if proto == "5":
                props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]  # paho leaves it untyped
                props.ReceiveMaximum = s.receive_maximum
                props.SessionExpiryInterval = 0 if s.clean_start else s.session_expiry_s
                client.connect(
                    s.host, s.port, s.keepalive_s, clean_start=s.clean_start, properties=props
                )
            else:
                client.connect(s.host, s.port, s.keepalive_s)
        except OSError as exc:
            raise MqttUnreachable(f"{s.host}:{s.port}: {exc}") from exc
        client.loop_start()
        if not self._connack.wait(s.connect_timeout_s):
            self._shutdown(client)
            self._client = None  # a CONNACK may have come just too late
            raise MqttUnreachable(
                f"{s.host}:{s.port} sent no CONNACK to MQTT {proto} in {s.connect_timeout_s}s"
            )
        if self._refusal is not None:
            self._shutdown(client)
            raise MqttConnectRefused(self._refusal)
        self._client = client
        log.info("connected to %s:%d with MQTT %s as %s", s.host, s.port, proto, s.client_id)

    @staticmethod
    def _shutdown(client: paho.Client) -> None:
        client.disconnect()
        client.loop_stop()

    def _handle_connect(
        self,
        client: paho.Client,
        userdata: object,
        flags: paho.ConnectFlags,
        reason: ReasonCode,
        properties: Properties | None,
    ) -> None:
        if reason.is_failure:
            code = (
                "unsupported_protocol_version"
                if reason.value == _UNSUPPORTED_PROTOCOL_VERSION
                else str(reason).lower().replace(" ", "_")
            )
            self._connected.clear()
            if not self._connack.is_set():
                self._refusal = code
                self._connack.set()
            else:
                log.error("broker refused reconnection: %s", code)
            return
        limit = getattr(properties, "MaximumPacketSize", None) if properties else None
        self.max_packet_size = limit if isinstance(limit, int) else None
        with self._lock:
            self._connection += 1
            self._session_present = flags.session_present
            subs = dict(self._subscriptions)
        persistent = not self.settings.clean_start and self.settings.session_expiry_s > 0
        if persistent and self._connection > 1 and not flags.session_present:
            # Our session was there a connection ago and is gone: another client
            # connected with our client id and a clean session (Mosquitto 2.0 closes
            # the old connection without the 0x8E DISCONNECT reaching it), or the
            # broker lost its sessions. Either way what it queued for us is gone.
            self._taken_over("found our session gone on reconnect")
        if isinstance(client, _BufferedClient):
            # Before any PUBLISH of this connection: paho's thread reads them after us.
            client.fast_connection = self._connection
        if not flags.session_present:
            # The broker lost or never had our session: subscriptions go again.
            for topic, qos in subs.items():
                client.subscribe(topic, qos)
        if not self._connack.is_set():
            # Messages may arrive (and be acked) before connect() returns.
            self._client = client
        self._connected.set()
        self._connack.set()
        on_connect = self._on_connect
        if on_connect is not None:
            self._guarded("connect", "(connect)", lambda: on_connect(flags.session_present))

    def _handle_disconnect(
        self,
        client: paho.Client,
        userdata: object,
        flags: paho.DisconnectFlags,
        reason: ReasonCode,
        properties: Properties | None,
    ) -> None:
        was = self._connected.is_set()
        self._connected.clear()
        if reason.value == SESSION_TAKEN_OVER:
            self._taken_over("gave our session to another client (session taken over)")
        elif was:
            log.warning("disconnected from broker: %s", reason)
        on_disconnect = self._on_disconnect
        if was and on_disconnect is not None:
            self._guarded("disconnect", "(disconnect)", on_disconnect)

    def _handle_message(self, client: paho.Client, userdata: object, msg: paho.MQTTMessage) -> None:
        message = MqttMessage(
            topic=msg.topic,
            payload=bytes(msg.payload),
            qos=msg.qos,
            retain=msg.retain,
            mid=msg.mid,
            connection=self._connection,
        )
        on_messages, on_message = self._on_messages, self._on_message
        if on_messages is not None:
            self._guarded("message", message.topic, lambda: on_messages([message]))
        elif on_message is not None:
            self._guarded("message", message.topic, lambda: on_message(message))

    def _handle_fast_publish(self, messages: list[MqttMessage]) -> None:
        on_messages = self._on_messages
        if on_messages is not None:
            self._guarded("message", messages[0].topic, lambda: on_messages(messages))
            return
        on_message = self._on_message
        assert on_message is not None
        for message in messages:
            self._guarded("message", message.topic, functools.partial(on_message, message))

    def _handle_publish(
        self,
        client: paho.Client,
        userdata: object,
        mid: int,
        reason: ReasonCode,
        properties: Properties,
    ) -> None:
        on_publish = self._on_publish
        if on_publish is not None:
            self._guarded("publish", f"(ack of message {mid})", lambda: on_publish(mid))

    def _handle_subscribe(
        self,
        client: paho.Client,
        userdata: object,
        mid: int,
        reasons: list[ReasonCode],
        properties: Properties | None,
    ) -> None:
        with self._lock:
            done = self._subacks.pop(mid, None)
            if any(r.is_failure for r in reasons):
                self._sub_failed.add(mid)
        if done is not None:
            done.set()

    def _require(self) -> paho.Client:
        if self._client is None:
            raise MqttError("not connected: call connect() first")
        return self._client

    @property
    def session_present(self) -> bool:
        """True when the broker resumed a stored session on the last connect."""
        return self._session_present

    def subscribe(
        self, topic: str, qos: int = 1, *, wait: bool = True, timeout_s: float = 5.0
    ) -> None:
        """Subscribe and (by default) wait for the SUBACK; restored after a lost session.

        Raises ``MqttError`` when the broker rejects the subscription or does
        not confirm it in time (a subscription is not in place until then).
        Pass ``wait=False`` on a resumed session: its SUBACK queues behind the
        session's backlog, which may take longer than any sensible timeout.
        """
        client = self._require()
        done = threading.Event()
        with self._lock:
            self._subscriptions[topic] = qos
            rc, mid = client.subscribe(topic, qos)
            if rc == MQTTErrorCode.MQTT_ERR_SUCCESS and mid is not None:
                self._subacks[mid] = done
        if rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
            raise MqttError(f"subscribe {topic!r} failed: {paho.error_string(rc)}")
        if not wait:
            return
        if not done.wait(timeout_s):
            raise MqttError(f"no SUBACK for {topic!r} in {timeout_s}s")
        with self._lock:
            if mid in self._sub_failed:
                self._sub_failed.discard(mid)
                raise MqttError(f"broker rejected the subscription to {topic!r}")

    def publish(self, topic: str, payload: bytes, qos: int = 1, retain: bool = False) -> int:
        """Queue a message; returns its mid (``on_publish`` reports the broker's ack).

        While disconnected paho queues QoS 1 messages and sends them after the
        reconnect; callers that need end-to-end delivery use the watermark.
        """
        self._check_size(topic, payload)
        info = self._require().publish(topic, payload, qos=qos, retain=retain)
        if info.rc not in (MQTTErrorCode.MQTT_ERR_SUCCESS, MQTTErrorCode.MQTT_ERR_NO_CONN):
            raise MqttError(f"publish to {topic!r} failed: {paho.error_string(info.rc)}")
        return info.mid

    def _check_size(self, topic: str, payload: bytes) -> None:
        """Raise ``MqttPacketTooLarge`` for a packet the broker said it will not take."""
        limit = self.max_packet_size
        if limit is not None:
            size = len(payload) + len(topic.encode()) + _PUBLISH_OVERHEAD
            if size > limit:
                raise MqttPacketTooLarge(topic, size, limit)

    def publish_and_wait(
        self, topic: str, payload: bytes, qos: int = 1, retain: bool = False, timeout_s: float = 5.0
    ) -> bool:
        """Publish and wait for the broker's ack; False when it did not come in time.

        While disconnected the message stays queued and the wait covers the
        reconnect (paho's own ``wait_for_publish`` gives up at once then).
        A packet over the broker's Maximum Packet Size raises ``MqttPacketTooLarge``.
        """
        self._check_size(topic, payload)
        info = self._require().publish(topic, payload, qos=qos, retain=retain)
        if info.rc not in (MQTTErrorCode.MQTT_ERR_SUCCESS, MQTTErrorCode.MQTT_ERR_NO_CONN):
            return False
        deadline = time.monotonic() + timeout_s
        if not self.fast_paths:
            # The public path: paho's wait gives up at once while disconnected, so poll.
            while not info.is_published():
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.01)
            return True
        # paho's private condition, set when the PUBACK arrives on any connection.
        with info._condition:
            while not info._published:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                info._condition.wait(left)
        return True

    def ack(self, message: MqttMessage) -> None:
        """Acknowledge a QoS 1 message received on the current connection.

        A message from an earlier connection is left alone: the broker re-sends
        it on the new one and de-duplication absorbs the second copy.
        """
        if message.qos == 0 or message.connection != self._connection:
            return
        self._require().ack(message.mid, message.qos)

    def ack_many(self, messages: Iterable[MqttMessage]) -> None:
        """Acknowledge a batch of messages from the current connection in one write.

        paho sends each PUBACK with its own socket write, which costs more
        than the rest of ingest put together. The batch goes through paho's
        own outgoing queue as one blob of ordinary PUBACK packets (identical
        bytes in MQTT 3.1.1 and 5, where reason "success" may be omitted), so
        paho's single writer still owns the socket.
        """
        client = self._require()
        current, manual = self._connection, self._manual_ack
        if not self.fast_paths:
            for m in messages:
                self.ack(m)  # paho's public ack: one write per PUBACK
            return
        # Each PUBACK as one big-endian 32-bit word: header, length 2, packet id.
        words: list[int] = []
        for m in messages:
            if m.connection != current or m.qos == 0:
                continue
            if m.qos == 1 and manual:
                words.append(_PUBACK_WORD | m.mid)
            else:
                self.ack(m)
        if words:
            # Private paho API: only on the tested paho minor version (FAST_PATHS).
            client._packet_queue(_PUBACK_HEADER, struct.pack(f"!{len(words)}I", *words), 0, 0)

    def disconnect(self) -> None:
        """Close cleanly (the will is not sent) and stop the network thread."""
        client = self._client
        if client is None:
            return
        self._client = None
        self._connected.clear()
        self._shutdown(client)
