"""The inspector's rounds on a phone: the stops to check, one tap per finding, a photo.

A tap becomes the person action the engine already knows (``inspected_clear``,
``confirm_hazard``, ``record_ice``; posting a hazard notice is its service,
``record_notice_delivery``), recorded through ``cases.actions`` after the same
checks as ``sidewalk act``, so the analytics runner applies it like any other.
"Cleared" or "not cleared" at a deadline waiting in review decides it
(``decide_review``); elsewhere the engine has no step for them (the camera decides a
running deadline), so they are kept as the inspector's audited observation, with
the photo, for the clerk. "Icy" (§ 370-10 A: ice is to be removed, or kept sprinkled
with sand and/or salt) is the engine's ``record_ice`` while a clearing period is
pending, and otherwise such an observation too. Each stop says why it is on the
round (``stop_reason``), from the records: never a state's name.
A photo is stored in the evidence store (ingest's, by sha256) and linked to the
tap by an audit row; a photo holding the survey marker is measured too
(``survey_photos``: the defect measurement, shown on the property page).

Taps made with no signal wait on the phone (inspector.js) and arrive later, each
with its own time (``at``) and an idempotency ``key``: a key already recorded
returns the first answer and records nothing again, so a retry after a lost reply
is harmless. The key is kept in an ``inspection.tap`` audit row, written in one
transaction with the check and the finding (``CaseStore.transaction``): a crash
part-way keeps none of it, so the retry records the finding once. The check
holds the audit chain's lock to the end, so two dashboard processes cannot both
record one key.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Annotated, Final, Literal
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field

from sidewalk.analytics.clocks.actions import ACTION_TYPES, parse_action
from sidewalk.analytics.clocks.enforcement import OPEN_STATES
from sidewalk.analytics.clocks.engine import PENDING
from sidewalk.analytics.clocks.states import CaseState, ClearingState
from sidewalk.core.profile import Profile
from sidewalk.dashboard.auth import User
from sidewalk.dashboard.casework import CaseNow
from sidewalk.dashboard.routes.deps import (
    Cases,
    Evidence,
    LoggedIn,
    Now,
    Reader,
    RequestBody,
    VillageProfile,
    iso,
)
from sidewalk.dashboard.routes.notices import (
    NoticeRecords,
    can_serve,
    serve_notice,
    snow_case,
)
from sidewalk.dashboard.states import CASE, label
from sidewalk.dashboard.survey_photos import PhoneCamera, survey_photo
from sidewalk.dashboard.time_words import clock_words, village_time
from sidewalk.storage.cases import (
    CaseStore,
    ClockRecord,
    FrontageRecord,
    NotFoundError,
    NoticeRecord,
)

router = APIRouter()

Tap = Literal["cleared", "not_cleared", "hazard", "ice", "posted"]
TAP_LABELS: Final[dict[Tap, str]] = {
    "cleared": "Cleared",
    "not_cleared": "Not cleared",
    "hazard": "Hazard",
    "ice": "Icy",
    "posted": "Hazard notice posted now",
}
# Clearing clocks an inspector should look at: running, or past the deadline undecided.
LOOK_AT: Final = frozenset(
    {ClearingState.CLEARING_PERIOD, ClearingState.NEEDS_REVIEW, ClearingState.UNVERIFIED}
)
# A person's decision on a deadline in review (``actions.DecideReview``).
REVIEW: Final = "decide_review"
MAX_PHOTO_BYTES: Final = 20 * 1024 * 1024
# A phone camera's largest frame: 50 MP sensors (8160 x 6120) are the biggest that
# shoot full resolution by default; 12000 a side covers either orientation. A header
# declaring more is a decompression bomb (20000 x 20000 is 1.2 GB decoded) and is
# refused before anything decodes it.
MAX_PHOTO_PIXELS: Final = 50_000_000
MAX_PHOTO_SIDE: Final = 12_000
JPEG: Final = b"\xff\xd8\xff"
SHA256: Final = re.compile(r"[0-9a-f]{64}")
# A phone's clock may run a little ahead of the dashboard's; beyond this it is wrong.
CLOCK_SLACK: Final = timedelta(minutes=10)
TAP_KEPT: Final = "inspection.tap"


class TapView(BaseModel):
    tap: Tap
    label: str


class Stop(BaseModel):
    """One property on the round, with the taps that mean something there now."""

    frontage: str = Field(description="for the request only; never shown")
    address: str
    why: str = Field(description="why to look, in plain words")
    deadline: str | None
    notice: str | None = Field(description="the notice to post, when one waits")
    taps: list[TapView]


class Rounds(BaseModel):
    zone: str
    now: str
    stops: list[Stop]


class TapBody(RequestBody):
    tap: Tap
    photo: str | None = Field(default=None, description="sha256 of a photo sent before")
    at: datetime | None = Field(default=None, description="when it was seen; default now")
    key: str | None = Field(
        default=None, pattern=r"^[A-Za-z0-9-]{8,64}$",
        description="idempotency key: the same key again returns the first answer",
    )  # fmt: skip


class TapRecorded(BaseModel):
    message: str
    photo: str | None
    repeated: bool = Field(default=False, description="the key was recorded before")


class PhotoStored(BaseModel):
    sha256: str
    bytes: int
    survey: str | None = Field(
        default=None, description="the defect measurement's result, when the marker is in it"
    )
    measured: bool = False


def _house(address: str) -> tuple[str, int, str]:
    """Walking order: street, then house number."""
    number, _, street = address.partition(" ")
    return (street, int(number), address) if number.isdigit() else (address, 0, address)


def stop_reason(  # noqa: PLR0911 (one sentence per reason a stop can have)
    *,
    case: CaseNow | None,
    clock: ClockRecord | None,
    hazard_reasons: tuple[str, ...] = (),
    now: datetime,
    zone: ZoneInfo,
) -> str:
    """Why the stop is on the round, in the inspector's words, from what its records hold:
    the possible hazard and what was found, the notice's or the snowfall's deadline."""

    def at(t: datetime) -> str:
        return village_time(t, now, zone)

    if case is not None and case.state in OPEN_STATES:
        deadline, state = case.owner_deadline, case.state
        if hazard_reasons and "confirm_hazard" in case.steps:
            found = "; ".join(hazard_reasons)
            return f"Possible hazard: {found}. Decide whether it is an immediate danger."
        if state == CaseState.NOTICE_ISSUED:
            return "Notice issued, not yet served on the owner."
        if state == CaseState.HAZARD_NOTICE_ISSUED:
            return "Hazard confirmed: the 2-hour notice is to be posted on the door."
        if state in (CaseState.NOTICE_PERIOD, CaseState.HAZARD_PERIOD) and deadline:
            hazard = state == CaseState.HAZARD_PERIOD
            if deadline <= now:
                what = "the hazard was removed" if hazard else "the sidewalk was cleared"
                period = "hazard notice's 2 hours" if hazard else "notice period"
                return f"The {period} ended {at(deadline)}: check whether {what}."
            todo = "remove the hazard" if hazard else "clear the sidewalk"
            notice = "Hazard notice posted" if hazard else "Notice served"
            return f"{notice}: the owner must {todo} by {at(deadline)}."
        if state == CaseState.ABATEMENT_ORDERED:
            return "Village removal ordered: the crew clears the sidewalk."
        return CASE[state].label
    if clock is None:
        return "Hazard notice to post on the door."
    seen, deadline = ClearingState(clock.state), clock.deadline
    if deadline is None:
        return label(clock.state, clock.kind)
    if seen == ClearingState.CLEARING_PERIOD and deadline > now:
        return f"Snow stopped: the owner must clear the sidewalk by {at(deadline)}."
    if seen == ClearingState.NEEDS_REVIEW:
        return (
            f"The owner's deadline passed {at(deadline)} and the camera's pictures did not"
            " come in: look whether the sidewalk is cleared."
        )
    if seen == ClearingState.UNVERIFIED:
        return (
            f"The owner's deadline passed {at(deadline)} and the camera could not measure"
            " the sidewalk: look whether it is cleared."
        )
    return (
        f"The owner's deadline passed {at(deadline)}; the camera has not decided yet:"
        " look whether the sidewalk is cleared."
    )


def _stop(
    f: FrontageRecord,
    clock: ClockRecord | None,
    case: CaseNow | None,
    hazard_notice: NoticeRecord | None,
    user: User,
    *,
    hazard_reasons: tuple[str, ...],
    now: datetime,
    zone: ZoneInfo,
) -> Stop | None:
    """The frontage as a stop, or None when nothing there needs a look."""
    open_case = case is not None and case.state in OPEN_STATES
    looking = clock is not None and ClearingState(clock.state) in LOOK_AT
    if not open_case and not looking and hazard_notice is None:
        return None
    # Icy at every stop: the engine's record while a clearing period is pending, else
    # the inspector's observation for the clerk (``_record``).
    taps: list[Tap] = ["cleared", "not_cleared", "ice"]
    if case is not None and "confirm_hazard" in case.steps:
        taps.append("hazard")
    if hazard_notice is not None:
        taps.insert(0, "posted")
    if not user.may("field_action"):
        taps = []
    why = stop_reason(case=case, clock=clock, hazard_reasons=hazard_reasons, now=now, zone=zone)
    if open_case and case is not None:
        deadline = case.owner_deadline
    else:
        deadline = clock.deadline if clock is not None else None
    return Stop(
        frontage=f.id, address=f.street_address, why=why, deadline=iso(deadline),
        notice=hazard_notice.number if hazard_notice else None,
        taps=[TapView(tap=t, label=TAP_LABELS[t]) for t in taps],
    )  # fmt: skip


def _stops(cases: CaseStore, profile: Profile, user: User, now: datetime) -> list[Stop]:
    records = NoticeRecords.read(cases)
    clearing = {c.frontage_id: c for c in cases.clocks.list(active_only=True, kind="clearing")}
    notices = cases.notices.list()
    cases_by_frontage: dict[str, CaseNow] = {}
    to_post: dict[str, NoticeRecord] = {}
    for n in notices:
        case = snow_case(records, profile, n, now)
        if case is None:
            continue
        held = cases_by_frontage.get(n.frontage_id)
        if held is None or (held.state not in OPEN_STATES and case.state in OPEN_STATES):
            cases_by_frontage[n.frontage_id] = case
        if n.kind == "hazard_notice" and can_serve(n, case):
            to_post[n.frontage_id] = n
    stops = []
    for f in cases.registry.list_frontages():
        case = cases_by_frontage.get(f.id)
        stop = _stop(
            f, clearing.get(f.id), case, to_post.get(f.id), user,
            hazard_reasons=_hazard_reasons(cases, case), now=now, zone=profile.zone,
        )  # fmt: skip
        if stop is not None:
            stops.append(stop)
    return sorted(stops, key=lambda s: _house(s.address))


def _hazard_reasons(cases: CaseStore, case: CaseNow | None) -> tuple[str, ...]:
    """What the newest possible-hazard finding on the case found (none: not a candidate)."""
    if case is None or "confirm_hazard" not in case.steps:
        return ()
    rows = cases.audit.list(subject=f"violation:{case.violation_key}")
    found = [r for r in rows if r.action == "hazard.candidate"]
    return tuple(str(r) for r in found[-1].detail.get("reasons", ())) if found else ()


@router.get("/rounds", tags=["rounds"])
def rounds(user: Reader, cases: Cases, profile: VillageProfile, now: Now) -> Rounds:
    """The properties to check on the inspector's round, in walking order."""
    return Rounds(zone=profile.village.timezone, now=now.isoformat(),
                  stops=_stops(cases, profile, user, now))  # fmt: skip


