"""Summary statistics of the paper's tables: mean +- standard error, one-tailed Wilcoxon signed-rank
tests against a reference method with the paper's markers, and communication to reach a threshold."""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import stats as sps


def mean_se(values) -> tuple[float, float]:
    """The mean and its standard error (ddof 1). One value has no standard error: NaN, which tables show as "-"
    (0 would read as a spread measured to be nil)."""
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else float("nan")


def has_spread(se) -> bool:
    """Whether a standard error is one to show: not None, not NaN (one seed), not exactly 0 (equal seeds)."""
    return bool(se) and se == se


def format_mean_se(mean: float, se: float, digits: int = 2) -> str:
    """"mean±se", or the mean alone where there is no spread to show (`has_spread`)."""
    return f"{mean:.{digits}f}" + (f"±{se:.{digits}f}" if has_spread(se) else "")


class SignedRank(NamedTuple):
    """A one-tailed Wilcoxon signed-rank test: W+ (the sum of the ranks of the positive differences), its exact p,
    the differences it used and the zero differences it dropped."""
    w_plus: float
    p: float
    n: int
    zeros: int


def wilcoxon_signed_rank(values, reference, alternative: str = "greater") -> SignedRank:
    """The paired one-tailed Wilcoxon signed-rank test of `values` against `reference` (one number per seed on each
    side), with the exact distribution: every one of the 2^n sign patterns of the ranked |differences| counted (ties
    take their average rank, so the exact count is over half-ranks). Zero differences (equal numbers, e.g. equal bits)
    are dropped and counted in `zeros`. "greater": p of W+ at least the observed; "less": at most. With n
    differences the smallest p is 1/2^n (5 seeds: 1/32, so p < 0.01 needs at least 7)."""
    if alternative not in ("greater", "less"):
        raise ValueError(f"alternative must be greater or less, got {alternative!r}")
    a, b = np.asarray(values, float), np.asarray(reference, float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired test needs one number per seed on both sides, got {a.shape} and {b.shape}")
    d = a - b
    zeros = int((d == 0).sum())
    d = d[d != 0]
    n = len(d)
    if n == 0:
        return SignedRank(0.0, 1.0, 0, zeros)
    twice = np.rint(2 * sps.rankdata(np.abs(d))).astype(int)  # doubled average ranks: integers
    w2 = int(twice[d > 0].sum())
    counts = np.zeros(int(twice.sum()) + 1, dtype=object)  # exact counts of each doubled W+ over sign patterns
    counts[0] = 1
    for r in twice:
        shifted = np.zeros_like(counts)
        shifted[r:] = counts[:len(counts) - r]
        counts = counts + shifted
    tail = counts[w2:].sum() if alternative == "greater" else counts[:w2 + 1].sum()
    return SignedRank(w2 / 2, float(tail) / 2 ** n, n, zeros)


def wilcoxon_marker(values, reference) -> tuple[str, float, float]:
    """Paired one-tailed Wilcoxon signed-rank tests of `values` against `reference` (same seeds), exact
    (`wilcoxon_signed_rank`). Returns (marker, p_greater, p_less): "⇑"/"⇓" for p < 0.01, "↑"/"↓" for p < 0.05, ""
    otherwise."""
    a, b = np.asarray(values, float), np.asarray(reference, float)
    if len(a) != len(b):
        raise ValueError("paired test needs the same seeds for both methods")
    if len(a) < 2 or np.allclose(a, b):
        return "", 1.0, 1.0
    p_greater = wilcoxon_signed_rank(a, b, "greater").p
    p_less = wilcoxon_signed_rank(a, b, "less").p
    for p, strong, weak in ((p_greater, "⇑", "↑"), (p_less, "⇓", "↓")):
        if p < 0.01:
            return strong, p_greater, p_less
        if p < 0.05:
            return weak, p_greater, p_less
    return "", p_greater, p_less


def bits_to_threshold(acc, up_bits, down_bits, threshold: float) -> tuple[float, int, bool]:
    """Total bits (uplink + downlink, all clients) until the accuracy first reaches `threshold`; if it never
    does, until the round with the highest accuracy (a communication table's reading). Returns (bits, round index,
    reached)."""
    acc = np.asarray(acc, float)
    per_round = np.asarray(up_bits, float) + np.asarray(down_bits, float)
    hit = np.nonzero(acc >= threshold)[0]
    reached = len(hit) > 0
    r = int(hit[0]) if reached else int(np.argmax(acc))
    return float(per_round[: r + 1].sum()), r, reached


def common_threshold(results: dict[str, list[dict]]) -> float:
    """Section 4.2's rule for a threshold: the largest integer accuracy (as a fraction) that every compared method
    reaches in every seed; results[label] = one run result per seed."""
    lowest_best = min(max(r["rounds"]["acc_mean"]) for runs in results.values() for r in runs)
    return math.floor(100 * lowest_best + 1e-9) / 100


def first_round_reaching(acc, target: float) -> int | None:
    """The first round (1-based) whose accuracy is >= target, or None if none is."""
    hits = [i for i, a in enumerate(acc) if a >= target]
    return hits[0] + 1 if hits else None


def recovers_from(eps: list[float], accuracy: list[float], reference: float, tol: float = 0.01) -> float | None:
    """The smallest epsilon from which every larger epsilon reaches `reference - tol` (a privacy figure's "grows
    back to optimum when epsilon >= x"); None if the largest epsilon does not."""
    order = np.argsort(eps)
    ok = np.asarray(accuracy, float)[order] >= reference - tol
    if not ok[-1]:
        return None
    first = len(ok) - int(np.argmin(ok[::-1])) if not ok.all() else 0
    return float(np.asarray(eps, float)[order][first])


def format_bits(bits: float) -> str:
    """The paper's units: Mb and Gb are megabits and gigabits."""
    return f"{bits / 1e9:.2f}Gb" if bits >= 1e9 else f"{bits / 1e6:.2f}Mb"


def henze_zirkler(x, alpha: float = 0.05) -> tuple[float, float, bool]:
    """Henze & Zirkler (1990) test of multivariate normality. x [n, d]. Returns (HZ statistic, p-value,
    normal at level alpha). The statistic compares the empirical characteristic function of the samples,
    standardised with their covariance (divided by n), with the normal one under a Gaussian weight of
    width beta; under normality it is close to log-normal with the moments below."""
    x = np.asarray(x, dtype=float)
    n, d = x.shape
    centred = x - x.mean(0)
    cov = centred.T @ centred / n
    inv = np.linalg.pinv(cov)
    beta = ((n * (2 * d + 1)) / 4) ** (1 / (d + 4)) / np.sqrt(2)
    b2 = beta ** 2
    mahal = np.einsum("ij,jk,ik->i", centred, inv, centred)  # D_i
    gram = centred @ inv @ centred.T
    pair = mahal[:, None] + mahal[None, :] - 2 * gram  # D_ij
    hz = (np.exp(-b2 / 2 * pair).sum() / n
          - 2 * (1 + b2) ** (-d / 2) * np.exp(-b2 / (2 * (1 + b2)) * mahal).sum()
          + n * (1 + 2 * b2) ** (-d / 2))
    if np.linalg.matrix_rank(cov) < d:
        hz = 4.0 * n  # a singular covariance: the samples lie in a subspace, certainly not normal
    a = 1 + 2 * b2
    w = (1 + b2) * (1 + 3 * b2)
    mu = 1 - a ** (-d / 2) * (1 + d * b2 / a + d * (d + 2) * b2 ** 2 / (2 * a ** 2))
    var = (2 * (1 + 4 * b2) ** (-d / 2)
           + 2 * a ** (-d) * (1 + 2 * d * b2 ** 2 / a ** 2 + 3 * d * (d + 2) * b2 ** 4 / (4 * a ** 4))
           - 4 * w ** (-d / 2) * (1 + 3 * d * b2 ** 2 / (2 * w) + d * (d + 2) * b2 ** 4 / (2 * w ** 2)))
    log_mu = np.log(np.sqrt(mu ** 4 / (var + mu ** 2)))
    log_sigma = np.sqrt(np.log((var + mu ** 2) / mu ** 2))
    p = float(sps.lognorm.sf(hz, log_sigma, scale=np.exp(log_mu)))
    return float(hz), p, p > alpha


class Agreement(NamedTuple):
    """Two rankings compared (`rank_agreement`)."""
    tau: float
    p: float
    methods: int
    discordant: list
    contradicted: list


def rank_agreement(ours: dict[str, float], reference: dict[str, float], reference_se: dict[str, float] | None = None,
                   z: float = 2.0) -> Agreement:
    """How far the ranking by `ours` (method -> score) is from the ranking by `reference`, over the methods both
    have. Returns Kendall's tau (and its p-value), the discordant pairs (ordered one way here, the other way in the
    reference), and those of them that the reference separates by more than `z` standard errors of the
    difference (`contradicted`): a discordant pair within that is a tie of the reference, not a wrong ranking.
    Without `reference_se` every discordant pair counts as contradicted."""
    names = [m for m in ours if m in reference]
    a, b = np.array([ours[m] for m in names], float), np.array([reference[m] for m in names], float)
    tau, p = sps.kendalltau(a, b)
    discordant, contradicted = [], []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            if (a[i] - a[j]) * (b[i] - b[j]) < 0:
                pair = (names[i], names[j]) if b[i] > b[j] else (names[j], names[i])  # reference's better first
                discordant.append(pair)
                se = np.hypot(reference_se[names[i]], reference_se[names[j]]) if reference_se else 0.0
                if abs(b[i] - b[j]) > z * se:
                    contradicted.append(pair)
    return Agreement(float(tau), float(p), len(names), discordant, contradicted)


TABLE_UNITS = {"accuracy_mean": "%", "accuracy_se": "%", "final_accuracy_mean": "%", "final_accuracy_se": "%",
               "bits_to_threshold": "bits", "bits_se": "bits", "uplink_bits_to_threshold": "bits"}  # table_rows'


class TableRow(NamedTuple):
    """One entry of a table of runs' accuracy and communication (`table_rows`): accuracies in %, bits both ways and one way, Wilcoxon markers
    against the reference entry, and how many seeds reached the threshold ("k/n"). Saved as a row by `_asdict()`."""
    method: str
    accuracy_mean: float
    accuracy_se: float
    final_accuracy_mean: float
    final_accuracy_se: float
    accuracy_marker: str
    bits_to_threshold: float
    bits_se: float
    uplink_bits_to_threshold: float
    bits_marker: str
    reached: str


def table_rows(results: dict[str, list[dict]], threshold: float, reference: str) -> list[TableRow]:
    """A table of accuracy and communication from cached runs: results[label] = one run result per seed (same seeds
    for every label). Accuracy is the mean client accuracy of the best round ("we stop counting at the round with
    the highest accuracy", as a paper reads it); the final round's is reported beside it, since the ranking can
    depend on the choice. Bits are counted to the threshold (or the best round), both directions, and the uplink
    alone beside them; markers are one-tailed Wilcoxon tests against `reference`, paired by seed."""
    acc = {k: [100 * max(r["rounds"]["acc_mean"]) for r in v] for k, v in results.items()}
    final = {k: [100 * r["rounds"]["acc_mean"][-1] for r in v] for k, v in results.items()}
    bits = {k: [bits_to_threshold(r["rounds"]["acc_mean"], r["rounds"]["up_bits"], r["rounds"]["down_bits"],
                                  threshold)[0] for r in v] for k, v in results.items()}
    reached = {k: [bits_to_threshold(r["rounds"]["acc_mean"], r["rounds"]["up_bits"], r["rounds"]["down_bits"],
                                     threshold)[2] for r in v] for k, v in results.items()}
    uplink = {k: [bits_to_threshold(r["rounds"]["acc_mean"], r["rounds"]["up_bits"], [0] * len(r["rounds"]["up_bits"]),
                                    threshold)[0] for r in v] for k, v in results.items()}
    rows = []
    for label in results:
        (am, ase), (bm, bse) = mean_se(acc[label]), mean_se(bits[label])
        ref_a, ref_b = acc.get(reference), bits.get(reference)
        fm, fse = mean_se(final[label])
        rows.append(TableRow(label, am, ase, fm, fse,
                             wilcoxon_marker(acc[label], ref_a)[0] if ref_a and label != reference else "",
                             bm, bse, mean_se(uplink[label])[0],
                             wilcoxon_marker(bits[label], ref_b)[0] if ref_b and label != reference else "",
                             f"{sum(reached[label])}/{len(reached[label])}"))
    return rows


def silhouette(points, labels) -> float:
    """The mean silhouette coefficient of points [n, d] grouped by labels (Euclidean): per point (b - a) / max(a, b),
    a its mean distance to the rest of its class, b the smallest mean distance to another class; a point alone in
    its class scores 0. In [-1, 1]; higher = classes more separated. Needs at least two classes."""
    x, y = np.asarray(points, dtype=float), np.asarray(labels)
    classes = np.unique(y)
    if len(classes) < 2:
        raise ValueError(f"a silhouette needs at least two classes, got {len(classes)}")
    dist = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))
    member = y[None, :] == classes[:, None]  # [classes, n]
    sums = dist @ member.T  # [n, classes]: summed distance to each class
    sizes = member.sum(1)
    own = np.searchsorted(classes, y)
    own_size = sizes[own]
    a = sums[np.arange(len(y)), own] / np.maximum(own_size - 1, 1)
    other = np.where(member.T, np.inf, sums / sizes)  # mean distances to the other classes
    b = other.min(1)
    s = np.where(own_size > 1, (b - a) / np.maximum(np.maximum(a, b), 1e-300), 0.0)
    return float(s.mean())
