"""The Result type: the cached JSON unchanged, read through named accessors."""
import json
import math
import pickle

import numpy as np
import pytest

from fedlib import experiments as ex
from fedlib.papers import fedlog
from fedlib.result import MB, Result, compare


def _raw(final=None, extra=None, participants=None):
    rounds = {"acc_mean": [0.5, 0.8, 0.7], "acc_all": [0.4, 0.9, 0.6], "up_bits": [100, 100, 50],
              "down_bits": [10, 10, 10]}
    if participants:
        rounds["participants"] = participants
    r = {"config": {"n_clients": 4, "method": "fedavg"}, "rounds": rounds}
    if final:
        r["final"] = final
    if extra:
        r["extra"] = extra
    return r


def test_accessors_read_the_layout():
    r = Result(_raw())
    assert r.n_rounds == 3 and r.best() == 0.8 and r.last() == 0.7 and r.best("acc_all") == 0.9
    assert r.final() == 0.7 and not r.finetuned  # no fine-tune: the last round
    assert np.array_equal(r.curve(), [0.5, 0.8, 0.7]) and r.total_bits() == 280 and isinstance(r.total_bits(), int)
    assert np.allclose(r.uplink_mb(), np.cumsum([100, 100, 50]) / MB / 4)
    assert r.participants == [[0, 1, 2, 3]] * 3 and r.client_kinds == []
    with pytest.raises(KeyError, match="recorded no 'div'"):
        r.record("div")
    with pytest.raises(KeyError, match="no per-round 'accuracy'"):
        r.curve("accuracy")


def test_final_is_after_the_fine_tune_and_records_and_participants_are_read():
    r = Result(_raw(final={"acc_mean": 0.9}, extra={"div": [[1.0]]}, participants=[[0], [1], [2]]))
    assert r.final() == 0.9 and r.last() == 0.7 and r.finetuned
    assert r.has_record("div") and r.record("div") == [[1.0]] and r.participants == [[0], [1], [2]]


def test_a_result_is_still_the_dict_the_cache_holds():
    raw = _raw(final={"acc_mean": 0.9})
    r = Result(raw)
    assert json.dumps(r, sort_keys=True) == json.dumps(raw, sort_keys=True) and r == raw
    assert pickle.loads(pickle.dumps(r)).best() == 0.8  # the worker pool sends them back pickled


def test_run_and_first_rounds_return_results(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path))
    cfg = fedlog.paper_config("mnist", "fedavg", model="cnn_mnist_nodrop", n_clients=3, train_fraction=0.01, rounds=2,
                              local_epochs=1)
    r = ex.run(cfg, progress=False)
    again = ex.run(cfg, progress=False)  # from the cache
    assert isinstance(r, Result) and isinstance(again, Result) and again.curve().tolist() == r.curve().tolist()
    assert isinstance(ex.first_rounds(r, 1), Result) and ex.first_rounds(r, 1).n_rounds == 1


def test_compare_puts_ours_beside_the_paper_and_marks_missing_columns():
    runs = {"A": [Result(_raw()), Result(_raw(final={"acc_mean": 0.9}))]}
    rows = compare(runs, {"A": (80.0, 1.0)}, keys=dict(dataset="x"),
                   missing=[dict(dataset="cifar10")])
    a, gone = rows
    assert a["dataset"] == "x" and a["method"] == "A" and a["seeds"] == 2 and a["rounds"] == 3
    assert math.isclose(a["final_mean"], 80.0) and math.isclose(a["final_se"], 10.0)  # 70 and 90
    assert a["paper_accuracy"] == 80.0 and a["paper_std"] == 1.0 and math.isclose(a["best_round_mean"], 80.0)
    assert gone["method"] == "(all)" and math.isnan(gone["final_mean"]) and gone["seeds"] == 0
    last = compare(runs, {"B": 1.0}, quantity=Result.last)[0]  # a paper without this row: NaN, never a number
    assert math.isclose(last["final_mean"], 70.0) and math.isnan(last["paper_accuracy"]) and "paper_std" not in last
    assert compare(runs, {"a": 1.0}, paper_name=str.lower)[0]["paper_accuracy"] == 1.0
    one = compare({"A": [Result(_raw())]}, {"A": 80.0})[0]  # one seed: no standard error (before: 0.0)
    assert one["seeds"] == 1 and math.isnan(one["final_se"])


def test_a_stored_run_whose_config_keeps_an_ignored_field_is_checked_without_a_warning_no_reader_caused():
    # before: `paper_runs.py fedcr_table2_n2 --list` printed "Config.classes_per_client=5 has no effect" for every
    # shipped n2 run, although n2 keeps that field only for its keys and fedcr.config silences it when it builds one
    import dataclasses
    import warnings

    from fedlib.papers import fedcr
    from fedlib.result import not_servable

    cfg = fedcr.config("fashion_mnist", "FedAvg", "n2", seed=0, rounds=1, width=8, dim=2)
    stored = {"config": dataclasses.asdict(cfg), "rounds": {"acc_mean": [0.5]}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not_servable(stored, cfg.key()) is None
        ex.setup(cfg)  # checked again before it runs, as quietly
    assert "is that of run" in not_servable(stored, "0" * 16)  # the check itself still runs
    with pytest.warns(UserWarning, match="classes_per_client=3 has no effect"):  # one a reader sets still warns
        fedcr.config("fashion_mnist", "FedAvg", "n2", seed=0, rounds=1, width=8, dim=2, classes=3)


@pytest.mark.parametrize("bits, served", [([32, 64], True), ([32.5, 64], False), ([32, -1], False),
                                          ([True, 64], False), (["32", 64], False)])
def test_a_stored_run_is_served_only_with_whole_bit_counts_per_round(bits, served):
    """Bits per round are the ledger's count of whole bits: a stored run whose up_bits hold a fraction, a negative
    number, a boolean or a string is another run's or an altered file, and is not served (before, it was)."""
    import dataclasses

    from fedlib.papers import fedcr
    from fedlib.result import not_servable

    cfg = fedcr.config("fashion_mnist", "FedAvg", "n1", seed=0, rounds=2, width=8, dim=2)
    stored = {"config": dataclasses.asdict(cfg), "rounds": {"acc_mean": [0.5, 0.6], "up_bits": bits,
                                                             "down_bits": [32, 32]}}
    why = not_servable(stored, cfg.key())
    assert (why is None) == served, why
    if not served:
        assert why == "its up_bits is not a count of bits per round (whole numbers, none negative)"
