"""FedCR (seeds/001) against its equations: Eq. 21's KL, the products of experts of Eqs. 8-9, the Monte-Carlo loss,
the last-epoch statistics, the messages' bits and partial participation."""
import math

import warnings

import pytest
import torch

from fedlib.papers.fedcr import analysis
from fedlib import experiments as ex
from fedlib.algorithms.fedcr import kl_to_sample, product_of_experts
from fedlib.messages import Ledger
from fedlib.papers import fedcr, fedlog, fedrd
from fedlib.rounds import run_round


def _config(method="fedcr", **kw):
    base = dict(model="cnn_mnist_vib_v8", n_clients=6, train_fraction=0.01, rounds=2, local_epochs=1,
                options={"train_samples": 2, "eval_samples": 2})
    return fedlog.paper_config("mnist", method, **{**base, **kw})


def test_the_kl_of_eq_21_is_torchs_and_is_smallest_at_the_variance_the_spec_gives():
    g = torch.Generator().manual_seed(0)
    mu_g, mu = torch.randn(7, 5, generator=g), torch.randn(7, 5, generator=g)
    s_g, s = torch.rand(7, 5, generator=g) + 0.2, torch.rand(7, 5, generator=g) + 0.2
    D = torch.distributions
    want = D.kl_divergence(D.Independent(D.Normal(mu_g, s_g), 1), D.Independent(D.Normal(mu, s), 1))
    assert torch.allclose(kl_to_sample(mu_g, s_g, mu, s), want, rtol=1e-5)
    assert float(kl_to_sample(mu, s, mu, s).abs().max()) < 1e-6
    best = (s_g ** 2 + (mu_g - mu) ** 2).sqrt()  # for a fixed mean the KL is minimised at this sigma
    for factor in (0.9, 1.1):
        assert bool((kl_to_sample(mu_g, s_g, mu, best * factor) > kl_to_sample(mu_g, s_g, mu, best)).all())


def test_the_product_of_experts_is_the_normalised_product_of_the_densities():
    mus, sigmas = torch.tensor([0.5, -1.0, 2.0]), torch.tensor([0.7, 1.5, 1.1])
    mu, sigma = product_of_experts((sigmas ** -2).sum(), (mus / sigmas ** 2).sum(), prior_var=1.0)
    z = torch.linspace(-8, 8, 200001, dtype=torch.float64)
    log_density = (-0.5 * z ** 2) + sum(-0.5 * ((z - m) / s) ** 2 for m, s in zip(mus.double(), sigmas.double()))
    p = torch.exp(log_density - log_density.max())
    p = p / torch.trapezoid(p, z)
    mean = torch.trapezoid(z * p, z)
    assert float(mu) == pytest.approx(float(mean), abs=1e-4)
    assert float(sigma) == pytest.approx(float(torch.trapezoid((z - mean) ** 2 * p, z).sqrt()), abs=1e-4)


def test_the_server_takes_one_prior_and_classes_no_participant_holds_keep_their_gaussian():
    ctx, alg = ex.setup(_config(options={"train_samples": 1, "eval_samples": 1}))
    C, V = alg.mu.shape
    before_mu, before_sigma = alg.mu.clone() + 3.0, alg.sigma.clone() * 2.0
    alg.mu, alg.sigma = before_mu.clone(), before_sigma.clone()
    from fedlib.messages import Message

    mu_i, sigma_i = torch.full((1, C, V), 0.8), torch.full((1, C, V), 0.5)
    present = torch.zeros(1, C, dtype=torch.bool)
    present[0, 3] = True
    up = Message.up({"mu": mu_i, "sigma": sigma_i, **{k: v.unsqueeze(0) for k, v in alg.global_params.items()}},
                    torch.tensor([0]), present={"mu": present, "sigma": present})
    alg.aggregate(0, up)
    mu, sigma, before_mu, before_sigma = alg.mu.cpu(), alg.sigma.cpu(), before_mu.cpu(), before_sigma.cpu()
    assert torch.allclose(mu[3], mu_i[0, 3] / (1 + sigma_i[0, 3] ** 2))
    assert torch.allclose(sigma[3], (1 + sigma_i[0, 3] ** -2) ** -0.5)
    others = torch.arange(C) != 3
    assert torch.equal(mu[others], before_mu[others]) and torch.equal(sigma[others], before_sigma[others])


