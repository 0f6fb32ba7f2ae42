"""The dashboard's JSON API; the browser UI uses nothing else.

Handlers read the case records and the time series and hand people's
actions to the case records (``record_action`` for the clocks, which the
analytics runner applies; the ledger methods for money). No rule is decided
here. Owner names and mailing addresses go only to roles with
``owner_details``.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from pathlib import PurePath
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from sidewalk.analytics.clocks.cold_weather import subgrade_frozen, sump_discharge_window
from sidewalk.analytics.clocks.permits import in_frozen_ground_window
from sidewalk.analytics.inspect import defect_limits, owner_survey
from sidewalk.core.contract import SnowMeasurement, WeatherReading
from sidewalk.core.profile import Profile
from sidewalk.dashboard.auth import (
    COOKIE,
    PERMISSIONS,
    SAFE_METHODS,
    User,
    current_user,
    hash_password,
    require,
)
from sidewalk.dashboard.geometry import frontage_features, generated_streets
from sidewalk.dashboard.states import ALERT_ACTIONS, CATEGORIES, category
from sidewalk.storage.cases import (
    AuditRecord,
    BillingError,
    BillRecord,
    CaseStore,
    CaseStoreError,
    ClockRecord,
    DashboardRecords,
    FrontageRecord,
    InspectionRecord,
    NotFoundError,
    NoticeRecord,
    OwnerRecord,
    RuleUse,
)
from sidewalk.storage.evidence import EvidenceStore
from sidewalk.storage.timeseries import SqliteTimeSeriesStore

Reader = Annotated[User, Depends(require("read"))]

# Which person actions each role may record, and what the action targets.
ACTION_PERMISSION: dict[str, Literal["field_action", "notice_action", "money"]] = {
    "confirm_hazard": "field_action",
    "owner_unavailable": "field_action",
    "inspected_clear": "field_action",
    "record_treated": "field_action",
    "record_delivery": "notice_action",
    "abatement_done": "notice_action",
    "bill_received": "money",
    "paid_in_full": "money",
}


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LoginBody(_Body):
    username: str = Field(min_length=1, max_length=64)
    password: str = Field(min_length=1, max_length=200)


class ActionBody(_Body):
    kind: str = Field(description="one of the person actions (ActionKind)")
    at: datetime | None = Field(default=None, description="when it happened; default now")
    channel: str | None = Field(default=None, description="record_delivery: hand, mail, posted")
    note: str | None = Field(default=None, max_length=500)


class ExpenseBody(_Body):
    amount: str = Field(description="dollars, e.g. '85.00'")
    description: str = Field(min_length=1, max_length=400)
    incurred_at: datetime | None = None


class PaymentBody(_Body):
    key: str = Field(min_length=8, max_length=100, description="client-made id: no double entry")
    amount: str
    method: str = Field(min_length=1, max_length=32)
    reference: str | None = Field(default=None, max_length=100)
    paid_at: datetime | None = None


class PrintBatchBody(_Body):
    numbers: list[str] = Field(min_length=1, max_length=500)


class UserBody(_Body):
    username: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.@-]+$")
    password: str = Field(min_length=8, max_length=200)
    role: Literal["viewer", "inspector", "clerk", "admin"]


def _iso(value: datetime | date | None) -> str | None:
    return None if value is None else value.isoformat()


def _rule(r: RuleUse) -> dict[str, Any]:
    return {
        "name": r.name, "value": str(r.value), "unit": r.unit, "citation": r.citation,
        "unconfirmed": r.unconfirmed,
    }  # fmt: skip


def _clock(c: ClockRecord, addresses: dict[str, str]) -> dict[str, Any]:
    return {
        "id": c.id,
        "frontage": c.frontage_id,
        "address": addresses.get(c.frontage_id),
        "kind": c.kind,
        "state": c.state,
        "category": category(c.state),
        "started_at": _iso(c.started_at),
        "deadline": _iso(c.deadline),
        "closed_at": _iso(c.closed_at),
        "citation": c.citation,
        "unconfirmed": c.unconfirmed,
        "rules": [_rule(r) for r in c.rules],
    }


def _money(text: str) -> Decimal:
    try:
        amount = Decimal(text.strip().lstrip("$"))
    except InvalidOperation:
        raise HTTPException(422, f"not an amount: {text!r}") from None
    if not amount.is_finite():
        raise HTTPException(422, f"not an amount: {text!r}")
    return amount


async def refuse_nul_bytes(request: Request) -> None:
    """Dependency (app-wide): no NUL character in the path, the query or a JSON body.

    PostgreSQL text cannot hold one (the query fails, a 500) while SQLite
    stores it, so the two backends would disagree; no id, name or note needs it.
    """
    path: str = request.scope.get("path", "")
    if "\x00" in path or any("\x00" in v for v in request.query_params.values()):
        raise HTTPException(422, "NUL characters are not accepted")
    if request.method not in SAFE_METHODS:
        body = await request.body()  # cached by Starlette: the handler reads it again
        if b"\x00" in body or b"\\u0000" in body:
            raise HTTPException(422, "NUL characters are not accepted")


class Api:
    """Holds what the handlers need; ``router()`` builds the routes."""

    def __init__(
        self,
        cases: CaseStore,
        timeseries: SqliteTimeSeriesStore | None,
        profile: Profile,
        *,
        now: Callable[[], datetime],
        geometry_file: dict[str, dict[str, Any]],
        evidence: EvidenceStore | None = None,
    ) -> None:
        self.cases = cases
        self.records = DashboardRecords(cases)
        self.timeseries = timeseries
        self.profile = profile
        self.now = now
        self.geometry_file = geometry_file
        self.evidence = evidence

    # -- shared views ------------------------------------------------------------

    def frontage_states(self) -> dict[str, ClockRecord]:
        """Each frontage's clock that decides its colour: an open enforcement case first."""
        chosen: dict[str, ClockRecord] = {}
        for clock in self.cases.list_clocks():  # start order: later clocks win
            held = chosen.get(clock.frontage_id)
            # An open enforcement case outranks any clearing clock that follows it.
            if (
                held is not None
                and held.active
                and held.kind == "enforcement"
                and clock.kind != "enforcement"
            ):
                continue
            chosen[clock.frontage_id] = clock
        return chosen

    def owners_for(self, user: User) -> dict[str, OwnerRecord] | None:
        """Every owner by id (one query), or None for roles that may not see them."""
        if not user.may("owner_details"):
            return None
        return {o.id: o for o in self.records.list_owners()}

    def frontage_view(
        self, f: FrontageRecord, clock: ClockRecord | None, owners: dict[str, OwnerRecord] | None
    ) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": f.id,
            "address": f.street_address,
            "parcel": f.parcel_number,
            "length_ft": f.length_ft,
            "zone": f.zone,
            "device": f.device_id,
            "state": clock.state if clock else None,
            "clock_kind": clock.kind if clock else None,
            "category": category(clock.state) if clock else "none",
            "deadline": _iso(clock.deadline) if clock and clock.active else None,
        }
        if owners is not None:
            owner = owners[f.owner_id]
            out["owner"] = {"name": owner.name, "address_lines": list(owner.address_lines)}
        return out

    def notice_view(self, n: NoticeRecord, user: User) -> dict[str, Any]:
        violation = self.cases.get_violation(n.violation_id) if n.violation_id else None
        out: dict[str, Any] = {
            "number": n.number,
            "kind": n.kind,
            "frontage": n.frontage_id,
            "address": self.cases.get_frontage(n.frontage_id).street_address,
            "violation_key": violation.key if violation else None,
            "violation_status": violation.status if violation else None,
            "offense_count": violation.offense_count if violation else None,
            "issued_at": _iso(n.issued_at),
            "deadline": _iso(n.deadline),
            "citation": n.citation,
            "unconfirmed": any(r.unconfirmed for r in n.rules),
            "rules": [_rule(r) for r in n.rules],
            "status": n.status,
            "delivered_at": _iso(n.delivered_at),
            "received_at": _iso(n.received_at),
            "actions": [
                {
                    "kind": a.kind,
                    "at": _iso(a.at),
                    "who": a.who,
                    "applied": _iso(a.applied_at),
                    "error": a.error,
                }
                for a in (self.cases.list_actions(violation.key) if violation else [])
            ],
            "deliveries": [
                {"channel": d.channel, "status": d.status, "at": _iso(d.attempted_at)}
                for d in self.cases.list_deliveries(notice_id=n.id)
            ],
        }
        if user.may("owner_details"):
            out["owner"] = {"name": n.owner_name, "address_lines": list(n.owner_address_lines)}
            out["body_text"] = n.body_text
        return out

    def bill_view(self, b: BillRecord, user: User) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": b.id, "abatement": b.abatement_id, "frontage": b.frontage_id,
            "amount": str(b.amount), "paid": str(b.paid), "balance": str(b.balance),
            "costs_incurred_at": _iso(b.costs_incurred_at), "issued_at": _iso(b.issued_at),
            "received_at": _iso(b.received_at), "due_date": _iso(b.due_date), "status": b.status,
        }  # fmt: skip
        if user.may("owner_details"):
            out["owner"] = {"name": b.owner_name, "address_lines": list(b.owner_address_lines)}
        return out

    def inspection_view(
        self, i: InspectionRecord, frontages: Mapping[str, FrontageRecord]
    ) -> dict[str, Any]:
        """One stored inspection: per-block measured vs limit (with citation) and evidence."""
        sha = i.evidence_sha256
        return {
            "id": i.id, "frontage": i.frontage_id,
            "address": frontages[i.frontage_id].street_address,
            "surveyed_at": _iso(i.surveyed_at), "kind": i.kind,
            "source": PurePath(i.source_name).name, "status": i.status, "failure": i.failure,
            "blocks": [dict(b) for b in i.blocks],
            "evidence_url": (f"/api/frames/{sha}"
                             if sha and self.evidence is not None and sha in self.evidence
                             else None),
        }  # fmt: skip

    def alerts(self, limit: int = 20) -> list[AuditRecord]:
        rows = [a for a in self.records.recent_audit(400) if a.action in ALERT_ACTIONS]
        return rows[:limit]

    def _notice(self, number: str) -> NoticeRecord:
        try:
            return self.cases.get_notice_by_number(number)
        except NotFoundError:
            raise HTTPException(404, f"no notice {number}") from None

    # -- routes ---------------------------------------------------------------------

    def router(self) -> APIRouter:  # noqa: PLR0915 (one place lists every route)
        r = APIRouter(prefix="/api")
        api = self

        @r.get("/session", tags=["session"])
        def session(user: Reader) -> dict[str, Any]:
            """Who is logged in, their role, what they may do, and the CSRF token."""
            return {
                "username": user.username,
                "role": user.role,
                "csrf_token": user.csrf_token,
                "permissions": sorted(p for p, roles in PERMISSIONS.items() if user.role in roles),
            }

        @r.post("/session", tags=["session"])
        def login(body: LoginBody, request: Request, response: Response) -> dict[str, Any]:
            """Log in; sets the session cookie. Repeated failures are throttled (429)."""
            if request.headers.get("content-type", "").split(";")[0] != "application/json":
                # A cross-site HTML form cannot send JSON: no login CSRF.
                raise HTTPException(415, "send JSON")
            throttle = request.app.state.throttle
            client = request.client.host if request.client else "?"
            wait = throttle.retry_after(body.username, client)
            if wait:
                raise HTTPException(429, "too many failed logins", {"Retry-After": str(wait)})
            result = request.app.state.sessions.login(body.username, body.password)
            if result is None:
                throttle.failed(body.username, client)
                api.cases.append_audit(
                    "anonymous", "session.login_failed", f"user:{body.username}",
                    {"client": client},
                )  # fmt: skip
                raise HTTPException(401, "wrong user name or password")
            throttle.succeeded(body.username)
            cookie, user = result
            response.set_cookie(
                COOKIE, cookie, httponly=True, samesite="strict",
                secure=request.app.state.sessions.secure_cookies,
                max_age=int(request.app.state.sessions.lifetime.total_seconds()), path="/",
            )  # fmt: skip
            return {"username": user.username, "role": user.role, "csrf_token": user.csrf_token}

        @r.delete("/session", tags=["session"])
        def logout(user: Reader, request: Request, response: Response) -> dict[str, str]:
            """End the session."""
            request.app.state.sessions.logout(user)
            response.delete_cookie(COOKIE, path="/")
            return {"status": "logged out"}

        @r.get("/overview", tags=["pages"])
        def overview(user: Reader) -> dict[str, Any]:
            """Every frontage with its state, the running clocks, and the newest alerts."""
            frontages = api.cases.list_frontages()
            addresses = {f.id: f.street_address for f in frontages}
            states = api.frontage_states()
            # Soonest deadline first; clocks without one (snowing) after them.
            active = sorted(
                api.cases.list_clocks(active_only=True),
                key=lambda c: (c.deadline is None, c.deadline or c.started_at),
            )
            counts: dict[str, int] = {}
            views = []
            owners = api.owners_for(user)
            for f in frontages:
                view = api.frontage_view(f, states.get(f.id), owners)
                counts[view["category"]] = counts.get(view["category"], 0) + 1
                views.append(view)
            return {
                "village": api.profile.village.name,
                "zone": api.profile.village.timezone,
                "now": api.now().isoformat(),
                "categories": {k: {"label": v[0], "color": v[1]} for k, v in CATEGORIES.items()},
                "counts": counts,
                "frontages": views,
                "clocks": [_clock(c, addresses) for c in active],
                "alerts": [
                    {
                        "id": a.id,
                        "action": a.action,
                        "subject": a.subject,
                        "actor": a.actor,
                        "at": _iso(a.recorded_at),
                    }
                    for a in api.alerts()
                ],
            }

        @r.get("/map", tags=["pages"])
        def frontage_map(user: Reader) -> dict[str, Any]:
            """Every frontage with its state (GeoJSON), and the generated streets' centre lines."""
            frontages = api.cases.list_frontages()
            states = api.frontage_states()
            features = frontage_features(
                frontages, api.records.frontage_geometries(), api.geometry_file
            )
            features_by_id = {f["id"]: f["properties"]["geometry_source"] for f in features}
            for feature in features:
                clock = states.get(feature["id"])
                feature["properties"]["state"] = clock.state if clock else None
                feature["properties"]["category"] = category(clock.state) if clock else "none"
            generated = [f for f in frontages if features_by_id[f.id] == "generated"]
            streets = generated_streets(generated) if generated else []
            return {"type": "FeatureCollection", "features": features, "streets": streets}

        @r.get("/clocks", tags=["records"])
        def clocks(user: Reader, active: bool = False) -> list[dict[str, Any]]:
            addresses = {f.id: f.street_address for f in api.cases.list_frontages()}
            return [_clock(c, addresses) for c in api.cases.list_clocks(active_only=active)]

        @r.get("/clocks/{clock_id}/history", tags=["records"])
        def clock_history(clock_id: int, user: Reader) -> list[dict[str, Any]]:
            return [
                {"from": t.from_state, "to": t.to_state, "at": _iso(t.at),
                 "cause": t.cause.to_json(), "detail": dict(t.detail)}
                for t in api.cases.clock_history(clock_id)
            ]  # fmt: skip

        @r.get("/frontages", tags=["records"])
        def frontages(user: Reader) -> list[dict[str, Any]]:
            states, owners = api.frontage_states(), api.owners_for(user)
            return [
                api.frontage_view(f, states.get(f.id), owners) for f in api.cases.list_frontages()
            ]

        @r.get("/notices", tags=["notices"])
        def notices(user: Reader) -> list[dict[str, Any]]:
            """The notice queue, oldest first."""
            return [api.notice_view(n, user) for n in api.cases.list_notices()]

        @r.get("/notices/{number}", tags=["notices"])
        def notice(number: str, user: Reader) -> dict[str, Any]:
            return api.notice_view(api._notice(number), user)

        @r.post("/notices/{number}/actions", tags=["notices"])
        def act(
            number: str, body: ActionBody, user: Annotated[User, Depends(current_user)]
        ) -> dict[str, Any]:
            """Record a person's action on a notice's case; the analytics runner applies it."""
            permission = ACTION_PERMISSION.get(body.kind)
            if permission is None:
                raise HTTPException(422, f"unknown action {body.kind!r}")
            if not user.may(permission):
                raise HTTPException(403, f"the {user.role} role may not record {body.kind}")
            n = api._notice(number)
            if n.violation_id is None:
                raise HTTPException(409, f"notice {number} has no violation case")
            violation = api.cases.get_violation(n.violation_id)
            at = body.at or api.now()
            if at.tzinfo is None:
                raise HTTPException(422, "at needs a UTC offset")
            target = n.frontage_id if body.kind == "record_treated" else violation.key
            detail: dict[str, Any] = {"notice": number}
            if body.note:
                detail["note"] = body.note
            if body.kind == "record_delivery":
                channel = body.channel or "hand"
                detail["channel"] = channel
                api.cases.record_delivery(channel, n.frontage_id, at, "delivered", notice_id=n.id)
                api.cases.set_notice_delivered(n.id, at)
            action = api.cases.record_action(body.kind, target, at, user.username, detail)
            return {"action_id": action.id, "kind": action.kind, "target": target, "at": _iso(at)}

        @r.post("/notices/print-batch", tags=["notices"])
        def print_batch(
            body: PrintBatchBody, user: Annotated[User, Depends(require("print"))]
        ) -> dict[str, Any]:
            """Log a print batch (one ``print`` delivery per notice) and give its page."""
            at = datetime.now(UTC)
            batch = secrets.token_hex(4)
            for number in body.numbers:
                n = api._notice(number)
                api.cases.record_delivery(
                    "print", n.frontage_id, at, "sent", notice_id=n.id, detail={"batch": batch}
                )
            api.cases.append_audit(
                user.username, "notice.print_batch", f"batch:{batch}", {"notices": body.numbers}
            )
            query = "&".join(f"n={number}" for number in body.numbers)
            return {"batch": batch, "count": len(body.numbers), "url": f"/print/notices?{query}"}

        @r.get("/abatements", tags=["money"])
        def abatements(user: Reader) -> list[dict[str, Any]]:
            """Work orders with their expense ledgers and bills."""
            out = []
            for a in api.records.list_abatements():
                bill = api.cases.bill_for_abatement(a.id)
                out.append(
                    {
                        "id": a.id, "frontage": a.frontage_id, "reason": a.reason,
                        "ordered_at": _iso(a.ordered_at), "completed_at": _iso(a.completed_at),
                        "status": a.status, "violation_id": a.violation_id,
                        "expenses": [
                            {"id": e.id, "amount": str(e.amount), "description": e.description,
                             "incurred_at": _iso(e.incurred_at)}
                            for e in api.cases.list_expenses(a.id)
                        ],
                        "bill": api.bill_view(bill, user) if bill else None,
                    }
                )  # fmt: skip
            return out

        @r.post("/abatements/{abatement_id}/expenses", tags=["money"])
        def add_expense(
            abatement_id: int,
            body: ExpenseBody,
            user: Annotated[User, Depends(require("money"))],
        ) -> dict[str, Any]:
            """Add a cost line to a work order's ledger (§ 370-10 G)."""
            amount = _money(body.amount)
            try:
                e = api.cases.add_expense(
                    abatement_id, amount, body.incurred_at or api.now(), body.description
                )
            except NotFoundError as exc:
                raise HTTPException(404, str(exc)) from None
            except BillingError as exc:
                raise HTTPException(409, str(exc)) from None
            api.cases.append_audit(
                user.username, "expense.added", f"abatement:{abatement_id}",
                {"expense": e.id, "amount": amount, "description": body.description},
            )  # fmt: skip
            return {"id": e.id, "amount": str(e.amount)}

        @r.post("/abatements/{abatement_id}/bill", tags=["money"])
        def bill(
            abatement_id: int, user: Annotated[User, Depends(require("money"))]
        ) -> dict[str, Any]:
            """Bill a work order's expenses to the frontage's owner."""
            try:
                b = api.cases.create_bill(
                    f"bill/abatement/{abatement_id}", abatement_id, datetime.now(UTC)
                )
            except NotFoundError as exc:
                raise HTTPException(404, str(exc)) from None
            except BillingError as exc:
                raise HTTPException(409, str(exc)) from None
            api.cases.append_audit(user.username, "bill.created", f"bill:{b.id}", {})
            return api.bill_view(b, user)

        @r.get("/bills", tags=["money"])
        def bills(user: Reader) -> list[dict[str, Any]]:
            return [api.bill_view(b, user) for b in api.records.list_bills()]

        @r.post("/bills/{bill_id}/payments", tags=["money"])
        def pay(
            bill_id: int, body: PaymentBody, user: Annotated[User, Depends(require("money"))]
        ) -> dict[str, Any]:
            """Record a payment (once per ``key``, so a double click pays once)."""
            amount = _money(body.amount)
            try:
                p = api.cases.record_payment(
                    f"payment/{body.key}", bill_id, amount, body.paid_at or api.now(),
                    method=body.method, reference=body.reference,
                )  # fmt: skip
            except NotFoundError as exc:
                raise HTTPException(404, str(exc)) from None
            except (BillingError, CaseStoreError) as exc:
                raise HTTPException(409, str(exc)) from None
            api.cases.append_audit(
                user.username, "payment.entered", f"bill:{bill_id}",
                {"payment": p.id, "amount": amount, "method": body.method},
            )  # fmt: skip
            return {"id": p.id, "bill": bill_id, "balance": str(api.cases.bill_balance(bill_id))}

        @r.get("/devices", tags=["devices"])
        def devices(user: Reader) -> list[dict[str, Any]]:
            """Availability, last seen, buffer backlog, seq gaps and dead letters per pole."""
            out = []
            ts = api.timeseries
            for d in api.cases.list_devices():
                row: dict[str, Any] = {
                    "id": d.id, "site": d.site, "availability": d.availability,
                    "last_seen": _iso(d.last_seen),
                }  # fmt: skip
                if ts is not None:
                    state = ts.device_state(d.id)
                    stored = ts.stored_up_to(d.id)
                    row.update(
                        {
                            "status": state.status if state else None,
                            "status_at_ms": state.status_ts_ms if state else None,
                            "last_seen_ms": state.last_seen_at_ms if state else None,
                            "max_seq": state.max_seq if state else 0,
                            "stored_up_to": stored,
                            # Seqs the device sent past the contiguous watermark: still
                            # in its disk buffer until the gap is filled or given up.
                            "backlog": (state.max_seq - stored) if state else 0,
                            "gaps": [
                                {"from": g.from_seq, "to": g.to_seq,
                                 "lost": g.lost_at_ms is not None}
                                for g in ts.gaps(d.id)  # open and lost alike
                            ],
                            "dead_letters": len(ts.dead_letters(device=d.id)),
                            "readings": ts.count(d.id),
                        }
                    )  # fmt: skip
                out.append(row)
            return out

        @r.get("/dead-letters", tags=["devices"])
        def dead_letters(
            user: Reader, limit: int = Query(50, ge=1, le=500)
        ) -> list[dict[str, Any]]:
            if api.timeseries is None:
                return []
            rows = api.timeseries.dead_letters()[-limit:]
            return [
                {"received_at_ms": d.received_at_ms, "topic": d.topic, "device": d.device,
                 "reason": d.reason, "detail": d.detail, "bytes": len(d.payload)}
                for d in reversed(rows)
            ]  # fmt: skip

        @r.get("/sites/{device}/series", tags=["site"])
        def series(
            device: str, user: Reader, hours: float = Query(72, gt=0, le=24 * 60)
        ) -> dict[str, Any]:
            """Weather and camera series for one pole over the last ``hours`` of event time."""
            if api.timeseries is None:
                raise HTTPException(404, "no time-series store configured")
            end = api.now()
            start = end - timedelta(hours=hours)
            start_ms, end_ms = int(start.timestamp() * 1000), int(end.timestamp() * 1000) + 1
            weather = [
                w
                for w in api.timeseries.readings(
                    device=device, stream="weather", start_ms=start_ms, end_ms=end_ms
                )
                if isinstance(w, WeatherReading)
            ]
            snow = [
                s
                for s in api.timeseries.readings(
                    device=device, stream="snow", start_ms=start_ms, end_ms=end_ms
                )
                if isinstance(s, SnowMeasurement)
            ]
            latest: dict[str, SnowMeasurement] = {}
            for s in snow:
                latest[s.frontage] = s
            return {
                "device": device,
                "start": start.isoformat(),
                "end": end.isoformat(),
                "required_width_mm": float(api.profile.snow_and_ice.clearing_min_width.length_mm),
                "weather": {
                    "ts": [w.ts for w in weather],
                    "snow_depth_mm": [w.snow_depth_mm for w in weather],
                    "air_temp_c": [w.air_temp_c for w in weather],
                    "surface_temp_c": [w.surface_temp_c for w in weather],
                    "ground_temp_c": [w.ground_temp_c for w in weather],
                },
                "cleared_width": {
                    f: {"ts": [s.ts for s in snow if s.frontage == f],
                        "mm": [s.cleared_width_mm for s in snow if s.frontage == f]}
                    for f in sorted(latest)
                },
                "latest": {
                    f: {"ts": s.ts, "cleared_width_mm": s.cleared_width_mm,
                        "snow_cover_fraction": s.snow_cover_fraction,
                        "ice_suspected": s.ice_suspected, "frame_sha256": s.frame_sha256,
                        "frame_url": (f"/api/frames/{s.frame_sha256}"
                                      if s.frame_sha256 and api.evidence is not None
                                      and s.frame_sha256 in api.evidence else None)}
                    for f, s in latest.items()
                },
            }  # fmt: skip

        @r.get("/frames/{sha256}", tags=["site"], response_class=Response)
        def frame(sha256: str, user: Reader) -> Response:
            """An evidence JPEG by its sha256 (immutable, so cacheable for good)."""
            if api.evidence is None or sha256 not in api.evidence:
                raise HTTPException(404, "no such frame")
            return Response(
                api.evidence.get(sha256), media_type="image/jpeg",
                headers={"Cache-Control": "private, max-age=31536000, immutable"},
            )  # fmt: skip

        @r.get("/cold-weather", tags=["cold weather"])
        def cold_weather(user: Reader) -> dict[str, Any]:
            """Frozen-ground and sump windows today, subgrade per pole, cold-weather clocks."""
            now = api.now()
            today = now.astimezone(api.profile.zone).date()
            sump = sump_discharge_window(today, api.profile)
            frozen_rule = api.profile.street_openings.frozen_ground_window
            subgrade = []
            if api.timeseries is not None:
                for d in api.cases.list_devices():
                    rows = [
                        w for w in api.timeseries.readings(
                            device=d.id, stream="weather", end_ms=int(now.timestamp() * 1000) + 1
                        )
                        if isinstance(w, WeatherReading) and w.ground_temp_c is not None
                    ]  # fmt: skip
                    if rows:
                        last = rows[-1]
                        temp = float(last.ground_temp_c or 0.0)
                        subgrade.append(
                            {"device": d.id, "ts": last.ts, "ground_temp_c": temp,
                             "probe_depth_mm": last.ground_probe_depth_mm,
                             "frozen": subgrade_frozen(temp, api.profile)}
                        )  # fmt: skip
            addresses = {f.id: f.street_address for f in api.cases.list_frontages()}
            kinds = {"keep_off", "frozen_subgrade", "opening_permit"}
            cw = api.profile.cold_weather
            return {
                "today": today.isoformat(),
                "frozen_ground_window": {
                    "active": in_frozen_ground_window(today, api.profile),
                    "start": frozen_rule.start, "end": frozen_rule.end,
                    "citation": frozen_rule.citation, "unconfirmed": frozen_rule.unconfirmed,
                },
                "sump_discharge_window": {
                    "active": sump.active, "citation": sump.citation,
                    "unconfirmed": sump.unconfirmed,
                },
                "pour_rules": {
                    "min_temp_f": str(cw.pour_min_temp.value),
                    "window": str(cw.pour_forecast_window.value),
                    "frozen_subgrade_at_or_below": str(cw.frozen_subgrade_at_or_below.value),
                    "frozen_subgrade_unconfirmed": cw.frozen_subgrade_at_or_below.unconfirmed,
                    "citation": cw.pour_min_temp.citation,
                },
                "subgrade": subgrade,
                "clocks": [
                    _clock(c, addresses) for c in api.cases.list_clocks() if c.kind in kinds
                ],
            }  # fmt: skip

        @r.get("/defects", tags=["defects"])
        def defects(user: Reader) -> dict[str, Any]:
            """Stored § 370-5 inspections per frontage and each owner's 80 % status."""
            cond = api.profile.sidewalk_condition
            share = cond.replacement_share
            limits = defect_limits(api.profile)
            frontages = {f.id: f for f in api.cases.list_frontages()}
            inspections = [api.inspection_view(i, frontages) for i in api.cases.list_inspections()]
            owners = api.owners_for(user)
            by_owner: dict[str, list[str]] = {}
            for f in frontages.values():
                by_owner.setdefault(f.owner_id, []).append(f.id)
            owner_rows = []
            for owner_id, fids in sorted(by_owner.items()):
                blocks = api.cases.owner_block_conditions(owner_id)
                if not blocks:
                    continue
                # The notices' aggregation: the share is of the owner's blocks, not the surveyed.
                status, survey = owner_survey(api.cases, owner_id, limits, blocks)
                row: dict[str, Any] = {
                    "frontages": sorted(fids),
                    "surveyed_blocks": survey.surveyed_blocks,
                    "owner_blocks": survey.owner_blocks,
                    "defective_blocks": survey.defective_blocks,
                    "defective_fraction": None if survey.owner_blocks is None
                    else round(status.defective_fraction, 4),
                    "survey_complete": survey.survey_complete,
                    "replace_entire_sidewalk": survey.replace_entire_sidewalk,
                    "status": survey.describe(),
                    "counts": [{"frontage": c.frontage, "blocks": c.blocks, "basis": c.basis,
                                "spacing_ft": c.spacing_ft} for c in survey.frontages],
                    "defective": [{"frontage": b.frontage_id, "block": b.block}
                                  for b in blocks if b.defective],
                }  # fmt: skip
                if owners is not None:
                    row["owner"] = {"name": owners[owner_id].name}
                owner_rows.append(row)
            return {
                "replacement_share": {"value": str(share.value), "unit": share.unit,
                                      "citation": share.citation},
                "limits": [
                    {"rule": n, "limit_mm": round(getattr(cond, n).length_mm, 2),
                     "citation": getattr(cond, n).citation}
                    for n in ("vertical_differential", "horizontal_gap", "surface_deterioration")
                ],
                "inspections": inspections,
                "owners": owner_rows,
            }  # fmt: skip

        @r.get("/audit", tags=["records"])
        def audit(user: Reader, limit: int = Query(100, ge=1, le=1000)) -> list[dict[str, Any]]:
            """The newest audit rows; details only for roles that may see owner details."""
            rows = api.records.recent_audit(limit)
            return [
                {"id": a.id, "at": _iso(a.recorded_at), "actor": a.actor, "action": a.action,
                 "subject": a.subject,
                 "detail": dict(a.detail) if user.may("owner_details") else None,
                 "hash": a.hash}
                for a in rows
            ]  # fmt: skip

        @r.get("/users", tags=["users"])
        def users(user: Annotated[User, Depends(require("users"))]) -> list[dict[str, Any]]:
            return [
                {"username": u.username, "role": u.role, "disabled": u.disabled,
                 "created_at": _iso(u.created_at)}
                for u in api.records.list_users()
            ]  # fmt: skip

        @r.post("/users", tags=["users"], status_code=201)
        def create_user(
            body: UserBody, user: Annotated[User, Depends(require("users"))]
        ) -> dict[str, str]:
            try:
                api.records.add_user(
                    body.username, hash_password(body.password), body.role, user.username
                )
            except CaseStoreError as exc:
                raise HTTPException(409, str(exc)) from None
            return {"username": body.username, "role": body.role}

        @r.get("/events", tags=["live"])
        async def events(user: Reader, request: Request) -> StreamingResponse:
            """Server-sent events: ``transition`` (a clock moved) and ``audit`` (a new row)."""
            return StreamingResponse(
                request.app.state.live.stream(),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
            )

        return r
