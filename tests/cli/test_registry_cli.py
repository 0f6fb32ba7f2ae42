"""``sidewalk registry …`` on a SQLite case store, as a village IT person types it.

A village without a county file enters its frontages by hand, registers a
pole, edits, records a sale with its date, an occupant, and exports; a
mistyped value or an address that names no place (or two) is one line and
exit 2, a change the records refuse exit 1. The sale: a notice issued before
it stays addressed to the seller, one after goes to the buyer.
"""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import typer
import typer.testing
from typer.testing import CliRunner

from sidewalk.cli import app
from sidewalk.core.profile import load_profile
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.connect import open_cases

if TYPE_CHECKING:
    from typer import _click as click

BY = ["--by", "Pat IT"]


class Registry:
    """The command line over one case store, and the store itself to look behind it."""

    def __init__(self, tmp_path: Path, command: click.Command) -> None:
        url = f"sqlite:///{tmp_path / 'cases.sqlite3'}"
        self.cases: CaseStore = open_cases(url, load_profile(None))
        self.config = tmp_path / "sidewalk.toml"
        self.config.write_text(f'[cases]\ndatabase_url = "{url}"\n', encoding="utf-8")
        self.command = command

    def __call__(self, *args: str, code: int = 0) -> str:
        # Typer's runner builds the command tree on every call (a few tenths of a
        # second); the tree built once is handed to it instead.
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(typer.testing, "_get_command", lambda _app: self.command)
            done = CliRunner().invoke(
                app, ["registry", *args, "--config", str(self.config)], env={"COLUMNS": "250"}
            )
        assert done.exit_code == code, done.output
        return done.output


@pytest.fixture(scope="module")
def command() -> click.Command:
    return typer.main.get_command(app)


@pytest.fixture(scope="module")
def entered(tmp_path_factory: pytest.TempPathFactory, command: click.Command) -> Path:
    """Three frontages entered by hand (one parcel a corner lot), once for the module."""
    folder = tmp_path_factory.mktemp("entered")
    reg = Registry(folder, command)
    reg("add", "frontage", "--address", "105 Main St", "--parcel", "0101", "--owner",
        "Jane Doe", "--mailing-line", "PO Box 12", "--mailing-line", "Clyman WI 53016",
        "--length-ft", "66", "--street", "Main St", "--side", "north",
        "--owner-since", "2020-05-01", *BY)  # fmt: skip
    reg("add", "frontage", "--address", "101 Main St", "--parcel", "0102", "--owner",
        "Bo Corner", "--mailing-line", "101 Main St", "--mailing-line", "Clyman WI 53016",
        "--length-ft", "80", "--street", "Main St", *BY)  # fmt: skip
    reg("add", "frontage", "--address", "101 Main St", "--parcel", "0102", "--length-ft", "120",
        "--street", "Oak Ave", "--side", "west", *BY)  # fmt: skip
    assert reg("add", "frontage", "--address", "101 Main St", "--parcel", "0102", "--length-ft",
               "9", "--street", "Oak Ave", *BY, code=2) == (
        "frontage 101-main-st-oak-ave is already registered: change it with `sidewalk registry"
        " edit frontage`, or give another --id\n"
    )  # fmt: skip
    reg.cases.close()
    return folder / "cases.sqlite3"


@pytest.fixture
def registry(tmp_path: Path, entered: Path, command: click.Command) -> Iterator[Registry]:
    shutil.copy(entered, tmp_path / "cases.sqlite3")
    reg = Registry(tmp_path, command)
    yield reg
    reg.cases.close()