def test_the_papers_monte_carlo_loss_equals_the_codes_with_one_draw_and_bounds_it_above_with_more():
    _, alg = ex.setup(_config())
    logits, y = torch.randn(2, 5, 1, 10), torch.randint(0, 10, (2, 5))
    alg.options["mc_loss"] = "mean_ce"
    a = alg.mc_nll(logits, y)
    alg.options["mc_loss"] = "log_mean_prob"
    assert torch.allclose(a, alg.mc_nll(logits, y))
    many = torch.randn(2, 5, 6, 10)
    paper_loss = alg.mc_nll(many, y)
    alg.options["mc_loss"] = "mean_ce"
    assert bool((paper_loss <= alg.mc_nll(many, y) + 1e-6).all())  # Jensen: -log mean p <= mean -log p


def test_eq_8_uses_each_samples_last_epoch_features_once():
    # lr ~ 0 and no dropout: the training-mode features of the last epoch are those of one evaluation pass
    stats = {}
    for where in ("last_epoch", "final_pass"):
        ctx, alg = ex.setup(_config(lr=1e-12, local_epochs=2, options={"poe_features": where, "beta": 0.0}))
        alg.client_update(0, alg.configure(0))
        stats[where] = alg.precision.clone()
    assert torch.allclose(stats["last_epoch"], stats["final_pass"], rtol=1e-4)
    assert int((stats["last_epoch"].sum(-1) > 0).sum()) == 6 * 2  # each of the 6 clients' 2 classes, once


@pytest.mark.parametrize("method", ["fedcr", "fedcr_na"])
def test_every_message_has_the_bits_the_spec_counts(method):
    cfg = _config(method, participation=0.5)
    ctx, alg = ex.setup(cfg)
    ledger = Ledger()
    body = sum(v[0].numel() for k, v in ctx.population.groups[0].params.items() if k.startswith("body."))
    C, V, K = 10, 8, 3
    shared = body if method == "fedcr" else 0
    for rnd in range(2):
        run_round(alg, rnd, ledger)
    assert ledger.down == [32 * K * shared, 32 * K * (shared + 2 * V * C)]  # round 0: N(0, I) needs no message
    assert ledger.up == [32 * K * (shared + 2 * V * 2)] * 2  # every client holds 2 classes
    assert body == 26_430 - 2 * 50 * 50 - 100 + 2 * 50 * V + 2 * V  # cnn_mnist's body + Linear(50, 2V)


def test_with_partial_participation_only_the_participants_heads_change():
    ctx, alg = ex.setup(_config(participation=0.5))
    before = ctx.population.gather("head.weight").clone()
    down = alg.configure(0)
    alg.aggregate(0, alg.client_update(0, down).up)
    changed = (ctx.population.gather("head.weight") != before).flatten(1).any(1)
    assert torch.equal(changed.nonzero().flatten().cpu(), down.clients.sort().values.cpu())


def test_a_local_step_with_the_kl_term_brings_the_samples_toward_the_global_representation():
    ctx, alg = ex.setup(_config(options={"beta": 1.0, "train_samples": 1, "eval_samples": 1}))
    group, data = ctx.groups[0]
    alg.received = (torch.zeros_like(alg.mu) + 0.5, torch.ones_like(alg.sigma) * 0.3)

    def mean_kl():
        from fedlib import engine

        mu, sigma = group.model.gaussian(engine.features(group, data))
        mu_g, s_g = alg.received[0][data.y], alg.received[1][data.y]
        return float((kl_to_sample(mu_g, s_g, mu, sigma) * data.valid()).sum() / data.valid().sum())

    before = mean_kl()
    alg.options["beta"] = 1e3  # the KL term dominates the step
    alg.precision = torch.zeros(6, 10, 8)
    alg.weighted = torch.zeros(6, 10, 8)
    alg.steps = {}
    ctx.train(group, data, 0, list(group.params), loss_fn=alg.local_loss, epochs=1, lr=1e-4)
    assert mean_kl() < before
    assert math.isfinite(before)


