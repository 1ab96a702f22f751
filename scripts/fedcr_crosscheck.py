"""Ditto in FedCR's protocol against the FedCR authors' code (haozzh/FedCR, `main_fed_ditto.py`) on our client data:
both sides run the same FashionMNIST federation (the same clients and samples, the same initial weights, the same
participants each round, per seed) with FedCR's CNN at width 1024, and the curves of the mean per-client accuracy
of the personal models are compared by notebook 02's paired equivalence rule (`fedlib.papers.fedlog.analysis.crosscheck`).

    python scripts/fedcr_crosscheck.py AUTHORS [--seeds 0-4] [--rounds 20] [--clients 20] [--participation 0.5]

AUTHORS: a checkout of haozzh/FedCR (written against commit e5f0baa), kept outside this repository: it is read and
run, never copied in. Its `code_FedCR/` needs only torch, torchvision, numpy, scipy and matplotlib (fedlib's).

The federation is Table 2's n1 on FashionMNIST (5 classes per client, 700 pooled images each, 70/30 train/test,
10 local epochs of SGD with batch 48, gradient norms clipped at 10, lr 0.1 and lambda 0.001 as our paper runs,
the authors' final round with every client) at `--clients` clients with `--participation` (default 20 and 0.5:
each client trains about 10 times in 20 rounds, so the personal models' persistence, the part of Ditto that
FedAvg lacks, is exercised; the paper's 100 clients at 0.1 train each about twice in 20 rounds). The same 10
clients train each round as at the paper's size.

What each side runs:
* ours: `fedcr.plans.run("paper", "fashion_mnist", "Ditto", "n1", seed, rounds=R, n_clients=..., participation=...)`.
* theirs: their `main_fed_ditto.py --method ditto --dataset FMNIST --epochs R --lr 0.1 --lr_decay 1 --mu 0.001
  --local_ep 10 --local_bs 48`, unchanged, in a scratch folder, with three things put in their place before it
  runs: their `DatasetObject` gives our clients' arrays, their `client_model` loads the seed's initial weights (ours),
  and `random.sample` over their clients returns our participants of the round (their final round: every client).
  Their other random streams (batch orders) come from their `setup_seed(--seed)`: the seed for their first run,
  seed + 1000 x (k - 1) for their k-th (the noise floor: their code against itself).
Both evaluate every client's personal model on its test samples after each round, and after the final round; the
metric is the mean of the per-client accuracies (their `acc_test`, our `acc_mean`).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve()
STREAM2 = 1_000  # their k-th run seeds their generators with seed + (k - 1) x this
MODEL = "Ditto"  # the CSV's `model` column: the method compared
THEIR_ARGS = ["--method", "ditto", "--dataset", "FMNIST", "--lr", "0.1", "--lr_decay", "1", "--mu", "0.001",
              "--local_ep", "10", "--local_bs", "48", "--momentum", "0", "--weigh_delay", "0", "--gpu", "-1",
              "--test_freq", "1", "--frac_data", "0.7"]
EPOCH_LINE = re.compile(r"Epoch:\[(\d+)\]\s+lr =\s+\S+\s+loss=\s+\S+\s+acc_test=\s+(\S+)")


def our_config(seed: int, rounds: int, clients: int, participation: float):
    from fedlib.papers.fedcr import plans

    return plans.run("paper", "fashion_mnist", "Ditto", "n1", seed, rounds=rounds, n_clients=clients,
                     train_fraction=clients / 100, participation=participation, device="cpu")


def export(cfg, folder: Path) -> None:
    """cfg's clients (their arrays: x [n, 1, 28, 28], y [n, 1]), the seed's initial weights under their names,
    and our participants of every round, into `folder`."""
    import torch

    from fedlib import experiments as ex

    ctx, _ = ex.setup(cfg)
    arrays = {}
    for part, cd, name in (("trn", ctx.fed.train, "train"), ("tst", ctx.fed.test, "test")):
        counts = {int(n) for n in cd.counts}
        if len(counts) != 1:
            raise SystemExit(f"the {name} samples per client differ ({sorted(counts)}); their loader needs equal ones")
        n = counts.pop()
        arrays[f"{part}_x"] = cd.x[:, :n].cpu().numpy().astype(np.float32)
        arrays[f"{part}_y"] = cd.y[:, :n].cpu().numpy().astype(np.int64)[..., None]
    np.savez(folder / "data.npz", **arrays)
    group = ctx.population.groups[0]
    ours = [group.params[k][0].detach().clone() for k in ctx.population.param_names()]
    names = [f"{layer}.{kind}" for layer in ("conv1", "conv2", "fc1", "fc2", "fc3") for kind in ("weight", "bias")]
    if len(ours) != len(names):
        raise SystemExit(f"our model has {len(ours)} parameter tensors, their FMNIST_CNN {len(names)}")
    torch.save(dict(zip(names, ours)), folder / "init.pt")
    picks = [ctx.select(r).tolist() for r in range(cfg.rounds)]
    (folder / "participants.json").write_text(json.dumps(picks))


def their_run(authors: Path, scratch: Path, seed: int, rounds: int, clients: int, participation: float,
              k: int) -> list[float]:
    """The curve (fractions, R + 1 evaluations) of their code on `seed`'s federation, on their k-th random stream."""
    folder = scratch / f"seed{seed}" / f"stream{k}"
    done = folder / "authors.json"
    if not done.exists():
        folder.mkdir(parents=True, exist_ok=True)
        export(our_config(seed, rounds, clients, participation), folder)
        argv = [*THEIR_ARGS, "--epochs", str(rounds), "--num_users", str(clients), "--frac", str(participation),
                "--seed", str(seed + (k - 1) * STREAM2), "--filepath", "authors.log"]
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        run = subprocess.run([sys.executable, str(HERE), "--their", str(Path(authors).resolve()), *argv], cwd=folder,
                             env=env, capture_output=True, text=True)
        (folder / "stderr.txt").write_text(run.stdout + run.stderr)
        if run.returncode:
            tail = "\n".join((run.stdout + run.stderr).splitlines()[-8:])
            raise SystemExit(f"their main_fed_ditto.py failed in {folder}:\n{tail}")
        curve = [0.0] * (rounds + 1)
        seen = set()
        for m in EPOCH_LINE.finditer((folder / "authors.log").read_text()):
            curve[int(m.group(1))] = float(m.group(2)) / 100
            seen.add(int(m.group(1)))
        if seen != set(range(rounds + 1)):
            raise SystemExit(f"{folder / 'authors.log'} holds evaluations {sorted(seen)}, not 0-{rounds}")
        done.write_text(json.dumps(curve))
    return json.loads(done.read_text())


