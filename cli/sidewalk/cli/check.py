"""``sidewalk check``: is the system ready to go live?

One line per problem, each with what fixes it; exit 0 only when there is
none (1 while not ready, 2 when the configuration or the case database
cannot be read). What it asks (docs/going-live.md):

* every watched frontage (one marked "not watched yet" is counted apart: no
  automatic clock runs on it, the Village inspects it by hand) has an owner
  of record with a mailing address that fits the window envelope the letters
  are mailed in;
* every watched frontage has a pole, the pole reported within
  ``[check] pole_reported_minutes``, it has a calibrated view of the walk,
  and the pole runs the calibration the registry holds;
* the Village's letterhead and issuing officer are set (``[village]``);
* no profile value is still waiting for the Village's confirmation;
* letters can go out: ``[delivery]`` print and/or e-mail is set up.

The same problem on many frontages is one line with a few examples and the
fix. ``readiness_problems`` is the whole judgement over records already read;
the command only reads them and prints.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sidewalk.cli.common import ConfigOption, console, fail, village

if TYPE_CHECKING:
    from datetime import datetime, timedelta
    from pathlib import Path
    from zoneinfo import ZoneInfo

    from sidewalk.cli.common import Village
    from sidewalk.core.config import DeliveryConfig, VillageConfig
    from sidewalk.core.profile import Profile
    from sidewalk.storage.cases import CaseStore, DeviceRecord, FrontageRecord, OwnerRecord

BY = '--by "YOUR NAME"'


@dataclass(frozen=True)
class Problem:
    """One thing standing between the system and going live, and what fixes it."""

    what: str
    fix: str

    def line(self) -> str:
        return f"{self.what} — fix: {self.fix}"


@dataclass(frozen=True)
class Readiness:
    """What ``sidewalk check`` judges, read from the case records and the settings."""

    frontages: Sequence[FrontageRecord]
    # The owner of record now, by frontage id.
    owners: Mapping[str, OwnerRecord]
    poles: Mapping[str, DeviceRecord]
    # (pole, frontage) pairs with a calibrated camera view of the walk.
    calibrated: frozenset[tuple[str, str]]
    # The hash each pole should report (None: no camera calibrated yet).
    expected_calibration: Mapping[str, str | None]
    letterhead: Sequence[str] = ()
    # (dotted name, value as used) of profile values awaiting confirmation.
    unconfirmed: Sequence[tuple[str, str]] = ()
    delivery: Sequence[Problem] = field(default_factory=tuple)


def envelope_problem(name: str, lines: Sequence[str]) -> str | None:
    """Why a mailing address will not show in the window envelope, or None when it fits.

    The county import's rule (``sidewalk.registry.county.fits_envelope``: the name and
    address in five lines of the letter's font, each within the window's 3.75 in), so
    an address typed here and one imported are held to the same window."""
    from sidewalk.registry.county import fits_envelope

    if not lines:
        return "there is no mailing address"
    return fits_envelope([name, *lines])


def delivery_problems(delivery: DeliveryConfig, environ: Mapping[str, str]) -> list[Problem]:
    """Whether letters can go out: printed (a folder to write batches in) and/or e-mailed."""
    import os

    settings_fix = "set it in the [delivery] section of the configuration (docs/going-live.md)"
    if not delivery.methods:
        return [
            Problem(
                "delivery is not set up: no way of sending letters is configured",
                '[delivery] methods = ["print"] and/or ["email"] with smtp_host and sender'
                " (docs/going-live.md)",
            )
        ]
    out = []
    if "print" in delivery.methods:
        folder = delivery.print_dir
        existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
        if existing is None or not existing.is_dir() or not os.access(existing, os.W_OK):
            out.append(
                Problem(
                    f"print batches cannot be written to {folder}",
                    "make the folder writable by the service, or change [delivery] print_dir",
                )
            )
    if "email" in delivery.methods:
        if not delivery.smtp_host:
            out.append(Problem("e-mail delivery has no mail server (smtp_host)", settings_fix))
        if not delivery.sender:
            out.append(Problem("e-mail delivery has no sender address (sender)", settings_fix))
        if delivery.smtp_user and not environ.get("SIDEWALK_SMTP_PASSWORD"):
            out.append(
                Problem(
                    f"the mail server login {delivery.smtp_user!r} has no password",
                    "set SIDEWALK_SMTP_PASSWORD in the service's environment",
                )
            )
    return out


def _when(at: datetime, zone: ZoneInfo | None) -> str:
    local = at.astimezone(zone) if zone is not None else at
    return f"{local:%Y-%m-%d %H:%M %Z}".strip()


# Repeated problems of one kind are one line from this many frontages on.
GROUP_FROM = 3
EXAMPLES = 3


@dataclass(frozen=True)
class _FrontageProblem:
    """One frontage's problem, kept apart until the repeats are grouped."""

    kind: str
    where: str
    what: str
    fix: str


