"""FedCR's Fig. 2 (notebook 06, part E): compute the four views a profile draws (FedCR on MNIST, V = 2, n1 and n2,
beta 0 and 5e-4, seed 0; trained, then one client trains on) into the results cache, skipping those already there;
with --pack, copy them into archive/fedcr_fig2_view_v1/ (JSON, read as data), from which the paper profile, which
computes nothing, draws Fig. 2 and judges its claims.

    OMP_NUM_THREADS=1 python scripts/fedcr_fig2_views.py [--profile paper] [--pack]
"""
from __future__ import annotations

import argparse
import shutil
import time
from functools import partial

import torch

from fedlib import archive
from fedlib.papers import fedcr
from fedlib.papers.fedcr import analysis, plans
from fedlib.paths import results_dir


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--profile", default="paper", choices=sorted(fedcr.PROFILES))
    p.add_argument("--pack", action="store_true", help="copy the cached views into archive/ (computes nothing)")
    args = p.parse_args()
    f2 = fedcr.PROFILES[args.profile].fig2
    cases = plans.fig2_cases(partial(fedcr.run, args.profile), f2)
    names = [f"{cfg.key()}_e{f2.epochs}_n{f2.points}.json" for _, cfg in cases]
    if args.pack:
        have = [n for n in names if (results_dir() / analysis.VIEWS / n).exists()]
        (archive.folder() / analysis.VIEWS).mkdir(parents=True, exist_ok=True)
        for n in have:
            shutil.copyfile(results_dir() / analysis.VIEWS / n, archive.folder() / analysis.VIEWS / n)
        print(f"{len(have)} of {len(names)} views in {archive.folder() / analysis.VIEWS}"
              + ("" if len(have) == len(names) else f"; compute the rest with `{__file__} --profile {args.profile}`"))
        return
    torch.set_num_threads(1)
    for ((q, beta), cfg), name in zip(cases, names):
        t0 = time.perf_counter()
        v = analysis.cached_view(cfg, f2.epochs, f2.points)
        print(f"Fig. 2 {q} beta={beta:g}: client {v['client']} ({v['classes']} classes), {len(v['y'])} points, "
              f"{time.perf_counter() - t0:.0f} s ({name})", flush=True)


if __name__ == "__main__":
    main()
