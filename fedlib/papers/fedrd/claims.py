"""FedRD's claims judged on the ladder (`fedrd.LADDER`: the paper's protocol on FashionMNIST at a reduced scale,
T = 10, 30, 100 and 300 matching steps). Each claim is a function of Results (one per seed on each side, or None
where the runs are not shipped) that records one ledger row per rung, decided by the paired one-sided t-test over
seeds, and one trend row: the slope of each seed's margin against log10 T, tested against 0 over seeds. Every row
names its rung; none says "paper" (the ledger's scale is "reduced"). Claims the ladder cannot judge are recorded
with the reason. Tested on made-up Results (tests/test_fedrd_claims.py)."""
from __future__ import annotations

import numpy as np

from .reported import QUOTES

PAPER = "FedRD"
SET = "fedrd_ladder"
AVERAGING = ("FedAvg", "FedProx", "FedNova")
NOT_JUDGED = {  # (where, claim) -> why the ladder cannot judge it (each row quotes the paper's words: NOT_JUDGED_QUOTES)
    ("Table I", "the absolute accuracies"): "the ladder's model, data and rounds are reduced, so its accuracies are "
                                            "not the paper's quantity",
    ("Table I", "the SVHN and CIFAR columns"): "SVHN and CIFAR cannot be had here",
    ("Table II", "the privacy and noise settings"): "Table II's DP settings are not run on the ladder",
    ("Table IV", "accuracy rises with the representation size"): "the ladder fixes the representation size",
    ("Fig. 4", "accuracy rises with the samples per class"): "the ladder fixes dpc at 10",
    ("Fig. 5", "a deeper projection is more accurate"): "the ladder fixes the projection's depth",
}
NOT_JUDGED_QUOTES = {"Table I": ("reproduction", "table1"), "Table II": ("claim", "table2"),
                     "Table IV": ("claim", "table4"), "Fig. 4": ("claim", "fig4_dpc"), "Fig. 5": ("claim", "fig5")}


def final(result) -> float:
    """The last round's accuracy, in percent (FedRD's protocol has no fine-tune)."""
    return 100 * result.last()


def after_round_one(result) -> float:
    return 100 * result.curve()[0]


def _each(results, f):
    return None if results is None else [f(r) for r in results]


def _best_averaging(baselines: dict | None, f) -> list | None:
    """Seed by seed, the best of the averaging baselines."""
    if not baselines or any(baselines.get(lab) is None for lab in AVERAGING):
        return None
    return [max(vals) for vals in zip(*(_each(baselines[lab], f) for lab in AVERAGING))]


def where(table: str, steps: int) -> str:
    return f"{table} (ladder, T = {steps})"


def dm_over_averaging(ledger, feddm, baselines, *, steps: int, rounds="") -> str:
    """Table I: FedDM is more accurate than the best of FedAvg, FedProx and FedNova (seed by seed)."""
    return ledger.compare(PAPER, where("Table I", steps), "FashionMNIST: FedDM is more accurate than the best of "
                          "FedAvg, FedProx and FedNova", _each(feddm, final), _best_averaging(baselines, final), ">",
                          rounds=rounds, kind="claim", quote=QUOTES["dd_over_averaging"], run_set=SET)


def rd_over_dm(ledger, fedrd, feddm, *, steps: int, rounds="") -> str:
    """Table I: FedRD is more accurate than FedDM at the same samples per class."""
    return ledger.compare(PAPER, where("Table I", steps), "FashionMNIST: FedRD is more accurate than FedDM (the same "
                          "samples per class)", _each(fedrd, final), _each(feddm, final), ">", rounds=rounds,
                          kind="claim", quote=QUOTES["best"], run_set=SET)


def real_over_random(ledger, real, random, *, method: str, steps: int, rounds="") -> str:
    """Table III: initialising the synthetic samples from real ones beats noise."""
    return ledger.compare(PAPER, where("Table III", steps), f"initialising from real samples beats noise ({method}, "
                          "FashionMNIST)", _each(real, final), _each(random, final), ">",
                          rounds=rounds, kind="claim", quote=QUOTES["table3"], run_set=SET)


def rd_ahead_after_round_one(ledger, fedrd, baselines, *, steps: int, rounds="") -> str:
    """Fig. 2: after one round FedRD is ahead of every model-averaging method."""
    return ledger.compare(PAPER, where("Fig. 2", steps), "after one round FedRD is ahead of every model-averaging "
                          "method (FashionMNIST)", _each(fedrd, after_round_one),
                          _best_averaging(baselines, after_round_one), ">", rounds=1, kind="claim",
                          quote=QUOTES["round_one"], run_set=SET)


