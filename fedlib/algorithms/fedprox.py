"""FedProx (Li, Sahu, Zaheer, Sanjabi, Talwalkar and Smith, MLSys 2020): FedAvg with a proximal local objective.

Client k minimises h_k(w; w^t) = F_k(w) + mu/2 ||w - w^t||^2 over all parameters, w^t the global model it
downloaded this round (captured before its first local step: the server's copy does not change until
`aggregate`), with the local solver for the local epochs (fixed work, not FedProx's gamma-inexact variable work).
The server averages as FedAvg does; `weighted=True` (the default here) weights by sample count, the average
FedProx's sampling by n_k / n gives in expectation, and what FedNova's reference code does with every client
taking part.

Choices: with Adam the proximal gradient mu (w - w^t) passes through Adam's normalisation like every other
gradient (the paper uses SGD). mu's default 0.01 is a point of FedProx's grid {0.001, 0.01, 0.1, 1}; a notebook
that compares methods picks mu on seed 0 and states it. The loss is the squared norm (some implementations report
mu/2 ||w - w^t|| without the square; the gradient they add is the squared norm's).
"""
from __future__ import annotations

import torch

from ..engine import TrainStats, masked_cross_entropy, squared_distance
from .base import at_least
from .fedavg import FedAvg


class FedProx(FedAvg):
    name = "fedprox"
    defaults = dict(FedAvg.defaults, weighted=True, mu=0.01)
    rules = dict(FedAvg.rules, mu=at_least(0))

    def local_training(self, rnd: int, clients: torch.Tensor) -> torch.Tensor:
        return self.proximal_training(rnd, clients).loss

    def proximal_training(self, rnd: int, clients: torch.Tensor) -> TrainStats:
        """The participants minimise h_k(w; w^t) for the local epochs. Returns their losses and step counts."""
        anchor = dict(self.global_params)  # w^t: what the clients downloaded this round
        mu = self.options["mu"]

        def proximal_loss(feats, logits, y, valid, rows, params):
            loss = masked_cross_entropy(logits, y, valid)
            return loss + 0.5 * mu * squared_distance(params, anchor, self.shared) if mu else loss

        proximal_loss.rowwise = True  # each row against the one anchor: finished rows may sit out (skip_finished)
        return self.ctx.train_clients(rnd, clients, trainable=lambda g: list(g.params), loss_fn=proximal_loss)
