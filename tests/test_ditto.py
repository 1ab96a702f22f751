"""Ditto: the global model is FedAvg's, the personal one is pulled towards the global model it received."""
import pytest
import torch

from fedlib import experiments as ex
from fedlib import paper
from fedlib.messages import Ledger
from fedlib.rounds import run_round


def _setup(lam, **kw):
    return ex.setup(paper.paper_config("mnist", "ditto", model="cnn_mnist_nodrop", n_clients=4, train_fraction=0.01,
                                       rounds=2, local_epochs=1, options={"lam": lam}, **kw))


def test_with_no_proximal_weight_the_personal_models_are_local_training_alone():
    ctx, alg = _setup(0.0)
    group, data = ctx.groups[0]
    alone = group.subset(torch.arange(group.n))  # a copy of the starting models
    ledger = Ledger()
    for rnd in range(2):
        run_round(alg, rnd, ledger)
        ctx.train(alone, data, rnd, list(alone.params), stream=1)
    for k in group.params:
        assert torch.equal(group.params[k], alone.params[k]), k


def test_the_global_model_is_fedavgs_and_only_it_is_sent():
    ctx, alg = _setup(1.0)
    fed_ctx, fedavg = ex.setup(paper.paper_config("mnist", "fedavg", model="cnn_mnist_nodrop", n_clients=4,
                                                  train_fraction=0.01, rounds=2, local_epochs=1))
    ledger, fed_ledger = Ledger(), Ledger()
    for rnd in range(2):
        run_round(alg, rnd, ledger)
        run_round(fedavg, rnd, fed_ledger)
    for k in alg.global_params:
        assert torch.allclose(alg.global_params[k], fedavg.global_params[k], atol=1e-6), k
    assert ledger.up == fed_ledger.up and ledger.down == fed_ledger.down


def test_a_larger_proximal_weight_keeps_the_personal_model_nearer_the_global_one():
    distance = {}
    for lam in (0.0, 2.0):
        ctx, alg = _setup(lam)
        run_round(alg, 0, Ledger())
        pop = ctx.population
        distance[lam] = sum(float(((pop.gather(k) - alg.received[k]) ** 2).sum()) for k in alg.names)
    assert distance[2.0] < distance[0.0]


def test_a_final_fine_tune_is_refused_before_any_round(monkeypatch):
    monkeypatch.setattr(ex, "run_round", lambda *a: (_ for _ in ()).throw(AssertionError("a round ran")))
    with pytest.raises(ValueError, match="ditto.*no final fine-tune"):
        ex.run(paper.paper_config("mnist", "ditto", model="cnn_mnist_nodrop", n_clients=4, train_fraction=0.01,
                                  rounds=2, local_epochs=1, final_finetune_epochs=1), cache=False, progress=False)
