"""The shipped claim-support model: the file is the one trained and tested, it loads without a
network, it tells a grounded answer from an absent or invented one, and it ranks the passage's
own answer above a distractor or a swapped number (held-out figures: models/claim_support.json,
from training/claim_support/export.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from monitor.config import LocalJudgeSettings
from monitor.judges.claim_support import MODELS, ClaimSupportModel, declines_pair, file_sha256
from monitor.judges.local import LocalJudge
from monitor.model import AssistantTurn, RetrievedDocument
from tests.conftest import link_model_files

SHA256 = "8e1d0003847e9bcc2ed00dbe8527f312638045f9cb558f6defa770bbfc5bc67e"
SECOND_SHA256 = "2a2ea51ad3993f0d6db8c0f23e69aab3b4723750d73200ddf28b9593d66c3895"


@pytest.mark.unit
def test_the_shipped_model_is_the_one_its_card_describes() -> None:
    card = json.loads((MODELS / "claim_support.json").read_text())
    assert file_sha256(MODELS / card["file"]) == card["sha256"] == SHA256
    assert (MODELS / card["file"]).stat().st_size <= 30 * 2**20
    second = card["second_opinion"]
    assert file_sha256(MODELS / second["file"]) == second["sha256"] == SECOND_SHA256
    assert (MODELS / second["file"]).stat().st_size <= 30 * 2**20
    for figure in ("vitaminc", "qa", "qa/distractor", "qa/swapped", "qa/absent"):
        assert card["test"][figure]["pairs"] > 100, figure  # measured on a real test split
    # the cap of a contradicted bound: dev's share of supported pairs among many such
    assert card["bounds"]["dev_pairs"] > 100 and card["bounds"]["probability"] < card["threshold"]


@pytest.mark.integration
def test_it_loads_and_judges_without_a_network() -> None:
    """Every socket refused in the process: nothing is fetched to load or run the models."""
    program = """
import socket
def refused(*args, **kwargs):
    raise OSError("network used")
socket.socket = refused
socket.create_connection = refused
from monitor.judges.claim_support import ClaimSupportModel
from monitor.judges.embeddings import Embedder
print(ClaimSupportModel().probabilities([("Who wrote it? Ada.", "Ada wrote it.")])[0] > 0)
print(Embedder().passage(["Ada wrote it."]).shape)
"""
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin"}, check=True)
    assert out.stdout.split("\n")[:2] == ["True", "(1, 384)"], out.stderr


@pytest.fixture(scope="module")
def judge() -> LocalJudge:
    return LocalJudge(LocalJudgeSettings())


HEAT = RetrievedDocument(id="film", content=(
    "Heat is a 1995 American crime film written and directed by Michael Mann. It stars Al Pacino "
    "and Robert De Niro, with Val Kilmer, Tom Sizemore and Jon Voight in supporting roles."))
RETURNS = RetrievedDocument(id="policy", content=(
    "Returns policy. Refund requests must be submitted within 30 days of delivery. Items bought "
    "on sale can be exchanged within 15 days but are not refunded. Requests are approved by "
    "the store manager, Priya Natarajan, and filed by the customer."))


RESET = RetrievedDocument(id="reset", content=(
    "To factory-reset the Aurora X2 router, hold the recessed reset button for 10 seconds until "
    "the status light blinks amber, then wait about two minutes for it to restart."))
SHIPPING = RetrievedDocument(id="shipping", content=(
    "Express shipping takes 1 day; standard shipping takes 3 to 5 business days."))


@pytest.mark.unit
@pytest.mark.parametrize(("question", "answer", "document", "label"), [
    ("Who directed Heat?", "Michael Mann.", HEAT, "inferable"),
    ("Who directed Heat?", "Steven Spielberg.", HEAT, "ungrounded"),  # absent from the passage
    ("Who directed Heat?", "Al Pacino.", HEAT, "ungrounded"),  # another name of the passage
    ("What are the return windows?", "Sale items can be exchanged within 15 days.", RETURNS,
     "inferable"),
    # the passage's other number in the wrong role
    ("What are the return windows?", "Sale items can be exchanged within 30 days.", RETURNS,
     "ungrounded"),
    ("Who approves returns?", "The store manager, Priya Natarajan.", RETURNS, "inferable"),
    ("Who approves returns?", "The customer approves them.", RETURNS, "ungrounded"),
    # A support answer's paraphrase under a how question: pass 5 gave it 0.05, having learnt
    # that under a question a long claim is supported only word for word.
    ("How do I reset my Aurora X2 router to factory settings?",
     "Hold the reset button on your Aurora X2 router for 10 seconds until the light blinks "
     "amber, then let it restart for about two minutes.", RESET, "inferable"),
    ("How do I reset my Aurora X2 router to factory settings?",
     "Hold the reset button for 30 seconds until the light blinks amber.", RESET, "ungrounded"),
    # an invented instruction against an unrelated document
    ("How do I reset my password?", "Open Settings, choose Security and press Reset password.",
     SHIPPING, "ungrounded"),
])
def test_fixed_verdicts(judge: LocalJudge, question: str, answer: str,
                        document: RetrievedDocument, label: str) -> None:
    result = judge.judge_sync(AssistantTurn(trace_id="d" * 32, question=question, answer=answer,
                                            documents=[document]))
    (claim,) = result.get("groundedness").claims
    assert claim.label == label, claim


@pytest.mark.unit
def test_a_bound_the_document_contradicts_is_ungrounded_and_says_why(judge: LocalJudge) -> None:
    """VitaminC's claim (dev split) under a question: the model alone reads a bound against the
    passage's own figure near its threshold; the figure decides."""
    document = RetrievedDocument(id="retailer", content=(
        "Foot Locker Retail, Inc. is an American sportswear and footwear retailer, with its "
        "headquarters in Midtown Manhattan, New York City, and operating in 28 countries worldwide."))
    result = judge.judge_sync(AssistantTurn(
        trace_id="b" * 32, question="In how many countries does Foot Locker operate?",
        answer="Foot Locker operates in less than 15 countries worldwide.", documents=[document]))
    (claim,) = result.get("groundedness").claims
    assert claim.label == "ungrounded", claim
    cap = judge.claim_support.bound_cap
    assert cap is not None and claim.support is not None and claim.support <= cap, claim
    assert claim.contradicts == "“less than 15 countries” against “28 countries”"
    result = judge.judge_sync(AssistantTurn(
        trace_id="c" * 32, question="In how many countries does Foot Locker operate?",
        answer="Foot Locker operates in more than 15 countries worldwide.", documents=[document]))
    (claim,) = result.get("groundedness").claims
    assert claim.contradicts is None, claim  # the bound holds: the model alone decides


