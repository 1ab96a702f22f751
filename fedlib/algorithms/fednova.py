"""FedNova (Wang, Liu, Liang, Joshi and Poor, NeurIPS 2020): normalized averaging of the clients' updates.

Client i runs tau_i local steps from the global model x^t (tau_i = E * ceil(n_i / B) here: the engine counts each
client's steps), so its update is Delta_i = x_i - x^t = -eta G_i a_i with a_i the local solver's weights on its
stochastic gradients. The server removes the dependence on tau_i:

    x^{t+1} = x^t + tau_eff * sum_i p_i Delta_i / ||a_i||_1,   p_i = n_i / sum_j n_j,   tau_eff = sum_i p_i ||a_i||_1

||a_i||_1 (`local_norm`) is tau_i for plain SGD; for SGD with momentum rho (buf = rho buf + g, reset every round)
sum_{k=1}^{tau} (1 - rho^k) / (1 - rho); for proximal SGD (FedProx's mu, step eta) sum_{k=0}^{tau-1} (1 - eta mu)^k;
for both at once the reference code's recursion, which `local_norm` runs in every case. With equal tau_i and plain
SGD the update is sample-weighted FedAvg (tested).

Choices: the uplink is Delta_i with ||a_i||_1 and n_i (2 numbers more than FedAvg's model). tau_eff is
sum_i p_i ||a_i||_1 as in the paper, also with mu > 0 (the reference code then uses sum_i p_i tau_i). No server
momentum (the code's `gmf`, default 0). Weight decay is not in the normaliser (as in the code). Adam has no a_i, so
FedNova requires optimizer="sgd".
"""
from __future__ import annotations

import torch

from ..messages import Message
from .base import Reply
from .fedprox import FedProx


def local_norm(tau: int, lr: float, momentum: float = 0.0, mu: float = 0.0) -> float:
    """||a||_1 after tau local steps of SGD with `momentum` and a proximal weight `mu` at step size `lr`: the
    reference code's recursion (its closed forms for one of the two are tested)."""
    norm, counter = 0.0, 0.0
    for _ in range(int(tau)):
        if momentum:
            counter = counter * momentum + 1
            norm += counter
        if lr * mu:
            norm = norm * (1 - lr * mu) + 1
        if not momentum and not lr * mu:
            norm += 1
    return norm


def normalized_average(x: torch.Tensor, deltas: torch.Tensor, norms: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """The server step: x + tau_eff * sum_i p_i deltas_i / norms_i with tau_eff = sum_i p_i norms_i (deltas [K, ...])."""
    tau_eff = float((p * norms).sum())
    scale = (tau_eff * p / norms).to(deltas.device, deltas.dtype)
    return x + torch.tensordot(scale, deltas, dims=1)


class FedNova(FedProx):
    name = "fednova"
    participation_decay = False  # one learning rate for every client (its own training loop)
    defaults = dict(FedProx.defaults, mu=0.0)

    @classmethod
    def check_config(cls, cfg) -> None:
        super().check_config(cfg)
        if cfg.options.get("aggregation", "mean") != "mean":
            raise ValueError("fednova: its server step is the normalized average; option aggregation must stay "
                             "'mean'")
        if cfg.optimizer != "sgd":
            raise ValueError(f"fednova normalises by the local solver's weights, which Adam does not have: set "
                             f"Config.optimizer to 'sgd' (got {cfg.optimizer!r})")

    def client_update(self, rnd: int, down: Message) -> Reply:
        clients = down.clients
        self.receive(down)
        stats = self.proximal_training(rnd, clients)
        lr, momentum = self.ctx.lr_at(rnd), self.ctx.optimizer_kw.get("momentum", 0.0)
        norms = [local_norm(int(t), lr, momentum, self.options["mu"]) for t in stats.steps.tolist()]
        payload = {k: self.population.gather(k, clients) - down[k] for k in self.shared}  # Delta_i
        payload["a_norm"] = torch.tensor(norms, dtype=torch.float64)
        payload["n"] = self.ctx.fed.train.counts[clients.cpu()].double()
        return Reply(Message.up(payload, clients), stats.loss)

    def aggregate(self, rnd: int, up: Message) -> None:
        p = up["n"] / up["n"].sum()
        for k in self.shared:
            self.global_params[k] = normalized_average(self.global_params[k], up[k], up["a_norm"], p)
            self.population.set_all(k, self.global_params[k])
