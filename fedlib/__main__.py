"""Command line: `python -m fedlib fetch-data`, `python -m fedlib run --method fedlog --dataset mnist ...`,
`python -m fedlib sweep --grid grid.json [--backend ray --address auto]`."""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys


def fetch_data(names: list[str]) -> int:
    from . import data

    status = 0
    for name in names:
        try:
            ds = data.load_dataset(name)
            print(f"{name}: {len(ds.train_y)} train / {len(ds.test_y)} test samples in {data.data_dir()}")
        except data.DatasetNotFound as err:
            if name == "fashion_mnist" and shutil.which("apt-get"):
                # a fresh Debian machine has no package lists; `apt-get download` needs them
                subprocess.run(["apt-get", "update", "-qq"], capture_output=True)
                try:
                    data.load_dataset(name)
                    print(f"{name}: fetched after apt-get update")
                    continue
                except data.DatasetNotFound:
                    pass
            print(f"{name}: {err}", file=sys.stderr)
            status = 1
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="fedlib")
    sub = parser.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch-data", help="load (and cache) the offline-capable datasets")
    f.add_argument("names", nargs="*", default=["mnist", "fashion_mnist"])
    r = sub.add_parser("run", help="run one experiment (cached) and print its last-round metrics")
    r.add_argument("--method", default="fedlog")
    r.add_argument("--dataset", default="mnist")
    r.add_argument("--rounds", type=int)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--option", action="append", default=[], help="method option key=value (JSON value)")
    sw = sub.add_parser("sweep", help="run a grid of experiments (cached) locally or on Ray")
    sw.add_argument("--grid", required=True, help='JSON file: a list of configs or {"base": {...}, "grid": {...}}')
    sw.add_argument("--backend", choices=["local", "ray"], default=None, help="default: $FEDLIB_SWEEP_BACKEND or local")
    sw.add_argument("--address", default=None, help="an existing Ray cluster (default: start a local one)")
    sw.add_argument("--threads", type=int, default=None,
                    help="torch threads per Ray task (default: this process's count, which gives numbers identical "
                         "to the local backend; on one machine use 1 so that tasks do not oversubscribe the cores)")
    args = parser.parse_args(argv)
    if args.cmd == "fetch-data":
        return fetch_data(args.names)
    if args.cmd == "sweep":
        from .sweep import expand_grid, run_sweep

        with open(args.grid) as f:
            configs = expand_grid(json.load(f))
        report = run_sweep(configs, backend=args.backend, address=args.address, threads=args.threads)
        print(f"{len(configs)} runs: {report.cached} from the cache, {report.computed} computed, "
              f"{len(report.failures)} failed")
        for cfg, err in report.failures:
            print(f"FAILED {cfg.label()}: {err.strip().splitlines()[-1]}", file=sys.stderr)
        return 1 if report.failures else 0
    from .experiments import run

    res = run(run_config(args))
    print(json.dumps({k: v[-1] for k, v in res["rounds"].items() if k not in ("participants", "report")}, indent=1))
    return 0


def run_config(args):
    """The Config of `fedlib run`: the paper's setting of the dataset with the method's Tables A.3-A.5 options."""
    from .paper import paper_config

    opts = {k: json.loads(v) for k, v in (o.split("=", 1) for o in args.option)}
    over = {"rounds": args.rounds} if args.rounds else {}
    return paper_config(args.dataset, args.method, seed=args.seed, options=opts, **over)


if __name__ == "__main__":
    sys.exit(main())
