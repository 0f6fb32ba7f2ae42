"""The operations dashboard for Grafana only charts metrics Sidewalk Watch really exports."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana-operations.json"
METRIC = re.compile(r"\bsidewalk_[a-z_]+")
# Where the metrics are exported: each role's collectors live in its own component.
EXPORTERS = [
    ROOT / f"{part}/sidewalk/{part}/metrics.py"
    for part in ("ingest", "analytics", "edge", "dashboard")
]
# A histogram's series carry these suffixes; the family is named without them.
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


def family(series: str) -> str:
    for suffix in HISTOGRAM_SUFFIXES:
        if series.endswith(suffix):
            return series.removesuffix(suffix)
    return series


def test_every_panel_queries_prometheus_for_a_documented_exported_metric() -> None:
    dashboard = json.loads(DASHBOARD.read_text("utf-8"))
    documented = set(re.findall(r"^\| `(sidewalk_[a-z_]+)`", _read("docs/observability.md"), re.M))
    code = "\n".join(p.read_text("utf-8") for p in EXPORTERS)
    assert dashboard["panels"], "no panels"
    for panel in dashboard["panels"]:
        assert panel["datasource"]["type"] == "prometheus", panel["title"]
        exprs = [t["expr"] for t in panel["targets"]]
        names = {family(n) for e in exprs for n in METRIC.findall(e)}
        assert names, f"{panel['title']}: no Sidewalk Watch metric in {exprs}"
        for name in names:
            assert name in documented, f"{panel['title']}: {name} is not in docs/observability.md"
            # prometheus_client adds _total to counters itself: the code names the family.
            assert name.removesuffix("_total") in code, f"{panel['title']}: nothing exports {name}"


def test_panels_do_not_overlap() -> None:
    panels = json.loads(DASHBOARD.read_text("utf-8"))["panels"]
    cells: set[tuple[int, int]] = set()
    for panel in panels:
        g = panel["gridPos"]
        mine = {
            (x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])
        }
        assert not cells & mine, f"{panel['title']} overlaps another panel"
        cells |= mine


def _read(relative: str) -> str:
    return (ROOT / relative).read_text("utf-8")
