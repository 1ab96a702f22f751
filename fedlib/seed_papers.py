"""The seed papers' reported numbers, in one place (FedLog's own are in `paper`). Accuracies in percent.

FedCR (Zhang et al., ICML 2023; seeds/001): Table 2 (100 clients, 10% participation, mean over 3 seeds; partitions
"n1" = 5 classes per client (15 for CIFAR-100), "n2" = per-client Dirichlet priors), the standard deviations of
FedCR's row (Table 10), Table 3 (Gaussian dimension V, non-iid_1) and Table 9 (no model aggregation, CIFAR-100).
FedRD (Zhang, Huang and Li; seeds/002): Table I (10 clients, Dirichlet 0.1, 20 rounds; mean and std), Table II (DP,
CIFAR-10), Table III (random against real initialisation) and Table IV (FedRD on CIFAR-10 against the
representation size; its caption says FedDM, the text FedRD). FedProf's numbers join when its issue lands.
"""

FEDCR_TABLE2 = {  # (dataset, partition) -> method -> accuracy; partitions "n1" (5 classes/client; 15 CIFAR-100), "n2" (Dirichlet)
    ("emnist_l", "n1"): {"FedAvg": 95.89, "FedAvg-FT": 96.32, "FedPer": 96.13, "LG-FedAvg": 88.44, "FedRep": 96.19,
                         "FedBABU": 96.22, "Ditto": 96.60, "FedSR-FT": 86.22, "FedPAC": 96.97, "FedCR": 97.47},
    ("emnist_l", "n2"): {"FedAvg": 94.57, "FedAvg-FT": 95.78, "FedPer": 94.67, "LG-FedAvg": 85.59, "FedRep": 94.66,
                         "FedBABU": 94.88, "Ditto": 96.30, "FedSR-FT": 84.71, "FedPAC": 96.43, "FedCR": 96.98},
    ("fashion_mnist", "n1"): {"FedAvg": 88.15, "FedAvg-FT": 92.76, "FedPer": 88.91, "LG-FedAvg": 86.86, "FedRep": 89.78,
                              "FedBABU": 89.21, "Ditto": 92.03, "FedSR-FT": 85.55, "FedPAC": 93.45, "FedCR": 93.78},
    ("fashion_mnist", "n2"): {"FedAvg": 88.63, "FedAvg-FT": 91.70, "FedPer": 86.35, "LG-FedAvg": 85.44, "FedRep": 88.90,
                              "FedBABU": 89.18, "Ditto": 91.75, "FedSR-FT": 85.45, "FedPAC": 92.15, "FedCR": 93.00},
    ("cifar10", "n1"): {"FedAvg": 76.83, "FedAvg-FT": 83.65, "FedPer": 73.73, "LG-FedAvg": 61.37, "FedRep": 78.10,
                        "FedBABU": 73.60, "Ditto": 83.25, "FedSR-FT": 61.47, "FedPAC": 85.03, "FedCR": 84.74},
    ("cifar10", "n2"): {"FedAvg": 76.34, "FedAvg-FT": 83.20, "FedPer": 69.36, "LG-FedAvg": 61.53, "FedRep": 71.98,
                        "FedBABU": 69.37, "Ditto": 82.81, "FedSR-FT": 60.96, "FedPAC": 84.07, "FedCR": 84.26},
    ("cifar100", "n1"): {"FedAvg": 32.08, "FedAvg-FT": 54.42, "FedPer": 39.5, "LG-FedAvg": 44.48, "FedRep": 44.62,
                         "FedBABU": 44.00, "Ditto": 58.40, "FedSR-FT": 40.82, "FedPAC": 58.65, "FedCR": 62.96},
    ("cifar100", "n2"): {"FedAvg": 32.19, "FedAvg-FT": 41.46, "FedPer": 25.48, "LG-FedAvg": 28.23, "FedRep": 24.70,
                         "FedBABU": 26.15, "Ditto": 41.85, "FedSR-FT": 24.56, "FedPAC": 43.25, "FedCR": 44.06},
}
FEDCR_TABLE10_FEDCR_SD = {"emnist_l": (0.18, 0.35), "fashion_mnist": (0.55, 0.23), "cifar10": (0.63, 0.26),
                          "cifar100": (0.93, 0.64)}  # (n1, n2); Table 10 has +- for every row (see seeds/001 line ~410)
