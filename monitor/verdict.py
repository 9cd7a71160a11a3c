"""What judges say about a turn: verdicts, typed by what each one rests on.

    Verdict("groundedness", score=0.5, claims=(ClaimLabel(claim="It opens at 9.", label="inferable"),))
    verdict.claims[0].label, verdict.agreement.share, verdict.reference.matched_names

Besides its label or score, a verdict carries (each None where it does not apply):

    documents   context_relevance: each retrieved document's label (by position or id)
    claims      groundedness: each claim's label, and the passage it was checked against
    calls       tool_use: each tool call judged needed, and its arguments supported
    reference   tool_calls: the five metrics against the expected calls, and their counts
    agreement   a panel's votes, or the share of a judge's samples that agreed
    signals     the numbers a verdict was read from (similarity, no-answer probability, ...)

The store keeps them as one JSON object per verdict: `details()` writes it, `from_details()`
reads it back (rows written before the typed verdicts have the same shape).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

# The metrics and their labels are declared in monitor/judge_metrics.py.
from monitor.judge_metrics import LABELS, ClaimSupport, Metric, Relevance, YesNo


class _Detail(BaseModel):
    # A detail records only what its judge set: JSON holds the fields given, nothing more.
    model_config = ConfigDict(frozen=True)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_unset=True)


class DocumentLabel(_Detail):
    """One retrieved document's relevance: by position (LLM judges) or by id (local judge)."""

    index: int | None = None  # 1-based
    id: str | None = None
    label: Relevance
    reasoning: str | None = None
    similarity: float | None = None  # question-document cosine
    relevance: float | None = None  # the claim-support model's P(it helps answer the question)
    decided_by: str | None = None  # a cascade's: "local", or the LLM judge's name

    @property
    def figures(self) -> str:
        """The local scores it was read from, for the pages: "similarity 0.41, relevance 0.97"."""
        return ", ".join(f"{name} {value}" for name, value in (
            ("similarity", self.similarity), ("relevance", self.relevance)) if value is not None)


def evidence_name(document_id: str | None, number: int) -> str:
    """How a claim's `evidence` names the document that decided it: its id, else "document N"
    (N counting from 1 among the documents the local judge read)."""
    return document_id or f"document {number}"


class ClaimLabel(_Detail):
    """One claim of the answer; a local verdict says which passage decided it."""

    claim: str
    label: ClaimSupport
    reasoning: str | None = None  # LLM judges
    support: float | None = None  # the claim-support classifier's probability
    lexical: float | None = None
    similarity: float | None = None
    evidence: str | None = None  # the deciding document: its id, or "document N"
    window: tuple[int, int] | None = None  # the passage's character offsets in that document
    passage: str | None = None
    checked_as: str | None = None  # a short answer is checked together with its question
    contradicts: str | None = None  # a bound of the claim the passage's own figure contradicts
    decided_by: str | None = None  # a cascade's: "local", or the LLM judge's name


class CallLabel(_Detail):
    """One tool call, judged without a reference."""

    name: str
    needed: YesNo
    arguments_supported: YesNo
    reasoning: str | None = None


class ToolCallPair(_Detail):
    """An expected call paired with the call made."""

    expected: str
    actual: str
    matched_arguments: int
    expected_arguments: int
    actual_arguments: int


class ReferenceCounts(_Detail):
    """The calls made against the expected calls (monitor/judges/tool_match.py)."""

    name_precision: float
    name_recall: float
    argument_precision: float
    argument_recall: float
    reliability: float
    expected_calls: int
    actual_calls: int
    matched_names: int
    expected_arguments: int
    actual_arguments: int
    matched_arguments: int  # given and matching (precision)
    matched_required: int  # expected, required and matching (recall)
    pairs: tuple[ToolCallPair, ...] = ()

    COUNTS: ClassVar[tuple[str, ...]] = (
        "expected_calls", "actual_calls", "matched_names", "expected_arguments",
        "actual_arguments", "matched_arguments", "matched_required")
    SCORES: ClassVar[tuple[str, ...]] = (
        "name_precision", "name_recall", "argument_precision", "argument_recall", "reliability")

    def counts(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.COUNTS}


class Agreement(_Detail):
    """How far a verdict was shared: by a panel's judges (with their votes) or by the samples of
    one judge."""

    share: float  # 0..1
    votes: dict[str, str | float | None] | None = None  # judge -> its label, or its score


