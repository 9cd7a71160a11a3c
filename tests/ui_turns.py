"""Judged turns for the on-call pages' tests and bench: written into a real Store through its
public calls (enqueue, claim, complete), with verdicts shaped as the judges write them (the
local judge's claims carry their evidence window, an LLM judge's its reasoning).

    ids = fill(store)            # the named turns below -> their trace ids
    big = big_turn(20, 300)      # a turn of 20 documents of ~300 words, and its verdicts
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

from monitor.model import AssistantTurn, Feedback, RetrievedDocument, ToolCall
from monitor.store import Store
from monitor.verdict import (
    CallLabel,
    ClaimLabel,
    DocumentLabel,
    JudgeResult,
    Signals,
    Verdict,
)

LOCAL_MODEL = "claim_support@1a2b3c4d minilm_l6@5e6f7a8b"
NOW = 1_800_000_000.0  # 2027-01-15T08:00:00Z: "now" for the stored turns

# What a hostile trace may carry: each would change the page's title, or add an element with the
# id `pwned`, if it ran or were parsed as markup.
XSS = [
    "<script>document.title='pwned-script'</script>",
    "<img src=x onerror=\"document.title='pwned-img';"
    "document.body.appendChild(document.createElement('b')).id='pwned'\">",
    "<svg onload=\"document.title='pwned-svg'\"></svg>",
    "\"><script>document.title='pwned-attr'</script>",
    "<a id=pwned href=\"javascript:document.title='pwned-link'\">click</a>",
    "<style>body{display:none}</style>",
    "</textarea><iframe src=\"https://example.com/\"></iframe>",
]
PAYLOAD = " ".join(XSS)


def trace_id(n: int) -> str:
    """Ids that differ in their first digits (the list shows 12): n = 1 -> 1111…, 10 -> aaaa…"""
    return (f"{n:x}" * 32)[:32]


def window(content: str, passage: str) -> tuple[int, int]:
    start = content.index(passage)
    return start, start + len(passage)


@contextmanager
def at_time(when: float) -> Iterator[None]:
    """The store's clock set to `when` (received_at, judged_at, created_at)."""
    with mock.patch("monitor.store.time.time", return_value=when):
        yield


def judge(store: Store, turn: AssistantTurn, results: list[JudgeResult], reason: str = "rate",
          probability: float = 1.0, when: float = NOW) -> str:
    """Store `turn` as sampled and judged with `results` (at `when`)."""
    with at_time(when):
        assert store.enqueue(turn, reason, probability)
        claimed = store.claim(now=when)
        assert claimed is not None and claimed.trace_id == turn.trace_id
        store.complete(turn.trace_id, results)
    return turn.trace_id


def local(*verdicts: Verdict) -> JudgeResult:
    return JudgeResult("local", list(verdicts), latency_s=0.09, model=LOCAL_MODEL)


def relevance(docs: list[RetrievedDocument], relevant: list[bool]) -> Verdict:
    return Verdict("context_relevance", score=sum(relevant) / len(relevant),
                   rationale=f"{sum(relevant)} of {len(relevant)} documents relevant to the question",
                   documents=tuple(DocumentLabel(id=d.id, label="relevant" if r else "irrelevant",
                                                 similarity=0.61 if r else 0.12)
                                   for d, r in zip(docs, relevant, strict=True)))


def grounded(docs: list[RetrievedDocument], claims: list[tuple[str, str, int, str]]) -> Verdict:
    """Claims (text, label, document index, passage) as the local judge writes them."""
    labelled = []
    for text, label, index, passage in claims:
        content = docs[index].content or ""
        labelled.append(ClaimLabel(
            claim=text, label=label,  # type: ignore[arg-type]
            support=0.93 if label == "inferable" else 0.04, lexical=0.5, similarity=0.7,
            evidence=docs[index].id or f"document {index + 1}", window=window(content, passage),
            passage=passage))
    ok = sum(c.label == "inferable" for c in labelled)
    checked = sum(c.label != "generic" for c in labelled)
    return Verdict("groundedness", score=ok / checked if checked else 1.0,
                   rationale=f"{ok} of {checked} checkable claims supported by the documents "
                             f"({len(labelled) - checked} generic)", claims=tuple(labelled))


def answered(label: str = "complete") -> list[Verdict]:
    return [Verdict("answer_relevance", label="relevant", score=0.72, rationale="on topic",
                    signals=Signals(similarity=0.72)),
            Verdict("completeness", label=label, rationale="answers the question",
                    signals=Signals(no_answer_probability=0.03))]