@pytest.mark.unit
def test_a_paraphrase_it_doubts_is_left_to_the_cascade(judge: LocalJudge) -> None:
    """The model reads a policy paraphrased beside another figure of the passage ("You have 30
    days from delivery" for "within 30 days of delivery", 15 days nearby) as doubtful: inside the
    cascade's band, so that with judging.cascade an LLM decides it."""
    result = judge.judge_sync(AssistantTurn(
        trace_id="f" * 32, question="How long do I have to ask for a refund?",
        answer="You have 30 days from delivery.", documents=[RETURNS]))
    (claim,) = result.get("groundedness").claims
    band = json.loads((MODELS / "claim_support.json").read_text())["band"]
    assert claim.support is not None and band["low"] <= claim.support < band["high"], claim


@pytest.mark.unit
@pytest.mark.parametrize(("question", "right", "wrong", "document"), [
    # another name of the passage in the asked role
    ("Who directed Heat?", "Michael Mann.", "Al Pacino.", HEAT),
    # the passage's other number in the wrong role
    ("How long do I have to ask for a refund?", "You have 30 days from delivery.",
     "You have 15 days from delivery.", RETURNS),
    ("What are the return windows?", "Sale items can be exchanged within 15 days.",
     "Sale items can be exchanged within 30 days.", RETURNS),
])
def test_the_passages_own_answer_is_more_supported_than_a_distractor_or_a_swapped_number(
        judge: LocalJudge, question: str, right: str, wrong: str,
        document: RetrievedDocument) -> None:
    """The passage's own answer ranks above a distractor or a swapped figure (test AUC 0.97 and
    0.98: the card), also where both are paraphrased and doubtful."""
    support = {}
    for answer in (right, wrong):
        result = judge.judge_sync(AssistantTurn(trace_id="e" * 32, question=question,
                                                answer=answer, documents=[document]))
        (claim,) = result.get("groundedness").claims
        support[answer] = claim.support
    assert support[right] > support[wrong], support


@pytest.mark.unit
def test_probabilities_are_cached_by_content() -> None:
    model = ClaimSupportModel()
    pairs = [("Who directed Heat? Michael Mann.", HEAT.content or "")] * 3
    first = model.probabilities(pairs)
    assert model.computed == 1 and len(set(first)) == 1
    assert model.probabilities(pairs[:1])[0] == first[0] and model.computed == 1


REFUNDS = "Refunds are issued within 30 days of purchase."


