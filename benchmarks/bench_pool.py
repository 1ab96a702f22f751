"""The engine's no-autograd 2x2 max pool (`engine.max_pool_2x2`, taken where nothing needs a gradient: evaluation
and distribution matching's real side) against nn.MaxPool2d everywhere, in one run: the first round of a FedDM and a
FedRD run of FedRD's ladder (ConvNet-32, 10% of FashionMNIST, Dirichlet 0.1 over 10 clients) at T matching steps,
one thread, each variant in a fresh process, the variants taking turns. It prints the seconds, the ratio and whether
round 1's accuracy and loss are the same bits.

    OMP_NUM_THREADS=1 python benchmarks/bench_pool.py [--steps 30] [--repeats 1]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

RUNS = ("FedDM", "FedRD")


def child(label: str, steps: int, pooled: bool) -> None:
    import torch

    from fedlib import engine
    from fedlib import experiments as ex
    from fedlib.papers import fedrd

    torch.set_num_threads(1)
    if not pooled:
        engine._halves = lambda layer: False  # nn.MaxPool2d everywhere, as before
    t0 = time.perf_counter()
    r = ex.replay(fedrd.ladder(label, 0, steps, "real"), 1)
    print(json.dumps({"seconds": time.perf_counter() - t0, "bits": [float(r["acc_mean"][0]).hex(),
                                                                     float(r["loss"][0]).hex()]}))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child(args.child[0], int(args.child[1]), args.child[2] == "pooled")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    print(f"| run (T = {args.steps}, round 1 with setup) | nn.MaxPool2d (s) | max_pool_2x2 without autograd (s) | "
          "speed-up | the same bits |")
    print("|---|---|---|---|---|")
    for label in RUNS:
        out = {"plain": [], "pooled": []}
        for _ in range(args.repeats):
            for variant in out:
                done = subprocess.run([sys.executable, __file__, "--child", label, str(args.steps), variant], env=env,
                                      capture_output=True, text=True, check=True)
                out[variant].append(json.loads(done.stdout.strip().splitlines()[-1]))
        plain, pooled = (min(r["seconds"] for r in out[v]) for v in ("plain", "pooled"))
        same = all(r["bits"] == out["plain"][0]["bits"] for v in out for r in out[v])
        print(f"| {label} | {plain:.1f} | {pooled:.1f} | {plain / pooled:.2f}x | {'yes' if same else 'NO'} |",
              flush=True)


if __name__ == "__main__":
    main()
