"""What notebook 08 computes from a run that is not a run: rounds to a target, and participation by kind of client."""
from __future__ import annotations

from collections import Counter

import numpy as np

KINDS = {"clean": "clean", "saltpepper": "salt-and-pepper", "blur": "blurred", "irrelevant": "irrelevant"}  # -> shown


def rounds_to(result, target: float) -> int:
    """The first round whose global accuracy reaches `target`; a run that never does counts as its rounds + 1 (the
    claims read that value as censored)."""
    acc = np.asarray(result.curve("acc_all"))
    hit = np.nonzero(acc >= target)[0]
    return int(hit[0]) + 1 if len(hit) else len(acc) + 1


def participation(result) -> dict[str, float]:
    """Kind of client (KINDS) -> the mean number of rounds its clients took part in. FedProf records whom it
    selected; FedAvg-RP and FedProx record their participants per round."""
    kinds = result.client_kinds
    chosen = result.record("selected") if result.has_record("selected") else result.participants
    picked = Counter(i for s in chosen for i in s)
    per_kind = {k: [picked.get(i, 0) for i in range(len(kinds)) if kinds[i] == k] for k in KINDS}
    return {k: float(np.mean(v)) if v else float("nan") for k, v in per_kind.items()}


def divergence_by_kind(result) -> dict[str, np.ndarray]:
    """Kind of client -> the mean divergence (Eq. 3) of its clients' profiles from the server's, per round."""
    div = np.array(result.record("div"))  # [rounds, clients]
    kinds = np.array(result.client_kinds)
    return {k: div[:, kinds == k].mean(1) for k in KINDS if (kinds == k).any()}


def best(result) -> float:
    """The best global accuracy over the rounds, in percent."""
    return 100 * result.best("acc_all")
