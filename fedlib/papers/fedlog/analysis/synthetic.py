"""Fig. 1: one global round on the circle data with two clients of different body depth.

Client 0 has a 3-layer MLP body, client 1 a 2-layer one; both map to a 2-D representation,
so every head is a line. A run does one round of the method's protocol with `local_iters`
full-batch local steps, and records the representations, the separators and the accuracies.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from .... import engine
from ....config import Config
from ....experiments import setup
from ....messages import Ledger
from ....rounds import run_round


HEAD_WEIGHT, HEAD_BIAS = "head.weight", "head.bias"  # the head's parameters, by name (a line: weight [2, 2], bias [2])


def circle_config(method: str, local_iters: int, seed: int, lr: float = 0.05, rounds: int = 1, n_train: int = 80,
                  options: dict | None = None) -> Config:
    # batch = a client's whole training set, so one local epoch is one iteration
    return Config(method=method, dataset="circle", model="mlp_flexible", n_clients=2, n_train=n_train, rounds=rounds,
                  local_epochs=local_iters, batch_size=n_train // 2, lr=lr, same_init=False, seed=seed,
                  options=options or {})


@dataclass
class Snapshot:
    features: list[torch.Tensor]  # per client [n_c, 2]
    labels: list[torch.Tensor]
    heads: list[tuple[torch.Tensor, torch.Tensor]]  # per client (weight [2, 2], bias [2]) used to predict
    local_heads: list[tuple[torch.Tensor, torch.Tensor]] | None  # LG-FedAvg: the heads before averaging
    train_acc: float
    test_acc: float


def _accuracy(pop, data) -> float:
    return engine.pooled_accuracy(engine.evaluate_population(pop, data))


def _snapshot(ctx, alg, local_heads=None) -> Snapshot:
    feats, labels, heads = [], [], []
    for g, data in ctx.groups:
        phi = engine.features(g, data)
        for row in range(g.n):
            n = int(data.counts[row])
            feats.append(phi[row, :n].cpu())
            labels.append(data.y[row, :n].cpu())
            heads.append((g.params[HEAD_WEIGHT][row].cpu().clone(), g.params[HEAD_BIAS][row].cpu().clone()))
    order = torch.cat([g.clients for g in ctx.population.groups]).argsort().tolist()
    pick = lambda xs: [xs[i] for i in order]  # noqa: E731
    return Snapshot(pick(feats), pick(labels), pick(heads), local_heads,
                    _accuracy(alg.population, ctx.fed.train), _accuracy(alg.population, ctx.fed.test))


def one_round(method: str, local_iters: int, seed: int = 0, lr: float = 0.05) -> tuple[Snapshot, Snapshot]:
    """(state before training, state after one round) of `method` on the circle data."""
    return one_round_of(circle_config(method, local_iters, seed, lr))


def one_round_of(cfg: Config) -> tuple[Snapshot, Snapshot]:
    """(state before training, state after one round) of the circle run `cfg` (`circle_config`)."""
    ctx, alg = setup(cfg)
    before = _snapshot(ctx, alg)
    up = run_round(alg, 0, Ledger()).up
    local_heads = None
    if HEAD_WEIGHT in up.payload:  # parameter averaging: keep the local heads the server averaged
        local_heads = [(up[HEAD_WEIGHT][c].cpu(), up[HEAD_BIAS][c].cpu()) for c in range(len(up.clients))]
    return before, _snapshot(ctx, alg, local_heads)


def separator(weight: torch.Tensor, bias: torch.Tensor) -> tuple[torch.Tensor, float]:
    """The line where a 2-class head's two logits are equal: w . phi + b = 0."""
    return weight[1] - weight[0], float(bias[1] - bias[0])


class OneRound(NamedTuple):
    """Fig. 1's derived value of one circle run (`plans.FIG1`): its train and test accuracy after one round."""
    train: float
    test: float


def accuracy_after_one_round(cfg: Config, settings=None) -> dict:
    """`OneRound` of the circle run `cfg`, as JSON (`plans.FIG1` reads it back as a OneRound)."""
    _, after = one_round_of(cfg)
    return OneRound(after.train_acc, after.test_acc)._asdict()


class Accuracy(NamedTuple):
    """One method's Fig. 1 accuracies after one round, [seeds, local-iteration counts], float32 fractions."""
    train: np.ndarray
    test: np.ndarray


def accuracy_of(read) -> dict:
    """method -> its Accuracy from the reading of `plans.FIG1` ((method, local iterations) -> a OneRound per seed);
    empty unless it is all there."""
    if not read.keys() or not read.whole():
        return {}
    s = read.settings
    out = {}
    for m in dict.fromkeys(m for m, _ in read.keys()):
        train, test = torch.zeros(len(s.seeds), len(s.iters)), torch.zeros(len(s.seeds), len(s.iters))
        for j, e in enumerate(s.iters):
            for i, value in enumerate(read[(m, e)]):
                train[i, j], test[i, j] = value.train, value.test
        out[m] = Accuracy(train.numpy(), test.numpy())
    return out