def _grouped(kind: str, items: Sequence[_FrontageProblem]) -> Problem:
    """Many frontages with the same problem: one line, a few examples, the fix."""
    eg = ", ".join(i.where for i in items[:EXAMPLES])
    more = " …" if len(items) > EXAMPLES else ""
    n = len(items)
    if kind == "no owner":
        return Problem(
            f"{n} frontages have no owner of record, e.g. {eg}{more}",
            "re-import the county file (sidewalk registry import FILE), or for each:"
            f' sidewalk registry edit owner ADDRESS --name "…" --address-line "…" {BY}',
        )
    if kind == "mailing":
        return Problem(
            f"{n} frontages' owners of record have a mailing address that does not fit the"
            f" window envelope, e.g. {eg}{more} (sidewalk registry show ADDRESS says why)",
            f'for each: sidewalk registry edit owner ADDRESS --address-line "…" {BY}',
        )
    if kind == "no pole":
        return Problem(
            f"{n} frontages have no pole, e.g. {eg}{more}",
            f"sidewalk registry pole assign POLE ADDRESS… {BY}; or mark the ones no pole"
            f" watches yet as not watched: sidewalk registry unwatched add --no-pole {BY}",
        )
    pole = kind.removeprefix("uncalibrated:")
    return Problem(
        f"{n} frontages have no calibrated view of the walk on pole {pole}, e.g. {eg}{more}",
        f"dashboard → Poles → pole {pole}: Calibrate each, then Send to pole",
    )


def _frontage_problems(
    state: Readiness, frontages: Sequence[FrontageRecord]
) -> tuple[list[_FrontageProblem], dict[str, list[FrontageRecord]]]:
    """Each watched frontage's problems, and the frontages each pole watches."""
    watched_by: dict[str, list[FrontageRecord]] = defaultdict(list)
    found: list[_FrontageProblem] = []
    shared = Counter(f.street_address for f in state.frontages)
    for f in frontages:
        # A corner lot's two frontages share the address: say which, and name it by id.
        where = f.street_address
        quoted = f'"{where}"'
        if shared[where] > 1:
            where, quoted = f"{where} ({f.street or f.id})", f.id
        owner = state.owners.get(f.id)
        owner_fix = (
            f'sidewalk registry edit owner {quoted} --address-line "…" --address-line "…" {BY}'
        )
        if owner is None:
            found.append(_FrontageProblem("no owner", where, f"{where}: no owner of record",
                                          owner_fix))  # fmt: skip
        else:
            why = envelope_problem(owner.name, owner.address_lines)
            if why is not None:
                found.append(
                    _FrontageProblem(
                        "mailing",
                        where,
                        f"{where}: the owner of record's mailing address: {why}",
                        owner_fix,
                    )
                )
        pole = state.poles.get(f.device_id) if f.device_id else None
        if pole is None or pole.retired_at is not None:
            found.append(
                _FrontageProblem(
                    "no pole",
                    where,
                    f"{where}: no pole watches it"
                    + (f" (pole {f.device_id} is retired)" if f.device_id else ""),
                    f"sidewalk registry pole assign POLE {quoted} {BY} (or, while no pole"
                    f" watches it: sidewalk registry unwatched add {quoted} {BY})",
                )
            )
            continue
        watched_by[pole.id].append(f)
        if (pole.id, f.id) not in state.calibrated:
            found.append(
                _FrontageProblem(
                    f"uncalibrated:{pole.id}",
                    where,
                    f"{where}: pole {pole.id} has no calibrated view of the walk",
                    f"dashboard → Poles → pole {pole.id}: Calibrate {where}, then Send to pole",
                )
            )
    return found, watched_by


