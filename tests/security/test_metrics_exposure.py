"""``/metrics`` is never served unauthenticated off loopback, by the code or any shipped file.

The process endpoints (``core/observability.py``) bound to a non-loopback
address answer a client off the machine only with the bearer token; the
shipped files that bind one (the county layout) give the token.
"""

from __future__ import annotations

import re
import socket
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, Counter

from sidewalk.core.observability import ObservabilityServer

REPO = Path(__file__).resolve().parents[2]
TOKEN = "scrape-token-0123456789"


def own_address() -> str | None:
    """A non-loopback address of this machine (the one a route outwards uses)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.254", 9))  # no packet is sent for a UDP connect
        except OSError:
            return None
        address = str(s.getsockname()[0])
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def get(url: str, token: str | None = None) -> int:
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def registry() -> CollectorRegistry:
    reg = CollectorRegistry()
    Counter("sidewalk_probe", "a probe", registry=reg).inc()
    return reg


@pytest.mark.parametrize("token", [None, TOKEN])
def test_off_loopback_metrics_need_the_token(
    token: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    address = own_address()
    if address is None:
        pytest.skip("this machine has no non-loopback address")
    monkeypatch.delenv("SIDEWALK_METRICS_TOKEN", raising=False)
    server = ObservabilityServer(
        registry(), live={}, ready={}, host="0.0.0.0", port=0, metrics_token=token
    )
    server.start()
    try:
        outside = f"http://{address}:{server.port}"
        assert get(f"{outside}/metrics") == 403  # no token: refused, configured or not
        assert get(f"{outside}/metrics", "wrong") == 403
        assert get(f"{outside}/metrics", TOKEN) == (200 if token else 403)
        assert get(f"{outside}/healthz") == 200  # the health routes stay open
        assert get(f"http://127.0.0.1:{server.port}/metrics") == 200  # this machine
    finally:
        server.stop()


def test_on_loopback_metrics_stay_open() -> None:
    server = ObservabilityServer(registry(), live={}, ready={}, host="127.0.0.1", port=0)
    server.start()
    try:
        assert get(f"{server.url}/metrics") == 200
    finally:
        server.stop()


def _loopback(host: str) -> bool:
    return host in {"127.0.0.1", "::1", "localhost"}


def test_no_shipped_file_serves_metrics_unauthenticated_off_loopback() -> None:
    """Every config under deploy/ that binds observability off loopback has the token
    in its service's environment; the dashboard's units bind loopback."""
    off_loopback = []
    for path in sorted((REPO / "deploy").rglob("*.toml")):
        data = tomllib.loads(path.read_text())
        host = data.get("observability", {}).get("host", "127.0.0.1")
        if not _loopback(host):
            off_loopback.append(path.name)
    assert off_loopback == ["sidewalk.county.toml"]  # the one that does, checked next
    compose = (REPO / "deploy" / "scale" / "docker-compose.yml").read_text()
    assert re.search(r"SIDEWALK_METRICS_TOKEN: \$\{SIDEWALK_METRICS_TOKEN:\?", compose)
    for unit in sorted((REPO / "deploy").glob("*.service")):
        text = unit.read_text()
        for host in re.findall(r"--host\s+(\S+)", text):
            assert _loopback(host), (unit.name, host)
