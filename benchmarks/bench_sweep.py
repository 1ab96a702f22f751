"""Wall time of one grid of small runs with the local backend and with Ray on this machine, measured in one run.

The grid: 8 MNIST runs (10 clients, 2% of the training data, 3 rounds, FedLog and FedAvg x 4 seeds), each into
a fresh results folder so nothing comes from the cache. Ray gets a local cluster with one CPU per core and
one torch thread per task; the local backend runs the runs one after another with all the cores' threads.
Usage: python benchmarks/bench_sweep.py
"""
from __future__ import annotations

import os
import tempfile
import time

import torch

from fedlib import paper
from fedlib import experiments as ex
from fedlib import sweep


def grid():
    return [paper.paper_config("mnist", m, n_clients=10, train_fraction=0.02, rounds=3, seed=s)
            for m in ("fedlog", "fedavg") for s in range(4)]


def timed(backend, **kw):
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["FEDLIB_RESULTS"] = tmp
        t = time.perf_counter()
        report = sweep.run_sweep(grid(), backend=backend, progress=False, **kw)
        assert report.computed == len(grid()) and not report.failures
        return time.perf_counter() - t


def main():
    import ray

    cores = os.cpu_count() or 1
    ex.run(grid()[0], cache=False, progress=False)  # load the data once, warm up torch
    local = timed("local")
    t = time.perf_counter()
    ray.init(num_cpus=cores, include_dashboard=False, log_to_driver=False)
    start = time.perf_counter() - t
    ray_first = timed("ray", threads=1)  # workers import torch and fedlib on first use
    ray_warm = timed("ray", threads=1)
    ray.shutdown()
    n = len(grid())
    print(f"{n} runs, {cores} cores, torch {torch.__version__}")
    print(f"local backend:            {local:6.1f} s ({local / n:.2f} s per run)")
    print(f"ray, cluster start:       {start:6.1f} s")
    print(f"ray, first grid:          {ray_first:6.1f} s  ratio ray/local {ray_first / local:.2f}x, "
          f"overhead {(ray_first - local) / n:+.2f} s per run")
    print(f"ray, grid on warm workers:{ray_warm:6.1f} s  ratio ray/local {ray_warm / local:.2f}x, "
          f"overhead {(ray_warm - local) / n:+.2f} s per run")


if __name__ == "__main__":
    main()