FEDCR_TABLE3 = {  # V -> (EMNIST-L, FMNIST, CIFAR-10, CIFAR-100), non-iid_1
    512: (97.39, 93.78, 84.50, 62.96), 256: (97.47, 93.57, 84.74, 61.78), 128: (97.34, 93.50, 84.55, 57.57),
    64: (96.83, 93.34, 84.43, 54.35), 32: (96.77, 93.45, 84.41, 53.58), 16: (97.22, 93.27, 84.07, 49.98),
    8: (97.02, 93.51, 84.54, 41.37), 4: (95.82, 92.07, 82.13, 31.28), 2: (90.46, 82.51, 67.86, 21.65)}
FEDCR_TABLE9 = {10: {"Local": 52.44, "FedAvg": 35.51, "FedPer": 54.98, "FedCR-NA": 55.87},
                15: {"Local": 40.99, "FedAvg": 34.08, "FedPer": 39.5, "FedCR-NA": 44.45},
                20: {"Local": 28.33, "FedAvg": 31.89, "FedPer": 37.03, "FedCR-NA": 37.16}}  # CIFAR-100, classes/client

FEDRD_TABLE1 = {  # dataset -> method -> (mean, std)
    "fashion_mnist": {"FedAvg": (82.25, 0.53), "FedProx": (84.27, 0.58), "FedNova": (81.15, 1.38), "FedDM": (91.35, 0.51),
                      "FedRD": (96.16, 0.13)},
    "svhn": {"FedAvg": (85.56, 0.52), "FedProx": (86.26, 0.59), "FedNova": (84.34, 0.73), "FedDM": (85.55, 0.92),
             "FedRD": (87.86, 0.35)},
    "cifar10": {"FedAvg": (58.13, 1.01), "FedProx": (56.94, 0.48), "FedNova": (60.28, 2.47), "FedDM": (66.98, 0.55),
                "FedRD": (78.07, 0.82)},
    "cifar100": {"FedAvg": (25.67, 0.21), "FedProx": (25.64, 0.32), "FedNova": (24.49, 0.91), "FedDM": (34.93, 0.24),
                 "FedRD": (40.46, 0.51)}}
FEDRD_TABLE2 = {"eps": (10, 1.1, 0.4), "sigma_dd": (1, 3, 5), "sigma_avg": (0.5, 1.5, 2.5),  # CIFAR-10
                "FedAvg": (46.06, 40.93, 38.98), "FedProx": (46.53, 41.31, 37.47), "FedNova": (50.09, 42.91, 40.66),
                "FedDM": (54.51, 53.02, 52.82), "FedRD": (60.96, 55.51, 54.88)}
FEDRD_TABLE3 = {  # (FMNIST, SVHN, CIFAR-10, CIFAR-100)
    "FedAvg": (82.25, 85.56, 58.13, 25.67), "FedDM(random)": (89.76, 80.28, 58.04, 31.44),
    "FedDM(real)": (91.35, 85.55, 66.98, 34.93), "FedRD(random)": (95.98, 82.91, 69.84, 38.37),
    "FedRD(real)": (96.16, 87.86, 78.07, 40.46)}
FEDRD_TABLE4 = {"sqrt_d": (8, 16, 24, 32, 40, 48), "com_cost_MB": (1.46, 5.84, 13.14, 23.36, 36.5, 52.56),
                "accuracy": (51.66, 71.96, 75.06, 78.07, 78.69, 80.05)}  # FedRD, CIFAR-10 (caption says FedDM)
