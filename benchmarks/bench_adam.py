"""engine.Adam's step for every client of a group, in one run on this machine (issue 71): the engine's step, which
keeps its two intermediates (denominator and update) in buffers it holds, against the same step making them anew
each time (the form before 2026-11-29), on the MNIST CNN's eight tensors for 50 clients (FedLog's MNIST setting;
about 1.09 million parameters, 4.4 MB a copy). Both sides take turns (A B A B ...), each turn a local training's 35
steps, and the script prints medians and the median of the ratios taken in the same turn, and whether the two end
bit for bit equal. Run it with glibc's allocator and with tcmalloc preloaded (scripts/background_slot.sh preloads
it): a fresh intermediate of this size costs page faults under glibc, little under tcmalloc.

Usage: python benchmarks/bench_adam.py [--clients 50] [--repeats 7] [--threads 1]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import torch

from fedlib import engine

SHAPES = {"conv1.weight": (10, 1, 5, 5), "conv1.bias": (10,), "conv2.weight": (20, 10, 5, 5), "conv2.bias": (20,),
          "fc1.weight": (50, 320), "fc1.bias": (50,), "head.weight": (10, 50), "head.bias": (10,)}


class FreshIntermediates(engine.Adam):
    """engine.Adam's step as it was: the denominator and the update made anew at every step."""

    @torch.no_grad()
    def step(self, params, grads, active=None):
        assert active is None and not self.wd  # the form compared here: every client steps
        self.t += 1
        bc1, bc2 = 1 - self.b1 ** self.t, 1 - self.b2 ** self.t
        ps, gs = [params[k] for k in self.names], [grads[k] for k in self.names]
        shape = {d: (-1,) + (1,) * (d - 1) for d in {p.dim() for p in ps}}
        root, rate = bc2.sqrt(), self.lr / bc1
        torch._foreach_lerp_(self.m, gs, 1 - self.b1)
        torch._foreach_mul_(self.v, self.b2)
        torch._foreach_addcmul_(self.v, gs, gs, value=1 - self.b2)
        denom = torch._foreach_sqrt(self.v)
        torch._foreach_div_(denom, [root.view(shape[p.dim()]) for p in ps])
        torch._foreach_add_(denom, self.eps)
        update = torch._foreach_mul([rate.view(shape[p.dim()]) for p in ps], self.m)
        torch._foreach_div_(update, denom)
        torch._foreach_sub_(ps, update)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--repeats", type=int, default=7, help="turns of each side (at least 3)")
    p.add_argument("--steps", type=int, default=35, help="steps a turn (FedLog's MNIST round: 35)")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    if args.repeats < 3 or args.clients < 1 or args.steps < 1:
        p.error("--repeats must be at least 3, --clients and --steps at least 1")
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    start = {k: 0.1 * torch.randn(args.clients, *s) for k, s in SHAPES.items()}
    grads = [{k: torch.randn(v.shape) * 10.0 ** -(i % 4) for k, v in start.items()} for i in range(5)]
    sides = {"kept buffers": engine.Adam, "fresh intermediates": FreshIntermediates}
    params = {name: {k: v.clone() for k, v in start.items()} for name in sides}
    opts = {name: cls(params[name], lr=1e-3) for name, cls in sides.items()}
    times = {name: [] for name in sides}
    for turn in range(args.repeats + 1):  # the first turn warms up
        for name in sides:
            t = time.perf_counter()
            for s in range(args.steps):
                opts[name].step(params[name], grads[s % len(grads)])
            if turn:
                times[name].append(time.perf_counter() - t)
    a, b = sides
    same = all(torch.equal(params[a][k], params[b][k]) for k in start)
    n_params = sum(v[0].numel() for v in start.values())
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.clients} clients x {n_params} "
          f"parameters, {args.steps} steps a turn, {args.repeats} turns; LD_PRELOAD={os.environ.get('LD_PRELOAD', '')!r}")
    for name in sides:
        print(f"{name:20s} {statistics.median(times[name]) * 1e3:8.1f} ms a turn")
    ratio = statistics.median(x / y for x, y in zip(times[b], times[a]))
    print(f"{b} / {a}: {ratio:.2f}x (median of the turns' ratios); bit for bit equal: {same}")


if __name__ == "__main__":
    main()
