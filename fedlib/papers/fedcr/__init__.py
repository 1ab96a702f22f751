"""FedCR (Zhang et al., ICML 2023; seeds/001), notebook 06. One module per role, as every paper's package:

    reported   the paper's numbers: Table 2 (100 clients, 10% participation, mean over 3 seeds; partitions "n1" = 5
               classes per client (15 for CIFAR-100), "n2" = per-client Dirichlet priors), the standard deviations of
               FedCR's row (Table 10), Table 3 (Gaussian dimension V, non-iid_1), Table 9 (no model aggregation,
               CIFAR-100), and the words its claims quote
    protocol   its Configs (Sec. 5.1) and the choices it leaves open
    plans      notebook 06's profiles (Profile) and parts (PARTS; RUN_SETS, the packed ones: paper_runs.py's)
    analysis   what is computed that is not a run (the accuracy after the fine-tune, Ditto's lambda from its grid,
               Fig. 2's views)
    figures    the tables and figures, from the parts' readings
    claims     the paper's claims, as functions of Results

Accuracies in percent."""
from __future__ import annotations

from . import analysis, claims, figures, plans, protocol, reported
from .plans import PARTS, PROFILES, RUN_SETS, TABLE2_LABELS, TINY, rounds_label, rounds_of, run, table1_run
from .protocol import (BASELINES, BETA, BODIES, CLASSES_N1, CLIP, DIRICHLET_N2, DITTO_LAM, LR, METHODS, NONAGGREGATE,
                       NO_FINETUNE, PAPER_NAME, PARTITIONS, ROUNDS, SHOWN, TUNED_LR, config)
from .reported import TABLE10_SPREAD, TABLE2, TABLE3, TABLE9

__all__ = ["BASELINES", "BETA", "BODIES", "CLASSES_N1", "CLIP", "DIRICHLET_N2", "DITTO_LAM", "LR", "METHODS",
           "NONAGGREGATE", "NO_FINETUNE", "PAPER_NAME", "PARTITIONS", "PARTS", "PROFILES", "ROUNDS", "RUN_SETS", "SHOWN",
           "TABLE10_SPREAD", "TABLE2", "TABLE2_LABELS", "TABLE3", "TABLE9", "TINY", "TUNED_LR", "analysis", "claims",
           "config", "figures", "plans", "protocol", "reported", "rounds_label", "rounds_of", "run", "table1_run"]


from ..registry import Paper, register  # noqa: E402

register(Paper("FedCR", PARTS, text="001_6e94cce9c6ae99cf.txt", first_notebook=6, looks=figures.LOOKS, quotes=lambda: [
    *reported.QUOTES.values(),  # and the column of Table 10 run here (it prints others' numbers apart from Table 2's
    *(reported.table10_cell("fashion_mnist", p, m) for p in ("n1", "n2")  # in two cells: CIFAR-100 FedPer 39.5,
      for m in TABLE10_SPREAD[("fashion_mnist", p)])]))  # CIFAR-10 n2 FedAvg 76.26 against 76.34)
