"""Ditto: the global model is FedAvg's, the personal one is pulled towards the global model it received."""
import torch

from fedlib import experiments as ex
from fedlib.messages import Ledger
from fedlib.papers import fedlog
from fedlib.rounds import run_round


def _setup(lam, **kw):
    return ex.setup(fedlog.paper_config("mnist", "ditto", model="cnn_mnist_nodrop", n_clients=4, train_fraction=0.01,
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
    fed_ctx, fedavg = ex.setup(fedlog.paper_config("mnist", "fedavg", model="cnn_mnist_nodrop", n_clients=4,
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


def test_the_final_round_reaches_every_client_and_passes_the_ledger():
    # before: a final fine-tune was refused, so with partial participation a client never drawn kept an untrained
    # personal model (9 of 100 clients in the quick profile)
    cfg = fedlog.paper_config("mnist", "ditto", model="cnn_mnist_nodrop", n_clients=6, train_fraction=0.01, rounds=1,
                             local_epochs=1, participation=0.5, final_finetune_epochs=2, optimizer="sgd", lr=0.05)
    ctx, alg = ex.setup(cfg)
    start = {k: v.clone() for k, v in ctx.population.groups[0].params.items()}
    ledger = Ledger()
    first = run_round(alg, 0, ledger)
    assert len(first.participants) == 3
    never = [c for c in range(6) if c not in first.participants.tolist()]
    g = ctx.population.groups[0]
    assert all(torch.equal(g.params["head.weight"][c], start["head.weight"][c]) for c in never)
    final = ex.final_finetune(cfg, ctx, alg, ledger)
    assert all(not torch.equal(g.params["head.weight"][c], start["head.weight"][c]) for c in never)
    model_bits = sum(v.numel() for v in alg.global_params.values()) * 32
    assert final["up_bits"] == ledger.up[-1] == 6 * model_bits and final["down_bits"] == 6 * model_bits
    res = ex.run(cfg, cache=False, progress=False)
    assert res["final"]["up_bits"] == 6 * model_bits and len(res["rounds"]["up_bits"]) == 1


def test_the_final_round_trains_the_final_fine_tunes_epochs():
    cfg = fedlog.paper_config("mnist", "ditto", model="cnn_mnist_nodrop", n_clients=4, train_fraction=0.01, rounds=1,
                             local_epochs=1, final_finetune_epochs=3)
    ctx, alg = ex.setup(cfg)
    seen = []
    real = ctx.train
    ctx.train = lambda *a, **kw: (seen.append(a[5] if len(a) > 5 else kw.get("epochs")), real(*a, **kw))[1]
    alg.ctx, alg.global_ctx.train = ctx, ctx.train
    ledger = Ledger()
    run_round(alg, 0, ledger)
    ex.final_finetune(cfg, ctx, alg, ledger)
    assert seen[:2] == [None, None] and seen[2:] == [3, 3]
