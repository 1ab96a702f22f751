"""Analysis code the notebooks and scripts share that is no federated method and no paper's numbers: FedCR's Fig. 2
views, FedNova's objective-inconsistency toy and the FedDBE cross-check's curves. Covered by the code fingerprint."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from . import engine
from .algorithms.fednova import local_norm, normalized_average


# ----------------------------------------------------------------------------------------------- FedCR's Fig. 2
def fedcr_client_view(alg, client: int, epochs: int, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """FedCR's Fig. 2, for a trained FedCR `alg`: `client` trains `epochs` more local epochs on Eq. 7, then the
    Gaussian means mu(x) [n', V] of (up to) its first n test samples, with their labels."""
    alg.local_training(alg.ctx.rounds, torch.tensor([client]), epochs=epochs)
    for group, _ in alg.ctx.groups:
        rows = torch.nonzero(group.clients == client).flatten()
        if len(rows):
            part, test = group.subset(rows), alg.ctx.fed.test.select([client])
            mu, _ = part.model.gaussian(engine.features(part, test))
            count = min(n, int(test.counts[0]))
            return mu[0, :count].cpu(), test.y[0, :count].cpu()
    raise ValueError(f"client {client} is not in this federation of {alg.population.n_clients} clients")


def fedcr_fig2_view(cfg, epochs: int, points: int) -> dict:
    """FedCR's Fig. 2 for one run: train `cfg` (V = 2), then the client holding the most classes (n1: the first,
    as every client holds the same number) trains `epochs` more local epochs, and the Gaussian means of (up to)
    `points` of its test images are returned with their labels (numpy), the client and its number of classes."""
    import numpy as np

    from . import experiments as ex

    ctx, alg, _ = ex.run_live(cfg)
    train = ctx.fed.train
    held = np.array([len(np.unique(train.y[c, :int(train.counts[c])].cpu())) for c in range(train.n_clients)])
    client = int(held.argmax())
    mu, y = fedcr_client_view(alg, client, epochs, points)
    return dict(client=client, classes=int(held[client]), mu=mu.numpy(), y=y.numpy())


# ----------------------------------------------------------------------------------------------- FedNova's toy (spec 2.5)
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


# ----------------------------------------------------------------------------------------------- FedDBE's cross-check
def crosscheck_curves(path, model: str | None = None) -> dict:
    """scripts/feddbe_crosscheck.py's CSV as curves: side ("fedlib", "authors") -> accuracy in % [seeds, evaluations]
    (empty if the file is missing). A CSV with a `model` column holds one set of curves per model: `model` picks
    one (None: the only one there, or the rows of a CSV without the column)."""
    import csv
    from pathlib import Path

    import numpy as np

    if not Path(path).exists():
        return {}
    sides: dict[str, dict[int, list[float]]] = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            if model is not None and row.get("model", model) != model:
                continue
            sides.setdefault(row["side"], {}).setdefault(int(row["seed"]), []).append(100 * float(row["acc_all"]))
    return {side: np.array([c for _, c in sorted(by_seed.items())]) for side, by_seed in sides.items()}


def crosscheck_models(path) -> list:
    """The models a cross-check CSV holds curves of ([None] for a file without a `model` column, [] if missing)."""
    import csv
    from pathlib import Path

    if not Path(path).exists():
        return []
    with open(path) as f:
        return sorted({row.get("model") for row in csv.DictReader(f)}, key=str)


EQUIVALENCE_POINTS = 1.0  # the cross-check's equivalence bound, in accuracy points
EQUIVALENCE_SEEDS = 5  # the fewest seeds on which the cross-check may pass


class Equivalence(NamedTuple):
    """The paired equivalence test of the cross-check at every evaluation (points of accuracy, fedlib minus the
    authors', per seed paired: the same seed gives both sides the same clients and initial weights)."""
    passes: bool  # every evaluation equivalent, over at least `EQUIVALENCE_SEEDS` seeds
    equivalent: np.ndarray  # [evaluations] bool: bound_lhs <= bound
    mean: np.ndarray  # [evaluations] mean paired difference
    se: np.ndarray  # [evaluations] its standard error
    lhs: np.ndarray  # [evaluations] |mean| + t(0.95, n-1) * SE: the edge of the 90% interval farthest from 0
    bound: float | np.ndarray  # points, one for all or one per evaluation
    seeds: int


def _edge(d: np.ndarray) -> np.ndarray:
    """|mean| + t(0.95, n-1) SE of per-seed differences d [seeds, evaluations], per evaluation."""
    from scipy import stats as st

    n = len(d)
    if n < 2:
        return np.full(d.shape[1], np.inf)
    return np.abs(d.mean(0)) + st.t.ppf(0.95, n - 1) * d.std(0, ddof=1) / np.sqrt(n)


def crosscheck_bound(curves: dict, floor: float = EQUIVALENCE_POINTS) -> np.ndarray:
    """The equivalence bound at each evaluation: `floor` points, or, where the curves hold the authors' code run a
    second time per seed on another random stream ("authors_stream2": dropout masks cannot be paired between two
    codes), the larger of `floor` and that noise floor's |mean| + t SE."""
    evaluations = curves["authors"].shape[1]
    if "authors_stream2" not in curves:
        return np.full(evaluations, floor)
    return np.maximum(floor, _edge(curves["authors_stream2"] - curves["authors"]))


def crosscheck_agreement(curves: dict, bound: float | np.ndarray = EQUIVALENCE_POINTS,
                         min_seeds: int = EQUIVALENCE_SEEDS) -> Equivalence:
    """The cross-check's rule, a paired equivalence test (two one-sided t-tests at 5%, TOST): at each evaluation
    the per-seed differences d (fedlib minus the authors', in points) must satisfy |mean d| + t(0.95, n-1) SE(d)
    <= `bound`, i.e. the 90% interval of the mean paired difference lies inside +-bound. The cross-check passes when
    every evaluation does, over at least `min_seeds` seeds (with fewer it cannot pass, whatever the curves)."""
    import numpy as np
    ours, theirs = curves["fedlib"], curves["authors"]
    if ours.shape != theirs.shape:
        raise ValueError(f"the cross-check pairs seed by seed and evaluation by evaluation: fedlib's curves are "
                         f"{ours.shape}, the authors' {theirs.shape}")
    n = len(ours)
    d = ours - theirs
    mean = d.mean(0)
    se = d.std(0, ddof=1) / np.sqrt(n) if n > 1 else np.full_like(mean, np.inf)
    lhs = _edge(d)
    ok = lhs <= bound
    return Equivalence(bool(ok.all()) and n >= min_seeds, ok, mean, se, lhs, bound, n)
