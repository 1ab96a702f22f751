"""Seconds per round of FedAvg and FedLog in the paper's MNIST setting (50 clients, 5 local epochs, batch 10,
~60 samples per client), measured in one run on this machine for:

  engine       fedlib: every client of the population trained as one batched computation
  loop         a plain per-client Python loop: one nn.Module and one torch optimizer per client, one small batch
               at a time, each client evaluated alone (the way common FL libraries simulate clients)
  centralized  one model trained on the same samples with batch = clients x 10 for the same number of steps,
               evaluated once on the test set: the floor a batched engine approaches

A round includes local training, the messages, aggregation and the per-client evaluation on the test set.
It also times the training part of a FedAvg round (`run_round`: messages, local training, aggregation) with 10%
of the clients against all of them, and the evaluation of all clients, which does not shrink.
Usage: python benchmarks/bench_round.py [--rounds 3] [--device auto]
"""
from __future__ import annotations

import argparse
import copy
import time

import torch
import torch.nn.functional as F

from fedlib import engine, expfam, models, paper
from fedlib import experiments as ex
from fedlib.messages import Ledger
from fedlib.rounds import run_round


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def seconds_per_round(one, rounds, device) -> float:
    """Mean seconds of one(r) for r = 1..rounds, after a warm-up call one(0)."""
    one(0)
    sync(device)
    t = time.perf_counter()
    for r in range(1, rounds + 1):
        one(r)
    sync(device)
    return (time.perf_counter() - t) / rounds


def time_engine(method, rounds, device, participation=1.0, evaluate=True):
    ctx, alg = ex.setup(paper.paper_config("mnist", method, device=str(device), participation=participation))
    ledger = Ledger()

    def one(rnd):
        run_round(alg, rnd, ledger)
        if evaluate:
            engine.evaluate_population(alg.population, ctx.fed.test)

    return seconds_per_round(one, rounds, device)


def time_evaluation(rounds, device):
    ctx, alg = ex.setup(paper.paper_config("mnist", "fedavg", device=str(device)))
    return seconds_per_round(lambda rnd: engine.evaluate_population(alg.population, ctx.fed.test), rounds, device)


def time_loop(method, rounds, device):
    ctx, _ = ex.setup(paper.paper_config("mnist", "fedavg", device=str(device)))
    g = ctx.population.groups[0]
    template = copy.deepcopy(models.build("cnn_mnist", (1, 28, 28), 10)).to(device)
    clients = [copy.deepcopy(template) for _ in range(50)]
    train, test = ctx.fed.train, ctx.fed.test
    body_names = [k for k, _ in template.named_parameters() if k.startswith("body.")]
    eta = expfam.head_to_eta(template.head.weight.detach(), template.head.bias.detach())

    def one(rnd):
        nonlocal eta
        idx, valid = engine.batch_schedule(train.counts, 10, 5, torch.Generator().manual_seed(rnd))
        idx, valid = idx.to(device), valid.to(device)
        if method == "fedavg":
            state = template.state_dict()
            for m in clients:
                m.load_state_dict(state)
        stats = []
        for c, m in enumerate(clients):
            if method == "fedlog":
                w, b = expfam.eta_to_head(eta)
                m.head.weight.data.copy_(w)
                m.head.bias.data.copy_(b)
            trainable = list(dict(m.named_parameters())) if method == "fedavg" else body_names
            engine.train_loop(m, train.x[c], train.y[c], idx[:, c], valid[:, c], trainable=trainable,
                              optimizer="adam", lr=1e-3)
            if method == "fedlog":
                m.eval()
                with torch.no_grad():
                    n = int(train.counts[c])
                    stats.append(expfam.sufficient_statistics(m.body(train.x[c, :n]), train.y[c, :n], 10))
        if method == "fedavg":
            avg = {k: torch.stack([m.state_dict()[k] for m in clients]).mean(0) for k in template.state_dict()}
            template.load_state_dict(avg)
            for m in clients:
                m.load_state_dict(avg)
        else:
            eta = expfam.map_head(torch.stack(stats).sum(0), float(train.counts.sum()))
            w, b = expfam.eta_to_head(eta)
            for m in clients:
                m.head.weight.data.copy_(w)
                m.head.bias.data.copy_(b)
        with torch.no_grad():
            for c, m in enumerate(clients):
                m.eval()
                n = int(test.counts[c])
                (m(test.x[c, :n]).argmax(1) == test.y[c, :n]).sum()

    return seconds_per_round(one, rounds, device)


def time_centralized(rounds, device):
    ctx, _ = ex.setup(paper.paper_config("mnist", "fedavg", device=str(device)))
    train, test = ctx.fed.train, ctx.fed.test
    x = torch.cat([train.x[c, : int(train.counts[c])] for c in range(50)])
    y = torch.cat([train.y[c, : int(train.counts[c])] for c in range(50)])
    tx = torch.cat([test.x[c, : int(test.counts[c])] for c in range(50)])
    steps = int(((train.counts + 9) // 10 * 5).max())
    model = models.build("cnn_mnist", (1, 28, 28), 10).to(device)
    if device.type == "cpu":  # the fastest layout for one model too, so the floor is a real floor
        model = model.to(memory_format=torch.channels_last)
        x, tx = x.contiguous(memory_format=torch.channels_last), tx.contiguous(memory_format=torch.channels_last)
    opt = torch.optim.Adam(model.parameters(), 1e-3)

    def one(rnd):
        model.train()
        g = torch.Generator().manual_seed(rnd)
        for _ in range(steps):
            sel = torch.randint(len(y), (500,), generator=g).to(device)
            opt.zero_grad()
            F.cross_entropy(model(x[sel]), y[sel]).backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            for i in range(0, len(tx), 4096):
                model(tx[i:i + 4096]).argmax(1)

    return seconds_per_round(one, rounds, device)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--device", default="auto")
    args = p.parse_args()
    device = engine.resolve_device(args.device)
    print(f"device {device}, torch {torch.__version__}, {torch.get_num_threads()} threads, {args.rounds} timed rounds")
    central = time_centralized(args.rounds, device)
    print(f"centralized equivalent: {central:.3f} s/round")
    for method in ("fedavg", "fedlog"):
        eng = time_engine(method, args.rounds, device)
        loop = time_loop(method, args.rounds, device)
        print(f"{method:7s} engine {eng:.3f} s/round | loop {loop:.3f} s/round | "
              f"loop/engine {loop / eng:.2f}x | engine/centralized {eng / central:.2f}x")
    full = time_engine("fedavg", args.rounds, device, evaluate=False)
    tenth = time_engine("fedavg", args.rounds, device, participation=0.1, evaluate=False)
    print(f"fedavg training part of a round (no evaluation): all 50 clients {full:.3f} s | 10% (5 clients) "
          f"{tenth:.3f} s | 10% / all {tenth / full:.2f}x; evaluating all 50 clients {time_evaluation(args.rounds, device):.3f} s")


if __name__ == "__main__":
    main()