def test_frontages_entered_by_hand_are_listed_shown_and_exported(
    registry: Registry, tmp_path: Path
) -> None:
    said = registry("pole", "add", "pole-1", "--label", "Main east", "--lat", "43.39",
                    "--lon", "-88.72", "--watches", "105 main st.", "--watches", "101-main-st",
                    *BY)  # fmt: skip
    assert "pole pole-1 registered; watches 105-main-st, 101-main-st" in said
    rows = json.loads(registry("list", "--json"))
    assert [(r["address"], r["owner_of_record"], r["pole"], r["length_ft"]) for r in rows] == [
        ("101 Main St", "Bo Corner", "pole-1", 80.0),
        ("101 Main St", "Bo Corner", None, 120.0),
        ("105 Main St", "Jane Doe", "pole-1", 66.0),
    ]
    table = registry("list", "frontages", "--street", "Oak Ave")
    assert "Oak Ave" in table
    assert "Bo Corner" in table
    assert "105 Main St" not in table
    assert "PO Box 12, Clyman WI 53016" in registry("list", "owners")
    assert "Oak Ave" in registry("list", "streets")
    shown = registry("show", "0102")  # the corner lot: one parcel, two frontages
    assert "owner of record: Bo Corner, 101 Main St, Clyman WI 53016" in shown
    assert "frontage 101-main-st: Main St; 80 ft long" in shown
    assert "frontage 101-main-st-oak-ave: Oak Ave, west side; 120 ft long" in shown
    assert "pole pole-1 (Main east): last heard never; not calibrated" in shown
    assert "pole: none watches it" in shown
    assert shown.count("open cases: 0") == 2

    registry("export", str(tmp_path / "f.csv"))
    with (tmp_path / "f.csv").open(encoding="utf-8") as f:
        exported = list(csv.DictReader(f))
    assert exported[2] == {
        "address": "105 Main St", "parcel": "0101", "owner_of_record": "Jane Doe",
        "mailing_address": "PO Box 12, Clyman WI 53016", "pole": "pole-1", "watched": "yes",
        "length_ft": "66.0", "zone": "residential", "street": "Main St", "side": "north",
        "frontage": "105-main-st",
    }  # fmt: skip
    line = {"type": "LineString", "coordinates": [[-88.72, 43.39], [-88.7198, 43.39]]}
    registry.cases.registry.set_frontage_geometry("105-main-st", line)
    registry("export", str(tmp_path / "f.geojson"), "--format", "geojson")
    features = json.loads((tmp_path / "f.geojson").read_text())["features"]
    assert [f["geometry"] for f in features] == [None, None, line]
    assert features[2]["properties"]["owner_of_record"] == "Jane Doe"


def test_edits_are_audited_and_bad_values_are_one_line_naming_the_option(
    registry: Registry,
) -> None:
    said = registry("edit", "frontage", "105 Main St", "--length-ft", "70",
                    "--walk-width-ft", "5", "--zone", "commercial", "--corner",
                    "--may-deposit-on-street", *BY)  # fmt: skip
    assert said.startswith("105 Main St: length ft 70, walk width ft 5, zone commercial")
    f = registry.cases.registry.get_frontage("105-main-st")
    assert (f.length_ft, f.walk_width_ft, f.zone, f.corner, f.may_deposit_on_street) == (
        70, 5, "commercial", True, True,
    )  # fmt: skip
    edited = registry.cases.audit.list("registry:frontage:105-main-st")
    assert [(a.actor, a.action) for a in edited][-2:] == [
        ("Pat IT", "registry.frontage.changed"), ("Pat IT", "registry.frontage.edited"),
    ]  # fmt: skip
    assert edited[-1].detail["changed"]["length_ft"] == [66.0, 70.0]

    for args, line in (
        (["--length-ft", "sixty"], "--length-ft 'sixty': write a number of feet, e.g. 66 or 5.5"),
        (["--length-ft", "0"], "--length-ft '0': must be between 1 and 2000 feet"),
        (["--zone", "industrial"], "--zone 'industrial': write residential or commercial"),
        (["--side", "up"], "--side 'up': write north or south or east or west"),
        ([], "nothing to change: give --length-ft, --walk-width-ft, --zone, --side, --corner,"
             " --may-deposit-on-street or --street"),
    ):  # fmt: skip
        assert registry("edit", "frontage", "105 Main St", *args, *BY, code=2) == line + "\n"
    assert registry("edit", "frontage", "101 Main St", "--length-ft", "9", *BY, code=2) == (
        "'101 Main St' has 2 frontages: give one's id (101-main-st (Main St),"
        " 101-main-st-oak-ave (Oak Ave))\n"
    )
    assert registry("show", "150 Main St", code=2) == (
        "no frontage, parcel or address '150 Main St' in the registry; did you mean"
        " '105 Main St', '101 Main St'? (`sidewalk registry list` shows them)\n"
    )
    registry("edit", "owner", "105 Main St", "--address-line", "PO Box 99", "--address-line",
             "Clyman WI 53016", *BY)  # fmt: skip
    assert registry.cases.registry.get_owner(
        registry.cases.registry.get_frontage("105-main-st").owner_id
    ).address_lines == ("PO Box 99", "Clyman WI 53016")
    assert registry("edit", "owner", "105 Main St", "--address-line", "x" * 70, *BY, code=2) == (
        f"--address-line: '{'x' * 70}' is wider than a window envelope's address block (3.75 in)\n"
    )


