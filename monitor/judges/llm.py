"""LLM judges on an OpenAI-compatible endpoint inside the tenant.

    judge = LLMJudge(endpoint_settings, settings.judging.llm, metrics)
    result = await judge.judge(turn)      # JudgeError / JudgeUnavailable on failure

Per turn, calls run concurrently, each carrying the turn's content once:
`context_relevance` (all documents not yet judged for this question, in one call), `answer`
(answer relevance, completeness and the labelled claims for groundedness, in one call),
when the turn called tools, `tool_use`, and one call for each metric declared with a prompt of
its own (monitor/judge_metrics.py). Verdicts are cached by content hash, so a question and
document pair, or a whole repeated answer, is not judged twice. Personal data and secrets in the
turn are replaced by placeholders before anything is put in a prompt (monitor/judges/redact.py).
The `openai` client retries 429 / 5xx / timeouts itself, honouring Retry-After; a circuit breaker
stops calling an endpoint that keeps failing.

What is an outage of the endpoint (JudgeUnavailable: the breaker counts it, the turn waits and
no attempt is spent) and what is about the turn (JudgeError: an attempt is spent):
- unreachable, 5xx, 429, timeouts, other 4xx (401, 403, 404...): an outage;
- replies that are not verdicts after the bounded re-ask (prose, wrong schema, invalid labels,
  a body that is no completion): an outage, unless the endpoint gave other turns valid verdicts
  of that prompt between two tries of this turn: then the turn is the cause;
- 400, 413, 422: the endpoint refuses this request's content (too long...): the turn.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Any, TypeVar

import openai

from monitor.config import (
    CascadeSettings,
    CircuitBreakerSettings,
    LLMEndpointSettings,
    LLMJudgingSettings,
    RedactionSettings,
)
from monitor.judge_metrics import Relevance
from monitor.judges.base import Judge, JudgeError, JudgeUnavailable, gather_all
from monitor.judges.cascade import (
    LOCAL,
    Band,
    Bands,
    Calibration,
    LocalPart,
    band_of,
    groundedness,
    settle,
)
from monitor.judges.fusion import evaluator_scores, fusion_block
from monitor.judges.prompts import PROMPTS, ParseError, Prompt, parse
from monitor.judges.redact import Redactor, redact_turn, shared_analyzer
from monitor.judges.telemetry import JudgeTelemetry
from monitor.model import AssistantTurn, utf8_text
from monitor.verdict import (
    Agreement,
    CallLabel,
    ClaimLabel,
    DocumentLabel,
    JudgeResult,
    SessionVerdict,
    Signals,
    Verdict,
)


class CircuitBreaker:
    """Closed → open after `failure_threshold` consecutive failures → half-open after
    `reset_timeout_s`: calls go through again, the first success closes the circuit and any
    failure opens it again at once."""

    def __init__(self, settings: CircuitBreakerSettings, clock: Any = time.monotonic) -> None:
        self.settings = settings
        self.clock = clock
        self.failures = 0
        self.opened_at: float | None = None

    @property
    def state(self) -> str:
        if self.opened_at is None:
            return "closed"
        return "half_open" if self.clock() - self.opened_at >= self.settings.reset_timeout_s \
            else "open"

    def before_call(self, name: str) -> None:
        if self.state == "open":
            wait = self.settings.reset_timeout_s - (self.clock() - (self.opened_at or 0))
            raise JudgeUnavailable(f"judge {name}: circuit open", retry_after_s=max(wait, 1.0))

    def success(self) -> None:
        self.failures, self.opened_at = 0, None

    def failure(self) -> None:
        self.failures += 1
        if self.state == "half_open" or self.failures >= self.settings.failure_threshold:
            self.opened_at = self.clock()


@dataclass
class Usage:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    prompts: set[str] = field(default_factory=set)
    models: set[str] = field(default_factory=set)  # as the endpoint reported them


log = logging.getLogger(__name__)

# The declared metrics with a prompt of their own, asked whenever the turn has a question.
ASKED_ALONE = tuple(prompt for prompt in PROMPTS.values() if prompt.metric is not None)
REFUSED_CONTENT = frozenset({400, 413, 422})  # the request's content is refused: about the turn
_GARBLED_MEMORY = 10_000  # turns remembered as having had invalid replies


class Garbled(JudgeError):
    """The replies to one prompt were not a verdict, after the re-asks."""

    def __init__(self, message: str, tag: str) -> None:
        super().__init__(message)
        self.tag = tag


class Endpoint:
    """One endpoint: the client, its concurrency bound, its circuit breaker, and how many valid
    verdicts each prompt got from it (which tells an outage from a turn that alone fails)."""

    def __init__(self, settings: LLMEndpointSettings, breaker: CircuitBreakerSettings,
                 metrics: JudgeTelemetry) -> None:
        self.settings = settings
        self.metrics = metrics
        key = settings.api_key.get_secret_value() if settings.api_key else "unused"
        self.client = openai.AsyncOpenAI(base_url=settings.base_url, api_key=key,
                                         timeout=settings.timeout_s,
                                         max_retries=settings.max_retries)
        self.semaphore = asyncio.Semaphore(settings.max_concurrency)
        self.breaker = CircuitBreaker(breaker)
        self.valid: Counter[str] = Counter()  # prompt tag -> valid verdicts received
        self.in_flight = 0  # calls started and not finished
        self.model: str | None = None  # the model it reported last

    def _reported(self, model: object, usage: Usage) -> None:
        """The model the endpoint says answered: kept with the verdicts, and a change counted
        (a new deployment, another quantisation behind the same URL changes the judge)."""
        if not isinstance(model, str) or not model:
            return
        model = model[:200]
        usage.models.add(model)
        if self.model is not None and model != self.model:
            self.metrics.judge_model_changes.labels(self.settings.name).inc()
            log.warning("judge %s: the endpoint now reports model %r (before: %r)",
                        self.settings.name, model, self.model)
        self.model = model

    def outage(self, message: str) -> JudgeUnavailable:
        self.breaker.failure()
        return JudgeUnavailable(message, self.breaker.settings.reset_timeout_s)

    def answered(self, tag: str) -> None:
        """A reply parsed as a verdict: the endpoint works."""
        self.breaker.success()
        self.valid[tag] += 1

    async def complete(self, prompt: Prompt, messages: list[dict[str, str]], usage: Usage,
                       items: Items | None = None) -> str:
        s = self.settings
        kwargs: dict[str, Any] = {}
        response_format = prompt.response_format(
            s.structured_output, {name: len(i) for name, i in (items or {}).items()})
        if response_format is not None:
            kwargs["response_format"] = response_format
        start = time.perf_counter()
        self.in_flight += 1
        try:
            async with self.semaphore:
                self.breaker.before_call(s.name)  # after the wait: it may have opened meanwhile
                response = await self.client.chat.completions.create(
                    model=s.model, messages=messages, temperature=s.temperature,  # type: ignore[arg-type]
                    max_tokens=s.max_output_tokens, **kwargs)
        except openai.APIStatusError as exc:
            if exc.status_code in REFUSED_CONTENT:  # this request will not succeed as it is
                self.metrics.llm_calls.labels(s.name, "refused").inc()
                raise JudgeError(f"judge {s.name}: HTTP {exc.status_code}") from None
            self.metrics.llm_calls.labels(s.name, "unavailable").inc()  # 5xx, 429, 401, 404...
            raise self.outage(f"judge {s.name}: HTTP {exc.status_code}") from None
        except (openai.APIError, json.JSONDecodeError) as exc:  # unreachable, timed out, a body
            self.metrics.llm_calls.labels(s.name, "unavailable").inc()  # that is not JSON...
            raise self.outage(f"judge {s.name}: {type(exc).__name__}") from None
        finally:
            self.in_flight -= 1
        # The breaker counts the reply once it is known to be a verdict (see `answered`).
        self.metrics.llm_calls.labels(s.name, "ok").inc()
        self.metrics.llm_call_latency.labels(s.name).observe(time.perf_counter() - start)
        usage.calls += 1
        usage.prompts.add(prompt.tag)
        counted = getattr(response, "usage", None)
        if counted is not None:
            usage.input_tokens += counted.prompt_tokens
            usage.output_tokens += counted.completion_tokens
        self._reported(getattr(response, "model", None), usage)
        # A body that is no completion reads as an empty reply: invalid, like any garbage. A
        # model that stops mid-emoji sends a lone surrogate, which the store could not write.
        choices = getattr(response, "choices", None) or [None]
        return utf8_text(getattr(getattr(choices[0], "message", None), "content", None) or "")


class VerdictCache:
    """LRU of parsed outputs keyed by a hash of (prompt version, model, content)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[str, Any] = OrderedDict()
        self.hits = 0

    @staticmethod
    def key(*parts: Any) -> str:
        return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()

    def get(self, key: str) -> Any:
        if key in self._items:
            self._items.move_to_end(key)
            self.hits += 1
            return self._items[key]
        return None

    def put(self, key: str, value: Any) -> None:
        if self.size:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


