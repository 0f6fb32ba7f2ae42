"""The Rounds page at its own address, ``/rounds/``, so a phone can reload it with no signal.

A service worker (``/rounds/sw.js``, scope ``/rounds/``: it controls this page and no
other) keeps the page's shell and the static files it loads, and nothing else: every
``/api`` request goes to the network as if it were not there, so no record read under
one account is ever served from its cache to another. The round as last read and the
findings not yet sent are the page's own (``inspector.js``: the list in local storage
under the user's name, the outbox in IndexedDB); "Log out" empties the worker's cache,
the kept list and unregisters the worker.

The shell is the dashboard's own ``index.html`` (one header for both), its links made
absolute and its script ``rounds.js``. The worker's cache name carries a hash of the
shell and every file it keeps, so a changed file is fetched again by a new worker.
Service workers need HTTPS (or ``localhost``); elsewhere the page works as before, open.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Final

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from sidewalk.dashboard.auth import COOKIE, Sessions

HERE: Final = Path(__file__).parent
STATIC: Final = HERE / "static"
WORKER_TEMPLATE: Final = HERE / "templates" / "rounds-sw.js"
SHELL: Final = "/rounds/"
WORKER: Final = "/rounds/sw.js"
ENTRY: Final = "rounds.js"
_APP_SCRIPT: Final = re.compile(r'src="/static/app\.js"')
_PAGE_LINK: Final = re.compile(r'href="#(\w+)"(?= data-page=)')
_TITLE: Final = re.compile(r"<title>[^<]*</title>")
_STATIC_REF: Final = re.compile(r'(?:href|src)="/static/([\w./-]+)"')
_IMPORT: Final = re.compile(r'^import [^;]*? from "\./([\w.-]+\.js)";', re.MULTILINE)


def shell_html() -> str:
    """The Rounds page: the dashboard's ``index.html`` with its page links pointing back
    to the dashboard (``/#today``) and ``rounds.js`` as its script."""
    index = (STATIC / "index.html").read_text(encoding="utf-8")
    shell, found = _APP_SCRIPT.subn(f'src="/static/{ENTRY}"', index)
    if found != 1:
        raise RuntimeError("static/index.html no longer loads /static/app.js: update rounds_page")
    shell = _TITLE.sub("<title>Sidewalk Watch — Rounds</title>", shell, count=1)
    return _PAGE_LINK.sub(r'href="/#\1"', shell)


def _modules(entry: str) -> list[str]:
    """``entry`` and every module it imports, followed through ``from "./x.js"``."""
    seen: list[str] = []
    todo = [entry]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.append(name)
        todo += _IMPORT.findall((STATIC / name).read_text(encoding="utf-8"))
    return sorted(seen)


def kept_files(shell: str) -> list[str]:
    """The static files the page loads (stylesheets, icon, its modules), as URLs."""
    files = set(_STATIC_REF.findall(shell)) - {ENTRY} | set(_modules(ENTRY))
    return [f"/static/{name}" for name in sorted(files)]


def worker_js(shell: str) -> str:
    """The service worker, its list of files and its version (a hash of them all) filled in."""
    files = kept_files(shell)
    template = WORKER_TEMPLATE.read_text(encoding="utf-8")
    digest = hashlib.sha256(template.encode() + shell.encode())
    for url in files:
        digest.update((STATIC / url.removeprefix("/static/")).read_bytes())
    listed = ",\n  ".join(f'"{url}"' for url in files)
    return template.replace("__VERSION__", digest.hexdigest()[:16]).replace("__FILES__", listed)


def add_rounds_page(app: FastAPI, sessions: Callable[[], Sessions]) -> None:
    """``GET /rounds/`` (the page; log in first, as for ``/``) and ``GET /rounds/sw.js``."""
    shell = shell_html()
    worker = worker_js(shell)  # built once: a file changed on disk counts after a restart

    def logged_in(request: Request) -> bool:
        return sessions().user_for(request.cookies.get(COOKIE)) is not None

    @app.get(SHELL, include_in_schema=False)
    def rounds_shell(request: Request) -> Response:
        if not logged_in(request):
            return RedirectResponse("/login", status_code=303)
        # The shell holds no record (the page reads them): the worker may keep it.
        return HTMLResponse(shell, headers={"Cache-Control": "no-cache"})

    @app.get(WORKER, include_in_schema=False)
    def rounds_worker(request: Request) -> Response:
        if not logged_in(request):
            return RedirectResponse("/login", status_code=303)
        # Checked again at each visit: a new version installs as soon as it is served.
        return Response(worker, media_type="text/javascript", headers={"Cache-Control": "no-cache"})
