"""``sidewalk check``: each thing that keeps the system from going live, one by one.

The judgement (``readiness_problems``) is tested on records built in memory:
a ready village, then one thing broken at a time, each giving exactly its one
line with the command that fixes it. Then the command itself on a SQLite
case store: ready (exit 0), one problem (exit 1), a configuration it cannot
read (exit 2).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sidewalk.cli import app
from sidewalk.cli.check import (
    Problem,
    Readiness,
    delivery_problems,
    envelope_problem,
    readiness_problems,
)
from sidewalk.core.config import DeliveryConfig
from sidewalk.storage.cases import DeviceRecord, FrontageRecord, OwnerRecord

NOW = datetime(2026, 12, 1, 18, 0, tzinfo=UTC)
MINUTES = timedelta(minutes=30)


def frontage(fid: str, address: str, device: str | None = "pole-1", **kw: Any) -> FrontageRecord:
    return FrontageRecord(
        id=fid, site="clyman", parcel_number=f"P-{fid}", street_address=address, length_ft=66.0,
        zone="residential", owner_id=f"owner-{fid}", device_id=device,
        may_deposit_on_street=False, **kw,
    )  # fmt: skip


def owner(name: str = "Jane Doe", *lines: str) -> OwnerRecord:
    return OwnerRecord(
        id="o", name=name, address_lines=lines or ("PO Box 12", "Clyman WI 53016"), email=None,
        updated_at=NOW,
    )  # fmt: skip


def pole(**kw: Any) -> DeviceRecord:
    fields: dict[str, Any] = {
        "id": "pole-1", "site": "clyman", "last_seen": NOW - timedelta(minutes=5),
        "availability": "online", "reported_calibration": "abc",
    }  # fmt: skip
    return DeviceRecord(**{**fields, **kw})


def ready() -> Readiness:
    frontages = [frontage("main-st-105", "105 Main St"), frontage("main-st-107", "107 Main St")]
    return Readiness(
        frontages=frontages,
        owners={f.id: owner() for f in frontages},
        poles={"pole-1": pole()},
        calibrated=frozenset(("pole-1", f.id) for f in frontages),
        expected_calibration={"pole-1": "abc"},
    )


def problems(state: Readiness) -> list[str]:
    return [p.line() for p in readiness_problems(state, NOW, MINUTES)]


def test_a_ready_village_has_no_problem() -> None:
    assert problems(ready()) == []


def _owners(**by_frontage: OwnerRecord) -> Callable[[Readiness], Readiness]:
    return lambda s: dataclasses.replace(s, owners={**s.owners, **by_frontage})


def _frontages(*changed: FrontageRecord) -> Callable[[Readiness], Readiness]:
    def change(s: Readiness) -> Readiness:
        ids = {f.id for f in changed}
        return dataclasses.replace(s, frontages=[f for f in s.frontages if f.id not in ids] +
                                   list(changed))  # fmt: skip

    return change


BROKEN: dict[str, tuple[Callable[[Readiness], Readiness], str, str]] = {
    "no frontage": (
        lambda s: dataclasses.replace(s, frontages=[], owners={}),
        "no frontage is registered",
        "sidewalk registry import",
    ),
    "no owner of record": (
        lambda s: dataclasses.replace(s, owners={"main-st-107": owner()}),
        "105 Main St: no owner of record",
        'sidewalk registry edit owner "105 Main St"',
    ),
    "no mailing address": (
        _owners(**{"main-st-105": dataclasses.replace(owner(), address_lines=())}),
        "105 Main St: the owner of record's mailing address: there is no mailing address",
        'sidewalk registry edit owner "105 Main St" --address-line',
    ),
    "too many address lines": (
        _owners(
            **{
                "main-st-105": owner(
                    "Jane Doe", "c/o A", "Suite 4", "PO Box 12", "Town", "WI 53016"
                )
            }
        ),
        "name and mailing address take 6 lines; a window envelope shows 5",
        'sidewalk registry edit owner "105 Main St"',
    ),
    "an address line wider than the window": (
        _owners(
            **{
                "main-st-107": owner(
                    "Jane Doe",
                    "The Jane Doe Revocable Living Trust Dated March 4 2011",
                    "Clyman WI",
                )
            }
        ),
        "107 Main St: the owner of record's mailing address: 'The Jane Doe Revocable Living"
        " Trust Dated March 4 2011' is wider than a window envelope's address block",
        'sidewalk registry edit owner "107 Main St"',
    ),
    "no pole": (
        _frontages(frontage("main-st-107", "107 Main St", device=None)),
        "107 Main St: no pole watches it",
        'sidewalk registry pole assign POLE "107 Main St"',
    ),
    "a retired pole": (
        lambda s: dataclasses.replace(
            _frontages(frontage("main-st-107", "107 Main St", device="pole-0"))(s),
            poles={**s.poles, "pole-0": pole(id="pole-0", retired_at=NOW)},
        ),
        "107 Main St: no pole watches it (pole pole-0 is retired)",
        'sidewalk registry pole assign POLE "107 Main St"',
    ),
    "a pole that never reported": (
        lambda s: dataclasses.replace(s, poles={"pole-1": pole(last_seen=None)}),
        "pole pole-1 (watching 105 Main St, 107 Main St) has never reported, not within the"
        " last 30 minutes",
        "sidewalk registry pole list",
    ),
    "a pole silent for 31 minutes": (
        lambda s: dataclasses.replace(
            s, poles={"pole-1": pole(last_seen=NOW - timedelta(minutes=31))}
        ),
        "pole pole-1 (watching 105 Main St, 107 Main St) last reported 2026-12-01 17:29",
        "power the pole",
    ),
    "no calibrated view": (
        lambda s: dataclasses.replace(s, calibrated=frozenset({("pole-1", "main-st-105")})),
        "107 Main St: pole pole-1 has no calibrated view of the walk",
        "dashboard → Poles → pole pole-1: Calibrate 107 Main St, then Send to pole",
    ),
    "the pole runs another calibration": (
        lambda s: dataclasses.replace(s, poles={"pole-1": pole(reported_calibration="old")}),
        "pole pole-1 runs a different calibration from the registry's",
        "dashboard → Poles → pole pole-1: Send to pole",
    ),
    "no letterhead": (
        lambda s: dataclasses.replace(s, letterhead=["[village] is not set: …"]),
        "letterhead: [village] is not set",
        "the [village] section of the configuration",
    ),
    "a value awaiting confirmation": (
        lambda s: dataclasses.replace(
            s, unconfirmed=[("abatement_rates.crew_hourly_rate", "$45.00")]
        ),
        "the profile value abatement_rates.crew_hourly_rate ($45.00) awaits the Village's"
        " confirmation",
        'sidewalk profile confirm abatement_rates.crew_hourly_rate --by "Village Board"',
    ),
    "21 values awaiting confirmation": (
        lambda s: dataclasses.replace(
            s, unconfirmed=[(f"billing.value_{k}", f"{k} days") for k in range(21)]
        ),
        "21 profile values await the Village's confirmation, e.g. billing.value_0 (0 days),"
        " billing.value_1 (1 days), billing.value_2 (2 days) …",
        "sidewalk profile unconfirmed lists each",
    ),
    "no delivery": (
        lambda s: dataclasses.replace(s, delivery=delivery_problems(DeliveryConfig(), {})),
        "delivery is not set up",
        '[delivery] methods = ["print"]',
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_each_problem_is_one_line_with_its_fix(case: str) -> None:
    breaks, what, fix = BROKEN[case]
    lines = problems(breaks(ready()))
    assert len(lines) == 1, lines
    said, fixed_by = lines[0].split(" — fix: ")
    assert what in said
    assert fix in fixed_by


def test_the_pole_reported_limit_is_the_setting() -> None:
    state = dataclasses.replace(ready(), poles={"pole-1": pole(last_seen=NOW - MINUTES)})
    assert problems(state) == []  # exactly 30 minutes ago is within 30 minutes
    late = readiness_problems(state, NOW, timedelta(minutes=20))
    assert [p.what.split(",")[-1] for p in late] == [" not within the last 20 minutes"]


def test_a_pole_that_has_not_reported_a_calibration_yet_is_not_called_different() -> None:
    quiet = dataclasses.replace(ready(), poles={"pole-1": pole(reported_calibration=None)})
    assert problems(quiet) == []


def test_a_corner_lot_names_each_frontage_by_its_street_and_id() -> None:
    corner = [
        frontage("main-st-101", "101 Main St", device=None, street="Main St"),
        frontage("oak-ave-101", "101 Main St", device=None, street="Oak Ave"),
    ]
    state = dataclasses.replace(ready(), frontages=corner, owners={f.id: owner() for f in corner})
    assert problems(state) == [
        "101 Main St (Main St): no pole watches it — fix: sidewalk registry pole assign POLE"
        ' main-st-101 --by "YOUR NAME" (or, while no pole watches it: sidewalk registry'
        ' unwatched add main-st-101 --by "YOUR NAME")',
        "101 Main St (Oak Ave): no pole watches it — fix: sidewalk registry pole assign POLE"
        ' oak-ave-101 --by "YOUR NAME" (or, while no pole watches it: sidewalk registry'
        ' unwatched add oak-ave-101 --by "YOUR NAME")',
    ]


def test_repeated_problems_are_one_line_with_examples_and_the_fix() -> None:
    street = [frontage(f"main-st-{n}", f"{n} Main St", device=None) for n in range(201, 335, 2)]
    state = dataclasses.replace(
        ready(), frontages=[*ready().frontages, *street],
        owners={**ready().owners, **{f.id: owner() for f in street}},
    )  # fmt: skip
    lines = problems(state)
    assert len(lines) == 1, lines
    said, fixed_by = lines[0].split(" — fix: ")
    assert said == "67 frontages have no pole, e.g. 201 Main St, 203 Main St, 205 Main St …"
    assert "sidewalk registry pole assign POLE" in fixed_by
    assert "sidewalk registry unwatched add --no-pole" in fixed_by


def test_a_frontage_not_watched_yet_is_not_judged_and_is_never_the_only_one() -> None:
    state = ready()
    unwatched = frontage("main-st-109", "109 Main St", device=None, watched=False)
    with_one = dataclasses.replace(state, frontages=[*state.frontages, unwatched])
    assert problems(with_one) == []  # no owner, no pole: neither is asked of it
    none_watched = dataclasses.replace(state, frontages=[unwatched])
    lines = problems(none_watched)
    assert len(lines) == 1
    assert lines[0].startswith("every frontage is marked not watched yet")


def test_the_window_envelope_is_the_county_imports_rule() -> None:
    assert envelope_problem("Jane Doe", ["PO Box 12", "Clyman WI 53016"]) is None
    wide = "The Jane Doe Revocable Living Trust Dated March 4, 2011"
    assert envelope_problem("Jane Doe", [wide]) == (
        f"'{wide}' is wider than a window envelope's address block (3.75 in)"
    )
    assert envelope_problem("Jane Doe", []) == "there is no mailing address"


def test_delivery_by_print_and_by_email(tmp_path: Path) -> None:
    def said(cfg: DeliveryConfig, env: dict[str, str] | None = None) -> list[str]:
        return [p.what for p in delivery_problems(cfg, env or {})]

    assert said(DeliveryConfig(methods=["print"], print_dir=tmp_path / "print" / "batches")) == []
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    assert said(DeliveryConfig(methods=["print"], print_dir=blocked / "print")) == [
        f"print batches cannot be written to {blocked / 'print'}"
    ]
    assert said(DeliveryConfig(methods=["email"])) == [
        "e-mail delivery has no mail server (smtp_host)",
        "e-mail delivery has no sender address (sender)",
    ]
    mail = DeliveryConfig(methods=["email"], smtp_host="mail", sender="dpw@x.example",
                          smtp_user="dpw")  # fmt: skip
    assert said(mail) == ["the mail server login 'dpw' has no password"]
    assert said(mail, {"SIDEWALK_SMTP_PASSWORD": "s"}) == []


def test_the_window_is_the_one_the_letter_prints_in() -> None:
    from sidewalk.alerts import pdf
    from sidewalk.registry import county

    assert county.ENVELOPE_LINES == pdf.ADDRESS_LINES
    assert pytest.approx(pdf.ADDRESS_W / 25.4 * 72) == county.ENVELOPE_WIDTH_PT
    assert Problem("a", "b").line() == "a — fix: b"


# -- the command on a case store ------------------------------------------------------


VILLAGE = """
[village]
office = "Village Hall"
address_lines = ["100 Main St", "Clyman WI 53016"]
telephone = "(920) 555-0142"
email = "clerk@clyman.example"
office_hours = "Mon-Fri 8 AM-4 PM"
officer_name = "Pat Clerk"
officer_title = "Clerk-Treasurer"
signature_image = "{signature}"

