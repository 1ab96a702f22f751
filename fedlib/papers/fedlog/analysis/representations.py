"""Are representations Gaussian? FedProf's Props. 1-2 (seeds/004) and FedLog's assumption (Section 3.4).

`layer_output` runs a body up to a layer; `fused_channels` sums a convolutional output over its
spatial positions (FedProf's "fused representations"); `normality` tests every dimension with
D'Agostino and Pearson's K^2 test and reports the share that passes at the given level.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch
from scipy import stats as sps

from .... import data, engine, expfam, models
from ....data import ClientData


@torch.no_grad()
def layer_output(model: models.BodyHead, x: torch.Tensor, upto: int, batch: int = 2048) -> torch.Tensor:
    """Output of body[:upto] (eval mode) for inputs x [n, ...]."""
    model.eval()
    part = model.body[:upto]
    return torch.cat([part(x[i:i + batch]) for i in range(0, len(x), batch)])


def fused_channels(h: torch.Tensor) -> torch.Tensor:
    """[n, C, H, W] -> [n, C]: each channel summed over its positions."""
    return h.flatten(2).sum(-1)


class Normal(NamedTuple):
    """K^2 tests of each dimension (`normality`): their p-values, the share passing and the median p."""
    p: np.ndarray
    passing: float
    median_p: float


def normality(z, alpha: float = 0.05) -> Normal:
    """Per-dimension K^2 normality tests of z [n, d]. Constant dimensions count as not normal."""
    z = np.asarray(z, dtype=float)
    p = np.array([sps.normaltest(col).pvalue if col.std() > 1e-12 else 0.0 for col in z.T])
    return Normal(p, float((p > alpha).mean()), float(np.median(p)))


def train_centralized(model_name: str, x: torch.Tensor, y: torch.Tensor, num_classes: int, epochs: int,
                      lr: float = 1e-3, batch_size: int = 64, seed: int = 0) -> models.BodyHead:
    """One model trained on (x, y) with Adam, through the engine (a population of one client)."""
    torch.manual_seed(seed)
    pop = engine.Population.create([models.build(model_name, tuple(x.shape[1:]), num_classes)], same_init=True)
    g = pop.groups[0]
    data = ClientData(x.unsqueeze(0), y.unsqueeze(0), torch.tensor([len(y)]))
    engine.train(g, data, trainable=list(g.params), optimizer="adam", lr=lr, epochs=epochs, batch_size=batch_size,
                 generator=torch.Generator().manual_seed(seed))
    return g.module(0)


def untrained(model_name: str, input_shape, num_classes: int, seed: int = 0) -> models.BodyHead:
    torch.manual_seed(seed)
    return models.build(model_name, tuple(input_shape), num_classes).eval()


# Notebook 04's checks (FedLog's Eq. 9 and Thm. 2, FedProf's Props. 1-2, the elongation behind Fig. A.1/A.2)
def eq9_rows() -> list[dict]:
    """Eq. 9's closed-form log-partition against the trapezoid rule on [-12, 12]^m, for m = 1-3 and 2, 3, 5 classes:
    one row each, with the relative error."""
    rows = []
    rng = np.random.default_rng(0)
    for m in (1, 2, 3):
        for classes in (2, 3, 5):
            eta = rng.normal(size=(classes, m)) * 1.5
            closed = float(expfam.log_partition(torch.tensor(eta)))
            numeric = expfam.log_partition_numeric(eta)
            rows.append({"m": m, "classes": classes, "closed_form": closed, "numerical": numeric,
                         "relative_error": abs(closed - numeric) / abs(numeric)})
    return rows


def thm2_check() -> tuple[float, list[str]]:
    """Thm. 2: (a) two different representation sets with the same summed statistic give the same posterior and MAP
    head, (b) moving one point moves the head, (c) the summed client statistics are the pooled statistic. Returns
    the relative MAP difference of (a) and what to print."""
    g = torch.Generator().manual_seed(0)
    C, m, n = 4, 6, 200
    phi = torch.randn(n, m - 1, generator=g, dtype=torch.float64) + torch.arange(m - 1, dtype=torch.float64) / 3
    y = torch.randint(0, C, (n,), generator=g)
    twin = expfam.same_statistic_twin(phi, y, shift=2.0)
    T, T_twin = expfam.sufficient_statistics(phi, y, C), expfam.sufficient_statistics(twin, y, C)
    moved = phi.clone()
    moved[0] += 0.5
    T_moved = expfam.sufficient_statistics(moved, y, C)
    eta, eta_twin, eta_moved = (expfam.map_head(t, n) for t in (T, T_twin, T_moved))
    twin_gap = float((eta - eta_twin).abs().max() / eta.abs().max())  # relative
    probe = torch.randn(10, C, m, generator=g, dtype=torch.float64)
    post = lambda t: torch.stack([expfam.log_posterior(e, t, n) for e in probe])  # noqa: E731
    lines = [f"(a) max |phi - twin| = {float((phi - twin).abs().max()):.2f}; "
             f"max |T - T_twin| = {float((T - T_twin).abs().max()):.1e}; "
             f"max |MAP - MAP_twin| = {float((eta - eta_twin).abs().max()):.1e}; "
             f"max |log posterior difference| at 10 random heads = {float((post(T) - post(T_twin)).abs().max()):.1e}",
             f"(b) one point moved by 0.5: max |MAP - MAP_moved| = {float((eta - eta_moved).abs().max()):.3f}"]
    clients = torch.tensor_split(torch.randperm(n, generator=g), 5)
    summed = sum(expfam.sufficient_statistics(phi[c], y[c], C) for c in clients)
    lines.append(f"(c) 5 clients: max |sum of client statistics - pooled statistic| = "
                 f"{float((summed - T).abs().max()):.1e}; max |MAP(sum) - MAP(pooled)| = "
                 f"{float((expfam.map_head(summed, n) - eta).abs().max()):.1e}")
    return twin_gap, lines


class Thm2(NamedTuple):
    """Thm. 2's derived value (`plans.THM2`): (a)'s relative MAP difference and what (a)-(c) found, in words."""
    twin_gap: float
    said: list


def eq9_value(study, settings=None) -> list[dict]:
    """`eq9_rows`, the derived value of `plans.EQ9`."""
    return eq9_rows()


def thm2_value(study, settings=None) -> dict:
    """`thm2_check`, the derived value of `plans.THM2`, as JSON (read back as a Thm2)."""
    return Thm2(*thm2_check())._asdict()


class Normality(NamedTuple):
    """FedProf Props. 1-2's derived value of one dataset (`plans.NORMALITY`): its rows (the share of dimensions
    passing K^2 at 5% per model state and layer, over all test images and within each class) and, for the QQ-plots,
    the first two dimensions of each layer's outputs ((state, layer) -> [test images, 2])."""
    rows: list
    qq: dict


