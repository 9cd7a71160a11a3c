"""The no-answer detector (the claim-support model's third task with the answer's embedding)
and the local judge on bad input.

The fixed answers here are written apart from bench/data/no_answer.jsonl (the training data)
unless said otherwise; the detector's test figures are in models/no_answer.json
(training/claim_support/no_answer.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from monitor.config import LocalJudgeSettings
from monitor.judges.claim_support import MODELS
from monitor.judges.embeddings import clean
from monitor.judges.local import LocalJudge
from monitor.judges.no_answer import DETECTOR, is_empty, may_decline
from monitor.model import AssistantTurn, RetrievedDocument
from tests.conftest import link_model_files

REFUSALS = [
    "I could not find information about that in our documentation.",
    "I'm sorry, I don't have information about shipping to Antarctica.",
    "That is not mentioned in the documents I have.",
    "I cannot answer that question.",
    "I don't know.",
    "The knowledge base has nothing on dental cover for contractors.",
    "None of the retrieved pages cover the Zurich office's parking rules.",
    "The context provided doesn't give enough detail to answer this.",
    "That's not something I can answer.",
    "Nothing came up.",
    # written after the embedding joined the detector (the model alone reads each one too)
    "I searched the help centre articles, but exporting invoices to CSV isn't something they cover.",
    "Pet insurance for rabbits is not a topic I can find in the policy wording.",
    "I read through the travel policy, and it says nothing about upgrades to business class.",
    "Hmm, the release notes don't say anything about the dark mode setting.",
    "I checked the handbook: it doesn't cover jury duty leave.",
    "The FAQ only covers domestic shipping, so I can't tell you about customs fees.",
    "I'm afraid the documents I was given don't go into the refund timeline for gift cards.",
]
ANSWERS = [
    "Refunds are issued within 30 days.",
    "Not all plans include priority support; the Pro plan does.",
    "You cannot return opened software, but hardware can be returned within 30 days.",
    "No, express shipping is not available on Sundays.",
    "No, the plan does not include roadside assistance.",
    "Unfortunately, yes, the fee applies to every transfer abroad.",
    "Sorry, but the museum is closed on Mondays.",
    # partial: answers one part and declines the other: "incomplete" at worst, never no_answer
    "The warranty lasts two years. The documents don't mention whether it covers water damage.",
    # an answer that is only a name, a place or a date (none of these is in the training data)
    "Marie Curie.",
    "Nikola Tesla.",
    "Lisbon.",
    "In 1969.",
    # how-to answers in steps (bench/judge_cost.py's, which the detector had read as half a
    # refusal, 0.53 and 0.67; no how-to answer of the training data is about these devices)
    "Hold the reset button on your Orbit robot vacuum for 10 seconds until the light blinks "
    "amber, then let it restart for about two minutes. Note that this erases all custom settings "
    "and paired devices, so back up your configuration in the app first.",
    "First make sure your network offers a 2.4 GHz band, since older Vega soundbar firmware "
    "cannot join 5 GHz-only networks. Then update the firmware to version 3.2 or later from "
    "Settings > System > Update, which fixes most connection drops.",
]
# The assistant tried what the user asked and says it failed: it answered (the failure is the
# tool call's, which the tool-call metrics count), it did not decline to answer.
ACTION_FAILURES = [
    "Sorry, I could not cancel that order.",  # the demo's, judged no_answer before
    "The booking failed: the hotel's system is down.",
    "I tried to update your card details, but the payment service returned an error.",
    "Sorry, I couldn't reschedule the delivery.",
    "I was not able to place the order; the shop's server timed out.",
    "Unfortunately the password reset did not go through.",
]


@pytest.fixture(scope="module")
def judge() -> LocalJudge:
    return LocalJudge(LocalJudgeSettings())


def completeness(judge: LocalJudge, answer: str, question: str = "Can you help me with this?",
                 documents: tuple[str, ...] = ()) -> str:
    turn = AssistantTurn(trace_id="5" * 32, question=question, answer=answer,
                         documents=[RetrievedDocument(content=d) for d in documents])
    verdict = judge.judge_sync(turn).get("completeness")
    assert verdict is not None
    return verdict.label or ""


@pytest.mark.unit
@pytest.mark.parametrize("answer", REFUSALS)
def test_refusals_are_no_answers(judge: LocalJudge, answer: str) -> None:
    assert completeness(judge, answer) == "no_answer"


@pytest.mark.unit
def test_a_refusal_in_a_partial_answers_words(judge: LocalJudge) -> None:
    # A known miss (0.12) until the 2026-12-01 kinds and VitaminC claims joined the
    # detector's data (training/claim_support/README.md).
    answer = "I went over the onboarding guide, but visitor parking isn't covered there."
    assert completeness(judge, answer) == "no_answer"


@pytest.mark.unit
def test_the_embedding_catches_a_refusal_the_model_alone_misses(judge: LocalJudge) -> None:
    # A dev answer of bench/data/no_answer.jsonl (dev chose the mix and the threshold): the
    # claim-support model alone gives it 0.03 (both its models read it), the detector 0.70.
    answer = "I looked through the policy documents, but running the app offline isn't covered there."
    assert judge.claim_support.declines(answer) < judge.claim_support.no_answer_threshold
    assert judge.declines(answer) >= judge.no_answer_threshold
    assert completeness(judge, answer) == "no_answer"


@pytest.mark.unit
@pytest.mark.parametrize("answer", ANSWERS)
def test_real_answers_negative_apologetic_or_partial_are_answers(judge: LocalJudge,
                                                                 answer: str) -> None:
    assert completeness(judge, answer) in ("complete", "incomplete")


@pytest.mark.unit
@pytest.mark.parametrize("answer", ACTION_FAILURES)
def test_a_reported_failure_of_an_action_is_an_answer(judge: LocalJudge, answer: str) -> None:
    assert completeness(judge, answer, question="Please do this for me.") != "no_answer"


@pytest.mark.unit
def test_the_demos_failed_cancellation_is_judged_an_answer(judge: LocalJudge) -> None:
    from monitor.demo import SCENARIOS

    cancel = next(s for s in SCENARIOS if s.question == "Cancel order 77.")  # its tool failed
    assert completeness(judge, cancel.answer, question=cancel.question) != "no_answer"


@pytest.mark.unit
@pytest.mark.parametrize("answer", ["", "   \n\t", "- \n* \n1.", "...", "•\n2)\n-", "?!"])
def test_empty_answers_are_no_answers_without_the_model(judge: LocalJudge, answer: str) -> None:
    assert is_empty(answer)
    turn = AssistantTurn(trace_id="6" * 32, question="Is there a fee?", answer=answer,
                         documents=[RetrievedDocument(content="A fee of 5 euros applies.")])
    result = judge.judge_sync(turn)
    verdict = result.get("completeness")
    assert verdict.label == "no_answer" and verdict.rationale == "the answer is empty"
    assert result.get("groundedness") is None and result.get("answer_relevance") is None


@pytest.mark.unit
@pytest.mark.parametrize(("answer", "asked"), [
    ("Google.", False), ("1600.", False), ("It is Jon Voight.", False), ("Sao Paulo, Brazil.", False),
    ("I don't know.", True), ("No idea.", True), ("Sorry, nothing on that.", True),
    ("Não encontrei nada.", True), ("Keine Angaben dazu.", True),
    ("N/A", True), ("Dunno.", True), ("Unavailable.", True), ("A/B tests.", False),
    ("The refund window is thirty days from the date of delivery for every order.", True),
])
def test_a_few_words_without_a_negation_assert_something(answer: str, asked: bool) -> None:
    assert may_decline(answer) is asked


@pytest.mark.unit
@pytest.mark.parametrize("answer", ["N/A", "n/a.", "Dunno.", "Unavailable."])
def test_short_refusals_without_a_negation_are_no_answers(judge: LocalJudge, answer: str) -> None:
    # "N/A" is a training answer of bench/data/no_answer.jsonl that `may_decline` kept from the
    # model (which reads it 0.98): these were answers until their words joined the gate's.
    assert completeness(judge, answer) == "no_answer"


@pytest.mark.unit
@pytest.mark.parametrize(("answer", "declines"), [
    ("Don't know.", True), ("Sorry, I failed to apply the student discount.", False)])
def test_a_few_words_with_a_negation_are_the_models_to_decide(judge: LocalJudge, answer: str,
                                                              declines: bool) -> None:
    # "Don't know." is a test answer of bench/data/no_answer.jsonl: the model reads it 0.98,
    # the embedding's regression 0.02, and mixed they made it an answer.
    embedding = judge.embedder.passage([answer])[0]
    assert judge.no_answer.probability(answer, 0.98, embedding) == 0.98
    assert (completeness(judge, answer) == "no_answer") is declines


@pytest.mark.unit
def test_short_entity_answers_reach_groundedness(judge: LocalJudge) -> None:
    """A bare name is checked against the documents, not taken for a refusal."""
    result = judge.judge_sync(AssistantTurn(
        trace_id="9" * 32, question="Which search engine did they use?", answer="Google.",
        documents=[RetrievedDocument(content="The team used Google to search the archive.")]))
    assert result.get("completeness").label != "no_answer"
    assert result.get("groundedness").claims[0].label == "inferable"


@pytest.mark.unit
def test_list_items_with_words_are_not_empty() -> None:
    assert not is_empty("- 30 days\n- 5 euros") and not is_empty("1. Yes")


@pytest.mark.integration
def test_the_model_loads_and_judges_without_network() -> None:
    script = (
        "import socket\n"
        "def refuse(*a, **k):\n    raise OSError('network used')\n"
        "socket.socket.connect = socket.socket.connect_ex = socket.socket.sendto = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "from monitor.config import LocalJudgeSettings\n"
        "from monitor.judges.local import LocalJudge\n"
        "from monitor.model import AssistantTurn\n"
        "judge = LocalJudge(LocalJudgeSettings())\n"
        "turn = AssistantTurn(trace_id='7' * 32, question='Is it open?', answer='Nothing came up.')\n"
        "print(judge.judge_sync(turn).get('completeness').label)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "no_answer"


@pytest.mark.unit
def test_lone_surrogates_anywhere_do_not_crash_the_judge(judge: LocalJudge) -> None:
    assert clean("fee\ud800 of 5\x00 euros") == "fee\ufffd of 5 euros"
    assert clean("\ud83d\ude00") == "😀"  # a surrogate pair is its character
    turn = AssistantTurn(trace_id="8" * 32, question="Is there a late fee\udc80?",
                         answer="A late fee of 5 euros applies\ud800.",
                         documents=[RetrievedDocument(content="A late fee of 5 euros \udfff "
                                                              "applies after 14 days.")])
    result = judge.judge_sync(turn)
    assert result.get("completeness").label == "complete"
    assert result.get("groundedness").score == 1.0


@pytest.mark.unit
def test_whitespace_only_documents_are_skipped_and_said_so(judge: LocalJudge) -> None:
    documents = [RetrievedDocument(id="blank", content=" \n\t "),
                 RetrievedDocument(id="kb-1", content="Express shipping takes 1 day.")]
    turn = AssistantTurn(trace_id="9" * 32, question="How long does express shipping take?",
                         answer="Express shipping takes 1 day.", documents=documents)
    result = judge.judge_sync(turn)
    relevance = result.get("context_relevance")
    assert relevance.score == 1.0
    assert [d.id for d in relevance.documents] == ["kb-1"]
    assert relevance.signals.empty_documents_skipped == 1
    assert "1 empty documents skipped" in relevance.rationale
    assert result.get("groundedness").score == 1.0
    only_blank = judge.judge_sync(AssistantTurn(
        trace_id="a" * 32, question="How long does express shipping take?",
        answer="Express shipping takes 1 day.", documents=[RetrievedDocument(content="   ")]))
    assert only_blank.get("context_relevance") is None and only_blank.get("groundedness") is None


@pytest.mark.unit
def test_only_the_beginning_of_a_long_document_is_embedded(judge: LocalJudge) -> None:
    head = "Express shipping takes 1 day. " * 70  # 2,100 characters
    long_document = head + "Unrelated filler about the cafeteria menu. " * 800
    embedder = judge.embedder
    assert (embedder.passage([long_document]) == embedder.passage([head[:2_000]])).all()
    turn = AssistantTurn(trace_id="b" * 32, question="How long does express shipping take?",
                         answer="Express shipping takes 1 day.",
                         documents=[RetrievedDocument(content=long_document)])
    assert judge.judge_sync(turn).get("context_relevance").score == 1.0


@pytest.mark.unit
def test_the_engine_runs_on_the_configured_threads() -> None:
    for threads in (1, 2):
        judge = LocalJudge(LocalJudgeSettings(threads=threads))
        models = judge.claim_support
        assert models._second is not None  # the shipped card names a second opinion
        for session in (judge.embedder._session, models._first._session,
                        models._second._session):
            assert session.get_session_options().intra_op_num_threads == threads


@pytest.mark.unit
def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValidationError, match="threads"):
        LocalJudgeSettings(threads=0)
    with pytest.raises(ValidationError, match="no_answer_threshold"):
        LocalJudgeSettings(no_answer_threshold=1.5)


@pytest.mark.unit
def test_a_claim_support_model_without_the_no_answer_task_is_refused(tmp_path: Path) -> None:
    card = json.loads((MODELS / "claim_support.json").read_text())
    del card["no_answer"]
    link_model_files(card, tmp_path)
    (tmp_path / "claim_support.json").write_text(json.dumps(card))
    with pytest.raises(ValueError, match="no no-answer task"):
        LocalJudge(LocalJudgeSettings(claim_support_model=tmp_path / "claim_support.json"))


def card_folder(tmp_path: Path, detector: dict[str, Any] | None) -> Path:
    """The shipped claim-support card in `tmp_path`, with `detector` as no_answer.json beside it."""
    card = json.loads((MODELS / "claim_support.json").read_text())
    link_model_files(card, tmp_path)
    (tmp_path / "claim_support.json").write_text(json.dumps(card))
    if detector is not None:
        (tmp_path / DETECTOR.name).write_text(json.dumps(detector))
    return tmp_path / "claim_support.json"


@pytest.mark.unit
def test_a_detector_fitted_with_another_embedder_is_refused(tmp_path: Path) -> None:
    detector = json.loads(DETECTOR.read_text())
    detector["models"]["embedder"] = "0" * 64
    card = card_folder(tmp_path, detector)
    with pytest.raises(ValueError, match=r"fitted with another embedder model \(00000000; this one "
                       r"is [0-9a-f]{8}\): refit it with training/claim_support/no_answer.py"):
        LocalJudge(LocalJudgeSettings(claim_support_model=card))


@pytest.mark.unit
def test_a_detector_fitted_without_the_second_opinion_is_refused(tmp_path: Path) -> None:
    """The detector mixes the claim-support reading it was fitted on: one fitted before the card
    named its second opinion reads another model's probabilities."""
    detector = json.loads(DETECTOR.read_text())
    del detector["models"]["second"]
    card = card_folder(tmp_path, detector)
    with pytest.raises(ValueError, match=r"fitted with another second model \(none; this one is "
                       r"[0-9a-f]{8}\)"):
        LocalJudge(LocalJudgeSettings(claim_support_model=card))


@pytest.mark.unit
def test_a_detector_fitted_on_another_reading_of_the_same_files_is_refused(tmp_path: Path) -> None:
    """The same model files read otherwise (the second opinion no longer read on every no-answer
    pair) give the detector other probabilities than it was fitted on."""
    card_path = card_folder(tmp_path, json.loads(DETECTOR.read_text()))
    card = json.loads(card_path.read_text())
    card["second_opinion"]["reads_every_declines_pair"] = not card["second_opinion"].get(
        "reads_every_declines_pair", False)
    card_path.write_text(json.dumps(card))
    with pytest.raises(ValueError, match=r"fitted with another claim_support_reading model"):
        LocalJudge(LocalJudgeSettings(claim_support_model=card_path))


@pytest.mark.unit
def test_without_a_detector_beside_its_card_the_model_alone_decides(tmp_path: Path) -> None:
    judge = LocalJudge(LocalJudgeSettings(claim_support_model=card_folder(tmp_path, None)))
    assert judge.no_answer_threshold == judge.claim_support.no_answer_threshold
    answer = "I looked through the policy documents, but running the app offline isn't covered there."
    assert judge.declines(answer) == judge.claim_support.declines(answer)
    assert completeness(judge, answer) != "no_answer"