def frontage_record(cases: Cases, frontage: str) -> FrontageRecord:
    """Dependency: the frontage of the ``frontage`` path parameter (404 if none)."""
    try:
        return cases.registry.get_frontage(frontage)
    except NotFoundError:
        raise HTTPException(404, "There is no such property on the round.") from None


Frontage = Annotated[FrontageRecord, Depends(frontage_record)]


def phone_camera(request: Request) -> PhoneCamera:
    """The inspectors' phone camera (``app.state.phone_camera``): uncalibrated if unset."""
    camera: PhoneCamera | None = getattr(request.app.state, "phone_camera", None)
    return camera or PhoneCamera()


@router.post("/rounds/{frontage}/photos", tags=["rounds"])
async def photo(
    *,
    user: LoggedIn,
    f: Frontage,
    request: Request,
    evidence: Evidence,
    cases: Cases,
    profile: VillageProfile,
    now: Now,
    at: Annotated[datetime | None, Query(description="when it was taken; default now")] = None,
) -> PhotoStored:
    """A photo from the inspector's phone (the JPEG itself as the body), kept as evidence;
    measured for defects when it holds the survey marker."""
    if not user.may("field_action"):
        raise HTTPException(403, "Your account may not add photos on the round.")
    if evidence is None:
        raise HTTPException(503, "Photos cannot be kept: no evidence store is set up.")
    body = await read_body(request, MAX_PHOTO_BYTES, TOO_BIG_PHOTO)
    if not body.startswith(JPEG):
        raise HTTPException(422, "Photo: it must be a JPEG picture from the camera.")
    check_photo_size(body)
    if not scan_ends(body):
        raise HTTPException(422, "Photo: only part of it arrived; send it again.")
    taken = _when(at, now, profile)
    sha = evidence.put(body)
    # OpenCV work: off the event loop.
    found = await run_in_threadpool(
        survey_photo, sha, frontage=f.id, at=taken, camera=phone_camera(request), cases=cases,
        evidence=evidence, profile=profile,
    )  # fmt: skip
    if found is None:
        return PhotoStored(sha256=sha, bytes=len(body))
    return PhotoStored(sha256=sha, bytes=len(body), survey=found.words, measured=found.measured)


