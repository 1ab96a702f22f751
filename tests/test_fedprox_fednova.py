"""FedProx and FedNova (FedRD's and FedProf's baselines) against their definitions."""
import pytest
import torch

from fedlib import experiments as ex
from fedlib.algorithms.fednova import local_norm
from fedlib.papers.fedrd.analysis import quadratic_toy, toy_fixed_point
from fedlib.messages import Ledger
from fedlib.papers import fedlog
from fedlib.rounds import run_round


def _config(method, **kw):
    base = dict(model="cnn_mnist_nodrop", n_clients=4, train_fraction=0.01, rounds=2, local_epochs=1,
                optimizer="sgd", lr=0.05)
    return fedlog.paper_config("mnist", method, **{**base, **kw})


def _rounds(cfg, n=2):
    ctx, alg = ex.setup(cfg)
    ledger = Ledger()
    for rnd in range(n):
        run_round(alg, rnd, ledger)
    return ctx, alg, ledger


def test_fedprox_with_mu_0_is_weighted_fedavg_bit_for_bit():
    _, prox, prox_ledger = _rounds(_config("fedprox", options={"mu": 0.0}))
    _, avg, avg_ledger = _rounds(_config("fedavg", options={"weighted": True}))
    for k, v in avg.global_params.items():
        assert torch.equal(prox.global_params[k], v), k
    assert prox_ledger.up == avg_ledger.up and prox_ledger.down == avg_ledger.down


def test_the_proximal_term_keeps_clients_nearer_the_model_they_downloaded():
    distances = []
    for mu in (0.0, 0.1, 1.0, 10.0):
        ctx, alg = ex.setup(_config("fedprox", options={"mu": mu}, lr=0.02))
        start = dict(alg.global_params)  # w^t, what round 0 sends
        alg.client_update(0, alg.configure(0))
        group = ctx.population.groups[0]
        distances.append(float(sum(((group.params[k] - start[k]) ** 2).flatten(1).sum(1) for k in start)
                               .sqrt().mean()))
    assert all(a > b for a, b in zip(distances, distances[1:])), distances


def test_fednova_with_equal_local_steps_is_sample_weighted_fedavg():
    nova_ctx, nova, _ = _rounds(_config("fednova", batch_size=64))
    steps = (nova_ctx.fed.train.counts + 63) // 64
    assert bool((steps == steps[0]).all()) and len(set(nova_ctx.fed.train.counts.tolist())) > 1  # unequal sizes
    _, avg, _ = _rounds(_config("fedavg", options={"weighted": True}, batch_size=64))
    for k, v in avg.global_params.items():
        assert torch.allclose(nova.global_params[k], v, rtol=1e-5, atol=1e-6), k


def test_fednova_sends_its_update_with_two_numbers_more_than_weighted_fedavg():
    _, _, nova = _rounds(_config("fednova"))
    _, _, avg = _rounds(_config("fedavg", options={"weighted": True}))
    assert [u - a for u, a in zip(nova.up, avg.up)] == [4 * 32] * 2 and nova.down == avg.down


def test_the_normalisers_match_fednovas_closed_forms():
    for tau in range(1, 51):
        assert local_norm(tau, 0.1) == tau
        rho = 0.9
        assert local_norm(tau, 0.1, momentum=rho) == pytest.approx((tau - rho * (1 - rho ** tau) / (1 - rho))
                                                                   / (1 - rho), rel=1e-12)
        eta, mu = 0.05, 0.3
        assert local_norm(tau, eta, mu=mu) == pytest.approx((1 - (1 - eta * mu) ** tau) / (eta * mu), rel=1e-12)


def test_fednova_refuses_adam():
    with pytest.raises(ValueError, match="optimizer to 'sgd'"):
        _config("fednova", optimizer="adam")


def test_the_quadratic_toy_biases_fedavg_by_tau_and_fednova_only_to_first_order():
    centers, taus, eta = torch.eye(3, dtype=torch.float64), [1, 5, 20], 0.01
    c = torch.tensor([1 - (1 - eta) ** t for t in taus], dtype=torch.float64)
    fedavg = quadratic_toy(centers, taus, eta, 2000, normalize=False)[-1]
    fednova = quadratic_toy(centers, taus, eta, 2000, normalize=True)[-1]
    assert torch.allclose(fedavg, c / c.sum(), atol=1e-6)  # the closed-form fixed points
    w = c / torch.tensor(taus, dtype=torch.float64)
    assert torch.allclose(fednova, w / w.sum(), atol=1e-6)
    for normalize, path in ((False, fedavg), (True, fednova)):
        assert torch.allclose(toy_fixed_point(centers, taus, eta, normalize), path, atol=1e-6)
    truth = centers.mean(0)
    assert float((fedavg - truth).norm()) > 0.3
    assert float((fednova - truth).norm()) < eta * max(taus)  # first order in eta
    smaller = quadratic_toy(centers, taus, eta / 10, 20000, normalize=True)[-1]
    assert float((smaller - truth).norm()) < float((fednova - truth).norm()) / 5  # and shrinking with eta
