"""Generate the Grafana dashboards and alert rules from code, so they stay consistent.

    python grafana/generate.py            # rewrites grafana/dashboards and grafana/provisioning

Dashboards are built with grafana-foundation-sdk (pinned in pyproject's test extra). Every query
uses only series the sidecar exposes, or the recording rules in deploy/prometheus/rules.yml;
tests/test_grafana.py checks that against a live /metrics, validates every dashboard against
@grafana/schema with tsc, and every expression with promtool.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml
from grafana_foundation_sdk.builders import dashboard, prometheus, stat, timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import DataSourceRef, DynamicConfigValue, VariableHide

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
# The contract's families are named through FAMILY: a renamed or undeclared one fails here, not in
# Grafana. (The stages' own series, assistant_turns_received_total and the like, are not declared.)
from monitor.contract import FAMILY, QUALITY, Quality  # noqa: E402
from monitor.judge_metrics import (  # noqa: E402
    ANSWER_RELEVANCE,
    COMPLETENESS,
    CONTEXT_RELEVANCE,
    GROUNDEDNESS,
    JUDGE_METRICS,
    LABELS,
    JudgeMetric,
    Panel,
)

DS = DataSourceRef(type_val="prometheus", uid="${datasource}")
SEL = 'service=~"$service", route=~"$route"'  # the template variables, in every query


def query(expr: str, legend: str, ref: str = "A", exemplar: bool = False) -> Any:
    q = prometheus.Dataquery().expr(expr).legend_format(legend).ref_id(ref).datasource(DS)
    return q.exemplar(True) if exemplar else q


def series(title: str, targets: list[Any], unit: str = "short", description: str = "",
           width: int = 12, max_value: float | None = None) -> Any:
    panel = timeseries.Panel().title(title).description(description).unit(unit).height(8) \
        .span(width).datasource(DS)
    for target in targets:
        panel = panel.with_target(target)
    if max_value is not None:
        panel = panel.min(0).max(max_value)
    return panel


def single(title: str, expr: str, unit: str, description: str = "", width: int = 6) -> Any:
    return stat.Panel().title(title).description(description).unit(unit).height(4).span(width) \
        .datasource(DS).with_target(query(expr, title))


def weighted_ratio(metric: str, verdict: str, by: str = "service") -> str:
    return (f'sum by ({by}) (rate({FAMILY["assistant_weighted_verdicts"].total}{{metric="{metric}", '
            f'verdict="{verdict}", {SEL}}}[$__rate_interval])) / sum by ({by}) (rate('
            f'{FAMILY["assistant_weighted_turns"].total}{{metric="{metric}", {SEL}}}[$__rate_interval]))')


def weighted_mean(metric: str, by: str = "service") -> str:
    return (f'sum by ({by}) (rate({FAMILY["assistant_weighted_score"].total}{{metric="{metric}", '
            f'{SEL}}}[$__rate_interval])) / sum by ({by}) (rate('
            f'{FAMILY["assistant_weighted_turns"].total}{{metric="{metric}", {SEL}}}[$__rate_interval]))')


def estimate(quality: Quality, by: str = "service") -> str:
    """A quality of the contract (monitor/contract.py), sampling-weighted: a rate or a mean."""
    assert quality.verdict is not None, f"{quality.name} is not estimated from verdicts"
    if quality.is_rate:
        return weighted_ratio(quality.verdict, quality.label or "", by)
    return weighted_mean(quality.verdict, by)


def weighted_bound(metric: str, verdict: str | None, sign: str) -> str:
    """A 95% bound (sign "-": lower, "+": upper) of a weighted rate (verdict given) or mean over
    the whole selection: Wilson's interval on the effective sample size, from the squared-weight
    sums, as deploy/prometheus/rules.yml and monitor/emit/intervals.py compute it."""
    def total(family: str, verdict: str | None = None) -> str:
        label = f', verdict="{verdict}"' if verdict else ""
        return (f'sum(increase({FAMILY[family].total}{{metric="{metric}"{label}, {SEL}}}'
                '[$__rate_interval]))')

    w, w2 = total("assistant_weighted_turns"), total("assistant_sq_weighted_turns")
    if verdict:
        wy = total("assistant_weighted_verdicts", verdict)
        w2y = w2y2 = total("assistant_sq_weighted_verdicts", verdict)
    else:
        wy, w2y = total("assistant_weighted_score"), total("assistant_sq_weighted_score")
        w2y2 = total("assistant_sq_weighted_score_squared")
    r = f"({wy} / {w})"
    n = (f"((({r} * (1 - {r}) * {w} ^ 2 / ({w2y2} - 2 * {r} * {w2y} + {r} ^ 2 * {w2})) > 0 < +Inf)"
         f" or {w} ^ 2 / {w2})")
    return (f"({r} + 1.9208 / {n} {sign} 1.96 * sqrt({r} * (1 - {r}) / {n} + 0.9604 / {n} ^ 2))"
            f" / (1 + 3.8416 / {n})")


BAND = ("95% interval, low", "95% interval, high")
BAND_NOTE = ("The shaded band is the 95% interval of the whole selection (all services and routes "
             "chosen above; pick one to see its own), from the squared-weight sums.")


def turns_url(quality: Quality, by: str) -> str:
    """The sidecar's page of the worst turns of a quality's series (`by`: "service" or
    "service, route"), in the dashboard's time range: the turns with the quality's bad label, or
    a score below 0.5. `monitor` is the sidecar's public URL, read from assistant_monitor_info."""
    worst = f"label={quality.label}" if quality.label else "below=0.5"
    stream = ("route=${__field.labels.service}/${__field.labels.route}" if "route" in by
              else "service=${__field.labels.service}")
    return (f"${{monitor}}/ui/turns?metric={quality.verdict}&{worst}&{stream}"
            "&from=${__from}&to=${__to}")


