"""The wide-layer workloads at the paper's size on one thread, old path against new in one run, with the achieved
GFLOP/s against the FLOPs counted from the shapes:

  fedcr_round   one round of FedCR's Table 2 protocol on FashionMNIST n1 (100 clients, 10 take part, 10 local epochs
                of batch 48, width 1024, V 512, 18 draws; every client evaluated), the second of two rounds
  fedavg_round  the same federation with FedAvg's 1024-wide body (no Gaussian layer)
  ditto_round   Ditto in the same federation (two models per client, the proximal term against the received one)
  dm_step       one distribution-matching step of FedRD's FashionMNIST protocol at the paper's size (10 clients,
                Dirichlet 0.1, ConvNet-128, up to 256 real images per class, 10 synthetic per class), the median of 3
  ladder_round  a FedAvg round of FedRD's ladder federation (ConvNet-32, 10% of FashionMNIST, Dirichlet 0.1 over
                10 clients: 118 to 1517 images each), the second of two rounds

Paths: "old" is the reference path (Config.fast_engine off) without huge pages (THP_MEM_ALLOC_ENABLE=0);
"old+thp" the same with them; "new" the fast engine with them (what FedCR's protocol runs); "new+skip" that with
Config.skip_finished (a step computes only the clients still training), for the ragged ladder round; "+tcmalloc"
preloads tcmalloc (Debian's libtcmalloc-minimal4, as scripts/background_slot.sh does; the other paths run with
glibc's malloc). Each variant
runs in a fresh process, so the allocator setting takes effect, one after another, so the machine's load hits them
alike.

Useful FLOPs (2 per multiply-add), per sample from the layer shapes: training is forward plus backward, where the
backward costs twice the forward except for the first layer, whose input gradient is not needed; evaluation is one
forward; FedCR's head counts its 18 draws. A DM step embeds every drawn real image once (forward) and every
synthetic image of a class its client holds once forward and once backward to the input; padding is not counted.

    OMP_NUM_THREADS=1 python benchmarks/bench_wide.py [--what fedcr_round dm_step] [--paths old new]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

WORKLOADS = ("fedcr_round", "fedavg_round", "ditto_round", "dm_step", "ladder_round")
PATHS = {"old": ("0", False, False), "old+thp": ("1", False, False), "new": ("1", True, False),
         "new+skip": ("1", True, True), "new+tcmalloc": ("1", True, False),
         "new+skip+tcmalloc": ("1", True, True)}  # name -> (THP, fast_engine, skip_finished); +tcmalloc: preloaded
DEFAULT_PATHS = ["old", "old+thp", "new"]  # and "new+skip" for the ragged federation's round, where it matters


def layer_macs(model, input_shape) -> list[int]:
    """Multiply-adds of each Conv2d and Linear of `model.body` for one input, in order (from a forward pass)."""
    import torch
    from torch import nn

    macs = []

    def hook(module, inp, out):
        if isinstance(module, nn.Conv2d):
            k = module.in_channels // module.groups * module.kernel_size[0] * module.kernel_size[1]
            macs.append(out.numel() * k)
        elif isinstance(module, nn.Linear):
            macs.append(out.numel() * module.in_features)

    handles = [m.register_forward_hook(hook) for m in model.body.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    with torch.no_grad():
        model.body(torch.zeros(1, *input_shape))
    for h in handles:
        h.remove()
    return macs


def round_flops(cfg, ctx) -> float:
    """Useful FLOPs of one round of `cfg`: the participants' training and every client's evaluation."""
    from fedlib import models

    model = models.build(cfg.model, ctx.fed.input_shape, ctx.fed.num_classes)
    body = layer_macs(model, ctx.fed.input_shape)
    draws = getattr(model, "train_samples", 0) if cfg.model.split("_")[-1].startswith("v") else 0
    head = model.head.in_features * model.head.out_features * max(draws, 1)
    forward = sum(body) + head
    train = 2 * (3 * forward - body[0])
    models_per_client = 2 if cfg.method == "ditto" else 1
    k = max(1, round(cfg.participation * ctx.fed.n_clients))
    train_samples = k * float(ctx.fed.train.counts.float().mean()) * cfg.local_epochs * models_per_client
    eval_samples = float(ctx.fed.test.counts.sum())
    return train * train_samples + 2 * forward * eval_samples


def timed_rounds(cfg, rounds: int) -> tuple:
    """Run `rounds` rounds of `cfg`, each with every client's evaluation: (ctx, seconds of each round, the last
    evaluation). On a GPU each round is timed to its last kernel (a CUDA synchronisation at both ends)."""
    import torch

    from fedlib import engine
    from fedlib import experiments as ex
    from fedlib.messages import Ledger
    from fedlib.rounds import run_round

    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    ctx, alg = ex.setup(cfg)
    ledger, seconds = Ledger(), []
    for rnd in range(rounds):
        sync()
        t0 = time.perf_counter()
        run_round(alg, rnd, ledger)
        ev = engine.evaluate_population(alg.population, ctx.fed.test)
        sync()
        seconds.append(time.perf_counter() - t0)
    return ctx, seconds, ev


def time_config(cfg) -> dict:
    """The second of two rounds of `cfg` on one thread, each with every client's evaluation."""
    import torch

    torch.set_num_threads(1)
    ctx, seconds, ev = timed_rounds(cfg, 2)
    acc = float(ev["correct"].sum() / ev["count"].sum())
    return {"seconds": seconds[1], "gflop": round_flops(cfg, ctx) / 1e9, "acc_after_2": acc}


