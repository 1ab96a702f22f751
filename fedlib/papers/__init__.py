"""One home per paper: what it reports, its protocol's Config builders, its notebooks' profiles and runs.

    fedlog    FedLog (notebooks 01-05): Table 1, Table A.1, Tables A.3-A.5's settings, notebook 02's parts
    fedcr     FedCR (notebook 06): Tables 2, 3, 9 and 10, its protocol (Sec. 5.1) and notebook 06's profiles
    fedrd     FedRD (notebook 07): Tables I-IV, its protocol (Sec. V.A) with FedDM, FedProx and FedNova, the scales
    fedprof   FedProf (notebook 08), a package: reported, protocol, plans, analysis, figures, claims

Each declares every notebook part once (PARTS, `part.Part`); its packed parts are its paper-profile run sets (RUN_SETS): `scripts/paper_runs.py` computes and packs
them, and `accounting` counts how many of them are shipped in archive/, and what the rest costs, for
figures/claims.md (never typed).
"""
from __future__ import annotations

import importlib
import pkgutil

from . import part
from .registry import PAPERS, PARTS, RUN_SETS, Paper, register  # noqa: F401  (filled as each package registers)

for _package in sorted(m.name for m in pkgutil.iter_modules(__path__) if m.ispkg):  # every paper's package, which
    importlib.import_module(f"{__name__}.{_package}")  # registers itself (`registry.register`): none is listed here

from . import fedcr, fedlog, fedprof, fedrd  # noqa: E402  (the names, for `from fedlib.papers import fedlog`)

PROFILE_NAMES = ("smoke", "quick", "paper")


def commands_for(configs: list, undeclared: str = part.UNDECLARED) -> str:
    """The `scripts/paper_runs.py` commands of the declared run sets that hold `configs` (`part.commands_for`): what
    a notebook names for the runs it misses (part.Runs calls it with them)."""
    return part.commands_for(configs, RUN_SETS.values(), undeclared)


def read(profile: str, *parts: part.Part, shipped_prefixes: bool = False) -> tuple[part.Read, ...]:
    """`part.read` of `parts` at `profile`, naming missing runs with every declared run set that holds them."""
    return part.read(profile, *parts, sets=RUN_SETS.values(), shipped_prefixes=shipped_prefixes)


def read_notebook(profile: str, notebook: str, parts=None, shipped_prefixes: bool = False) -> part.Reads:
    """Every part of `notebook` at `profile` (those its paper declares, in their order; `parts`: these instead, e.g.
    the datasets whose files are here, or parts narrowed by the notebook's knobs with `Part.at`; none: nothing to
    read), in one sweep, so that the workers stay busy; a part read at another profile (`Part.read_at`: FedRD's
    ladder, its shipped runs in every profile) in a sweep of its own after. Missing runs are named with every
    declared run set that holds them (`read`)."""
    parts = tuple(p for p in PARTS.values() if p.notebook == notebook) if parts is None else tuple(parts)
    if not parts and not any(p.notebook == notebook for p in PARTS.values()):
        known = sorted({p.notebook for p in PARTS.values()})
        raise ValueError(f"no part is declared for notebook {notebook!r}; the notebooks with parts: {', '.join(known)}")
    sweeps: dict[str, list[part.Part]] = {}
    for p in parts:
        sweeps.setdefault(p.read_at, []).append(p)
    by_part = {}
    for at, group in sweeps.items():
        by_part |= {p.name: r for p, r in zip(group, read(at or profile, *group, shipped_prefixes=shipped_prefixes))}
    return part.Reads(profile, notebook, {p.name: by_part[p.name] for p in parts})


__all__ = ["PAPERS", "PARTS", "PROFILE_NAMES", "RUN_SETS", "Paper", "commands_for", "fedcr", "fedlog", "fedprof",
           "fedrd", "read", "read_notebook", "register"]
