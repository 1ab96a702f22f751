"""FedCR (Zhang, Li, Dai, Zou and Xiong, ICML 2023): personalized FL with a common Gaussian representation.

Every client's body ends in a Gaussian layer (`models.StochasticBodyHead`): p(z | x) = N(mu(x), diag sigma(x)^2),
and the head predicts from samples z. The body is shared (averaged uniformly over the round's participants, Alg. 1
line 15), the head stays personal. Besides the body, the server keeps one global Gaussian per class (mu^c, sigma^c),
initially N(0, I) (Alg. 1 line 1).

* Local loss, Eq. 7: the Monte-Carlo likelihood of S = `train_samples` reparameterised draws plus beta times
  KL(N(mu^y, sigma^y) || N(mu(x), sigma(x))), the global class representation's divergence from the sample's
  (Eq. 21, diagonal; `kl_to_sample`).
* Eq. 8: after training, each participant sends, per class it holds, the product of the experts N(mu(x_n),
  sigma(x_n)) of that class's samples: precision Lambda = sum 1/sigma^2, mean (sum mu/sigma^2) / Lambda, taken from
  the features its last local epoch produced while training (one per sample, not a fresh pass).
* Eq. 9 / Alg. 2 lines 27-31: the server's product of experts over the participants with ONE N(0, prior_var I)
  prior (Eq. 9 as printed has one prior per client; the algorithm and the authors' code have one). A class no
  participant holds keeps last round's Gaussian (Alg. 1 lines 16-17).
* Prediction (Sec. 5.1) averages S = `eval_samples` draws; `final_finetune_epochs` = 10 (Config) runs the
  final head-only round on every client (the authors' "last" round).

Where the paper and the authors' code differ, and what the options choose (defaults follow the spec's advice):
* `mc_loss`: "mean_ce" averages the cross-entropy over draws (the code; it produced the reported numbers);
  "log_mean_prob" is the paper's -log mean_s p(y | z_s). They agree at S = 1.
* `eval_average`: "probs" averages probabilities (the paper's claim); "logits" averages logits (the code).
* `poe_features`: "last_epoch" (the paper's design, Sec. 4.3, and the code); "final_pass" computes Eq. 8 from one
  evaluation pass after training (the ablation the paper's slow start, Fig. 3c, suggests).
* `beta2`: the code's server EMA of (mu^c, sigma^c) (its default 0 would freeze them at N(0, I)); 1 = none.
* Gradient clipping: the code clips every local step's gradient to norm 10 (all its methods' train_cnn). That is the
  engine's per-client `Config.clip_grad_norm`, which FedCR's protocol (`fedcr.config`) sets to 10 for
  every method it runs; a Config built by hand has none.
* `evaluate`: "global_body" (every client predicts with the current body and its own head, as fedlib's FedPer,
  which FedCR reduces to at beta = 0 with sigma -> 0); "local" keeps each client's last trained body (the code).
* A class with no sample in a participant's last epoch is not sent (a `present` mask; the code's (0, 1) sentinel
  would misfire on a real (0, 1)). Round 0's downlink carries no class Gaussians: N(0, I) is fixed by the protocol.
* `share_body=False` is the model non-aggregation variant (Sec. 4.4, registered as "fedcr_na"): only the class
  Gaussians travel, so clients may have any architecture with the same V.
"""
from __future__ import annotations

import math
import re

import torch
import torch.nn.functional as F

from .. import engine
from ..messages import Message
from ..models import StochasticBodyHead
from .base import Context, Reply, above, any_number, at_least, between, one_of
from .fedavg import ParameterAveraging