class DataLink:
    """A field's data link: title, URL, a new tab (the SDK's DashboardLink would add a
    dashboard link's fields, which a data link does not have)."""

    def __init__(self, title: str, url: str) -> None:
        self.title, self.url = title, url

    def build(self) -> dict[str, Any]:
        return {"title": self.title, "url": self.url, "targetBlank": True}


def quality_panel(title: str, quality: Quality, by: str = "service") -> Any:
    """A quality's estimate per `by` with its 95% band; a click on a series leads to its worst
    turns."""
    legend = "{{service}}/{{route}}" if "route" in by else "{{service}}"
    panel = series(title, [query(estimate(quality, by), legend)], "percentunit", BAND_NOTE,
                   max_value=1).data_links([  # type: ignore[list-item]
                       DataLink("Worst turns of ${__field.labels.service}", turns_url(quality, by))])
    return with_band(panel, quality)


def with_band(panel: Any, quality: Quality) -> Any:
    """Adds the quality's lower and upper bounds as two more series, filled between, without
    lines."""
    metric, verdict = quality.verdict or "", quality.label
    panel = (panel.with_target(query(weighted_bound(metric, verdict, "-"), BAND[0], "LOW"))
             .with_target(query(weighted_bound(metric, verdict, "+"), BAND[1], "HIGH")))
    def bound(fill: int) -> list[Any]:
        return [DynamicConfigValue(id_val="custom.lineWidth", value=0),
                DynamicConfigValue(id_val="custom.fillOpacity", value=fill),
                DynamicConfigValue(id_val="color", value={"mode": "fixed",
                                                          "fixedColor": "#8ab8ff"})]
    return (panel.override_by_name(BAND[0], bound(0))
            .override_by_name(BAND[1], [*bound(25), DynamicConfigValue(
                id_val="custom.fillBelowTo", value=BAND[0])]))