FEDPROF_TABLE3 = {  # L-Task (EMNIST digits), (aggregation, C) -> method -> (best acc %, rounds, time s, energy Wh) to 90%
    ("full", 0.05): {"FedAvg": (90.6, 213, 10407.30, 60.01), "CFCFM": (92.3, 251, 8645.17, 61.37), "FedProf": (92.6, 98, 4846.15, 28.22)},
    ("full", 0.1): {"FedAvg": (92.9, 76, 3894.26, 43.16), "CFCFM": (93.2, 75, 2675.56, 37.62), "FedProf": (94.5, 45, 2295.03, 25.98)},
    ("partial", 0.05): {"FedAvg-RP": (93.7, 12, 572.90, 3.29), "FedProx": (93.6, 13, 640.01, 3.58), "FedAdam": (94.0, 12, 599.96, 3.47),
                        "AFL": (95.2, 10, 479.73, 2.73), "FedProf": (96.2, 8, 383.94, 2.26)},
    ("partial", 0.1): {"FedAvg-RP": (93.8, 12, 603.94, 6.57), "FedProx": (94.2, 11, 559.16, 5.91), "FedAdam": (93.9, 12, 608.85, 6.76),
                       "AFL": (94.4, 9, 476.62, 5.26), "FedProf": (96.2, 8, 413.16, 4.64)}}
FEDPROF_TABLE2 = {  # S-Task (GasTurbine), target 80%
    ("full", 0.2): {"FedAvg": (80.5, 56, 2869.66, 2.87), "CFCFM": (80.6, 39, 1230.81, 1.61), "FedProf": (82.4, 16, 803.74, 0.80)},
    ("full", 0.3): {"FedAvg": (80.6, 52, 3160.01, 4.12), "CFCFM": (80.2, 42, 1495.34, 2.91), "FedProf": (82.7, 12, 701.18, 0.94)},
    ("partial", 0.2): {"FedAvg-RP": (81.9, 13, 735.48, 0.71), "FedProx": (82.1, 16, 899.93, 0.79), "FedAdam": (81.8, 8, 438.20, 0.42),
                       "AFL": (81.6, 6, 313.81, 0.30), "FedProf": (84.4, 5, 283.76, 0.27)},
    ("partial", 0.3): {"FedAvg-RP": (81.7, 8, 466.90, 0.64), "FedProx": (81.0, 16, 841.65, 1.08), "FedAdam": (81.9, 12, 667.00, 0.94),
                       "AFL": (81.3, 6, 298.81, 0.42), "FedProf": (84.1, 4, 235.22, 0.35)}}

# ----------------------------------------------------------------------------------------------- FedCR's protocol
# Sec. 5.1 and Table 4: each dataset's train and test sets pooled, 100 equal clients split 70/30, 10% participation,
# 10 local epochs of SGD with batch 48, and every client's 10-epoch fine-tune of its personal part after the last
# round (the authors' "last" round), for every method that has one (see NO_FINETUNE).
FEDCR_METHODS = {  # label -> (method, options, whether the body ends in FedCR's Gaussian layer)
    "FedAvg": ("fedavg", {}, False),  # read before the fine-tune; "FedAvg-FT" is the same run after it
    "FedPer": ("fedper", {"local_layers": 1}, False),  # only the head local, as the authors' w_glob_keys
    "LG-FedAvg": ("lg_fedavg", {"global_layers": 2}, False),  # the authors' global keys: the last two layers
    "FedRep": ("fedrep", {"local_layers": 1, "head_epochs": 9, "body_epochs": 1}, False),  # the authors' 9 + 1 epochs
    "FedBabu (frozen head)": ("fedbabu", {}, False),  # the real FedBABU; the paper's "FedBABU" row is FedPer's code
    "Ditto": ("ditto", {}, False),  # lam: chosen on seed 0 from Ditto's grid by the notebook
    "FedCR": ("fedcr", {}, True),
    "FedCR-NA": ("fedcr_na", {}, True),  # Sec. 4.4: only the class Gaussians travel
    "Local": ("local", {}, False),  # Table 9's Local-Training: no communication
    "FedLog": ("fedlog", {}, False),  # also shares only per-class statistics
}
# The authors' learning rates (their README's run commands; SGD, no momentum): 0.01 for the model-averaging baselines,
# 0.5 for Ditto (with mu = 0.1, our lam), 0.05 for FedCR. Local training, FedCR-NA's twin, and FedLog (not in their
# code) take FedCR's. Every method's local step clips each client's gradient to norm 10 (their train_cnn, max_norm).
FEDCR_LR = {"FedAvg": 0.01, "FedPer": 0.01, "LG-FedAvg": 0.01, "FedRep": 0.01, "FedBabu (frozen head)": 0.01,
            "Ditto": 0.5, "FedCR": 0.05, "FedCR-NA": 0.05, "Local": 0.05, "FedLog": 0.05}
