"""What the route handlers depend on, as FastAPI dependencies.

``create_app`` puts one ``DashboardContext`` on ``app.state.dashboard``;
the dependencies below hand its parts (the case store, the time series, the
ordinance profile, the dashboard's clock) to the handlers, so a handler names
what it reads in its signature and nothing reaches for a global.

Who may call a route is a dependency too: ``Reader`` and the other user
aliases wrap ``auth.require`` (a ``Require`` instance the security tests
read off every route) or ``auth.current_user``; both check the session and,
on a state-changing request, the CSRF token and the origin. A route takes
exactly one of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Path, Request
from pydantic import BaseModel, ConfigDict

from sidewalk.core.profile import Profile
from sidewalk.dashboard.auth import (
    SAFE_METHODS,
    LoginThrottle,
    Sessions,
    User,
    current_user,
    require,
)
from sidewalk.dashboard.live import LiveFeed
from sidewalk.storage.cases import CaseStore, DashboardRecords
from sidewalk.storage.evidence import EvidenceStore
from sidewalk.storage.space import FreeSpaceFloor
from sidewalk.storage.timeseries import SqliteTimeSeriesStore


@dataclass
class DashboardContext:
    """The stores and settings every route reads (one per app, on ``app.state.dashboard``)."""

    cases: CaseStore
    timeseries: SqliteTimeSeriesStore | None
    profile: Profile
    now: Callable[[], datetime]
    geometry_file: dict[str, dict[str, Any]] = field(default_factory=dict)
    evidence: EvidenceStore | None = None
    # Free space of the stores' disk against ingest's floor (the overview shows it).
    space: FreeSpaceFloor | None = None


def dashboard_context(request: Request) -> DashboardContext:
    context: DashboardContext = request.app.state.dashboard
    return context


Context = Annotated[DashboardContext, Depends(dashboard_context)]


def case_store(context: Context) -> CaseStore:
    return context.cases


def dashboard_records(context: Context) -> DashboardRecords:
    """The dashboard's accounts and sessions (``cases.dashboard``)."""
    return context.cases.dashboard


def timeseries_store(context: Context) -> SqliteTimeSeriesStore | None:
    return context.timeseries


def evidence_store(context: Context) -> EvidenceStore | None:
    return context.evidence


def ordinance_profile(context: Context) -> Profile:
    return context.profile


def dashboard_now(context: Context) -> datetime:
    """The dashboard's clock: wall time live, the storm's last event time in the demo."""
    return context.now()


def geometry_file(context: Context) -> dict[str, dict[str, Any]]:
    return context.geometry_file


def sessions(request: Request) -> Sessions:
    manager: Sessions = request.app.state.sessions
    return manager


def login_throttle(request: Request) -> LoginThrottle:
    throttle: LoginThrottle = request.app.state.throttle
    return throttle


def live_feed(request: Request) -> LiveFeed:
    feed: LiveFeed = request.app.state.live
    return feed


Cases = Annotated[CaseStore, Depends(case_store)]
Records = Annotated[DashboardRecords, Depends(dashboard_records)]
TimeSeries = Annotated[SqliteTimeSeriesStore | None, Depends(timeseries_store)]
Evidence = Annotated[EvidenceStore | None, Depends(evidence_store)]
VillageProfile = Annotated[Profile, Depends(ordinance_profile)]
Now = Annotated[datetime, Depends(dashboard_now)]
GeometryFile = Annotated[dict[str, dict[str, Any]], Depends(geometry_file)]
SessionManager = Annotated[Sessions, Depends(sessions)]
Throttle = Annotated[LoginThrottle, Depends(login_throttle)]
Live = Annotated[LiveFeed, Depends(live_feed)]

# A record's number in a path: a positive 64-bit integer, as both databases store it (a
# larger one overflowed the driver, a 500); out of range is a 422 naming the field.
RecordId = Annotated[int, Path(ge=1, le=2**63 - 1, description="the record's number")]

# Who may call a route (each also checks CSRF and origin on state-changing requests).
Reader = Annotated[User, Depends(require("read"))]
LoggedIn = Annotated[User, Depends(current_user)]  # the handler checks the permission itself
MayHandleMoney = Annotated[User, Depends(require("money"))]
MayPrint = Annotated[User, Depends(require("print"))]
MayManageUsers = Annotated[User, Depends(require("users"))]


async def refuse_nul_bytes(request: Request) -> None:
    """Dependency (app-wide): no NUL character in the path, the query or a JSON body.

    PostgreSQL text cannot hold one (the query fails, a 500) while SQLite
    stores it, so the two backends would disagree; no id, name or note needs it.
    """
    path: str = request.scope.get("path", "")
    if "\x00" in path or any("\x00" in v for v in request.query_params.values()):
        raise HTTPException(422, "NUL characters are not accepted")
    # A photo's bytes (the inspector's JPEG) hold NULs by nature; it is stored as a file.
    image = path.endswith("/photos") and request.headers.get("content-type", "").startswith(
        "image/"
    )
    if request.method not in SAFE_METHODS and not image:
        body = await request.body()  # cached by Starlette: the handler reads it again
        if b"\x00" in body or b"\\u0000" in body:
            raise HTTPException(422, "NUL characters are not accepted")


class RequestBody(BaseModel):
    """A request body: unknown keys are refused (422), never ignored."""

    model_config = ConfigDict(extra="forbid")


def iso(value: datetime | date | None) -> str | None:
    """An instant or date as the API sends it: ISO 8601 with its offset as stored."""
    return None if value is None else value.isoformat()


def money(text: str) -> Decimal:
    """A dollar amount from a form ('85.00', '$85'); 422 when it is not one."""
    try:
        amount = Decimal(text.strip().lstrip("$"))
    except InvalidOperation:
        raise HTTPException(422, f"not an amount: {text!r}") from None
    if not amount.is_finite():
        raise HTTPException(422, f"not an amount: {text!r}")
    return amount