def test_without_the_kl_and_with_z_equal_to_mu_fedcr_is_fedper_with_only_the_head_local():
    from torch import nn

    common = dict(n_clients=4, train_fraction=0.01, rounds=2, local_epochs=1, optimizer="sgd", lr=0.05)
    cr_ctx, cr = ex.setup(fedlog.paper_config("mnist", "fedcr", model="cnn_mnist_vib_v8", **common, options=dict(
        beta=0.0, deterministic=True, train_samples=1, eval_samples=0)))
    fp_ctx, fp = ex.setup(fedlog.paper_config("mnist", "fedper", model="cnn_mnist_nodrop", **common,
                                             options={"local_layers": 1}))
    cr_group, fp_group = cr_ctx.population.groups[0], fp_ctx.population.groups[0]
    gauss = f"body.{len(cr_group.model.body) - 1}"
    fp_group.append_body_module(nn.Linear(50, 8))  # the Gaussian layer's mean rows only
    for k, v in cr_group.params.items():
        fp_group.params[k] = v[:, :8].clone() if k.startswith(gauss) else v.clone()
    fp.init(fp_ctx)
    cr_ledger, fp_ledger = Ledger(), Ledger()
    for rnd in range(2):
        a, b = run_round(cr, rnd, cr_ledger), run_round(fp, rnd, fp_ledger)
        assert torch.allclose(a.loss, b.loss, rtol=1e-5)
        acc_cr = cr_ctx.population.groups[0].params["head.weight"]
        assert torch.allclose(acc_cr, fp_group.params["head.weight"], rtol=1e-4, atol=1e-6)
    from fedlib import engine

    cr_eval = engine.evaluate_population(cr_ctx.population, cr_ctx.fed.test)
    fp_eval = engine.evaluate_population(fp_ctx.population, fp_ctx.fed.test)
    assert torch.equal(cr_eval["correct"], fp_eval["correct"])
    assert torch.allclose(cr_eval["loss"], fp_eval["loss"], rtol=1e-4)


def test_fig_2s_view_trains_only_that_client_and_returns_its_test_means():
    ctx, alg, _ = ex.run_live(_config(model="cnn_mnist_vib_v2"))
    before = {k: v.clone() for k, v in ctx.population.groups[0].params.items()}
    mu, y = analysis.client_view(alg, 2, epochs=1, n=7)
    assert mu.shape == (7, 2) and torch.equal(y, ctx.fed.test.y[2, :7].cpu())
    for k, v in ctx.population.groups[0].params.items():
        changed = (v != before[k]).flatten(1).any(1)
        assert changed.tolist() == [i == 2 for i in range(6)], k


def test_local_training_sends_nothing_and_each_client_trains_alone():
    cfg = fedlog.paper_config("mnist", "local", model="cnn_mnist_nodrop", n_clients=4, train_fraction=0.01, rounds=2,
                             local_epochs=1)
    ctx, alg = ex.setup(cfg)
    group, data = ctx.groups[0]
    alone = group.subset(torch.arange(group.n))
    ledger = Ledger()
    for rnd in range(2):
        run_round(alg, rnd, ledger)
        ctx.train(alone, data, rnd, list(alone.params))
    assert sum(ledger.up) == 0 and sum(ledger.down) == 0
    for k in group.params:
        assert torch.equal(group.params[k], alone.params[k]), k