REFUNDS = RetrievedDocument(id="kb-refunds", score=0.82, content=(
    "Refunds are issued within 30 days of purchase to the original payment method. Items must "
    "be returned unused, in their original packaging, with the receipt."))
SHIPPING = RetrievedDocument(id="kb-shipping", score=0.41, content=(
    "Standard shipping takes 3 to 5 business days; express shipping takes 1 day."))
PLANS = RetrievedDocument(id="kb-plans", score=0.77, content=(
    "The Pro plan costs 12 euros a month and includes priority support. Annual billing saves "
    "two months."))


def fill(store: Store) -> dict[str, str]:
    """The turns the page tests read, by name -> trace id (each received a minute apart, the
    newest last)."""
    ids: dict[str, str] = {}
    at = iter(range(0, 3600, 60))

    def when() -> float:
        return NOW - 3600 + next(at)

    # A grounded answer (support), one of a conversation of three.
    turn = AssistantTurn(trace_id=trace_id(1), service="shop", route="support",
                         question="How long do I have to ask for a refund?",
                         documents=[REFUNDS, SHIPPING], conversation_id="conv-7",
                         answer="You can ask for a refund within 30 days of purchase.")
    ids["grounded"] = judge(store, turn, [local(
        relevance(turn.documents, [True, False]), *answered(),
        grounded(turn.documents, [(turn.answer or "", "inferable", 0,
                                   "Refunds are issued within 30 days of purchase")]))],
        probability=0.25, when=when())

    # An invented discount: one claim ungrounded, its evidence window in kb-plans.
    turn = AssistantTurn(trace_id=trace_id(2), service="shop", route="billing",
                         question="Is there a student discount on the Pro plan?",
                         documents=[PLANS], conversation_id="conv-7",
                         answer="The Pro plan costs 12 euros a month. Students get 50% off every "
                                "plan.", feedback=Feedback(score=-1.0, comment="wrong"))
    ids["ungrounded"] = judge(store, turn, [local(
        relevance(turn.documents, [True]), *answered(),
        grounded(turn.documents, [
            ("The Pro plan costs 12 euros a month.", "inferable", 0,
             "The Pro plan costs 12 euros a month"),
            ("Students get 50% off every plan.", "ungrounded", 0,
             "Annual billing saves two months.")]))],
        reason="negative_feedback", probability=1.0, when=when())

    # An agent's trajectory: three tool calls, the last one failed.
    turn = AssistantTurn(
        trace_id=trace_id(3), service="shop", route="orders", conversation_id="conv-7",
        question="Cancel order 1042 and refund it.",
        tool_calls=[ToolCall(name="lookup_order", arguments={"order_id": "1042"},
                             result={"status": "shipped"}),
                    ToolCall(name="check_policy", arguments={"topic": "cancellation"},
                             result="shipped orders are returned, not cancelled"),
                    ToolCall(name="cancel_order", arguments={"order_id": "1042"},
                             error="order service timed out")],
        answer="Sorry, I could not cancel order 1042.")
    ids["tools"] = judge(store, turn, [local(*answered()), JudgeResult(
        "llm:judge-a", [Verdict("tool_use", score=0.67, rationale="2 of 3 calls needed",
                                calls=(CallLabel(name="lookup_order", needed="yes",
                                                 arguments_supported="yes", reasoning="find it"),
                                       CallLabel(name="check_policy", needed="no",
                                                 arguments_supported="yes",
                                                 reasoning="the status says enough"),
                                       CallLabel(name="cancel_order", needed="yes",
                                                 arguments_supported="yes",
                                                 reasoning="asked for")))],
        calls=1, input_tokens=900, output_tokens=120, latency_s=1.4, prompt_version="tools-v3",
        model="qwen2.5-7b-instruct")], reason="failed_tool_call", when=when())

    # Hostile content everywhere a page shows text.
    hostile_doc = RetrievedDocument(id=XSS[0], score=0.5,
                                    content=f"Opening hours are 9 to 5. {PAYLOAD} Closed on "
                                            "Sundays.")
    turn = AssistantTurn(
        trace_id=trace_id(4), service="shop", route="support", question=f"When? {PAYLOAD}",
        documents=[hostile_doc], model=XSS[1],
        tool_calls=[ToolCall(name=XSS[2], arguments={"q": PAYLOAD}, result=PAYLOAD)],
        answer=f"We open at 9. {XSS[1]} {XSS[0]}", conversation_id=XSS[3])
    passage = "Opening hours are 9 to 5."
    ids["hostile"] = judge(store, turn, [JudgeResult("llm:judge-a", [
        Verdict("context_relevance", score=1.0, rationale=PAYLOAD, documents=(
            DocumentLabel(index=1, label="relevant", reasoning=PAYLOAD),)),
        Verdict("answer_relevance", label="relevant", rationale=PAYLOAD),
        Verdict("groundedness", score=0.5, rationale=PAYLOAD, claims=(
            ClaimLabel(claim="We open at 9.", label="inferable", reasoning=PAYLOAD,
                       evidence="document 1", window=window(hostile_doc.content or "", passage),
                       passage=passage),
            ClaimLabel(claim=XSS[1], label="ungrounded", reasoning=PAYLOAD,
                       evidence=XSS[4], passage=PAYLOAD)))],
        calls=3, input_tokens=2000, output_tokens=300, latency_s=2.0, prompt_version=XSS[2],
        model=XSS[5])], when=when())

    # The conversation's third turn, on another service: a no-answer.
    turn = AssistantTurn(trace_id=trace_id(5), service="desk", route="support",
                         question="Can I pay with cryptocurrency?", documents=[SHIPPING],
                         conversation_id="conv-7",
                         answer="I could not find information about that.")
    ids["no_answer"] = judge(store, turn, [local(
        relevance(turn.documents, [False]),
        Verdict("answer_relevance", label="irrelevant", score=0.2, rationale="off topic"),
        Verdict("completeness", label="no_answer",
                rationale="the answer declines to answer (no-answer probability 0.97)"))],
        probability=0.1, when=when())
    return ids


