"""Sessions (monitor/sessions.py): a conversation's turns followed over all traffic, closed idle,
ended by the app or evicted, bounded in bytes; their local outcome and frustration signals."""

from __future__ import annotations

import tempfile
import urllib.request
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from prometheus_client import CollectorRegistry

from exporters import record
from monitor.config import SessionSettings
from monitor.sessions import SessionTelemetry, SessionTracker, SessionTurn
from tests import traffic
from tests.conftest import RunningSidecar, scripted_llm_settings
from tests.fakes.judge_model import judge_model
from tests.fakes.openai_server import ScriptedOpenAIServer
from tests.waiting import wait_until


def turn(conversation: str, question: str | None, *, answered: bool = True, failed: bool = False,
         feedback: float | None = None, end: bool = False, tools: tuple[str, ...] = ()
         ) -> SessionTurn:
    return (conversation, "shop-bot", "support", question, answered, failed, feedback, end,
            list(tools))


class Tracked:
    """A tracker on its own registry, recording each session it closes."""

    def __init__(self, **settings: float) -> None:
        self.registry = CollectorRegistry()
        self.closed: list[tuple[str, str, str]] = []
        self.tracker = SessionTracker(
            SessionSettings(**settings), SessionTelemetry(self.registry), str, str,
            lambda session, closed, outcome: self.closed.append(
                (session.conversation_id, closed, outcome)))

    def metric(self, name: str, **labels: str) -> float:
        labels = {"service": "shop-bot", "route": "support", **labels}
        return self.registry.get_sample_value(name, labels) or 0.0


@pytest.mark.unit
@pytest.mark.parametrize(("turns", "closed", "outcome"), [
    # thanked after an answer
    ([turn("c", "Where is order A-1?"), turn("c", "thanks, that worked")], "idle", "resolved"),
    # rated up
    ([turn("c", "Where is order A-1?", feedback=1.0)], "idle", "resolved"),
    # asked for a person
    ([turn("c", "Where is order A-1?", answered=False),
      turn("c", "can I talk to a real person please")], "idle", "escalated"),
    # the agent escalated
    ([turn("c", "My card was charged twice", tools=("escalate_to_human",), end=True)], "ended",
     "escalated"),
    # left after asking again, in other words, what the assistant did not answer
    ([turn("c", "how do I cancel my plan", answered=False),
      turn("c", "how can I cancel my plan??", answered=False)], "idle", "abandoned"),
    # a reaction after a failure leaves it failed
    ([turn("c", "move my flight to Jul 11", failed=True), turn("c", "ugh come on", end=True)],
     "ended", "unresolved"),
    # ended by the app on a failure
    ([turn("c", "refund order A-2", failed=True, end=True)], "ended", "unresolved"),
    # answered, nothing more said: a judge's question, not a rule's
    ([turn("c", "What is the refund window?")], "idle", "unjudged"),
    # a polite thank-you after a failure solves nothing
    ([turn("c", "refund order A-2", failed=True), turn("c", "ok thanks")], "idle", "abandoned"),
    # "thanks for nothing"
    ([turn("c", "Where is A-1?"), turn("c", "thanks for nothing")], "idle", "unjudged"),
    # thanked, then a new problem left unsolved
    ([turn("c", "Where is A-1?"), turn("c", "thank you!"), turn("c", "and A-2?", failed=True)],
     "idle", "abandoned"),
])
def test_a_sessions_local_outcome(turns: list[SessionTurn], closed: str, outcome: str) -> None:
    tracked = Tracked(idle_timeout_s=60)
    tracked.tracker.add(turns, now=0.0)
    tracked.tracker.expire(now=30.0)
    assert tracked.closed == ([] if closed == "idle" else [("c", closed, outcome)])
    tracked.tracker.expire(now=61.0)
    assert tracked.closed == [("c", closed, outcome)]
    assert tracked.metric("assistant_session_outcome_total", outcome=outcome) == 1
    assert tracked.metric("assistant_session_turns_sum") == len(turns)


@pytest.mark.unit
def test_frustration_signals_and_turns_to_resolution_are_counted() -> None:
    tracked = Tracked(idle_timeout_s=60)
    tracked.tracker.add([
        turn("c", "my router keeps dropping wifi", answered=False),
        turn("c", "my router keeps dropping the wifi", feedback=-1.0),
        turn("c", "ok it works now after the reset, thanks")], now=0.0)
    tracked.tracker.expire(now=100.0)
    assert tracked.closed == [("c", "idle", "resolved")]
    for signal in ("rephrasing", "negative_feedback"):
        assert tracked.metric("assistant_session_frustration_total", signal=signal) == 1
    # the answer before "it works now", rated down as it was
    assert tracked.metric("assistant_session_turns_to_resolution_sum") == 2


@pytest.mark.unit
def test_a_flood_of_distinct_conversation_ids_stays_within_its_bytes() -> None:
    """100,000 one-turn conversations with long ids and questions: the open sessions stay within
    max_mib, the longest idle evicted first, counted, with no outcome."""
    tracked = Tracked(max_mib=1, max_sessions=1_000_000)
    question = " ".join(f"word{n}" for n in range(200))
    for n in range(100_000):
        tracked.tracker.add([turn(f"{n:08d}" + "x" * 300, question)], now=float(n))
        assert tracked.tracker.size <= 1 << 20
    assert 100 < len(tracked.tracker.open) < 10_000
    evicted = tracked.metric("assistant_sessions_total", closed="evicted")
    assert evicted == 100_000 - len(tracked.tracker.open)
    assert next(iter(tracked.tracker.open)).startswith(f"{100_000 - len(tracked.tracker.open):08d}")
    assert tracked.closed == []  # an evicted session has no outcome yet


