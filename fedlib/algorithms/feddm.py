"""FedDM (Xiong, Wang, Cheng, Yu and Hsieh, CVPR 2023): clients send synthetic data, the server trains on them.

Round t: the server sends the global model w^t (FedDM's ConvNet, `convnetW`). Each participant initialises a
synthetic set S_k of `dpc` samples per class it holds (real samples, or N(0, 1) noise with init="random"), then
takes `iterations` steps of distribution matching (`fedlib.distill`, FedRD's Eq. 5): each step draws a model in
w^t's neighbourhood, w~ = w^t + u min(rho / ||u||, 1) with u ~ N(0, I) over all parameters, and matches the class
means of the penultimate features (and of the logits: `match_logits`) of a real batch and of S_k. It sends S_k and
its classes. The server trains w^t on the union of the synthetic sets (`server_epochs` of Adam, batch
`server_batch`, lr `server_lr`) and broadcasts the result; no model is personal.

Only FedDM's abstract is in our corpus, so the details follow FedRD's description of it, DM's code and a public
re-implementation; unverified choices: the neighbourhood's form and rho = 5; matching logits as well as features;
the synthetic step (SGD lr 1, momentum 0.5); the server warm-starts from w^t with a fresh optimizer and is not
restricted to the radius-rho ball (FedDM may restrict it); every client's set counts equally in the union. The
uplink counts, per class a client holds, its dpc samples and one label.
"""
from __future__ import annotations

import torch

from .. import distill
from ..messages import Message
from .base import Algorithm, Context, Reply, above, at_least, between, one_of

DISTILL_SALT = 104_729  # the generator stream of the synthetic sets, apart from batch orders and selection


class FedDM(Algorithm):
    name = "feddm"
    defaults = dict(dpc=10, iterations=1000, syn_lr=1.0, syn_momentum=0.5, real_batch=256, rho=5.0,
                    match_logits=True, init="real", server_epochs=500, server_batch=256, server_lr=0.01,
                    server_optimizer="adam")
    rules = dict(dpc=at_least(1), iterations=at_least(0), real_batch=at_least(1), rho=at_least(0),
                 init=one_of("real", "random"), server_epochs=at_least(0), server_batch=at_least(1),
                 server_optimizer=one_of("adam", "sgd"), syn_lr=above(0), syn_momentum=between(0, 1, low_open=False),
                 server_lr=above(0))
    supports_partial = True

    def init(self, ctx: Context) -> None:
        super().init(ctx)
        if len(ctx.population.groups) > 1:
            raise ValueError(f"{self.name} trains one global model, so every client needs the same architecture; "
                             f"use a model without _flexible (Config.model)")
        self.global_params = {k: v[0].clone() for k, v in ctx.population.groups[0].params.items()}

    def configure(self, rnd: int) -> Message:
        return Message.down(dict(self.global_params), self.ctx.select(rnd))

    def initial_sets(self, data, g: torch.Generator):
        """S_k before matching: dpc real samples per class (or noise), and the classes each client holds."""
        C, dpc = self.ctx.fed.num_classes, self.options["dpc"]
        real, present = distill.real_init(data, C, dpc, g)
        return distill.initial_set(real, present, self.options["init"], g), present

    def client_update(self, rnd: int, down: Message) -> Reply:
        clients, o = down.clients, self.options
        g = self.ctx.generator(rnd, DISTILL_SALT)
        data = self.ctx.fed.train.select(clients)
        group = self.population.groups[0]
        base = {k: down[k].unsqueeze(0).expand(len(clients), *down[k].shape) for k in self.global_params}
        syn, present = self.initial_sets(data, g)
        syn, loss = distill.condense(group, data, syn, present.to(syn.device), lambda: distill.perturbed(base, o["rho"], g),
                                     iterations=o["iterations"], lr=o["syn_lr"], momentum=o["syn_momentum"],
                                     batch=o["real_batch"], g=g, match_logits=o["match_logits"])
        return Reply(self.synthetic_message(syn, present, clients), loss)

    def synthetic_message(self, syn, present, clients) -> Message:
        labels = torch.arange(syn.shape[1]).expand(len(clients), -1)
        return Message.up({"S": syn, "labels": labels}, clients, present={"S": present, "labels": present})

    @staticmethod
    def union(up: Message):
        """The synthetic samples of every sender's present classes, with their labels."""
        present = up.present["S"].to(up["S"].device)
        dpc = up["S"].shape[2]
        samples = up["S"][present]  # [M, dpc, ...]
        labels = up["labels"].to(present.device)[present].repeat_interleave(dpc)
        return samples.flatten(0, 1), labels

    def server_training(self, rnd: int, group, samples, labels, names) -> None:
        o = self.options
        distill.train_on(group, samples, labels, epochs=o["server_epochs"], batch=o["server_batch"], lr=o["server_lr"],
                         optimizer=o["server_optimizer"], g=self.ctx.generator(rnd, DISTILL_SALT + 1),
                         trainable=names)

    def aggregate(self, rnd: int, up: Message) -> None:
        samples, labels = self.union(up)
        server = self.ctx.server_model(self.global_params)
        self.server_training(rnd, server, samples, labels, list(server.params))
        self.global_params = server.row(0)
        for k, v in self.global_params.items():
            self.population.set_all(k, v)
