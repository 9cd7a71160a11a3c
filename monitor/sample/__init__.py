"""Sample: which assembled turns are judged.

    sampler = Sampler(settings.sampling)
    decision = sampler.decide(turn, backlog=store.backlog())
    if decision.keep: ...  # decision.reason, decision.probability
    assembler.sampler = sampler.compiled  # the same decision, taken as turns are assembled

Rules that always keep a turn come first (suspicious turns are always judged: negative feedback,
a RAG turn that retrieved nothing, an error status, a failed tool call); the others are sampled
by trace id at the service's / route's rate, scaled down as the judge backlog grows. The rate
decision is the OpenTelemetry SDK's TraceIdRatioBased rule (the trace id's low 64 bits against
rate × 2^64), so every replica and the assistant's own head sampler agree on a trace.

The rules run compiled (native/src/sample.rs), where assembly composes each turn: a turn decided
against never becomes a Python object. `Sampler.decide` applies them to a built turn.
"""

from monitor.sample.sampler import Decision, Sampler

__all__ = ["Decision", "Sampler"]
