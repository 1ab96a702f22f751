"""FedCR's protocol (Sec. 5.1, Table 4, A.1): the Config of one run, and every choice the paper leaves open."""
from __future__ import annotations

import warnings


# Sec. 5.1 and Table 4: each dataset's train and test sets pooled, 100 equal clients split 70/30, 10% participation,
# 10 local epochs of SGD with batch 48, and every client's 10-epoch fine-tune of its personal part after the last
# round (the authors' "last" round), for every method that has one (see NO_FINETUNE). The engine's wide-layer path
# (Config.fast_engine: 3-4x faster on 1024-wide layers, other summation orders) runs every FedCR-protocol run.
# Input scaling, a choice the paper leaves open: FashionMNIST is standardised with its own mean and std (0.2860,
# 0.3530), as everywhere in fedlib; the authors' utils_dataset.py maps it to (x - 0.5) / 0.5. A probe at the paper's
# size (n1, seed 0, 50 rounds; docs/measurements.md, 2026-11-26) finds theirs no better: FedRep 80.27 against our
# 79.94 after 50 rounds, Ditto 61.28 against our 73.74. So it does not explain Ditto's shortfall from Table 2.
# Nor does our Ditto: against the authors' main_fed_ditto.py on the same clients, weights and participants
# (scripts/fedcr_crosscheck.py, notebook 06 part H: 5 seeds, 20 clients, 10 rounds) it runs +0.76 points above
# the mean of their two random streams over the curve (paired t p 0.06), not below.
METHODS = {  # label -> (method, options, whether the body ends in FedCR's Gaussian layer)
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
    "FedPAC": ("fedpac", {}, False),  # its docstring records the choices (FedCR's paper gives no FedPAC setting)
}
BASELINES = ["FedAvg", "FedPer", "LG-FedAvg", "FedRep", "FedBabu (frozen head)", "Ditto", "FedPAC"]  # Table 2's, implemented
NONAGGREGATE = ["Local", "FedAvg", "FedPer", "FedCR-NA", "FedLog"]  # the Table 9 stand-in's rows
PAPER_NAME = {"mnist": "emnist_l", "fashion_mnist": "fashion_mnist", "cifar10": "cifar10", "cifar100": "cifar100"}
SHOWN = {"mnist": "MNIST (stand-in for EMNIST-L)", "fashion_mnist": "FashionMNIST", "cifar10": "CIFAR-10",
         "cifar100": "CIFAR-100"}  # our dataset -> its column in the paper (PAPER_NAME) and as the notebook names it
# The authors' learning rates (their README's run commands; SGD, no momentum): 0.01 for the model-averaging baselines,
# 0.5 for Ditto (with mu = 0.1, our lam), 0.05 for FedCR. Local training, FedCR-NA's twin, and FedLog (not in their
# code) take FedCR's. Every method's local step clips each client's gradient to norm 10 (their train_cnn, max_norm).
LR = {"FedAvg": 0.01, "FedPer": 0.01, "LG-FedAvg": 0.01, "FedRep": 0.01, "FedBabu (frozen head)": 0.01,
            "FedPAC": 0.01, "Ditto": 0.5, "FedCR": 0.05, "FedCR-NA": 0.05, "Local": 0.05, "FedLog": 0.05}
# The README's rates are its CIFAR-100 commands'; the paper tunes each method's over {0.5, 0.1, 0.05, 0.01, 0.005,
# 0.001} (A.1.3) and prints no choice per dataset. So Table 2's FashionMNIST baselines were screened on that grid at
# the paper's size (n1, seed 0, the first 50 of 250 rounds; docs/measurements.md, 2026-11-26), each by its mean
# accuracy over rounds 41-50 (the rule fixed before Ditto's 0.1 and 0.01, and before any FedRep or FedAvg probe):
#   Ditto  0.5 71.6, 0.1 84.7, 0.05 83.1, 0.01 77.6 (its shipped seed 0 at 0.5 ended 4.5 points under the paper)
#   FedRep 0.5 45.3 (stuck near 19% for rounds 13-39), 0.1 88.0, 0.05 86.3, 0.01 79.2, 0.005 74.1
#   FedAvg 0.5 83.2, 0.1 86.1, 0.05 85.2, 0.01 79.2, 0.005 74.2
# All three take 0.1 on FashionMNIST (n1 and n2). FedCR keeps the README's 0.05 (not screened: its seed 0 ends
# within 0.2 points of the paper, and a tuned baseline can only make its claims harder to hold); the other datasets
# and the other baselines (quick profile only) keep the README's rates. A 50-round screen favours the faster rates.
TUNED_LR = {("Ditto", "fashion_mnist"): 0.1, ("FedRep", "fashion_mnist"): 0.1, ("FedAvg", "fashion_mnist"): 0.1}
CLIP = 10.0
NO_FINETUNE = {"fedlog"}  # FedLog's personal body trains every round with its own loss, and its head is the
# posterior's (a cross-entropy fine-tune of its body at FedCR's lr diverged). Ditto's "fine-tune" is the authors'
# final round: one more round in which every client trains both its models (`Ditto.final_round`).
PARTITIONS = {"n1": dict(partition="pathological"),  # k classes per client, equal amounts (FedCR: 5)
                    "n2": dict(partition="dirichlet_client", dirichlet_alpha=0.5)}  # per-client Dir(0.5) priors
