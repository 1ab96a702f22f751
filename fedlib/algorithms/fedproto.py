"""FedProto (Tan et al., 2022): the whole model stays local; only class prototypes travel.

Each client sends the mean representation of each class it holds (plus those class labels);
the server averages, per class, the prototypes of the clients that hold it, and broadcasts
the global prototypes. Local training adds lam * MSE(phi_i, global prototype of y_i) (the
paper's regulariser, lambda = 1) for classes that have a global prototype. Clients predict
with their own local model, as in the FedLog paper's comparison.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from .. import engine
from ..messages import Message
from .base import Algorithm, Context


class FedProto(Algorithm):
    name = "fedproto"
    defaults = dict(lam=1.0)

    def init(self, ctx: Context) -> None:
        super().init(ctx)
        self.protos = None

    def configure(self, rnd: int) -> Message:
        if self.protos is None:
            return Message.down({}, self.ctx.clients)
        return Message.down({"protos": self.protos[self.has_proto], "labels": self.has_proto.nonzero().flatten()},
                            self.ctx.clients)

    def local_loss(self, feats, logits, y, valid, clients):
        loss = engine.masked_cross_entropy(logits, y, valid)
        if self.protos is None:
            return loss
        w = (valid & self.has_proto[y]).to(feats.dtype)
        mse = F.mse_loss(feats, self.protos[y], reduction="none").mean(-1)
        return loss + self.options["lam"] * (mse * w).sum(1) / valid.sum(1).clamp(min=1)

    def client_update(self, rnd: int, down: Message) -> Message:
        C, N = self.ctx.fed.num_classes, self.population.n_clients
        protos, present, losses = None, torch.zeros(N, C, dtype=torch.bool), torch.zeros(N)
        for g, data in self.ctx.groups:
            losses[g.clients] = self.ctx.train(g, data, rnd, trainable=list(g.params), loss_fn=self.local_loss).cpu()
            phi = engine.features(g, data)
            onehot = F.one_hot(data.y, C).to(phi.dtype) * data.valid().unsqueeze(-1)
            counts = onehot.sum(1)  # [n, C]
            mean = torch.einsum("nic,nif->ncf", onehot, phi) / counts.clamp(min=1).unsqueeze(-1)
            if protos is None:
                protos = mean.new_zeros((N, C, mean.shape[-1]))
            protos[g.clients.to(protos.device)] = mean
            present[g.clients] = (counts > 0).cpu()
        self.train_loss = losses
        labels = torch.arange(C).expand(N, C)
        return Message.up({"protos": protos, "labels": labels}, self.ctx.clients,
                          present={"protos": present, "labels": present})

    def aggregate(self, rnd: int, up: Message) -> None:
        present = up.present["protos"].to(up["protos"].device)
        holders = present.sum(0)  # [C]
        self.protos = (up["protos"] * present.unsqueeze(-1)).sum(0) / holders.clamp(min=1).unsqueeze(-1)
        self.has_proto = holders > 0
