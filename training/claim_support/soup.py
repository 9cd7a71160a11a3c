"""Average train.py's weights of runs fine-tuned from one start (a "model soup").

    python training/claim_support/soup.py --out DIR/model.pt RUN1/model.pt RUN2/model.pt ...

A soup of a run and its own further step keeps some of what each learnt: pass 19 is pass 15
averaged with pass 15's no-answer step, which on dev read more refusals and lost swapped figures
(README.md). Then `export.py --work DIR` scores and ships it like any run. The frozen word
embeddings are the base's in every run, so they are left out: a model.pt that from_onnx.py
recovered (which holds them) soups with train.py's (which does not).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train import WORD_EMBEDDINGS  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("runs", type=Path, nargs="+", help="model.pt files of train.py")
    args = parser.parse_args()
    states = [{name: tensor for name, tensor in torch.load(run, map_location="cpu").items()
               if name != WORD_EMBEDDINGS} for run in args.runs]
    if any(state.keys() != states[0].keys() for state in states):
        raise SystemExit("the runs hold different tensors: not fine-tuned from one base")
    soup = {name: (sum(state[name].float() for state in states) / len(states))
            .to(states[0][name].dtype) for name in states[0]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(soup, args.out)
    print(f"{len(states)} runs averaged into {args.out}")


if __name__ == "__main__":
    main()
