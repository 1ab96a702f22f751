import pytest
import torch

from fedlib import experiments as ex
from fedlib.messages import Ledger, Message


def _one_round_bits(method, rounds=1, **kw):
    cfg = ex.paper_config("mnist", method, rounds=rounds, local_epochs=1, **kw)
    res = ex.run(cfg, cache=False, progress=False)
    return res["rounds"]["up_bits"], res["rounds"]["down_bits"]


def test_fedavg_on_the_mnist_cnn_sends_the_whole_model_both_ways():
    up, down = _one_round_bits("fedavg")
    assert up == [50 * 21840 * 32] and down == [50 * 21840 * 32]


def test_fedlog_sends_statistics_and_count_up_and_the_head_down():
    up, down = _one_round_bits("fedlog")
    assert up == [50 * (10 * 51 + 1) * 32]
    assert down == [50 * 10 * 51 * 32]


def test_fedlog_c_broadcasts_the_aggregated_statistic_of_the_same_size():
    up, down = _one_round_bits("fedlog_c", rounds=2)
    assert up == [50 * 511 * 32] * 2 and down == [50 * 510 * 32] * 2


def test_lg_fedavg_shares_one_or_two_layers():
    assert _one_round_bits("lg_fedavg") == ([50 * 510 * 32], [50 * 510 * 32])
    two = _one_round_bits("lg_fedavg", options={"global_layers": 2})
    assert two == ([50 * (510 + 16050) * 32], [50 * (510 + 16050) * 32])


def test_fedproto_sends_prototypes_of_own_classes_only():
    up, down = _one_round_bits("fedproto", rounds=2)
    per_client_up = 2 * (50 + 1) * 32  # 2 classes: a 50-d prototype and its label each
    assert up == [50 * per_client_up] * 2
    assert down == [0, 50 * 10 * (50 + 1) * 32]  # nothing before the first aggregation


def test_message_counting():
    up = Message.up({"a": torch.zeros(3, 4, 5)}, [0, 1, 2])
    assert up.numbers() == 60 and up.bits() == 60 * 32
    down = Message.down({"a": torch.zeros(4, 5)}, [0, 1, 2])
    assert down.numbers() == 60
    sparse = Message.up({"p": torch.zeros(3, 4, 5)}, [0, 1, 2], present={"p": torch.tensor([[1, 0, 0, 1]] * 3).bool()})
    assert sparse.numbers() == 3 * 2 * 5
    half = Message.up({"a": torch.zeros(2, 10)}, [0, 1], bits_per_number=16)
    assert half.bits() == 20 * 16
    ledger = Ledger()
    ledger.new_round()
    ledger.record(up)
    ledger.record(down)
    assert (ledger.up, ledger.down, ledger.total()) == ([60 * 32], [60 * 32], 120 * 32)
    with pytest.raises(ValueError):
        ledger.record(Message("sideways", {}, torch.tensor([0])))
