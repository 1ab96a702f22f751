import pytest

from fedlib import claims, paths


def test_verdicts_come_from_the_rule_and_can_be_recomputed(tmp_path):
    ledger = claims.Ledger("02_communication_cost", "quick")
    assert ledger.record("FedLog", "Table 1", "FedLog within 1.5 points", 97.0, 98.15, "ours >= reference - 1.5",
                         paper_value=98.15) == "holds"
    assert ledger.record("FedLog", "Table 1", "FedLog-C cheapest", 4.9e6, 2.9e6, "ours <= reference") == \
        "does not hold"
    assert ledger.record("FedLog", "Fig. 3", "recovers per dataset", [0.5, 5.0], 1.0, "ours <= reference") == "partly"
    assert ledger.record("FedLog", "Table 1", "CIFAR-10 column", None, 87.08, "ours >= reference - 1.5") == \
        "not run: missing data"
    path = ledger.save()
    rows = claims.read(path)
    assert len(rows) == 4
    for row in rows:  # anyone can recompute every verdict from the row
        assert claims.verdict(claims.parse(row["ours"]), claims.parse(row["reference"]), row["rule"]) == row["verdict"]


def test_a_notebook_replaces_only_its_own_rows_and_smoke_stays_out_of_figures(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "project_root", lambda: tmp_path)
    for env in ("FEDLIB_FIGURES", "FEDLIB_PROFILE"):
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setattr(paths, "_active", "quick")
    for nb in ("01_a", "02_b"):
        ledger = claims.Ledger(nb, "quick")
        ledger.record("P", "Fig. 1", f"{nb} claim", 1.0, 0.0, "ours > reference")
        ledger.save()
    paper_rows = claims.Ledger("02_b", "paper")
    paper_rows.record("P", "Fig. 1", "paper claim", 1.0, 0.0, "ours > reference")
    paper_rows.save()
    again = claims.Ledger("02_b", "quick")
    again.record("P", "Fig. 1", "new claim", 0.0, 1.0, "ours > reference")
    again.save()
    rows = claims.collect()
    assert sorted((r["notebook"], r["profile"], r["claim"]) for r in rows) == [
        ("01_a", "quick", "01_a claim"), ("02_b", "paper", "paper claim"), ("02_b", "quick", "new claim")]
    written = claims.write_collected(rows)
    assert written[0] == tmp_path / "figures" / "claims.csv" and "**does not hold**" in written[1].read_text()
    paths.use_profile("smoke")
    smoke = claims.Ledger("01_a", "smoke")
    smoke.record("P", "Fig. 1", "smoke", 1.0, 0.0, "ours > reference")
    assert smoke.save().is_relative_to(tmp_path / "build" / "smoke")


def test_rules_cannot_reach_python():
    with pytest.raises(NameError):
        claims.verdict(1.0, 0.0, "__import__('os')")
