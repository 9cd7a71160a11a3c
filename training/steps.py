"""What the training scripts share: the mean-pooled encoder, the learning-rate schedule, an
optimiser step, progress lines. Torch alone: no import of the monitor package."""

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


class MeanPooled(nn.Module):
    def __init__(self, encoder: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder

    def pooled(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
               token_type_ids: torch.Tensor) -> torch.Tensor:
        """The mean of the last layer's token vectors, padding left out."""
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                token_type_ids: torch.Tensor) -> torch.Tensor:
        return nn.functional.normalize(self.pooled(input_ids, attention_mask, token_type_ids),
                                       dim=-1)
