"""``sidewalk --help`` and each group's --help load no heavy library (Typer itself
brings pydantic, which it converts parameters with: that is the floor).

Timing is ``bench/cli_startup.py``'s job; this checks the cause: which modules a
help page imports (in a fresh interpreter). ``edge`` loads the pole's own
program, whose commands import the device, MQTT and settings code when they run.
"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = (
    "sqlalchemy", "alembic", "fpdf", "jinja2", "cv2", "numpy", "scipy", "fastapi", "uvicorn",
    "paho", "apscheduler", "pydantic_settings", "sidewalk.storage", "sidewalk.alerts",
    "sidewalk.analytics", "sidewalk.dashboard", "sidewalk.ingest", "sidewalk.scenarios",
    "sidewalk.edge.device", "sidewalk.core.mqtt",
)  # fmt: skip
GROUPS = ["demo", "replay", "ingest", "analytics", "act", "notices", "cold", "street",
          "inspect", "dashboard", "profile", "registry", "check", "edge"]  # fmt: skip

PROBE = """
import json, sys
from typer.testing import CliRunner
from sidewalk.cli import app
runner = CliRunner()
more = [["notices", "deliver"], ["cold", "pour"], ["edge", "run"], ["edge", "simulate"]]
for args in [[]] + [[g] for g in sys.argv[1:]] + more:
    result = runner.invoke(app, [*args, "--help"])
    assert result.exit_code == 0, (args, result.output)
print(json.dumps(sorted(sys.modules)))
"""


def test_help_pages_import_no_heavy_library() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *GROUPS], capture_output=True, text=True, check=True
    )
    loaded = json.loads(done.stdout)
    heavy = [m for m in loaded if any(m == h or m.startswith(f"{h}.") for h in HEAVY)]
    assert heavy == []


def test_the_delivery_methods_in_help_are_the_ones_delivery_takes() -> None:
    from sidewalk.alerts.delivery import DELIVERY_METHODS
    from sidewalk.cli import notices

    assert notices.DELIVERY_METHODS == DELIVERY_METHODS
