"""The protocol of fedlib.algorithms.base and fedlib.rounds: participation, selection, the round function,
what a method returns, the Config fields the seed systems need, and the engine hooks."""
import copy

import pytest
import torch
from scipy import stats as sps

from fedlib import algorithms, data, engine, models
from fedlib.papers.fedlog.analysis import representations
from fedlib import experiments as ex
from fedlib.algorithms import Reply
from fedlib.messages import Ledger
from fedlib.papers import fedlog
from fedlib.rounds import run_round


def _tiny(method, **kw):
    base = dict(n_clients=10, train_fraction=0.02, rounds=1, local_epochs=1)
    return fedlog.paper_config("mnist", method, **{**base, **kw})


def _snapshot(pop):
    return {(tuple(g.clients.tolist()), k): v.clone() for g in pop.groups for k, v in g.params.items()}


# ----------------------------------------------------------------------------- selection

def test_select_draws_k_distinct_sorted_clients_deterministically():
    ctx, _ = ex.setup(_tiny("fedavg", participation=0.3))
    a, b = ctx.select(4), ctx.select(4)
    assert torch.equal(a, b) and len(a) == 3 and len(set(a.tolist())) == 3 and torch.equal(a, a.sort().values)
    assert not all(torch.equal(ctx.select(r), a) for r in range(5, 15))  # other rounds, other clients
    assert torch.equal(ctx.select(4, probs=torch.ones(10)), a)  # equal scores select what uniform selection does
    full, _ = ex.setup(_tiny("fedavg"))
    assert torch.equal(full.select(0), torch.arange(10))


def test_weighted_selection_with_replacement_follows_the_probabilities():
    ctx, _ = ex.setup(_tiny("fedavg", participation=0.1))  # one client per draw
    probs = torch.tensor([8.0, 4, 2, 1, 1, 1, 1, 1, 0.5, 0.5])
    counts = torch.zeros(10)
    for rnd in range(2000):
        counts[ctx.select(rnd, probs=probs, replace=True)] += 1
    expected = (probs / probs.sum() * 2000).numpy()
    assert sps.chisquare(counts.numpy(), expected).pvalue > 0.01


# ----------------------------------------------------------------------------- partial participation

@pytest.mark.parametrize("method", ["fedavg", "fedper", "fedrep", "fedlog", "fedlog_c", "fedproto"])
def test_non_participants_are_untouched_by_local_training(method):
    ctx, alg = ex.setup(_tiny(method, participation=0.3))
    before = _snapshot(ctx.population)
    down = alg.configure(0)
    reply = alg.client_update(0, down)
    assert torch.equal(reply.up.clients, down.clients) and len(down.clients) == 3
    assert reply.loss.shape == (3,) and torch.isfinite(reply.loss).all()
    after = _snapshot(ctx.population)
    others = [c for c in range(10) if c not in down.clients.tolist()]
    moved = set()
    for (ids, k), v in before.items():
        for row, c in enumerate(ids):
            if not torch.equal(v[row], after[(ids, k)][row]):
                moved.add(c)
    assert moved and not moved & set(others)


def test_participants_train_as_if_their_group_had_only_them():
    ctx, alg = ex.setup(_tiny("fedavg", participation=0.3))
    g, data_ = ctx.groups[0]
    clients = ctx.select(0)
    alone = g.subset(clients)
    torch.manual_seed(1)  # dropout draws from the global generator
    stats = engine.train(alone, data_.select(clients), trainable=list(alone.params), optimizer="adam", lr=ctx.lr,
                         epochs=1, batch_size=ctx.batch_size, generator=ctx.generator(0, int(clients[0])))
    torch.manual_seed(1)
    got = ctx.train_clients(0, clients, trainable=lambda grp: list(grp.params))
    assert torch.equal(got.loss.cpu(), stats.loss.cpu()) and torch.equal(got.steps.cpu(), stats.steps.cpu())
    for k in g.params:
        assert torch.equal(g.params[k][clients], alone.params[k])


def test_after_aggregation_every_client_holds_what_it_predicts_with():
    ctx, alg = ex.setup(_tiny("fedavg", participation=0.3))
    run_round(alg, 0, Ledger())
    for k in ctx.population.param_names():  # FedAvg: the new global model everywhere
        assert torch.equal(ctx.population.gather(k), alg.global_params[k].expand_as(ctx.population.gather(k)))
    ctx, alg = ex.setup(_tiny("fedper", participation=0.3))
    heads = ctx.population.gather("head.weight").clone()
    res = run_round(alg, 0, Ledger())
    for k in alg.shared:  # FedPer: the new global base ...
        assert torch.equal(ctx.population.gather(k), alg.global_params[k].expand_as(ctx.population.gather(k)))
    others = [c for c in range(10) if c not in res.participants.tolist()]  # ... and each client's own head
    assert torch.equal(ctx.population.gather("head.weight")[others], heads[others])
    ctx, alg = ex.setup(_tiny("fedlog", participation=0.3))
    run_round(alg, 0, Ledger())
    w = ctx.population.gather("head.weight")
    assert torch.equal(w, w[:1].expand_as(w))  # FedLog: the new head everywhere


