"""The cascade: the local judge decides what it is sure of, the LLM judge the rest.

    band = uncertainty_band(scores, labels, accuracy=0.95)   # calibration scripts, on dev data
    decide(0.97, band)   # True: positive, decided locally; False: negative; None: ask the LLM

A local score (a question-document or question-answer cosine, a no-answer or claim-support
probability) decides when it lies outside its uncertainty band: at or above the band's upper
edge it is positive, below its lower edge negative. Inside, the part goes to the LLM judge. Each
band is fitted on a dev split: it holds the scores at which the labels' isotonic fit on the
scores, P(positive | score), is between 1 - accuracy and accuracy. That fit holds where positives
are as common as on dev; the claims' band is refitted for the share of supported claims the
tenant's answers have (`band_of`, judging.cascade.supported_share), since dev's pairs are half
hard negatives by construction and an assistant's claims are mostly supported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from monitor.model import AssistantTurn
from monitor.verdict import (
    ClaimLabel,
    DocumentLabel,
    JudgeResult,
    Signals,
    Verdict,
    evidence_name,
)

TARGET_ACCURACY = 0.95  # the shipped bands are fitted at this accuracy


class Band(NamedTuple):
    low: float
    high: float


def decide(score: float | None, band: Band) -> bool | None:
    """Positive or negative when the score is outside the band; None (unsure, or no score)."""
    if score is None:
        return None
    if score >= band.high:
        return True
    if score < band.low:
        return False
    return None


def calibrated(scores: Sequence[float], labels: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct scores, ascending, and P(positive) at each: the isotonic (monotone) fit of
    the labels on the scores, by pooling adjacent violators."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    distinct, inverse = np.unique(s, return_inverse=True)
    weights = np.bincount(inverse).astype(np.float64)
    means = np.bincount(inverse, weights=y) / weights
    blocks: list[list[float]] = []  # [mean, weight, distinct scores pooled]
    for mean, weight in zip(means, weights, strict=True):
        blocks.append([mean, weight, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, w2, n2 = blocks.pop()
            m1, w1, n1 = blocks.pop()
            blocks.append([(m1 * w1 + m2 * w2) / (w1 + w2), w1 + w2, n1 + n2])
    return distinct, np.repeat([b[0] for b in blocks], [int(b[2]) for b in blocks])


class Calibration(NamedTuple):
    """P(positive | score) as a dev split's isotonic fit gives it, in steps: from each of `scores`
    up to the next, `positive`; `share` is dev's share of positives, the prior it holds under."""

    scores: list[float]
    positive: list[float]
    share: float


def calibration(scores: Sequence[float], labels: Sequence[int]) -> Calibration:
    distinct, probability = calibrated(scores, labels)
    steps = np.flatnonzero(np.r_[True, np.diff(probability) != 0])
    return Calibration([round(float(x), 5) for x in distinct[steps]],
                       [round(float(x), 5) for x in probability[steps]],
                       round(float(np.mean(labels)), 4))


def for_share(positive: np.ndarray, share: float, fitted_share: float) -> np.ndarray:
    """P(positive | score) where positives are `share` of the pairs, from the P fitted where they
    were `fitted_share`: at each score the likelihood ratio holds and the prior odds change
    (Saerens et al., 2002, "Adjusting the outputs of a classifier to new a priori
    probabilities")."""
    shift = np.log(share / (1 - share)) - np.log(fitted_share / (1 - fitted_share))
    with np.errstate(divide="ignore", over="ignore"):
        shifted: np.ndarray = 1 / (1 + np.exp(-(np.log(positive) - np.log1p(-positive) + shift)))
    return shifted


def band_of(fit: Calibration, accuracy: float, share: float | None = None) -> Band:
    """Where P(positive | score) is below `accuracy` and above 1 - `accuracy`, so each local
    decision, even at the band's edge, is right at `accuracy` (a tail's average would let the sure
    end hide a poor edge); with `share`, for a traffic whose share of positives that is."""
    scores = np.asarray(fit.scores)
    positive = np.asarray(fit.positive)
    if share is not None:
        positive = for_share(positive, share, fit.share)
    sure_positive = np.flatnonzero(positive >= accuracy)
    unsure = np.flatnonzero(positive > 1 - accuracy)
    high = float(scores[sure_positive[0]]) if len(sure_positive) else np.inf
    low = float(scores[unsure[0]]) if len(unsure) else np.inf
    if low > high:
        low = high = (low + high) / 2
    return Band(round(low, 4), round(high, 4))


def uncertainty_band(scores: Sequence[float], labels: Sequence[int], accuracy: float) -> Band:
    """Where the dev split's calibration is unsure (`band_of`)."""
    return band_of(calibration(scores, labels), accuracy)


class Bands(NamedTuple):
    context_relevance: Band  # question-document cosine
    answer_relevance: Band  # question-answer cosine
    no_answer: Band  # the no-answer probability
    groundedness: Band  # claim support
    context_relevance_model: Band  # the claim-support model's question-document relevance


LOCAL = "local"


@dataclass
class LocalPart:
    """What the local judge settles of a turn: each document's label or None (the LLM's), and of
    the answer either all (`answer`) or the claims it is sure of."""

    documents: list[DocumentLabel | None]  # in the order of the documents the LLM judge reads
    answer: list[Verdict] | None = None  # the answer's verdicts, when nothing of it is unsure
    claims: list[ClaimLabel] | None = None  # the local claims, `unsure` ones to be labelled
    unsure: list[int] = field(default_factory=list)  # indices into `claims` for the LLM


