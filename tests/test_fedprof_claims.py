"""FedProf's claims as functions (fedlib/papers/fedprof/claims.py), each on made-up Results: one that holds, one
that fails, one within noise, and the censored and zero-spread cases; and notebook 08's runs as declared."""
import pytest

from fedlib import claims as rules
from fedlib.papers import fedprof
from fedlib.papers.fedprof import claims
from fedlib.result import Result

SEEDS = 3


def _run(acc, kinds=(), selected=None, method="fedprof"):
    """A made-up Result: its global accuracy per round (fractions), its clients' kinds, whom it selected."""
    r = {"config": {"method": method, "n_clients": len(kinds) or 1}, "rounds": {"acc_all": list(acc), "acc_mean": list(acc)},
         "client_kind": list(kinds)}
    if selected is not None:
        r["extra"] = {"selected": selected}
    return Result(r)


def _reaching(rounds_to_hit, n_rounds=10, target=0.9):
    """A run whose accuracy first reaches `target` in round `rounds_to_hit` (never, if beyond n_rounds)."""
    return _run([target - 0.1] * (rounds_to_hit - 1) + [target + 0.01] * (n_rounds - rounds_to_hit + 1)
                if rounds_to_hit <= n_rounds else [target - 0.1] * n_rounds)


def _ledger():
    return rules.ClaimsLedger("08_test", "quick")


def _fewer(ours, base):
    ledger = _ledger()
    return claims.fewer_rounds(ledger, [_reaching(t) for t in ours], [_reaching(t) for t in base],
                               baseline_label="FedAvg-RP", aggregation="partial", C=0.1, target=0.9, rounds=10), ledger


@pytest.mark.parametrize("ours, base, verdict", [
    ([2, 3, 2], [6, 8, 7], rules.HOLDS),        # FedProf clearly faster on every seed
    ([8, 7, 9], [2, 3, 2], rules.FAILS),        # clearly slower
    ([3, 7, 5], [5, 4, 6], rules.WITHIN),       # no consistent difference
    ([11, 11, 11], [11, 11, 11], rules.CENSORED),  # neither ever reaches the target (rounds + 1 = 11)
])
def test_fewer_rounds_holds_fails_is_within_noise_or_censored(ours, base, verdict):
    found, ledger = _fewer(ours, base)
    assert found == verdict
    row = ledger.rows[0]
    assert row.claim.startswith("FedProf reaches 90% in fewer rounds than FedAvg-RP (partial aggregation, C = 0.1")
    assert row.paper_value == [12, 8]  # the paper's Table 3: FedAvg-RP 12, FedProf 8 rounds to 90% (C = 0.1)


def test_fewer_rounds_with_zero_spread_is_said():
    found, ledger = _fewer([3, 3, 3], [5, 5, 5])  # identical differences: SE = 0
    assert "spread" in ledger.rows[0].says


def test_best_accuracy_claims_pair_seeds_and_take_the_stronger_baseline_per_seed():
    ours = [_run([0.5, a]) for a in (0.96, 0.95, 0.97)]
    rp = [_run([0.5, a]) for a in (0.93, 0.96, 0.90)]  # seed 1: FedAvg-RP beats FedProf
    prox = [_run([0.5, a]) for a in (0.90, 0.90, 0.95)]
    ledger = _ledger()
    claims.best_above_the_strongest(ledger, ours, rp, prox, C=0.1, rounds=2)
    assert ledger.rows[0].reference == pytest.approx([93.0, 96.0, 95.0])  # the max of the two, seed by seed
    assert claims.best_above_fedavg(_ledger(), ours, [_run([0.5, a]) for a in (0.90, 0.89, 0.91)], C=0.1,
                                    rounds=2) == rules.HOLDS
    assert claims.best_above_fedavg(_ledger(), ours, [_run([0.5, a]) for a in (0.99, 0.98, 0.99)], C=0.1,
                                    rounds=2) == rules.FAILS
    assert claims.best_above_fedavg(_ledger(), None, None, C=0.1, rounds=2) == rules.MISSING


def test_selected_less_often_counts_selections_per_kind():
    kinds = ["clean", "clean", "irrelevant", "irrelevant"]
    shy = [_run([0.5], kinds, selected=[[0, 1], [0, 1], [1, extra]]) for extra in (0, 2, 3)]  # rarely 2 or 3
    assert claims.selected_less_often(_ledger(), shy, "irrelevant", C=0.1, rounds=3) == rules.HOLDS
    keen = [_run([0.5], kinds, selected=[[2, 3], [2, 3], [0, extra]]) for extra in (2, 3, 1)]
    assert claims.selected_less_often(_ledger(), keen, "irrelevant", C=0.1, rounds=3) == rules.FAILS


