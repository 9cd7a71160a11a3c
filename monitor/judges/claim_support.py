"""The claim-support cross-encoder: does this passage support this claim? A probability.

MiniLM-L6 (sentence-transformers' all-MiniLM-L6-v2, Apache-2.0) fine-tuned on claim/evidence
pairs by training/claim_support/ (VitaminC, and question-answer hard negatives: another entity of
the passage, two of its numbers swapped, an entity it does not contain), exported to ONNX and
quantised to int8. It runs on onnxruntime with the `tokenizers` tokenizer, on one intra-op thread
by default, and nothing is downloaded: the weights ship in models/.

    model = ClaimSupportModel()
    model.probabilities([("Who directed Heat? Michael Mann.", "Heat was directed by Michael Mann")])

`text_a` is the claim, or the question followed by a claim of its answer (a short answer asserts
something only as the answer to its question); `text_b` a window of a document. The logit is
divided by the temperature fitted on the dev split, so the probability is calibrated.

The same model answers two more questions, each asked by the shape of its pair (the card holds
each one's threshold and cascade band): is a document relevant to a question (the question
alone as `text_a`), and does an answer decline to answer (`declines_pair`).

A claim that bounds a figure the passage gives otherwise ("more than 110 cases" against "105
cases", bounds.py) is capped at the card's `bounds.probability` (`bounded`): the local judge's
groundedness, as the card's figures, reads claims so.

A card may name a second opinion: a larger cross-encoder trained on the same pairs, read only
where the first is unsure (its calibrated probability inside `second_opinion.reads`). There the
pair's logit is the mean of the two models' calibrated logits, and the card's temperature,
thresholds and bands are fitted on that mixed logit; elsewhere it is the first's alone. A card
whose second opinion says `reads_every_declines_pair` reads both models on every no-answer pair,
whatever the first says: the long refusals the first misses (praise or a restated question, then
a decline at the end) it misses surely, below the band, where the second was never read.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from monitor.judges.bounds import contradicted_bound
from monitor.judges.embeddings import MODELS, clean, encoded, file_sha256, session, tokenizer
from monitor.judges.no_answer import may_decline
from monitor.judges.text import strip_framing

MAX_TOKENS = 128  # as in training: a claim with its question and a window of ~60 words
# As `text_a`, it makes the pair the no-answer task's (build_data.py --no-answer).
DECLINES = "Does the reply decline to answer?"


def declines_pair(answer: str) -> tuple[str, str]:
    """The pair asking whether `answer` declines to answer, as the model was trained on it: the
    answer alone, without its framing ("According to the documents, ...": not content). Not the
    question: whether a reply declines does not depend on it, and with it in the pair the model
    (trained on a few hundred answers) let the question sway its reading of a plain refusal."""
    return DECLINES, strip_framing(answer)


class CrossEncoder:
    """One ONNX cross-encoder and its tokenizer: the raw logit of each pair."""

    def __init__(self, onnx_file: Path, tokenizer_file: Path, threads: int) -> None:
        self._session = session(onnx_file, threads)
        self._tokenizer = tokenizer(tokenizer_file, MAX_TOKENS)

    def logits(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """One pair a run: int8 dynamic quantisation scales activations over the whole batch, so
        a batched pair's logit would depend on the pairs beside it."""
        out = []
        for a, b in pairs:
            encoding = self._tokenizer.encode(clean(a, 4_000) or " ", clean(b, 4_000) or " ")
            out.append(float(self._session.run(None, encoded(encoding))[0].reshape(-1)[0]))
        return np.array(out, dtype=np.float64)


def mixed_logits(first: np.ndarray, second: Callable[[np.ndarray], np.ndarray],
                 opinion: dict[str, Any], text_a: Sequence[str]) -> np.ndarray:
    """The logits a card with a second opinion (`opinion`) gives: `first`, the first model's raw
    logits, over its temperature; where its probability is inside `opinion["reads"]` (or, where
    the card says so, the pair asks whether a reply declines: its `text_a` is DECLINES),
    averaged with the second's (`second(indices)`: its raw logits of those pairs) over its own."""
    calibrated = first / float(opinion["first_temperature"])
    probability = 1.0 / (1.0 + np.exp(-calibrated))
    low, high = opinion["reads"]
    read = (probability >= low) & (probability < high)
    if opinion.get("reads_every_declines_pair"):
        read |= np.array([a == DECLINES for a in text_a], dtype=bool)
    both = np.flatnonzero(read)
    if both.size:
        calibrated[both] = (calibrated[both] + second(both) / float(opinion["temperature"])) / 2
    return calibrated


