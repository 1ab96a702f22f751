"""FedBabu (Oh et al., 2021): the head is randomly initialised and never updated during training;
only the body is trained and averaged.

Every client starts from the same random head and keeps it, so the bodies learn towards one fixed
classifier. The original paper fine-tunes the head before evaluating; the FedLog paper's FedBabu
numbers (below FedAvg's) indicate no fine-tuning, and none is done during the rounds; the head is its personal
part for `Config.final_finetune_epochs`, the original's fine-tune.
"""
from __future__ import annotations

import torch

from .base import Context
from .fedavg import ParameterAveraging


class FedBabu(ParameterAveraging):
    name = "fedbabu"

    def shared_names(self, ctx: Context) -> list[str]:
        return ctx.population.groups[0].names("body")

    def local_training(self, rnd: int, clients: torch.Tensor) -> torch.Tensor:
        return self.ctx.train_clients(rnd, clients, trainable=lambda g: g.names("body")).loss
