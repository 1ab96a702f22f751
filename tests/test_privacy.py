import math

import pytest
import torch

from fedlib import engine, expfam, models, privacy
from fedlib import paper
from fedlib import experiments as ex


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
        ex.setup(paper.paper_config("mnist", "fedlog", n_clients=4, train_fraction=0.01, options={"dp": "global"}))


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
    cfg = paper.paper_config("mnist", "fedlog", n_clients=6, train_fraction=0.01, rounds=3, local_epochs=1,
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
        cfg = paper.paper_config("mnist", method, n_clients=6, train_fraction=0.01, rounds=3, local_epochs=1,
                              options={"dp": "local", "epsilon": 0.01})
        res = ex.run(cfg, cache=False, progress=False)  # raises DivergenceError on NaN
        assert all(0 <= a <= 1 for a in res["rounds"]["acc_mean"])
