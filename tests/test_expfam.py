import numpy as np
import pytest
import torch
from scipy.special import lambertw

from fedlib import expfam as ef


def _stats(C=4, m=5, n=60, seed=0, scale=1.5):
    g = torch.Generator().manual_seed(seed)
    phi = torch.randn(n, m - 1, generator=g, dtype=torch.float64) * scale + 0.5
    y = torch.randint(0, C, (n,), generator=g)
    return phi, y


@pytest.mark.parametrize("m", [1, 2])
def test_log_partition_matches_numerical_integration(m):
    eta = np.random.default_rng(m).normal(size=(3, m)) * 1.5
    assert ef.log_partition(torch.tensor(eta)).item() == pytest.approx(ef.log_partition_numeric(eta), rel=1e-8)



def log_posterior_grad(eta, T, n, chi=0.0, nu: float = 1.0):
    """The gradient of Eqs. 11-12 in closed form: S - N p eta / 2."""
    p = torch.softmax((eta ** 2).sum(-1) / 4, dim=-1)
    return (T + chi) - (nu + n) * p.unsqueeze(-1) * eta / 2

def test_sufficient_statistics_is_the_kronecker_sum():
    phi, y = _stats()
    T = ef.sufficient_statistics(phi, y, 4)
    explicit = sum(torch.kron(torch.nn.functional.one_hot(y[i], 4).double(), torch.cat([torch.ones(1), phi[i]]))
                   for i in range(len(y))).view(4, 5)
    assert torch.allclose(T, explicit)
    assert T[:, 0].tolist() == torch.bincount(y, minlength=4).double().tolist()


@pytest.mark.parametrize("seed,scale", [(0, 1.0), (1, 3.0), (2, 10.0)])
def test_gradient_vanishes_at_the_map(seed, scale):
    phi, y = _stats(seed=seed, scale=scale)
    T, n = ef.sufficient_statistics(phi, y, 4), len(y)
    eta = ef.map_head(T, n)
    grad = log_posterior_grad(eta, T, n)
    assert grad.norm() < 1e-8 * T.norm()
    # and it is the maximum: random perturbations only lower the objective
    best = ef.log_posterior(eta, T, n)
    for _ in range(20):
        assert ef.log_posterior(eta + 0.01 * torch.randn_like(eta), T, n) < best


def test_objective_is_concave_along_random_lines():
    phi, y = _stats()
    T, n = ef.sufficient_statistics(phi, y, 4), len(y)
    for _ in range(20):
        a, d = torch.randn(4, 5, dtype=torch.float64) * 3, torch.randn(4, 5, dtype=torch.float64)
        f = [ef.log_posterior(a + t * d, T, n) for t in (-0.1, 0.0, 0.1)]
        assert f[0] + f[2] - 2 * f[1] <= 1e-9


def test_gradient_ascent_reaches_the_exact_map():
    phi, y = _stats()
    T, n = ef.sufficient_statistics(phi, y, 4), len(y)
    exact = ef.map_head(T, n)
    ascent = ef.map_head_gradient(T, n, torch.zeros(4, 5, dtype=torch.float64), lr=0.01, steps=4000)
    assert torch.allclose(ascent, exact, atol=1e-3)


def test_summed_client_statistics_give_the_pooled_posterior():
    phi, y = _stats(n=90)
    pooled = ef.sufficient_statistics(phi, y, 4)
    clients = [ef.sufficient_statistics(phi[i:i + 30], y[i:i + 30], 4) for i in (0, 30, 60)]
    summed = sum(clients)
    assert torch.allclose(summed, pooled)
    assert torch.allclose(ef.map_head(summed, 90), ef.map_head(pooled, 90))
    eta = torch.randn(4, 5, dtype=torch.float64)
    assert torch.allclose(ef.log_posterior(eta, summed, 90), ef.log_posterior(eta, pooled, 90))


def test_prior_enters_as_pseudo_statistics():
    phi, y = _stats()
    T, n = ef.sufficient_statistics(phi, y, 4), len(y)
    chi = torch.full_like(T, 0.3)
    assert torch.allclose(ef.map_head(T, n, chi=chi, nu=3.0), ef.map_head(T + chi, n + 2.0, nu=1.0))


def test_head_round_trip_and_empty_classes():
    eta = torch.randn(3, 4)
    assert torch.equal(ef.head_to_eta(*ef.eta_to_head(eta)), eta)
    T = torch.zeros(3, 4, dtype=torch.float64)
    T[0] = torch.tensor([5.0, 1.0, 2.0, 3.0])
    eta = ef.map_head(T, 5)
    assert torch.isfinite(eta).all() and torch.all(eta[1:] == 0)
    with pytest.raises(ValueError, match="positive"):
        ef.map_head(T, -1.0, nu=0.0)


def test_lambert_w_in_log_space():
    lz = np.array([-40.0, -2.0, 0.0, 3.0, 50.0])
    assert np.allclose(ef.lambertw_of_exp(lz), np.real(lambertw(np.exp(lz))), rtol=1e-12)
    assert ef.lambertw_of_exp(np.array([-np.inf]))[0] == 0.0
    big = ef.lambertw_of_exp(np.array([5000.0]))[0]
    assert big + np.log(big) == pytest.approx(5000.0)


def test_classes_nobody_holds_get_exact_zero_rows_with_large_statistics():
    # the audit's case, and a realistic one: 8 of 10 MNIST classes held, 300 samples each, trained features
    # of scale ~30 (L far above 745, where exp(-L) underflows and the old 2S/(N p) gave 0/0 = NaN rows)
    S = torch.zeros(3, 5, dtype=torch.float64)
    S[0], S[2] = torch.tensor([100.0, 3000, 0, 0, 0]), torch.tensor([100.0, -3000, 0, 0, 0])
    eta = ef.map_head(S, 200)
    assert torch.isfinite(eta).all() and torch.all(eta[1] == 0)
    g = torch.Generator().manual_seed(0)
    phi = torch.randn(2400, 50, generator=g, dtype=torch.float64) * 5 + 30
    y = torch.arange(2400) % 8  # classes 8 and 9 have no sample
    T = ef.sufficient_statistics(phi, y, 10)
    eta = ef.map_head(T, 2400)
    assert torch.isfinite(eta).all()
    assert torch.all(eta[8:] == 0) and torch.all(eta[:8].norm(dim=1) > 0)
    assert log_posterior_grad(eta, T, 2400).norm() < 1e-5 * T.norm()  # still the maximum (to bisection tolerance)
