"""Notebook 08's profiles and runs, declared once: the notebook, scripts/paper_runs.py (RUN_SETS) and claims.md's
count of what is shipped all read them."""
from __future__ import annotations

from ..runset import RunSet
from .protocol import CONDITIONS, config

NOTEBOOK = "08_fedprof_client_selection"
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
# The two readings of "learning rate decay 0.99" (protocol.DECAY_UNIT), the protocol's first: the notebook draws
# each whose runs are shipped, and its other parts and the verdicts read the first of them that is.
READINGS = {"per participation": {}, "per round": dict(decay_unit="round")}
DEVIATIONS = "N = 200 clients (not 1000), MNIST for EMNIST digits"  # at the paper profile, beside its scale


def run(profile: str, label: str, C: float, seed: int, rounds: int | None = None, **over):
    """One run of notebook 08 at `profile`'s scale (PROFILES): its clients, data and round counts (partial
    aggregation runs `partial_rounds`, the others `full_rounds`)."""
    S = PROFILES[profile]
    partial = label in PARTIAL
    return config(label, C, seed=seed, rounds=rounds or S["partial_rounds" if partial else "full_rounds"],
                  n_clients=S["n_clients"], train_fraction=S["train_fraction"], **over)


def table3_runs(profile: str, seeds, reading: str = "per participation") -> dict:
    """Part B: (C, label) -> one Config per seed, with the lr decay of `reading` (READINGS)."""
    S = PROFILES[profile]
    return {(C, lab): [run(profile, lab, C, s, **READINGS[reading]) for s in seeds] for C in S["fractions"]
            for lab in FULL + PARTIAL}


def fig1_runs(profile: str, seeds) -> dict:
    """Part A: data condition -> one FedAvg Config per seed."""
    f1 = PROFILES[profile]["fig1"]
    return {cond: [run(profile, "FedAvg", f1["participation"], s, rounds=f1["rounds"], **over) for s in seeds]
            for cond, over in CONDITIONS.items()}


def alpha_runs(profile: str, seeds) -> dict:
    """Part E: alpha -> one FedProf (partial) Config per seed, at the largest participation."""
    S = PROFILES[profile]
    return {a: [run(profile, "FedProf (partial)", S["fractions"][-1], s, options={"alpha": a}) for s in seeds]
            for a in S["alphas"]}


def notebook_runs(profile: str) -> dict:
    """Every run notebook 08 reads at `profile`: {"table3": {reading: table3_runs}, "fig1": ..., "alpha": ...}."""
    seeds = PROFILES[profile]["seeds"]
    return {"table3": {reading: table3_runs(profile, seeds, reading) for reading in READINGS},
            "fig1": fig1_runs(profile, seeds), "alpha": alpha_runs(profile, seeds)}


def configs(group: dict) -> list:
    """The Configs of a group of runs (a dict of lists, or of such dicts), in order."""
    out = []
    for value in group.values():
        out += configs(value) if isinstance(value, dict) else list(value)
    return out


def reading(results, runs: dict) -> str | None:
    """The first reading of the lr decay (READINGS) whose Table 3 runs `results` holds; None if neither's are."""
    return next((r for r, group in runs["table3"].items() if results.has(configs(group))), None)


def _by_seed(group: dict, label) -> list:
    """(label, Config) seed by seed (a stopped job leaves whole seeds), labelled by `label(key)`."""
    n = len(next(iter(group.values())))
    return [(label(k), cs[i]) for i in range(n) for k, cs in group.items()]


RUN_SETS = [
    RunSet("fedprof_table3", NOTEBOOK, lambda seeds: _by_seed(table3_runs("paper", seeds),
                                                               lambda k: f"{k[1]} C={k[0]}"),
           where=("Table 3", "Fig. 5", "Fig. 6"), deviations=DEVIATIONS),
    RunSet("fedprof_fig1", NOTEBOOK, lambda seeds: _by_seed(fig1_runs("paper", seeds), str), where=("Fig. 1",),
           deviations="N = 200 clients, MNIST"),
    RunSet("fedprof_alpha", NOTEBOOK, lambda seeds: _by_seed(alpha_runs("paper", seeds), lambda a: f"alpha {a:g}"),
           where=("alpha",), deviations=DEVIATIONS),
]
