"""The numbers of notebook 07 that its figures draw and its claims judge, made here alone: the quantities read from
a run (the final accuracy, the accuracy after round one), the sweeps of parts D-F from their readings (`dpc_points`,
`size_rows`, `depth_accuracy`), and FedNova's objective-inconsistency toy (spec 2.5), FedAvg, FedProx and FedNova on
quadratics in closed form (`toy_gaps`). Numeric: `papers/*/analysis` is in the code fingerprint."""
from __future__ import annotations

import numpy as np
import torch

from ... import stats
from ...algorithms.fednova import local_norm, normalized_average
from .plans import TOY, Toy, swept


def final(result) -> float:
    """The last round's accuracy, in percent (FedRD's protocol has no fine-tune)."""
    return 100 * result.last()


def after_round_one(result) -> float:
    return 100 * result.curve()[0]


def quadratic_toy(centers, taus, lr: float, rounds: int, normalize: bool, mu: float = 0.0) -> torch.Tensor:
    """The objective-inconsistency toy (spec 2.5): client i minimises F_i(x) = 1/2 ||x - centers_i||^2 by tau_i
    exact (proximal) gradient steps from the global x each round; the server averages the updates (p_i equal),
    plainly (FedAvg, FedProx) or normalized (FedNova). Returns x after every round [rounds + 1, d], from x = 0."""
    c = torch.as_tensor(centers, dtype=torch.float64)
    p = torch.full((len(c),), 1.0 / len(c), dtype=torch.float64)
    norms = torch.tensor([local_norm(t, lr, 0.0, mu) for t in taus], dtype=torch.float64)
    x, path = torch.zeros(c.shape[1], dtype=torch.float64), []
    for _ in range(rounds + 1):
        path.append(x)
        deltas = []
        for ci, tau in zip(c, taus):
            w = x.clone()
            for _ in range(tau):
                w = w - lr * ((w - ci) + mu * (w - x))
            deltas.append(w - x)
        deltas = torch.stack(deltas)
        x = normalized_average(x, deltas, norms, p) if normalize else x + torch.tensordot(p, deltas, dims=1)
    return torch.stack(path)


def toy_fixed_point(centers, taus, lr: float, normalize: bool) -> torch.Tensor:
    """The toy's fixed point in closed form (mu = 0, identity Hessians): client i moves c_i = 1 - (1 - lr)^tau_i of
    the way to its optimum each round, so FedAvg settles at sum_i c_i x_i / sum_i c_i (biased towards the clients
    with more steps) and FedNova at the same with weights c_i / tau_i (equal to first order in lr)."""
    c = torch.tensor([1 - (1 - lr) ** t for t in taus], dtype=torch.float64)
    w = c / torch.tensor(taus, dtype=torch.float64) if normalize else c
    return (w / w.sum()) @ torch.as_tensor(centers, dtype=torch.float64)


def fednova_toy(centers, taus, lr: float, rounds: int) -> tuple[dict, dict]:
    """Notebook 07's toy: the global model's path under FedAvg, FedProx (mu = 1) and FedNova, and the closed-form
    fixed points of FedAvg and FedNova (numpy)."""
    paths = {"FedAvg": quadratic_toy(centers, taus, lr, rounds, normalize=False),
             "FedProx (mu = 1)": quadratic_toy(centers, taus, lr, rounds, normalize=False, mu=1.0),
             "FedNova": quadratic_toy(centers, taus, lr, rounds, normalize=True)}
    fixed = {"FedAvg": toy_fixed_point(centers, taus, lr, False), "FedNova": toy_fixed_point(centers, taus, lr, True)}
    return {k: v.numpy() for k, v in paths.items()}, {k: v.numpy() for k, v in fixed.items()}


def toy_gaps(settings: Toy = TOY) -> tuple[dict, dict, dict]:
    """Part H: (paths, fixed points, gap) of FedNova's toy at `settings`, gap: method -> its distance from the true
    minimiser at the end."""
    centers = np.array(settings.centers)
    paths, fixed = fednova_toy(centers, list(settings.taus), settings.lr, settings.rounds)
    return paths, fixed, {lab: float(np.linalg.norm(path[-1] - centers.mean(0))) for lab, path in paths.items()}


def whole_sweep(read) -> bool:
    """Whether a sweep part (D-F) is planned at its profile and all there: what its figure draws and claims judge."""
    return bool(read.keys()) and read.whole()


def dpc_points(dpcs) -> dict:
    """Part D: (label, dpc) -> ((mean, se) of the final accuracy over seeds, uplink MB per client); empty where the
    part is cut or not all there."""
    profile = dpcs.settings
    if not whole_sweep(dpcs):
        return {}
    return {(lab, k): (stats.mean_se([final(r) for r in swept(dpcs[(lab, k)], profile)]),
                       swept(dpcs[(lab, k)], profile)[0].uplink_mb()[-1]) for lab, k in dpcs.keys()}


def size_rows(sides) -> list[dict]:
    """Part E: FedRD's final accuracy (mean, SE) and uplink per representation side sqrt(d'), one row each; empty
    where the part is cut or not all there."""
    profile = sides.settings
    if not whole_sweep(sides):
        return []
    return [{"sqrt_d": side, "d": side * side,
             **dict(zip(("final_mean", "final_se"), stats.mean_se([final(r) for r in swept(sides[side], profile)]))),
             "uplink_MB_per_client": swept(sides[side], profile)[0].uplink_mb()[-1], "seeds": len(sides[side]),
             "rounds": profile.swept} for side in sorted(sides.keys())]


def depth_accuracy(depths) -> dict:
    """Part F: the projection's depth -> FedRD's final accuracy (mean, SE); empty where the part is cut or not all
    there."""
    profile = depths.settings
    if not whole_sweep(depths):
        return {}
    return {L: stats.mean_se([final(r) for r in swept(depths[L], profile)]) for L in sorted(depths.keys())}
