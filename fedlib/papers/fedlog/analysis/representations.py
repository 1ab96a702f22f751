"""Are representations Gaussian? FedProf's Props. 1-2 (seeds/004) and FedLog's assumption (Section 3.4).

`layer_output` runs a body up to a layer; `fused_channels` sums a convolutional output over its
spatial positions (FedProf's "fused representations"); `normality` tests every dimension with
D'Agostino and Pearson's K^2 test and reports the share that passes at the given level.
"""
from __future__ import annotations

import numpy as np
import torch
from scipy import stats as sps

from .... import engine, models
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


def normality(z, alpha: float = 0.05) -> dict:
    """Per-dimension K^2 normality tests of z [n, d]. Constant dimensions count as not normal."""
    z = np.asarray(z, dtype=float)
    p = np.array([sps.normaltest(col).pvalue if col.std() > 1e-12 else 0.0 for col in z.T])
    return {"p": p, "passing": float((p > alpha).mean()), "median_p": float(np.median(p))}


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
