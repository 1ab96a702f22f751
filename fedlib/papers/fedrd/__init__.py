"""FedRD (Zhang, Huang and Li; seeds/002), notebook 07. One module per role, as every paper's package:

    reported   the paper's numbers: Table I (10 clients, Dirichlet 0.1, 20 rounds; mean and std), Table II (DP,
               CIFAR-10), Table III (random against real initialisation), Table IV (FedRD on CIFAR-10 against the
               representation size; its caption says FedDM, the text FedRD), and the words its claims quote
    protocol   its Configs (Sec. V.A), with FedDM, FedProx and FedNova as its baselines, and the choices it leaves open
    plans      notebook 07's profiles (Profile), the ladder (Ladder), FedNova's toy and the parts (PARTS; RUN_SETS,
               the packed ones: paper_runs.py's)
    analysis   what is computed that is not a run (the final accuracy, FedNova's toy in closed form)
    figures    the tables and figures, from the parts' readings
    claims     the paper's claims, as functions of Results (parts A-F and H, and the ladder's)

Accuracies in percent."""
from __future__ import annotations

from . import analysis, claims, figures, plans, protocol, reported
from .plans import (LADDER, PARTS, PROFILES, RUN_SETS, TOY, ladder, ladder_runs, notebook_run, rung_label, scaled,
                    search_configs)
from .protocol import (AVERAGING, DPC_RGB, GRID, METHODS, MU_GRID, PAPER_NAME, PROJECTION, RGB_DATASETS, SEARCHED,
                       SHOWN, config)
from .reported import TABLE1, TABLE2, TABLE3, TABLE4

__all__ = ["AVERAGING", "DPC_RGB", "GRID", "LADDER", "METHODS", "MU_GRID", "PAPER_NAME", "PARTS", "PROFILES",
           "PROJECTION", "RGB_DATASETS", "RUN_SETS", "SEARCHED", "SHOWN", "TABLE1", "TABLE2", "TABLE3", "TABLE4", "TOY",
           "analysis", "claims", "config", "figures", "ladder", "ladder_runs", "notebook_run", "plans", "protocol",
           "reported", "rung_label", "scaled", "search_configs"]


from ..registry import Paper, register  # noqa: E402

register(Paper("FedRD", PARTS, text="002_b7330cb77f4e5bdc.txt", first_notebook=7, also=("FedNova",),  # its
               quotes=lambda: list(reported.QUOTES.values())))  # notebook's FedNova toy: a self-check of FedNova
