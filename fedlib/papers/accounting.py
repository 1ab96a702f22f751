"""The accounting of the paper-profile run sets: how much of each is shipped in archive/ (`set_status`, `coverage`,
`parts_shipped`) and what the rest costs (archive/costs.csv: `cost_rows`, `measured_costs`, `cost_text`,
`write_costs`), in one module. `scripts/cost_table.py` measures and `python -m fedlib claims` and the book read it."""
from __future__ import annotations

import re

from . import RUN_SETS, part

COSTS_FILE = "costs.csv"  # under archive/: each set's measured core-hours (scripts/cost_table.py --record)
# basis: "timed" (rounds timed by scripts/cost_table.py, or a bound from them) or "runs" (the wall time of finished
# runs, `cost_table.py --from-runs`); source: the set whose rounds or runs were measured (the set itself, or the set
# whose runs stand for its own). how: the measurement in words, for a reader of the file.
COST_COLUMNS = ("set", "runs", "core_hours", "bound", "measured", "basis", "source", "how")
COST_BASES = ("timed", "runs")


def cost_rows(path=None) -> dict[str, dict]:
    """set -> its row of archive/costs.csv as written (every value text); {} without the file. A file with other
    columns, an unknown basis or source, or core-hours that are not a positive number is refused, saying how to rewrite it. Read as
    data, never run."""
    import csv

    from .. import archive

    path = path or archive.folder() / COSTS_FILE
    if not path.exists():
        return {}
    from ..safe_files import regular_file

    with open(regular_file(path, "read"), newline="") as f:
        reader = csv.DictReader(f)
        rows = [(reader.line_num, r) for r in reader]
    redo = "rewrite it with `python scripts/cost_table.py --record` (or `--from-runs --record`)"
    if rows and set(COST_COLUMNS) - set(rows[0][1]):
        raise ValueError(f"{path}: columns {sorted(rows[0][1])}, expected {', '.join(COST_COLUMNS)}; {redo}")
    for line, r in rows:
        if None in r or any(r.get(k) is None for k in COST_COLUMNS):  # a row longer or shorter than the header
            raise ValueError(f"{path}, line {line}: not {len(COST_COLUMNS)} cells ({', '.join(COST_COLUMNS)}); {redo}")
        if r["set"] not in RUN_SETS:
            raise ValueError(f"{path}, line {line}: set {r['set'][:60]!r} is not a set of scripts/paper_runs.py; {redo}")
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", r["measured"]):
            raise ValueError(f"{path}, line {line}: measured {r['measured'][:60]!r} is not a date (YYYY-MM-DD); {redo}")
        allowed = {"basis": COST_BASES, "source": tuple(RUN_SETS), "bound": ("", ">")}
        bad = [(k, r[k]) for k, ok in allowed.items() if r[k] not in ok]
        try:
            hours = float(r["core_hours"])
        except ValueError:
            hours = float("nan")
        if not 0 < hours < float("inf"):
            bad.append(("core_hours", r["core_hours"]))
        if bad:
            raise ValueError(f"{path}: set {r['set']!r} has {bad[0][0]} {bad[0][1]!r} (basis: "
                             f"{' or '.join(COST_BASES)}; source: a set of scripts/paper_runs.py; bound: empty or >); "
                             f"{redo}")
    return {r["set"]: {k: r[k] for k in COST_COLUMNS} for _, r in rows}


def measured_costs(path=None) -> dict[str, dict]:
    """set -> its row of archive/costs.csv (`COST_COLUMNS`, `cost_rows`; core_hours a float, bound ">" where the number
    is a lower bound), as scripts/cost_table.py measured it; {} without the file."""
    return {name: {**r, "core_hours": float(r["core_hours"])} for name, r in cost_rows(path).items()}


cost_text = part.cost_text  # a set's measured cost in words (in part.py, which a paper's figures may import)


def _by_label(runs: list, shipped, most: int = 8) -> str:
    """How much of each label's runs (its seeds) is shipped, for a set shipped in part, in its labels' order (a set
    of more than `most` labels: nothing, the line would be long): " (FedCR 2 of 3, Ditto 3 of 3)"."""
    count: dict[str, list[int]] = {}
    for lab, cfg in runs:
        count.setdefault(lab, [0, 0])
        count[lab][0] += bool(shipped(cfg))
        count[lab][1] += 1
    if len(count) > most:
        return ""
    return " (" + ", ".join(f"{lab} {have} of {n}" for lab, (have, n) in count.items()) + ")"