def _run_theirs(authors: Path, argv: list[str]) -> None:
    """In the scratch folder: their main_fed_ditto.py with our data, weights and participants in place."""
    import random

    import torch

    torch.set_num_threads(1)
    code = authors / "code_FedCR"
    sys.path.insert(0, str(code))
    import models.Nets as nets
    import utils.utils_dataset as their_data

    data = np.load("data.npz")

    class OurClients:  # their DatasetObject's fields, from our federation
        def __init__(self, dataset, n_client, **_):
            self.dataset, self.n_client, self.n_cls = dataset, n_client, 10
            self.clnt_x, self.clnt_y = list(data["trn_x"]), list(data["trn_y"])
            self.tst_x, self.tst_y = list(data["tst_x"]), list(data["tst_y"])
            if len(self.clnt_x) != n_client:
                raise SystemExit(f"--num_users {n_client}, but the exported federation has {len(self.clnt_x)}")

    init = torch.load("init.pt", weights_only=True)  # tensors only: no pickle code runs

    built = nets.client_model.__init__

    def built_from_ours(self, name, args=True):  # their FMNIST_CNN, starting from the seed's initial weights (ours)
        built(self, name, args)
        self.load_state_dict(init)

    picks = iter(json.loads(Path("participants.json").read_text()))
    draw = random.sample

    def our_participants(population, k, **kw):
        if population and type(population[0]).__name__ == "Client":
            return list(population) if k == len(population) else [population[i] for i in next(picks)]
        return draw(population, k, **kw)

    their_data.DatasetObject, nets.client_model.__init__, random.sample = OurClients, built_from_ours, our_participants
    sys.argv = [str(code / "main_fed_ditto.py"), *argv]
    import runpy

    runpy.run_path(str(code / "main_fed_ditto.py"), run_name="__main__")


