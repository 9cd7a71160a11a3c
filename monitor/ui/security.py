"""Who may read the pages and post corrections, and what a browser may do with them.

- Authentication: the admin bearer token (`receivers.bearer_token`), sent as an `Authorization:
  Bearer` header, or a session cookie that the login form sets once it has checked the token
  (constant-time). The cookie is HttpOnly and SameSite=Strict, signed (HMAC-SHA256 with a key
  derived from the token: changing the token ends every session) and expires after
  `SESSION_S`. Without a token the pages are open (the admin endpoint listens on loopback) and
  the cookie only binds the CSRF token, signed with a key drawn at start.
- Cross-site requests: a POST needs the session cookie, the CSRF token derived from it (a hidden
  form field) and a same-origin request by `Origin`, `Sec-Fetch-Site` or `Referer`
  (`cross_site`).
- On loopback, the `Host` a browser names must be a loopback one: a DNS-rebound name (a site
  that points its own name at 127.0.0.1) is refused.
- Every response carries a Content-Security-Policy that forbids scripts and outside loads.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import os
import time
from dataclasses import dataclass

from aiohttp import web
from yarl import URL

COOKIE = "am_ui_session"  # and the port: browsers send a host's cookies to all its ports
SESSION_S = 12 * 3600  # an on-call shift
CSP = ("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
       "frame-ancestors 'none'; base-uri 'none'")
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass(frozen=True)
class Session:
    nonce: str
    expires: int
    fresh: bool = False  # made by this request: its cookie is to be set


class Sessions:
    """Signed session cookies and the CSRF tokens bound to them; no state kept."""

    def __init__(self, token: str | None) -> None:
        self.token = token
        self._key = (hmac.new(token.encode(), b"assistant-monitor ui session v1",
                              hashlib.sha256).digest() if token else os.urandom(32))

    def _sign(self, *parts: str) -> str:
        return _b64(hmac.new(self._key, "|".join(parts).encode(), hashlib.sha256).digest())

    def new(self) -> Session:
        return Session(_b64(os.urandom(18)), int(time.time()) + SESSION_S, fresh=True)

    def cookie(self, session: Session) -> str:
        expires = str(session.expires)
        return f"{session.nonce}.{expires}.{self._sign('session', session.nonce, expires)}"

    def read(self, cookie: str | None) -> Session | None:
        """The session a cookie carries, if it is ours and not expired."""
        nonce, _, rest = (cookie or "").partition(".")
        expires, _, signature = rest.partition(".")
        if not nonce or not expires.isdigit() or int(expires) < time.time():
            return None
        if not hmac.compare_digest(signature.encode(),
                                   self._sign("session", nonce, expires).encode()):
            return None
        return Session(nonce, int(expires))

    def csrf(self, session: Session) -> str:
        return self._sign("csrf", session.nonce)

    def csrf_ok(self, session: Session, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(),
                                                         self.csrf(session).encode())

    def token_ok(self, given: str | None) -> bool:
        """The login form's token, compared in constant time."""
        return self.token is not None and given is not None and hmac.compare_digest(
            given.strip().encode(), self.token.encode())

    def set_cookie(self, request: web.Request, response: web.StreamResponse,
                   session: Session, secure: bool = False) -> None:
        """`secure`: the browser reached us over HTTPS (a TLS proxy in front), so the cookie
        is never sent over plain HTTP."""
        response.set_cookie(cookie_name(request), self.cookie(session), max_age=max(0, int(
            session.expires - time.time())), path="/ui", httponly=True, samesite="Strict",
            secure=secure or request.secure)


def cookie_name(request: web.Request) -> str:
    """The session cookie's name for the address the browser used: two sidecars on one host
    (ports 9464 and 9465) would otherwise overwrite each other's session."""
    port = URL(f"http://{request.host}").explicit_port
    return f"{COOKIE}_{port}" if port else COOKIE


def cross_site(request: web.Request, public: str | None = None) -> str | None:
    """Why a state-changing request is refused as not coming from the pages themselves, or
    None. Browsers send `Origin` with every POST: it must be this server's. Under the pages'
    Referrer-Policy (no-referrer) a browser posts `Origin: null` instead, and then says where the
    request comes from in `Sec-Fetch-Site` (a header no page can set), which must be
    `same-origin`; a browser sends no `Sec-Fetch-Site` to a plain-http host other than loopback,
    and there the CSRF token bound to the session cookie decides alone. `Referer` stands in for
    a missing `Origin`; a request with neither is refused. `public`: the host[:port] of
    admin.public_url, also this server's (a proxy in front may rewrite `Host`)."""
    own = {request.host.lower(), *([public.lower()] if public else [])}
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None and site != "same-origin":
        return f"a {site} request (Sec-Fetch-Site)"
    origin = request.headers.get("Origin")
    if origin == "null":
        return None  # Referrer-Policy no-referrer: a same-origin form (Sec-Fetch-Site above)
    if origin is not None:
        return None if _authority(origin) in own else f"a request from another origin ({origin})"
    referer = request.headers.get("Referer")
    if referer:
        return None if _authority(referer) in own else "a request from another origin (Referer)"
    return "a request that does not say where it comes from (no Origin or Referer)"


def _authority(url: str) -> str:
    try:
        return URL(url).raw_authority.lower()
    except ValueError:
        return ""


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def foreign_host(request: web.Request) -> str | None:
    """The Host header's name when it is not a loopback one (a DNS-rebound request), else None."""
    host = URL(f"http://{request.host}").host or ""
    return None if is_loopback(host) else host
