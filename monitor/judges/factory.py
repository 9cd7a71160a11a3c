"""Judges built from settings: the one factory the sidecar, `eval` and `calibrate` share.

    judges = build_judges(settings, metrics)      # the sidecar's and eval's: quality + tool calls
    variants = judge_variants(settings, metrics)  # calibrate's: each endpoint alone, the panel

The quality judge is the configured LLM endpoint (several: a panel), else the offline local
judge. The embedding model loads only where a judge needs it.
"""

from __future__ import annotations

from monitor.config import Settings
from monitor.judges.base import Judge
from monitor.judges.telemetry import JudgeTelemetry


def _llm_judges(settings: Settings, metrics: JudgeTelemetry, evaluators: Judge | None) -> list[Judge]:
    from monitor.judges.llm import LLMJudge

    llm = settings.judging.llm
    return [LLMJudge(endpoint, llm, metrics, evaluators, settings.redaction,
                     settings.judging.cascade) for endpoint in llm.endpoints]


def _evaluators(settings: Settings) -> Judge | None:
    """The local judge, whose scores are fused with the LLM's (`judging.llm.fusion`) and which
    decides what it is sure of (`judging.cascade`)."""
    if not settings.judging.llm.fusion and not settings.judging.cascade.enabled:
        return None
    from monitor.judges.local import LocalJudge

    return LocalJudge(settings.judging.local, read_relevance=settings.judging.cascade.enabled)


def build_judge(settings: Settings, metrics: JudgeTelemetry) -> Judge:
    """The quality judge; the local one in its own worker process with `judging.process`
    (LLM judges wait on the network: they stay in the sidecar's process)."""
    if not settings.judging.llm.endpoints:
        if settings.judging.process:
            from monitor.judges.worker import ProcessJudge

            return ProcessJudge(settings.judging.local, settings.judging.priority)
        from monitor.judges.local import LocalJudge

        return LocalJudge(settings.judging.local)
    from monitor.judges.panel import PanelJudge

    judges = _llm_judges(settings, metrics, _evaluators(settings))
    return judges[0] if len(judges) == 1 else PanelJudge(judges, settings.judging.llm.aggregate)


def judge_variants(settings: Settings, metrics: JudgeTelemetry) -> dict[str, Judge]:
    """Each configured endpoint alone and, with several, their panel; or the local judge."""
    if not settings.judging.llm.endpoints:
        return {"local": build_judge(settings, metrics)}
    from monitor.judges.panel import PanelJudge

    evaluators = _evaluators(settings)  # one embedding model for every variant
    variants = {judge.name: judge for judge in _llm_judges(settings, metrics, evaluators)}
    if len(variants) > 1:
        variants["panel"] = PanelJudge(_llm_judges(settings, metrics, evaluators),
                                       settings.judging.llm.aggregate)
    return variants


def build_judges(settings: Settings, metrics: JudgeTelemetry) -> list[Judge]:
    """The quality judge, and the reference-based tool-call judge (no verdict for turns
    without expected calls)."""
    from monitor.judges.tool_match import MatchOptions, ReferenceToolJudge, load_golden

    tools = settings.judging.tool_calls
    golden = load_golden(tools.golden_file) if tools.golden_file else None
    options = MatchOptions(ignored=set(tools.ignored_functions),
                           semantic_threshold=tools.semantic_threshold)
    judge = build_judge(settings, metrics)
    if tools.semantic_threshold is not None:
        from monitor.judges.embeddings import Embedder

        embedder = getattr(judge, "embedder", None) or Embedder()
        options.similarity = lambda a, b: float(embedder.passage([a])[0] @ embedder.passage([b])[0])
    return [judge, ReferenceToolJudge(options, golden)]