def main() -> None:
    if sys.argv[1:2] == ["--their"]:
        _run_theirs(Path(sys.argv[2]), sys.argv[3:])
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("authors", type=Path, help="a checkout of haozzh/FedCR (its code_FedCR/ is run)")
    p.add_argument("--seeds", default="0-4")
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--participation", type=float, default=0.5)
    p.add_argument("--streams", type=int, default=2, help="runs of their code per seed (2: the curves and the floor)")
    p.add_argument("--out", type=Path, default=ROOT / "figures" / "fedcr_crosscheck.csv")
    p.add_argument("--scratch", type=Path, default=ROOT / "build" / "fedcr_crosscheck")
    args = p.parse_args()
    if not (args.authors / "code_FedCR" / "main_fed_ditto.py").exists():
        raise SystemExit(f"{args.authors} is not a checkout of haozzh/FedCR (no code_FedCR/main_fed_ditto.py); clone "
                         f"it outside this repository and pass its path")
    m = re.fullmatch(r"(\d+)-(\d+)", args.seeds)
    if not m or int(m.group(1)) > int(m.group(2)):
        raise SystemExit(f"--seeds takes A-B with A <= B, got {args.seeds!r}")
    if args.streams < 2 or args.rounds < 1 or not 0 < args.participation <= 1 or not 2 <= args.clients <= 100:
        raise SystemExit("--streams >= 2, --rounds >= 1, 0 < --participation <= 1 and 2 <= --clients <= 100")
    import torch

    from fedlib import experiments as ex

    torch.set_num_threads(1)
    rows = []
    for seed in range(int(m.group(1)), int(m.group(2)) + 1):
        sides = {"authors" if k == 1 else f"authors_stream{k}":
                 their_run(args.authors, args.scratch, seed, args.rounds, args.clients, args.participation, k)
                 for k in range(1, args.streams + 1)}
        res = ex.run(our_config(seed, args.rounds, args.clients, args.participation), progress=False)
        sides["fedlib"] = list(res["rounds"]["acc_mean"]) + [res["final"]["acc_mean"]]
        rows += [dict(model=MODEL, side=side, seed=seed, round=r, acc_mean=a)
                 for side, curve in sides.items() for r, a in enumerate(curve)]
        print(f"seed {seed}: after the final round authors {sides['authors'][-1]:.4f}, fedlib "
              f"{sides['fedlib'][-1]:.4f}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["model", "side", "seed", "round", "acc_mean"])
        w.writeheader()
        w.writerows(rows)
    commit = subprocess.run(["git", "-C", str(args.authors), "rev-parse", "HEAD"], capture_output=True, text=True)
    args.out.with_suffix(".json").write_text(json.dumps({MODEL: {
        "authors_commit": commit.stdout.strip() or "unknown", "seeds": int(m.group(2)) - int(m.group(1)) + 1,
        "rounds": args.rounds, "clients": args.clients, "participation": args.participation,
        "their_streams": args.streams, "metric": "acc_mean (the mean of the per-client accuracies, in [0, 1])",
        "our_config": f"fedcr.plans.run('paper', 'fashion_mnist', 'Ditto', 'n1', seed, rounds={args.rounds}, "
                      f"n_clients={args.clients}, train_fraction={args.clients / 100:g}, "
                      f"participation={args.participation:g})",
        "their_generators": f"their setup_seed(seed) for their first stream, seed + (k - 1) x {STREAM2} for their "
                            "k-th: batch orders; the clients, initial weights and participants are ours"}},
        indent=1, sort_keys=True) + "\n")
    from fedlib.papers.fedlog.analysis import crosscheck

    curves = crosscheck.curves(args.out, model=MODEL, metric="acc_mean")
    bound = crosscheck.bound_at(curves)
    eq = crosscheck.agreement(curves, bound=bound)
    for rnd, (ok, d, lhs, b) in enumerate(zip(eq.equivalent, eq.mean, eq.lhs, bound)):
        print(f"evaluation {rnd:3d}: fedlib minus authors {d:+.2f} points, |mean| + t SE {lhs:.2f} (bound {b:.2f})  "
              f"{'equivalent' if ok else 'DIFFER'}")
    print(f"{'passes' if eq.passes else 'fails'}: {int(eq.equivalent.sum())} of {len(eq.equivalent)} evaluations "
          f"within their bound ({eq.seeds} seeds, {crosscheck.EQUIVALENCE_SEEDS} needed); curves in {args.out}")


if __name__ == "__main__":
    main()
