"""Which regime decides Table 1's and Table A.1's claims on a dataset the paper has a column for: a stated rule over
the paper's own numbers (`choose`), tested on made-up evidence both ways (tests/test_fedlog_regime.py).

The appendix says "Training data are normalized and randomly cropped and flipped" and that "most hyperparameters
follow the experiment setting reported in LG-FedAvg", whose code crops and flips CIFAR only and only normalises
MNIST. Two lines of the paper's own numbers can tell which pipeline its MNIST column came from:

  placement  each entry's accuracy against the paper's by the reproduction rule (`rules.equivalence`): the regime in
             which more entries are reproduced;
  speed      each entry the paper shows reaching the threshold (its accuracy at or above it): the round at which the
             paper's bits to the threshold imply it got there (its bits over one round of our messages, both ways as
             the text counts them), against our mean round to the threshold in each regime; the regime nearer (in
             |log ratio|) for more entries.

The rule: a regime other than the text's (crop-and-flip) decides only when both lines point to it; otherwise the
text's regime decides. A line that ties points nowhere. A stand-in dataset (FashionMNIST for CIFAR-10) has no paper
numbers to read: it keeps the regime of the pipeline it stands in for (LG-FedAvg's CIFAR pipeline crops and flips).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .... import stats
from ....claims import rules as R

TEXT_REGIME = "augmented"  # appendix E's sentence
PLAIN_REGIME = "plain"  # no augmentation
REGIME_NAMES = {"augmented": "with crop-and-flip", "plain": "without augmentation"}
APPENDIX = "Training data are normalized and randomly cropped and flipped"


@dataclass(frozen=True)
class Entry:
    """One Table 1 entry's evidence: the paper's accuracy and bits, and per regime our best-round accuracies over
    seeds, our mean round to the threshold (a seed that never reaches it counts its best round) with how many seeds
    reached it, and one round's bits both ways and one way."""
    method: str
    paper_accuracy: float
    paper_se: float | None
    paper_bits: float
    accuracy: dict = field(default_factory=dict)  # regime -> [best-round accuracy %, per seed]
    rounds_to: dict = field(default_factory=dict)  # regime -> mean round (1-based) to the threshold
    reached: dict = field(default_factory=dict)  # regime -> (seeds reaching, seeds)
    round_bits: float = float("nan")  # one round's messages, uplink + downlink (the last round's, mean over seeds)
    round_up_bits: float = float("nan")  # the uplink alone

    def reproduced(self, regime: str) -> str:
        """The reproduction rule's verdict on this entry in `regime`."""
        return R.decide(self.accuracy[regime], [self.paper_accuracy, self.paper_se], R.equivalence()).verdict

    def implied_rounds(self, one_way: bool = False) -> float:
        """The round at which the paper's bits to the threshold imply this entry reached it."""
        per = self.round_up_bits if one_way else self.round_bits
        return self.paper_bits / per if per and per == per else float("nan")

    def reaches_in_paper(self, threshold: float) -> bool:
        return self.paper_accuracy >= 100 * threshold


@dataclass(frozen=True)
class Choice:
    """The regime that decides, what each line of evidence points to (None: it ties), and why, in words."""
    regime: str
    placement: str | None
    speed: str | None
    why: str


class Counts(NamedTuple):
    """A line of evidence's count of entries for each regime."""
    augmented: int
    plain: int

    def points(self) -> str | None:
        """The regime with more entries; None where they tie."""
        return None if self.augmented == self.plain else ("augmented" if self.augmented > self.plain else "plain")


def placement(entries: list[Entry]) -> tuple[str | None, Counts]:
    """The regime in which more entries are reproduced, and the counts."""
    counts = Counts(*(sum(e.reproduced(reg) == R.REPRODUCED for e in entries) for reg in Counts._fields))
    return counts.points(), counts


def speed(entries: list[Entry], threshold: float, one_way: bool = False) -> tuple[str | None, Counts]:
    """The regime whose mean round to the threshold is nearer, in |log ratio|, the round the paper's bits imply, for
    more of the entries the paper shows reaching the threshold; and the counts."""
    counts = dict.fromkeys(Counts._fields, 0)
    for e in entries:
        implied = e.implied_rounds(one_way)
        if not e.reaches_in_paper(threshold) or not implied > 0:
            continue
        off = {reg: abs(math.log(e.rounds_to[reg] / implied)) for reg in Counts._fields}
        nearer = min(off, key=off.get)
        if off[nearer] < max(off.values()):  # a tie points nowhere
            counts[nearer] += 1
    counts = Counts(**counts)
    return counts.points(), counts


