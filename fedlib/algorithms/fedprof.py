"""FedProf (Wu, He, Lin and Maple; seeds/004, arXiv 2102.01733): client selection by representation profiles.

A representation profile RP(w, D) is, per dimension i of one layer's pre-activation output, the Gaussian
N(mu_i, sigma_i^2) of that output over the data D under the model w (Eq. 2; the paper's Props. 1-2 say why such
outputs are near-Gaussian). The server holds a clean validation set D* and keeps, for every version v of the
global model (v = the number of aggregations so far), its baseline profile RP*(v) on D*. Round t (Algorithm 2):

1. for every client k, div_k = (1/q) sum_i KL(N_i^(k) || N_i^*) (Eqs. 3-4) between its latest profile, made with
   version v_k, and RP*(v_k); its score is lambda_k = exp(-alpha div_k) (Eq. 7);
2. K = round(C N) clients are drawn with probabilities lambda_k / sum_j lambda_j (`Context.select`);
3. each profiles its data with the model it received, before training (v_k <- t), trains as FedAvg does, and
   sends its model and its profile (2q numbers);
4. the server aggregates, `aggregation="full"` (every client by n_k / n, the unselected holding the global model)
   or `"partial"` (the selected models' mean, Eq. 28), and profiles D* with the new model.

Round 0's uplink also carries every client's initial profile, made with w^0 (Algorithm 2, line 4), and every
client's size n_k (what full aggregation weighs by).

Choices the paper leaves open (spec 3.1): the profiled layer is the pre-activation output of the first linear
layer after the last convolution (`profile_layer=-1`; Table A.2's fc1, q = 50, the layer of the paper's Fig. 2a),
in eval mode; the variance is the population variance plus `var_eps` = 1e-8 (constant dimensions, e.g. of
irrelevant images, would give an infinite KL); Eq. 4 as printed lacks the KL's -1/2, a constant that multiplies
every score by exp(-alpha / 2) and leaves the probabilities unchanged (`kl_constant=True` keeps it: tested);
selection is without replacement (`replace=False`, K distinct clients, as a deployed system selects; Lemma 4's
unbiasedness assumes i.i.d. draws, `replace=True`); a client not selected again keeps its old profile, scored
against the baseline of the same version. With alpha = 0 every score is equal and FedProf selects exactly the
clients FedAvg's uniform selection does (tested, bit for bit).
"""
from __future__ import annotations

import torch
from torch import nn

from ..messages import Message
from .base import Context, Reply, above, at_least, one_of
from .fedavg import FedAvg

_AGGREGATION = {"full": "full", "partial": "mean"}  # FedProf's names -> ParameterAveraging's


def profile_layer(body: nn.Sequential) -> int:
    """The index of the first linear layer after the last convolution (or the first linear layer of an MLP)."""
    convs = [i for i, m in enumerate(body) if isinstance(m, nn.Conv2d)]
    start = convs[-1] + 1 if convs else 0
    for i, m in enumerate(body):
        if i >= start and isinstance(m, nn.Linear):
            return i
    raise ValueError("fedprof profiles the first linear layer after the convolutions; this body has none "
                     "(set option profile_layer to a body index)")


def gaussian_kl(mu_p: torch.Tensor, var_p: torch.Tensor, mu_q: torch.Tensor, var_q: torch.Tensor,
                constant: bool = True) -> torch.Tensor:
    """KL(N(mu_p, var_p) || N(mu_q, var_q)) per dimension (Eq. 4; `constant` adds the -1/2 Eq. 4 omits)."""
    kl = 0.5 * torch.log(var_q / var_p) + (var_p + (mu_p - mu_q) ** 2) / (2 * var_q)
    return kl - 0.5 if constant else kl


