"""`assistant-monitor`: run the sidecar, check a configuration, look at the last turns.

    assistant-monitor run [--config FILE] [--demo]
    assistant-monitor check-config [--config FILE]
    assistant-monitor turns [--admin http://127.0.0.1:9464] [--limit 10] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
import urllib.error
import urllib.request
from typing import Any

from monitor.config import Settings, load_settings
from monitor.errors import ConfigError

log = logging.getLogger("monitor")


def _settings(args: argparse.Namespace) -> Settings:
    try:
        return load_settings(args.config)
    except ConfigError as exc:
        print(f"assistant-monitor: {exc}", file=sys.stderr)
        sys.exit(2)


async def _run(settings: Settings, demo: bool) -> None:
    from monitor.app import Sidecar  # imported late: check-config and turns stay light

    sidecar = Sidecar(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await sidecar.start()
    traffic = None
    if demo:
        from monitor.demo import DemoTraffic

        if sidecar.http is None:
            raise SystemExit("assistant-monitor: --demo needs the OTLP/HTTP receiver enabled")
        token = settings.receivers.bearer_token
        traffic = DemoTraffic(
            f"127.0.0.1:{sidecar.http.port}",
            headers={"Authorization": f"Bearer {token.get_secret_value()}"} if token else None)
        traffic.start()
    log.info("assistant-monitor running; metrics at http://%s/metrics", settings.admin.endpoint)
    await stop.wait()
    log.info("stopping")
    if traffic is not None:
        await asyncio.to_thread(traffic.stop)
    await sidecar.stop()


def cmd_run(args: argparse.Namespace) -> int:
    settings = _settings(args)
    logging.basicConfig(level=settings.log_level,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    asyncio.run(_run(settings, args.demo))
    return 0


def cmd_check_config(args: argparse.Namespace) -> int:
    settings = _settings(args)
    print(json.dumps(settings.model_dump(mode="json"), indent=2))  # SecretStr prints masked
    return 0


def _short(text: Any, width: int) -> str:
    value = "" if text is None else " ".join(str(text).split())
    return value if len(value) <= width else value[: width - 1] + "…"


def cmd_turns(args: argparse.Namespace) -> int:
    request = urllib.request.Request(f"{args.admin.rstrip('/')}/api/turns?limit={args.limit}")
    token = os.environ.get("ASSISTANT_MONITOR_RECEIVERS__BEARER_TOKEN")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            turns = json.load(response)
    except (urllib.error.URLError, OSError) as exc:
        print(f"assistant-monitor: cannot reach {args.admin}: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(turns, indent=2))
        return 0
    print(f"{'trace id':32}  {'service':14} {'route':10} {'docs':>4} {'tools':>5}  question → answer")
    for t in turns:
        print(f"{t['trace_id']:32}  {_short(t['service'], 14):14} {_short(t['route'], 10):10} "
              f"{len(t['documents']):>4} {len(t['tool_calls']):>5}  "
              f"{_short(t['question'], 40)} → {_short(t['answer'], 40)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="assistant-monitor", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the sidecar")
    run.add_argument("--config", help="YAML configuration file")
    run.add_argument("--demo", action="store_true", help="also send demo assistant traffic to it")
    run.set_defaults(func=cmd_run)
    check = sub.add_parser("check-config", help="validate the configuration and print it")
    check.add_argument("--config", help="YAML configuration file")
    check.set_defaults(func=cmd_check_config)
    turns = sub.add_parser("turns", help="show the last turns assembled by a running sidecar")
    turns.add_argument("--admin", default="http://127.0.0.1:9464", help="admin endpoint URL")
    turns.add_argument("--limit", type=int, default=10)
    turns.add_argument("--json", action="store_true", help="print the full turns as JSON")
    turns.set_defaults(func=cmd_turns)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