def test_the_ledger_charges_only_the_participants():
    cfg = fedlog.paper_config("mnist", "fedavg", n_clients=100, train_fraction=0.05, rounds=2, local_epochs=1,
                             participation=0.1)
    res = ex.run(cfg, cache=False, progress=False)
    n_params = 21840
    assert res["rounds"]["up_bits"] == [10 * n_params * 32] * 2
    assert res["rounds"]["down_bits"] == [10 * n_params * 32] * 2
    assert [len(p) for p in res["rounds"]["participants"]] == [10, 10]


def test_fedlog_keeps_the_statistic_of_classes_no_participant_holds():
    ctx, alg = ex.setup(_tiny("fedlog", participation=0.2))
    ledger = Ledger()
    first = run_round(alg, 0, ledger)
    T0 = alg.T.clone()
    second = run_round(alg, 1, ledger)
    held_now = second.up["T"].sum(0)[:, 0] > 0
    assert not bool(held_now.all())  # 2 clients x 2 classes: some classes have no participant
    assert torch.equal(alg.T[~held_now], T0[~held_now])
    assert torch.equal(alg.T[held_now], second.up["T"].sum(0)[held_now])
    assert torch.isfinite(alg.eta).all() and len(first.participants) == 2


def test_fedlog_with_a_class_nobody_holds_runs_and_gives_it_a_zero_head_row():
    # 4 clients x 2 classes leaves MNIST classes unheld: the tiny run a new user tries (it gave NaN heads)
    res = ex.run(_tiny("fedlog", n_clients=4, rounds=2), cache=False, progress=False)
    ctx, alg = ex.setup(_tiny("fedlog", n_clients=4))
    run_round(alg, 0, Ledger())
    unheld = alg.T[:, 0] == 0
    assert bool(unheld.any()) and torch.all(alg.eta[unheld] == 0)
    assert res["rounds"]["acc_mean"][-1] > 0.5


@pytest.mark.parametrize("method", ["csfl", "feddbe"])
def test_methods_without_partial_participation_refuse_it_clearly(method):
    with pytest.raises(ValueError, match=f"{method} does not support participation < 1"):
        ex.setup(_tiny(method, participation=0.5))


# ----------------------------------------------------------------------------- the round function

class _NoLoss(algorithms.FedAvg):
    name = "no_loss"

    def client_update(self, rnd, down):
        return Reply(super().client_update(rnd, down).up, None)


class _OldStyle(algorithms.FedAvg):
    name = "old_style"

    def client_update(self, rnd, down):
        return super().client_update(rnd, down).up


@pytest.mark.parametrize("cls,error,match", [(_NoLoss, ValueError, "no_loss: client_update returned no training"),
                                             (_OldStyle, TypeError, "old_style: client_update must return Reply")])
def test_a_method_that_returns_no_loss_is_named(cls, error, match, monkeypatch):
    monkeypatch.setitem(algorithms.REGISTRY, cls.name, cls)
    with pytest.raises(error, match=match):
        ex.run(_tiny(cls.name), cache=False, progress=False)


def test_every_driver_counts_its_messages(monkeypatch):
    from fedlib.papers.fedlog.analysis import synthetic

    sent = []
    original = Ledger.record
    monkeypatch.setattr(Ledger, "record", lambda self, msg: sent.append(msg.direction) or original(self, msg))
    synthetic.one_round("fedlog", 2)
    assert sent == ["down", "up"]


def test_a_diverged_server_step_is_not_blamed_on_the_learning_rate(monkeypatch):
    class _BadHead(algorithms.FedLog):
        name = "bad_head"

        def aggregate(self, rnd, up):
            super().aggregate(rnd, up)
            self.load_head(torch.full_like(self.eta, float("nan")))

    monkeypatch.setitem(algorithms.REGISTRY, "bad_head", _BadHead)
    with pytest.raises(ex.DivergenceError, match="bad_head's server step") as err:
        ex.run(_tiny("bad_head"), cache=False, progress=False)
    assert "learning rate (lr=" not in str(err.value)


# ----------------------------------------------------------------------------- config fields

def test_fedavg_ft_fine_tunes_only_the_head_after_the_last_round():
    cfg = _tiny("fedavg", rounds=2, final_finetune_epochs=2)
    ctx, alg = ex.setup(cfg)
    ledger = Ledger()
    for rnd in range(2):
        run_round(alg, rnd, ledger)
    before = _snapshot(ctx.population)
    alg.finetune(2)
    after = _snapshot(ctx.population)
    for (ids, k), v in before.items():
        assert torch.equal(v, after[(ids, k)]) == k.startswith("body."), k
    res = ex.run(cfg, cache=False, progress=False)
    assert set(res["final"]) >= {"acc_mean", "acc_all", "loss", "client_acc"}
    assert res["final"]["acc_mean"] != res["rounds"]["acc_mean"][-1]


@pytest.mark.parametrize("method,personal", [("fedper", ["body.8.weight", "body.8.bias", "head.weight", "head.bias"]),
                                             ("lg_fedavg", None), ("fedlog", None)])
