"""No rule text is ever evaluated: a claims CSV is a file anyone can edit and the ledger reads every one, so a rule is
one of a few kinds, read as data (`claims.parse_rule`), and anything else is refused by name before any verdict."""
import csv

import pytest

from fedlib import claims

PAYLOAD = ("[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'catch_warnings'][0]()._module"
           ".__builtins__['__import__']('os').system('touch {marker}')")


def _write(path, rule, verdict, ours="1.0", reference="0.5"):
    row = {k: "" for k in claims.COLUMNS}
    row.update(paper="FedLog", where="Table 1", claim="a claim", paper_value="", ours=ours, reference=reference,
               rule=rule, verdict=verdict, notebook="02_communication_cost", profile="quick", seeds="1", rounds="1",
               scale="quick", borderline="False")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=claims.COLUMNS)
        w.writeheader()
        w.writerow(row)


def test_a_rule_that_would_run_code_is_refused_by_name_and_runs_nothing(tmp_path):
    marker = tmp_path / "ran"
    _write(tmp_path / "02_communication_cost_quick.csv", PAYLOAD.format(marker=marker), "holds")
    with pytest.raises(claims.ClaimsError, match="none of the rule kinds"):
        claims.collect(tmp_path)
    assert not marker.exists()


@pytest.mark.parametrize("rule", ["True or ours", "ours == reference", "ours >= reference * 2", "__import__('os')",
                                  "paired: ours >= reference", "abs(ours) <= 1"])
def test_a_rule_and_verdict_edited_together_are_refused(tmp_path, rule):
    _write(tmp_path / "02_communication_cost_quick.csv", rule, "holds")
    with pytest.raises(claims.ClaimsError, match="refused"):
        claims.collect(tmp_path)


@pytest.mark.parametrize("rule,ours,reference,want", [
    ("ours >= reference - 1.5", 97.0, 98.0, claims.HOLDS), ("ours >= reference - 1.5", 96.0, 98.0, claims.FAILS),
    ("ours < reference", 1.0, 2.0, claims.HOLDS), ("ours <= reference", 2.0, 2.0, claims.HOLDS),
    ("ours > reference", 2.0, 2.0, claims.FAILS), ("abs(ours - reference) <= 1.5", 96.6, 98.0, claims.HOLDS),
    ("abs(ours - reference) <= 1.5", 96.4, 98.0, claims.FAILS), ("ours>reference+1e-3", 1.002, 1.0, claims.HOLDS),
])
def test_the_rule_kinds_decide_as_the_expressions_did(rule, ours, reference, want):
    assert claims.verdict(ours, reference, rule) == want


def test_every_shipped_claims_file_uses_only_the_rule_kinds():
    from fedlib.paths import project_root

    for p in sorted((project_root() / "figures" / "claims").glob("*.csv")):
        for row in claims.read(p):
            claims.parse_rule(row["rule"])


# ----------------------------------------------------------------------------------------------- hollow inputs
def test_an_empty_claims_folder_is_refused_and_nothing_is_written(tmp_path):
    with pytest.raises(claims.ClaimsError, match="holds no claims file"):
        claims.collect(tmp_path)


def test_a_bar_in_a_claims_text_stays_inside_its_cell(tmp_path):
    _write(tmp_path / "02_communication_cost_quick.csv", "ours > reference", "holds")
    rows = claims.collect(tmp_path)
    rows[0]["claim"] = "FedLog | FedLog-C beat FedAvg"
    claims.write_collected(rows, tmp_path / "out")
    table = [line for line in (tmp_path / "out" / "claims.md").read_text().splitlines() if "FedLog-C beat" in line]
    header = next(line for line in (tmp_path / "out" / "claims.md").read_text().splitlines() if line.startswith("| where"))
    assert len(table) == 1 and table[0].replace("\\|", "").count("|") == header.count("|")  # as many cells


def test_a_row_with_a_surplus_value_is_named_at_its_own_line(tmp_path):
    p = tmp_path / "02_communication_cost_quick.csv"
    _write(p, "ours > reference", "holds")
    lines = p.read_text().splitlines()
    p.write_text("\n".join([lines[0], lines[1], lines[1] + ",surplus"]) + "\n")
    with pytest.raises(claims.ClaimsError, match="line 3: the row has 1 value"):
        claims.collect(tmp_path)


# ----------------------------------------------------------------------------------------------- the decision rule
def _diffs_with_t(t, n=3, base=90.0):
    """Per-seed numbers whose paired differences have mean/SE = t (spread 1)."""
    import numpy as np

    d = np.array([-1.0, 0.0, 1.0] if n == 3 else np.linspace(-1, 1, n))
    d = d / (d.std(ddof=1) / np.sqrt(n)) * 1.0 + t
    ref = [base + i for i in range(n)]
    return [r + x for r, x in zip(ref, d)], ref


