"""FedRD (Zhang, Huang and Li; seeds/002): federated representation distillation.

Client k's model is q_k = phi_theta(varphi_{w_k}(.)): a personal projection varphi_{w_k} (never sent) into a
one-channel image-shaped representation, then the global task model phi_theta (DM's ConvNet; `fedrd_projL_convnetW`
puts both in one body, the projection first). Round r (Algorithm 1):

1. the server sends theta_r; the client loads it;
2. (a) the client trains its projection for the local epochs with theta_r frozen (Eq. 2: cross-entropy; Config's
   optimizer, lr and batch size: the paper's 10 epochs of Adam at 0.01, batch 256);
   (b) it initialises a synthetic set S_k in representation space, `dpc` per class it holds: the projections of
   real samples ("real") or N(0, 1) noise ("random");
   (c) `iterations` steps of Eq. 5: a freshly initialised task ConvNet without its last layer as the embedder (DM's
   P_vartheta, drawn per client and step), the projected real batch of each class against S_k's class;
   (d) it sends S_k with its classes;
3. the server trains theta_r on the union of the S_k (warm start, a fresh optimizer: `server_*` options) and sends
   theta_{r+1}. A client predicts with its own projection and the global task model.

Choices the paper leaves open (spec 2.1): the projection is conv(8)-ReLU-conv(16)-ReLU-conv1x1(1), 3x3 convs with
padding 1 (`proj_layers` convs, 8 then 16 filters), so the representation has the input's side (d' = h w); DM's
augmentation of the real inputs is not applied (`dsa` is not implemented); the synthetic step is plain SGD at lr 1
(the paper's); the task model uses instance norm, not batch norm, and max pooling; a client's classes count as
one label each in the uplink; the server trains only on this round's sets. Eq. 7's DP variant is not implemented.
"""
from __future__ import annotations

import torch

from .. import distill, engine
from ..data import ClientData
from ..messages import Message
from .base import Context, Reply, at_least
from .feddm import DISTILL_SALT, FedDM


class FedRD(FedDM):
    name = "fedrd"
    defaults = dict(dpc=10, iterations=1000, syn_lr=1.0, syn_momentum=0.0, real_batch=256, init="real",
                    server_epochs=500, server_batch=256, server_lr=0.01, server_optimizer="adam")
    rules = dict(FedDM.rules, dpc=at_least(1))

    @classmethod
    def check_config(cls, cfg) -> None:
        super().check_config(cfg)
        if not cfg.model.startswith("fedrd_proj"):
            raise ValueError(f"Config.model: fedrd needs a projection before its task model, such as "
                             f"fedrd_proj2_convnet128; got {cfg.model!r}")

    def init(self, ctx: Context) -> None:
        super().init(ctx)
        template = ctx.population.template
        self.split = template.projection_layers  # body[:split] is the projection
        self.projection = [k for k in self.global_params if self._index(k) is not None and self._index(k) < self.split]
        self.task = [k for k in self.global_params if k not in self.projection]
        self.task_model = template.task_model()  # the task ConvNet alone, on representations (meta device)

    @staticmethod
    def _index(name: str) -> int | None:
        parts = name.split(".")
        return int(parts[1]) if parts[0] == "body" else None

    def _task_name(self, name: str) -> str:
        """A task parameter's name in the task model alone (body.{split + i} -> body.{i})."""
        i = self._index(name)
        return name if i is None else f"body.{i - self.split}." + name.split(".", 2)[2]

    def configure(self, rnd: int) -> Message:
        return Message.down({k: self.global_params[k] for k in self.task}, self.ctx.select(rnd))

    def represent(self, group, x: torch.Tensor) -> torch.Tensor:
        """varphi_{w_k}(x) for samples x [n, C, k, ...] of each client -> [n, C, k, 1, s, s]."""
        n, C, k = x.shape[:3]
        z = group.body_features(x.reshape(n, C * k, *x.shape[3:]), train=False, upto=self.split)
        side = int(round(z.shape[-1] ** 0.5))
        return z.view(n, C, k, 1, side, side)

    def client_update(self, rnd: int, down: Message) -> Reply:
        clients, o = down.clients, self.options
        self.population.receive(down, self.task)
        self.ctx.train_clients(rnd, clients, trainable=self.projection)  # Eq. 2, theta_r frozen
        g = self.ctx.generator(rnd, DISTILL_SALT)
        data = self.ctx.fed.train.select(clients)
        part = self.population.groups[0].subset(clients)  # one group (init refuses mixed models): rows are ids
        real, present = distill.real_init(data, self.ctx.fed.num_classes, o["dpc"], g)
        with torch.no_grad():  # Z_k: the projection is frozen from here on, so every sample is projected once
            syn = distill.initial_set(self.represent(part, real), present, o["init"], g)
            reps = ClientData(self.represent_all(part, data.x), data.y, data.counts)
        embedder = engine.functional_group(self.task_model, clients, part.fast_engine)
        syn, loss = distill.condense(embedder, reps, syn, present.to(syn.device),
                                     lambda: distill.random_params(self.task_model.body, len(clients), g, syn.device),
                                     iterations=o["iterations"], lr=o["syn_lr"], momentum=o["syn_momentum"],
                                     batch=o["real_batch"], g=g)
        return Reply(self.synthetic_message(syn, present, clients), loss)

    def represent_all(self, group, x: torch.Tensor, chunk: int = 1024) -> torch.Tensor:
        """varphi_{w_k}(x) for every client's samples x [n, m, ...] -> [n, m, 1, s, s], `chunk` samples at a time."""
        return torch.cat([self.represent(group, x[:, i:i + chunk].unsqueeze(1))[:, 0]
                          for i in range(0, x.shape[1], chunk)], dim=1)

    def aggregate(self, rnd: int, up: Message) -> None:
        samples, labels = self.union(up)
        server = self.ctx.server_model({self._task_name(k): self.global_params[k] for k in self.task}, self.task_model)
        self.server_training(rnd, server, samples, labels, list(server.params))
        trained = server.row(0)
        for k in self.task:
            self.global_params[k] = trained[self._task_name(k)]
            self.population.set_all(k, self.global_params[k])