def test_every_method_names_its_personal_parameters(method, personal):
    ctx, alg = ex.setup(_tiny(method))
    g = ctx.population.groups[0]
    expected = personal or g.names("body")
    assert alg.personal_names(g) == expected


def test_training_reports_each_clients_steps():
    ctx, alg = ex.setup(_tiny("fedavg", local_epochs=3))
    got = ctx.train_clients(0, ctx.clients, trainable=lambda g: list(g.params))
    assert torch.equal(got.steps.cpu(), (3 * ((ctx.fed.train.counts.cpu() + 9) // 10)).float())


def test_lr_decay_momentum_and_weight_decay_reach_the_optimizer():
    ctx, _ = ex.setup(_tiny("fedavg", optimizer="sgd", lr=0.1, lr_decay=0.5, momentum=0.9, weight_decay=1e-4))
    assert ctx.lr_at(0) == 0.1 and ctx.lr_at(3) == 0.1 * 0.5 ** 3
    assert ctx.optimizer_kw == {"momentum": 0.9, "weight_decay": 1e-4}
    plain = ex.run(_tiny("fedavg", optimizer="sgd", lr=0.05, rounds=2), cache=False, progress=False)
    heavy = ex.run(_tiny("fedavg", optimizer="sgd", lr=0.05, rounds=2, momentum=0.9), cache=False, progress=False)
    assert plain["rounds"]["train_loss"] != heavy["rounds"]["train_loss"]


def test_pooled_splits_and_the_server_set():
    ds = data.load_dataset("mnist")
    fed = data.make_federation(ds, "pathological", 20, 0, classes_per_client=5, train_fraction=0.1, pool_split=0.7,
                               server_fraction=0.2)
    tr, te = fed.train.counts.float(), fed.test.counts.float()
    assert torch.all((tr / (tr + te) - 0.7).abs() < 0.05)
    flat = lambda t: {bytes(v.numpy().tobytes()) for v in t.flatten(1)}  # noqa: E731
    test_images = torch.cat([fed.test.x[c, : int(fed.test.counts[c])] for c in range(20)])
    train_images = torch.cat([fed.train.x[c, : int(fed.train.counts[c])] for c in range(20)])
    official_test = flat(ds.test_x)
    assert flat(train_images) & official_test and flat(test_images) - official_test  # the two sets are pooled
    server = fed.server.x[0, : int(fed.server.counts[0])]
    assert fed.server.counts[0] == pytest.approx(0.2 * 7000, rel=0.01)  # stratified 20% of the 10% pool
    assert not flat(server) & flat(train_images) and not flat(server) & flat(test_images)
    counts = torch.bincount(fed.server.y[0, : int(fed.server.counts[0])], minlength=10).float()
    assert torch.all((counts / counts.sum() - 0.1).abs() < 0.02)


# ----------------------------------------------------------------------------- engine hooks

def test_stacked_forward_to_an_intermediate_layer_is_each_clients_own():
    ctx, _ = ex.setup(_tiny("fedavg"))
    g, d = ctx.groups[0]
    x = d.x[:, :7]
    for upto in (4, 9):
        stacked = g.body_features(x, train=False, upto=upto)
        for row in (0, 3):
            alone = representations.layer_output(g.module(row), x[row], upto).flatten(1)
            assert torch.allclose(stacked[row], alone, atol=1e-5)
        g.fast = False
        assert torch.allclose(g.body_features(x, train=False, upto=upto), stacked, atol=1e-5)
        g.fast = True


def test_the_model_decides_the_head_step():
    class Doubled(models.BodyHead):
        @staticmethod
        def head_logits(feats, params, train):
            return 2 * models.BodyHead.head_logits(feats, params, train)

    torch.manual_seed(0)
    base = models.build("mlp2", (1, 28, 28), 10)
    doubled = Doubled(copy.deepcopy(base.body), copy.deepcopy(base.head))  # a population takes over its models
    x = torch.randn(2, 5, 1, 28, 28)
    a = engine.Population.create([base, base], same_init=True).groups[0].forward(x, train=False)[1]
    b = engine.Population.create([doubled, doubled], same_init=True).groups[0].forward(x, train=False)[1]
    assert torch.allclose(b, 2 * a)


def test_appending_a_module_keeps_the_fast_path_and_every_clients_parameters():
    ctx, alg = ex.setup(_tiny("feddbe"))
    g = ctx.population.groups[0]
    assert g.fast and alg.prbm in g.params and g.params[alg.prbm].shape == (10, 50)
    assert ctx.population.template.body[-1].shift.device.type == "meta"


def test_a_client_drawn_twice_trains_once_and_its_result_repeats():
    ctx, _ = ex.setup(_tiny("fedavg"))
    torch.manual_seed(1)
    twice = ctx.train_clients(0, torch.tensor([3, 1, 3]), trainable=lambda g: list(g.params))
    steps = ((ctx.fed.train.counts.cpu()[[3, 1, 3]] + 9) // 10).float()  # one epoch of batch 10
    assert torch.equal(twice.loss[0], twice.loss[2]) and torch.equal(twice.steps.cpu(), steps)
    assert bool((twice.loss > 0).all())