def test_a_paired_comparison_is_decided_by_a_t_test_at_2_5_percent_each_way_with_its_p():
    ours, ref = _diffs_with_t(5.0)  # t = 5 on 2 df: one-sided p 0.019
    assert claims.verdict(ours, ref, "paired: ours > reference") == claims.HOLDS
    ours, ref = _diffs_with_t(3.0)  # p 0.048: a 2-SE rule said "holds", the t-test does not
    assert claims.verdict(ours, ref, "paired: ours > reference") == claims.WITHIN
    assert claims.verdict(ours, ref, "paired: ours < reference") == claims.WITHIN
    ours, ref = _diffs_with_t(-6.0)
    assert claims.verdict(ours, ref, "paired: ours > reference") == claims.FAILS
    p_for, p_against = claims.paired_p(*_diffs_with_t(5.0), "paired: ours > reference")
    assert abs(p_for - 0.0189) < 5e-4 and abs(p_for + p_against - 1) < 1e-12


def test_with_no_effect_a_firm_verdict_comes_about_5_percent_of_the_time():
    import numpy as np

    rng = np.random.default_rng(0)
    firm = 0
    trials = 4000
    for _ in range(trials):
        ref = list(rng.normal(90, 2, 3))
        ours = [r + x for r, x in zip(ref, rng.normal(0, 1, 3))]
        firm += claims.verdict(ours, ref, "paired: ours > reference") in (claims.HOLDS, claims.FAILS)
    assert 0.035 < firm / trials < 0.065  # the 2-SE rule gave about 18%


def test_borderline_is_a_band_of_p_around_the_level_on_both_sides():
    inside = [_diffs_with_t(t) for t in (3.5, 4.5, 5.5, 6.0)]  # p 0.036, 0.023, 0.016, 0.013
    outside = [_diffs_with_t(t) for t in (1.0, 12.0)]  # p 0.21, 0.0034
    for ours, ref in inside:
        found = claims.verdict(ours, ref, "paired: ours > reference")
        assert claims.is_borderline(ours, ref, "paired: ours > reference", found)
    for ours, ref in outside:
        found = claims.verdict(ours, ref, "paired: ours > reference")
        assert not claims.is_borderline(ours, ref, "paired: ours > reference", found)
    assert claims.is_borderline(96.6, 98.0, "abs(ours - reference) <= 1.5", claims.HOLDS)  # 0.1 of its edge
    assert not claims.is_borderline(97.5, 98.0, "abs(ours - reference) <= 1.5", claims.HOLDS)


def test_rounds_to_a_target_reached_by_neither_side_is_censored_and_one_sided_censoring_is_a_bound():
    rule = "paired: ours < reference, censored at 301"
    assert claims.verdict([301, 301, 301], [301, 301, 301], rule) == claims.CENSORED
    assert not claims.is_borderline([301, 301, 301], [301, 301, 301], rule, claims.CENSORED)
    assert claims.verdict([82, 136, 124], [301, 301, 301], rule) == claims.HOLDS
    assert "the reference censored at 301" in claims.paired_note([82, 136, 124], [301, 301, 301], rule)
    assert claims.paired_note([82, 136, 124], [200, 210, 190], rule) == ""


def test_zero_spread_is_said_and_equal_numbers_are_within_noise():
    ours, ref = [91.0, 92.0, 93.0], [90.0, 91.0, 92.0]  # every seed exactly 1 point ahead: SE = 0
    assert claims.verdict(ours, ref, "paired: ours > reference") == claims.HOLDS
    assert "zero spread" in claims.paired_note(ours, ref, "paired: ours > reference")
    assert claims.verdict(ref, ref, "paired: ours > reference") == claims.WITHIN


def test_holms_correction_rejects_step_down():
    assert claims.holm([0.001, 0.02, 0.04], alpha=0.05) == [True, True, True]
    assert claims.holm([0.001, 0.03, 0.04], alpha=0.05) == [True, False, False]
    assert claims.holm([0.2, 0.001], alpha=0.025) == [False, True]


def test_a_comparison_whose_other_side_is_missing_is_missing_not_a_crash():
    # before: compare(ours=[...], reference=None) raised a TypeError inside the paired statistics
    ledger = claims.ClaimsLedger("08_x", "quick")
    assert ledger.compare("P", "T", "c", [1.0, 2.0, 3.0], None, ">") == claims.MISSING
