"""The ordinance clocks: every clock, one clock's transitions, and the live event stream."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from sidewalk.dashboard.auth import COOKIE
from sidewalk.dashboard.routes.deps import Cases, Live, Reader, RecordId, SessionManager, iso
from sidewalk.dashboard.routes.views import ClockView, clock_view
from sidewalk.storage.cases import NotFoundError

router = APIRouter()


class CauseView(BaseModel):
    """What moved a clock: a reading or frame (device, seq), a person (who), or time."""

    kind: str
    ts: int = Field(description="event time, ms since the epoch")
    device: str | None = None
    seq: int | None = None
    who: str | None = None


class TransitionView(BaseModel):
    """One step of a clock, from one state to the next."""

    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True)

    from_: str = Field(alias="from")
    to: str
    at: str | None
    cause: CauseView = Field(description="device, seq and who only when known")
    detail: dict[str, Any]


@router.get("/clocks", tags=["records"])
def clocks(user: Reader, cases: Cases, active: bool = False) -> list[ClockView]:
    addresses = {f.id: f.street_address for f in cases.registry.list_frontages()}
    in_force = cases.confirmations.in_force()
    return [clock_view(c, addresses, in_force) for c in cases.clocks.list(active_only=active)]


@router.get("/clocks/{clock_id}/history", tags=["records"], response_model_exclude_unset=True)
def clock_history(clock_id: RecordId, user: Reader, cases: Cases) -> list[TransitionView]:
    try:
        cases.clocks.get(clock_id)
    except NotFoundError:
        raise HTTPException(404, "There is no such clock.") from None
    return [
        TransitionView(
            from_=t.from_state, to=t.to_state, at=iso(t.at),
            cause=CauseView.model_validate(t.cause.to_json()), detail=dict(t.detail),
        )
        for t in cases.clocks.history(clock_id)
    ]  # fmt: skip


class EventStream(StreamingResponse):
    media_type = "text/event-stream"


@router.get(
    "/events",
    tags=["live"],
    response_class=EventStream,
    responses={200: {"content": {"text/event-stream": {}}, "description": "server-sent events"}},
)
async def events(
    user: Reader, live: Live, sessions: SessionManager, request: Request
) -> EventStream:
    """Server-sent events: ``transition`` (a clock moved) and ``audit`` (a new row);
    ``ended`` when the session ends (logout, account disabled or changed), then it closes."""
    cookie = request.cookies.get(COOKIE)

    def session_live() -> bool:
        # The same checks as every request: revoked, expired, account disabled.
        return sessions.user_for(cookie) is not None

    return EventStream(
        live.stream(session_live=session_live),
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
