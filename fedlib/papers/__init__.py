"""One home per paper: what it reports, its protocol's Config builders, its notebooks' profiles and runs.

    fedlog    FedLog (notebooks 01-05): Table 1, Table A.1, Tables A.3-A.5's settings, notebook 02's parts
    fedcr     FedCR (notebook 06): Tables 2, 3, 9 and 10, its protocol (Sec. 5.1) and notebook 06's profiles
    fedrd     FedRD (notebook 07): Tables I-IV, its protocol (Sec. V.A) with FedDM, FedProx and FedNova, the scales
    fedprof   FedProf (notebook 08), a package: reported, protocol, plans, analysis, figures, claims

Each declares its paper-profile runs once (RUN_SETS, `runset.RunSet`): `scripts/paper_runs.py` computes and packs
them, and `coverage` counts how many of them are shipped in archive/ for figures/claims.md (never typed).
"""
from __future__ import annotations

from . import fedcr, fedlog, fedprof, fedrd

PROFILE_NAMES = ("smoke", "quick", "paper")
RUN_SETS = {s.name: s for paper in (fedlog, fedprof, fedcr, fedrd) for s in paper.RUN_SETS}


def settings(table: dict, profile: str) -> dict:
    """A notebook's own copy of its settings at `profile` from one of the modules' profile tables (e.g.
    `fedlog.DP_PROFILES`), so that what it changes stays in the notebook; an unknown profile is refused."""
    import copy

    if profile not in table:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(table)}")
    return copy.deepcopy(table[profile])


COSTS_FILE = "costs.csv"  # under archive/: each set's measured core-hours (scripts/cost_table.py --record)
COST_COLUMNS = ("set", "runs", "core_hours", "bound", "measured", "how")


def measured_costs(path=None) -> dict[str, dict]:
    """set -> its row of archive/costs.csv (`COST_COLUMNS`; core_hours a float, bound ">" where the number is a lower
    bound), as scripts/cost_table.py measured it; {} without the file. Read as data, never run."""
    import csv

    from .. import archive

    path = path or archive.folder() / COSTS_FILE
    if not path.exists():
        return {}
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if rows and set(COST_COLUMNS) - set(rows[0]):
        raise ValueError(f"{path}: columns {sorted(rows[0])}, expected {', '.join(COST_COLUMNS)}; rewrite it with "
                         f"`python scripts/cost_table.py --record`")
    return {r["set"]: {**r, "core_hours": float(r["core_hours"])} for r in rows}


def cost_text(name: str, costs: dict) -> str:
    """A set's measured cost in words, or that it was not measured."""
    c = costs.get(name)
    if c is None:
        return "cost not measured yet (`scripts/cost_table.py`)"
    at_least = "more than " if c["bound"] == ">" else ""
    how = str(c["how"])  # scripts/cost_table.py's words for how it came by the number
    how = ("derived from a measured bound" if how.startswith("a derived") else
           f"derived from {how.split(' finished runs of ')[1].split(' ')[0]}'s finished runs" if
           how.startswith("derived from the wall time") else
           "measured from its finished runs" if how.startswith("measured as the wall time") else "measured")
    return (f"{at_least}{c['core_hours']:g} core-hours for all its runs (one thread, {how} {c['measured']}, "
            f"docs/measurements.md)")


def coverage(shipped=None, costs: dict | None = None) -> dict[str, dict]:
    """Notebook -> {"lines": what of its paper-profile runs is shipped, a line per run set that is not whole, with
    its measured cost (`measured_costs`) and the command that computes the rest; "unshipped": the paper's tables and
    figures (`where`) of those sets; "why": where -> how much of its set is shipped and its cost, in a few words;
    "deviations": where -> what its runs change from the paper}. Counted from the
    archive (`shipped(cfg)`: default, the run is in archive/ under its key)."""
    from .. import archive

    if shipped is None:
        shipped = lambda cfg: archive.find(cfg.method, cfg.key()) is not None  # noqa: E731
    costs = measured_costs() if costs is None else costs
    out: dict[str, dict] = {}
    for s in RUN_SETS.values():
        entry = out.setdefault(s.notebook, {"lines": [], "unshipped": [], "why": {}, "deviations": {}})
        runs = s.runs()
        have = sum(bool(shipped(cfg)) for _, cfg in runs)
        if have < len(runs):
            entry["lines"].append(f"{s.name} ({', '.join(s.where)}): {have} of {len(runs)} runs shipped, "
                                  f"{cost_text(s.name, costs)}; compute the rest with `{s.command()}`, then "
                                  f"`{s.command()} --pack`")
            entry["unshipped"] += list(s.where)
            for w in s.where:  # sets that share a table (the DP sets, one per dataset) are named one after the other
                said = f"{s.name}: {have} of {len(runs)} runs shipped, {cost_text(s.name, costs)}"
                entry["why"][w] = f"{entry['why'][w]}; {said}" if w in entry["why"] else said
        for where in s.where:  # sets of one table with different deviations: both said, each once
            said = entry["deviations"].get(where)
            if s.deviations and s.deviations not in (said or "").split("; "):
                entry["deviations"][where] = f"{said}; {s.deviations}" if said else s.deviations
    return out


__all__ = ["PROFILE_NAMES", "RUN_SETS", "cost_text", "coverage", "measured_costs", "fedcr", "fedlog", "fedprof", "fedrd",
           "settings"]
