"""FedRD's ladder claims (fedlib/papers/fedrd/claims.py) on made-up Results: each per-rung claim holds, fails, is
within noise, or has zero spread; the trend over the rungs; what the ladder cannot judge; no row says "paper"."""
import numpy as np
import pytest

from fedlib import claims as rules
from fedlib.papers.fedrd import claims
from fedlib.result import Result


def _runs(finals, first=None):
    """One made-up Result per seed: accuracy `first` (default: the final) after round 1, `final` after the last."""
    return [Result({"config": {"method": "x", "n_clients": 10},
                    "rounds": {"acc_mean": [(first if first is not None else f) / 100, f / 100]}}) for f in finals]


def _ledger():
    return rules.ClaimsLedger("07_test", "paper", scale="reduced")


BASE = {"FedAvg": _runs([80, 81, 79]), "FedProx": _runs([82, 80, 80]), "FedNova": _runs([81, 82, 78])}


@pytest.mark.parametrize("dm, verdict", [([85, 86, 84], rules.HOLDS), ([70, 71, 72], rules.FAILS),
                                         ([84, 79, 80], rules.WITHIN)])
def test_feddm_over_the_best_averaging_baseline_seed_by_seed(dm, verdict):
    ledger = _ledger()
    assert claims.dm_over_averaging(ledger, _runs(dm), BASE, steps=30) == verdict
    row = ledger.rows[0]
    assert row.reference == pytest.approx([82, 82, 80]) and row.where == "Table I (ladder, T = 30)"
    assert row.scale == "reduced"


def test_zero_spread_is_said_and_missing_runs_are_missing():
    ledger = _ledger()
    claims.rd_over_dm(ledger, _runs([85, 86, 84]), _runs([83, 84, 82]), steps=10)  # +2 on every seed: SE = 0
    assert "spread" in ledger.rows[0].says
    assert claims.rd_over_dm(_ledger(), None, _runs([83, 84, 82]), steps=10) == rules.MISSING


def test_real_over_random_and_round_one():
    assert claims.real_over_random(_ledger(), _runs([85, 86, 84]), _runs([60, 62, 61]), method="FedRD",
                                   steps=100) == rules.HOLDS
    ahead = _runs([85, 86, 84], first=70)
    assert claims.rd_ahead_after_round_one(_ledger(), ahead, {k: _runs([80] * 3, first=30) for k in BASE},
                                           steps=100) == rules.HOLDS
    behind = _runs([85, 86, 84], first=20)
    assert claims.rd_ahead_after_round_one(_ledger(), behind, {k: _runs([80] * 3, first=30) for k in BASE},
                                           steps=100) == rules.FAILS


def test_the_trend_is_each_seeds_slope_against_log_t():
    growing = {10: [0.0, 1.0, 0.5], 100: [2.0, 3.2, 2.4], 1000: [4.1, 5.0, 4.6]}
    assert claims.slopes(growing) == pytest.approx([2.05, 2.0, 2.05])
    assert claims.trend(_ledger(), "Table I", "FedRD over FedDM", growing) == rules.HOLDS
    flat = {10: [1.0, -1.0, 0.5], 100: [0.0, 0.5, 0.2], 1000: [1.2, -0.8, 0.4]}
    assert claims.trend(_ledger(), "Table I", "FedRD over FedDM", flat) == rules.WITHIN
    assert claims.trend(_ledger(), "Table I", "x", {10: [1.0], 100: None}) == rules.MISSING


def test_every_ladder_row_names_its_rung_and_the_unjudged_say_why(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path))
    ledger = _ledger()
    ladder = {(lab, None, None): runs for lab, runs in BASE.items()}
    for T in (10, 30):
        for method in ("FedDM", "FedRD"):
            ladder[(method, T, "real")] = _runs([85, 86, 84])
            ladder[(method, T, "random")] = None  # not shipped yet
    claims.ladder_claims(ladder, (10, 30), ledger)
    assert all("ladder" in row.where for row in ledger.rows) and {row.scale for row in ledger.rows} == {"reduced"}
    unjudged = [row for row in ledger.rows if row.note.startswith(rules.NOT_JUDGED)]
    assert len(unjudged) == len(claims.NOT_JUDGED) and all(row.verdict == rules.NOT_JUDGED for row in unjudged)
    saved = ledger.save()
    assert saved.name == "07_test_reduced.csv"
    collected = rules.collect(saved.parent)
    assert {r["scale"] for r in collected} == {"reduced"}
    assert any(r["note"].startswith(f"{rules.NOT_JUDGED}: SVHN") for r in collected)  # the reason survives


