import math

import pytest
import torch

from fedlib import data, engine, expfam, models, privacy
from fedlib import experiments as ex
from fedlib.papers import fedlog


def test_sigma_of_thm7_against_hand_computed_values():
    # sigma = sqrt(8 k (1 + (m-1) b^2) ln(e + eps/delta)) / eps
    # eps=1, delta=0.01, m=51, b=2, k=100: 8*100*201*ln(e+100) = 160800 * 4.63205... -> sqrt / 1
    assert privacy.sigma_thm7(1.0, 0.01, 51, 2.0, 100) == pytest.approx(math.sqrt(160800 * math.log(math.e + 100)))
    assert privacy.sigma_thm7(1.0, 0.01, 51, 2.0, 100) == pytest.approx(863.03, abs=0.01)
    # eps=0.5, delta=0.01, m=3, b=1, k=1: sqrt(8 * 3 * ln(e + 50)) / 0.5 = sqrt(95.155) / 0.5
    assert privacy.sigma_thm7(0.5, 0.01, 3, 1.0, 1) == pytest.approx(19.51, abs=0.01)
    assert privacy.sensitivity(51, 2.0) == pytest.approx(math.sqrt(201))


def test_bad_privacy_parameters_are_refused():
    for bad in [dict(epsilon=0.0), dict(epsilon=-1.0), dict(delta=0.0), dict(delta=1.0), dict(b=0.0), dict(k=0)]:
        args = {**dict(epsilon=1.0, delta=0.01, m=5, b=2.0, k=3), **bad}
        with pytest.raises(ValueError):
            privacy.sigma_thm7(**args)
    with pytest.raises(ValueError, match="accountant"):
        privacy.noise_sigma(1.0, 0.01, 5, 2.0, 3, accountant="moments")
    with pytest.raises(ValueError, match="dp must be"):
        ex.setup(fedlog.paper_config("mnist", "fedlog", n_clients=4, train_fraction=0.01, options={"dp": "global"}))


def test_tighter_accountant_gives_smaller_sigma_that_still_meets_the_budget():
    for eps in (0.5, 5.0):
        loose = privacy.sigma_thm7(eps, 0.01, 51, 2.0, 10)
        tight = privacy.sigma_tight(eps, 0.01, 51, 2.0, 10, accountant="rdp")
        assert tight < loose
        z = tight / privacy.sensitivity(51, 2.0)
        assert privacy._epsilon_of(z, 0.01, 10, "rdp") <= eps
        assert privacy._epsilon_of(z * 0.99, 0.01, 10, "rdp") > eps  # and it is the smallest such sigma


def test_clipped_statistics_never_exceed_the_sensitivity():
    torch.manual_seed(0)
    model = models.cnn_mnist()
    model.body.append(models.Clip(2.0))
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(50)  # huge weights: features far outside [-2, 2] before clipping
    pop = engine.Population.create([model], same_init=True)
    x = torch.randn(1, 64, 1, 28, 28) * 5
    phi = pop.groups[0].body_features(x, train=False)
    assert phi.abs().max() <= 2.0 and phi.abs().max() == 2.0
    per_record = expfam.with_constant(phi[0])  # each record's statistic is [1, phi] in one class row
    assert per_record.norm(dim=1).max() <= privacy.sensitivity(51, 2.0) + 1e-5


def test_noise_has_the_calibrated_standard_deviation():
    mech = privacy.GaussianMechanism(sigma=3.7, seed=0)
    clean = torch.zeros(200, 10, 51)
    noisy = mech.release(clean)
    std = float(noisy.std())
    # 102,000 draws: the sample std is within 1% of sigma with overwhelming probability
    assert abs(std - 3.7) / 3.7 < 0.01
    assert abs(float(noisy.mean())) < 0.05
    assert mech.releases == 200


@pytest.mark.parametrize("mode,per_round", [("local", 6), ("central", 1)])
def test_local_dp_noises_each_client_and_central_dp_the_sum_once(mode, per_round):
    cfg = fedlog.paper_config("mnist", "fedlog", n_clients=6, train_fraction=0.01, rounds=3, local_epochs=1,
                          options={"dp": mode, "epsilon": 1.0})
    ctx, alg = ex.setup(cfg)
    for rnd in range(3):
        up = alg.client_update(rnd, alg.configure(rnd)).up
        assert "n" not in up.payload  # the count is read from the noisy statistic instead
        alg.aggregate(rnd, up)
        assert alg.mechanism.releases == per_round * (rnd + 1)
        assert torch.isfinite(alg.eta).all()
    assert alg.mechanism.sigma == pytest.approx(privacy.sigma_thm7(1.0, 0.01, 51, 2.0, 3))


def test_huge_noise_never_makes_nan_heads():
    for method in ("fedlog", "fedlog_c"):
        cfg = fedlog.paper_config("mnist", method, n_clients=6, train_fraction=0.01, rounds=3, local_epochs=1,
                              options={"dp": "local", "epsilon": 0.01})
        res = ex.run(cfg, cache=False, progress=False)  # raises DivergenceError on NaN
        assert all(0 <= a <= 1 for a in res["rounds"]["acc_mean"])


# ----------------------------------------------------------------------------- the formal variant

