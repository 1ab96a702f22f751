"""What notebook 07 computes that is not a run: the quantities its tables and claims read from a run (the final
accuracy, the accuracy after round one), and FedNova's objective-inconsistency toy (spec 2.5), FedAvg, FedProx
and FedNova on quadratics in closed form. Numeric: `papers/*/analysis` is in the code fingerprint."""
from __future__ import annotations

import torch

from ...algorithms.fednova import local_norm, normalized_average


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
