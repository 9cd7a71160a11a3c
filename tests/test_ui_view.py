"""The on-call pages' pure parts, in process (no socket): claims marked in a text, evidence found
in its document, the session cookie and CSRF token, the origin checks on mocked requests, the
list's filters and the login's redirect targets. Over HTTP: tests/test_ui_pages.py."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from aiohttp.test_utils import make_mocked_request

from monitor.ui.pages import FILTERS, _filters, _local
from monitor.ui.security import Session, Sessions, cross_site, is_loopback
from monitor.ui.view import Segment, segments, turn_page, weight

pytestmark = pytest.mark.unit


def test_segments_mark_overlapping_claims_with_the_worst_label() -> None:
    text = "0123456789"
    cut = segments(text, [(2, 6, 1, "inferable"), (4, 8, 2, "ungrounded"), (20, 30, 3, "x")])
    assert cut == [Segment("01"), Segment("23", "inferable", [1], []),
                   Segment("45", "ungrounded", [2], [1]), Segment("67", "ungrounded", [], [2]),
                   Segment("89")]
    assert "".join(s.text for s in cut) == text
    assert segments("", []) == [] and segments("ab", []) == [Segment("ab")]


def test_weight_is_one_over_p() -> None:
    assert [weight(p) for p in (1.0, 0.25, 0.3, 0.001, 0.0)] == ["1", "4", "3.33", "1000", "-"]


def shown(claims: list[dict[str, object]], documents: list[dict[str, object]]) -> dict[str, object]:
    return {"trace_id": "a" * 32, "service": "s", "route": None, "state": "judged",
            "reason": "rate", "probability": 0.5, "received_at": 0.0, "judged_at": None,
            "turn": {"question": "q", "answer": "It is red. It is big.", "documents": documents},
            "verdicts": [{"judge": "local", "metric": "groundedness", "label": None,
                          "score": 0.5, "rationale": "r", "prompt_version": None, "model": None,
                          "details": {"claims": claims}}],
            "costs": [], "corrections": [], "conversation": {"previous": None, "next": None}}


def test_a_claims_evidence_is_found_by_id_position_or_passage() -> None:
    docs = [{"id": "d1", "content": "Nothing here."}, {"id": None, "content": "The car is red."}]
    page = turn_page(shown([
        {"claim": "It is red.", "label": "inferable", "support": 0.9, "evidence": "document 2",
         "window": [0, 15], "passage": "The car is red."},
        # the position counts the documents judged (an empty one skipped): found by its passage
        {"claim": "It is big.", "label": "ungrounded", "support": 0.1, "evidence": "document 1",
         "window": [0, 15], "passage": "The car is red."},
        {"claim": "Reworded.", "label": "generic"}], docs))
    first, second, third = page.answers[0].claims
    assert first.evidence is not None and (first.evidence.document, first.evidence.window) == \
        (2, (0, 15))
    assert second.evidence is not None and second.evidence.document == 2
    assert first.why == "support 0.9" and third.why == "greeting, hedge or offer: not checked"
    assert [c.in_answer for c in (first, second, third)] == [True, True, False]
    assert [(s.text, s.tone) for s in page.answers[0].segments] == [
        ("It is red.", "inferable"), (" ", ""), ("It is big.", "ungrounded")]
    assert page.documents[1].evidence_for == [1, 2]
    assert page.documents[0].evidence_for == [] and page.documents[0].labels == []


def test_sessions_are_signed_expire_and_bind_their_csrf_token() -> None:
    sessions = Sessions("token")
    session = sessions.new()
    cookie = sessions.cookie(session)
    assert sessions.read(cookie) == Session(session.nonce, session.expires)
    assert Sessions("token").read(cookie) is not None  # the key comes from the token
    assert Sessions("another").read(cookie) is None
    assert Sessions(None).read(cookie) is None  # no token: a key of the process's own
    nonce, expires, signature = cookie.split(".")
    for forged in (f"{nonce}.{int(expires) + 1}.{signature}", f"x{nonce}.{expires}.{signature}",
                   f"{nonce}.{expires}", "", "...", None):
        assert sessions.read(forged) is None, forged
    old = Session(nonce, int(time.time()) - 1)
    assert sessions.read(sessions.cookie(old)) is None
    csrf = sessions.csrf(session)
    assert sessions.csrf_ok(session, csrf) and not sessions.csrf_ok(session, None)
    assert not sessions.csrf_ok(sessions.new(), csrf)  # another session's
    assert sessions.token_ok("token") and sessions.token_ok(" token\n")
    assert not sessions.token_ok("tok") and not Sessions(None).token_ok("")


@pytest.mark.parametrize(("headers", "refused"), [
    ({"Origin": "http://127.0.0.1:9464"}, None),
    ({"Origin": "null", "Sec-Fetch-Site": "same-origin"}, None),  # Referrer-Policy no-referrer
    ({"Origin": "null"}, None),  # plain HTTP, not loopback: no fetch metadata (the CSRF token)
    ({"Referer": "http://127.0.0.1:9464/ui/turns/x"}, None),
    ({"Origin": "https://monitor.example.com"}, None),  # admin.public_url
    ({"Origin": "http://127.0.0.1:9465"}, "another origin (http://127.0.0.1:9465)"),
    ({"Origin": "http://evil.example"}, "another origin"),
    ({"Origin": "not a url at all"}, "another origin"),
    ({"Origin": "null", "Sec-Fetch-Site": "cross-site"}, "a cross-site request"),
    ({"Origin": "http://127.0.0.1:9464", "Sec-Fetch-Site": "same-site"}, "a same-site request"),
    ({"Sec-Fetch-Site": "none"}, "a none request"),
    ({"Referer": "http://evil.example/"}, "another origin (Referer)"),
    ({}, "does not say where it comes from"),
])
def test_cross_site_requests(headers: dict[str, str], refused: str | None) -> None:
    request = make_mocked_request("POST", "/ui/turns/x/corrections",
                                  headers={"Host": "127.0.0.1:9464", **headers})
    why = cross_site(request, "monitor.example.com")
    assert (why is None) if refused is None else (why is not None and refused in why), why


def test_loopback_names() -> None:
    assert all(map(is_loopback, ["localhost", "127.0.0.1", "127.1.2.3", "[::1]", "::1"]))
    assert not any(map(is_loopback, ["0.0.0.0", "10.0.0.1", "example.com", "localhost.evil"]))


def test_the_lists_filters() -> None:
    empty = dict.fromkeys(FILTERS, "")
    errors, filters = _filters({**empty, "route": "support", "service": "shop",
                                "metric": "groundedness", "below": "0.5", "from": "1000",
                                "to": "2500", "limit": "7", "failed_tools": "1",
                                "conversation": " chat-7 "})
    assert errors == []
    assert filters == {"limit": 7, "route": "shop/support", "service": None,
                       "metric": "groundedness", "label": None, "below": 0.5, "since": 1.0,
                       "until": 2.5, "failed_tools": True, "conversation": "chat-7"}
    _, filters = _filters({**empty, "route": "shop/support", "service": "desk"})
    assert (filters["route"], filters["service"]) == ("shop/support", "desk")  # matches none
    _, filters = _filters({**empty, "route": ".*", "service": "$__all"})
    assert (filters["route"], filters["service"]) == (None, None)
    errors, _ = _filters({**empty, "below": "inf", "metric": "groundedness", "to": "nan"})
    assert len(errors) == 2


def test_login_redirects_stay_on_the_pages() -> None:
    assert _local("/ui/turns?metric=groundedness&below=0.5")
    for target in ("//evil.example/ui/", "/\\evil.example", "https://evil.example/ui/",
                   "/metrics", "/ui/\\x", "/ui/\r\nSet-Cookie: x", ""):
        assert not _local(target), target


def test_a_turn_waiting_for_its_judge_renders() -> None:
    """A pending turn (no verdict), stored with only some of a turn's fields."""
    from monitor.ui.pages import Pages

    page = turn_page({**shown([], []), "state": "pending", "verdicts": [],
                      "turn": {"question": "Where?"}})
    html = Pages(lambda: None, "", None, loopback=True).env.get_template("turn.html").render(
        title="t", page=page, csrf="c", error=None)
    assert "no verdict yet" in html and "(no answer)" in html and "Where?" in html


