"""FedRD (Zhang, Huang and Li; seeds/002), notebook 07. One module per role: `reported` (what the paper reports),
`protocol` (its Configs, with FedDM, FedProx and FedNova as its baselines), `plans` (the notebook's scales, the ladder
and RUN_SETS), `analysis`, `figures`, `claims` (on the ladder), and `parts` (notebook 07's parts and their claims). Table I (10 clients, Dirichlet 0.1, 20 rounds; mean
and std), Table II (DP, CIFAR-10), Table III (random against real initialisation) and Table IV (FedRD on CIFAR-10
against the representation size; its caption says FedDM, the text FedRD). Accuracies in percent."""
from __future__ import annotations

from . import plans, protocol, reported  # noqa: F401
from .reported import TABLE1, TABLE2, TABLE3, TABLE4  # noqa: F401
from .protocol import (  # noqa: F401
    AVERAGING, DPC_RGB, GRID, METHODS, MU_GRID, PAPER_NAME, PROJECTION, RGB_DATASETS, SEARCHED, SHOWN, config)
from .plans import (  # noqa: F401
    LADDER, RUN_SETS, SCALES, SWEEPS, TOY, ladder, ladder_runs, notebook_run, rung_label, scaled,
    search_configs, shipped)

from . import analysis, figures  # noqa: E402, F401  (FedNova's toy, computed; its figure)
from . import claims  # noqa: E402, F401  (its claims on the ladder, as functions of Results)
from . import parts  # noqa: E402, F401  (notebook 07's parts A-F and H, and their claims)