FEDCR_CLIP = 10.0
NO_FINETUNE = {"fedlog"}  # FedLog's personal body trains every round with its own loss, and its head is the
# posterior's (a cross-entropy fine-tune of its body at FedCR's lr diverged). Ditto's "fine-tune" is the authors'
# final round: one more round in which every client trains both its models (`Ditto.final_round`).
FEDCR_PARTITIONS = {"n1": dict(partition="pathological"),  # k classes per client, equal amounts (FedCR: 5)
                    "n2": dict(partition="dirichlet_client", dirichlet_alpha=0.5)}  # per-client Dir(0.5) priors
FEDCR_BODIES = {"fashion_mnist": "fedcr_cnn", "mnist": "fedcr_mlp"}  # MNIST stands in for EMNIST-L: its MLP


def fedcr_config(dataset: str, label: str, partition: str, *, seed: int, rounds: int, width: int, dim: int,
                 lr: float | None = None, classes: int = 5, options: dict | None = None, **over):
    """The Config of one run of FedCR's protocol: `label` from FEDCR_METHODS, `partition` "n1" (`classes` per
    client) or "n2", bodies of `width` hidden units (FMNIST: the authors' CNN; MNIST: the EMNIST-L MLP) ending, for
    FedCR, in a Gaussian layer of dimension `dim`; `lr` defaults to the authors' rate for the label (FEDCR_LR).
    `options` join the label's; `over` overrides Config fields."""
    from .config import Config

    if label not in FEDCR_METHODS:
        raise ValueError(f"unknown FedCR-protocol label {label!r}; choose from {', '.join(FEDCR_METHODS)}")
    if dataset not in FEDCR_BODIES:
        raise ValueError(f"FedCR's protocol here runs on {', '.join(FEDCR_BODIES)}, not {dataset!r}")
    if partition not in FEDCR_PARTITIONS:
        raise ValueError(f"FedCR's partitions are {', '.join(FEDCR_PARTITIONS)}, not {partition!r}")
    method, fixed, gaussian = FEDCR_METHODS[label]
    model = f"{FEDCR_BODIES[dataset]}{width}" + (f"_v{dim}" if gaussian else "")
    fields = dict(n_clients=100, train_fraction=1.0, pool_split=0.7, participation=0.1, local_epochs=10,
                  batch_size=48, optimizer="sgd", clip_grad_norm=FEDCR_CLIP,
                  final_finetune_epochs=0 if method in NO_FINETUNE else 10, classes_per_client=classes,
                  **FEDCR_PARTITIONS[partition])
    fields.update(over)
    return Config(method=method, dataset=dataset, model=model, seed=seed, rounds=rounds,
                  lr=FEDCR_LR[label] if lr is None else lr, options={**fixed, **(options or {})}, **fields)


