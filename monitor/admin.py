"""The operator's endpoint (default 127.0.0.1:9464): /metrics, /healthz, /readyz, /api/turns,
and the on-call pages under /ui (monitor/ui/).

/api/turns and the pages show turn content, so the endpoint is bound to loopback by default and
requires the receivers' bearer token when one is configured.
"""

from __future__ import annotations

import logging
import ssl
from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from aiohttp import web
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from monitor.errors import Unauthenticated
from monitor.ingest import check_bearer
from monitor.model import TurnRecord

if TYPE_CHECKING:
    from monitor.config import TLSSettings
    from monitor.store import Store, ThreadedStore

log = logging.getLogger(__name__)


class RecentTurns:
    """The last N assembled turns, newest last, as the assembler records each batch's last N
    (ids and JSON: no Python turn is built for them while ingest waits), within `max_bytes` of
    JSON: 200 turns whose spans carry whole documents would otherwise hold gigabytes."""

    def __init__(self, size: int, max_bytes: int) -> None:
        self.size = size
        self.max_bytes = max_bytes
        self.turns: deque[TurnRecord] = deque()
        self._bytes = 0

    def extend(self, records: Iterable[TurnRecord]) -> None:
        for record in records:
            self.turns.append(record)
            self._bytes += record.size
            while len(self.turns) > self.size or self._bytes > self.max_bytes:
                self._bytes -= self.turns.popleft().size


class AdminServer:
    """`store` gives the verdict store the pages read (None: they say so, with `no_store`)."""

    def __init__(self, endpoint: str, registry: CollectorRegistry, recent: RecentTurns,
                 ready: Callable[[], bool], bearer_token: str | None = None,
                 store: Callable[[], Store | ThreadedStore | None] = lambda: None,
                 no_store: str = "none was handed to this admin endpoint.",
                 public_url: str | None = None, tls: TLSSettings | None = None) -> None:
        self.endpoint = endpoint
        self.registry = registry
        self.recent = recent
        self.ready = ready
        self.token = bearer_token
        self.store = store
        self.no_store = no_store
        self.public_url = public_url
        self.tls = tls if tls is not None and tls.enabled else None
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/healthz", lambda _: web.json_response({"status": "ok"}))
        app.router.add_get("/readyz", self._ready)
        app.router.add_get("/api/turns", self._turns)
        from monitor.ui import Pages  # Jinja2 and the templates: loaded when the server starts
        from monitor.ui.security import is_loopback

        host, _, port = self.endpoint.rpartition(":")
        pages = Pages(self.store, self.no_store, self.token, loopback=is_loopback(host),
                      public_url=self.public_url)
        app.router.add_get("/ui", self._ui)
        app.add_subapp("/ui", pages.app())
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        context = None
        if self.tls is not None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(str(self.tls.cert_file), str(self.tls.key_file))
        site = web.TCPSite(self._runner, host.strip("[]"), int(port), ssl_context=context)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        log.info("admin endpoint on %s (/metrics, /healthz, /readyz, /api/turns, /ui/turns)",
                 self.url)

    @property
    def url(self) -> str:
        """Where it listens: http or https, its host, the port it bound."""
        host = self.endpoint.rpartition(":")[0]
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _metrics(self, request: web.Request) -> web.Response:
        encoder, content_type = choose_encoder(request.headers.get("Accept", ""))
        return web.Response(body=encoder(self.registry), headers={"Content-Type": content_type})

    async def _ui(self, _: web.Request) -> web.Response:
        return web.Response(status=303, headers={"Location": "/ui/turns"})

    async def _ready(self, _: web.Request) -> web.Response:
        ok = self.ready()
        return web.json_response({"ready": ok}, status=200 if ok else 503)

    async def _turns(self, request: web.Request) -> web.Response:
        try:
            check_bearer(request.headers.get("Authorization"), self.token)
        except Unauthenticated as exc:
            return web.json_response({"error": str(exc)}, status=401)
        try:
            limit = int(request.query.get("limit", "20"))
        except ValueError:
            return web.json_response({"error": "limit must be an integer"}, status=400)
        turns = list(self.recent.turns)[-limit:] if limit > 0 else []
        return web.Response(text=f"[{','.join(t.json for t in turns)}]",
                            content_type="application/json")
