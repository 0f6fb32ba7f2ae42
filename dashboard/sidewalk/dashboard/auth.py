"""Accounts, sessions, CSRF and roles for the dashboard.

* Passwords: argon2id (argon2-cffi); only the hash is stored.
* Sessions: a random token in an HttpOnly, SameSite=Strict cookie, signed with
  the app's secret (itsdangerous) so a forged cookie is refused before any
  database read; the case database keeps only the token's sha256, so a stolen
  database cannot log anyone in and a logout really ends the session.
* CSRF: every state-changing request carries ``X-CSRF-Token`` equal to the
  session's token (the page reads it from ``GET /api/session``) and an
  ``Origin`` (or, failing that, ``Referer``) naming this host. A cross-site
  form cannot set the header; SameSite=Strict and the origin check are the
  second and third walls.
* Login throttling (``LoginThrottle``): growing delays per (account, client
  address), per address and per account (bounded), answered with 429 and
  ``Retry-After``; the right password from an address with no failures
  always gets in. The failures are rows in the case database, so all
  workers and restarts share them.
"""

from __future__ import annotations

import functools
import hashlib
import math
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Final, Literal, cast, get_args
from urllib.parse import urlsplit

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from fastapi import Depends, HTTPException, Request
from itsdangerous import BadSignature, URLSafeSerializer

from sidewalk.storage.cases import CaseStore, DashboardRole

Role = DashboardRole
ROLES: Final = get_args(DashboardRole)
COOKIE: Final = "sw_session"
CSRF_HEADER: Final = "X-CSRF-Token"
SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})

Permission = Literal[
    "read",
    "owner_details",
    "field_action",
    "notice_action",
    "money",
    "print",
    "users",
    "correct",
]

# What each role may do. Owner names and mailing addresses are personal data:
# only the roles that mail notices and bills see them.
PERMISSIONS: Final[dict[Permission, frozenset[Role]]] = {
    "read": frozenset(ROLES),
    "owner_details": frozenset({"clerk", "admin"}),
    "field_action": frozenset({"inspector", "admin"}),
    "notice_action": frozenset({"inspector", "clerk", "admin"}),
    "money": frozenset({"clerk", "admin"}),
    "print": frozenset({"clerk", "admin"}),
    "users": frozenset({"admin"}),
    # Correcting or undoing an entry on a case: the clerk keeps the official record.
    "correct": frozenset({"clerk", "admin"}),
}

_hasher = PasswordHasher()


def role_of(name: str) -> Role:
    """Check a role name; raises ValueError for anything else."""
    if name not in ROLES:
        raise ValueError(f"unknown role {name!r}; one of {', '.join(ROLES)}")
    return cast(Role, name)


def hash_password(password: str) -> str:
    """An argon2id hash of ``password`` (refuses passwords shorter than 8 characters)."""
    if len(password) < 8:
        raise ValueError("a password needs at least 8 characters")
    return _hasher.hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def add_user(cases: CaseStore, username: str, password: str, role: str, who: str = "cli") -> None:
    """Create a dashboard account (what ``sidewalk dashboard add-user`` calls)."""
    if not username.strip() or len(username) > 64:
        raise ValueError("a user name has 1 to 64 characters")
    cases.dashboard.add_user(username, hash_password(password), role_of(role), who)


@dataclass(frozen=True)
class User:
    """The logged-in person, as route handlers see them."""

    username: str
    role: Role
    csrf_token: str
    token_hash: str

    def may(self, permission: Permission) -> bool:
        return self.role in PERMISSIONS[permission]


