import pytest
import torch

from fedlib import experiments as ex
from fedlib.messages import Ledger, Message
from fedlib.papers import fedlog


def _one_round_bits(method, rounds=1, **kw):
    cfg = fedlog.paper_config("mnist", method, rounds=rounds, local_epochs=1, **kw)
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


MODEL = 21840  # the MNIST CNN: conv1 260, conv2 5020, fc1 16050, fc2 510
CONV, FC1, FC2 = 260 + 5020, 16050, 510


@pytest.mark.parametrize("method,options,shared", [
    ("fedper", {}, CONV),  # the last two layers stay local
    ("fedrep", {}, CONV + FC1),  # FedRep 1: the head is local
    ("fedrep", {"local_layers": 2}, CONV),  # FedRep 2
    ("fedbabu", {}, CONV + FC1),  # the body is averaged, the fixed head never travels
])
def test_partial_averaging_sends_exactly_the_shared_layers(method, options, shared):
    up, down = _one_round_bits(method, options=options)
    assert up == [50 * shared * 32] and down == [50 * shared * 32]


def test_csfl_sends_compressed_measurements_both_ways():
    up, down = _one_round_bits("csfl", rounds=2)
    measurements = 22 * 100  # 21840 parameters in 22 blocks of 1000, 10% as many measurements per block
    assert up == [50 * measurements * 32] * 2
    assert down == [0, 50 * measurements * 32]


def test_feddbe_sends_the_mean_representation_once_then_the_model():
    # round 0 is the authors' initialisation period: means and counts up, nothing down; g goes down in round 1
    up, down = _one_round_bits("feddbe", rounds=3)
    assert up == [50 * (50 + 1) * 32, 50 * (MODEL + 1) * 32, 50 * (MODEL + 1) * 32]  # + n_c: count-weighted average
    assert down == [0, 50 * (MODEL + 50) * 32, 50 * MODEL * 32]