def settle(turn: AssistantTurn, local: JudgeResult, bands: Bands) -> LocalPart:
    """The parts of the turn the local verdicts decide outside their bands."""
    context = local.get("context_relevance")
    local_documents = iter(context.documents or () if context else ())
    documents: list[DocumentLabel | None] = []
    labels: list[DocumentLabel | None] = []  # the local judge's (None: a blank document)
    names: list[str | None] = []  # each one's name in a claim's `evidence`
    for d in turn.documents:
        if not d.content:
            continue  # not read by the LLM judge either
        # The local judge skipped whitespace-only documents: the LLM judges those.
        label = next(local_documents, None) if d.content.strip() else None
        labels.append(label)
        names.append(None if label is None else
                     evidence_name(d.id, sum(x is not None for x in labels)))
        relevant = _document_relevant(label, bands) if label else None
        documents.append(None if relevant is None else label.model_copy(update={  # type: ignore[union-attr]
            "label": "relevant" if relevant else "irrelevant", "decided_by": LOCAL}))
    part = LocalPart(documents)

    completeness, relevance = local.get("completeness"), local.get("answer_relevance")
    if completeness is None:
        return part  # nothing read of the answer (no question): the LLM judges it
    grounded = local.get("groundedness")
    claims = []
    for i, claim in enumerate(grounded.claims or () if grounded else ()):
        supported = decide(claim.support, bands.groundedness)
        if claim.label != "generic" and supported is None:
            part.unsure.append(i)
        claims.append(claim.model_copy(update={"decided_by": LOCAL}) if claim.label == "generic"
                      else claim if supported is None else claim.model_copy(update={
                          "label": "inferable" if supported else "ungrounded",
                          "decided_by": LOCAL}))
    asserted = [c for c in claims if c.label == "inferable" and c.decided_by == LOCAL]
    signals = completeness.signals
    # An answer with a claim the documents surely support asserts something: it does not decline
    # (the local judge, sure of a claim by the model's own band, did not ask its detector then).
    declines = True if signals is None else False if (
        asserted or signals.no_answer_probability is None) else decide(
        signals.no_answer_probability, bands.no_answer)
    if declines:  # empty, or surely declining: an answer that responds, with nothing to check
        part.answer = [
            Verdict("answer_relevance", label="relevant", rationale="a refusal responds to the "
                    "question; completeness counts it", signals=Signals(decided_by=LOCAL)),
            Verdict("completeness", label="no_answer", rationale=completeness.rationale,
                    signals=(signals or Signals()).model_copy(update={"decided_by": LOCAL}))]
        return part
    if grounded is None and any(d.content and d.content.strip() for d in turn.documents):
        return part  # no claims read (it declines, locally): the LLM judges the answer whole
    similarity = relevance.signals.similarity if relevance and relevance.signals else None
    relevant = decide(similarity, bands.answer_relevance)
    if relevant:
        _relevant_by_evidence(part.documents, labels, names, asserted)
    part.claims = claims if grounded else None
    if declines is None or relevant is None or part.unsure:
        return part  # the LLM judges the answer, and labels the unsure claims
    decided = Signals(similarity=similarity, decided_by=LOCAL)
    part.answer = [
        Verdict("answer_relevance", label="relevant" if relevant else "irrelevant",
                rationale=relevance.rationale, signals=decided),  # type: ignore[union-attr]
        Verdict("completeness", label="complete" if relevant else "incomplete",
                rationale="answers the question (coverage is judged only by the LLM)" if relevant
                else "does not address the question", signals=decided)]
    if grounded is not None:
        part.answer.append(groundedness(claims))
    return part


def _document_relevant(label: DocumentLabel, bands: Bands) -> bool | None:
    """Two local opinions: the question-document cosine, and the claim-support model's relevance
    where it was read. Either decides where it is sure and the other is not sure otherwise."""
    by_cosine = decide(label.similarity, bands.context_relevance)
    by_model = decide(label.relevance, bands.context_relevance_model)
    if by_cosine is None or by_model is None:
        return by_model if by_cosine is None else by_cosine
    return by_cosine if by_cosine == by_model else None


def _relevant_by_evidence(documents: list[DocumentLabel | None],
                          labels: list[DocumentLabel | None], names: list[str | None],
                          asserted: list[ClaimLabel]) -> None:
    """An unsure document that surely supports a claim of an answer surely relevant to the
    question holds what answers it: relevant, decided locally. (Nothing says a document is
    irrelevant: an answer need not use every relevant document.)"""
    for position, (label, name) in enumerate(zip(labels, names, strict=True)):
        if documents[position] is not None or label is None or names.count(name) > 1:
            continue  # decided, blank, or named alike with another: which one is unknown
        claim = next((c for c in asserted if c.evidence == name), None)
        if claim is not None:
            documents[position] = label.model_copy(update={
                "label": "relevant", "decided_by": LOCAL,
                "reasoning": f"supports the answer's claim \"{claim.claim}\" "
                             f"(support {claim.support:.2f})"})


def groundedness(claims: list[ClaimLabel]) -> Verdict:
    """The score of labelled claims, and who decided them."""
    inferable = sum(c.label == "inferable" for c in claims)
    ungrounded = sum(c.label == "ungrounded" for c in claims)
    deciders = sorted({c.decided_by for c in claims if c.decided_by})
    return Verdict("groundedness",
                   score=inferable / (inferable + ungrounded) if inferable + ungrounded else 1.0,
                   rationale=f"{inferable} of {inferable + ungrounded} checkable claims inferable "
                             f"from the documents ({len(claims) - inferable - ungrounded} generic)",
                   claims=tuple(claims), signals=Signals(decided_by="+".join(deciders) or None))
