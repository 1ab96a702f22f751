"""FedProf's L-Task protocol (Sec. 5.1) on MNIST: its Configs, the model and the unit of the lr decay, each choice
the paper leaves open said where it is made."""
from __future__ import annotations

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
# numbers is the one kept. `fedprof.plans.config_at(..., model="cnn_mnist_safa")` runs the other.
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
    from ...config import Config

    if label not in METHODS:
        raise ValueError(f"unknown FedProf-protocol label {label!r}; choose from {', '.join(METHODS)}")
    method, fixed = METHODS[label]
    fields = dict(dataset="mnist", model=MODEL, partition="dominant", dominant_share=0.6,
                  corruption=dict(NOISE), server_fraction=0.143, n_clients=n_clients,
                  train_fraction=train_fraction, participation=participation, optimizer="sgd", lr=0.01, lr_decay=0.99,
                  lr_decay_unit=decay_unit, local_epochs=5, batch_size=10)
    fields.update(over)
    return Config(method=method, seed=seed, rounds=rounds, options={**fixed, **(options or {})}, **fields)
