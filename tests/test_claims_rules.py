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
    assert len(table) == 1 and table[0].replace("\\|", "").count("|") == 10  # 9 cells, as the header's


def test_a_row_with_a_surplus_value_is_named_at_its_own_line(tmp_path):
    p = tmp_path / "02_communication_cost_quick.csv"
    _write(p, "ours > reference", "holds")
    lines = p.read_text().splitlines()
    p.write_text("\n".join([lines[0], lines[1], lines[1] + ",surplus"]) + "\n")
    with pytest.raises(claims.ClaimsError, match="line 3: the row has 1 value"):
        claims.collect(tmp_path)
