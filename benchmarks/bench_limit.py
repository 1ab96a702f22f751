"""This machine's limit beside what the workbook's rounds achieve, in one run: the fp32 matrix-product rate
(`torch.mm` on two 2048 x 2048 matrices) and the useful GFLOP/s of
  mnist_fedavg, mnist_fedlog  the MNIST Table 1 round (50 clients, local training, messages, aggregation and every
                              client's evaluation), FedAvg and FedLog, the engine as FedLog's runs use it;
  fedcr_round                 one round of FedCR's Table 2 protocol on FashionMNIST n1 (width 1024, V 512, 18 draws;
                              10 of 100 clients x 10 epochs, batch 48; every client evaluated), the fast engine as
                              FedCR's runs use it;
  dm_step                     one distribution-matching step of FedRD's FashionMNIST protocol at the paper's size (the
                              step its ladder and tables repeat).
Useful operations are those one model would do for the same work (`round_of`, `bench_wide.round_flops`), over the
median of the times; every measure takes turns with the others (mm, A, B, ..., mm, A, B, ...) on the same threads, so
a slow spell of a shared machine hits them alike. Huge pages for large allocations are on
(THP_MEM_ALLOC_ENABLE=1, as the paper runs have them) unless the environment says otherwise.

    python benchmarks/bench_limit.py [--threads 1] [--repeats 5] [--what mnist_fedavg mnist_fedlog fedcr_round dm_step]

Prints one line per measure and the share of the limit each reaches (the performance issue's first row).
"""
from __future__ import annotations

import os

os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")  # read by torch's allocator, so before torch is imported

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
from bench_wide import layer_macs, round_flops  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from fedlib import engine, models  # noqa: E402
from fedlib import experiments as ex  # noqa: E402
from fedlib.messages import Ledger  # noqa: E402
from fedlib.papers import fedlog  # noqa: E402
from fedlib.rounds import run_round  # noqa: E402

WORKLOADS = ("mnist_fedavg", "mnist_fedlog", "fedcr_round", "dm_step")
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


def fedcr_round():
    """(one(rnd), useful GFLOP): a round of FedCR in its Table 2 n1 paper setting, every client evaluated after it."""
    from fedlib.papers import fedcr

    cfg = fedcr.run("paper", "fashion_mnist", "FedCR", "n1", 0, final_finetune_epochs=0)
    ctx, alg = ex.setup(cfg)
    ledger = Ledger()

    def one(rnd: int) -> None:
        run_round(alg, rnd, ledger)
        engine.evaluate_population(alg.population, ctx.fed.test)
    return one, round_flops(cfg, ctx) / 1e9


def dm_step():
    """(one(rnd), useful GFLOP): one distribution-matching step of FedRD's FashionMNIST protocol at the paper's size,
    as `bench_wide.py dm_step` counts it (every drawn real image embedded once, every synthetic image forward and
    backward to its input)."""
    from fedlib import distill
    from fedlib.papers import fedrd

    cfg = fedrd.scaled("fashion_mnist", "FedDM", "paper", seed=0)
    ctx, _ = ex.setup(cfg)
    data, o = ctx.fed.train, cfg.options
    g = torch.Generator().manual_seed(0)
    real, present = distill.real_init(data, ctx.fed.num_classes, o["dpc"], g)
    name = f"convnet{fedrd.PROFILES['paper'].width}"
    task = models.build(name, ctx.fed.input_shape, ctx.fed.num_classes)
    group = engine.functional_group(task.to("meta"), torch.arange(data.n_clients), fast_engine=cfg.fast_engine)
    rows = distill.class_rows(data, ctx.fed.num_classes)
    real_images = sum(min(o["real_batch"], len(r)) for per in rows for r in per)
    forward = 2 * sum(layer_macs(models.build(name, ctx.fed.input_shape, ctx.fed.num_classes), ctx.fed.input_shape))
    useful = (real_images * forward + int(present.sum()) * o["dpc"] * 2 * forward) / 1e9

    def one(rnd: int) -> None:
        distill.condense(group, data, real, present, lambda: distill.random_params(task.body, data.n_clients, g),
                         iterations=1, lr=o.get("syn_lr", 1.0), momentum=0.0, batch=o["real_batch"], g=g)
    return one, useful


def build(what: str):
    if what.startswith("mnist_"):
        return round_of(what.removeprefix("mnist_"))
    return {"fedcr_round": fedcr_round, "dm_step": dm_step}[what]()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--what", nargs="+", default=list(WORKLOADS), choices=WORKLOADS)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    made = {w: build(w) for w in args.what}
    for one, _ in made.values():
        one(0)  # warm-up (the first round allocates)
    times = {w: [] for w in made}
    limit = []
    for r in range(args.repeats):  # turns: a slow spell of a shared machine hits every measure alike
        limit.append(mm_rate())
        for w, (one, _) in made.items():
            t = time.perf_counter()
            one(1 + r)
            times[w].append(time.perf_counter() - t)
    peak = statistics.median(limit)
    print(f"threads {args.threads}, repeats {args.repeats}, THP_MEM_ALLOC_ENABLE={os.environ['THP_MEM_ALLOC_ENABLE']}, "
          f"LD_PRELOAD={os.environ.get('LD_PRELOAD', '')!r}")
    print(f"fp32 matrix product 2048 x 2048 (torch.mm): {peak:.1f} GFLOP/s (median of {args.repeats}; "
          f"{min(limit):.1f}-{max(limit):.1f})")
    for w, (_, useful) in made.items():
        s = statistics.median(times[w])
        print(f"{w}: {s:.3f} s, {useful:.1f} useful GFLOP, {useful / s:.1f} GFLOP/s, "
              f"{100 * useful / s / peak:.0f}% of the matrix product's rate")


if __name__ == "__main__":
    main()