def slopes(margins: dict[int, list[float] | None]) -> list[float] | None:
    """Each seed's least-squares slope of its margin against log10 T over the rungs (None unless every rung has
    every seed)."""
    if len(margins) < 2 or any(m is None for m in margins.values()):
        return None
    steps = sorted(margins)
    x = np.log10(steps)
    per_seed = np.array([margins[t] for t in steps]).T  # [seeds, rungs]
    return [float(np.polyfit(x, y, 1)[0]) for y in per_seed]


def trend(ledger, table: str, claim: str, margins: dict[int, list[float] | None]) -> str:
    """The margin of `claim` grows with the matching steps: the per-seed slope against log10 T, above 0 over seeds,
    over the rungs whose runs are all shipped (at least two; the row names them, and its note the rungs left out)."""
    complete = {t: m for t, m in margins.items() if m is not None}
    used = complete if len(complete) >= 2 else margins
    steps = sorted(used)
    fitted = slopes(used)
    verdict = ledger.compare(PAPER, f"{table} (ladder, T = {steps[0]}-{steps[-1]})", f"{claim}: the margin grows "
                             "with the matching steps (its slope per decade of T)", fitted,
                             None if fitted is None else 0.0, ">", kind="extension", run_set=SET)
    left_out = sorted(set(margins) - set(used))
    ledger.add_note(f"over the rungs shipped; not shipped yet: T = {', '.join(map(str, left_out))}" if left_out else "")
    return verdict


def margins(ours, theirs) -> list[float] | None:
    return None if ours is None or theirs is None else [a - b for a, b in zip(ours, theirs)]


def record_not_judged(ledger) -> None:
    for (place, claim), why in NOT_JUDGED.items():
        kind, quote = NOT_JUDGED_QUOTES[place]
        ledger.cannot_judge(PAPER, f"{place} (ladder)", claim, why, kind=kind, quote=QUOTES[quote], run_set=SET)


def record(ladder: dict, steps: tuple[int, ...], ledger, rounds: str = "") -> None:
    """Every ladder claim. `ladder`: (label, T, init) -> one Result per seed, or None where not shipped; the
    averaging baselines under (label, None, None); `rounds` what each row says of its rounds."""
    base = {lab: ladder.get((lab, None, None)) for lab in AVERAGING}
    dm_vs_avg, rd_vs_dm, ahead = {}, {}, {}
    real_vs_random = {"FedDM": {}, "FedRD": {}}
    for T in steps:
        dm, rd = ladder.get(("FedDM", T, "real")), ladder.get(("FedRD", T, "real"))
        dm_over_averaging(ledger, dm, base, steps=T, rounds=rounds)
        rd_over_dm(ledger, rd, dm, steps=T, rounds=rounds)
        for method in ("FedDM", "FedRD"):
            real, random = ladder.get((method, T, "real")), ladder.get((method, T, "random"))
            real_over_random(ledger, real, random, method=method, steps=T, rounds=rounds)
            real_vs_random[method][T] = margins(_each(real, final), _each(random, final))
        rd_ahead_after_round_one(ledger, rd, base, steps=T)
        dm_vs_avg[T] = margins(_each(dm, final), _best_averaging(base, final))
        rd_vs_dm[T] = margins(_each(rd, final), _each(dm, final))
        ahead[T] = margins(_each(rd, after_round_one), _best_averaging(base, after_round_one))
    trend(ledger, "Table I", "FedDM over the best averaging baseline", dm_vs_avg)
    trend(ledger, "Table I", "FedRD over FedDM", rd_vs_dm)
    for method, by_rung in real_vs_random.items():
        trend(ledger, "Table III", f"real over random initialisation ({method})", by_rung)
    trend(ledger, "Fig. 2", "FedRD over the best averaging method after round one", ahead)
    record_not_judged(ledger)


def record_ladder(ladder: dict, profile: str, settings: dict):
    """Notebook 07's ladder ledger (scale "reduced"): every ladder claim from `ladder` ((label, T, init) -> Results
    or None) at the rungs of `settings` (fedrd.LADDER), saved; returns it."""
    from ... import claims as rules

    ledger = rules.ClaimsLedger("07_fedrd_representation_distillation", profile, scale="reduced")
    record(ladder, settings["steps"], ledger,
           rounds=f"{settings['dd_rounds']} (averaging: {settings['baseline_rounds']})")
    ledger.save()
    return ledger
