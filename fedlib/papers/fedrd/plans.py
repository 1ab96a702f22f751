"""Notebook 07's scales and sweeps per profile, the ladder of matching steps, each part's runs; RUN_SETS: what
scripts/paper_runs.py computes and packs."""
from __future__ import annotations

from .protocol import DPC_RGB, GRID, METHODS, MU_GRID, RGB_DATASETS, config


# The protocol's size per notebook profile. Paper: Sec. V.A (ConvNet-128, T = 1000 matching steps on real batches
# of 256, 500 server epochs, 10 projection epochs at batch 256, 20 rounds). Quick: one FashionMNIST round at the
# paper's size is GPU work (a matching step of ConvNet-32 on 5% of the data takes 4.4 s on one CPU core), so the
# quick scale keeps the protocol and shrinks everything else to fit 10 minutes on 2 cores. With 2% of the data a
# client holds about 110 images, one batch of 256: the projection's batch shrinks with the data (32), so that its
# Adam steps per round stay in the tens (the paper's: about 220).
SCALES = {
    "smoke": dict(width=8, rounds=2, over=dict(n_clients=4, train_fraction=0.01, local_epochs=1), proj_epochs=1,
                  proj_batch=16,
                  dm=dict(dpc=2, iterations=5, real_batch=16, server_epochs=2)),
    "quick": dict(width=16, rounds=5, over=dict(train_fraction=0.02), proj_epochs=2, proj_batch=32,
                  dm=dict(dpc=10, iterations=10, real_batch=64, server_epochs=20)),
    "paper": dict(width=128, rounds=20, over={}, proj_epochs=10, proj_batch=256,
                  dm=dict(dpc=10, iterations=1000, real_batch=256, server_epochs=500)),
}

TOY = dict(centers=[[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]], taus=[1, 5, 20], lr=0.05, rounds=300)  # FedNova's toy
SWEEPS = {  # notebook 07: the sweeps of parts C-F, per profile (spec 4.3; quick cut to fit 10 minutes);
    # sweep_rounds: the rounds of parts C-F's runs, compared with the first as many rounds of part A's (None: all of them)
    "smoke": dict(seeds=[0], datasets=["fashion_mnist"], init_sets=["fashion_mnist"], dpc_dm=[1], dpc_rd=[1],
                  equal_uplink=[], sides=[8], depths=[1], sweep_rounds=None),
    "quick": dict(seeds=[0], datasets=["fashion_mnist"], init_sets=["fashion_mnist"], dpc_dm=[], dpc_rd=[],
                  equal_uplink=[], sides=[], depths=[], sweep_rounds=3),
    "paper": dict(seeds=[0, 1, 2], datasets=["fashion_mnist", "mnist", "cifar10", "cifar100"],
                  init_sets=["fashion_mnist", "mnist"], dpc_dm=[1, 3], dpc_rd=[1, 3], equal_uplink=[3, 9, 30],
                  sides=[8, 14, 20], depths=[1, 3, 4], sweep_rounds=None),
}


def scaled(dataset: str, label: str, profile: str, *, seed: int, options: dict | None = None,
           rounds: int | None = None, **over):
    """config at a profile's scale (SCALES): its width, rounds and data fraction, and for FedDM and FedRD
    its matching steps, real batch, server epochs and (FedRD) projection epochs and batch; in the paper profile FedRD
    condenses DPC_RGB samples per class on the three-channel datasets. `options` and `over` go last."""
    scale = SCALES[profile]
    method = METHODS[label][0] if label in METHODS else None
    opts = dict(scale["dm"]) if method in ("feddm", "fedrd") else {}
    if method == "fedrd" and profile == "paper" and dataset in RGB_DATASETS:
        opts["dpc"] = DPC_RGB
    projection = {"local_epochs": scale["proj_epochs"], "batch_size": scale["proj_batch"]} if method == "fedrd" else {}
    fields = dict(scale["over"], **projection)
    return config(dataset, label, seed=seed, rounds=rounds or scale["rounds"], width=scale["width"],
                  options={**opts, **(options or {})}, **{**fields, **over})


# A ladder of matching steps (T): the claims a CPU can judge at a labelled, reduced scale, since one FashionMNIST run
# at the paper's size costs more than 22 core-hours here. Everything but T is fixed, reduced from Sec. V.A: ConvNet-32
# (not 128), 32 real images per class per step (not 256), 10% of FashionMNIST (Dirichlet 0.1 over 10 clients, as
# the paper), 50 server epochs (not 500), 5 distillation rounds (FedRD "has already converged well" in 5) while the
# averaging baselines keep 20, dpc 10, FedRD's projection 5 epochs at batch 32. No rung is the paper's scale.
LADDER = dict(width=32, real_batch=32, train_fraction=0.1, server_epochs=50, dd_rounds=5, baseline_rounds=20, dpc=10,
              proj_epochs=5, proj_batch=32, steps=(10, 30, 100, 300), seeds=(0, 1, 2))