# ----------------------------------------------------------------------------------------------- notebook 06's profiles
FEDCR_TINY = dict(n_clients=10, participation=0.5, local_epochs=1, train_fraction=0.01)
FEDCR_PROFILES = {  # notebook 06, per profile (its parts; see the notebook)
    "smoke": dict(model=dict(width=64, dim=8), samples=(2, 2), seeds=[0], rounds=2, over=FEDCR_TINY,
                  columns=[("fashion_mnist", "n1")], ditto_grid=[0.1],
                  dims=[2, 8], betas=[0.0, 5e-4], beta_sets=["fashion_mnist"],
                  fig2=dict(rounds=2, epochs=1, points=100, over=FEDCR_TINY),
                  table9=dict(ks=[3], rounds=2), table1=dict(seeds=[0], rounds=2,
                                                              over=dict(n_clients=10, train_fraction=0.02,
                                                                        local_epochs=1))),
    "quick": dict(model=dict(width=256, dim=64), samples=(4, 8), seeds=[0], rounds=20,
                  over=dict(train_fraction=0.1),  # 10% of the pool: 49 train / 21 test images per client
                  columns=[("fashion_mnist", "n1"), ("fashion_mnist", "n2"), ("mnist", "n1"), ("mnist", "n2")],
                  ditto_grid=[0.1, 1.0], dims=[2, 4, 16, 64], betas=[0.0, 5e-4, 5e-3],
                  beta_sets=["fashion_mnist"],  # quick: FashionMNIST only (the paper profile adds MNIST)
                  fig2=dict(rounds=20, epochs=10, points=200, over=dict(train_fraction=0.2)),
                  table9=dict(ks=[5, 7], rounds=20), table1=dict(seeds=[0], rounds=5, over={})),
    "paper": dict(  # Ditto: the authors' mu = 0.1 (their README), no grid
        model=dict(width=1024, dim=512), samples=(18, 18), seeds=[0, 1, 2], rounds=250, over={},
                  columns=[(d, p) for d in ("fashion_mnist", "mnist", "cifar10", "cifar100") for p in ("n1", "n2")],
                  ditto_grid=[0.1], dims=[2, 4, 8, 16, 32, 64, 128, 256, 512],
                  betas=[0.0, 1e-4, 5e-4, 1e-3, 5e-3, 1e-2], beta_sets=["fashion_mnist", "mnist"],
                  fig2=dict(rounds=20, epochs=10, points=200, over={}),
                  table9=dict(ks=[3, 5, 7], rounds=250), table1=dict(seeds=list(range(5)), rounds=100, over={})),
}


def fedcr_run(profile: str, dataset: str, label: str, part: str, seed: int, dim: int | None = None,
              beta: float | None = None, lam: float | None = None, rounds: int | None = None, **over):
    """One run of notebook 06 (FedCR's protocol) at `profile`'s model size (FEDCR_PROFILES); `dim`, `beta` (FedCR)
    and `lam` (Ditto) override."""
    S = FEDCR_PROFILES[profile]
    options = {}
    if label.startswith("FedCR"):
        options = dict(train_samples=S["samples"][0], eval_samples=S["samples"][1])
        if beta is not None:
            options["beta"] = beta
    if label == "Ditto":
        options["lam"] = lam
    m = S["model"]
    return fedcr_config(dataset, label, part, seed=seed, rounds=rounds or S["rounds"], width=m["width"],
                        dim=dim or m["dim"], options=options, **{**S["over"], **over})


def fedcr_table1_run(profile: str, method: str, seed: int):
    """Notebook 06's part G: FedCR or FedCR-NA in FedLog's MNIST Table 1 setting, Table A.2's CNN with a Gaussian
    layer."""
    from .paper import paper_config

    S = FEDCR_PROFILES[profile]
    g = S["table1"]
    return paper_config("mnist", method, model="cnn_mnist_vib_v50", seed=seed, rounds=g["rounds"],
                        options=dict(train_samples=S["samples"][0], eval_samples=S["samples"][1]), **g["over"])


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
    mu, y = alg.client_view(client, epochs, points)
    return dict(client=client, classes=int(held[client]), mu=mu.numpy(), y=y.numpy())


