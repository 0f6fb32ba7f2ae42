"""Accounts: log in and out, who is logged in, the users (admin) and the audit log.

An admin adds accounts, changes a role, disables or re-enables an account and
resets a password (one the admin types, or a one-time password shown once);
every change is audited by the case records (``user.created``,
``user.changed``) and ends the account's sessions.
"""

from __future__ import annotations

import secrets
from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request, Response
from pydantic import BaseModel, Field

from sidewalk.dashboard.auth import COOKIE, PERMISSIONS, hash_password
from sidewalk.dashboard.routes.deps import (
    Cases,
    MayManageUsers,
    Reader,
    Records,
    RequestBody,
    SessionManager,
    Throttle,
    iso,
)
from sidewalk.storage.cases import CaseStoreError

router = APIRouter()

Role = Literal["viewer", "inspector", "clerk", "admin"]


class LoginBody(RequestBody):
    username: str = Field(min_length=1, max_length=64)
    password: str = Field(min_length=1, max_length=200)


class UserBody(RequestBody):
    username: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.@-]+$")
    password: str = Field(min_length=8, max_length=200)
    role: Role


class UserChange(RequestBody):
    """A role change or disabling/enabling; absent keys stay as they are."""

    role: Role | None = None
    disabled: bool | None = None


class PasswordReset(RequestBody):
    """A new password the admin types; without one, a one-time password is made."""

    password: str | None = Field(default=None, min_length=8, max_length=200)


class PasswordResult(BaseModel):
    username: str
    one_time_password: str | None = Field(
        description="shown once when the dashboard made it; give it to the person"
    )


class LoginResult(BaseModel):
    username: str
    role: str
    csrf_token: str = Field(description="send it as X-CSRF-Token on every state change")


class SessionView(LoginResult):
    """Who is logged in, their role, what they may do, and the CSRF token."""

    permissions: list[str]


class LoggedOut(BaseModel):
    status: Literal["logged out"]


class UserView(BaseModel):
    username: str
    role: str
    disabled: bool
    created_at: str | None


class CreatedUser(BaseModel):
    username: str
    role: str


class AuditEntry(BaseModel):
    """One row of the append-only audit log (hash-chained)."""

    id: int
    at: str | None
    actor: str
    action: str
    subject: str
    detail: dict[str, Any] | None = Field(description="for roles that may see owner details")
    hash: str


@router.get("/session", tags=["session"])
def session(user: Reader) -> SessionView:
    """Who is logged in, their role, what they may do, and the CSRF token."""
    return SessionView(
        username=user.username,
        role=user.role,
        csrf_token=user.csrf_token,
        permissions=sorted(p for p, roles in PERMISSIONS.items() if user.role in roles),
    )


@router.post("/session", tags=["session"])
def login(
    *,
    body: LoginBody,
    request: Request,
    response: Response,
    cases: Cases,
    sessions: SessionManager,
    throttle: Throttle,
) -> LoginResult:
    """Log in; sets the session cookie. Repeated failures are throttled (429)."""
    if request.headers.get("content-type", "").split(";")[0] != "application/json":
        # A cross-site HTML form cannot send JSON: no login CSRF.
        raise HTTPException(415, "send JSON")
    client = request.client.host if request.client else "?"
    wait = throttle.retry_after(body.username, client)
    if wait:
        raise HTTPException(429, "too many failed logins", {"Retry-After": str(wait)})
    result = sessions.login(body.username, body.password)
    if result is None:
        throttle.failed(body.username, client)
        cases.audit.append(
            "anonymous", "session.login_failed", f"user:{body.username}", {"client": client}
        )
        raise HTTPException(401, "wrong user name or password")
    throttle.succeeded(body.username, client)
    cookie, user = result
    # Secure whenever the browser speaks HTTPS to us: TLS here, or a trusted
    # proxy's X-Forwarded-Proto (create_app's trusted_proxies).
    secure = sessions.secure_cookies or request.url.scheme == "https"
    response.set_cookie(
        COOKIE, cookie, httponly=True, samesite="strict", secure=secure,
        max_age=int(sessions.lifetime.total_seconds()), path="/",
    )  # fmt: skip
    return LoginResult(username=user.username, role=user.role, csrf_token=user.csrf_token)


@router.delete("/session", tags=["session"])
def logout(user: Reader, response: Response, sessions: SessionManager) -> LoggedOut:
    """End the session."""
    sessions.logout(user)
    response.delete_cookie(COOKIE, path="/")
    return LoggedOut(status="logged out")


@router.get("/users", tags=["users"])
def users(user: MayManageUsers, records: Records) -> list[UserView]:
    return [
        UserView(
            username=u.username, role=u.role, disabled=u.disabled, created_at=iso(u.created_at)
        )
        for u in records.list_users()
    ]


@router.post("/users", tags=["users"], status_code=201)
def create_user(body: UserBody, user: MayManageUsers, records: Records) -> CreatedUser:
    try:
        records.add_user(body.username, hash_password(body.password), body.role, user.username)
    except CaseStoreError as exc:
        raise HTTPException(409, str(exc)) from None
    return CreatedUser(username=body.username, role=body.role)


def _known(records: Records, username: str) -> None:
    if records.get_user(username) is None:
        raise HTTPException(404, f"there is no account named {username}")


@router.patch("/users/{username}", tags=["users"])
def change_user(
    username: str, body: UserChange, user: MayManageUsers, records: Records
) -> UserView:
    """Change an account's role or disable/enable it (audited; its sessions end)."""
    _known(records, username)
    if username == user.username and (body.disabled or (body.role and body.role != "admin")):
        # Nobody locks the Village out of its own accounts page by one click.
        raise HTTPException(409, "you cannot disable your own account or give up admin here")
    u = records.update_user(username, user.username, role=body.role, disabled=body.disabled)
    return UserView(
        username=u.username, role=u.role, disabled=u.disabled, created_at=iso(u.created_at)
    )


@router.post("/users/{username}/password", tags=["users"])
def reset_password(
    username: str, body: PasswordReset, user: MayManageUsers, records: Records
) -> PasswordResult:
    """Set a new password (audited as a change; the account's sessions end)."""
    _known(records, username)
    made = None if body.password else secrets.token_urlsafe(9)  # 12 characters, 72 bits
    password = body.password or made
    assert password is not None
    records.update_user(username, user.username, password_hash=hash_password(password))
    return PasswordResult(username=username, one_time_password=made)


@router.get("/audit", tags=["records"])
def audit(user: Reader, cases: Cases, limit: int = Query(100, ge=1, le=1000)) -> list[AuditEntry]:
    """The newest audit rows; details only for roles that may see owner details."""
    return [
        AuditEntry(
            id=a.id, at=iso(a.recorded_at), actor=a.actor, action=a.action, subject=a.subject,
            detail=dict(a.detail) if user.may("owner_details") else None, hash=a.hash,
        )
        for a in cases.audit.recent(limit)
    ]  # fmt: skip