def test_biased_and_noisy_slowest_against_the_lowest_other_condition_per_seed():
    finals = {"original": (0.97, 0.96, 0.97), "biased": (0.93, 0.92, 0.94), "noisy": (0.95, 0.95, 0.96)}
    slow = {c: [_run([0.5, a]) for a in v] for c, v in finals.items()} | \
        {"biased + noisy": [_run([0.5, a]) for a in (0.85, 0.84, 0.86)]}
    ledger = _ledger()
    assert claims.biased_and_noisy_slowest(ledger, slow, rounds=2) == rules.HOLDS
    assert ledger.rows[0].reference == pytest.approx([93.0, 92.0, 94.0])
    level = {c: [_run([0.5, a]) for a in v] for c, v in finals.items()} | \
        {"biased + noisy": [_run([0.5, a]) for a in (0.94, 0.91, 0.95)]}
    assert claims.biased_and_noisy_slowest(_ledger(), level, rounds=2) == rules.WITHIN
    assert claims.biased_and_noisy_slowest(_ledger(), None, rounds=2) == rules.MISSING


def test_notebook_08s_run_sets_are_its_packed_parts_and_the_earlier_reading_is_read_but_not_packed():
    """What the notebook reads at the paper profile is what scripts/paper_runs.py computes and packs: RUN_SETS are
    the packed parts themselves, and the lr decay's earlier reading (per round) is a part of its own, read but not
    a run set, with other keys than the protocol's."""
    from fedlib import papers

    assert fedprof.RUN_SETS == [p for p in fedprof.PARTS if p.packed]
    assert all(papers.RUN_SETS[p.name] is p for p in fedprof.RUN_SETS)
    per_round = fedprof.plans.TABLE3_PER_ROUND
    assert per_round.name not in papers.RUN_SETS and not per_round.packed
    protocol = {c.key() for c in fedprof.plans.TABLE3.configs("paper")}
    assert {c.key() for _, c in fedprof.plans.TABLE3.runs()} == protocol
    assert all(c.lr_decay_unit == "round" for c in per_round.configs("paper"))
    assert not {c.key() for c in per_round.configs("paper")} & protocol


def test_table_3_says_not_reached_in_words():
    """Table 3's stand-in showed 301.00 rounds to 95% where no seed reached it in 300 rounds (the censored value)."""
    from fedlib.papers.fedprof import figures

    assert figures._reached([_reaching(11), _reaching(11)], 0.9) == "not reached"
    assert figures._reached([_reaching(2), _reaching(4), _reaching(11)], 0.9) == "3.00 (2 of 3 seeds)"
    assert figures._reached([_reaching(2), _reaching(4)], 0.9) == 3.0


class _MadeUp:
    """A part's reading (`part.Read`) of made-up Results: key -> one Result per seed, None where a seed is missing."""

    def __init__(self, part, runs: dict, profile: str = "paper"):
        self.part, self.runs, self.profile = part, runs, profile

    @property
    def settings(self):
        return self.part.settings(self.profile)

    def __getitem__(self, key):
        return self.runs.get(key)

    def whole(self) -> bool:
        return bool(self.runs) and all(v is not None for v in self.runs.values())

    def all(self):
        return dict(self.runs) if self.whole() else None


def test_record_judges_notebook_08s_reads_with_the_first_whole_reading(tmp_path, monkeypatch):
    """`record(reads)` is notebook 08's one call (before: record(profile, shown, fig1), the notebook choosing the
    reading): on made-up Reads where only the per-round reading of Table 3 is whole, its claims read that one and say
    so, and Fig. 1's claim reads Fig. 1's part."""
    from fedlib.papers.fedprof import plans
    from fedlib.papers.part import Reads

    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path))
    kinds = ["clean", "clean", "irrelevant", "blur"]
    S = plans.PROFILES["paper"]
    faster = {"FedProf (full)": 2, "FedProf (partial)": 2, "FedAvg": 6, "FedAvg-RP": 6, "FedProx": 7}
    runs = {(C, lab): [_run([0.5] * (t - 1) + [0.99] * 3, kinds, selected=[[0, 1], [0, 1], [1, extra]])
                       for extra in (0, 1, 2)] for C in S.fractions for lab, t in faster.items()}
    conditions = {c: [_run([0.5, a]) for a in (0.97, 0.96, 0.97)] for c in ("original", "biased", "noisy")}
    conditions["biased + noisy"] = [_run([0.5, a]) for a in (0.85, 0.84, 0.86)]
    reads = Reads("paper", plans.NOTEBOOK, {
        plans.TABLE3.name: _MadeUp(plans.TABLE3, {key: None for key in runs}),  # the protocol's reading: missing
        plans.FIG1.name: _MadeUp(plans.FIG1, conditions), plans.ALPHA.name: _MadeUp(plans.ALPHA, {}),
        plans.TABLE3_PER_ROUND.name: _MadeUp(plans.TABLE3_PER_ROUND, runs)})
    ledger = claims.record(reads)
    table3 = [r for r in ledger.rows if r.part == "fedprof_table3"]
    assert len(table3) == 4 * len(S.fractions) + 2 and all("lr decay per round, the earlier reading" in r.claim
                                                        for r in table3)
    assert {r.verdict for r in table3 if "fewer rounds" in r.claim} == {rules.HOLDS}
    assert [r.verdict for r in ledger.rows if r.where == "Fig. 1"] == [rules.HOLDS]
    assert (tmp_path / "claims" / f"{plans.NOTEBOOK}_paper.csv").exists()
