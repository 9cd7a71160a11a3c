"""The XSum faithfulness set (bench/data/XSUM_FAITHFULNESS.md) is what its card says: every
article with its five summaries, each with three raters' verdicts, a span kind wherever one marked."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "bench" / "data" / "xsum_faithfulness.jsonl"


@pytest.mark.unit
def test_every_article_has_its_five_summaries_each_read_by_three_raters() -> None:
    rows = [json.loads(line) for line in DATA.open()]
    systems: dict[int, list[str]] = defaultdict(list)
    for row in rows:
        systems[row["source_line"]].append(row["system"])
        assert 0 <= row["raters_marking_nothing"] <= 3
        assert bool(row["marked"]) == (row["raters_marking_nothing"] < 3), row
        assert row["marked"] == sorted(set(row["marked"]) & {"extrinsic", "intrinsic"})
    assert len(systems) == 440
    assert all(sorted(s) == ["BERTS2S", "Gold", "PtGen", "TConvS2S", "TranS2S"] for s in systems.values())
    assert sum(row["raters_marking_nothing"] >= 2 for row in rows) == 159