def test_a_sale_moves_later_notices_to_the_buyer_and_leaves_earlier_ones(
    registry: Registry,
) -> None:
    cases = registry.cases
    before = cases.notices.create(
        "k-before", "clearing_violation", "105-main-st", datetime(2026, 12, 10, 15, tzinfo=UTC)
    )
    said = registry("edit", "owner", "0101", "--name", "Sam Buyer", "--address-line",
                    "22 Elm St", "--address-line", "Clyman WI 53016", "--email",
                    "sam@example.com", "--effective", "2027-01-15", *BY)  # fmt: skip
    assert said.startswith("105 Main St: owner of record from January 15, 2027: Sam Buyer")
    after = cases.notices.create(
        "k-after", "clearing_violation", "105-main-st", datetime(2027, 1, 20, 15, tzinfo=UTC)
    )
    assert (after.owner_name, after.owner_address_lines) == (
        "Sam Buyer", ("22 Elm St", "Clyman WI 53016"),
    )  # fmt: skip
    for at in (before.issued_at, after.issued_at):  # the bulk read agrees, for check and list
        assert cases.registry.owners_of_record(at)["105-main-st"] == (
            cases.registry.owner_of_record("105-main-st", at)
        )
    assert cases.registry.parcel_owners(after.issued_at)["0101"] == after.owner_id
    kept = cases.notices.get(before.id)
    assert (kept.owner_name, kept.owner_address_lines) == (
        "Jane Doe", ("PO Box 12", "Clyman WI 53016"),
    )  # fmt: skip
    shown = registry("show", "105 Main St")
    assert (
        "owner of record: Sam Buyer, 22 Elm St, Clyman WI 53016 <sam@example.com>"
        " (from January 15, 2027)" in shown
    )
    assert (
        "earlier owner: Jane Doe, PO Box 12, Clyman WI 53016 (from May 1, 2020 until"
        " January 15, 2027)" in shown
    )
    assert registry(
        "edit",
        "owner",
        "0101",
        "--name",
        "Al Early",
        "--address-line",
        "1 A St",
        "--effective",
        "2026-01-01",
        *BY,
        code=1,
    ) == (
        "parcel 0101: a new owner from 2026-01-01 is before the current owner's date (2027-01-15)\n"
    )
    assert registry("edit", "owner", "0101", "--effective", "2027-02-01", *BY, code=2) == (
        "--effective records a new owner: give --name and the --address-line(s)\n"
    )


def test_a_frontage_entered_without_a_parcel_gets_one_at_its_first_sale(
    registry: Registry,
) -> None:
    reg = registry.cases.registry
    reg.upsert_owner("owner-main-st-109", "Old Owner", ["109 Main St", "Clyman WI 53016"])
    reg.upsert_frontage(
        "main-st-109", site="clyman", parcel_number="0109", street_address="109 Main St",
        length_ft=50, zone="residential", owner_id="owner-main-st-109",
    )  # fmt: skip
    registry("edit", "owner", "109 Main St", "--name", "New Owner", "--address-line",
             "109 Main St", "--address-line", "Clyman WI 53016", "--effective", "2026-03-01",
             *BY)  # fmt: skip
    assert reg.get_frontage("main-st-109").parcel_id == "0109"
    assert reg.ownerships("0109")[0].owner_id == "owner-main-st-109"
    sold = datetime(2026, 3, 2, tzinfo=UTC)
    assert reg.owner_of_record("main-st-109", sold).name == "New Owner"


def test_occupants_and_persons_in_charge(registry: Registry) -> None:
    said = registry("occupant", "add", "105 Main St", "Lee Tenant", "--role", "person in charge",
                    "--phone", "(920) 555-0100", *BY)  # fmt: skip
    number = said.split("(no. ")[1].split(";")[0]
    assert "105 Main St: person in charge Lee Tenant recorded" in said
    assert f"person in charge (no. {number}): Lee Tenant; (920) 555-0100" in registry(
        "show", "105 Main St"
    )
    assert registry("occupant", "add", "105 Main St", "X", "--role", "boss", *BY, code=2) == (
        "--role 'boss': write occupant or person in charge\n"
    )
    registry("occupant", "end", number, "--at", "2026-12-20T12:00", *BY)
    assert "until December 20, 2026)" in registry("show", "105 Main St")
    assert registry("occupant", "end", "999", *BY, code=2).startswith("no occupant no. 999")


