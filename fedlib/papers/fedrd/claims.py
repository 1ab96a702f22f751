"""FedRD's claims, as functions of Results: notebook 07's parts A-F and H at the notebook's scale (`record_parts`;
tested on made-up numbers), and below first, those judged on the ladder (part G, `fedrd.LADDER`: the paper's
protocol on FashionMNIST at a reduced scale, T = 10, 30, 100 and 300 matching steps). Each claim is a function of Results (one per seed on each side, or None
where the runs are not shipped) that records one ledger row per rung, decided by the paired one-sided t-test over
seeds, and one trend row: the slope of each seed's margin against log10 T, tested against 0 over seeds. Every row
names its rung; none says "paper" (the ledger's scale is "reduced"). Claims the ladder cannot judge are recorded
with the reason. Tested on made-up Results (tests/test_fedrd_claims.py). The notebook's one call is `record(reads)`:
both ledgers from its reads."""
from __future__ import annotations

import numpy as np

from ... import claims as rules
from . import analysis
from .analysis import after_round_one, final
from . import reported
from .plans import (DEPTHS, DPC, INIT, LADDER_PART, NOTEBOOK, REAL, SIDES, TABLE1, TOY, TOY_PART, Toy, by_label,
                    initialisations, swept)
from .reported import QUOTES, TABLE3, TABLE4

PAPER = "FedRD"
SET = LADDER_PART.name
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
                          rounds=rounds, kind="claim", quote=QUOTES["dd_over_averaging"], part=SET)


def rd_over_dm(ledger, fedrd, feddm, *, steps: int, rounds="") -> str:
    """Table I: FedRD is more accurate than FedDM at the same samples per class."""
    return ledger.compare(PAPER, where("Table I", steps), "FashionMNIST: FedRD is more accurate than FedDM (the same "
                          "samples per class)", _each(fedrd, final), _each(feddm, final), ">", rounds=rounds,
                          kind="claim", quote=QUOTES["best"], part=SET)


def real_over_random(ledger, real, random, *, method: str, steps: int, rounds="") -> str:
    """Table III: initialising the synthetic samples from real ones beats noise."""
    return ledger.compare(PAPER, where("Table III", steps), f"initialising from real samples beats noise ({method}, "
                          "FashionMNIST)", _each(real, final), _each(random, final), ">",
                          rounds=rounds, kind="claim", quote=QUOTES["table3"], part=SET)


def rd_ahead_after_round_one(ledger, fedrd, baselines, *, steps: int, rounds="") -> str:
    """Fig. 2: after one round FedRD is ahead of every model-averaging method."""
    return ledger.compare(PAPER, where("Fig. 2", steps), "after one round FedRD is ahead of every model-averaging "
                          "method (FashionMNIST)", _each(fedrd, after_round_one),
                          _best_averaging(baselines, after_round_one), ">", rounds=1, kind="claim",
                          quote=QUOTES["round_one"], part=SET)


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
                             None if fitted is None else 0.0, ">", kind="extension", part=SET)
    left_out = sorted(set(margins) - set(used))
    ledger.add_note(f"over the rungs shipped; not shipped yet: T = {', '.join(map(str, left_out))}" if left_out else "")
    return verdict


def margins(ours, theirs) -> list[float] | None:
    return None if ours is None or theirs is None else [a - b for a, b in zip(ours, theirs)]


def record_not_judged(ledger) -> None:
    for (place, claim), why in NOT_JUDGED.items():
        kind, quote = NOT_JUDGED_QUOTES[place]
        ledger.cannot_judge(PAPER, f"{place} (ladder)", claim, why, kind=kind, quote=QUOTES[quote], part=SET)


def ladder_claims(ladder: dict, steps: tuple[int, ...], ledger, rounds: str = "") -> None:
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


