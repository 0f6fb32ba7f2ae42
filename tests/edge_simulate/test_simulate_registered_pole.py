"""``sidewalk edge simulate --device``: a stand-in for the village's own pole.

The story is laid on the registered pole and the frontages the registry assigns
it, stamped up to now, so the village's real ``sidewalk ingest`` takes every
reading (before, a scenario's own ids and dates were all quarantined).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from sidewalk.cli import app
from sidewalk.scenarios import PoleFrontage, ScenarioError, expand, load_scenario, on_pole
from tests.harness.mosquitto import MosquittoServer, free_port
from tests.registry.parcels import generate, write_geojson


def test_on_pole_moves_ids_and_times_and_keeps_each_script() -> None:
    story = load_scenario("first-storm")
    ending = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)
    mine = [PoleFrontage(f"lot-{k}", f"{100 + k} Oak St", 60.0) for k in range(4)]
    laid = on_pole(story, "pole-oak-1", mine, ending)
    assert laid.scenario.device == "pole-oak-1"
    assert laid.scenario.end == ending
    shift = ending - story.scenario.end
    assert laid.scenario.start == story.scenario.start + shift
    assert [f.id for f in laid.frontage] == [f.id for f in mine]
    # The fourth frontage repeats the first one's clearing, moved in time.
    first = story.frontage[0].id
    theirs = [(c.at + shift, c.cleared_width_ft) for c in story.clearing if c.frontage == first]
    assert [(c.at, c.cleared_width_ft) for c in laid.clearing if c.frontage == "lot-3"] == theirs
    rows = expand(laid)
    assert max(r.ts_ms for r in rows) <= int(ending.timestamp() * 1000)
    assert {r.values["frontage"] for r in rows if r.stream == "snow"} == {f.id for f in mine}
    with pytest.raises(ScenarioError, match="watches no frontage"):
        on_pole(story, "pole-oak-1", [], ending)


def _sidewalk(config: Path, *args: str) -> str:
    result = CliRunner().invoke(app, [*args, "--config", str(config)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def test_a_stand_in_for_a_registered_pole_is_stored_by_ingest(  # noqa: PLR0915
    broker: MosquittoServer, tmp_path: Path
) -> None:
    metrics = free_port()
    config = tmp_path / "sidewalk.toml"
    config.write_text(
        f'data_dir = "{tmp_path / "var"}"\n'
        f'[mqtt]\nurl = "mqtt://{broker.host}:{broker.port}"\n'
        f'[cases]\ndatabase_url = "sqlite:///{tmp_path / "cases.sqlite3"}"\n'
        f'[timeseries]\nsqlite_path = "{tmp_path / "ts.sqlite3"}"\n'
        f"[observability]\ningest_port = {metrics}\n",
        encoding="utf-8",
    )
    county = write_geojson(generate(blocks_x=1, blocks_y=1, lots=3), tmp_path / "county.geojson")
    _sidewalk(config, "registry", "import", str(county))
    from sidewalk.core.profile import load_profile
    from sidewalk.storage.connect import open_cases

    cases = open_cases(f"sqlite:///{tmp_path / 'cases.sqlite3'}", load_profile())
    try:
        lots = sorted(
            (f for f in cases.registry.list_frontages() if f.street_address[0].isdigit()),
            key=lambda f: f.street_address,
        )[:3]
    finally:
        cases.close()
    device = f"pole-{os.getpid()}"
    # Unknown pole: refused in one line that says how to register it.
    refused = CliRunner().invoke(
        app, ["edge", "simulate", "--device", device, "--config", str(config)]
    )
    assert refused.exit_code == 2
    assert "register it on the dashboard's Poles page" in refused.output
    _sidewalk(config, "registry", "pole", "add", device, "--by", "it",
              "--watches", lots[1].id, "--watches", lots[2].id)  # fmt: skip
    # A second pole, with the stand-in camera (one pole plays one storm: a second
    # storm over the same hours would step its clock back).
    camera_pole = f"{device}-cam"
    _sidewalk(config, "registry", "pole", "add", camera_pole, "--by", "it",
              "--watches", lots[0].id)  # fmt: skip
    not_watched = CliRunner().invoke(
        app, ["edge", "simulate", "--device", device, "--frontage", "1 Nowhere Rd",
              "--config", str(config)],
    )  # fmt: skip
    assert not_watched.exit_code == 2
    assert "does not watch it" in not_watched.output

    env = {k: v for k, v in os.environ.items() if not k.startswith("SIDEWALK_")}
    ingest = subprocess.Popen(
        [sys.executable, "-m", "sidewalk.cli", "ingest", "--config", str(config)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{metrics}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        done = subprocess.run(
            [sys.executable, "-m", "sidewalk.cli", "edge", "simulate", "--device", device,
             "--frontage", lots[1].street_address, "--config", str(config)],
            capture_output=True, text=True, timeout=300, env=env, check=False,
        )  # fmt: skip
        # As a whole pole with the stand-in camera: a first picture for the Poles page.
        shown = subprocess.run(
            [sys.executable, "-m", "sidewalk.cli", "edge", "simulate", "--device", camera_pole,
             "--camera", "--stay", "1",
             "--config", str(config)],
            capture_output=True, text=True, timeout=300, env=env, check=False,
        )  # fmt: skip
    finally:
        ingest.terminate()
        ingest.wait(timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all stored" in done.stdout, done.stdout
    assert f"{lots[1].street_address}: plays" in done.stdout
    from sidewalk.storage.timeseries import SqliteTimeSeriesStore

    store = SqliteTimeSeriesStore(tmp_path / "ts.sqlite3")
    try:
        assert store.count(device=device) > 100
        assert store.dead_letters(device=device) == []  # none quarantined, none unknown
        snow = store.readings(device=device, stream="snow")
        # Only the frontage asked for, and stamped in the last days up to now.
        # Ignored: ``readings`` returns the union; only snow readings (with a frontage) are here.
        assert {r.frontage for r in snow} == {lots[1].id}  # type: ignore[union-attr]
        now_ms = int(datetime.now(UTC).timestamp() * 1000)
        week_ms = int(timedelta(days=7).total_seconds() * 1000)
        assert all(now_ms - week_ms < r.ts <= now_ms for r in snow)
        assert shown.returncode == 0, shown.stdout + shown.stderr
        assert "the camera shows 1 frontage(s)" in shown.stdout
        assert "all stored" in shown.stdout, shown.stdout
        # The Poles page's own lookup finds the stand-in's picture, a 1080p JPEG.
        from sidewalk.dashboard.routes.registry import latest_frame
        from sidewalk.storage.evidence import EvidenceStore

        evidence = EvidenceStore(tmp_path / "var" / "evidence")
        assert store.dead_letters(device=camera_pole) == []
        # Ignored: ``readings`` returns the union; only snow readings (with a frontage) are here.
        assert {r.frontage for r in store.readings(device=camera_pole, stream="snow")} == {  # type: ignore[union-attr]
            lots[0].id
        }
        found = latest_frame(store, evidence, camera_pole, datetime.now(UTC))
        assert found is not None
        assert now_ms - 60_000 < found[1] <= int(datetime.now(UTC).timestamp() * 1000)
        import cv2
        import numpy as np

        picture = cv2.imdecode(np.frombuffer(evidence.get(found[0]), np.uint8), cv2.IMREAD_COLOR)
        assert picture is not None
        assert picture.shape == (1080, 1920, 3)
    finally:
        store.close()
