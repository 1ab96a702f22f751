"""FedProf: profiles, scores, selection, both aggregations, and the noisy clients its experiments need."""
import pytest
import torch
from scipy import stats as sps
from torch.distributions import Normal, kl_divergence

from fedlib import data as fdata
from fedlib import experiments as ex
from fedlib.papers.fedlog.analysis import representations
from fedlib.algorithms.fedprof import gaussian_kl
from fedlib.config import Config
from fedlib.messages import Ledger
from fedlib.rounds import run_round

NOISY = {"irrelevant": 0.15, "blur": 0.2, "saltpepper": 0.25}


def _config(method="fedprof", rounds=2, **kw):
    base = dict(method=method, dataset="mnist", model="cnn_mnist", partition="dominant", n_clients=20,
                train_fraction=0.02, server_fraction=0.143, participation=0.25, rounds=rounds, local_epochs=1,
                optimizer="sgd", lr=0.01, batch_size=10)
    return Config(**{**base, **kw})


def _run(cfg, rounds=2):
    ctx, alg = ex.setup(cfg)
    ledger = Ledger()
    picked = [run_round(alg, r, ledger).participants.tolist() for r in range(rounds)]
    return ctx, alg, ledger, picked


def test_eq4_with_its_constant_is_the_gaussian_kl_and_the_constant_leaves_the_probabilities_unchanged():
    g = torch.Generator().manual_seed(0)
    mu_p, mu_q = torch.randn(7, generator=g), torch.randn(7, generator=g)
    var_p, var_q = torch.rand(7, generator=g) + 0.1, torch.rand(7, generator=g) + 0.1
    want = kl_divergence(Normal(mu_p, var_p.sqrt()), Normal(mu_q, var_q.sqrt()))
    assert torch.allclose(gaussian_kl(mu_p, var_p, mu_q, var_q), want, atol=1e-6)
    assert torch.allclose(gaussian_kl(mu_p, var_p, mu_q, var_q, constant=False), want + 0.5, atol=1e-6)
    _, with_c, _, picked_c = _run(_config(options={"kl_constant": True}))
    _, without, _, picked = _run(_config(options={"kl_constant": False}))
    assert picked_c == picked
    assert torch.allclose(with_c.selection_probs(2), without.selection_probs(2), atol=1e-12)


def test_alpha_0_is_fedavg_with_uniform_selection_bit_for_bit():
    _, prof, _, picked_prof = _run(_config(options={"alpha": 0.0}))
    _, avg, _, picked_avg = _run(_config(method="fedavg", options={"aggregation": "full"}))
    assert picked_prof == picked_avg and len(set(picked_prof[0])) == 5
    for k, v in avg.global_params.items():
        assert torch.equal(prof.global_params[k], v), k


def test_a_profile_is_the_mean_and_variance_of_the_fc1_pre_activations_made_before_training():
    ctx, alg = ex.setup(_config())
    assert alg.upto == 9  # body[:9] ends with fc1 (body.8), before its ReLU
    down = alg.configure(0)
    client = int(down.clients[0])
    model = ctx.population.groups[0].module(client)  # the received (initial) model
    x = ctx.fed.train.x[client, :int(ctx.fed.train.counts[client])]
    h = representations.layer_output(model, x, upto=9)
    alg.client_update(0, down)
    got = alg.client_prof[client]
    assert torch.allclose(got[0], h.mean(0), atol=1e-5)
    assert torch.allclose(got[1], h.var(0, unbiased=False) + 1e-8, atol=1e-5)
    assert int(alg.client_ver[client]) == 0


def test_the_ledger_counts_initial_profiles_sizes_models_and_profiles():
    ctx, alg, ledger, _ = _run(_config(), rounds=2)
    N, K, q = 20, 5, 50
    P = sum(v[0].numel() for v in ctx.population.groups[0].params.values())
    assert ledger.up[0] == 32 * (N * 2 * q + N + K * (P + 2 * q))
    assert ledger.up[1] == 32 * K * (P + 2 * q)
    assert ledger.down == [32 * K * P] * 2


