"""Compute paper-setting runs into the results cache, one after another (resumable: finished runs are skipped, and a
run killed mid-way goes on from its checkpoint, `fedlib.checkpoint`); pack the finished ones into `archive/`.

    OMP_NUM_THREADS=1 python scripts/paper_runs.py SET [--seeds 0-4] [--only LABEL ...] [--reverse] [--shard 0/2]
    python scripts/paper_runs.py SET --pack      # the finished ones into archive/<SET>_paper.jsonl.gz
    python scripts/paper_runs.py SET --list      # the runs of SET, and which are done

Sets (the configs are the notebooks' own, from `fedlib.papers`, so the notebooks read what is packed):
  table1, augment      notebook 02: MNIST Table 1 (every entry) and the augmentation ablation
  tableA1              notebook 02: Table A.1 on MNIST (3 and 5 classes per client)
  dp, dp_fashion_mnist notebook 03: FedLog with central, local and formal DP over the epsilon grid
  fig3_left, fig2      notebook 05: flexible architectures; clients trained to the local optimum
  feddbe_kappa         notebook 02: FedDBE in Table 1's Adam regime, kappa from fedlog.FEDDBE_KAPPA_GRID, seed 0
  fedprof_table3       notebook 08 (d): Table 3 stand-in, 200 clients on all of MNIST
  fedprof_fig1, fedprof_alpha   notebook 08: Fig. 1's four data conditions; alpha 0, 1, 100
  fedcr_table2_n1, fedcr_table2_n2   notebook 06 (a): FashionMNIST, FedCR, FedAvg(-FT), Ditto and FedRep, 250 rounds
  fedcr_table9         notebook 06 (b): FedCR-NA against local training, k classes per client
  fedrd_table1         notebook 07 (c): FedRD, FedDM, FedAvg, FedProx, FedNova on FashionMNIST (paper size)
  fedrd_ladder         notebook 07: the same at a reduced scale, FedDM and FedRD (real and random initialisation)
                       at T = 10, 30, 100, 300 matching steps (fedrd.LADDER), the averaging baselines once
Two jobs share a 2-core machine: give them `--shard 0/2` and `--shard 1/2` (or one `--reverse`).
`--pack` computes nothing: it adds the runs of SET that are in the results cache to the shipped archive.
"""
from __future__ import annotations

import argparse
import re

import torch

from fedlib import archive, cache, knobs
from fedlib import experiments as ex
from fedlib.papers import fedcr, fedlog, fedprof, fedrd

AUGMENT_METHODS = ["FedAvg", "FedBabu", "FedLog", "FedLog-C"]
FEDCR_TABLE2_LABELS = ["FedCR", "FedAvg", "Ditto", "FedRep"]  # FedRep: the strongest other baseline of the paper's
# FashionMNIST rows (89.78 n1, 88.90 n2)
ARCHIVE_NAMES = {"table1": "table1_mnist_paper", "augment": "augment_mnist_paper"}


