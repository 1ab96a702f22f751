"""An experiment's `Config` and its cache key.

The key is a hash of every field, the cache version and the method's version. Fields added later are
hashed only when set to something other than their default (`ADDED_FIELDS`), so every key made before
they existed stays valid (tests/test_reference_numbers.py pins the Table 1 keys).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

from . import algorithms, engine

CACHE_VERSION = 1  # bump when a change alters the numbers every config produces
# Config fields added after CACHE_VERSION 1 -> their default; hashed only when set to something else
ADDED_FIELDS: dict = {"local_optimum": False, "augment": False, "participation": 1.0, "lr_decay": 1.0,
                      "momentum": 0.0, "weight_decay": 0.0, "final_finetune_epochs": 0, "pool_split": 0.0,
                      "server_fraction": 0.0}


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
    participation: float = 1.0  # fraction of the clients chosen each round (at least one)
    lr_decay: float = 1.0  # local learning rate of round t: lr * lr_decay^t
    momentum: float = 0.0  # SGD only
    weight_decay: float = 0.0
    final_finetune_epochs: int = 0  # after the last round: every client trains its personal parameters alone
    pool_split: float = 0.0  # > 0: pool the official train and test sets, split each client's share train:test
    server_fraction: float = 0.0  # > 0: a stratified clean share of the training pool held by the server

    def __post_init__(self):
        checks = {"participation": 0 < self.participation <= 1, "lr_decay": 0 < self.lr_decay <= 1,
                  "momentum": 0 <= self.momentum < 1, "weight_decay": self.weight_decay >= 0,
                  "final_finetune_epochs": int(self.final_finetune_epochs) == self.final_finetune_epochs >= 0,
                  "pool_split": self.pool_split == 0 or 0 < self.pool_split < 1,
                  "server_fraction": 0 <= self.server_fraction < 1}
        ranges = {"participation": "(0, 1]", "lr_decay": "(0, 1]", "momentum": "[0, 1)", "weight_decay": ">= 0",
                  "final_finetune_epochs": "an integer >= 0", "pool_split": "0 (off) or (0, 1)",
                  "server_fraction": "[0, 1)"}
        for name, ok in checks.items():
            if not ok:
                raise ValueError(f"Config.{name} must be {ranges[name]}, got {getattr(self, name)!r}")
        if self.momentum and self.optimizer != "sgd":
            raise ValueError(f"Config.momentum is for optimizer='sgd'; got optimizer={self.optimizer!r}")

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
