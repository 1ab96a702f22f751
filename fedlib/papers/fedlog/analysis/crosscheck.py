"""The FedDBE cross-check's curves and rule (scripts/feddbe_crosscheck.py writes them, notebook 02 reads them):
our FedDBE against its authors' code on the same clients and seeds, judged by a paired equivalence test."""
from __future__ import annotations

import csv
import itertools
from pathlib import Path
from typing import NamedTuple

import numpy as np
from scipy import stats as st


def curves(path, model: str | None = None, metric: str = "acc_all") -> dict:
    """scripts/feddbe_crosscheck.py's CSV as curves: side ("fedlib", "authors") -> accuracy in % [seeds, evaluations]
    (empty if the file is missing). A CSV with a `model` column holds one set of curves per model: `model` picks
    one (None: the only one there, or the rows of a CSV without the column). `metric`: the column read (FedDBE's
    `acc_all`, the pooled test accuracy; scripts/fedcr_crosscheck.py's `acc_mean`, the mean per-client one)."""
    if not Path(path).exists():
        return {}
    sides: dict[str, dict[int, list[float]]] = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            if model is not None and row.get("model", model) != model:
                continue
            sides.setdefault(row["side"], {}).setdefault(int(row["seed"]), []).append(100 * float(row[metric]))
    return {side: np.array([c for _, c in sorted(by_seed.items())]) for side, by_seed in sides.items()}


def models(path) -> list:
    """The models a cross-check CSV holds curves of ([None] for a file without a `model` column, [] if missing)."""
    if not Path(path).exists():
        return []
    with open(path) as f:
        return sorted({row.get("model") for row in csv.DictReader(f)}, key=str)


EQUIVALENCE_POINTS = 1.0  # the cross-check's equivalence bound, in accuracy points
EQUIVALENCE_SEEDS = 5  # the fewest seeds on which the cross-check may pass


class Equivalence(NamedTuple):
    """The paired equivalence test of the cross-check at every evaluation (points of accuracy, fedlib minus the
    authors', per seed paired: the same seed gives both sides the same clients and initial weights)."""
    passes: bool  # every evaluation equivalent, over at least `EQUIVALENCE_SEEDS` seeds
    equivalent: np.ndarray  # [evaluations] bool: bound_lhs <= bound
    mean: np.ndarray  # [evaluations] mean paired difference
    se: np.ndarray  # [evaluations] its standard error
    lhs: np.ndarray  # [evaluations] |mean| + t(0.95, n-1) * SE: the edge of the 90% interval farthest from 0
    bound: float | np.ndarray  # points, one for all or one per evaluation
    seeds: int


def _edge(d: np.ndarray) -> np.ndarray:
    """|mean| + t(0.95, n-1) SE of per-seed differences d [seeds, evaluations], per evaluation."""
    n = len(d)
    if n < 2:
        return np.full(d.shape[1], np.inf)
    return np.abs(d.mean(0)) + st.t.ppf(0.95, n - 1) * d.std(0, ddof=1) / np.sqrt(n)


def noise_floor(curves: dict) -> np.ndarray | None:
    """The authors' code against itself on a second random stream ("authors_stream2": batch orders and dropout masks
    cannot be paired between two codes): |mean| + t SE of the per-seed differences at each evaluation, in points;
    None without that stream."""
    return _edge(curves["authors_stream2"] - curves["authors"]) if "authors_stream2" in curves else None