def time_round(label: str, fast: bool) -> dict:
    from fedlib.papers import fedcr

    return time_config(fedcr.run("paper", "fashion_mnist", label, "n1", 0, fast_engine=fast, final_finetune_epochs=0))


def time_ladder_round(fast: bool, skip: bool) -> dict:
    """A FedAvg round of FedRD's ladder federation (ConvNet-32, 10% of FashionMNIST, Dirichlet 0.1 over 10 clients:
    ragged, the largest client holds 13 times the smallest's images), with or without Config.skip_finished."""
    import dataclasses

    from fedlib.papers import fedrd

    return time_config(dataclasses.replace(fedrd.ladder("FedAvg", 0), fast_engine=fast, skip_finished=skip))


def time_dm_step(fast: bool) -> dict:
    import torch

    from fedlib import distill, engine, models
    from fedlib import experiments as ex
    from fedlib.papers import fedrd

    torch.set_num_threads(1)
    cfg = fedrd.scaled("fashion_mnist", "FedDM", "paper", seed=0, fast_engine=fast)
    ctx, alg = ex.setup(cfg)
    data, o = ctx.fed.train, cfg.options
    g = torch.Generator().manual_seed(0)
    real, present = distill.real_init(data, ctx.fed.num_classes, o["dpc"], g)
    task = models.build(f"convnet{fedrd.PROFILES['paper'].width}", ctx.fed.input_shape, ctx.fed.num_classes)
    group = engine.functional_group(task.to("meta"), torch.arange(data.n_clients))
    group.fast_engine = fast
    seconds = []
    for _ in range(3):
        t0 = time.perf_counter()
        distill.condense(group, data, real, present, lambda: distill.random_params(task.body, data.n_clients, g),
                         iterations=1, lr=o.get("syn_lr", 1.0), momentum=0.0, batch=o["real_batch"], g=g)
        seconds.append(time.perf_counter() - t0)
    rows = distill.class_rows(data, ctx.fed.num_classes)
    real_images = sum(min(o["real_batch"], len(r)) for per in rows for r in per)
    forward = 2 * sum(layer_macs(models.build(f"convnet{fedrd.PROFILES['paper'].width}", ctx.fed.input_shape,
                                              ctx.fed.num_classes), ctx.fed.input_shape))
    flops = real_images * forward + int(present.sum()) * o["dpc"] * 2 * forward
    return {"seconds": statistics.median(seconds), "gflop": flops / 1e9, "real_images": real_images}


def child(what: str, path: str) -> None:
    _, fast, skip = PATHS[path]
    labels = {"fedcr_round": "FedCR", "fedavg_round": "FedAvg", "ditto_round": "Ditto"}
    if what == "dm_step":
        out = time_dm_step(fast)
    elif what == "ladder_round":
        out = time_ladder_round(fast, skip)
    else:
        out = time_round(labels[what], fast)
    print(json.dumps(out))


def tcmalloc() -> str:
    """The path of tcmalloc's library (`provenance.tcmalloc_library`), or exit saying how to install it."""
    from fedlib import provenance

    found = provenance.tcmalloc_library()
    if not found:
        raise SystemExit("the +tcmalloc paths need tcmalloc: apt-get install libtcmalloc-minimal4")
    return found


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--what", nargs="+", default=list(WORKLOADS), choices=WORKLOADS)
    p.add_argument("--paths", nargs="+", choices=list(PATHS), help="default: old, old+thp, new (and new+skip for "
                   "ladder_round)")
    p.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child(*args.child)
    print("| workload | path | seconds | useful GFLOP | achieved GFLOP/s | speed-up over the first path | accuracy "
          "after 2 rounds (hex: the same bits?) |")
    print("|---|---|---|---|---|---|---|")
    for what in args.what:
        base = None
        for path in args.paths or DEFAULT_PATHS + (["new+skip"] if what == "ladder_round" else []):
            env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
            env |= {"THP_MEM_ALLOC_ENABLE": PATHS[path][0], "OMP_NUM_THREADS": "1"}
            if path.endswith("+tcmalloc"):
                env["LD_PRELOAD"] = tcmalloc()
            done = subprocess.run([sys.executable, __file__, "--child", what, path], env=env, capture_output=True,
                                  text=True, check=True)
            r = json.loads(done.stdout.strip().splitlines()[-1])
            base = base or r["seconds"]
            print(f"| {what} | {path} | {r['seconds']:.2f} | {r['gflop']:.1f} | {r['gflop'] / r['seconds']:.1f} | "
                  f"{base / r['seconds']:.2f}x | {r.get('acc_after_2', float('nan')).hex()} |", flush=True)


if __name__ == "__main__":
    main()