@pytest.mark.integration
def test_a_conversation_sent_with_the_sdk_is_followed_to_its_end(
        start_sidecar) -> None:
    """Three turns of one conversation over OTLP, the last ended by the app; another left idle
    after a failed turn: one session resolved, one abandoned."""
    sidecar: RunningSidecar = start_sidecar(sessions={"idle_timeout_s": 1.0})
    provider = TracerProvider(resource=Resource.create({"service.name": "shop-bot"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(
        endpoint=sidecar.grpc_endpoint, insecure=True)))
    tracer = provider.get_tracer("test")

    def send(conversation: str, question: str, answer: str | None, *, end: bool = False,
             failed_tool: bool = False) -> None:
        with tracer.start_as_current_span("support.turn"):
            record.session(conversation, end=end)
            record.question(question, route="support")
            if failed_tool:
                with tracer.start_as_current_span("execute_tool lookup_order"):
                    record.tool_call("lookup_order", {"order_id": "A-404"},
                                     error="order A-404 not found")
            if answer is not None:
                record.answer(answer)

    send("conv-1", "Where is order A-1001?", "It ships tomorrow.")
    send("conv-2", "Where is order A-404?", None, failed_tool=True)
    send("conv-1", "And can I change the address?", "Yes, in Orders > Address.")
    send("conv-1", "great, thanks!", "You're welcome.", end=True)
    provider.shutdown()

    def outcome(name: str) -> float:
        return sidecar.metric("assistant_session_outcome_total", service="shop-bot",
                              route="support", outcome=name)
    wait_until(lambda: outcome("resolved") == 1 and outcome("abandoned") == 1, 30,
               "both sessions closed")
    assert sidecar.metric("assistant_sessions_total", service="shop-bot", route="support",
                          closed="ended") == 1
    assert sidecar.metric("assistant_sessions_total", service="shop-bot", route="support",
                          closed="idle") == 1
    assert sidecar.metric("assistant_session_turns_sum", service="shop-bot",
                          route="support") == 4


@pytest.mark.integration
def test_the_llm_session_judge_reads_each_closed_session_whole(start_sidecar) -> None:
    """Four conversations over OTLP, judged by a scripted model on the real protocol: each
    outcome label comes back, stored with the session and counted; the transcript it read was
    redacted, and held every turn in order."""
    with ScriptedOpenAIServer(judge_model) as server:
        settings = scripted_llm_settings(Path(tempfile.mkdtemp()) / "store.db", server.base_url,
                                         {"failure_threshold": 100})
        sidecar: RunningSidecar = start_sidecar(
            store={"path": str(settings.store.path)}, judging=settings.judging.model_dump(),
            sessions={"idle_timeout_s": 1.0})
        provider = traffic.exporting_to(sidecar.grpc_endpoint, "shop-bot")
        tracer = provider.get_tracer("chat")
        chats = {
            "c-resolved": [("How long do refunds take?", "Refunds take 5 days.", None),
                           ("thanks, that works", "Glad to help.", None)],
            "c-escalated": [("My card was charged twice, mail me at ana.lopez@example.com",
                             "One charge is a hold.", None),
                            ("useless. talk to a human", "I am connecting you to an agent.", None)],
            "c-unresolved": [("Where is order A-9?", "I could not find order A-9.", None)],
            "c-abandoned": [("Why was I charged twice??", "Charges show within 3 days.", -1.0)],
        }
        for conversation, turns in chats.items():
            for n, (question, answer, rating) in enumerate(turns, 1):
                with tracer.start_as_current_span("turn"):
                    record.question(question, route="support")
                    record.session(conversation, end=n == len(turns) and
                                   conversation != "c-abandoned")  # left to time out
                    record.answer(answer)
                    if rating is not None:
                        record.feedback(rating)
        provider.shutdown()

        store = sidecar.sidecar.store.sync
        wait_until(lambda: sum(s["judge_state"] == "judged" for s in store.list_sessions()) == 4,
                   60, "four sessions judged")
        judged = {s["conversation_id"]: (s["judged_outcome"], s["frustration"], s["judge"])
                  for s in store.list_sessions()}
        assert judged == {
            "c-resolved": ("resolved", "none", "tenant-llm"),
            "c-escalated": ("escalated", "some", "tenant-llm"),
            "c-unresolved": ("unresolved", "none", "tenant-llm"),
            "c-abandoned": ("abandoned", "high", "tenant-llm")}

        def counted(outcome: str) -> float:
            return sum(sidecar.metric("assistant_session_verdicts_total", service="shop-bot",
                                      route="support", judge="tenant-llm", outcome=outcome,
                                      frustration=f) for f in ("none", "some", "high"))

        # A verdict is counted once it is stored: the store's row can be read a moment earlier.
        outcomes = ("resolved", "escalated", "unresolved", "abandoned")
        wait_until(lambda: [counted(o) for o in outcomes] == [1] * 4, 30,
                   "each outcome counted once")
        [escalated] = [r["messages"][1]["content"] for r in server.requests
                       if "conversation between a user" in r["messages"][0]["content"]
                       and "talk to a human" in r["messages"][1]["content"]]
        assert "ana.lopez@example.com" not in escalated and "<EMAIL_1>" in escalated
        assert escalated.index("[1] User: My card") < escalated.index("[2] User: useless")
        with urllib.request.urlopen(f"{sidecar.admin_url}/ui/sessions?outcome=escalated",
                                    timeout=10) as page:
            listed = page.read().decode()
        assert 'title="read whole by the scripted model">escalated</span>, frustration some' in listed
