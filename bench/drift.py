"""Drift detectors on synthetic streams: false alarms on stationary data, detection delay on a
step and on a slow ramp, for a rate (no-answer) and a score (groundedness).

    python bench/drift.py [--runs 20]

Each run feeds one judged turn at a time to the detector with the default settings; delays are
counted in judged turns after the change starts (medians over runs). Nothing is asserted here:
tests/test_drift.py asserts bounds.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from monitor.config import DriftSettings  # noqa: E402
from monitor.emit.drift import StreamDetector  # noqa: E402

Stream = Callable[[random.Random, int], float]


def rate(p_of_t: Callable[[int], float]) -> Stream:
    return lambda rng, t: float(rng.random() < p_of_t(t))


def score(mean_of_t: Callable[[int], float]) -> Stream:
    def draw(rng: random.Random, t: int) -> float:
        m = min(max(mean_of_t(t), 0.01), 0.99)
        return rng.betavariate(m * 8, (1 - m) * 8)
    return draw


def run(stream: Stream, binary: bool, higher_is_worse: bool, length: int, change_at: int | None,
        seed: int, settings: DriftSettings) -> tuple[int, int | None]:
    """(alerting samples before the change, delay to the first alert after it)."""
    rng = random.Random(seed)
    detector = StreamDetector(settings, binary, higher_is_worse)
    false_alarms, delay = 0, None
    for t in range(length):
        detector.add(stream(rng, t))
        s = detector.score()
        alert = s is not None and s >= settings.z_threshold
        if change_at is None or t < change_at:
            false_alarms += alert
        elif alert and delay is None:
            delay = t - change_at
            break
    return false_alarms, delay


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    settings = DriftSettings()
    n, change = 5000, 2000
    cases = [
        ("no-answer rate 10% stationary", rate(lambda t: 0.10), True, True, None),
        ("no-answer rate 10% -> 20% step", rate(lambda t: 0.10 if t < change else 0.20), True,
         True, change),
        ("no-answer rate 10% -> 20% over 2000", rate(
            lambda t: 0.10 + 0.10 * min(max(t - change, 0) / 2000, 1)), True, True, change),
        ("groundedness 0.85 stationary", score(lambda t: 0.85), False, False, None),
        ("groundedness 0.85 -> 0.75 step", score(lambda t: 0.85 if t < change else 0.75), False,
         False, change),
        ("groundedness 0.85 -> 0.75 over 2000", score(
            lambda t: 0.85 - 0.10 * min(max(t - change, 0) / 2000, 1)), False, False, change),
    ]
    print(f"defaults: reference {settings.reference_size}, recent {settings.recent_size}, "
          f"min {settings.min_samples}, z >= {settings.z_threshold}, CUSUM k={settings.cusum_k} "
          f"h={settings.cusum_h}; {args.runs} runs each, {n} judged turns a run\n")
    print(f"{'stream':38} {'false alarm rate':>17} {'median delay':>13} {'detected':>9}")
    for name, stream, binary, worse, change_at in cases:
        results = [run(stream, binary, worse, n, change_at, seed, settings)
                   for seed in range(args.runs)]
        before = change_at if change_at is not None else n
        alarm_rate = sum(r[0] for r in results) / (before * args.runs)
        delays = [r[1] for r in results if r[1] is not None]
        delay = f"{statistics.median(delays):.0f} turns" if delays else "-"
        detected = f"{len(delays)}/{args.runs}" if change_at is not None else "-"
        print(f"{name:38} {alarm_rate:>17.2%} {delay:>13} {detected:>9}")


if __name__ == "__main__":
    main()