def ladder(label: str, seed: int, steps: int | None = None, init: str | None = None):
    """One run of the FedRD ladder (LADDER) on FashionMNIST: FedDM and FedRD at `steps` matching steps (a rung),
    with `init` "real" (the paper's) or "random" (Table III); the averaging baselines at no rung (their runs serve
    every rung)."""
    L = LADDER
    method = METHODS[label][0] if label in METHODS else None
    if method in ("feddm", "fedrd"):
        if steps is None:
            raise ValueError(f"{label} on the ladder needs its rung: steps, one of {L['steps']}")
        options = dict(dpc=L["dpc"], iterations=steps, real_batch=L["real_batch"], server_epochs=L["server_epochs"],
                       **({"init": init} if init else {}))
        over = dict(local_epochs=L["proj_epochs"], batch_size=L["proj_batch"]) if method == "fedrd" else {}
        return config("fashion_mnist", label, seed=seed, rounds=L["dd_rounds"], width=L["width"], options=options,
                      train_fraction=L["train_fraction"], **over)
    return config("fashion_mnist", label, seed=seed, rounds=L["baseline_rounds"], width=L["width"],
                  train_fraction=L["train_fraction"])


def rung_label(steps: int | None) -> str:
    """What a ladder row says of its scale."""
    L = LADDER
    at = f"T = {steps}, " if steps else ""
    return (f"FedRD ladder ({at}ConvNet-{L['width']}, {int(100 * L['train_fraction'])}% of FashionMNIST, "
            f"{L['real_batch']} real per class, {L['server_epochs']} server epochs, {L['dd_rounds']} DD rounds / "
            f"{L['baseline_rounds']} averaging rounds; reduced from the paper's)")


def search_configs(dataset: str, profile: str = "quick", prox_at: dict | None = None) -> dict[tuple, object]:
    """The baselines' search on seed 0: (label, lr, momentum, local_epochs, mu) -> Config over GRID (FedProx at
    its default mu); with `prox_at` (FedProx's best fields), FedProx's mu grid there."""
    out = {}
    if prox_at is None:
        for label in ("FedAvg", "FedProx", "FedNova"):
            for lr in GRID["lr"]:
                for mom in GRID["momentum"]:
                    for e in GRID["local_epochs"]:
                        mu = 0.01 if label == "FedProx" else None
                        out[(label, lr, mom, e, mu)] = scaled(
                            dataset, label, profile, seed=0, lr=lr, momentum=mom, local_epochs=e,
                            options={"mu": mu} if mu else None)
    else:
        for mu in MU_GRID:
            out[("FedProx", prox_at["lr"], prox_at["momentum"], prox_at["local_epochs"], mu)] = scaled(
                dataset, "FedProx", profile, seed=0, options={"mu": mu}, **prox_at)
    return out


def notebook_run(profile: str, dataset: str, label: str, seed: int, side: int | None = None, depth: int = 2,
                 rounds: int | None = None, **options):
    """One run of notebook 07 at `profile`'s scale (SCALES): FedRD's representation side (sqrt d') and projection
    depth, the rounds, and FedDM's or FedRD's options (dpc, init), override."""
    model = None
    if label == "FedRD" and (side or depth != 2):
        model = f"fedrd_proj{depth}" + (f"_d{side}" if side else "") + f"_convnet{SCALES[profile]['width']}"
    return scaled(dataset, label, profile, seed=seed, options=options or None, model=model, rounds=rounds)


def ladder_runs(seeds=None) -> dict:
    """Every ladder run: (label, T, init) -> one Config per seed; the averaging baselines under (label, None, None)."""
    seeds = LADDER["seeds"] if seeds is None else seeds
    runs = {(lab, None, None): [ladder(lab, s) for s in seeds] for lab in ("FedAvg", "FedProx", "FedNova")}
    runs.update({(lab, T, init): [ladder(lab, s, T, init) for s in seeds] for T in LADDER["steps"]
                 for lab in ("FedDM", "FedRD") for init in ("real", "random")})
    return runs


def shipped(results, runs: dict) -> dict:
    """(label, T, init) -> the Results of the runs `results` (`sweep.Runs`) holds, None where any seed is missing."""
    return {key: results(cfgs) if results.has(cfgs) else None for key, cfgs in runs.items()}


def _ladder_runs(seeds):  # rungs after the averaging baselines (once for every rung), cheap to dear
    runs = [(lab, ladder(lab, s)) for s in seeds for lab in ("FedAvg", "FedProx", "FedNova")]
    return runs + [(f"{lab} T={T} {init}", ladder(lab, s, T, init)) for T in LADDER["steps"] for s in seeds
                   for lab in ("FedDM", "FedRD") for init in ("real", "random")]


def _run_sets():
    from ..runset import RunSet

    nb = "07_fedrd_representation_distillation"
    return [RunSet("fedrd_table1", nb, lambda seeds: [(lab, scaled("fashion_mnist", lab, "paper", seed=s))
                                                     for s in seeds for lab in METHODS],
                   where=("Table I", "Fig. 2"), deviations="FashionMNIST only"),  # Fig. 2: their first rounds
            RunSet("fedrd_table3", nb, lambda seeds: [(f"{lab} random", notebook_run("paper", "fashion_mnist", lab, s,
                                                                                   init="random"))
                                                     for s in seeds for lab in ("FedDM", "FedRD")],
                   where=("Table III",), deviations="FashionMNIST only; the real-initialised runs are fedrd_table1's"),
            LADDER_SET]


def _ladder_set():
    from ..runset import RunSet

    return RunSet("fedrd_ladder", "07_fedrd_representation_distillation", _ladder_runs,
                  where=("Table I (ladder)", "Table III (ladder)", "Fig. 2 (ladder)"),
                  deviations=f"FashionMNIST, ConvNet-{LADDER['width']} (not 128), {LADDER['train_fraction']:.0%} of "
                             f"the data, {LADDER['server_epochs']} server epochs (not 500), the T its row names (not 1000)")


LADDER_SET = _ladder_set()  # part G's run set, read by its name in parts.py
RUN_SETS = _run_sets()