# A.1.1: CIFAR-100's non-iid.1 gives each client 15 classes (the others 5), its non-iid.2 Dirichlet 0.3 (the others 0.5)
CLASSES_N1 = {"cifar100": 15}
DIRICHLET_N2 = {"cifar100": 0.3}
# FedCR's beta (A.1.3): 0.0005 everywhere but CIFAR-100 non-iid.2, 0.001
BETA = {("cifar100", "n2"): 1e-3}
BODIES = {"fashion_mnist": "fedcr_cnn", "mnist": "fedcr_mlp",  # MNIST stands in for EMNIST-L: its MLP (Tables 7-8)
          "cifar10": "fedcr_cifar", "cifar100": "fedcr_cifar"}  # Tables 5-6's CNN
# Ditto's lambda (A.1.3, tuned over {1, 0.1, 0.01, 0.001}): 0.1 for EMNIST-L (so for MNIST, its stand-in here), 0.001
# for FMNIST and CIFAR-100 non-iid.1, 0.01 for CIFAR-100 non-iid.2. CIFAR-10 is not named in the sentence as we have
# it (the text is broken by Tables 5-8); read with FMNIST and CIFAR-100 non-iid.1: 0.001. (The authors' README command,
# a CIFAR-100 Dirichlet run, uses 0.1.)
DITTO_LAM = {("mnist", "n1"): 0.1, ("mnist", "n2"): 0.1, ("fashion_mnist", "n1"): 1e-3, ("fashion_mnist", "n2"): 1e-3,
             ("cifar10", "n1"): 1e-3, ("cifar10", "n2"): 1e-3, ("cifar100", "n1"): 1e-3, ("cifar100", "n2"): 1e-2}
# Table 4's rounds: 250 for FMNIST, 500 for EMNIST-L (MNIST here), CIFAR-10 and CIFAR-100
ROUNDS = {"fashion_mnist": 250, "mnist": 500, "cifar10": 500, "cifar100": 500}


def config(dataset: str, label: str, partition: str, *, seed: int, rounds: int, width: int, dim: int,
           lr: float | None = None, classes: int | None = None, options: dict | None = None, **over):
    """The Config of one run of FedCR's protocol: `label` from METHODS, `partition` "n1" (`classes` per
    client; default 5, CIFAR-100 15) or "n2" (Dirichlet 0.5; CIFAR-100 0.3), bodies of `width` hidden units (FMNIST:
    the authors' CNN; MNIST: the EMNIST-L MLP; CIFAR: Tables 5-6's CNN) ending, for FedCR, in a Gaussian layer of
    dimension `dim`; `lr` defaults to the screened rate for the label and dataset (TUNED_LR), else the authors'
    (LR). `options` join the label's; `over` overrides Config fields."""
    from ...config import Config

    if label not in METHODS:
        raise ValueError(f"unknown FedCR-protocol label {label!r}; choose from {', '.join(METHODS)}")
    if dataset not in BODIES:
        raise ValueError(f"FedCR's protocol here runs on {', '.join(BODIES)}, not {dataset!r}")
    if partition not in PARTITIONS:
        raise ValueError(f"FedCR's partitions are {', '.join(PARTITIONS)}, not {partition!r}")
    method, fixed, gaussian = METHODS[label]
    model = f"{BODIES[dataset]}{width}" + (f"_v{dim}" if gaussian else "")
    fields = dict(n_clients=100, train_fraction=1.0, pool_split=0.7, participation=0.1, local_epochs=10,
                  batch_size=48, optimizer="sgd", clip_grad_norm=CLIP, fast_engine=True,
                  final_finetune_epochs=0 if method in NO_FINETUNE else 10,
                  classes_per_client=(CLASSES_N1.get(dataset, 5) if partition == "n1" else 5) if classes is None
                  else classes,  # n2 ignores it (5, its value in every n2 key so far)
                  **PARTITIONS[partition])
    if partition == "n2" and dataset in DIRICHLET_N2:
        fields["dirichlet_alpha"] = DIRICHLET_N2[dataset]
    fields.update(over)
    with warnings.catch_warnings():  # n2's classes_per_client=5 is kept for its keys, not set by a reader
        if partition == "n2" and "classes_per_client" not in over and classes is None:
            warnings.filterwarnings("ignore", message="Config.classes_per_client=5 has no effect")
        return Config(method=method, dataset=dataset, model=model, seed=seed, rounds=rounds,
                      lr=TUNED_LR.get((label, dataset), LR[label]) if lr is None else lr,
                      options={**fixed, **(options or {})}, **fields)
