"""Sample: which assembled turns are judged.

    sampler = Sampler(settings.sampling)
    decision = sampler.decide(turn, backlog=store.pending_count())
    if decision.keep: ...  # decision.reason, decision.probability

Rules that always keep a turn come first (suspicious turns are always judged); the others are
sampled by trace id at the service's / route's rate, scaled down as the judge backlog grows.
The rate decision is the OpenTelemetry SDK's TraceIdRatioBased rule (the trace id's low 64 bits
against rate × 2^64), so every replica and the assistant's own head sampler agree on a trace.
"""

from monitor.sample.sampler import Decision, Sampler

__all__ = ["Decision", "Sampler"]
