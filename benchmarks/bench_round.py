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
Every variant's rounds take turns (A B C A B C ...), and the script prints medians over the repeats and, for the
ratios, the median of the ratios taken in the same turn: a slow spell of a shared machine then hits both sides.
With `--clients N` the population is N clients of the same size (about 60 samples each: MNIST's training set is
sampled in proportion, so at most 1,000), and the centralized equivalent trains one model on all their samples with
batch N x 10.
Usage: python benchmarks/bench_round.py [--repeats 5] [--device auto] [--no-loop] [--clients 50] [--threads T]
"""
from __future__ import annotations

import argparse
import copy
import statistics
import time

import torch
import torch.nn.functional as F

from fedlib import engine, expfam, models
from fedlib import experiments as ex
from fedlib.messages import Ledger
from fedlib.papers import fedlog
from fedlib.rounds import run_round


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


CLIENTS = 50  # the paper's population; --clients changes it


def setting(method, device, **overrides):
    """FedLog's MNIST paper setting for `method` with CLIENTS clients of the paper's size (about 60 samples each)."""
    return fedlog.paper_config("mnist", method, device=str(device), n_clients=CLIENTS,
                               train_fraction=0.05 * CLIENTS / 50, **overrides)


def engine_round(method, device, participation=1.0, evaluate=True, **overrides):
    """one(rnd): a round of the batched engine (`run_round`, then every client evaluated on its test set)."""
    ctx, alg = ex.setup(setting(method, device, participation=participation, **overrides))
    ledger = Ledger()

    def one(rnd):
        run_round(alg, rnd, ledger)
        if evaluate:
            engine.evaluate_population(alg.population, ctx.fed.test)

    return one


def evaluation_only(device):
    ctx, alg = ex.setup(setting("fedavg", device))
    return lambda rnd: engine.evaluate_population(alg.population, ctx.fed.test)


def loop_round(method, device):
    """one(rnd): a round of the plain per-client loop."""
    ctx, _ = ex.setup(setting("fedavg", device))
    template = copy.deepcopy(models.build("cnn_mnist", (1, 28, 28), 10)).to(device)
    clients = [copy.deepcopy(template) for _ in range(CLIENTS)]
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

    return one


def centralized_round(device):
    """one(rnd): the centralized equivalent's round."""
    ctx, _ = ex.setup(setting("fedavg", device))
    train, test = ctx.fed.train, ctx.fed.test
    x = torch.cat([train.x[c, : int(train.counts[c])] for c in range(CLIENTS)])
    y = torch.cat([train.y[c, : int(train.counts[c])] for c in range(CLIENTS)])
    tx = torch.cat([test.x[c, : int(test.counts[c])] for c in range(CLIENTS)])
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
            sel = torch.randint(len(y), (CLIENTS * 10,), generator=g).to(device)
            opt.zero_grad()
            F.cross_entropy(model(x[sel]), y[sel]).backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            for i in range(0, len(tx), 4096):
                model(tx[i:i + 4096]).argmax(1)

    return one


def interleaved(rounds: dict, repeats: int, device) -> dict[str, list[float]]:
    """Seconds of one round of every variant, `repeats` times, the variants taking turns (A B C A B C ...) so that
    a slow spell of a shared machine hits them alike. Each variant runs one warm-up round first."""
    for one in rounds.values():
        one(0)
    times = {name: [] for name in rounds}
    for rep in range(1, repeats + 1):
        for name, one in rounds.items():
            sync(device)
            t = time.perf_counter()
            one(rep)
            sync(device)
            times[name].append(time.perf_counter() - t)
    return times


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeats", type=int, default=5, help="timed rounds of every variant (at least 3)")
    p.add_argument("--device", default="auto")
    p.add_argument("--no-loop", action="store_true", help="skip the per-client loop (slow)")
    p.add_argument("--clients", type=int, default=50, help="the population (default the paper's 50; at most 1000)")
    p.add_argument("--threads", type=int, default=None, help="torch threads (default torch's)")
    p.add_argument("--ratios", action="store_true", help="only the centralized round and the engine's rounds "
                   "(engine/centralized): no loop, training parts or evaluation alone")
    args = p.parse_args()
    if args.repeats < 3:
        p.error("--repeats must be at least 3: the benchmark prints medians")
    if not 1 <= args.clients <= 1000:
        p.error("--clients must be 1 to 1000: MNIST's 60,000 training samples give 1,000 clients of the paper's size")
    global CLIENTS
    CLIENTS = args.clients
    if args.threads:
        torch.set_num_threads(args.threads)
    device = engine.resolve_device(args.device)
    methods = {"FedAvg": "fedavg", "FedLog": "fedlog", "FedLog-C": "fedlog_c"}
    rounds = {"centralized": centralized_round(device)}
    rounds.update({label: engine_round(m, device) for label, m in methods.items()})
    if not args.no_loop and not args.ratios:
        rounds.update({f"{label} loop": loop_round(m, device) for label, m in methods.items() if m != "fedlog_c"})
    if not args.ratios:
        rounds.update({
            "FedAvg training, all": engine_round("fedavg", device, evaluate=False),
            "FedAvg training, all, captured": engine_round("fedavg", device, evaluate=False, capture_steps=True),
            "FedAvg training, 10%": engine_round("fedavg", device, participation=0.1, evaluate=False),
            "evaluation of all clients": evaluation_only(device)})
    print(f"device {device}, torch {torch.__version__}, {torch.get_num_threads()} threads, {CLIENTS} clients, "
          f"{args.repeats} interleaved repeats of one round each (medians)")
    times = interleaved(rounds, args.repeats, device)
    med = {name: statistics.median(ts) for name, ts in times.items()}

    def paired(a, b):  # the median over repeats of a/b, each ratio from the same turn
        return statistics.median(x / y for x, y in zip(times[a], times[b]))

    print(f"centralized equivalent: {med['centralized']:.3f} s/round "
          f"(range {min(times['centralized']):.3f}-{max(times['centralized']):.3f})")
    for label in methods:
        line = (f"{label:8s} engine {med[label]:.3f} s/round | engine/centralized {paired(label, 'centralized'):.2f}x "
                f"(ratio of medians {med[label] / med['centralized']:.2f}x)")
        if f"{label} loop" in times:
            line += f" | loop {med[label + ' loop']:.3f} s/round | loop/engine {paired(label + ' loop', label):.2f}x"
        print(line)
    if args.ratios:
        return
    print(f"FedAvg training part of a round (no evaluation): all {CLIENTS} clients {med['FedAvg training, all']:.3f} s | "
          f"10% ({max(1, CLIENTS // 10)} clients) {med['FedAvg training, 10%']:.3f} s | 10% / all "
          f"{paired('FedAvg training, 10%', 'FedAvg training, all'):.2f}x; evaluating all {CLIENTS} clients "
          f"{med['evaluation of all clients']:.3f} s")
    print(f"FedAvg training with its steps captured (Config.capture_steps; a CUDA graph on a GPU, the same step "
          f"eagerly elsewhere): {med['FedAvg training, all, captured']:.3f} s | captured / plain "
          f"{paired('FedAvg training, all, captured', 'FedAvg training, all'):.2f}x")


if __name__ == "__main__":
    main()