TOO_BIG_PHOTO: Final = "Photo: it is over 20 MB; take it again at a lower size."


async def read_body(request: Request, limit: int, too_big: str) -> bytes:
    """The request's body, refused with 413 once it passes ``limit`` bytes: the declared
    Content-Length is checked before reading, the streamed bytes are counted as they come."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, too_big)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, too_big)
        chunks.append(chunk)
    return b"".join(chunks)


def check_photo_size(jpeg: bytes) -> None:
    """Refuse a JPEG whose header declares more pixels than a phone camera takes, or none."""
    from sidewalk.analytics.defects.io import declared_size

    size = declared_size(jpeg)
    if size is None:
        raise HTTPException(422, "Photo: it must be a JPEG picture from the camera.")
    width, height = size
    if width * height > MAX_PHOTO_PIXELS or max(width, height) > MAX_PHOTO_SIDE:
        raise HTTPException(
            413,
            f"Photo: it is {width} x {height} pixels, larger than a phone camera takes "
            f"(at most {MAX_PHOTO_PIXELS // 1_000_000} megapixels); take it again at the "
            "camera's usual size.",
        )


def scan_ends(jpeg: bytes) -> bool:
    """Whether a JPEG's image data, after its first start-of-scan, reaches an end-of-image
    marker: a photo cut off on the way has none. Inside the scan every 0xFF byte is
    followed by 0x00 or a restart marker, so the end marker cannot occur by chance; an
    EXIF thumbnail's own end comes before the scan and is skipped with its segment."""
    i = 2
    while i + 4 <= len(jpeg):
        if jpeg[i] != 0xFF:
            return False
        marker = jpeg[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
        elif marker == 0x01 or 0xD0 <= marker <= 0xD8:  # no length field
            i += 2
        elif marker == 0xDA:  # start of scan
            return b"\xff\xd9" in jpeg[i + 2 :]
        else:
            i += 2 + int.from_bytes(jpeg[i + 2 : i + 4], "big")
    return False


def _when(at: datetime | None, now: datetime, profile: Profile) -> datetime:
    """The phone's time for a finding (default now); refused when it is in the future."""
    if at is None:
        return now
    if at.tzinfo is None:
        at = at.replace(tzinfo=profile.zone)
    if at > now + CLOCK_SLACK:
        raise HTTPException(
            422, "Time: it is later than now; check the phone's clock and send again."
        )
    return at


@router.post("/rounds/{frontage}/taps", tags=["rounds"])
def tap(
    body: TapBody,
    *,
    user: LoggedIn,
    f: Frontage,
    cases: Cases,
    profile: VillageProfile,
    now: Now,
    evidence: Evidence,
) -> TapRecorded:
    """Record what the inspector found at the property (and link the photo, if any)."""
    if not user.may("field_action"):
        raise HTTPException(403, "Your account may not record findings on the round.")
    if body.photo is not None and (
        evidence is None or not SHA256.fullmatch(body.photo) or body.photo not in evidence
    ):
        raise HTTPException(422, "Photo: it did not arrive; take it again.")
    at = _when(body.at, now, profile)
    # The check, the finding, its photo link and its key: all kept, or none of them.
    with cases.transaction():
        if body.key is not None and (kept := _kept(cases, f.id, body.key)) is not None:
            return TapRecorded(message=kept, photo=body.photo, repeated=True)
        stop = next((s for s in _stops(cases, profile, user, now) if s.frontage == f.id), None)
        allowed = {t.tap for t in stop.taps} if stop else set()
        if body.tap not in allowed:
            raise HTTPException(
                409, f"“{TAP_LABELS[body.tap]}” cannot be recorded at {f.street_address} now."
            )
        message, action_id = _record(cases, profile, user, f, tap=body.tap, at=at, now=now)
        if body.photo is not None:
            cases.audit.append(
                user.username, "inspection.photo", f"frontage:{f.id}",
                {"sha256": body.photo, "tap": body.tap, "action_id": action_id,
                 "at": at.isoformat()},
            )  # fmt: skip
            message += " The photo is kept with it."
        if body.key is not None:
            cases.audit.append_once(
                user.username, TAP_KEPT, f"frontage:{f.id}",
                {"tap": body.tap, "at": at.isoformat(), "message": message,
                 "action_id": action_id},
                key=body.key,
            )  # fmt: skip
    return TapRecorded(message=message, photo=body.photo)


def _kept(cases: CaseStore, frontage: str, key: str) -> str | None:
    """The answer to a tap already recorded under ``key`` (None: not seen before)."""
    row = cases.audit.keyed(f"frontage:{frontage}", TAP_KEPT, key)
    return None if row is None else str(row.detail.get("message", "Already recorded."))


def _clock(at: datetime, profile: Profile) -> str:
    """A time of day on the village's clock, as the inspector reads it (2:05 PM)."""
    return clock_words(at, profile.zone)


def _record(
    cases: CaseStore,
    profile: Profile,
    user: User,
    f: FrontageRecord,
    *,
    tap: Tap,
    at: datetime,
    now: datetime,
) -> tuple[str, int | None]:
    """The tap through the person-action path; (what was recorded, the action's id)."""
    records = NoticeRecords.read(cases)
    found = [(n, snow_case(records, profile, n, now)) for n in cases.notices.list(frontage_id=f.id)]
    open_cases = [(n, c) for n, c in found if c is not None and c.state in OPEN_STATES]
    where = f.street_address
    if tap == "posted":
        n = next(n for n, c in found if n.kind == "hazard_notice" and can_serve(n, c))
        serve_notice(cases, profile, n, at=at, served_by=user.username, method="posted",
                     user=user)  # fmt: skip
        since = "now" if abs(at - now) < timedelta(minutes=1) else _clock(at, profile)
        return f"Hazard notice {n.number} posted at {where}: the 2 hours run from {since}.", None
    clock = next(iter(cases.clocks.list(active_only=True, frontage_id=f.id, kind="clearing")), None)
    if tap == "ice" and clock is not None and ClearingState(clock.state) in PENDING:
        action = cases.actions.record("record_ice", f.id, at, user.username, {"note": "round"})
        return f"Untreated ice recorded at {where}.", action.id
    if tap == "ice":
        # No clearing period to count it against: the clerk reads it with the case.
        cases.audit.append(
            user.username, "inspection.observed", f"frontage:{f.id}",
            {"seen": "icy", "rule": "§ 370-10 A", "at": at.isoformat()},
        )  # fmt: skip
        return f"Seen icy at {where} (§ 370-10 A): kept for the clerk's review.", None
    if tap == "hazard" or (tap == "cleared" and open_cases):
        kind = "confirm_hazard" if tap == "hazard" else "inspected_clear"
        n, case = open_cases[-1]
        assert case is not None
        action = cases.actions.record(
            kind, case.violation_key, at, user.username, {"notice": n.number, "note": "round"}
        )
        said = "Hazard confirmed: the 2-hour notice is being prepared" if tap == "hazard" else (
            "Sidewalk recorded as cleared"
        )  # fmt: skip
        return f"{said} at {where}.", action.id
    seen = "cleared" if tap == "cleared" else "not cleared"
    if clock is not None and clock.state == ClearingState.NEEDS_REVIEW and REVIEW in ACTION_TYPES:
        # A deadline waiting in review: the inspector's finding decides it (the engine's step).
        detail = {"decision": tap, "reason": f"{user.username} saw it {seen} on the round",
                  "deadline": iso(clock.deadline)}  # fmt: skip
        parse_action(REVIEW, f.id, detail, at=at, who=user.username)
        action = cases.actions.record(REVIEW, f.id, at, user.username, detail)
        return f"Deadline at {where} decided: {seen}.", action.id
    cases.audit.append(
        user.username, "inspection.observed", f"frontage:{f.id}",
        {"seen": seen, "at": at.isoformat()},
    )  # fmt: skip
    return f"Seen {seen} at {where}: kept for the clerk's review.", None
