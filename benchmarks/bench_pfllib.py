"""Seconds per round of FedAvg in the paper's MNIST setting (50 clients, 5 local epochs, batch 10, SGD), fedlib's
engine against PFLlib's own code on the same client data and initial weights, on the same device, in one run.

    python benchmarks/bench_pfllib.py PFLLIB_CHECKOUT [--device cpu|cuda] [--rounds 2] [--turns 3]

PFLlib (TsingZ0/PFLlib) is run unchanged from a checkout outside this repository (`scripts/authors_code.py`: its
main.py with fedlib's `cnn_mnist` as its CNN); it needs scikit-learn and h5py (FEDLIB_AUTHORS_PATH names a folder
that holds them; cvxpy and calmsize, which its main.py imports and FedAvg never uses, are stubbed where missing).
Both sides evaluate every client each round. The sides take turns (fedlib's rounds, then PFLlib's, `--turns` times),
and the ratio printed is the median of the turns' ratios: timed one after the other, one slow spell of a shared
machine once flipped the ratio to 0.40x (4.89x on a rerun). A side's time in a turn is its median round after the
first (PFLlib's own "time cost" lines; fedlib's per-round `seconds`).
"""
from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import authors_code  # noqa: E402

from fedlib import experiments as ex  # noqa: E402
from fedlib.papers import fedlog  # noqa: E402


def ours(cfg) -> list[float]:
    """fedlib's seconds per round after the first."""
    return ex.run(cfg, cache=False, progress=False)["rounds"]["seconds"][1:]


def theirs(pfllib: Path, cfg, rounds: int, device: str, threads: int) -> list[float]:
    """PFLlib's seconds per round after the first (its own "time cost" lines), on cfg's clients and weights."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        authors_code.export(cfg, folder, "fedlib_MNIST")
        out = authors_code.run_main(pfllib, folder, 0, "cnn_mnist",
                                    ["-data", "fedlib_MNIST", "-m", "CNN", "-algo", "FedAvg", "-gr", str(rounds),
                                     "-nc", "50", "-ncl", "10", "-jr", "1", "-lbs", "10", "-ls", "5", "-lr", "0.005",
                                     "-dev", device, "-eg", "1"], threads=threads)
    return [float(v) for v in re.findall(r"-+ time cost -+\s*([0-9.]+)", out)][1:]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("pfllib", type=Path)
    p.add_argument("--device", default="cpu")
    p.add_argument("--rounds", type=int, default=2, help="timed rounds of each side in a turn (after a first)")
    p.add_argument("--turns", type=int, default=3, help="turns: fedlib's rounds, then PFLlib's, then again")
    p.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = p.parse_args()
    if args.turns < 1 or args.rounds < 1:
        p.error("--turns and --rounds must be at least 1")
    torch.set_num_threads(args.threads)
    cfg = replace(fedlog.paper_config("mnist", "fedavg", optimizer="sgd", lr=0.005, device=args.device),
                  rounds=args.rounds + 1)
    ratios, e_all, t_all = [], [], []
    for turn in range(args.turns):  # the two sides take turns, so a slow spell of a shared machine hits both
        e = statistics.median(ours(cfg))
        t = statistics.median(theirs(args.pfllib, cfg, args.rounds + 1, args.device, args.threads))
        ratios.append(t / e)
        e_all.append(e)
        t_all.append(t)
        print(f"turn {turn + 1}: fedlib engine {e:.3f} s/round, PFLlib {t:.3f} s/round, PFLlib / engine {t / e:.2f}x",
              flush=True)
    print(f"device {args.device}, torch {torch.__version__}, {args.threads} thread(s), {args.turns} turns of "
          f"{args.rounds} rounds after a first: fedlib engine {statistics.median(e_all):.3f} s/round, PFLlib "
          f"{statistics.median(t_all):.3f} s/round, PFLlib / engine (median of the turns' ratios) "
          f"{statistics.median(ratios):.2f}x")


if __name__ == "__main__":
    main()
