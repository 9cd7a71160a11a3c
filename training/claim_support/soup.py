"""Average train.py's weights of runs fine-tuned from one start (a "model soup").

    python training/claim_support/soup.py --out DIR/model.pt RUN1/model.pt RUN2/model.pt ...

A soup of a run and its own further step keeps some of what each learnt: pass 19 is pass 15
averaged with pass 15's no-answer step, which on dev read more refusals and lost swapped figures
(README.md). Then `export.py --work DIR` scores and ships it like any run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("runs", type=Path, nargs="+", help="model.pt files of train.py")
    args = parser.parse_args()
    states = [torch.load(run, map_location="cpu") for run in args.runs]
    if any(state.keys() != states[0].keys() for state in states):
        raise SystemExit("the runs hold different tensors: not fine-tuned from one base")
    soup = {name: (sum(state[name].float() for state in states) / len(states))
            .to(states[0][name].dtype) for name in states[0]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(soup, args.out)
    print(f"{len(states)} runs averaged into {args.out}")


if __name__ == "__main__":
    main()
