"""What notebook 06 computes that is not a run: Table 2's quantity (the accuracy after the fine-tune), Ditto's
lambda chosen from its grid (the quick profile), and FedCR's Fig. 2 views (the Gaussian means of one client's test
images after it trains on). Numeric: `papers/*/analysis` is in the code fingerprint."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from .... import engine, experiments as ex


def final(result) -> float:
    """After the fine-tune where the method has one (Table 2's quantity), in percent."""
    return 100 * result.final()


def ditto_lambda(grid) -> tuple[float | None, str]:
    """The quick profile chooses Ditto's lambda on seed 0 of the first column from the paper's grid (the reading of
    part `plans.DITTO_GRID`), by final accuracy; the paper profile takes the paper's per column (None). Returns it
    and what to print."""
    from ..protocol import DITTO_LAM

    there = {lam: rs[0] for lam in grid.keys() if (rs := grid[lam]) is not None}
    if not there:  # the columns whose data are here (`plans.columns_here`, which reads this module's values)
        per_column = dict((f"{d} {q}", DITTO_LAM[(d, q)]) for d, q in grid.settings.columns if ex.data_here(d))
        return None, f"lambda per column, the paper's: {per_column}"
    lam = max(there, key=lambda v: final(there[v]))
    return lam, (f"lambda = {lam:g} for every Ditto run below; final accuracy by lambda: "
                 f"{ {v: round(final(r), 2) for v, r in there.items()} }")


def client_view(alg, client: int, epochs: int, n: int) -> tuple[torch.Tensor, torch.Tensor]:
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


class View(NamedTuple):
    """FedCR's Fig. 2 for one run (`fig2_view`): the client shown, the classes it holds, the Gaussian means of its
    test images [n, V] (float32) and their labels."""
    client: int
    classes: int
    mu: np.ndarray
    y: np.ndarray


def fig2_view(cfg, epochs: int, points: int) -> View:
    """FedCR's Fig. 2 for one run: train `cfg` (V = 2), then the client holding the most classes (n1: the first,
    as every client holds the same number) trains `epochs` more local epochs, and the Gaussian means of (up to)
    `points` of its test images are returned with their labels, the client and its number of classes."""
    ctx, alg, _ = ex.run_live(cfg)
    train = ctx.fed.train
    held = np.array([len(np.unique(train.y[c, :int(train.counts[c])].cpu())) for c in range(train.n_clients)])
    client = int(held.argmax())
    mu, y = client_view(alg, client, epochs, points)
    return View(client, int(held[client]), mu.numpy(), y.numpy())


def view_value(cfg, settings) -> dict:
    """Part E's derived value (`plans.FIG2`): `fig2_view` of `cfg` at the profile's Fig. 2 settings (`settings.fig2`:
    its epochs and points), as JSON (lists)."""
    v = fig2_view(cfg, settings.fig2.epochs, settings.fig2.points)
    return v._replace(mu=v.mu.tolist(), y=v.y.tolist())._asdict()


def view_file(cfg, settings) -> str:
    """A view's file: the Config's cache key with the epochs and points it was taken at."""
    return f"{cfg.key()}_e{settings.fig2.epochs}_n{settings.fig2.points}.json"


def load_view(value: dict) -> View:
    """A view read as data: the float32 means come back bit for bit."""
    v = View(**value)
    return v._replace(mu=np.array(v.mu, dtype=np.float32), y=np.array(v.y, dtype=np.int64))


def silhouettes(views) -> dict:
    """Part E: (partition, beta) -> the silhouette of its view's means by class, from the reading of `plans.FIG2`
    (empty unless every view is there)."""
    from .... import stats

    if not views.keys() or not views.whole():
        return {}
    return {key: stats.silhouette(views[key][0].mu, views[key][0].y) for key in views.keys()}