def configs_of(what: str, seeds: list[int], only: list[str]) -> list[tuple[str, ex.Config]]:
    """(label, Config) of every run of a set, seed by seed (a stopped job leaves whole seeds)."""
    runs: list[tuple[str, ex.Config]] = []
    if what in ("table1", "augment"):
        labels = AUGMENT_METHODS if what == "augment" else list(fedlog.TABLE1_METHODS) + list(fedlog.EXTRA_METHODS)
        extra = dict(augment=True) if what == "augment" else {}
        runs = [(lab, fedlog.table1_config("mnist", lab, seed=s, **extra)) for s in seeds for lab in labels]
    elif what == "tableA1":  # notebook 02: Table A.1 on MNIST, 3 and 5 classes per client
        S = fedlog.TABLE1_PROFILES["paper"]["tableA1"]
        labels = [lab for lab in fedlog.TABLE_A1_METHODS for _ in seeds]  # table_a1_configs' order
        runs = [(f"{lab} k={k}", c) for (d, k), s in S.items() if d == "mnist"
                for lab, c in zip(labels, fedlog.table_a1_configs(d, k, {**s, "seeds": seeds}))]
    elif what in ("dp", "dp_fashion_mnist"):  # notebook 03: FedLog without DP, formal, central and local DP
        d = "mnist" if what == "dp" else "fashion_mnist"
        s = fedlog.DP_PROFILES["paper"]["runs"][d]
        s = {**s, "seeds": seeds, **({"formal": {**s["formal"], "seeds": [x for x in seeds if x in s["formal"]["seeds"]]}}
                                      if s.get("formal") else {})}
        runs = [(f"{c.options.get('dp', 'no DP')} eps={c.options.get('epsilon', '-')} "
                 f"{c.options.get('accountant', '')}".strip(), c) for c in fedlog.dp_configs(d, s)]
    elif what in ("fig3_left", "fig2"):  # notebook 05, on MNIST (and FashionMNIST with --only-dataset)
        S = fedlog.CONVERGENCE_PROFILES["paper"]["fig3" if what == "fig3_left" else "fig2"]
        build = fedlog.fig3_configs if what == "fig3_left" else fedlog.fig2_configs
        runs = [(f"{lab} {d}", c) for d in ("mnist", "fashion_mnist")
                for lab, cs in build(d, {**S, "seeds": seeds}).items() for c in cs]
    elif what == "feddbe_kappa":
        runs = [(f"kappa {k:g}", fedlog.table1_config("mnist", next(iter(fedlog.EXTRA_METHODS)), seed=0,
                                                     options={"kappa": k})) for k in fedlog.FEDDBE_KAPPA_GRID]
    elif what == "fedprof_table3":
        S = fedprof.PROFILES["paper"]
        runs = [(f"{lab} C={C}", fedprof.run("paper", lab, C, s)) for s in seeds for C in S["fractions"]
                for lab in fedprof.FULL + fedprof.PARTIAL]
    elif what == "fedprof_fig1":
        f1 = fedprof.PROFILES["paper"]["fig1"]
        runs = [(cond, fedprof.run("paper", "FedAvg", f1["participation"], s, rounds=f1["rounds"], **over))
                for s in seeds for cond, over in fedprof.CONDITIONS.items()]
    elif what == "fedprof_alpha":
        S = fedprof.PROFILES["paper"]
        runs = [(f"alpha {a:g}", fedprof.run("paper", "FedProf (partial)", S["fractions"][-1], s,
                                                options={"alpha": a})) for s in seeds for a in S["alphas"]]
    elif what in ("fedcr_table2_n1", "fedcr_table2_n2"):
        part = what[-2:]
        runs = [(lab, fedcr.run("paper", "fashion_mnist", lab, part, s)) for s in seeds
                for lab in FEDCR_TABLE2_LABELS]  # Ditto at the paper's lambda for the column (fedcr.DITTO_LAM)
    elif what == "fedcr_table9":
        S = fedcr.PROFILES["paper"]
        runs = [(f"{lab} k={k}", fedcr.run("paper", "fashion_mnist", lab, "n1", s, classes=k,
                                              rounds=S["table9"]["rounds"]))
                for k in S["table9"]["ks"] for s in seeds for lab in ("FedCR-NA", "Local")]
    elif what == "fedrd_ladder":  # rungs first (cheap to dear), the averaging baselines once for every rung
        L = fedrd.LADDER
        runs = [(lab, fedrd.ladder(lab, s)) for s in seeds for lab in ("FedAvg", "FedProx", "FedNova")]
        runs += [(f"{lab} T={T} {init}", fedrd.ladder(lab, s, T, init)) for T in L["steps"] for s in seeds
                 for lab in ("FedDM", "FedRD") for init in ("real", "random")]
    elif what == "fedrd_table1":
        runs = [(lab, fedrd.scaled("fashion_mnist", lab, "paper", seed=s)) for s in seeds for lab in fedrd.METHODS]
    else:
        raise SystemExit(f"unknown set {what!r}")
    labels = {lab for lab, _ in runs}
    unknown = set(only) - labels
    if unknown:
        raise SystemExit(f"unknown label(s) {sorted(unknown)}; choose from {', '.join(sorted(labels))}")
    return [(lab, cfg) for lab, cfg in runs if not only or lab in only]


