"""The local judge's evaluators on small hand-labelled cases (the calibrated figures on labelled
data come from bench/calibrate_local.py; the no-answer detector: tests/test_no_answer.py)."""

from __future__ import annotations

import itertools

import pytest

from monitor.config import LocalJudgeSettings
from monitor.judges.local import LocalJudge, windows
from monitor.judges.text import is_generic, split_claims
from monitor.model import AssistantTurn, RetrievedDocument

pytestmark = pytest.mark.unit


def test_claims_and_generic_sentences() -> None:
    answer = ("Sure! Refunds are issued within 30 days. Express shipping takes 1 day.\n"
              "- Standard shipping takes 3 to 5 days\nHope this helps.")
    claims = split_claims(answer)
    assert claims == ["Sure!", "Refunds are issued within 30 days.", "Express shipping takes 1 day.",
                      "Standard shipping takes 3 to 5 days", "Hope this helps."]
    assert [is_generic(c) for c in claims] == [True, False, False, False, True]


@pytest.fixture(scope="module")
def judge() -> LocalJudge:
    return LocalJudge(LocalJudgeSettings())


def test_groundedness_counts_claims_and_sets_generic_ones_aside(judge: LocalJudge) -> None:
    turn = AssistantTurn(
        trace_id="1" * 32, question="How long do refunds and express shipping take?",
        documents=[RetrievedDocument(id="kb-1", content="Refunds are issued within 30 days of "
                                                        "purchase to the original payment method."),
                   RetrievedDocument(id="kb-2", content="Express shipping takes 1 day.")],
        answer="Sure! Refunds are issued within 30 days. Express shipping takes 1 day. "
               "Every order also includes a free umbrella and a lottery ticket.")
    result = judge.judge_sync(turn)
    groundedness = result.get("groundedness")
    assert [c.label for c in groundedness.claims] == [
        "generic", "inferable", "inferable", "ungrounded"]
    assert groundedness.score == pytest.approx(2 / 3)
    assert result.get("context_relevance").score == 1.0
    assert result.get("completeness").label == "complete"
    assert result.judge == "local" and result.calls == 0 and result.input_tokens == 0


# Two SQuAD-shifts pairs of the claim-support model's dev split (Wikipedia, CC BY-SA; The New
# York Times, as SQuAD-shifts ships it) where the question-document cosine is unsure and wrong:
# a paragraph of the question's article without the answer (cosine 0.36, over the threshold),
# and the paragraph holding the answer (cosine 0.19, under it).
SAME_ARTICLE = ("church of the Armenian people. It is part of Oriental Orthodoxy and is one of the "
                "most ancient Christian communities. Armenia is an early center of Christianity, "
                "and it was the ")
ANSWERING = ("\u201cIt is a strong signal in the fight against impunity,\u201d said Patrick "
             "Baudouin, a lawyer who is the head of the International Federation for Human "
             "Rights. \u201cThe Caesar file is extremely serious, not to say monstrous. We\u2019re "
             "talking about a bureaucracy of barbarism.\u201d")


@pytest.mark.parametrize(("question", "document", "relevant"), [
    ("What is the poverty rate in Armenia?", SAME_ARTICLE, False),
    ("What occupation does Patrick Baudouin have?", ANSWERING, True)])
def test_a_questions_documents_are_read_by_the_model(
        judge: LocalJudge, question: str, document: str, relevant: bool) -> None:
    turn = AssistantTurn(trace_id="4" * 32, question=question, answer="I am not sure.",
                         documents=[RetrievedDocument(content=document)])
    context = judge.judge_sync(turn).get("context_relevance")
    (read,) = context.documents
    # no embedding of the document: the model alone decides
    assert read.similarity is None and read.relevance is not None
    assert read.label == ("relevant" if relevant else "irrelevant")
    assert "read by the claim-support model" in context.rationale
    alone = LocalJudge(LocalJudgeSettings(context_relevance_model=False), judge.embedder,
                       judge.claim_support).judge_sync(turn).get("context_relevance")
    assert alone.documents[0].relevance is None and alone.documents[0].similarity is not None
    assert alone.documents[0].label == ("irrelevant" if relevant else "relevant")  # the cosine's