@pytest.mark.unit
@pytest.mark.parametrize(("question", "document", "expected"), [
    # a short question, a snippet: pass 7 gave 0.09 (it had seen only full questions, windows)
    ("Who directed Heat?", HEAT.content, "relevant"),
    ("How long do refunds take?", REFUNDS, "surely relevant"),
    ("Can I pay with cryptocurrency?", REFUNDS, "irrelevant"),  # pass 7: 0.62
    ("How long do refunds take?", "Our offices close on public holidays.", "surely irrelevant"),
])
def test_the_relevance_it_reads_for_the_cascade(question: str, document: str,
                                                expected: str) -> None:
    """Its second task, the question alone against a document: what decides a question's
    documents, and in the cascade one of two opinions, decided outside the card's relevance band."""
    model = ClaimSupportModel()
    relevance = model.card["relevance"]
    [p] = model.probabilities([(question, document)])
    assert {"relevant": p >= relevance["threshold"],
            "irrelevant": p < relevance["threshold"],
            "surely relevant": p >= relevance["band"]["high"],
            "surely irrelevant": p < relevance["band"]["low"]}[expected], p


def card_model(folder: Path, name: str, onnx: dict[str, Any], **entries: Any) -> ClaimSupportModel:
    """A model of the ONNX file and tokenizer `onnx` (a card or its second opinion) names, from a
    card `name` written in `folder` (beside links to the shipped files) with `entries`."""
    (folder / name).write_text(json.dumps({"temperature": 1.0, "threshold": 0.5, "file": onnx["file"],
                                           "tokenizer": onnx["tokenizer"], **entries}))
    return ClaimSupportModel(folder / name)


@pytest.mark.unit
def test_a_second_opinion_is_read_only_where_the_first_model_is_unsure(tmp_path: Path) -> None:
    """A card naming a second cross-encoder: where the first's calibrated probability is inside
    `reads`, the pair's logit is the mean of the two calibrated logits; elsewhere the first's."""
    shipped = json.loads((MODELS / "claim_support.json").read_text())
    second = shipped["second_opinion"]
    link_model_files(shipped, tmp_path)
    opinion = {"file": second["file"], "tokenizer": second["tokenizer"],
               "first_temperature": 1.5, "temperature": 0.8, "reads": [0.15, 0.9]}
    mixed = card_model(tmp_path, "mixed.json", shipped, second_opinion=opinion)
    pairs = [("Who directed Heat? Michael Mann.", HEAT.content or ""),
             ("Who directed Heat? Steven Spielberg.", HEAT.content or ""),
             ("How long do I have to ask for a refund? You have 30 days from delivery.",
              RETURNS.content or "")]
    first = card_model(tmp_path, "first.json", shipped).logits(pairs) / 1.5
    other = card_model(tmp_path, "second.json", second).logits(pairs) / 0.8
    unsure = (first >= np.log(0.15 / 0.85)) & (first < np.log(0.9 / 0.1))
    assert 0 < unsure.sum() < len(pairs), first  # both cases are read
    assert np.allclose(mixed.logits(pairs), np.where(unsure, (first + other) / 2, first))
    assert set(mixed.checksums) == {"claim_support", "second"}


@pytest.mark.unit
def test_a_card_may_read_the_second_opinion_on_every_no_answer_pair(tmp_path: Path) -> None:
    """With `reads_every_declines_pair`, a pair asking whether a reply declines gets both models'
    mean even where the first is sure (a long refusal it misses surely is the case); claim pairs
    are read as before."""
    shipped = json.loads((MODELS / "claim_support.json").read_text())
    second = shipped["second_opinion"]
    link_model_files(shipped, tmp_path)
    opinion = {"file": second["file"], "tokenizer": second["tokenizer"], "first_temperature": 1.5,
               "temperature": 0.8, "reads": [0.15, 0.9], "reads_every_declines_pair": True}
    mixed = card_model(tmp_path, "mixed.json", shipped, second_opinion=opinion)
    declining = [declines_pair("I'm sorry, but the documents do not say how long the warranty is."),
                 declines_pair("The warranty lasts two years from the date of purchase.")]
    claims = [("Who directed Heat? Michael Mann.", HEAT.content or ""),
              ("Who directed Heat? Steven Spielberg.", HEAT.content or "")]
    pairs = declining + claims
    first = card_model(tmp_path, "first.json", shipped).logits(pairs) / 1.5
    other = card_model(tmp_path, "second.json", second).logits(pairs) / 0.8
    unsure = (first >= np.log(0.15 / 0.85)) & (first < np.log(0.9 / 0.1))
    assert not unsure[:2].all(), first  # a declines pair the first is sure of is read too
    read = unsure | np.array([True, True, False, False])
    assert np.allclose(mixed.logits(pairs), np.where(read, (first + other) / 2, first))