def record_ladder(ladder, profile: str):
    """Notebook 07's ladder ledger (scale "reduced"): every ladder claim from the ladder's reading (part G; its rungs
    and rounds from its settings, fedrd.LADDER), saved; returns it."""
    ledger = rules.ClaimsLedger(NOTEBOOK, profile, scale="reduced")
    ladder_claims(ladder.each(), ladder.settings.steps, ledger, rounds=ladder.settings.rounds)
    ledger.save()
    return ledger


# ------------------------------------------------------------------------- notebook 07's parts A-F and H (its scale)
AVERAGING_ROWS = ("FedAvg", "FedProx", "FedNova")


def _seedwise(runs: dict | None, label: str, f=final) -> list[float] | None:
    return None if runs is None else [f(r) for r in runs[label]]


def _best_of_averaging(runs: dict | None, f=final) -> list[float] | None:
    return None if runs is None else [max(v) for v in zip(*(_seedwise(runs, lab, f) for lab in AVERAGING_ROWS))]


def table1_claims(ledger, runs: dict | None, profile, paper_numbers: dict) -> None:
    """Table I on FashionMNIST: FedRD beats FedDM, and FedDM the best averaging method, seed by seed; Fig. 2: after
    one round FedRD is ahead of every averaging method, and (beyond 5 rounds) it converges within about 5. `runs`:
    label -> Results on FashionMNIST, None when not all there (every row then says "not run")."""
    paper = {lab: mean_std[0] for lab, mean_std in paper_numbers[REAL].items()}
    of = lambda lab, f=final: _seedwise(runs, lab, f)  # noqa: E731
    ledger.compare("FedRD", "Table I", "FashionMNIST: FedRD is more accurate than FedDM", of("FedRD"), of("FedDM"), ">",
                   paper_value=round(paper["FedRD"] - paper["FedDM"], 2), rounds=profile.rounds, kind="claim",
                   quote=QUOTES["best"], part=TABLE1.name)
    ledger.compare("FedRD", "Table I", "FashionMNIST: FedDM is more accurate than the best of FedAvg, FedProx and "
                   "FedNova", of("FedDM"), _best_of_averaging(runs), ">",
                   paper_value=round(paper["FedDM"] - max(paper[lab] for lab in AVERAGING_ROWS), 2),
                   rounds=profile.rounds, kind="claim", quote=QUOTES["dd_over_averaging"], part=TABLE1.name)
    if runs is not None:
        tail = {lab: 100 * np.mean([r.curve() for r in runs[lab]], 0)[-3:] for lab in ("FedDM", "FedRD")}
        print("how firm: the mean accuracy over the last 3 rounds", {lab: v.round(2).tolist() for lab, v in tail.items()})
    ledger.compare("FedRD", "Fig. 2", "after one round FedRD is ahead of every model-averaging method (FashionMNIST; "
                   "the paper: CIFAR-10, 65% against < 30%)", of("FedRD", after_round_one),
                   _best_of_averaging(runs, after_round_one), ">", rounds=1, kind="claim", quote=QUOTES["round_one"],
                   part=TABLE1.name)
    if profile.rounds > 5:
        curve = np.mean([r.curve() for r in runs["FedRD"]], 0) * 100 if runs is not None else None
        ledger.record("FedRD", "Fig. 2", "FedRD has converged within about 5 rounds (ours: its best later round minus "
                      "round 5, FashionMNIST, in points; no tolerance of the paper's, so no verdict)",
                      float(curve[5:].max() - curve[4]) if curve is not None else None, None, rules.statement(),
                      kind="claim", quote=QUOTES["five_rounds"], seeds=len(profile.seeds), rounds=profile.rounds,
                      part=TABLE1.name)


def table3_claims(ledger, sides: dict, profile) -> None:
    """Table III: initialising from real samples beats noise, for FedDM and FedRD, seed by seed. `sides`: (label,
    init) -> the swept Results on FashionMNIST, None where any seed is not there; empty where the part is cut."""
    for lab in ("FedDM", "FedRD"):
        if (lab, "real") not in sides:
            continue
        real, random = (None if sides[(lab, init)] is None else [final(r) for r in sides[(lab, init)]]
                        for init in ("real", "random"))
        real, random = (None, None) if real is None or random is None else (real, random)
        ledger.compare("FedRD", "Table III", f"initialising from real samples beats noise ({lab}, FashionMNIST)",
                       real, random, ">", paper_value=round(TABLE3[f"{lab}(real)"][0] - TABLE3[f"{lab}(random)"][0], 2),
                       rounds=profile.swept, kind="claim", quote=QUOTES["table3"], part=INIT.name)


