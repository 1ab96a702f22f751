import pytest
import torch

from fedlib import algorithms, engine, expfam
from fedlib import experiments as ex
from fedlib.algorithms import csfl
from fedlib.messages import Ledger
from fedlib.papers import fedlog
from fedlib.rounds import run_round


def _tiny(method, **kw):
    base = dict(n_clients=10, train_fraction=0.01, rounds=1, local_epochs=1)
    return fedlog.paper_config("mnist", method, **{**base, **kw})


def test_fedlog_head_is_the_map_of_the_summed_uplink_and_bodies_stay_local():
    ctx, alg = ex.setup(_tiny("fedlog"))
    g = ctx.population.groups[0]
    body_before = g.params["body.8.weight"].clone()
    down = alg.configure(0)
    up = alg.client_update(0, down).up
    # during local training the head is fixed: every client still holds the head it received
    assert torch.allclose(g.params["head.weight"], expfam.eta_to_head(down["eta"])[0].expand_as(g.params["head.weight"]))
    assert set(up.payload) == {"T", "n"}  # no body tensor ever leaves a client
    alg.aggregate(0, up)
    assert torch.allclose(alg.eta, expfam.map_head(up["T"].sum(0), up["n"].sum()))
    w, b = expfam.eta_to_head(alg.eta)
    assert torch.equal(ctx.population.gather("head.weight"), w.expand(10, *w.shape))
    assert not torch.allclose(g.params["body.8.weight"][0], g.params["body.8.weight"][1])
    assert not torch.allclose(g.params["body.8.weight"], body_before)


def test_fedlog_statistics_are_those_of_each_clients_training_data():
    ctx, alg = ex.setup(_tiny("fedlog"))
    up = alg.client_update(0, alg.configure(0)).up
    assert torch.equal(up["T"][:, :, 0].sum(1).cpu(), ctx.fed.train.counts.float().cpu())  # phi_0 = 1 counts samples
    g, data = ctx.groups[0]
    phi = engine.features(g, data)
    c = 3
    n = int(data.counts[c])
    assert torch.allclose(up["T"][c], expfam.sufficient_statistics(phi[c, :n], data.y[c, :n], 10), atol=1e-4)


def test_fedlog_c_with_alpha_zero_is_fedlog():
    a = ex.run(_tiny("fedlog", rounds=2), cache=False, progress=False)
    b = ex.run(_tiny("fedlog_c", rounds=2, options={"alpha": 0.0}), cache=False, progress=False)
    assert a["rounds"]["acc_mean"] == b["rounds"]["acc_mean"]
    c = ex.run(_tiny("fedlog_c", rounds=2, options={"alpha": 1.0}), cache=False, progress=False)
    assert c["rounds"]["train_loss"][1] != a["rounds"]["train_loss"][1]


def test_fedlog_c_pulls_features_to_the_global_class_means():
    ctx, alg = ex.setup(_tiny("fedlog_c", options={"alpha": 1.0}))
    alg.aggregate(0, alg.client_update(0, alg.configure(0)).up)
    down = alg.configure(1)
    assert set(down.payload) == {"T"}
    alg.receive(down)
    g, data = ctx.groups[0]
    x, y, valid = data.x[:, :5], data.y[:, :5], data.valid()[:, :5]
    feats, logits = g.forward(x, train=False)
    extra = alg.local_loss(feats, logits, y, valid, g.clients, g.params) - engine.masked_cross_entropy(logits, y, valid)
    expected = ((feats - alg.means[y]) ** 2).sum(-1).mean(1)
    assert torch.allclose(extra, expected, rtol=1e-4)


def test_fedavg_gives_every_client_the_average():
    ctx, alg = ex.setup(_tiny("fedavg"))
    up = alg.client_update(0, alg.configure(0)).up
    alg.aggregate(0, up)
    for k in up.payload:
        assert torch.allclose(ctx.population.gather(k), up[k].mean(0).expand_as(up[k]), atol=1e-6)


def test_flexible_architectures_run_for_fedlog_and_are_refused_by_fedavg():
    res = ex.run(ex.Config(method="fedlog", dataset="circle", model="mlp_flexible", n_clients=2, rounds=2,
                           local_epochs=3, batch_size=40, lr=0.05, same_init=False), cache=False, progress=False)
    assert len(res["rounds"]["acc_mean"]) == 2
    with pytest.raises(ValueError, match="same shape"):
        ex.setup(ex.Config(method="fedavg", dataset="circle", model="mlp_flexible", n_clients=2, rounds=1))


