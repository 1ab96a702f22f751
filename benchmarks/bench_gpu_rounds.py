"""Seconds per round of the compute-bound paper-size workloads on a GPU, with the achieved GFLOP/s counted from the
layer shapes (bench_wide.round_flops): FedCR, FedAvg and Ditto in FedCR's Table 2 federation (FashionMNIST n1 and
n2, 100 clients, 10 take part, 10 local epochs, width 1024, V 512, 18 draws, every client evaluated) and a FedAvg
round of FedRD's ladder federation. Each workload runs `--rounds` rounds (the first warms up); the script prints the
median of the others, each timed to a CUDA synchronisation.

    FEDLIB_DATA=... python benchmarks/bench_gpu_rounds.py [--device cuda] [--rounds 4] [--what fedcr_n1 ...]
"""
from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_wide import round_flops, timed_rounds  # noqa: E402

from fedlib import engine  # noqa: E402


def configs(device: str) -> dict:
    from fedlib.papers import fedcr, fedrd

    out = {f"{label.lower()}_{part}": fedcr.run("paper", "fashion_mnist", label, part, 0, device=device)
           for part in ("n1", "n2") for label in ("FedCR", "FedAvg", "Ditto")}
    out["ladder_fedavg"] = dataclasses.replace(fedrd.ladder("FedAvg", 0), device=device)
    return out


def time_rounds(cfg, rounds: int) -> dict:
    ctx, seconds, _ = timed_rounds(cfg, rounds)
    s = statistics.median(seconds[1:])
    gflop = round_flops(cfg, ctx) / 1e9
    return {"seconds": s, "first": seconds[0], "gflop": gflop, "gflops": gflop / s}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--what", nargs="+")
    args = p.parse_args()
    if args.rounds < 2:
        p.error("--rounds must be at least 2 (the first warms up)")
    todo = configs(args.device)
    unknown = set(args.what or []) - set(todo)
    if unknown:
        p.error(f"unknown workload(s) {sorted(unknown)}; choose from {sorted(todo)}")
    print(f"device {engine.resolve_device(args.device)}, torch {torch.__version__}, "
          f"{torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no GPU'}", flush=True)
    for name in args.what or todo:
        r = time_rounds(todo[name], args.rounds)
        print(f"{name:14s} {r['seconds']:8.3f} s/round (first {r['first']:.2f} s) | {r['gflop']:9.1f} GFLOP a round"
              f" | {r['gflops']:8.1f} GFLOP/s", flush=True)


if __name__ == "__main__":
    main()