def test_poles_are_assigned_listed_with_their_calibration_and_retired(
    registry: Registry,
) -> None:
    reg = registry.cases.registry
    registry("pole", "add", "pole-1", "--watches", "105 Main St", *BY)
    registry("pole", "add", "pole-2", *BY)
    assert registry("pole", "add", "pole-3", "--lat", "43", *BY, code=2) == (
        "--lat and --lon go together: give both, or neither\n"
    )
    assert registry("pole", "assign", "pole-2", "101-main-st", "101-main-st-oak-ave", *BY) == (
        "pole pole-2 watches 101 Main St, 101 Main St\n"
    )
    assert registry("pole", "assign", "pole-9", "105 Main St", *BY, code=2).startswith(
        "no pole 'pole-9' is registered"
    )
    assert "not calibrated" in registry("pole", "list")
    now = datetime.now(UTC)
    square = [(0.0, 0.0), (100.0, 0.0), (100.0, 50.0)]
    eye = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    reg.set_camera("pole-1", "105-main-st", region=square, homography=eye, calibrated_at=now,
                   who="Pat IT")  # fmt: skip
    reg.record_reported_calibration("pole-1", reg.expected_calibration("pole-1") or "", now)
    reg.set_camera("pole-2", "101-main-st", region=square, homography=eye, calibrated_at=now,
                   who="Pat IT")  # fmt: skip
    reg.record_reported_calibration("pole-2", "an older one", now)
    poles = json.loads(registry("list", "poles", "--json"))
    day = now.astimezone(load_profile(None).zone)
    assert [(p["pole"], p["calibration"]) for p in poles] == [
        ("pole-1", f"calibrated on {day:%B} {day.day}, {day.year}"),
        ("pole-2", "pole runs a different calibration"),
    ]
    assert registry("pole", "retire", "pole-2", *BY, code=1) == (
        "pole pole-2 still watches 101 Main St, 101 Main St: assign them to another pole first\n"
    )
    registry("pole", "assign", "pole-1", "101-main-st", "101-main-st-oak-ave", *BY)
    registry("pole", "retire", "pole-2", *BY)
    assert reg.known_device_ids() == {"pole-1"}
    assert [e.kind for e in reg.events_since(0)][-1] == "pole.retired"
    assert "pole-2" not in registry("pole", "list")


def test_a_street_by_its_name_several_watches_at_once_and_a_table_for_80_columns(
    registry: Registry,
) -> None:
    for asked in ("oak", "Oak Avenue", "OAK AVE."):
        table = registry("list", "frontages", "--street", asked)
        assert "Bo Corner" in table, asked
        assert "105 Main St" not in table, asked
    assert "no frontages on 'Oak St' in the registry" in registry(
        "list", "frontages", "--street", "Oak St"
    )
    said = registry("pole", "add", "pole-9", "--watches", "105 Main St", "101-main-st-oak-ave",
                    *BY)  # fmt: skip
    assert "watches 105-main-st, 101-main-st-oak-ave" in said
    from sidewalk.cli.common import console

    console.cache_clear()  # one console a process: this one is 80 columns wide
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(typer.testing, "_get_command", lambda _app: registry.command)
        done = CliRunner().invoke(
            app, ["registry", "list", "--config", str(registry.config)], env={"COLUMNS": "80"}
        )
    console.cache_clear()
    assert done.exit_code == 0, done.output
    assert max(len(line) for line in done.output.splitlines()) <= 80, done.output
    assert "Jane Doe" in done.output
    assert "mailing" not in done.output
    assert "--json or registry export has them all" in done.output


def test_a_pole_may_not_take_a_servers_client_id(registry: Registry) -> None:
    refused = registry("pole", "add", "sidewalk-ingest", *BY, code=1)
    assert "may not begin with 'sidewalk-'" in refused
    assert "take over that server's session" in refused
    assert registry.cases.registry.list_devices() == []