Label = TypeVar("Label", bound=str)  # a prompt's label type (a Literal): kept by the vote


def majority(labels: list[Label]) -> tuple[Label, float]:
    """The most frequent label (ties: the first seen) and the share that voted for it."""
    winner, votes = Counter(labels).most_common(1)[0]  # most_common is stable: first seen wins
    return winner, votes / len(labels)


Items = dict[str, list[int]]  # an output's list -> the indices its items must label, in order


def _in_order(output: Any, items: Items) -> None:
    """Each of the verdict's lists labels exactly as many items as asked; put them in index
    order when their indices are exactly those asked (else their order is taken as given)."""
    for name, indices in items.items():
        labelled = getattr(output, name)
        if len(labelled) != len(indices):
            raise ParseError(f"expected {len(indices)} labelled {name}, got {len(labelled)}")
        if sorted(item.index for item in labelled) == indices:
            labelled.sort(key=lambda item: item.index)


async def _settled(verdicts: list[Verdict]) -> list[Verdict]:
    """Verdicts the cascade's local judge decided, among the LLM's awaited calls."""
    return verdicts


def _decided_by(verdict: Verdict, name: str) -> Verdict:
    """A cascade's verdict the LLM judged whole (unsure whether the answer declines), marked so."""
    if verdict.signals is not None and verdict.signals.decided_by or verdict.metric == "tool_use":
        return verdict
    signals = (verdict.signals or Signals()).model_copy(update={"decided_by": name})
    claims = verdict.claims and tuple(c.model_copy(update={"decided_by": name})
                                      for c in verdict.claims)
    return dataclasses.replace(verdict, signals=signals, claims=claims)