[delivery]
methods = ["print"]
print_dir = "{print_dir}"
"""


def _ready_store(tmp_path: Path) -> tuple[str, Path]:
    from sidewalk.core.profile import load_profile
    from sidewalk.storage.connect import open_cases
    from sidewalk.system import confirm_for_demo

    url = f"sqlite:///{tmp_path / 'cases.sqlite3'}"
    cases = open_cases(url, load_profile(None))
    try:
        registry, now = cases.registry, datetime.now(UTC)
        registry.upsert_device("pole-1", "clyman")
        registry.upsert_owner("o-1", "Jane Doe", ["PO Box 12", "Clyman WI 53016"])
        registry.upsert_frontage(
            "main-st-105", site="clyman", parcel_number="0101", street_address="105 Main St",
            length_ft=66, zone="residential", owner_id="o-1", device_id="pole-1",
        )  # fmt: skip
        registry.set_camera(
            "pole-1", "main-st-105", region=[(0, 0), (100, 0), (100, 50)],
            homography=[[1, 0, 0], [0, 1, 0], [0, 0, 1]], calibrated_at=now, who="Pat IT",
        )  # fmt: skip
        registry.record_reported_calibration(
            "pole-1", registry.expected_calibration("pole-1") or "", now
        )
        registry.record_device_seen("pole-1", now)
        confirm_for_demo(cases, load_profile(None), "check test")
    finally:
        cases.close()
    from PIL import Image

    signature = tmp_path / "signature.png"
    Image.new("RGB", (300, 80), "white").save(signature)
    config = tmp_path / "sidewalk.toml"
    config.write_text(
        f'data_dir = "{tmp_path / "var"}"\n[cases]\ndatabase_url = "{url}"\n'
        + VILLAGE.format(signature=signature, print_dir=tmp_path / "print"),
        encoding="utf-8",
    )
    return url, config


def test_the_command_exits_0_when_ready_1_with_a_problem_2_when_it_cannot_read(
    tmp_path: Path,
) -> None:
    url, config = _ready_store(tmp_path)
    cli, env = CliRunner(), {"COLUMNS": "300"}
    done = cli.invoke(app, ["check", "--config", str(config)], env=env)
    assert done.exit_code == 0, done.output
    specimen = tmp_path / "var" / "letterhead-specimen.pdf"
    assert done.output.splitlines() == [
        f"a specimen letter under the letterhead: {specimen}",
        "ready: 1 frontage(s) watched, letters can go out",
    ]

    undelivered = tmp_path / "undelivered.toml"
    undelivered.write_text(config.read_text().split("[delivery]")[0], encoding="utf-8")
    done = cli.invoke(app, ["check", "--config", str(undelivered)], env=env)
    assert done.exit_code == 1
    assert done.output.splitlines() == [
        "delivery is not set up: no way of sending letters is configured — fix: [delivery]"
        ' methods = ["print"] and/or ["email"] with smtp_host and sender (docs/going-live.md)',
        "not ready: 1 problem(s)",
    ]

    strict = tmp_path / "strict.toml"
    strict.write_text(config.read_text() + "\n[check]\npole_reported_minutes = 0\n")
    done = cli.invoke(app, ["check", "--config", str(strict)], env=env)
    assert done.exit_code == 2
    assert "check.pole_reported_minutes" in done.output

    unreadable = tmp_path / "unreadable.toml"
    unreadable.write_text(
        config.read_text().replace(url, f"sqlite:///{tmp_path / 'no' / 'such' / 'c.sqlite3'}")
    )
    done = cli.invoke(app, ["check", "--config", str(unreadable)], env=env)
    assert done.exit_code == 2
    assert "cannot open the SQLite case database" in done.output


def test_a_village_starting_small_marks_the_rest_not_watched_and_passes(tmp_path: Path) -> None:
    """Two more frontages with no pole: check names them; marked not watched yet (by
    street, audited), check passes and counts them; undone, it names them again."""
    from sidewalk.core.profile import load_profile
    from sidewalk.storage.connect import open_cases

    url, config = _ready_store(tmp_path)
    cases = open_cases(url, load_profile(None))
    try:
        for n in (201, 203):
            cases.registry.upsert_frontage(
                f"oak-ave-{n}", site="clyman", parcel_number=f"02{n}",
                street_address=f"{n} Oak Ave", length_ft=66, zone="residential",
                owner_id="o-1", street="Oak Ave",
            )  # fmt: skip
    finally:
        cases.close()
    cli, env, base = CliRunner(), {"COLUMNS": "300"}, ["--config", str(config)]
    done = cli.invoke(app, ["check", *base], env=env)
    assert done.exit_code == 1
    assert "201 Oak Ave: no pole watches it" in done.output

    mark = ["registry", "unwatched", "add", "--street", "oak ave", "--by", "Pat IT", *base]
    done = cli.invoke(app, mark, env=env)
    assert done.exit_code == 0, done.output
    assert "2 frontage(s) marked not watched yet: 201 Oak Ave, 203 Oak Ave (by Pat IT)" in (
        done.output
    )
    listed = cli.invoke(app, ["registry", "list", "--json", *base], env=env)
    assert {(r["address"], r["watched"]) for r in json.loads(listed.output)} >= {
        ("201 Oak Ave", "not yet"), ("203 Oak Ave", "not yet")
    }
    done = cli.invoke(app, ["check", *base], env=env)
    assert done.exit_code == 0, done.output
    assert done.output.splitlines()[-1].startswith(
        "ready: 1 frontage(s) watched, letters can go out; 2 frontage(s) not watched yet"
    )

    cases = open_cases(url, load_profile(None))
    try:
        events = [e for e in cases.registry.events_since(0) if e.kind == "frontage.unwatched"]
        assert {(e.subject, e.recorded_by) for e in events} == {
            ("frontage:oak-ave-201", "Pat IT"),
            ("frontage:oak-ave-203", "Pat IT"),
        }
        audited = [a for a in cases.audit.recent() if a.action == "registry.frontage.unwatched"]
        assert len(audited) == 2
        assert cases.audit.verify_chain().ok
    finally:
        cases.close()

    undo = ["registry", "unwatched", "remove", "203 Oak Ave", "--by", "Pat IT", *base]
    assert cli.invoke(app, undo, env=env).exit_code == 0
    done = cli.invoke(app, ["check", *base], env=env)
    assert done.exit_code == 1
    assert "203 Oak Ave: no pole watches it" in done.output
    assert "201 Oak Ave" not in done.output
    assert "1 frontage(s) not watched yet" in done.output

    nothing = cli.invoke(app, ["registry", "unwatched", "add", "--by", "Pat IT", *base], env=env)
    assert nothing.exit_code == 2
    assert "say which frontages" in nothing.output


def test_the_specimen_letter_carries_the_letterhead_and_a_broken_signature_is_found(
    tmp_path: Path,
) -> None:
    """``check`` renders a letter the way notices go to paper: the letterhead's lines are
    in it, and a signature file that cannot be printed is a problem before any notice."""
    from pypdf import PdfReader

    _, config = _ready_store(tmp_path)
    cli, env = CliRunner(), {"COLUMNS": "300"}
    assert cli.invoke(app, ["check", "--config", str(config)], env=env).exit_code == 0
    reader = PdfReader(tmp_path / "var" / "letterhead-specimen.pdf")
    text = " ".join(page.extract_text() for page in reader.pages)
    for line in ("100 Main St", "(920) 555-0142", "Pat Clerk", "Clerk-Treasurer", "SPECIMEN"):
        assert line in text, (line, text)
    assert any(page.images for page in reader.pages)  # the signature is printed

    (tmp_path / "signature.png").write_bytes(b"\x89PNG\r\n")  # cut short
    done = cli.invoke(app, ["check", "--config", str(config)], env=env)
    assert done.exit_code == 1, done.output
    [line] = [x for x in done.output.splitlines() if x.startswith("letterhead:")]
    assert "signature_image" in line
    assert "a letter cannot be printed with it" in line
    (tmp_path / "signature.png").unlink()
    done = cli.invoke(app, ["check", "--config", str(config)], env=env)
    assert done.exit_code == 2  # the settings themselves name the missing file
    assert "signature_image" in done.output
