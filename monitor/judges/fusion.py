"""Fusion-Eval: the assistant evaluators' scores, and the plan saying which informs which
criterion, handed to the LLM judge (and fused without an LLM by `calibrate`'s baselines).

Evaluators (computed by the local judge; ranges):
    answer_similarity  -1..1  cosine of question and answer embeddings (all-MiniLM-L6-v2)
    answered           0 | 1  1 unless the no-answer detector fires
    context_share      0..1   share of documents the local judge finds relevant to the question
    claim_support      0..1   share of checkable claims the claim-support classifier supports
    lexical_support    0..1   mean share of a claim's content words found in its best document
"""

from __future__ import annotations

from monitor.verdict import JudgeResult

# criterion -> evaluators that inform it, the first being the one LLMSel selects.
PLAN: dict[str, list[str]] = {
    "answer_relevance": ["answer_similarity"],
    "completeness": ["answered", "answer_similarity"],
    "groundedness": ["claim_support", "lexical_support"],
    "context_relevance": ["context_share"],
}
EVALUATORS = ["answer_similarity", "answered", "claim_support", "lexical_support",
              "context_share"]
DESCRIPTIONS = {
    "answer_similarity": "cosine similarity of question and answer embeddings, -1..1",
    "answered": "1 unless a refusal detector found the answer declines, 0 or 1",
    "context_share": "share of documents small local models find relevant to the question, 0..1",
    "claim_support": "share of the answer's claims a small classifier finds supported, 0..1",
    "lexical_support": "mean share of each claim's content words found in a document, 0..1",
}


def evaluator_scores(local: JudgeResult) -> dict[str, float]:
    """The assistant evaluators of a turn, read from the local judge's verdicts."""
    out: dict[str, float] = {}
    completeness = local.get("completeness")
    if completeness is not None:
        out["answered"] = 0.0 if completeness.label == "no_answer" else 1.0
    relevance = local.get("answer_relevance")
    similarity = relevance.signals.similarity if relevance and relevance.signals else None
    if similarity is not None:
        out["answer_similarity"] = similarity
    context = local.get("context_relevance")
    if context is not None and context.score is not None:
        out["context_share"] = context.score
    grounded = local.get("groundedness")
    if grounded is not None and grounded.score is not None:
        out["claim_support"] = grounded.score
        lexical = [c.lexical for c in grounded.claims or () if c.lexical is not None]
        out["lexical_support"] = sum(lexical) / len(lexical) if lexical else 1.0
    return out


def fusion_block(scores: dict[str, float], criteria: list[str]) -> str:
    """The part of the prompt that hands the scores and the plan to the LLM judge. The scores
    are ours, not trace content, so they sit outside the data block."""
    lines = ["Assistant evaluator scores for this turn (cheap automatic evaluators; evidence to "
             "weigh, not the answer: your own reading of the data decides):"]
    for name in EVALUATORS:
        if name in scores:
            lines.append(f"- {name} = {scores[name]:.2f} ({DESCRIPTIONS[name]})")
    lines.append("Plan: " + "; ".join(f"{c} <- {', '.join(PLAN[c])}" for c in criteria
                                      if c in PLAN))
    return "\n".join(lines)