def test_every_ladder_claim_has_its_trend_over_the_rungs():
    """Before, only Table I's two claims had a trend row; the issue asks one for each claim the ladder judges: Table
    III's real over random (per method) and Fig. 2's round-one lead too, each the per-seed slope against log T."""
    ladder = {(lab, None, None): runs for lab, runs in BASE.items()}
    for T, gain in ((10, 0.0), (100, 2.0)):  # real pulls ahead of random as T grows, by 2 points a decade
        for method in ("FedDM", "FedRD"):
            ladder[(method, T, "real")] = _runs([85 + gain, 86 + gain, 84 + gain], first=60 + 5 * gain)
            ladder[(method, T, "random")] = _runs([85.1, 85.9, 84.2])
    ledger = _ledger()
    claims.ladder_claims(ladder, (10, 100), ledger)
    trends = {r.where + " | " + r.claim.split(":")[0]: r for r in ledger.rows if r.where.endswith("T = 10-100)")}
    assert sorted(trends) == sorted([
        "Table I (ladder, T = 10-100) | FedDM over the best averaging baseline",
        "Table I (ladder, T = 10-100) | FedRD over FedDM",
        "Table III (ladder, T = 10-100) | real over random initialisation (FedDM)",
        "Table III (ladder, T = 10-100) | real over random initialisation (FedRD)",
        "Fig. 2 (ladder, T = 10-100) | FedRD over the best averaging method after round one"])
    real = trends["Table III (ladder, T = 10-100) | real over random initialisation (FedRD)"]
    assert real.ours == pytest.approx([2.0, 2.0, 2.0]) and real.verdict == rules.HOLDS  # zero spread: said in the note
    assert trends["Fig. 2 (ladder, T = 10-100) | FedRD over the best averaging method after round one"].ours == \
        pytest.approx([10.0, 10.0, 10.0])


# ----------------------------------------------------------------------------------------------- notebook 07's parts
def _profile(**change):
    """The quick profile of notebook 07 with `change`."""
    import dataclasses

    from fedlib.papers.fedrd import PROFILES

    return dataclasses.replace(PROFILES["quick"], **change)


def test_the_parts_claims_on_made_up_numbers():
    from fedlib.papers.fedrd.plans import Toy

    profile = _profile(seeds=(0,), sweep_rounds=3)
    ledger = rules.ClaimsLedger("07_test", "quick")
    points = {("FedDM", 1): ((70.0, 0.0), 1.0), ("FedDM", 10): ((80.0, 0.0), 9.0), ("FedRD", 1): ((72.0, 0.0), 1.0),
              ("FedRD", 10): ((83.0, 0.0), 9.0), ("FedRD d'=256", 30): ((84.0, 0.0), 9.0)}
    claims.dpc_claims(ledger, points, profile, list(points))
    rises, equal = ledger.rows[-2:]
    assert rises.ours == [10.0, 11.0] and rises.verdict == rules.HOLDS
    assert equal.ours == [2.0, 3.0, 4.0] and equal.verdict == rules.HOLDS  # same dpc twice, then 3x dpc at d' = 256
    claims.size_and_depth_claims(ledger, [{"sqrt_d": 8, "final_mean": 80.0}, {"sqrt_d": 28, "final_mean": 78.0}],
                                 {1: (80.0, 0.0), 3: (82.0, 0.0)}, profile)
    assert [r.verdict for r in ledger.rows[-2:]] == [rules.FAILS, rules.HOLDS]  # smaller d' better; deeper better
    toy = Toy(lr=0.05, taus=(1, 5, 20), rounds=300)
    assert claims.fednova_unbiased(ledger, {"FedNova": 0.1, "FedAvg": 2.0}, toy) == rules.HOLDS  # 1.0 between them
    assert claims.fednova_unbiased(ledger, {"FedNova": 1.5, "FedAvg": 2.0}, toy) == rules.PARTLY