def versus_both_streams(curves: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """Ours against the mean of the authors' two streams, per evaluation: (mean paired difference, |mean| + t SE),
    in points; None without the second stream. A diagnostic beside the rule: averaging their two streams halves
    their stream noise's variance, so a gap shows sooner than against one stream."""
    if "authors_stream2" not in curves:
        return None
    d = _ours_minus_their_mean(curves)
    return d.mean(0), _edge(d)


def _ours_minus_their_mean(curves: dict) -> np.ndarray:
    return curves["fedlib"] - (curves["authors"] + curves["authors_stream2"]) / 2


def bound_at(curves: dict, floor: float = EQUIVALENCE_POINTS) -> np.ndarray:
    """The equivalence bound at each evaluation: `floor` points, or, where the curves hold the authors' noise floor
    (`noise_floor`), the larger of `floor` and it."""
    noise = noise_floor(curves)
    return np.full(curves["authors"].shape[1], floor) if noise is None else np.maximum(floor, noise)


def agreement(curves: dict, bound: float | np.ndarray = EQUIVALENCE_POINTS,
                         min_seeds: int = EQUIVALENCE_SEEDS) -> Equivalence:
    """The cross-check's rule, a paired equivalence test (two one-sided t-tests at 5%, TOST): at each evaluation
    the per-seed differences d (fedlib minus the authors', in points) must satisfy |mean d| + t(0.95, n-1) SE(d)
    <= `bound`, i.e. the 90% interval of the mean paired difference lies inside +-bound. The cross-check passes when
    every evaluation does, over at least `min_seeds` seeds (with fewer it cannot pass, whatever the curves)."""
    ours, theirs = curves["fedlib"], curves["authors"]
    if ours.shape != theirs.shape:
        raise ValueError(f"the cross-check pairs seed by seed and evaluation by evaluation: fedlib's curves are "
                         f"{ours.shape}, the authors' {theirs.shape}")
    n = len(ours)
    d = ours - theirs
    mean = d.mean(0)
    se = d.std(0, ddof=1) / np.sqrt(n) if n > 1 else np.full_like(mean, np.inf)
    lhs = _edge(d)
    ok = lhs <= bound
    return Equivalence(bool(ok.all()) and n >= min_seeds, ok, mean, se, lhs, bound, n)


class CurveGap(NamedTuple):
    """A systematic gap over the whole curve, judged with seeds as the independent unit (evaluations of one run are
    not independent): per seed, the mean over evaluations 1.. of a paired difference, in points."""
    per_seed: np.ndarray  # [seeds]
    mean: float
    edge: float  # |mean| + t(0.95, n-1) SE: the equivalence test's left side over the curve
    p_t: float  # two-sided one-sample t-test of per_seed against 0
    p_signed_rank: float  # two-sided exact Wilcoxon signed-rank test of per_seed against 0


def curve_gap(curves: dict, against: str = "both") -> CurveGap | None:
    """Ours minus the authors' (`against` "both": the mean of their two streams; "authors": their first stream) or
    their first stream minus their second (`against` "stream2", the reference: two draws of the same code), averaged
    over evaluations 1.. per seed (evaluation 0, before any training, is the same model on both sides). None where
    the curves lack a side it needs or hold fewer than 2 seeds."""
    need = {"both": ("fedlib", "authors", "authors_stream2"), "authors": ("fedlib", "authors"),
            "stream2": ("authors", "authors_stream2")}[against]
    if any(side not in curves for side in need) or len(curves[need[0]]) < 2:
        return None
    d = _ours_minus_their_mean(curves) if against == "both" else curves[need[0]] - curves[need[1]]
    per_seed = d[:, 1:].mean(1)
    edge = float(_edge(per_seed[:, None])[0])
    return CurveGap(per_seed, float(per_seed.mean()), edge, float(st.ttest_1samp(per_seed, 0).pvalue),
                    float(st.wilcoxon(per_seed, method="exact").pvalue))


class Replica(NamedTuple):
    """The rule with the authors' code in our place: `candidate` against `reference`, the bound from `partner`."""
    candidate: str
    reference: str
    partner: str
    passing: int  # evaluations within their bound
    evaluations: int


def replicas(curves: dict, floor: float = EQUIVALENCE_POINTS) -> list[Replica] | None:
    """How often the authors' own code passes the cross-check's rule: for every ordered choice of three of their
    streams ("authors", "authors_streamK"), one stands where fedlib stands, one is the reference, and the third gives
    the noise floor with the reference, exactly as `agreement(bound=bound_at(...))` judges fedlib. None with fewer
    than three streams. A code that behaves exactly like theirs passes as often as these do."""
    streams = [s for s in curves if s == "authors" or s.startswith("authors_stream")]
    if len(streams) < 3:
        return None
    out = []
    for cand, ref, partner in itertools.permutations(streams, 3):
        trio = {"fedlib": curves[cand], "authors": curves[ref], "authors_stream2": curves[partner]}
        eq = agreement(trio, bound=bound_at(trio, floor))
        out.append(Replica(cand, ref, partner, int(eq.equivalent.sum()), len(eq.equivalent)))
    return out


def record(ledger, paper_name: str, where: str, method: str, curves: dict, part: str,
           theirs: str = "its authors' code") -> list[str]:
    """A cross-check's claim in `ledger` (a `fedlib.claims.ClaimsLedger`): our `method` is equivalent to its authors'
    code at every evaluation (`agreement` with `bound_at`'s bound; ours: how many evaluations are not), with the
    authors' own replica spread as the noise floor: where three or more of their streams are there (`replicas`), it
    holds when ours fails no more evaluations than the most their own code fails by the same rule in our place (every
    choice of candidate, reference and floor partner among their streams); with fewer, no evaluation may fail. With
    fewer than the seeds the rule needs, the row says so. `part`: the notebook part the row names."""
    eq = agreement(curves, bound=bound_at(curves))
    claim = (f"our {method} is equivalent to {theirs} at every evaluation their own code passes in our place "
             "(paired TOST at 5%: |mean| + t SE within the larger of 1 point and their code's noise floor; ours: "
             "evaluations that are not; reference: the most their own replicas fail by the same rule)")
    if eq.seeds < EQUIVALENCE_SEEDS:
        return [ledger.cannot_judge(paper_name, where, claim, f"{eq.seeds} seeds, the rule needs {EQUIVALENCE_SEEDS}",
                                    kind="self-check", part=part)]
    from ....claims import comparison

    stand_ins = replicas(curves)
    failing = sorted(r.evaluations - r.passing for r in stand_ins) if stand_ins is not None else [0]
    out = [ledger.record(paper_name, where, claim, int((~eq.equivalent).sum()), int(failing[-1]), comparison("<="),
                         kind="self-check", seeds=eq.seeds, rounds=len(eq.equivalent) - 1, part=part)]
    ledger.rows[-1].note = (f"the authors' code in our place fails at {failing[0]} to {failing[-1]} of "
                            f"{stand_ins[0].evaluations} evaluations ({len(stand_ins)} assignments of "
                            f"{len(curves) - 1} streams)" if stand_ins is not None else
                            "fewer than three streams of the authors' code: no replica spread, so no evaluation may "
                            "fail")
    return out


def report(curves: dict, theirs: str, whose: str, first: int = 0) -> list[str]:
    """A cross-check script's printout: at each evaluation (numbered from `first`) ours minus `theirs` and |mean| + t SE
    against the bound, the rule's outcome, and `whose` code's replicas in our place (`replicas`, three or more
    streams)."""
    eq = agreement(curves, bound=bound_at(curves))
    lines = [f"evaluation {first + rnd:3d}: fedlib minus {theirs} {d:+.2f} points, |mean| + t SE {lhs:.2f}  "
             f"{'equivalent' if ok else 'DIFFER'}" for rnd, (ok, d, lhs) in enumerate(zip(eq.equivalent, eq.mean,
                                                                                           eq.lhs))]
    lines.append(f"{'passes' if eq.passes else 'fails'}: {int(eq.equivalent.sum())} of {len(eq.equivalent)} "
                 f"evaluations within their bound ({eq.seeds} seeds, {EQUIVALENCE_SEEDS} needed)")
    return lines + [f"{whose} {r.candidate} in our place, against {r.reference} (floor with {r.partner}): {r.passing} "
                    f"of {r.evaluations} evaluations within their bound" for r in replicas(curves) or []]


def verdict_line(curves: dict, label: str) -> str:
    """The rule's outcome in one line: passes or fails, how many evaluations are equivalent over how many seeds, and
    the worst evaluation (its mean difference and |mean| + t SE against its bound)."""
    eq = agreement(curves, bound=bound_at(curves))
    worst = int(np.argmax(eq.lhs - eq.bound))
    return (f"{label}: {'passes' if eq.passes else 'fails'}: {eq.equivalent.sum()} of {len(eq.equivalent)} "
            f"evaluations equivalent over {eq.seeds} seeds (paired, TOST at 5%; {EQUIVALENCE_SEEDS} seeds needed); "
            f"the worst at evaluation {worst}: mean difference {eq.mean[worst]:+.2f}, |mean| + t SE "
            f"{eq.lhs[worst]:.2f} against a bound of {np.broadcast_to(eq.bound, eq.lhs.shape)[worst]:.2f}")


def gap_lines(curves: dict) -> list[str]:
    """`curve_gap` in words, ours against the mean of their first two streams and their first stream against their
    second (the reference), where the curves hold what each needs."""
    out = []
    for against, who in (("both", "ours minus the mean of their first two streams"),
                         ("stream2", "their first stream minus their second (the reference)")):
        gap = curve_gap(curves, against)
        if gap is not None:
            out.append(f"  over the whole curve, seeds as the unit ({who}, mean of evaluations 1-"
                       f"{curves['authors'].shape[1] - 1} per seed): {gap.mean:+.2f} points, |mean| + t SE "
                       f"{gap.edge:.2f}, paired t p = {gap.p_t:.2f}, signed-rank p = {gap.p_signed_rank:.2f} "
                       f"({len(gap.per_seed)} seeds)")
    return out