def metric_panel(metric: JudgeMetric, panel: Panel) -> Any:
    """A panel a judge metric declares (monitor/judge_metrics.py): its quality now, or over time
    with its 95% band."""
    quality = QUALITY[metric.quality]
    if panel.stat:
        return single(panel.title, estimate(quality, panel.by), "percentunit")
    return quality_panel(panel.title, quality, panel.by)


def placed(metric: JudgeMetric, dashboard: str, stat: bool = False) -> Any:
    """The metric's declared panel on `dashboard`, where the layout below puts it."""
    return metric_panel(metric, next(p for p in metric.panels
                                     if p.dashboard == dashboard and p.stat == stat))


def base(uid: str, title: str, description: str) -> Any:
    return (dashboard.Dashboard(title).uid(uid).description(description)
            .tags(["assistant-monitor"]).refresh("30s").time("now-6h", "now").timezone("browser")
            .with_variable(dashboard.DatasourceVariable("datasource").label("Data source")
                           .type("prometheus"))
            .with_variable(dashboard.QueryVariable("service").label("Service").datasource(DS)
                           .query("label_values(assistant_turns_received_total, service)")
                           .multi(True).include_all(True).all_value(".*"))
            .with_variable(dashboard.QueryVariable("route").label("Route").datasource(DS)
                           .query('label_values(assistant_turns_received_total{service=~"$service"}'
                                  ', route)').multi(True).include_all(True).all_value(".*"))
            # The sidecar's pages, for the data links: its admin.public_url, hidden.
            .with_variable(dashboard.QueryVariable("monitor").label("Sidecar pages").datasource(DS)
                           .query("label_values(assistant_monitor_info, public_url)")
                           .hide(VariableHide.HIDE_VARIABLE)))


def overview() -> Any:
    return (base("assistant-overview", "Assistant quality: overview",
                 "Quality of the whole traffic per service, estimated from judged samples "
                 "(sampling-weighted).")
            .with_row(dashboard.Row("Now"))
            .with_panel(placed(COMPLETENESS, "overview", stat=True))
            .with_panel(placed(GROUNDEDNESS, "overview", stat=True))
            .with_panel(placed(CONTEXT_RELEVANCE, "overview", stat=True))
            .with_panel(single("Drifting streams", f"sum({FAMILY['assistant_drift_alert'].name}"
                               f"{{{SEL}}})", "short", "Judged metric streams whose drift alert is raised."))
            .with_row(dashboard.Row("Trends"))
            .with_panel(series("Turns", [
                query(f"sum by (service) (rate(assistant_turns_received_total{{{SEL}}}"
                      "[$__rate_interval]))", "{{service}} assembled"),
                query(f"sum by (service) (rate({FAMILY['assistant_turns_judged'].total}{{{SEL}}}"
                      "[$__rate_interval]))", "{{service}} judged", "B", exemplar=True)],
                "reqps"))
            .with_panel(placed(COMPLETENESS, "overview"))
            .with_panel(placed(GROUNDEDNESS, "overview"))
            .with_panel(series("Drift score", [
                query(f"max by (metric, service) ({FAMILY['assistant_drift_score'].name}{{{SEL}}})",
                      "{{service}} {{metric}}")], "short",
                "z-like; alerts at 3 (see the README).")))


def retrieval() -> Any:
    return (base("assistant-retrieval", "Assistant quality: retrieval",
                 "Are the retrieved documents relevant to the question?")
            .with_panel(placed(CONTEXT_RELEVANCE, "retrieval"))
            .with_panel(series("Context relevance distribution (judged turns)", [
                query(f"sum by (le) (rate({FAMILY['assistant_context_relevance'].name}_bucket{{{SEL}}}"
                      "[$__rate_interval]))", "≤ {{le}}", exemplar=True)], "reqps"))
            .with_panel(series("Turns that retrieved nothing", [
                query('sum(rate(assistant_turns_sampled_total{reason="no_documents"}'
                      "[$__rate_interval]))", "no documents")], "reqps",
                "Always kept for judging, so this counts every such turn.")))


