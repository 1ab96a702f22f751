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

import torch

from fedlib import archive
from fedlib.papers import fedcr, part
from fedlib.papers.fedcr import plans
from fedlib.paths import results_dir


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--profile", default="paper", choices=sorted(fedcr.PROFILES))
    p.add_argument("--pack", action="store_true", help="copy the cached views into archive/ (computes nothing)")
    args = p.parse_args()
    views, settings = plans.FIG2, plans.FIG2.settings(args.profile)  # a derived part: its plan and files
    plan, folder = views.plan(args.profile), views.derive.folder
    names = [views.derive.file(cfg, settings) for cfgs in plan.values() for cfg in cfgs]
    if args.pack:
        have = [n for n in names if (results_dir() / folder / n).exists()]
        (archive.folder() / folder).mkdir(parents=True, exist_ok=True)
        for n in have:
            shutil.copyfile(results_dir() / folder / n, archive.folder() / folder / n)
        print(f"{len(have)} of {len(names)} views in {archive.folder() / folder}"
              + ("" if len(have) == len(names) else f"; compute the rest with `{__file__} --profile {args.profile}`"))
        return
    torch.set_num_threads(1)
    for ((q, beta), cfgs), name in zip(plan.items(), names):
        t0 = time.perf_counter()
        (v,) = part.Values(views, {(q, beta): cfgs}, args.profile, compute=True)(cfgs)  # cached: read, not made
        print(f"Fig. 2 {q} beta={beta:g}: client {v['client']} ({v['classes']} classes), {len(v['y'])} points, "
              f"{time.perf_counter() - t0:.0f} s ({name})", flush=True)


if __name__ == "__main__":
    main()
