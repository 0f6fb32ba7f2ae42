"""Fixtures for the notice, delivery and money tests: real SQLite case records,
a real SMTP server (aiosmtpd) and a real HTTP server on loopback ports."""

from __future__ import annotations

import io
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session
from pypdf import PdfReader

from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.letterhead import Letterhead
from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.config import VillageConfig
from sidewalk.core.mqtt import MqttSettings
from sidewalk.core.profile import Profile, load_profile
from sidewalk.storage.cases import CaseStore
from sidewalk.system import confirm_for_demo, open_cases
from tests.harness.storm import StormTemplate, replay_once, restore

T0 = datetime(2026, 12, 10, 18, 0, tzinfo=UTC)
UNUSED_BROKER = MqttSettings(host="127.0.0.1", port=1, client_id="alerts-test")


def pdf_text(data: bytes) -> str:
    """All text of a PDF, pages joined: what a reader of the paper would see."""
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)


def flat(text: str) -> str:
    """Whitespace collapsed, so words wrapped across PDF lines still match."""
    return " ".join(text.split())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def profile() -> Profile:
    return load_profile()


def signature_png(path: Path) -> Path:
    """A drawn signature, as an officer's scanned one would be."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (480, 120), "white")
    ImageDraw.Draw(image).line(
        [(10 + 6 * i, 70 + (25 if i % 4 < 2 else -25)) for i in range(75)],
        fill=(10, 20, 110), width=4,
    )  # fmt: skip
    image.save(path, format="PNG")
    return path


@pytest.fixture
def village_settings(tmp_path: Path) -> VillageConfig:
    """The [village] letterhead settings the tests' letters are issued under."""
    return VillageConfig(
        office="Village Hall",
        address_lines=["1 Municipal Pl", "Clyman, WI 53016"],
        telephone="(920) 555-0142",
        email="clerk@clyman.example",
        office_hours="Monday to Friday, 8:00 AM to 4:00 PM",
        officer_name="Dana Krüger",
        officer_title="Clerk-Treasurer",
        signature_image=signature_png(tmp_path / "signature.png"),
    )


@pytest.fixture
def letterhead(village_settings: VillageConfig, profile: Profile) -> Letterhead:
    return Letterhead.from_settings(village_settings, profile)


@pytest.fixture
def cases(tmp_path: Path, profile: Profile) -> Iterator[CaseStore]:
    store = open_cases(f"sqlite:///{tmp_path / 'cases.sqlite3'}", profile)
    store.registry.upsert_owner(
        "owner-smith", "Jane Smith", ["101 Main St", "Clyman, WI 53016"], "jane@example.org"
    )
    store.registry.upsert_frontage(
        "main-101",
        site="clyman",
        parcel_number="026-0915-0001",
        street_address="101 Main St",
        length_ft=66.0,
        zone="residential",
        owner_id="owner-smith",
    )
    # In the open, as the demo does: the values the code text leaves open (tests of
    # holding notices use their own records, tests/alerts/test_confirmation.py).
    confirm_for_demo(store, profile, "alerts tests")
    yield store
    store.close()


@pytest.fixture
def issuer(cases: CaseStore, profile: Profile, letterhead: Letterhead) -> NoticeIssuer:
    return NoticeIssuer(cases, profile, letterhead=letterhead)


def storm_letterhead(workdir: Path, profile: Profile) -> Letterhead:
    """The letterhead the storm's notices are issued under (signature drawn in ``workdir``)."""
    return Letterhead.from_settings(
        VillageConfig(
            office="Village Hall", address_lines=["1 Municipal Pl", "Clyman, WI 53016"],
            telephone="(920) 555-0142", email="clerk@clyman.example",
            office_hours="Monday to Friday, 8:00 AM to 4:00 PM",
            officer_name="Dana Krüger", officer_title="Clerk-Treasurer",
            signature_image=signature_png(workdir / "storm-signature.png"),
        ),
        profile,
    )  # fmt: skip


@pytest.fixture(scope="session")
def storm_template(tmp_path_factory: pytest.TempPathFactory) -> StormTemplate:
    """first-storm replayed once for the session (tests/harness/storm.py)."""
    workdir = tmp_path_factory.mktemp("alerts-storm")
    profile = load_profile()
    return replay_once(
        workdir / "storm.sqlite3", profile, UNUSED_BROKER, storm_letterhead(workdir, profile)
    )


@pytest.fixture
def stormed(
    storm_template: StormTemplate, tmp_path: Path, profile: Profile
) -> Iterator[tuple[AnalyticsRunner, CaseStore]]:
    """first-storm through a stream-mode runner: two clearing violations with notices.

    A copy of the session's replay, with a runner resumed from its engine state."""
    runner, store = restore(
        storm_template, tmp_path / "storm.sqlite3", profile, UNUSED_BROKER,
        storm_letterhead(tmp_path, profile),
    )  # fmt: skip
    yield runner, store
    store.close()


# -- a real SMTP server --------------------------------------------------------------


@dataclass
class Mailbox:
    """What the SMTP server accepted; ``refuse`` makes it answer 550 to every message."""

    messages: list[Envelope] = field(default_factory=list)
    refuse: bool = False

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if self.refuse:
            return "550 mailbox unavailable"
        self.messages.append(envelope)
        return "250 OK"


@pytest.fixture
def smtp_server() -> Iterator[tuple[Mailbox, int]]:
    mailbox = Mailbox()
    port = free_port()
    controller = Controller(mailbox, hostname="127.0.0.1", port=port)
    controller.start()
    yield mailbox, port
    controller.stop()


# -- a real HTTP server for webhooks -----------------------------------------------------


@dataclass
class Hook:
    """Requests received; ``statuses`` are answered in order (then 200)."""

    requests: list[tuple[dict[str, str], dict[str, Any], bytes]] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)


@pytest.fixture
def webhook_server() -> Iterator[tuple[Hook, str]]:
    hook = Hook()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            status = hook.statuses.pop(0) if hook.statuses else 200
            if status == 200:
                hook.requests.append((dict(self.headers), json.loads(body), body))
            self.send_response(status)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield hook, f"http://127.0.0.1:{server.server_address[1]}/notices"
    server.shutdown()
    server.server_close()
