"""fedlib.claims.rules: every rule kind on made-up numbers, for every outcome it can give; rules are data (a JSON cell),
never evaluated, and a cell that is not a rule is refused by name."""
import math

import pytest

from fedlib import claims
from fedlib.claims import rules as R

PAYLOAD = ("[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'catch_warnings'][0]()._module"
           ".__builtins__['__import__']('os').system('touch {marker}')")


# ------------------------------------------------------------------------------------------------ rules as data
def test_a_rule_round_trips_through_its_cell():
    for rule in (R.paired(">"), R.paired("<", 301), R.equivalence(), R.marker("<", 0.01), R.observation(),
                 R.statement(), R.comparison(">=", -1.5), R.tolerance(2.0)):
        assert R.Rule.from_cell(rule.cell()) == rule


@pytest.mark.parametrize("cell", ["ours >= reference - 1.5", "paired: ours > reference", '{"kind": "eval"}',
                                  '{"kind":"paired","op":">=","value":0}', '{"kind":"marker","op":"<","value":5}',
                                  '{"kind":"equivalence","op":"","value":-1}', '[1, 2]', "",
                                  '{"kind":"paired","op":">","value":NaN}'])
def test_a_cell_that_is_not_a_rule_is_refused(cell):
    with pytest.raises(ValueError):
        R.Rule.from_cell(cell)


def test_a_payload_in_a_rule_cell_runs_nothing(tmp_path):
    marker = tmp_path / "ran"
    with pytest.raises(ValueError, match="not a rule cell"):
        R.Rule.from_cell(PAYLOAD.format(marker=marker))
    assert not marker.exists()


# ----------------------------------------------------------------------------------------------------- paired
def test_paired_holds_fails_within_noise_and_indicative():
    assert R.verdict([2.0, 2.1, 2.2], [1.0, 1.0, 1.1], R.paired(">")) == R.HOLDS
    assert R.verdict([1.0, 1.0, 1.1], [2.0, 2.1, 2.2], R.paired(">")) == R.FAILS
    assert R.verdict([1.0, 2.0, 1.5], [1.4, 1.6, 1.5], R.paired(">")) == R.WITHIN
    assert R.verdict([2.0, 2.1], [1.0, 1.0], R.paired(">")) == "indicative (2 seeds)"
    assert R.verdict([5, 6, 7], [1, 2, 3], R.paired("<")) == R.FAILS


def test_paired_counts_the_seeds_in_the_claims_direction_and_says_when_every_seed_points_its_way():
    d = R.decide([13.0, 26.2, 59.0], [0.0, 0.0, 0.0], R.paired(">"))
    assert d.toward == "3/3 seeds, smallest +13"
    assert d.verdict == R.WITHIN and "t > 4.30" in d.note  # t(0.975, 2) = 4.30: every seed its way, still noise


def test_paired_censored_everywhere():
    assert R.verdict([301, 301, 301], [301, 301, 301], R.paired("<", 301)) == R.CENSORED


# ------------------------------------------------------------------------------------------------ equivalence
def test_equivalence_reproduced():
    d = R.decide([98.30, 98.25, 98.35, 98.32], [98.15, 0.05], R.equivalence(0.5))
    assert d.verdict == R.REPRODUCED and d.p < R.LEVEL and math.isclose(d.margin, 98.305 - 98.15)


def test_equivalence_does_not_punish_precision():
    """The old 2-SE row failed FedLog's 98.31 against 98.15 on a band of 0.15: more seeds made it harder to pass."""
    many = [98.31 + 0.01 * ((i % 3) - 1) for i in range(10)]
    assert R.verdict(many, [98.15, 0.05], R.equivalence()) == R.REPRODUCED


def test_equivalence_differs_from_the_paper():
    assert R.verdict([96.0, 96.1, 95.9], [98.15, 0.05], R.equivalence()) == R.DIFFERS


def test_equivalence_cannot_be_decided_when_the_papers_own_se_is_too_large():
    assert R.verdict([89.7, 89.8, 89.9], [89.76, 0.69], R.equivalence()) == R.IMPRECISE


def test_equivalence_not_resolved_and_one_seed_indicative():
    assert R.verdict([98.55, 98.6, 98.65], [98.15, 0.05], R.equivalence()) == R.UNRESOLVED
    assert R.verdict([98.2], [98.15, 0.05], R.equivalence()).startswith("indicative")


