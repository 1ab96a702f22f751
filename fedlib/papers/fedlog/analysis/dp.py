"""Notebook 03's quantities (FedLog with differential privacy, Fig. 3 right and Thm. 7): the statistic's size, the
runs' final accuracies, where each mode recovers the non-private accuracy, each seed's worst gap from a claim's
epsilon on, and the epsilon at which our stand-ins carry the paper's noise per record. Accuracies are fractions."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .... import config, dpsgd, models, privacy, stats
from .... import experiments as ex
from ..plans import DP_PARTS, DpRuns
from ..protocol import paper_config
from ..reported import CIFAR10_TRAIN_RECORDS, PAPER_RECOVERY


def parts_here(profile: str) -> dict:
    """Dataset -> its DP part, for the datasets notebook 03 runs at `profile` whose files are here."""
    return {d: p for d, p in DP_PARTS.items() if profile in p.profiles and ex.dataset_available(d)}


def statistic_size(dataset: str) -> int:
    """m, the size of the statistic a client releases (51 on MNIST, 101 on CIFAR)."""
    return models.statistic_size(dataset, config.INPUT_SHAPES[dataset], 10)


def formal_spend(dataset: str, s: DpRuns, delta: float) -> str:
    """What DP-SGD alone spends of epsilon in `dataset`'s formal variant, and its settings ("" when it has none)."""
    f = s.formal
    if f is None:
        return ""
    cfg = paper_config(dataset, "fedlog", rounds=s.rounds, **s.over)
    q, steps = dpsgd.sample_rate_bound(ex.federation(cfg).train.counts, cfg.batch_size, cfg.local_epochs)
    spent = privacy.formal_epsilon(delta, s.rounds, q, steps, f.z, 1e6)
    return (f"{dataset}, formal variant: DP-SGD with clip norm C = {f.clip}, noise multiplier z = {f.z}, Poisson rate "
            f"q = {q:.3f}, {s.rounds} rounds x {steps} steps spends epsilon = {spent:.2f} alone (delta = {delta}); "
            f"epsilon grid {list(f.eps)}, {len(f.seeds)} seed(s)")


SERIES = tuple((mode, acct) for mode in ("central", "local") for acct in ("thm7", "rdp"))  # Fig. 3 right's curves


def whole_series(final: dict, name: str, s: DpRuns) -> list[tuple[str, str]]:
    """The (mode, accountant) curves of `name` whose every grid epsilon has all its seeds in `final`."""
    return [(m, a) for m, a in SERIES if all((name, m, a, e) in final for e in s.eps)]


def formal_whole(final: dict, name: str, s: DpRuns) -> bool:
    """Whether `name`'s formal variant (if it has one) has every epsilon's seeds in `final`."""
    return s.formal is not None and all((name, "formal", "rdp-sgd", e) in final for e in s.formal.eps)


def finals(reads: dict, say: bool = True) -> tuple[dict, dict]:
    """(dataset, mode, accountant, epsilon) -> each seed's final accuracy (a fraction), for every setting whose seeds
    are all there, and the datasets of `reads` (dataset -> its part's Read) that can be drawn, with their settings:
    those whose non-private runs and at least one whole curve (`whole_series`) are there. The figure draws the whole
    curves, the table leaves the rest empty, and a claim reads the settings it needs, so each is decided once they are
    there, before the rest of its dataset's grid. What is missing is named with the command that computes it (`say`;
    the claims, which read the same, say nothing)."""
    out, drawn = {}, {}
    for name, read in reads.items():
        for key, results in read.each().items():
            if results is not None:
                out[(name, *key)] = [r.last() for r in results]
        s = read.settings
        there = (name, "none", "-", np.inf) in out and bool(whole_series(out, name, s))
        if read.whole() or there:
            drawn[name] = s
        if say and not read.whole():
            print(read.note(what=f"{name}'s runs", drawn="drawn in part" if there else "not drawn"))
    return out, drawn