def _decider(name: str | None) -> str:
    return "local" if name == LOCAL else "llm"


def _decided_locally(verdict: Verdict) -> bool:
    deciders = [*(d.decided_by for d in verdict.documents or ()),
                *(c.decided_by for c in verdict.claims or ()),
                verdict.signals.decided_by if verdict.signals else None]
    return any(d is not None and LOCAL in d.split("+") for d in deciders)


def _counted(name: str, count: int) -> Items:
    return {name: list(range(1, count + 1))}


def _numbered(items: list[str]) -> str:
    return "\n".join(f"[{i}] {text}" for i, text in enumerate(items, 1)) or "(none)"


STEP_RESULT_CHARS = 500  # of a tool's result or error, in the trajectory a judge reads


def trajectory_text(turn: AssistantTurn) -> str:
    """The turn's steps as a judge reads them: numbered, nested under their agent, a tool
    call with its arguments and its result or error (cut to STEP_RESULT_CHARS)."""
    depth: list[int] = []
    lines = []
    for n, step in enumerate(turn.steps):
        depth.append(0 if step.parent is None else depth[step.parent] + 1)
        if step.kind == "llm":
            text = "llm"
        elif step.kind == "handoff":
            text = f"handoff to {step.name}"  # the agent handed to
        else:
            text = f"{step.kind} {step.name}"
        if step.tool_call is not None:
            call = turn.tool_calls[step.tool_call]
            outcome = f"error: {call.error}" if call.error else json.dumps(call.result, default=str)
            text = (f"tool {call.name}({json.dumps(call.arguments, default=str)}) -> "
                    f"{outcome[:STEP_RESULT_CHARS]}")
        elif step.error:
            text += f" -> error: {step.error[:STEP_RESULT_CHARS]}"
        lines.append(f"{'  ' * depth[-1]}[{n + 1}] {text}")
    return "\n".join(lines) or "(no steps)"