def test_stale_profiles_are_scored_against_the_baseline_of_their_own_version():
    ctx, alg, _, picked = _run(_config(), rounds=3)
    assert sorted(alg.server_prof) == [0, 1, 2, 3]
    never = [c for c in range(20) if all(c not in p for p in picked)]
    last = {c: max(r for r, p in enumerate(picked) if c in p) for c in range(20) if c not in never}
    for c, r in last.items():
        assert int(alg.client_ver[c]) == r
    assert all(int(alg.client_ver[c]) == 0 for c in never)
    div = alg.divergences()
    c, r = next(iter(last.items()))
    p, b = alg.client_prof[c], alg.server_prof[r]
    assert torch.allclose(div[c], gaussian_kl(p[0], p[1], b[0], b[1]).mean(), atol=1e-6)


def test_selection_with_replacement_draws_in_proportion_to_the_probabilities():
    ctx, _ = ex.setup(_config(method="fedavg", participation=0.5))
    probs = torch.softmax(torch.linspace(0, 2, 20), 0)
    draws = torch.cat([ctx.select(r, probs, replace=True) for r in range(200)])  # 200 rounds x 10 = 2000
    observed = torch.bincount(draws, minlength=20).numpy()
    expected = probs.double().numpy()
    assert sps.chisquare(observed, expected / expected.sum() * len(draws)).pvalue > 0.01
    distinct = ctx.select(0, probs, replace=False)
    assert len(set(distinct.tolist())) == 10


def test_full_aggregation_of_every_client_is_sample_weighted_fedavg():
    _, full, _, _ = _run(_config(method="fedavg", participation=1.0, options={"aggregation": "full"}))
    _, weighted, _, _ = _run(_config(method="fedavg", participation=1.0, options={"weighted": True}))
    for k, v in weighted.global_params.items():
        assert torch.allclose(full.global_params[k], v, atol=1e-6), k


def test_scheme2_weights_the_senders_by_their_share_times_n_over_k():
    ctx, alg = ex.setup(_config(method="fedavg", options={"aggregation": "scheme2"}))
    down = alg.configure(0)
    reply = alg.client_update(0, down)
    alg.aggregate(0, reply.up)
    p = ctx.fed.train.counts.double() / ctx.fed.train.counts.sum()
    w = (p[down.clients] * 20 / 5).float()
    k = "head.weight"
    assert torch.allclose(alg.global_params[k].cpu(), torch.tensordot(w, reply.up[k].cpu(), dims=1), atol=1e-6)


def test_noisy_clients_are_exact_in_number_their_test_sets_clean_and_salt_and_pepper_at_density_0_3():
    clean = ex.federation(_config(method="fedavg"))
    noisy = ex.federation(_config(method="fedavg", corruption=NOISY))
    kinds = noisy.kinds
    assert [kinds.count(k) for k in ("irrelevant", "blur", "saltpepper", "clean")] == [3, 4, 5, 8]
    assert torch.equal(noisy.test.x, clean.test.x) and torch.equal(noisy.server.x, clean.server.x)
    assert torch.equal(noisy.train.y, clean.train.y)
    ds = fdata.load_dataset("mnist")
    lo, hi = float(ds.train_x.min()), float(ds.train_x.max())
    before, after = [], []
    for i, kind in enumerate(kinds):
        m = int(clean.train.counts[i])
        same = torch.equal(noisy.train.x[i, :m], clean.train.x[i, :m])
        assert same == (kind == "clean"), (i, kind)
        if kind == "saltpepper":
            before.append(clean.train.x[i, :m].flatten())
            after.append(noisy.train.x[i, :m].flatten())
    b, a = torch.cat(before), torch.cat(after)
    density = float((a[b != lo] == lo).float().mean() + (a[b != hi] == hi).float().mean())
    assert abs(density - 0.3) < 0.01
    fashion = fdata.load_dataset("fashion_mnist").train_x.flatten(1)
    i = kinds.index("irrelevant")
    for img in noisy.train.x[i, :3]:
        assert bool((fashion == img.flatten()).all(1).any())


