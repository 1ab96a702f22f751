"""FedLog (the workbook's own paper; notebooks 01-05). One module per role: `reported` (Table 1, Table A.1, the
thresholds, the quotes), `protocol` (its client settings per dataset, the per-method hyperparameters of Tables
A.3-A.5, the Configs of Table 1: `paper_config`, `table1_config`), `plans` (each notebook part declared once, a `part.Part`:
FIG1; notebook 02's TABLE1_PARTS and TABLE_A1_PARTS per regime and dataset, AUGMENT, BETA, KAPPA, read together through
`table1_parts`; DP_PARTS and THM7; EQ9, THM2, NORMALITY, COMPACTNESS; FIG2, FIG3_LEFT, STEP_SIZES; PARTS, and RUN_SETS
derived from them), `analysis` (what is computed that is not a run, one module per subject), `figures` (what
the notebooks draw and the tables they save) and `claims` (each claim a function; `record_*` per notebook)."""
from __future__ import annotations

from . import plans, protocol, reported  # noqa: F401
from .reported import (  # noqa: F401
    FIG3_LEFT_CIFAR100, PAPER_DATA, QUOTES, TABLE1, TABLE1_CELLS, TABLE1_MARKER_LEVEL, TABLE1_MARKERS, TABLE1_SE,
    TABLE_A1, TABLE_A1_CELLS, TABLE_A1_MARKER_LEVEL, TABLE_A1_MARKERS, THRESHOLD)
from .protocol import (  # noqa: F401
    DP_B, DP_DELTA, EXTRA_METHODS, FEDDBE_KAPPA_GRID, LABEL_FIELDS, PAPER_SETTINGS, TABLE1_METHODS,
    TABLE_A1_METHODS, paper_config, table1_config)
from .plans import (  # noqa: F401
    AUGMENT, AUGMENTED, AUGMENTED_ORDER, BETA, BETAS, COMPACTNESS, CONVERGENCE_METHODS, CONVERGENCE_PROFILES, CROSSCHECK,
    DP_PARTS, DP_PROFILES, EQ9, FIG1, FIG1_METHODS, FIG2, FIG2_LEAF, FIG3_LEFT, GAUSSIAN_PROFILES, KAPPA, NORMALITY,
    NOTEBOOKS, PARTS, REGIMES, RUN_SETS, STEP_SIZES, SYNTHETIC_PROFILES, TABLE1_COMPETITIVE, TABLE1_PARTS,
    TABLE1_PROFILES, TABLE_A1_PARTS, THM2, THM7, Convergence, DpRuns, Gaussian, Synthetic, Table1Parts, Table1Profile,
    Table1Reads, TableA1, chosen_datasets, chosen_methods, convergence_parts, dp_configs, dp_plan, fig2_configs,
    fig3_configs, table1_parts, table1_settings)

from . import analysis  # noqa: E402, F401  (computation that is not a run: numeric, fingerprinted)
from . import figures  # noqa: E402, F401  (FedLog's own figures)
from . import claims  # noqa: E402, F401  (its claims, as functions: notebooks 01 and 03-05)


from ..registry import Paper, register  # noqa: E402

register(Paper("FedLog", PARTS, text="000_ecc2c271eb7ea01f.txt", first_notebook=1, client_setting=paper_config,
               looks=figures.LOOKS,
               client_datasets=tuple(PAPER_SETTINGS), quotes=lambda: [
    *QUOTES.values(), *(cell for table in (TABLE1_CELLS, TABLE_A1_CELLS) for by in table.values()
                        for cells in by.values() for cell in cells)]))