class AlphaRun(NamedTuple):
    """Fig. A.1/A.2's derived value of one FedLog-C run on the circle data (`plans.COMPACTNESS`): the Henze-Zirkler
    p-values of each class's representations, both clients pooled (p [classes]) and per client (p_client [clients,
    classes]), its test accuracy, and each client's final representations and labels (Fig. A.1 draws seed 0's)."""
    p: list
    p_client: list
    test_acc: float
    features: list  # per client [n_c, 2], float32
    labels: list  # per client [n_c]


def alpha_run(alpha: float, seed: int, rounds: int = 10, local_iters: int = 10, n_train: int = 120,
              lr: float = 0.05) -> AlphaRun:
    """One FedLog-C run with auxiliary-loss weight `alpha` on the circle data, tested as `AlphaRun` says."""
    from ....stats import henze_zirkler

    ctx, alg = setup(circle_config("fedlog_c", local_iters, seed, lr, rounds, n_train, {"alpha": alpha}))
    ledger = Ledger()
    for rnd in range(rounds):
        run_round(alg, rnd, ledger)
    shot = _snapshot(ctx, alg)
    feats, labels = torch.cat(shot.features), torch.cat(shot.labels)
    pooled = [float(henze_zirkler(feats[labels == c].numpy())[1]) for c in range(2)]
    per_client = [[float(henze_zirkler(shot.features[k][shot.labels[k] == c].numpy())[1]) for c in range(2)]
                  for k in range(2)]
    return AlphaRun(pooled, per_client, shot.test_acc, [f.numpy() for f in shot.features],
                    [y.numpy() for y in shot.labels])


def alpha_value(study, settings=None) -> dict:
    """`alpha_run` of `plans.COMPACTNESS`'s study (alpha, seed, rounds), as JSON (`alpha_of` reads it back)."""
    alpha, seed, rounds = study.args
    run = alpha_run(alpha, seed, rounds)
    return run._replace(features=[f.tolist() for f in run.features], labels=[y.tolist() for y in run.labels])._asdict()


def alpha_of(value: dict) -> AlphaRun:
    run = AlphaRun(**value)
    return run._replace(features=[np.asarray(f, dtype=np.float32).reshape(-1, 2) for f in run.features],
                        labels=[np.asarray(y, dtype=np.int64) for y in run.labels])


class Ablation(NamedTuple):
    """Fig. A.1/A.2's ablation (`compactness_of`): the Henze-Zirkler p-values pooled (p [seeds, alphas, classes]) and
    per client (p_client [seeds, alphas, clients, classes]) and the test accuracy [seeds, alphas], float32 as the runs
    kept them, and seed 0's run at every alpha (alpha -> AlphaRun)."""
    p: np.ndarray
    p_client: np.ndarray
    test_acc: np.ndarray
    snapshots: dict


def compactness_of(read) -> Ablation:
    """The Ablation of the reading of `plans.COMPACTNESS` (alpha -> an AlphaRun per seed)."""
    alphas = read.keys()
    runs = [read[a] for a in alphas]  # [alphas][seeds]
    seeds = range(len(runs[0]))
    return Ablation(np.array([[r[i].p for r in runs] for i in seeds], dtype=np.float32),
                    np.array([[r[i].p_client for r in runs] for i in seeds], dtype=np.float32),
                    np.array([[r[i].test_acc for r in runs] for i in seeds], dtype=np.float32),
                    {a: r[0] for a, r in zip(alphas, runs)})


def hz_pvalues(abl: Ablation):
    """Fig. A.2's Henze-Zirkler p-values of `compactness_ablation`'s representations, each class's averaged: (both
    clients pooled [seeds, alphas], per client [seeds, alphas])."""
    return abl.p.mean(axis=2), abl.p_client.mean(axis=(2, 3))


def hz_rows(abl: Ablation, alphas) -> tuple[list[dict], object]:
    """Fig. A.2's rows (per alpha: the pooled and per-client p-values and the test accuracy in %, means over seeds)
    and the per-client p-values [seeds, alphas]: what its table saves and its claims judge."""
    pooled, per_client = hz_pvalues(abl)
    rows = [{"alpha": a, "p_pooled_mean": float(pooled[:, j].mean()), "p_per_client_mean": float(per_client[:, j].mean()),
             "test_accuracy_mean": 100 * float(abl.test_acc[:, j].mean())} for j, a in enumerate(alphas)]  # in %
    return rows, per_client