def recovery(runs: dict, final: dict) -> tuple[dict, list[str]]:
    """(dataset, mode, accountant) -> the smallest epsilon from which every larger one is within 1 point of the
    non-private accuracy (None: not even at the largest), and what to print. `runs`: dataset -> DpRuns."""
    out, lines = {}, []
    for name, s in runs.items():
        ref = float(np.mean(final[(name, "none", "-", np.inf)]))
        for mode in ("central", "local"):
            for acct in ("thm7", "rdp"):
                if (mode, acct) not in whole_series(final, name, s):
                    continue
                x = stats.recovers_from(list(s.eps), [np.mean(final[(name, mode, acct, e)]) for e in s.eps], ref)
                out[(name, mode, acct)] = x
                first = f"from epsilon = {x}" if x is not None else f"not even at epsilon = {max(s.eps)}"
                lines.append(f"{name}: {mode} DP ({acct}) recovers the non-private accuracy {ref:.4f} {first}")
        if formal_whole(final, name, s):
            accs = ", ".join(f"{np.mean(final[(name, 'formal', 'rdp-sgd', e)]):.4f} at epsilon = {e}"
                             for e in s.formal.eps)
            lines.append(f"{name}: the formal variant (a guarantee that holds) reaches {accs} (non-private {ref:.4f})")
    return out, lines


def worst_gap(final: dict, name: str, mode: str, s: DpRuns, from_eps: float) -> list[float] | None:
    """Per seed, in points: the lowest over the grid's epsilons >= `from_eps` of `mode` DP's final accuracy (Thm. 7's
    sigma) minus the non-private run's of the same seed (None: no grid point that high, or the runs are not there)."""
    grid = [e for e in s.eps if e >= from_eps * (1 - 1e-9)]
    ref = final.get((name, "none", "-", np.inf))
    if not grid or ref is None or any((name, mode, "thm7", e) not in final for e in grid):
        return None
    return [100 * min(final[(name, mode, "thm7", e)][i] - ref[i] for e in grid) for i in range(len(ref))]


class Release(NamedTuple):
    """What Thm. 7's noise per record depends on besides epsilon: the records n behind the released statistic (the
    federation's for central DP, which releases the global sum; a client's for local DP), its size m and the
    rounds k."""
    n: float
    m: int
    k: int


def matched_epsilon(paper_eps: float, theirs: Release, ours: Release, delta: float, b: float) -> float:
    """The epsilon at which Thm. 7's noise weighs on each of our records as the paper's does at `paper_eps`: sigma /
    n equal on both sides, each with its own n, m and k. Sigma falls as epsilon grows, so the bisection (on log
    epsilon) has one root."""
    target = privacy.sigma_thm7(paper_eps, delta, theirs.m, b, theirs.k) / theirs.n
    lo, hi = np.log(1e-6), np.log(1e9)
    for _ in range(200):
        mid = (lo + hi) / 2
        noisier = privacy.sigma_thm7(float(np.exp(mid)), delta, ours.m, b, ours.k) / ours.n > target
        lo, hi = (mid, hi) if noisier else (lo, mid)
    return float(np.exp(hi))


def records(name: str, s: DpRuns) -> dict:
    """A DP setting's records: {"central": the federation's training records, "local": a client's on average}."""
    counts = ex.federation(paper_config(name, "fedlog", **s.over)).train.counts
    return {"central": float(counts.sum()), "local": float(counts.float().mean())}


def largest_client(runs: dict) -> int:
    """The most training records any client of `runs`' federations holds (0 without runs)."""
    return int(max(ex.federation(paper_config(n, "fedlog", **s.over)).train.counts.max() for n, s in runs.items())) \
        if runs else 0


def paper_setting() -> dict:
    """The paper's DP setting (Sec. 4.5: CIFAR-10 in its Table 1 setting): mode -> its Release (the federation's
    records for central DP, a client's for local DP; the statistic's size m and the rounds k)."""
    cfg = paper_config("cifar10", "fedlog")
    n = CIFAR10_TRAIN_RECORDS * cfg.train_fraction
    return {"central": Release(n, statistic_size("cifar10"), cfg.rounds),
            "local": Release(n / cfg.n_clients, statistic_size("cifar10"), cfg.rounds)}


def matched(runs: dict, b: float, delta: float) -> dict:
    """mode -> dataset -> the epsilon of our runs whose noise per record is the paper's at its recovery epsilon
    (PAPER_RECOVERY; `matched_epsilon`), for the datasets of `runs` (dataset -> DpRuns)."""
    paper = paper_setting()
    return {mode: {n: matched_epsilon(e, paper[mode], Release(records(n, s)[mode], statistic_size(n), s.rounds),
                                      delta, b)
                   for n, s in runs.items()} for mode, e in PAPER_RECOVERY.items()}
