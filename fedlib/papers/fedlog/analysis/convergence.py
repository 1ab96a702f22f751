"""Section 3.5 measured: the quantities of Thms. 3-5 for every client, round by round.

Thm. 4 says a client's local loss L_c (cross-entropy of its body under the global head on its own
training data) decreases in every round when the body step size zeta is below
2 S / (L1 (S + E sigma^2)) < 2 / L1, with L1 the body's smoothness constant (Assumption 1). We estimate
L1 per client and round as the largest |eigenvalue| of the Hessian of L_c w.r.t. the body (power
iteration on Hessian-vector products, all clients at once: their Hessians are separate blocks), and run
plain SGD (the theorems' optimizer) at several step sizes, reporting how often zeta < 2 / L1 held. Losses and gradients are taken
on the full local training set in eval mode (no dropout), so they are the L_c and grad L_c of the theorems.
The head step: FedLog solves Eq. 12 exactly (no step size beta), the limit of the head ascent with a
step inside Thm. 4's bound.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from .... import engine, stats
from .... import experiments as ex
from ....config import Config
from ....messages import Ledger
from ....rounds import run_round


def _group_loss(group: engine.Group, data, params: dict) -> torch.Tensor:
    """Full-batch mean cross-entropy of every client of the group [n] (eval mode)."""
    _, logits = group.forward(data.x, train=False, params=params)
    return engine.masked_cross_entropy(logits, data.y, data.valid())


def local_losses(ctx) -> torch.Tensor:
    out = torch.zeros(ctx.population.n_clients)
    with torch.no_grad():
        for g, data in ctx.groups:
            out[g.clients] = _group_loss(g, data, g.params).cpu()
    return out


def body_gradient_norms(ctx) -> torch.Tensor:
    """||grad_theta L_c||_2 of every client (Thm. 5's quantity)."""
    out = torch.zeros(ctx.population.n_clients)
    for g, data in ctx.groups:
        body = g.names("body")
        params = {k: (v.detach().requires_grad_(True) if k in body else v) for k, v in g.params.items()}
        grads = torch.autograd.grad(_group_loss(g, data, params).sum(), [params[k] for k in body])
        out[g.clients] = torch.sqrt(sum(gr.flatten(1).pow(2).sum(1) for gr in grads)).cpu()
    return out


def body_smoothness(ctx, iterations: int = 20, seed: int = 0) -> torch.Tensor:
    """Largest |eigenvalue| of the Hessian of every client's local loss w.r.t. its body, an estimate of the local
    smoothness L1 [n] (power iteration finds the eigenvalue of largest magnitude)."""
    out = torch.zeros(ctx.population.n_clients)
    gen = torch.Generator().manual_seed(seed)
    for g, data in ctx.groups:
        body = g.names("body")
        params = {k: (v.detach().requires_grad_(True) if k in body else v) for k, v in g.params.items()}
        grads = torch.autograd.grad(_group_loss(g, data, params).sum(), [params[k] for k in body], create_graph=True)
        v = [torch.randn(p.shape, generator=gen).to(p) for p in (params[k] for k in body)]
        eig = torch.zeros(g.n)
        for _ in range(iterations):
            norm = torch.sqrt(sum(x.flatten(1).pow(2).sum(1) for x in v)).clamp(min=1e-30)
            v = [x / norm.view(-1, *[1] * (x.dim() - 1)) for x in v]
            hv = torch.autograd.grad(grads, [params[k] for k in body], grad_outputs=v, retain_graph=True)
            eig = sum((h * x).flatten(1).sum(1) for h, x in zip(hv, v)).detach().cpu().abs()  # |Rayleigh quotient|
            v = [h.detach() for h in hv]
        out[g.clients] = eig
    return out


class Trace(NamedTuple):
    """Thm. 4's derived value of one FedLog run (`trace`; shipped in archive/convergence_trace_v2/ as JSON, read back
    by `trace_of`): per round, each client's local loss before the round, after local training (under the round's
    head) and after the server's new head; the body gradient norms and smoothness estimates at the round's start; the
    mean test accuracy; and the round in which the loss became non-finite (None if it did not)."""
    loss_before: list
    loss_local: list
    loss_after: list
    grad_norm: list
    smoothness: list
    acc_mean: list
    diverged_round: int | None = None


def trace(cfg: Config, smoothness_iterations: int = 10) -> Trace:
    """Run `cfg` round by round and record, per client, the local loss before and after every round, and the
    body gradient norm and smoothness estimate at the start of every round; `loss_local` is the loss after local
    training under the round's head, before the server's new head. Per-round [n_clients] lists, the mean test
    accuracy per round, and the round in which the loss became non-finite (the run stops there)."""
    ctx, alg = ex.setup(cfg)
    ledger = Ledger()
    t = Trace([], [], [], [], [], [])
    after_local_training = lambda reply: t.loss_local.append(local_losses(ctx).tolist())  # noqa: E731
    for rnd in range(cfg.rounds):
        t.loss_before.append(local_losses(ctx).tolist())
        t.grad_norm.append(body_gradient_norms(ctx).tolist())
        t.smoothness.append(body_smoothness(ctx, iterations=smoothness_iterations, seed=rnd).tolist())
        run_round(alg, rnd, ledger, between=after_local_training)  # loss_local: new bodies under the round's head
        loss = local_losses(ctx)
        if not bool(torch.isfinite(loss).all()):
            return t._replace(diverged_round=rnd)
        t.loss_after.append(loss.tolist())
        ev = engine.evaluate_population(alg.population, ctx.fed.test)
        t.acc_mean.append(float(engine.client_accuracy(ev).mean()))
    return t


def trace_value(cfg: Config, settings=None) -> dict:
    """`trace` of `cfg` as its JSON (`plans.STEP_SIZES`' derived value): `diverged_round` only where it diverged."""
    return {field: value for field, value in trace(cfg)._asdict().items() if value is not None}


def trace_of(value: dict) -> Trace:
    return Trace(**value)


def inside_bound(tr: Trace, zeta: float) -> float:
    """Fraction of client-rounds where zeta < 2 / L1 (Thm. 4's bound without the noise term, a necessary condition)."""
    l1 = torch.tensor(tr.smoothness)
    return float((zeta * l1 < 2).float().mean())


def fraction_decreased(start: list, end: list, rounds: int) -> float:
    """Fraction of client-rounds whose loss at `end` ([rounds][clients]) is below that at `start`, over the first
    `rounds` (those that finished: a run that diverged trained locally in a round it did not finish).
    (loss_before, loss_after): the round; (loss_before, loss_local): its local training; (loss_local, loss_after):
    its head step."""
    a, b = torch.tensor(start[:rounds]), torch.tensor(end[:rounds])
    return float((b < a).float().mean()) if b.numel() else float("nan")


__all__ = ["local_losses", "body_gradient_norms", "body_smoothness", "trace", "trace_value", "trace_of", "Trace",
           "fraction_decreased", "inside_bound"]


# Notebook 05's readings: Fig. 2's and Fig. 3 left's curves (Results, one per seed; accuracies in percent) and the
# step-size studies' rows.
def by_dataset(*reads, say: bool = True) -> tuple[dict, list[str]]:
    """dataset -> label -> Results (one per seed) for the datasets of `reads` (parts keyed (dataset, label)) whose
    every run is there, and the datasets whose runs are not, each named with the command that computes them (`say`;
    the claims, which read the same, say nothing)."""
    got, missing = {}, []
    for read in reads:
        for d in dict.fromkeys(d for d, _ in read.keys()):
            keys = [k for k in read.keys() if k[0] == d]
            found = {lab: read[(d, lab)] for _, lab in keys}
            if all(rs is not None for rs in found.values()):
                got[d] = found
            else:
                if say:
                    print(read.note(keys, f"{', '.join(read.part.where)} ({d})"))
                missing.append(d)
    return got, missing


def curves(results) -> np.ndarray:
    """[seeds, rounds] accuracy in percent."""
    return np.array([r.curve() for r in results]) * 100


def faster(title: str, by_label: dict) -> tuple[float, float, list[str]]:
    """Convergence speed from the mean curves over seeds: accuracy after round 1, the mean over all rounds (higher:
    high accuracy in fewer rounds) and the first round within one point of the best final accuracy of any method.
    Returns the lower of FedLog's and FedLog-C's mean over rounds, the higher of the others', and what to print."""
    mean = {lab: curves(rs).mean(0) for lab, rs in by_label.items()}
    best = max(m[-1] for m in mean.values())
    lines = []
    for lab, m in mean.items():
        first = stats.first_round_reaching(m, best - 1)
        lines.append(f"  {title} {lab:12s} round 1: {m[0]:5.2f}%  mean over rounds: {m.mean():5.2f}%  first round "
                     f"within 1 point of {best:.2f}%: {'never' if first is None else first}")
    auc = {lab: m.mean() for lab, m in mean.items()}
    ours = [auc[k] for k in auc if k.startswith("FedLog")]
    theirs = [auc[k] for k in auc if not k.startswith("FedLog")]
    said = "yes" if min(ours) > max(theirs) else ("no" if max(ours) < min(theirs) else "partly")
    lines.append(f"  {title}: FedLog and FedLog-C both above LG-FedAvg 1 and FedProto in mean accuracy over rounds: "
                 f"{said}")
    return min(ours), max(theirs), lines


def speeds(fig2: dict) -> tuple[dict, list[str], str]:
    """Fig. 2 per dataset (`faster`): dataset -> (the lower of ours, the higher of theirs), what to print, and the
    verdict the figure's title carries."""
    found = {d: faster(f"Fig. 2, {d}", by_label) for d, by_label in fig2.items()}
    speed = {d: (ours, theirs) for d, (ours, theirs, _) in found.items()}
    verdict = "FedLog and FedLog-C converge faster (mean accuracy over rounds above LG-FedAvg 1's and FedProto's): " + \
        ", ".join(f"{d} {'yes' if ours > theirs else 'no'} ({ours:.1f}% vs {theirs:.1f}%)"
                  for d, (ours, theirs) in speed.items())
    return speed, [line for *_, lines in found.values() for line in lines], verdict


def summary_rows(by_dataset: dict, experiment: str) -> list[dict]:
    """One row per dataset and method: seeds, rounds, final and best-round accuracy, bits."""
    rows = []
    for d, by_label in by_dataset.items():
        for lab, rs in by_label.items():
            best, final = [100 * r.best() for r in rs], [100 * r.last() for r in rs]
            rows.append({"experiment": experiment, "dataset": d, "method": lab, "seeds": len(rs),
                         "rounds": rs[0].n_rounds, "final_accuracy_mean": float(np.mean(final)),
                         "final_accuracy_std": float(np.std(final, ddof=1)) if len(rs) > 1 else 0.0,
                         "best_accuracy_mean": float(np.mean(best)), "total_bits": rs[0].total_bits()})
    return rows


def fig3_order(by_dataset: dict, cifar100: dict) -> list[str]:
    """Each dataset's best-round accuracies in order, beside the paper's order on CIFAR-100 (`cifar100`: label -> its
    number)."""
    lines = []
    for d, by_label in by_dataset.items():
        best = {lab: stats.mean_se([100 * r.best() for r in rs]) for lab, rs in by_label.items()}
        order = sorted(best, key=lambda k: -best[k][0])
        holds = best["FedLog-C"][0] > best["FedProto"][0] > best["LG-FedAvg 1"][0]
        lines.append(f"  {d}: best-round accuracy " + ", ".join(f"{k} {stats.format_mean_se(*best[k])}" for k in order)
                     + f". The paper's order on CIFAR-100 ({' > '.join(f'{k} {v}' for k, v in cifar100.items())}) "
                     + ("holds in direction here" if holds else "does not hold here")
                     + "; the claims below decide it over seeds")
    return lines


def step_size_studies(read) -> dict:
    """Thm. 4's study per seed from its part's reading (`plans.STEP_SIZES`, a derived part: step size -> one trace
    per seed, None where not cached or shipped): seed -> step size -> trace, the traces that are there, a seed with
    none left out."""
    seeds = read.settings.seeds
    each = {zeta: read.by_seed(zeta) for zeta in read.keys()}
    studies = {sd: {zeta: traces[i] for zeta, traces in each.items() if traces[i] is not None}
               for i, sd in enumerate(seeds)}
    return {sd: study for sd, study in studies.items() if study}


def step_size_table(studies: dict) -> list[StepSizeRow]:
    """Thms. 3-5's rows of every seed's study (`step_size_rows`), seed by seed: what the figure saves and the claim
    judges."""
    return [row for sd, study in studies.items() for row in step_size_rows(study, sd)]


class StepSizeRow(NamedTuple):
    """Thms. 3-5 measured at one step size and seed (`step_size_rows`; saved as thm4_step_sizes): the share of
    client-rounds inside 2/L1, the shares whose local loss decreased over the round, by local training and by the
    head step, the rounds run, the round it diverged ("-" if it did not) and the final accuracy in %."""
    seed: int
    step_size: float
    inside_bound: float
    loss_decreased: float
    local_training_decreased: float
    head_step_decreased: float
    rounds_run: int
    diverged_round: int | str
    final_accuracy: float


def step_size_rows(study: dict, seed: int = 0) -> list[StepSizeRow]:
    """Thms. 3-5 measured, per step size: how often it was inside 2/L1, and how often the local loss decreased."""
    return [StepSizeRow(seed, zeta, inside_bound(tr, zeta), fraction_decreased(tr.loss_before, tr.loss_after, n),
                        fraction_decreased(tr.loss_before, tr.loss_local, n),
                        fraction_decreased(tr.loss_local, tr.loss_after, n), n,
                        "-" if tr.diverged_round is None else tr.diverged_round,
                        100 * tr.acc_mean[-1] if tr.acc_mean else float("nan"))
            for zeta, tr in study.items() for n in [len(tr.loss_after)]]


def step_size_lines(rows: list[StepSizeRow]) -> list[str]:
    """What the step-size rows say, one line per step size."""
    lines = []
    for r in rows:
        lines.append(f"zeta {r.step_size:<6g} inside 2/L1 in {r.inside_bound:.0%} of client-rounds; "
                     + (f"diverged in round {r.diverged_round}; " if r.diverged_round != "-" else "")
                     + (f"local loss decreased in {r.loss_decreased:.0%} of {r.rounds_run} x clients rounds "
                        f"(by local training in {r.local_training_decreased:.0%}, by the new head in "
                        f"{r.head_step_decreased:.0%}), accuracy {r.final_accuracy:.1f}%" if r.rounds_run
                        else "before any round finished"))
    return lines
