"""The dashboard's JSON API, one router per area; the browser UI uses nothing else.

Handlers read the case records and the time series and hand people's
actions to the case records (``record_action`` for the clocks, which the
analytics runner applies; the ledger methods for money). No rule is decided
here. Owner names and mailing addresses go only to roles with
``owner_details``. Every JSON route declares its response model, so the
OpenAPI document (``/openapi.json``) describes what the browser receives.

| module | routes under ``/api`` |
|---|---|
| ``accounts`` | ``session`` (log in, who, log out), ``users``, ``audit`` |
| ``overview`` | ``overview``, ``map``, ``frontages`` |
| ``clocks`` | ``clocks``, ``clocks/{clock_id}/history``, ``events`` (live) |
| ``today`` | ``today`` (the clerk's first page: what needs a person now) |
| ``notices`` | ``notices`` (POST issues), ``notices-to-issue``, ``notices/{n}/service``, … |
| ``rounds`` | ``rounds`` (the inspector's stops), ``rounds/{frontage}/taps``, ``…/photos`` |
| ``money`` | ``abatements`` with ``expenses`` and ``bill``, ``bills`` with ``payments`` |
| ``devices`` | ``devices``, ``dead-letters`` |
| ``registry`` | ``registry/poles`` (commissioning a pole), ``registry/frontages`` |
| ``sites`` | ``sites/{device}/series``, ``frames/{sha256}`` |
| ``defects`` | ``defects`` |
| ``cold_weather`` | ``cold-weather`` |
| ``property`` | ``properties/{frontage or parcel}`` (a page per property), ``parcels`` (map) |
| ``search`` | ``search?q=`` (addresses, owners, parcel and notice numbers) |
| ``admin`` | ``admin/letterhead``, ``admin/confirmations`` (profile values the Village confirms) |
| ``exports`` | ``exports/{notices,bills,payments,tax-roll}.{csv,xlsx}`` |

``deps`` holds the dependencies (stores, profile, clock, who may call) and
``views`` the response models several areas share.
"""

from __future__ import annotations

from fastapi import APIRouter

from sidewalk.dashboard.routes import (
    accounts,
    admin,
    clocks,
    cold_weather,
    defects,
    devices,
    exports,
    money,
    notices,
    overview,
    property,
    registry,
    rounds,
    search,
    sites,
    today,
)
from sidewalk.dashboard.routes.deps import DashboardContext, refuse_nul_bytes

__all__ = ["AREAS", "DashboardContext", "api_router", "refuse_nul_bytes"]

AREAS = (
    accounts, today, overview, clocks, notices, rounds, money, devices, sites, defects,
    cold_weather, registry, property, search, admin, exports,
)  # fmt: skip


def api_router() -> APIRouter:
    """Every area's routes under ``/api``; they read ``app.state.dashboard``."""
    api = APIRouter(prefix="/api")
    for area in AREAS:
        api.include_router(area.router)
    return api
