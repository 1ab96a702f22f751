"""This machine's limit beside what a round achieves, in one run: the fp32 matrix-product rate (`torch.mm` on two
2048 x 2048 matrices) and the useful GFLOP/s of the MNIST Table 1 round (FedAvg and FedLog, 50 clients, local
training, messages, aggregation and every client's evaluation): its useful operations (`round_of`) over the median
of its times, all on the same threads, taking turns.

    python benchmarks/bench_limit.py [--threads 1] [--repeats 5]

Prints one line per measure and the share of the limit each round reaches (the performance issue's first row).
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch.utils.flop_counter import FlopCounterMode

from fedlib import engine, models
from fedlib import experiments as ex
from fedlib.messages import Ledger
from fedlib.papers import fedlog
from fedlib.rounds import run_round


def mm_rate(n: int = 2048) -> float:
    """GFLOP/s of one fp32 matrix product of two n x n matrices (2 n^3 operations), the best of 3 after a warm-up."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - t)
    return 2 * n ** 3 / best / 1e9


def round_of(method: str):
    """(one(rnd), useful GFLOP of one round): a round of the engine in FedLog's MNIST paper setting, every client
    evaluated after it. Useful operations are those one model would do for the same work: a forward and backward pass
    for every training sample of every local epoch, a forward pass for every test sample (counted by FlopCounterMode
    on the plain model, batch 10), not what the engine's batched kernels happen to execute."""
    cfg = fedlog.paper_config("mnist", method, device="cpu")
    ctx, alg = ex.setup(cfg)
    ledger = Ledger()
    model = models.build(models.default_model("mnist"), ctx.fed.input_shape, ctx.fed.num_classes)
    x, y = torch.randn(cfg.batch_size, *ctx.fed.input_shape), torch.randint(0, ctx.fed.num_classes, (cfg.batch_size,))
    with FlopCounterMode(display=False) as forward:
        with torch.no_grad():
            model(x)
    with FlopCounterMode(display=False) as both:
        torch.nn.functional.cross_entropy(model(x), y).backward()
    per_train, per_test = both.get_total_flops() / cfg.batch_size, forward.get_total_flops() / cfg.batch_size
    useful = (per_train * int(ctx.fed.train.counts.sum()) * cfg.local_epochs
              + per_test * int(ctx.fed.test.counts.sum())) / 1e9

    def one(rnd: int) -> None:
        run_round(alg, rnd, ledger)
        engine.evaluate_population(alg.population, ctx.fed.test)
    return one, useful


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    made = {m: round_of(m) for m in ("fedavg", "fedlog")}
    rounds, flops = {m: one for m, (one, _) in made.items()}, {m: useful for m, (_, useful) in made.items()}
    for one in rounds.values():
        one(0)  # warm-up (the first round allocates)
    times = {m: [] for m in rounds}
    limit = []
    for r in range(args.repeats):  # turns: a slow spell of a shared machine hits every measure alike
        limit.append(mm_rate())
        for m, one in rounds.items():
            t = time.perf_counter()
            one(1 + r)
            times[m].append(time.perf_counter() - t)
    peak = statistics.median(limit)
    print(f"threads {args.threads}, repeats {args.repeats}")
    print(f"fp32 matrix product 2048 x 2048 (torch.mm): {peak:.1f} GFLOP/s (median of {args.repeats})")
    for m in rounds:
        s = statistics.median(times[m])
        rate = flops[m] / s
        print(f"MNIST Table 1 round, {m}: {s:.3f} s, {flops[m]:.1f} useful GFLOP, {rate:.1f} GFLOP/s, "
              f"{100 * rate / peak:.0f}% of the matrix product's rate")


if __name__ == "__main__":
    main()
