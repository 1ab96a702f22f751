"""FedPAC against PFLlib's (TsingZ0/PFLlib, `clientpac.py` and `serverpac.py`, which follow the FedPAC authors'
JianXu95/FedPAC) on our client data: both run one FashionMNIST federation of FedCR's Table 2 n1 (5 classes per
client, 490 training images each, FedCR's CNN at width 1024), the same clients, samples and initial weights per seed,
and the curves of the pooled test accuracy of the personal models are compared.

    python scripts/fedpac_crosscheck.py PFLLIB [--seeds 0-4] [--rounds 10] [--clients 10] [--epochs 5]

PFLLIB: a checkout of TsingZ0/PFLlib (written against commit d832e76), kept outside this repository: it is read and
run, never copied in. Its `system/` needs cvxpy (FedPAC's quadratic programs), h5py and scikit-learn:
`pip install --target DIR cvxpy h5py scikit-learn`, then `FEDLIB_AUTHORS_PATH=DIR`.

The reduced size (default 10 clients, all of them every round, 10 rounds, 5 local epochs, 5 seeds: the rule needs 5)
keeps the whole check near an hour of processor time (about 14 minutes a seed beside two other jobs); with every
client in every round, both sides train the same clients each round (their selection draws from their own
generator).

What each side runs:
* ours: `fedcr.protocol.config("fashion_mnist", "FedPAC", "n1", ...)` at the sizes above, lr 0.1, batch 48, without
  FedCR's gradient clipping and final fine-tune (PFLlib has neither), dropping each epoch's last partial batch (their
  DataLoader's drop_last).
* theirs: their `main.py -algo FedPAC -lam 1 -gr R`, unchanged, in a scratch folder holding our federation in their
  layout; our model enters as their CNN (`scripts/authors_code.py`). They evaluate each round before training it, so
  their evaluation r + 1 follows r + 1 rounds of training, as our round r does; their evaluation 0 (untrained) is
  dropped.
With `--streams 3` (the default) their code runs a third time per seed: the self-check then compares how many
evaluations ours fails with the most their own code fails in our place (`crosscheck.replicas`). Known differences,
kept: their statistics and centroids are computed over a DataLoader that drops each client's last
partial batch (ours over every sample); their quadratic programs are solved by cvxpy in float32-derived matrices with
their eigenvalue clipping (ours by `fedpac.simplex_qp` in float64).

The rule is notebook 02's for FedDBE (`fedlib.papers.fedlog.analysis.crosscheck.agreement`): a paired equivalence test
(TOST at 5%) at each evaluation, within the larger of 1 point and their code against itself on a second random stream.
"""
from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import authors_code  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATASET = "fedlib_FMNIST"  # their main.py builds its CNN for a dataset whose name holds "MNIST"
MODEL = "FedPAC"  # the CSV's `model` column: the method compared
STREAM2 = 1_000  # their k-th run seeds their generators with seed + (k - 1) x this
LR, BATCH, WIDTH = 0.1, 48, 1024


def our_config(seed: int, rounds: int, clients: int, epochs: int):
    from fedlib.papers.fedcr import protocol

    return protocol.config("fashion_mnist", "FedPAC", "n1", seed=seed, rounds=rounds, width=WIDTH, dim=2, lr=LR,
                           n_clients=clients, train_fraction=clients / 100, participation=1.0, local_epochs=epochs,
                           clip_grad_norm=0.0, final_finetune_epochs=0, drop_last=True, device="cpu")


def their_args(rounds: int, clients: int, epochs: int) -> list[str]:
    return ["-data", DATASET, "-algo", "FedPAC", "-m", "CNN", "-lam", "1", "-gr", str(rounds), "-nc", str(clients),
            "-jr", "1", "-lbs", str(BATCH), "-ls", str(epochs), "-lr", str(LR), "-dev", "cpu", "-t", "1", "-eg", "1"]


