"""FedDM: clients send synthetic sets (counted by the ledger), the server trains the global model on them."""
import torch

from fedlib import experiments as ex
from fedlib.config import Config
from fedlib.messages import Ledger
from fedlib.rounds import run_round


def _config(**options):
    return Config(method="feddm", dataset="fashion_mnist", model="convnet8", partition="dirichlet", dirichlet_alpha=0.1,
                  n_clients=3, train_fraction=0.01, pool_split=0.8, rounds=1, optimizer="adam", lr=0.01,
                  batch_size=16, local_epochs=1,
                  options=dict(dict(dpc=2, iterations=2, real_batch=8, server_epochs=1, server_batch=16), **options))


def test_with_no_matching_step_the_clients_send_their_chosen_real_samples_and_the_ledger_counts_them():
    ctx, alg = ex.setup(_config(iterations=0))
    down = alg.configure(0)
    reply = alg.client_update(0, down)
    S, present = reply.up["S"], reply.up.present["S"]
    train = ctx.fed.train
    for i in range(3):
        own = train.x[i, :int(train.counts[i])]
        for c in range(10):
            held = bool((train.y[i, :int(train.counts[i])] == c).any())
            assert bool(present[i, c]) == held
            if held:
                for s in S[i, c]:  # every synthetic sample is one of the client's real samples of class c
                    match = (own == s).flatten(1).all(1)
                    assert bool(match.any()) and bool((train.y[i, :int(train.counts[i])][match] == c).all())
    ledger = Ledger()
    run_round(alg, 0, ledger)
    per_sample = 1 * 28 * 28
    assert ledger.up[0] == 32 * int(present.sum()) * (2 * per_sample + 1)  # dpc samples and one label per class
    model_size = sum(v[0].numel() for v in ctx.population.groups[0].params.values())
    assert ledger.down[0] == 32 * 3 * model_size


def test_matching_moves_the_synthetic_samples_and_every_client_ends_with_the_global_model():
    ctx, alg = ex.setup(_config())
    before = alg.client_update(0, alg.configure(0)).up["S"]
    ctx0, alg0 = ex.setup(_config(iterations=0))
    real = alg0.client_update(0, alg0.configure(0)).up["S"]
    assert not torch.equal(before, real)
    ledger = Ledger()
    run_round(alg, 0, ledger)
    for v in ctx.population.groups[0].params.values():
        assert bool((v == v[0]).all())