class LoginThrottle:
    """Growing delays after failed logins, never a lockout of a clean address.

    Three counts of recent failures (rows of ``login_failures`` in the case
    database, so every worker and a restarted one share them), each with an
    allowance after which every further failure doubles the wait (from
    ``base``, measured from that key's latest failure):

    * ``pair``, this account from this client address: ``max_failures`` free,
      the wait capped at ``max_delay`` (15 min);
    * ``ip``, this address whatever the account: ``ip_factor`` times as many
      free (one office, many typos), capped at ``max_delay``;
    * ``user``, this account from any address: ``ip_factor`` times as many
      free, capped at ``max_account_delay`` (30 s), and only for addresses
      that have failed before. An account attacked from many addresses is
      slowed, with the delay bounded; the right password from an address
      with no failures always gets in, so nobody can lock a user out.

    Failures older than ``window`` (24 h) are forgotten, so an attacker held
    at one guess per ``max_delay`` stays there. A success clears only its own
    ``pair``: an attacker's failures keep counting. The client address must be
    the real one: behind a reverse proxy, list it in ``trusted_proxies``.
    """

    def __init__(
        self,
        cases: CaseStore,
        max_failures: int = 5,
        window: timedelta = timedelta(hours=24),
        ip_factor: int = 4,
        *,
        base: timedelta = timedelta(seconds=1),
        max_delay: timedelta = timedelta(minutes=15),
        max_account_delay: timedelta = timedelta(seconds=30),
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        if max_failures < 1 or ip_factor < 1:
            raise ValueError("max_failures and ip_factor must be at least 1")
        self.records = cases.dashboard
        self.free = {"pair": max_failures, "ip": max_failures * ip_factor,
                     "user": max_failures * ip_factor}  # fmt: skip
        self.caps = {"pair": max_delay, "ip": max_delay, "user": max_account_delay}
        self.base = base
        self.window = window
        self.now = now

    @staticmethod
    def _pair(username: str, client: str) -> str:
        # Hashed: the key column is 100 characters, a name and an IPv6 address may not fit.
        return hashlib.sha256(f"{username}\0{client}".encode()).hexdigest()[:40]

    def _keys(self, username: str, client: str) -> tuple[tuple[str, str], ...]:
        return (("pair", self._pair(username, client)), ("ip", client), ("user", username))

    def delay_after(self, kind: str, failures: int) -> timedelta:
        """The wait after ``failures`` recent failures of one key of ``kind``."""
        excess = failures - self.free[kind]
        if excess < 0:
            return timedelta(0)
        growing: timedelta = self.base * 2 ** min(excess, 40)
        return min(self.caps[kind], growing)

    def retry_after(self, username: str, client: str) -> int:
        """Whole seconds until this account may be tried from this address (0: now)."""
        now = self.now()
        since = now - self.window
        wait = 0.0
        clean_address = True
        for kind, key in self._keys(username, client):
            if kind == "user" and clean_address:
                continue  # the account's delay never holds back an address without failures
            times = self.records.login_failures_since(kind, key, since)
            if kind == "ip":
                clean_address = not times
            delay = self.delay_after(kind, len(times))
            if times and delay:
                wait = max(wait, (times[-1] + delay - now).total_seconds())
        return max(1, math.ceil(wait)) if wait > 0 else 0

    def failed(self, username: str, client: str) -> None:
        self.records.add_login_failure(
            self._keys(username, client), self.now(), self.window.total_seconds()
        )

    def succeeded(self, username: str, client: str) -> None:
        """The right password: this account's failures from this address are forgiven."""
        self.records.clear_login_failures("pair", self._pair(username, client))


class Sessions:
    """Issues, reads and ends sessions; one per app."""

    def __init__(
        self,
        cases: CaseStore,
        secret_key: str,
        *,
        lifetime: timedelta = timedelta(hours=12),
        secure_cookies: bool = False,
    ) -> None:
        if len(secret_key) < 16:
            raise ValueError("the dashboard's secret key needs at least 16 characters")
        _dummy_hash()  # made now, so even the first unknown name costs a real check
        self.records = cases.dashboard
        self.lifetime = lifetime
        self.secure_cookies = secure_cookies
        self._signer = URLSafeSerializer(secret_key, salt="sidewalk-dashboard-session")

    @staticmethod
    def _digest(token: str) -> str:
        return hashlib.sha256(token.encode()).hexdigest()

    def login(self, username: str, password: str) -> tuple[str, User] | None:
        """Check the password; on success store a session and return (cookie value, user)."""
        account = self.records.get_user(username)
        if account is None:
            # Spend the same time as a real check so timing does not reveal user names.
            verify_password(_dummy_hash(), password)
            return None
        if account.disabled or not verify_password(account.password_hash, password):
            return None
        token = secrets.token_urlsafe(32)
        csrf = secrets.token_urlsafe(32)
        digest = self._digest(token)
        self.records.create_session(digest, username, csrf, datetime.now(UTC) + self.lifetime)
        return self._signer.dumps(token), User(username, role_of(account.role), csrf, digest)

    def user_for(self, cookie: str | None) -> User | None:  # noqa: PLR0911 (one refusal per check)
        """The user a session cookie belongs to, if it is genuine, live and not revoked."""
        if not cookie:
            return None
        try:
            token = self._signer.loads(cookie)
        except BadSignature:
            return None
        if not isinstance(token, str):
            return None
        digest = self._digest(token)
        session = self.records.get_session(digest)
        if session is None or session.revoked_at is not None:
            return None
        if session.expires_at <= datetime.now(UTC):
            return None
        account = self.records.get_user(session.username)
        if account is None or account.disabled:
            return None
        return User(account.username, role_of(account.role), session.csrf_token, digest)

    def logout(self, user: User) -> None:
        self.records.revoke_session(user.token_hash)


@functools.cache
def _dummy_hash() -> str:
    # Made on first use, not at import: every command that imports this module
    # (add-user, the tests' processes) would otherwise pay a full argon2 hash.
    return _hasher.hash(secrets.token_urlsafe(16))


def current_user(request: Request) -> User:
    """Dependency: the logged-in user, with CSRF checked on state-changing requests."""
    sessions: Sessions = request.app.state.sessions
    user = sessions.user_for(request.cookies.get(COOKIE))
    if user is None:
        raise HTTPException(401, "log in first")
    if request.method not in SAFE_METHODS:
        sent = request.headers.get(CSRF_HEADER, "")
        if not secrets.compare_digest(sent, user.csrf_token):
            raise HTTPException(403, "missing or wrong CSRF token")
        if not same_origin(request):
            raise HTTPException(403, "cross-origin request refused (CSRF)")
    return user


def same_origin(request: Request) -> bool:
    """Whether a state-changing request says it comes from this site.

    Browsers send ``Origin`` on every non-GET/HEAD ``fetch``, same-origin
    included, and the page's ``Referrer-Policy: same-origin`` keeps
    ``Referer`` for our own pages; so a request carrying neither did not come
    from our page and is refused. Only host and port are compared (with the
    ``Host`` header): a TLS-terminating proxy changes the scheme the app sees.
    """
    host = request.headers.get("host", "").lower()
    claimed = request.headers.get("origin") or request.headers.get("referer")
    if not claimed or not host:
        return False
    parts = urlsplit(claimed)  # "null" (sandboxed or opaque origins) has no netloc
    return parts.scheme in {"http", "https"} and parts.netloc.lower() == host


class Require:
    """Dependency: the logged-in user, if their role grants ``permission``.

    A class rather than a closure so the permission a route needs can be read
    off the route (the security tests walk every route with it).
    """

    def __init__(self, permission: Permission) -> None:
        self.permission: Final = permission

    def __call__(self, user: Annotated[User, Depends(current_user)]) -> User:
        if not user.may(self.permission):
            raise HTTPException(403, f"the {user.role} role may not do this")
        return user


def require(permission: Permission) -> Callable[..., User]:
    """Dependency factory: the logged-in user, if their role grants ``permission``."""
    return Require(permission)
