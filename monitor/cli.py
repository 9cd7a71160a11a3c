"""`assistant-monitor`: run the sidecar, check a configuration, look at turns and verdicts.

    assistant-monitor run [--config FILE] [--demo]
    assistant-monitor check-config [--config FILE]
    assistant-monitor turns [--admin http://127.0.0.1:9464] [--limit 10] [--json]
        [--explain TRACE_ID]
    assistant-monitor replay FILE [--config FILE]
    assistant-monitor verdicts list [--route R] [--metric M [--below X]] [--state S] [--limit N]
    assistant-monitor verdicts show TRACE_ID [--json]
    assistant-monitor verdicts export-failing [--out FILE] [--groundedness-below X]
    assistant-monitor eval --dataset FILE.jsonl [--baseline report.json] [--min METRIC=VALUE]
    assistant-monitor calibrate --dataset LABELLED.jsonl | --from-store [--config FILE] [--out DIR]
    assistant-monitor generate-dataset --templates FILE.yaml --out FILE.jsonl
    assistant-monitor simulate --scenarios FILE.jsonl --tools FILE.json --user-base-url URL
        --user-model NAME --target-base-url URL --target-model NAME --out FILE.jsonl

`assistant-monitor COMMAND --help` describes each command's options.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import json
import logging
import os
import signal
import sys
import traceback
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, get_args

from monitor.config import Settings, load_settings
from monitor.errors import ConfigError
from monitor.judge_metrics import JUDGE_METRICS, LABELS, METRICS, SCORED
from monitor.sessions import Outcome

log = logging.getLogger("monitor")


def _config_error(problem: str | ConfigError) -> NoReturn:
    """Every configuration problem ends the same way: named on stderr, exit status 2."""
    error = problem if isinstance(problem, ConfigError) else ConfigError([problem])
    print(f"assistant-monitor: {error}", file=sys.stderr)
    sys.exit(2)


def _settings(args: argparse.Namespace) -> Settings:
    try:
        return load_settings(args.config)
    except ConfigError as exc:
        _config_error(exc)


def offline_settings(args: argparse.Namespace) -> Settings:
    """`eval` and `calibrate`: the judge worker at normal priority, whatever the sidecar's
    judging.priority. No ingest to protect here, and an idle-priority worker beside busy
    processes (a shared CI runner) gets almost no CPU: two turns took 60 s instead of 1 s."""
    settings = _settings(args)
    settings.judging.priority = "normal"
    return settings


async def _run(settings: Settings, demo: bool, config: str | None = None) -> None:
    from monitor.app import Sidecar, tune_gc  # imported late: check-config and turns stay light
    from monitor.console import StatusReporter, judge_cache, pointers

    tune_gc()
    sidecar = Sidecar(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    loop.set_exception_handler(_loop_exception)
    try:
        await sidecar.start()
    except OSError as exc:
        if exc.errno not in (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES):
            raise
        reason = str(exc).rstrip(".")
        raise ConfigError([f"cannot listen: {reason}. Is another assistant-monitor running? Choose "
                           "free ports with receivers.grpc.endpoint, receivers.http.endpoint "
                           "and admin.endpoint"]) from None
    traffic = None
    if demo:
        from monitor.demo import DemoTraffic

        assert sidecar.http is not None
        token = settings.receivers.bearer_token
        traffic = DemoTraffic(
            f"127.0.0.1:{sidecar.http.port}",
            headers={"Authorization": f"Bearer {token.get_secret_value()}"} if token else None)
        traffic.start()
    log.info("assistant-monitor running; metrics at http://%s/metrics", settings.admin.endpoint)
    judges = sidecar.judging.judges if sidecar.judging is not None else []
    status = StatusReporter(sidecar.metrics.registry, settings, pointers(settings, config),
                            cache=judge_cache(judges))
    status.start()
    await stop.wait()
    await status.stop()
    log.info("stopping")
    if traffic is not None:
        await asyncio.to_thread(traffic.stop)
    await sidecar.stop()
    if status.interactive:
        status.console.print(status.summary())
    else:
        log.info("%s", status.summary().replace("\n", " "))


class ContentFreeFormatter(logging.Formatter):
    """Tracebacks keep their frames (not their source lines) and exception types, not the
    exceptions' messages: one may quote trace content (pydantic's `input_value=`, a parser's
    offending value), and logs must never hold any. Third-party loggers (aiohttp, grpc,
    asyncio) go through it too."""

    def formatException(self, ei: Any) -> str:  # noqa: N802  (logging's name)
        chain: list[BaseException] = []
        exc = ei[1]
        while exc is not None and exc not in chain:
            chain.append(exc)
            exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
        lines = ["Traceback (most recent call last):\n"]
        for exc in reversed(chain):
            lines.extend(f'  File "{frame.filename}", line {frame.lineno}, in {frame.name}\n'
                         for frame in traceback.extract_tb(exc.__traceback__))
            lines.append(f"{type(exc).__module__}.{type(exc).__qualname__} (message withheld)\n")
        return "".join(lines).rstrip("\n")


def _loop_exception(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """asyncio's default handler prints the task and exception reprs, content included."""
    exc = context.get("exception")
    log.error("asyncio: %s (%s)", context.get("message", "unhandled error"),
              type(exc).__name__ if exc is not None else "no exception", exc_info=exc)


