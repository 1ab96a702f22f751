"""Notebook 04's numbers, made from its reads (`fedlib.papers.read_notebook`): Eq. 9's rows, Thm. 2's check, FedProf
Props. 1-2's normality rows and QQ columns, and Fig. A.1/A.2's ablation, as one typed value (`GaussianChecks`) that
the notebook's figures draw and its claims judge. Each part is a derived one (`plans.EQ9`, `THM2`, `NORMALITY`,
`COMPACTNESS`): computed in every profile by `representations` and `synthetic`, cached with the code's fingerprint."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..plans import COMPACTNESS, EQ9, NORMALITY, THM2
from . import synthetic
from .representations import Thm2

DENSE = "dense fc1 (pre-activation)"  # Prop. 1's layer: a dense layer's pre-activations


@dataclass(frozen=True)
class Row:
    """One row of FedProf Props. 1-2's table (`fedprof_normality`): a dataset, model state and layer, and the shares
    of its dimensions passing K^2 at 5% over all test images and within each class."""
    dataset: str
    model: str
    layer: str
    dims: int
    passing_all_samples: float
    passing_within_class: float


@dataclass(frozen=True)
class Alpha:
    """One row of Fig. A.2's table (`figA2_hz_pvalues`): the mean Henze-Zirkler p-values at weight `alpha`, classes
    averaged, both clients pooled and per client, and the test accuracy in %, means over seeds."""
    alpha: float
    p_pooled_mean: float
    p_per_client_mean: float
    test_accuracy_mean: float


@dataclass(frozen=True)
class GaussianChecks:
    """What notebook 04 draws and judges, at its settings (`plans.Gaussian`)."""
    settings: Any
    eq9: list  # Eq. 9's rows (dicts, as eq9_log_partition saves them)
    thm2: Thm2
    normality: list[Row]  # dataset by dataset
    qq: dict  # (dataset, state, layer) -> the first two dimensions of its outputs [test images, 2]
    ablation: synthetic.Ablation  # what Fig. A.1 and A.2 draw
    alphas: list[Alpha]  # Fig. A.2's rows, alpha by alpha (alpha = 0 first)
    per_client: np.ndarray  # each seed's per-client p-value [seeds, alphas], which the claims compare

    @property
    def largest_error(self) -> float:
        """Eq. 9's largest relative error."""
        return max(r["relative_error"] for r in self.eq9)

    @property
    def best(self) -> int:
        """The index of the alpha (not 0) with the largest mean per-client p-value."""
        return max(range(1, len(self.alphas)), key=lambda j: self.alphas[j].p_per_client_mean)

    @property
    def trained_fc1(self) -> list[Row]:
        """Prop. 1's rows: a trained dense layer's, dataset by dataset."""
        return [r for r in self.normality if r.model == "trained" and r.layer == DENSE]


def checks(reads) -> GaussianChecks:
    """Notebook 04's numbers from its reads (every part there: each is computed in every profile)."""
    normality = {d: found for d, (found,) in reads[NORMALITY].each().items()}
    ablation = synthetic.compactness_of(reads[COMPACTNESS])
    rows, per_client = synthetic.hz_rows(ablation, reads[COMPACTNESS].keys())
    return GaussianChecks(reads[EQ9].settings, reads[EQ9]["eq9"][0], reads[THM2]["thm2"][0],
                          [Row(**row) for found in normality.values() for row in found.rows],
                          {(d, *at): z for d, found in normality.items() for at, z in found.qq.items()}, ablation,
                          [Alpha(**row) for row in rows], per_client)
