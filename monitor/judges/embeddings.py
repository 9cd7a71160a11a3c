"""Sentence embeddings that run inside the process, with a cache keyed by content hash.

The model is sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0: 6 layers, trained for
question-passage retrieval among other things), mean-pooled and normalised, exported to ONNX and
quantised to int8 by training/export_embedder.py, and run on onnxruntime with the `tokenizers`
tokenizer: nothing is downloaded at run time. It reads English; other languages belong to an LLM
judge. It replaced multilingual-e5-small (12 layers, 4-bit), which cost 0.7 s of CPU for one
180-word document; this one costs about 14 ms for its first 128 tokens.

Bad input is made harmless before it reaches the engine: lone surrogates (which UTF-8 cannot
encode) become U+FFFD and NUL characters are dropped; only the first `max_chars` characters of a
text are tokenised, and only its first `max_tokens` tokens embedded. onnxruntime runs on
`threads` intra-op threads, so the judge does not take every core from ingest.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from monitor.model import utf8_text

MODELS = Path(__file__).parent / "models"
DIMENSIONS = 384


def clean(text: str, max_chars: int | None = None) -> str:
    """Text the engine can take: valid UTF-8, no NUL, at most `max_chars` characters."""
    text = text[:max_chars] if max_chars else text
    return utf8_text(text).replace("\x00", "")


def session(path: Path, threads: int):  # type: ignore[no-untyped-def]
    """An onnxruntime session on the CPU with `threads` intra-op threads."""
    import onnxruntime  # imported here: only judges need it

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # onnxruntime's fused SkipLayerNormalization runs about four times slower on one thread
    # than the LayerNormalization and Add it replaces (bench/RESULTS.md): left unfused.
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"],
                                        disabled_optimizers=["SkipLayerNormFusion"])


def tokenizer(path: Path, max_tokens: int):  # type: ignore[no-untyped-def]
    from tokenizers import Tokenizer

    loaded = Tokenizer.from_file(str(path))
    loaded.enable_truncation(max_length=max_tokens, strategy="longest_first")
    loaded.no_padding()
    return loaded


def encoded(encoding) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    """The model's three inputs for one encoding (a batch of one: see Embedder._embed)."""
    ids = np.array([encoding.ids], dtype=np.int64)
    return {"input_ids": ids, "attention_mask": np.ones_like(ids),
            "token_type_ids": np.array([encoding.type_ids], dtype=np.int64)}


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as data:
        for block in iter(lambda: data.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class Embedder:
    def __init__(self, cache_size: int = 20_000, threads: int = 1, max_chars: int = 2_000,
                 max_tokens: int = 128) -> None:
        self._session = session(MODELS / "minilm_l6.onnx", threads)
        self.sha256 = file_sha256(MODELS / "minilm_l6.onnx")
        self._tokenizer = tokenizer(MODELS / "minilm_l6.tokenizer.json", max_tokens)
        self.threads = threads
        self.max_chars = max_chars
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()  # the session and the cache are shared by judge threads
        self.computed = 0  # embeddings computed (not served from the cache)

    def query(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, is_query=True)

    def passage(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, is_query=False)

    def _embed(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        # One encoding for both sides: unlike e5, this model takes no query/passage prefixes.
        texts = [clean(t, self.max_chars) or " " for t in texts]
        keys = [hashlib.blake2b(t.encode(), digest_size=16).digest() for t in texts]
        with self._lock:
            missing = list({keys[i]: i for i in range(len(texts)) if keys[i] not in self._cache}
                           .values())
            # One text a run: int8 dynamic quantisation scales activations over the whole batch,
            # so a batched text's vector would depend on its neighbours (by up to 0.03 a
            # dimension), and a cached verdict on the turn it first came with.
            for i in missing:
                inputs = encoded(self._tokenizer.encode(texts[i]))
                self._cache[keys[i]] = np.asarray(self._session.run(None, inputs)[0][0],
                                                  dtype=np.float32)
            self.computed += len(missing)
            out = np.stack([self._cache[k] for k in keys]) if keys else np.zeros((0, DIMENSIONS))
            for k in keys:
                self._cache.move_to_end(k)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return out
