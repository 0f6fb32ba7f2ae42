"""Confirmation before use.

A profile value marked unconfirmed is confirmed by the Village (who, when,
the board action or ordinance reference), recorded and audited; until then
a notice relying on it is held, visibly and counted; the report lists what
is open; a profile that changes a confirmed value is unconfirmed again.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sidewalk.alerts.accounts import bill_abatement
from sidewalk.alerts.billing import AbatementWork
from sidewalk.alerts.confirm import ConfirmationError, confirm_value, unconfirmed_report
from sidewalk.alerts.documents import notice_register
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.letterhead import Letterhead
from sidewalk.core.profile import Profile, load_profile, parse_profile
from sidewalk.storage.cases import CaseStore
from sidewalk.system import open_cases
from tests.alerts.conftest import T0

B2 = "snow_and_ice.nonhazard_notice_period"
RATES = ("abatement_rates.crew_hourly_rate", "abatement_rates.equipment_hourly_rate",
         "abatement_rates.administration_share")  # fmt: skip


@pytest.fixture
def fresh(tmp_path: Path, profile: Profile) -> Iterator[CaseStore]:
    """Case records where the Village has confirmed nothing yet."""
    store = open_cases(f"sqlite:///{tmp_path / 'fresh.sqlite3'}", profile)
    store.registry.upsert_owner("owner-a", "Anna Schröder", ["12 Oak St", "Clyman, WI 53016"])
    store.registry.upsert_frontage(
        "oak-12", site="clyman", parcel_number="026-0915-0012", street_address="12 Oak St",
        length_ft=50.0, zone="residential", owner_id="owner-a",
    )  # fmt: skip
    yield store
    store.close()


def test_a_notice_relying_on_an_unconfirmed_value_is_held_then_released(
    fresh: CaseStore, profile: Profile, letterhead: Letterhead
) -> None:
    issuer = NoticeIssuer(fresh, profile, letterhead=letterhead)
    notice = issuer.obstruction_notice(
        "o-1", "oak-12", T0, area="sidewalk", observed_at=T0, description="a bench"
    )
    assert notice.status == "rendered"  # § 370-8 D's 24 hours are the Code's own words
    abatement = fresh.bills.order_abatement("a-1", "oak-12", "notice_expired", T0)
    billed = bill_abatement(
        issuer, abatement.id, AbatementWork(Decimal("1"), Decimal("0"), ()), T0, who="Clerk",
        completed_at=T0,
    )  # fmt: skip
    # The rates are placeholders until the Village's fee schedule is confirmed: held.
    assert billed.notice.status == "held"
    assert billed.notice.body_text is None
    assert fresh.notices.counts()[("abatement_bill", "held")] == 1
    [row] = [
        a for a in fresh.audit.list(f"notice:{billed.notice.number}") if a.action == "notice.held"
    ]
    waiting = row.detail["waiting_for"]
    assert RATES[0] in waiting
    assert set(waiting) <= set(RATES)
    report = {item.name: item for item in unconfirmed_report(fresh, profile)}
    assert set(report) == set(profile.unconfirmed_rules()) | set(RATES)
    assert report[RATES[0]].held_notices == 1
    assert not report[RATES[0]].confirmed
    # Visible in the register, with what it waits for.
    [line] = [r for r in notice_register(fresh, profile) if r.number == billed.notice.number]
    assert line.status.startswith("Held until the Village confirms")
    assert line.kind == "Bill for work done by the Village"  # the clerk's words, not keys
    # In words, not the setting's name.
    assert "crew hourly rate" in line.problem
    assert "_" not in line.problem
    # Rendering again does not issue it: still waiting.
    assert issuer.render(billed.notice).status == "held"
    *first, last = waiting
    for name in first:
        confirm_value(fresh, profile, name, by="Village Board", reference="Resolution 2027-3",
                      at=T0, who="clerk", issuer=issuer)  # fmt: skip
    assert fresh.notices.get(billed.notice.id).status == "held"  # one rate still open
    record, released = confirm_value(
        fresh, profile, last, by="Village Board",
        reference="Board minutes 2027-01-12, item 7", at=T0 + timedelta(days=1), who="clerk",
        issuer=issuer,
    )  # fmt: skip
    assert record.confirmed_by == "Village Board"
    assert [n.number for n in released] == [billed.notice.number]
    assert released[0].status == "rendered"
    assert "Board minutes 2027-01-12, item 7" in (released[0].body_text or "")
    actions = [a.action for a in fresh.audit.list()]
    assert actions.count("profile.confirmed") == len(waiting)
    assert "notice.released" in actions
    [confirmed] = [a for a in fresh.audit.list("profile:" + last)]
    assert confirmed.actor == "clerk"
    assert confirmed.detail["reference"] == "Board minutes 2027-01-12, item 7"
    assert fresh.audit.verify_chain().ok


def test_a_changed_profile_value_is_unconfirmed_again(fresh: CaseStore, profile: Profile) -> None:
    confirm_value(
        fresh, profile, B2, by="Village Board", reference="Ord. 2027-1", at=T0, who="clerk"
    )
    assert next(i for i in unconfirmed_report(fresh, profile) if i.name == B2).confirmed
    text = (Path(__file__).parents[2] / "core/sidewalk/core/profiles/clyman.toml").read_text()
    before = 'value = 24\nunit = "hours"\nunconfirmed = true'
    changed = parse_profile(text.replace(before, before.replace("24", "48"), 1))
    item = next(i for i in unconfirmed_report(fresh, changed) if i.name == B2)
    assert (item.value, item.confirmed) == ("48 hours", False)


def test_only_unconfirmed_values_are_confirmed(fresh: CaseStore, profile: Profile) -> None:
    with pytest.raises(ConfirmationError, match="not marked unconfirmed"):
        confirm_value(fresh, profile, "snow_and_ice.clearing_deadline", by="Board",
                      reference="x", at=T0, who="clerk")  # fmt: skip
    with pytest.raises(ConfirmationError, match="no value named"):
        confirm_value(fresh, profile, "snow_and_ice.nope", by="Board", reference="x", at=T0,
                      who="clerk")  # fmt: skip


def test_the_command_confirms_and_lists(tmp_path: Path) -> None:
    from sidewalk.cli.main import app

    db = tmp_path / "cli.sqlite3"
    config = tmp_path / "sidewalk.toml"
    config.write_text(f'[cases]\ndatabase_url = "sqlite:///{db}"\n', encoding="utf-8")
    runner = CliRunner()
    listed = runner.invoke(
        app, ["profile", "unconfirmed", "--config", str(config)], env={"COLUMNS": "300"}
    )
    assert listed.exit_code == 1, listed.output  # values wait for the Village
    assert B2 in listed.output
    done = runner.invoke(app, [
        "profile", "confirm", B2, "--by", "Village Board",
        "--reference", "Board minutes 2027-01-12, item 7", "--at", "2027-01-12T19:00",
        "--who", "clerk-lee", "--config", str(config),
    ])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert f"confirmed {B2} = 24 hours by Village Board" in done.output
    refused = runner.invoke(app, ["profile", "confirm", "snow_and_ice.nope", "--by", "B",
                                  "--reference", "r", "--config", str(config)])  # fmt: skip
    assert refused.exit_code == 1
    # Several at once, from the command line and from a file; a name not awaiting
    # confirmation among them confirms none.
    board = ["--by", "Village Board", "--reference", "Board minutes 2027-01-12, item 8",
             "--config", str(config)]  # fmt: skip
    typo = runner.invoke(app, ["profile", "confirm", "billing.penalty_per_offense",
                               "billing.penalty_per_ofense", *board])  # fmt: skip
    assert typo.exit_code == 1
    assert "not confirmed, none of them: billing.penalty_per_ofense" in typo.output
    board_list = tmp_path / "board.txt"
    board_list.write_text("# item 8 of the minutes\nsnow_and_ice.width_tolerance  # 2 in\n")
    done = runner.invoke(app, ["profile", "confirm", "billing.penalty_per_offense",
                               "abatement_rates.crew_hourly_rate", "--from-file", str(board_list),
                               *board])  # fmt: skip
    assert done.exit_code == 0, done.output
    for name in ("billing.penalty_per_offense", "abatement_rates.crew_hourly_rate",
                 "snow_and_ice.width_tolerance"):  # fmt: skip
        assert f"confirmed {name} = " in done.output
    # At 80 columns the names stay whole: they are what the clerk types.
    from sidewalk.cli.common import console

    console.cache_clear()
    narrow = runner.invoke(app, ["profile", "unconfirmed", "--config", str(config)],
                           env={"COLUMNS": "80"})  # fmt: skip
    console.cache_clear()
    assert "cold_weather.frozen_subgrade_min_dwell" in narrow.output
    cases = open_cases(f"sqlite:///{db}", load_profile())
    try:
        [row] = cases.audit.list(f"profile:{B2}")
        assert (row.actor, row.detail["confirmed_by"]) == ("clerk-lee", "Village Board")
        assert cases.audit.list("profile:billing.penalty_per_offense")
        assert cases.audit.list("profile:snow_and_ice.width_tolerance")
    finally:
        cases.close()
