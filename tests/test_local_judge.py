"""The local judge's evaluators on small hand-labelled cases (the calibrated figures on labelled
data come from bench/calibrate_local.py)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap

import pytest

from monitor.config import LocalJudgeSettings
from monitor.judges.embeddings import Embedder
from monitor.judges.local import LocalJudge
from monitor.judges.no_answer import NO_ANSWER_MODEL
from monitor.judges.text import is_generic, split_claims
from monitor.model import AssistantTurn, RetrievedDocument

NO_ANSWER_SHA256 = "dce8ca0ef6cf4a981b5c8fb8b212e4870a4b43298ef3b1c4f4cee741146c5535"

# Wordings that appear nowhere in the no-answer model's data (bench/data/no_answer.jsonl).
REFUSALS = [
    "I could not find information about that in our documentation.",
    "The wiki pages I pulled up say nothing about parental leave.",
    "None of the retrieved pages cover the warranty for used bikes.",
    "The context doesn't contain enough to answer this.",
    "That's not something I can answer.",
    "Nothing came up.",
    "I don't know.",
    "",
    "   ",
    "- \n* \n1.",
]
ANSWERS = [
    "Refunds are issued within 30 days.",
    "Not all plans include priority support; the Pro plan does.",
    "You cannot return opened software, but hardware can be returned within 30 days.",
    "No, express shipping is not available on Sundays.",
    "Unfortunately, yes, the late fee applies to partial payments.",
    "Sorry, the museum is closed on Mondays.",
]


@pytest.fixture(scope="module")
def judge() -> LocalJudge:
    return LocalJudge(LocalJudgeSettings())


@pytest.mark.parametrize("answer", REFUSALS)
def test_refusals_are_no_answers(judge: LocalJudge, answer: str) -> None:
    assert judge.no_answer(answer), judge.no_answer.probability(answer)


@pytest.mark.parametrize("answer", ANSWERS)
def test_negative_and_apologetic_answers_are_answers(judge: LocalJudge, answer: str) -> None:
    assert not judge.no_answer(answer), judge.no_answer.probability(answer)


def test_the_shipped_no_answer_model_is_the_trained_one() -> None:
    """bench/train_no_answer.py wrote it; retraining changes this checksum on purpose."""
    digest = hashlib.sha256(NO_ANSWER_MODEL.read_bytes()).hexdigest()
    assert digest == NO_ANSWER_SHA256


def test_claims_and_generic_sentences() -> None:
    answer = ("Sure! Refunds are issued within 30 days. Express shipping takes 1 day.\n"
              "- Standard shipping takes 3 to 5 days\nHope this helps.")
    claims = split_claims(answer)
    assert claims == ["Sure!", "Refunds are issued within 30 days.", "Express shipping takes 1 day.",
                      "Standard shipping takes 3 to 5 days", "Hope this helps."]
    assert [is_generic(c) for c in claims] == [True, False, False, False, True]


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
    assert [c["label"] for c in groundedness.details["claims"]] == [
        "generic", "inferable", "inferable", "ungrounded"]
    assert groundedness.score == pytest.approx(2 / 3)
    assert result.get("context_relevance").score == 1.0
    assert result.get("completeness").label == "complete"
    assert result.judge == "local" and result.calls == 0 and result.input_tokens == 0


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


def test_blank_documents_are_not_documents(judge: LocalJudge) -> None:
    result = judge.judge_sync(AssistantTurn(
        trace_id="5" * 32, question="How long do refunds take?",
        answer="Refunds are issued within 30 days.",
        documents=[RetrievedDocument(id="blank", content=" \n\t "),
                   RetrievedDocument(id="kb-1", content="Refunds are issued within 30 days.")]))
    relevance = result.get("context_relevance")
    assert [d["id"] for d in relevance.details["documents"]] == ["kb-1"]
    assert relevance.score == 1.0 and "1 empty documents left out" in relevance.rationale
    assert result.get("groundedness").score == 1.0
    only_blank = judge.judge_sync(AssistantTurn(
        trace_id="6" * 32, question="How long do refunds take?", answer="Thirty days.",
        documents=[RetrievedDocument(content="   ")]))
    assert {v.metric for v in only_blank.verdicts} == {"answer_relevance", "completeness"}


def test_an_answer_of_list_markers_is_no_answer(judge: LocalJudge) -> None:
    result = judge.judge_sync(AssistantTurn(trace_id="7" * 32, question="Which plans exist?",
                                            answer="-\n- \n* \n1.",
                                            documents=[RetrievedDocument(content="Pro, Team.")]))
    completeness = result.get("completeness")
    assert completeness.label == "no_answer" and completeness.rationale == "the answer has no words"


def test_lone_surrogates_are_embedded_not_raised_on(judge: LocalJudge) -> None:
    text = "Refunds take 30 days \ud800 for annual plans."
    result = judge.judge_sync(AssistantTurn(trace_id="8" * 32, question="Refund time? \udfff",
                                            answer=text, documents=[RetrievedDocument(content=text)]))
    assert result.get("groundedness").score == 1.0


def test_only_the_start_of_a_long_document_is_embedded() -> None:
    class RecordingEmbedder(Embedder):
        def _embed(self, texts, is_query):  # the real engine, with the texts it was given kept
            self.seen.extend(texts)
            return super()._embed(texts, is_query)

    embedder = RecordingEmbedder()
    embedder.seen = []
    judge = LocalJudge(LocalJudgeSettings(), embedder)
    head = "Refunds are issued within 30 days of purchase. "
    long_document = head + "Unrelated filler about the office garden. " * 2000  # ~12,000 words
    result = judge.judge_sync(AssistantTurn(
        trace_id="9" * 32, question="How long do refunds take?",
        answer="Refunds are issued within 30 days.",
        documents=[RetrievedDocument(content=long_document)]))
    assert max(len(t) for t in embedder.seen) == judge.settings.embedded_document_chars
    assert result.get("groundedness").score == 1.0


@pytest.mark.parametrize("threads", [1, 2])
def test_the_embedding_engine_runs_the_configured_threads(threads: int) -> None:
    """OpenMP starts its workers at the first parallel region: count the process's threads."""
    script = textwrap.dedent(f"""
        import os
        from monitor.judges.embeddings import Embedder
        before = len(os.listdir("/proc/self/task"))
        embedder = Embedder(threads={threads})
        embedder.passage(["word " * 3000])
        print(len(os.listdir("/proc/self/task")) - before, os.environ.get("OMP_NUM_THREADS"))
    """)
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    added, omp_env = done.stdout.split()
    assert int(added) == threads - 1  # the calling thread is the first of OpenMP's team
    assert omp_env == "None"  # the setting does not leak to other libraries


def test_thread_count_is_validated() -> None:
    with pytest.raises(ValueError, match="threads"):
        LocalJudgeSettings(threads=0)
