"""The public-works dashboard: one FastAPI process serving the JSON API and the UI.

``create_app`` builds the app over the case records (and, when given, the
time-series store); ``serve`` runs it with uvicorn. The UI is plain ES
modules and CSS in ``static/`` (no CDN, no build step); printable pages
(the notice batch) are rendered here with Jinja2.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated, Final

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from sidewalk.alerts.pdf import batch_pdf as print_letters
from sidewalk.core import heap
from sidewalk.core.clock import SystemClock
from sidewalk.core.profile import Profile
from sidewalk.dashboard.auth import COOKIE, LoginThrottle, Sessions, User, require
from sidewalk.dashboard.body_limit import BodyLimit, HostCheck
from sidewalk.dashboard.geometry import load_geojson
from sidewalk.dashboard.live import LiveFeed
from sidewalk.dashboard.metrics import add_observability_routes
from sidewalk.dashboard.rounds_page import add_rounds_page
from sidewalk.dashboard.routes import DashboardContext, api_router, refuse_nul_bytes
from sidewalk.dashboard.routes.rounds import MAX_PHOTO_BYTES, TOO_BIG_PHOTO
from sidewalk.storage.cases import CaseStore, NotFoundError
from sidewalk.storage.evidence import EvidenceStore
from sidewalk.storage.space import FreeSpaceFloor
from sidewalk.storage.timeseries import SqliteTimeSeriesStore

HERE: Final = Path(__file__).parent
STATIC: Final = HERE / "static"

# Only our own files; inline script and style are refused too (XSS hardening).
HSTS: Final = "max-age=31536000"
CSP: Final = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)


def create_app(
    cases: CaseStore,
    timeseries: SqliteTimeSeriesStore | None,
    profile: Profile,
    *,
    secret_key: str,
    geojson_path: Path | None = None,
    now: Callable[[], datetime] | None = None,
    secure_cookies: bool = False,
    session_lifetime: timedelta = timedelta(hours=12),
    poll_s: float = 0.2,
    login_max_failures: int = 5,
    evidence: EvidenceStore | None = None,
    space: FreeSpaceFloor | None = None,
    trusted_proxies: Sequence[str] = (),
    host_names: Sequence[str] | None = None,
) -> FastAPI:
    """The dashboard app.

    ``secret_key`` signs session cookies (at least 16 characters; keep it in
    the environment). ``geojson_path``: a FeatureCollection of frontage
    geometries (``properties.frontage``); frontages without one are drawn on
    a generated street plan. ``now`` is the dashboard's clock for countdowns
    (default: the system clock, ``core.clock.SystemClock``; the demo passes the
    replay's event time).
    ``secure_cookies`` marks the cookie HTTPS-only (set it behind TLS).
    ``poll_s`` is how often the live feed looks for new clock events.
    ``evidence`` is ingest's image store: the Site page shows the latest frame.
    ``space``: the stores' disk against ingest's floor, for the overview.
    ``trusted_proxies``: addresses/CIDRs of reverse proxies whose
    ``X-Forwarded-For``/``-Proto`` are believed (the client address the login
    throttle counts, and HTTPS for the cookie and HSTS); nobody else's are.
    ``host_names``: the names the dashboard is reached by; a request whose ``Host``
    is none of them, nor an IP address or ``localhost``, is refused (DNS rebinding).
    ``None``: no check (an app built for a test client's made-up host).
    """
    # Live, the system clock every live service reads (the analytics runner's too): a
    # notice issued here is dated when the person issued it.
    clock = now or SystemClock().now
    geometry_file = load_geojson(geojson_path) if geojson_path else {}
    live = LiveFeed(cases, poll_s=poll_s)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await live.start()
        try:
            yield
        finally:
            await live.stop()

    app = FastAPI(
        title="Sidewalk Watch dashboard",
        description="Public-works dashboard and JSON API for the snow-and-ice ordinance.",
        version="1",
        lifespan=lifespan,
        # Swagger UI and ReDoc load their JavaScript from a CDN: not on a village network.
        docs_url=None,
        redoc_url=None,
        dependencies=[Depends(refuse_nul_bytes)],
    )
    app.state.sessions = Sessions(
        cases, secret_key, lifetime=session_lifetime, secure_cookies=secure_cookies
    )
    app.state.throttle = LoginThrottle(cases, max_failures=login_max_failures)
    app.state.live = live
    app.state.dashboard = DashboardContext(
        cases, timeseries, profile, now=clock, geometry_file=geometry_file, evidence=evidence,
        space=space,
    )  # fmt: skip
    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's own answer echoes the input, a password sent as text/plain with it:
        # only where (the field) and what is wrong.
        return JSONResponse(
            {"detail": [{"loc": list(e.get("loc", ())), "msg": e.get("msg", "")}
                        for e in exc.errors()]},
            status_code=422,
        )  # fmt: skip

    app.include_router(api_router())  # every /api route: routes/ (one module per area)
    # /metrics (loopback or SIDEWALK_METRICS_TOKEN), /healthz, /readyz: docs/observability.md
    add_observability_routes(app, cases)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Callable[..., object]) -> Response:
        # Ignored: ``call_next`` is typed loosely here; Starlette's returns a Response.
        response: Response = await call_next(request)  # type: ignore[misc]
        response.headers.setdefault("Content-Security-Policy", CSP)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        if request.url.scheme == "https":
            # Served over TLS (directly, or by a trusted proxy that says so):
            # browsers must not come back over plain HTTP for a year.
            response.headers.setdefault("Strict-Transport-Security", HSTS)
        return response

    if trusted_proxies:
        # Outermost (added last): only a listed proxy's X-Forwarded-For and
        # X-Forwarded-Proto count, so the throttle sees the real client and the
        # cookie learns that the browser speaks HTTPS. Anyone else's are ignored.
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=list(trusted_proxies))
    if host_names is not None:
        app.add_middleware(HostCheck, names=list(host_names))
    # Outermost of all: a body over its route's limit is refused before it is read
    # (the login route before any session too); the photo upload takes 20 MB.
    app.add_middleware(
        BodyLimit, routes=[(r"/api/rounds/[^/]+/photos", MAX_PHOTO_BYTES, TOO_BIG_PHOTO)]
    )

    @app.get("/", include_in_schema=False)
    def index(request: Request) -> Response:
        if app.state.sessions.user_for(request.cookies.get(COOKIE)) is None:
            return RedirectResponse("/login", status_code=303)
        # Never from cache: the page is only for a live session.
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    # The inspector's Rounds page at /rounds/, kept by a service worker for no signal.
    add_rounds_page(app, lambda: app.state.sessions)

    @app.get("/login", include_in_schema=False)
    def login_page() -> FileResponse:
        return FileResponse(STATIC / "login.html")

    @app.get("/print/notices", include_in_schema=False, response_class=Response)
    def print_notices(
        user: Annotated[User, Depends(require("print"))],
        n: Annotated[list[str], Query(max_length=40)],
    ) -> Response:
        """The batch as one PDF: the letters ``sidewalk notices print-batch`` prints."""
        try:
            notices = [cases.notices.get_by_number(number) for number in n]
        except NotFoundError as exc:
            raise HTTPException(404, str(exc)) from None
        return Response(print_letters(notices, profile, clock()), media_type="application/pdf")

    return app


def settle_heap() -> None:
    """Keep what is built before serving (modules, the app, its schemas: about 200,000
    objects) out of the garbage collector's full passes. A page of 2,000 frontages makes
    enough objects to set off several, and each walked all of them: on the map, 0.4 s of
    CPU of which 0.28 s was the collector (0.14 s after this)."""
    heap.settle_heap()


def serve(
    app: FastAPI,
    host: str = "127.0.0.1",
    port: int = 8080,
    *,
    ssl_certfile: str | None = None,
    ssl_keyfile: str | None = None,
) -> None:
    """Run the dashboard with uvicorn until interrupted (HTTPS with a certificate and key)."""
    # Deferred: only serving needs the server; the tests and the API build the app alone.
    import uvicorn

    settle_heap()
    # proxy_headers off: the app's own ProxyHeadersMiddleware believes only the
    # configured proxies (uvicorn's would trust 127.0.0.1 by default).
    # Open event streams end only when the browser leaves: do not wait for them long.
    uvicorn.run(
        app, host=host, port=port, log_level="warning", proxy_headers=False,
        timeout_graceful_shutdown=2, ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile,
    )  # fmt: skip
