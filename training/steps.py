"""What the training scripts share: the learning-rate schedule, an optimiser step, progress lines."""

from __future__ import annotations

import time

import torch
from torch import nn


def warm_then_decay(optimizer: torch.optim.Optimizer, steps: int) -> torch.optim.lr_scheduler.LambdaLR:
    """Linear warm-up over the first sixteenth of the steps, then linear decay to zero."""
    warmup = max(1, steps // 16)
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(
        (s + 1) / warmup, max(0.0, (steps - s) / (steps - warmup))))


def optimise(model: nn.Module, optimizer: torch.optim.Optimizer,
             schedule: torch.optim.lr_scheduler.LambdaLR, loss: torch.Tensor) -> None:
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    schedule.step()
    optimizer.zero_grad(set_to_none=True)


class Progress:
    """A line every 25 steps: the mean loss, examples a second, the time since `started`."""

    def __init__(self, steps: int, started: float, unit: str) -> None:
        self.steps, self.started, self.unit = steps, started, unit
        self.loss, self.examples, self.since = 0.0, 0, time.perf_counter()

    def add(self, step: int, loss: float, examples: int) -> None:
        self.loss += loss * examples
        self.examples += examples
        if step % 25 == 0 or step == self.steps:
            elapsed = time.perf_counter() - self.since
            print(f"step {step}/{self.steps}  loss {self.loss / self.examples:.4f}  "
                  f"{self.examples / elapsed:.1f} {self.unit}/s  "
                  f"elapsed {time.perf_counter() - self.started:.0f} s", flush=True)
            self.loss, self.examples, self.since = 0.0, 0, time.perf_counter()