# Two paragraphs of Wikipedia's "Lipid" (CC BY-SA), from SQuAD-shifts, a question of the second
# (bench/context_relevance.py's pairs: passages the claim-support model never trained on).
LIPIDS_OTHER = (
    "Although the term lipid is sometimes used as a synonym for fats, fats are a subgroup of "
    "lipids called triglycerides. Lipids also encompass molecules such as fatty acids and their "
    "derivatives (including tri-, di-, monoglycerides, and phospholipids), as well as other "
    "sterol-containing metabolites such as cholesterol.")
LIPIDS_ANSWERING = (
    "Lipids may be broadly defined as hydrophobic or amphiphilic small molecules. Using this "
    "approach, lipids may be divided into eight categories: fatty acids, glycerolipids, "
    "glycerophospholipids, sphingolipids, saccharolipids, and polyketides (derived from "
    "condensation of ketoacyl subunits); and sterol lipids and prenol lipids (derived from "
    "condensation of isoprene subunits).")


def test_the_model_decides_where_the_cosine_would_be_sure(judge: LocalJudge) -> None:
    # Both paragraphs are about lipids: the cosine is past its band's upper edge for each (it
    # would call both relevant, as the local judge did before 2026-11-30); only one answers.
    turn = AssistantTurn(trace_id="6" * 32, question="How many categories of lipids exist?",
                         answer="Eight.", documents=[RetrievedDocument(content=LIPIDS_OTHER),
                                                     RetrievedDocument(content=LIPIDS_ANSWERING)])
    both = LocalJudge(LocalJudgeSettings(), judge.embedder, judge.claim_support,
                      read_relevance=True).judge_sync(turn).get("context_relevance")
    high = judge.settings.context_relevance_band[1]
    assert all(d.similarity is not None and d.similarity >= high for d in both.documents)
    assert [d.label for d in both.documents] == ["irrelevant", "relevant"]
    assert [d.label for d in judge.judge_sync(turn).get("context_relevance").documents] == [
        "irrelevant", "relevant"]


def test_a_statement_is_left_to_the_similarity(judge: LocalJudge) -> None:
    # A statement against a VitaminC evidence sentence (Wikipedia, CC BY-SA): the model, trained
    # on questions, reads a statement as a claim to support (0.03 here: the reviews were not
    # mixed), so the cosine (0.43, unsure but over its threshold) decides.
    turn = AssistantTurn(
        trace_id="5" * 32, answer="Noted.", question="Reviewers gave the show mixed reviews .",
        documents=[RetrievedDocument(content="Rotten Tomatoes gives the first season of the show "
                                             "a rating of 92 % , based on 13 reviews , with an "
                                             "average rating of 7.3/10 .")])
    (document,) = judge.judge_sync(turn).get("context_relevance").documents
    low, high = judge.settings.context_relevance_band
    assert low <= document.similarity < high
    assert document.relevance is None and document.label == "relevant"
    # Read anyway for the cascade, the model's reading of a statement still does not decide
    every = LocalJudge(LocalJudgeSettings(), judge.embedder, judge.claim_support,
                       read_relevance=True)
    (document,) = every.judge_sync(turn).get("context_relevance").documents
    assert document.relevance is not None
    assert document.relevance < judge.claim_support.relevance_threshold  # type: ignore[operator]
    assert document.label == "relevant"


def test_metrics_that_do_not_apply_are_left_out(judge: LocalJudge) -> None:
    no_docs = judge.judge_sync(AssistantTurn(trace_id="2" * 32, question="Hi?", answer="Hello."))
    assert {v.metric for v in no_docs.verdicts} == {"answer_relevance", "completeness"}
    refusal = judge.judge_sync(AssistantTurn(
        trace_id="3" * 32, question="Who founded the company?", answer="I don't know.",
        documents=[RetrievedDocument(content="The Pro plan costs 12 euros a month.")]))
    assert {v.metric: v.label for v in refusal.verdicts} == {"context_relevance": None,
                                                             "completeness": "no_answer"}