# ----------------------------------------------------------------------------------------------- FedRD's protocol
# Sec. V.A: 10 clients, all of them every round, 20 rounds, each dataset's train and test sets pooled, split over
# the clients by per-class Dirichlet(0.1) and 8:2 into train/test on each; the task model is DM's ConvNet. The
# model-averaging baselines' settings are "chosen for the optimal performance" (none given): FEDRD_SEARCHED holds
# the best of FEDRD_GRID on seed 0 at the quick scale (scripts/fedrd_search.py, figures/fedrd_search.csv).
FEDRD_METHODS = {  # label -> (method, options)
    "FedAvg": ("fedavg", {"weighted": True}), "FedProx": ("fedprox", {}), "FedNova": ("fednova", {}),
    "FedDM": ("feddm", {}), "FedRD": ("fedrd", {}),
}
FEDRD_AVERAGING = dict(optimizer="sgd", lr=0.01, momentum=0.9, batch_size=64, local_epochs=5)
FEDRD_PROJECTION = dict(optimizer="adam", lr=0.01, batch_size=256, local_epochs=10)  # FedRD's Eq. 2 training
FEDRD_GRID = dict(lr=(0.1, 0.05, 0.01), momentum=(0.0, 0.9), local_epochs=(1, 5))  # spec 2.4, per baseline
FEDRD_MU_GRID = (0.001, 0.01, 0.1, 1.0)  # FedProx's mu, searched at FedProx's best lr, momentum and epochs
FEDRD_SEARCHED = {  # label -> Config fields (and FedProx's mu): the search's best final accuracy (FashionMNIST, seed 0)
    "FedAvg": dict(lr=0.1, momentum=0.0, local_epochs=5),  # 71.51%
    "FedProx": dict(lr=0.1, momentum=0.0, local_epochs=5, mu=0.01),  # 72.41%
    "FedNova": dict(lr=0.01, momentum=0.9, local_epochs=1),  # 75.41%
}

# The protocol's size per notebook profile. Paper: Sec. V.A (ConvNet-128, T = 1000 matching steps on real batches
# of 256, 500 server epochs, 10 projection epochs at batch 256, 20 rounds). Quick: one FashionMNIST round at the
# paper's size is GPU work (a matching step of ConvNet-32 on 5% of the data takes 4.4 s on one CPU core), so the
# quick scale keeps the protocol and shrinks everything else to fit 10 minutes on 2 cores. With 2% of the data a
# client holds about 110 images, one batch of 256: the projection's batch shrinks with the data (32), so that its
# Adam steps per round stay in the tens (the paper's: about 220).
FEDRD_SCALES = {
    "smoke": dict(width=8, rounds=2, over=dict(n_clients=4, train_fraction=0.01, local_epochs=1), proj_epochs=1,
                  proj_batch=16,
                  dm=dict(dpc=2, iterations=5, real_batch=16, server_epochs=2)),
    "quick": dict(width=16, rounds=5, over=dict(train_fraction=0.02), proj_epochs=2, proj_batch=32,
                  dm=dict(dpc=10, iterations=10, real_batch=64, server_epochs=20)),
    "paper": dict(width=128, rounds=20, over={}, proj_epochs=10, proj_batch=256,
                  dm=dict(dpc=10, iterations=1000, real_batch=256, server_epochs=500)),
}


def fedrd_config(dataset: str, label: str, *, seed: int, rounds: int = 20, width: int = 128, options: dict | None = None,
                 model: str | None = None, **over):
    """The Config of one run of FedRD's protocol: `label` from FEDRD_METHODS; `width` the ConvNet's filters (the
    paper's 128); `options` join the label's; `over` overrides Config fields (e.g. a baseline's searched lr), which
    otherwise come from FEDRD_SEARCHED; `model` replaces the default (e.g. FedRD's projection depth or d')."""
    from .config import Config

    if label not in FEDRD_METHODS:
        raise ValueError(f"unknown FedRD-protocol label {label!r}; choose from {', '.join(FEDRD_METHODS)}")
    method, fixed = FEDRD_METHODS[label]
    model = model or (f"fedrd_proj2_convnet{width}" if method == "fedrd" else f"convnet{width}")
    local = FEDRD_PROJECTION if method in ("fedrd", "feddm") else FEDRD_AVERAGING
    searched = {k: v for k, v in FEDRD_SEARCHED.get(label, {}).items() if k != "mu"}
    fields = dict(n_clients=10, train_fraction=1.0, pool_split=0.8, partition="dirichlet", dirichlet_alpha=0.1,
                  participation=1.0, **{**local, **searched})
    fields.update(over)
    fixed = {**fixed, **({"mu": FEDRD_SEARCHED[label]["mu"]} if "mu" in FEDRD_SEARCHED.get(label, {}) else {})}
    return Config(method=method, dataset=dataset, model=model, seed=seed, rounds=rounds,
                  options={**fixed, **(options or {})}, **fields)


