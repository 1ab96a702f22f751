"""FedDBE against its authors' code on our client data: both run Table 1's MNIST federation (the same 50 clients,
the same samples, the same initial weights per seed) with `cnn_mnist_nodrop`, SGD at lr 0.005 for model and bias,
kappa 50, rho 1, 5 local epochs, batch 10, and the curves of the pooled test accuracy are compared.

    python scripts/feddbe_crosscheck.py AUTHORS [--seeds 0-2] [--rounds 30] [--out figures/feddbe_crosscheck.csv]

AUTHORS: a checkout of TsingZ0/DBE (the script was written against commit 193f435; PFLlib's clientdbe.py and
serverdbe.py are the same code), kept outside this repository: it is read and run, never copied in. Its `system/`
needs scikit-learn and h5py (`pip install --target DIR scikit-learn h5py`, then `FEDLIB_AUTHORS_PATH=DIR`).

What each side runs:
* ours: `paper.table1_config("mnist", "FedDBE", rounds=R + 1)`. Round 0 is the authors' initialisation period.
* theirs: their `main.py -algo FedDBE -gr R`, unchanged, in a scratch folder holding our federation in their data
  layout (`dataset/<name>/{train,test}/<client>.npz`). Our model enters as their "cnn" (its `fc` is the head, the
  rest their `base`), with the seed's initial weights; torch's and numpy's generators are seeded with the seed.
  They evaluate each round before training it, so their evaluation r follows r rounds of training, as our round r
  does after the initialisation round.
The metric on both sides is the accuracy over all test samples (their "Averaged Test Accuracy", our `acc_all`).

Agreement rule: at each of the R + 1 evaluations, the difference of the two sides' means over the seeds must lie
within 2 standard errors of that difference, sqrt(sd_ours^2 / n + sd_theirs^2 / n), or within 0.005 (one test
prediction in 2 of 10,000 moves the pooled accuracy by 1e-4, so the floor covers rounds where the seeds agree
closely on both sides). The script prints how many evaluations pass, and writes the curves (CSV: side, seed, round,
acc_all) that notebook 02 draws.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATASET = "fedlib_mnist"
AUTHOR_ARGS = ["-algo", "FedDBE", "-m", "cnn", "-nb", "10", "-nc", "50", "-jr", "1", "-lbs", "10", "-ls", "5",
               "-lr", "0.005", "-mo", "1", "-klw", "50", "-dev", "cpu", "-t", "1", "-eg", "1"]


def our_config(seed: int, rounds: int):
    from fedlib import paper

    return paper.table1_config("mnist", "FedDBE", seed=seed, rounds=rounds + 1, device="cpu")


def export(seed: int, rounds: int, folder: Path) -> None:
    """Our federation of `seed` in the authors' data layout, and the initial weights (init.pt) of our run."""
    import torch

    from fedlib import experiments as ex, models

    cfg = our_config(seed, rounds)
    ctx, _ = ex.setup(cfg)
    for part, cd in (("train", ctx.fed.train), ("test", ctx.fed.test)):
        out = folder / "dataset" / DATASET / part
        out.mkdir(parents=True, exist_ok=True)
        for c in range(cd.n_clients):
            n = int(cd.counts[c])
            with open(out / f"{c}.npz", "wb") as f:
                np.savez_compressed(f, data={"x": cd.x[c, :n].cpu().numpy(), "y": cd.y[c, :n].cpu().numpy()})
    torch.manual_seed(cfg.seed)  # as experiments.setup builds the initial model
    model = models.build(cfg.model, ctx.fed.input_shape, ctx.fed.num_classes)
    group = ctx.population.groups[0]
    for k, v in model.state_dict().items():  # the same weights as our run's clients (the bias c starts at 0)
        if not torch.equal(v, group.params[k][0]):
            raise RuntimeError(f"initial weights differ from our run's at {k}")
    torch.save(model.state_dict(), folder / "init.pt")


