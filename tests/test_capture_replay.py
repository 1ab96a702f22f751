"""Config.capture_steps (issue 71): a local step recorded once and replayed. On a GPU the replay is a CUDA graph;
here the same step runs eagerly through the same static buffers, so these tests check everything around the graph:
which trains capture, that a replayed step reads each new batch from its buffers and gives the plain step's numbers
bit for bit, that the keys of runs without it stay, and that a step whose state moves is refused."""
import dataclasses

import pytest
import torch

from fedlib import engine
from fedlib import experiments as ex
from fedlib.papers import fedlog

pytestmark = pytest.mark.skipif(not ex.dataset_available("mnist"), reason="MNIST is fetched by the test command")


def _config(method="fedavg", **overrides):
    return fedlog.paper_config("mnist", method, n_clients=4, train_fraction=0.01, rounds=2, local_epochs=2, seed=0,
                               **overrides)


@pytest.mark.parametrize("method,overrides", [("fedavg", {}), ("fedavg", {"augment": True}),
                                              ("fedprox", {"options": {"mu": 0.01}}),
                                              ("fedavg", {"optimizer": "adam", "lr": 1e-3}),
                                              ("fedavg", {"fast_engine": True, "drop_last": True}),
                                              ("fedlog", {}), ("fedlog_c", {})])
def test_replayed_steps_give_the_plain_steps_numbers_bit_for_bit(monkeypatch, method, overrides):
    """Every replay refills the static batch buffers (a replay that read the first batch again would differ)."""
    replays = []
    real_call = engine.StepGraph.__call__

    def counted(self, ids, ok):
        replays.append(ids.clone())
        return real_call(self, ids, ok)

    monkeypatch.setattr(engine.StepGraph, "__call__", counted)
    plain = ex.run(_config(method, **overrides), cache=False, progress=False)
    assert not replays
    captured = ex.run(_config(method, capture_steps=True, **overrides), cache=False, progress=False)
    assert len(replays) > 4 and not all(torch.equal(replays[0], r) for r in replays[1:])
    numbers = lambda r: {k: v for k, v in r["rounds"].items() if k != "seconds"}  # noqa: E731  (wall time differs)
    assert numbers(captured) == numbers(plain) and "acc_mean" in numbers(plain)


def test_capture_keeps_the_keys_of_runs_without_it_and_names_its_own():
    cfg = _config()
    assert dataclasses.replace(cfg, capture_steps=False).key() == cfg.key()
    assert dataclasses.replace(cfg, capture_steps=True).key() != cfg.key()


def test_only_trains_whose_state_stays_put_are_captured():
    group = type("G", (), {"buffers": {}})()
    rowwise = engine.default_loss
    assert engine.capturable(group, rowwise, "sgd", {}, False, None)
    assert engine.capturable(group, rowwise, "adam", {}, False, None)
    assert not engine.capturable(group, rowwise, "sgd", {"momentum": 0.9}, False, None)  # its buffers are made anew
    assert not engine.capturable(group, rowwise, "sgd", {}, True, None)  # the convergence test reads the host
    assert not engine.capturable(group, rowwise, "sgd", {}, False, print)  # on_step sees every step
    assert not engine.capturable(group, lambda *a: None, "sgd", {}, False, None)  # a loss with state of its own
    assert not engine.capturable(type("G", (), {"buffers": {"bn": 1}})(), rowwise, "sgd", {}, False, None)


def test_a_replayed_step_whose_optimizer_state_moved_is_refused():
    opt = engine.Adam({"w": torch.zeros(2, 3)}, lr=0.1)

    def step(ids, ok):
        opt.m[0] = torch.zeros(2, 3)  # state made anew: a graph would go on writing the old buffer
        return ids.float()

    replay = engine.StepGraph(step, torch.zeros(2, 4, dtype=torch.long), torch.ones(2, 4, dtype=torch.bool),
                              [(opt, ["w"])])
    with pytest.raises(RuntimeError, match="capture_steps cannot be used"):
        replay(torch.ones(2, 4, dtype=torch.long), torch.ones(2, 4, dtype=torch.bool))
