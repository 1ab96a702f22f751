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
from .base import Algorithm, Context, Reply, at_least


class FedProto(Algorithm):
    name = "fedproto"
    defaults = dict(lam=1.0)
    rules = dict(lam=at_least(0))
    supports_partial = True  # a class that no participant holds keeps last round's prototype

    def init(self, ctx: Context) -> None:
        super().init(ctx)
        self.protos = None

    def personal_names(self, group) -> list[str]:
        return list(group.params)

    def configure(self, rnd: int) -> Message:
        clients = self.ctx.select(rnd)
        if self.protos is None:
            return Message.down({}, clients)
        return Message.down({"protos": self.protos[self.has_proto], "labels": self.has_proto.nonzero().flatten()},
                            clients)

    def local_loss(self, feats, logits, y, valid, clients, params):
        loss = engine.masked_cross_entropy(logits, y, valid)
        if self.protos is None:
            return loss
        w = (valid & self.has_proto[y]).to(feats.dtype)
        mse = F.mse_loss(feats, self.protos[y], reduction="none").mean(-1)
        return loss + self.options["lam"] * (mse * w).sum(1) / valid.sum(1).clamp(min=1)

    def class_means(self, group, data):
        """Each client's mean representation of each class [n, C, m-1], and how many samples it has of each [n, C]."""
        phi = engine.features(group, data)
        onehot = F.one_hot(data.y, self.ctx.fed.num_classes).to(phi.dtype) * data.valid().unsqueeze(-1)
        counts = onehot.sum(1)
        return torch.einsum("nic,nif->ncf", onehot, phi) / counts.clamp(min=1).unsqueeze(-1), counts

    def client_update(self, rnd: int, down: Message) -> Reply:
        clients = down.clients
        losses = self.ctx.train_clients(rnd, clients, trainable=lambda g: list(g.params), loss_fn=self.local_loss).loss
        protos, counts = self.ctx.for_each_client(clients, self.class_means)
        present = (counts > 0).cpu()
        labels = torch.arange(self.ctx.fed.num_classes).expand(len(clients), -1)
        return Reply(Message.up({"protos": protos, "labels": labels}, clients,
                                present={"protos": present, "labels": present}), losses)

    def aggregate(self, rnd: int, up: Message) -> None:
        present = up.present["protos"].to(up["protos"].device)
        holders = present.sum(0)  # [C]
        protos = (up["protos"] * present.unsqueeze(-1)).sum(0) / holders.clamp(min=1).unsqueeze(-1)
        if self.protos is None:
            self.protos, self.has_proto = protos, holders > 0
        else:
            held = holders > 0
            self.protos = torch.where(held.unsqueeze(-1), protos, self.protos)
            self.has_proto = self.has_proto | held