def kl_to_sample(mu_g: torch.Tensor, sigma_g: torch.Tensor, mu: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
    """Eq. 21, diagonal: KL(N(mu_g, sigma_g^2) || N(mu, sigma^2)) summed over the last dimension."""
    return (torch.log(sigma / sigma_g) + (sigma_g ** 2 + (mu_g - mu) ** 2) / (2 * sigma ** 2) - 0.5).sum(-1)


def product_of_experts(precision: torch.Tensor, weighted_mean: torch.Tensor, prior_var: float | None = None):
    """(mu, sigma) of the normalised product of Gaussians given their summed precisions and summed precision-weighted
    means (Eq. 8; with `prior_var`, one N(0, prior_var I) factor more, Eq. 9)."""
    if prior_var is not None:
        precision = precision + 1.0 / prior_var
    return weighted_mean / precision, precision.rsqrt()


class FedCR(ParameterAveraging):
    name = "fedcr"
    defaults = dict(ParameterAveraging.defaults, beta=5e-4, train_samples=18, eval_samples=18, eval_average="probs",
                    mc_loss="mean_ce", poe_features="last_epoch", prior_var=1.0, beta2=1.0, sigma_shift=0.0,
                    share_body=True, deterministic=False, evaluate="global_body")
    rules = dict(beta=at_least(0), train_samples=at_least(1), eval_samples=at_least(0),
                 eval_average=one_of("probs", "logits"), mc_loss=one_of("mean_ce", "log_mean_prob"),
                 poe_features=one_of("last_epoch", "final_pass"), prior_var=above(0), beta2=between(0, 1),
                 evaluate=one_of("global_body", "local"),
                 sigma_shift=any_number("a shift of the pre-softplus scale, either way"))
    supports_partial = True

    def shared_names(self, ctx: Context) -> list[str]:
        return [k for k in ctx.population.param_names() if k.startswith("body.")] if self.options["share_body"] else []

    def personal_names(self, group) -> list[str]:
        return group.names("head")

    @classmethod
    def check_config(cls, cfg) -> None:
        if not re.search(r"_v\d+$", cfg.model):
            raise ValueError(f"Config.model: {cls.name} needs a body that ends in a Gaussian layer, such as "
                             f"cnn_mnist_vib_v50, fedcr_mlp1024_v256 or fedcr_cnn1024_v512; got {cfg.model!r}")
        if cfg.local_optimum:
            raise ValueError(f"{cls.name} takes Eq. 8 from the last local epoch: set Config.local_optimum to false")
        options = {**cls.defaults, **cfg.options}
        if options["deterministic"] and options["beta"]:
            raise ValueError(f"{cls.name}: deterministic=True (z = mu) has no KL term: set option beta to 0")

    def init(self, ctx: Context) -> None:
        o = self.options
        for g in ctx.population.groups:
            if not isinstance(g.model, StochasticBodyHead):  # checked with the Config already; a guard for setup()
                raise ValueError(f"{self.name} needs a StochasticBodyHead model, not {type(g.model).__name__}")
            g.model.train_samples, g.model.eval_samples = o["train_samples"], o["eval_samples"]
            g.model.eval_average, g.model.sigma_shift = o["eval_average"], o["sigma_shift"]
            g.model.deterministic = o["deterministic"]
        super().init(ctx)
        C, V = ctx.fed.num_classes, ctx.population.template.feature_dim
        device = next(iter(ctx.population.groups[0].params.values())).device
        self.mu, self.sigma = torch.zeros(C, V, device=device), torch.ones(C, V, device=device)  # Alg. 1 line 1
        self.received = None  # (mu, sigma) the participants hold this round
        self.sent_representation = False

    # ------------------------------------------------------------------ the round
    def configure(self, rnd: int) -> Message:
        clients = self.ctx.select(rnd)
        payload = dict(self.global_params)
        if self.sent_representation:  # round 0: N(0, I) is fixed by the protocol, nothing to send
            payload.update(mu=self.mu, sigma=self.sigma)
        return Message.down(payload, clients)

    def client_update(self, rnd: int, down: Message) -> Reply:
        clients = down.clients
        self.receive(down)
        losses = self.local_training(rnd, clients, (down["mu"], down["sigma"]) if "mu" in down.payload else None)
        if self.options["poe_features"] == "final_pass":
            self.precision.zero_(), self.weighted.zero_()
            self.ctx.for_each_client(clients, self.final_pass)
        precision, weighted = self.precision[clients], self.weighted[clients]
        present = (precision > 0).any(-1)  # [K, C]: the classes seen in the last epoch; only they are sent
        held = present.unsqueeze(-1)
        mu, sigma = product_of_experts(torch.where(held, precision, 1.0), torch.where(held, weighted, 0.0))
        payload = {k: self.population.gather(k, clients) for k in self.shared}
        payload.update(mu=mu, sigma=sigma)
        return Reply(Message.up(payload, clients, present={"mu": present.cpu(), "sigma": present.cpu()}), losses)

    def aggregate(self, rnd: int, up: Message) -> None:
        if self.shared:
            self.global_params = {k: up[k].mean(0) for k in self.shared}  # uniform, Alg. 1 line 15
            if self.options["evaluate"] == "global_body":
                for k, v in self.global_params.items():
                    self.population.set_all(k, v)
        dev = self.mu.device  # the server's Gaussians; a message may arrive on another device (the ledger's CPU)
        present = up.present["mu"].to(dev).unsqueeze(-1)
        up_mu, up_sigma = up["mu"].to(dev), up["sigma"].to(dev)
        precision = (present / up_sigma ** 2).sum(0)
        weighted = (present * up_mu / up_sigma ** 2).sum(0)
        mu, sigma = product_of_experts(precision, weighted, self.options["prior_var"])
        b2 = self.options["beta2"]
        held = present.any(0)  # [C, 1]
        self.mu = torch.where(held, (1 - b2) * self.mu + b2 * mu, self.mu)
        self.sigma = torch.where(held, (1 - b2) * self.sigma + b2 * sigma, self.sigma)
        self.sent_representation = True

    # ------------------------------------------------------------------ local training
    def local_training(self, rnd: int, clients: torch.Tensor, received=None, epochs: int | None = None):
        """Eq. 7 on every parameter of `clients`, towards the class Gaussians `received` (default: the server's),
        collecting Eq. 8's sums. Returns their losses."""
        self.received = received if received is not None else (self.mu, self.sigma)
        C, V = self.mu.shape
        self.precision = torch.zeros(self.population.n_clients, C, V, device=self.mu.device)
        self.weighted = torch.zeros_like(self.precision)
        collect = self.collect_last_epoch if self.options["poe_features"] == "last_epoch" else None
        return self.ctx.train_clients(rnd, clients, trainable=lambda g: list(g.params), loss_fn=self.local_loss,
                                      epochs=epochs, on_step=collect).loss

    def mc_nll(self, logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Eq. 7's first term per sample from logits [n, B, S, C]: the mean cross-entropy over the S draws, or the
        paper's -log of the mean probability."""
        n, B, S, C = logits.shape
        ce = F.cross_entropy(logits.reshape(-1, C), y.unsqueeze(2).expand(n, B, S).reshape(-1),
                             reduction="none").view(n, B, S)
        if self.options["mc_loss"] == "mean_ce":
            return ce.mean(2)
        return -(torch.logsumexp(-ce, dim=2) - math.log(S))

    def local_loss(self, feats, logits, y, valid, clients, params):
        w = valid.to(feats.dtype)
        count = w.sum(1).clamp(min=1)
        loss = (self.mc_nll(logits, y) * w).sum(1) / count
        mu, sigma = self.population.template.gaussian(feats)  # every group's template shares sigma_shift
        if self.options["beta"]:
            mu_g, sigma_g = self.received[0][y], self.received[1][y]
            loss = loss + self.options["beta"] * (kl_to_sample(mu_g, sigma_g, mu, sigma) * w).sum(1) / count
        return loss

    def collect_last_epoch(self, step: engine.Step) -> None:
        """Eq. 8's sums over the samples of each client's last local epoch, in the order training visits them (the
        engine's per-step hook)."""
        mu, sigma = self.population.template.gaussian(step.feats)
        last = step.valid & (step.epoch == step.epochs - 1).unsqueeze(1)  # [n, B]
        self.add_experts(step.clients, mu, sigma, step.y, last)

    def add_experts(self, clients, mu, sigma, y, weight) -> None:
        """Eq. 8's sums: each client's per-class precision and precision-weighted mean over the samples `weight`
        [n, B] selects (mu, sigma [n, B, V], y [n, B])."""
        onehot = F.one_hot(y, self.mu.shape[0]).to(mu.dtype) * weight.to(mu.dtype).unsqueeze(-1)  # [n, B, C]
        rows = clients.to(self.precision.device)
        self.precision[rows] += torch.einsum("nbc,nbv->ncv", onehot, sigma ** -2)
        self.weighted[rows] += torch.einsum("nbc,nbv->ncv", onehot, mu * sigma ** -2)

    def final_pass(self, group, data):
        """`poe_features="final_pass"`: Eq. 8 from one evaluation pass over each client's training data."""
        mu, sigma = group.model.gaussian(engine.features(group, data))
        self.add_experts(group.clients, mu, sigma, data.y, data.valid())
        return torch.zeros(group.n)

    def finetune(self, epochs: int) -> torch.Tensor:
        """The final round (the authors' "last"): every client trains its head alone on Eq. 7's likelihood term."""
        nll = lambda feats, logits, y, valid, clients, params: \
            (self.mc_nll(logits, y) * valid).sum(1) / valid.sum(1).clamp(min=1)  # noqa: E731
        return self.ctx.train_clients(self.ctx.rounds, self.ctx.clients, self.personal_names, loss_fn=nll,
                                      epochs=epochs).loss


class FedCRNA(FedCR):
    """FedCR without model aggregation (Sec. 4.4): only the class Gaussians travel."""
    name = "fedcr_na"
    defaults = dict(FedCR.defaults, share_body=False)
