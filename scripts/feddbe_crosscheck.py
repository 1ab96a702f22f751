"""FedDBE against its authors' code on our client data: both run Table 1's MNIST federation (the same 50 clients,
the same samples, the same initial weights per seed) with `cnn_mnist_nodrop`, SGD at lr 0.005 for model and bias,
kappa 50, rho 1, 5 local epochs, batch 10, and the curves of the pooled test accuracy are compared.

    python scripts/feddbe_crosscheck.py AUTHORS [--seeds 0-4] [--rounds 30] [--model cnn_mnist_nodrop|cnn_mnist]
    python scripts/feddbe_crosscheck.py AUTHORS --model cnn_mnist --describe   # only the provenance, from the CSV

AUTHORS: a checkout of TsingZ0/DBE (the script was written against commit 193f435; PFLlib's clientdbe.py and
serverdbe.py are the same code), kept outside this repository: it is read and run, never copied in. Its `system/`
needs scikit-learn and h5py (`pip install --target DIR scikit-learn h5py`, then `FEDLIB_AUTHORS_PATH=DIR`).

What each side runs:
* ours: `fedlog.table1_config("mnist", "FedDBE", rounds=R + 1)`. Round 0 is the authors' initialisation period.
* theirs: their `main.py -algo FedDBE -gr R`, unchanged, in a scratch folder holding our federation in their data
  layout (`dataset/<name>/{train,test}/<client>.npz`). Our model enters as their "cnn" (its `fc` is the head, the
  rest their `base`), with the seed's initial weights; torch's and numpy's generators are seeded with the seed.
  They evaluate each round before training it, so their evaluation r follows r rounds of training, as our round r
  does after the initialisation round.
The metric on both sides is the accuracy over all test samples (their "Averaged Test Accuracy", our `acc_all`).

Agreement rule (`fedlib.papers.fedlog.analysis.crosscheck.agreement`): a paired equivalence test (TOST at 5%). At each of the R + 1
evaluations the per-seed differences d (ours minus theirs, in points) must give |mean d| + t(0.95, n-1) SE(d) <= 1
point, over at least 5 seeds. Beside the CSV, OUT with .json for .csv holds its provenance per model: the authors'
commit, the seeds and rounds, how their generators were seeded, and the noise floor at every evaluation with the
bound it gives. Seed pairing pairs the clients, their samples and the initial weights, not the two
codes' random streams: their batch orders come from their DataLoader's shuffle (and, on a model with dropout,
`--model cnn_mnist`, their dropout masks from their generator). So the authors' code also runs a second time per seed
on another random stream, and the bound at each evaluation is the larger of 1 point and that noise floor's |mean| +
t SE (`crosscheck.bound_at`): in the steep first rounds two batch orders alone move a seed's accuracy by up to 2
points. The
script prints how many evaluations pass, and writes the curves (CSV: model, side, seed, round, acc_all; side
"authors_stream2" for the floor) that notebook 02 draws.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import authors_code  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATASET = "fedlib_mnist"
AUTHOR_ARGS = ["-algo", "FedDBE", "-m", "cnn", "-nb", "10", "-nc", "50", "-jr", "1", "-lbs", "10", "-ls", "5",
               "-lr", "0.005", "-mo", "1", "-klw", "50", "-dev", "cpu", "-t", "1", "-eg", "1"]


MODELS = ("cnn_mnist_nodrop", "cnn_mnist")  # Table 1's FedDBE body, and Table A.2's CNN with its dropout
STREAM2 = 1_000  # the noise floor: the authors' code run a second time per seed, its generators seeded seed + this
# (their k-th run, `--streams k`, seed + (k - 1) x this)


def their_run(authors: Path, scratch: Path, model: str, seed: int, rounds: int, k: int) -> list[float]:
    """The accuracy curve of the authors' code on `seed`'s federation, their k-th random stream (k = 1: their
    generators seeded with the seed; k >= 2: with seed + (k - 1) x STREAM2), run once and then read."""
    folder = scratch / model / f"seed{seed}"
    folder = folder if k == 1 else folder / f"stream{k}"
    if not (folder / "authors.json").exists():
        authors_code.export(our_config(seed, rounds, model), folder, DATASET)
        authors_code.run_main(authors, folder, seed, model, ["-data", DATASET, "-gr", str(rounds), *AUTHOR_ARGS],
                              stream=None if k == 1 else seed + (k - 1) * STREAM2)
        (folder / "authors.json").write_text(json.dumps(authors_code.read_accuracy(folder)))
    return json.loads((folder / "authors.json").read_text())


def our_config(seed: int, rounds: int, model: str = "cnn_mnist_nodrop"):
    from fedlib.papers import fedlog

    return fedlog.table1_config("mnist", "FedDBE", seed=seed, rounds=rounds + 1, device="cpu", model=model)


def describe(out: Path, model: str, authors: Path) -> Path:
    """The provenance of `model`'s curves in the CSV `out`, written to `out` with .json (the other models' entries
    stay): the authors' commit, seeds, rounds, how their generators were seeded, and the noise floor (their code
    against itself on a second stream: |mean| + t SE per evaluation, in points) with the bound it gives."""
    import subprocess

    from fedlib.papers.fedlog.analysis import crosscheck

    curves = crosscheck.curves(out, model=model)
    if "authors" not in curves:
        raise SystemExit(f"{out} holds no curves of {model}; run the cross-check on it first")
    commit = subprocess.run(["git", "-C", str(authors), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    floor = crosscheck.noise_floor(curves)
    entry = {"authors_commit": commit.strip() or "unknown", "seeds": len(curves["authors"]),
             "evaluations": int(curves["authors"].shape[1]), "our_config": "fedlog.table1_config('mnist', 'FedDBE')",
             "their_generators": "torch, numpy and random seeded with the seed before the model is built, as their "
                                 f"main.py seeds before building one; their k-th stream with seed + (k - 1) x {STREAM2}",
             "their_streams": sum(side == "authors" or side.startswith("authors_stream") for side in curves),
             "noise_floor_points": None if floor is None else [round(float(v), 3) for v in floor],
             "bound_points": [round(float(v), 3) for v in crosscheck.bound_at(curves)]}
    path = out.with_suffix(".json")
    known = json.loads(path.read_text()) if path.exists() else {}
    known[model] = entry
    path.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")
    return path


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("authors", type=Path, help="a checkout of TsingZ0/DBE (its system/ folder is run)")
    p.add_argument("--seeds", default="0-4")
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--out", type=Path, default=ROOT / "figures" / "feddbe_crosscheck.csv")
    p.add_argument("--scratch", type=Path, default=ROOT / "build" / "feddbe_crosscheck")
    p.add_argument("--model", choices=MODELS, default=MODELS[0], help="the body both sides train (default: Table 1's)")
    p.add_argument("--describe", action="store_true", help="only write the model's provenance from the CSV there")
    p.add_argument("--streams", type=int, default=2, help="runs of the authors' code per seed, each on its own random "
                   "stream (default 2: the curves and the noise floor; 3 or more: the authors' code can also stand in "
                   "our place, `crosscheck.replicas`)")
    args = p.parse_args()
    if args.streams < 2:
        raise SystemExit(f"--streams must be 2 or more (the rule needs the noise floor's second stream), got "
                         f"{args.streams}")
    if not (args.authors / "system" / "flcore" / "servers" / "serverDBE.py").exists():
        raise SystemExit(f"{args.authors} is not a checkout of TsingZ0/DBE (no system/flcore/servers/serverDBE.py); "
                         f"clone it outside this repository and pass its path")
    if args.describe:
        print(f"provenance of {args.model} written to {describe(args.out, args.model, args.authors)}")
        return
    lo, hi = (int(v) for v in args.seeds.split("-"))
    import torch

    from fedlib import experiments as ex

    torch.set_num_threads(1)
    rows = []
    for seed in range(lo, hi + 1):
        theirs = their_run(args.authors, args.scratch, args.model, seed, args.rounds, 1)
        for k in range(2, args.streams + 1):  # their code again on other random streams (batch orders, dropout masks)
            again = their_run(args.authors, args.scratch, args.model, seed, args.rounds, k)
            rows += [dict(model=args.model, side=f"authors_stream{k}", seed=seed, round=r, acc_all=a)
                     for r, a in enumerate(again)]
        ours = ex.run(our_config(seed, args.rounds, args.model), progress=False)["rounds"]["acc_all"]
        rows += [dict(model=args.model, side="authors", seed=seed, round=r, acc_all=a) for r, a in enumerate(theirs)]
        rows += [dict(model=args.model, side="fedlib", seed=seed, round=r, acc_all=a) for r, a in enumerate(ours)]
        print(f"seed {seed}: authors {theirs[-1]:.4f}, fedlib {ours[-1]:.4f} after {args.rounds} rounds", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    kept = []  # the other model's curves stay in the file
    if args.out.exists():
        with open(args.out) as f:
            kept = [r for r in csv.DictReader(f) if r.get("model") and r["model"] != args.model]
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["model", "side", "seed", "round", "acc_all"])
        w.writeheader()
        w.writerows(kept + rows)
    from fedlib.papers.fedlog.analysis import crosscheck

    describe(args.out, args.model, args.authors)
    curves = crosscheck.curves(args.out, model=args.model)
    bound = crosscheck.bound_at(curves)
    if "authors_stream2" in curves:
        print(f"noise floor (the authors' code against itself on another random stream, {len(curves['authors'])} "
              f"seeds): |mean| + t SE up to {bound.max():.2f} points; the bound is the larger of it and 1 point")
    print("\n".join(crosscheck.report(curves, "authors", "the authors'")) + f"\ncurves in {args.out}")

if __name__ == "__main__":
    main()