def bounded(pairs: Sequence[tuple[str, str]], probabilities: np.ndarray, cap: float | None
            ) -> tuple[np.ndarray, list[str | None]]:
    """Claim pairs' probabilities, each pair whose claim bounds a figure the passage contradicts
    ("more than 110 cases" against "105 cases") taken down to `cap` (a card's
    `bounds.probability`; None: unchanged), and what each contradicts. The model does not compare
    numbers; the check does, where it can tell (bounds.py)."""
    if cap is None:
        return probabilities, [None] * len(pairs)
    contradicts = [contradicted_bound(claim, passage) for claim, passage in pairs]
    capped = np.array([min(p, cap) if c else p for p, c in zip(probabilities, contradicts, strict=True)])
    return capped, contradicts


class ClaimSupportModel:
    def __init__(self, card: Path = MODELS / "claim_support.json", threads: int = 1,
                 cache_size: int = 50_000) -> None:
        """The model `card` describes; its files are named relative to the card's folder."""
        self.path = card
        self.card = json.loads(card.read_text())
        self._first = CrossEncoder(card.parent / self.card["file"],
                                   card.parent / self.card["tokenizer"], threads)
        opinion = self.card.get("second_opinion")
        self._second = (CrossEncoder(card.parent / opinion["file"],
                                     card.parent / opinion["tokenizer"], threads)
                        if opinion else None)
        # Who judges, each file by its checksum (the file's, as the embedder's): what the
        # no-answer detector was fitted with. Short names: the judge's model string, "name@8
        # digits" each, must fit an exemplar's judge_model (64 characters).
        self.checksums = {"claim_support": file_sha256(card.parent / self.card["file"])} | (
            {"second": file_sha256(card.parent / opinion["file"])}
            if opinion else {})
        # What a no-answer detector fitted on this model's probabilities must have been fitted
        # with (no_answer.NoAnswerDetector.beside): the files, and how the card reads them (its
        # temperatures, where the second opinion is read; the entries that only describe a file
        # left out), by a digest, since the same files read otherwise give other probabilities.
        reading = {"temperature": self.card["temperature"], "second_opinion": {
            key: value for key, value in (opinion or {}).items()
            if key not in ("file", "tokenizer", "sha256", "base")}}
        self.identity = self.checksums | {"claim_support_reading": hashlib.sha256(
            json.dumps(reading, sort_keys=True).encode()).hexdigest()}
        self.temperature = float(self.card["temperature"])
        self.threshold = float(self.card["threshold"])
        # Where the dev split's calibration says supported at 95% (the cascade band's upper
        # edge): a claim this well supported is surely an assertion of the documents' content.
        self.sure = float(self.card["band"]["high"]) if "band" in self.card else 1.0
        # P(relevant) at or above: the document helps answer the question; None where the card
        # has no relevance task
        self.relevance_threshold = (float(self.card["relevance"]["threshold"])
                                    if "relevance" in self.card else None)
        # P(declines) at or above: no answer; None where the card has no no-answer task
        self.no_answer_threshold = (float(self.card["no_answer"]["threshold"])
                                    if "no_answer" in self.card else None)
        # P(supported) of a claim whose bound the passage contradicts (bounds.py): the share of
        # such dev pairs that are supported; None where the card was fitted without the check
        self.bound_cap = (float(self.card["bounds"]["probability"])
                          if "bounds" in self.card else None)
        self._cache: OrderedDict[bytes, float] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()  # the session and the cache are shared by judge threads
        self.computed = 0  # pairs scored (not served from the cache)

    def logits(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Logits of the pairs before the card's temperature, uncached (the export's checks read
        these): the first model's, or mixed with the second opinion's where the card has one."""
        first = self._first.logits(pairs)
        second = self._second
        if not second:
            return first
        return mixed_logits(first, lambda chosen: second.logits([pairs[i] for i in chosen]),
                            self.card["second_opinion"], [a for a, _ in pairs])

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Calibrated probabilities that each passage supports its claim; cached by content."""
        keys = [hashlib.blake2b(clean(f"{a}\x01{b}").encode(), digest_size=16).digest()
                for a, b in pairs]
        with self._lock:
            missing = list({k: i for i, k in enumerate(keys) if k not in self._cache}.values())
            for i, z in zip(missing, self.logits([pairs[i] for i in missing]), strict=True):
                self._cache[keys[i]] = float(1.0 / (1.0 + np.exp(-z / self.temperature)))
            self.computed += len(missing)
            out = np.array([self._cache[k] for k in keys])
            for k in keys:
                self._cache.move_to_end(k)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return out

    def declines(self, answer: str) -> float:
        """P(the answer declines to answer): a refusal, "I could not find that in the documents".
        0.0 for a few words with no negation or apology (no_answer.may_decline): they assert."""
        pair = declines_pair(answer)
        return float(self.probabilities([pair])[0]) if may_decline(pair[1]) else 0.0