RISES = "accuracy rises with the samples per class (dpc {} -> {}, FedDM and FedRD, FashionMNIST)"
EQUAL_UPLINK = ("at equal uplink FedRD beats FedDM (FashionMNIST: the same dpc at d' = 784, and three times the dpc at "
                "d' = 256)")
SIZE = ("accuracy rises with the representation size (FashionMNIST, d' = {} -> {}; the paper: CIFAR-10, 64 -> 2304, "
        "+28.4 points)")
DEPTH = "a deeper projection is more accurate (FashionMNIST, depth {} -> {})"
UNDECLARED = ("not run: no run set declares this part's paper-size runs (scripts/paper_runs.py); each is a paper-size "
              "FedRD or FedDM run, as costly as fedrd_table1's (Table I's rows give its measured cost)")


def dpc_claims(ledger, points: dict, profile, planned: list) -> None:
    """Fig. 4: accuracy rises with the samples per class; at equal uplink FedRD beats FedDM (the same dpc at
    d' = 784, three times the dpc at d' = 256). `planned`: part D's keys; planned but not there: both rows
    "not run"."""
    at = dict(seeds=len(profile.seeds), rounds=profile.swept)
    if not points and planned:
        dm = [k for lab, k in planned if lab == "FedDM"]
        for claim in (RISES.format(min(dm), max(dm)), EQUAL_UPLINK):
            ledger.record("FedRD", "Fig. 4", claim, None, 0.0, rules.comparison(">"), kind="claim",
                          quote=QUOTES["fig4_dpc" if claim != EQUAL_UPLINK else "fig4_uplink"], part=DPC.name,
                          **at)
            ledger.rows[-1].note = UNDECLARED
        return
    dm = {k: v[0][0] for (lab, k), v in points.items() if lab == "FedDM"}
    rd = {k: v[0][0] for (lab, k), v in points.items() if lab == "FedRD"}
    if len(dm) > 1 and len(rd) > 1:
        rises = [dm[max(dm)] - dm[min(dm)], rd[max(rd)] - rd[min(rd)]]
        print(f"(4a) the largest dpc minus the smallest: FedDM {rises[0]:+.2f}, FedRD {rises[1]:+.2f}")
        ledger.record("FedRD", "Fig. 4", RISES.format(min(dm), max(dm)), rises, 0.0, rules.comparison(">"),
                      kind="claim", quote=QUOTES["fig4_dpc"], part=DPC.name, **at)
    same = [rd[k] - dm[k] for k in sorted(set(dm) & set(rd))]
    small = {k: v[0][0] for (lab, k), v in points.items() if lab == "FedRD d'=256"}
    equal = [small[3 * k] - dm[k] for k in sorted(dm) if 3 * k in small]
    if same + equal:
        print(f"(4b) FedRD minus FedDM at the same dpc and uplink: {[round(x, 2) for x in same]}; FedRD (d' = 256, "
              f"3x dpc) minus FedDM at about equal uplink: {[round(x, 2) for x in equal]}")
        ledger.record("FedRD", "Fig. 4", EQUAL_UPLINK, same + equal, 0.0, rules.comparison(">"), kind="claim",
                      quote=QUOTES["fig4_uplink"], part=DPC.name, **at)


