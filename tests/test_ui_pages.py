"""The on-call pages over HTTP, as a browser or curl meets them: a real AdminServer on loopback
reading a real Store of judged turns (tests/ui_turns.py). The worst-turns list and its filters
(those Grafana's links and the alerts' turns_url send), a turn's page, the security headers,
escaping, the token and the login, the correction form's CSRF and origin checks, the Host
check, and a sidecar without a store. The real browser: tests/test_ui_browser.py."""

from __future__ import annotations

import html
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from markupsafe import escape
from prometheus_client import CollectorRegistry

from monitor.admin import AdminServer, RecentTurns
from monitor.store import Store, ThreadedStore
from monitor.ui.security import COOKIE, CSP, SESSION_S, Sessions
from tests.ui_turns import NOW, PAYLOAD, XSS, fill

pytestmark = pytest.mark.integration  # a real server on 127.0.0.1 (docs/testing.md)

TOKEN = "s3cret-admin-token"


@dataclass
class Served:
    url: str
    store: Store
    threaded: ThreadedStore
    ids: dict[str, str]
    http: aiohttp.ClientSession

    async def get(self, path: str, **kwargs: Any) -> tuple[int, Any, str]:
        async with self.http.get(self.url + path, allow_redirects=False, **kwargs) as r:
            return r.status, r.headers, await r.text()

    async def post(self, path: str, data: dict[str, str], **kwargs: Any) -> tuple[int, Any, str]:
        async with self.http.post(self.url + path, data=data, allow_redirects=False,
                                  **kwargs) as r:
            return r.status, r.headers, await r.text()

    async def corrections(self, trace_id: str) -> list[dict[str, Any]]:
        """Read on the store's thread, as the server's own calls are."""
        return await self.threaded.corrections(trace_id)

    async def login(self) -> str:
        """The session cookie the login form sets (`Cookie` header value)."""
        status, headers, _ = await self.post("/ui/login", {"token": TOKEN, "next": "/ui/turns"},
                                             headers={"Origin": self.url})
        assert status == 303, status
        return cookie_of(headers)


def cookie_of(headers: Any) -> str:
    set_cookie = headers.getone("Set-Cookie")
    return set_cookie.split(";", 1)[0]


Start = Callable[..., Awaitable[Served]]


@pytest.fixture
async def serve(tmp_path: Path) -> AsyncIterator[Start]:
    started: list[tuple[AdminServer, ThreadedStore | None, aiohttp.ClientSession]] = []

    async def start(token: str | None = None, with_store: bool = True,
                    endpoint: str = "127.0.0.1:0", **kwargs: Any) -> Served:
        store = Store(tmp_path / f"store-{len(started)}.db")
        ids = fill(store)
        threaded = ThreadedStore(store)
        admin = AdminServer(endpoint, CollectorRegistry(), RecentTurns(1, 1 << 20),
                            ready=lambda: True, bearer_token=token,
                            store=(lambda: threaded) if with_store else (lambda: None),
                            **kwargs)
        await admin.start()
        # cookies by hand: each test says which cookie a request carries
        http = aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar())
        started.append((admin, threaded, http))
        return Served(f"http://127.0.0.1:{admin.port}", store, threaded, ids, http)

    yield start
    for admin, threaded, http in started:
        await http.close()
        await admin.stop()
        if threaded is not None:
            await threaded.close()


