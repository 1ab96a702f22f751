"""FedPAC (Xu, Tong and Huang, ICLR 2023): feature alignment to global class centroids, and classifier
collaboration by a small quadratic program over the clients' heads.

A round, for its participants K (the order of PFLlib's clientPAC / FedPAC, TsingZ0/PFLlib, which follows the
authors' JianXu95/FedPAC):

1. Download the averaged body and last round's global class centroids. With the new body, before training, each
   participant computes its feature statistics (the authors' `statistics_extraction`): with p_k its share of
   class k and mu_k its mean feature of class k, h[k] = p_k mu_k and
   V = (sum_k p_k mean_k ||f||^2 - sum_k p_k^2 ||mu_k||^2) / n  (as their code has it: p_k squared, over n).
2. Train the head alone for `head_epochs` (1, their code: one pass) with the body fixed, then the body alone for
   the local epochs with the head fixed, on cross-entropy + lam * MSE(feature, global centroid of its class) (lam 1,
   PFLlib's default `-lam`; a class without a global centroid adds nothing, as in FedProto).
3. One evaluation pass gives each class's mean feature (the local centroids). Upload: body, head, centroids of the
   classes held, V, h and n.
4. The server averages the bodies by sample count and the centroids per class over the participants that hold
   it (unweighted; a class no participant holds this round has no centroid next round: their server rebuilds the
   dictionary every round). For each participant i it solves
       min_a  a^T P_i a  over the simplex,   P_i[j, l] = V_j [j = l] + sum_k (h_i[k] - h_j[k]) . (h_i[k] - h_l[k]),
   zeroes the weights below 1e-3 (without renormalising, as their code) and sends i the head sum_j a_j head_j. The
   personalized heads are the server's downlink at the round's end (`aggregate` returns it, the ledger counts it).

Choices FedCR's paper leaves open (it gives no FedPAC setting; FedPAC's own paper and code decide):
* the feature layer is the body's output, the head's input (`engine.features`, eval mode for the statistics and
  the centroids; training-mode features for the alignment loss, as their `model.base(x)` inside training);
* the solver: accelerated projected gradient on the simplex (`simplex_qp`), in float64, `qp_steps` iterations,
  where the authors call cvxpy. P_i is positive semi-definite by construction (a Gram matrix plus a non-negative
  diagonal), so their eigenvalue clipping, which fires only when rounding makes an eigenvalue negative, is not
  needed in float64, and their fallback to the local head (no solution) never arises;
* bodies averaged by sample count (`weighted`, their receive_models), centroids unweighted (their proto_aggregation).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from .. import engine
from ..messages import Message
from .base import Context, Reply, at_least
from .fedavg import ParameterAveraging
from .fedproto import FedProto

SMALL_WEIGHT = 1e-3  # their solve_quadratic zeroes head weights below this


def project_to_simplex(v: torch.Tensor) -> torch.Tensor:
    """The Euclidean projection of each row of v [..., K] onto {a >= 0, sum a = 1} (sort and threshold)."""
    u, _ = torch.sort(v, dim=-1, descending=True)
    css = u.cumsum(-1) - 1
    k = torch.arange(1, v.shape[-1] + 1, device=v.device, dtype=v.dtype)
    support = (u - css / k) > 0
    rho = support.to(v.dtype).cumsum(-1).argmax(-1, keepdim=True)  # the last index where the condition holds
    theta = css.gather(-1, rho) / (rho + 1).to(v.dtype)
    return (v - theta).clamp(min=0)


def simplex_qp(P: torch.Tensor, steps: int = 3000) -> torch.Tensor:
    """argmin_a a^T P a over the simplex, for each P [..., K, K] (symmetric, positive semi-definite): accelerated
    projected gradient (FISTA) from the uniform weights, step 1 / (2 lambda_max)."""
    P = P.double()
    K = P.shape[-1]
    L = 2 * torch.linalg.eigvalsh(P)[..., -1:].clamp(min=1e-300).unsqueeze(-1)  # [..., 1, 1]
    a = torch.full(P.shape[:-1], 1.0 / K, dtype=P.dtype, device=P.device)
    y, t = a, 1.0
    for _ in range(steps):
        grad = 2 * (P @ y.unsqueeze(-1)).squeeze(-1)
        nxt = project_to_simplex(y - grad / L.squeeze(-1))
        t_next = (1 + (1 + 4 * t * t) ** 0.5) / 2
        y = nxt + (t - 1) / t_next * (nxt - a)
        a, t = nxt, t_next
    return a


def head_weights(V: torch.Tensor, h: torch.Tensor, steps: int = 3000) -> torch.Tensor:
    """Each participant's weights over the participants' heads [K, K] (row i: client i's), from their variances
    V [K] and statistics h [K, C, d]: the quadratic programs above, small weights zeroed."""
    H = h.double().flatten(1)
    G = H @ H.T  # (h_i - h_j).(h_i - h_l) = G_ii - G_il - G_ji + G_jl
    P = G.diagonal()[:, None, None] - G[:, None, :] - G[:, :, None] + G[None, :, :]
    P = P + torch.diag_embed(V.double()).unsqueeze(0)
    P = (P + P.transpose(1, 2)) / 2
    a = simplex_qp(P, steps)
    return torch.where(a > SMALL_WEIGHT, a, torch.zeros_like(a))


class FedPAC(ParameterAveraging):
    name = "fedpac"
    defaults = dict(ParameterAveraging.defaults, weighted=True, lam=1.0, head_epochs=1, qp_steps=3000)
    rules = dict(lam=at_least(0), head_epochs=at_least(1), qp_steps=at_least(1))

    local_loss = FedProto.local_loss  # CE + lam * MSE to the global centroid of each sample's class
    class_means = FedProto.class_means  # [n, C, d] mean eval-mode feature per class, and the counts [n, C]

    def init(self, ctx: Context) -> None:
        super().init(ctx)
        self.protos = None
        self.has_proto = None
        self.heads = ctx.population.groups[0].names("head")

    def shared_names(self, ctx: Context) -> list[str]:
        return ctx.population.groups[0].names("body")

    def configure(self, rnd: int) -> Message:
        down = super().configure(rnd)
        if self.protos is not None:
            down.payload.update(protos=self.protos[self.has_proto], labels=self.has_proto.nonzero().flatten())
        return down

    def statistics(self, group, data):
        """Each client's V [n] and h [n, C, d] (module docstring, step 1), with the body it holds now."""
        phi = engine.features(group, data)
        onehot = F.one_hot(data.y, self.ctx.fed.num_classes).to(phi.dtype) * data.valid().unsqueeze(-1)
        counts = onehot.sum(1)
        total = counts.sum(1).clamp(min=1)
        mu = torch.einsum("nic,nif->ncf", onehot, phi) / counts.clamp(min=1).unsqueeze(-1)
        sq = torch.einsum("nic,ni->nc", onehot, phi.pow(2).sum(-1)) / counts.clamp(min=1)
        p = counts / total.unsqueeze(-1)
        V = ((p * sq).sum(1) - (p.pow(2) * mu.pow(2).sum(-1)).sum(1)) / total
        return V, p.unsqueeze(-1) * mu

    def client_update(self, rnd: int, down: Message) -> Reply:
        clients = down.clients
        self.receive(down)
        V, h = self.ctx.for_each_client(clients, self.statistics)
        self.ctx.train_clients(rnd, clients, trainable=self.heads, epochs=self.options["head_epochs"])
        losses = self.ctx.train_clients(rnd, clients, trainable=self.shared, loss_fn=self.local_loss,
                                        stream=100_003).loss  # another batch order than the head's pass
        protos, counts = self.ctx.for_each_client(clients, self.class_means)
        present = (counts > 0).cpu()
        payload = {k: self.population.gather(k, clients) for k in self.shared + self.heads}
        payload.update(protos=protos, labels=torch.arange(self.ctx.fed.num_classes).expand(len(clients), -1), V=V, h=h,
                       n=self.ctx.fed.train.counts[clients].float())
        return Reply(Message.up(payload, clients, present={"protos": present, "labels": present}), losses)

    def aggregate(self, rnd: int, up: Message) -> Message:
        super().aggregate(rnd, up)  # the bodies, by sample count
        present = up.present["protos"].to(up["protos"].device)
        holders = present.sum(0)
        self.protos = (up["protos"] * present.unsqueeze(-1)).sum(0) / holders.clamp(min=1).unsqueeze(-1)
        self.has_proto = holders > 0  # this round's holders only (their server rebuilds the centroids each round)
        a = head_weights(up["V"], up["h"], self.options["qp_steps"])
        new = {k: torch.tensordot(a.to(up[k].device, up[k].dtype), up[k], dims=1) for k in self.heads}
        for k, v in new.items():
            self.population.scatter(k, v, up.clients)
        return Message.down(new, up.clients, broadcast=False)  # each participant's own head