def _logging(settings: Settings) -> None:
    log_format = "%(asctime)s %(levelname)s %(name)s: %(message)s"
    logging.basicConfig(level=settings.log_level, format=log_format)
    for handler in logging.getLogger().handlers:
        handler.setFormatter(ContentFreeFormatter(log_format))
    # httpx logs every request line at INFO; the openai client logs bodies at DEBUG.
    for name in ("httpx", "openai"):
        logging.getLogger(name).setLevel(max(logging.WARNING, logging.getLogger().level))


def cmd_run(args: argparse.Namespace) -> int:
    settings = _settings(args)
    if args.demo and not settings.receivers.http.enabled:
        _config_error("--demo needs the OTLP/HTTP receiver (receivers.http.enabled: true)")
    _logging(settings)
    try:
        asyncio.run(_run(settings, args.demo, args.config))
    except ConfigError as exc:
        _config_error(exc)
    except Exception:  # logged through the content-free formatter, not Python's default hook
        log.critical("assistant-monitor stopped by an unexpected error", exc_info=True)
        return 1
    return 0


def _sources(args: argparse.Namespace) -> str:
    """Where the configuration came from, in load_settings' order (names only, no values)."""
    from monitor.config import ENV_PREFIX

    path = args.config or os.environ.get(f"{ENV_PREFIX}CONFIG")
    read = (f"read {Path(path).resolve()}" + ("" if args.config else f" (from {ENV_PREFIX}CONFIG)")
            if path else f"no file (no --config, {ENV_PREFIX}CONFIG unset): the built-in defaults")
    variables = sorted(name for name in os.environ
                       if name.startswith(ENV_PREFIX) and name != f"{ENV_PREFIX}CONFIG")
    return f"configuration: {read}" + (f"; overridden by the environment: {', '.join(variables)}"
                                       if variables else "")


def cmd_check_config(args: argparse.Namespace) -> int:
    settings = _settings(args)
    print(_sources(args), file=sys.stderr)  # stdout stays the JSON
    print(json.dumps(settings.model_dump(mode="json"), indent=2))  # SecretStr prints masked
    return 0


def _short(text: Any, width: int) -> str:
    value = "" if text is None else " ".join(str(text).split())
    return value if len(value) <= width else value[: width - 1] + "…"


def cmd_turns(args: argparse.Namespace) -> int:
    limit = 1_000_000 if args.explain else args.limit  # every recent turn: find the one asked
    request = urllib.request.Request(f"{args.admin.rstrip('/')}/api/turns?limit={limit}")
    token = os.environ.get("ASSISTANT_MONITOR_RECEIVERS__BEARER_TOKEN")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            turns = json.load(response)
    except (urllib.error.URLError, OSError) as exc:
        print(f"assistant-monitor: cannot reach {args.admin}: {exc}", file=sys.stderr)
        return 1
    if args.explain:
        from monitor.explain import explain
        turn = next((t for t in turns if t["trace_id"] == args.explain.lower()), None)
        if turn is None:
            print(f"assistant-monitor: no recent turn has trace id {args.explain}",
                  file=sys.stderr)
            return 1
        print("\n".join(explain(turn)))
        return 0
    if args.json:
        print(json.dumps(turns, indent=2))
        return 0
    print(f"{'trace id':32}  {'service':14} {'route':10} {'docs':>4} {'tools':>5}  question → answer")
    for t in turns:
        print(f"{t['trace_id']:32}  {_short(t['service'], 14):14} {_short(t['route'], 10):10} "
              f"{len(t['documents']):>4} {len(t['tool_calls']):>5}  "
              f"{_short(t['question'], 40)} → {_short(t['answer'], 40)}")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    settings = _settings(args)
    _logging(settings)
    settings.receivers.grpc.enabled = settings.receivers.http.enabled = False
    settings.admin.endpoint = "127.0.0.1:0"
    return asyncio.run(_replay(settings, Path(args.file)))


