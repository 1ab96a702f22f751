"""FedProf (Wu, He, Lin and Maple; seeds/004), notebook 08. One module per role, as every paper's package:

    reported   the paper's numbers (Tables 2 and 3)
    protocol   its L-Task protocol's Configs on MNIST, and the choices the paper leaves open
    plans      notebook 08's profiles (Profile) and parts (PARTS; RUN_SETS, the packed ones: paper_runs.py's)
    analysis   what is computed from a run that is not a run (rounds to a target, participation by kind)
    figures    the tables and figures, from Results
    claims     the paper's claims, as functions of Results
"""
from __future__ import annotations

from . import analysis, claims, figures, plans, protocol, reported
from .plans import FULL, PARTIAL, PARTS, PROFILES, RUN_SETS
from .protocol import CONDITIONS, DECAY_UNIT, METHODS, MODEL, NOISE, config
from .reported import TABLE2, TABLE3

__all__ = ["CONDITIONS", "DECAY_UNIT", "FULL", "METHODS", "MODEL", "NOISE", "PARTIAL", "PARTS", "PROFILES", "RUN_SETS",
           "TABLE2", "TABLE3", "analysis", "claims", "config", "figures", "plans", "protocol", "reported"]


from ..registry import Paper, register  # noqa: E402

register(Paper("FedProf", PARTS, text="004_1cf7adbf1d2f89c5.txt", first_notebook=8,
               quotes=lambda: list(reported.QUOTES.values())))