def choose(entries: list[Entry], threshold: float) -> Choice:
    """The rule (module docstring): the text's regime decides unless placement and speed (both ways) both point to
    the other one."""
    where, placed = placement(entries)
    fast, timed = speed(entries, threshold)
    aug, plain = REGIME_NAMES.values()
    said = (f"placement: reproduced {placed.augmented} {aug}, {placed.plain} {plain}, and speed to "
            f"{100 * threshold:g}% (the round the paper's bits imply, both ways): nearer {aug} for {timed.augmented} "
            f"entries, {plain} for {timed.plain}")  # no "; " inside: a claims note's parts are split there
    if where is not None and where == fast and where != TEXT_REGIME:
        return Choice(where, where, fast, f"both lines of the paper's own numbers point {REGIME_NAMES[where]} "
                                          f"({said}), so that regime decides")
    return Choice(TEXT_REGIME, where, fast, f"the text's regime decides: the paper's numbers do not both point "
                                            f"elsewhere ({said})")


def stand_in_choice(dataset: str, column: str) -> Choice:
    """A stand-in's regime: the pipeline of the column it stands in for."""
    return Choice(TEXT_REGIME, None, None, f"{dataset} stands in for {column}, whose pipeline in the code the "
                                           f"appendix follows (LG-FedAvg) crops and flips, and the paper gives no "
                                           f"{dataset} numbers to weigh")


def entries_of(runs: dict, dataset: str, threshold: float, reported: dict, reported_se: dict) -> list[Entry]:
    """The evidence for every entry the paper reports on `dataset` whose runs are there in both regimes (`runs`:
    regime -> entry -> [Result])."""
    out = []
    for m, (acc, bits) in reported.items():
        if any(runs.get(reg, {}).get(m) is None for reg in REGIME_NAMES):
            continue
        accuracy, rounds_to, reached = {}, {}, {}
        for reg in REGIME_NAMES:
            rs = runs[reg][m]
            accuracy[reg] = [100 * r.best() for r in rs]
            hits = [stats.bits_to_threshold(r.curve(), r.curve("up_bits"), r.curve("down_bits"), threshold)
                    for r in rs]
            rounds_to[reg] = float(np.mean([h[1] + 1 for h in hits]))
            reached[reg] = (sum(h[2] for h in hits), len(hits))
        plain = runs[PLAIN_REGIME][m]  # a round's messages do not depend on augmentation
        up = float(np.mean([r.curve("up_bits")[-1] for r in plain]))
        down = float(np.mean([r.curve("down_bits")[-1] for r in plain]))
        out.append(Entry(m, acc, reported_se.get(m), bits, accuracy, rounds_to, reached, up + down, up))
    return out


def evidence_rows(entries: list[Entry], threshold: float) -> list[dict]:
    """notebook 02's evidence table: per entry the paper's value, ours in each regime with its reproduction verdict,
    and the rounds to the threshold the paper's bits imply (both ways, one way) beside ours in each regime."""
    rows = []
    for e in entries:
        row = {"method": e.method, "paper accuracy (%)": e.paper_accuracy}
        for reg, name in REGIME_NAMES.items():
            row[f"ours {name} (%)"] = float(np.mean(e.accuracy[reg]))
            row[f"reproduced {name}"] = e.reproduced(reg)
        if e.reaches_in_paper(threshold):
            row |= {"paper's rounds to threshold, both ways": e.implied_rounds(),
                    "paper's rounds, one way": e.implied_rounds(one_way=True)}
            for reg, name in REGIME_NAMES.items():
                k, n = e.reached[reg]
                row[f"our rounds {name}"] = e.rounds_to[reg]
                row[f"reached {name}"] = f"{k} of {n}"
        else:  # the paper's bits run to its best round, below the threshold: no speed to read
            row |= {"paper's rounds to threshold, both ways": "-", "paper's rounds, one way": "-"}
            for name in REGIME_NAMES.values():
                row[f"our rounds {name}"] = row[f"reached {name}"] = "-"
        rows.append(row)
    return rows


def deciding(runs: dict, datasets) -> dict:
    """dataset -> the Choice that decides its Table 1 (and Table A.1) claims, for every dataset of `datasets`: by the
    rule over the paper's own numbers where the paper has the dataset's column, the stood-in column's pipeline for a
    stand-in. `runs`: regime -> dataset -> entry -> [Result] (an entry whose runs are not all there is left out of
    the evidence)."""
    from ..plans import STAND_IN_FOR
    from ..reported import TABLE1, TABLE1_SE, THRESHOLD

    out = {}
    for d in datasets:
        if d in STAND_IN_FOR or d not in TABLE1:
            out[d] = stand_in_choice(d, STAND_IN_FOR.get(d, d))
            continue
        by_regime = {reg: runs.get(reg, {}).get(d, {}) for reg in REGIME_NAMES}
        out[d] = choose(entries_of(by_regime, d, THRESHOLD[d], TABLE1[d], TABLE1_SE.get(d, {})), THRESHOLD[d])
    return out
