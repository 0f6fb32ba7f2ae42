"""Map geometry sources and the Grafana dashboard's queries (pure, no server)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sidewalk.core.contract import SnowMeasurement, WeatherReading
from sidewalk.dashboard.geometry import (
    GeometryError,
    frontage_features,
    generated_layout,
    generated_streets,
    load_geojson,
)
from sidewalk.storage.cases import FrontageRecord

GRAFANA = Path(__file__).resolve().parents[2] / "deploy" / "grafana-dashboard.json"


def frontage(fid: str, address: str) -> FrontageRecord:
    return FrontageRecord(fid, "clyman", "p", address, 66.0, "residential", "o", None, False)


def test_file_beats_records_beats_generated(tmp_path: Path) -> None:
    square = {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]}
    line = {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}
    path = tmp_path / "frontages.geojson"
    path.write_text(
        json.dumps(
            {
                "type": "FeatureCollection",
                "features": [
                    {"type": "Feature", "properties": {"frontage": "a"}, "geometry": line}
                ],
            }
        )
    )
    rows = [
        frontage("a", "101 Main St"),
        frontage("b", "103 Main St"),
        frontage("c", "102 Main St"),
    ]
    features = frontage_features(rows, {"a": square, "b": square}, load_geojson(path))
    sources = {f["id"]: (f["properties"]["geometry_source"], f["geometry"]) for f in features}
    assert sources["a"] == ("file", line)
    assert sources["b"] == ("records", square)
    assert sources["c"][0] == "generated"


def test_generated_layout_follows_house_numbers() -> None:
    rows = [
        frontage("n1", "101 Main St"),
        frontage("n2", "103 Main St"),
        frontage("s1", "102 Main St"),
    ]
    layout = generated_layout(rows)

    def lat(fid: str) -> float:
        return float(layout[fid]["coordinates"][0][0][1])

    def lon(fid: str) -> float:
        return float(layout[fid]["coordinates"][0][0][0])

    assert lat("n1") > lat("s1")  # odd numbers on the north side (§ 370-16)
    assert lat("n1") == lat("n2")
    assert lon("n1") < lon("n2")
    (street,) = generated_streets(rows)
    assert street["properties"]["street"] == "Main St"
    street_lats = [p[1] for p in street["geometry"]["coordinates"][0]]
    assert lat("s1") < min(street_lats) < max(street_lats) < lat("n1")


def test_not_a_feature_collection(tmp_path: Path) -> None:
    path = tmp_path / "bad.geojson"
    path.write_text('{"type": "Feature"}')
    with pytest.raises(GeometryError, match="FeatureCollection"):
        load_geojson(path)


def test_grafana_queries_name_real_contract_fields() -> None:
    dashboard = json.loads(GRAFANA.read_text("utf-8"))
    known = {
        "weather": set(WeatherReading.model_fields),
        "snow": set(SnowMeasurement.model_fields),
    }
    checked = 0
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            query = target["query"]
            measurement = re.search(r'r\._measurement == "(\w+)"', query)
            fields = re.findall(r'r\._field == "(\w+)"', query)
            assert fields, panel["title"]
            allowed = known[measurement[1]] if measurement else {"seq"}
            assert set(fields) <= allowed, (panel["title"], fields)
            checked += 1
    assert checked == len(dashboard["panels"])