def test_the_irrelevant_images_source_lets_go_of_the_pages_it_read(monkeypatch):
    released = []
    real = fdata.release_pages
    monkeypatch.setattr(fdata, "release_pages", lambda *ts: released.extend(ts) or real(*ts))
    ex.federation(_config(method="fedavg", corruption={"irrelevant": 0.2}))
    fashion = fdata.load_dataset("fashion_mnist").train_x
    assert any(t.untyped_storage().data_ptr() == fashion.untyped_storage().data_ptr() for t in released)


def test_bad_corruption_and_fedprof_without_a_server_set_are_refused_before_any_work():
    with pytest.raises(ValueError, match="corruption"):
        _config(method="fedavg", corruption={"fog": 0.1})
    with pytest.raises(ValueError, match="corruption"):
        _config(method="fedavg", corruption={"blur": 0.7, "saltpepper": 0.5})
    with pytest.raises(ValueError, match="server_fraction"):
        _config(server_fraction=0.0)


def test_the_dominant_partition_gives_equal_clients_with_their_dominant_share():
    fed = ex.federation(_config(method="fedavg", dominant_share=0.6))
    counts = fed.train.counts
    assert int(counts.max()) == int(counts.min())
    for i in range(fed.n_clients):
        y = fed.train.y[i, :int(counts[i])]
        assert int((y == i % 10).sum()) == round(0.6 * int(counts[i]))
    with pytest.raises(fdata.PartitionError, match="dominant"):
        ex.federation(_config(method="fedavg", dominant_share=1.0, n_clients=11))


def test_fedprof_selects_irrelevant_clients_less_than_clean_ones():
    cfg = _config(n_clients=10, participation=0.3, corruption={"irrelevant": 0.2}, rounds=3)
    ctx, alg, _, _ = _run(cfg, rounds=3)
    probs = alg.selection_probs(3)
    kinds = ctx.fed.kinds
    bad = [p for p, k in zip(probs.tolist(), kinds) if k == "irrelevant"]
    good = [p for p, k in zip(probs.tolist(), kinds) if k == "clean"]
    assert max(bad) < min(good) / 10


def test_fedprofs_table3_numbers_are_the_papers_text():
    from pathlib import Path

    from fedlib.papers import fedprof
    seeds = Path(__file__).resolve().parents[2] / "shared" / "seeds"
    if not seeds.is_dir():
        pytest.skip("the seed papers' text is not beside this checkout")
    text = next(seeds.glob("004_*.txt")).read_text().replace("<b>", "").replace("</b>", "")
    for rows in fedprof.TABLE3.values():
        for best, rounds, seconds, energy in rows.values():
            assert f"{best / 100:.3f}\t{rounds}\t{seconds:.2f}\t{energy:.2f}" in text, (best, rounds, seconds)


def test_a_profile_layer_beyond_the_body_is_refused_before_any_data_is_loaded(monkeypatch):
    # before: profile_layer=50 ran, silently profiling the whole body's output
    from fedlib import data
    from fedlib import experiments as ex

    monkeypatch.setattr(data, "load_dataset", lambda *a, **k: pytest.fail("data loaded"))
    tiny = dict(method="fedprof", dataset="mnist", n_clients=4, train_fraction=0.01, rounds=1, local_epochs=1,
                server_fraction=0.1)
    with pytest.raises(ValueError, match="profile_layer 50 is beyond the body of cnn_mnist, whose layers are 0..10"):
        ex.Config(**tiny, options={"profile_layer": 50})
    ex.Config(**tiny, options={"profile_layer": 10})  # the body's last layer is fine