def answers() -> Any:
    return (base("assistant-answers", "Assistant quality: answers",
                 "Relevance, completeness and groundedness of the answers.")
            .with_panel(series("Completeness", [
                query(weighted_ratio("completeness", v), v, ref)
                for ref, v in zip("ABC", LABELS["completeness"], strict=True)],
                "percentunit", max_value=1))
            .with_panel(placed(GROUNDEDNESS, "answers"))
            .with_panel(placed(ANSWER_RELEVANCE, "answers"))
            .with_panel(series("Claims by verdict", [
                query(f"sum by (verdict) (rate({FAMILY['assistant_claims'].total}{{{SEL}}}"
                      "[$__rate_interval]))", "{{verdict}}")], "reqps"))
            .with_panel(series("No-answer verdicts (exemplars link to traces)", [
                query(f'sum(rate({FAMILY["assistant_answer_completeness"].total}{{verdict="no_answer", '
                      f'{SEL}}}[$__rate_interval]))', "no answer", exemplar=True)], "reqps", width=24)))


def tools() -> Any:
    return (base("assistant-tools", "Assistant quality: tool calls",
                 "Tool calls of all traffic, and reference-free verdicts on the judged ones.")
            .with_panel(series("Tool calls", [
                query(f"sum by (outcome) (rate(assistant_tool_calls_total{{{SEL}}}"
                      "[$__rate_interval]))", "{{outcome}}")], "reqps"))
            .with_panel(series("Tool call failure rate", [
                query(f'sum by (service) (rate(assistant_tool_calls_total{{outcome="error", {SEL}}}'
                      "[$__rate_interval])) / sum by (service) (rate(assistant_tool_calls_total"
                      f"{{{SEL}}}[$__rate_interval]))", "{{service}}")], "percentunit", max_value=1))
            .with_panel(series("Calls judged not needed / with unsupported arguments", [
                query(f'sum(rate({name}{{verdict="no", {SEL}}}[$__rate_interval])) / sum(rate('
                      f"{name}{{{SEL}}}[$__rate_interval]))", legend, ref)
                for ref, name, legend in (
                    ("A", FAMILY["assistant_tool_calls_needed"].total, "not needed"),
                    ("B", FAMILY["assistant_tool_calls_arguments_supported"].total,
                     "unsupported arguments"))],
                "percentunit", max_value=1, width=24))
            .with_row(dashboard.Row("Agents and sessions"))
            .with_panel(series("Steps per turn", [
                query(f"histogram_quantile({q}, sum by (le) (rate(assistant_agent_steps_bucket"
                      f"{{{SEL}}}[$__rate_interval])))", f"p{int(q * 100)}", ref)
                for ref, q in (("A", 0.5), ("B", 0.95))], "short",
                "LLM calls, tool calls, retrievals and hand-offs per turn, all traffic."))
            .with_panel(series("Loops and recoveries per tool call", [
                query(f"sum(rate({name}{{{SEL}}}[$__rate_interval])) / sum(rate("
                      f"assistant_tool_calls_total{{{SEL}}}[$__rate_interval]))", legend, ref)
                for ref, name, legend in (("A", "assistant_agent_loops_total", "repeated alike"),
                                          ("B", "assistant_agent_recoveries_total",
                                           "failed, then recovered"))],
                "percentunit", "Tool calls repeating an earlier call of their turn alike (the "
                "agent loops; AssistantAgentLooping pages over 10%), and failed calls the agent "
                "recovered from, all traffic.", max_value=1))
            .with_panel(series("Sessions by outcome", [
                query(f"sum by (outcome) (rate(assistant_session_outcome_total{{{SEL}}}"
                      "[$__rate_interval]))", "{{outcome}}")], "reqps",
                "Conversations as they close, by their local outcome (monitor/sessions.py): "
                "resolved, unresolved, escalated, abandoned, unjudged."))
            .with_panel(series("Turns per session", [
                query(f"histogram_quantile({q}, sum by (le) (rate({name}_bucket{{{SEL}}}"
                      "[$__rate_interval])))", legend, ref)
                for ref, q, name, legend in (
                    ("A", 0.5, "assistant_session_turns", "turns p50"),
                    ("B", 0.5, "assistant_session_turns_to_resolution", "to resolution p50"))],
                "short"))
            .with_panel(series("Frustration signals", [
                query(f"sum by (signal) (rate(assistant_session_frustration_total{{{SEL}}}"
                      "[$__rate_interval]))", "{{signal}}")], "reqps",
                "Rephrased questions, negative feedback and requests for a person, in sessions' "
                "turns."))
            .with_panel(series("Sessions as the LLM session judge read them", [
                query(f"sum by (outcome) (rate(assistant_session_verdicts_total{{{SEL}}}"
                      "[$__rate_interval]))", "{{outcome}}", "A"),
                query(f'sum(rate(assistant_session_verdicts_total{{frustration="high", {SEL}}}'
                      "[$__rate_interval]))", "high frustration", "B")], "reqps",
                "Closed sessions read whole by the LLM session judge (with an LLM endpoint; its "
                "reasoning is on /ui/sessions): outcome, and those with high frustration.",
                width=24)))


