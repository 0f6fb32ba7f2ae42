"""Request bodies are bounded before they are read, on every route, before login too.

The dashboard runs as its own uvicorn process, so its resident memory (its peak,
``VmHWM`` in ``/proc``) is the server's alone. A 300 MB body declared to the login
route and a chunked one with no length are refused with 413 in well under a second
while the server's peak memory stays where it was.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from sidewalk.dashboard.body_limit import DEFAULT_LIMIT
from sidewalk.dashboard.routes.rounds import MAX_PHOTO_BYTES
from tests.dashboard.conftest import free_port

SERVER = """
import sys
import uvicorn
from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app
from sidewalk.storage.cases import CaseStore

cases = CaseStore(f"sqlite:///{sys.argv[1]}")
cases.create_schema()
app = create_app(
    cases, None, load_profile(), secret_key="request-limits-secret-0123",
    host_names=["sidewalk.example.org"],
)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
"""

MB = 1024 * 1024
DECLARED = 300 * 1000 * 1000  # the 300 MB login body of the attack
CHUNK = b" " * MB


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    port: int

    def peak_kb(self) -> int:
        """The server process's peak resident memory so far (kB)."""
        status = Path(f"/proc/{self.process.pid}/status").read_text(encoding="ascii")
        line = next(x for x in status.splitlines() if x.startswith("VmHWM:"))
        return int(line.split()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    db = tmp_path_factory.mktemp("limits") / "cases.sqlite3"
    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", SERVER, str(db), str(port)])
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, "the dashboard exited"
            assert time.monotonic() < deadline, "the dashboard did not start"
            try:
                httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        # Warm: the first login and 422 build what later ones reuse.
        httpx.post(f"http://127.0.0.1:{port}/api/session", json={"username": "x"})
        yield Server(process, port)
    finally:
        process.terminate()
        process.wait(timeout=10)


def send(port: int, head: str, body: Iterator[bytes]) -> tuple[int, dict[str, str], float]:
    """Send ``head`` and as much of ``body`` as the server takes; (status, JSON, seconds)."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(head.encode("ascii"))
        try:
            for chunk in body:
                sock.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed: what is wanted
        reply = b""
        try:
            while data := sock.recv(65536):
                reply += data
        except ConnectionResetError:
            pass
    elapsed = time.monotonic() - started
    status_line, _, rest = reply.partition(b"\r\n")
    _, _, payload = rest.partition(b"\r\n\r\n")
    return int(status_line.split()[1]), json.loads(payload or b"{}"), elapsed


def declared_body() -> Iterator[bytes]:
    for _ in range(DECLARED // MB):
        yield CHUNK


def chunked_body() -> Iterator[bytes]:
    """A JSON body of 300 MB in 1 MB chunks, its length declared nowhere."""
    for _ in range(DECLARED // MB):
        yield b"100000\r\n" + CHUNK + b"\r\n"
    yield b"0\r\n\r\n"


def test_a_300_mb_login_body_is_refused_before_it_is_read(server: Server) -> None:
    before = server.peak_kb()
    head = (
        "POST /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: application/json\r\nContent-Length: {DECLARED}\r\n\r\n"
    )
    status, body, seconds = send(server.port, head, declared_body())
    grown_mb = (server.peak_kb() - before) / 1024
    print(f"declared 300 MB: {status} in {seconds:.2f} s, peak memory +{grown_mb:.1f} MB")
    assert status == 413, body
    assert "larger than the dashboard accepts" in body["detail"]
    assert seconds < 2
    assert grown_mb < 20


def test_a_chunked_body_is_counted_and_cut_off_at_the_limit(server: Server) -> None:
    before = server.peak_kb()
    head = (
        "POST /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    status, body, seconds = send(server.port, head, chunked_body())
    grown_mb = (server.peak_kb() - before) / 1024
    print(f"chunked 300 MB: {status} in {seconds:.2f} s, peak memory +{grown_mb:.1f} MB")
    assert status == 413, body
    assert "larger than the dashboard accepts" in body["detail"]
    assert seconds < 2
    assert grown_mb < 20


def test_a_photo_route_keeps_its_own_larger_limit(server: Server) -> None:
    """Within a route's limit the request reaches the route (here: no session, 401);
    the same size to a JSON route is refused unread, a photo over 20 MB too."""
    url = f"http://127.0.0.1:{server.port}"
    photo = b"\xff\xd8\xff" + b"0" * (2 * MB)
    reached = httpx.post(f"{url}/api/rounds/main-st-101/photos", content=photo,
                         headers={"Content-Type": "image/jpeg"})  # fmt: skip
    assert reached.status_code == 401, reached.text
    json_route = httpx.post(f"{url}/api/notices/print-batch", content=photo,
                            headers={"Content-Type": "application/json"})  # fmt: skip
    assert json_route.status_code == 413
    head = (
        "POST /api/rounds/main-st-101/photos HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: image/jpeg\r\nContent-Length: {21 * MB}\r\n\r\n"
    )
    status, body, _ = send(server.port, head, iter([b"\xff\xd8\xff"]))
    assert status == 413
    assert "over 20 MB" in body["detail"]


def test_the_shipped_proxy_configuration_carries_the_same_limits() -> None:
    """deploy/nginx-sidewalk.conf refuses what the dashboard refuses, route for route."""
    conf = (Path(__file__).resolve().parents[2] / "deploy" / "nginx-sidewalk.conf").read_text()
    sizes = {"k": 1024, "m": MB}

    def size(text: str) -> int:
        return int(text[:-1]) * sizes[text[-1]]

    server_wide = re.search(r"^    client_max_body_size (\d+[km]);", conf, re.M)
    assert server_wide is not None
    assert size(server_wide[1]) == DEFAULT_LIMIT
    photos = re.search(
        r"location ~ \^(/api/rounds/\[\^/\]\+/photos)\$ \{\s*client_max_body_size (\d+[km]);", conf
    )
    assert photos is not None
    assert size(photos[2]) == MAX_PHOTO_BYTES
    assert re.fullmatch(photos[1], "/api/rounds/main-st-101/photos")
