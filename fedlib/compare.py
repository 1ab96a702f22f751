"""A sweep as a comparison: one row per grid cell over its seeds (mean +- SE of final and best accuracy, megabytes
sent), and with `against` a paired test of each cell against the same settings run with another method, seed by
seed, by the rule the claims use (`claims.rules.paired`: a one-sided paired t at 2.5% each way, its p and how many
seeds point the claim's way). `SweepReport.summary` and `fedlib sweep --against` call it."""
from __future__ import annotations

import json
from dataclasses import asdict

from .result import MB, Result
from .stats import mean_se

CELL_OUT = ("seed",)  # what a grid cell is taken over
MATCH_OUT = ("seed", "method", "options")  # what may differ between a cell and the one it is compared against


def _key(cfg, out: tuple) -> str:
    return json.dumps({k: v for k, v in asdict(cfg).items() if k not in out}, sort_keys=True)


def summary(configs: list, results: list, against: str | None = None) -> list[dict]:
    """One row per grid cell (the configs that differ only in their seed), in the order the cells first appear:
    the method and what the grid varied, its seeds, final and best accuracy (%) as mean and SE, megabytes sent up and
    down (mean); with `against` (a method of the grid), each other cell's paired comparison with the cell of that
    method and the same settings over the seeds both have: the mean difference of final accuracy (points) and its
    SE, the one-sided p that it is higher, the verdict and the seeds toward. A failed run counts as a missing seed."""
    from .claims import rules as R

    varied = [k for k in asdict(configs[0]) if k != "seed"
              and len({json.dumps(asdict(c)[k], sort_keys=True) for c in configs}) > 1]
    cells: dict[str, dict] = {}
    for cfg, res in zip(configs, results):
        cell = cells.setdefault(_key(cfg, CELL_OUT), {"cfg": cfg, "by_seed": {}})
        if res is not None:
            cell["by_seed"][cfg.seed] = Result(res)
    rows = []
    for cell in cells.values():
        cfg, runs = cell["cfg"], cell["by_seed"]
        row = {"method": cfg.method, **{k: _shown(getattr(cfg, k)) for k in varied if k != "method"},
               "seeds": len(runs)}
        if runs:
            for name, f in (("final_acc", lambda r: 100 * r.final()), ("best_acc", lambda r: 100 * r.best())):
                row[f"{name}_mean"], row[f"{name}_se"] = (round(x, 4) for x in mean_se([f(r) for r in runs.values()]))
            row["up_mb"] = round(sum(float(r.bits_up.sum()) for r in runs.values()) / len(runs) / MB, 3)
            row["down_mb"] = round(sum(float(r.bits_down.sum()) for r in runs.values()) / len(runs) / MB, 3)
        if against is not None:
            row.update(_against(cell, cells, against, R))
        rows.append(row)
    return rows


def _shown(v):
    return json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v


def _against(cell: dict, cells: dict, against: str, R) -> dict:
    cfg = cell["cfg"]
    if cfg.method == against:
        return {"against": "", "paired_seeds": "", "diff_mean": "", "diff_se": "", "p_higher": "", "verdict": "",
                "toward": ""}
    match = _key(cfg, MATCH_OUT)
    other = next((c for c in cells.values() if c["cfg"].method == against and _key(c["cfg"], MATCH_OUT) == match),
                 None)
    seeds = sorted(set(cell["by_seed"]) & set(other["by_seed"])) if other else []
    row = {"against": against, "paired_seeds": len(seeds)}
    if not seeds:
        return row | {"diff_mean": "", "diff_se": "", "p_higher": "", "verdict": R.MISSING, "toward": ""}
    ours = [100 * cell["by_seed"][s].final() for s in seeds]
    theirs = [100 * other["by_seed"][s].final() for s in seeds]
    d = R.decide(ours, theirs, R.paired(">"))
    return row | {"diff_mean": round(float(d.margin), 4), "diff_se": "" if d.se == "" or d.se != d.se else
                  round(float(d.se), 4), "p_higher": "" if d.p == "" else float(f"{d.p:.4g}"), "verdict": d.verdict,
                  "toward": d.toward}