def worker(authors: Path, folder: Path, seed: int, rounds: int) -> None:
    """Runs in a subprocess, in `folder`/system: the authors' main.py with our model as their "cnn"."""
    import random

    import torch
    from torch import nn

    from fedlib import models

    sys.path.insert(0, str(authors / "system"))
    import flcore.trainmodel.models as theirs  # noqa: E402  (their package, from the checkout)

    class OurCNN(nn.Module):
        """cnn_mnist_nodrop as their code expects a model: `fc` is the head, which their main.py splits off."""

        def __init__(self, *args, **kwargs):
            super().__init__()
            built = models.build("cnn_mnist_nodrop", (1, 28, 28), 10)
            built.load_state_dict(torch.load(folder / "init.pt"))
            self.body, self.fc = built.body, built.head
            torch.manual_seed(seed), np.random.seed(seed), random.seed(seed)  # their batch orders and selection

        def forward(self, x):
            return self.fc(self.body(x))

    import types

    home = types.ModuleType("feddbe_crosscheck_model")  # their save_global_model pickles the model's class
    OurCNN.__module__, OurCNN.__qualname__, home.OurCNN = home.__name__, "OurCNN", OurCNN
    sys.modules[home.__name__] = home
    theirs.FedAvgCNN = OurCNN  # main.py's "cnn" on a dataset named *mnist*
    sys.argv = ["main.py", "-data", DATASET, "-gr", str(rounds), *AUTHOR_ARGS]
    import runpy

    runpy.run_path(str(authors / "system" / "main.py"), run_name="__main__")
    import h5py

    with h5py.File(folder / "results" / f"{DATASET}_FedDBE_test_0.h5") as f:
        acc = [float(a) for a in f["rs_test_acc"][()]]
    (folder / "authors.json").write_text(json.dumps(acc))


def compare(rows: list[dict]) -> tuple[int, int, list[str]]:
    """(evaluations that agree, evaluations, one line per evaluation) under the module docstring's rule."""
    by = {}
    for r in rows:
        by.setdefault((r["side"], int(r["round"])), []).append(float(r["acc_all"]))
    rounds = sorted({rnd for _, rnd in by})
    ok, lines = 0, []
    for rnd in rounds:
        a, b = np.array(by[("fedlib", rnd)]), np.array(by[("authors", rnd)])
        se = np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b)) if min(len(a), len(b)) > 1 else 0.0
        diff = a.mean() - b.mean()
        agree = abs(diff) <= max(2 * se, 0.005)
        ok += agree
        lines.append(f"round {rnd:3d}: fedlib {a.mean():.4f}  authors {b.mean():.4f}  diff {diff:+.4f}  2SE {2 * se:.4f}"
                     f"  {'agree' if agree else 'DIFFER'}")
    return ok, len(rounds), lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("authors", type=Path, help="a checkout of TsingZ0/DBE (its system/ folder is run)")
    p.add_argument("--seeds", default="0-2")
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--out", type=Path, default=ROOT / "figures" / "feddbe_crosscheck.csv")
    p.add_argument("--scratch", type=Path, default=ROOT / "build" / "feddbe_crosscheck")
    p.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if not (args.authors / "system" / "flcore" / "servers" / "serverDBE.py").exists():
        raise SystemExit(f"{args.authors} is not a checkout of TsingZ0/DBE (no system/flcore/servers/serverDBE.py); "
                         f"clone it outside this repository and pass its path")
    if args.worker is not None:
        return worker(args.authors.resolve(), Path.cwd().parent, args.worker, args.rounds)
    lo, hi = (int(v) for v in args.seeds.split("-"))
    import torch

    from fedlib import experiments as ex

    torch.set_num_threads(1)
    rows = []
    for seed in range(lo, hi + 1):
        folder = args.scratch / f"seed{seed}"
        (folder / "system").mkdir(parents=True, exist_ok=True)
        if not (folder / "authors.json").exists():
            export(seed, args.rounds, folder)
            env = {**os.environ, "OMP_NUM_THREADS": "1",
                   "PYTHONPATH": os.pathsep.join(filter(None, [os.environ.get("FEDLIB_AUTHORS_PATH"),
                                                              os.environ.get("PYTHONPATH")]))}
            with open(folder / "authors.log", "w") as log:
                subprocess.run([sys.executable, str(Path(__file__).resolve()), str(args.authors.resolve()),
                                "--rounds", str(args.rounds), "--worker", str(seed)], cwd=folder / "system", env=env,
                               stdout=log, stderr=subprocess.STDOUT, check=True)
        theirs = json.loads((folder / "authors.json").read_text())
        ours = ex.run(our_config(seed, args.rounds), progress=False)["rounds"]["acc_all"]
        rows += [dict(side="authors", seed=seed, round=r, acc_all=a) for r, a in enumerate(theirs)]
        rows += [dict(side="fedlib", seed=seed, round=r, acc_all=a) for r, a in enumerate(ours)]
        print(f"seed {seed}: authors {theirs[-1]:.4f}, fedlib {ours[-1]:.4f} after {args.rounds} rounds", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["side", "seed", "round", "acc_all"])
        w.writeheader()
        w.writerows(rows)
    ok, n, lines = compare(rows)
    print("\n".join(lines))
    print(f"{ok} of {n} evaluations agree within seed noise ({hi - lo + 1} seeds each); curves in {args.out}")


if __name__ == "__main__":
    main()
