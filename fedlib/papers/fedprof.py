"""FedProf (Wu et al.; seeds/004), notebook 08: what the paper reports (Table 3, the L-Task; Table 2, the S-Task: best accuracy,
rounds, time and energy to the target), its L-Task protocol's Configs on MNIST and the notebook's profiles."""
from __future__ import annotations

TABLE3 = {  # L-Task (EMNIST digits), (aggregation, C) -> method -> (best acc %, rounds, time s, energy Wh) to 90%
    ("full", 0.05): {"FedAvg": (90.6, 213, 10407.30, 60.01), "CFCFM": (92.3, 251, 8645.17, 61.37), "FedProf": (92.6, 98, 4846.15, 28.22)},
    ("full", 0.1): {"FedAvg": (92.9, 76, 3894.26, 43.16), "CFCFM": (93.2, 75, 2675.56, 37.62), "FedProf": (94.5, 45, 2295.03, 25.98)},
    ("partial", 0.05): {"FedAvg-RP": (93.7, 12, 572.90, 3.29), "FedProx": (93.6, 13, 640.01, 3.58), "FedAdam": (94.0, 12, 599.96, 3.47),
                        "AFL": (95.2, 10, 479.73, 2.73), "FedProf": (96.2, 8, 383.94, 2.26)},
    ("partial", 0.1): {"FedAvg-RP": (93.8, 12, 603.94, 6.57), "FedProx": (94.2, 11, 559.16, 5.91), "FedAdam": (93.9, 12, 608.85, 6.76),
                       "AFL": (94.4, 9, 476.62, 5.26), "FedProf": (96.2, 8, 413.16, 4.64)}}
TABLE2 = {  # S-Task (GasTurbine), target 80%
    ("full", 0.2): {"FedAvg": (80.5, 56, 2869.66, 2.87), "CFCFM": (80.6, 39, 1230.81, 1.61), "FedProf": (82.4, 16, 803.74, 0.80)},
    ("full", 0.3): {"FedAvg": (80.6, 52, 3160.01, 4.12), "CFCFM": (80.2, 42, 1495.34, 2.91), "FedProf": (82.7, 12, 701.18, 0.94)},
    ("partial", 0.2): {"FedAvg-RP": (81.9, 13, 735.48, 0.71), "FedProx": (82.1, 16, 899.93, 0.79), "FedAdam": (81.8, 8, 438.20, 0.42),
                       "AFL": (81.6, 6, 313.81, 0.30), "FedProf": (84.4, 5, 283.76, 0.27)},
    ("partial", 0.3): {"FedAvg-RP": (81.7, 8, 466.90, 0.64), "FedProx": (81.0, 16, 841.65, 1.08), "FedAdam": (81.9, 12, 667.00, 0.94),
                       "AFL": (81.3, 6, 298.81, 0.42), "FedProf": (84.1, 4, 235.22, 0.35)}}


# ----------------------------------------------------------------------------------------------- FedProf's protocol
# Sec. 5.1's L-Task on MNIST (EMNIST digits are not to be had here): `dominant` partition (60% of each client's
# samples from one class), 15% of the clients with irrelevant images (FashionMNIST), 20% blurred, 25% salt-and-
# pepper (density 0.3), a clean 14.3% of the pool held by the server; Table A.2's CNN, SGD lr 0.01 with "learning rate
# decay 0.99" (Table 4), 5 local epochs, batch 10 (not given: fedlib's MNIST default), alpha = 10, fc1's
# pre-activations profiled.
# The unit of the decay is a choice the paper leaves open. DECAY_UNIT = "participation": a client trains at
# 0.01 * 0.99^(the rounds it has trained in before), so full aggregation's 300 rounds keep every client near 0.01
# (it trains 15-30 times). The other reading, "round" (0.01 * 0.99^t, as SAFA's FedAvg code decays it), leaves 5%
# of the rate after 300 rounds and caps full aggregation's progress near 100 C partial rounds; it is kept
# (`decay_unit="round"`) and is what the runs shipped before 2026-11-25 used.
DECAY_UNIT = "participation"
# The model, chosen on seed 0 (2026-11-25; the runs are in archive/fedprof_model_probe_paper.jsonl.gz and
# fedprof_table3_paper.jsonl.gz): Table A.2's CNN with its dropout stays. With per-participation decay it brings
# FedAvg-RP's rounds to 90% from 18-20 to 15 (C = 0.05) and 17 (C = 0.1) and every best accuracy measured to within
# about 1 point of the paper's (FedAvg full 90.77 / 93.06 against 90.6 / 92.9; FedAvg-RP 94.70 / 94.58 against
# 93.7 / 93.8; FedProx 94.58 against 93.6; FedProf partial 96.19 against 96.2). SAFA's CNN (conv20-conv50-fc500,
# `cnn_mnist_safa`), FedProf's likely model, passes the issue's rule (rounds to 90% 9 and 7, no best accuracy lower)
# but overshoots the paper: FedAvg full 93.32 / 95.07 (+2.7 / +2.2 points), FedAvg-RP 96.49 / 96.30 (+2.8 / +2.5),
# FedProx 96.18, FedProf partial 97.31, FedProf full 95.09 (+2.5), and reaches 90% in 7-9 rounds where the paper
# needs 12. MNIST is easier
# than EMNIST digits, so a stronger model moves every row past the paper's; the choice that reproduces the paper's
# numbers is the one kept. `fedprof.run(..., model="cnn_mnist_safa")` runs the other.
MODEL = "cnn_mnist"
NOISE = {"irrelevant": 0.15, "blur": 0.20, "saltpepper": 0.25}
METHODS = {  # label -> (method, options): Table 3's rows that run here
    "FedAvg": ("fedavg", {"aggregation": "full"}),
    "FedProf (full)": ("fedprof", {"aggregation": "full"}),
    "FedAvg-RP": ("fedavg", {"aggregation": "scheme2"}),
    "FedProx": ("fedprox", {"selection": "data", "replace": True, "weighted": False}),
    "FedProf (partial)": ("fedprof", {"aggregation": "partial"}),
}
CONDITIONS = {  # Fig. 1: FedAvg on MNIST with original, biased, noisy (65% of the clients) and both
    "original": dict(partition="iid", corruption={}),
    "biased": dict(partition="dominant", corruption={}),
    "noisy": dict(partition="iid", corruption={"irrelevant": 0.15, "blur": 0.20, "saltpepper": 0.30}),
    "biased + noisy": dict(partition="dominant", corruption={"irrelevant": 0.15, "blur": 0.20, "saltpepper": 0.30}),
}


