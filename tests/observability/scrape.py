"""Reading the endpoints the way Prometheus and a probe would: over HTTP, parsed."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from prometheus_client.parser import text_string_to_metric_families


def get(url: str) -> tuple[int, str]:
    """Status and body of a GET (an HTTP error status is a result, not an exception)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read().decode()


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of an exposition, keyed by name and label set."""
    out: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[s.name, frozenset(s.labels.items())] = s.value
    return out


def value(text: str, name: str, **labels: str) -> float | None:
    """One sample's value, or None when the exposition lacks it."""
    return samples(text).get((name, frozenset(labels.items())))


def scrape(base: str) -> str:
    status, body = get(f"{base}/metrics")
    assert status == 200, body
    return body


def probe(base: str, path: str) -> tuple[int, dict[str, Any]]:
    status, body = get(f"{base}{path}")
    return status, json.loads(body)


def eventually(check: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    """Poll ``check`` (what a scraper does) until it holds or time runs out."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()
