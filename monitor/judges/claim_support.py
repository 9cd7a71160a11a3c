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
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from monitor.judges.embeddings import (  # file_sha256: the card's checksum (export, tests)
    MODELS,
    clean,
    encoded,
    file_sha256,  # noqa: F401
    session,
    tokenizer,
)

MAX_TOKENS = 128  # as in training: a claim with its question and a window of ~60 words


class ClaimSupportModel:
    def __init__(self, card: Path = MODELS / "claim_support.json", threads: int = 1,
                 cache_size: int = 50_000) -> None:
        """The model `card` describes; its files are named relative to the card's folder."""
        self.card = json.loads(card.read_text())
        self._session = session(card.parent / self.card["file"], threads)
        self._tokenizer = tokenizer(card.parent / self.card["tokenizer"], MAX_TOKENS)
        self.temperature = float(self.card["temperature"])
        self.threshold = float(self.card["threshold"])
        # Where the dev split's calibration says supported at 95% (the cascade band's upper
        # edge): a claim this well supported is surely an assertion of the documents' content.
        self.sure = float(self.card["band"]["high"]) if "band" in self.card else 1.0
        self._cache: OrderedDict[bytes, float] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()  # the session and the cache are shared by judge threads
        self.computed = 0  # pairs scored (not served from the cache)

    def logits(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Raw logits of the pairs, uncached (the export's checks read these). One pair a run:
        int8 dynamic quantisation scales activations over the whole batch, so a batched pair's
        logit would depend on the pairs beside it."""
        out = []
        for a, b in pairs:
            encoding = self._tokenizer.encode(clean(a, 4_000) or " ", clean(b, 4_000) or " ")
            out.append(float(self._session.run(None, encoded(encoding))[0].reshape(-1)[0]))
        return np.array(out, dtype=np.float64)

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
