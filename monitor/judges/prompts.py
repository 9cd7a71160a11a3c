"""Judge prompts as versioned data, their typed outputs, and tolerant parsing of what comes back.

    prompt = PROMPTS["answer"]
    messages = prompt.render(question=..., documents=..., answer=...)
    verdict = parse(prompt.output, text)       # ParseError naming what is wrong

Each prompt lives in prompts/<name>.yaml (system text with few-shot examples, user template,
version). A judge metric declared with a prompt no other metric shares (monitor/judge_metrics.py)
gets its output model from the declaration (`one_verdict_output`). Trace content is placed
inside <data-NONCE> tags with a fresh random nonce per call: text inside the data cannot close
the block it sits in, and the instructions say it is data.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from monitor.judge_metrics import (
    JUDGE_METRICS,
    ClaimSupport,
    Completeness,
    JudgeMetric,
    Relevance,
    YesNo,
)

PROMPT_DIR = Path(__file__).parent / "prompts"


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DocumentLabel(_Output):
    index: int
    reasoning: str
    label: Relevance


class ContextRelevanceOutput(_Output):
    documents: list[DocumentLabel]


class AnswerRelevanceLabel(_Output):
    reasoning: str
    label: Relevance


class CompletenessLabel(_Output):
    reasoning: str
    label: Completeness


class ClaimLabel(_Output):
    claim: str
    reasoning: str
    label: ClaimSupport


class AnswerOutput(_Output):
    answer_relevance: AnswerRelevanceLabel
    completeness: CompletenessLabel
    claims: list[ClaimLabel]


class GivenClaimLabel(_Output):
    index: int
    reasoning: str
    label: ClaimSupport


class AnswerClaimsOutput(_Output):
    """The documents' labels, the answer's and the given claims' (the cascade asks only about
    the documents and claims it is unsure of, in one call)."""

    documents: list[DocumentLabel]
    answer_relevance: AnswerRelevanceLabel
    completeness: CompletenessLabel
    claims: list[GivenClaimLabel]


class ToolCallLabel(_Output):
    index: int
    reasoning: str
    needed: YesNo
    arguments_supported: YesNo


class ToolUseOutput(_Output):
    calls: list[ToolCallLabel]


SessionOutcome = Literal["resolved", "unresolved", "escalated", "abandoned"]
Frustration = Literal["none", "some", "high"]


class SessionOutput(_Output):
    """A whole conversation's verdict (the session judge's)."""

    reasoning: str
    outcome: SessionOutcome
    frustration: Frustration


def one_verdict_output(metric: JudgeMetric) -> type[_Output]:
    """The output of a prompt that asks for one metric alone: its reasoning, then its label (one
    of the declared ones) or its score (0..1)."""
    value: Any = (Literal[metric.labels], ...) if metric.labels \
        else (Annotated[float, Field(ge=0.0, le=1.0)], ...)
    return create_model(f"{metric.name.title().replace('_', '')}Output", __base__=_Output,
                        reasoning=(str, ...), **{"label" if metric.labels else "score": value})


class ParseError(ValueError):
    """The judge's reply is not a valid verdict; the message says why (and is safe to log:
    it names fields and labels, never quotes the reply)."""


@dataclass(frozen=True)
class Prompt:
    name: str
    version: str
    system: Template
    user: Template
    output: type[_Output]
    metric: JudgeMetric | None = None  # the one metric it asks for (one_verdict_output)

    @property
    def tag(self) -> str:
        return f"{self.name}@{self.version}"

    def render(self, extra: str | None = None, **values: str) -> list[dict[str, str]]:
        """`extra`: our own text (Fusion-Eval's scores and plan), after the data block."""
        nonce = secrets.token_hex(4)
        user = self.user.safe_substitute(nonce=nonce, **values)
        if extra:
            user = f"{user}\n{extra}\n"
        return [{"role": "system", "content": self.system.safe_substitute(nonce=nonce)},
                {"role": "user", "content": user}]

    def response_format(self, mode: str, counts: dict[str, int] | None = None
                        ) -> dict[str, Any] | None:
        """`counts`: the exact number of items each of the output's lists must have (one per
        document, claim or tool call), so a constrained decoder cannot skip or add any."""
        if mode in ("json_schema", "json_object_schema"):
            schema = self.output.model_json_schema()
            for name, count in (counts or {}).items():
                field = schema["properties"][name]
                field["minItems"] = field["maxItems"] = count
            if mode == "json_object_schema":  # llama-cpp-python's server, Anyscale, Together
                return {"type": "json_object", "schema": schema}
            return {"type": "json_schema", "json_schema": {
                "name": self.name, "strict": True, "schema": schema}}
        if mode == "json_object":
            return {"type": "json_object"}
        return None


def _load(name: str, output: type[_Output], metric: JudgeMetric | None = None) -> Prompt:
    data = yaml.safe_load((PROMPT_DIR / f"{name}.yaml").read_text())
    return Prompt(data["name"], str(data["version"]), Template(data["system"]),
                  Template(data["user"]), output, metric)


# The prompts whose outputs monitor/judges/llm.py reads itself: several metrics in one call, or a
# label per document, claim or tool call.
_BESPOKE: dict[str, type[_Output]] = {
    "context_relevance": ContextRelevanceOutput,
    "answer": AnswerOutput,
    "answer_claims": AnswerClaimsOutput,  # the cascade's `answer`
    "tool_use": ToolUseOutput,
    "session": SessionOutput,  # a whole conversation (LLMJudge.judge_session)
}
PROMPTS: dict[str, Prompt] = {
    **{name: _load(name, output) for name, output in _BESPOKE.items()},
    **{m.prompt: _load(m.prompt, one_verdict_output(m), m) for m in JUDGE_METRICS
       if m.prompt is not None and m.prompt not in _BESPOKE},
}

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse(output: type[_Output], text: str | None) -> Any:
    """The first JSON object in `text` (code fences and prose around it are tolerated),
    validated against `output`."""
    if not text or not text.strip():
        raise ParseError("empty reply")
    fenced = _FENCE.search(text)
    candidate = fenced.group(1) if fenced else text
    start = candidate.find("{")
    if start < 0:
        raise ParseError("no JSON object in the reply")
    try:
        data, _ = json.JSONDecoder().raw_decode(candidate[start:])
    except ValueError as exc:
        raise ParseError(f"reply is not valid JSON ({exc.args[0].split(':')[0]})") from None
    try:
        return output.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors())
        raise ParseError(f"reply does not match {output.__name__}: {problems}") from None
