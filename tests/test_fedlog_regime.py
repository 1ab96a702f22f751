"""The rule that picks the regime deciding FedLog's Table 1 (`fedlog.analysis.regime.choose`), on made-up evidence:
it must follow the evidence both ways, and keep the text's regime when the evidence splits."""
from __future__ import annotations

import numpy as np

from fedlib.claims import rules as R
from fedlib.papers.fedlog.analysis import regime


class _Run:
    """A made-up run: its accuracy curve (fractions) and one round's bits each way."""

    def __init__(self, acc, up=1e6, down=1e6):
        self._c = {"acc_mean": np.asarray(acc, float), "up_bits": np.full(len(acc), up),
                   "down_bits": np.full(len(acc), down)}

    def curve(self, metric="acc_mean"):
        return self._c[metric]

    def best(self):
        return float(self._c["acc_mean"].max())


def _curve(reach_at: int, top: float, rounds: int = 20) -> list[float]:
    """Accuracy rising to 0.97 at round `reach_at` (1-based), then to `top`."""
    return [0.5 + 0.47 * (i + 1) / reach_at if i + 1 < reach_at else
            min(top, 0.97 + (top - 0.97) * (i + 2 - reach_at) / 3) for i in range(rounds)]


def _runs(top_aug: float, top_plain: float, reach_aug: int, reach_plain: int, seeds: int = 5) -> dict:
    jitter = [0.0005 * (s - seeds // 2) for s in range(seeds)]
    return {"augmented": [_Run(_curve(reach_aug, top_aug + j)) for j in jitter],
            "plain": [_Run(_curve(reach_plain, top_plain + j)) for j in jitter]}


PAPER = {"A": (98.2, 2e6 * 3), "B": (98.0, 2e6 * 3), "C": (97.9, 2e6 * 3)}  # each implies round 3, both ways
SE = {"A": 0.05, "B": 0.05, "C": 0.05}


def _evidence(where: str):
    """Entries that match the paper in `where` (its accuracy, and 97% at round 3) and not in the other regime."""
    other = "plain" if where == "augmented" else "augmented"
    by_regime = {"augmented": {}, "plain": {}}
    for m, (acc, _) in PAPER.items():
        tops = {where: acc / 100, other: acc / 100 + 0.01}
        reach = {where: 3, other: 12}
        for reg, rs in _runs(tops["augmented"], tops["plain"], reach["augmented"], reach["plain"]).items():
            by_regime[reg][m] = rs
    return regime.entries_of(by_regime, "mnist", 0.97, PAPER, SE)


def test_the_rule_follows_the_evidence_both_ways():
    """Evidence that points without augmentation picks that regime; the same evidence flipped picks crop-and-flip."""
    plain = regime.choose(_evidence("plain"), 0.97)
    assert (plain.regime, plain.placement, plain.speed) == ("plain", "plain", "plain")
    assert "both lines" in plain.why
    aug = regime.choose(_evidence("augmented"), 0.97)
    assert (aug.regime, aug.placement, aug.speed) == ("augmented", "augmented", "augmented")


def test_split_or_missing_evidence_keeps_the_texts_regime():
    """Placement pointing one way and speed the other: the text's regime (crop-and-flip) decides; no entries at all
    (one regime's runs missing) too."""
    entries = _evidence("plain")
    fast_aug = [regime.Entry(e.method, e.paper_accuracy, e.paper_se, e.paper_bits, e.accuracy,
                             {"augmented": e.rounds_to["plain"], "plain": e.rounds_to["augmented"]}, e.reached,
                             e.round_bits, e.round_up_bits) for e in entries]
    split = regime.choose(fast_aug, 0.97)
    assert (split.regime, split.placement, split.speed) == ("augmented", "plain", "augmented")
    assert regime.choose([], 0.97).regime == regime.TEXT_REGIME
    assert regime.entries_of({"augmented": {}, "plain": {}}, "mnist", 0.97, PAPER, SE) == []


def test_the_evidence_rows_read_the_papers_bits_as_rounds():
    """Each entry's row: the paper's bits over one round both ways (2 Mb) and one way (1 Mb) give rounds 3 and 6;
    our rounds to 97% in each regime and how many seeds reached it; its reproduction verdict in each regime."""
    rows = regime.evidence_rows(_evidence("plain"), 0.97)
    a = rows[0]
    assert a["paper's rounds to threshold, both ways"] == 3 and a["paper's rounds, one way"] == 6
    assert a["our rounds without augmentation"] == 3 and a["our rounds with crop-and-flip"] == 12
    assert a["reached with crop-and-flip"] == "5 of 5"
    assert a["reproduced without augmentation"] == R.REPRODUCED
    assert a["reproduced with crop-and-flip"] == R.DIFFERS


def test_an_entry_below_the_threshold_counts_in_placement_only():
    """An entry the paper shows below 97% (its bits run to its best round) has no speed to read: '-' in the rounds
    columns, and it does not vote on speed."""
    paper = {"A": (90.0, 2e6 * 3)}
    by_regime = {reg: {"A": rs} for reg, rs in _runs(0.90, 0.88, 30, 30).items()}
    entries = regime.entries_of(by_regime, "mnist", 0.97, paper, {"A": 0.05})
    assert regime.speed(entries, 0.97)[1] == regime.Counts(augmented=0, plain=0)
    assert regime.evidence_rows(entries, 0.97)[0]["paper's rounds to threshold, both ways"] == "-"


def test_the_rules_reason_is_one_part_of_a_claims_note():
    """A claims note's parts are split at "; " (claims.md shows the regime's part once under its section): before,
    the reason held "; " and the page cut it after its placement count."""
    assert "; " not in regime.choose(_evidence("plain"), 0.97).why
    assert "; " not in regime.stand_in_choice("fashion_mnist", "cifar10").why