def pipeline() -> Any:
    return (base("assistant-pipeline", "assistant-monitor: judge cost and pipeline health",
                 "What judging costs, whether it keeps up, and what the receivers refuse.")
            .with_panel(series("Judge requests", [
                query("sum by (judge, outcome) (rate(assistant_judge_requests_total"
                      "[$__rate_interval]))", "{{judge}} {{outcome}}")], "reqps"))
            .with_panel(series("Judge tokens", [
                query(f"sum by (judge, kind) (rate({FAMILY['assistant_judge_tokens'].total}"
                      "[$__rate_interval]))", "{{judge}} {{kind}}")], "short"))
            .with_panel(series("Judge latency", [
                query(f"histogram_quantile({q}, sum by (le, judge) (rate("
                      f"{FAMILY['assistant_judge_latency_seconds'].name}_bucket[$__rate_interval])))",
                      f"{{{{judge}}}} p{int(q * 100)}", ref)
                for ref, q in (("A", 0.5), ("B", 0.95))], "s"))
            .with_panel(series("Decided locally by the cascade", [
                query("sum by (judge, part) (rate(assistant_judge_cascade_decisions_total"
                      "{decided_by=\"local\"}[$__rate_interval])) / sum by (judge, part) (rate("
                      "assistant_judge_cascade_decisions_total[$__rate_interval]))",
                      "{{judge}} {{part}}")], "percentunit",
                "With judging.cascade: the share of documents, answers and claims the local judge "
                "decided (outside its uncertainty band); the LLM judged the rest. A fall means more "
                "LLM calls (harder traffic, or the bands changed).", max_value=1))
            .with_panel(series("Judge model changes", [
                query("sum by (judge) (increase(assistant_judge_model_changes_total[1h]))",
                      "{{judge}}")], "short",
                "Times a judge endpoint reported another model than before, in the hour: the "
                "judge itself changed (a new deployment, another quantisation), and its verdicts "
                "with it. Each verdict names its model (`verdicts show`)."))
            .with_panel(series("Backlog and sampling", [
                query("sum(assistant_judge_backlog)", "turns waiting for a judge"),
                query("min(assistant_sampling_factor)", "sampling factor", "B")], "short"))
            .with_panel(series("Turns dropped", [
                query("sum by (reason) (rate(assistant_turns_dropped_total[$__rate_interval]))",
                      "{{reason}}")], "reqps"))
            .with_panel(series("Receiver requests", [
                query("sum by (receiver, outcome) (rate(assistant_receiver_requests_total"
                      "[$__rate_interval]))", "{{receiver}} {{outcome}}")], "reqps"))
            .with_panel(series("Spans refused and mapping issues", [
                query("sum by (reason) (rate(assistant_spans_refused_total[$__rate_interval]))",
                      "refused: {{reason}}"),
                query("sum by (reason) (rate(assistant_span_mapping_issues_total"
                      "[$__rate_interval]))", "issue: {{reason}}", "B")], "reqps"))
            .with_panel(series("Kafka consumer lag", [
                query("sum by (topic, partition) (assistant_kafka_consumer_lag)",
                      "{{topic}}[{{partition}}]")], "short")))


