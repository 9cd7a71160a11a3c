"""The no-answer detector's data: the committed file is what its generator writes, and the split
keeps test templates out of training and earlier rows on their side when kinds are added."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "training" / "claim_support")]

import build_data  # noqa: E402
from make_no_answer_data import rows as generated  # noqa: E402


@pytest.fixture(scope="module")
def rows() -> list[dict[str, str]]:
    return generated()


@pytest.mark.unit
def test_the_committed_file_is_what_the_generator_writes(rows: list[dict[str, str]]) -> None:
    committed = (ROOT / "bench" / "data" / "no_answer.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in committed] == rows


@pytest.mark.unit
def test_no_test_template_or_unseen_topic_reaches_training(rows: list[dict[str, str]]) -> None:
    split = list(zip(rows, build_data.no_answer_split(rows), strict=True))
    templates = {s: {r["template"] for r, x in split if x == s}
                 for s in ("train", "dev", "test", "test_unseen")}
    assert templates["train"] and templates["dev"] and templates["test"]
    tested = templates["test"] | templates["test_unseen"]
    assert not tested & (templates["train"] | templates["dev"])
    unseen = {r["topic"] for r, x in split if x == "test_unseen"}
    assert not unseen & {r["topic"] for r, x in split if x in ("train", "dev")}


@pytest.mark.unit
def test_kinds_added_later_leave_the_earlier_rows_on_their_side(rows: list[dict[str, str]]) -> None:
    # Each group of kinds is split by a seed of its own; a topic it shares with an earlier group
    # and draws as a test topic would move that group's rows (to test, or out).
    split = list(zip(rows, build_data.no_answer_split(rows), strict=True))
    for kinds in build_data.NO_ANSWER_ADDED_KINDS:
        earlier = [(r, x) for r, x in split if r["kind"] not in kinds]
        alone = build_data.no_answer_split([r for r, _ in earlier])
        assert alone == [x for _, x in earlier], f"adding {kinds} moved earlier rows"


@pytest.mark.unit
def test_replies_written_blind_reach_training_only_from_their_training_file(
        rows: list[dict[str, str]]) -> None:
    data = ROOT / "bench" / "data"

    def replies(name: str) -> set[str]:
        return {json.loads(line)["text"] for line in (data / name).read_text().splitlines()}

    def words(texts: set[str]) -> set[str]:  # "No idea, sorry." repeats "no idea sorry"
        return {" ".join(re.findall(r"\w+", t.lower())) for t in texts}

    evaluated = replies("no_answer_blind_eval.jsonl") | replies("short_replies_blind.jsonl")
    templated = {r["answer"] for r in rows}
    pairs = list(build_data.written_no_answer_pairs(data / "no_answer_blind_train.jsonl"))
    trained = {p["text_b"] for p in pairs}
    assert {p["label"] for p in pairs} == {0, 1}
    assert not words(replies("no_answer_blind_train.jsonl")) & words(evaluated | templated)
    kept_apart = [r for r in replies("no_answer_blind_train.jsonl")
                  if build_data.written_split(r) == "select"]
    assert 0.15 < len(kept_apart) / len(replies("no_answer_blind_train.jsonl")) < 0.35
    assert not trained & {build_data.declines_pair(r)[1] for r in kept_apart}
