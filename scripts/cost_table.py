"""The cost of the paper-profile runs on this machine, measured before computing them (notebooks 06-08's sets, or with
--fedlog FedLog's: notebooks 02, 03 and 05): seconds per
round of one run of each set of `scripts/paper_runs.py` (all data, the papers' models, epochs and matching steps),
its rounds, and the core-hours of the whole set. One thread, as the paper runs are made (two jobs side by side).

    OMP_NUM_THREADS=1 python scripts/cost_table.py [--sets fedprof_table3 fedcr_table2_n1 ...] [--out FILE.md] [--record]
    python scripts/cost_table.py --from-runs --sets fig3_left [--like fig3_left] [--record]   # times nothing

Each set is costed at the seeds its notebook's paper profile reads (`Part.seeds`). `--record` also writes each
set's core-hours into archive/costs.csv (`fedlib.papers.accounting`), from which figures/claims.md lists the
cost of every set that is not shipped yet.

A round is timed as the second of two (the first pays for warm-up), in processor time (a run of two rounds less a
run of one), so that other jobs beside it do not count. Where one
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

from fedlib import cache, experiments as ex

import paper_runs  # noqa: E402  (scripts/ is on sys.path when this file is run)


def round_seconds(cfg) -> float:
    """The processor time of a run's second round: a run of two rounds less a run of one (the first round pays for
    warm-up), so that the jobs beside it (the background slots) do not count, as their wall time would."""
    two = ex.run(replace(cfg, rounds=2, final_finetune_epochs=0), cache=False, progress=False)
    one = ex.run(replace(cfg, rounds=1, final_finetune_epochs=0), cache=False, progress=False)
    return two["cpu_s"] - one["cpu_s"]


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


FEDRD_PAPER_SIZE = ("fedrd_table1", "fedrd_table3")  # one round measured on 5% of the data and extrapolated

# FedLog's paper sets (notebooks 02, 03 and 05)
FEDLOG_SETS = ("table1", "tableA1", "dp", "fig3_left", "fig2", "table1_fashion_mnist", "dp_fashion_mnist",
               "fig3_left_fashion_mnist")


def from_runs(what: str, like: str | None = None) -> dict:
    """A set's cost from the wall time of finished runs (in the results cache or archive/) rather than from one
    timed round: for each label of the set (its run group, e.g. "FedDM T=300 real"), the mean time of its finished
    runs (the processor time of those that record it, else the wall time), times the set's runs of it; summed. With `like`, whose labels are its own ("FedLog mnist" for
    "FedLog fashion_mnist"), method by method instead: the finished runs of each method in `like`. A run's later rounds
    can cost more than its second (Fig. 3 left's rose from about 2 to 4-6 s), and the runs are made beside another
    single-threaded job, so this is what computing the set costs as it is computed. Refused, before anything is
    written, when a label (a method, with `like`) has no finished run: a group's runs do not stand for another's
    (FedCR's cost 4x FedAvg's; FedRD's ladder at T = 300 about 10x its T = 10)."""
    runs = paper_runs.configs_of(what, list(paper_runs.RUN_SETS[what].seeds), [])
    own = like in (None, what)  # `--like` the set itself: its own runs, method by method (FedCR's Table 9: k = 3's
    # runs stand for k = 5 and 7, whose clients hold as many records)
    source = runs if own else paper_runs.configs_of(like, list(paper_runs.RUN_SETS[like].seeds), [])

    def group(label, cfg):  # the run group a run's wall time stands for
        return cfg.method if like else label

    times: dict[str, dict[str, list[float]]] = {}  # group -> {"cpu_s": [...], "wall_s": [...]}
    kinds: dict[str, list[float]] = {}  # processor kind (provenance.machine) -> the processor times made on it
    for label, cfg in source:
        r = cache.load(cfg)
        for k in ("cpu_s", "wall_s") if r is not None else ():
            if r.get(k):
                times.setdefault(group(label, cfg), {"cpu_s": [], "wall_s": []})[k].append(r[k])
                if k == "cpu_s":
                    kinds.setdefault((r.get("code") or {}).get("machine") or "a processor not recorded", []).append(r[k])
                break  # a run's processor time where it records one, else its wall time
    groups = list(dict.fromkeys(group(label, cfg) for label, cfg in runs))
    missing = [g for g in groups if g not in times]
    if missing:
        raise SystemExit(f"--from-runs: no run of {', '.join(missing)} in {like or what} is finished, so there is no "
                         f"time to read for {'it' if len(missing) == 1 else 'them'}; compute one first "
                         f"(scripts/paper_runs.py {like or what} --only LABEL) or time it without --from-runs")
    # a group whose runs record their processor time is read from those alone: the wall time of the others counts
    # the pauses and the load they were made under (3,264 s of wall time where a like run took 808)
    walls = {g: times[g]["cpu_s"] or times[g]["wall_s"] for g in groups}
    mean = {g: sum(walls[g]) / len(walls[g]) for g in groups}
    hours = sum(mean[group(label, cfg)] for label, cfg in runs) / 3600
    read = sum(len(walls[g]) for g in groups)
    by_cpu = [g for g in groups if times[g]["cpu_s"]]
    left = sum(len(times[g]["wall_s"]) for g in by_cpu)
    time_of = ("the wall time" if not by_cpu else "the processor time" if len(by_cpu) == len(groups) else
               f"the processor time ({', '.join(by_cpu)}; the wall time for the rest)")
    if not own:
        said = f"{time_of} of {read} finished runs of {like} (same clients, model and rounds), method by method"
    elif like:
        said = (f"{time_of} of {read} of its {len(runs)} runs, finished, method by method (a method's finished runs "
                f"stand for its runs at the set's other settings)")
    else:
        said = f"{time_of} of {read} of its {len(runs)} runs, finished, run group by run group"
    said += ("; processor time a run, by processor kind: " + "; ".join(  # the kinds differ by up to 2x (2026-12-02)
        f"{kind}, {len(t)} run{'s' * (len(t) > 1)}, {min(t):.0f}-{max(t):.0f} s, {sum(t) / len(t):.0f} s on average"
        for kind, t in sorted(kinds.items(), key=lambda kt: -len(kt[1]))) if kinds else "")
    said += (f"; {left} finished runs made before runs recorded their processor time are left out (their wall time "
             f"counts pauses and load)" if left else "")
    print(f"| {what} | {len(runs)} | all, from finished runs | "
          f"{'; '.join(f'{g} {mean[g]:.0f} s' for g in groups)} a run | | **{hours:.1f}** | "
          f"{sum(ex.is_cached(c) for _, c in runs)} |", flush=True)
    return {"set": what, "runs": len(runs), "core_hours": f"{hours:.1f}", "bound": "",
            "measured": time.strftime("%Y-%m-%d", time.gmtime()), "basis": "runs", "source": what if own else like,
            "how": f"{'measured as' if own else 'derived from'} {said}, one thread beside another single-threaded "
                   f"job (scripts/cost_table.py --from-runs)"}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sets", nargs="*", default=[s for s in paper_runs.SETS if s.startswith(("fedprof", "fedcr", "fedrd"))])
    p.add_argument("--fedlog", action="store_true", help="FedLog's paper sets (notebooks 02, 03, 05) instead")
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--record", action="store_true", help="write each set's core-hours into archive/costs.csv")
    p.add_argument("--from-runs", action="store_true", help="each set's cost from its finished runs' processor time (else their wall time)")
    p.add_argument("--like", default=None, choices=paper_runs.SETS,
                   help="with --from-runs: the finished runs of this set stand for every run of the sets, method by method "
                   "(the set itself: its own finished runs of a method stand for that method's others)")
    args = p.parse_args()
    if args.like and not args.from_runs:
        p.error("--like goes with --from-runs")
    for what in args.sets:
        if what not in paper_runs.RUN_SETS:
            p.error(f"unknown set {what!r}; choose from {', '.join(paper_runs.SETS)}")
    torch.set_num_threads(1)
    sets = list(FEDLOG_SETS) if args.fedlog else args.sets
    if args.from_runs:
        recorded = [from_runs(what, args.like) for what in sets]
        if args.record:
            from fedlib.papers import accounting

            accounting.write_costs(recorded)
        return
    recorded = []
    lines = ["| set | runs | one run | s / round | rounds | core-hours (set) | shipped |",
             "|---|---|---|---|---|---|---|"]
    for what in sets:
        runs = paper_runs.configs_of(what, list(paper_runs.RUN_SETS[what].seeds), [])
        kinds = {}  # one timing per distinct kind of run in the set; its other runs cost the same per round
        hours, todo = 0.0, 0.0
        for lab, cfg in runs:
            kind = (cfg.dataset, cfg.n_clients, cfg.method, cfg.model, cfg.participation, cfg.local_epochs,
                    cfg.local_optimum, cfg.options.get("dp"), cfg.options.get("accountant"),
                    cfg.options.get("iterations"))  # iterations: a rung of the ladder
            if kind not in kinds:
                t0 = time.perf_counter()
                secs = fedrd_round_seconds(cfg) if what in FEDRD_PAPER_SIZE else round_seconds(cfg)
                kinds[kind] = secs
                note = " (extrapolated)" if what in FEDRD_PAPER_SIZE else ""
                lines.append(f"| {what} | {len(runs)} | {lab}{note} | {secs:.1f} | {cfg.rounds} | | |")
                print(lines[-1], f"  measured in {time.perf_counter() - t0:.0f} s", flush=True)
            cost = kinds[kind] * (cfg.rounds + (1 if cfg.final_finetune_epochs else 0)) / 3600
            hours += cost
            todo += 0.0 if ex.is_cached(cfg) else cost
        shipped = sum(ex.is_cached(c) for _, c in runs)
        lines.append(f"| {what} | {len(runs)} | all | | | **{hours:.1f}** ({todo:.1f} to compute) | {shipped} |")
        print(lines[-1], flush=True)
        recorded.append({"set": what, "runs": len(runs), "core_hours": f"{hours:.1f}", "bound": "",
                         "measured": time.strftime("%Y-%m-%d", time.gmtime()), "basis": "timed", "source": what,
                         "how": "scripts/cost_table.py: the processor time of the second of two rounds of one run of "
                                "each kind, one thread"})
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    if args.record:
        from fedlib.papers import accounting

        accounting.write_costs(recorded)


if __name__ == "__main__":
    main()