DASHBOARDS = {"overview": overview, "retrieval": retrieval, "answers": answers, "tools": tools,
              "pipeline": pipeline}


def laid_out(name: str) -> Any:
    """A dashboard as laid out above, then the panels judge metrics declare on it that the layout
    does not place: a new metric's panels need no edit here."""
    board = DASHBOARDS[name]()
    shown = {(p.title, p.type_val) for p in board.build().panels}
    for metric in JUDGE_METRICS:
        for panel in metric.panels:
            if panel.dashboard == name and \
                    (panel.title, "stat" if panel.stat else "timeseries") not in shown:
                board = board.with_panel(metric_panel(metric, panel))
    return board


def grafana_alert(uid: str, title: str, expr: str, op: str, threshold: float, for_: str,
                  severity: str, summary: str, runbook: str = "runbook-quality-drift",
                  panel: dict[str, str] | None = None) -> dict[str, Any]:
    """A Grafana-managed rule: query (A), reduce to the last value (B), threshold (C); `panel`:
    the dashboard panel it is shown on (whose data links lead to the worst turns)."""
    return {
        "uid": uid, "title": title, "condition": "C", "for": for_, "noDataState": "OK",
        "execErrState": "Error", "labels": {"severity": severity},
        "annotations": {"summary": summary, "runbook_url": f"docs/operating.md#{runbook}",
                        **(panel or {})},
        "data": [
            {"refId": "A", "datasourceUid": "prometheus",
             "relativeTimeRange": {"from": 3600, "to": 0},
             "model": {"refId": "A", "expr": expr, "instant": True, "range": False}},
            {"refId": "B", "datasourceUid": "__expr__",
             "model": {"refId": "B", "type": "reduce", "expression": "A", "reducer": "last"}},
            {"refId": "C", "datasourceUid": "__expr__",
             "model": {"refId": "C", "type": "threshold", "expression": "B",
                       "conditions": [{"evaluator": {"type": op, "params": [threshold]}}]}},
        ],
    }


def recorded(quality: Quality) -> list[str]:
    """Its recording rules (deploy/prometheus/rules.yml): the estimate, its 95% lower, upper bound."""
    return [quality.recording.replace("_rate1h", f"{b}_rate1h") for b in ("", "_lower95", "_upper95")]


def alert_rules() -> dict[str, Any]:
    rules = [
        grafana_alert("assistant-drift", "Assistant quality drift",
                      f"max by (metric, service, route) ({FAMILY['assistant_drift_alert'].name})",
                      "gt", 0.5, "5m", "page", "{{ $labels.metric }} drifted for {{ $labels.service }}"),
        grafana_alert("assistant-no-answer", "Assistant no-answer rate",
                      "{0} - ({0} offset 1d) and on (service, route) {1} > ({2} offset 1d)"
                      .format(*recorded(QUALITY[COMPLETENESS.quality])), "gt", 0.05, "30m", "page",
                      "No-answer rate of {{ $labels.service }} is 5 points above yesterday",
                      panel=panel_of("overview", "No-answer rate")),
        grafana_alert("assistant-groundedness", "Assistant groundedness",
                      "{0} / ({0} offset 1d) and on (service, route) {2} < ({1} offset 1d)"
                      .format(*recorded(QUALITY[GROUNDEDNESS.quality])),
                      "lt", 0.9, "30m", "page",
                      "Groundedness of {{ $labels.service }} is 10% below yesterday",
                      panel=panel_of("answers", "Groundedness by route")),
        grafana_alert("assistant-tool-failures", "Assistant tool calls failing",
                      "assistant:tool_call_failure_rate:ratio_rate1h and on (service, route) "
                      "assistant:tool_calls:increase1h >= 20", "gt", 0.1, "15m", "page",
                      "Tool calls of {{ $labels.service }} fail"),
        grafana_alert("assistant-judge-canary", "Judge canary disagrees",
                      "assistant_judge_canary_agreement_upper - on (judge, metric) "
                      "max_over_time(assistant_judge_canary_agreement_lower[7d])", "lt", 0, "0s",
                      "page", "Judge {{ $labels.judge }} agrees with the canary set's "
                      "{{ $labels.metric }} labels less than it did this week",
                      "runbook-judge-canary"),
        grafana_alert("assistant-monitor-down", "assistant-monitor down",
                      'up{job="assistant-monitor"}', "lt", 1, "5m", "page",
                      "assistant-monitor is not scraped: quality is not watched"),
    ]
    return {"apiVersion": 1, "groups": [{"orgId": 1, "name": "assistant-monitor",
                                         "folder": "assistant-monitor", "interval": "1m",
                                         "rules": rules}]}