@pytest.mark.unit
def test_an_agents_trajectory_is_shown_in_order_nested_with_its_hand_off(tmp_path: Path) -> None:
    """The Agents SDK's hand-off (the corpus capture): the page and `verdicts show` give its
    steps nested under their agents, the hand-off named by the agent handed to."""
    from rich.console import Console

    from monitor.store import Store
    from monitor.ui.pages import Pages
    from monitor.verdicts_view import turn_report
    from tests.corpus.capture import FIXTURES
    from tests.test_corpus import turn_from

    store = Store(tmp_path / "s.db")
    turn = turn_from(FIXTURES / "openinference-openai-agents" / "handoff.json")
    store.enqueue(turn, "rate", 1.0)
    shown = store.show(turn.trace_id)
    page = turn_page(shown)
    assert [(s.depth, s.kind, s.name) for s in page.trajectory] == [
        (0, "agent", "Agent workflow"), (1, "agent", "support"), (2, "llm", "generation"),
        (2, "handoff", "billing"), (1, "agent", "billing"), (2, "llm", "generation")]
    assert page.signals.startswith("3 steps, 0 failed tool calls")
    html = Pages(lambda: None, "", None, loopback=True).env.get_template("turn.html").render(
        title="t", page=page, csrf="c", error=None)
    assert '<li class="step depth-2"><b>handoff</b> to billing' in html
    console = Console(width=200, record=True)
    console.print(turn_report(shown))
    report = console.export_text()
    assert "    [4] handoff to billing" in report and "  [5] agent billing" in report
    store.close()