def config(label: str, participation: float, *, seed: int, rounds: int, n_clients: int = 1000,
           train_fraction: float = 1.0, options: dict | None = None, decay_unit: str = DECAY_UNIT, **over):
    """The Config of one run of FedProf's L-Task protocol on MNIST: `label` from METHODS; `decay_unit` the unit of
    the 0.99 learning-rate decay ("participation" or "round", see DECAY_UNIT)."""
    from ..config import Config

    if label not in METHODS:
        raise ValueError(f"unknown FedProf-protocol label {label!r}; choose from {', '.join(METHODS)}")
    method, fixed = METHODS[label]
    fields = dict(dataset="mnist", model=MODEL, partition="dominant", dominant_share=0.6,
                  corruption=dict(NOISE), server_fraction=0.143, n_clients=n_clients,
                  train_fraction=train_fraction, participation=participation, optimizer="sgd", lr=0.01, lr_decay=0.99,
                  lr_decay_unit=decay_unit, local_epochs=5, batch_size=10)
    fields.update(over)
    return Config(method=method, seed=seed, rounds=rounds, options={**fixed, **(options or {})}, **fields)


# ----------------------------------------------------------------------------------------------- notebook 08's profiles
PROFILES = {  # notebook 08, per profile
    "smoke": dict(n_clients=20, train_fraction=0.05, fractions=[0.25], full_rounds=3, partial_rounds=3,
                  fig1=dict(rounds=2, participation=0.25), seeds=[0], alphas=[0.0], targets=(0.3, 0.5)),
    "quick": dict(n_clients=100, train_fraction=0.1, fractions=[0.05, 0.1], full_rounds=60, partial_rounds=30,
                  fig1=dict(rounds=30, participation=0.3), seeds=[0], alphas=[0.0], targets=(0.6, 0.8)),
    "paper": dict(n_clients=200, train_fraction=1.0, fractions=[0.05, 0.1], full_rounds=300, partial_rounds=50,
                  fig1=dict(rounds=100, participation=0.3), seeds=[0, 1, 2], alphas=[0.0, 1.0, 100.0],
                  targets=(0.9, 0.95)),
}
FULL, PARTIAL = ["FedAvg", "FedProf (full)"], ["FedAvg-RP", "FedProx", "FedProf (partial)"]


def run(profile: str, label: str, C: float, seed: int, rounds: int | None = None, **over):
    """One run of notebook 08 at `profile`'s scale (PROFILES): its clients, data and round counts (partial
    aggregation runs `partial_rounds`, the others `full_rounds`)."""
    S = PROFILES[profile]
    partial = label in PARTIAL
    return config(label, C, seed=seed, rounds=rounds or S["partial_rounds" if partial else "full_rounds"],
                          n_clients=S["n_clients"], train_fraction=S["train_fraction"], **over)


# Why some of this notebook's claims have no paper-scale verdict (claims.md says so beside each of them).
NOT_AT_PAPER_SCALE = ("4 of Fig. 1's 12 runs, seed 2's (about 40 core-minutes on the development CPU), are not "
                      "computed yet: scripts/paper_runs.py fedprof_fig1 --seeds 2 --shard 0/2 and 1/2, then --pack; "
                      "seeds 0 and 1, Table 3 (30 runs) and the alpha sweep (9) are shipped")