def set_status(shipped=None, costs: dict | None = None) -> dict[str, dict]:
    """Run set -> {"have", "n": its runs shipped and declared, "cost": its measured cost in words, "command": what
    computes the rest, "where": the paper's tables and figures it stands for, "deviations": what its runs change from
    the paper}, counted from archive/ (`shipped(cfg)`, as `coverage`). The claims report reads it by each row's
    run_set."""
    from .. import archive

    if shipped is None:
        shipped = lambda cfg: archive.find_run(cfg) is not None  # noqa: E731  (made on either device type)
    costs = measured_costs() if costs is None else costs
    out = {}
    for s in RUN_SETS.values():
        runs = s.runs()
        c = costs.get(s.name)
        cost = (f"{'more than ' if c['bound'] == '>' else ''}{c['core_hours']:g} core-hours "
                f"({'from finished runs' if c['basis'] == 'runs' else 'timed'}"
                f"{'' if c['source'] == s.name else ' of ' + c['source']}, {c['measured']})") if c else \
            "cost not measured yet"
        out[s.name] = {"have": sum(bool(shipped(cfg)) for _, cfg in runs), "n": len(runs), "cost": cost,
                       "command": s.command(), "where": list(s.where), "deviations": s.deviations}
    return out


def coverage(shipped=None, costs: dict | None = None) -> dict[str, dict]:
    """Notebook -> {"lines": what of its paper-profile runs is shipped, a line per run set that is not whole (one
    shipped in part: label by label, `_by_label`), with its measured cost (`measured_costs`) and the command that computes the rest; "unshipped": the paper's tables and
    figures (`where`) of those sets; "why": where -> how much of its set is shipped and its cost, in a few words;
    "deviations": where -> what its runs change from the paper}. Counted from the
    archive (`shipped(cfg)`: default, the run is in archive/, `archive.find_run`: made on this device type or the other)."""
    from .. import archive

    if shipped is None:
        shipped = lambda cfg: archive.find_run(cfg) is not None  # noqa: E731  (made on either device type)
    costs = measured_costs() if costs is None else costs
    out: dict[str, dict] = {}
    for s in RUN_SETS.values():
        entry = out.setdefault(s.notebook, {"lines": [], "unshipped": [], "why": {}, "deviations": {}})
        runs = s.runs()
        have = sum(bool(shipped(cfg)) for _, cfg in runs)
        if have < len(runs):
            entry["lines"].append(f"{s.name} ({', '.join(s.where)}): {have} of {len(runs)} runs shipped"
                                  f"{_by_label(runs, shipped) if have else ''}, "
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


def parts_shipped(shipped=None) -> dict[str, tuple[int, int, int, int]]:
    """Notebook -> (run sets whole in archive/, run sets, runs shipped, runs) of its paper profile: what its
    committed paper-profile outputs can draw (the book's front page says it, not "complete" alone)."""
    from .. import archive

    if shipped is None:
        shipped = lambda cfg: archive.find_run(cfg) is not None  # noqa: E731
    out: dict[str, list[int]] = {}
    for s in RUN_SETS.values():
        runs = s.runs()
        have = sum(bool(shipped(cfg)) for _, cfg in runs)
        counts = out.setdefault(s.notebook, [0, 0, 0, 0])
        counts[0] += have == len(runs)
        counts[1] += 1
        counts[2] += have
        counts[3] += len(runs)
    return {k: tuple(v) for k, v in out.items()}


def write_costs(rows: list[dict], path=None) -> None:
    """Merge `rows` (one per set, `COST_COLUMNS`) into the costs file (default archive/costs.csv): a set measured
    again replaces its row, the others stay as they were written; a row `cost_rows` would refuse is refused before
    the file changes."""
    import csv

    from .. import archive

    import fcntl
    import io

    from ..safe_files import open_lock, replace_text

    path = path or archive.folder() / COSTS_FILE
    unknown = [r.get("set") for r in rows if r.get("set") not in RUN_SETS]
    if unknown:
        raise ValueError(f"{unknown[0]!r} is not a set of scripts/paper_runs.py ({', '.join(RUN_SETS)}); nothing "
                         f"was written")
    with open_lock(path.with_name(f".{path.name}.lock")) as lock:  # two --record at once: one after the other
        fcntl.flock(lock, fcntl.LOCK_EX)
        kept = cost_rows(path)
        kept.update({r["set"]: r for r in rows})
        buffer = io.StringIO()
        w = csv.DictWriter(buffer, fieldnames=COST_COLUMNS, lineterminator="\r\n")
        w.writeheader()
        w.writerows(kept[name] for name in sorted(kept, key=list(RUN_SETS).index))
        check = path.with_name(f".check-{path.name}")
        replace_text(check, buffer.getvalue())  # checked as the file it will be, before it replaces the file
        try:
            cost_rows(check)
        finally:
            check.unlink(missing_ok=True)
        replace_text(path, buffer.getvalue())  # a symlink at path is replaced, never written through