class FedProf(FedAvg):
    name = "fedprof"
    defaults = dict(FedAvg.defaults, alpha=10.0, aggregation="full", profile_layer=-1, var_eps=1e-8,
                    kl_constant=True)
    rules = dict(FedAvg.rules, alpha=at_least(0.0), aggregation=one_of("full", "partial"), var_eps=above(0),
                 profile_layer=at_least(-1))

    @classmethod
    def check_config(cls, cfg) -> None:
        super().check_config(cfg)
        if not cfg.server_fraction:
            raise ValueError("fedprof scores clients against a profile of the server's own clean validation set: set "
                             "Config.server_fraction > 0 (the paper's L-Task holds out 14.3%)")
        layer = cfg.options.get("profile_layer", -1)
        if layer != -1:  # a layer of the body: known from the model alone, before any data is loaded
            from ..models import build, default_model

            name = default_model(cfg.dataset) if cfg.model == "auto" else cfg.model
            try:
                with torch.random.fork_rng(devices=[]):
                    depth = len(build(name.replace("_flexible", ""), cfg.input_shape, 2).body)
            except (ValueError, RuntimeError, KeyError, TypeError):
                return  # a model that does not build here is refused by the Config's own check
            if layer >= depth:
                raise ValueError(f"fedprof: option profile_layer {layer} is beyond the body of {name}, whose layers "
                                 f"are 0..{depth - 1} (-1: the layer after the last convolution)")

    def init(self, ctx: Context) -> None:
        self.options = {**self.options, "aggregation": _AGGREGATION[self.options["aggregation"]]}
        super().init(ctx)
        chosen = self.options["profile_layer"]
        self.upto = (profile_layer(ctx.population.template.body) if chosen == -1 else chosen) + 1
        profiles = ctx.for_each_client(ctx.clients, self._profiles)
        self.client_prof, self.client_ver = profiles, torch.zeros(ctx.population.n_clients, dtype=torch.long)
        self.initial_prof = profiles.clone()
        self.server_prof = {0: self.server_profile()}
        self.history = {"selected": [], "div": []}

    def profile(self, feats: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        """feats [n, B, q] with valid [n, B] -> [n, 2, q]: the mean and the population variance (+ var_eps)."""
        w = valid.to(feats.dtype).unsqueeze(-1)
        count = w.sum(1).clamp(min=1)
        mu = (feats * w).sum(1) / count
        var = (((feats - mu.unsqueeze(1)) ** 2) * w).sum(1) / count + self.options["var_eps"]
        return torch.stack([mu, var], dim=1)

    def _profiles(self, group, data) -> torch.Tensor:
        with torch.no_grad():
            feats = group.body_features(data.x, train=False, upto=self.upto)
        return self.profile(feats, data.valid())

    def server_profile(self) -> torch.Tensor:
        """RP* of the current global model on the server's validation set -> [2, q]."""
        server = self.ctx.server_model(self.global_params)
        return self._profiles(server, self.ctx.fed.server)[0]

    def divergences(self) -> torch.Tensor:
        """div_k of every client's latest profile against the baseline of its version (Eq. 3) -> [N]."""
        base = torch.stack([self.server_prof[int(v)] for v in self.client_ver])
        p, q = self.client_prof, base.to(self.client_prof.device)
        return gaussian_kl(p[:, 0], p[:, 1], q[:, 0], q[:, 1], self.options["kl_constant"]).mean(-1)

    def selection_probs(self, rnd: int) -> torch.Tensor:
        div = self.divergences().double().cpu()
        self.history["div"].append(div.tolist())
        return torch.softmax(-self.options["alpha"] * div, dim=0)  # lambda_k / sum_j lambda_j (Eq. 7)

    def client_update(self, rnd: int, down: Message) -> Reply:
        clients = down.clients
        self.receive(down)
        made = self.ctx.for_each_client(clients, self._profiles)  # with the received model, before training
        self.client_prof[clients], self.client_ver[clients] = made, rnd
        self.history["selected"].append(clients.tolist())
        reply = super().client_update(rnd, down)  # FedAvg's training and uplink (it loads the same model again)
        up = reply.up
        up.payload["profile"] = made
        if rnd == 0:
            up.payload["initial_profiles"] = self.initial_prof
            up.present["initial_profiles"] = torch.ones(len(self.initial_prof), dtype=torch.bool)
        return reply

    def aggregate(self, rnd: int, up: Message) -> None:
        super().aggregate(rnd, up)
        self.server_prof[rnd + 1] = self.server_profile()

    def summary(self) -> dict:
        return dict(self.history)
