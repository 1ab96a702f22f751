"""FedRD's protocol (Sec. V.A): the Config of one run (FedDM, FedProx and FedNova as its baselines), and every
choice the paper leaves open."""
from __future__ import annotations


# Sec. V.A: 10 clients, all of them every round, 20 rounds, each dataset's train and test sets pooled, split over
# the clients by per-class Dirichlet(0.1) and 8:2 into train/test on each; the task model is DM's ConvNet. The
# model-averaging baselines' settings are "chosen for the optimal performance" (none given): SEARCHED holds
# the best of GRID on seed 0 at the quick scale (scripts/fedrd_search.py, figures/fedrd_search.csv).
METHODS = {  # label -> (method, options)
    "FedAvg": ("fedavg", {"weighted": True}), "FedProx": ("fedprox", {}), "FedNova": ("fednova", {}),
    "FedDM": ("feddm", {}), "FedRD": ("fedrd", {}),
}
AVERAGING = dict(optimizer="sgd", lr=0.01, momentum=0.9, batch_size=64, local_epochs=5)
PROJECTION = dict(optimizer="adam", lr=0.01, batch_size=256, local_epochs=10)  # FedRD's Eq. 2 training
GRID = dict(lr=(0.1, 0.05, 0.01), momentum=(0.0, 0.9), local_epochs=(1, 5))  # spec 2.4, per baseline
MU_GRID = (0.001, 0.01, 0.1, 1.0)  # FedProx's mu, searched at FedProx's best lr, momentum and epochs
SEARCHED = {  # label -> Config fields (and FedProx's mu): the search's best final accuracy (FashionMNIST, seed 0)
    "FedAvg": dict(lr=0.1, momentum=0.0, local_epochs=5),  # 71.51%
    "FedProx": dict(lr=0.1, momentum=0.0, local_epochs=5, mu=0.01),  # 72.41%
    "FedNova": dict(lr=0.01, momentum=0.9, local_epochs=1),  # 75.41%
}
SHOWN = {"fashion_mnist": "FashionMNIST", "mnist": "MNIST (loose stand-in for SVHN)", "cifar10": "CIFAR-10",
         "cifar100": "CIFAR-100"}  # our dataset -> as notebook 07 names it, and its column in the paper:
PAPER_NAME = {"fashion_mnist": "fashion_mnist", "mnist": "svhn", "cifar10": "cifar10", "cifar100": "cifar100"}


def config(dataset: str, label: str, *, seed: int, rounds: int = 20, width: int = 128, options: dict | None = None,
           model: str | None = None, **over):
    """The Config of one run of FedRD's protocol: `label` from METHODS; `width` the ConvNet's filters (the
    paper's 128); `options` join the label's; `over` overrides Config fields (e.g. a baseline's searched lr), which
    otherwise come from SEARCHED; `model` replaces the default (e.g. FedRD's projection depth or d')."""
    from ...config import Config

    if label not in METHODS:
        raise ValueError(f"unknown FedRD-protocol label {label!r}; choose from {', '.join(METHODS)}")
    method, fixed = METHODS[label]
    model = model or (f"fedrd_proj2_convnet{width}" if method == "fedrd" else f"convnet{width}")
    local = PROJECTION if method in ("fedrd", "feddm") else AVERAGING
    searched = {k: v for k, v in SEARCHED.get(label, {}).items() if k != "mu"}
    fields = dict(n_clients=10, train_fraction=1.0, pool_split=0.8, partition="dirichlet", dirichlet_alpha=0.1,
                  participation=1.0, fast_engine=True, skip_finished=True, **{**local, **searched})
    fields.update(over)
    fixed = {**fixed, **({"mu": SEARCHED[label]["mu"]} if "mu" in SEARCHED.get(label, {}) else {})}
    return Config(method=method, dataset=dataset, model=model, seed=seed, rounds=rounds,
                  options={**fixed, **(options or {})}, **fields)


DPC_RGB = 30  # Sec. V.A: FedRD's samples per class on SVHN, CIFAR-10 and CIFAR-100 (FedDM keeps 10), so that
# its uplink of one-channel 32 x 32 representations equals FedDM's of three-channel images
RGB_DATASETS = ("svhn", "cifar10", "cifar100")
