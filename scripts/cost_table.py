"""The cost of the paper-profile runs on this machine, measured before computing them (notebooks 06-08's sets, or with
--fedlog FedLog's: notebooks 02, 03 and 05): seconds per
round of one run of each set of `scripts/paper_runs.py` (all data, the papers' models, epochs and matching steps),
its rounds, and the core-hours of the whole set. One thread, as the paper runs are made (two jobs side by side).

    OMP_NUM_THREADS=1 python scripts/cost_table.py [--sets fedprof_table3 fedcr_table2_n1 ...] [--out FILE.md]

A round is timed as the second of two (the first pays for warm-up), from the run's own per-round `seconds`. Where one
round at the paper's size would itself take most of an hour (FedRD's protocol: ConvNet-128 on all of FashionMNIST,
1000 matching steps, 500 server epochs), it is measured on 5% of the data with fewer matching steps and server epochs
and extrapolated (linear in the data, the steps and the epochs, from three such runs); those rows say
"extrapolated". The printed markdown table goes into docs/measurements.md.
"""
from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import torch

from fedlib import experiments as ex

import paper_runs  # noqa: E402  (scripts/ is on sys.path when this file is run)


def round_seconds(cfg) -> float:
    res = ex.run(replace(cfg, rounds=2, final_finetune_epochs=0), cache=False, progress=False)
    return res["rounds"]["seconds"][1]


def fedrd_round_seconds(cfg) -> float:
    """One round of a FedRD-protocol run at full size, extrapolated from runs on 5% of the data."""
    small = replace(cfg, train_fraction=0.05)
    if cfg.method not in ("fedrd", "feddm"):
        return round_seconds(small) / 0.05
    o = cfg.options
    it, se = 20, 10

    def at(iterations, epochs):
        return round_seconds(replace(small, options={**o, "iterations": iterations, "server_epochs": epochs}))

    a, b, c = at(it, se), at(2 * it, se), at(it, 2 * se)
    per_it, per_se = (b - a) / it, (c - a) / se
    rest = a - it * per_it - se * per_se
    return rest / 0.05 + o["iterations"] * per_it + o["server_epochs"] * per_se


# FedLog's paper sets and their seeds (the paper's 10 for Table 1, Table A.1 and the convergence figures; notebook
# 03's paper profile 5)
FEDLOG_SEEDS = {"table1": 10, "tableA1": 10, "dp": 5, "fig3_left": 10, "fig2": 10}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sets", nargs="*", default=[s for s in paper_runs.SETS if s.startswith(("fedprof", "fedcr", "fedrd"))])
    p.add_argument("--fedlog", action="store_true", help="FedLog's paper sets (notebooks 02, 03, 05) instead")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    torch.set_num_threads(1)
    sets = list(FEDLOG_SEEDS) if args.fedlog else args.sets
    lines = ["| set | runs | one run | s / round | rounds | core-hours (set) | shipped |",
             "|---|---|---|---|---|---|---|"]
    for what in sets:
        runs = paper_runs.configs_of(what, list(range(FEDLOG_SEEDS.get(what, 3))), [])
        kinds = {}  # one timing per distinct kind of run in the set; its other runs cost the same per round
        hours, todo = 0.0, 0.0
        for lab, cfg in runs:
            kind = (cfg.method, cfg.model, cfg.participation, cfg.local_epochs, cfg.local_optimum,
                    cfg.options.get("dp"), cfg.options.get("accountant"), cfg.options.get("iterations"))  # T: a rung
            if kind not in kinds:
                t0 = time.perf_counter()
                secs = fedrd_round_seconds(cfg) if what == "fedrd_table1" else round_seconds(cfg)
                kinds[kind] = secs
                note = " (extrapolated)" if what == "fedrd_table1" else ""
                lines.append(f"| {what} | {len(runs)} | {lab}{note} | {secs:.1f} | {cfg.rounds} | | |")
                print(lines[-1], f"  measured in {time.perf_counter() - t0:.0f} s", flush=True)
            cost = kinds[kind] * (cfg.rounds + (1 if cfg.final_finetune_epochs else 0)) / 3600
            hours += cost
            todo += 0.0 if ex.is_cached(cfg) else cost
        shipped = sum(ex.is_cached(c) for _, c in runs)
        lines.append(f"| {what} | {len(runs)} | all | | | **{hours:.1f}** ({todo:.1f} to compute) | {shipped} |")
        print(lines[-1], flush=True)
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