@pytest.mark.parametrize("method", ["fedlog", "fedlog_c"])
def test_no_body_tensor_ever_enters_the_ledger_with_flexible_architectures(method, monkeypatch):
    from fedlib.messages import Ledger

    sent = []
    original = Ledger.record
    monkeypatch.setattr(Ledger, "record", lambda self, msg: sent.append(msg) or original(self, msg))
    cfg = _tiny(method, model="cnn_mnist_flexible", same_init=False, rounds=3)
    ctx, _ = ex.setup(cfg)
    assert len(ctx.population.groups) == 2  # two body architectures, each trained batched
    body_shapes = {tuple(v.shape[1:]) for g in ctx.population.groups for k, v in g.params.items() if k.startswith("body")}
    res = ex.run(cfg, cache=False, progress=False)
    assert len(sent) == 6
    for msg in sent:
        for name, tensor in msg.payload.items():
            per_client = tensor.shape if msg.broadcast else tensor.shape[1:]  # what one client sends or receives
            assert tuple(per_client) not in body_shapes, (msg.direction, name)
    # per client and round, the uplink is T (10 classes x 51) and n_c whatever the body: 511 numbers
    assert res["rounds"]["up_bits"] == [10 * 511 * 32] * 3


@pytest.mark.parametrize("method,options", [("lg_fedavg", {"global_layers": 1}), ("fedproto", {})])
def test_flexible_architectures_run_for_the_baselines_the_paper_compares(method, options):
    res = ex.run(_tiny(method, model="cnn_mnist_flexible", same_init=False, rounds=2, options=options), cache=False,
                 progress=False)
    assert res["rounds"]["acc_mean"][-1] > 0.5  # 2 classes per client: clearly better than chance after 2 rounds


def test_unknown_method_and_options_are_refused():
    with pytest.raises(ValueError, match="choose one of"):
        algorithms.make("fedfoo")
    with pytest.raises(ValueError, match="unknown option"):
        algorithms.make("fedlog", alpha=0.1)


def test_an_option_of_another_method_is_named_as_such():
    """`fedlib --help`'s old example gave fedlog alpha, which is FedLog-C's: the error named no way out."""
    with pytest.raises(ValueError, match="'alpha' is an option of fedlog_c"):
        algorithms.make("fedlog", alpha=0.1)


def test_csfl_recovers_every_clients_sparse_update_and_every_client_rebuilds_the_step():
    # MNIST CNN at the paper's CS-FL setting: 0.5% of 21,840 parameters kept, 10% as many measurements
    ctx, alg = ex.setup(_tiny("csfl", n_clients=4))
    sent, real_sparsify = [], alg.sparsify

    def recording_sparsify(x, residual):  # every sparse vector that is measured and sent, in order
        sent.append(real_sparsify(x, residual))
        return sent[-1]

    alg.sparsify = recording_sparsify
    up = alg.client_update(0, alg.configure(0)).up
    updates = sent[0]
    assert updates.shape == (4, 21840) and int((updates != 0).sum(1).max()) == alg.k == 109
    recovered = alg.reconstruct(up["y"], alg.k)
    assert torch.allclose(recovered, updates, atol=1e-6 * float(updates.abs().max()))
    before = {k: v.clone() for k, v in alg.global_params.items()}
    alg.aggregate(0, up)
    step = sent[1][0]  # what the server broadcasts: top-k of the average, error feedback included
    assert torch.allclose(step, csfl.keep_largest(updates.mean(0, keepdim=True), alg.k)[0])
    alg.client_update(1, alg.configure(1))
    moved = csfl.flatten({k: (alg.global_params[k] - before[k]).unsqueeze(0) for k in alg.shared}, alg.shared)[0]
    assert torch.allclose(moved, step, atol=1e-6 * float(step.abs().max()))


def test_csfl_round_is_evaluated_with_the_model_after_its_step_not_the_start_of_round_model():
    # version 3 evaluated round t with round t's starting model: one round late, and round 0 scored the
    # untrained initialisation
    ctx, alg = ex.setup(_tiny("csfl", n_clients=4))
    start = {k: v.clone() for k, v in alg.global_params.items()}
    alg.aggregate(0, alg.client_update(0, alg.configure(0)).up)
    evaluated = {k: ctx.population.gather(k)[0] for k in alg.shared}
    assert not all(torch.equal(evaluated[k], start[k]) for k in alg.shared)
    alg.client_update(1, alg.configure(1))  # the clients rebuild the step from the broadcast measurements
    for k in alg.shared:
        assert torch.equal(alg.client_params[k], evaluated[k]), k


