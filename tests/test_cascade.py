"""The cascade (judging.cascade): the local judge decides what it is sure of, the LLM judge the
rest, against a scripted OpenAI-compatible server over real HTTP. Bands are set so that a part is
surely decided ([-2, -2]: every score is above, positive; the no-answer band [2, 2]: every
probability below, the answer answers), or surely asked ([-2, 2]: every score inside)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from prometheus_client import CollectorRegistry

from monitor.config import (
    CascadeSettings,
    LLMEndpointSettings,
    LLMJudgingSettings,
    LocalJudgeSettings,
    Settings,
)
from monitor.judges.cascade import (
    LOCAL,
    Band,
    Calibration,
    band_of,
    calibrated,
    calibration,
    decide,
    uncertainty_band,
)
from monitor.judges.claim_support import MODELS
from monitor.judges.llm import LLMJudge
from monitor.judges.local import LocalJudge
from monitor.model import AssistantTurn, RetrievedDocument
from monitor.telemetry import Metrics
from monitor.verdict import Verdict
from tests.conftest import link_model_files
from tests.fakes.judge_model import judge_model
from tests.fakes.openai_server import Reply, ScriptedOpenAIServer
from tests.test_llm_judges import _made, close_judges  # noqa: F401  (closes the judges made)

pytestmark = pytest.mark.integration  # a scripted LLM endpoint, the sidecar

SURE, UNSURE = (-2.0, -2.0), (-2.0, 2.0)
ALL_SURE = {"context_relevance": SURE, "answer_relevance": SURE, "no_answer": (2.0, 2.0),
            "groundedness": SURE}
DOCS = [RetrievedDocument(id="kb-1", content="Refunds are issued within 30 days of purchase. "
                          "Returns need the original receipt."),
        RetrievedDocument(id="kb-2", content="Our offices close on public holidays.")]
ANSWER = "Refunds are issued within 30 days. You need the original receipt. Happy to help!"


@pytest.fixture(scope="module")
def local() -> LocalJudge:
    return LocalJudge(LocalJudgeSettings())


def cascade_judge(server: ScriptedOpenAIServer, local: LocalJudge, metrics: Metrics | None = None,
                  **bands: tuple[float, float] | float | None) -> LLMJudge:
    settings = LLMJudgingSettings(endpoints=[LLMEndpointSettings(
        name="judge-a", base_url=server.base_url, model="m", max_retries=0, timeout_s=10)],
        circuit_breaker={"failure_threshold": 1, "reset_timeout_s": 60})
    judge = LLMJudge(settings.endpoints[0], settings, metrics or Metrics(CollectorRegistry()),
                     evaluators=local, cascade=CascadeSettings(enabled=True, **{**ALL_SURE, **bands}))
    _made.append(judge)
    return judge


def turn(answer: str = ANSWER, question: str = "How long do refunds take, and what do I need?"
         ) -> AssistantTurn:
    return AssistantTurn(trace_id="c" * 32, question=question, answer=answer, documents=DOCS)


def prompt_of(request: dict[str, Any]) -> str:
    return request["response_format"]["json_schema"]["name"]


def test_the_band_holds_the_scores_where_the_dev_split_is_unsure() -> None:
    rng = np.random.default_rng(7)
    scores = rng.random(4000)
    labels = (rng.random(4000) < scores).astype(int)  # P(positive | score) = score
    low, high = uncertainty_band(scores, labels, 0.9)
    assert 0.03 < low < 0.2 and 0.8 < high < 0.97
    # separated classes: an empty band, at the first positive
    assert uncertainty_band([0.1, 0.2, 0.8, 0.9] * 10, [0, 0, 1, 1] * 10, 0.95) == (0.8, 0.8)
    distinct, probability = calibrated([1, 1, 2, 3], [1, 0, 0, 1])  # pooled: never decreasing
    assert list(distinct) == [1, 2, 3] and list(np.round(probability, 3)) == [0.333, 0.333, 1.0]
    assert (decide(0.9, Band(0.2, 0.8)), decide(0.1, Band(0.2, 0.8)),
            decide(0.5, Band(0.2, 0.8)), decide(None, Band(0.2, 0.8))) == (True, False, None, None)


def test_the_band_is_refitted_for_the_share_of_positives_in_the_traffic() -> None:
    rng = np.random.default_rng(11)
    scores = rng.random(40_000)
    labels = (rng.random(40_000) < scores).astype(int)  # P(positive | score) = score: half positive
    fit = calibration(scores, labels)
    assert band_of(fit, 0.9) == uncertainty_band(scores, labels, 0.9)
    # The same pairs where nine in ten are positive (the negatives thinned out) are sure at lower
    # scores: the band refitted for that share is the one fitted on them.
    positive = labels == 1
    kept = positive | (rng.random(40_000) < positive.sum() / (9 * (~positive).sum()))
    low, high = band_of(fit, 0.9, share=0.9)
    expected = uncertainty_band(scores[kept], labels[kept], 0.9)
    assert abs(low - expected.low) < 0.02 and abs(high - expected.high) < 0.03
    assert high < band_of(fit, 0.9).high - 0.3  # P = score: sure at 0.9 before, at 0.5 now


async def test_a_paraphrase_the_model_is_fairly_sure_of_is_settled_where_claims_mostly_hold(
        local: LocalJudge) -> None:
    # bench/judge_cost.py's warranty answer: its second claim paraphrases the second document
    docs = [RetrievedDocument(id="w-1", content="The Pulse smart watch comes with a two-year "
                              "limited warranty covering manufacturing defects in materials and "
                              "workmanship under normal use."),
            RetrievedDocument(id="w-2", content="The warranty does not cover accidental damage, "
                              "water damage, or batteries after 12 months. Proof of purchase is "
                              "required for all claims.")]
    warranty = AssistantTurn(
        trace_id="e" * 32, question="What does the warranty on the Pulse smart watch cover?",
        answer="Your Pulse smart watch has a two-year limited warranty against manufacturing "
               "defects. You will need your proof of purchase to file a claim.", documents=docs)
    support = local.judge_sync(warranty).get("groundedness").claims[1].support
    card = local.claim_support.card["band"]
    refitted = band_of(Calibration(**card["calibration"]), card["accuracy"], 0.85)
    assert refitted.high <= support < card["high"]  # sure at 85 % supported, not at dev's 49 %
    decided = {}
    for share in (0.85, None):
        with ScriptedOpenAIServer(judge_model) as server:
            result = await cascade_judge(server, local, groundedness=None,
                                         supported_share=share).judge(warranty)
        claim = result.get("groundedness").claims[1]
        decided[share] = (claim.decided_by, claim.label)
    assert decided == {0.85: (LOCAL, "inferable"), None: ("judge-a", "ungrounded")}


async def test_a_turn_the_local_judge_is_sure_of_costs_no_llm_call(local: LocalJudge) -> None:
    metrics = Metrics(CollectorRegistry())
    with ScriptedOpenAIServer(judge_model) as server:
        result = await cascade_judge(server, local, metrics).judge(turn())
        assert server.requests == []
    assert result.calls == 0 and result.input_tokens == 0
    assert result.judge == "judge-a" and "claim_support@" in (result.model or "")
    context, grounded = result.get("context_relevance"), result.get("groundedness")
    assert [d.decided_by for d in context.documents] == ["local", "local"]
    assert [d.index for d in context.documents] == [1, 2]
    assert {c.decided_by for c in grounded.claims} == {"local"}
    assert result.get("completeness").signals.decided_by == "local"
    decided = metrics.cascade_decisions
    assert decided.labels("judge-a", "document", "local")._value.get() == 2
    assert decided.labels("judge-a", "answer", "local")._value.get() == 1
    assert decided.labels("judge-a", "claim", "local")._value.get() == len(grounded.claims)
    assert decided.labels("judge-a", "claim", "llm")._value.get() == 0


async def test_only_the_unsure_claims_are_sent_and_labelled_by_the_llm(local: LocalJudge) -> None:
    with ScriptedOpenAIServer(judge_model) as server:
        alone = await local.judge(turn())
        result = await cascade_judge(server, local, groundedness=UNSURE).judge(turn())
        [request] = server.requests  # no document call: the documents are sure
    assert prompt_of(request) == "answer_claims"
    checkable = [c.claim for c in alone.get("groundedness").claims if c.label != "generic"]
    user = request["messages"][1]["content"]
    assert re.findall(r"^<\d+> (.*)$", user, re.MULTILINE) == checkable
    schema = request["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["claims"]["maxItems"] == len(checkable)
    assert schema["properties"]["documents"]["maxItems"] == 0
    assert "Documents to label: (none)" in user
    claims = result.get("groundedness").claims
    assert [c.claim for c in claims] == [c.claim for c in alone.get("groundedness").claims]
    assert [c.decided_by for c in claims] == [
        "judge-a" if c.claim in checkable else "local" for c in claims]
    assert [c.label for c in claims][:2] == ["inferable", "inferable"]
    assert all(c.reasoning for c in claims if c.claim in checkable)
    assert result.calls == 1 and result.prompt_version == "answer_claims@3"
    # the LLM was asked about the answer, so its labels decide the answer
    assert result.get("completeness").signals.decided_by == "judge-a"
    assert result.get("groundedness").signals.decided_by == "+".join(
        sorted({c.decided_by for c in claims}))


async def test_an_invented_claim_the_llm_is_asked_about_is_ungrounded(local: LocalJudge) -> None:
    answer = "Refunds are issued within 30 days. Each refund includes a bonus voucher for a spa."
    with ScriptedOpenAIServer(judge_model) as server:
        result = await cascade_judge(server, local, groundedness=UNSURE).judge(turn(answer))
    labels = {c.claim: c.label for c in result.get("groundedness").claims}
    assert labels == {"Refunds are issued within 30 days.": "inferable",
                      "Each refund includes a bonus voucher for a spa.": "ungrounded"}
    assert result.get("groundedness").score == 0.5


async def test_unsure_documents_and_claims_are_asked_in_one_call(local: LocalJudge) -> None:
    with ScriptedOpenAIServer(judge_model) as server:
        result = await cascade_judge(server, local, context_relevance=UNSURE,
                                     context_relevance_model=UNSURE,
                                     groundedness=UNSURE).judge(turn())
        [request] = server.requests  # the documents ride along with the claims
    assert prompt_of(request) == "answer_claims"
    user = request["messages"][1]["content"]
    assert "Documents to label: [1], [2]" in user
    assert user.count("Refunds are issued within 30 days of purchase.") == 1  # sent once
    schema = request["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["documents"]["maxItems"] == 2
    documents = result.get("context_relevance").documents
    assert [(d.index, d.label, d.decided_by) for d in documents] == [
        (1, "relevant", "judge-a"), (2, "irrelevant", "judge-a")]
    assert result.get("context_relevance").score == 0.5
    assert {c.decided_by for c in result.get("groundedness").claims} >= {"judge-a"}
    assert result.calls == 1


async def test_unsure_documents_alone_go_to_the_llm_unless_they_back_the_answer(
        local: LocalJudge) -> None:
    # Both local opinions of the documents unsure, the answer's claims surely supported by the
    # first: it holds the answer, so it is relevant without asking; the second is asked.
    with ScriptedOpenAIServer(judge_model) as server:
        result = await cascade_judge(server, local, context_relevance=UNSURE,
                                     context_relevance_model=UNSURE).judge(turn())
        [request] = server.requests
    assert prompt_of(request) == "context_relevance"
    assert "Our offices close" in request["messages"][1]["content"]
    assert "Refunds are issued within 30 days of purchase" not in request["messages"][1]["content"]
    first, second = result.get("context_relevance").documents
    assert (first.label, first.decided_by) == ("relevant", "local")
    assert first.id == "kb-1" and "supports the answer's claim" in first.reasoning
    assert (second.label, second.decided_by) == ("irrelevant", "judge-a")


async def test_the_models_relevance_decides_a_document_the_cosine_leaves_unsure() -> None:
    local = LocalJudge(LocalJudgeSettings(), read_relevance=True)
    alone = await local.judge(turn())
    relevance = [d.relevance for d in alone.get("context_relevance").documents]
    assert relevance[0] > 0.5 > relevance[1]  # the refund policy, the office hours
    between = (relevance[1] + 0.01, relevance[0] - 0.01)  # each one surely decided
    with ScriptedOpenAIServer(judge_model) as server:
        result = await cascade_judge(server, local, context_relevance=UNSURE,
                                     context_relevance_model=between,
                                     groundedness=(2.0, 2.0)).judge(turn())  # no evidence
        assert server.requests == []
        documents = result.get("context_relevance").documents
        assert [(d.label, d.decided_by) for d in documents] == [("relevant", "local"),
                                                                  ("irrelevant", "local")]
        # where the cosine is sure the other way, the two disagree: the LLM decides
        result = await cascade_judge(server, local, context_relevance=(2.0, 2.0),
                                     context_relevance_model=between,
                                     groundedness=(2.0, 2.0)).judge(turn())
        [request] = server.requests
    assert prompt_of(request) == "context_relevance"
    assert [d.decided_by for d in result.get("context_relevance").documents] == [
        "judge-a", "local"]


async def test_an_answer_that_a_document_surely_supports_does_not_decline(local: LocalJudge
                                                                          ) -> None:
    # An apology before the instructions: the no-answer detector, reading the wording alone,
    # takes it for a refusal; the documents surely support what it says, so it is not asked.
    documents = [RetrievedDocument(id="kb-7", content=(
        "To factory-reset the Orbit robot vacuum, hold the recessed reset button for 10 seconds "
        "until the status light blinks amber, then wait about two minutes for it to restart."))]
    answer = ("I don't have complete information, sorry: hold the recessed reset button for 10 "
              "seconds until the status light blinks amber.")
    reset_turn = AssistantTurn(trace_id="e" * 32, answer=answer, documents=documents,
                               question="How do I reset my Orbit robot vacuum to factory settings?")
    alone = await local.judge(reset_turn)
    completeness = alone.get("completeness")
    assert completeness.label == "complete"
    assert local.declines(answer) >= local.no_answer_threshold
    assert completeness.signals.no_answer_probability is None
    assert "it does not decline" in completeness.rationale
    assert max(c.support for c in alone.get("groundedness").claims) >= local.claim_support.sure
    with ScriptedOpenAIServer(judge_model) as server:
        result = await cascade_judge(server, local, no_answer=UNSURE).judge(reset_turn)
        assert server.requests == []  # the supported claim says it answers
    assert result.get("completeness").signals.decided_by == "local"


async def test_a_sure_refusal_is_settled_locally(local: LocalJudge) -> None:
    refusal = "I'm sorry, I could not find any information about that in the documents."
    band = local.no_answer.band  # the shipped one
    with ScriptedOpenAIServer(judge_model) as server:
        result = await cascade_judge(server, local, no_answer=(band["low"], band["high"])
                                     ).judge(turn(refusal))
        assert server.requests == []
    assert result.get("completeness").label == "no_answer"
    assert result.get("completeness").signals.no_answer_probability >= band["high"]
    assert result.get("groundedness") is None


async def test_unsure_whether_it_answers_the_llm_judges_the_answer(local: LocalJudge) -> None:
    with ScriptedOpenAIServer(judge_model) as server:
        result = await cascade_judge(server, local, no_answer=UNSURE,
                                     groundedness=UNSURE).judge(turn())
        [request] = server.requests
    assert prompt_of(request) == "answer_claims"  # the local claims, labelled by the LLM
    assert result.get("completeness").signals.decided_by == "judge-a"
    assert result.get("answer_relevance").signals.decided_by == "judge-a"
    # a refusal has no local claims (the local judge reads none of a no-answer): the LLM judges
    # the whole answer, claims of its own, as without the cascade
    refusal = "I'm sorry, I could not find any information about that in the documents."
    with ScriptedOpenAIServer(judge_model) as server:
        result = await cascade_judge(server, local, no_answer=UNSURE).judge(turn(refusal))
        [request] = server.requests  # (the documents are sure)
    assert prompt_of(request) == "answer"
    assert result.get("completeness").label == "no_answer"
    assert result.get("completeness").signals.decided_by == "judge-a"


async def test_an_outage_does_not_stop_the_turns_the_local_judge_is_sure_of(local: LocalJudge
                                                                             ) -> None:
    with ScriptedOpenAIServer(lambda request: Reply(status=503)) as server:
        judge = cascade_judge(server, local)
        result = await judge.judge(turn())
        assert server.requests == []
    assert judge.endpoint.breaker.state == "closed" and result.get("groundedness") is not None


async def test_personal_data_in_a_claim_is_redacted_as_in_the_answer(local: LocalJudge) -> None:
    docs = [RetrievedDocument(id="kb-9", content="Refunds are approved by Maria Kowalczyk.")]
    question = "Who approves refunds?"
    answer = "Refunds are approved by Maria Kowalczyk, our finance lead."
    with ScriptedOpenAIServer(judge_model) as server:
        await cascade_judge(server, local, groundedness=UNSURE).judge(AssistantTurn(
            trace_id="d" * 32, question=question, answer=answer, documents=docs))
        [request] = server.requests
    user = request["messages"][1]["content"]
    assert "Kowalczyk" not in json.dumps(request)
    claim = next(line for line in user.splitlines() if line.startswith("<1> "))
    assert "<PERSON_1>" in claim and "Answer: Refunds are approved by <PERSON_1>" in user


def test_the_cascade_is_configured_with_its_bands(tmp_path: Path) -> None:
    endpoint = {"name": "a", "base_url": "http://127.0.0.1:1/v1", "model": "m"}
    with pytest.raises(ValueError, match="needs an LLM endpoint"):
        Settings(judging={"cascade": {"enabled": True}})
    with pytest.raises(ValueError, match="low <= high"):
        Settings(judging={"llm": {"endpoints": [endpoint]},
                          "cascade": {"enabled": True, "groundedness": [0.9, 0.1]}})
    settings = Settings(judging={"llm": {"endpoints": [endpoint]}, "cascade": {"enabled": True}})
    from monitor.judges.factory import build_judge

    judge = build_judge(settings, Metrics(CollectorRegistry()))
    card = judge.evaluators.claim_support.card["band"]  # type: ignore[attr-defined]
    # The card's band is its dev calibration's, where half the claims are supported; the claims'
    # band is refitted for answers whose claims are mostly supported (supported_share, 0.85).
    dev = Calibration(**card["calibration"])
    assert band_of(dev, card["accuracy"]) == (card["low"], card["high"])
    refitted = judge.bands.groundedness  # type: ignore[attr-defined]
    assert refitted == band_of(dev, card["accuracy"], 0.85)
    assert refitted.high < card["high"] and refitted.low <= card["low"]
    at_dev_share = build_judge(Settings(judging={
        "llm": {"endpoints": [endpoint]}, "cascade": {"enabled": True, "supported_share": None}}),
        Metrics(CollectorRegistry())).bands  # type: ignore[attr-defined]
    assert tuple(at_dev_share.groundedness) == (card["low"], card["high"])
    with pytest.raises(ValueError, match="supported_share"):
        Settings(judging={"llm": {"endpoints": [endpoint]},
                          "cascade": {"enabled": True, "supported_share": 1.0}})
    # An older card, without its dev calibration: no band to refit for the share, a clear error
    older = json.loads((MODELS / "claim_support.json").read_text())
    del older["band"]["calibration"]
    (tmp_path / "claim_support.json").write_text(json.dumps(older))
    link_model_files(older, tmp_path)
    with pytest.raises(ValueError, match="no dev calibration .*supported_share"):
        build_judge(Settings(judging={
            "llm": {"endpoints": [endpoint]}, "cascade": {"enabled": True},
            "local": {"claim_support_model": str(tmp_path / "claim_support.json")}}),
            Metrics(CollectorRegistry()))
    # The documents' cosine: where the local judge itself trusts it alone, unless configured
    assert judge.bands.context_relevance == Band(*settings.judging.local.context_relevance_band)  # type: ignore[attr-defined]
    settings = Settings(judging={"llm": {"endpoints": [endpoint]},
                                 "cascade": {"enabled": True, "context_relevance": [0.2, 0.4]}})
    judge = build_judge(settings, Metrics(CollectorRegistry()))
    assert judge.bands.context_relevance == Band(0.2, 0.4)  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="low <= high"):
        Settings(judging={"local": {"context_relevance_band": [0.5, 0.1]}})


def test_who_decided_is_kept_with_the_verdict() -> None:
    from monitor.verdict import ClaimLabel, DocumentLabel, Signals

    verdict = Verdict("groundedness", score=0.5, claims=(
        ClaimLabel(claim="a", label="inferable", decided_by="local"),
        ClaimLabel(claim="b", label="ungrounded", decided_by="judge-a")),
        signals=Signals(decided_by="judge-a+local"))
    assert Verdict.from_dict(json.loads(json.dumps(verdict.to_dict()))) == verdict
    documents = Verdict("context_relevance", score=1.0, documents=(
        DocumentLabel(index=1, label="relevant", decided_by="local"),))
    assert Verdict.from_dict(documents.to_dict()).documents[0].decided_by == "local"


def test_the_sidecar_judges_through_the_cascade(start_sidecar) -> None:  # noqa: ANN001
    from monitor.store import Store
    from tests import traffic
    from tests.test_evaluation_export import _send_turn
    from tests.waiting import wait_until

    with ScriptedOpenAIServer(judge_model) as server:
        sidecar = start_sidecar(judging={
            "llm": {"endpoints": [{"name": "judge-a", "base_url": server.base_url, "model": "m"}]},
            "cascade": {"enabled": True, "groundedness": UNSURE}})  # every claim to the LLM
        trace_id, _ = _send_turn(sidecar, traffic.INVENTED[0])
        store = Store(sidecar.sidecar.settings.store.path)
        wait_until(lambda: store.state(trace_id) == "judged", 60, "the turn judged")
        assert {prompt_of(r) for r in server.requests} <= {"answer_claims", "context_relevance"}
    grounded = next(v for v in store.show(trace_id)["verdicts"] if v["metric"] == "groundedness")
    store.close()
    assert grounded["judge"] == "judge-a" and "claim_support@" in grounded["model"]
    assert {c["decided_by"] for c in grounded["details"]["claims"]} <= {"judge-a", "local"}
    assert "judge-a" in grounded["details"]["decided_by"]
    assert sidecar.metric("assistant_judge_cascade_decisions_total", judge="judge-a",
                          part="claim", decided_by="llm") >= 1
