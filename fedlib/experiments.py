"""Experiments: a `Config` -> `run` -> per-round metrics, cached on disk by the config's hash.

A finished run is written atomically (temporary file, then rename) to
`$FEDLIB_RESULTS/<method>/<hash>.json` (default `results/`), so re-running a notebook or an
interrupted sweep recomputes nothing that finished. Same config, same device -> same numbers.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from tqdm.auto import tqdm

from . import algorithms, data, engine, leaf, models
from .messages import Ledger
from .paths import results_dir

CACHE_VERSION = 1  # bump when a change alters the numbers a config produces
# Config fields added after CACHE_VERSION 1 -> their default; hashed only when set to something else
ADDED_FIELDS: dict = {"local_optimum": False, "augment": False}


class DivergenceError(RuntimeError):
    """A run whose loss became NaN or infinite."""


@dataclass
class Config:
    method: str = "fedlog"
    dataset: str = "mnist"
    model: str = "auto"
    partition: str = "pathological"
    n_clients: int = 50
    classes_per_client: int = 2
    dirichlet_alpha: float = 0.5
    train_fraction: float = 0.05
    n_train: int = 0  # synthetic data only: number of training points (0: the dataset's default)
    rounds: int = 100
    local_epochs: int = 5  # with local_optimum: the most epochs a client trains in one round
    local_optimum: bool = False  # Section 4.3: train to the local optimum before every aggregation
    augment: bool = False  # random crops (padding 2) and horizontal flips of training images (the paper's appendix)
    batch_size: int = 10
    optimizer: str = "adam"
    lr: float = 1e-3
    same_init: bool = True
    seed: int = 0
    options: dict = field(default_factory=dict)
    device: str = "auto"

    def key(self) -> str:
        d = asdict(self)
        for name, default in ADDED_FIELDS.items():  # fields added later leave older keys (and caches) valid
            if d[name] == default:
                del d[name]
        d["device"] = engine.resolve_device(self.device).type
        method_version = algorithms.REGISTRY[self.method].version if self.method in algorithms.REGISTRY else 1
        if method_version != 1:
            d["method_version"] = method_version
        d["cache_version"] = CACHE_VERSION
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]

    def label(self) -> str:
        opts = ",".join(f"{k}={v}" for k, v in sorted(self.options.items()))
        return f"{self.method}{'(' + opts + ')' if opts else ''} {self.dataset} seed={self.seed}"


# Tables A.3-A.5 (and FashionMNIST in the CIFAR-10 client setting, the stand-in that runs without CIFAR).
PAPER_SETTINGS = {
    "mnist": dict(n_clients=50, classes_per_client=2, train_fraction=0.05, rounds=100, local_epochs=5,
                  batch_size=10, lr=1e-3),
    "cifar10": dict(n_clients=100, classes_per_client=2, train_fraction=1.0, rounds=100, local_epochs=1,
                    batch_size=50, lr=5e-4),
    "cifar100": dict(n_clients=100, classes_per_client=10, train_fraction=1.0, rounds=150, local_epochs=3,
                     batch_size=50, lr=5e-4),
    "fashion_mnist": dict(n_clients=100, classes_per_client=2, train_fraction=1.0, rounds=100, local_epochs=1,
                          batch_size=50, lr=5e-4),
}


def paper_config(dataset: str, method: str, **overrides) -> Config:
    if dataset not in PAPER_SETTINGS:
        raise ValueError(f"no paper setting for {dataset!r}; choose one of {', '.join(PAPER_SETTINGS)}")
    return Config(method=method, dataset=dataset, **{**PAPER_SETTINGS[dataset], **overrides})


def cache_path(cfg: Config) -> Path:
    return results_dir() / cfg.method / f"{cfg.key()}.json"


def write_atomic(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(obj, f)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def setup(cfg: Config):
    """Data, population and algorithm of a config, ready for round 0."""
    device = engine.resolve_device(cfg.device)
    if cfg.dataset == "circle":
        fed = data.circle_federation(n_train=cfg.n_train or 80, seed=cfg.seed)
    elif cfg.dataset in leaf.LEAF_DATASETS:  # natural partition: one client per user (n_clients: users sampled)
        fed = leaf.load_leaf(cfg.dataset, seed=cfg.seed, n_clients=cfg.n_clients)
    else:
        ds = data.load_dataset(cfg.dataset)
        fed = data.make_federation(ds, cfg.partition, cfg.n_clients, cfg.seed, classes_per_client=cfg.classes_per_client,
                                   alpha=cfg.dirichlet_alpha, train_fraction=cfg.train_fraction)
    fed.train, fed.test = fed.train.to(device), fed.test.to(device)
    model = models.default_model(cfg.dataset) if cfg.model == "auto" else cfg.model
    g = torch.Generator().manual_seed(cfg.seed)
    archs = models.client_architectures(model, fed.n_clients, g)
    torch.manual_seed(cfg.seed)
    built: dict[str, models.BodyHead] = {}
    client_models = []
    for arch in archs:  # same_init: one initialisation per architecture; otherwise one per client
        if cfg.same_init and arch in built:
            client_models.append(built[arch])
        else:
            built[arch] = models.build(arch, fed.input_shape, fed.num_classes)
            client_models.append(built[arch])
    pop = engine.Population.create(client_models, same_init=cfg.same_init, device=device)
    ctx = algorithms.Context(fed, pop, cfg.optimizer, cfg.lr, cfg.local_epochs, cfg.batch_size, cfg.seed, cfg.rounds,
                             until_converged=cfg.local_optimum, augment=cfg.augment)
    alg = algorithms.make(cfg.method, **cfg.options)
    alg.init(ctx)
    return ctx, alg


def run(cfg: Config, cache: bool = True, progress: bool = True) -> dict:
    """Run (or load) one experiment. Returns {"config", "rounds": {metric: [per round]}, "client_acc", ...}."""
    path = cache_path(cfg)
    if cache and path.exists():
        return json.loads(path.read_text())
    ctx, alg = setup(cfg)
    torch.manual_seed(cfg.seed)  # dropout draws from the global generator
    ledger = Ledger()
    rows = {k: [] for k in ("acc_mean", "acc_all", "loss", "train_loss", "up_bits", "down_bits", "seconds")}
    t_start = time.perf_counter()
    bar = tqdm(range(cfg.rounds), desc=cfg.label(), leave=False, disable=not progress)
    for rnd in bar:
        t0 = time.perf_counter()
        ledger.new_round()
        down = ledger.record(alg.configure(rnd))
        up = ledger.record(alg.client_update(rnd, down))
        alg.aggregate(rnd, up)
        ev = engine.evaluate_population(alg.population, ctx.fed.test)
        acc = (ev["correct"] / ev["count"].clamp(min=1)).cpu()
        train_loss = float(alg.train_loss.mean())
        test_loss = float((ev["loss"].sum() / ev["count"].sum()).cpu())
        if not (math.isfinite(train_loss) and math.isfinite(test_loss)):
            raise DivergenceError(f"{cfg.label()} diverged in round {rnd} (train loss {train_loss}, test loss "
                                  f"{test_loss}); lower the learning rate (lr={cfg.lr}) or check the data")
        rows["acc_mean"].append(float(acc.mean()))
        rows["acc_all"].append(float((ev["correct"].sum() / ev["count"].sum()).cpu()))
        rows["loss"].append(test_loss)
        rows["train_loss"].append(train_loss)
        rows["up_bits"].append(ledger.up[-1])
        rows["down_bits"].append(ledger.down[-1])
        rows["seconds"].append(time.perf_counter() - t0)
        bar.set_postfix(acc=f"{rows['acc_mean'][-1]:.4f}")
    result = {"config": asdict(cfg), "key": cfg.key(), "rounds": rows, "client_acc": acc.tolist(),
              "wall_s": time.perf_counter() - t_start, "device": engine.resolve_device(cfg.device).type,
              "torch": torch.__version__}
    if cache:
        write_atomic(path, result)
    return result


def run_many(configs: list[Config], cache: bool = True, progress: bool = True) -> list[dict]:
    """Run a sweep (finished runs come from the cache) and return every result. The backend is local unless
    FEDLIB_SWEEP_BACKEND=ray (see `fedlib.sweep`); if a run fails, the others still finish and are cached,
    then this raises with the failures listed."""
    if not cache:
        return [run(cfg, cache=False, progress=progress) for cfg in configs]
    from .sweep import run_sweep

    report = run_sweep(configs, progress=progress)
    report.raise_if_failed()
    return report.results


def dataset_available(name: str) -> bool:
    """Whether a dataset's files are here (LEAF: its json folders); if not, print why, so a notebook can report the
    dataset as missing instead of failing."""
    try:
        leaf.find_leaf_root(name) if name in leaf.LEAF_DATASETS else data.load_dataset(name)
        return True
    except data.DatasetNotFound as err:
        print(f"{name}: files missing, not run. {err}")
        return False


def is_cached(cfg: Config) -> bool:
    return cache_path(cfg).exists()


__all__ = ["Config", "PAPER_SETTINGS", "paper_config", "run", "run_many", "setup", "cache_path", "is_cached",
           "dataset_available", "DivergenceError"]