def test_feddbe_trains_its_bias_with_sgd_at_the_body_rate_by_default_and_with_the_model_optimizer_as_an_option():
    seen = []
    for options in ({}, {"prbm_optimizer": "model"}):
        ctx, alg = ex.setup(_tiny("feddbe", options=options))
        calls, real = [], engine.train
        engine.train = lambda *a, **kw: (calls.append(kw.get("own_optimizer")), real(*a, **kw))[1]
        try:
            for rnd in range(2):
                alg.aggregate(rnd, alg.client_update(rnd, alg.configure(rnd)).up)
        finally:
            engine.train = real
        seen.append(calls[-1])
    assert seen[0] == {alg.prbm: ("sgd", ctx.lr)} and not seen[1]
    assert algorithms.make("feddbe").options["kappa"] == 50.0


def test_fedlog_c_separation_option_is_a_hinge_on_the_nearest_other_class_mean():
    ctx, alg = ex.setup(_tiny("fedlog_c", options={"beta": 1.0, "margin": 1.0}))
    alg.means = torch.tensor([[0.0, 0.0], [3.0, 0.0], [0.0, 0.5]])
    alg.has_mean = torch.tensor([True, True, False])  # class 2 has no mean: never a competitor
    feats = torch.tensor([[[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]]])
    y = torch.tensor([[0, 0, 1]])
    own = ((feats - alg.means[y]) ** 2).sum(-1)
    hinge = alg.separation(feats, y, own)
    # own and nearest other squared distances: (0, 9), (1, 4), (1, 4): margin 1 + own - other
    assert torch.allclose(hinge, torch.tensor([[0.0, 0.0, 0.0]]))
    alg.options["margin"] = 4.0
    assert torch.allclose(alg.separation(feats, y, own), torch.tensor([[0.0, 1.0, 1.0]]))
    base = ex.run(_tiny("fedlog_c", rounds=2), cache=False, progress=False)
    sep = ex.run(_tiny("fedlog_c", rounds=2, options={"beta": 1.0}), cache=False, progress=False)
    assert base["rounds"]["train_loss"][0] == sep["rounds"]["train_loss"][0]  # round 0 has no means yet
    assert base["rounds"]["train_loss"][1] != sep["rounds"]["train_loss"][1]


def test_feddbe_takes_g_from_the_initialisation_periods_train_mode_running_means_and_discards_its_models():
    # version 2 took g from eval-mode features over all the data after a plain FedAvg round 0
    cfg = fedlog.table1_config("mnist", "FedDBE", n_clients=4, train_fraction=0.01, rounds=2, local_epochs=2)
    ctx, alg = ex.setup(cfg)
    group, data = ctx.groups[0]
    start = {k: v.clone() for k, v in group.params.items()}
    idx, valid = engine.batch_schedule(data.counts, cfg.batch_size, cfg.local_epochs, ctx.generator(0, 0),
                                       drop_last=cfg.drop_last)  # the authors' DataLoader drops the partial batch
    last = []
    for c in range(group.n):  # the authors' client loop: one model, torch's SGD, the batch mean of each step
        model = group.module(c).train()
        opt = torch.optim.SGD([p for k, p in model.named_parameters() if k != alg.prbm], lr=cfg.lr)
        for s in range(idx.shape[0]):
            if not valid[s, c].any():
                break
            sel = idx[s, c][valid[s, c]]
            rep = model.body(data.x[c, sel])
            mean = rep.detach().mean(0)
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model.head(rep), data.y[c, sel]).backward()
            opt.step()
        last.append(mean)
    w = data.counts.float() / data.counts.sum()
    want = (w.unsqueeze(1) * torch.stack(last).cpu()).sum(0)
    run_round(alg, 0, Ledger())
    assert torch.allclose(alg.server_mean.cpu(), want, atol=1e-5)
    assert all(torch.equal(group.params[k], start[k]) for k in start)  # the period's models are discarded
    assert cfg.model == "cnn_mnist_nodrop" and (cfg.optimizer, cfg.lr, cfg.drop_last) == ("sgd", 0.005, True)