def test_what_the_ladder_cannot_judge_is_a_row_each_with_its_reason():
    ledger = _ledger()
    claims.record_not_judged(ledger)
    assert len(ledger.rows) == len(claims.NOT_JUDGED) > 0
    assert all(r.verdict == rules.NOT_JUDGED and r.note.startswith(f"{rules.NOT_JUDGED}: ") for r in ledger.rows)
    assert all(r.quote and r.kind in ("claim", "reproduction") for r in ledger.rows)  # each quotes what it leaves
    assert all(r.where.endswith("(ladder)") for r in ledger.rows)


def test_notebook_07s_table1_claims_pair_seeds_against_the_best_averaging_method():
    """claims.table1_claims: FedRD over FedDM and FedDM over the best averaging method per seed (FedNova on seed 2
    here), FedRD ahead after round 1, and convergence within 5 rounds only when there are more than 5."""
    curves = {"FedAvg": [[70, 80]] * 3, "FedProx": [[70, 81]] * 3, "FedNova": [[60, 79], [60, 79], [60, 90]],
              "FedDM": [[75, 85], [75, 86], [75, 84]], "FedRD": [[85, 88], [86, 89.5], [84, 87.2]]}
    fake = {lab: [Result({"config": {"method": "x", "n_clients": 10}, "rounds": {"acc_mean": [a / 100 for a in c]}})
                  for c in per_seed] for lab, per_seed in curves.items()}
    reported = {"fashion_mnist": {lab: (80.0, 1.0) for lab in curves}}
    ledger = _ledger()
    claims.table1_claims(ledger, fake, _profile(rounds=2, seeds=(0, 1, 2)), reported)
    assert [r.verdict for r in ledger.rows] == [rules.HOLDS, rules.WITHIN, rules.HOLDS]
    assert ledger.rows[1].reference == [81, 81, 90]  # the best averaging method, seed by seed
    assert len(ledger.rows) == 3  # 2 rounds: no convergence row


def test_notebook_07s_paper_profile_draws_what_is_shipped_and_its_claims_say_not_run(monkeypatch, tmp_path, capsys):
    """Before, parts A-F read every run through `results(cfgs)`, which raises when a run is neither cached nor
    shipped, so notebook 07 stopped at Table I in the paper profile (FEDLIB_PROFILE=paper ./run_all.sh 07 failed)
    and never reached the ladder. Now each part draws what is there, names what is not with its command, and each
    of its claims says "not run"."""
    from fedlib import cache, experiments as ex, papers, sweep
    from fedlib.papers.fedrd import figures, plans

    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path))
    monkeypatch.delenv("FEDLIB_COMPUTE", raising=False)
    monkeypatch.setattr(ex, "dataset_available", lambda d: d == "fashion_mnist")
    monkeypatch.setattr(cache, "load", lambda cfg: None)  # neither cached nor shipped
    ex.data_here.cache_clear()
    ran = []
    monkeypatch.setattr(sweep, "run_many", lambda cfgs, **kw: (ran.extend(cfgs), [])[1])
    reads = papers.read_notebook("paper", plans.NOTEBOOK)
    table1, init, dpcs, sides, depths = (reads[p] for p in plans.AT_PROFILE)
    ex.data_here.cache_clear()
    assert ran == [] and dpcs.keys() and sides.keys() and depths.keys()  # the paper profile plans every part
    table = figures.table1(table1)
    assert "FashionMNIST" in set(table["dataset"]) and table["final_mean"].isna().all()  # named, not drawn
    assert "MNIST (loose stand-in for SVHN)" in set(table["dataset"])  # its files missing here: named
    figures.curves(table1)
    assert figures.table3(init, table1) is None
    figures.dpc(dpcs), figures.sizes(sides), figures.depths(depths), figures.toy("paper")
    assert "compute them with scripts/paper_runs.py fedrd_table1" in capsys.readouterr().out
    ledger = claims.record(reads)  # the notebook's one call: the ladder's ledger, then parts A-F and H's
    saved = sorted(p.name for p in tmp_path.rglob("*.csv") if p.parent.name == "claims")
    assert saved == [f"{plans.NOTEBOOK}_paper.csv", f"{plans.NOTEBOOK}_reduced.csv"], saved
    verdicts = {(r.where, r.verdict) for r in ledger.rows if r.paper == "FedRD"}
    assert {w for w, _ in verdicts} == {"Table I", "Fig. 2", "Table III", "Fig. 4", "Table IV", "Fig. 5"}
    assert {v for _, v in verdicts} == {rules.MISSING}
    assert all(r.note == claims.UNDECLARED for r in ledger.rows if r.where in ("Fig. 4", "Table IV", "Fig. 5"))
    assert [r.verdict for r in ledger.rows if r.paper == "FedNova"] == [rules.HOLDS]  # the toy needs no runs