def parsed(page: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """Every start tag of the page, as a browser's parser reads it, and its attributes."""
    tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            tags.append((tag, attrs))

    Tags().feed(page)
    return tags


def rows(page: str) -> list[str]:
    """The trace ids the list links to, in its order."""
    return re.findall(r'<a href="/ui/turns/([0-9a-f]{32})"', page)


def text(page: str) -> str:
    """The page as text: tags dropped, entities decoded, whitespace folded (none before
    punctuation)."""
    folded = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    return re.sub(r" ([,.:;)])", r"\1", folded)


async def test_the_list_shows_the_newest_turns_first_and_filters_them(serve: Start) -> None:
    served = await serve()
    ids = served.ids
    status, headers, page = await served.get("/ui/turns")
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    newest_first = ["no_answer", "hostile", "tools", "ungrounded", "grounded"]
    assert rows(page) == [ids[name] for name in newest_first]
    listed = text(page)
    assert "5 turns, newest first." in listed
    # the sampling rule, its probability and the weight 1/p
    assert "desk/support judged rate 0.10 10 " in listed, listed
    assert "shop/orders judged failed_tool_call 1.00 1" in listed
    assert "cancel_order failed: order service timed out" in listed

    async def listed_for(query: str) -> list[str]:
        status, _, page = await served.get("/ui/turns?" + query)
        assert status == 200, text(page)
        return [name for trace_id in rows(page) for name, i in ids.items() if i == trace_id]

    assert await listed_for("route=billing") == ["ungrounded"]
    assert await listed_for("route=shop/support") == ["hostile", "grounded"]
    assert await listed_for("service=desk") == ["no_answer"]
    assert await listed_for("service=shop&route=support") == ["hostile", "grounded"]
    # Grafana's links: a metric's score below a threshold, or its bad label, in a time range
    assert await listed_for("metric=groundedness&below=0.9") == ["hostile", "ungrounded"]
    assert await listed_for("metric=completeness&label=no_answer") == ["no_answer"]
    assert await listed_for("metric=answer_relevance&label=irrelevant&service=desk") == \
        ["no_answer"]
    minute = 60_000
    start = int((NOW - 3600) * 1000)  # the first turn's time, in epoch milliseconds
    assert await listed_for(f"from={start + minute}&to={start + 3 * minute}") == \
        ["hostile", "tools", "ungrounded"]
    assert await listed_for(f"to={start + minute}") == ["ungrounded", "grounded"]
    assert await listed_for(f"to={start + 2 * minute}&limit=1") == ["tools"]
    assert await listed_for("failed_tools=1") == ["tools"]
    assert await listed_for("route=$__all&metric=groundedness&below=0.9&limit=1") == ["hostile"]
    # a metric filter shows that metric's column only
    _, _, page = await served.get("/ui/turns?metric=groundedness")
    assert '<th class="num"><abbr title="groundedness">grounded</abbr></th>' in page
    assert 'title="completeness"' not in page and "grounded = groundedness" in text(page)


@pytest.mark.parametrize(("query", "message"), [
    ("below=0.5", "below applies to a metric's score: choose the metric"),
    ("metric=groundedness&below=low", "below must be a score, such as 0.5; got 'low'"),
    ("metric=precision", "metric 'precision' is not one of context_relevance"),
    ("metric=groundedness&label=no_answer", "groundedness has no label 'no_answer'"),
    ("label=no_answer", "label applies to a metric's verdicts: choose the metric"),
    ("from=now-6h", "from must be Unix epoch milliseconds (Grafana's ${__from}); got 'now-6h'"),
    ("limit=0", "limit must be a whole number from 1 to 500"),
])
async def test_a_wrong_filter_is_named(serve: Start, query: str, message: str) -> None:
    served = await serve()
    status, _, page = await served.get("/ui/turns?" + query)
    assert status == 400
    assert message in text(page)
    assert rows(page) == []


async def test_a_turn_page_explains_the_verdicts(serve: Start) -> None:
    served = await serve()
    ids = served.ids
    status, _, page = await served.get(f"/ui/turns/{ids['ungrounded']}")
    assert status == 200
    shown = text(page)
    # the ungrounded claim is marked in the answer, and its evidence window shown beside it
    marked = re.findall(r'<mark class="claim (\w+)">([^<]*)<sup>(\d+)</sup></mark>',
                        page.split('id="answer"')[1].split("</p>")[0])
    assert marked == [("inferable", "The Pro plan costs 12 euros a month.", "1"),
                      ("ungrounded", "Students get 50% off every plan.", "2")]
    assert ("2 ungrounded Students get 50% off every plan. support 0.04 (lexical 0.5, similarity "
            "0.7) evidence: document 1 [kb-plans] characters 67–99 The Pro plan costs 12 euros a "
            "month and includes priority support. Annual billing saves two months.") in shown
    assert re.search(r'<blockquote>The Pro plan costs 12 euros a month and includes priority '
                     r'support\. <mark class="claim ungrounded">Annual billing saves two '
                     r'months\.</mark></blockquote>', page)
    # the window in the document itself, which is open, with its relevance label
    assert re.search(r'<details class="doc" id="doc-1" open>', page)
    assert '<span class="anchor" id="ev-1-2"></span><mark class="claim ungrounded">Annual ' \
           'billing saves two months.<sup>2</sup></mark>' in page
    assert "relevant kb-plans retrieval score 0.770 evidence for claims 1, 2" in shown
    # every verdict with its judge, model and rationale; the sampling rule and weight; feedback
    assert "groundedness 0.50 judge local, model claim_support@1a2b3c4d" in shown
    assert "1 of 2 checkable claims supported by the documents (0 generic)" in shown
    assert "sampled by rule negative_feedback, p = 1.00, weight 1" in shown
    assert "user feedback -1.0 “wrong”" in shown
    # its conversation: the turns before and after it
    assert f'<a id="previous" href="/ui/turns/{ids["grounded"]}">' in page
    assert f'<a id="next" href="/ui/turns/{ids["tools"]}">' in page
    # one correction form per verdict, each with this session's CSRF token
    assert page.count('<form class="correct" method="post" '
                      f'action="/ui/turns/{ids["ungrounded"]}/corrections">') == 4

    _, _, page = await served.get(f"/ui/turns/{ids['tools']}")
    shown = text(page)
    assert "Tool calls: the trajectory, in order" in shown
    assert ('lookup_order ( {"order_id": "1042"}) → {"status": "shipped"} llm:judge-a: needed '
            'yes, arguments supported yes (find it) check_policy ( {"topic": "cancellation"}) → '
            "shipped orders are returned, not cancelled llm:judge-a: needed no") in shown
    assert 'cancel_order ( {"order_id": "1042"}) failed: order service timed out' in shown
    assert '<ol class="trajectory">' in page and page.count('<li class="step') == 3
    assert '<li class="step failed">' in page
    assert "judge llm:judge-a, model qwen2.5-7b-instruct, prompt tools-v3" in shown
    assert "cost: llm:judge-a: 1 LLM calls, 900 + 120 tokens, 1.40 s" in shown

    # the grounded turn is its conversation's first stored one
    _, _, page = await served.get(f"/ui/turns/{ids['grounded']}")
    assert "conv-7: first stored" in text(page) and 'id="previous"' not in page
    assert "irrelevant kb-shipping retrieval score 0.410 similarity 0.12" in text(page)


async def test_unknown_turns_and_pages_are_named(serve: Start) -> None:
    served = await serve()
    status, _, page = await served.get("/ui/turns/" + "f" * 32)
    assert status == 404 and "No stored turn with trace id " + "f" * 32 in text(page)
    status, _, page = await served.get("/ui/turns/not-a-trace")
    assert status == 404 and "32 hex digits" in text(page)
    status, headers, page = await served.get("/ui/nothing/here")
    assert status == 404 and headers["Content-Security-Policy"] == CSP
    status, headers, _ = await served.get("/ui")
    assert status == 303 and headers["Location"] == "/ui/turns"


async def test_every_response_carries_the_security_headers(serve: Start) -> None:
    served = await serve(token=TOKEN)
    cookie = await served.login()
    for path, expected in [("/ui/turns", 200), (f"/ui/turns/{served.ids['hostile']}", 200),
                           ("/ui/turns?below=x", 400), ("/ui/login", 200)]:
        status, headers, _ = await served.get(path, headers={"Cookie": cookie})
        assert status == expected, path
        assert headers["Content-Security-Policy"] == (
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
            "frame-ancestors 'none'; base-uri 'none'")
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["Referrer-Policy"] == "no-referrer"
        assert headers["X-Frame-Options"] == "DENY"
        assert headers["Cache-Control"] == "no-store"  # trace content stays off disks
    status, headers, _ = await served.get("/ui/turns")  # refused, with the same headers
    assert status == 401 and headers["Content-Security-Policy"] == CSP
    # the stylesheet, the one thing the pages load, is served without a token
    status, headers, css = await served.get("/ui/static/style.css")
    assert status == 200 and headers["Content-Type"] == "text/css; charset=utf-8"
    assert "mark.ungrounded" in css and headers["X-Content-Type-Options"] == "nosniff"
    _, _, page = await served.get("/ui/turns", headers={"Cookie": cookie})
    assert re.search(r'<link rel="stylesheet" href="/ui/static/style\.css\?v=[0-9a-f]{12}">',
                     page)
    assert "<script" not in page.lower() and "http://" not in page and "https://" not in page


async def test_hostile_content_is_escaped_everywhere(serve: Start) -> None:
    served = await serve()
    _, _, page = await served.get(f"/ui/turns/{served.ids['hostile']}")
    for payload in XSS:
        assert payload not in page  # never as markup
    assert str(escape(XSS[0])) in page
    tags = parsed(page)
    assert not {"script", "img", "svg", "iframe", "style", "textarea"} & {t for t, _ in tags}
    assert not [(t, a) for t, attrs in tags for a, _ in attrs if a.startswith("on")]
    assert "pwned" not in {v for _, attrs in tags for a, v in attrs if a == "id"}
    assert not [v for _, attrs in tags for a, v in attrs if (v or "").startswith("javascript:")]
    shown = text(page)
    assert shown.count(PAYLOAD) >= 8  # the question, document, tool call, rationales, ...
    _, _, listed = await served.get("/ui/turns")
    assert "<svg" not in listed and str(escape(XSS[2])) in listed  # a tool call's name


async def test_the_token_is_required_and_the_login_sets_a_session_cookie(serve: Start) -> None:
    served = await serve(token=TOKEN)
    turn = f"/ui/turns/{served.ids['ungrounded']}"
    status, headers, page = await served.get(turn)
    assert status == 401 and headers["WWW-Authenticate"] == 'Bearer realm="assistant-monitor"'
    assert '<input type="password" name="token"' in page
    assert f'<input type="hidden" name="next" value="{turn}">' in page
    assert "Students get" not in page
    status, _, _ = await served.get(turn, headers={"Authorization": "Bearer wrong"})
    assert status == 401
    # the bearer header (curl, a proxy) reads the pages, and gets a session for the forms
    status, headers, page = await served.get(turn, headers={"Authorization": f"Bearer {TOKEN}"})
    assert status == 200 and "Students get 50% off every plan." in page
    port = served.url.rpartition(":")[2]
    assert headers.getone("Set-Cookie").startswith(f"{COOKIE}_{port}=")

    # the login form: a wrong token is refused, the right one sets the cookie
    status, _, page = await served.post("/ui/login", {"token": "guess", "next": turn},
                                        headers={"Origin": served.url})
    assert status == 401 and "wrong token" in page
    status, headers, _ = await served.post("/ui/login", {"token": TOKEN, "next": turn},
                                           headers={"Origin": "null"})
    assert status == 303 and headers["Location"] == turn
    set_cookie = headers.getone("Set-Cookie")
    attributes = {a.strip().split("=")[0].lower() for a in set_cookie.split(";")[1:]}
    assert {"httponly", "path", "max-age", "samesite"} <= attributes, set_cookie
    assert "SameSite=Strict" in set_cookie and "Path=/ui" in set_cookie
    max_age = re.search(r"Max-Age=(\d+)", set_cookie)
    assert max_age is not None and SESSION_S - 60 < int(max_age.group(1)) <= SESSION_S
    cookie = cookie_of(headers)
    status, _, page = await served.get(turn, headers={"Cookie": cookie})
    assert status == 200 and "Students get 50% off every plan." in page
    assert 'action="/ui/logout"' in page

    # a tampered or expired cookie, or another token's, is no session
    name, _, value = cookie.partition("=")
    nonce, expires, signature = value.split(".")
    forged = [f"{name}={nonce}.{int(expires) + 3600}.{signature}",
              f"{name}=x{nonce}.{expires}.{signature}", f"{name}={nonce}.{expires}.",
              f"{name}={Sessions('another token').cookie(Sessions('x').new())}"]
    expired = Sessions(TOKEN)
    old = expired.new()
    forged.append(f"{name}={expired.cookie(type(old)(old.nonce, int(time.time()) - 1))}")
    for bad in forged:
        status, _, _ = await served.get(turn, headers={"Cookie": bad})
        assert status == 401, bad

    # a login never sends anyone to another site
    for target in ("//evil.example/ui/", "https://evil.example/", "/\\evil.example", "/metrics"):
        status, headers, _ = await served.post("/ui/login", {"token": TOKEN, "next": target},
                                               headers={"Origin": served.url})
        assert status == 303 and headers["Location"] == "/ui/turns", target
    # and logging out ends the cookie
    _, _, page = await served.get(turn, headers={"Cookie": cookie})
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    assert csrf is not None
    status, headers, _ = await served.post("/ui/logout", {"csrf": csrf.group(1)},
                                           headers={"Cookie": cookie, "Origin": served.url})
    assert status == 303 and headers["Location"] == "/ui/login"
    assert headers.getone("Set-Cookie").startswith(f'{COOKIE}_{port}=""')


async def correction_form(served: Served, trace_id: str, cookie: str | None = None
                          ) -> tuple[str, str]:
    """The session cookie and CSRF token a turn page hands out."""
    status, headers, page = await served.get(f"/ui/turns/{trace_id}",
                                             headers={"Cookie": cookie} if cookie else {})
    assert status == 200
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    assert csrf is not None
    return cookie or cookie_of(headers), csrf.group(1)


async def test_a_correction_needs_its_session_token_and_the_pages_origin(serve: Start) -> None:
    served = await serve()
    trace_id = served.ids["ungrounded"]
    cookie, csrf = await correction_form(served, trace_id)
    form = {"judge": "local", "metric": "groundedness", "verdict": "wrong", "score": "0",
            "author": "alice"}
    path = f"/ui/turns/{trace_id}/corrections"
    _, other_csrf = await correction_form(served, trace_id)  # another session's token

    refused = [
        ({}, {"Origin": served.url}, "with its session cookie"),  # no cookie
        ({"csrf": csrf}, {"Origin": served.url}, "with its session cookie"),  # no cookie
        ({}, {"Cookie": cookie, "Origin": served.url}, "CSRF token"),
        ({"csrf": "forged"}, {"Cookie": cookie, "Origin": served.url}, "CSRF token"),
        ({"csrf": other_csrf}, {"Cookie": cookie, "Origin": served.url}, "CSRF token"),
        ({"csrf": csrf}, {"Cookie": cookie, "Origin": "http://evil.example"},
         "another origin (http://evil.example)"),
        ({"csrf": csrf}, {"Cookie": cookie, "Origin": served.url.replace("127.0.0.1",
                                                                          "localhost")},
         "another origin"),
        ({"csrf": csrf}, {"Cookie": cookie, "Origin": "null", "Sec-Fetch-Site": "cross-site"},
         "a cross-site request (Sec-Fetch-Site)"),
        ({"csrf": csrf}, {"Cookie": cookie, "Origin": served.url, "Sec-Fetch-Site": "same-site"},
         "a same-site request (Sec-Fetch-Site)"),
        ({"csrf": csrf}, {"Cookie": cookie, "Referer": "http://evil.example/page"},
         "another origin (Referer)"),
        ({"csrf": csrf}, {"Cookie": cookie}, "does not say where it comes from"),
    ]
    for extra, headers, why in refused:
        status, _, page = await served.post(path, {**form, **extra}, headers=headers)
        assert status == 403, (extra, headers)
        assert why in text(page), (why, text(page))
    assert await served.corrections(trace_id) == []
    async with served.http.get(served.url + path, allow_redirects=False) as response:
        assert response.status == 405  # POST only

    # From the page itself: Origin, or Origin null with Sec-Fetch-Site (no-referrer), or Referer
    for headers in ({"Origin": served.url}, {"Origin": "null", "Sec-Fetch-Site": "same-origin"},
                    {"Referer": served.url + f"/ui/turns/{trace_id}"}):
        status, response, _ = await served.post(path, {**form, "csrf": csrf},
                                                headers={"Cookie": cookie, **headers})
        assert status == 303 and response["Location"] == f"/ui/turns/{trace_id}#corrections"
    saved = await served.corrections(trace_id)
    assert [(c["judge"], c["metric"], c["correct"], c["score"], c["verdict_score"], c["author"])
            for c in saved] == [("local", "groundedness", False, 0.0, 0.5, "alice")] * 3
    _, _, page = await served.get(f"/ui/turns/{trace_id}", headers={"Cookie": cookie})
    assert "Corrections (3)" in text(page)
    assert "alice groundedness local 0.50 wrong: it is 0.00" in text(page)


async def test_a_wrong_correction_is_said_and_not_saved(serve: Start) -> None:
    served = await serve()
    trace_id = served.ids["ungrounded"]
    cookie, csrf = await correction_form(served, trace_id)
    path = f"/ui/turns/{trace_id}/corrections"
    base = {"csrf": csrf, "judge": "local", "author": "bob"}
    for form, why in [
        ({"metric": "completeness", "verdict": "wrong"},
         "a wrong completeness verdict needs the right label, one of complete, incomplete, "
         "no_answer; got None"),
        ({"metric": "completeness", "verdict": "wrong", "label": "maybe"}, "got 'maybe'"),
        ({"metric": "groundedness", "verdict": "wrong", "score": "1.5"},
         "needs the right score, 0..1; got 1.5"),
        ({"metric": "groundedness", "verdict": "wrong", "score": "nan"}, "the right score"),
        ({"metric": "groundedness"}, "say whether the verdict is right or wrong"),
        ({"metric": "groundedness", "verdict": "right", "author": " "}, "give your name"),
    ]:
        status, _, page = await served.post(path, {**base, **form},
                                            headers={"Cookie": cookie, "Origin": served.url})
        assert status == 400, form
        assert "Correction not saved: " in text(page) and why in text(page), text(page)
    status, _, page = await served.post(path, {**base, "metric": "tool_use", "verdict": "right"},
                                        headers={"Cookie": cookie, "Origin": served.url})
    assert status == 404 and "has no tool_use verdict by judge local" in text(page)
    assert await served.corrections(trace_id) == []
    # right, and wrong with the right label
    for form in ({"metric": "completeness", "verdict": "right"},
                 {"metric": "answer_relevance", "verdict": "wrong", "label": "irrelevant"}):
        status, _, _ = await served.post(path, {**base, **form},
                                         headers={"Cookie": cookie, "Origin": served.url})
        assert status == 303
    assert [(c["metric"], c["correct"], c["label"]) for c in await served.corrections(trace_id)] \
        == [("completeness", True, None), ("answer_relevance", False, "irrelevant")]


async def test_a_header_alone_posts_nothing_and_a_token_guards_the_form(serve: Start) -> None:
    served = await serve(token=TOKEN)
    trace_id = served.ids["grounded"]
    path = f"/ui/turns/{trace_id}/corrections"
    form = {"judge": "local", "metric": "completeness", "verdict": "right", "author": "eve"}
    status, _, _ = await served.post(path, form, headers={"Origin": served.url})
    assert status == 401
    status, _, page = await served.post(path, form, headers={
        "Origin": served.url, "Authorization": f"Bearer {TOKEN}"})
    assert status == 403 and "posted from the turn page's form" in text(page)
    cookie = await served.login()
    _, csrf = await correction_form(served, trace_id, cookie)
    status, _, _ = await served.post(path, {**form, "csrf": csrf},
                                     headers={"Cookie": cookie, "Origin": served.url})
    assert status == 303
    assert len(await served.corrections(trace_id)) == 1


async def test_on_loopback_a_foreign_host_name_is_refused(serve: Start) -> None:
    """A DNS-rebinding page (its own name pointed at 127.0.0.1) sends its own name as Host."""
    served = await serve(public_url="https://monitor.example.com")
    status, _, page = await served.get("/ui/turns", headers={"Host": "rebind.evil.example:80"})
    assert status == 403 and "not served under the name “rebind.evil.example”" in text(page)
    for host in ("localhost", "127.0.0.1", "[::1]", "monitor.example.com"):
        status, _, _ = await served.get("/ui/turns", headers={"Host": host})
        assert status == 200, host
    other = await serve(endpoint="0.0.0.0:0")  # listening beyond loopback: any name
    status, _, _ = await other.get("/ui/turns", headers={"Host": "monitor.internal:9464"})
    assert status == 200


async def test_behind_a_tls_proxy_at_the_public_url(serve: Start) -> None:
    """admin.public_url https://monitor.example.com: a request under that name came through the
    TLS proxy (its cookie is Secure), and that origin is this server's."""
    served = await serve(public_url="https://monitor.example.com")
    trace_id = served.ids["grounded"]
    status, headers, page = await served.get(f"/ui/turns/{trace_id}",
                                             headers={"Host": "monitor.example.com"})
    assert status == 200 and "; Secure" in headers.getone("Set-Cookie")
    _, direct, _ = await served.get(f"/ui/turns/{trace_id}")
    assert "Secure" not in direct.getone("Set-Cookie")  # on loopback, plain HTTP
    cookie, csrf = await correction_form(served, trace_id)
    form = {"csrf": csrf, "judge": "local", "metric": "completeness", "verdict": "right",
            "author": "ana"}
    status, _, _ = await served.post(f"/ui/turns/{trace_id}/corrections", form, headers={
        "Cookie": cookie, "Origin": "https://monitor.example.com"})  # Host: the proxy's rewrite
    assert status == 303
    status, _, _ = await served.post(f"/ui/turns/{trace_id}/corrections", form, headers={
        "Cookie": cookie, "Origin": "https://monitor.example.com.evil.example"})
    assert status == 403
    assert len(await served.corrections(trace_id)) == 1


async def test_without_a_store_the_pages_say_why(serve: Start) -> None:
    served = await serve(with_store=False, no_store="it is an ingest replica.")
    for path in ("/ui/turns", f"/ui/turns/{served.ids['grounded']}"):
        status, _, page = await served.get(path)
        assert status == 503
        assert "This sidecar keeps no verdict store: it is an ingest replica." in text(page)


def test_a_sidecar_says_why_it_has_no_store(start_sidecar: Any) -> None:
    """A real sidecar: one whose turns go to another consumer, and a Kafka ingest replica."""
    import urllib.error
    import urllib.request

    from monitor.app import Sidecar
    from tests.conftest import test_settings

    class Nowhere:
        async def consume(self, turns: Any) -> None:
            pass

    running = start_sidecar(downstream=Nowhere())
    try:
        urllib.request.urlopen(f"{running.admin_url}/ui/turns", timeout=10)
        raise AssertionError("expected 503")
    except urllib.error.HTTPError as exc:
        assert exc.code == 503
        assert "keeps no verdict store: it hands its turns to another consumer" in text(
            exc.read().decode())
    replica = Sidecar(test_settings(judging={"queue": {"kind": "kafka", "role": "ingest"}}),
                      registry=CollectorRegistry())
    assert replica.store is None
    assert "ingest replica of the Kafka judge queue" in replica.admin.no_store


async def test_over_tls_the_admin_server_is_https_and_the_session_cookie_secure(
        tmp_path: Path) -> None:
    import ssl
    import subprocess

    from monitor.config import TLSSettings

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    store = Store(tmp_path / "tls.db")
    fill(store)
    threaded = ThreadedStore(store)
    admin = AdminServer("127.0.0.1:0", CollectorRegistry(), RecentTurns(1, 1 << 20),
                        ready=lambda: True, bearer_token=TOKEN, store=lambda: threaded,
                        tls=TLSSettings(cert_file=cert, key_file=key))
    await admin.start()
    trusted = ssl.create_default_context(cafile=str(cert))
    try:
        assert admin.url == f"https://127.0.0.1:{admin.port}"
        async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
            async with http.post(f"{admin.url}/ui/login", data={"token": TOKEN, "next": "/ui/turns"},
                                 headers={"Origin": admin.url}, allow_redirects=False,
                                 ssl=trusted) as login:
                assert login.status == 303
                assert "Secure" in login.headers["Set-Cookie"]
            async with http.get(f"{admin.url}/ui/turns", ssl=trusted,
                                headers={"Authorization": f"Bearer {TOKEN}"}) as page:
                assert page.status == 200 and "/ui/turns/" in await page.text()
            with pytest.raises(aiohttp.ClientError):  # plain HTTP is not served
                async with http.get(f"http://127.0.0.1:{admin.port}/metrics") as plain:
                    await plain.read()
    finally:
        await admin.stop()
        await threaded.close()
