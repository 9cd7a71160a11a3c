"""The local judge: offline evaluators, the default when no LLM endpoint is configured.

Cheap and deterministic, on CPU inside the process; labelled `judge="local"` in every metric so
nobody mistakes them for an LLM verdict. What each one does:

- context relevance, per document: for a question, the claim-support model reads it against the
  document's window sharing most words with it (its relevance task) and its threshold decides;
  for a statement or a request, which the model was not trained on (or with
  `context_relevance_model` off), cosine(question, document) of MiniLM-L6 embeddings (a
  document's first 128 tokens) against a threshold. Score = share of documents relevant.
- answer relevance: cosine(question, answer) against a threshold.
- completeness: `no_answer` when the answer is empty (whitespace, punctuation, bare list markers)
  or the no-answer detector says it declines to answer: the claim-support model asked so (its
  third task: claim_support.declines_pair) and a logistic regression on the answer's embedding,
  their logits mixed (no_answer.NoAnswerDetector, both trained on bench/data/no_answer.jsonl);
  it is not asked when a claim of the answer is surely supported by the documents (the model's
  `sure` level): that answer asserts something. Else
  `complete` when the answer is relevant, `incomplete` when it is not (a local evaluator cannot
  check coverage: an LLM judge does that).
- groundedness: the answer split into claims; generic claims (pleasantries) set aside; each other
  claim, under its question, is read against document windows by the claim-support
  cross-encoder (MiniLM-L6 fine-tuned by training/claim_support/ on VitaminC and question-answer
  hard negatives: another entity of the passage, two of its numbers swapped, an entity it lacks;
  int8 ONNX in models/), which gives a calibrated probability that the window supports it:
  `inferable` at or above the model's threshold, else `ungrounded`. Documents are read whole, in
  overlapping windows of `window_words` words; the `windows_read` windows sharing most words with
  the claim and its question are scored and the best one decides. A claim that bounds a figure
  the window gives otherwise ("more than 110 cases" against "105 cases", bounds.py) is capped at
  the card's probability for those pairs: the model does not compare numbers. Each claim keeps
  that window (document id, character span, text, and any bound it contradicts): the rationale
  `verdicts show` prints.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import numpy as np

from monitor.config import LocalJudgeSettings
from monitor.judges.claim_support import ClaimSupportModel, bounded
from monitor.judges.embeddings import Embedder
from monitor.judges.no_answer import NoAnswerDetector, is_empty
from monitor.judges.text import (
    is_generic,
    is_question,
    lexical_support,
    split_claims,
    strip_framing,
)
from monitor.model import AssistantTurn, RetrievedDocument
from monitor.verdict import (
    ClaimLabel,
    DocumentLabel,
    JudgeResult,
    Signals,
    Verdict,
    evidence_name,
)

SHORT_ANSWER_WORDS = 8  # a one-claim answer this short is read as the answer to the question
_WORD_SPAN = re.compile(r"\S+")


def windows(text: str, words: int) -> list[tuple[int, int]]:
    """Character spans of windows of `words` words, each starting two thirds of a window after
    the last, the last one ending with the text (a short text is one window)."""
    spans = [m.span() for m in _WORD_SPAN.finditer(text)]
    if len(spans) <= words:
        return [(0, len(text))]
    stride = max(1, words * 2 // 3)
    starts = list(range(0, len(spans) - words, stride)) + [len(spans) - words]
    return [(spans[i][0], spans[i + words - 1][1]) for i in starts]


def document_relevant(similarity: float | None, relevance: float | None, threshold: float | None,
                      settings: LocalJudgeSettings) -> tuple[bool, bool]:
    """Is a document relevant to the question, and did the model decide it? The claim-support
    model's `relevance` at `threshold` where both are given, else the cosine at its threshold.
    `threshold` is None for a statement: the model learnt relevance to questions, and to a
    statement it reads whether it is supported. Where both are read, the model decides even
    where the cosine is sure: on windows and on whole paragraphs of passages it never trained
    on, it is right more often than the cosine is outside its band (docs/judging.md)."""
    if relevance is not None and threshold is not None:
        return relevance >= threshold, True
    assert similarity is not None, "the cosine decides where the model does not"
    return similarity >= settings.context_relevance_threshold, False


class LocalJudge:
    name = "local"

    def __init__(self, settings: LocalJudgeSettings, embedder: Embedder | None = None,
                 claim_support: ClaimSupportModel | None = None,
                 read_relevance: bool = False) -> None:
        """`read_relevance`: read every document both ways, the cosine and the claim-support
        model, whichever decides (the cascade's two opinions; a pair a document)."""
        self.settings = settings
        self.read_relevance = read_relevance
        self.embedder = embedder or Embedder(threads=settings.threads,
                                             max_chars=settings.embed_chars,
                                             max_tokens=settings.embed_tokens)
        self.claim_support = claim_support or (
            ClaimSupportModel(settings.claim_support_model, threads=settings.threads)
            if settings.claim_support_model else ClaimSupportModel(threads=settings.threads))
        if self.claim_support.no_answer_threshold is None:
            raise ValueError("the claim-support model's card has no no-answer task "
                             "(no `no_answer` entry): train it with build_data.py --no-answer")
        self.no_answer = NoAnswerDetector.beside(
            self.claim_support.path, self.claim_support.card,
            self.claim_support.identity | {"embedder": self.embedder.sha256})
        self.no_answer_threshold = settings.no_answer_threshold or self.no_answer.threshold
        # Who judges: each model by its checksum's first 8 digits (short enough for exemplars).
        self.model = " ".join(f"{name}@{digest[:8]}" for name, digest in (
            *self.claim_support.checksums.items(), ("minilm_l6", self.embedder.sha256)))

    def declines(self, answer: str) -> float:
        """P(the answer declines to answer), as the no-answer detector reads it (its embedding is
        the one answer relevance reads: cached)."""
        text = strip_framing(answer)
        return self.no_answer.probability(text, self.claim_support.declines(answer),
                                          self.embedder.passage([text])[0])

    async def judge(self, turn: AssistantTurn) -> JudgeResult:
        return await asyncio.to_thread(self.judge_sync, turn)

    def judge_sync(self, turn: AssistantTurn) -> JudgeResult:
        start = time.perf_counter()
        s = self.settings
        verdicts: list[Verdict] = []
        # Whitespace-only documents are not documents: they would look relevant to everything.
        kept = [d for d in turn.documents if d.content and d.content.strip()]
        blank = len(turn.documents) - len(kept)
        docs = [d.content for d in kept if d.content]  # all of them: kept have content
        question = turn.question or ""
        q = self.embedder.query([question])[0] if question else None

        if q is not None and docs:
            relevant, sims, read, by_model = self._context_relevance(question, q, docs)
            skipped = f" ({blank} empty documents skipped)" if blank else ""
            verdicts.append(Verdict(
                "context_relevance", score=sum(relevant) / len(relevant),
                rationale=f"{sum(relevant)} of {len(relevant)} documents relevant to the question"
                          + (" (read by the claim-support model)" if by_model else "") + skipped,
                documents=tuple(
                    DocumentLabel(id=d.id, label="relevant" if r else "irrelevant",
                                  similarity=None if x is None else round(x, 4), relevance=m)
                    for d, r, x, m in zip(kept, relevant, sims, read, strict=True)),
                signals=Signals(empty_documents_skipped=blank)))

        empty = is_empty(turn.answer)
        # Framing ("The documents state that the answer is X.") is not content: without it the
        # answer reads as what it says, not as talk about the documents, which refusals are.
        answer_vector = (None if empty else
                         self.embedder.passage([strip_framing(turn.answer or "")])[0])
        grounded = (self._groundedness(turn.question, turn.answer or "", kept)
                    if docs and not empty else None)
        # A claim the documents surely support is an assertion, not a refusal, whatever the
        # wording ("Sorry, I can only tell you this: hold the button..."): the detector, which
        # reads the wording alone, is not asked.
        asserts = max((c.support for c in grounded.claims or () if c.support is not None),
                      default=None) if grounded else None
        answers = asserts is not None and asserts >= self.claim_support.sure
        declines = None if empty or answers else self.declines(turn.answer or "")
        no_answer = empty or (declines is not None and declines >= self.no_answer_threshold)
        answer_similarity = None
        if q is not None and answer_vector is not None and not no_answer:
            answer_similarity = float(answer_vector @ q)
            answer_relevant = answer_similarity >= s.answer_relevance_threshold
            verdicts.append(Verdict(
                "answer_relevance", label="relevant" if answer_relevant else "irrelevant",
                rationale=f"answer-question similarity {answer_similarity:.3f} "
                          f"{'≥' if answer_relevant else '<'} {s.answer_relevance_threshold}",
                signals=Signals(similarity=round(answer_similarity, 4))))
        if no_answer:
            verdicts.append(Verdict(
                "completeness", label="no_answer",
                rationale="the answer is empty" if empty else
                f"the answer declines to answer (no-answer probability {declines:.2f})",
                signals=None if empty else Signals(
                    no_answer_probability=round(declines or 0.0, 4))))
        elif answer_similarity is not None:
            complete = answer_similarity >= s.answer_relevance_threshold
            asserting = f" (a claim is supported at {asserts:.2f}: it does not decline)" if answers else ""
            verdicts.append(Verdict(
                "completeness", label="complete" if complete else "incomplete",
                rationale=("answers the question" if complete else "does not address the question")
                          + asserting,
                signals=Signals(no_answer_probability=None if declines is None
                                else round(declines, 4))))

        if turn.agentic and no_answer:
            # What can be said of an agent's goal without an LLM: it gave up. An answer is left
            # unjudged: whether it did what was asked takes reading the trajectory.
            t = turn.signals
            verdicts.append(Verdict(
                "goal_completion", label="failed",
                rationale=f"{'looped and ' if t.loops else ''}gave up: no answer after {t.steps} "
                          f"steps ({t.tool_errors} failed tool calls, {t.loops} repeated)"))
        if grounded is not None and not no_answer:
            verdicts.append(grounded)
        return JudgeResult(self.name, verdicts, latency_s=time.perf_counter() - start,
                           model=self.model)

    def _context_relevance(self, question: str, q: np.ndarray, docs: list[str]
                           ) -> tuple[list[bool], list[float | None], list[float | None], bool]:
        """Each document relevant or not (`document_relevant`), its cosine and the model's
        reading where they were read, and whether the model decided (for a question it decides
        every document). A question's documents are read by the model alone, unless the cascade
        asks for both opinions: no embedding each."""
        s = self.settings
        threshold = (self.claim_support.relevance_threshold
                     if s.context_relevance_model and is_question(question) else None)
        by_model = threshold is not None
        sims: list[float | None] = [None] * len(docs)
        if self.read_relevance or not by_model:
            sims = [float(x) for x in self.embedder.passage(docs) @ q]
        read: list[float | None] = [None] * len(docs)
        if self.read_relevance or by_model:
            read = list(self._relevance(question, docs))
        relevant = [document_relevant(x, m, threshold, s)[0]
                    for x, m in zip(sims, read, strict=True)]
        return relevant, sims, read, by_model

    def _relevance(self, question: str, docs: list[str]) -> list[float]:
        """The claim-support model's P(the document helps answer the question), on the windows
        of each document sharing most words with the question (the best one decides)."""
        s = self.settings
        texts = []
        for doc in docs:
            spans = windows(doc, s.window_words)
            spans.sort(key=lambda span: lexical_support(question, doc[span[0]:span[1]]),
                       reverse=True)
            texts.append([doc[a:b] for a, b in spans[:s.windows_read]])
        scores = iter(self.claim_support.probabilities([(question, t) for ts in texts for t in ts]))
        return [round(max(float(next(scores)) for _ in ts), 4) for ts in texts]

    def _groundedness(self, question: str | None, answer: str,
                      documents: list[RetrievedDocument]) -> Verdict:
        s = self.settings
        passages = [(number, start, end) for number, d in enumerate(documents)
                    for start, end in windows(d.content or "", s.window_words)]
        texts = [documents[n].content[a:b] for n, a, b in passages]  # type: ignore[index]
        claims = split_claims(answer)
        contents = [strip_framing(c) for c in claims]
        # A short answer ("Ada Lovelace.", "In May.") asserts something only as the answer to the
        # question, and is never set aside as generic. Every claim is read under its question, as
        # the model was trained: the second sentence of an answer is still about what was asked.
        short = (question is not None and len(claims) == 1
                 and 0 < len(contents[0].split()) <= SHORT_ANSWER_WORDS)
        asked = (question or "").strip()
        checked_as = [f"{asked} {c}" if asked else c for c in contents]
        checkable = [i for i, c in enumerate(contents) if short or (c and not is_generic(c))]
        read: dict[int, list[int]] = {}
        for i in checkable:
            # The windows sharing most words with the claim (then with its question) are read.
            overlap = [(lexical_support(contents[i], t, keep_stopwords=short),
                        lexical_support(asked, t) if asked else 0.0) for t in texts]
            read[i] = sorted(range(len(texts)), key=lambda w: overlap[w], reverse=True)[
                :s.windows_read]
        pairs = [(checked_as[i], texts[w]) for i in checkable for w in read[i]]
        probabilities, contradicts = bounded(
            pairs, self.claim_support.probabilities(pairs) if pairs else np.zeros(0),
            self.claim_support.bound_cap)
        support = iter(zip(probabilities, contradicts, strict=True))
        threshold = self.claim_support.threshold
        labelled = []
        for i, claim in enumerate(claims):
            if i not in read:
                labelled.append(ClaimLabel(claim=claim, label="generic"))
                continue
            scored = {w: next(support) for w in read[i]}
            best = max(read[i], key=lambda w: (scored[w][0], w))
            probability, contradiction = float(scored[best][0]), scored[best][1]
            number, start, end = passages[best]
            # only what was given: a detail's JSON holds the fields set
            extra: dict[str, Any] = {}
            if checked_as[i] != claim:
                extra["checked_as"] = checked_as[i]
            if contradiction:
                extra["contradicts"] = contradiction
            labelled.append(ClaimLabel(
                claim=claim, label="inferable" if probability >= threshold else "ungrounded",
                support=round(probability, 4),
                lexical=round(lexical_support(contents[i], texts[best], keep_stopwords=short), 4),
                evidence=evidence_name(documents[number].id, number + 1),
                window=(start, end), passage=texts[best], **extra))
        grounded = sum(c.label == "inferable" for c in labelled)
        ungrounded = sum(c.label == "ungrounded" for c in labelled)
        score = grounded / (grounded + ungrounded) if grounded + ungrounded else 1.0
        return Verdict("groundedness", score=score,
                       rationale=f"{grounded} of {grounded + ungrounded} checkable claims supported"
                                 f" by the documents ({len(labelled) - grounded - ungrounded} generic)",
                       claims=tuple(labelled))