def readiness_problems(
    state: Readiness,
    now: datetime,
    pole_reported: timedelta,
    *,
    zone: ZoneInfo | None = None,
) -> list[Problem]:
    """Every problem standing between these records and going live; [] when ready.

    Only the watched frontages are judged: one "not watched yet" has no automatic
    clock (the Village inspects it by hand), and ``check`` counts it apart."""
    problems: list[Problem] = []
    frontages = [f for f in state.frontages if f.watched]
    if not state.frontages:
        problems.append(
            Problem(
                "no frontage is registered: the system watches nothing",
                "sidewalk registry import COUNTY_FILE (or sidewalk registry add frontage …)",
            )
        )
    elif not frontages:
        problems.append(
            Problem(
                "every frontage is marked not watched yet: the system watches nothing",
                f"sidewalk registry unwatched remove ADDRESS… {BY} (the ones a pole watches)",
            )
        )
    found, watched_by = _frontage_problems(state, frontages)
    by_kind: dict[str, list[_FrontageProblem]] = defaultdict(list)
    for item in found:
        by_kind[item.kind].append(item)
    for kind, items in by_kind.items():
        if len(items) >= GROUP_FROM:
            problems.append(_grouped(kind, items))
        else:
            problems.extend(Problem(i.what, i.fix) for i in items)
    for pole_id, frontages in sorted(watched_by.items()):
        pole = state.poles[pole_id]
        some = ", ".join(f.street_address for f in frontages[:3])
        more = f" and {len(frontages) - 3} more" if len(frontages) > 3 else ""
        minutes = f"{pole_reported.total_seconds() / 60:g}"
        if pole.last_seen is None or now - pole.last_seen > pole_reported:
            since = (
                "has never reported"
                if pole.last_seen is None
                else f"last reported {_when(pole.last_seen, zone)}"
            )
            problems.append(
                Problem(
                    f"pole {pole_id} (watching {some}{more}) {since}, not within the last"
                    f" {minutes} minutes",
                    "power the pole and check its network and broker settings (sidewalk-edge"
                    " run); sidewalk registry pole list shows when it was last heard",
                )
            )
        expected = state.expected_calibration.get(pole_id)
        reported = pole.reported_calibration
        if expected is not None and reported is not None and reported != expected:
            problems.append(
                Problem(
                    f"pole {pole_id} runs a different calibration from the registry's",
                    f"dashboard → Poles → pole {pole_id}: Send to pole (docs/commissioning.md)",
                )
            )
    problems.extend(
        Problem(
            f"letterhead: {line}",
            "set it in the [village] section of the configuration (docs/going-live.md)",
        )
        for line in state.letterhead
    )
    problems.extend(_unconfirmed_problems(state.unconfirmed))
    problems.extend(state.delivery)
    return problems


def _unconfirmed_problems(unconfirmed: Sequence[tuple[str, str]]) -> list[Problem]:
    """Values awaiting the Village's confirmation: one line each, or one for many."""
    confirm = 'sidewalk profile confirm {} --by "Village Board" --reference "…"'
    if len(unconfirmed) < GROUP_FROM:
        return [
            Problem(f"the profile value {name} ({value}) awaits the Village's confirmation",
                    confirm.format(name))
            for name, value in unconfirmed
        ]  # fmt: skip
    eg = ", ".join(f"{name} ({value})" for name, value in unconfirmed[:EXAMPLES])
    more = " …" if len(unconfirmed) > EXAMPLES else ""
    return [
        Problem(
            f"{len(unconfirmed)} profile values await the Village's confirmation, e.g. {eg}{more}",
            "sidewalk profile unconfirmed lists each with the question it answers; the"
            " values the Village confirms, in one go: " + confirm.format("NAME NAME …"),
        )
    ]