def their_run(pfllib: Path, scratch: Path, cfg, args, k: int) -> list[float]:
    """Their accuracy curve on cfg's federation, their k-th random stream, after rounds 1..R (run once, then read)."""
    folder = scratch / f"seed{cfg.seed}" / ("" if k == 1 else f"stream{k}")
    if not (folder / "authors.json").exists():
        authors_code.export(cfg, folder, DATASET)
        authors_code.run_main(pfllib, folder, cfg.seed, cfg.model, their_args(args.rounds, args.clients, args.epochs),
                              stream=None if k == 1 else cfg.seed + (k - 1) * STREAM2)
        (folder / "authors.json").write_text(json.dumps(authors_code.read_accuracy(folder)[1:args.rounds + 1]))
    return json.loads((folder / "authors.json").read_text())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("pfllib", type=Path, help="a checkout of TsingZ0/PFLlib (its system/ folder is run)")
    p.add_argument("--seeds", default="0-4")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--clients", type=int, default=10)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--out", type=Path, default=ROOT / "figures" / "fedpac_crosscheck.csv")
    p.add_argument("--scratch", type=Path, default=ROOT / "build" / "fedpac_crosscheck")
    p.add_argument("--streams", type=int, default=3, help="runs of PFLlib's code per seed, each on its own random "
                   "stream (2: the curves and the noise floor; 3, the default: also their replica spread, how many "
                   "evaluations their own code fails in our place)")
    args = p.parse_args()
    if not (args.pfllib / "system" / "flcore" / "servers" / "serverpac.py").exists():
        raise SystemExit(f"{args.pfllib} is not a checkout of TsingZ0/PFLlib (no system/flcore/servers/serverpac.py); "
                         f"clone it outside this repository and pass its path")
    if min(args.rounds, args.clients, args.epochs) < 1 or args.streams < 2:
        raise SystemExit("--rounds, --clients and --epochs must be 1 or more, --streams 2 or more")
    try:
        lo, hi = (int(v) for v in args.seeds.split("-"))
    except ValueError:
        raise SystemExit(f"--seeds must be a range like 0-2, got {args.seeds!r}") from None
    import torch

    from fedlib import experiments as ex
    from fedlib.papers.fedlog.analysis import crosscheck

    torch.set_num_threads(1)
    rows = []
    for seed in range(lo, hi + 1):
        cfg = our_config(seed, args.rounds, args.clients, args.epochs)
        theirs = {k: their_run(args.pfllib, args.scratch, cfg, args, k) for k in range(1, args.streams + 1)}
        ours = ex.run(cfg, progress=False)["rounds"]["acc_all"]
        sides = [("authors", theirs[1])] + [(f"authors_stream{k}", theirs[k]) for k in range(2, args.streams + 1)]
        for side, curve in sides + [("fedlib", ours)]:
            rows += [dict(model=MODEL, side=side, seed=seed, round=r, acc_all=a) for r, a in enumerate(curve)]
        print(f"seed {seed}: PFLlib {theirs[1][-1]:.4f}, fedlib {ours[-1]:.4f} after {args.rounds} rounds", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["model", "side", "seed", "round", "acc_all"])
        w.writeheader()
        w.writerows(rows)
    commit = subprocess.run(["git", "-C", str(args.pfllib), "rev-parse", "HEAD"], capture_output=True, text=True)
    setting = {"authors_commit": commit.stdout.strip() or "unknown", "clients": args.clients, "participation": 1.0,
               "rounds": args.rounds, "local_epochs": args.epochs, "lr": LR, "batch": BATCH, "width": WIDTH,
               "seeds": hi - lo + 1, "our_config": "fedcr.protocol.config('fashion_mnist', 'FedPAC', 'n1', ...): "
               "no clipping, no final fine-tune, drop_last", "their_args": their_args(args.rounds, args.clients,
                                                                                        args.epochs)}
    args.out.with_suffix(".json").write_text(json.dumps({MODEL: setting}, indent=1, sort_keys=True) + "\n")
    curves = crosscheck.curves(args.out, model=MODEL)
    print("\n".join(crosscheck.report(curves, "PFLlib", "PFLlib's", first=1)) + f"\ncurves in {args.out}")

if __name__ == "__main__":
    main()