def test_the_protocol_config_follows_sec_5_1_and_refuses_what_it_does_not_know():
    cfg = fedcr.config("fashion_mnist", "FedCR", "n2", seed=1, rounds=3, width=256, dim=64, lr=0.05)
    assert (cfg.model, cfg.n_clients, cfg.participation, cfg.pool_split, cfg.batch_size, cfg.local_epochs,
            cfg.final_finetune_epochs, cfg.partition, cfg.train_fraction) == ("fedcr_cnn256_v64", 100, 0.1, 0.7, 48,
                                                                              10, 10, "dirichlet_client", 1.0)
    # FedLog has no fine-tune (its body trains every round); Ditto's is the authors' final round of every client
    assert fedcr.config("mnist", "FedLog", "n1", seed=0, rounds=1, width=8, dim=2, lr=0.1).final_finetune_epochs == 0
    assert fedcr.config("mnist", "Ditto", "n1", seed=0, rounds=1, width=8, dim=2, lr=0.1).final_finetune_epochs == 10
    with warnings.catch_warnings():  # n2 keeps classes_per_client=5 for its keys: no warning a reader did not cause
        warnings.simplefilter("error")
        fedcr.config("fashion_mnist", "FedAvg", "n2", seed=0, rounds=1, width=8, dim=2)
    with pytest.warns(UserWarning, match="classes_per_client=3 has no effect"):  # one a reader set still warns
        fedcr.config("fashion_mnist", "FedAvg", "n2", seed=0, rounds=1, width=8, dim=2, classes=3)
    for bad in [("celeba", "FedCR", "n1"), ("mnist", "FedSR", "n1"), ("mnist", "FedCR", "n3")]:
        with pytest.raises(ValueError, match="choose from|not|partitions"):
            fedcr.config(*bad, seed=0, rounds=1, width=8, dim=2, lr=0.1)


def test_local_trainings_final_fine_tune_trains_only_the_head_like_every_other_method():
    cfg = fedlog.paper_config("mnist", "local", model="cnn_mnist_nodrop", n_clients=4, train_fraction=0.01, rounds=1,
                             local_epochs=1, final_finetune_epochs=1)
    ctx, alg = ex.setup(cfg)
    before = {k: v.clone() for k, v in ctx.population.groups[0].params.items()}
    alg.finetune(1)
    for k, v in ctx.population.groups[0].params.items():
        assert torch.equal(v, before[k]) == k.startswith("body."), k


def test_the_seed_papers_numbers_are_the_papers_text():
    """Every FedRD Table I cell and FedCR's Table 2 FedCR row appear verbatim in the seed papers (seeds/)."""
    from pathlib import Path

    seeds = Path(__file__).resolve().parents[2] / "shared" / "seeds"
    if not seeds.is_dir():
        pytest.skip("the seed papers' text is not beside this checkout")
    text = next(seeds.glob("002_*.txt")).read_text()
    for dataset, rows in fedrd.TABLE1.items():
        for method, (mean, std) in rows.items():
            assert f"{mean:.2f}±{std:.2f}" in text, (dataset, method)
    text = next(seeds.glob("001_*.txt")).read_text()
    for (dataset, part), rows in fedcr.TABLE2.items():
        assert f"{rows['FedCR']:.2f}" in text, (dataset, part)


def test_fig_2s_view_in_the_worker_pool_equals_the_view_computed_here(monkeypatch):
    """Notebook 06 computes Fig. 2's four views in the pool's one-thread workers (`sweep.call_many`): the same
    numbers as computed here with one thread, and the client shown is the one holding the most classes."""
    import numpy as np

    from fedlib import sweep

    cfgs = [_config(model="cnn_mnist_vib_v2", partition="dirichlet", seed=s) for s in (0, 1)]
    monkeypatch.setenv("FEDLIB_WORKERS", "2")
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.delenv("FEDLIB_SWEEP_BACKEND")  # the tests' default is local
    try:
        pooled = sweep.call_many(analysis.fig2_view, [(c, 1, 5) for c in cfgs])
    finally:
        sweep.shutdown_pool()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        here = [analysis.fig2_view(c, 1, 5) for c in cfgs]
    finally:
        torch.set_num_threads(threads)
    for p, h, cfg in zip(pooled, here, cfgs):
        assert p.client == h.client and np.array_equal(p.mu, h.mu) and np.array_equal(p.y, h.y)
        ctx, _ = ex.setup(cfg)
        train = ctx.fed.train
        held = [len(torch.unique(train.y[c, :int(train.counts[c])])) for c in range(train.n_clients)]
        assert p.classes == max(held) and held.index(max(held)) == p.client and p.mu.shape == (5, 2)


