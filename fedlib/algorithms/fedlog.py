"""FedLog (Algorithm 1) and FedLog-C (Eq. 13).

Every round the server sends the global head eta. Each client fixes it, trains its own body
with the cross-entropy of Eq. 10, then sends the sufficient statistic of its training data,
sum_i [1, phi_i] (x) e_{y_i} (C x m numbers), and its count n_c. The server adds them up and
sets eta to the MAP of Eq. 12 (`expfam.map_head`, exact; or the paper's gradient ascent with
head lr 0.01, `head_solver="gradient"`). Bodies never leave the clients, so clients may have
any architecture as long as they output m-1 features.

FedLog-C adds alpha * mean_i ||phi_i - mean_{y_i}||^2 to the local loss, where mean_y =
Phi_y / Phi_{y,0} is the global class mean. The server therefore broadcasts the aggregated
statistic itself (C x m numbers, the same size as eta) and every client solves the same eta
locally. In the first round there is no statistic yet, and the server sends its initial eta.
Classes that no client holds keep the zero statistic and get no compactness term.

This is the long version's Eq. 13, with alpha only. The conference version (seeds/003) gives FedLog-C a second
weight, beta, that "controls the distance between different clusters"; its formula is lost from that text, and both
versions print the same Table 1, so the alpha-only variant is the default. `beta` > 0 adds our labelled guess after
the triplet loss the paper cites (FaceNet): beta * mean_i max(0, margin + ||phi_i - mean_{y_i}||^2 -
min_{c != y_i} ||phi_i - mean_c||^2), which pushes each representation at least `margin` (squared distance)
closer to its own class mean than to any other.

Differential privacy (Section 3.6): `dp="local"` adds Gaussian noise to every client's statistic,
`dp="central"` once to the global sum; features are clipped to [-b, b] (`clip_b`, b = 2 as in the
paper) by a `Clip` appended to every body, and sigma comes from Thm. 7 (`accountant="thm7"`) or a
tighter accountant ("rdp", "pld"). Under DP the count n_c is not sent: the server reads the (noisy)
counts from the statistic's constant column. Neither is a formal guarantee (see `fedlib.privacy`):
`dp="formal"` is the variant whose guarantee holds. The body is trained with DP-SGD (`fedlib.dpsgd`, noise
multiplier `sgd_noise`, clip norm `sgd_clip`), the statistic is noised locally, and sigma is the smallest
for which one RDP accountant certifies (epsilon, delta) for all of it (`privacy.formal_release_sigma`). The head solve uses max(n, 1) samples, so a noisy count
can never make it ill-posed, and FedLog-C only pulls towards classes whose noisy count is at least 1.

Partial participation: the server sums the participants' statistics only; a class that no participant holds this
round keeps last round's statistic (as FedCR keeps its class representations), and a class that no client has
ever held keeps the zero statistic, whose MAP head row is exactly zero (`expfam.map_head`).
"""
from __future__ import annotations

import torch

from .. import dpsgd, engine, expfam, privacy
from ..messages import Message
from ..models import Clip
from .base import Algorithm, Context, Reply, above, any_number, at_least, between, none_or, one_of