PROVISIONING = {
    "datasources/assistant-monitor.yaml": {"apiVersion": 1, "datasources": [{
        "name": "Prometheus", "uid": "prometheus", "type": "prometheus", "access": "proxy",
        "url": "http://prometheus:9090", "isDefault": True,
        "jsonData": {"httpMethod": "POST", "exemplarTraceIdDestinations": [
            {"name": "trace_id", "datasourceUid": "tempo"},
            # the turn's verdicts on the sidecar's page (the dashboards' `monitor` variable)
            {"name": "trace_id", "url": "${monitor}/ui/turns/${__value.raw}",
             "urlDisplayLabel": "Verdicts"}]}}]},
    "dashboards/assistant-monitor.yaml": {"apiVersion": 1, "providers": [{
        "name": "assistant-monitor", "folder": "assistant-monitor", "type": "file",
        "disableDeletion": True, "options": {"path": "/var/lib/grafana/dashboards/assistant-monitor"}}]},
}


def _clean(value: Any) -> Any:
    """Drop what the SDK emits but @grafana/schema does not allow: null fields, the removed
    dashboard `style`, and the id and interval settings (auto*) it puts on query and
    datasource variables."""
    if isinstance(value, dict):
        cleaned = {k: _clean(v) for k, v in value.items() if v is not None}
        if cleaned.get("type") in ("query", "datasource"):
            for key in ("auto", "auto_count", "auto_min", "id"):
                cleaned.pop(key, None)
        return cleaned
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def model(name: str) -> dict[str, Any]:
    """A dashboard as provisioned; panels numbered in order, so alerts can name theirs."""
    built = _clean(json.loads(JSONEncoder(sort_keys=True).encode(laid_out(name).build())))
    built.pop("style", None)
    for number, panel in enumerate(built["panels"], 1):
        panel["id"] = number
    return built


def panel_of(name: str, title: str) -> dict[str, str]:
    """The annotations that tie a Grafana-managed alert to a dashboard's panel (the last one of
    that title): Grafana links the alert to it, and the panel's data links lead to the turns."""
    panel = [p for p in model(name)["panels"] if p["title"] == title][-1]
    return {"__dashboardUid__": model(name)["uid"], "__panelId__": str(panel["id"])}


def render(out: Path) -> list[Path]:
    written = []
    for name in DASHBOARDS:
        path = out / "dashboards" / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        model_ = model(name)
        path.write_text(json.dumps(model_, indent=2, sort_keys=True) + "\n")
        written.append(path)
    files = {**PROVISIONING, "alerting/assistant-monitor.yaml": alert_rules()}
    for name, content in files.items():
        path = out / "provisioning" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# Generated by grafana/generate.py; edit that, not this.\n"
                        + yaml.safe_dump(content, sort_keys=False, width=100))
        written.append(path)
    return written


if __name__ == "__main__":
    for written in render(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE):
        print(written)
