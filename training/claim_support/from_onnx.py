"""Recover train.py's torch weights (a model.pt) from the shipped int8 ONNX claim-support model.

    python training/claim_support/from_onnx.py --out DIR/model.pt [--onnx FILE] [--base DIR] \
        [--check DEV.jsonl]

Why it exists: a further training pass starts from a model.pt (`train.py --init`), and the
fp32 checkpoint is a working file of whoever trained the model, not part of the repository; the
shipped `monitor/judges/models/claim_support.onnx` may be the only copy of the weights. This
reads its initializers and writes them back into train.py's ClaimSupport state dict:

- every MatMulInteger weight (onnxruntime's dynamic per-channel quantisation: int8, one scale
  and zero point per output column) is dequantised, scale * (q - zero_point), and transposed
  (MatMul multiplies by W^T's layout [in, out]; nn.Linear keeps [out, in]); the node's output
  name says which Linear it is (".../layer.0/attention/self/query/MatMul...");
- the position and token-type embeddings (uint8, one scale per tensor) are dequantised;
- the word embeddings are taken from the base model (`--base`: the second opinion's, e5_base.py's
  folder; by default MiniLM-L6) instead: train.py freezes them, so the
  pretrained table is exactly what the model was trained with (the ONNX holds it quantised);
- biases and LayerNorm parameters are stored in fp32 and copied as they are;
- BERT's pooler is not in the graph (the head reads the mean of the tokens, so it is never
  trained) and is taken from the base.

The result is the shipped model up to quantisation error (not the fp32 weights it was exported
from), written as train.py writes a pass (save_weights), so soup.py averages it with one.
--check scores pairs of a dev split with the recovered torch model and with the runtime's class on
the ONNX file, and prints how far the logits are apart; --reference compares each tensor with an
fp32 model.pt where one exists.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT), str(HERE), str(HERE.parent)]

from train import base_dir, build_model, encode, load_tokenizer, read_pairs, save_weights  # noqa: E402

SHIPPED = ROOT / "monitor" / "judges" / "models" / "claim_support.onnx"


def recover(onnx_file: Path, base: Path | None = None) -> dict[str, torch.Tensor]:
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(onnx_file)).graph
    init = {i.name: numpy_helper.to_array(i) for i in graph.initializer}

    def dequantised(name: str) -> np.ndarray:
        q = init[f"{name}_quantized"].astype(np.float32)
        return init[f"{name}_scale"] * (q - init[f"{name}_zero_point"].astype(np.float32))

    model = build_model(base)
    state = model.state_dict()
    out: dict[str, torch.Tensor] = {}
    for node in graph.node:
        if node.op_type != "MatMulInteger":
            continue
        weight = node.input[1].removesuffix("_quantized")
        where = node.output[0]
        if weight == "head.weight_Transposed":
            key = "head.weight"
        else:  # "/encoder/encoder/layer.0/attention/self/query/MatMul_output_0_output_quantized"
            key = where.strip("/").rsplit("/MatMul", 1)[0].replace("/", ".") + ".weight"
        out[key] = torch.from_numpy(np.ascontiguousarray(dequantised(weight).T))
    for name in ("position_embeddings", "token_type_embeddings"):
        key = f"encoder.embeddings.{name}.weight"
        out[key] = torch.from_numpy(dequantised(key))
    key = "encoder.embeddings.word_embeddings.weight"
    out[key] = state[key].clone()  # frozen in training: the base's own table
    for key in state:
        if key not in out and key in init:
            out[key] = torch.from_numpy(init[key].copy())
    for key in state:
        if key.startswith("encoder.pooler."):  # unused by the forward (mean pooling), untrained
            out[key] = state[key].clone()
    missing = [k for k in state if k not in out and not k.endswith("position_ids")]
    if missing:
        raise SystemExit(f"not found in {onnx_file}: {missing}")
    for key, tensor in out.items():
        if tensor.shape != state[key].shape:
            raise SystemExit(f"{key}: {tuple(tensor.shape)} in the ONNX, {tuple(state[key].shape)} in torch")
    return {k: out.get(k, v) for k, v in state.items()}


def check(weights: dict[str, torch.Tensor], onnx_file: Path, base: Path | None, dev: Path,
          pairs: int) -> None:
    import json
    import shutil
    import tempfile

    from monitor.judges.claim_support import ClaimSupportModel

    rows = read_pairs(dev)[:pairs]
    model = build_model(base)
    model.load_state_dict(weights)
    model.eval()
    tokenizer_file = (base or base_dir()) / "tokenizer.json"
    tokenizer = load_tokenizer(tokenizer_file)
    with torch.no_grad():
        torch_logits = np.array([float(model(**encode(tokenizer, [r]))[0]) for r in rows])
    with tempfile.TemporaryDirectory() as folder:
        shutil.copy(onnx_file, Path(folder) / "m.onnx")
        shutil.copy(tokenizer_file, Path(folder) / "t.json")
        card = Path(folder) / "card.json"
        card.write_text(json.dumps({"file": "m.onnx", "tokenizer": "t.json",
                                    "temperature": 1.0, "threshold": 0.0}))
        onnx_logits = ClaimSupportModel(card, threads=2).logits(
            [(r["text_a"], r["text_b"]) for r in rows])
    gap = np.abs(torch_logits - onnx_logits)
    agree = float(((torch_logits > 0) == (onnx_logits > 0)).mean())
    print(f"{len(rows)} dev pairs: logits torch vs onnx, mean |gap| {gap.mean():.4f}, "
          f"max {gap.max():.4f}, correlation {np.corrcoef(torch_logits, onnx_logits)[0, 1]:.5f}, "
          f"same side of 0: {agree:.3f} (logit spread: sd {onnx_logits.std():.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--onnx", type=Path, default=SHIPPED)
    parser.add_argument("--out", type=Path, required=True, help="where to write the model.pt")
    parser.add_argument("--base", type=Path, help="the base train.py --base was given (the second "
                        "opinion's: e5_base.py's folder; default: MiniLM-L6 from its wheel)")
    parser.add_argument("--check", type=Path, help="a dev.jsonl: score its first --pairs with both")
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--reference", type=Path, help="an fp32 model.pt to compare tensor by tensor")
    args = parser.parse_args()
    torch.set_num_threads(2)
    started = time.perf_counter()
    weights = recover(args.onnx, args.base)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    model = build_model(args.base)
    model.load_state_dict(weights)
    save_weights(model, args.out)  # train.py's own format, so soup.py averages it with a pass's
    print(f"{len(weights)} tensors recovered from {args.onnx} into {args.out} "
          f"({time.perf_counter() - started:.0f} s)", flush=True)
    if args.reference:
        reference = torch.load(args.reference)
        worst = max(((float((weights[k] - v).norm() / v.norm().clamp(min=1e-12)), k)
                     for k, v in reference.items() if v.is_floating_point()))
        print(f"against {args.reference}: worst relative error {worst[0]:.4f} ({worst[1]})")
    if args.check:
        check(weights, args.onnx, args.base, args.check, args.pairs)
        print(f"checked in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
