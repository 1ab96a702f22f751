"""One module per paper: what it reports, its protocol's Config builders and its notebooks' profiles.

    fedlog    FedLog (notebooks 01-05): Table 1, Table A.1, Tables A.3-A.5's settings, notebook 02's parts
    fedcr     FedCR (notebook 06): Tables 2, 3, 9 and 10, its protocol (Sec. 5.1) and notebook 06's profiles
    fedrd     FedRD (notebook 07): Tables I-IV, its protocol (Sec. V.A) with FedDM, FedProx and FedNova, the scales
    fedprof   FedProf (notebook 08): Tables 2 and 3, its L-Task protocol on MNIST and notebook 08's profiles

Numbers are the papers' (accuracies in percent); nothing here trains a model (that is `fedlib.analysis`).
"""
from __future__ import annotations

from . import fedcr, fedlog, fedprof, fedrd

# notebook -> why its claims (or some: those whose paper-scale runs are missing) have no paper-scale verdict yet
# (figures/claims.md says so beside each), from each paper module's NOT_AT_PAPER_SCALE (None once every one has)
NOT_AT_PAPER_SCALE = {notebook: reason for notebook, reason in [
    ("06_fedcr_common_representation", fedcr.NOT_AT_PAPER_SCALE),
    ("07_fedrd_representation_distillation", fedrd.NOT_AT_PAPER_SCALE),
    ("08_fedprof_client_selection", fedprof.NOT_AT_PAPER_SCALE)] if reason}

PROFILE_NAMES = ("smoke", "quick", "paper")


def settings(table: dict, profile: str) -> dict:
    """A notebook's own copy of its settings at `profile` from one of the modules' profile tables (e.g.
    `fedlog.DP_PROFILES`), so that what it changes stays in the notebook; an unknown profile is refused."""
    import copy

    if profile not in table:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(table)}")
    return copy.deepcopy(table[profile])


__all__ = ["NOT_AT_PAPER_SCALE", "PROFILE_NAMES", "fedcr", "fedlog", "fedprof", "fedrd", "settings"]