class Signals(_Detail):
    """The numbers a verdict was read from."""

    empty_documents_skipped: int | None = None  # whitespace-only documents, not judged
    similarity: float | None = None  # question-answer cosine (local answer relevance)
    no_answer_probability: float | None = None  # the no-answer detector's
    sample_scores: tuple[float, ...] | None = None  # each sample's score (sampled LLM judges)
    decided_by: str | None = None  # a cascade's: "local", the LLM judge's name, or both ("+")


@dataclass(slots=True)
class Verdict:
    metric: Metric
    label: str | None = None
    score: float | None = None
    rationale: str = ""
    documents: tuple[DocumentLabel, ...] | None = None
    claims: tuple[ClaimLabel, ...] | None = None
    calls: tuple[CallLabel, ...] | None = None
    reference: ReferenceCounts | None = None
    agreement: Agreement | None = None
    signals: Signals | None = None

    def __post_init__(self) -> None:
        valid = LABELS.get(self.metric)
        if valid is not None and self.label not in valid:
            raise ValueError(f"{self.metric} label {self.label!r} is not one of {valid}")
        if self.score is not None and not 0.0 <= self.score <= 1.0:
            raise ValueError(f"{self.metric} score {self.score} is outside 0..1")

    def details(self) -> dict[str, Any]:
        """What the verdict rests on, as the one JSON object the store keeps (`details_json`)
        and `verdicts show --json` prints."""
        out: dict[str, Any] = {}
        signals = self.signals.to_json() if self.signals is not None else {}
        if "empty_documents_skipped" in signals:
            out["empty_documents_skipped"] = signals.pop("empty_documents_skipped")
        for name in ("documents", "claims", "calls"):
            labels = getattr(self, name)
            if labels is not None:
                out[name] = [label.to_json() for label in labels]
        if self.reference is not None:
            out |= self.reference.to_json()
        out |= signals
        if self.agreement is not None:
            if self.agreement.votes is not None:
                out["votes"] = self.agreement.votes
            out["agreement"] = self.agreement.share
        return out

    @classmethod
    def from_details(cls, metric: Metric, label: str | None, score: float | None,
                     rationale: str, details: dict[str, Any]) -> Verdict:
        """A verdict read back from the store (the inverse of `details()`)."""
        d = dict(details)
        agreement = (Agreement(share=d.pop("agreement"), votes=d.pop("votes", None))
                     if "agreement" in d else None)
        signals = {name: d.pop(name) for name in Signals.model_fields if name in d}
        return cls(
            metric, label=label, score=score, rationale=rationale,
            documents=_labels(DocumentLabel, d.get("documents")),
            claims=_labels(ClaimLabel, d.get("claims")),
            calls=_labels(CallLabel, d.get("calls")),
            reference=ReferenceCounts.model_validate(d) if "reliability" in d else None,
            agreement=agreement, signals=Signals.model_validate(signals) if signals else None)

    def to_dict(self) -> dict[str, Any]:
        """The verdict as plain JSON-ready data (a worker process's reply, say)."""
        return {"metric": self.metric, "label": self.label, "score": self.score,
                "rationale": self.rationale, "details": self.details()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        return cls.from_details(data["metric"], data["label"], data["score"],
                                data["rationale"], data["details"])


def _labels(kind: type[_Detail], rows: list[dict[str, Any]] | None) -> Any:
    return None if rows is None else tuple(kind.model_validate(row) for row in rows)


@dataclass(slots=True)
class JudgeResult:
    judge: str
    verdicts: list[Verdict]
    calls: int = 0  # LLM calls made
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    prompt_version: str | None = None
    # Who judged: the model an LLM endpoint reported in its responses, or the local models'
    # checksums ("claim_support@… minilm_l6@…", 8 digits of each sha256)
    model: str | None = None

    def get(self, metric: Metric) -> Verdict | None:
        return next((v for v in self.verdicts if v.metric == metric), None)


@dataclass(frozen=True)
class SessionVerdict:
    """A whole conversation's verdict (the LLM session judge's), and what it cost."""

    judge: str
    outcome: str  # resolved | unresolved | escalated | abandoned
    frustration: str  # none | some | high
    reasoning: str
    calls: int
    input_tokens: int
    output_tokens: int