def read_readiness(
    cases: CaseStore, settings_village: VillageConfig | None, profile: Profile
) -> Readiness:
    """Everything ``readiness_problems`` judges, from the case records."""
    from datetime import UTC, datetime

    from sidewalk.alerts.confirm import unconfirmed_report
    from sidewalk.alerts.letterhead import letterhead_problems

    registry, now = cases.registry, datetime.now(UTC)
    frontages = registry.list_frontages()
    poles = {d.id: d for d in registry.list_devices()}
    return Readiness(
        frontages=frontages,
        owners=registry.owners_of_record(now),
        poles=poles,
        calibrated=frozenset((c.device_id, c.frontage_id) for c in registry.cameras()),
        expected_calibration={p: registry.expected_calibration(p) for p in poles},
        letterhead=letterhead_problems(settings_village),
        unconfirmed=[
            (v.name, v.value) for v in unconfirmed_report(cases, profile) if not v.confirmed
        ],
    )


def specimen_letter(place: Village) -> tuple[Path | None, list[str]]:
    """Render a specimen letter under the configured letterhead, the way notices go to
    paper, into ``<data_dir>/letterhead-specimen.pdf``: (its path, what went wrong).
    A signature file that cannot be read or printed is found now, not on a notice."""
    from datetime import UTC, datetime

    from sidewalk.alerts.pdf import specimen_pdf

    village_settings = place.settings.village
    if village_settings is None:
        return None, []  # letterhead_problems already says [village] is not set
    try:
        letterhead = place.letterhead()
    except OSError as exc:
        return None, [f"signature_image {village_settings.signature_image}: cannot be read"
                      f" ({exc.strerror or exc})"]  # fmt: skip
    assert letterhead is not None
    try:
        pdf = specimen_pdf(letterhead, place.profile, datetime.now(UTC))
    except Exception as exc:  # fpdf's many image errors: any is a letter that cannot print
        return None, [f"signature_image {village_settings.signature_image}: a letter cannot"
                      f" be printed with it ({exc}); use a PNG or JPEG file"]  # fmt: skip
    path = place.settings.data_dir / "letterhead-specimen.pdf"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pdf)
    except OSError:
        return None, []  # the letter renders; only the copy for the IT person is not kept
    return path, []


def check(config: ConfigOption = None) -> None:
    """Ready to go live? One line per problem with what fixes it; exit 0 only when ready."""
    import dataclasses
    import os
    from datetime import UTC, datetime, timedelta

    import typer
    from sqlalchemy.exc import SQLAlchemyError

    place = village(config)
    settings = place.settings
    try:
        with place.cases() as cases:
            state = read_readiness(cases, settings.village, place.profile)
    except SQLAlchemyError as exc:
        fail(f"cannot read the case database: {str(exc).splitlines()[0]}")
    state = dataclasses.replace(state, delivery=delivery_problems(settings.delivery, os.environ))
    specimen, wrong = specimen_letter(place)
    state = dataclasses.replace(state, letterhead=[*state.letterhead, *wrong])
    problems = readiness_problems(
        state,
        datetime.now(UTC),
        timedelta(minutes=settings.check.pole_reported_minutes),
        zone=place.profile.zone,
    )
    for problem in problems:
        console().print(problem.line(), markup=False, highlight=False, soft_wrap=True)
    unwatched = sum(1 for f in state.frontages if not f.watched)
    note = (
        f"; {unwatched} frontage(s) not watched yet: no automatic clock, the Village inspects"
        " them by hand (sidewalk registry unwatched list)"
        if unwatched
        else ""
    )
    if problems:
        console().print(f"not ready: {len(problems)} problem(s){note}", markup=False,
                        soft_wrap=True)  # fmt: skip
        raise typer.Exit(1)
    count = len(state.frontages) - unwatched
    if specimen is not None:
        console().print(f"a specimen letter under the letterhead: {specimen}", markup=False,
                        soft_wrap=True)  # fmt: skip
    console().print(
        f"ready: {count} frontage(s) watched, letters can go out{note}",
        markup=False, soft_wrap=True,
    )  # fmt: skip


__all__ = ["Problem", "Readiness", "check", "delivery_problems", "envelope_problem",
           "readiness_problems"]  # fmt: skip