LAYERS = {"dense fc1 (pre-activation)": lambda model, x: layer_output(model, x, 9),
          "conv2 (channel-fused)": lambda model, x: fused_channels(layer_output(model, x, 4))}


def normality_of(name: str, train_samples: int, epochs: int, test_samples: int) -> Normality:
    """FedProf Props. 1-2 on dataset `name`: fc1's pre-activations and conv2's channel-fused outputs of the MNIST CNN,
    untrained and centrally trained (Adam, `epochs` over its first `train_samples` images), each dimension tested
    with K^2 over the first `test_samples` test images and within each class."""
    ds = data.load_dataset(name)
    trained = train_centralized("cnn_mnist", ds.train_x[:train_samples], ds.train_y[:train_samples], 10, epochs)
    x, yt = ds.test_x[:test_samples], ds.test_y[:test_samples]
    rows, qq = [], {}
    for state, model in (("untrained", untrained("cnn_mnist", (1, 28, 28), 10)), ("trained", trained)):
        for layer, output in LAYERS.items():
            z = output(model, x)
            overall = normality(z)
            per_class = [normality(z[yt == c]).passing for c in range(10) if int((yt == c).sum()) >= 20]
            rows.append({"dataset": name, "model": state, "layer": layer, "dims": z.shape[1],
                         "passing_all_samples": overall.passing, "passing_within_class": float(np.mean(per_class))})
            qq[(state, layer)] = z[:, :2].numpy()
    return Normality(rows, qq)


def normality_value(study, settings=None) -> dict:
    """`normality_of` of `plans.NORMALITY`'s study (dataset, train samples, epochs, test samples), as JSON
    (`normality_from` reads it back)."""
    found = normality_of(*study.args)
    return {"rows": found.rows, "qq": [[state, layer, z.tolist()] for (state, layer), z in found.qq.items()]}


def normality_from(value: dict) -> Normality:
    kept = Normality(**value)
    return kept._replace(qq={(state, layer): np.asarray(z, dtype=np.float32).reshape(-1, 2) for state, layer, z in kept.qq})


def elongation(abl, alphas) -> list[str]:
    """Per alpha, the ratio of the smaller to the larger eigenvalue of each class's covariance (seed 0)."""
    lines = []
    for a in alphas:
        shot = abl.snapshots[a]
        f, yy = np.concatenate(shot.features), np.concatenate(shot.labels)
        ratios = [np.linalg.eigvalsh(np.cov(f[yy == c].T))[[0, -1]] for c in range(2)]
        lines.append(f"alpha {a:<6}: eigenvalue ratio per class " + ", ".join(f"{lo / hi:.3f}" for lo, hi in ratios)
                     + "; spread (largest eigenvalue) " + ", ".join(f"{hi:.3f}" for lo, hi in ratios))
    return lines