SETS = ["table1", "tableA1", "augment", "dp", "dp_fashion_mnist", "fig3_left", "fig2", "feddbe_kappa", "fedprof_table3", "fedprof_fig1", "fedprof_alpha", "fedcr_table2_n1",
        "fedcr_table2_n2", "fedcr_table9", "fedrd_table1", "fedrd_ladder"]


def parse_seeds(p: argparse.ArgumentParser, seeds: str) -> tuple[int, int]:
    """--seeds N or A-B, A <= B, at most knobs.MAX_SEEDS seeds (argparse's error, naming the option, otherwise)."""
    m = re.fullmatch(r"(\d+)(?:-(\d+))?", seeds)
    if not m:
        p.error(f"--seeds takes N or A-B (e.g. 2 or 0-2), got {seeds!r}")
    lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
    if hi < lo or hi - lo + 1 > knobs.MAX_SEEDS or hi >= 2 ** 63:
        p.error(f"--seeds {seeds!r}: A-B needs A <= B and at most {knobs.MAX_SEEDS} seeds")
    return lo, hi


def parse_shard(p: argparse.ArgumentParser, shard: str) -> tuple[int, int]:
    """--shard i/n with 0 <= i < n: job i of n takes every n-th run from the i-th, so n jobs cover every run once."""
    m = re.fullmatch(r"(\d+)/(\d+)", shard)
    if not m or not int(m.group(2)) >= 1 or not 0 <= int(m.group(1)) < int(m.group(2)) or int(m.group(2)) > 1024:
        p.error(f"--shard takes i/n with 0 <= i < n <= 1024 (e.g. 0/2 and 1/2 for two jobs), got {shard!r}")
    return int(m.group(1)), int(m.group(2))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("what", choices=SETS)
    p.add_argument("--seeds", default=None, help="a range, e.g. 0-2 (default: 0-4 for table1 and augment, else 0-2)")
    p.add_argument("--only", action="append", default=[], help="a label (repeat for more; labels hold commas)")
    p.add_argument("--reverse", action="store_true")
    p.add_argument("--shard", default="0/1", help="i/n: this job takes every n-th run, from the i-th")
    p.add_argument("--pack", action="store_true")
    p.add_argument("--list", action="store_true")
    args = p.parse_args()
    knobs.check_or_exit()
    seeds = args.seeds or ("0-4" if args.what in ("table1", "augment") else "0-2")
    lo, hi = parse_seeds(p, seeds)
    i, n = parse_shard(p, args.shard)
    runs = configs_of(args.what, list(range(lo, hi + 1)), args.only)
    if args.pack:
        done = [r for r in (cache.load(c) for _, c in runs) if r is not None]
        target = archive.folder() / f"{ARCHIVE_NAMES.get(args.what, args.what + '_paper')}.jsonl.gz"
        try:
            archive.write(target, done)
        except archive.ArchiveError as err:
            raise SystemExit(f"--pack: {err}") from None
        print(f"{len(done)} of {len(runs)} runs in {target} ({target.stat().st_size / 1e3:.0f} kB)")
        return
    if args.list:
        for lab, cfg in runs:
            print(f"{'done' if ex.is_cached(cfg) else 'todo'}  seed {cfg.seed}  {lab}  {cfg.key()}")
        return
    torch.set_num_threads(1)
    mine = runs[i::n]
    for lab, cfg in reversed(mine) if args.reverse else mine:
        if ex.is_cached(cfg):
            continue
        res = ex.run(cfg, progress=False)
        best = max(res["rounds"]["acc_mean"])
        final = res.get("final", {}).get("acc_mean")
        print(f"{args.what} seed {cfg.seed} {lab}: best {best:.4f}" + (f", after the fine-tune {final:.4f}"
              if final is not None else "") + f" in {res['wall_s']:.0f} s", flush=True)


if __name__ == "__main__":
    main()
