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


def test_a_run_on_some_datasets_keeps_the_other_datasets_claims(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path))
    full = claims.Ledger("02_b", "quick")
    for d in ("mnist", "fashion_mnist"):
        full.record("P", f"Table 1 ({d})", "FedLog-C is best", 1.0, 0.0, "ours > reference")
    full.save()
    mnist_only = claims.Ledger("02_b", "quick")
    mnist_only.record("P", "Table 1 (mnist)", "FedLog-C is best", 0.0, 1.0, "ours > reference")
    rows = claims.read(mnist_only.save(keep_other_where=True))
    assert [(r["where"], r["verdict"]) for r in rows] == [("Table 1 (fashion_mnist)", "holds"),
                                                         ("Table 1 (mnist)", "does not hold")]
    assert len(claims.read(mnist_only.save())) == 1  # a whole run replaces every row


def test_rules_cannot_reach_python():
    with pytest.raises(NameError):
        claims.verdict(1.0, 0.0, "__import__('os')")


def test_the_readme_table_is_replaced_in_place(tmp_path):
    table = "| paper | where |\n|---|---|\n| FedLog | Fig. 1 |\n"
    readme = tmp_path / "README.md"
    readme.write_text("intro\n\n| paper | where |\n|---|---|\n| old | row |\n| older | row |\n\nafter\n")
    assert claims.update_readme(table, readme)
    assert readme.read_text() == "intro\n\n" + table + "\nafter\n"
    assert claims.update_readme(table, readme) and readme.read_text() == "intro\n\n" + table + "\nafter\n"
    other = tmp_path / "OTHER.md"
    other.write_text("no table here\n")
    assert not claims.update_readme(table, other) and other.read_text() == "no table here\n"


def test_the_readme_shows_the_collected_claims():
    """run_all.sh's `python -m fedlib claims` copies figures/claims.md into the README; a hand edit or a stale copy
    fails here (the README once showed notebook 02's two-seed rows after its quick profile went to one seed)."""
    root = paths.project_root()
    table = (root / "figures" / "claims.md").read_text()
    assert table in (root / "README.md").read_text(), "run: python -m fedlib claims"
