"""FedLog's Fig. 1 claims (fedlib/papers/fedlog/fig1.py) on made-up accuracy arrays: holding, failing, within
noise, and with zero spread; the rival is the stronger other method, seed by seed."""
import numpy as np
import pytest

from fedlib import claims as rules
from fedlib.papers.fedlog import fig1

ITERS = [1, 5, 10]


def _acc(test: dict, gap: dict | None = None):
    """{method: {"train", "test"}} over 3 seeds and 3 iteration counts: each seed's test accuracy constant over the
    counts, train = test + that method's gap."""
    out = {}
    for m, per_seed in test.items():
        t = np.repeat(np.asarray(per_seed, float)[:, None], len(ITERS), axis=1)
        out[m] = {"test": t, "train": t + np.asarray((gap or {}).get(m, [0.0, 0.0, 0.0]))[:, None]}
    return out


@pytest.mark.parametrize("fedlog, verdict", [([0.95, 0.96, 0.94], rules.HOLDS), ([0.80, 0.81, 0.79], rules.FAILS),
                                             ([0.91, 0.88, 0.90], rules.WITHIN)])
def test_most_accurate_after_one_round(fedlog, verdict):
    ledger = rules.ClaimsLedger("01_test", "quick")
    acc = _acc({"fedlog": fedlog, "lg_fedavg": [0.90, 0.89, 0.88], "fedproto": [0.89, 0.90, 0.89]})
    assert fig1.most_accurate_after_one_round(ledger, acc) == verdict
    assert "against FedProto" in ledger.rows[0].claim  # the stronger rival over the seeds (268 against 267)


def test_overfits_least_with_zero_spread_is_said():
    ledger = rules.ClaimsLedger("01_test", "quick")
    acc = _acc({"fedlog": [0.9] * 3, "lg_fedavg": [0.9] * 3, "fedproto": [0.9] * 3},
               gap={"fedlog": [0.01] * 3, "lg_fedavg": [0.05] * 3, "fedproto": [0.04] * 3})
    assert fig1.overfits_least(ledger, acc, ITERS) == rules.HOLDS
    assert "spread" in ledger.rows[0].note and "against FedProto" in ledger.rows[0].claim


def test_the_summary_names_the_highest():
    acc = _acc({"fedlog": [0.95] * 3, "lg_fedavg": [0.9] * 3, "fedproto": [0.9] * 3})
    assert fig1.summary(acc, ITERS).splitlines()[-1].endswith("FedLog")
