"""Notebook 08's profiles (frozen `Profile`s) and its parts (`part.Part`), declared once: the notebook reads each
part, scripts/paper_runs.py computes and packs the packed ones (RUN_SETS, derived) and claims.md counts what of them
is shipped."""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from ..part import Part
from .protocol import CONDITIONS, config

NOTEBOOK = "08_fedprof_client_selection"


@dataclass(frozen=True)
class Profile:
    """Notebook 08's scale: its clients and data, the participations of Table 3, the round counts of full and
    partial aggregation and of Fig. 1, the seeds, part E's alphas and the two accuracy targets."""
    n_clients: int
    train_fraction: float
    fractions: tuple[float, ...]  # Table 3's participations C
    full_rounds: int
    partial_rounds: int
    fig1_rounds: int
    fig1_participation: float
    seeds: tuple[int, ...]
    alphas: tuple[float, ...]
    targets: tuple[float, float]  # the rounds-to-accuracy targets (the paper's 90%, lower where few rounds run)

    def rounds(self, label: str) -> int:
        """The rounds a Table 3 method runs: partial aggregation `partial_rounds`, the others `full_rounds`."""
        return self.partial_rounds if label in PARTIAL else self.full_rounds


PROFILES = {
    "smoke": Profile(n_clients=20, train_fraction=0.05, fractions=(0.25,), full_rounds=3, partial_rounds=3,
                     fig1_rounds=2, fig1_participation=0.25, seeds=(0,), alphas=(0.0,), targets=(0.3, 0.5)),
    "quick": Profile(n_clients=100, train_fraction=0.1, fractions=(0.05, 0.1), full_rounds=60, partial_rounds=30,
                     fig1_rounds=30, fig1_participation=0.3, seeds=(0,), alphas=(0.0,), targets=(0.6, 0.8)),
    "paper": Profile(n_clients=200, train_fraction=1.0, fractions=(0.05, 0.1), full_rounds=300, partial_rounds=50,
                     fig1_rounds=100, fig1_participation=0.3, seeds=(0, 1, 2), alphas=(0.0, 1.0, 100.0),
                     targets=(0.9, 0.95)),
}
FULL, PARTIAL = ["FedAvg", "FedProf (full)"], ["FedAvg-RP", "FedProx", "FedProf (partial)"]
DEVIATIONS = "N = 200 clients (not 1000), MNIST for EMNIST digits"  # at the paper profile, beside its scale


def config_at(profile: Profile, label: str, C: float, seed: int, rounds: int | None = None, **over):
    """One run of notebook 08 at `profile`'s scale: its clients and data, and `profile.rounds(label)` rounds unless
    `rounds` is given."""
    return config(label, C, seed=seed, rounds=rounds or profile.rounds(label), n_clients=profile.n_clients,
                  train_fraction=profile.train_fraction, **over)


def _table3_plan(over: dict, profile: Profile, seeds) -> dict:
    """Part B: (C, label) -> one Config per seed, with `over` (the lr decay's reading)."""
    return {(C, lab): [config_at(profile, lab, C, s, **over) for s in seeds] for C in profile.fractions
            for lab in FULL + PARTIAL}


def _fig1_plan(profile: Profile, seeds) -> dict:
    """Part A: data condition -> one FedAvg Config per seed."""
    return {cond: [config_at(profile, "FedAvg", profile.fig1_participation, s, rounds=profile.fig1_rounds, **over)
                   for s in seeds] for cond, over in CONDITIONS.items()}


def _alpha_plan(profile: Profile, seeds) -> dict:
    """Part E: alpha -> one FedProf (partial) Config per seed, at the largest participation."""
    return {a: [config_at(profile, "FedProf (partial)", profile.fractions[-1], s, options={"alpha": a})
                for s in seeds] for a in profile.alphas}


_C_LABEL = lambda k: f"{k[1]} C={k[0]}"  # noqa: E731  (C, label) as scripts/paper_runs.py lists it
# The two readings of "learning rate decay 0.99" (protocol.DECAY_UNIT), the protocol's first: the notebook draws
# each whose runs are shipped, and its other parts and the verdicts read the first of them that is
# (`part.first_whole`). Only the protocol's is a run set; the earlier reading's runs are shipped in its archive file.
TABLE3 = Part("fedprof_table3", NOTEBOOK, PROFILES, partial(_table3_plan, {}), label=_C_LABEL,
              where=("Table 3", "Fig. 5", "Fig. 6"), deviations=DEVIATIONS)
TABLE3_PER_ROUND = Part("fedprof_table3_per_round", NOTEBOOK, PROFILES, partial(_table3_plan, dict(decay_unit="round")),
                        label=_C_LABEL, where=("Table 3 (lr decay per round)",), deviations=DEVIATIONS, packed=False,
                        archive="fedprof_table3_paper")
FIG1 = Part("fedprof_fig1", NOTEBOOK, PROFILES, _fig1_plan, where=("Fig. 1",), deviations="N = 200 clients, MNIST")
ALPHA = Part("fedprof_alpha", NOTEBOOK, PROFILES, _alpha_plan, label=lambda a: f"alpha {a:g}", where=("alpha",),
             deviations=DEVIATIONS)
PARTS = (TABLE3, FIG1, ALPHA, TABLE3_PER_ROUND)
READINGS = {TABLE3: "per participation", TABLE3_PER_ROUND: "per round"}  # the lr decay each Table 3 part reads
RUN_SETS = [p for p in PARTS if p.packed]  # what scripts/paper_runs.py computes and packs: derived, never listed