def _analytic_gaussian_epsilon(z: float, delta: float) -> float:
    """The exact epsilon of one Gaussian mechanism with sensitivity 1 and noise z (Balle and Wang, 2018, Thm. 8)."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    d = lambda eps: norm.cdf(0.5 / z - eps * z) - math.exp(eps) * norm.cdf(-0.5 / z - eps * z) - delta  # noqa: E731
    return brentq(d, 1e-9, 100)


@pytest.mark.parametrize("z,k", [(1.0, 1), (2.0, 10), (5.0, 100)])
def test_the_accountant_certifies_the_gaussian_mechanism_between_its_exact_value_and_the_classic_rdp_bound(z, k):
    delta = 1e-5
    ours = privacy.formal_epsilon(delta, rounds=k, sample_rate=1.0, steps_per_round=0, sgd_noise=1.0, release_noise=z)
    # k releases of multiplier z are one release of multiplier z / sqrt(k): exact for Gaussians
    exact = _analytic_gaussian_epsilon(z / math.sqrt(k), delta)
    classic = min(k * a / (2 * z * z) + math.log(1 / delta) / (a - 1) for a in [1 + i / 100 for i in range(1, 20000)])
    assert exact <= ours <= classic
    assert ours == pytest.approx(privacy.formal_epsilon(delta, 1, 1.0, 0, 1.0, z / math.sqrt(k)), rel=1e-6)


def test_dp_sgd_steps_count_in_the_formal_budget_and_amplification_by_subsampling_helps():
    releases_only = privacy.formal_epsilon(0.01, 10, 1.0, 0, 1.0, 5.0)
    with_sgd = privacy.formal_epsilon(0.01, 10, 0.1, 30, 2.0, 5.0)
    without_amplification = privacy.formal_epsilon(0.01, 10, 1.0, 30, 2.0, 5.0)
    assert releases_only < with_sgd < without_amplification
    sigma = privacy.formal_release_sigma(20.0, 0.01, 51, 2.0, 10, 0.1, 30, 2.0)
    assert sigma > privacy.sigma_tight(20.0, 0.01, 51, 2.0, 10)  # DP-SGD spends part of the budget
    spent = privacy.formal_epsilon(0.01, 10, 0.1, 30, 2.0, sigma / privacy.sensitivity(51, 2.0))
    assert spent <= 20.0 and spent > 19.9
    with pytest.raises(ValueError, match="DP-SGD alone spends"):
        privacy.formal_release_sigma(1.0, 0.01, 51, 2.0, 10, 0.1, 30, 2.0)


def test_every_per_sample_gradient_is_clipped_to_the_bound():
    from fedlib import dpsgd

    torch.manual_seed(0)
    g = {"w": torch.randn(3, 4, 5, 6) * 10, "b": torch.randn(3, 4, 6) * 10}
    g["w"][0, 1], g["b"][0, 1] = 1e-3, 1e-3  # a small gradient is kept as it is
    valid = torch.ones(3, 4, dtype=torch.bool)
    valid[2, 3] = False
    for c in range(3):
        for s in range(4):
            only = torch.zeros(3, 4, dtype=torch.bool)
            only[c, s] = valid[c, s]
            part = dpsgd.clipped_sum(g, only, clip=1.5)
            norm = math.sqrt(sum(float(v[c].pow(2).sum()) for v in part.values()))
            raw = math.sqrt(sum(float(v[c, s].pow(2).sum()) for v in g.values()))
            assert norm <= 1.5 + 1e-5 and (norm == pytest.approx(min(raw, 1.5), rel=1e-5) or not valid[c, s])


def test_dp_sgd_moves_each_client_by_at_most_lr_times_its_clipped_batch_over_b():
    from fedlib import dpsgd

    torch.manual_seed(0)
    counts = [12, 7, 20]
    parts, start = [], 0
    for c in counts:
        parts.append(torch.arange(start, start + c))
        start += c
    cd = data.ClientData.from_parts(torch.randn(start, 1, 28, 28) * 5, torch.randint(0, 10, (start,)), parts)
    g = engine.Population.create([models.build("cnn_mnist", (1, 28, 28), 10) for _ in counts], same_init=True).groups[0]
    before = {k: v.clone() for k, v in g.params.items()}
    gen = torch.Generator().manual_seed(3)
    dpsgd.train(g, cd, trainable=list(g.params), optimizer="sgd", lr=0.1, epochs=1, batch_size=4, generator=gen,
                clip=0.01, noise_multiplier=0.0)
    steps, _ = dpsgd.steps_and_rate(torch.tensor(counts), 4, 1)
    for c in range(3):
        moved = math.sqrt(sum(float((g.params[k][c] - before[k][c]).pow(2).sum()) for k in g.params))
        assert 0 < moved <= 0.1 * int(steps[c]) * counts[c] * 0.01 / 4 + 1e-6


def test_formal_fedlog_trains_with_dp_sgd_and_releases_noised_statistics():
    cfg = fedlog.paper_config("mnist", "fedlog", n_clients=4, train_fraction=0.01, rounds=1, local_epochs=1,
                             options={"dp": "formal", "epsilon": 5.0, "clip_b": 2.0, "sgd_noise": 1.0})
    ctx, alg = ex.setup(cfg)
    up = alg.client_update(0, alg.configure(0)).up
    assert alg.mechanism.releases == 4 and "n" not in up.payload
    assert alg.mechanism.sigma > 1.01 * privacy.sigma_tight(5.0, 0.01, 51, 2.0, 1)  # DP-SGD (eps ~1.08) spent some
    with pytest.raises(ValueError, match="DP-SGD alone spends"):
        ex.setup(fedlog.paper_config("mnist", "fedlog", n_clients=4, train_fraction=0.01, rounds=1, local_epochs=1,
                                    options={**cfg.options, "epsilon": 0.5}))