def test_a_cached_fig_2_view_comes_back_bit_for_bit_and_the_paper_profile_draws_it_from_archive(tmp_path, monkeypatch):
    """Before, Fig. 2's views were live: the paper profile, which computes nothing, never drew Fig. 2 and its claims
    said "not run". Fig. 2 is a derived part now (`plans.FIG2`; before, `analysis.cached_view`): each view is kept as
    JSON in the results cache, `scripts/fedcr_fig2_views.py --pack` ships it, and a shipped view is read back with the
    same bits and draws the figure without computing."""
    import numpy as np

    from fedlib import archive
    from fedlib.papers import part
    from fedlib.papers.fedcr import figures, plans

    def at_paper_size_of_smoke():
        monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "results"))
        monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path / "figures"))
        monkeypatch.setenv("FEDLIB_SWEEP_BACKEND", "local")
        monkeypatch.delenv("FEDLIB_COMPUTE", raising=False)
        monkeypatch.setattr(archive, "folder", lambda: tmp_path / "archive")

    at_paper_size_of_smoke()
    S = fedcr.PROFILES["smoke"]
    views = plans.FIG2.at("paper", S)  # the paper profile at the smoke profile's size
    plan = views.plan("paper")
    monkeypatch.setattr(analysis, "fig2_view", lambda *a: (_ for _ in ()).throw(AssertionError("computed")))
    (read,) = part.read("paper", views)  # nothing cached or shipped: nothing computed, nothing drawn
    assert len(plan) == 4 and not read.whole() and analysis.silhouettes(read) == {}
    figures.fig2(read)
    monkeypatch.undo()  # compute the four smoke views for real, then ship them
    at_paper_size_of_smoke()
    made = part.Values(views, plan, "paper", compute=True)  # as scripts/fedcr_fig2_views.py does
    key, (cfg,) = next(iter(plan.items()))
    direct = analysis.fig2_view(cfg, S.fig2.epochs, S.fig2.points)
    assert made([cfg])[0].mu.dtype == direct.mu.dtype and np.array_equal(made([cfg])[0].mu, direct.mu)
    (tmp_path / "archive" / views.derive.folder).mkdir(parents=True)
    for f in (tmp_path / "results" / views.derive.folder).glob("*.json"):
        (tmp_path / "archive" / views.derive.folder / f.name).write_bytes(f.read_bytes())
    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "empty"))  # only archive/ holds them now
    monkeypatch.setattr(analysis, "fig2_view", lambda *a: (_ for _ in ()).throw(AssertionError("computed")))
    (read,) = part.read("paper", views)
    assert read.whole() and np.array_equal(read[key][0].mu, direct.mu)  # the same bits, from archive/
    assert np.array_equal(read[key][0].y, direct.y) and read[key][0].client == direct.client
    assert sorted(analysis.silhouettes(read)) == [("n1", 0.0), ("n1", 5e-4), ("n2", 0.0), ("n2", 5e-4)]
    figures.fig2(read)
    assert list((tmp_path / "figures").glob("fedcr_fig2_features*.png"))


def test_part_gs_settings_carry_fedcrs_samples_and_a_profile_that_disagrees_is_refused():
    """Part G's settings named their profile, and its build looked the profile up by that name for FedCR's samples
    (a build handed a name, issue 94's point 4); they carry the samples now, and a Profile whose part G disagrees
    with its own samples is refused when it is declared."""
    from dataclasses import replace

    import pytest

    from fedlib.papers.fedcr import plans

    quick = plans.PROFILES["quick"]
    assert plans.table1_run(quick.table1, "fedcr", 0).key() == plans.table1_run("quick", "fedcr", 0).key()
    assert plans.table1_run(quick.table1, "fedcr", 0).options["eval_samples"] == 8
    with pytest.raises(ValueError, match="part G's FedCR samples"):
        replace(quick, samples=(4, 4))