def size_and_depth_claims(ledger, dims: list[dict], depth_acc: dict, profile) -> None:
    """Table IV: accuracy rises with the representation size; Fig. 5: a deeper projection is more accurate. A part
    planned (`profile.sides`, `profile.depths`) whose runs are not there: its row says "not run"."""
    at = dict(seeds=len(profile.seeds), rounds=profile.swept)
    paper_gain = round(TABLE4["accuracy"][-1] - TABLE4["accuracy"][0], 2)
    sides = (*profile.sides, 28)
    if dims:
        by_side = {r["sqrt_d"]: r["final_mean"] for r in dims}
        ledger.record("FedRD", "Table IV", SIZE.format(min(by_side) ** 2, max(by_side) ** 2),
                      by_side[max(by_side)] - by_side[min(by_side)], 0.0, rules.comparison(">"), kind="claim",
                      quote=QUOTES["table4"], paper_value=paper_gain, part=SIDES.name, **at)
    elif profile.sides:
        ledger.record("FedRD", "Table IV", SIZE.format(min(sides) ** 2, max(sides) ** 2), None, 0.0,
                      rules.comparison(">"), kind="claim", quote=QUOTES["table4"], paper_value=paper_gain, part=SIDES.name, **at)
        ledger.rows[-1].note = UNDECLARED
    depths = (*profile.depths, 2)
    if depth_acc:
        gain = depth_acc[max(depth_acc)][0] - depth_acc[min(depth_acc)][0]
        ledger.record("FedRD", "Fig. 5", DEPTH.format(min(depth_acc), max(depth_acc)), gain, 0.0, rules.comparison(">"),
                      kind="claim", quote=QUOTES["fig5"], part=DEPTHS.name, **at)
    elif profile.depths:
        ledger.record("FedRD", "Fig. 5", DEPTH.format(min(depths), max(depths)), None, 0.0,
                      rules.comparison(">"), kind="claim", quote=QUOTES["fig5"], part=DEPTHS.name, **at)
        ledger.rows[-1].note = UNDECLARED


def fednova_unbiased(ledger, gap: dict, settings: Toy = TOY) -> str:
    """FedNova's Sec. 4 toy: its distance to the minimiser is below lr x max tau, FedAvg's above it."""
    bound = settings.lr * max(settings.taus)
    return ledger.record("FedNova", "Sec. 4 (toy)", "with unequal local steps FedAvg's fixed point is biased and "
                         "FedNova's is not, to first order in lr (FedNova's distance to the minimiser is below lr x max "
                         "tau and FedAvg's is above it)", [bound - gap["FedNova"], gap["FedAvg"] - bound], 0.0,
                         rules.comparison(">"), kind="self-check", seeds=1, rounds=settings.rounds,
                         part=TOY_PART.name)


def record_parts(reads):
    """Notebook 07's claims of parts A-F and H at its profile, from its reads (parts A, C-F) and what analysis makes
    of them (`dpc_points`, `size_rows`, `depth_accuracy`, FedNova's `toy_gaps`), saved. Returns the ledger."""
    table1, init, dpcs = reads[TABLE1], reads[INIT], reads[DPC]
    ledger = rules.ClaimsLedger(NOTEBOOK, reads.profile)
    settings = table1.settings
    table1_claims(ledger, by_label(table1, REAL), settings, reported.TABLE1)
    sides = {(lab, side): None if rs is None else swept(rs, settings)
             for (d, lab, side), rs in initialisations(init, table1).items() if d == REAL}
    table3_claims(ledger, sides, settings)
    dpc_claims(ledger, analysis.dpc_points(dpcs), settings, dpcs.keys())
    size_and_depth_claims(ledger, analysis.size_rows(reads[SIDES]), analysis.depth_accuracy(reads[DEPTHS]), settings)
    fednova_unbiased(ledger, analysis.toy_gaps(TOY)[2])
    ledger.save()
    return ledger


def record(reads):
    """Every claim of notebook 07 from its reads (`fedlib.papers.read_notebook`): the ladder's (part G, scale
    "reduced", its own ledger) and parts A-F and H's at the notebook's profile, each ledger saved. Returns the
    second."""
    record_ladder(reads[LADDER_PART], reads.profile)
    return record_parts(reads)