class FedLog(Algorithm):
    name = "fedlog"
    participation_decay = False  # one learning rate for every client (its own training loop)
    defaults = dict(head_solver="exact", head_lr=0.01, head_steps=100, chi=0.0, nu=1.0,
                    dp="none", epsilon=1.0, delta=0.01, clip_b=None, accountant="thm7", sgd_noise=1.0, sgd_clip=1.0)
    rules = dict(head_solver=one_of("exact", "gradient"), head_lr=above(0), head_steps=at_least(1), nu=above(0),
                 chi=any_number("the conjugate prior's chi, added to every statistic"),
                 dp=one_of("none", "local", "central", "formal"), epsilon=above(0), delta=between(0, 1 - 1e-12),
                 clip_b=none_or(above(0)), accountant=one_of(*privacy.ACCOUNTANTS), sgd_noise=above(0),
                 sgd_clip=above(0))
    supports_partial = True

    def init(self, ctx: Context) -> None:
        super().init(ctx)
        o = self.options
        if o["dp"] not in ("none", "local", "central", "formal"):
            raise ValueError(f"dp must be 'none', 'local', 'central' or 'formal', got {o['dp']!r}")
        if o["dp"] == "formal" and (ctx.until_converged or ctx.augment):
            raise ValueError("dp='formal' runs DP-SGD for a fixed number of steps without augmentation: set "
                             "until_converged and augment to false")
        b = o["clip_b"] if o["clip_b"] is not None else (2.0 if o["dp"] != "none" else None)
        if b is not None:
            ctx.population.append_to_bodies(lambda g: Clip(b))  # Eq. 14: the body's last activation
        self.mechanism = None
        if o["dp"] != "none":
            m = ctx.population.groups[0].model.feature_dim + 1
            if o["dp"] == "formal":  # DP-SGD steps and releases in one RDP accountant
                q, steps = dpsgd.sample_rate_bound(ctx.fed.train.counts, ctx.batch_size, ctx.epochs)
                sigma = privacy.formal_release_sigma(o["epsilon"], o["delta"], m, b, ctx.rounds, q, steps,
                                                     o["sgd_noise"])
            else:
                sigma = privacy.noise_sigma(o["epsilon"], o["delta"], m, b, ctx.rounds, o["accountant"])
            self.mechanism = privacy.GaussianMechanism(sigma, seed=ctx.seed * 7919 + 17)
        head = ctx.population.groups[0].params
        self.eta = expfam.head_to_eta(head["head.weight"][0], head["head.bias"][0]).clone()  # random, Alg. 1
        self.T = None  # the aggregated statistic
        self.load_head(self.eta)

    def personal_names(self, group) -> list[str]:
        return group.names("body")

    def load_head(self, eta: torch.Tensor, clients: torch.Tensor | None = None) -> None:
        weight, bias = expfam.eta_to_head(eta)
        clients = self.ctx.clients if clients is None else clients
        self.population.set_clients("head.weight", weight, clients)
        self.population.set_clients("head.bias", bias, clients)

    def solve_head(self, T: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        o = self.options
        n = max(float(n), 1.0)
        if o["head_solver"] == "exact":
            return expfam.map_head(T, n, o["chi"], o["nu"])
        if o["head_solver"] == "gradient":
            return expfam.map_head_gradient(T, n, self.eta, o["chi"], o["nu"], o["head_lr"], o["head_steps"])
        raise ValueError(f"head_solver must be 'exact' or 'gradient', got {o['head_solver']!r}")

    def configure(self, rnd: int) -> Message:
        return Message.down({"eta": self.eta}, self.ctx.select(rnd))

    def receive(self, down: Message) -> None:
        self.load_head(down["eta"], down.clients)

    def local_loss(self, feats, logits, y, valid, clients, params):
        return engine.masked_cross_entropy(logits, y, valid)

    local_loss.rowwise = True  # each row's loss from its own samples (engine.train may skip or replay steps)

    def statistics(self, group, data) -> torch.Tensor:
        """Each client's summed sufficient statistic of its training data [n, C, m] (Eq. 2)."""
        return expfam.sufficient_statistics(engine.features(group, data), data.y, self.ctx.fed.num_classes,
                                            data.valid())

    def client_update(self, rnd: int, down: Message) -> Reply:
        self.receive(down)
        clients = down.clients
        if self.options["dp"] == "formal":
            losses = self.private_training(rnd, clients)
        else:
            losses = self.ctx.train_clients(rnd, clients, trainable=lambda g: g.names("body"),
                                            loss_fn=self.local_loss).loss
        T = self.ctx.for_each_client(clients, self.statistics)
        if self.options["dp"] in ("local", "formal"):
            return Reply(Message.up({"T": self.mechanism.release(T)}, clients), losses)
        if self.options["dp"] == "central":  # secure aggregation: the server only ever sees the sum
            return Reply(Message.up({"T": T}, clients), losses)
        return Reply(Message.up({"T": T, "n": self.ctx.fed.train.counts[clients].to(T.device, T.dtype)}, clients),
                     losses)

    def private_training(self, rnd: int, clients: torch.Tensor) -> torch.Tensor:
        """The formal variant's body training: DP-SGD (`fedlib.dpsgd`), every group batched."""
        ctx, o = self.ctx, self.options

        def fit(group, data):
            return dpsgd.train(group, data, trainable=group.names("body"), optimizer=ctx.optimizer, lr=ctx.lr_at(rnd),
                               epochs=ctx.epochs, batch_size=ctx.batch_size,
                               generator=ctx.generator(rnd, int(group.clients[0])), clip=o["sgd_clip"],
                               noise_multiplier=o["sgd_noise"], optimizer_kw=ctx.optimizer_kw)

        return ctx.for_each_client(clients, fit, write_back=True).loss

    def aggregate(self, rnd: int, up: Message) -> None:
        T = up["T"].sum(0)
        if self.options["dp"] == "central":
            T = self.mechanism.release(T)
        n = up["n"].sum() if "n" in up.payload else T[:, 0].sum()
        unheld = T[:, 0] == 0  # no participant holds the class this round (never under DP noise)
        if self.T is not None and bool(unheld.any()):
            T = torch.where(unheld.unsqueeze(-1), self.T, T)
            n = n + self.T[unheld, 0].sum()
        self.T = T
        self.eta = self.solve_head(self.T, n)
        self.load_head(self.eta)


class FedLogC(FedLog):
    name = "fedlog_c"
    defaults = dict(FedLog.defaults, alpha=0.01, beta=0.0, margin=1.0)
    rules = dict(FedLog.rules, alpha=at_least(0), beta=at_least(0), margin=above(0))

    def configure(self, rnd: int) -> Message:
        if self.T is None:
            return super().configure(rnd)
        return Message.down({"T": self.T}, self.ctx.select(rnd))

    def receive(self, down: Message) -> None:
        if "eta" in down.payload:
            self.means = None
            return super().receive(down)
        T = down["T"]
        counts = T[:, 0]
        self.load_head(self.solve_head(T, counts.sum()), down.clients)  # every client solves the same head
        self.means = T[:, 1:] / counts.clamp(min=1.0).unsqueeze(1)
        self.has_mean = counts >= 1  # noisy counts under DP can be tiny or negative

    def local_loss(self, feats, logits, y, valid, clients, params):
        loss = engine.masked_cross_entropy(logits, y, valid)
        if self.means is None:
            return loss
        w = (valid & self.has_mean[y]).to(feats.dtype)
        sq = ((feats - self.means[y]) ** 2).sum(-1)
        loss = loss + self.options["alpha"] * (sq * w).sum(1) / valid.sum(1).clamp(min=1)
        if self.options["beta"]:
            loss = loss + self.options["beta"] * (self.separation(feats, y, sq) * w).sum(1) / valid.sum(1).clamp(min=1)
        return loss

    local_loss.rowwise = True  # each row against the class means of the round, fixed while it trains

    def separation(self, feats, y, own_sq):
        """The hinge of the labelled beta option: margin + d(own mean) - d(nearest other mean), at least 0."""
        d = ((feats.unsqueeze(2) - self.means) ** 2).sum(-1)  # [n, B, C]
        other = (~self.has_mean).expand_as(d) | torch.nn.functional.one_hot(y, d.shape[-1]).bool()
        nearest = d.masked_fill(other, float("inf")).min(-1).values
        hinge = (self.options["margin"] + own_sq - nearest).clamp(min=0)
        return torch.where(torch.isfinite(nearest), hinge, torch.zeros_like(hinge))