FEDRD_DPC_RGB = 30  # Sec. V.A: FedRD's samples per class on SVHN, CIFAR-10 and CIFAR-100 (FedDM keeps 10), so that
# its uplink of one-channel 32 x 32 representations equals FedDM's of three-channel images
RGB_DATASETS = ("svhn", "cifar10", "cifar100")


def fedrd_scaled(dataset: str, label: str, profile: str, *, seed: int, options: dict | None = None,
                 rounds: int | None = None, **over):
    """fedrd_config at a profile's scale (FEDRD_SCALES): its width, rounds and data fraction, and for FedDM and FedRD
    its matching steps, real batch, server epochs and (FedRD) projection epochs and batch; in the paper profile FedRD
    condenses FEDRD_DPC_RGB samples per class on the three-channel datasets. `options` and `over` go last."""
    scale = FEDRD_SCALES[profile]
    method = FEDRD_METHODS[label][0] if label in FEDRD_METHODS else None
    opts = dict(scale["dm"]) if method in ("feddm", "fedrd") else {}
    if method == "fedrd" and profile == "paper" and dataset in RGB_DATASETS:
        opts["dpc"] = FEDRD_DPC_RGB
    projection = {"local_epochs": scale["proj_epochs"], "batch_size": scale["proj_batch"]} if method == "fedrd" else {}
    fields = dict(scale["over"], **projection)
    return fedrd_config(dataset, label, seed=seed, rounds=rounds or scale["rounds"], width=scale["width"],
                        options={**opts, **(options or {})}, **{**fields, **over})


def fedrd_search_configs(dataset: str, profile: str = "quick", prox_at: dict | None = None) -> dict[tuple, object]:
    """The baselines' search on seed 0: (label, lr, momentum, local_epochs, mu) -> Config over FEDRD_GRID (FedProx at
    its default mu); with `prox_at` (FedProx's best fields), FedProx's mu grid there."""
    out = {}
    if prox_at is None:
        for label in ("FedAvg", "FedProx", "FedNova"):
            for lr in FEDRD_GRID["lr"]:
                for mom in FEDRD_GRID["momentum"]:
                    for e in FEDRD_GRID["local_epochs"]:
                        mu = 0.01 if label == "FedProx" else None
                        out[(label, lr, mom, e, mu)] = fedrd_scaled(
                            dataset, label, profile, seed=0, lr=lr, momentum=mom, local_epochs=e,
                            options={"mu": mu} if mu else None)
    else:
        for mu in FEDRD_MU_GRID:
            out[("FedProx", prox_at["lr"], prox_at["momentum"], prox_at["local_epochs"], mu)] = fedrd_scaled(
                dataset, "FedProx", profile, seed=0, options={"mu": mu}, **prox_at)
    return out


# ----------------------------------------------------------------------------------------------- FedProf's protocol
# Sec. 5.1's L-Task on MNIST (EMNIST digits are not to be had here): `dominant` partition (60% of each client's
# samples from one class), 15% of the clients with irrelevant images (FashionMNIST), 20% blurred, 25% salt-and-
# pepper (density 0.3), a clean 14.3% of the pool held by the server; Table A.2's CNN, SGD lr 0.01 decayed 0.99 a
# round, 5 local epochs, batch 10 (not given: fedlib's MNIST default), alpha = 10, fc1's pre-activations profiled.
FEDPROF_NOISE = {"irrelevant": 0.15, "blur": 0.20, "saltpepper": 0.25}
FEDPROF_METHODS = {  # label -> (method, options): Table 3's rows that run here
    "FedAvg": ("fedavg", {"aggregation": "full"}),
    "FedProf (full)": ("fedprof", {"aggregation": "full"}),
    "FedAvg-RP": ("fedavg", {"aggregation": "scheme2"}),
    "FedProx": ("fedprox", {"selection": "data", "replace": True, "weighted": False}),
    "FedProf (partial)": ("fedprof", {"aggregation": "partial"}),
}
FEDPROF_CONDITIONS = {  # Fig. 1: FedAvg on MNIST with original, biased, noisy (65% of the clients) and both
    "original": dict(partition="iid", corruption={}),
    "biased": dict(partition="dominant", corruption={}),
    "noisy": dict(partition="iid", corruption={"irrelevant": 0.15, "blur": 0.20, "saltpepper": 0.30}),
    "biased + noisy": dict(partition="dominant", corruption={"irrelevant": 0.15, "blur": 0.20, "saltpepper": 0.30}),
}