SESSION_TEXT_CHARS = 600  # of each message and answer, in the conversation a session judge reads
ENDED = {"ended": "the app ended the conversation.",
         "idle": "the user went quiet: the conversation timed out."}


def session_text(turns: list[AssistantTurn]) -> str:
    """A conversation as the session judge reads it: each turn numbered, the user's message,
    the tools called (failed ones marked), the answer, the user's rating."""
    def cut(text: str | None, empty: str) -> str:
        return (text or "").strip()[:SESSION_TEXT_CHARS] or empty

    lines = []
    for n, turn in enumerate(turns, 1):
        lines.append(f"[{n}] User: {cut(turn.question, '(no message)')}")
        if turn.tool_calls:
            lines.append("    Tools: " + ", ".join(
                f"{c.name} (failed)" if c.error else c.name for c in turn.tool_calls))
        lines.append(f"    Assistant: {cut(turn.answer, '(no answer)')}")
        if turn.feedback is not None:
            lines.append(f"    User rating: {turn.feedback.score:+.1f} (-1 bad .. +1 good)")
    return "\n".join(lines)


def _context_verdict(labels: list[tuple[Relevance, str]],
                     settled: list[DocumentLabel | None] | None, judge: str) -> Verdict:
    """Context relevance from every document's (label, reasoning); `settled`: the cascade's
    local labels (None: labelled by the LLM `judge`), whose own fields are kept."""
    relevant = sum(label == "relevant" for label, _ in labels)
    local = settled or [None] * len(labels)
    documents = tuple(
        DocumentLabel(index=i + 1, label=label, reasoning=why) if settled is None
        else mine.model_copy(update={"index": i + 1}) if mine is not None
        else DocumentLabel(index=i + 1, label=label, reasoning=why, decided_by=judge)
        for i, ((label, why), mine) in enumerate(zip(labels, local, strict=True)))
    deciders = sorted({d.decided_by for d in documents if d.decided_by})
    return Verdict("context_relevance", score=relevant / len(labels),
                   rationale=f"{relevant} of {len(labels)} documents relevant", documents=documents,
                   signals=Signals(decided_by="+".join(deciders)) if deciders else None)


def cascade_bands(cascade: CascadeSettings, local: Any) -> Bands:
    """The configured bands; the claim-support model's from its card by default."""
    if local is None:
        raise ValueError("the cascade needs the local judge, as `evaluators`")
    card = local.claim_support.card

    def from_card(configured: tuple[float, float] | None, entry: dict[str, Any] | None,
                  key: str) -> Band:
        if configured is not None:
            return Band(*configured)
        if entry is None or "band" not in entry:
            raise ValueError(f"the claim-support model's card has no cascade band: set "
                             f"judging.cascade.{key}")
        return Band(entry["band"]["low"], entry["band"]["high"])

    def claims_band() -> Band:
        share = cascade.supported_share
        if cascade.groundedness is not None or share is None:
            return from_card(cascade.groundedness, card, "groundedness")
        band = card.get("band") or {}
        if "calibration" not in band:
            raise ValueError("the claim-support model's card has no dev calibration to refit its "
                             "claims' band for judging.cascade.supported_share: set it to null "
                             "(the card's band), or set judging.cascade.groundedness")
        return band_of(Calibration(**band["calibration"]), band["accuracy"], share)

    return Bands(Band(*(cascade.context_relevance or local.settings.context_relevance_band)),
                 Band(*cascade.answer_relevance),
                 from_card(cascade.no_answer, {"band": local.no_answer.band}
                           if local.no_answer.band else None, "no_answer"),
                 claims_band(),
                 from_card(cascade.context_relevance_model, card.get("relevance"),
                           "context_relevance_model"))


