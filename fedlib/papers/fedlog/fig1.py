"""Notebook 01 (FedLog's Fig. 1 on the circle data): its table, what the numbers say, and its two claims as
functions of the accuracy arrays `synthetic.accuracy_vs_iterations` returns ({method: {"train", "test": [seeds,
local-iteration counts]}}). The claims are tested on made-up arrays (tests/test_fedlog_claims.py)."""
from __future__ import annotations

from ... import claims as rules, outputs
from .reported import QUOTES
from ... import plots

METHODS = ["fedlog", "lg_fedavg", "fedproto"]


def table(acc: dict, iters: list[int]):
    """Train and test accuracy (mean and std over seeds) per method and local-iteration count; saved as fig1_accuracy."""
    rows = [{"method": plots.LABELS[m], "local_iterations": e,
             "train_mean": float(acc[m]["train"][:, j].mean()), "train_std": float(acc[m]["train"][:, j].std()),
             "test_mean": float(acc[m]["test"][:, j].mean()), "test_std": float(acc[m]["test"][:, j].std())}
            for m in METHODS for j, e in enumerate(iters)]
    return outputs.save_table(rows, "fig1_accuracy")


def summary(acc: dict, iters: list[int]) -> str:
    """Each method's train and test accuracy after the most local iterations, its gap, and its test accuracy over
    the whole range; the method with the highest."""
    last = len(iters) - 1
    lines = []
    for m in METHODS:
        tr, te = acc[m]["train"][:, last].mean(), acc[m]["test"][:, last].mean()
        lines.append(f"{plots.LABELS[m]:10s} after {iters[last]:2d} iterations: train {tr:.3f}, test {te:.3f}, "
                     f"gap {tr - te:+.3f}; test accuracy averaged over all iteration counts {acc[m]['test'].mean():.3f}")
    best = max(METHODS, key=lambda m: acc[m]["test"].mean())
    return "\n".join(lines + [f"highest mean test accuracy over the iteration range: {plots.LABELS[best]}"])


def most_accurate_after_one_round(ledger, acc: dict) -> str:
    """Fig. 1: after one round FedLog's test accuracy (mean over the local-iteration range) is the highest, against
    the stronger of LG-FedAvg and FedProto, seed by seed."""
    per_seed = {m: [float(v) for v in acc[m]["test"].mean(1)] for m in METHODS}
    rival = max(METHODS[1:], key=lambda m: sum(per_seed[m]))
    return ledger.compare("FedLog", "Fig. 1", "after one round FedLog's test accuracy (mean over the local-iteration "
                          f"range) is the highest of FedLog, LG-FedAvg and FedProto (against {plots.LABELS[rival]})",
                          per_seed["fedlog"], per_seed[rival], ">", rounds=1, kind="claim",
                          quote=QUOTES["fig1_progress"])


def overfits_least(ledger, acc: dict, iters: list[int]) -> str:
    """Fig. 1: FedLog has the smallest train-test gap after the most local iterations, against the smaller of the
    others' gaps, seed by seed."""
    last = len(iters) - 1
    gap = {m: [float(v) for v in acc[m]["train"][:, last] - acc[m]["test"][:, last]] for m in METHODS}
    rival = min(METHODS[1:], key=lambda m: sum(gap[m]))
    return ledger.compare("FedLog", "Fig. 1", f"FedLog overfits least: the smallest train-test gap after "
                          f"{iters[last]} local iterations (against {plots.LABELS[rival]})", gap["fedlog"], gap[rival],
                          "<", rounds=1, kind="claim", quote=QUOTES["fig1_overfitting"])


def record(acc: dict, iters: list[int], profile: str):
    """Notebook 01's claims, saved; returns the ledger."""
    ledger = rules.ClaimsLedger("01_synthetic_separators", profile)
    most_accurate_after_one_round(ledger, acc)
    overfits_least(ledger, acc, iters)
    ledger.save()
    return ledger
