"""Operations per local step: how many top-level ATen operations (each a kernel launch, or several, on a GPU) one
local step of the batched engine issues, against one step of the centralized equivalent (one CNN, batch = clients x
10, the same optimizer), counted by torch.profiler on the CPU in one run. A launch-bound GPU round costs about its
operations times the launch time (the H100 check of 2026-11-27: about 15 us each), so this count is the lever that
issue 71 names; its target is at most 1.5x the centralized step's.

One round of training (`run_round`: messages, local training, aggregation; no evaluation) of FedLog's MNIST paper
setting (50 clients, 5 local epochs, batch 10) is profiled, and its top-level operations are divided by its local
steps; the centralized side is profiled over the same number of steps. An operation is top-level when no other ATen
operation encloses it (`aten::add_` inside `aten::addmm` is not counted again). Also printed: the operations of the
round that are not in the steps (messages, aggregation), and the most frequent top-level operations of a step.

Usage: python benchmarks/bench_ops.py [--methods fedavg,fedlog] [--top 12]
"""
from __future__ import annotations

import argparse
import collections

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

from fedlib import models
from fedlib import experiments as ex
from fedlib.messages import Ledger
from fedlib.papers import fedlog
from fedlib.rounds import run_round


# operations that only make a new view of the same memory: no kernel runs for them on a GPU
VIEWS = {"aten::" + name for name in ("view", "reshape", "transpose", "t", "unsqueeze", "squeeze", "select", "slice",
                                      "expand", "as_strided", "permute", "alias", "detach", "unbind", "split",
                                      "narrow", "view_as", "flatten", "unflatten", "_unsafe_view", "lift_fresh")}


def launching(counts: collections.Counter) -> int:
    """The operations of `counts` that compute (a reshape of a contiguous tensor, counted here, computes nothing)."""
    return sum(n for name, n in counts.items() if name not in VIEWS)


def top_level(prof) -> collections.Counter:
    """The ATen operations that no other ATen operation encloses, by name."""
    counts = collections.Counter()
    for ev in prof.events():
        if not ev.name.startswith("aten::"):
            continue
        parent = ev.cpu_parent
        while parent is not None and not parent.name.startswith("aten::"):
            parent = parent.cpu_parent
        if parent is None:
            counts[ev.name] += 1
    return counts


def local_steps(cfg, ctx) -> int:
    counts = ctx.fed.train.counts
    return int(((counts + cfg.batch_size - 1) // cfg.batch_size * cfg.local_epochs).max())


def engine_ops(method: str) -> tuple[collections.Counter, int]:
    cfg = fedlog.paper_config("mnist", method, device="cpu")
    ctx, alg = ex.setup(cfg)
    ledger = Ledger()
    run_round(alg, 0, ledger)  # warm-up: first-call allocations and caches
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        run_round(alg, 1, ledger)
    return top_level(prof), local_steps(cfg, ctx)


def centralized_ops(steps: int) -> collections.Counter:
    cfg = fedlog.paper_config("mnist", "fedavg", device="cpu")
    ctx, _ = ex.setup(cfg)
    train = ctx.fed.train
    x = torch.cat([train.x[c, : int(train.counts[c])] for c in range(cfg.n_clients)])
    y = torch.cat([train.y[c, : int(train.counts[c])] for c in range(cfg.n_clients)])
    model = models.build("cnn_mnist", (1, 28, 28), 10)
    opt = torch.optim.Adam(model.parameters(), 1e-3, foreach=True)  # torch's fewest operations: one per step part
    g = torch.Generator().manual_seed(0)

    def step():
        sel = torch.randint(len(y), (cfg.n_clients * cfg.batch_size,), generator=g)
        opt.zero_grad()
        F.cross_entropy(model(x[sel]), y[sel]).backward()
        opt.step()

    step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step()
    return top_level(prof)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--methods", default="fedavg,fedlog")
    p.add_argument("--top", type=int, default=12, help="how many of a step's most frequent operations to list")
    args = p.parse_args()
    torch.set_num_threads(1)
    rows = {}
    for method in args.methods.split(","):
        counts, steps = engine_ops(method)
        rows[method] = (counts, steps)
    steps = max(s for _, s in rows.values())
    central = centralized_ops(steps)
    per_central = sum(central.values()) / steps
    computing_central = launching(central) / steps
    print(f"torch {torch.__version__}, CPU, one thread; FedLog's MNIST paper round, 50 clients, {steps} local steps")
    print(f"centralized step (one CNN, batch 500, torch's foreach Adam): {per_central:.0f} top-level operations a step, "
          f"{computing_central:.0f} of them not views")
    for method, (counts, s) in rows.items():
        per = sum(counts.values()) / s
        print(f"{method:8s} engine: {per:.0f} top-level operations a local step, {per / per_central:.2f}x the "
              f"centralized step's ({sum(counts.values())} in the round's training, {s} steps); not views "
              f"{launching(counts) / s:.0f}, {launching(counts) / s / computing_central:.2f}x")
        common = ", ".join(f"{name.removeprefix('aten::')} {n / s:.1f}" for name, n in counts.most_common(args.top))
        print(f"         a step's most frequent: {common}")


if __name__ == "__main__":
    main()
