"""FedCR (Zhang et al., ICML 2023; seeds/001), notebook 06. One module per role: `reported` (what the paper reports),
`protocol` (its Configs), `plans` (the notebook's profiles and RUN_SETS), `analysis`, `figures`, and `parts` (notebook
06's parts and their claims, as functions). Table 2 (100 clients, 10% participation, mean over 3 seeds; partitions "n1" = 5 classes per
client (15 for CIFAR-100), "n2" = per-client Dirichlet priors), the standard deviations of FedCR's row (Table 10),
Table 3 (Gaussian dimension V, non-iid_1) and Table 9 (no model aggregation, CIFAR-100). Accuracies in percent."""
from __future__ import annotations

from . import plans, protocol, reported  # noqa: F401
from .reported import TABLE10_SPREAD, TABLE2, TABLE3, TABLE9  # noqa: F401
from .protocol import (  # noqa: F401
    BASELINES, BETA, BODIES, CLASSES_N1, CLIP, DIRICHLET_N2, DITTO_LAM, LR, METHODS, NONAGGREGATE, NO_FINETUNE,
    PAPER_NAME, PARTITIONS, ROUNDS, SHOWN, TUNED_LR, config)
from .plans import PROFILES, RUN_SETS, TABLE2_LABELS, TINY, rounds_label, rounds_of, run, table1_run  # noqa: F401

from . import analysis, figures  # noqa: E402, F401  (what is computed that is not a run; FedCR's own figure)
from . import parts  # noqa: E402, F401  (notebook 06: its runs, tables, figures and claims)
