"""FedLog (the workbook's own paper; notebooks 01-05). One module per role: `reported` (Table 1, Table A.1, the
thresholds), `protocol` (its client settings per dataset, the per-method hyperparameters of Tables A.3-A.5, the
Configs of Table 1: `paper_config`, `table1_config`), `plans` (the notebooks' profiles, their runs, RUN_SETS),
`analysis` (what is computed that is not a run), `figures`; and one module per notebook holding its tables and its
claims as functions (`fig1`, `table1` with `tables`, `dp`, `gaussian`, `convergence`)."""
from __future__ import annotations

from . import plans, protocol, reported  # noqa: F401
from .reported import (  # noqa: F401
    FIG3_LEFT_CIFAR100, PAPER_DATA, QUOTES, TABLE1, TABLE1_CELLS, TABLE1_MARKER_LEVEL, TABLE1_MARKERS, TABLE1_SE,
    TABLE_A1, TABLE_A1_CELLS, TABLE_A1_MARKER_LEVEL, TABLE_A1_MARKERS, THRESHOLD)
from .protocol import (  # noqa: F401
    DP_B, DP_DELTA, EXTRA_METHODS, FEDDBE_KAPPA_GRID, LABEL_FIELDS, PAPER_SETTINGS, TABLE1_METHODS,
    TABLE_A1_METHODS, paper_config, table1_config)
from .plans import (  # noqa: F401
    AUGMENTED, AUGMENTED_ORDER, BETAS, CONVERGENCE_METHODS, CONVERGENCE_PROFILES, DP_PROFILES, GAUSSIAN_PROFILES, RUN_SETS,
    SYNTHETIC_PROFILES, TABLE1_COMPETITIVE, TABLE1_PARTS, TABLE1_PROFILES, chosen_datasets, chosen_methods,
    dp_configs, fig2_configs, fig3_configs, table1_settings, table_a1_configs)

from . import analysis  # noqa: E402, F401  (computation that is not a run: numeric, fingerprinted)
from . import figures  # noqa: E402, F401  (FedLog's own figures)
from . import fig1  # noqa: E402, F401  (notebook 01: its table and claims, as functions)
from . import dp  # noqa: E402, F401  (notebook 03: its computation, figures and claims, as functions)
from . import convergence  # noqa: E402, F401  (notebook 05: its figures, tables and claims)
from . import gaussian  # noqa: E402, F401  (notebook 04: its checks, figures, tables and claims)
