"""Wall time of one grid of small runs with each sweep backend on this machine, measured in one run.

The grid: 8 MNIST runs (10 clients, 5% of the training data, 2 rounds, FedLog and FedAvg x 4 seeds), each into
a fresh results folder so nothing comes from the cache. `local` runs them one after another in this process with
all the cores' threads; `pool` (the default on a multi-core CPU) gives them to one single-threaded worker process
per core, started on the first sweep and kept; Ray gets a local cluster with one CPU per core and one torch thread
per task. Every figure is the median of `--repeats` grids (the first pool and Ray grids, which start the workers,
are reported apart).
Usage: python benchmarks/bench_sweep.py [--repeats 3]
"""
from __future__ import annotations

import os
import tempfile
import time

import torch

from fedlib import experiments as ex
from fedlib import sweep
from fedlib.papers import fedlog


def grid():
    return [fedlog.paper_config("mnist", m, n_clients=10, train_fraction=0.05, rounds=2, seed=s)
            for m in ("fedlog", "fedavg") for s in range(4)]


def timed(backend, **kw):
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["FEDLIB_RESULTS"] = tmp
        t = time.perf_counter()
        report = sweep.run_sweep(grid(), backend=backend, progress=False, **kw)
        assert report.computed == len(grid()) and not report.failures
        return time.perf_counter() - t


def main():
    import argparse
    import statistics

    import ray

    p = argparse.ArgumentParser()
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    cores = os.cpu_count() or 1
    ex.run(grid()[0], cache=False, progress=False)  # load the data once, warm up torch
    pool_first = timed("pool")  # starts the workers
    t = time.perf_counter()
    ray.init(num_cpus=cores, include_dashboard=False, log_to_driver=False)
    ray_start = time.perf_counter() - t
    ray_first = timed("ray", threads=1)  # workers import torch and fedlib on first use
    times = {"local": [], "pool": [], "ray": []}
    for _ in range(args.repeats):  # the backends take turns, so a slow spell of the machine hits them alike
        for backend in times:
            times[backend].append(timed(backend, **({"threads": 1} if backend == "ray" else {})))
    ray.shutdown()
    sweep.shutdown_pool()
    med = {b: statistics.median(ts) for b, ts in times.items()}
    n = len(grid())
    print(f"{n} runs, {cores} cores, torch {torch.__version__}, {torch.get_num_threads()} threads in this process, "
          f"medians of {args.repeats} grids")
    print(f"local backend:              {med['local']:6.1f} s ({med['local'] / n:.2f} s per run)")
    for b in ("pool", "ray"):
        print(f"{b:4s}, warm workers:         {med[b]:6.1f} s  ratio {b}/local {med[b] / med['local']:.2f}x")
    print(f"pool, first grid (start):   {pool_first:6.1f} s")
    print(f"ray, cluster start + first: {ray_start + ray_first:6.1f} s")


if __name__ == "__main__":
    main()
