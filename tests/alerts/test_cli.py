"""The ``notices`` sub-app against real case records."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from typer.testing import CliRunner

from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.cli.notices import notices_app
from sidewalk.storage.cases import CaseStore
from tests.alerts.conftest import T0, flat, pdf_text


def test_register_queue_print_and_verify(
    issuer: NoticeIssuer, cases: CaseStore, tmp_path: Path
) -> None:
    notice = issuer.obstruction_notice(
        "obs-1", "main-101", T0, area="street", observed_at=T0, description="dumpster"
    )
    config = tmp_path / "sidewalk.toml"
    config.write_text(f'[cases]\ndatabase_url = "{cases.url}"\n', encoding="utf-8")
    runner = CliRunner()
    c = ["--config", str(config)]
    result = runner.invoke(notices_app, ["queue", notice.number, "--channel", "print", *c])
    assert result.exit_code == 0, result.output
    result = runner.invoke(notices_app, ["print-batch", "--out", str(tmp_path / "p"), *c])
    assert result.exit_code == 0, result.output
    [batch] = (tmp_path / "p").glob("print-batch-*.pdf")
    assert notice.number in flat(pdf_text(batch.read_bytes()))
    out = tmp_path / "register.csv"
    result = runner.invoke(notices_app, ["register", "--csv", str(out), *c])
    assert result.exit_code == 0, result.output
    [row] = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert (row["number"], row["deliveries"]) == (notice.number, "printed letter: sent")
    result = runner.invoke(notices_app, ["verify", *c])
    assert result.exit_code == 0
    assert "audit chain: ok" in result.output
    result = runner.invoke(notices_app, ["queue", "CLY-1999-000009", "--channel", "print", *c])
    assert result.exit_code == 1
    assert "no notice 'CLY-1999-000009'" in result.output
