"""Where data, cached results and figures live: `$FEDLIB_DATA`, `$FEDLIB_RESULTS`, `$FEDLIB_FIGURES`, or the
folders `data/`, `results/`, `figures/` of the checkout (found from this package, so notebooks that run in
notebooks/ write to the same place as scripts run from the top)."""
from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    here = Path(__file__).resolve().parent.parent
    return here if (here / "pyproject.toml").exists() else Path.cwd()


def _dir(env: str, default: str) -> Path:
    return Path(os.environ[env]) if os.environ.get(env) else project_root() / default


def data_dir() -> Path:
    return _dir("FEDLIB_DATA", "data")


def results_dir() -> Path:
    return _dir("FEDLIB_RESULTS", "results")


def figures_dir() -> Path:
    return _dir("FEDLIB_FIGURES", "figures")
