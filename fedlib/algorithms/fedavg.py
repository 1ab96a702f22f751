"""Parameter averaging: FedAvg (McMahan et al., 2017) and LG-FedAvg (Liang et al., 2020), and local training.

Both share some parameters and let the server average them; they differ only in which:
FedAvg shares the whole model, LG-FedAvg keeps the body local and shares the last
`global_layers` layers. Clients load the shared parameters, train everything locally,
and send the shared ones back. Averaging is uniform over clients, as in LG-FedAvg's code
(Table 1's partitions give every client nearly the same number of samples);
`weighted=True` weights by sample count and then also sends n_c up. `Local` shares nothing: each client trains
its own model alone (the "Local-Training" baseline of FedCR's Table 9), under the same round protocol.

With partial participation the server picks the round's clients (`Context.select`), only they download the
shared parameters, train and reply, and the average is over them; afterwards every client holds the new
shared parameters with its own local ones.

FedProf's comparisons (its Sec. 5 and Table 1) need two more ways to select and to aggregate: `selection="data"`
draws clients with probabilities n_k / n (FedProx's sampling; `replace=True` draws with replacement, the i.i.d.
draws its unbiasedness assumes); `aggregation="full"` averages every client's model by n_k / n with the
unselected ones holding the current global model, w + sum_{k in S} (n_k / n)(w_k - w) (the FedAvg of FedProf's
authors' simulator, SAFA); `aggregation="scheme2"` is sum_{k in S} (n_k / n)(N / K) w_k (Li et al., 2020, Scheme
II: FedProf's FEDAVG-RP). Both read every client's n_k, sent once, in round 0's uplink.
"""
from __future__ import annotations

import torch

from ..messages import Message
from ..models import last_layers
from .base import Algorithm, Context, Reply, at_least, one_of


class ParameterAveraging(Algorithm):
    defaults = dict(weighted=False)
    supports_partial = True

    def shared_names(self, ctx: Context) -> list[str]:
        raise NotImplementedError

    def personal_names(self, group) -> list[str]:
        return [k for k in group.params if k not in self.shared]

    def local_training(self, rnd: int, clients: torch.Tensor) -> torch.Tensor:
        """What the participants train between download and upload; by default every parameter for the local
        epochs. Returns their losses."""
        return self.ctx.train_clients(rnd, clients, trainable=lambda g: list(g.params)).loss

    def init(self, ctx: Context) -> None:
        super().init(ctx)
        self.shared = self.shared_names(ctx)
        first = ctx.population.groups[0]
        for g in ctx.population.groups[1:]:
            for k in self.shared:
                if k not in g.params or g.params[k].shape[1:] != first.params[k].shape[1:]:
                    raise ValueError(f"{self.name} shares {k!r}, so every client needs it with the same shape; "
                                     f"use a method that shares no body (fedlog, fedproto) for mixed architectures (Config.model)")
        self.global_params = first.row(0, self.shared)

    def selection_probs(self, rnd: int) -> torch.Tensor | None:
        """The probabilities this round's participants are drawn with (None: uniform)."""
        if self.options.get("selection") == "data":
            n = self.ctx.fed.train.counts.double()
            return n / n.sum()
        return None

    def configure(self, rnd: int) -> Message:
        return Message.down(dict(self.global_params),
                            self.ctx.select(rnd, self.selection_probs(rnd), replace=self.options.get("replace", False)))

    def receive(self, down: Message) -> None:
        """The download: each participant's shared parameters become the global ones it received."""
        self.population.receive(down, self.shared)

    def client_update(self, rnd: int, down: Message) -> Reply:
        clients = down.clients
        self.receive(down)
        losses = self.local_training(rnd, clients)
        payload = {k: self.population.gather(k, clients) for k in self.shared}
        if self.options["weighted"]:
            payload["n"] = self.ctx.fed.train.counts[clients].float()
        present = {}
        if rnd == 0 and (self.options.get("aggregation", "mean") != "mean" or self.options.get("selection") == "data"):
            payload["n_all"] = self.ctx.fed.train.counts.float()  # every client's size, once
            present["n_all"] = torch.ones(len(payload["n_all"]), dtype=torch.bool)
        return Reply(Message.up(payload, clients, present=present), losses)

    def aggregate(self, rnd: int, up: Message) -> None:
        how = self.options.get("aggregation", "mean")
        n = len(up.clients)
        if how == "mean":
            w = up["n"] / up["n"].sum() if self.options["weighted"] else torch.full((n,), 1.0 / n)
        else:
            p = self.ctx.fed.train.counts.double()
            p = (p / p.sum())[up.clients]
            if how == "scheme2":
                w = p * self.population.n_clients / n
            else:  # full: each distinct sender once, the others hold the global model
                first = torch.tensor([i == 0 or int(c) not in up.clients[:i].tolist()
                                      for i, c in enumerate(up.clients)])
                w = torch.where(first, p, torch.zeros_like(p))
        for k in self.shared:
            v = up[k]
            if how == "full":
                self.global_params[k] = self.global_params[k] + torch.tensordot(
                    w.to(v.device, v.dtype), v - self.global_params[k], dims=1)
            else:
                self.global_params[k] = torch.tensordot(w.to(v.device, v.dtype), v, dims=1)
            self.population.set_all(k, self.global_params[k])


class FedAvg(ParameterAveraging):
    """The whole model is shared; for the final fine-tune (FedAvg-FT) the head counts as personal. FedAvg (and
    FedProx, FedProf) take FedProf's `selection`, `replace` and `aggregation` options (module docstring)."""
    name = "fedavg"
    defaults = dict(ParameterAveraging.defaults, aggregation="mean", selection="uniform", replace=False)
    rules = dict(aggregation=one_of("mean", "full", "scheme2"), selection=one_of("uniform", "data"))

    def shared_names(self, ctx: Context) -> list[str]:
        return ctx.population.param_names()

    def personal_names(self, group) -> list[str]:
        return group.names("head")


class LGFedAvg(ParameterAveraging):
    """Local bodies, global last layers. `global_layers=1` is LG-FedAvg 1 (the head), 2 is LG-FedAvg 2."""
    name = "lg_fedavg"
    defaults = dict(ParameterAveraging.defaults, global_layers=1)
    rules = dict(global_layers=at_least(1))

    def shared_names(self, ctx: Context) -> list[str]:
        return last_layers(ctx.population.template, self.options["global_layers"], "global_layers")


class Local(ParameterAveraging):
    """No communication: the round's participants train their own models; nothing is sent either way. The final
    fine-tune trains the head, as every other method's in FedCR's protocol (all of the model is the client's own,
    but a longer fine-tune of everything would be more local training, not the same protocol)."""
    name = "local"

    def shared_names(self, ctx: Context) -> list[str]:
        return []

    def personal_names(self, group) -> list[str]:
        return group.names("head")