def fedprof_config(label: str, participation: float, *, seed: int, rounds: int, n_clients: int = 1000,
                   train_fraction: float = 1.0, options: dict | None = None, **over):
    """The Config of one run of FedProf's L-Task protocol on MNIST: `label` from FEDPROF_METHODS."""
    from .config import Config

    if label not in FEDPROF_METHODS:
        raise ValueError(f"unknown FedProf-protocol label {label!r}; choose from {', '.join(FEDPROF_METHODS)}")
    method, fixed = FEDPROF_METHODS[label]
    fields = dict(dataset="mnist", model="cnn_mnist", partition="dominant", dominant_share=0.6,
                  corruption=dict(FEDPROF_NOISE), server_fraction=0.143, n_clients=n_clients,
                  train_fraction=train_fraction, participation=participation, optimizer="sgd", lr=0.01, lr_decay=0.99,
                  local_epochs=5, batch_size=10)
    fields.update(over)
    return Config(method=method, seed=seed, rounds=rounds, options={**fixed, **(options or {})}, **fields)


# ----------------------------------------------------------------------------------------------- notebook 08's profiles
FEDPROF_PROFILES = {  # notebook 08, per profile
    "smoke": dict(n_clients=20, train_fraction=0.05, fractions=[0.25], full_rounds=3, partial_rounds=3,
                  fig1=dict(rounds=2, participation=0.25), seeds=[0], alphas=[0.0], targets=(0.3, 0.5)),
    "quick": dict(n_clients=100, train_fraction=0.1, fractions=[0.05, 0.1], full_rounds=60, partial_rounds=30,
                  fig1=dict(rounds=30, participation=0.3), seeds=[0], alphas=[0.0], targets=(0.6, 0.8)),
    "paper": dict(n_clients=200, train_fraction=1.0, fractions=[0.05, 0.1], full_rounds=300, partial_rounds=50,
                  fig1=dict(rounds=100, participation=0.3), seeds=[0, 1, 2], alphas=[0.0, 1.0, 100.0],
                  targets=(0.9, 0.95)),
}
FEDPROF_FULL, FEDPROF_PARTIAL = ["FedAvg", "FedProf (full)"], ["FedAvg-RP", "FedProx", "FedProf (partial)"]


def fedprof_run(profile: str, label: str, C: float, seed: int, rounds: int | None = None, **over):
    """One run of notebook 08 at `profile`'s scale (FEDPROF_PROFILES): its clients, data and round counts (partial
    aggregation runs `partial_rounds`, the others `full_rounds`)."""
    S = FEDPROF_PROFILES[profile]
    partial = label in FEDPROF_PARTIAL
    return fedprof_config(label, C, seed=seed, rounds=rounds or S["partial_rounds" if partial else "full_rounds"],
                          n_clients=S["n_clients"], train_fraction=S["train_fraction"], **over)


# Why a notebook's claims have no paper-scale verdict yet (figures/claims.md says so beside each of them); measured
# costs in docs/measurements.md. Remove a notebook's line when its paper profile has been redrawn from archive/.
NOT_AT_PAPER_SCALE = {
    "06_fedcr_common_representation": "its paper runs cost 60 (Table 2 n1), about 60 (n2) and 86 (Table 9) core-hours "
                                      "on the development CPU, one run up to 10 hours; they wait for a GPU "
                                      "(scripts/gpu_check.sh ... paper)",
    "07_fedrd_representation_distillation": "one FashionMNIST run at the paper's size costs more than 22 core-hours on "
                                            "the development CPU; it waits for a GPU",
    "08_fedprof_client_selection": "its paper runs (3.9 core-hours for Table 3, 3.3 for Fig. 1) are being computed "
                                   "by scripts/paper_runs.py and shipped seed by seed",
}
