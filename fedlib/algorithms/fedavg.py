"""Parameter averaging: FedAvg (McMahan et al., 2017) and LG-FedAvg (Liang et al., 2020).

Both share some parameters and let the server average them; they differ only in which:
FedAvg shares the whole model, LG-FedAvg keeps the body local and shares the last
`global_layers` layers. Clients load the shared parameters, train everything locally,
and send the shared ones back. Averaging is uniform over clients, as in LG-FedAvg's code
(Table 1's partitions give every client nearly the same number of samples);
`weighted=True` weights by sample count and then also sends n_c up.
"""
from __future__ import annotations

import torch

from ..messages import Message
from ..models import last_layers
from .base import Algorithm, Context


class ParameterAveraging(Algorithm):
    defaults = dict(weighted=False)

    def shared_names(self, ctx: Context) -> list[str]:
        raise NotImplementedError

    def local_training(self, group, data, rnd: int) -> torch.Tensor:
        """What a client trains between download and upload; by default every parameter for the local epochs."""
        return self.ctx.train(group, data, rnd, trainable=list(group.params))

    def init(self, ctx: Context) -> None:
        super().init(ctx)
        self.shared = self.shared_names(ctx)
        first = ctx.population.groups[0]
        for g in ctx.population.groups[1:]:
            for k in self.shared:
                if k not in g.params or g.params[k].shape[1:] != first.params[k].shape[1:]:
                    raise ValueError(f"{self.name} shares {k!r}, so every client needs it with the same shape; "
                                     f"use a method that shares no body (fedlog, fedproto) for mixed architectures")
        self.global_params = {k: first.params[k][0].clone() for k in self.shared}

    def configure(self, rnd: int) -> Message:
        return Message.down(dict(self.global_params), self.ctx.clients)

    def client_update(self, rnd: int, down: Message) -> Message:
        for k in self.shared:
            self.population.set_all(k, down[k])
        losses = torch.zeros(self.population.n_clients)
        for g, data in self.ctx.groups:
            losses[g.clients] = self.local_training(g, data, rnd).cpu()
        self.train_loss = losses
        payload = {k: self.population.gather(k) for k in self.shared}
        if self.options["weighted"]:
            payload["n"] = self.ctx.fed.train.counts.float()
        return Message.up(payload, self.ctx.clients)

    def aggregate(self, rnd: int, up: Message) -> None:
        if self.options["weighted"]:
            w = up["n"] / up["n"].sum()
        else:
            w = torch.full((len(up.clients),), 1.0 / len(up.clients))
        for k in self.shared:
            v = up[k]
            self.global_params[k] = torch.tensordot(w.to(v.device, v.dtype), v, dims=1)
            self.population.set_all(k, self.global_params[k])


class FedAvg(ParameterAveraging):
    name = "fedavg"

    def shared_names(self, ctx: Context) -> list[str]:
        return list(ctx.population.groups[0].params)


class LGFedAvg(ParameterAveraging):
    """Local bodies, global last layers. `global_layers=1` is LG-FedAvg 1 (the head), 2 is LG-FedAvg 2."""
    name = "lg_fedavg"
    defaults = dict(ParameterAveraging.defaults, global_layers=1)

    def shared_names(self, ctx: Context) -> list[str]:
        return last_layers(ctx.population.groups[0].model, self.options["global_layers"])
