"""Section 3.5 measured: the quantities of Thms. 3-5 for every client, round by round.

Thm. 4 says a client's local loss L_c (cross-entropy of its body under the global head on its own
training data) decreases in every round when the body step size zeta is below
2 S / (L1 (S + E sigma^2)) < 2 / L1, with L1 the body's smoothness constant (Assumption 1). We estimate
L1 per client and round as the largest |eigenvalue| of the Hessian of L_c w.r.t. the body (power
iteration on Hessian-vector products, all clients at once: their Hessians are separate blocks), and run
plain SGD (the theorems' optimizer) at several step sizes, reporting how often zeta < 2 / L1 held. Losses and gradients are taken
on the full local training set in eval mode (no dropout), so they are the L_c and grad L_c of the theorems.
The head step: FedLog solves Eq. 12 exactly (no step size beta), the limit of the head ascent with a
step inside Thm. 4's bound.
"""
from __future__ import annotations

from dataclasses import replace

import torch

from .... import cache, engine
from .... import experiments as ex
from ....config import Config
from ....messages import Ledger
from ....paths import results_dir
from ....rounds import run_round


def _group_loss(group: engine.Group, data, params: dict) -> torch.Tensor:
    """Full-batch mean cross-entropy of every client of the group [n] (eval mode)."""
    _, logits = group.forward(data.x, train=False, params=params)
    return engine.masked_cross_entropy(logits, data.y, data.valid())


def local_losses(ctx) -> torch.Tensor:
    out = torch.zeros(ctx.population.n_clients)
    with torch.no_grad():
        for g, data in ctx.groups:
            out[g.clients] = _group_loss(g, data, g.params).cpu()
    return out


def body_gradient_norms(ctx) -> torch.Tensor:
    """||grad_theta L_c||_2 of every client (Thm. 5's quantity)."""
    out = torch.zeros(ctx.population.n_clients)
    for g, data in ctx.groups:
        body = g.names("body")
        params = {k: (v.detach().requires_grad_(True) if k in body else v) for k, v in g.params.items()}
        grads = torch.autograd.grad(_group_loss(g, data, params).sum(), [params[k] for k in body])
        out[g.clients] = torch.sqrt(sum(gr.flatten(1).pow(2).sum(1) for gr in grads)).cpu()
    return out


def body_smoothness(ctx, iterations: int = 20, seed: int = 0) -> torch.Tensor:
    """Largest |eigenvalue| of the Hessian of every client's local loss w.r.t. its body, an estimate of the local
    smoothness L1 [n] (power iteration finds the eigenvalue of largest magnitude)."""
    out = torch.zeros(ctx.population.n_clients)
    gen = torch.Generator().manual_seed(seed)
    for g, data in ctx.groups:
        body = g.names("body")
        params = {k: (v.detach().requires_grad_(True) if k in body else v) for k, v in g.params.items()}
        grads = torch.autograd.grad(_group_loss(g, data, params).sum(), [params[k] for k in body], create_graph=True)
        v = [torch.randn(p.shape, generator=gen).to(p) for p in (params[k] for k in body)]
        eig = torch.zeros(g.n)
        for _ in range(iterations):
            norm = torch.sqrt(sum(x.flatten(1).pow(2).sum(1) for x in v)).clamp(min=1e-30)
            v = [x / norm.view(-1, *[1] * (x.dim() - 1)) for x in v]
            hv = torch.autograd.grad(grads, [params[k] for k in body], grad_outputs=v, retain_graph=True)
            eig = sum((h * x).flatten(1).sum(1) for h, x in zip(hv, v)).detach().cpu().abs()  # |Rayleigh quotient|
            v = [h.detach() for h in hv]
        out[g.clients] = eig
    return out


def trace(cfg: Config, smoothness_iterations: int = 10) -> dict:
    """Run `cfg` round by round and record, per client, the local loss before and after every round, and the
    body gradient norm and smoothness estimate at the start of every round; `loss_local` is the loss after local
    training under the round's head, before the server's new head. Returns lists of per-round
    [n_clients] lists and the mean test accuracy per round; `diverged_round` if the loss became non-finite."""
    ctx, alg = ex.setup(cfg)
    ledger = Ledger()
    out = {"loss_before": [], "loss_local": [], "loss_after": [], "grad_norm": [], "smoothness": [], "acc_mean": []}
    after_local_training = lambda reply: out["loss_local"].append(local_losses(ctx).tolist())  # noqa: E731
    for rnd in range(cfg.rounds):
        out["loss_before"].append(local_losses(ctx).tolist())
        out["grad_norm"].append(body_gradient_norms(ctx).tolist())
        out["smoothness"].append(body_smoothness(ctx, iterations=smoothness_iterations, seed=rnd).tolist())
        run_round(alg, rnd, ledger, between=after_local_training)  # loss_local: new bodies under the round's head
        loss = local_losses(ctx)
        if not bool(torch.isfinite(loss).all()):
            out["diverged_round"] = rnd
            break
        out["loss_after"].append(loss.tolist())
        ev = engine.evaluate_population(alg.population, ctx.fed.test)
        out["acc_mean"].append(float((ev["correct"] / ev["count"].clamp(min=1)).mean()))
    return out


def step_size_study(base: Config, step_sizes: list[float], compute: bool = True) -> dict:
    """Thm. 4 with plain SGD at each body step size zeta: one (cached) `trace` per step size; with `compute` False,
    only the step sizes whose trace is cached or shipped (`cached_trace`)."""
    found = {zeta: cached_trace(replace(base, optimizer="sgd", lr=zeta), compute) for zeta in step_sizes}
    return {zeta: tr for zeta, tr in found.items() if tr is not None}


def inside_bound(tr: dict, zeta: float) -> float:
    """Fraction of client-rounds where zeta < 2 / L1 (Thm. 4's bound without the noise term, a necessary condition)."""
    l1 = torch.tensor(tr["smoothness"])
    return float((zeta * l1 < 2).float().mean())


TRACES = "convergence_trace_v2"  # the folder of traces, by cache key, in the results cache and in archive/


def cached_trace(cfg: Config, compute: bool = True) -> dict | None:
    """cfg's `trace` from the results cache or from archive/ (JSON, read as data); else computed and cached, or
    None with `compute` False."""
    from .... import archive

    name = f"{cfg.key()}.json"
    found = archive.cached_json(TRACES, name)
    if found is not None or not compute:
        return found
    res = trace(cfg)
    cache.write_atomic(results_dir() / TRACES / name, res)
    return res


def fraction_decreased(tr: dict, start: str = "loss_before", end: str = "loss_after") -> float:
    """Fraction of client-rounds whose loss at `end` is below that at `start` (finished rounds only).
    ("loss_before", "loss_local"): the local training part; ("loss_local", "loss_after"): the head step."""
    n = len(tr["loss_after"])
    a, b = torch.tensor(tr[start][:n]), torch.tensor(tr[end][:n])
    return float((b < a).float().mean()) if b.numel() else float("nan")


__all__ = ["local_losses", "body_gradient_norms", "body_smoothness", "trace", "step_size_study", "cached_trace",
           "fraction_decreased", "inside_bound"]
