"""Ditto (Li, Hu, Beirami and Smith, ICML 2021): fair and robust personalization through a proximal personal model.

Every client keeps two models. The global one w is trained and averaged exactly as FedAvg's (uniform average over
the round's participants). The personal one v_c is trained in the same round, on the same data, for the same local
epochs, on the loss F_c(v) + lambda/2 ||v - w||^2, where w is the global model the client received this round
(Ditto's Algorithm 1 with the personal solver run for the local epochs). The personal model is what a client
predicts with, so `population` holds the personal models; the global copies live in a second population of the
same shape and train batched in the same way (`Context` over it).

The final fine-tune (Config.final_finetune_epochs > 0) is the FedCR authors' last round of Ditto
(main_fed_ditto.py: `if iter == args.epochs: m = args.num_users`): one more protocol round after the last, in
which every client runs `client_update` (both models, for `final_finetune_epochs` local epochs) and the global
model is averaged; its messages pass the ledger like any round's (`final_round = True`), so no personal model
stays untrained when participation is partial.

Choices: lambda comes from Ditto's grid {0.01, 0.1, 0.5, 1, 2}, chosen on seed 0 by the notebook that uses it and
then frozen (the default 0.1 is a grid point, not a tuned value). The personal model draws its own batch order
(`stream` 1), the global one FedAvg's. Ditto's uplink is the global model only: the personal models never leave a
client.
"""
from __future__ import annotations

import copy
from dataclasses import replace


from ..engine import Population, masked_cross_entropy, squared_distance
from ..messages import Message
from .base import Algorithm, Context, Reply, at_least


class Ditto(Algorithm):
    name = "ditto"
    defaults = dict(lam=0.1)
    rules = dict(lam=at_least(0))
    supports_partial = True
    final_round = True  # the final fine-tune is one more round in which every client takes part

    def init(self, ctx: Context) -> None:
        super().init(ctx)
        self.final_epochs: int | None = None  # set by finetune_round: the local epochs of the final round
        pop = ctx.population
        if len(pop.groups) > 1:
            raise ValueError("ditto averages the whole model, so every client needs the same architecture; use a "
                             "model without _flexible (Config.model), or a method that shares no body (fedlog)")
        self.global_pop = Population([replace(g, params={k: v.clone() for k, v in g.params.items()},
                                              buffers={k: v.clone() for k, v in g.buffers.items()},
                                              model=copy.deepcopy(g.model)) for g in pop.groups], pop.n_clients)
        self.global_ctx = replace(ctx, population=self.global_pop)
        self.names = pop.param_names()
        self.global_params = pop.groups[0].row(0, self.names)

    def personal_names(self, group) -> list[str]:
        return list(group.params)

    def configure(self, rnd: int) -> Message:
        final = rnd >= self.ctx.rounds  # the round after the last: every client
        return Message.down(dict(self.global_params), self.ctx.clients if final else self.ctx.select(rnd))

    def client_update(self, rnd: int, down: Message) -> Reply:
        clients = down.clients
        epochs = self.final_epochs if rnd >= self.ctx.rounds else None
        self.global_pop.receive(down, self.names)
        self.received = {k: down[k] for k in self.names}
        self.global_ctx.train_clients(rnd, clients, trainable=lambda g: list(g.params), epochs=epochs)  # FedAvg's
        losses = self.ctx.train_clients(rnd, clients, trainable=lambda g: list(g.params), loss_fn=self.personal_loss,
                                        stream=1, epochs=epochs).loss
        return Reply(Message.up({k: self.global_pop.gather(k, clients) for k in self.names}, clients), losses)

    def personal_loss(self, feats, logits, y, valid, clients, params):
        loss = masked_cross_entropy(logits, y, valid)
        if not self.options["lam"]:
            return loss
        return loss + 0.5 * self.options["lam"] * squared_distance(params, self.received, self.names)

    def aggregate(self, rnd: int, up: Message) -> None:
        self.global_params = {k: up[k].mean(0) for k in self.names}
        for k, v in self.global_params.items():
            self.global_pop.set_all(k, v)

    def check_finetune(self) -> None:
        """Ditto's final round needs nothing beyond its rounds."""