def test_embeddings_are_cached_by_content(judge: LocalJudge) -> None:
    turn = AssistantTurn(trace_id="4" * 32, question="How long does express shipping take?",
                         answer="Express shipping takes 1 day.",
                         documents=[RetrievedDocument(content="Express shipping takes 1 day.")])
    judge.judge_sync(turn)
    computed = judge.embedder.computed
    judge.judge_sync(turn)
    assert judge.embedder.computed == computed


DIRECTOR = RetrievedDocument(id="film-1", content=(
    "Ada Lovelace wrote the first published algorithm, for Charles Babbage's Analytical Engine, "
    "in 1843."))


@pytest.mark.parametrize("answer", [
    "Ada Lovelace.",
    "According to the documents, the answer is Ada Lovelace.",
    "The documents state that the answer is Ada Lovelace.",
    "Ada Lovelace, as the context states.",
])
def test_framing_is_not_content(judge: LocalJudge, answer: str) -> None:
    """The same entity in other words gets the same verdict."""
    result = judge.judge_sync(AssistantTurn(
        trace_id="a" * 32, question="Who wrote the first published algorithm?", answer=answer,
        documents=[DIRECTOR]))
    (claim,) = result.get("groundedness").claims
    assert claim.label == "inferable" and claim.lexical == 1.0
    assert claim.checked_as == "Who wrote the first published algorithm? Ada Lovelace."
    assert claim.evidence == "film-1"  # the document that decided it


@pytest.mark.parametrize("answer", ["Paris.", "The May.", "Grace B. Hopper."])
def test_a_short_answer_is_checked_as_the_answer_to_the_question(judge: LocalJudge,
                                                                  answer: str) -> None:
    result = judge.judge_sync(AssistantTurn(
        trace_id="b" * 32, question="Who wrote the first published algorithm?", answer=answer,
        documents=[DIRECTOR]))
    (claim,) = result.get("groundedness").claims
    assert claim.label == "ungrounded", claim  # not "generic", and not supported
    assert result.get("groundedness").score == 0.0


def test_initials_and_abbreviations_do_not_end_a_claim() -> None:
    assert split_claims("Grace B. Hopper wrote it in 1952. Dr. Smith agreed, e.g. in print. "
                        "Gate No. 5 opens at 9 a.m. daily.") == [
        "Grace B. Hopper wrote it in 1952.", "Dr. Smith agreed, e.g. in print.",
        "Gate No. 5 opens at 9 a.m. daily."]


def test_windows_cover_the_text_and_overlap() -> None:
    text = " ".join(f"w{i}" for i in range(250))
    spans = windows(text, 100)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert start < end  # consecutive windows overlap: a sentence on the seam is read whole
    assert all(len(text[a:b].split()) == 100 for a, b in spans)
    assert windows("Refunds within 30 days.", 100) == [(0, 23)]


def _manual(fact: str, at_word: int, words: int = 5_000) -> str:
    filler = [f"Section {i} covers how the warehouse in district {i % 17} packs parcels."
              for i in range(words // 12)]
    position = at_word // 12
    return " ".join(filler[:position] + [fact] + filler[position:])


def test_a_long_document_is_read_whole_and_the_deciding_passage_kept(judge: LocalJudge) -> None:
    """The supporting sentence sits 4,000 words in, far past what one embedding reads."""
    content = _manual("Refunds are accepted within 45 days of delivery.", at_word=4_000)
    manual = RetrievedDocument(id="manual", content=content)
    question = "How long do I have to return an item?"
    result = judge.judge_sync(AssistantTurn(
        trace_id="c" * 32, question=question, documents=[manual],
        answer="Refunds are accepted within 45 days of delivery. "
               "Gift cards can be exchanged for cash at any branch."))
    right, wrong = result.get("groundedness").claims
    assert right.label == "inferable" and wrong.label == "ungrounded", (right, wrong)
    assert "within 45 days of delivery" in right.passage
    start, end = right.window
    assert content[start:end] == right.passage and right.evidence == "manual"
    assert len(right.passage.split()) == LocalJudgeSettings().window_words