async def _replay(settings: Settings, path: Path) -> int:
    from monitor.app import Sidecar, tune_gc
    from monitor.errors import PermanentError
    from monitor.replay import read_requests

    tune_gc()
    sidecar = Sidecar(settings)
    await sidecar.start()
    requests = rejected = 0
    try:
        for body, fmt in read_requests(path):
            requests += 1
            try:
                sidecar.pipeline.consume(sidecar.decoder.decode("traces", body, fmt), "replay", "traces")
            except PermanentError as exc:
                rejected += 1
                print(f"request {requests}: {exc}", file=sys.stderr)
        await sidecar.settle()
    except PermanentError as exc:
        print(f"assistant-monitor: {exc}", file=sys.stderr)
        return 1
    finally:
        summary = _summary(sidecar)
        await sidecar.stop()
    print(f"replayed {requests} requests ({rejected} rejected) from {path}")
    print(summary)
    return 0 if not rejected else 1


def _summary(sidecar: Any) -> str:
    """Judged figures of this run, sampling-weighted as docs/configuration.md's PromQL computes them."""
    from monitor.contract import FAMILY

    totals: dict[tuple[str, ...], float] = {}
    for family in sidecar.metrics.registry.collect():
        for s in family.samples:
            key = (s.name, s.labels.get("metric", ""), s.labels.get("verdict", ""),
                   s.labels.get("reason", ""))
            totals[key] = totals.get(key, 0.0) + s.value

    def total(name: str, metric: str = "", verdict: str = "", reason: str = "") -> float:
        if metric or verdict or reason:
            return totals.get((name, metric, verdict, reason), 0.0)
        return sum(v for k, v in totals.items() if k[0] == name)

    lines = [f"turns assembled {total('assistant_turns_received_total'):.0f}, "
             f"judged {total(FAMILY['assistant_turns_judged'].total):.0f}"]
    turns: Callable[[str], float] = (  # noqa: E731
        lambda m: total(FAMILY["assistant_weighted_turns"].total, m) or float("nan"))
    for metric in (m.name for m in JUDGE_METRICS if m.scored and m.recorded):
        mean = total(FAMILY["assistant_weighted_score"].total, metric) / turns(metric)
        lines.append(f"  {metric:18} mean {mean:.3f}")
    verdicts = FAMILY["assistant_weighted_verdicts"].total
    for metric, labels in LABELS.items():
        shares = ", ".join(f"{label} {total(verdicts, metric, label) / turns(metric):.1%}"
                           for label in labels)
        lines.append(f"  {metric:18} {shares}")
    return "\n".join(lines)


def _store(args: argparse.Namespace) -> Any:
    from monitor.store import Store, StoreError

    settings = _settings(args).store
    path = settings.path
    if settings.url is None and not path.exists():
        print(f"assistant-monitor: no store at {path.resolve()} (store.path"
              + (f" of {args.config}" if args.config else ", relative to this directory")
              + "): the sidecar writes it once it has judged a turn; pass the sidecar's --config",
              file=sys.stderr)
        sys.exit(1)
    try:
        return Store.open(settings)  # store.url: the fleet's PostgreSQL store
    except StoreError as exc:
        print(f"assistant-monitor: {exc}", file=sys.stderr)
        sys.exit(1)


