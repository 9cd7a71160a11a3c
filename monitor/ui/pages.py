"""The on-call pages, an aiohttp application the admin server mounts at /ui.

    GET  /ui/turns?route=&metric=&below=&from=&to=&limit=&failed_tools=&conversation=
                                                                             the worst turns
    GET  /ui/turns/<trace_id>                                                one turn, explained
    GET  /ui/sessions?outcome=&service=&limit=                               closed sessions
    POST /ui/turns/<trace_id>/corrections                                    a person's word
    GET  /ui/login, POST /ui/login, POST /ui/logout                          the session cookie
    GET  /ui/static/style.css

Server-rendered HTML (Jinja2, autoescaped), no script at all. monitor/ui/security.py says who
may read and post.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import logging
import math
import re
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any, get_args

import jinja2
from aiohttp import web
from yarl import URL

from monitor.errors import Unauthenticated
from monitor.ingest import check_bearer
from monitor.judge_metrics import LABELS, METRICS
from monitor.sessions import Outcome
from monitor.store import Store, ThreadedStore
from monitor.ui.security import (
    HEADERS,
    Session,
    Sessions,
    cookie_name,
    cross_site,
    foreign_host,
)
from monitor.ui.view import shown_metrics, turn_page, turn_row
from monitor.verdicts_view import SHORT_NAMES, iso

log = logging.getLogger(__name__)

TRACE_ID = re.compile(r"[0-9a-f]{32}")
LIMIT = 50  # turns a list shows by default
MAX_LIMIT = 500
ALL = {"", "*", ".*", "$__all", "All"}  # a Grafana variable set to all: no filter
ALL_LABELS = tuple(dict.fromkeys(label for labels in LABELS.values() for label in labels))
FILTERS = ("route", "service", "metric", "label", "below", "from", "to", "limit", "failed_tools",
           "conversation")
SESSION_FILTERS = ("outcome", "service", "limit")
OUTCOMES = get_args(Outcome)
StoreLike = Store | ThreadedStore
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
# The request's session, set by the guard for the handler (the task's context: per request)
SESSION: contextvars.ContextVar[Session] = contextvars.ContextVar("ui_session")


class NoStore(Exception):
    pass


class Pages:
    """`store()` is the sidecar's store, or None (`no_store` says why, on the pages);
    `token` the admin bearer token (None: the pages are open); `loopback`: the admin endpoint
    listens on loopback only, so a request naming another host than loopback's, or than
    `public_url`'s (admin.public_url: a proxy in front), is refused."""

    def __init__(self, store: Callable[[], StoreLike | None], no_store: str,
                 token: str | None, loopback: bool, public_url: str | None = None) -> None:
        self.store = store
        self.no_store = no_store
        self.sessions = Sessions(token)
        self.token = token
        self.loopback = loopback
        public = URL(public_url) if public_url else None
        self.public_host = public.host if public else None
        self.public_authority = public.raw_authority if public else None
        self.public_https = public is not None and public.scheme == "https"
        self.env = jinja2.Environment(
            loader=jinja2.PackageLoader("monitor.ui", "templates"), autoescape=True,
            undefined=jinja2.StrictUndefined)
        self.css = resources.files("monitor.ui").joinpath("static/style.css").read_bytes()
        self.env.globals["css"] = "/ui/static/style.css?v=" + hashlib.sha256(
            self.css).hexdigest()[:12]
        self.env.globals["login"] = token is not None
        self.env.filters["iso"] = iso

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard])
        app.router.add_get("/", self._home)
        app.router.add_get("/turns", self._turns)
        app.router.add_get("/turns/{trace_id}", self._turn)
        app.router.add_post("/turns/{trace_id}/corrections", self._correct)
        app.router.add_get("/turns/{trace_id}/corrections", self._post_only)
        app.router.add_get("/sessions", self._sessions)
        app.router.add_get("/login", self._login_form)
        app.router.add_post("/login", self._login)
        app.router.add_post("/logout", self._logout)
        app.router.add_get("/static/style.css", self._style)
        app.router.add_get("/{tail:.*}", self._not_found)
        return app

    # -- the guard: hosts, authentication, sessions, headers -----------------------------------

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        response = await self._guarded(request, handler)
        response.headers.update(HEADERS)
        if request.path != "/ui/static/style.css":
            response.headers["Cache-Control"] = "no-store"  # trace content stays off disks
        return response

    async def _guarded(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        host = foreign_host(request)
        if self.loopback and host is not None and host != self.public_host:
            return self._page("message.html", 403, title="Host refused", message=(
                f"This admin endpoint listens on loopback and is not served under the name "
                f"“{host}”. Open it as http://127.0.0.1:<port>/ui/turns (a name that is not "
                "loopback's may be a DNS-rebinding page's)."))
        if request.path in ("/ui/static/style.css", "/ui/login"):
            return await handler(request)
        session = self.sessions.read(request.cookies.get(cookie_name(request)))
        if self.token is not None and session is None:
            header = request.headers.get("Authorization")
            try:
                if header is None:
                    raise Unauthenticated("log in with the admin bearer token")
                check_bearer(header, self.token)
            except Unauthenticated as exc:
                return self._login_page(request, 401, str(exc) if header else None)
        if request.method == "POST":
            if session is None:  # the header alone does not post: a form has a session
                return self._page("message.html", 403, title="Refused", message=(
                    "A correction is posted from the turn page's form, with its session cookie; "
                    "reload the page and send it again."))
            refused = cross_site(request, self.public_authority)
            if refused is not None:
                return self._page("message.html", 403, title="Refused",
                                  message=f"Refused {refused}.")
        session = session or self.sessions.new()
        token = SESSION.set(session)
        try:
            response = await handler(request)
        finally:
            SESSION.reset(token)
        if session.fresh:
            self.sessions.set_cookie(request, response, session, self._secure(request))
        return response

    def _secure(self, request: web.Request) -> bool:
        """Reached under admin.public_url's name, an https one: through its TLS proxy."""
        return self.public_https and URL(f"http://{request.host}").host == self.public_host

    def _page(self, template: str, status: int = 200, **context: Any) -> web.Response:
        return web.Response(text=self.env.get_template(template).render(**context),
                            status=status, content_type="text/html", charset="utf-8")

    def _login_page(self, request: web.Request, status: int, error: str | None = None,
                    target: str | None = None) -> web.Response:
        target = target or request.path_qs
        response = self._page("login.html", status, title="Log in", error=error,
                              next=target if _local(target) else "/ui/turns")
        if status == 401:
            response.headers["WWW-Authenticate"] = 'Bearer realm="assistant-monitor"'
        return response

    def _csrf(self) -> str:
        return self.sessions.csrf(SESSION.get())

    # -- the store, on its own thread ---------------------------------------------------------

    async def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """A store call: a ThreadedStore's on its own thread, a plain Store's (tests, the bench)
        in line."""
        store = self.store()
        if store is None:
            raise NoStore
        result = getattr(store, name)(*args, **kwargs)
        return await result if isinstance(store, ThreadedStore) else result

    def _no_store(self) -> web.Response:
        return self._page("message.html", 503, title="No verdict store",
                          message=f"This sidecar keeps no verdict store: {self.no_store}")

    # -- pages ------------------------------------------------------------------------------

    async def _home(self, _: web.Request) -> web.StreamResponse:
        return _redirect("/ui/turns")

    async def _style(self, _: web.Request) -> web.Response:
        return web.Response(body=self.css, content_type="text/css", charset="utf-8",
                            headers={"Cache-Control": "max-age=86400"})

    async def _post_only(self, _: web.Request) -> web.Response:
        response = self._page("message.html", 405, title="POST only", message=(
            "Corrections are sent with the form on the turn's page."))
        response.headers["Allow"] = "POST"
        return response

    async def _not_found(self, request: web.Request) -> web.Response:
        return self._page("message.html", 404, title="Not found",
                          message=f"No page at {request.path}.")

    async def _turns(self, request: web.Request) -> web.Response:
        form = {name: request.query.get(name, "") for name in FILTERS}
        errors, filters = _filters(form)
        rows: list[dict[str, Any]] = []
        if not errors:
            try:
                rows = await self._rows(filters)
            except NoStore:
                return self._no_store()
        metrics = shown_metrics(rows, filters.get("metric"))
        return self._page(
            "turns.html", 400 if errors else 200, title="Worst turns", form=form, csrf=self._csrf(),
            metrics=metrics, short=SHORT_NAMES, all_metrics=METRICS, all_labels=ALL_LABELS,
            rows=[turn_row(r, metrics) for r in rows],
            errors=errors, filters=filters,
            since=iso(filters["since"]) if filters.get("since") is not None else None,
            until=iso(filters["until"]) if filters.get("until") is not None else None)

    async def _rows(self, filters: dict[str, Any]) -> list[dict[str, Any]]:
        """The newest `limit` turns matching the filters."""
        rows: list[dict[str, Any]] = await self._call(
            "list_turns", limit=filters["limit"], route=filters["route"],
            service=filters["service"], metric=filters["metric"], label=filters["label"],
            below=filters["below"], failed_tools=filters["failed_tools"],
            since=filters["since"], until=filters["until"], conversation=filters["conversation"])
        return rows

    async def _sessions(self, request: web.Request) -> web.Response:
        form = {name: request.query.get(name, "").strip() for name in SESSION_FILTERS}
        errors: list[str] = []
        if form["outcome"] and form["outcome"] not in OUTCOMES:
            errors.append(f"outcome {form['outcome']!r} is not one of {', '.join(OUTCOMES)}")
        limit = _limit(form["limit"], errors)
        rows: list[dict[str, Any]] = []
        if not errors:
            try:
                rows = await self._call("list_sessions", limit=limit,
                                        outcome=form["outcome"] or None,
                                        service=None if form["service"] in ALL else form["service"])
            except NoStore:
                return self._no_store()
        return self._page("sessions.html", 400 if errors else 200, title="Sessions", form=form,
                          outcomes=OUTCOMES, errors=errors,
                          rows=[{**row, "closed": iso(row["closed_at"]) + f" ({row['closed']})"}
                                for row in rows])

    async def _turn(self, request: web.Request, status: int = 200,
                    error: str | None = None) -> web.Response:
        trace_id = request.match_info["trace_id"].lower()
        if not TRACE_ID.fullmatch(trace_id):
            return self._page("message.html", 404, title="Not a trace id", message=(
                "A turn's page is /ui/turns/<trace id>, 32 hex digits."))
        try:
            shown = await self._call("show", trace_id)
        except NoStore:
            return self._no_store()
        if shown is None:
            return self._page("message.html", 404, title="No such turn", message=(
                f"No stored turn with trace id {trace_id}: not sampled, not stored yet, or "
                "purged by retention (store.retention_days)."))
        csrf = self._csrf()

        def render() -> str:  # on a worker thread: the loop serves the receivers meanwhile
            return self.env.get_template("turn.html").render(
                title=f"Turn {trace_id}", page=turn_page(shown), csrf=csrf, error=error)

        return web.Response(text=await asyncio.to_thread(render), status=status,
                            content_type="text/html", charset="utf-8")

    async def _correct(self, request: web.Request) -> web.Response:
        trace_id = request.match_info["trace_id"].lower()
        form = await request.post()
        if not self.sessions.csrf_ok(SESSION.get(), _text(form.get("csrf"))):
            return self._page("message.html", 403, title="Refused", message=(
                "Refused a correction without this session's CSRF token: reload the turn's "
                "page and send it again."))
        judge, metric = _text(form.get("judge")), _text(form.get("metric"))
        verdict = _text(form.get("verdict"))
        author = (_text(form.get("author")) or "").strip()
        label = _text(form.get("label")) or None
        score_text = (_text(form.get("score")) or "").strip()
        error = None
        score = None
        if verdict not in ("right", "wrong"):
            error = "say whether the verdict is right or wrong"
        elif not author or len(author) > 200:
            error = "give your name as the author (at most 200 characters)"
        elif not judge or not metric:
            error = "the form names no verdict"
        elif verdict == "wrong" and metric not in LABELS:
            try:
                score = float(score_text)
            except ValueError:
                error = f"a wrong {metric} verdict needs the right score, 0..1"
            else:
                if not math.isfinite(score):
                    error = f"a wrong {metric} verdict needs the right score, 0..1"
        if error is None:
            assert judge is not None and metric is not None
            try:
                await self._call("add_correction", trace_id, judge, metric, verdict == "right",
                                 author, label=label if verdict == "wrong" else None,
                                 score=score if verdict == "wrong" else None)
            except NoStore:
                return self._no_store()
            except KeyError:
                return self._page("message.html", 404, title="No such verdict", message=(
                    f"Turn {trace_id} has no {metric} verdict by judge {judge}."))
            except ValueError as exc:
                error = str(exc)
        if error is not None:
            return await self._turn(request, 400, f"Correction not saved: {error}.")
        log.info("correction of turn %s (%s, %s) saved", trace_id, judge, metric)
        return _redirect(f"/ui/turns/{trace_id}#corrections")

    # -- logging in and out ------------------------------------------------------------------

    async def _login_form(self, request: web.Request) -> web.StreamResponse:
        target = request.query.get("next", "/ui/turns")
        if self.token is None:
            return _redirect(target if _local(target) else "/ui/turns")
        return self._login_page(request, 200, target=target)

    async def _login(self, request: web.Request) -> web.StreamResponse:
        if self.token is None:
            return _redirect("/ui/turns")
        refused = cross_site(request, self.public_authority)
        if refused is not None:
            return self._page("message.html", 403, title="Refused", message=f"Refused {refused}.")
        form = await request.post()
        target = _text(form.get("next")) or "/ui/turns"
        if not self.sessions.token_ok(_text(form.get("token"))):
            return self._login_page(request, 401, "wrong token", target=target)
        response = _redirect(target if _local(target) else "/ui/turns")
        self.sessions.set_cookie(request, response, self.sessions.new(), self._secure(request))
        return response

    async def _logout(self, request: web.Request) -> web.StreamResponse:
        form = await request.post()
        if not self.sessions.csrf_ok(SESSION.get(), _text(form.get("csrf"))):
            return self._page("message.html", 403, title="Refused",
                              message="Refused a logout without this session's CSRF token.")
        response = _redirect("/ui/login" if self.token else "/ui/turns")
        response.del_cookie(cookie_name(request), path="/ui")
        return response


def _redirect(location: str) -> web.Response:
    """303 See Other: after a POST, the browser GETs `location`."""
    return web.Response(status=303, headers={"Location": location})


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _local(target: str) -> bool:
    """A redirect target on these pages (not another site: `//evil.example`, `/\\evil`)."""
    return target.startswith("/ui/") and not target.startswith(("//", "/\\")) and \
        "\\" not in target and not any(ord(ch) < 32 for ch in target)


def _filters(form: dict[str, str]) -> tuple[list[str], dict[str, Any]]:
    """The list's filters from its query, and what is wrong with them."""
    errors = []
    route: str | None = form["route"].strip()
    service: str | None = form["service"].strip()
    route = None if route in ALL else route
    service = None if service in ALL else service
    if route and service and "/" not in route:
        route, service = f"{service}/{route}", None  # the store filters both
    elif route and service and route.rpartition("/")[0] == service:
        service = None
    metric = form["metric"].strip() or None
    if metric is not None and metric not in METRICS:
        errors.append(f"metric {metric!r} is not one of {', '.join(METRICS)}")
    label = form["label"].strip() or None
    if label is not None:
        if metric is None:
            errors.append("label applies to a metric's verdicts: choose the metric")
        elif metric in METRICS and label not in LABELS.get(metric, ()):
            errors.append(f"{metric} has no label {label!r}"
                          + (f" (its labels: {', '.join(LABELS[metric])})" if metric in LABELS
                             else " (it is scored: use below)"))
    below = None
    if form["below"].strip():
        try:
            below = float(form["below"])
            if not math.isfinite(below):
                raise ValueError
        except ValueError:
            errors.append(f"below must be a score, such as 0.5; got {form['below']!r}")
        if metric is None:
            errors.append("below applies to a metric's score: choose the metric")
    times: dict[str, float | None] = {}
    for name in ("from", "to"):
        value = form[name].strip()
        times[name] = None
        if value:
            try:
                times[name] = float(value) / 1000.0  # Unix epoch milliseconds, as Grafana's
                if not math.isfinite(times[name] or 0.0):
                    raise ValueError
            except ValueError:
                errors.append(f"{name} must be Unix epoch milliseconds (Grafana's ${{__{name}}}"
                              f"); got {value!r}")
    return errors, {"limit": _limit(form["limit"], errors), "route": route, "service": service,
                    "metric": metric, "label": label, "below": below, "since": times["from"],
                    "until": times["to"], "conversation": form["conversation"].strip() or None,
                    "failed_tools": form["failed_tools"] in ("1", "on", "true")}


def _limit(value: str, errors: list[str]) -> int:
    """A list's `limit` (LIMIT when empty); what is wrong with it goes into `errors`."""
    if not value.strip():
        return LIMIT
    try:
        limit = int(value)
        if 1 <= limit <= MAX_LIMIT:
            return limit
    except ValueError:
        pass
    errors.append(f"limit must be a whole number from 1 to {MAX_LIMIT}")
    return LIMIT