def test_equivalence_with_two_seeds_is_indicative_as_a_paired_claim_is():
    """FedCR's Table 2 n2 FedAvg rows read "cannot be decided at this precision" from 2 seeds of a set shipped in
    part; a verdict of any kind comes only from MIN_SEEDS seeds (issue 89), as a paired claim's does."""
    d = R.decide([88.05, 88.24], [88.63, 0.43], R.equivalence())
    assert d.verdict == "indicative (2 seeds)" and d.p == "" and math.isclose(d.margin, 88.145 - 88.63)
    assert R.verdict([98.30, 98.31], [98.30, 0.0], R.equivalence()) == "indicative (2 seeds)"  # however close


def test_equivalence_without_the_papers_spread_says_so():
    d = R.decide([98.30, 98.25, 98.35], [98.15, None], R.equivalence())
    assert d.verdict == R.REPRODUCED and "no spread" in d.note


# ---------------------------------------------------------------------------------------------------- markers
def test_marker_agrees_not_significant_opposite():
    lower = [90.0 + i * 0.01 for i in range(10)]
    ref = [95.0 + i * 0.01 for i in range(10)]
    assert R.verdict(lower, ref, R.marker("<", 0.01)) == R.AGREES
    mixed = [95.0 + (0.1 if i % 2 else -0.1) for i in range(10)]
    assert R.verdict(mixed, [95.0] * 10, R.marker("<", 0.01)) == R.NOT_SIGNIFICANT
    assert R.verdict(ref, lower, R.marker("<", 0.01)) == R.OPPOSITE


def test_marker_with_ties_that_cannot_reach_the_level_cannot_be_decided():
    """4 of 10 seeds tied leave 6 pairs: the smallest exact p is 1/64 = 0.0156, above 0.01."""
    ours = [1.0] * 4 + [2.0 + i for i in range(6)]
    ref = [1.0] * 4 + [1.0 + i for i in range(6)]
    d = R.decide(ours, ref, R.marker(">", 0.01))
    assert d.verdict == R.TIES and "1/2^6" in d.note and d.p == ""


def test_marker_with_too_few_seeds_is_indicative():
    assert R.verdict([1.0, 2.0, 3.0], [2.0, 3.0, 4.0], R.marker("<", 0.05)).startswith("indicative")


def test_an_absent_marker_is_an_observation_with_its_p_and_no_verdict():
    d = R.decide([1.0 + i for i in range(10)], [2.0 + i for i in range(10)], R.observation())
    assert d.verdict == R.OBSERVATION and "p 0.000977" in d.note and d.p == ""


# ------------------------------------------------------------------------------- statements and exact quantities
def test_a_statement_with_no_number_reports_ours_and_gives_no_verdict():
    assert R.verdict([-19.7, -18.1, -21.0], None, R.statement()) == R.REPORTED


@pytest.mark.parametrize("rule,ours,reference,want", [
    (R.comparison(">=", -1.5), 97.0, 98.0, R.HOLDS), (R.comparison(">=", -1.5), 96.0, 98.0, R.FAILS),
    (R.comparison("<"), 1.0, 2.0, R.HOLDS), (R.comparison("<="), 2.0, 2.0, R.HOLDS),
    (R.comparison(">"), 2.0, 2.0, R.FAILS), (R.tolerance(1.5), 96.6, 98.0, R.HOLDS),
    (R.tolerance(1.5), 96.4, 98.0, R.FAILS), (R.comparison(">="), [0.06, 0.01, 0.2], 0.05, R.PARTLY),
])
def test_exact_quantities(rule, ours, reference, want):
    assert R.verdict(ours, reference, rule) == want


def test_missing_numbers_are_not_run():
    for rule in (R.paired(">"), R.equivalence(), R.marker("<", 0.01), R.statement(), R.comparison(">")):
        assert R.verdict(None, None, rule) == R.MISSING


def test_every_verdict_word_counts_in_one_headline_column():
    words = [w for group in R.OUTCOMES.values() for w in group]
    assert len(words) == len(set(words))
    assert R.outcome("indicative (3 seeds)") == "not resolved"


def test_the_package_keeps_the_names_the_notebooks_use():
    assert claims.HOLDS == R.HOLDS and claims.paired(">") == R.paired(">") and claims.verdict is R.verdict
