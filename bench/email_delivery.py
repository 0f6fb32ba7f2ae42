"""E-mail delivery rate to a local SMTP server (aiosmtpd), beside bare smtplib loops.

``--messages`` rendered notices are queued for e-mail and sent by the
``Deliverer``: claim in the outbox, render the PDF, one SMTP connection per
message, then the sent record, the delivery, the notice's delivery time and
the clock's action, each committed to SQLite. References in the same run send
the same messages (built beforehand, PDFs attached) with plain ``smtplib``:
one connection per message (what the Deliverer does on the wire), and all
messages over one connection (the wire's ceiling).

    uv run python -m bench.email_delivery [--messages 500]
"""

from __future__ import annotations

import argparse
import smtplib
import socket
import tempfile
import time
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session

from sidewalk.alerts.delivery import (
    Deliverer,
    SmtpChannel,
    SmtpSettings,
    notice_email,
    queue_notice,
)
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.pdf import notice_pdf
from sidewalk.core.profile import load_profile
from sidewalk.storage.cases import CaseStore

T0 = datetime(2026, 12, 11, 23, 0, tzinfo=UTC)
SENDER = "dpw@clyman.example"


class Counter:
    def __init__(self) -> None:
        self.count = 0

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        self.count += 1
        return "250 OK"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=500)
    args = parser.parse_args()
    n = args.messages
    profile = load_profile()
    counter = Counter()
    port = free_port()
    controller = Controller(counter, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-email-") as tmp:
            cases = CaseStore(f"sqlite:///{Path(tmp) / 'cases.sqlite3'}")
            cases.create_schema()
            issuer = NoticeIssuer(cases, profile)
            notices = []
            for i in range(n):
                cases.registry.upsert_owner(
                    f"o-{i}", f"Owner {i}", [f"{i} Main St", "Clyman, WI"], f"o{i}@example.org"
                )
                cases.registry.upsert_frontage(
                    f"f-{i}", site="clyman", parcel_number=f"P-{i}", street_address=f"{i} Main St",
                    length_ft=66.0, zone="residential", owner_id=f"o-{i}",
                )  # fmt: skip
                notice = issuer.obstruction_notice(
                    f"o{i}", f"f-{i}", T0, area="street", observed_at=T0, description="dumpster"
                )
                queue_notice(cases, notice.id, ["email"], T0)
                notices.append(notice)
            messages: list[EmailMessage] = [
                notice_email(
                    x,
                    profile,
                    notice_pdf(x, profile),
                    sender=SENDER,
                    to=f"o{i}@example.org",
                    message_id=f"<{x.number}@bench>",
                    at=T0,
                )
                for i, x in enumerate(notices)
            ]
            rows = []

            started = time.perf_counter()
            for msg in messages:
                with smtplib.SMTP("127.0.0.1", port) as smtp:
                    smtp.send_message(msg)
            rows.append(("bare smtplib, a connection per message", time.perf_counter() - started))

            started = time.perf_counter()
            with smtplib.SMTP("127.0.0.1", port) as smtp:
                for msg in messages:
                    smtp.send_message(msg)
            rows.append(("bare smtplib, one connection", time.perf_counter() - started))

            channel = SmtpChannel(
                SmtpSettings("127.0.0.1", port, SENDER), profile, clock=lambda: T0
            )
            worker = Deliverer(cases, profile, {"email": channel}, clock=lambda: T0)
            started = time.perf_counter()
            report = worker.run_once()
            rows.append(
                ("Deliverer (outbox, PDF, records, clock action)", time.perf_counter() - started)
            )
            assert len(report.sent) == n, report
            again = worker.run_once()
            assert again.sent == []
            size = len(messages[0].as_bytes())
            cases.close()
    finally:
        controller.stop()
    assert counter.count == 3 * n, counter.count
    print(f"{n} notices, {size / 1024:.1f} KiB per message (PDF attached), aiosmtpd on loopback")
    print("| sender | seconds | messages/s |\n|---|---:|---:|")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.2f} | {n / seconds:,.0f} |")
    print("second Deliverer run: 0 sent (every job already sent)")


if __name__ == "__main__":
    main()