class _Reading(dict):
    """A part's reading (`part.Read`) of the ladder over made-up Results: key -> Results or None."""

    @property
    def settings(self):
        from fedlib.papers.fedrd import LADDER

        return LADDER

    def keys(self):
        return list(super().keys())

    def each(self):
        return dict(self)


def _ladder_with(shipped_rungs):
    """A made-up ladder: the baselines, and FedDM/FedRD (real and random) at the rungs in `shipped_rungs`; every other
    rung of LADDER not shipped (None)."""
    from fedlib.papers.fedrd import LADDER

    out = _Reading({(lab, None, None): BASE[lab] for lab in BASE})
    for T in LADDER.steps:
        for lab, at in (("FedDM", 84), ("FedRD", 86)):
            for init, drop in (("real", 0), ("random", 10)):
                acc = at - drop + (T > 10)
                out[(lab, T, init)] = _runs([acc, acc + 1, acc - 1], first=acc - 20) if T in shipped_rungs else None
    return out


def test_the_ladder_table_and_figure_show_what_is_shipped_and_name_the_rest(monkeypatch, capsys):
    import matplotlib.pyplot as plt

    from fedlib.papers.fedrd import figures

    monkeypatch.setenv("FEDLIB_PROFILE", "quick")
    drawn = {}
    original = figures.ladder_figure
    monkeypatch.setattr(figures, "ladder_figure", lambda *a, **k: drawn.setdefault("fig", original(*a, **k)))
    table = figures.ladder_table(_ladder_with({10, 30}), "quick")
    rows = {(r.method, str(r.matching_steps), r.init): r for r in table.itertuples()}
    assert rows[("FedRD", "30", "real")].final_mean == pytest.approx(87) and rows[("FedRD", "30", "real")].shipped == "yes"
    assert rows[("FedRD", "30", "real")].final_se == pytest.approx(1 / 3 ** 0.5)  # 86, 87, 88 (SE of the mean)
    assert rows[("FedRD", "30", "real")].round1_mean == pytest.approx(67)
    assert rows[("FedAvg", "-", "-")].final_mean == pytest.approx(80) and rows[("FedAvg", "-", "-")].rounds == 20
    assert rows[("FedDM", "300", "random")].shipped == "no" and np.isnan(rows[("FedDM", "300", "random")].final_mean)
    said = capsys.readouterr().out
    assert "8 of 19 run groups" in said and "FedDM T=300 random" in said and "FedAvg" not in said
    fig = drawn["fig"]
    final_panel, first_panel = fig.axes
    assert final_panel.get_title() == "after the last round" and first_panel.get_title() == "after round 1"
    assert final_panel.get_xlabel().startswith("matching steps T") and final_panel.get_ylabel().endswith("(%)")
    labels = [t.get_text() for t in fig.legends[0].get_texts()]  # one legend for both panels
    assert "FedRD, real initialisation" in labels and "FedNova (no T)" in labels and len(labels) == 7
    assert any("3 seeds" in t.get_text() and "ConvNet-32" in t.get_text() for t in fig.texts)  # the caption
    plt.close(fig)