class LLMJudge:
    def __init__(self, endpoint: LLMEndpointSettings, settings: LLMJudgingSettings,
                 metrics: JudgeTelemetry, evaluators: Judge | None = None,
                 redaction: RedactionSettings | None = None,
                 cascade: CascadeSettings | None = None) -> None:
        """`evaluators`: the local judge, whose scores the prompt gets with `settings.fusion`
        (Fusion-Eval) and which decides what it is sure of with `cascade.enabled`;
        `redaction`: what counts as personal data (with `settings.redact`; default: defaults)."""
        self.name = endpoint.name
        self.evaluators = evaluators
        self.bands = cascade_bands(cascade, evaluators) \
            if cascade is not None and cascade.enabled else None
        self.settings = settings
        # Loaded now, so that a missing NER model stops start-up rather than the first turn.
        self.analyzer = shared_analyzer(redaction or RedactionSettings()) \
            if settings.redact else None
        self.endpoint = Endpoint(endpoint, settings.circuit_breaker, metrics)
        self.metrics = metrics
        self.cache = VerdictCache(settings.cache_size)
        # trace id -> the endpoint's valid verdicts per prompt when the turn's last try that
        # got invalid replies began
        self._garbled: OrderedDict[str, Counter[str]] = OrderedDict()

    async def aclose(self) -> None:
        await self.endpoint.client.close()

    async def _ask(self, prompt: Prompt, usage: Usage, items: Items | None = None,
                   extra: str | None = None, **values: str) -> Any:
        """One verdict from the endpoint, re-asked (bounded) when the reply does not parse.
        `items`: the documents, claims or calls each of its lists must label, in order."""
        messages = prompt.render(extra, **values)
        for attempt in range(self.settings.parse_retries + 1):
            text = await self.endpoint.complete(prompt, messages, usage, items)
            try:
                output = parse(prompt.output, text)
                if items is not None:
                    _in_order(output, items)
            except ParseError as exc:
                self.metrics.llm_calls.labels(self.name, "unparseable").inc()
                if attempt == self.settings.parse_retries:
                    raise Garbled(f"judge {self.name}: {prompt.tag}: {exc}", prompt.tag) from None
                messages = [*messages, {"role": "assistant", "content": text},
                            {"role": "user", "content": f"That reply is not valid: {exc}. "
                             "Answer again with the JSON object only."}]
            else:
                self.endpoint.answered(prompt.tag)
                return output
        raise AssertionError("unreachable")

    async def _sampled(self, prompt: Prompt, usage: Usage, items: Items | None = None,
                       extra: str | None = None, **values: str) -> list[Any]:
        samples = self.endpoint.settings.samples
        if extra:
            usage.prompts.add(f"{prompt.tag}+fusion")
        return await gather_all(*(self._ask(prompt, usage, items, extra, **values)
                                  for _ in range(samples)))

    async def judge(self, turn: AssistantTurn) -> JudgeResult:
        start = time.perf_counter()
        usage = Usage()
        local = await self.evaluators.judge(turn) if self.evaluators is not None else None
        scores = evaluator_scores(local) if local is not None and self.settings.fusion else None
        part = settle(turn, local, self.bands) if self.bands and local is not None else None
        claims = [part.claims[i].claim for i in part.unsure] if part and part.claims else []
        if self.analyzer is not None:  # off the event loop: NER takes a tenth of a second
            turn, claims = await asyncio.to_thread(self._redacted, turn, claims)
        question = turn.question or ""
        docs = [d.content for d in turn.documents if d.content]
        tasks = []
        # The cascade asks about the unsure documents in the call about the answer, when it
        # makes one: one call, the documents sent once.
        together = (part is not None and part.answer is None and part.claims is not None)
        if question and docs and not together:
            tasks.append(self._context_relevance(question, docs, usage, scores,
                                                 part.documents if part else None))
        if question and part is not None and part.answer is not None:
            tasks.append(_settled(part.answer))
        elif question and part is not None and part.claims is not None:
            tasks.append(self._answer_claims(question, docs, turn.answer or "", part, claims,
                                             usage, scores))
        elif question:
            tasks.append(self._answer(question, docs, turn.answer or "", usage, scores))
        if question and turn.tool_calls and turn.expected_tool_calls is None:
            # With expected calls the reference-based judge applies instead.
            tasks.append(self._tool_use(question, turn, usage))
        if question:
            tasks += [self._alone(prompt, turn, docs, usage) for prompt in ASKED_ALONE
                      if turn.agentic or not prompt.metric.trajectory]  # type: ignore[union-attr]
        valid_before = self.endpoint.valid.copy()
        try:
            verdicts = [v for group in await gather_all(*tasks) for v in group]
        except Garbled as exc:
            raise self._garbled_turn(turn.trace_id, exc, valid_before) from None
        self._garbled.pop(turn.trace_id, None)
        if part is not None:
            verdicts = [_decided_by(v, self.name) for v in verdicts]
            self._count_decisions(verdicts)
            if any(_decided_locally(v) for v in verdicts):
                usage.models.add(local.model or LOCAL)  # type: ignore[union-attr]
        return JudgeResult(self.name, verdicts, calls=usage.calls, input_tokens=usage.input_tokens,
                           output_tokens=usage.output_tokens,
                           latency_s=time.perf_counter() - start,
                           prompt_version=";".join(sorted(usage.prompts)) or None,
                           model=";".join(sorted(usage.models)) or None)

    async def judge_session(self, turns: list[AssistantTurn], closed: str) -> SessionVerdict:
        """A closed conversation, read whole (its stored turns, in order, redacted as every
        prompt is); `closed`: idle or ended. JudgeError / JudgeUnavailable as `judge`."""
        usage = Usage()
        if self.analyzer is not None:
            redactor = Redactor(self.analyzer)  # one placeholder per value across the turns
            turns = await asyncio.to_thread(lambda: [redact_turn(t, redactor) for t in turns])
        output = await self._ask(PROMPTS["session"], usage, transcript=session_text(turns),
                                 ended=ENDED[closed])
        return SessionVerdict(self.name, output.outcome, output.frustration, output.reasoning,
                              usage.calls, usage.input_tokens, usage.output_tokens)

    def _redacted(self, turn: AssistantTurn, claims: list[str]) -> tuple[AssistantTurn, list[str]]:
        """The turn and the claims to be labelled, one placeholder per value across them."""
        redactor = Redactor(self.analyzer)  # type: ignore[arg-type]
        turn = redact_turn(turn, redactor)
        return turn, [c or "" for c in redactor.many(claims)]

    def _count_decisions(self, verdicts: list[Verdict]) -> None:
        """Each document, answer and claim by who decided it (the cascade's share of the LLM)."""
        decided = self.metrics.cascade_decisions
        for v in verdicts:
            if v.metric == "context_relevance":
                for d in v.documents or ():
                    decided.labels(self.name, "document", _decider(d.decided_by)).inc()
            elif v.metric == "completeness":  # one answer: its relevance and completeness
                decider = _decider(v.signals.decided_by if v.signals else None)
                decided.labels(self.name, "answer", decider).inc()
            elif v.metric == "groundedness":
                for c in v.claims or ():
                    decided.labels(self.name, "claim", _decider(c.decided_by)).inc()

    def _garbled_turn(self, trace_id: str, exc: Garbled, valid_before: Counter[str]
                      ) -> JudgeError:
        """Invalid replies are an outage of the endpoint, unless it gave valid verdicts of the
        same prompt (to other turns) between the start of this turn's previous invalid try and
        the start of this one (`valid_before`): then the turn is the cause; it spends an attempt.
        Without other traffic in between it stays an outage: retried, never lost."""
        previous = self._garbled.pop(trace_id, None)
        self._garbled[trace_id] = valid_before
        while len(self._garbled) > _GARBLED_MEMORY:
            self._garbled.popitem(last=False)
        if previous is not None and valid_before[exc.tag] > previous[exc.tag]:
            return JudgeError(f"{exc}; other turns get valid verdicts, this one does not")
        return self.endpoint.outage(f"{exc}; the judge is treated as unavailable")

    async def _context_relevance(self, question: str, docs: list[str], usage: Usage,
                                 scores: dict[str, float] | None = None,
                                 settled: list[DocumentLabel | None] | None = None
                                 ) -> list[Verdict]:
        """`settled`: the documents the cascade's local judge decided (None: the others)."""
        prompt = PROMPTS["context_relevance"]
        model = self.endpoint.settings.model
        keys = [self.cache.key(prompt.tag, model, question, doc) for doc in docs]
        local = settled or [None] * len(docs)
        labels: list[tuple[Relevance, str] | None] = [
            (d.label, "") if d is not None else self.cache.get(k)
            for d, k in zip(local, keys, strict=True)]
        todo = [i for i, label in enumerate(labels) if label is None]
        if todo:
            extra = fusion_block(scores, ["context_relevance"]) if scores else None
            outputs = await self._sampled(prompt, usage, _counted("documents", len(todo)), extra,
                                          question=question,
                                          documents=_numbered([docs[i] for i in todo]),
                                          count=str(len(todo)))
            for position, i in enumerate(todo):
                votes = [o.documents[position] for o in outputs]
                label, _ = majority([v.label for v in votes])
                labels[i] = (label, votes[0].reasoning)
                self.cache.put(keys[i], labels[i])
        return [_context_verdict(labels, settled, self.name)]  # type: ignore[arg-type]

    async def _answer(self, question: str, docs: list[str], answer: str, usage: Usage,
                      scores: dict[str, float] | None = None) -> list[Verdict]:
        prompt = PROMPTS["answer"]
        key = self.cache.key(prompt.tag, self.endpoint.settings.model, question, docs, answer,
                             bool(scores))
        outputs = self.cache.get(key)
        if outputs is None:
            extra = fusion_block(scores, ["answer_relevance", "completeness", "groundedness"]) \
                if scores else None
            outputs = await self._sampled(prompt, usage, None, extra, question=question,
                                          documents=_numbered(docs), answer=answer or "(empty)")
            self.cache.put(key, outputs)
        relevance, relevance_agreement = majority([o.answer_relevance.label for o in outputs])
        completeness, completeness_agreement = majority([o.completeness.label for o in outputs])
        first = outputs[0]
        verdicts = [
            Verdict("answer_relevance", label=relevance, rationale=first.answer_relevance.reasoning,
                    agreement=Agreement(share=relevance_agreement)),
            Verdict("completeness", label=completeness, rationale=first.completeness.reasoning,
                    agreement=Agreement(share=completeness_agreement)),
        ]
        if docs and completeness != "no_answer":
            sample_scores = []
            for output in outputs:
                grounded = sum(c.label == "inferable" for c in output.claims)
                ungrounded = sum(c.label == "ungrounded" for c in output.claims)
                sample_scores.append(
                    grounded / (grounded + ungrounded) if grounded + ungrounded else 1.0)
            score = sum(sample_scores) / len(sample_scores)
            claims = tuple(ClaimLabel(claim=c.claim, label=c.label, reasoning=c.reasoning)
                           for c in first.claims)
            verdicts.append(Verdict(
                "groundedness", score=score,
                rationale=f"{sum(c.label == 'inferable' for c in claims)} of "
                          f"{sum(c.label != 'generic' for c in claims)} checkable claims "
                          "inferable from the documents",
                claims=claims, signals=Signals(sample_scores=tuple(sample_scores))))
        return verdicts

    async def _answer_claims(self, question: str, docs: list[str], answer: str, part: LocalPart,
                             claims: list[str], usage: Usage,
                             scores: dict[str, float] | None = None) -> list[Verdict]:
        """The cascade's call: the LLM labels the documents (of `docs`) and the claims (`claims`,
        redacted, for `part.unsure`) the local judge is unsure of, and the answer; the other
        documents and claims keep their local labels."""
        prompt = PROMPTS["answer_claims"]
        todo = [i + 1 for i, d in enumerate(part.documents) if d is None]  # numbers, as shown
        key = self.cache.key(prompt.tag, self.endpoint.settings.model, question, docs, answer,
                             todo, claims, bool(scores))
        outputs = self.cache.get(key)
        if outputs is None:
            metrics = ["answer_relevance", "completeness", "groundedness"]
            extra = fusion_block(scores, ["context_relevance"] * bool(todo) + metrics) \
                if scores else None
            outputs = await self._sampled(
                prompt, usage, {"documents": todo, **_counted("claims", len(claims))}, extra,
                question=question, documents=_numbered(docs),
                labelled=", ".join(f"[{i}]" for i in todo) or "(none)",
                answer=answer or "(empty)", count=str(len(claims)),
                claims="\n".join(f"<{i}> {c}" for i, c in enumerate(claims, 1)) or "(none)")
            self.cache.put(key, outputs)
        relevance, relevance_agreement = majority([o.answer_relevance.label for o in outputs])
        completeness, completeness_agreement = majority([o.completeness.label for o in outputs])
        decided = Signals(decided_by=self.name)
        verdicts = [
            Verdict("answer_relevance", label=relevance,
                    rationale=outputs[0].answer_relevance.reasoning,
                    agreement=Agreement(share=relevance_agreement), signals=decided),
            Verdict("completeness", label=completeness, rationale=outputs[0].completeness.reasoning,
                    agreement=Agreement(share=completeness_agreement), signals=decided)]
        if docs:
            answered = {number: (majority([o.documents[position].label for o in outputs])[0],
                                 outputs[0].documents[position].reasoning)
                        for position, number in enumerate(todo)}
            verdicts.append(_context_verdict(
                [(d.label, "") if d is not None else answered[i] for i, d in
                 enumerate(part.documents, 1)], part.documents, self.name))
        if completeness != "no_answer":
            labelled = list(part.claims or ())
            for position, i in enumerate(part.unsure):
                label, _ = majority([o.claims[position].label for o in outputs])
                labelled[i] = labelled[i].model_copy(update={
                    "label": label, "reasoning": outputs[0].claims[position].reasoning,
                    "decided_by": self.name})
            verdicts.append(groundedness(labelled))
        return verdicts

    async def _alone(self, prompt: Prompt, turn: AssistantTurn, docs: list[str], usage: Usage
                     ) -> list[Verdict]:
        """A metric asked by a prompt of its own: the samples' majority label (and the share
        that agreed), or their mean score."""
        metric = prompt.metric
        assert metric is not None
        question, answer = turn.question or "", turn.answer or ""
        trajectory = trajectory_text(turn) if metric.trajectory else ""
        key = self.cache.key(prompt.tag, self.endpoint.settings.model, question, docs, answer,
                             trajectory)
        outputs = self.cache.get(key)
        if outputs is None:
            outputs = await self._sampled(prompt, usage, question=question,
                                          documents=_numbered(docs), answer=answer or "(empty)",
                                          trajectory=trajectory)
            self.cache.put(key, outputs)
        why = outputs[0].reasoning
        if metric.labels:
            label, share = majority([o.label for o in outputs])
            return [Verdict(metric.name, label=label, rationale=why,
                            agreement=Agreement(share=share))]
        scores = tuple(o.score for o in outputs)
        return [Verdict(metric.name, score=sum(scores) / len(scores), rationale=why,
                        signals=Signals(sample_scores=scores))]

    async def _tool_use(self, question: str, turn: AssistantTurn, usage: Usage) -> list[Verdict]:
        prompt = PROMPTS["tool_use"]
        calls = [f"{c.name}({json.dumps(c.arguments, default=str)}) -> "
                 f"{json.dumps(c.error or c.result, default=str)}" for c in turn.tool_calls]
        key = self.cache.key(prompt.tag, self.endpoint.settings.model, question, calls)
        outputs = self.cache.get(key)
        if outputs is None:
            outputs = await self._sampled(prompt, usage, _counted("calls", len(calls)),
                                          question=question,
                                          calls=_numbered(calls), count=str(len(calls)))
            self.cache.put(key, outputs)
        labelled = []
        for i, call in enumerate(turn.tool_calls):
            votes = [o.calls[i] for o in outputs]
            needed, _ = majority([v.needed for v in votes])
            supported, _ = majority([v.arguments_supported for v in votes])
            labelled.append(CallLabel(name=call.name, needed=needed, arguments_supported=supported,
                                      reasoning=votes[0].reasoning))
        good = sum(c.needed == "yes" and c.arguments_supported == "yes" for c in labelled)
        return [Verdict("tool_use", score=good / len(labelled),
                        rationale=f"{good} of {len(labelled)} calls needed and with supported "
                                  "arguments", calls=tuple(labelled))]