def cmd_verdicts(args: argparse.Namespace) -> int:
    from rich.console import Console

    from monitor import verdicts_view

    if getattr(args, "below", None) is not None and args.metric not in SCORED:
        print("assistant-monitor: --below needs --metric with a scored metric: "
              f"{', '.join(SCORED)}", file=sys.stderr)
        return 2
    store = _store(args)
    # Piped output: no wrapping, so every line is whole for grep and the like.
    console = Console() if sys.stdout.isatty() else Console(width=1000)
    if args.action == "list":
        rows = store.list_turns(args.limit, args.state, args.route, args.metric, args.below,
                                args.failed_tools, conversation=args.conversation)
        if args.json:
            print(json.dumps(rows, indent=2))
        elif rows:
            table, note = verdicts_view.fitted_table(console, rows, args.metric)
            console.print(table)
            if note:
                console.print(note, style="dim")
        else:
            print("no stored turn matches", file=sys.stderr)
    elif args.action == "sessions":
        sessions = store.list_sessions(args.limit, args.outcome, args.service)
        if args.json:
            print(json.dumps(sessions, indent=2))
        elif sessions:
            console.print(verdicts_view.sessions_table(sessions))
        else:
            print("no closed session matches", file=sys.stderr)
    elif args.action == "show":
        try:
            trace_id = verdicts_view.find_trace_id(store, args.trace_id)
        except LookupError as exc:
            print(f"assistant-monitor: {exc}", file=sys.stderr)
            return 1
        shown = store.show(trace_id)
        assert shown is not None  # found just now: show reads the same store
        if args.json:
            print(json.dumps(shown, indent=2, default=str))
        else:
            console.print(verdicts_view.turn_report(shown))
    else:
        from monitor.corrections import corrected_cases

        # The turns people corrected, with their labels, are a golden dataset; then the
        # failing ones not among them.
        corrected = corrected_cases(store)
        written = {c.turn.trace_id for c in corrected}
        count = 0
        with open(args.out, "w") as out:
            for case in corrected:
                out.write(json.dumps({**case.turn.model_dump(mode="json"), "id": case.id,
                                      "labels": case.labels}) + "\n")
            for turn in store.failing(args.groundedness_below):
                if turn.trace_id not in written:
                    out.write(turn.model_dump_json() + "\n")
                    count += 1
        print(f"wrote {len(corrected)} corrected turns (with people's labels) and {count} "
              f"failing turns to {args.out}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from monitor.evaluate import build_report, gate, judge_cases, load_dataset, write_reports
    from monitor.judges.base import close_judges
    from monitor.judges.factory import build_judges
    from monitor.telemetry import Metrics

    settings = offline_settings(args)
    _logging(settings)
    minimums = {}
    for item in args.min or []:
        metric, sep, value = item.partition("=")
        try:
            minimums[metric] = float(value)
        except ValueError:
            sep = ""
        if not sep:
            print(f"assistant-monitor: --min takes metric=value, got {item!r}", file=sys.stderr)
            return 2
    try:
        cases = load_dataset(Path(args.dataset))
        baseline = json.loads(Path(args.baseline).read_text())["metrics"] if args.baseline else None
    except (OSError, ValueError, KeyError) as exc:
        print(f"assistant-monitor: {exc}", file=sys.stderr)
        return 2
    judges = build_judges(settings, Metrics())

    async def run() -> list[dict[str, Any]]:
        try:
            return await judge_cases(cases, judges, args.concurrency)
        finally:
            await close_judges(judges)

    rows = asyncio.run(run())
    report = build_report(rows, Path(args.dataset), [j.name for j in judges])
    failures = gate(report["metrics"], minimums, baseline, args.max_drop)
    write_reports(report, failures, Path(args.out))
    for metric, value in report["metrics"].items():
        print(f"{metric:32} {value:.3f}")
    print(f"reports: {args.out}/report.json, report.md, report.html")
    for failure in failures:
        print(f"GATE FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from monitor import calibrate
    from monitor.evaluate import load_dataset
    from monitor.telemetry import Metrics

    settings = offline_settings(args)
    _logging(settings)
    stored: dict[str, Any] = {}
    if args.from_store:
        from monitor.corrections import agreement_report, corrected_cases

        store = _store(args)
        cases, stored = corrected_cases(store), agreement_report(store.corrections())
        source = f"the store {store.path}"
    else:
        try:
            cases = load_dataset(Path(args.dataset))
        except (OSError, ValueError) as exc:
            print(f"assistant-monitor: {exc}", file=sys.stderr)
            return 2
        source = args.dataset
    if not any(c.labels for c in cases):
        print(f"assistant-monitor: {source}: no item has human labels"
              + (" (no stored verdict was corrected)" if args.from_store else ""), file=sys.stderr)
        return 2
    report = calibrate.run(cases, settings, Metrics())
    if stored:
        report["stored_verdicts"] = stored
    calibrate.write_calibration(report, Path(args.out))
    print((Path(args.out) / "calibration.md").read_text())
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from monitor.golden import generate, write

    try:
        count = write(generate(Path(args.templates)), Path(args.out))
    except (OSError, ValueError, KeyError) as exc:
        print(f"assistant-monitor: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {count} scenarios to {args.out}")
    return 0


def cmd_simulate(args: argparse.Namespace) -> int:
    import openai

    from monitor.simulate import simulate

    scenarios = [json.loads(line) for line in Path(args.scenarios).read_text().splitlines()
                 if line.strip()]
    tools = json.loads(Path(args.tools).read_text())

    async def run() -> list[dict[str, Any]]:
        user = openai.AsyncOpenAI(base_url=args.user_base_url, api_key=args.api_key)
        target = openai.AsyncOpenAI(base_url=args.target_base_url, api_key=args.api_key)
        try:
            return [await simulate(s, user, args.user_model, target, args.target_model, tools,
                                   args.max_turns) for s in scenarios]
        finally:
            await user.close()
            await target.close()

    rows = asyncio.run(run())
    with open(args.out, "w") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    print(f"wrote {len(rows)} conversations to {args.out}")
    return 0


CONFIG_HELP = "YAML configuration file (default: $ASSISTANT_MONITOR_CONFIG, else built-in defaults)"


def _verdicts_parser(sub: Any) -> None:
    verdicts = sub.add_parser("verdicts", help="read the local verdict store (store.path)",
                              description="Read the local verdict store back: list turns with "
                                          "their verdicts, show one, list closed sessions, "
                                          "export the failing ones.")
    actions = verdicts.add_subparsers(dest="action", required=True, metavar="ACTION")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", help=CONFIG_HELP + "; it names store.path")
    rows = argparse.ArgumentParser(add_help=False)  # the listings'
    rows.add_argument("--limit", type=int, default=20, help="at most this many (default 20)")
    rows.add_argument("--json", action="store_true", help="print the rows as JSON")
    listing = actions.add_parser("list", parents=[common, rows],
                                 help="the newest stored turns, a column per judged metric")
    listing.add_argument("--route", help="only this route (or SERVICE/ROUTE)")
    listing.add_argument("--metric", choices=METRICS,
                         help="only turns with a verdict on this metric, and only its column")
    listing.add_argument("--below", type=float, metavar="SCORE",
                         help="with a scored --metric: only turns scoring below SCORE")
    listing.add_argument("--state", choices=["pending", "judging", "judged", "failed"],
                         help="only turns in this state")
    listing.add_argument("--failed-tools", action="store_true",
                         help="only turns with a failed tool call (the tool column shows its "
                              "error)")
    listing.add_argument("--conversation", metavar="ID",
                         help="only the turns of this conversation (from `verdicts sessions`)")
    sessions = actions.add_parser("sessions", parents=[common, rows],
                                  help="the sessions closed last, with their local outcome")
    sessions.add_argument("--outcome", choices=get_args(Outcome), help="only this outcome")
    sessions.add_argument("--service", help="only this service's sessions")
    show = actions.add_parser("show", parents=[common],
                              help="one turn: question, documents, claims, verdicts, rationales")
    show.add_argument("trace_id", metavar="TRACE_ID",
                      help="the turn's trace id (32 hex digits, from `verdicts list`), or a "
                           "prefix of it that only one stored turn has")
    show.add_argument("--json", action="store_true",
                      help="print the raw stored record as JSON instead")
    export = actions.add_parser("export-failing", parents=[common],
                                help="write corrected (with labels), no-answer and "
                                     "low-groundedness turns as eval JSONL")
    export.add_argument("--out", default="failing-turns.jsonl",
                        help="JSONL file to write (default failing-turns.jsonl)")
    export.add_argument("--groundedness-below", type=float, default=0.5,
                        help="groundedness under which a turn fails (default 0.5)")
    verdicts.set_defaults(func=cmd_verdicts)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="assistant-monitor", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = sub.add_parser("run", help="run the sidecar (a live status on a terminal)")
    run.add_argument("--config", help=CONFIG_HELP)
    run.add_argument("--demo", action="store_true",
                     help="also send it traffic from a small demo assistant (2 turns/s)")
    run.set_defaults(func=cmd_run)
    check = sub.add_parser("check-config", help="validate the configuration and print it")
    check.add_argument("--config", help=CONFIG_HELP)
    check.set_defaults(func=cmd_check_config)
    turns = sub.add_parser("turns", help="show the last turns assembled by a running sidecar")
    turns.add_argument("--admin", default="http://127.0.0.1:9464",
                       help="the sidecar's admin endpoint URL (default http://127.0.0.1:9464)")
    turns.add_argument("--limit", type=int, default=10, help="how many turns (default 10)")
    turns.add_argument("--json", action="store_true", help="print the full turns as JSON")
    turns.add_argument("--explain", metavar="TRACE_ID",
                       help="for one recent turn: the span and attribute each field came from, "
                            "and the conventions seen")
    turns.set_defaults(func=cmd_turns)
    replay = sub.add_parser("replay", help="judge recorded OTLP (JSON lines or length-prefixed "
                                           "protobuf, as the Collector's file exporter writes)")
    replay.add_argument("file", metavar="FILE",
                        help="recorded OTLP traces: JSON lines, or length-prefixed protobuf")
    replay.add_argument("--config", help=CONFIG_HELP)
    replay.set_defaults(func=cmd_replay)
    _verdicts_parser(sub)
    evaluate = sub.add_parser("eval", help="judge a golden dataset offline; exit 1 when a gate fails")
    evaluate.add_argument("--dataset", required=True, help="JSONL turns (see docs/judging.md)")
    evaluate.add_argument("--config", help=CONFIG_HELP + " (judges, tool calls)")
    evaluate.add_argument("--out", default="eval-report", help="folder for the reports")
    evaluate.add_argument("--baseline", help="a previous report.json to compare with")
    evaluate.add_argument("--min", action="append", metavar="METRIC=VALUE",
                          help="minimum (maximum for *_rate metrics) a metric must reach")
    evaluate.add_argument("--max-drop", type=float, default=0.05,
                          help="relative drop against the baseline that fails (default 0.05)")
    evaluate.add_argument("--concurrency", type=int, default=4,
                          help="turns judged at once (default 4)")
    evaluate.set_defaults(func=cmd_eval)
    cal = sub.add_parser("calibrate", help="measure the judges against human labels")
    source = cal.add_mutually_exclusive_group(required=True)
    source.add_argument("--dataset", help="JSONL turns with human `labels`")
    source.add_argument("--from-store", action="store_true",
                        help="the stored turns people corrected on the turn pages (store.path)")
    cal.add_argument("--config", help=CONFIG_HELP + " (the judges; store.path)")
    cal.add_argument("--out", default="calibration", help="folder for the report")
    cal.set_defaults(func=cmd_calibrate)
    gen = sub.add_parser("generate-dataset", help="scenario templates + CSV data -> golden JSONL")
    gen.add_argument("--templates", required=True,
                     help="YAML scenario templates (CSV paths inside are relative to it)")
    gen.add_argument("--out", required=True, help="golden JSONL file to write")
    gen.set_defaults(func=cmd_generate)
    sim = sub.add_parser("simulate", help="drive a chatbot through scenarios with an LLM user")
    sim.add_argument("--scenarios", required=True, help="JSONL from generate-dataset")
    sim.add_argument("--tools", required=True, help="JSON list of OpenAI tool definitions")
    sim.add_argument("--user-base-url", required=True,
                     help="OpenAI-compatible endpoint of the simulated user's LLM")
    sim.add_argument("--user-model", required=True, help="model name for the simulated user")
    sim.add_argument("--target-base-url", required=True,
                     help="OpenAI-compatible endpoint of the chatbot under test")
    sim.add_argument("--target-model", required=True, help="model name of the chatbot")
    sim.add_argument("--api-key", default="unused", help="API key sent to both endpoints")
    sim.add_argument("--max-turns", type=int, default=8,
                     help="user turns per conversation at most (default 8)")
    sim.add_argument("--out", required=True, help="JSONL file for the conversations (an eval "
                                                   "dataset)")
    sim.set_defaults(func=cmd_simulate)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