def test_an_unshipped_ladder_draws_nothing_and_says_so(monkeypatch, capsys):
    from fedlib.papers.fedrd import figures

    monkeypatch.setenv("FEDLIB_PROFILE", "quick")
    nothing = _Reading({k: None for k in _ladder_with(set())})
    assert figures.ladder_table(nothing, "quick") is None
    said = capsys.readouterr().out
    assert "19 of 19 run groups" in said and "FedAvg; FedProx; FedNova; FedDM T=10 real" in said  # no "T=- -"


def test_the_trend_is_judged_over_the_rungs_shipped_and_names_them():
    # before, one rung not shipped (the ladder's dearest, T = 300) left every trend row "not run"
    ledger = _ledger()
    growing = {10: [0.0, 1.0, 0.5], 30: [1.0, 2.1, 1.4], 100: [2.0, 3.2, 2.4], 300: None}
    assert claims.trend(ledger, "Table I", "FedRD over FedDM", growing) == rules.HOLDS
    row = ledger.rows[-1]
    assert row.where == "Table I (ladder, T = 10-100)" and row.note.endswith("not shipped yet: T = 300")
    assert claims.trend(_ledger(), "Table I", "x", {10: [1.0, 2.0, 3.0], 30: None, 100: None}) == rules.MISSING


def test_a_method_keeps_its_colour_whatever_else_is_shipped():
    # before, colours were handed out in the order of the methods shipped: FedRD alone was drawn in FedDM's colour
    import matplotlib.pyplot as plt

    from fedlib.papers.fedrd import figures

    one = {"p": ([10], [86.0], [1.0])}
    alone = figures.ladder_figure({("FedRD", "real"): one}, {}, ["p"], "t")
    both = figures.ladder_figure({("FedDM", "real"): one, ("FedRD", "real"): one}, {"FedAvg": {"p": (80.0, 1.0)}}, ["p"], "t")
    colour = lambda fig, label: next(h for h, t in zip(*fig.axes[0].get_legend_handles_labels())  # noqa: E731
                                     if t == label)[0].get_color()
    assert colour(alone, "FedRD, real initialisation") == colour(both, "FedRD, real initialisation")
    assert colour(both, "FedDM, real initialisation") != colour(both, "FedRD, real initialisation")
    plt.close("all")


def test_table_i_without_paper_runs_is_shown_at_the_ladders_top_rung_labelled(tmp_path, monkeypatch, capsys):
    """Notebook 07's part A at the paper profile, whose Table I runs are not shipped: before, five rows of nan; now
    the best scale that has runs, the ladder's T = 300 rung (shipped), labelled reduced, the paper's numbers beside."""
    from fedlib import cache, experiments as ex, papers
    from fedlib.papers.fedrd import figures, plans

    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path))
    (ladder,) = papers.read("paper", plans.LADDER_PART)  # shipped in archive/
    monkeypatch.setattr(ex, "dataset_available", lambda d: d == "fashion_mnist")
    monkeypatch.setattr(cache, "load", lambda cfg: None)  # neither cached nor shipped
    ex.data_here.cache_clear()
    (table1,) = papers.read("paper", plans.AT_PROFILE[0])
    ex.data_here.cache_clear()
    table = figures.table1(table1, ladder)
    drawn = table[table["final_mean"].notna()]
    assert list(drawn["method"]) == ["FedAvg", "FedProx", "FedNova", "FedDM", "FedRD"]
    assert set(drawn["dataset"]) == {"FashionMNIST, the ladder at T = 300 (reduced; part G)"}
    assert drawn["paper_accuracy"].notna().all() and (drawn["seeds"] == 3).all()
    assert "Table I at the paper's scale has no runs yet; shown below at the best scale that has them" in \
        capsys.readouterr().out