WORDS = ("the order refund policy customer account billing invoice plan payment card days "
         "shipping express standard warranty device support ticket agent answer question "
         "within after before during month year price euro discount student annual premium "
         "basic team enterprise seat license renewal cancel return package receipt store "
         "online branch hours weekday weekend holiday").split()


def big_turn(n: int = 20, words: int = 300, seed: int = 42) -> tuple[AssistantTurn,
                                                                     list[JudgeResult]]:
    """A turn of `n` documents of about `words` words, an answer of eight claims each checked
    against a window of one of them, and the verdicts of the local judge and an LLM judge."""
    rng = random.Random(seed)
    docs = [RetrievedDocument(id=f"kb-{i:03d}", score=round(1 - i / (2 * n), 3),
                              content=" ".join(rng.choice(WORDS) for _ in range(words)) + ".")
            for i in range(n)]
    claims: list[tuple[str, str, int, str]] = []
    sentences = []
    for c in range(8):
        index = (c * 3) % n
        content = docs[index].content or ""
        start = rng.randrange(0, len(content) // 2)
        start = content.index(" ", start) + 1
        passage = content[start:start + 300].rsplit(" ", 1)[0]
        sentence = f"Claim {c + 1}: " + " ".join(passage.split()[:12]).capitalize() + "."
        sentences.append(sentence)
        claims.append((sentence, ("inferable", "ungrounded", "generic")[c % 3], index, passage))
    turn = AssistantTurn(trace_id=f"{rng.getrandbits(128):032x}", service="shop",
                         route="support", question="What does the policy say? " * 3,
                         documents=docs, answer=" ".join(sentences), conversation_id="bench",
                         model="assistant-model-1")
    relevant = [i % 4 != 3 for i in range(n)]
    llm_docs = tuple(DocumentLabel(index=i + 1, label="relevant" if r else "irrelevant",
                                   reasoning=f"document {i + 1} {'is' if r else 'is not'} about "
                                             "the policy asked for")
                     for i, r in enumerate(relevant))
    llm_claims = tuple(ClaimLabel(claim=text, label=label,  # type: ignore[arg-type]
                                  reasoning=f"{'stated' if label == 'inferable' else 'not stated'}"
                                            f" in document {index + 1}")
                       for text, label, index, _ in claims)
    results = [local(relevance(docs, relevant), *answered(), grounded(docs, claims)),
               JudgeResult("llm:judge-a", [
                   Verdict("context_relevance", score=sum(relevant) / n,
                           rationale="most documents are about the policy", documents=llm_docs),
                   *answered(),
                   Verdict("groundedness", score=0.5, rationale="half the claims are stated",
                           claims=llm_claims)],
                   calls=3, input_tokens=9000, output_tokens=700, latency_s=3.2,
                   prompt_version="rag-v5", model="qwen2.5-7b-instruct")]
    return turn, results


def shown_value(shown: dict[str, Any], metric: str, judge_name: str = "local") -> Any:
    return next(v for v in shown["verdicts"] if v["metric"] == metric and v["judge"] == judge_name)
