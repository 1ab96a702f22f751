"""Seconds per round of FedAvg in the paper's MNIST setting (50 clients, 5 local epochs, batch 10, SGD), fedlib's
engine against PFLlib's own code on the same client data and initial weights, on the same device, in one run.

    python benchmarks/bench_pfllib.py PFLLIB_CHECKOUT [--device cpu|cuda] [--rounds 3]

PFLlib (TsingZ0/PFLlib) is run unchanged from a checkout outside this repository (`scripts/authors_code.py`: its
main.py with fedlib's `cnn_mnist` as its CNN); it needs scikit-learn and h5py (FEDLIB_AUTHORS_PATH names a folder
that holds them). Both sides evaluate every client each round. A round's time is the median over rounds after the
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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("pfllib", type=Path)
    p.add_argument("--device", default="cpu")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    cfg = replace(fedlog.paper_config("mnist", "fedavg", optimizer="sgd", lr=0.005, device=args.device),
                  rounds=args.rounds + 1)
    ours = ex.run(cfg, cache=False, progress=False)["rounds"]["seconds"][1:]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        authors_code.export(cfg, folder, "fedlib_MNIST")
        out = authors_code.run_main(args.pfllib, folder, 0, "cnn_mnist",
                                    ["-data", "fedlib_MNIST", "-m", "CNN", "-algo", "FedAvg", "-gr", str(args.rounds),
                                     "-nc", "50", "-ncl", "10", "-jr", "1", "-lbs", "10", "-ls", "5", "-lr", "0.005",
                                     "-dev", args.device, "-eg", "1"], threads=args.threads)
    theirs = [float(v) for v in re.findall(r"-+ time cost -+\s*([0-9.]+)", out)][1:]
    e, t = statistics.median(ours), statistics.median(theirs)
    print(f"device {args.device}, torch {torch.__version__}, {args.threads} thread(s), {args.rounds} rounds after the "
          f"first: fedlib engine {e:.3f} s/round, PFLlib {t:.3f} s/round, PFLlib / engine {t / e:.2f}x")


if __name__ == "__main__":
    main()
