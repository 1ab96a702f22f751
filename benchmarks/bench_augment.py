"""What FedLog's augmentation (random crop and flip, `engine.crop_flip`) costs a round of the paper's MNIST setting
(50 clients, 5 local epochs, batch 10), measured in one run on this machine: rounds of the same method with and
without `augment` take turns (A B A B ...), and the script prints the medians and the median of the ratios taken in
the same turn, then the time of `crop_flip` alone on one step's batch and the time of a round's training under
torch.profiler, split by operator.

Usage: OMP_NUM_THREADS=1 python benchmarks/bench_augment.py [--methods fedavg fedlog_c] [--repeats 5] [--profile]
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch

from fedlib import engine
from fedlib import experiments as ex
from fedlib.messages import Ledger
from fedlib.papers import fedlog
from fedlib.rounds import run_round


def round_fn(method: str, augment: bool):
    """one(rnd): one training round (`run_round`) of `method` in Table 1's MNIST setting."""
    ctx, alg = ex.setup(fedlog.paper_config("mnist", method, augment=augment))
    ledger = Ledger()
    return lambda rnd: run_round(alg, rnd, ledger), ctx


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--methods", nargs="+", default=["fedavg", "fedlog_c"])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--profile", action="store_true", help="also profile one augmented round by operator")
    a = p.parse_args()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s)")
    for method in a.methods:
        plain, ctx = round_fn(method, False)
        aug, _ = round_fn(method, True)
        plain(0), aug(0)  # warm-up
        times = {False: [], True: []}
        for r in range(1, a.repeats + 1):
            for flag, fn in ((False, plain), (True, aug)):
                t = time.perf_counter()
                fn(r)
                times[flag].append(time.perf_counter() - t)
        ratio = statistics.median(b / p_ for p_, b in zip(times[False], times[True]))
        print(f"{method:10s} round without {statistics.median(times[False]):.3f} s, with augmentation "
              f"{statistics.median(times[True]):.3f} s: {ratio:.2f}x (median of {a.repeats} paired turns)")
        x = ctx.fed.train.x[:, :10]  # one step's batch of every client [50, 10, 1, 28, 28]
        reps = 200
        t = time.perf_counter()
        for _ in range(reps):
            engine.crop_flip(x)
        print(f"{'':10s} crop_flip of one step's batch {tuple(x.shape)}: {(time.perf_counter() - t) / reps * 1e3:.3f} ms")
        if a.profile:
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CPU]) as prof:
                aug(a.repeats + 1)
            print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))


if __name__ == "__main__":
    main()
